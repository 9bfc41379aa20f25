"""Static figures for the lessons and the command line, saved under build/figures/."""
from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure

from course_utils.paths import FIGURES_DIR


def save_figure(figure: Figure, name: str, folder: Path = FIGURES_DIR) -> Path:
    """Save `figure` as `<folder>/<name>.png` and return the path (the folder is created if needed)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    figure.savefig(path, dpi=110, bbox_inches="tight")
    return path
