"""`run_audit`: every check of the audit on a skills folder, read-only, into one `AuditReport`.

In order: validation as the chosen harness reads the skills, the listing that harness builds (none for the
spec), descriptions that say what but not when, the pairs most likely to be confused (lexical, embedding or
both), and with a query file the course's trigger evaluation, with what fired instead, the attractor skills and
the gate on accuracy. Then the findings the selected rules make, each on the line of its file it is about
(`lines.locate`), those a directive suppresses set apart (`suppress.apply`), and the five most useful of them.
"""
from __future__ import annotations

import dataclasses
import subprocess
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm.auto import tqdm

from course_utils.audit.config import Settings
from course_utils.audit.body import body_findings
from course_utils.audit.checks import (claude_findings, listing_findings, listing_section, shown_path,
                                       validation_findings, when_findings, when_section)
from course_utils.audit.folders import Collection, collect, shadowed
from course_utils.audit.lines import locate
from course_utils.audit.pairs import embedding_pairs, lexical_pairs, pair_findings
from course_utils.audit.queryfiles import QueryFile, load_query_file
from course_utils.audit.report import (
    STANDS_OUT_Z,
    Attractor,
    AuditReport,
    ConfusablePair,
    Confusion,
    Finding,
    AccuracyGate,
    PairsSection,
    RateValue,
    SelectorResult,
    TriggerSection,
    UnknownQuery,
    ValidationSection,
)
from course_utils.audit.rules import RULES, SEVERITIES, matches
from course_utils.audit.suppress import apply as apply_suppressions
from course_utils.evaluation.outcomes import Report
from course_utils.skills.queries import LabelledQuery, QuerySetError, load_queries
from course_utils.skills.skill import Diagnostic, SkillLoader

if TYPE_CHECKING:
    from course_utils.evaluation.trigger import Options, TriggerRun

RATE_COLUMNS = (("accuracy", "accuracy"), ("positive_accuracy", "must trigger"), ("none_accuracy", "must not"))
SUMMARY_COUNT = 5
MIN_CONFUSIONS = 2
"""A confusion, or an attractor's take, seen fewer times than this is not a finding: one query is not a finding."""
RULE_ORDER = {code: i for i, code in enumerate(("SK0", "SK201", "SK501", "SK401", "SK402", "SK301", "SK302",
                                                  "SK403", "SK202", "SK101", "SK102"))}
"""The summary's order, by what a finding costs when left undone: a skill that does not load never triggers;
one the listing hides is chosen blind; a failed gate or a confusion seen twice is measured; a pair that stands
out is likely to be confused; a missing "when" or "Not for" is a guess."""


def read_folder(root: Path | Sequence[Path], harness: str | None = None
                ) -> tuple[SkillLoader, list[Diagnostic], Collection]:
    """The skills under `root` (one path or several) that pass the validator's rules as `harness` reads them
    (the Agent Skills spec's when None), every problem found, and where they were found (`folders.collect`).

    A path may be one skill folder (as `validate ./my-skill` takes it), a skills folder, or a repository
    holding skills folders at any depth. Of two skills with one name the loader keeps the first; the
    duplicate is returned by `duplicate_findings`, never dropped.
    """
    paths = [Path(root)] if isinstance(root, (str, Path)) else [Path(p) for p in root]
    found = collect(paths, harness)
    return SkillLoader(found.skills), list(found.diagnostics), found


def duplicate_findings(found: Collection, harness: str | None) -> list[Finding]:
    """SK010 for each skill a file of the same name shadows: which file is kept, which is not, and by what rule."""
    findings = []
    for kept, lost, why in shadowed(found.skills, harness):
        file, first = shown_path(lost.path, found.base), shown_path(kept.path, found.base)
        findings.append(Finding("SK010", RULES["SK010"].severity,
                                f"{file} is shadowed by {first}: both name the skill {lost.name!r}, and {why}",
                                RULES["SK010"].fix, "validation", file,
                                file=file, line=None, field="name"))
    return findings


