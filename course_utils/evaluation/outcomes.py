"""Run selectors over a labelled query set and report what they got right, wrong, and what it cost.

Used from `notebooks/06_selection_by_model.ipynb` on, and by `python -m course_utils eval-trigger`.
A selector is any callable `(query) -> Decision`; nothing here knows which backend is behind it.

Every query lands in exactly one bucket: correct, false trigger (a skill where none was expected),
miss (none where a skill was expected), wrong skill, or error (no run gave a decision: the selector raised,
or returned a decision carrying an error such as a malformed answer).
Triggering is scored like retrieval: precision = right triggers / all triggers,
recall = right triggers / queries that must trigger. Every rate carries a 95 % Wilson interval, and
`paired_comparison` tells whether two selectors really differ on the same queries (`course_utils.evaluation.stats`).

With several runs per query (a sampling backend), the decision is the most frequent answer of the runs
that succeeded, a tie deciding "no skill"; `majority` spells out the rule.
"""
from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from tqdm.auto import tqdm

from course_utils.selection.faults import MAX_REASON, describe_error
from course_utils.skills.queries import LabelledQuery, verdict
from course_utils.selection.pick import Decision, Selector
from course_utils.evaluation.stats import SIGNIFICANCE, Rate, format_p, mcnemar_exact
from course_utils.skills.text import shorten


@dataclass(frozen=True)
class Outcome:
    """One labelled query and the decisions a selector made on it, one per run."""

    query: LabelledQuery
    decisions: tuple[Decision, ...]

    @property
    def succeeded(self) -> list[Decision]:
        return [d for d in self.decisions if d.error is None]

    @property
    def answers(self) -> list[str | None]:
        """Each successful run's answer: a skill, or None for "no skill"."""
        return [d.skill for d in self.succeeded]

    @property
    def chosen(self) -> str | None:
        """The decision: the majority answer of the successful runs (see `majority`); None if all failed."""
        return majority(self.answers)

    @property
    def agreement(self) -> float | None:
        """The share of successful runs that gave the decided answer (1.0 with one run); None if all failed."""
        answers = self.answers
        return answers.count(self.chosen) / len(answers) if answers else None

    @property
    def error(self) -> str | None:
        """The first run's error when no run succeeded."""
        return None if self.succeeded else self.decisions[0].error

    @property
    def verdict(self) -> str:
        """correct, false trigger, miss, wrong skill (`queries.verdict`), or error when no run gave a decision."""
        return "error" if self.error is not None else verdict(self.query.expected, self.chosen)

    @property
    def score(self) -> float | None:
        """The mean top-1 score over the successful runs, for selectors that score."""
        scores = [d.score for d in self.succeeded if d.score is not None]
        return statistics.fmean(scores) if scores else None

    @property
    def top_skill(self) -> str | None:
        """The nearest skill whatever the threshold, for selectors that rank."""
        ranked = [d.top_k[0][0] for d in self.succeeded if d.top_k]
        return ranked[0] if ranked else None

    def record(self) -> dict[str, Any]:
        """This query's line in the JSON report: the query, its label, the decision and every run.

        `runs[i]` is run i's skill (None: no skill, or the run failed) and `errors[i]` its error (None if
        it answered); `prompt_tokens` and `seconds` are means over the successful runs, `top_k` is the
        first successful run's shortlist; `decline_probability` (the model's, at its decision point) and
        `pick_probability` (the gated hybrid's P(right)) appear when a run gave them, one value per run.
        """
        ok = self.succeeded
        ranked = next((d.top_k for d in ok if d.top_k), ())
        return {
            "query": self.query.query, "expected": self.query.expected, "kind": self.query.kind,
            "lang": self.query.lang, "decided": self.chosen, "verdict": self.verdict,
            "runs": [d.skill if d.error is None else None for d in self.decisions],
            "errors": [None if d.error is None else shorten(d.error, MAX_REASON) for d in self.decisions],
            "agreement": self.agreement,
            "prompt_tokens": statistics.fmean(d.prompt_tokens for d in ok) if ok else None,
            "seconds": statistics.fmean(d.seconds for d in ok) if ok else None,
            "score": self.score,
            **self.probabilities(),
            "top_k": [[skill, score] for skill, score in ranked] or None,
        }


    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Outcome:
        """An outcome read back from `record()`: each run's skill and error exactly; its tokens, seconds and
        score are the record's means over the runs that answered (exact with one run)."""
        query = LabelledQuery(record["query"], record["expected"], record["kind"], record["lang"])
        decisions = tuple(
            Decision(skill=skill, error=error, prompt_tokens=round(record["prompt_tokens"] or 0),
                     seconds=record["seconds"] or 0.0, score=None if error else record["score"])
            for skill, error in zip(record["runs"], record["errors"]))
        return cls(query, decisions)

    def probabilities(self) -> dict[str, Any]:
        """The probabilities the runs carry (a value with one run, a list with several); none without any."""
        found = {}
        for key in ("decline_probability", "pick_probability"):
            values = [getattr(d, key) for d in self.decisions]
            if any(v is not None for v in values):
                found[key] = values[0] if len(values) == 1 else values
        return found


