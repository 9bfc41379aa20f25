"""Where the tests' own files are."""
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parents[1]
FIXTURES = TESTS_DIR / "fixtures"
