"""What a generateContent request declares, and what its tool_config lets the model answer.

Both offline backends (the local model and the scripted stand-in) read a request's function declarations
and its ``toolConfig`` here, so both apply Gemini's contract the same way:

| mode | the answer is |
|---|---|
| AUTO (the default) | text, or a call of any declared function |
| ANY | a call of an allowed function (every declared one when none is listed) |
| NONE | text |
| VALIDATED | text, or a call of an allowed function (every declared one when none is listed) |

``allowedFunctionNames`` is accepted with ANY and VALIDATED only, and must name declared functions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

Json = dict[str, Any]


class InvalidRequest(ValueError):
    """A request the Gemini API would refuse with 400 INVALID_ARGUMENT; the message says why."""


_SCHEMA_MAPS = {"properties", "patternProperties", "$defs", "definitions"}
_LITERALS = {"enum", "const", "default", "examples", "example"}
_SCHEMA_KEYS_KEPT = {"enum", "required", "description", "minItems", "maxItems", "minimum",
                     "maximum", "minLength", "maxLength", "pattern", "title",
                     "minProperties", "maxProperties"}


def gemini_schema_to_json_schema(schema: Json) -> Json:
    """Convert a Gemini ``Schema`` (upper-case OpenAPI types) into JSON schema.

    Types become lower-case, ``nullable`` becomes a union with "null", enums and bounds are
    kept, ``format``/``propertyOrdering``/``example`` are dropped, and objects with listed
    properties are closed (``additionalProperties: false``).
    """
    out: Json = {key: value for key, value in schema.items() if key in _SCHEMA_KEYS_KEPT}
    kind = str(schema.get("type", "")).lower()
    if kind and kind != "type_unspecified":
        out["type"] = [kind, "null"] if schema.get("nullable") else kind
    if "properties" in schema:
        out["properties"] = {name: gemini_schema_to_json_schema(sub)
                             for name, sub in schema["properties"].items()}
    if "items" in schema:
        out["items"] = gemini_schema_to_json_schema(schema["items"])
    if "anyOf" in schema:
        out["anyOf"] = [gemini_schema_to_json_schema(sub) for sub in schema["anyOf"]]
    return close_objects(out)


def close_objects(schema: Any) -> Any:
    """Recursively forbid extra keys in objects that list their properties."""
    if isinstance(schema, list):
        return [close_objects(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    closed: Json = {}
    for key, value in schema.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            closed[key] = {name: close_objects(sub) for name, sub in value.items()}
        else:
            closed[key] = value if key in _LITERALS else close_objects(value)
    if "properties" in closed:
        closed.setdefault("additionalProperties", False)
    return closed


@dataclass(frozen=True)
class Declaration:
    """A declared function: its name, description and JSON-schema arguments."""

    name: str
    description: str
    parameters: Json

    def describe(self) -> str:
        """One JSON line shown to the model."""
        return json.dumps({"name": self.name, "description": self.description,
                           "parameters": self.parameters}, ensure_ascii=False)


_NO_ARGUMENTS: Json = {"type": "object", "properties": {}, "additionalProperties": False}


def parse_declaration(raw: Json) -> Declaration:
    """Read one functionDeclaration in either parameter form the SDK sends."""
    if not isinstance(raw, dict) or not raw.get("name"):
        raise InvalidRequest("Each function declaration needs a name.")
    json_schema = raw.get("parametersJsonSchema", raw.get("parameters_json_schema"))
    if json_schema is not None:
        parameters = close_objects(json_schema)
    elif raw.get("parameters") is not None:
        parameters = gemini_schema_to_json_schema(raw["parameters"])
    else:
        parameters = _NO_ARGUMENTS
    return Declaration(raw["name"], raw.get("description", ""), parameters)


def parse_declarations(tools: Any) -> list[Declaration]:
    """All function declarations of a request's ``tools`` list."""
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise InvalidRequest("tools must be a list.")
    return [parse_declaration(raw) for tool in tools
            for raw in (tool or {}).get("functionDeclarations", [])]


MODES = ("AUTO", "ANY", "NONE", "VALIDATED")
NAMED_MODES = ("ANY", "VALIDATED")


@dataclass(frozen=True)
class Calling:
    """What the model may answer in one request: a call of one of `functions`, or (if `allow_text`) text."""

    mode: str
    functions: list[Declaration]
    allow_text: bool


def function_calling(tool_config: Any, declarations: list[Declaration]) -> Calling:
    """Apply a request's ``toolConfig`` to its declarations (the module docstring's table)."""
    config = (tool_config or {}).get("functionCallingConfig") or {}
    mode = str(config.get("mode") or "AUTO").upper()
    mode = "AUTO" if mode == "MODE_UNSPECIFIED" else mode
    if mode not in MODES:
        raise InvalidRequest(f"Unsupported functionCallingConfig.mode {mode!r}: use {', '.join(MODES)}.")
    allowed = list(config.get("allowedFunctionNames") or [])
    if allowed and mode not in NAMED_MODES:
        raise InvalidRequest(f"allowedFunctionNames is set only with mode ANY or VALIDATED, not {mode}.")
    declared = [d.name for d in declarations]
    if unknown := [name for name in allowed if name not in declared]:
        raise InvalidRequest(f"allowedFunctionNames {unknown} are not declared: the declared functions are "
                             f"{declared}.")
    if mode == "ANY" and not declarations:
        raise InvalidRequest("functionCallingConfig mode ANY needs at least one declared function.")
    functions = [] if mode == "NONE" else [d for d in declarations if not allowed or d.name in allowed]
    return Calling(mode, functions, allow_text=mode != "ANY")