def majority(answers: Sequence[str | None]) -> str | None:
    """The decision of several runs: the most frequent answer, "no skill" (None) counting as an answer.

    A tie for first place decides None: when its runs cannot agree, the harness activates nothing.
    Pass only the runs that succeeded (`Outcome.chosen` does); no answer at all decides None.
    Examples: [a, a, None] -> a; [a, None] -> None; [a, b] -> None; [a, a, b, None] -> a.
    """
    ranked = Counter(answers).most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def decide(selector: Selector, query: str) -> Decision:
    """One decision; an exception becomes a decision whose error is `faults.describe_error(err)`, one line saying
    what failed."""
    try:
        return selector(query)
    except Exception as err:  # one failing decision is recorded, the run goes on
        return Decision(None, error=describe_error(err))


def run_selector(selector: Selector, queries: Sequence[LabelledQuery], runs: int = 1,
                 name: str = "selector", progress: bool = True, concurrency: int = 1) -> list[Outcome]:
    """Ask `selector` about every query `runs` times; an exception becomes a decision with an error (`decide`).

    With `concurrency` above 1, that many decisions are asked at once (threads: for a server, which answers them
    in parallel; `backend.client.check_concurrency` keeps the in-process model at 1); the outcomes are in query
    order and each query's runs in run order, whatever order the answers came in. The bar counts decisions.
    Decisions already made are kept whatever happens later; only an interrupt (Ctrl-C) stops the run.
    """
    tasks = [(i, query.query) for i, query in enumerate(queries) for _ in range(runs)]
    decisions: list[list[Decision]] = [[] for _ in queries]
    with tqdm(total=len(tasks), desc=name, unit="decision", disable=not progress) as bar:
        if concurrency <= 1:
            for i, text in tasks:
                decisions[i].append(decide(selector, text))
                bar.update()
        else:
            with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=name) as pool:
                futures = {pool.submit(decide, selector, text): n for n, (i, text) in enumerate(tasks)}
                done: dict[int, Decision] = {}
                try:
                    for future in as_completed(futures):
                        done[futures[future]] = future.result()
                        bar.update()
                except BaseException:  # an interrupt: nothing more is asked
                    pool.shutdown(cancel_futures=True)
                    raise
            for n, (i, _) in enumerate(tasks):
                decisions[i].append(done[n])
    return [Outcome(query, tuple(made)) for query, made in zip(queries, decisions)]


RATES = {  # each rate: (its successes, its total), both Report fields
    "accuracy": ("correct", "queries"),
    "positive_accuracy": ("positives_correct", "positives"),
    "none_accuracy": ("nones_correct", "nones"),
    "precision": ("positives_correct", "triggers"),
    "recall": ("positives_correct", "positives"),
}


