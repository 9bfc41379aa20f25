"""The hybrid exercise's hints (lesson 09): each one unlocks a single step, not the code."""
from __future__ import annotations

HYBRID_HINTS = (
    "The cosine row: `selector.scores([query])` gives one row of cosines per query, one number per skill, in "
    "`selector.names` order. Take the row of your one query.",
    "The k nearest: numpy's `argsort` sorts ascending, so sort the negated row, `np.argsort(-row, kind='stable')`, "
    "and keep the first k indices with a slice, `[:k]`; `selector.names[i]` is the skill at index i. The stable "
    "sort keeps tied skills in catalog order, so at a tie for the k-th place the one listed first in the catalog "
    "is kept (any k of the tied skills pass the check; more than k do not). A slice stops at the end of the row, "
    "so a k at or above the catalog's size keeps the whole catalog. Use the `k` you receive, and raise a "
    "ValueError when it is below 1.",
    "The prompt's layout: what stays the same for every query comes first, what changes comes last. The system "
    "instruction names no skill: `shortlist_instruction()`. The tool names no skill either: `shortlist_tool()`, an "
    "activate_skill whose `name` is a plain string, with no enum of names. The shortlist goes in the user turn: "
    "`shortlist_turn(loader.subset(names), query)` is one user turn holding the k catalog lines in "
    "<available-skills>, then the query. All three come from `course_utils.selection.pick`.",
    "The model, first turn only: one `client.models.generate_content(model=GENERATION_MODEL, contents=[that user "
    "turn], config=types.GenerateContentConfig(system_instruction=…, tools=[the tool], "
    "automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)))`. `response.function_calls` is "
    "empty when the model answered in text: that is its way of saying none.",
    "The Decision: `Decision(skill, prompt_tokens, seconds)`. The skill is the call's `name` argument when it is "
    "one of the shortlist (a name outside it is no decision: None), or None for a text answer; the tokens are "
    "`response.usage_metadata.prompt_token_count`, what the backend counted; the seconds run from before the "
    "embedding to after the answer (`time.perf_counter()`).",
)
HINT_LAYOUT = ("shortlist_instruction", "shortlist_tool", "shortlist_turn")
"""The parts of the reference's prompt that hint 3 names: `pick_hybrid` builds its request from exactly these."""


def hint(n: int) -> None:
    """Print hint `n` (1 to 5) of the hybrid exercise; each one unlocks a single step, not the code."""
    if not 1 <= n <= len(HYBRID_HINTS):
        print(f"There are {len(HYBRID_HINTS)} hints: hint(1) to hint({len(HYBRID_HINTS)}).")
        return
    more = f" (next: hint({n + 1}))" if n < len(HYBRID_HINTS) else " (the last one)"
    print(f"Hint {n} of {len(HYBRID_HINTS)}{more}: {HYBRID_HINTS[n - 1]}")
