"""The threshold explorer's counts follow its slider; the static figures save as real PNGs."""
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from course_utils.plots import save_figure, threshold_figure  # noqa: E402
from course_utils.thresholds import ScoredQuery  # noqa: E402
from course_utils.widgets import ThresholdExplorer, format_counts  # noqa: E402

# The hand-checked set of tests/test_thresholds.py.
HAND = [ScoredQuery("a", "a", 0.80), ScoredQuery("a", "a", 0.62), ScoredQuery("b", "a", 0.70),
        ScoredQuery("b", "b", 0.55), ScoredQuery(None, "a", 0.66), ScoredQuery(None, "b", 0.40)]


def test_counts_follow_the_slider():
    explorer = ThresholdExplorer(HAND, threshold=0.5)
    assert explorer.label.value == format_counts(explorer.counts)
    assert "<b>4/6 correct (67%)</b> · 1 false triggers · 0 misses · 1 wrong skill" == explorer.label.value
    assert explorer.figure.axes[0].get_title().startswith("threshold 0.500: 4/6 correct")
    explorer.slider.value = 0.7
    assert "<b>3/6 correct (50%)</b> · 0 false triggers · 2 misses · 1 wrong skill" == explorer.label.value
    assert explorer.figure.axes[0].get_title().startswith("threshold 0.700: 3/6 correct")


def test_slider_range_covers_every_score():
    explorer = ThresholdExplorer(HAND)
    assert explorer.slider.min <= 0.40 and explorer.slider.max >= 0.80


def test_static_figure_saves_a_non_empty_png(tmp_path: Path):
    path = save_figure(threshold_figure(HAND, 0.6, "hand-checked"), "explorer", folder=tmp_path)
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 10_000


def test_figure_displays_as_png_before_pyplot_is_imported():
    """Lesson 06 displays these figures (and the explorer's Output widget holds one) before any cell
    imports pyplot; without a PNG of their own they would show as '<Figure size … with 2 Axes>'."""
    from IPython.core.formatters import DisplayFormatter

    data, _ = DisplayFormatter().format(threshold_figure(HAND, 0.6, "hand-checked"))
    assert "image/png" in data