@dataclass
class Report:
    """What one selector did on one query set. `to_dict()` is what `eval-trigger --json` writes.

    The rates and their 95 % Wilson intervals (`accuracy`, `accuracy_ci`, …; None without data) are
    computed from the counts (see `RATES`). `mean_agreement` and `disagreeing_queries` describe the
    runs of each query; they are None when each query ran once. `failed_runs` counts the runs left out
    of the vote (errors). `records` holds every query's decision and runs (`Outcome.record`).
    """

    selector: str
    queries: int
    runs: int
    correct: int
    accuracy: float | None = field(init=False)
    accuracy_ci: list[float] | None = field(init=False)
    positives: int
    positives_correct: int
    positive_accuracy: float | None = field(init=False)
    positive_accuracy_ci: list[float] | None = field(init=False)
    nones: int
    nones_correct: int
    none_accuracy: float | None = field(init=False)
    none_accuracy_ci: list[float] | None = field(init=False)
    false_triggers: int
    misses: int
    wrong_skill: int
    errors: int
    triggers: int
    precision: float | None = field(init=False)
    precision_ci: list[float] | None = field(init=False)
    recall: float | None = field(init=False)
    recall_ci: list[float] | None = field(init=False)
    mean_prompt_tokens: float | None
    median_prompt_tokens: float | None
    seconds_per_decision: float | None
    mean_agreement: float | None
    disagreeing_queries: int | None
    failed_runs: int
    ranked_first: int | None = None
    min_positive_score: float | None = None
    max_none_score: float | None = None
    mistakes: list[dict[str, Any]] = field(default_factory=list)
    error_reasons: list[dict[str, str]] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for name in RATES:
            rate = self.rate(name)
            setattr(self, name, rate.value)
            setattr(self, f"{name}_ci", rate.interval)

    def rate(self, name: str) -> Rate:
        """One of the `RATES` with its counts and interval, e.g. `report.rate("accuracy").format()`."""
        successes, total = RATES[name]
        return Rate.of(getattr(self, successes), getattr(self, total))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        """A report read back from `to_dict()` (e.g. a recorded JSON file); the rates are recomputed."""
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.init and f.name in data})

    def mistake_lines(self) -> list[str]:
        """One line per mistake: `name: expected X -> got Y : "query"`."""
        return [f'{self.selector}: expected {m["expected"]} -> got {m["got"]} : "{shorten(m["query"])}"'
                for m in self.mistakes]

    def summary(self) -> str:
        """The report as the lessons print it: rates with their intervals, cost, runs, scores, every mistake."""
        pad = " " * (len(self.selector) + 2)
        lines = [
            f"{self.selector}: accuracy {self.rate('accuracy').format()}",
            f"{pad}must trigger {self.rate('positive_accuracy').format()} | "
            f"must not {self.rate('none_accuracy').format()}",
            f"{pad}precision {self.rate('precision').format('triggers')} | recall {self.rate('recall').format()}",
            f"{pad}false triggers {self.false_triggers}, misses {self.misses}, wrong skill {self.wrong_skill}, "
            f"errors {self.errors}",
            f"{pad}prompt tokens per decision: mean {_num(self.mean_prompt_tokens, ',.0f')}, median "
            f"{_num(self.median_prompt_tokens, ',.0f')} | {_num(self.seconds_per_decision, '.3f')} s per decision",
        ]
        if self.runs > 1:
            failed = f"{self.failed_runs} failed run{'' if self.failed_runs == 1 else 's'}"
            lines += [
                f"{pad}{self.runs} runs per query; the decision is the most frequent answer of the runs that "
                f"succeeded (no skill is an answer; a tie decides no skill)",
                f"{pad}share of runs agreeing with the decision: {_num(self.mean_agreement, '.2f')} on average; "
                f"runs disagreed on {self.disagreeing_queries}/{self.queries} queries; {failed} left out of the vote",
            ]
        if self.ranked_first is not None:
            lines.append(f"{pad}scores: min positive {_num(self.min_positive_score)} | max none "
                         f"{_num(self.max_none_score)} | nearest skill right on "
                         f"{self.ranked_first}/{self.positives} positives")
        lines += self.mistake_lines()
        reasons = Counter(e["error"] for e in self.error_reasons)
        lines += [f"{self.selector}: error on {n} quer{'y' if n == 1 else 'ies'}: {reason}"
                  for reason, n in reasons.items()]
        return "\n".join(lines)