def changed_skills(root: Path, since: str) -> set[str]:
    """The skill folders under `root` that differ from git revision `since` (committed, staged or not, new files
    included). Raises RuntimeError when git cannot say."""
    root = Path(root).resolve()
    commands = (["git", "diff", "--name-only", "--relative", since, "--", "."],
                ["git", "ls-files", "--others", "--exclude-standard", "--", "."])
    names: set[str] = set()
    for command in commands:
        done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
        if done.returncode:
            raise RuntimeError(f"git cannot compare {root} with {since}: {done.stderr.strip()}")
        names |= {Path(line).parts[0] for line in done.stdout.splitlines() if line.strip()}
    return names


def split_queries(queries: Sequence[LabelledQuery], names: set[str]) -> tuple[list[int], list[UnknownQuery]]:
    """The indexes of the queries whose expected skill is in the catalog (or none), and the others."""
    kept, unknown = [], []
    for number, query in enumerate(queries, 1):
        if query.expected is None or query.expected in names:
            kept.append(number - 1)
        else:
            unknown.append(UnknownQuery(number, query.query, query.expected))
    return kept, unknown


def confusions(report: Report, acceptable: dict[str, tuple[str, ...]] | None = None) -> tuple[Confusion, ...]:
    """Which skill fired instead, most frequent first; a decision naming a query's neutral skill is left out."""
    acceptable = acceptable or {}
    counts = Counter((m["expected"], m["got"]) for m in report.mistakes
                     if m["got"] not in acceptable.get(m["query"], ()))
    ordered = sorted(counts.items(), key=lambda c: (-c[1], str(c[0][0]), str(c[0][1])))
    return tuple(Confusion(e, g, n) for (e, g), n in ordered)


def attractors(found: Sequence[Confusion]) -> tuple[Attractor, ...]:
    """The skills that took queries meant for another skill or for none, those that took most first."""
    stolen: Counter[str] = Counter()
    false: Counter[str] = Counter()
    for c in found:
        if c.got is not None:
            (false if c.expected is None else stolen)[c.got] += c.count
    names = set(stolen) | set(false)
    rows = [Attractor(n, stolen[n], false[n]) for n in names]
    return tuple(sorted(rows, key=lambda a: (-a.taken, a.skill)))


def confusable_pairs(pairs: PairsSection | None, trigger: TriggerSection | None) -> tuple[ConfusablePair, ...]:
    """Every pair that a signal ranks among its closest (lexical, embedding) or that the most accurate selector
    confused (observed, both directions summed), with each signal's value; the most flagged first."""
    lexical = {frozenset((p.a, p.b)): p.z for p in (pairs.signal("lexical").pairs if pairs and pairs.signal("lexical")
                                                      else ())}
    embedding = {frozenset((p.a, p.b)): p.z for p in (pairs.signal("embedding").pairs
                                                        if pairs and pairs.signal("embedding") else ())}
    observed: Counter[frozenset[str]] = Counter()
    evaluated = trigger is not None and bool(trigger.selectors)
    if evaluated:
        for c in most_accurate(trigger.selectors).confusions:
            if c.expected and c.got:
                observed[frozenset((c.expected, c.got))] += c.count
    rows = []
    for key in set(lexical) | set(embedding) | set(observed):
        a, b = sorted(key)
        z = (lexical.get(key) or 0, embedding.get(key) or 0)
        flagged = sum(v >= STANDS_OUT_Z for v in z) + (observed.get(key, 0) >= MIN_CONFUSIONS)
        rows.append(ConfusablePair(a, b, lexical.get(key), embedding.get(key),
                                   observed.get(key, 0) if evaluated else None, flagged))
    return tuple(sorted(rows, key=lambda r: (-r.signals, -(r.observed or 0), -max(r.lexical_z or 0, r.embedding_z or 0),
                                             r.a, r.b)))


def trigger_options(client: Any, loader: SkillLoader, settings: Settings) -> Options:
    """The evaluation's options: `settings.k`; with development queries, the threshold, k and the gate chosen on
    them, and the queries themselves for a selector that fits on them, as `eval-trigger --dev` does."""
    from course_utils.evaluation.trigger import K_CANDIDATES, Options, choose_on_dev, chosen_on_dev

    options = Options(k=settings.k)
    if settings.dev is None:
        return options
    dev = load_queries(settings.dev, loader.names)
    return chosen_on_dev(options, choose_on_dev(client, loader, dev, ks=K_CANDIDATES, progress=False), dev)


