"""The lab's baseline rule for the scorer: a P(yes) threshold and a lead, fitted on a grid. No model here."""
from __future__ import annotations

from course_utils.selection.scorer import Score
from scripts.lab.rules import Rule, fit_on_dev

RANKED = [Score("alpha", 0.4, 0), Score("beta", 0.8, 0), Score("gamma", 0.6, 0)]


def test_the_most_probable_skill_is_picked_when_it_reaches_the_threshold():
    assert Rule().decide(RANKED) == "beta"
    low = [Score("alpha", 0.4, 0), Score("beta", 0.45, 0), Score("gamma", 0.1, 0)]
    assert Rule().decide(low) is None and Rule(0.42).decide(low) == "beta"


def test_a_tie_keeps_the_nearer_skill():
    assert Rule().decide([Score("alpha", 0.7, 0), Score("beta", 0.7, 0)]) == "alpha"


def test_a_best_skill_that_does_not_lead_the_runner_up_by_the_margin_is_no_pick():
    close = [Score("alpha", 0.62, 0), Score("beta", 0.6, 0)]
    assert Rule(0.5, margin=0.05).decide(close) is None
    assert Rule(0.5, margin=0.0).decide(close) == "alpha"
    assert Rule(0.5, margin=0.05).decide([Score("alpha", 0.7, 0), Score("beta", 0.6, 0)]) == "alpha"
    assert Rule(0.5, margin=0.05).decide([Score("alpha", 0.7, 0)]) == "alpha"
    assert Rule().decide([Score("alpha", None, 0)]) is None


def test_the_rule_is_fitted_on_development_queries_closest_to_the_default_on_a_tie():
    fits = ([Score("alpha", 0.8, 0), Score("beta", 0.3, 0)], "alpha")
    near_miss = ([Score("alpha", 0.82, 0), Score("beta", 0.8, 0)], None)
    assert fit_on_dev([fits, near_miss]) == Rule(0.5, 0.025)
    assert fit_on_dev([fits]) == Rule(0.5, 0.0)
    weak = ([Score("alpha", 0.57, 0), Score("beta", 0.2, 0)], None)
    assert fit_on_dev([fits, weak]) == Rule(0.6, 0.0)


def test_the_shortlist_s_first_skill_as_the_candidate():
    ranked = [Score("alpha", 0.7, 0), Score("beta", 0.76, 0), Score("gamma", 0.2, 0)]
    assert Rule(0.5).decide(ranked) == "beta"
    assert Rule(0.5, first=True).decide(ranked) is None  # alpha trails beta: a negative lead
    assert Rule(0.5, margin=-0.1, first=True).decide(ranked) == "alpha"
    fits = ([Score("alpha", 0.7, 0), Score("beta", 0.76, 0)], "alpha")
    assert fit_on_dev([fits]) == Rule(0.5, -1.0, first=True)  # the most probable, beta, is wrong
