"""Choosing at scale: catalogs grown to 10,000 skills, each harness's listing, and the decision rule (lesson 10).

- `decision`: the catalog's cost against the window and the rule (`context_window`, `catalog_budget`,
  `decision_rule`, `RECALL_TARGET`, `IndexedSelector`, `rule_selector`).
- `synthetic`: synthetic skills that grow a catalog (`synthetic_skills`, `with_distractors`, `COMBINATIONS`).
- `listing`: the listing each harness builds within its budget (`claude_code_listing`, `codex_listing`,
  `harness_survival`, `HARNESS_LABELS`, `SEEN`; the audit's listing check reads it too).
"""
