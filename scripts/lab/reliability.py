"""The scorer's decision: how well its probability is calibrated out of sample, as a reliability figure.

Two ways out of sample, from the scorer-dev record: each catalog's queries by a logistic fitted on its other
folds (5-fold, as `--dev` fits it), and by one fitted on the two other catalogs (a catalog nobody labelled).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from course_utils.evaluation.scoring import expected_calibration_error
from scripts.lab.scorer_report import Line, folds, logistic_xy, with_gold

BINS = 10


def probabilities(lines: list[Line], across: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each line's out-of-sample P(right) and whether its pick was right: within its catalog (5-fold) or across."""
    from course_utils.evaluation.gating import fit_logistic

    p, y = [], []
    for catalog in sorted({x["catalog"] for x in lines}):
        mine = [x for x in lines if x["catalog"] == catalog]
        x_mine, y_mine, _ = logistic_xy(mine)
        splits = ([(logistic_xy([x for x in lines if x["catalog"] != catalog])[:2], np.arange(len(mine)))] if across
                  else [((x_mine[np.setdiff1d(np.arange(len(mine)), t)], y_mine[np.setdiff1d(np.arange(len(mine)), t)]),
                         t) for t in folds(len(mine))])
        out = np.zeros(len(mine))
        for (x_train, y_train), test in splits:
            w = fit_logistic(x_train, y_train)
            out[test] = 1 / (1 + np.exp(-(w[0] + x_mine[test] @ w[1:])))
        p.append(out)
        y.append(y_mine)
    return np.concatenate(p), np.concatenate(y)


def figure(lines: list[Line], path: Path) -> str:
    """Draw the two reliability curves to `path`; return one line per curve with its ECE."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = with_gold(lines)
    fig, ax = plt.subplots(figsize=(6, 5))
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", label="perfect calibration")
    said = []
    for across, label in ((False, "fitted on the catalog's other folds"), (True, "fitted on the two other catalogs")):
        p, y = probabilities(lines, across)
        edges = np.minimum((p * BINS).astype(int), BINS - 1)
        used = [b for b in range(BINS) if (edges == b).any()]
        ax.plot([p[edges == b].mean() for b in used], [y[edges == b].mean() for b in used], marker="o",
                label=f"{label} (ECE {expected_calibration_error(p, y):.3f})")
        said.append(f"{label}: ECE {expected_calibration_error(p, y):.3f} over {len(p)} queries")
    ax.set(xlabel="predicted P(the pick is right)", ylabel="observed share right", xlim=(0, 1), ylim=(0, 1),
           title="The scorer's decision out of sample (dev sets, Qwen2.5-Coder-1.5B)")
    ax.legend(loc="upper left", fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return "\n".join(said)
