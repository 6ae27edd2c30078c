"""Memory tools: MemorySearch (ranked recall over the memory index) and MemoryGet (the exact text
behind one result)."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from holon import memory
from holon.errors import HolonError
from holon.tools.base import RenderPolicy, Tool, ToolArgs, ToolContext, ToolFailure, ToolOutput

GUIDANCE = """\
MemorySearch recalls what has left your conversation window: earlier briefs, episodes of folded \
turns, work items and plans, your memory files, messages you received and commands you ran \
with their output. Search before redoing an investigation or when a message refers to earlier \
work you no longer see; MemoryGet expands one result by its source_ref to the exact text."""


def _failure(exc: HolonError, field: str | None = None) -> ToolFailure:
    from holon.memory import index

    if isinstance(exc, index.SourceNotFound):
        return ToolFailure(exc.kind, exc.message, recovery_hint=exc.hint)
    if isinstance(exc, index.IndexUnavailable):
        return ToolFailure(exc.kind, exc.message, recovery_hint=exc.hint, retryable=True)
    return ToolFailure(
        "invalid_tool_input",
        exc.message,
        details={"field": field} if field else None,
        recovery_hint=exc.hint,
    )


def _when(iso: str | None) -> str:
    return (iso or "")[:16].replace("T", " ")


class MemorySearch(Tool):
    name = "MemorySearch"
    family = "memory"
    description = (
        "Search your long-term memory: briefs, episodes, work items, memory files, received "
        "messages and past commands with their output. Words must all match (OR offers "
        'alternatives, "quotes" keep a phrase, word* matches a prefix); Chinese, Japanese and '
        "Korean text is matched by any two adjacent characters. Returns ranked results with a "
        "snippet and a source_ref for MemoryGet."
    )
    guidance: ClassVar[str] = GUIDANCE

    class Args(ToolArgs):
        query: str = Field(
            min_length=1,
            max_length=1000,
            description="Distinctive words, names, commands or error text to find.",
        )
        limit: int | None = Field(
            None, ge=1, le=memory.MAX_LIMIT, description="Most results to return (default 10)."
        )
        include_all_workspaces: bool = Field(
            False,
            description="Also search records of other workspaces (default: the active one and "
            "agent-wide memory).",
        )

    def run(self, ctx: ToolContext, args: Args) -> ToolOutput:
        from holon.memory import index  # sqlite3 only for a turn that searches

        try:
            found = index.search(
                ctx.home,
                args.query,
                limit=args.limit or memory.DEFAULT_LIMIT,
                include_all_workspaces=args.include_all_workspaces,
                exclude_turn=ctx.turn_id or None,  # the question must not find itself
            )
        except HolonError as exc:
            raise _failure(exc, "query") from None
        n = len(found["results"])
        some = " (few records have every word; records with some are ranked too)"
        some = some if found["match"] == "any" else ""
        return ToolOutput(f"{n} memory result{'s' if n != 1 else ''}{some}", found)

    def render(self, envelope: dict[str, Any], policy: RenderPolicy) -> str:
        found = envelope.get("result") or {}
        scope = found.get("scope") or {}
        where = (
            "all workspaces"
            if scope.get("include_all_workspaces")
            else f"workspace {scope.get('workspace_id')} and agent memory"
        )
        lines = [f"{envelope.get('summary_text')} for {found.get('query')!r} in {where}"]
        if found.get("stale"):
            lines.append("(the index could not be updated; results may miss the newest records)")
        for i, r in enumerate(found.get("results") or [], start=1):
            some = " · some of the words" if r.get("matched") == "some" else ""
            lines.append(
                f"{i}. [{r['kind']}] {r['title']} · {_when(r.get('updated_at'))} · "
                f"source_ref {r['source_ref']}{some}"
            )
            lines.append(f"   {r['snippet']}")
        return "\n".join(lines)[: policy.budget_chars()]


class MemoryGet(Tool):
    name = "MemoryGet"
    family = "memory"
    description = (
        "Read the exact text of one MemorySearch result by its source_ref (copy it from the "
        "result; it is not a path). Bounded to max_chars (default 12000, at most 50000); "
        "`truncated` says when there is more."
    )

    class Args(ToolArgs):
        source_ref: str = Field(
            min_length=1, max_length=200, description="A source_ref from a MemorySearch result."
        )
        max_chars: int | None = Field(
            None,
            ge=1,
            le=memory.MAX_CHARS,
            description="Most characters of content to return (default 12000).",
        )

    def run(self, ctx: ToolContext, args: Args) -> ToolOutput:
        from holon.memory import index

        try:
            doc = index.get(
                ctx.home, args.source_ref, max_chars=args.max_chars or memory.DEFAULT_CHARS
            )
        except HolonError as exc:
            raise _failure(exc, "max_chars") from None
        shown = len(doc["content"])
        more = f", {shown} of {doc['total_chars']} characters" if doc["truncated"] else ""
        return ToolOutput(f"{doc['kind']} {doc['title']}{more}", doc)

    def render(self, envelope: dict[str, Any], policy: RenderPolicy) -> str:
        doc = envelope.get("result") or {}
        meta = doc.get("metadata") or {}
        lines = f" · lines {meta['line_start']}–{meta['line_end']}" if "line_start" in meta else ""
        head = (
            f"[{doc.get('kind')}] {doc.get('title')} · {doc.get('source_path')}{lines} · "
            f"updated {_when(doc.get('updated_at'))}"
        )
        if doc.get("truncated"):
            head += (
                f"\n(truncated: {len(doc.get('content') or '')} of {doc.get('total_chars')} "
                "characters; ask for more with max_chars)"
            )
        return head + "\n---\n" + (doc.get("content") or "")
