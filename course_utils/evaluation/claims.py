"""The source lesson's claims that the course's lessons check, each of the kind its words call for.

A lesson imports its claims from here and prints `findings.claim_finding(claim, rate, model)`; the tests
(tests/evaluation/test_findings.py) build, at each lesson's sample size, the counts that give every verdict, so no claim
can only ever agree or only ever come out undecided.
"""
from __future__ import annotations

from course_utils.evaluation.findings import CountClaim, RateClaim

SOURCE = "the source lesson « Qui choisit le skill ? » [1]"

SKIPS_THE_SKILL = CountClaim(
    "small models sometimes answer without loading the skill they needed",
    "the source lesson « Des skills à la demande » [1]", "some",
    of="on-demand runs that needed a skill", did="answer without loading one",
    holds="the model does answer without the skill it needs",
    fails="the model loaded a skill in every run that needed one")
"""Lesson 04. "Sometimes" is about what happened: on this run, at least one run skipped the skill. As a rate it would
be a bound of 0, which no interval can contradict."""

DECLINES = RateClaim(
    "the model reads the 'Not for' line of the descriptions and knows how to decline", SOURCE, above=0.5,
    of="queries needing no skill", did="are declined",
    holds="'none' works", fails="'none' does not work")
"""Lessons 06 (6 queries needing no skill) and 09 (4): knowing how to decline, read as declining more than half.
At 6 the interval clears 0.5 only at 0/6 or 6/6, at 4 only at 0/4 or 4/4; in between the finding says how many
queries would decide."""

RANKS_PERFECTLY = CountClaim(
    "similarity ranks the positive queries perfectly: the nearest skill is always the right one", SOURCE, "all",
    of="must-trigger queries", did="have the expected skill nearest",
    holds="similarity ranks every positive of this set right", fails="similarity ranks some positives wrong")
"""Lessons 07 (24 English, 24 French positives), 08 (24) and 12 (the development positives): "perfectly" is a
claim about the set in hand."""

NONE_OVERLAP = CountClaim(
    "it fails on the 'none' decision: the nearest off-topic query scores higher than the least near positive one",
    SOURCE, "some", of="queries needing no skill",
    did="score at least as high as the lowest rightly ranked positive",
    holds="no threshold keeps every rightly ranked positive and turns away every query needing no skill",
    fails="a threshold keeps every rightly ranked positive and turns away every query needing no skill")
"""Lesson 07 (6 queries needing no skill, in each language)."""

NO_SEPARATING_THRESHOLD = CountClaim(
    "no threshold separates the two groups on this set", SOURCE, "not all",
    of="queries without a ranking error", did="are put on their side by the best single threshold",
    holds="no threshold separates the two groups", fails="one threshold separates the two groups on this set")
"""Lesson 08: the queries needing no skill (6) and the positives ranked right (up to 24)."""

PRESELECT_TOP10 = RateClaim(
    "beyond about a hundred skills, preselect by similarity (top 10) and let the model decide on this reduced "
    "catalog", SOURCE, above=0.8, of="must-trigger queries", did="have the expected skill in the top 10",
    holds="a top-10 shortlist keeps the right skill for more than four queries in five",
    fails="a top-10 shortlist loses the right skill too often to preselect with")
"""Lesson 10, on its 24 English positives at the largest catalog. Read as a recall above 0.8: 24 of 24 give an
interval from 0.86, so the claim can agree; the decision rule's target (`scale.RECALL_TARGET`, 0.9) could agree
only from 36 positives on."""

FIXES_A_FALSE_TRIGGER = CountClaim(
    "I know how to fix a false trigger through the description", "the source lesson « Qui choisit le skill ? », "
    "its closing checks [1]", "most",
    of="held-out near-misses whose false trigger only one description makes",
    did="are the original's, fixed by the edit",
    holds="the edit fixes more false triggers than it makes on this set",
    fails="the edit fixes no more false triggers than it makes on this set")
"""Lesson 11, on its held-out near-misses (`description_fix.HELD_OUT_FILE`, 12 queries needing no skill): the false
triggers of `it-helpdesk-triage` that only one description makes, the original's (fixed by the edit) against the
edit's. None either way fixes nothing: the claim disagrees. Whether the difference is more than this set's luck is the
exact McNemar test's question (`description_fix.paired_sentence`, which says how many queries would decide it)."""

MODEL_OVER_SIMILARITY = RateClaim(
    "never use similarity alone to decide that a skill must be activated", SOURCE, above=0.5,
    of="queries on which exactly one of the model alone and similarity alone is right", did="are won by the model",
    holds="the model decides better than similarity alone", fails="similarity alone decides better than the model")
"""Lesson 13, on each catalog's test queries: the source's rule read as a paired comparison. Only the queries on
which the two selectors differ count (those an exact McNemar test reads), and the model must win more than half."""

LESSON_CLAIMS = {
    "04": (SKIPS_THE_SKILL,),
    "06": (DECLINES,),
    "07": (RANKS_PERFECTLY, NONE_OVERLAP),
    "08": (RANKS_PERFECTLY, NO_SEPARATING_THRESHOLD),
    "09": (DECLINES,),
    "10": (PRESELECT_TOP10,),
    "11": (FIXES_A_FALSE_TRIGGER,),
    "12": (RANKS_PERFECTLY,),
    "13": (DECLINES, MODEL_OVER_SIMILARITY),
}
"""The claims each measuring lesson checks."""
