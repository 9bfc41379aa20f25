"""One ``genai.Client`` for the whole course: Gemini when a key is set, the local models otherwise.

The local client is a real ``genai.Client`` whose HTTP goes to an in-process app
(``course_utils.backend.local.app``) through httpx's WSGI transport (sync) and ASGI transport
(``client.aio``), so learner code is identical in both modes. Its requests never touch the network; the local
model's llama.cpp server also listens on 127.0.0.1, where the backend counts tokens and saves and restores prompt
prefixes (``course_utils.backend.local.llm``). Nothing leaves the machine.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

import httpx
from google import genai
from google.genai import types

from course_utils.backend import facts as known
from course_utils.backend.facts import Facts
from course_utils.backend.retries import RETRY_STATUS_CODES, retry_options  # noqa: F401 (RETRY_STATUS_CODES: tests)

GENERATION_MODEL = os.environ.get("COURSE_MODEL", "gemini-2.5-flash")
EMBEDDING_MODEL = os.environ.get("COURSE_EMBEDDING_MODEL", "gemini-embedding-2")
KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
LOCAL_BASE_URL = "http://local-gemini"
BACKENDS = ("auto", "gemini", "local", "openai")
REQUEST_TIMEOUT_MS = 120_000
"""A Gemini request with no answer after two minutes ends in a ReadTimeout, which the client retries."""


@dataclass(frozen=True)
class Backend:
    """What answers a client's requests: the backend's name, the models that really run, its facts (how it caps and
    decodes a decision, its encoder's threshold: `backend.facts`), the HTTP options used.

    On the local backend the Gemini model names are answered by local models; labels name those,
    so a local result is never shown under a Gemini model's name.
    """

    name: str  # "local", "gemini" or "openai" (an OpenAI-compatible server, with local embeddings)
    generation_model: str
    embedding_model: str
    facts: Facts = field(compare=False)
    http_options: types.HttpOptions | None = field(default=None, compare=False, repr=False)
    """The HTTP options `make_client` built the client with (retries, timeout, base URL); None if unknown."""
    key_variable: str | None = field(default=None, compare=False)
    """The environment variable the API key was read from (the key itself is not kept here)."""
    model_file: str | None = field(default=None, compare=False)
    """On the local backend, the model asked for: a published model's name or a GGUF path."""

    server: str | None = field(default=None, compare=False)
    """On the openai backend, the server's host and port."""
    server_embeds: bool = field(default=False, compare=False)
    """On the openai backend, whether the server's embedding model (COURSE_OPENAI_EMBEDDING_MODEL) embeds."""
    decisions: str | None = field(default=None, compare=False)
    """On the openai backend, how decisions are asked: tools, schema or auto (COURSE_OPENAI_DECISION)."""

    def generation_label(self) -> str:
        """The model that made a decision, e.g. 'Qwen2.5-Coder-1.5B (local)', 'gemini-2.5-flash' or
        'qwen2.5:7b (OpenAI-compatible server at 127.0.0.1:11434)'."""
        if self.name == "openai":
            return f"{self.generation_model} (OpenAI-compatible server at {self.server})"
        return f"{self.generation_model} (local)" if self.name == "local" else self.generation_model

    def context_window(self) -> int | None:
        """The generation model's context window in tokens, when the backend knows it without asking the model's
        API: the local llama.cpp server's (the model file's, at most `local.model_file.CONTEXT_TOKENS`), the one an
        OpenAI-compatible server is said to have (`openai_compatible.context_tokens`); None elsewhere (Gemini
        reports it per model, `models.get`)."""
        if self.name == "local":
            from course_utils.backend.local.model_file import load_model

            return load_model(self.model_file).context
        if self.name == "openai":
            from course_utils.backend.openai_compatible import context_tokens

            return context_tokens()
        return None

    def embedding_label(self, model: str = EMBEDDING_MODEL) -> str:
        """The encoder behind the embedding model name `model`, e.g. 'multilingual USE v3 (local)'; on Gemini, `model`
        itself; on any other backend (the scripted stand-in of `course_utils.lessons.scripted`), its own encoder."""
        if self.name == "gemini":
            return model
        if self.server_embeds:
            return f"{self.embedding_model} (OpenAI-compatible server at {self.server})"
        if self.name not in ("local", "openai"):
            return self.embedding_model
        from course_utils.backend.encoders.embed import DISPLAY_NAMES

        return f"{DISPLAY_NAMES.get(model, self.embedding_model)} (local)"


GEMINI = Backend("gemini", GENERATION_MODEL, EMBEDDING_MODEL, known.GEMINI)


def backend_of(client: genai.Client) -> Backend:
    """The backend `make_client` attached to `client`; a client built any other way is Gemini."""
    return getattr(client, "course_backend", GEMINI)


def key_variable() -> str | None:
    """The first of GEMINI_API_KEY, GOOGLE_API_KEY that is set, if any."""
    return next((name for name in KEY_VARIABLES if os.environ.get(name)), None)


def gemini_key() -> str | None:
    """The Gemini API key from the environment, if any."""
    name = key_variable()
    return os.environ[name] if name else None


def gemini_client() -> genai.Client:
    """A Gemini client with retries and a request timeout; ValueError explaining the local default if no key."""
    key = gemini_key()
    if key is None:
        raise ValueError(
            "backend='gemini' needs an API key: set GEMINI_API_KEY (or GOOGLE_API_KEY). "
            "Without a key, make_client() uses the local backend, which runs offline on "
            "local models (`python -m course_utils models fetch` downloads them once)."
        )
    options = types.HttpOptions(retry_options=retry_options(), timeout=REQUEST_TIMEOUT_MS)
    client = genai.Client(api_key=key, http_options=options)
    client.course_backend = replace(GEMINI, http_options=options, key_variable=key_variable())
    return client


def local_client(model_file: str | os.PathLike | None = None) -> genai.Client:
    """A real genai.Client served in-process by the local app (no network), on `model_file`: a published model's
    name or a GGUF path (default: env COURSE_LOCAL_MODEL, else Qwen2.5-Coder-1.5B)."""
    from course_utils.backend.local.app import get_app

    app = get_app(model_file)
    options = types.HttpOptions(
        base_url=LOCAL_BASE_URL, api_version="v1beta",
        httpx_client=httpx.Client(transport=httpx.WSGITransport(app=app.wsgi),
                                  base_url=LOCAL_BASE_URL),
        httpx_async_client=httpx.AsyncClient(transport=httpx.ASGITransport(app=app.asgi),
                                             base_url=LOCAL_BASE_URL),
    )
    client = genai.Client(api_key="local", http_options=options)
    client.course_backend = replace(local_backend(app.llm_name), http_options=options)
    return client


def local_backend(model_file: str | os.PathLike, embedder: str | None = None) -> Backend:
    """The local models that answer for the Gemini names: the GGUF chat model, and USE (or E5)."""
    from course_utils.backend.encoders.embed import DISPLAY_NAMES, USE_NAME
    from course_utils.backend.local.model_file import display_name

    return Backend("local", display_name(model_file), DISPLAY_NAMES[embedder or USE_NAME], known.LOCAL,
                   model_file=str(model_file))


def openai_client() -> genai.Client:
    """A real genai.Client whose generation goes to the OpenAI-compatible server of COURSE_OPENAI_BASE_URL
    (``backend.openai_compatible``), its embeddings to the local encoders or, with COURSE_OPENAI_EMBEDDING_MODEL, to
    that model on the server."""
    from course_utils.backend.encoders.embed import DISPLAY_NAMES, USE_NAME
    from course_utils.backend.openai_compatible import get_app

    app = get_app()
    options = types.HttpOptions(
        base_url=LOCAL_BASE_URL, api_version="v1beta",
        httpx_client=httpx.Client(transport=httpx.WSGITransport(app=app.wsgi), base_url=LOCAL_BASE_URL),
        httpx_async_client=httpx.AsyncClient(transport=httpx.ASGITransport(app=app.asgi), base_url=LOCAL_BASE_URL),
    )
    client = genai.Client(api_key="local", http_options=options)
    embedder = app.endpoint.embedding_model
    facts = replace(known.OPENAI, threshold=None) if embedder else known.OPENAI  # no threshold fitted for its encoder
    if app.way.setting == "schema":  # asked for the local backend's JSON: its answers are the local cap's tokens
        facts = replace(facts, decision_tokens=known.LOCAL_DECISION_TOKENS)
    client.course_backend = Backend("openai", app.endpoint.model, embedder or DISPLAY_NAMES[USE_NAME], facts,
                                    http_options=options, server=app.endpoint.host, server_embeds=bool(embedder),
                                    decisions=app.way.setting)
    return client


def make_client(backend: str = "auto", *, model_file: str | os.PathLike | None = None,
                verbose: bool = True) -> genai.Client:
    """An OpenAI-compatible server if COURSE_OPENAI_BASE_URL is set (or backend="openai"), else Gemini if a key is
    set (or backend="gemini"), else the local backend; prints which.

    `model_file` picks the local model: a published model's name or the path of a GGUF chat model (default: env
    COURSE_LOCAL_MODEL, else Qwen2.5-Coder-1.5B)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    use_openai = backend == "openai" or (backend == "auto" and bool(os.environ.get("COURSE_OPENAI_BASE_URL")))
    use_gemini = backend == "gemini" or (backend == "auto" and not use_openai and gemini_key() is not None)
    if use_openai:
        client = openai_client()
        label, embedder = backend_of(client).generation_label(), backend_of(client).embedding_label()
        banner = (f"Backend: {label} answering for {GENERATION_MODEL}, {embedder} for {EMBEDDING_MODEL}. "
                  "Unset COURSE_OPENAI_BASE_URL (or pass backend='local') to use the local model.")
    elif use_gemini:
        client = gemini_client()
        banner = (f"Backend: Gemini ({GENERATION_MODEL}, {EMBEDDING_MODEL}). "
                  "Unset GEMINI_API_KEY and GOOGLE_API_KEY (or pass backend='local') "
                  "to run offline.")
    else:
        client = local_client(model_file)
        backend = backend_of(client)
        banner = (f"Backend: local ({backend.generation_model} answering for {GENERATION_MODEL}, "
                  f"{backend.embedding_model} for {EMBEDDING_MODEL}; in-process). Set GEMINI_API_KEY to use Gemini.")
    if verbose:
        print(banner)
    return client


def check_concurrency(client: genai.Client, concurrency: int) -> int:
    """`concurrency`, the decisions to ask at once, if `client`'s backend can answer them (`Facts.concurrent`: a
    server, Gemini or an OpenAI-compatible one); ValueError otherwise. The local model runs in this process with one
    slot whose cache holds the catalog's prefix: it answers one decision at a time, and threads would only queue."""
    if concurrency < 1:
        raise ValueError(f"--concurrency must be at least 1, got {concurrency}.")
    if concurrency > 1 and not backend_of(client).facts.concurrent:
        raise ValueError(f"--concurrency {concurrency} needs a server (--backend openai with COURSE_OPENAI_BASE_URL, "
                         "or gemini): this backend answers one decision at a time in this process.")
    return concurrency


def embedding_backend(client: genai.Client) -> str:
    """The backend whose encoder embeds for `client`, naming its cache and default threshold: an OpenAI-compatible
    server's client embeds locally, so its vectors share the local backend's cache and threshold, unless the
    server's own embedding model embeds ("openai-<model>": a cache of its own, no default threshold)."""
    backend = backend_of(client)
    if backend.name == "openai":
        return f"openai-{backend.embedding_model}" if backend.server_embeds else "local"
    return backend.name
