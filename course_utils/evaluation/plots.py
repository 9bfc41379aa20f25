"""Static figures for the lessons and the command line, saved under build/figures/."""
from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from course_utils.skills.paths import FIGURES_DIR
from course_utils.selection.thresholds import (
    Counts, ScoredQuery, best_threshold, candidate_thresholds, count_outcomes, overlap, sweep,
)

if TYPE_CHECKING:
    from course_utils.evaluation.outcomes import Report


class NotebookFigure(Figure):
    """A Figure that Jupyter shows as a PNG whatever the backend: a plain `Figure` made without pyplot
    shows only as "<Figure size … with 2 Axes>" until pyplot has set up the inline backend, and the
    threshold explorer's Output widget and lesson 08's histograms display theirs before that."""

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", bbox_inches="tight")
        return buffer.getvalue()


def save_figure(figure: Figure, name: str, folder: Path = FIGURES_DIR) -> Path:
    """Save `figure` as `<folder>/<name>.png` and return the path (the folder is created if needed)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    figure.savefig(path, dpi=110, bbox_inches="tight")
    return path


def score_histogram(ax: Axes, positive: Sequence[float], none: Sequence[float], threshold: float,
                    bins: int = 20, wrong_top: Sequence[float] = ()) -> Axes:
    """Top-1 cosine scores of must-trigger and must-not-trigger queries, with the threshold line.

    With `wrong_top`, `positive` holds the must-trigger queries whose top-1 skill is right and
    `wrong_top` those whose top-1 skill is wrong (ranking errors), drawn apart.
    Drawn in `notebooks/07_embeddings.ipynb` and by `eval-trigger --plot`; lesson 08 moves the line.
    """
    scores = [*positive, *none, *wrong_top, threshold]
    edges = np.linspace(min(scores) - 0.02, max(scores) + 0.02, bins + 1)
    right = ", top-1 right" if wrong_top else ""
    ax.hist(positive, bins=edges, alpha=0.7, color="tab:blue", label=f"must trigger{right} ({len(positive)})")
    if wrong_top:
        ax.hist(wrong_top, bins=edges, alpha=0.7, color="tab:purple", hatch="//",
                label=f"ranking errors: must trigger, top-1 wrong ({len(wrong_top)})")
    ax.hist(none, bins=edges, alpha=0.7, color="tab:orange", label=f"must not trigger ({len(none)})")
    ax.axvline(threshold, color="black", linestyle="--", label=f"threshold {threshold:.3f}")
    ax.set_xlabel("top-1 cosine score")
    ax.set_ylabel("queries")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend()
    return ax


RATE_BARS = (("accuracy", "accuracy"), ("must trigger", "positive_accuracy"), ("must not trigger", "none_accuracy"))


def rate_bars(ax: Axes, reports: Sequence[Report]) -> Axes:
    """Each selector's accuracy, must-trigger and must-not-trigger rates as bars, the 95 % Wilson interval
    as error bars and the counts above each bar. On 30 queries the whiskers are wide; whether two
    selectors differ is the paired test's question (`evaluation.paired_comparison`), not the bars'.
    A rate without queries gets "n/a" instead of a bar.
    """
    width = 0.8 / len(reports)
    for i, report in enumerate(reports):
        offset = (i - (len(reports) - 1) / 2) * width
        placed = [(x + offset, report.rate(key)) for x, (_, key) in enumerate(RATE_BARS)]
        shown = [(x, rate) for x, rate in placed if rate.n]
        ax.bar([x for x, _ in shown], [r.value for _, r in shown], width * 0.9, label=report.selector,
               yerr=[[r.value - r.low for _, r in shown], [r.high - r.value for _, r in shown]], capsize=4)
        for x, rate in placed:
            label, y = (f"{rate.successes}/{rate.n}", rate.high + 0.01) if rate.n else ("n/a", 0.01)
            ax.text(x, y, label, ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(RATE_BARS)), [label for label, _ in RATE_BARS])
    ax.set_ylim(0, 1.1)
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.set_ylabel("share of queries (95% interval)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    return ax


def draw_threshold_histogram(ax: Axes, queries: Sequence[ScoredQuery], threshold: float) -> Counts:
    """The histogram of top scores with ranking errors apart, the overlap shaded (`thresholds.Overlap`),
    the threshold line and the counts in the title."""
    found = overlap(queries)
    score_histogram(ax, found.right, found.nones, threshold, wrong_top=found.wrong_top)
    if found.interval:
        ax.axvspan(*found.interval, color="red", alpha=0.12,
                   label=f"overlap {found.interval[0]:.3f}–{found.interval[1]:.3f}: "
                         f"{found.right_inside} + {found.nones_inside} queries")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    counts = count_outcomes(queries, threshold)
    ax.set_title(
        f"threshold {threshold:.3f}: {counts.correct}/{counts.total} correct ({counts.accuracy:.0%}), "
        f"{counts.false_triggers} false triggers, {counts.misses} misses, {counts.wrong_skill} wrong skill",
        fontsize=9,
    )
    return counts


def draw_rates(ax: Axes, queries: Sequence[ScoredQuery], threshold: float) -> tuple[float, float]:
    """Accuracy and error rates against the threshold, the best threshold marked; returns (best, its accuracy).

    The curves pass through every candidate threshold, so a narrow peak such as the best one is drawn.
    """
    scores = [q.top_score for q in queries]
    grid = np.union1d(np.linspace(min(scores) - 0.05, max(scores) + 0.05, 200), candidate_thresholds(scores))
    counts = sweep(queries, grid)
    total = len(queries)
    ax.plot(grid, [c.accuracy for c in counts], color="black", label="accuracy")
    ax.plot(grid, [c.false_triggers / total for c in counts], color="tab:orange", label="false triggers")
    ax.plot(grid, [c.misses / total for c in counts], color="tab:blue", label="misses")
    ax.plot(grid, [c.wrong_skill / total for c in counts], color="tab:purple", label="wrong skill")
    best, accuracy = best_threshold(queries)
    ax.plot([best], [accuracy], "o", color="green", label=f"best {best:.3f}: {accuracy:.0%}")
    ax.axvline(threshold, color="black", linestyle="--", linewidth=1)
    ax.set_xlabel("threshold")
    ax.set_ylabel("share of queries")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=8)
    return best, accuracy


def threshold_figure(queries: Sequence[ScoredQuery], threshold: float, title: str = "") -> Figure:
    """The threshold explorer as a static figure: histogram with counts, and rates against the threshold."""
    figure = NotebookFigure(figsize=(11, 4.6), layout="constrained")
    left, right = figure.subplots(1, 2)
    draw_threshold_histogram(left, queries, threshold)
    draw_rates(right, queries, threshold)
    if title:
        figure.suptitle(title)
    return figure
