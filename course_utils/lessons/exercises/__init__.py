"""The lesson 09 exercise: its hints, a checker that judges what the learner's `pick_hybrid` does, the stretch
tasks' checks and the feedback after grading.

| module | what it holds |
|---|---|
| `world` | the scripted world as data: the stand-in's catalogs, the cases it asks, what its model does |
| `learner` | what the learner's code does, seen from outside: requests, globals read, the line that raised |
| `judge` | `check_hybrid` and `passing_check`: each behaviour judged, one plain sentence per mistake |
| `stretch` | `check_choose_k`, `check_confident_skip`, `check_explicit` |
| `feedback` | `grading_feedback`: the graded queries a selector got wrong |
| `hints` | `hint(n)` |

The lesson imports what it uses from here.
"""
from course_utils.lessons.exercises.feedback import grading_feedback
from course_utils.lessons.exercises.hints import hint
from course_utils.lessons.exercises.judge import CheckResult, check_hybrid, passing_check
from course_utils.lessons.exercises.stretch import check_choose_k, check_confident_skip, check_explicit

__all__ = ["CheckResult", "check_choose_k", "check_confident_skip", "check_explicit", "check_hybrid",
           "grading_feedback", "hint", "passing_check"]
