"""The audit's rules: a stable code, a severity, what the rule reads and the fix, as a linter states them.

Codes are grouped by what they read: SK0xx the skill file (the reference validator's verdicts, and a harness's
own rules on the name and the description), SK1xx the description's wording, SK2xx the listing a harness builds,
SK3xx pairs of descriptions, SK4xx observed triggering (needs a query file), SK5xx the quality gate, SK6xx the
body and the folder's other files. A code never changes meaning; a retired rule keeps
its code unused. `python -m course_utils audit --explain CODE` prints a rule.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

SEVERITIES = ("info", "warning", "error")
"""From the least to the most severe: `--fail-on` names the lowest severity that fails the run."""


EXAMPLE_LINES = 12
"""Lines of an example's file `--explain` prints before it says how many more there are."""


@dataclass(frozen=True)
class Example:
    """A tiny skills folder that shows a rule: its files by path (relative to the folder audited), the encoding
    they are written in, and how it is audited (the harness, and a context window when the rule needs one)."""

    files: Mapping[str, str]
    harness: str = "claude-code"
    context_tokens: int | None = None
    encoding: str = "utf-8"

    def explain(self) -> str:
        """The example's files, each cut to `EXAMPLE_LINES` lines, and how it is audited."""
        how = f"--harness {self.harness}" + (f" --context-tokens {self.context_tokens}" if self.context_tokens else "")
        text = [f"  (audited with {how}" + (f"; files in {self.encoding}" if self.encoding != "utf-8" else "") + ")"]
        for path, content in self.files.items():
            lines = content.splitlines()
            text += [f"  {path}:"] + [f"    {line}" for line in lines[:EXAMPLE_LINES]]
            if len(lines) > EXAMPLE_LINES:
                text.append(f"    … ({len(lines) - EXAMPLE_LINES:,} more lines)")
        return "\n".join(text)


@dataclass(frozen=True)
class Rule:
    """One check: its code, a short name, how severe a finding is, what it reads, and how to fix what it finds;
    the document it follows, and a failing and a passing example (None for a rule a folder alone cannot show)."""

    code: str
    name: str
    severity: str
    summary: str
    rationale: str
    fix: str
    section: str
    source: str = ""
    failing: Example | None = field(default=None, repr=False)
    passing: Example | None = field(default=None, repr=False)

    def explain(self) -> str:
        """The rule as `audit --explain` prints it."""
        text = (f"{self.code} {self.name} [{self.severity}, section {self.section}]\n\n{self.summary}\n\n"
                f"Why: {self.rationale}\n\nFix: {self.fix}\n\nSource: {self.source}")
        if self.failing is None or self.passing is None:
            return text + f"\n\nNo example: {NO_EXAMPLE[self.section]}"
        return text + f"\n\nFails:\n{self.failing.explain()}\n\nPasses:\n{self.passing.explain()}"


