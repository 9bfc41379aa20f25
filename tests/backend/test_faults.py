"""Faults on the model path, injected under a real genai.Client through a scripted transport (no model).

Where Gemini would be retried (the client's HttpRetryOptions: 408, 429, 5xx and timeouts) the tests count
the attempts; everything else, and retries that run out, must reach the report as one readable line,
and a 30-query run must keep every answer it already has.
"""
from __future__ import annotations

import time

import httpx
import numpy as np
import pytest
from google.genai import errors

from course_utils.backend.client import RETRY_STATUS_CODES, backend_of, gemini_client
from course_utils.evaluation.outcomes import evaluate, run_selector
from course_utils.selection.faults import EmbeddingError, describe_error
from course_utils.skills.paths import DATA_DIR, SKILLS_DIR
from course_utils.skills.queries import load_queries
from course_utils.selection.embeddings import embed_texts
from course_utils.selection.pick import SimilaritySelector, pick_by_model, pick_hybrid
from course_utils.skills.skill import SkillLoader
from helpers.paths import FIXTURES
from helpers.fault_transport import (
    activate, embedded, error, fault_client, generated, in_order, method_of, query_of, raw, texts_of,
)

pytestmark = pytest.mark.usefixtures("no_network")
TINY = SkillLoader.from_root(FIXTURES / "tiny_catalog")
WORKPLACE = SkillLoader.from_root(SKILLS_DIR / "workplace")
OK = generated([activate("csv-data-profiler")])
HTML = "<html><body><h1>502 Bad Gateway</h1>\n<p>upstream\nclosed</p></body></html>"


def timeout(message: str = "timed out") -> httpx.ReadTimeout:
    return httpx.ReadTimeout(message)


# ----------------------------------------------------------------- retried where Gemini would be


TRANSIENT = {
    "429": error(429, "RESOURCE_EXHAUSTED", "Quota exceeded"),
    "429 with a retry delay": error(429, "RESOURCE_EXHAUSTED", "Quota exceeded", retry_delay="30s",
                                    headers={"Retry-After": "30"}),
    "500": error(500, "INTERNAL", "Internal error"),
    "503": error(503, "UNAVAILABLE", "The model is overloaded"),
    "502, a body that is not JSON": raw(502, HTML),
    "timeout": timeout(),
}


@pytest.mark.parametrize("fault", TRANSIENT.values(), ids=TRANSIENT.keys())
def test_transient_faults_are_retried_then_the_decision_is_made(fault):
    client, transport = fault_client(in_order(fault, fault, OK))
    start = time.perf_counter()
    decision = pick_by_model(client, TINY, "Profile sales.csv")
    assert (decision.skill, decision.error, decision.prompt_tokens) == ("csv-data-profiler", None, 321)
    assert len(transport.requests) == 3  # two faults, then the answer
    assert time.perf_counter() - start < 2  # tiny waits: a server's retry delay (30 s here) is not honoured


def test_the_sdk_ignores_the_servers_retry_delay():
    """Measured: google-genai waits its own exponential backoff, not Gemini's RetryInfo.retryDelay or Retry-After."""
    client, transport = fault_client(in_order(TRANSIENT["429 with a retry delay"], OK))
    start = time.perf_counter()
    assert pick_by_model(client, TINY, "Profile sales.csv").skill == "csv-data-profiler"
    assert len(transport.requests) == 2 and time.perf_counter() - start < 2


