"""What differs from one backend to the next, as values: the lessons read a backend's facts, never its name.

`make_client` attaches a `client.Backend` to each client; its `facts` say how a decision is capped and decoded,
which similarity threshold its encoder takes by default, and whether (and where) its answers carry the model's
probability of declining. A new backend brings its own `Facts`; no lesson changes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DecisionPoint:
    """Where a decision's answer turns into a call or a text answer: the answer writes `opening`, then `call_word`
    (a call) or `text_word` (a text answer). `confidence.decline_probability` reads the probabilities there."""

    opening: str
    call_word: str
    text_word: str
    tokens: int | None
    """The answer tokens up to the decision point, a cap that stops the answer there (greedy decoding makes those
    tokens and their probabilities the same whatever the cap); None: no cap."""


@dataclass(frozen=True)
class Facts:
    """What the course needs to know of a backend to run the same lesson code on it."""

    decision_tokens: int | None
    """The output cap of one decision (a call or a short text answer); None leaves the answer uncapped."""
    threshold: float | None
    """The default cosine threshold of the encoder that embeds (each has its own score scale); None: none fitted."""
    greedy: bool
    """Whether one decision is made greedily (the same query always gets the same decision); False: it samples."""
    greedy_temperature: float | None
    """The temperature to send for a greedy decision; None when the backend's default is already greedy."""
    runs: int
    """Runs per query by default: one where decisions are greedy, several (the majority decides) where they sample."""
    logprobs: bool
    """Whether its answers can carry each token's log-probability (Gemini's `response_logprobs`)."""
    decision_point: DecisionPoint | None
    """Where a decision opens, for reading the probability of declining; None: not known on this backend."""
    concurrent: bool = False
    """Whether it answers several decisions at once (a server); False: one at a time, in this process."""

    def decision_cap(self, extra: int = 0) -> int | None:
        """The output cap of a decision whose answer runs `extra` tokens longer (a reason written before the name);
        None when decisions are uncapped."""
        return None if self.decision_tokens is None else self.decision_tokens + extra


LOCAL_DECISION_TOKENS = 32
"""Output cap of a local decision. A call to activate_skill is 15 to 21 tokens on the course's catalogs (the
end token included; 21 the longest of the 10,014 names of lesson 10), 24 for a 64-character name, the longest the
Agent Skills rules allow. A text answer is "no skill" from its first token: the cap cuts it, since each decoded
token is one forward pass of the model."""
SERVER_DECISION_TOKENS = 256
"""Output cap of a decision on an OpenAI-compatible server, whose model writes a call in its own format (Qwen's
`<tool_call>` tags around the JSON take about 30 tokens): room for that, and a stop for a model that talks on."""
LOCAL_THRESHOLD = 0.16
"""The default cosine threshold of multilingual USE v3, the local encoder: fitted on the development sets
(data/dev/, EN + FR pooled, 90 queries) with `thresholds.best_threshold` (the fit's figures:
docs/lab/docstring-history.md)."""
GEMINI_THRESHOLD = 0.6
"""A placeholder for gemini-embedding-2, fitted on no data: fit one on data/dev/ with a key before trusting it."""

GRAMMAR_DECISION_POINT = DecisionPoint(opening='{"', call_word="name", text_word="text", tokens=2)
"""The local grammar's answer opens `{"name": …` (a call) or `{"text": …` (a text answer): its decision point is
its second token."""

LOCAL = Facts(decision_tokens=LOCAL_DECISION_TOKENS, threshold=LOCAL_THRESHOLD, greedy=True, greedy_temperature=None,
              runs=1, logprobs=True, decision_point=GRAMMAR_DECISION_POINT)
"""The local backend: llama.cpp decodes greedily by default, under a grammar whose opening is known."""
GEMINI = Facts(decision_tokens=None, threshold=GEMINI_THRESHOLD, greedy=False, greedy_temperature=None, runs=3,
               logprobs=True, decision_point=DecisionPoint('{"', "name", "text", tokens=None), concurrent=True)
"""Gemini: samples at its default temperature, so three runs a query; uncapped, since its thinking tokens count
against a cap. Its answers are read at the local grammar's decision point, uncapped: Gemini's own tokens at a
decision have not been measured here."""
OPENAI = Facts(decision_tokens=SERVER_DECISION_TOKENS, threshold=LOCAL_THRESHOLD, greedy=True, greedy_temperature=0.0,
               runs=1, logprobs=True, decision_point=None, concurrent=True)
"""An OpenAI-compatible server: greedy when asked for temperature 0; its model's own tool-call format has no known
decision point. Its embeddings are the local encoder's unless the server's own embedding model embeds (then no
threshold is fitted: `client.openai_client`)."""