def selector_rows(run: TriggerRun, acceptable: dict[str, tuple[str, ...]]) -> tuple[SelectorResult, ...]:
    """One row per selector that ran: its rates with intervals, its cost, and which skill fired instead."""
    rows = []
    for report in run.reports:
        rates = {key: RateValue.of(label, report.rate(key)) for key, label in RATE_COLUMNS}
        rows.append(SelectorResult(report.selector, rates, report.mean_prompt_tokens, report.seconds_per_decision,
                                   report.errors, confusions(report, acceptable), report.to_dict()))
    return tuple(rows)


def accuracy_gate(rows: Sequence[SelectorResult], min_accuracy: float | None) -> AccuracyGate | None:
    """`--min-accuracy` on each selector's accuracy, judged on its Wilson lower bound; None without a gate."""
    if min_accuracy is None:
        return None
    gated = tuple((r.selector, r.rates["accuracy"]) for r in rows)
    return AccuracyGate(min_accuracy, all((rate.low or 0) >= min_accuracy for _, rate in gated), gated)


def trigger_section(client: Any, loader: SkillLoader, file: QueryFile, settings: Settings
                    ) -> tuple[TriggerSection, dict[str, bytes]]:
    """The course's trigger evaluation of `settings.queries` (read as `file`) on the audited catalog: rates with
    intervals, cost, confusions, attractors, the gate; with development queries, chosen there first
    (`trigger_options`). `settings.concurrency`: decisions asked at once (`trigger.run_selectors`)."""
    from course_utils.evaluation.trigger import build_selectors, histogram_figure, run_selectors

    kept, unknown = split_queries(file.queries, set(loader.names))
    if settings.only is not None:  # --changed: the queries that name a touched skill
        kept = [i for i in kept if file.queries[i].expected in settings.only]
    queries = [file.queries[i] for i in kept]
    base = dict(file=str(settings.queries), format=file.format, queries=len(queries), unknown=tuple(unknown))
    if not queries or not loader.skills:
        why = ("no valid skill" if not loader.skills else "no query names a skill the change touched"
               if settings.only is not None else "every query names a skill not in the folder")
        return TriggerSection(**base, error=f"no query to evaluate: {why}", setup={}), {}
    chosen = build_selectors(client, loader, selector_names(settings), trigger_options(client, loader, settings))
    run = run_selectors(chosen, queries, concurrency=settings.concurrency)
    rows = selector_rows(run, {file.queries[i].query: file.acceptable[i] for i in kept})
    figures = {}
    if chosen.similarity is not None and "similarity" in run.outcomes:
        from course_utils.audit.figures import png  # matplotlib: only when there is a figure to draw

        figures["histogram"] = png(histogram_figure(run.outcomes["similarity"], chosen.similarity.threshold,
                                                    f"Top-1 cosine scores ({chosen.embedding_model})"))
    return TriggerSection(**base, error=None, setup=chosen.describe(), selectors=rows,
                          comparisons=tuple(c.to_dict() for c in run.comparisons),
                          attractors=attractors(most_accurate(rows).confusions),
                          gate=accuracy_gate(rows, settings.min_accuracy)), figures


def most_accurate(rows: Sequence[SelectorResult]) -> SelectorResult:
    """The selector with the highest accuracy (the first of a tie): the one whose confusions the audit reports."""
    return max(rows, key=lambda r: r.rates["accuracy"].value or 0)


def selector_names(settings: Settings) -> list[str]:
    """The selectors `settings` names (`selectors.parse`: the alias resolved), or every one that can run with the
    development queries given or without them. ValueError for an unknown name or one that needs absent dev data."""
    from course_utils.evaluation import selectors

    dev = settings.dev is not None
    return selectors.parse(",".join(settings.selectors), dev, selectors.available(dev))


