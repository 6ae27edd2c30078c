"""ApplyPatch's canonical result (changed paths, hunk counts, diagnostics, ignored metadata) and
its textual receipt."""

from __future__ import annotations

from typing import Any

from holon.patch.paths import normalise
from holon.patch.transaction import Change

_GROUPS = (("modified", "M"), ("added", "A"), ("deleted", "D"), ("renamed", "R"))
_OP_GROUP = {
    "modify": "modified",
    "add": "added",
    "delete": "deleted",
    "rename": "renamed",
    "metadata": "metadata_only",
}


def build_result(changes: list[Change]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "added": [],
        "modified": [],
        "deleted": [],
        "renamed": [],
        "metadata_only": [],  # sections with metadata lines only: nothing changed
        "hunk_counts": {},
        "diagnostics": [],
        "ignored_metadata": [],  # index, similarity and mode lines: recorded, never applied
    }
    for change in changes:
        patch = change.patch
        path = normalise(patch.path)
        if patch.op == "rename":
            result["renamed"].append({"from": normalise(patch.old_path or ""), "to": path})
        else:
            result[_OP_GROUP[patch.op]].append(path)
        result["hunk_counts"][path] = len(patch.hunks)
        result["diagnostics"].extend(change.diagnostics)
        result["ignored_metadata"].extend(
            {"path": path, "line": line} for line in patch.ignored_metadata
        )
    return result


def summary(result: dict[str, Any]) -> str:
    counts = [f"{len(result[group])} {group}" for group, _ in _GROUPS if result[group]]
    total = sum(len(result[group]) for group, _ in _GROUPS)
    meta = len(result.get("metadata_only", ()))
    counts += [f"{meta} metadata only"] if meta else []
    return f"applied patch: {total} file{'s' if total != 1 else ''} changed ({', '.join(counts)})"


def render(result: dict[str, Any]) -> str:
    """`Applied patch: M src/a.py (2 hunks), A docs/new.md`, then one line per diagnostic and per
    metadata line (recorded, not applied)."""
    entries = []
    empty = {item for item in result["added"] if not result["hunk_counts"].get(item)}
    for group, letter in _GROUPS:
        for item in result[group]:
            path = f"{item['from']} -> {item['to']}" if group == "renamed" else item
            hunks = result["hunk_counts"].get(item["to"] if group == "renamed" else item, 0)
            shown = group in ("modified", "renamed") and hunks
            entries.append(
                f"{letter} {path}"
                + (f" ({hunks} hunk{'s' if hunks != 1 else ''})" if shown else "")
                + (" (empty)" if group == "added" and item in empty else "")
            )
    entries += [f"{path} unchanged (metadata only)" for path in result.get("metadata_only", ())]
    lines = ["Applied patch: " + ", ".join(entries)]
    lines += [f"note: {d['path']}: {d['message']} [{d['kind']}]" for d in result["diagnostics"]]
    lines += [
        f"ignored (not applied): {m['line']} ({m['path']})" for m in result["ignored_metadata"]
    ]
    return "\n".join(lines)
