"""The lessons' own helpers, beside the material they teach (lessons 08 and 09).

- `widgets`: lesson 08's interactive threshold explorer (`ThresholdExplorer`).
- `exercises/`: lesson 09's exercise: its hints, the checker that judges the learner's `pick_hybrid` and its world
  (`hint`, `check_hybrid`, `passing_check`, `grading_feedback`, `check_choose_k`, `check_confident_skip`,
  `check_explicit`).
- `scripted`: the scripted stand-in backend the checker (and the tests) run on: a real `genai.Client` whose model
  follows a script.
"""
