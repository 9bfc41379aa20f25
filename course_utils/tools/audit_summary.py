"""The audit's summary: the five most useful fixes, each pointing at the section and item that show why.

Fixes are ranked by what they cost a user when left undone, highest first (`PRIORITY`): a skill that does
not load never triggers; one the listing reduces to its name is chosen blind; a confusion seen at least
twice in the trigger evaluation is measured, not guessed; a pair of descriptions that stands out is likely
to be confused; a description without "when" gives the model nothing to match; one without an exclusion
cannot say "not me". A single mistake is not a finding, so a confusion seen once makes no fix.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

from course_utils.text import shorten

COUNT = 5
MIN_CONFUSIONS = 2
PRIORITY = {"invalid": 100, "listing": 90, "confusion": 80, "pair": 60, "unknown": 55, "when": 50, "exclusion": 40}


def _fix(kind: str, text: str, section: str, item: str, weight: float = 0) -> dict[str, Any]:
    return {"kind": kind, "fix": text, "section": section, "evidence": f"{section}: {item}",
            "priority": PRIORITY[kind] + weight}


def _names(names: list[str], limit: int = 4) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit:,} more" if len(names) > limit else "")


def invalid_fixes(data: dict[str, Any]) -> list[dict[str, Any]]:
    by_file: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for problem in data["validation"]["problems"]:
        if problem["severity"] == "error":
            by_file[problem["file"]].append(problem)
    fixes = [_fix("invalid", f"Make {file} load: {found[0]['fix']} ({shorten(found[0]['problem'], 90)})",
                  "validation", file, len(found)) for file, found in by_file.items()]
    if not data["skills"] and not fixes:
        fixes.append(_fix("invalid", f"Give the folder that holds your skill folders: {data['folder']} has no folder "
                          "with a SKILL.md", "validation", data["folder"]))
    return fixes


def listing_fixes(data: dict[str, Any]) -> list[dict[str, Any]]:
    listing = data["listing"]
    hidden = [f["skill"] for f in listing["fates"] if f["fate"] in ("name", "dropped")]
    cut = [f["skill"] for f in listing["fates"] if f["fate"] == "cut"]
    fixes = []
    if hidden:
        fixes.append(_fix("listing", f"Shorten descriptions or remove skills: under {listing['harness']}'s "
                          f"budget of {listing['budget_chars']:,} characters, {len(hidden):,} of {data['skills']:,} "
                          f"skills are listed by name only or not at all ({_names(hidden)})", "listing", "fates",
                          len(hidden) / 1000))
    if cut:
        fixes.append(_fix("listing", f"Put the trigger words first: {len(cut)} descriptions are cut short in "
                          f"{listing['harness']}'s listing ({_names(cut)})", "listing", "fates", -5))
    return fixes


def confusion_fixes(data: dict[str, Any]) -> list[dict[str, Any]]:
    trigger = data.get("trigger") or {}
    rows = trigger.get("selectors") or []
    if not rows:
        return []
    best = max(rows, key=lambda r: r["rates"]["accuracy"]["value"] or 0)
    fixes = []
    for c in best["confusions"]:
        if c["count"] < MIN_CONFUSIONS:
            continue
        expected, got, n = c["expected"], c["got"], c["count"]
        if expected is None:
            text = f"Narrow {got}: it fired on {n} queries that need no skill; add a 'Not for …' clause naming them"
        elif got is None:
            text = f"Widen {expected}: {n} of its queries triggered nothing; add the words those users write"
        else:
            text = (f"Tell {expected} from {got}: {n} queries for {expected} went to {got}; say in each what is "
                    "the other's")
        shown = f"{expected or '(no skill)'} -> {got or '(no skill)'}"
        fixes.append(_fix("confusion", text, "trigger", f"{best['selector']}, {shown}", n))
    return fixes


def pair_fixes(data: dict[str, Any]) -> list[dict[str, Any]]:
    pairs = (data.get("pairs") or {}).get("pairs") or []
    return [_fix("pair", f"Tell {p['a']} and {p['b']} apart: their descriptions' cosine {p['description_cosine']:.2f} "
                 f"stands out ({p['z']:.1f} standard deviations above the catalog's mean); add to each a 'Not for' "
                 "naming the other's requests", "pairs", f"{p['a']} / {p['b']}", p["z"])
            for p in pairs if p["stands_out"]]


def wording_fixes(data: dict[str, Any]) -> list[dict[str, Any]]:
    rows = data["when"]["rows"]
    no_when = [r["skill"] for r in rows if not r["says_when"]]
    no_exclusion = [r["skill"] for r in rows if not r["excludes"]]
    fixes = []
    if no_when:
        fixes.append(_fix("when", f"Add a 'Use when …' sentence to {len(no_when)} description(s) that say what but not "
                          f"when ({_names(no_when)})", "when", _names(no_when, 2), len(no_when) / 1000))
    if no_exclusion:
        fixes.append(_fix("exclusion", f"Add a 'Not for …' clause to {len(no_exclusion)} description(s) that "
                          f"exclude nothing ({_names(no_exclusion)})", "when", _names(no_exclusion, 2),
                          len(no_exclusion) / 1000))
    return fixes


def unknown_fixes(data: dict[str, Any]) -> list[dict[str, Any]]:
    unknown = (data.get("trigger") or {}).get("unknown") or []
    if not unknown:
        return []
    names = sorted({u["expected"] for u in unknown})
    return [_fix("unknown", f"Fix the query file: {len(unknown)} queries expect skills not in the folder "
                 f"({_names(names)}); they were left out of the evaluation", "trigger", "unknown skills")]


def top_fixes(data: dict[str, Any], count: int = COUNT) -> list[dict[str, Any]]:
    """The `count` highest-priority fixes of every check (see the module docstring), highest first."""
    found = (invalid_fixes(data) + listing_fixes(data) + confusion_fixes(data) + pair_fixes(data)
             + unknown_fixes(data) + wording_fixes(data))
    return sorted(found, key=lambda f: -f["priority"])[:count]
