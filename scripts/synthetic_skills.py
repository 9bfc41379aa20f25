"""Write N synthetic skill folders (lesson 10's generator) under DIR, to time `audit` on a huge folder.

    python scripts/synthetic_skills.py 10000 build/skills10k
    time python -m course_utils audit build/skills10k --html build/audit10k.html
"""
from __future__ import annotations

import sys
from pathlib import Path

from course_utils.scale.synthetic import render_skill_md, synthetic_skills


def main(count: int, folder: Path) -> None:
    for skill in synthetic_skills(count):
        (folder / skill.name).mkdir(parents=True, exist_ok=True)
        (folder / skill.name / "SKILL.md").write_text(render_skill_md(skill), encoding="utf-8")
    print(f"{count} skills written under {folder}")


if __name__ == "__main__":
    main(int(sys.argv[1]), Path(sys.argv[2]))
