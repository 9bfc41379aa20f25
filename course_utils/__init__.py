"""Who picks the skill? — the tested package behind the course notebooks."""