def trigger_findings(trigger: TriggerSection, loader: SkillLoader) -> list[Finding]:
    """SK403 for unknown skills, SK401 for confusions seen twice (by the most accurate selector), SK402 for
    the top attractor, SK501 for each selector whose accuracy's lower bound misses the gate."""
    def file_of(name: str | None) -> str | None:
        skill = loader.skills.get(name) if name else None
        return shown_path(skill.path, skill.path.parent.parent) if skill else None

    found = []
    if trigger.unknown:
        names = sorted({u.expected for u in trigger.unknown})
        found.append(Finding("SK403", RULES["SK403"].severity,
                             f"{len(trigger.unknown)} queries of {trigger.file} expect skills not in the folder "
                             f"({', '.join(names[:4])}{' …' if len(names) > 4 else ''}): left out",
                             RULES["SK403"].fix, "trigger", "unknown skills"))
    if not trigger.selectors:
        return found
    best = most_accurate(trigger.selectors)
    for c in best.confusions:
        if c.count < MIN_CONFUSIONS:
            continue
        if c.expected is None:
            text = f"{c.got} fired on {c.count} queries that need no skill"
        elif c.got is None:
            text = f"{c.count} queries for {c.expected} triggered nothing"
        else:
            text = f"{c.count} queries for {c.expected} went to {c.got}"
        shown = f"{c.expected or '(no skill)'} -> {c.got or '(no skill)'}"
        found.append(Finding("SK401", RULES["SK401"].severity, f"{text} ({best.selector})", RULES["SK401"].fix,
                             "trigger", f"{best.selector}, {shown}", file=file_of(c.got or c.expected),
                             skill=c.got or c.expected, weight=c.count,
                             other=c.expected if c.got and c.expected else None, field="description"))
    if trigger.attractors and trigger.attractors[0].taken >= MIN_CONFUSIONS:
        a = trigger.attractors[0]
        found.append(Finding("SK402", RULES["SK402"].severity,
                             f"{a.skill} takes the most queries that are not its own ({best.selector}): {a.stolen} "
                             f"meant for other skills, {a.false_triggers} meant for none", RULES["SK402"].fix,
                             "trigger", f"{best.selector}, attractors", file=file_of(a.skill), skill=a.skill,
                             weight=a.taken, field="description"))
    if trigger.gate is not None:
        for selector, rate in trigger.gate.rows:
            if (rate.low or 0) < trigger.gate.min_accuracy:
                found.append(Finding(
                    "SK501", RULES["SK501"].severity,
                    f"{selector}: accuracy {rate.successes}/{rate.n} = {rate.value or 0:.2f}, 95 % interval "
                    f"{rate.low or 0:.2f}–{rate.high or 0:.2f}; its lower bound is below the gate "
                    f"{trigger.gate.min_accuracy:.2f}", RULES["SK501"].fix, "trigger", f"{selector}, gate"))
    return found


def selected(findings: Sequence[Finding], select: Sequence[str] = (), ignore: Sequence[str] = ()) -> list[Finding]:
    """The findings whose rule `select` names (every rule when empty) and `ignore` does not."""
    return [f for f in findings if (not select or matches(f.code, list(select))) and not matches(f.code, list(ignore))]


def rank(finding: Finding) -> tuple[int, int, float]:
    """The order among findings: most severe first, then by `RULE_ORDER`, then weight."""
    order = min((i for prefix, i in RULE_ORDER.items() if finding.code.startswith(prefix)), default=len(RULE_ORDER))
    return -SEVERITIES.index(finding.severity), order, -finding.weight


def summarise(findings: Sequence[Finding], count: int = SUMMARY_COUNT) -> tuple[Finding, ...]:
    """The `count` most useful findings: one per rule (its weightiest, carrying how many it stands for), the
    most severe rules first, then those with the most findings, then by `RULE_ORDER`."""
    by_code: dict[str, list[Finding]] = {}
    for finding in sorted(findings, key=rank):
        by_code.setdefault(finding.code, []).append(finding)
    heads = [dataclasses.replace(group[0], count=len(group)) for group in by_code.values()]
    heads.sort(key=lambda f: (rank(f)[0], -f.count, rank(f)[1:]))
    return tuple(heads[:count])


def needs_client(settings: Settings) -> bool:
    """Whether the audit embeds or decides: embedding pairs, or a query file to evaluate."""
    return settings.pairs in ("embedding", "both") or settings.queries is not None


