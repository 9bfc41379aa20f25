"""The report's renderings: text, JSON, SARIF 2.1.0, GitHub workflow commands, and one HTML page.

Each is a function of the typed `AuditReport`. The page comes from a Jinja template with autoescaping on
(`templates/report.html.j2`): whatever a skill says is shown as text, never as markup.
"""
from __future__ import annotations

import base64
import json
from collections import Counter
from pathlib import Path
from typing import Any

from course_utils.audit.report import AuditReport, Finding, ListingSection, NoListing
from course_utils.audit.rules import RULES

FORMATS = ("text", "json", "sarif", "github")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVELS = {"error": "error", "warning": "warning", "info": "note"}
TOOL_NAME = "skill-audit"
MANUAL = "docs/audit.md"
"""The audit's manual in the repository, where each rule has an anchor: its code in lower case."""
SECTIONS = (("summary", "Summary: the most useful fixes"), ("findings", "Findings"), ("validation", "Validation"),
            ("body", "Body and bundled files"), ("listing", "Listing"), ("when", "What, when and not for"),
            ("pairs", "Pairs likely to be confused"), ("trigger", "Trigger evaluation"))
MAX_ROWS = 200
"""Rows a table shows before it says how many more the JSON report holds."""
MAX_TEXT_ROWS = 10
"""Skills the text report names under the listing before it says how many more the JSON report holds."""
SEEN_WORDS = {"whole": "whole", "cut": "cut", "name": "name only", "removed": "removed", "omitted": "omitted"}
"""How the text and the page say what the model sees of a skill (`listing.SEEN`)."""


def render_text(report: AuditReport) -> str:
    """Plain text: a count, one `file:line: CODE [severity] message` line per finding, then the summary's fixes,
    each with its evidence."""
    errors = sum(f.severity == "error" for f in report.findings)
    warnings = sum(f.severity == "warning" for f in report.findings)
    lines = [f"Audit of {report.folder}: {report.skills:,} valid skill(s), {report.validation.invalid_files} "
             f"invalid file(s); {errors} error(s), {warnings} warning(s); {len(report.suppressed):,} suppressed; "
             f"{report.seconds:.1f} s"]
    if len(report.folders) > 1:
        lines.append("Skills folders: " + ", ".join(f"{f.path} ({f.skills:,})" for f in report.folders))
    if report.changed is not None:
        lines.append(f"Changed skills only: {', '.join(report.changed) or '(none)'}")
    lines += [f"{_where(report.folder, f)}: {f.code} [{f.severity}] {f.message}" for f in report.findings]
    if report.suppressed:
        lines.append(suppressed_line(report))
    lines.append(body_line(report))
    lines += listing_lines(report.listing)
    if not report.summary:
        lines.append("No fix to suggest: every check passed.")
    else:
        lines.append("Fix first:")
    lines += [f"{i}. {times(f)} {f.message}: {f.fix} (evidence: {f.section}: {f.evidence})"
              for i, f in enumerate(report.summary, 1)]
    if report.trigger is not None and report.trigger.gate is not None:
        gate = report.trigger.gate
        lines.append(f"Gate: accuracy's 95 % lower bound ≥ {gate.min_accuracy:.2f}: "
                     + ("passed" if gate.passed else "failed"))
    return "\n".join(lines)


def suppressed_line(report: AuditReport) -> str:
    """How many findings directives suppress, by rule and by kind of directive (not counted in the exit status)."""
    codes = Counter(f.code for f in report.suppressed)
    kinds = Counter(f.suppressed.split(" ", 1)[0] if f.suppressed else "" for f in report.suppressed)
    return (f"Suppressed, not counted: {len(report.suppressed):,} finding(s) ("
            + ", ".join(f"{code} ×{n:,}" for code, n in sorted(codes.items())) + "; "
            + ", ".join(f"{n:,} by {kind}" for kind, n in sorted(kinds.items())) + ")")


def body_findings(report: AuditReport) -> list[Finding]:
    """The findings on the skills' bodies and bundled files (SK6xx)."""
    return [f for f in report.findings if f.section == "body"]


def body_line(report: AuditReport) -> str:
    """The body section in text: how many findings on how many skills, by rule."""
    found = body_findings(report)
    if not found:
        return "Body and bundled files: no finding."
    codes = Counter(f.code for f in found)
    return (f"Body and bundled files: {len(found):,} finding(s) on {len({f.skill for f in found}):,} skill(s) ("
            + ", ".join(f"{code} {RULES[code].name} ×{n:,}" for code, n in sorted(codes.items())) + ")")


def times(finding: Finding) -> str:
    """A summary entry's code, with how many findings of its rule it stands for when more than one (`SK004 ×14`)."""
    return f"{finding.code} ×{finding.count:,}" if finding.count > 1 else finding.code


def _where(folder: str, finding: Finding) -> str:
    """`file:line` of a finding, or the folder for one about no file."""
    return f"{Path(folder) / finding.file}:{finding.line or 1}" if finding.file else folder


def listing_lines(listing: ListingSection | NoListing) -> list[str]:
    """The listing in text: the harness, its budget and unit, the order it assumed, how many skills the model sees
    each way, then each skill it does not see whole (the first `MAX_TEXT_ROWS`) with why."""
    if isinstance(listing, NoListing):
        return [f"Listing ({listing.harness}): none. {listing.reason}"]
    counts = ", ".join(f"{count:,} {SEEN_WORDS[seen]}" for seen, count in listing.counts.items())
    lines = [f"Listing ({listing.label}, {listing.context_tokens:,}-token window: {listing.window_source}): "
             f"{budget_words(listing)}, used {listing.used:,}; order: {listing.order}; {counts}"]
    hidden = [v for v in listing.views if v.seen != "whole"]
    lines += [f"  {v.skill}: {SEEN_WORDS[v.seen]} ({v.reason})" for v in hidden[:MAX_TEXT_ROWS]]
    if len(hidden) > MAX_TEXT_ROWS:
        lines.append(f"  … and {len(hidden) - MAX_TEXT_ROWS:,} more: all are in the JSON report")
    return lines


