"""Which GGUF file the local backend runs, and what the course needs to know about it.

``COURSE_LOCAL_MODEL`` (or ``make_client(model_file=…)``) names a published model (``models.MODELS``, fetched by
``python -m course_utils models fetch``) or the path of any GGUF chat model, e.g. one Ollama or LM Studio
downloaded. ``load_model`` reads the file's header (``gguf``): its name, its context, and its chat template,
which renders every prompt (``chat_template``). A file without a chat template is a base model: it gets a clear
error unless ``COURSE_CHAT_TEMPLATE`` names a template file. Saved prompt prefixes are keyed by the file's
sha256, computed once per file and version (size and modification time) and remembered in the user's cache.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

from course_utils.backend.local.chat_template import ChatTemplate
from course_utils.backend.provision.gguf import ModelFacts, NotAModelFile, model_facts
from course_utils.backend.provision.models import DEFAULT_MODEL, MODELS, ModelFileMissing, model_path, require_model

MODEL_ENV = "COURSE_LOCAL_MODEL"
TEMPLATE_ENV = "COURSE_CHAT_TEMPLATE"
CONTEXT_TOKENS = 8192
"""The most context the course gives a model: the KV cache grows with it, and the lessons' prompts fit in far less.
A file trained on a shorter context gets its own."""
TEMPLATES = Path(__file__).parent / "templates"
HASHES = Path.home() / ".cache" / "who-picks-the-skill" / "hashes"


class NoChatTemplate(ValueError):
    """The model file carries no chat template and none was given."""


@dataclass(frozen=True)
class LocalModel:
    """A GGUF chat model ready to run: its file, identity, context and chat template."""

    choice: str  # what was asked for: a published model's name or a path
    name: str  # the name results are shown under
    path: Path
    sha256: str
    context: int
    template: ChatTemplate
    template_origin: str  # "the file" or the template file used


def model_choice(choice: str | os.PathLike | None = None) -> str:
    """The model asked for: `choice`, else env COURSE_LOCAL_MODEL, else the default published model."""
    return str(choice or os.environ.get(MODEL_ENV) or DEFAULT_MODEL)


def _published(path: Path) -> str | None:
    """The published model whose cached file `path` is, if any."""
    resolved = path.resolve()
    return next((name for name in MODELS if model_path(name).resolve() == resolved), None)


def file_sha256(path: Path) -> str:
    """The sha256 of a file, remembered per path, size and modification time (a large file is hashed once)."""
    stat = path.stat()
    key = {"path": str(path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    record = HASHES / (hashlib.sha1(key["path"].encode()).hexdigest() + ".json")
    try:
        saved = json.loads(record.read_text())
        if {k: saved.get(k) for k in key} == key:
            return saved["sha256"]
    except (OSError, ValueError, KeyError):
        pass
    digest = hashlib.sha256()
    with path.open("rb") as handle, tqdm(total=stat.st_size, unit="B", unit_scale=True, desc=f"hashing {path.name}",
                                         disable=stat.st_size < 2**28, leave=False) as bar:
        while block := handle.read(2**22):
            digest.update(block)
            bar.update(len(block))
    try:
        HASHES.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps({**key, "sha256": digest.hexdigest()}))
    except OSError:
        pass  # not remembered: hashed again next time
    return digest.hexdigest()


def _template(facts: ModelFacts, fallback: str | None) -> tuple[str, str]:
    """The template source and where it came from: COURSE_CHAT_TEMPLATE, the file, or the course's fallback."""
    given = os.environ.get(TEMPLATE_ENV)
    if given:
        try:
            return Path(given).expanduser().read_text(encoding="utf-8"), given
        except OSError as error:
            raise NoChatTemplate(f"{TEMPLATE_ENV}={given!r} cannot be read: {error}") from None
    if facts.chat_template:
        return facts.chat_template, "the file"
    if fallback:
        return (TEMPLATES / fallback).read_text(encoding="utf-8"), f"the course's {fallback}"
    raise NoChatTemplate(
        f"No chat template in {facts.path.name}: set {TEMPLATE_ENV}=path/to/template.jinja, or use the model's "
        f"instruct (chat) version. Without one it is a base model, which continues text instead of answering turns.")


def load_model(choice: str | os.PathLike | None = None) -> LocalModel:
    """The model `model_choice(choice)` names, read from its file (`ModelFileMissing` if there is none)."""
    choice = model_choice(choice)
    published = choice if choice in MODELS else None
    if published:
        path = require_model(published)
    else:
        path = Path(choice).expanduser()
        if not path.is_file():
            raise ModelFileMissing(
                f"{MODEL_ENV}={choice!r} is neither a published model ({', '.join(MODELS)}) nor a file. "
                "Give the path of a GGUF chat model, or unset it to use the default model.")
        published = _published(path)
    facts = model_facts(path)
    spec = MODELS.get(published) if published else None
    source, origin = _template(facts, spec.chat_template if spec else None)
    template = ChatTemplate(source, model=spec.display if spec else facts.name, bos_token=facts.bos_token,
                            eos_token=facts.eos_token, strip_bos=facts.add_bos_token,
                            special_tokens=facts.special_tokens)
    context = min(facts.context_length or CONTEXT_TOKENS, CONTEXT_TOKENS)
    return LocalModel(choice=choice, name=spec.display if spec else facts.name, path=path,
                      sha256=spec.sha256 if spec else file_sha256(path), context=context, template=template,
                      template_origin=origin)


def display_name(choice: str | os.PathLike | None = None) -> str:
    """The name results of `model_choice(choice)` are shown under, read without loading the model."""
    choice = model_choice(choice)
    if choice in MODELS:
        return MODELS[choice].display
    published = _published(Path(choice).expanduser())
    if published:
        return MODELS[published].display
    try:
        return model_facts(Path(choice).expanduser()).name
    except (OSError, NotAModelFile):
        return Path(choice).name
