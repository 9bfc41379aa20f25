"""The threshold explorer's counts follow its slider, its data and verdict follow its query-set and encoder
choices; the static figures save as real PNGs."""
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from course_utils.evaluation.plots import save_figure, threshold_figure  # noqa: E402
from course_utils.selection.thresholds import ScoredQuery, overlap  # noqa: E402
from course_utils.lessons.widgets import ThresholdExplorer, format_counts  # noqa: E402

# The hand-checked set of tests/selection/test_thresholds.py.
HAND = [ScoredQuery("a", "a", 0.80), ScoredQuery("a", "a", 0.62), ScoredQuery("b", "a", 0.70),
        ScoredQuery("b", "b", 0.55), ScoredQuery(None, "a", 0.66), ScoredQuery(None, "b", 0.40)]
# A second set that a threshold separates, and a second encoder whose scores sit lower.
SEPARABLE = [ScoredQuery("a", "a", 0.9), ScoredQuery("b", "b", 0.8), ScoredQuery(None, "a", 0.3)]
LOWER = [ScoredQuery(q.expected, q.top_skill, q.top_score - 0.3) for q in HAND]
SETS = {("enc1", "hand"): HAND, ("enc1", "separable"): SEPARABLE,
        ("enc2", "hand"): LOWER, ("enc2", "separable"): SEPARABLE[:2]}
LABELS = {"enc1": "encoder one (local)", "enc2": "encoder two (local)"}


def histogram_heights(explorer: ThresholdExplorer) -> list[float]:
    """The bar heights of the explorer's histogram panel, all groups together."""
    return [patch.get_height() for patch in explorer.figure.axes[0].patches]


def test_counts_follow_the_slider():
    explorer = ThresholdExplorer({("enc1", "hand"): HAND}, threshold=0.5)
    assert explorer.label.value.startswith(format_counts(explorer.counts) + "<br>no threshold separates")
    assert explorer.label.value.startswith("<b>4/6 correct (67%)</b> · 1 false triggers · 0 misses · 1 wrong skill")
    assert explorer.figure.axes[0].get_title().startswith("threshold 0.500: 4/6 correct")
    explorer.slider.value = 0.7
    assert explorer.label.value.startswith("<b>3/6 correct (50%)</b> · 0 false triggers · 2 misses · 1 wrong skill")
    assert explorer.figure.axes[0].get_title().startswith("threshold 0.700: 3/6 correct")


def test_slider_range_covers_every_score_of_every_choice():
    explorer = ThresholdExplorer(SETS)
    assert explorer.slider.min <= 0.10 and explorer.slider.max >= 0.90


def test_dropdowns_offer_every_set_and_encoder_by_label():
    explorer = ThresholdExplorer(SETS, labels=LABELS)
    assert [label for label, _ in explorer.query_set.options] == ["hand", "separable"]
    assert [label for label, _ in explorer.encoder.options] == ["encoder one (local)", "encoder two (local)"]
    assert explorer.figure._suptitle.get_text() == "encoder one (local) on the hand queries"


def test_choosing_a_set_or_encoder_redraws_in_place_with_its_verdict():
    explorer = ThresholdExplorer(SETS, threshold=0.5, labels=LABELS)
    output, first_figure = explorer.output, explorer.figure
    assert overlap(HAND).verdict() in explorer.label.value
    assert explorer.label.value.startswith("<b>4/6 correct (67%)</b>")
    assert explorer.label.value.count("no threshold separates these") == 1
    hand_heights = histogram_heights(explorer)

    explorer.query_set.value = "separable"
    assert explorer.queries == SEPARABLE
    assert "threshold 0.550 separates these 3 queries" in explorer.label.value
    assert explorer.label.value.startswith("<b>3/3 correct (100%)</b>")
    assert sum(histogram_heights(explorer)) == 3 and histogram_heights(explorer) != hand_heights
    assert explorer.figure is not first_figure and explorer.widget.children[-1] is output  # the same output

    explorer.encoder.value = "enc2"
    assert explorer.queries == SEPARABLE[:2]
    assert "threshold 0.799 separates these 2 queries" in explorer.label.value
    assert explorer.figure._suptitle.get_text() == "encoder two (local) on the separable queries"
    assert explorer.slider.value == 0.5  # the threshold stays where it was: does it transfer?

    explorer.query_set.value = "hand"
    assert explorer.queries == LOWER
    assert overlap(LOWER).verdict() in explorer.label.value
    assert explorer.figure.axes[0].get_title().startswith("threshold 0.500: 3/6 correct")


def test_static_figure_saves_a_non_empty_png(tmp_path: Path):
    path = save_figure(threshold_figure(HAND, 0.6, "hand-checked"), "explorer", folder=tmp_path)
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 10_000


def test_figure_displays_as_png_before_pyplot_is_imported():
    """Lesson 08 displays these figures (and the explorer's Output widget holds one) before any cell
    imports pyplot; without a PNG of their own they would show as '<Figure size … with 2 Axes>'."""
    from IPython.core.formatters import DisplayFormatter

    data, _ = DisplayFormatter().format(threshold_figure(HAND, 0.6, "hand-checked"))
    assert "image/png" in data
