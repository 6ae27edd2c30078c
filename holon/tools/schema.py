"""Source JSON schemas from pydantic models, and relaxed / strict emission for providers.

Source: the honest shape of the Args model (optional fields are optional),
with `$defs` references inlined so every provider sees one self-contained
object schema.

Relaxed (runtime default): every object gets `additionalProperties: false`.

Strict: additionally every object lists all its properties in `required`,
source-optional fields become nullable, nullable enums include null, and the
rules recurse into nested objects and array items.
"""

from __future__ import annotations

import copy
from typing import Any


def source_schema(model: type) -> dict[str, Any]:
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})
    schema = _inline(raw, defs)
    schema.pop("title", None)
    return schema


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            target = defs[node["$ref"].split("/")[-1]]
            merged = {**_inline(target, defs), **{k: v for k, v in node.items() if k != "$ref"}}
            return _inline(merged, defs)
        out = {}
        for k, v in node.items():
            if k == "title" and isinstance(v, str):
                continue
            if k == "properties":
                out[k] = {name: _inline(sub, defs) for name, sub in v.items()}
            else:
                out[k] = _inline(v, defs)
        return out
    if isinstance(node, list):
        return [_inline(x, defs) for x in node]
    return node


def _is_object(node: dict[str, Any]) -> bool:
    return node.get("type") == "object" or "properties" in node


def relaxed(schema: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(schema)
    _walk(out, strict=False)
    return out


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(schema)
    _walk(out, strict=True)
    return out


def _walk(node: Any, *, strict: bool) -> None:
    if isinstance(node, list):
        for x in node:
            _walk(x, strict=strict)
        return
    if not isinstance(node, dict):
        return
    if strict:
        node.pop("default", None)
    if _is_object(node):
        node.setdefault("type", "object")
        node["additionalProperties"] = False
        props = node.setdefault("properties", {})
        if strict:
            required = set(node.get("required", []))
            for name, sub in props.items():
                if name not in required:
                    props[name] = _nullable(sub)
            node["required"] = list(props)
    for key, value in node.items():
        if key in ("properties",):
            for sub in value.values():
                _walk(sub, strict=strict)
        elif key in ("items", "anyOf", "oneOf", "allOf", "prefixItems"):
            _walk(value, strict=strict)


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    """Make a schema accept null (once), including null in enums."""
    if _accepts_null(node):
        if "enum" in node and None not in node["enum"]:
            node["enum"] = [*node["enum"], None]
        return node
    if "anyOf" in node:
        node["anyOf"] = [*node["anyOf"], {"type": "null"}]
        return node
    t = node.get("type")
    if isinstance(t, str):
        node["type"] = [t, "null"]
    elif isinstance(t, list):
        node["type"] = [*t, "null"]
    else:
        return {"anyOf": [node, {"type": "null"}]}
    if "enum" in node and None not in node["enum"]:
        node["enum"] = [*node["enum"], None]
    return node


def _accepts_null(node: dict[str, Any]) -> bool:
    t = node.get("type")
    if t == "null" or (isinstance(t, list) and "null" in t):
        return True
    return any(isinstance(x, dict) and _accepts_null(x) for x in node.get("anyOf", []))


def validate_strict(schema: dict[str, Any], path: str = "$") -> list[str]:
    """Problems that would make `schema` fail a provider's strict mode (empty list: valid)."""
    problems: list[str] = []
    if not isinstance(schema, dict):
        return problems
    if _is_object(schema):
        if schema.get("additionalProperties") is not False:
            problems.append(f"{path}: additionalProperties must be false")
        props = schema.get("properties", {})
        if sorted(schema.get("required", [])) != sorted(props):
            problems.append(f"{path}: required must list every property")
        for name, sub in props.items():
            problems += validate_strict(sub, f"{path}.{name}")
    if "enum" in schema and _accepts_null(schema) and None not in schema["enum"]:
        problems.append(f"{path}: nullable enum must include null")
    if isinstance(schema.get("items"), dict):
        problems += validate_strict(schema["items"], f"{path}[]")
    for key in ("anyOf", "oneOf", "allOf"):
        for i, sub in enumerate(schema.get(key, [])):
            problems += validate_strict(sub, f"{path}.{key}[{i}]")
    if "$ref" in schema:
        problems.append(f"{path}: unresolved $ref")
    return problems
