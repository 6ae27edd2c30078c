"""Bounded text for people and models: head-and-tail previews, and JSON output shown as JSON."""

from __future__ import annotations

import json


def head_tail(text: str, budget_chars: int) -> tuple[str, bool]:
    """A preview of `text` within `budget_chars`: first and last lines with an explicit cut
    marker."""
    if len(text) <= budget_chars:
        return text, False
    lines = text.splitlines(keepends=True)
    half = max(1, budget_chars // 2)
    head: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) > half:
            break
        head.append(line)
        used += len(line)
    tail: list[str] = []
    used = 0
    for line in reversed(lines[len(head) :]):
        if used + len(line) > half:
            break
        tail.append(line)
        used += len(line)
    tail.reverse()
    if not head and not tail:  # one enormous line: cut by characters
        head_text, tail_text = text[:half], text[-half:]
        marker = (
            f"\n...\n[output truncated: showing first {half} and last {half} characters]\n...\n"
        )
        return head_text + marker + tail_text, True
    body_head = "".join(head)
    if body_head and not body_head.endswith("\n"):
        body_head += "\n"
    marker = f"...\n[output truncated: showing first {len(head)} and last {len(tail)} lines]\n...\n"
    return body_head + marker + "".join(tail), True


def pretty_if_json(text: str) -> str:
    """Command output that is JSON is shown as readable JSON, never as an escaped string."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return text
    try:
        value = json.loads(stripped)
    except ValueError:
        return text
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def shorten(text: str, limit: int) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis when longer."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(1, limit - 1)].rstrip() + "…"


def encodes_utf8(text: str) -> bool:
    """Whether `text` encodes as UTF-8 (an argv with undecodable bytes holds surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
