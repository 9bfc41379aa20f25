"""Static figures for the lessons and the command line, saved under build/figures/."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from course_utils.paths import FIGURES_DIR


def save_figure(figure: Figure, name: str, folder: Path = FIGURES_DIR) -> Path:
    """Save `figure` as `<folder>/<name>.png` and return the path (the folder is created if needed)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    figure.savefig(path, dpi=110, bbox_inches="tight")
    return path


def score_histogram(ax: Axes, positive: Sequence[float], none: Sequence[float], threshold: float,
                    bins: int = 20) -> Axes:
    """Top-1 cosine scores of must-trigger and must-not-trigger queries, with the threshold line.

    Drawn in `notebooks/05_embeddings.ipynb` and by `eval-trigger --plot`; lesson 06 moves the line.
    """
    scores = [*positive, *none, threshold]
    edges = np.linspace(min(scores) - 0.02, max(scores) + 0.02, bins + 1)
    ax.hist(positive, bins=edges, alpha=0.7, color="tab:blue", label=f"must trigger ({len(positive)})")
    ax.hist(none, bins=edges, alpha=0.7, color="tab:orange", label=f"must not trigger ({len(none)})")
    ax.axvline(threshold, color="black", linestyle="--", label=f"threshold {threshold:.3f}")
    ax.set_xlabel("top-1 cosine score")
    ax.set_ylabel("queries")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend()
    return ax
