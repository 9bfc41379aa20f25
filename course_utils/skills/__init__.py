"""The skill files and the catalog they make (lessons 01, 02 and 05; every lesson reads a catalog through them).

- `skill`: `SKILL.md` parsed (`parse_skill`, lesson 01) and validated; `Skill`; `SkillLoader` (every lesson), whose
  catalog, system instruction and load declaration are lesson 02's prompt.
- `spec`: the Agent Skills spec's rules on the six fields (`spec_problems`, `name_problem`, `Diagnostic`; lesson 01).
- `safeyaml`, `harnesses`: safe YAML from files people hand us; the fields each agent harness reads, and a
  frontmatter checked as one harness reads it (`frontmatter_problems`, what `audit` applies).
- `queries`: labelled query sets (`load_queries`, `verdict`; lessons 06 to 11).
- `tokens`: `estimate_tokens` and the model's own `count_tokens` (lessons 01, 02, 06, 09 to 11).
- `paths`, `text`: where the repository's folders are (`REPO_ROOT`, `SKILLS_DIR`, `DATA_DIR`, `BUILD_DIR`,
  `NOTEBOOKS_DIR`); text cut short for a message.
"""