def run_audit(root: Path | Sequence[Path], settings: Settings | None = None, client: Any = None
              ) -> tuple[AuditReport, dict[str, bytes]]:
    """Audit the skills under `root` (one path or several, see `read_folder`) as `settings` say; return the report
    and its figures (PNG bytes, by name).

    `client` (else `make_client()`, made only when `needs_client`) embeds and, with queries, decides.
    `settings.only`: the skills to audit (`--changed`): the others are read (a touched skill is still compared
    with them) but their own findings are not reported. Raises QuerySetError for a query file that cannot be read
    and ValueError for selectors that cannot run, before any work.
    """
    settings = settings or Settings()
    started = time.perf_counter()
    query_data = load_query_file(settings.queries, skill=settings.query_skill) if settings.queries else None
    if query_data is not None:
        selector_names(settings)  # fail before work
    if client is None and needs_client(settings):
        from course_utils.backend.client import make_client

        client = make_client()
    bar = tqdm(total=5, desc="audit", unit="step", disable=not settings.progress)
    loader, diagnostics, found = read_folder(root, settings.harness)
    problems = validation_findings(diagnostics, found.base) + duplicate_findings(found, settings.harness)
    invalid = len({f.file for f in problems if f.severity == "error" and f.code != "SK010"})
    validation = ValidationSection(len(loader.skills), invalid, tuple(problems))
    bar.update()
    listing = listing_section(loader, settings.harness, settings.context_tokens)
    bar.update()
    when = when_section(loader, settings.harness)
    bar.update()
    pair_section = pairs_section(client, loader, settings)
    bar.update()
    findings = (problems + claude_findings(loader, settings.harness) + listing_findings(listing, loader)
                + when_findings(when, loader) + body_findings(loader, found.base, settings.harness))
    for signal in pair_section.signals if pair_section else ():
        findings += pair_findings(signal, loader)
    figures: dict[str, bytes] = {}
    trigger = None
    if query_data is not None:
        trigger, figures = trigger_section(client, loader, query_data, settings)
        findings += trigger_findings(trigger, loader)
    bar.update()
    bar.close()
    findings, suppressed = final_findings(findings, found.base, loader, settings)
    only = tuple(sorted(settings.only)) if settings.only is not None else None
    report = AuditReport(str(found.base), settings.harness, len(loader.skills), validation, listing, when,
                         pair_section, trigger, tuple(findings), summarise(findings), time.perf_counter() - started,
                         only, confusable_pairs(pair_section, trigger), found.folders, tuple(suppressed))
    return report, figures


def pairs_section(client: Any, loader: SkillLoader, settings: Settings) -> PairsSection | None:
    """The pairs most likely to be confused by each signal `settings.pairs` asks for; None for fewer than two
    skills or no signal."""
    signals = []
    if len(loader.skills) >= 2:
        if settings.pairs in ("lexical", "both"):
            signals.append(lexical_pairs(loader))
        if settings.pairs in ("embedding", "both"):
            signals.append(embedding_pairs(client, loader, progress=settings.progress))
    return PairsSection(tuple(signals)) if signals else None


def final_findings(findings: list[Finding], root: Path, loader: SkillLoader, settings: Settings
                   ) -> tuple[list[Finding], list[Finding]]:
    """The findings to report and those a directive suppresses (`suppress.apply`): SK008 when nothing was found,
    those of the touched skills (`--changed`), those the selected rules make, each on its line, the most severe
    first."""
    if not loader.skills and not any(f.code != "SK009" for f in findings):
        findings = [*findings, Finding("SK008", RULES["SK008"].severity, f"{root} has no folder with a SKILL.md",
                                       RULES["SK008"].fix, "validation", str(root))]
    if settings.only is not None:
        findings = [f for f in findings if f.skill is None or f.skill in settings.only or f.other in settings.only]
    located = locate(selected(findings, settings.select, settings.ignore), root, loader)
    kept, suppressed = apply_suppressions(located, root, settings)
    return (sorted(selected(kept, settings.select, settings.ignore), key=report_order),
            sorted(suppressed, key=report_order))


def report_order(finding: Finding) -> tuple[int, str, str, str]:
    """The report's order: the most severe first, then by code, file and message."""
    return -SEVERITIES.index(finding.severity), finding.code, finding.file or "", finding.message


def fails(report: AuditReport, fail_on: str = "error") -> bool:
    """Whether any finding is at least as severe as `fail_on`."""
    return any(SEVERITIES.index(f.severity) >= SEVERITIES.index(fail_on) for f in report.findings)


__all__ = ["run_audit", "read_folder", "changed_skills", "fails", "QuerySetError"]
