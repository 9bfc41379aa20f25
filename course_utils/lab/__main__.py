"""`python -m course_utils.lab …` runs the lab's command line."""
from course_utils.lab.cli import main

raise SystemExit(main())