def test_the_gemini_client_retries_these_codes_and_has_a_timeout(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    options = backend_of(gemini_client()).http_options
    assert options.retry_options.attempts == 5
    assert options.retry_options.http_status_codes == RETRY_STATUS_CODES == [408, 429, 500, 502, 503, 504]
    assert options.timeout == 120_000  # milliseconds: a stalled connection ends in a retried ReadTimeout


@pytest.mark.parametrize(
    "fault, reason",
    [
        (TRANSIENT["429"], "429 RESOURCE_EXHAUSTED: Quota exceeded (rate limit or quota reached: wait, lower --runs"),
        (TRANSIENT["429 with a retry delay"],
         "429 RESOURCE_EXHAUSTED: Quota exceeded (rate limit or quota reached: "
         "wait, lower --runs, or check your plan's quota; the server asked to wait 30s)"),
        (TRANSIENT["503"], "503 UNAVAILABLE: The model is overloaded (the server failed: try again later"),
        (TRANSIENT["502, a body that is not JSON"],
         "502 Bad Gateway: <html><body><h1>502 Bad Gateway</h1> <p>upstream closed"),
        (timeout(), "no answer in time (ReadTimeout): the backend is slow or unreachable; try again later"),
    ],
)
def test_retries_run_out_then_the_report_says_why(fault, reason):
    client, transport = fault_client(in_order(fault))
    queries = load_queries(FIXTURES / "tiny_queries.yaml", TINY.names)[:2]
    report = evaluate("model", run_selector(lambda q: pick_by_model(client, TINY, q), queries, progress=False))
    assert len(transport.requests) == 2 * 5  # five attempts per query
    assert report.errors == 2 and report.correct == 0
    assert [e["error"] for e in report.error_reasons] == [report.error_reasons[0]["error"]] * 2
    assert report.error_reasons[0]["error"].startswith(reason)
    assert f"model: error on 2 queries: {report.error_reasons[0]['error']}" in report.summary().splitlines()


# ----------------------------------------------------------------- not retried: an error at once


@pytest.mark.parametrize(
    "fault, reason",
    [
        (error(400, "INVALID_ARGUMENT", "Request contains an invalid argument."),
         "400 INVALID_ARGUMENT: Request contains an invalid argument. (the request was refused as invalid"),
        (error(404, "NOT_FOUND", "models/gemini-9 is not found"),
         "404 NOT_FOUND: models/gemini-9 is not found (no such model"),
        (raw(200, HTML),
         "the backend's answer is not JSON: '<html><body><h1>502 Bad Gateway</h1>\\n<p>upstream\\nclosed"),
        (generated([{"functionCall": {"name": "activate_skill", "args": "csv-data-profiler"}}]),
         "the backend's answer does not follow Gemini's response format (1 problem(s); first at "
         "candidates.0.content.parts.0.functionCall.args: Input should be a valid dictionary"),
    ],
    ids=["400", "404", "200 not JSON", "args not an object"],
)
def test_faults_gemini_does_not_retry_are_tried_once(fault, reason):
    client, transport = fault_client(in_order(fault))
    with pytest.raises(Exception) as caught:
        pick_by_model(client, TINY, "Profile sales.csv")
    assert len(transport.requests) == 1
    assert describe_error(caught.value).startswith(reason)
    assert "\n" not in describe_error(caught.value) and len(describe_error(caught.value)) <= 300


# ----------------------------------------------------------------- an answer that is no decision


@pytest.mark.parametrize(
    "answer, reason",
    [
        (generated(None, promptFeedback={"blockReason": "SAFETY"}),
         "the model gave no answer (no candidates; prompt blocked: SAFETY)"),
        (generated(None), "the model gave no answer (no candidates)"),
        (httpx.Response(200, json={"candidates": [{"finishReason": "MAX_TOKENS"}]}),
         "the model's answer is empty (finish reason: MAX_TOKENS)"),
        (generated([{"functionCall": {"name": "book_leave", "args": {"days": 3}}}]),
         "the model called book_leave, which was not declared (declared: activate_skill)"),
        (generated([activate("pdf-merger")]), 'activate_skill was called with arguments that do not match its schema '
                                              '({"name": "pdf-merger"}): it takes only `name`, one of the 3 skills'),
        (generated([activate(42)]),
         'activate_skill was called with arguments that do not match its schema ({"name": 42})'),
        (generated([{"functionCall": {"name": "activate_skill", "args": {}}}]),
         "activate_skill was called with arguments that do not match its schema ({})"),
        (generated([activate("csv-data-profiler", force=True)]),
         'activate_skill was called with arguments that do not match its schema '
         '({"name": "csv-data-profiler", "force": true})'),
    ],
    ids=["blocked", "no candidates", "empty candidate", "undeclared function", "unknown skill", "name not a string",
         "no arguments", "extra argument"],
)
def test_an_answer_that_is_no_decision_is_an_error_not_a_none(answer, reason):
    client, transport = fault_client(in_order(answer))
    decision = pick_by_model(client, TINY, "Profile sales.csv")
    assert decision.skill is None and decision.error.startswith(reason)
    assert len(transport.requests) == 1 and decision.raw is not None


def test_a_text_answer_is_still_a_decision_for_none():
    client, _ = fault_client(in_order(generated([{"text": "No skill fits."}])))
    decision = pick_by_model(client, TINY, "What is the capital of Australia?")
    assert (decision.skill, decision.error) == (None, None)


# ----------------------------------------------------------------- embeddings


UNIT = [1.0, 0.0, 0.0]


@pytest.mark.parametrize(
    "answer, message",
    [
        (embedded([]), "gemini-embedding-2 returned 0 vector(s) for 3 text(s)"),
        (httpx.Response(200, json={}), "gemini-embedding-2 returned 0 vector(s) for 3 text(s)"),
        (embedded([UNIT, UNIT]), "gemini-embedding-2 returned 2 vector(s) for 3 text(s)"),
        (embedded([UNIT, UNIT, [1.0, 0.0]]), "gemini-embedding-2 returned vectors of different sizes (2, 3)"),
        (embedded([UNIT, UNIT, []]), "gemini-embedding-2 returned an empty vector"),
        (httpx.Response(200, content=b'{"embeddings": [{"values": [1, 0]}, {"values": [NaN, 0]}, {"values": [0, 1]}]}'),
         "gemini-embedding-2 returned a vector with NaN or infinite values"),
    ],
    ids=["empty list", "no embeddings field", "too few", "wrong dimension", "empty vector", "NaN"],
)
def test_bad_embeddings_are_refused_with_a_reason(answer, message):
    client, _ = fault_client(in_order(answer))
    with pytest.raises(EmbeddingError, match=message.replace("(", r"\(").replace(")", r"\)")):
        embed_texts(client, ["a", "b", "c"])
    with pytest.raises(EmbeddingError):
        SimilaritySelector(client, TINY, cache=False)  # the descriptions cannot be embedded: said at once


def test_a_query_vector_of_another_size_is_an_error_in_the_report():
    def handle(request):
        n = len(texts_of(request))
        return embedded([UNIT] * n) if n == 3 else embedded([[1.0, 0.0]] * n)  # descriptions: size 3; queries: 2

    client, _ = fault_client(handle)
    selector = SimilaritySelector(client, TINY, cache=False)
    queries = load_queries(FIXTURES / "tiny_queries.yaml", TINY.names)[:1]
    report = evaluate("similarity", run_selector(selector, queries, progress=False))
    assert report.errors == 1
    assert report.error_reasons[0]["error"] == (
        "EmbeddingError: gemini-embedding-2 gave query vectors of size 2 but the skill vectors have size 3: "
        "the embedding model changed; build the selector again")


# ----------------------------------------------------------------- a 30-query run keeps what it has


FAULTS_BY_QUERY = {  # query number → the fault it meets every time
    3: error(429, "RESOURCE_EXHAUSTED", "Quota exceeded", retry_delay="7s"),
    8: error(503, "UNAVAILABLE", "overloaded"),
    12: timeout(),
    17: raw(200, "not json"),
    21: generated(None, promptFeedback={"blockReason": "SAFETY"}),
    25: generated([{"functionCall": {"name": "send_email", "args": {}}}]),
    29: generated([activate("no-such-skill")]),
}


def test_a_30_query_run_records_each_fault_and_keeps_every_answer():
    queries = load_queries(DATA_DIR / "trigger_eval.yaml", WORKPLACE.names)
    number = {q.query: i for i, q in enumerate(queries, 1)}
    expected = {q.query: q.expected for q in queries}

    def handle(request):
        query = query_of(request)
        fault = FAULTS_BY_QUERY.get(number[query])
        if isinstance(fault, Exception):
            raise fault
        if fault is not None:
            return fault
        skill = expected[query]
        return generated([activate(skill)] if skill else [{"text": "No skill fits."}])

    client, transport = fault_client(handle)
    outcomes = run_selector(lambda q: pick_by_model(client, WORKPLACE, q), queries, progress=False)
    report = evaluate("model", outcomes)
    assert (report.queries, report.errors, report.correct) == (30, 7, 23)
    assert [i for i, o in enumerate(outcomes, 1) if o.verdict == "error"] == sorted(FAULTS_BY_QUERY)
    assert all(o.chosen == o.query.expected for o in outcomes if o.verdict != "error")  # every answer kept
    assert len(transport.requests) == 23 + 4 + 3 * 5  # answers and non-retried faults once; 429, 503, timeout 5 times
    error_lines = [line for line in report.summary().splitlines() if ": error on " in line]
    assert len(error_lines) == 7
    assert [e["error"].split(" (")[0] for e in report.error_reasons] == [
        "429 RESOURCE_EXHAUSTED: Quota exceeded", "503 UNAVAILABLE: overloaded",
        "no answer in time", "the backend's answer is not JSON: 'not json'",
        "the model gave no answer", "the model called send_email, which was not declared",
        "activate_skill was called with arguments that do not match its schema",
    ]


def test_hybrid_and_similarity_record_embedding_faults_per_query(tmp_path, monkeypatch):
    """An embedding fault on one query's vector: similarity and hybrid record it and go on."""
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path))
    queries = load_queries(FIXTURES / "tiny_queries.yaml", TINY.names)
    names = TINY.names
    bad = queries[1].query

    def handle(request):
        if method_of(request) == "generateContent":
            offered = names[0]
            return generated([activate(offered)])
        texts = texts_of(request)
        if any(bad in t for t in texts):
            return embedded([])
        return embedded([np.eye(3)[i % 3].tolist() for i in range(len(texts))])

    client, _ = fault_client(handle)
    similarity = SimilaritySelector(client, TINY, threshold=0.5)

    def hybrid(q):
        return pick_hybrid(client, TINY, similarity, q, k=2)

    for name, selector in [("similarity", similarity), ("hybrid", hybrid)]:
        outcomes = run_selector(selector, queries, progress=False, name=name)
        report = evaluate(name, outcomes)
        assert report.errors == 1 and len(outcomes) == len(queries), name
        assert report.error_reasons == [{"query": bad, "error":
                                         "EmbeddingError: gemini-embedding-2 returned 0 vector(s) for 1 text(s)"}]
        assert all(o.decisions[0].error is None for o in outcomes if o.query.query != bad)


def test_describe_error_keeps_other_errors_readable():
    assert describe_error(ValueError("bad\n  value")) == "ValueError: bad value"
    assert len(describe_error(RuntimeError("x" * 1000))) == 300
    assert describe_error(httpx.ConnectError("refused")).startswith("cannot reach the backend (ConnectError: refused)")
    err = errors.ServerError(500, {"error": {"code": 500, "message": "boom", "status": "INTERNAL"}})
    assert describe_error(err) == ("500 INTERNAL: boom (the server failed: try again later; "
                                   "the Gemini client retries these)")
