"""What the lessons measure, and what they conclude from it (lessons 04 and 06 to 13).

- `outcomes`: a selector run over a query set (`run_selector`, `evaluate`, `Outcome`, `Report`,
  `comparison_table`, `paired_comparison`; lessons 06, 07, 09, 10, 12).
- `stats`: Wilson intervals and exact McNemar tests (`Rate`, `mcnemar_exact`, `SIGNIFICANCE`; every lesson from 04).
- `bakery_eval`: the bakery agent on many requests, each run checked by code (`check_run`, `load_requests`,
  `summarize`, `read_record`; lessons 03 and 04).
- `gating`: the gated hybrid, fitted on dev outcomes (lesson 13). `scoring`: the scorer's decision fitted on
  labelled queries (`fit_decider`, `fit_on_dev`). `who_picks`: lesson 13's comparison and its
  record (`answer`, `standing`, `read_record`, `LABELS`, `course_finding`; lessons 00, 09, 10, 13).
- `selectors`: every selector an evaluation can run, registered once (`REGISTRY`, `Entry`, `register`; the
  `recommended` alias). `trigger`: the trigger evaluation the command line's `eval-trigger`, `audit` and
  `who-picks` run, with the choices made on development queries (`choose_on_dev`, `DevChoices`).
- `description_fix`: lesson 11's edit of one description against its false triggers.
- `claims`, `findings`: the source lesson's claims and each lesson's "What we found" (`claim_finding`,
  `rate_finding`). `plots`: the lessons' static figures (`save_figure`, `rate_bars`, `score_histogram`,
  `threshold_figure`).
"""
