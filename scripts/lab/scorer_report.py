"""The dev table of `scorer-dev`'s record: each candidate decision, with intervals and paired tests.

Rows per catalog and pooled: similarity at its default threshold; the scorer with nothing fitted (P(yes) ≥ 0.5); the
course's rule (fitted on all three catalogs' dev sets, so in sample here); the
rule fitted on the same catalog's dev queries (cross-validated, five folds); the rule fitted on the two other
catalogs (a new catalog, no labelled query of its own); a logistic decision over the scorer's and the shortlist's
features (cross-validated, with its expected calibration error). Then each rule against lesson 13's five selectors
on the sets whose records hold their decisions (`data/measured/who_picks/`).
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from course_utils.evaluation.gating import fit_logistic
from course_utils.evaluation.scoring import expected_calibration_error
from course_utils.evaluation.stats import mcnemar_exact, wilson_interval
from course_utils.selection.scorer import CASCADE_LEAD, COURSE_DECIDER, Score
from scripts.lab.rules import COURSE_RULE, Rule, fit_on_dev
from course_utils.selection.shortlist import model_invocable
from course_utils.skills.skill import SkillLoader

REPO = Path(__file__).resolve().parents[2]
Line = dict[str, Any]
Decide = Callable[[Line], "str | None"]


def with_gold(lines: list[Line]) -> list[Line]:
    """Each line with `gold`: its expected skill, or None when the harness keeps that skill from the model."""
    names = {catalog: set(model_invocable(SkillLoader.from_root(REPO / "skills" / catalog)).names)
             for catalog in {x["catalog"] for x in lines}}
    return [{**x, "gold": x["expected"] if x["expected"] in names[x["catalog"]] else None} for x in lines]


def scores(line: Line) -> list[Score]:
    return [Score(name, p, t) for (name, _), p, t in zip(line["top"], line["p_yes"], line["tok_each"])]


def similarity(line: Line) -> str | None:
    name, score = line["sim_top"]
    return name if score >= line["sim_threshold"] else None


def cell(hits: Sequence[bool]) -> str:
    if not hits:
        return "–"
    low, high = wilson_interval(sum(hits), len(hits))
    return f"{sum(hits)}/{len(hits)} ({sum(hits) / len(hits):.2f}, {low:.2f}–{high:.2f})"


def row(label: str, lines: list[Line], picks: Sequence[str | None], base: Sequence[bool]) -> str:
    right = [p == x["gold"] for p, x in zip(picks, lines)]
    wins = sum(r and not b for r, b in zip(right, base))
    losses = sum(b and not r for r, b in zip(right, base))
    positives = [r for r, x in zip(right, lines) if x["gold"]]
    nones = [r for r, x in zip(right, lines) if not x["gold"]]
    return (f"| {label} | {cell(right)} | {cell(positives)} | {cell(nones)} | +{wins} −{losses}, "
            f"p = {mcnemar_exact(wins, losses):.3g} |")


def folds(n: int, k: int = 5) -> list[np.ndarray]:
    order = np.random.default_rng(0).permutation(n)
    return [order[i::k] for i in range(k)]


def rule_cv(lines: list[Line]) -> list[str | None]:
    """Each query decided by the rule fitted on the other four fifths."""
    picks: list[str | None] = [None] * len(lines)
    for test in folds(len(lines)):
        train = [(scores(lines[i]), lines[i]["gold"]) for i in range(len(lines)) if i not in set(test)]
        rule = fit_on_dev(train)
        for i in test:
            picks[i] = rule.decide(scores(lines[i]))
    return picks


def features(line: Line, cosine: bool = False) -> tuple[list[float], str]:
    """(best P(yes), its lead, the fused top score, its lead, the best is the fused first, and with `cosine` the
    nearest description's USE cosine: the one feature not standardised per request) and the best skill."""
    ranked = sorted(scores(line), key=lambda s: -(s.probability or 0.0))
    fused = [score for _, score in line["top"]]
    best, second = ranked[0].probability or 0.0, ranked[1].probability or 0.0 if len(ranked) > 1 else 0.0
    values = [best, best - second, fused[0], fused[0] - fused[1], float(ranked[0].skill == line["top"][0][0])]
    return values + ([line["sim_top"][1]] if cosine else []), ranked[0].skill


def logistic_xy(lines: list[Line], cosine: bool = False) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The logistic's features, its outcome (the best skill is the right one) and the best skill, per line."""
    found = [features(x, cosine) for x in lines]
    best = [b for _, b in found]
    y = np.array([b == x["gold"] and x["gold"] is not None for b, x in zip(best, lines)], dtype=float)
    return np.array([f for f, _ in found]), y, best


def logistic_transfer(train: list[Line], test: list[Line], cosine: bool = False) -> tuple[list[str | None], float]:
    """A logistic P(the best skill is right) fitted on `train`, deciding `test`; and its ECE on `test`."""
    x, y, _ = logistic_xy(train, cosine)
    w = fit_logistic(x, y)
    x, y, best = logistic_xy(test, cosine)
    probability = 1 / (1 + np.exp(-(w[0] + x @ w[1:])))
    return [b if p >= 0.5 else None for b, p in zip(best, probability)], expected_calibration_error(probability, y)


def logistic_cv(lines: list[Line]) -> tuple[list[str | None], float]:
    """Each query decided by a logistic P(the best skill is right) fitted on the other folds; and its ECE."""
    x, y, best = logistic_xy(lines)
    probability = np.zeros(len(lines))
    for test in folds(len(lines)):
        train = np.setdiff1d(np.arange(len(lines)), test)
        w = fit_logistic(x[train], y[train])
        probability[test] = 1 / (1 + np.exp(-(w[0] + x[test] @ w[1:])))
    return [b if p >= 0.5 else None for b, p in zip(best, probability)], expected_calibration_error(probability, y)


def course_decision(line: Line) -> str | None:
    """What the package's decision (`COURSE_DECIDER`) picks for a recorded shortlist."""
    return COURSE_DECIDER.decide(scores(line), [fused for _, fused in line["top"]])


def leads(line: Line) -> bool:
    """Whether the cascade lets the ranking decide alone: the fused first leads the second by `CASCADE_LEAD`."""
    return line["top"][0][1] - line["top"][1][1] >= CASCADE_LEAD


def cascaded(line: Line) -> str | None:
    """What the package's selector picks: the fused first where it leads by `CASCADE_LEAD`, else the decision."""
    return line["top"][0][0] if leads(line) else course_decision(line)


def catalog_table(lines: list[Line], others: list[Line]) -> list[str]:
    """The rows of one catalog (or of all), `others` the lines a new catalog's rule is fitted on."""
    base = [similarity(x) == x["gold"] for x in lines]
    default, transfer = Rule(), fit_on_dev([(scores(x), x["gold"]) for x in others]) if others else None
    logistic, ece = logistic_cv(lines)
    rows = [row("similarity (default threshold)", lines, [similarity(x) for x in lines], base),
            row(f"scorer, nothing fitted: {default}", lines, [default.decide(scores(x)) for x in lines], base),
            row(f"scorer, the course's rule (fitted on all three dev sets: in sample): {COURSE_RULE}", lines,
                [COURSE_RULE.decide(scores(x)) for x in lines], base),
            row("scorer, the course's decision (COURSE_DECIDER, fitted on all three dev sets: in sample)", lines,
                [course_decision(x) for x in lines], base),
            row(f"scorer, COURSE_DECIDER with the cascade at a lead of {CASCADE_LEAD:g} ({sum(map(leads, lines))} "
                f"decided without the model)", lines, [cascaded(x) for x in lines], base),
            row("scorer, rule fitted on this catalog's dev (5-fold CV)", lines, rule_cv(lines), base),
            row(f"logistic over 5 features (5-fold CV, ECE {ece:.3f})", lines, logistic, base)]
    if transfer is not None:
        rows.insert(4, row(f"scorer, rule fitted on the other catalogs: {transfer}", lines,
                           [transfer.decide(scores(x)) for x in lines], base))
        for cosine, label in ((False, "5 features"), (True, "5 features and the nearest USE cosine")):
            picks, ece = logistic_transfer(others, lines, cosine)
            rows.append(row(f"logistic over {label}, fitted on the other catalogs (ECE {ece:.3f})", lines, picks,
                            base))
    return rows


def lesson13_table(lines: list[Line]) -> list[str]:
    """The package's selector (`COURSE_DECIDER` and the cascade) against each of lesson 13's five selectors on the
    dev sets whose records hold their decisions."""
    out = []
    for catalog in ("workplace", "mattpocock"):
        mine = {x["query"]: x for x in lines if x["catalog"] == catalog and x["file"].endswith("_dev_2.yaml")}
        if not mine:
            continue
        record = json.loads((REPO / "data" / "measured" / "who_picks" / f"{catalog}.json").read_text())
        for name, selector in record["selectors"].items():
            theirs = {r["query"]: r["decided"] for r in selector["records"] if r["query"] in mine}
            picked = [x for q, x in mine.items() if q in theirs]
            base = [theirs[x["query"]] == x["gold"] for x in picked]
            out.append(row(f"{catalog}_dev_2: scorer (COURSE_DECIDER, cascade) vs {name}", picked,
                           [cascaded(x) for x in picked], base).replace(
                "| +", f"| {name}: {cell(base)}; scorer +", 1))
    return out


def report(lines: list[Line]) -> str:
    """The whole dev table, as Markdown."""
    lines = with_gold(lines)
    head = ["| rows | right | must trigger | must not | vs the first row (exact McNemar) |", "|---|---|---|---|---|"]
    out: list[str] = []
    for catalog in sorted({x["catalog"] for x in lines}) + ["pooled"]:
        mine = [x for x in lines if catalog in ("pooled", x["catalog"])]
        others = [x for x in lines if x["catalog"] != catalog] if catalog != "pooled" else []
        recall = sum(x["gold"] in [n for n, _ in x["top"]] for x in mine if x["gold"])
        seconds = sorted(x["seconds"] for x in mine if x["fresh"] == len(x["top"]))
        median = f"{seconds[len(seconds) // 2]:.1f} s" if seconds else "–"
        out += [f"\n### {catalog}: {len(mine)} queries; the expected skill in the top {len(mine[0]['top'])} for "
                f"{recall} of {sum(1 for x in mine if x['gold'])} positives; median {median} a decision "
                f"whose every pair was scored; mean prompt tokens "
                f"{np.mean([sum(x['tok_each']) for x in mine]):.0f}\n", *head, *catalog_table(mine, others)]
    out += ["\n### against lesson 13's selectors, the package's selector (in sample)\n", *head, *lesson13_table(lines)]
    return "\n".join(out)
