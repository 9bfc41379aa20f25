"""YAML from files people hand us: safe tags only, bounded nesting, no alias bombs.

Used by `course_utils.skills.skill` (frontmatter) and `course_utils.skills.queries` (query sets). `yaml.safe_load`
already refuses tags such as `!!python/object` (nothing is ever executed), but it builds whatever
the aliases describe: nine anchors of nine aliases each are a 9-line "billion laughs" that makes a
list of 387 million items as soon as anything prints it. Here the document's node graph is measured
*before* it is built, and refused when it is nested too deeply, refers to itself, or would expand
to too many values.
"""
from __future__ import annotations

from collections.abc import Collection
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

MAX_DEPTH = 32
"""Deepest nesting accepted: a skill's frontmatter needs 2 levels, a query set 2."""
MAX_VALUES = 100_000
"""Most values (scalars, lists, mappings) a document may hold once every alias is expanded."""
_STR = "tag:yaml.org,2002:str"
_TYPED = frozenset(f"tag:yaml.org,2002:{kind}" for kind in ("int", "float", "bool", "timestamp"))


class YamlRefused(ValueError):
    """Valid YAML that is refused: too deep, self-referring, or too big once its aliases are expanded."""


def _line(node: Node) -> str:
    return f"line {node.start_mark.line + 1}"


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [item for pair in node.value for item in pair]
    return []


def _measure(node: Node, depth: int, seen: dict[int, tuple[int, int]], open_: set[int]) -> tuple[int, int]:
    """(values, height) of `node` with aliases expanded; YamlRefused past the limits."""
    if depth > MAX_DEPTH:
        raise YamlRefused(f"nested more than {MAX_DEPTH} levels deep ({_line(node)})")
    key = id(node)
    if key in open_:
        raise YamlRefused(f"an alias refers to the value that contains it ({_line(node)}): remove the recursion")
    if key not in seen:
        open_.add(key)
        sizes = [_measure(child, depth + 1, seen, open_) for child in _children(node)]
        open_.discard(key)
        seen[key] = (1 + sum(s for s, _ in sizes), 1 + max((h for _, h in sizes), default=0))
    values, height = seen[key]
    if depth + height > MAX_DEPTH:
        raise YamlRefused(f"nested more than {MAX_DEPTH} levels deep ({_line(node)})")
    if values > MAX_VALUES:
        raise YamlRefused(f"expands to more than {MAX_VALUES:,} values once its aliases (*name) are "
                          f"followed ({_line(node)}): write the values out instead of repeating aliases")
    return values, height


def _as_text(node: Node) -> Node:
    """A scalar that YAML would read as a number, boolean or date, as a new node reading as the text written."""
    if isinstance(node, ScalarNode) and node.tag in _TYPED:
        return ScalarNode(_STR, node.value, node.start_mark, node.end_mark, node.style)
    return node


def _text_under(node: Node, keys: Collection[str]) -> Node:
    """The document `node` with the keys and values of its mappings named in `keys` passed through `_as_text`.

    New nodes are built rather than the old ones changed: an alias elsewhere to the same value keeps its type.
    """
    if not isinstance(node, MappingNode):
        return node
    pairs = [(key, MappingNode(value.tag, [(_as_text(k), _as_text(v)) for k, v in value.value], value.start_mark,
                               value.end_mark, value.flow_style)
              if isinstance(key, ScalarNode) and key.value in keys and isinstance(value, MappingNode) else value)
             for key, value in node.value]
    return MappingNode(node.tag, pairs, node.start_mark, node.end_mark, node.flow_style)


def load(text: str, text_under: Collection[str] = ()) -> Any:
    """`yaml.safe_load(text)`, refusing deep, recursive or alias-bomb documents with YamlRefused.

    In the top-level mappings named in `text_under`, keys and values that YAML would read as numbers,
    booleans or dates are read as the text written: `metadata: {version: 1.10}` gives `"1.10"`.
    Other problems raise `yaml.YAMLError` as usual (syntax, unknown tags, several documents).
    """
    loader = yaml.SafeLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise YamlRefused(f"nested more than {MAX_DEPTH} levels deep") from None
        if node is None:
            return None
        _measure(node, 0, {}, set())
        return loader.construct_document(_text_under(node, text_under) if text_under else node)
    finally:
        loader.dispose()
