"""The agent's memory files in the prompt without discarding its cache: the stable prefix shows
them as of the last compaction (the basis); an edit since is shown once, as the file now reads, in
the next turn's turn context, and the basis catches up at the next compaction.

1. The first turn of an agent without a basis shows the files as they are; its settle makes
   them, as they were when it began, the basis (`rebased`).
2. Each turn context shows every file whose text differs from what the model last saw
   (`context.memory_shown`: digests of the basis, or of a later turn context's copy) (`edits`).
3. The turn's settle moves `memory_shown` to what its turn context showed, unless a compaction
   in between made a newer basis (`settled`).
4. A compaction makes the files as they are the new basis (`rebased`): the first request after
   it shows them in the stable prefix, in the Loading Contract's order.
"""

from __future__ import annotations

import hashlib
from typing import Any

from holon.context import history, workingmemory
from holon.home.layout import Home
from holon.model.records import ContextState


def digest(text: str) -> str:
    """What identifies a memory file's shown text ("" for a file that is empty or gone)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16] if text else ""


def current(home: Home) -> dict[str, str]:
    """Name -> bounded text of the memory files as they are now (holon.context.workingmemory)."""
    return {name: text for name, _, text in workingmemory.memory_files(home)}


def digests(texts: dict[str, str]) -> dict[str, str]:
    return {name: digest(texts.get(name, "")) for name, _ in workingmemory.MEMORY_FILES}


def prefix_files(home: Home, ctx: ContextState) -> list[tuple[str, str, str]] | None:
    """(name, path, text) of the memory files as the stable prefix shows them (the basis), or
    None when there is no basis yet (then the files as they are)."""
    if ctx.memory_basis is None:
        return None
    basis = ctx.memory_basis
    return [
        (name, str(home.memory / filename), basis[name])
        for name, filename in workingmemory.MEMORY_FILES
        if basis.get(name)
    ]


def rebased(ctx: ContextState, texts: dict[str, str]) -> None:
    """Make `texts` the basis: what the stable prefix shows and the model has seen."""
    ctx.memory_basis = {name: text for name, text in texts.items() if text}
    ctx.memory_shown = digests(texts)


def edits(home: Home, ctx: ContextState) -> tuple[list[str], dict[str, str]]:
    """(turn-context lines, digests the model will have seen after them): each memory file whose
    text differs from what the model last saw, as it reads now. A line of it that would pass for
    a message's provenance line is quoted (holon.context.history.quote_content)."""
    now = current(home)
    shown = digests(now)
    lines: list[str] = []
    for name, filename in workingmemory.MEMORY_FILES:
        if shown[name] == ctx.memory_shown.get(name, ""):
            continue
        head = f"## Agent memory: {name} (memory/{filename}) was edited"
        if now.get(name):
            lines += ["", f"{head}; it now reads (this replaces the copy above):", ""]
            lines.append(history.quote_content(now[name]))
        else:
            lines += ["", f"{head}: it is now empty or gone"]
    return lines, shown


def settled(ctx: ContextState, turn_context: dict[str, Any] | None) -> None:
    """After a turn: the model has seen what its turn context showed, unless a compaction since
    made a newer basis (then the basis is what it saw)."""
    data = (turn_context or {}).get("data") or {}
    shown = data.get("memory_shown")
    if isinstance(shown, dict) and data.get("compression_epoch") == ctx.compression_epoch:
        ctx.memory_shown = {str(k): str(v) for k, v in shown.items()}