_RULES = (
    Rule("SK001", "frontmatter-unreadable", "error",
         "The file has no YAML frontmatter between '---' lines, or the frontmatter is not valid YAML or not a "
         "mapping of fields.",
         "A harness that cannot parse the frontmatter never lists the skill: it can never trigger.",
         "Start the file with a '---' line, the YAML fields, and a closing '---' line; quote values that hold ': ' "
         "or start with a special character.", "validation"),
    Rule("SK002", "name-invalid", "error",
         "`name` is missing, not a string, longer than 64 characters, not lower case letters, digits and single "
         "hyphens, differs from its folder's name, or repeats another skill's name.",
         "The Agent Skills specification and its reference validator refuse such a name; harnesses key skills by it.",
         "Write the name in lower case with single hyphens, and rename the folder (or the name) so the two agree.",
         "validation"),
    Rule("SK003", "description-invalid", "error",
         "`description` is missing, not a string, empty, or longer than 1,024 characters.",
         "The description is all the model sees when it chooses: without one the skill cannot be chosen.",
         "Write a description of at most 1,024 characters that says what the skill does and when to use it.",
         "validation"),
    Rule("SK004", "field-unknown", "error",
         "The frontmatter holds a field the chosen harness does not read (under `--harness spec`, a field the "
         "Agent Skills specification does not define), or one of its own fields with a value of the wrong kind.",
         "The reference validator rejects fields outside the spec; a harness ignores fields it does not read, and "
         "a field meant for another harness works only at the top level, where that harness reads it.",
         "Keep a field another harness defines if the skill is for that harness, and audit it with that harness "
         "(`--harness claude-code`); never move it under `metadata`, where it has no effect. Remove a field no "
         "harness reads, or move your own data under `metadata`; give a harness's field the value it documents.",
         "validation"),
    Rule("SK005", "field-invalid", "error",
         "`compatibility`, `metadata`, `license` or `allowed-tools` has the wrong type or length.",
         "The reference validator rejects the file; metadata must map text keys to text values.",
         "Give each field the type the specification defines: text, or for metadata a mapping of text to text.",
         "validation"),
    Rule("SK006", "file-unreadable", "error",
         "SKILL.md cannot be read: permissions, not UTF-8, or larger than the size limit.",
         "A file the harness cannot read is a skill that does not exist for the model.",
         "Make the file readable by the user who runs the harness (chmod a+r), save it as UTF-8, keep it small.",
         "validation"),
    Rule("SK007", "outside-root", "error",
         "The skill's folder or SKILL.md resolves outside the skills folder (a symlink or '..').",
         "Loading files from outside the trusted folder is refused: they were not reviewed with it.",
         "Copy the skill into the folder instead of linking to a file outside it.", "validation"),
    Rule("SK008", "not-a-skill", "warning",
         "A folder of the skills folder holds no SKILL.md, or the skills folder holds no skill at all.",
         "A folder without SKILL.md is silently skipped by every harness.",
         "Add a SKILL.md, or move the folder out of the skills folder; point the audit at the folder that holds "
         "your skill folders.", "validation"),
    Rule("SK009", "encoding-quirk", "info",
         "The file starts with a byte-order mark or uses CRLF line endings.",
         "Lenient readers accept both; strict ones may not find the opening '---'.",
         "Save the file as UTF-8 without a byte-order mark, with LF line endings.", "validation"),
    Rule("SK010", "name-shadowed", "error",
         "Two SKILL.md files of the audited paths give one skill name: the harness loads one of them and the other "
         "is shadowed, whatever it says.",
         "A harness keys skills by name: the shadowed file is never listed nor loaded, and which one wins depends "
         "on the harness's precedence (Claude Code: enterprise, then personal, then project), not on the files.",
         "Rename one of the two skills (its `name` and its folder), or remove the copy that should not load.",
         "validation"),
    Rule("SK011", "name-reserved-word", "warning",
         "Under Claude Code, the name contains a word Anthropic reserves: 'anthropic' or 'claude'.",
         "Anthropic's skill authoring best practices (https://platform.claude.com/docs/en/agents-and-tools/"
         "agent-skills/best-practices) say a name \"Cannot contain reserved words: 'anthropic', 'claude'\": Claude's "
         "apps and API refuse such a skill, though Claude Code may load it.",
         "Rename the skill (its `name` and its folder) without the reserved word: name what it does, not the harness.",
         "validation"),
    Rule("SK012", "description-markup", "warning",
         "Under Claude Code, the description holds an XML or HTML tag (`<example>`, `</b>`, a `<slug>` placeholder).",
         "Anthropic's skill authoring best practices (https://platform.claude.com/docs/en/agents-and-tools/"
         "agent-skills/best-practices) say a description \"Cannot contain XML tags\": the description goes into the "
         "system prompt, where a tag reads as structure, and Claude's apps refuse the skill.",
         "Write the description as plain text: a placeholder in braces ({slug}) or words instead of a tag.",
         "validation"),
    Rule("SK013", "suppression-unknown-code", "warning",
         "A frontmatter directive (`metadata.skill-audit-ignore`, or a `# skill-audit: ignore` comment) names a "
         "code no rule has.",
         "A directive that names no rule suppresses nothing: the finding it was meant for still counts, or the "
         "code was mistyped.",
         "Name rule codes or prefixes (SK101, SK1): `audit --explain CODE` prints a rule; remove the directive if "
         "nothing needs suppressing.", "validation"),
    Rule("SK101", "description-says-what-not-when", "warning",
         "The description (under Claude Code, with its `when_to_use`, which Claude Code lists with it) says what "
         "the skill does but holds no trigger clause ('Use when …', 'whenever', 'if the user …', 'à utiliser "
         "quand …').",
         "The model picks a skill on its description alone; without a 'when' it has nothing to match a request "
         "against.",
         "Add a sentence that says when to use the skill: 'Use when …', naming the requests it answers.", "when"),
    Rule("SK102", "description-excludes-nothing", "info",
         "The description has no exclusion clause ('Not for …', 'never', 'instead', 'pas pour').",
         "A skill that cannot say 'not me' fires on its neighbours' requests.",
         "Add a 'Not for …' clause naming the requests that belong to a neighbouring skill or to no skill.", "when"),
    Rule("SK201", "hidden-by-listing", "error",
         "In the listing the harness builds under its budget, the model sees the skill by name only, or not at all "
         "(omitted). A skill removed on purpose (`disable-model-invocation: true`, Codex's "
         "`allow_implicit_invocation: false`) is not a finding.",
         "A skill the model sees by name only is chosen blind; one left out cannot be chosen.",
         "Shorten descriptions or remove skills until the listing fits the harness's budget; for Claude Code, "
         "set `disable-model-invocation: true` on skills only you invoke, which frees their room.", "listing"),
    Rule("SK202", "cut-by-listing", "warning",
         "The harness cuts the skill's entry short in its listing: Claude Code at 1,536 characters of the "
         "description and `when_to_use`, Codex when it shares its budget out among the descriptions.",
         "The words after the cut never reach the model.",
         "Put the trigger words first, and shorten the description.", "listing"),
    Rule("SK301", "confusable-pair-embedding", "warning",
         "The cosine between two skills' embedded descriptions stands out: at least 3 standard deviations above "
         "the mean of all pairs of the folder.",
         "Similarity selectors, and models, confuse skills whose descriptions say the same thing.",
         "Add to each description a 'Not for' naming the other's requests.", "pairs"),
    Rule("SK302", "confusable-pair-lexical", "warning",
         "Two descriptions share so many weighted words (BM25, each description scored as a query against the "
         "others) that the pair stands out: at least 3 standard deviations above the mean of all pairs.",
         "Shared vocabulary makes a keyword router, and often a model, hesitate between the two.",
         "Say in each description what the other does not: different trigger words, and a 'Not for' naming the "
         "other's requests.", "pairs"),
    Rule("SK401", "observed-confusion", "warning",
         "In the trigger evaluation, at least two queries meant for one skill (or for none) went to another "
         "(or to none).",
         "A confusion seen twice is measured, not guessed; a single one is not a finding.",
         "Tell the two apart in their descriptions, or widen the skill that was missed; then evaluate again.",
         "trigger"),
    Rule("SK402", "attractor-skill", "warning",
         "One skill takes the most queries meant for other skills or for no skill, at least two of them.",
         "An attractor's description is too broad: it wins requests that are not its own.",
         "Narrow the description: say what it is not for, naming the requests it took.", "trigger"),
    Rule("SK403", "query-names-unknown-skill", "warning",
         "The query file expects a skill that is not in the folder; those queries are left out.",
         "A query that cannot be scored shrinks the sample without saying so.",
         "Fix the query file: name skills of the folder, or audit the folder the queries were written for.",
         "trigger"),
    Rule("SK501", "trigger-accuracy-below-gate", "error",
         "The lower bound of the 95 % Wilson interval of a selector's accuracy is below `--min-accuracy`.",
         "The gate is on what the sample can vouch for, not on the point estimate: a small query set passes only "
         "when even its pessimistic bound clears the bar.",
         "Fix the confusions the report shows, or add queries: a larger sample narrows the interval.", "trigger"),
    Rule("SK601", "reference-missing", "warning",
         "The body links to a relative path (`[x](references/x.md)`), or names a file under `scripts/`, `references/` "
         "or `assets/`, that does not exist; or a bundled Markdown file the body names links to a path that exists "
         "neither beside it nor from the skill's folder. URLs, anchors, fenced code and the bare paths of a line "
         "giving examples ('e.g.', 'for example', 'Examples:', 'would') are not read.",
         "The model follows the reference and finds nothing: the step it was sent to is lost. The Agent Skills "
         "specification (https://agentskills.io/specification) has a body refer to its files by relative paths from "
         "the skill's root.",
         "Add the file to the skill's folder at that path, or correct the path, or remove the reference.", "body"),
    Rule("SK602", "body-too-long", "warning",
         "The SKILL.md body is over 500 lines, or over 5,000 tokens by the estimate of 4 characters per token "
         "(`course_utils.skills.tokens.estimate_tokens`; a tokenizer counts differently).",
         "The whole body enters the context when the skill is chosen. Anthropic's skill authoring best practices "
         "(https://platform.claude.com/docs/en/agents-and-tools/agent-skills/best-practices): \"Keep SKILL.md body "
         "under 500 lines\"; the Agent Skills specification (https://agentskills.io/specification): instructions "
         "\"< 5000 tokens recommended\".",
         "Move what a run needs only sometimes into files under `references/`, one level from SKILL.md, each linked "
         "with a line saying when to read it.", "body"),
    Rule("SK603", "reference-nested", "info",
         "A Markdown file of the skill's folder is reached only through another file the body refers to (SKILL.md → "
         "a.md → b.md, a.md's link read beside it or from the skill's folder), never from SKILL.md itself.",
         "Anthropic's skill authoring best practices (https://platform.claude.com/docs/en/agents-and-tools/"
         "agent-skills/best-practices): \"Keep references one level deep from SKILL.md\"; a model may read a "
         "file it reached that way only in part.",
         "Link the file from SKILL.md directly, saying when to read it.", "body"),
    Rule("SK604", "bundled-file-unmentioned", "info",
         "A file of the skill's folder (not SKILL.md, a LICENSE, a hidden file, or a harness's own metadata such as "
         "Codex's `agents/openai.yaml`) is named neither by the body nor by a file the body names: not its path, "
         "its file name, nor its folder.",
         "The model learns of a bundled file only from the body: a file nothing names is never read nor run, and "
         "ships as dead weight.",
         "Name the file in the body, saying when to read or run it, or remove it from the skill's folder.", "body"),
    Rule("SK605", "side-effect-open-to-model", "warning",
         "Under Claude Code, the description says the skill deploys, publishes, sends, posts, pushes or deletes, "
         "the body's prose says to do it, and `disable-model-invocation: true` is not set.",
         "Claude Code's skills documentation (https://code.claude.com/docs/en/skills) gives "
         "`disable-model-invocation: true` for workflows with side effects whose timing you control (deploy, "
         "commit, send a message): without it the model may start the skill on a request that only resembles it.",
         "Add `disable-model-invocation: true` to the frontmatter, so that only you start the skill (/name).",
         "body"),
)

