"""The audit's rules: a stable code, a severity, what the rule reads and the fix, as a linter states them.

Codes are grouped by what they read: SK0xx the skill file (the reference validator's verdicts, and a harness's
own rules on the name and the description), SK1xx the description's wording, SK2xx the listing a harness builds,
SK3xx pairs of descriptions, SK4xx observed triggering (needs a query file), SK5xx the quality gate, SK6xx the
body and the folder's other files. A code never changes meaning; a retired rule keeps
its code unused. `python -m course_utils audit --explain CODE` prints a rule.
"""
from __future__ import annotations

from dataclasses import dataclass

SEVERITIES = ("info", "warning", "error")
"""From the least to the most severe: `--fail-on` names the lowest severity that fails the run."""


@dataclass(frozen=True)
class Rule:
    """One check: its code, a short name, how severe a finding is, what it reads, and how to fix what it finds."""

    code: str
    name: str
    severity: str
    summary: str
    rationale: str
    fix: str
    section: str

    def explain(self) -> str:
        """The rule as `audit --explain` prints it."""
        return (f"{self.code} {self.name} [{self.severity}, section {self.section}]\n\n{self.summary}\n\n"
                f"Why: {self.rationale}\n\nFix: {self.fix}")


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
         "or `assets/`, that does not exist. URLs, anchors, fenced code and the bare paths of a line giving examples "
         "('e.g.', 'for example', 'Examples:', 'would') are not read.",
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
         "A file of the skill's folder is reached only through another file the body refers to (SKILL.md → a.md → "
         "b.md), never from SKILL.md itself.",
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

RULES: dict[str, Rule] = {rule.code: rule for rule in _RULES}
"""Every rule, by code."""


def rule(code: str) -> Rule:
    """The rule of `code` (case ignored); KeyError names the known codes."""
    try:
        return RULES[code.upper()]
    except KeyError:
        raise KeyError(f"unknown rule {code!r}: the rules are {', '.join(RULES)}") from None


def matches(code: str, patterns: tuple[str, ...] | list[str]) -> bool:
    """Whether `code` is selected by any pattern: a full code (SK101) or a prefix (SK1, SK)."""
    return any(code.startswith(p.upper()) for p in patterns)

