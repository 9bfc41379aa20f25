"""`python -m course_utils …` runs the command line."""
from course_utils.cli.main import main

raise SystemExit(main())