NO_EXAMPLE = {
    "validation": "the rule needs a symlink out of the skills folder, which a list of files cannot show.",
    "trigger": "the rule needs a query file and a model's decisions on it: run `audit --queries FILE`.",
}
"""Why a rule has no example, by its section."""


def _skill(name: str, description: str, body: str = "Fill the form field by field.\n", extra: str = "") -> str:
    """A SKILL.md's text: `name`, `description` (written as given: quote it in `description` when needed), any
    `extra` frontmatter lines, then `body`."""
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}"


GOOD = "Fills PDF forms from a table of values. Use when the user asks to fill a PDF form. Not for Word documents."
"""A description the wording rules pass."""
_PAIRS = {  # eight skills, two of which say the same thing (SK301, SK302); no other word is shared
    "invoice-matcher": "Matches supplier invoices against purchase orders and flags price mismatches. Use when "
                       "invoices need matching to purchase orders.",
    "invoice-reconciler": "Matches supplier invoices against purchase orders and flags price mismatches. Use when "
                          "invoices need reconciling with purchase orders.",
    "leave-planner": "Schedules team holidays on calendars. Use when someone wonders who is away in August.",
    "okr-drafter": "Drafts quarterly objectives. Use when managers write goals.",
    "css-linter": "Checks stylesheets, finding unused selectors. Use when CSS grows.",
    "git-bisect-helper": "Bisects commits that broke tests. Use when regressions appear.",
    "recipe-scaler": "Scales cooking recipes up. Use when cooks want bigger portions.",
    "sql-explainer": "Explains slow SQL query plans. Use when databases crawl.",
}
_DISTINCT = {**_PAIRS, "invoice-reconciler": "Translates French contracts into English. Use when lawyers "
                                             "read clauses."}
