"""The transcript as the model replays it: turns read from a byte offset, lowered to conversation
items, with token estimates.

A turn starts at its `message` entry; everything up to the next `message` belongs to it. Offsets
are byte offsets into `transcript.jsonl` at line starts, so the window can begin at any turn
without reading what came before it.
"""

from __future__ import annotations

import json
import os
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from holon.model.conversation import AssistantItem, ToolCall, ToolResultItem, UserItem
from holon.safetext import one_line
from holon.store import jsonl

ITEM_OVERHEAD = 6  # role and framing tokens per item, roughly


@dataclass
class Turn:
    offset: int  # byte offset of the turn's `message` line
    end: int  # byte offset just after the turn's last line
    turn_id: str | None
    entries: list[dict[str, Any]] = field(default_factory=list)

    @property
    def message(self) -> dict[str, Any]:
        return self.entries[0].get("data", {}) if self.entries else {}


def read_turns(path: os.PathLike, start: int, stop: int | None = None) -> list[Turn]:
    """The turns whose `message` line lies in [start, stop); lines before the first message are
    skipped (a window never starts mid-turn). A torn or garbage line is skipped. Offsets are the
    ledger's logical offsets: a window may begin in a rotated segment (holon.store.segments)."""
    turns: list[Turn] = []
    for here, line in jsonl.lines(path, start):
        pos = here + len(line)
        if stop is not None and pos > stop:
            break
        try:
            entry = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            continue
        if not isinstance(entry, dict):
            continue
        if entry.get("kind") == "message":
            turns.append(Turn(offset=here, end=pos, turn_id=entry.get("turn_id"), entries=[entry]))
        elif turns:
            turns[-1].entries.append(entry)
            turns[-1].end = pos
    return turns


def message_text(data: dict[str, Any]) -> str:
    """A message as the model sees it: a provenance line, then the body. The provenance line is
    the only line of a message that begins with an opening bracket: a body line that would begin
    with one (after blanks or invisible characters) gets a backslash in front, so content can
    never pass for the line the model is told to trust."""
    fields = ("message_kind", "origin_kind", "authority_class", "trust")
    kind, origin, authority, trust = (one_line(str(data.get(f)), 80) for f in fields)
    head = f"[{kind} · origin {origin} · {authority} · trust {trust}]"
    return f"{head}\n{quote_content(str(data.get('text', '')))}"


def quote_content(text: str) -> str:
    """`text` with a backslash before every line that would begin with a bracket, a line break
    being anything a model may read as one (CR, form feed, U+2028, ...)."""
    lines = text.splitlines(keepends=True)
    if not any(_looks_like_provenance(line) for line in lines):
        return text
    return "".join("\\" + line if _looks_like_provenance(line) else line for line in lines)


def _looks_like_provenance(line: str) -> bool:
    for ch in line:
        if ch.isspace() or unicodedata.category(ch) in ("Cf", "Cc"):
            continue
        return ch == "\\" or (unicodedata.category(ch) == "Ps" and ch not in "({")
    return False


def items_from(entries: list[dict[str, Any]]) -> list[Any]:
    """Transcript entries -> conversation items. Each tool call is paired with its result; a call
    left without one (a crash long ago) gets an 'interrupted' result so every API accepts it."""
    items: list[Any] = []
    open_calls: dict[str, ToolCall] = {}
    for e in entries:
        kind, data = e.get("kind"), e.get("data", {})
        if kind == "message":
            _close(items, open_calls)
            items.append(UserItem(text=message_text(data)))
        elif kind == "turn_context":
            _close(items, open_calls)
            items.append(UserItem(text=data.get("text", "")))
        elif kind == "assistant_round":
            _close(items, open_calls)
            calls = [ToolCall(**c) for c in data.get("tool_calls", [])]
            items.append(AssistantItem(text=data.get("text", ""), tool_calls=calls))
            open_calls = {c.id: c for c in calls}
        elif kind == "tool_result" and data.get("call_id") in open_calls:
            call = open_calls.pop(data["call_id"])
            items.append(
                ToolResultItem(
                    call_id=call.id,
                    tool_name=call.name,
                    content=data.get("rendered", ""),
                    is_error=data.get("status") == "error",
                    kind=call.kind,
                )
            )
    _close(items, open_calls)
    return items


def _close(items: list[Any], open_calls: dict[str, ToolCall]) -> None:
    for call in list(open_calls.values()):
        items.append(
            ToolResultItem(
                call_id=call.id,
                tool_name=call.name,
                is_error=True,
                kind=call.kind,
                content="tool call was interrupted; its outcome is unknown",
            )
        )
    open_calls.clear()


def item_chars(item: Any) -> int:
    """The UTF-8 size of what an item puts on the wire, for estimates."""
    if isinstance(item, UserItem):
        return len(item.text.encode("utf-8"))
    if isinstance(item, ToolResultItem):
        return len(item.content.encode("utf-8")) + len(item.call_id)
    total = len(item.text.encode("utf-8"))
    for call in item.tool_calls:
        args = call.raw_arguments
        if args is None:
            args = json.dumps(call.arguments or {}, ensure_ascii=False)
        total += len(args.encode("utf-8")) + len(call.name) + len(call.id)
    return total


def item_tokens(item: Any) -> int:
    """Uncalibrated token estimate of one item (see holon.context.window.estimate)."""
    return (item_chars(item) + 3) // 4 + ITEM_OVERHEAD
