"""What a GGUF model file says about itself: its name, chat template, special tokens and trained context.

A GGUF file starts with a header of typed key-value pairs (the format is specified in ggml's ``docs/gguf.md``).
``read_metadata`` reads that header only, never the weights: scalars and strings as they are, the token list
(``tokenizer.ggml.tokens``) as a list of strings, and any other array as its length, skipped.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

MAGIC = b"GGUF"
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_KEPT_ARRAYS = {"tokenizer.ggml.tokens"}


class NotAModelFile(ValueError):
    """The file is not a GGUF model file, or its header is cut short."""


@dataclass(frozen=True)
class ModelFacts:
    """The header facts the course uses to run a GGUF chat model."""

    path: Path
    name: str  # general.name, else the file's stem
    architecture: str
    context_length: int  # the context the model was trained with
    chat_template: str | None
    bos_token: str
    eos_token: str
    add_bos_token: bool
    special_tokens: tuple[str, ...]  # the texts of the tokens named by the tokenizer.ggml.*_token_id keys


class _Reader:
    def __init__(self, handle: BinaryIO, path: Path) -> None:
        self.handle, self.path = handle, path

    def take(self, size: int) -> bytes:
        data = self.handle.read(size)
        if len(data) != size:
            raise NotAModelFile(f"{self.path}: the GGUF header is cut short (the file is truncated or still copying).")
        return data

    def scalar(self, kind: int) -> Any:
        code = _SCALARS[kind]
        return struct.unpack(code, self.take(struct.calcsize(code)))[0]

    def string(self) -> str:
        return self.take(self.scalar(10)).decode("utf-8", errors="replace")

    def value(self, kind: int, keep: bool) -> Any:
        if kind == _STRING:
            return self.string()
        if kind != _ARRAY:
            if kind not in _SCALARS:
                raise NotAModelFile(f"{self.path}: unknown GGUF value type {kind} in the header.")
            return self.scalar(kind)
        item, count = self.scalar(4), self.scalar(10)
        if keep:
            return [self.value(item, keep) for _ in range(count)]
        if item in _SCALARS:
            self.handle.seek(count * struct.calcsize(_SCALARS[item]), 1)
        else:
            for _ in range(count):
                self.value(item, keep=False)
        return count


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The key-value header of a GGUF file (arrays other than the token list as their length)."""
    path = Path(path)
    with path.open("rb") as handle:
        reader = _Reader(handle, path)
        if handle.read(4) != MAGIC:
            raise NotAModelFile(f"{path} is not a GGUF model file (it does not start with 'GGUF'). "
                                "Point COURSE_LOCAL_MODEL at a .gguf file, as llama.cpp, Ollama or LM Studio use.")
        version = reader.scalar(4)
        if version < 2:
            raise NotAModelFile(f"{path}: GGUF version {version} is too old; convert it again with llama.cpp.")
        reader.scalar(10)  # tensor count
        pairs = reader.scalar(10)
        metadata: dict[str, Any] = {}
        for _ in range(pairs):
            key = reader.string()
            metadata[key] = reader.value(reader.scalar(4), keep=key in _KEPT_ARRAYS)
        return metadata


def model_facts(path: str | Path) -> ModelFacts:
    """The facts of a GGUF file's header (`NotAModelFile` when it is not one)."""
    path = Path(path)
    meta = read_metadata(path)
    tokens = meta.get("tokenizer.ggml.tokens") or []
    architecture = str(meta.get("general.architecture", "unknown"))

    def token(key: str) -> str:
        index = meta.get(f"tokenizer.ggml.{key}_token_id")
        return tokens[index] if isinstance(index, int) and 0 <= index < len(tokens) else ""

    specials = tuple(dict.fromkeys(t for t in (token(k) for k in ("bos", "eos", "eot", "padding", "unknown",
                                                                    "separator")) if t))
    return ModelFacts(path=path, name=str(meta.get("general.name") or path.stem), architecture=architecture,
                      context_length=int(meta.get(f"{architecture}.context_length") or 0),
                      chat_template=meta.get("tokenizer.chat_template"), bos_token=token("bos"),
                      eos_token=token("eos"), add_bos_token=bool(meta.get("tokenizer.ggml.add_bos_token", True)),
                      special_tokens=specials)
