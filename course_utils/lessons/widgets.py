"""The interactive threshold explorer for JupyterLab (lesson 08), built on the static figures in `plots`.

Choose the query set and the encoder, drag the slider: the histogram's threshold line moves, the counts
(correct, false triggers, misses, wrong skill) and the accuracy are recomputed, the rates panel marks
where you stand against the best threshold, and the verdict (`thresholds.Overlap.verdict`) says whether
any threshold separates the chosen queries. Everything redraws in the same output. Where no widget
frontend exists, `plots.threshold_figure` draws the same picture.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

import ipywidgets as widgets
from IPython.display import display

from course_utils.evaluation.plots import threshold_figure
from course_utils.selection.thresholds import Counts, ScoredQuery, best_threshold, count_outcomes, overlap


def format_counts(counts: Counts) -> str:
    """The live counts line shown under the slider."""
    return (
        f"<b>{counts.correct}/{counts.total} correct ({counts.accuracy:.0%})</b> · "
        f"{counts.false_triggers} false triggers · {counts.misses} misses · {counts.wrong_skill} wrong skill"
    )


def _choices(values: Sequence[str], labels: Mapping[str, str]) -> list[tuple[str, str]]:
    """Dropdown options (label, value), in first-seen order."""
    return [(labels.get(value, value), value) for value in dict.fromkeys(values)]


class ThresholdExplorer:
    """A threshold slider over the top scores of labelled query sets, with query-set and encoder dropdowns,
    live counts, the verdict and the figures.

    `scored` maps (encoder, query set) to that set's scored queries, for every pair; `labels` gives the
    names shown for the encoders (the backend's labels, e.g. "multilingual USE v3 (local)"). The slider
    spans every score of every pair, so a threshold keeps its value when the choice changes; it starts at
    the best threshold of the first pair unless `threshold` is given.
    """

    def __init__(self, scored: Mapping[tuple[str, str], Sequence[ScoredQuery]], threshold: float | None = None,
                 labels: Mapping[str, str] | None = None):
        self.scored = {key: list(queries) for key, queries in scored.items()}
        self.labels = dict(labels or {})
        first = next(iter(self.scored))
        scores = [q.top_score for queries in self.scored.values() for q in queries]
        self.encoder = widgets.Dropdown(options=_choices([e for e, _ in self.scored], self.labels),
                                        value=first[0], description="encoder")
        self.query_set = widgets.Dropdown(options=_choices([s for _, s in self.scored], {}), value=first[1],
                                          description="queries")
        self.slider = widgets.FloatSlider(
            value=best_threshold(self.scored[first])[0] if threshold is None else threshold,
            min=round(min(scores) - 0.05, 2), max=round(max(scores) + 0.05, 2), step=0.005,
            description="threshold", readout_format=".3f", continuous_update=False,
            layout=widgets.Layout(width="60%"),
        )
        self.label = widgets.HTML()
        self.output = widgets.Output()
        self.widget = widgets.VBox([widgets.HBox([self.query_set, self.encoder]), self.slider, self.label, self.output])
        for control in (self.encoder, self.query_set, self.slider):
            control.observe(lambda change: self.update(), names="value")
        self.update()

    @property
    def queries(self) -> list[ScoredQuery]:
        """The scored queries of the chosen encoder and query set."""
        return self.scored[(self.encoder.value, self.query_set.value)]

    @property
    def title(self) -> str:
        return f"{self.labels.get(self.encoder.value, self.encoder.value)} on the {self.query_set.value} queries"

    @property
    def counts(self) -> Counts:
        return count_outcomes(self.queries, self.slider.value)

    @property
    def verdict(self) -> str:
        """Whether any threshold separates the chosen queries (`thresholds.Overlap.verdict`)."""
        return overlap(self.queries).verdict()

    def update(self) -> None:
        """Recompute the counts and the verdict, and redraw the figure in place, for the current choices."""
        self.label.value = f"{format_counts(self.counts)}<br>{escape(self.verdict)}"
        self.figure = threshold_figure(self.queries, self.slider.value, self.title)
        with self.output:
            self.output.clear_output(wait=True)
            display(self.figure)

    def _ipython_display_(self) -> None:
        display(self.widget)