def budget_words(listing: ListingSection) -> str:
    """`budget 8,000 characters`, or that the harness has none of its own."""
    return "no budget of its own" if listing.budget is None else f"budget {listing.budget:,} {listing.unit}"


def render_json(report: AuditReport) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False)


def _sarif_result(finding: Finding, folder: str) -> dict[str, Any]:
    """One SARIF result: its rule, level, message and fix, its region (line, and columns where known), and for a
    suppressed finding the directive (`inSource` in the frontmatter, `external` in pyproject.toml)."""
    result: dict[str, Any] = {"ruleId": finding.code, "level": SARIF_LEVELS[finding.severity],
                              "message": {"text": f"{finding.message}. Fix: {finding.fix}"},
                              "properties": {"fix": finding.fix, "evidence": f"{finding.section}: {finding.evidence}"}}
    if finding.file:
        region: dict[str, int] = {"startLine": finding.line or 1, "startColumn": finding.column or 1}
        if finding.end_column is not None:
            region["endColumn"] = finding.end_column
        result["locations"] = [{"physicalLocation": {"artifactLocation": {"uri": _uri(folder, finding.file)},
                                                     "region": region}}]
    if finding.suppressed:
        kind = "inSource" if finding.suppressed.startswith("frontmatter") else "external"
        result["suppressions"] = [{"kind": kind, "justification": finding.suppressed}]
    return result


def _uri(folder: str, file: str) -> str:
    """The file as a URI relative to the working directory (code scanning reads them from the repository's
    root), or an absolute file URI when it lies outside it."""
    path = Path(folder) / file
    if not path.is_absolute():
        return path.as_posix()
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_uri()


def sarif_rule(code: str) -> dict[str, Any]:
    """One rule as a SARIF reportingDescriptor: what it reads, why, its fix, its manual's anchor and source."""
    rule = RULES[code]
    return {"id": code, "name": rule.name, "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": f"{rule.summary} {rule.rationale}"},
            "help": {"text": f"{rule.fix} Source: {rule.source}"}, "helpUri": help_uri(code),
            "defaultConfiguration": {"level": SARIF_LEVELS[rule.severity]}}


def help_uri(code: str) -> str:
    """The rule's entry in the audit's manual, relative to the repository's root (`docs/audit.md#sk101`)."""
    return f"{MANUAL}#{code.lower()}"


def render_sarif(report: AuditReport) -> str:
    """A SARIF 2.1.0 log: one run, the rules that fired as the driver's rules, one result per finding (the
    suppressed ones with their suppression, as code scanning shows them)."""
    shown = (*report.findings, *report.suppressed)
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0",
           "runs": [{"tool": {"driver": {"name": TOOL_NAME, "informationUri": "https://agentskills.io",
                                         "rules": [sarif_rule(code) for code in sorted({f.code for f in shown})]}},
                     "results": [_sarif_result(f, report.folder) for f in shown]}]}
    return json.dumps(log, indent=2, ensure_ascii=False)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(report: AuditReport) -> str:
    """GitHub Actions workflow commands: `::error file=…,line=…,title=CODE::message`, one per finding."""
    command = {"error": "error", "warning": "warning", "info": "notice"}
    lines = []
    for f in report.findings:
        where = f"file={_escape_property(str(Path(report.folder) / f.file))},line={f.line or 1}," if f.file else ""
        lines.append(f"::{command[f.severity]} {where}title={_escape_property(f.code + ' ' + RULES[f.code].name)}::"
                     f"{_escape_data(f.message + '. Fix: ' + f.fix)}")
    return "\n".join(lines)


def render(report: AuditReport, format: str) -> str:
    """The report in one of `FORMATS`."""
    return {"text": render_text, "json": render_json, "sarif": render_sarif, "github": render_github}[format](report)


def _data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def render_html(report: AuditReport, figures: dict[str, bytes] | None = None) -> str:
    """The whole report as one self-contained page: figures as data URIs, no script, no network."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    from course_utils.audit.figures import listing_figure, pairs_figure, rates_figure

    figures = dict(figures or {})
    images = {}
    if isinstance(report.listing, ListingSection):
        images["listing"] = _data_uri(listing_figure(report.listing))
    for signal in report.pairs.signals if report.pairs else ():
        if signal.pairs:
            images[f"pairs-{signal.signal}"] = _data_uri(pairs_figure(signal))
    if report.trigger is not None and report.trigger.selectors:
        images["rates"] = _data_uri(rates_figure([r.report for r in report.trigger.selectors]))
    if "histogram" in figures:
        images["histogram"] = _data_uri(figures["histogram"])
    environment = Environment(loader=PackageLoader("course_utils.audit", "templates"),
                              autoescape=select_autoescape(default=True, default_for_string=True),
                              trim_blocks=True, lstrip_blocks=True)
    return environment.get_template("report.html.j2").render(
        report=report, sections=SECTIONS, images=images, rules=RULES, max_rows=MAX_ROWS, seen_words=SEEN_WORDS,
        times=times, body=body_findings(report))
