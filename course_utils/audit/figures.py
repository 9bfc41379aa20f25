"""The audit's figures, drawn from the typed report and kept as PNG bytes for the self-contained HTML page."""
from __future__ import annotations

import io
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from course_utils.audit.report import STANDS_OUT_Z, ListingSection, PairSignal
from course_utils.evaluation.outcomes import Report
from course_utils.scale.listing import SEEN
from course_utils.evaluation.plots import rate_bars

SEEN_COLOURS = {"whole": "#2e7d32", "cut": "#f9a825", "name": "#e65100", "removed": "#90a4ae", "omitted": "#b71c1c"}


def png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return buffer.getvalue()


def listing_figure(listing: ListingSection) -> bytes:
    """One bar: how many skills the model sees whole, cut, by name only, removed or omitted in the listing."""
    figure = Figure(figsize=(7, 1.6))
    ax = figure.subplots()
    left = 0
    for seen in SEEN:
        count = listing.counts.get(seen, 0)
        if count:
            ax.barh([0], [count], left=left, color=SEEN_COLOURS[seen], label=f"{seen} ({count:,})")
            left += count
    ax.set_yticks([])
    ax.set_xlim(0, max(left, 1))
    ax.set_xlabel("skills")
    ax.set_title(f"{listing.label}: {listing.used:,} {listing.unit}"
                 + ("" if listing.budget is None else f" of a budget of {listing.budget:,}"))
    if left:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.45), ncol=5, frameon=False)
    return png(figure)


def pairs_figure(signal: PairSignal) -> bytes:
    """The closest pairs by one signal as a PNG (`draw_pairs`)."""
    figure = Figure(figsize=(7, 0.45 * len(signal.pairs) + 1.2))
    draw_pairs(figure.subplots(), signal)
    return png(figure)


def draw_pairs(ax: Axes, signal: PairSignal) -> None:
    """The closest pairs by one signal on `ax`: their scores (and, for embeddings, the bodies' cosine), the mean of
    all pairs, and the cut-off a pair stands out above (`PairSignal.cutoff`), each a labelled line."""
    rows = signal.pairs
    labels = [f"{p.a} / {p.b}" for p in rows][::-1]
    positions = range(len(rows))
    ax.barh([y + 0.2 for y in positions], [p.score for p in rows][::-1], height=0.4, color="#1565c0",
            label="descriptions")
    if signal.signal == "embedding":
        ax.barh([y - 0.2 for y in positions], [p.body_cosine or 0 for p in rows][::-1], height=0.4,
                color="#90a4ae", label="bodies")
        ax.set_xlim(0, 1)
    if signal.mean is not None:
        ax.axvline(signal.mean, color="black", linestyle=":", label=f"mean of all pairs ({signal.mean:.3g})")
    if (cutoff := signal.cutoff) is not None:
        ax.axvline(cutoff, color="#b71c1c", linestyle="--",
                   label=f"stands out above {cutoff:.3g} (mean + {STANDS_OUT_Z:g} sd)")
        ax.set_xlim(right=max(ax.get_xlim()[1], cutoff * 1.05))
    ax.set_yticks(list(positions), labels, fontsize=8)
    ax.set_xlabel("cosine" if signal.signal == "embedding" else "BM25 score")
    ax.legend(loc="lower right", fontsize=8)


def rates_figure(reports: list[dict[str, Any]]) -> bytes:
    """Lesson 06's bars: each selector's rates with their 95 % intervals."""
    figure = Figure(figsize=(7, 3.2))
    rate_bars(figure.subplots(), [Report.from_dict(r) for r in reports])
    return png(figure)
