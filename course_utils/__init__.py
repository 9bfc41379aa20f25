"""Who picks the skill? — the tested package behind the course notebooks.

Its parts follow the course's arc, each importing only the parts before it: `backend` < `skills` < `selection` <
`loop` < `evaluation` < `scale` < `audit` < `lessons` < `cli`. `docs/architecture.md` maps every module.
"""