def _num(value: float | None, spec: str = ".3f") -> str:
    return "n/a" if value is None else format(value, spec)


def evaluate(name: str, outcomes: Sequence[Outcome]) -> Report:
    """Score a selector's outcomes (see the module docstring for the buckets and rates)."""
    verdicts = Counter(o.verdict for o in outcomes)
    positives = [o for o in outcomes if o.query.expected is not None]
    nones = [o for o in outcomes if o.query.expected is None]
    decisions = [d for o in outcomes for d in o.succeeded]
    tokens = [d.prompt_tokens for d in decisions]
    runs = max((len(o.decisions) for o in outcomes), default=0)
    agreements = [o.agreement for o in outcomes if o.agreement is not None]
    report = Report(
        selector=name,
        queries=len(outcomes),
        runs=runs,
        correct=verdicts["correct"],
        positives=len(positives),
        positives_correct=sum(o.verdict == "correct" for o in positives),
        nones=len(nones),
        nones_correct=sum(o.verdict == "correct" for o in nones),
        false_triggers=verdicts["false trigger"],
        misses=verdicts["miss"],
        wrong_skill=verdicts["wrong skill"],
        errors=verdicts["error"],
        triggers=sum(o.chosen is not None for o in outcomes if o.error is None),
        mean_prompt_tokens=statistics.fmean(tokens) if tokens else None,
        median_prompt_tokens=statistics.median(tokens) if tokens else None,
        seconds_per_decision=statistics.fmean(d.seconds for d in decisions) if decisions else None,
        mean_agreement=statistics.fmean(agreements) if runs > 1 and agreements else None,
        disagreeing_queries=sum(len(set(o.answers)) > 1 for o in outcomes) if runs > 1 else None,
        failed_runs=sum(d.error is not None for o in outcomes for d in o.decisions),
        mistakes=[{"expected": o.query.expected, "got": o.chosen, "kind": o.query.kind, "query": o.query.query}
                  for o in outcomes if o.verdict not in ("correct", "error")],
        error_reasons=[{"query": o.query.query, "error": shorten(o.error, MAX_REASON)}
                       for o in outcomes if o.error is not None],
        records=[o.record() for o in outcomes],
    )
    if any(o.score is not None for o in outcomes):
        ranked = [o for o in positives if o.top_skill == o.query.expected and o.score is not None]
        none_scores = [o.score for o in nones if o.score is not None]
        report.ranked_first = len(ranked)
        report.min_positive_score = min((o.score for o in ranked), default=None)
        report.max_none_score = max(none_scores, default=None)
    return report


def _interval(rate: Rate) -> str:
    return "n/a" if rate.n == 0 else f"{rate.value:.3f} [{rate.low:.2f}, {rate.high:.2f}]"


def comparison_table(reports: Sequence[Report]) -> str:
    """The main numbers of several reports side by side, one column per selector; rates with their
    95 % interval in brackets."""
    rates = [("accuracy", "accuracy"), ("must trigger", "positive_accuracy"), ("must not trigger", "none_accuracy"),
             ("precision", "precision"), ("recall", "recall")]
    counts = [("false triggers", "false_triggers", "d"), ("misses", "misses", "d"), ("wrong skill", "wrong_skill", "d"),
              ("errors", "errors", "d"), ("mean prompt tokens", "mean_prompt_tokens", ",.0f"),
              ("seconds per decision", "seconds_per_decision", ".3f")]
    width = max(20, *(len(r.selector) for r in reports))
    lines = [f"{'':22}" + "".join(f"{r.selector:>{width + 2}}" for r in reports)]
    for label, key in rates:
        lines.append(f"{label:22}" + "".join(f"{_interval(r.rate(key)):>{width + 2}}" for r in reports))
    for label, key, spec in counts:
        lines.append(f"{label:22}" + "".join(f"{_num(getattr(r, key), spec):>{width + 2}}" for r in reports))
    return "\n".join(lines)


