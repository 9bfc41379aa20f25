"""`python -m scripts.lab …` runs the lab's command line."""
from scripts.lab.cli import main

raise SystemExit(main())
