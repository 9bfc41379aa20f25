"""`python -m course_utils …` runs the command line."""
from course_utils.tools.cli import main

raise SystemExit(main())