_FORM = "pdf-form-filler"


def _folder(descriptions: Mapping[str, str]) -> Example:
    return Example({f"{name}/SKILL.md": _skill(name, text + " Not for anything else.")
                    for name, text in descriptions.items()})


EXAMPLES: dict[str, tuple[str, Example, Example]] = {
    "SK001": ("the Agent Skills specification, https://agentskills.io/specification (a SKILL.md is YAML frontmatter "
              "then Markdown)",
              Example({f"{_FORM}/SKILL.md": f"name: {_FORM}\ndescription: {GOOD}\n\nFill the form.\n"}),
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD)})),
    "SK002": ("the Agent Skills specification, https://agentskills.io/specification (`name`), as skills-ref "
              "validates it",
              Example({f"{_FORM}/SKILL.md": _skill("PDF-Form-Filler", GOOD)}),
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD)})),
    "SK003": ("the Agent Skills specification, https://agentskills.io/specification (`description`)",
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, "yes")}),
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD)})),
    "SK004": ("the harness's frontmatter reference: Claude Code's https://code.claude.com/docs/en/skills, Codex's "
              "loader.rs, Gemini CLI's skillLoader.ts; the spec's field list for --harness spec",
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD, extra="version: 1.2.0\n")}),
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD, extra="metadata:\n  version: 1.2.0\n")})),
    "SK005": ("the Agent Skills specification, https://agentskills.io/specification (optional fields)",
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD, extra="metadata:\n  - author\n")}, harness="spec"),
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD, extra="metadata:\n  author: me\n")},
                      harness="spec")),
    "SK006": ("the Agent Skills specification, https://agentskills.io/specification (a SKILL.md is UTF-8 Markdown)",
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD, body="Remplir le formulaire, champ après champ.\n")},
                      encoding="latin-1"),
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD, body="Remplir le formulaire, champ après champ.\n")})),
    "SK008": ("the Agent Skills specification, https://agentskills.io/specification (a skill is a folder with a "
              "SKILL.md)",
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD), "notes/todo.md": "Write a skill.\n"}),
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD)})),
    "SK009": ("the reference validator skills-ref, which reads the opening '---' byte for byte",
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD).replace("\n", "\r\n")}),
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD)})),
    "SK010": ("Claude Code's skills documentation, https://code.claude.com/docs/en/skills (where skills live, and "
              "which wins)",
              Example({f"team-a/{_FORM}/SKILL.md": _skill(_FORM, GOOD),
                       f"team-b/{_FORM}/SKILL.md": _skill(_FORM, GOOD)}),
              Example({f"team-a/{_FORM}/SKILL.md": _skill(_FORM, GOOD),
                       "team-b/pdf-merger/SKILL.md": _skill("pdf-merger", GOOD.replace("Fills", "Merges"))})),
    "SK011": ("Anthropic's skill authoring best practices, https://platform.claude.com/docs/en/agents-and-tools/"
              "agent-skills/best-practices (naming)",
              Example({"claude-pdf-filler/SKILL.md": _skill("claude-pdf-filler", GOOD)}),
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD)})),
    "SK012": ("Anthropic's skill authoring best practices, https://platform.claude.com/docs/en/agents-and-tools/"
              "agent-skills/best-practices (description)",
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, '"Fills a <form> in a PDF. Use when asked to fill one. '
                                                          'Not for Word."')}),
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD)})),
    "SK013": ("this audit's suppression directives (docs/audit.md#suppression)",
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, "Fills PDF forms.", extra="# skill-audit: ignore SK999\n")}),
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, "Fills PDF forms.", extra="# skill-audit: ignore SK101\n")})),
    "SK101": ("the Agent Skills specification, https://agentskills.io/specification (`description`: \"what the skill "
              "does and when to use it\")",
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, "Fills PDF forms from a table of values.")}),
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD)})),
    "SK102": ("the course's lesson 06 (\"Not for …\" lines) and lesson 11 (a near-homonym's false triggers)",
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, "Fills PDF forms. Use when the user asks to fill one.")}),
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD)})),
    "SK201": ("Claude Code's skills documentation, https://code.claude.com/docs/en/skills (\"Skill descriptions are "
              "cut short\"), Codex's render.rs: each harness's listing budget",
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD), "pdf-merger/SKILL.md": _skill("pdf-merger", GOOD)},
                      context_tokens=4_000),
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD), "pdf-merger/SKILL.md": _skill("pdf-merger", GOOD)})),
    "SK202": ("Claude Code's skills documentation, https://code.claude.com/docs/en/skills (1,536 characters of "
              "description and when_to_use)",
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD, extra="when_to_use: " + "a PDF form to fill, " * 80
                                                   + "\n")}),
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD, extra="when_to_use: a PDF form to fill\n")})),
    "SK301": ("the course's lesson 07 (cosine between embeddings); 3 standard deviations, a conventional outlier cut",
              _folder(_PAIRS), _folder(_DISTINCT)),
    "SK302": ("BM25 (Robertson and Zaragoza, 2009; k1 = 1.2, b = 0.75); 3 standard deviations, a conventional "
              "outlier cut", _folder(_PAIRS), _folder(_DISTINCT)),
    "SK601": ("the Agent Skills specification, https://agentskills.io/specification (file references)",
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD, body="Read [the fields](references/fields.md).\n")}),
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD, body="Read [the fields](references/fields.md).\n"),
                       f"{_FORM}/references/fields.md": "Name, date, signature.\n"})),
    "SK602": ("Anthropic's skill authoring best practices (\"Keep SKILL.md body under 500 lines\"); the Agent Skills "
              "specification (\"< 5000 tokens recommended\")",
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD, body="Fill one field.\n" * 501)}),
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD, body="Fill one field.\n" * 20)})),
    "SK603": ("Anthropic's skill authoring best practices (\"Keep references one level deep from SKILL.md\")",
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD, body="Read [the guide](references/guide.md).\n"),
                       f"{_FORM}/references/guide.md": "Then read [the fields](fields.md).\n",
                       f"{_FORM}/references/fields.md": "Name, date, signature.\n"}),
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD, body="Read [the guide](references/guide.md) and "
                                                                     "[the fields](references/fields.md).\n"),
                       f"{_FORM}/references/guide.md": "Fill each field.\n",
                       f"{_FORM}/references/fields.md": "Name, date, signature.\n"})),
    "SK604": ("Anthropic's skill authoring best practices (bundled files the body points to)",
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD), f"{_FORM}/scripts/fill.py": "print('filled')\n"}),
              Example({f"{_FORM}/SKILL.md": _skill(_FORM, GOOD, body="Run `python scripts/fill.py FORM.pdf`.\n"),
                       f"{_FORM}/scripts/fill.py": "print('filled')\n"})),
    "SK605": ("Claude Code's skills documentation, https://code.claude.com/docs/en/skills "
              "(`disable-model-invocation`)",
              Example({"deploy-site/SKILL.md": _skill("deploy-site", "Deploys the site. Use when asked to deploy it. "
                                                      "Not for previews.", body="Run `vercel deploy --prod`.\n")}),
              Example({"deploy-site/SKILL.md": _skill("deploy-site", "Deploys the site. Use when asked to deploy it. "
                                                      "Not for previews.", body="Run `vercel deploy --prod`.\n",
                                                      extra="disable-model-invocation: true\n")})),
}
"""Per rule: the document it follows, a folder on which it fires, and one on which it does not."""
SOURCES = {
    "SK007": "the course's trusted roots (lesson 05): files outside the reviewed folder are not loaded",
    "SK401": "the course's trigger evaluation (lessons 06 and 08): first turn only, a confusion seen twice",
    "SK402": "the course's trigger evaluation; 'black-hole' skills (\"Scaling laws of skills\", arXiv 2605.16508)",
    "SK403": "the query file's own format (the course's, skill-creator's eval set, skill-reach's)",
    "SK501": "the Wilson score interval (Wilson, 1927), as the course reports every rate",
}
"""The document each rule without an example follows."""
RULES: dict[str, Rule] = {
    rule.code: replace(rule, source=SOURCES[rule.code]) if rule.code in SOURCES else replace(
        rule, source=EXAMPLES[rule.code][0], failing=EXAMPLES[rule.code][1], passing=EXAMPLES[rule.code][2])
    for rule in _RULES}
"""Every rule, by code, with its source and examples."""


def rule(code: str) -> Rule:
    """The rule of `code` (case ignored); KeyError names the known codes."""
    try:
        return RULES[code.upper()]
    except KeyError:
        raise KeyError(f"unknown rule {code!r}: the rules are {', '.join(RULES)}") from None


def matches(code: str, patterns: tuple[str, ...] | list[str]) -> bool:
    """Whether `code` is selected by any pattern: a full code (SK101) or a prefix (SK1, SK)."""
    return any(code.startswith(p.upper()) for p in patterns)