@dataclass(frozen=True)
class Comparison:
    """Two selectors on the same queries, query by query: who was right where, and the exact McNemar test.

    Only the discordant queries (one right, the other wrong) can tell the two apart; `p_value` is the
    chance of a split at least this uneven if both were equally good.
    """

    a: str
    b: str
    queries: int
    both_right: int
    only_a_right: int
    only_b_right: int
    both_wrong: int
    p_value: float
    discordant: list[dict[str, Any]]

    def verdict(self) -> str:
        """The result in plain words, e.g. `2 discordant queries (A right on 1, B right on 1): exact McNemar
        p = 1.000 — no evidence of a difference on these 30 queries (…)`."""
        n = self.only_a_right + self.only_b_right
        counts = (f"{n} discordant quer{'y' if n == 1 else 'ies'} ({self.a} right on {self.only_a_right}, "
                  f"{self.b} right on {self.only_b_right}): exact McNemar p {format_p(self.p_value)}")
        if self.p_value < SIGNIFICANCE:
            better = self.a if self.only_a_right > self.only_b_right else self.b
            return (f"{counts} — {better} was right more often: a finding by the rule used here "
                    f"(p < {SIGNIFICANCE}), about these {self.queries} queries")
        return (f"{counts} — no evidence of a difference on these {self.queries} queries "
                f"(the rule used here: a difference is a finding only at p < {SIGNIFICANCE})")

    def summary(self) -> str:
        """The counts, the verdict, then one line per discordant query."""
        lines = [f"{self.a} vs {self.b} on {self.queries} queries: both right {self.both_right}, only {self.a} right "
                 f"{self.only_a_right}, only {self.b} right {self.only_b_right}, both wrong {self.both_wrong}",
                 self.verdict()]
        lines += [f'  {d["right"]} right: expected {d["expected"]}; {self.a} -> {d["decided"][self.a]}, '
                  f'{self.b} -> {d["decided"][self.b]} : "{shorten(d["query"])}"' for d in self.discordant]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "verdict": self.verdict()}


def paired_comparison(a_name: str, a: Sequence[Outcome], b_name: str, b: Sequence[Outcome]) -> Comparison:
    """Compare two selectors' outcomes on the same queries, matched by query text.

    A query counts as right when its verdict is "correct" (an error is never right, as in the accuracy).
    Raises ValueError if the two do not hold the same queries, each once.
    """
    if a_name == b_name:
        raise ValueError(f"give the two selectors different names, not {a_name!r} twice")
    texts = [o.query.query for o in a]
    if len(set(texts)) != len(texts) or sorted(texts) != sorted(o.query.query for o in b):
        raise ValueError(f"{a_name} and {b_name} must be run on the same queries, each once, to be paired")
    by_text = {o.query.query: o for o in b}
    pairs = [(x, by_text[x.query.query]) for x in a]
    right = Counter((x.verdict == "correct", y.verdict == "correct") for x, y in pairs)
    return Comparison(
        a=a_name, b=b_name, queries=len(pairs),
        both_right=right[True, True], only_a_right=right[True, False],
        only_b_right=right[False, True], both_wrong=right[False, False],
        p_value=mcnemar_exact(right[True, False], right[False, True]),
        discordant=[{"query": x.query.query, "expected": x.query.expected,
                     "decided": {a_name: x.chosen, b_name: y.chosen},
                     "right": a_name if x.verdict == "correct" else b_name}
                    for x, y in pairs if (x.verdict == "correct") != (y.verdict == "correct")],
    )
