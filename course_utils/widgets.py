"""The interactive threshold explorer for JupyterLab (lesson 06), built on the static figures in `plots`.

Drag the slider: the histogram's threshold line moves, the counts (correct, false triggers, misses,
wrong skill) and the accuracy are recomputed, and the rates panel marks where you stand against the
best threshold. Where no widget frontend exists, `plots.threshold_figure` draws the same picture.
"""
from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets
from IPython.display import display

from course_utils.plots import threshold_figure
from course_utils.thresholds import Counts, ScoredQuery, count_outcomes


def format_counts(counts: Counts) -> str:
    """The live counts line shown under the slider."""
    return (
        f"<b>{counts.correct}/{counts.total} correct ({counts.accuracy:.0%})</b> · "
        f"{counts.false_triggers} false triggers · {counts.misses} misses · {counts.wrong_skill} wrong skill"
    )


class ThresholdExplorer:
    """A threshold slider over the top scores of a labelled query set, with live counts and figures."""

    def __init__(self, queries: Sequence[ScoredQuery], threshold: float = 0.5, title: str = ""):
        self.queries = list(queries)
        self.title = title
        scores = [q.top_score for q in self.queries]
        self.slider = widgets.FloatSlider(
            value=threshold, min=round(min(scores) - 0.05, 2), max=round(max(scores) + 0.05, 2), step=0.005,
            description="threshold", readout_format=".3f", continuous_update=False,
            layout=widgets.Layout(width="60%"),
        )
        self.label = widgets.HTML()
        self.output = widgets.Output()
        self.widget = widgets.VBox([self.slider, self.label, self.output])
        self.slider.observe(lambda change: self.update(), names="value")
        self.update()

    @property
    def counts(self) -> Counts:
        return count_outcomes(self.queries, self.slider.value)

    def update(self) -> None:
        """Recompute the counts and redraw the figure for the slider's current threshold."""
        self.label.value = format_counts(self.counts)
        self.figure = threshold_figure(self.queries, self.slider.value, self.title)
        with self.output:
            self.output.clear_output(wait=True)
            display(self.figure)

    def _ipython_display_(self) -> None:
        display(self.widget)
