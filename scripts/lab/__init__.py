"""The lab: development commands (`python -m scripts.lab bench|fuzz|measure …`) and where their records go.

Nothing in the lessons, the backend or the learner's command line imports it. The records the lessons and their
tests read stay in `data/measured/`; the records only the lab notes cite live beside those notes, in
`docs/lab/records/` (`LAB_RECORDS`).
"""
from course_utils.skills.paths import REPO_ROOT

LAB_RECORDS = REPO_ROOT / "docs" / "lab" / "records"
"""The development records: harness-tuning runs, bench runs, experiments no lesson reads."""
