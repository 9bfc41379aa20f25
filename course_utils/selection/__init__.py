"""Who picks the skill (lessons 06 to 09, and 11).

- `pick`: the selectors: the model (`pick_by_model`, lesson 06), similarity (`SimilaritySelector`, lessons 07 and
  08), the hybrid (`pick_hybrid` and its shortlist, lesson 09), the user (`explicit_skill`, `with_explicit`);
  `Decision`, `ACTIVATE`, `document_text`, `query_text`.
- `abstain`: selectors that can say "none" and the recommended one (`RECOMMENDED`, `recommended`, lesson 06).
- `confidence`: the model's probability of declining (`decline_probabilities`, `roc_auc`, lesson 08).
- `thresholds`: similarity thresholds counted, swept and fitted (`scored_queries`, `sweep`, `best_threshold`,
  `cross_validate`, lessons 08 and 11).
- `embeddings/`: texts to vectors, their cache and the index (`cosine_matrix`, `embed_texts`, `top_k`; lessons 07
  and 10).
- `shortlist`, `lexical`, `scorer`: the selector the course ends with: a fused shortlist (`Shortlist`: two
  encoders and BM25 over the whole SKILL.md), the model scoring each shortlisted skill by one token's
  log-probability (`ScoringSelector`), and the logistic that decides (`Decider`, `COURSE_DECIDER`; fitted on
  labelled queries by `evaluation.scoring`).
- `faults`: what goes wrong on the model path, in one line a person can act on.
"""
