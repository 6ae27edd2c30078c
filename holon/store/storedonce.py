"""Tool outputs stored once: long strings of a result envelope that its rendered receipt already
holds are stored as references to spans of the receipt, and restored exactly on read.

A transcript `tool_result` entry keeps `rendered` (exactly what the model saw) and the canonical
`envelope`. A command's output appears in both (the envelope's `stdout_preview` and the receipt's
`--- stdout ---` block), so `compact` replaces each long envelope string that occurs in the
receipt with null and records where it is in `envelope_refs`: `[path, start, end, suffix]`, the
path of keys and list indexes to the string, the span of `rendered` it equals, and the trailing
newlines the receipt dropped. `expand` puts the strings back; a record without refs is returned
as it is, so entries written before this change read the same.
"""

from __future__ import annotations

import copy
from typing import Any

MIN_CHARS = 256  # shorter strings are left where they are: a reference would not save much
REFS = "envelope_refs"


def compact(envelope: dict[str, Any], rendered: str) -> tuple[dict[str, Any], list[list[Any]]]:
    """(the envelope with its long strings found in `rendered` nulled, the references)."""
    refs: list[list[Any]] = []
    result = envelope.get("result")
    if not isinstance(result, (dict, list)) or len(rendered) < MIN_CHARS:
        return envelope, refs
    out = copy.copy(envelope)
    out["result"] = _walk(result, ["result"], rendered, refs)
    return (out, refs) if refs else (envelope, refs)


def _walk(node: Any, path: list[Any], rendered: str, refs: list[list[Any]]) -> Any:
    if isinstance(node, dict):
        return {k: _walk(v, [*path, k], rendered, refs) for k, v in node.items()}
    if isinstance(node, list):
        return [_walk(v, [*path, i], rendered, refs) for i, v in enumerate(node)]
    if isinstance(node, str) and len(node) >= MIN_CHARS:
        core = node.rstrip("\n")
        start = rendered.find(core)
        if start >= 0:
            refs.append([path, start, start + len(core), node[len(core) :]])
            return None
    return node


def expand(data: dict[str, Any]) -> dict[str, Any]:
    """A `tool_result` entry's data with its envelope whole again (`data` is not changed)."""
    refs = data.get(REFS)
    rendered = data.get("rendered")
    if not refs or not isinstance(rendered, str) or not isinstance(data.get("envelope"), dict):
        return data
    out = {k: v for k, v in data.items() if k != REFS}
    envelope = copy.deepcopy(data["envelope"])
    for ref in refs:
        try:
            path, start, end, suffix = ref
            _put(envelope, path, rendered[start:end] + suffix)
        except (ValueError, TypeError, KeyError, IndexError):
            continue  # a damaged reference leaves its field null rather than failing the reader
    out["envelope"] = envelope
    return out


def _put(node: Any, path: list[Any], value: str) -> None:
    for key in path[:-1]:
        node = node[key]
    if node[path[-1]] is not None:
        raise ValueError("reference to a field that holds a value")
    node[path[-1]] = value


def expand_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A transcript entry with a `tool_result`'s envelope expanded; other entries as they are."""
    data = entry.get("data")
    if entry.get("kind") != "tool_result" or not isinstance(data, dict) or REFS not in data:
        return entry
    return {**entry, "data": expand(data)}
