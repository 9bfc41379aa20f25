"""The audit report as one self-contained HTML page: figures embedded as data URIs, no script, no network,
a print style sheet. Every value comes from `Audit.data`, the same dict `--json` writes."""
from __future__ import annotations

import base64
from html import escape
from typing import Any

from course_utils.tools.audit_figures import listing_figure, pairs_figure, rates_figure

STYLE = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d1d1f;max-width:62rem;margin:2rem auto;
padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{border-bottom:2px solid #e0e0e0;padding-bottom:.2rem;margin-top:2.2rem}
.meta{color:#555}.rule{background:#f5f5f7;border-left:4px solid #90a4ae;padding:.5rem .8rem;font-size:.9rem}
table{border-collapse:collapse;width:100%;margin:.6rem 0;font-size:.9rem}
th,td{border-bottom:1px solid #e0e0e0;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#fafafa}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.tag{display:inline-block;border-radius:.6rem;padding:0 .5rem;font-size:.8rem;color:#fff}
.ok{background:#2e7d32}.warn{background:#f9a825;color:#000}.bad{background:#b71c1c}.info{background:#546e7a}
ol.fixes li{margin:.4rem 0}ol.fixes a{color:#1565c0}img{max-width:100%;height:auto}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(26rem,1fr));gap:0 1.5rem}h3{font-size:1rem}
.empty{color:#555;font-style:italic}.quote{font-size:.8rem;color:#333;margin:.1rem 0 .4rem}
@media print{body{margin:0;max-width:none;font-size:11pt}section{break-inside:avoid-page}
h2{break-after:avoid}tr,img{break-inside:avoid}a{color:inherit;text-decoration:none}}
"""

SECTIONS = (("summary", "Summary: the most useful fixes"), ("validation", "Validation"), ("listing", "Listing"),
            ("when", "What, when and not for"), ("pairs", "Pairs likely to be confused"),
            ("trigger", "Trigger evaluation"))


def _img(png: bytes, alt: str) -> str:
    return f'<img alt="{escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}">'


def _table(header: list[str], rows: list[list[str]], numeric: set[int] = frozenset()) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f'<td{" class=num" if i in numeric else ""}>{cell}</td>'
                                     for i, cell in enumerate(row)) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


MAX_ROWS = 200
"""Rows a table shows before it says how many more the JSON report holds."""


def _capped(rows: list[list[str]], what: str) -> tuple[list[list[str]], str]:
    """The first MAX_ROWS rows, and a note on the rest (empty when none is left out)."""
    if len(rows) <= MAX_ROWS:
        return rows, ""
    note = f"… and {len(rows) - MAX_ROWS:,} more {what}: all are in the JSON report."
    return rows[:MAX_ROWS], f'<p class="empty">{note}</p>'


def _tag(text: str, kind: str) -> str:
    return f'<span class="tag {kind}">{escape(text)}</span>'


def _rate(rate: dict[str, Any]) -> str:
    if not rate["n"]:
        return "n/a"
    low, high = rate["interval"]
    return f"{rate['value']:.2f} ({rate['successes']}/{rate['n']}; {low:.2f}–{high:.2f})"


def summary_html(data: dict[str, Any]) -> str:
    if not data["summary"]:
        return '<p class="empty">No fix to suggest: every check passed.</p>'
    items = "".join(f'<li>{escape(f["fix"])} — <a href="#{f["section"]}">{escape(f["evidence"])}</a></li>'
                    for f in data["summary"])
    return f'<ol class="fixes">{items}</ol>'


def validation_html(data: dict[str, Any]) -> str:
    v = data["validation"]
    head = f"<p>{v['valid']} skill(s) pass the reference validator's rules; {v['invalid_files']} file(s) do not.</p>"
    if not v["problems"]:
        return head + '<p class="empty">No problem found.</p>'
    rows = [[escape(p["file"]), escape(p["field"] or ""), _tag(p["severity"], "bad" if p["severity"] == "error"
                                                                else "warn"), escape(p["problem"]), escape(p["fix"])]
            for p in v["problems"]]
    return head + _table(["file", "field", "severity", "problem", "fix"], rows)


def listing_html(data: dict[str, Any], figure: bytes) -> str:
    listing = data["listing"]
    head = (f"<p>{escape(listing['harness'])} keeps its skill listing within {listing['budget_chars']:,} characters "
            f"(context window {listing['context_tokens']:,} tokens: {escape(listing['window_source'])}). "
            "This catalog's "
            f"listing takes {listing['listing_chars']:,} characters, about {listing['listing_tokens']:,} tokens: "
            f"{listing['context_share']:.2%} of the context window.</p>")
    kinds = {"whole": "ok", "cut": "warn", "name": "bad", "dropped": "bad"}
    shown = [f for f in listing["fates"] if f["fate"] != "whole"]
    rows, more = _capped([[escape(f["skill"]), _tag(f["fate"], kinds[f["fate"]]), f"{f['description_chars']:,}"]
                          for f in shown], "skills")
    table = (_table(["skill", "listed as", "description characters"], rows, {2}) + more if rows else
             '<p class="empty">Every description is listed whole.</p>')
    return head + _img(figure, "skills listed whole, cut, by name or not at all") + table


def when_html(data: dict[str, Any]) -> str:
    when = data["when"]
    ordered = sorted(when["rows"], key=lambda r: (r["says_when"], r["excludes"], r["skill"]))
    rows, more = _capped([[escape(r["skill"]), _tag("says when", "ok") if r["says_when"] else _tag("no when", "bad"),
                           escape(r["when_words"] or ""),
                           _tag("excludes", "ok") if r["excludes"] else _tag("no exclusion", "warn"),
                           escape(r["exclusion_words"] or "")] for r in ordered], "skills")
    return (f'<p class="rule">{escape(when["rule"])}</p><p>{when["without_when"]} description(s) without "when"; '
            f"{when['without_exclusion']} without an exclusion.</p>"
            + _table(["skill", "when", "words", "not for", "words"], rows) + more)


def pairs_html(data: dict[str, Any], figure: bytes | None) -> str:
    pairs = data.get("pairs")
    if not pairs or not pairs["pairs"]:
        return '<p class="empty">Fewer than two valid skills: no pair to compare.</p>'
    head = (f'<p class="rule">{escape(pairs["rule"])}</p><p>{pairs["pair_count"]:,} pairs scored with '
            f"{escape(pairs['embedding'])}; mean cosine {pairs['mean']:.3f}, standard deviation "
            f"{pairs['std']:.3f}.</p>")
    rows = [[f"{escape(p['a'])}<br>{escape(p['b'])}", f"{p['description_cosine']:.3f}", f"{p['body_cosine']:.3f}",
             f"{p['z']:.1f}" + (" " + _tag("stands out", "bad") if p["stands_out"] else ""),
             f'<p class="quote"><b>{escape(p["a"])}</b>: {escape(p["a_description"])}</p>'
             f'<p class="quote"><b>{escape(p["b"])}</b>: {escape(p["b_description"])}</p>']
            for p in pairs["pairs"]]
    return (head + (_img(figure, "description and body cosines of the closest pairs") if figure else "")
            + _table(["pair", "descriptions", "bodies", "z", "the two descriptions"], rows, {1, 2}))


def trigger_html(data: dict[str, Any], figures: dict[str, bytes]) -> str:
    trigger = data.get("trigger")
    if trigger is None:
        return '<p class="empty">Not run: give --queries FILE (the course\'s query format) to measure triggering.</p>'
    parts = []
    if trigger.get("error"):
        parts.append(f"<p>{_tag('not run', 'bad')} {escape(trigger['error'])}</p>")
    if trigger["unknown"]:
        rows = [[str(u["item"]), escape(u["expected"]), escape(u["query"])] for u in trigger["unknown"]]
        parts.append("<p>Queries naming skills not in the folder, left out:</p>"
                     + _table(["item", "expected", "query"], rows, {0}))
    if not trigger.get("selectors"):
        return "".join(parts)
    parts.insert(0, f"<p>{trigger['queries']} queries from {escape(trigger['file'])}; decisions by "
                    f"{escape(trigger['generation_model'])} ({escape(trigger['decoding'])}, {trigger['runs']} run(s) "
                    f"per query); similarity by {escape(trigger['embedding_model'])}. Rates with their 95 % "
                    "Wilson intervals.</p>")
    rows = [[escape(r["selector"]), *(_rate(r["rates"][key]) for key in ("accuracy", "positive_accuracy",
                                                                          "none_accuracy")),
             f"{r['mean_prompt_tokens']:,.0f}" if r["mean_prompt_tokens"] is not None else "n/a",
             f"{r['seconds_per_decision']:.2f}" if r["seconds_per_decision"] is not None else "n/a"]
            for r in trigger["selectors"]]
    parts.append(_table(["selector", "accuracy", "must trigger", "must not", "mean prompt tokens",
                         "seconds per decision"], rows, {1, 2, 3, 4, 5}))
    if trigger["comparisons"]:
        pairs = "".join(f"<li><b>{escape(c['a'])} vs {escape(c['b'])}</b>: {escape(c['verdict'])}</li>"
                        for c in trigger["comparisons"])
        parts.append(f"<p>Paired on the same queries (exact McNemar test):</p><ul>{pairs}</ul>")
    parts.append(_img(rates_figure([r["report"] for r in trigger["selectors"]]), "rates with intervals"))
    if "histogram" in figures:
        parts.append("<p>Lesson 08's histogram: the nearest skill's cosine for queries that must trigger and for "
                     "those that must not, and the threshold.</p>" + _img(figures["histogram"], "score histogram"))
    tables = []
    for r in trigger["selectors"]:
        rows = [[escape(c["expected"] or "(no skill)"), escape(c["got"] or "(no skill)"), str(c["count"])]
                for c in r["confusions"]]
        tables.append(f"<div><h3>{escape(r['selector'])}: which skill fired instead</h3>"
                      + (_table(["expected", "decided", "queries"], rows, {2}) if rows else
                         '<p class="empty">No mistake.</p>') + "</div>")
    return "".join(parts) + f'<div class="grid">{"".join(tables)}</div>'



def render_html(audit: Any) -> str:
    """The whole page for an `audit.Audit`."""
    data = audit.data
    pairs = data.get("pairs")
    bodies = {"summary": summary_html(data), "validation": validation_html(data),
              "listing": listing_html(data, listing_figure(data["listing"])), "when": when_html(data),
              "pairs": pairs_html(data, pairs_figure(pairs) if pairs and pairs["pairs"] else None),
              "trigger": trigger_html(data, audit.figures)}
    sections = "".join(f'<section id="{key}"><h2>{escape(title)}</h2>{bodies[key]}</section>'
                       for key, title in SECTIONS)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Skill audit: '
            f"{escape(data['folder'])}</title><style>{STYLE}</style></head><body><h1>Skill audit</h1>"
            f'<p class="meta">{escape(data["folder"])}: {data["skills"]} valid skill(s), harness '
            f"{escape(data['listing']['harness'])}, {data['seconds']:.1f} s. Read-only: the folder was not "
            f"changed.</p>{sections}</body></html>")
