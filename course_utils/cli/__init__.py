"""The learner's command line, `python -m course_utils COMMAND …` (lesson 00 names it; `make course` and `make eval`
run it): `main` holds the parser and `validate`, `catalog`, `run-notebooks`, `eval-trigger`; `audit`, `models`,
`who_picks` and `notebooks` one command each; `options` what several share. It sits above every part and nothing
in the package imports it; the development commands are the lab's (`python -m scripts.lab`, outside the package).
"""
