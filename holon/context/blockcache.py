"""The episode block kept between ticks: `.holon/indexes/episode_block.jsonl`.

The block (holon.context.earlier) changes only when a compaction moves the window start or appends
to the episode or roll-up ledger, yet every tick is a new process, and making it reads and fits
more records the older the agent is (up to a roll-up's fan-out per refinement step). So the last
block is kept with two keys:

1. Its stamp: the window start, the room, and each ledger's logical end, inode and mtime
   (append-only ledgers: a ledger that changed in any way has another stamp). A tick that finds
   the same stamp reads nothing else.
2. Its cover: the room and the ids of the records that cover the folded turns (the frontier and
   the episodes after it, holon.context.earlier.cover). Records are immutable, and refining and
   fitting them is deterministic, so a compaction that folds turns into the open episode (most
   do) and leaves the cover as it was leaves the block as it was: only the stamp is renewed.

The file is derived: written without fsync, its first line (JSON) carries both keys and a digest
of the second, the parts (JSON); one that is missing, torn, edited or of another format is made
again from the ledgers. An agent with no folded turn has none.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from holon.home.layout import Home
from holon.store import jsonl
from holon.store.atomic import write_bytes

FORMAT = 1  # raise when the block's layout (holon.context.earlier) changes
MAX_BYTES = 4 << 20

Parts = list[tuple[list[str], str]]


def key(home: Home, start: int, room: int) -> list[Any]:
    """The stamp of the block for window start `start` and `room` tokens."""
    ledgers = (home.context_rollups, home.context_episodes, home.context_summaries)
    return [FORMAT, start, room, *(_stamp(p) for p in ledgers)]


def _stamp(path: os.PathLike) -> list[int]:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return [jsonl.end_offset(path), 0, 0]  # rotated away: its segments still count
    return [jsonl.end_offset(path), st.st_ino, st.st_mtime_ns]


def load(home: Home) -> tuple[dict[str, Any], Parts] | None:
    """The header (`key`, `cover`) and parts of the kept block, or None when there is no file or
    it fails its check."""
    try:
        with open(home.episode_block, "rb") as fh:
            head, _, body = fh.read(MAX_BYTES).partition(b"\n")
        header = json.loads(head)
        if not isinstance(header, dict) or header.get("digest") != _digest(body):
            return None
        parts = json.loads(body)
    except (OSError, ValueError):
        return None
    if not isinstance(parts, list) or not all(_part(p) for p in parts):
        return None
    return header, [(list(ids), text) for ids, text in parts]


def cover_key(home: Home, room: int, ids: list[str]) -> list[Any]:
    """What the block made from the cover records `ids` within `room` tokens depends on: them,
    and the model-written summaries recorded so far (one may replace any record's summary)."""
    return [FORMAT, room, ids, jsonl.end_offset(home.context_summaries)]


def _digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def _part(value: Any) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 2
        and isinstance(value[0], list)
        and all(isinstance(i, str) for i in value[0])
        and isinstance(value[1], str)
    )


def save(home: Home, key_: list[Any], cover: list[Any], parts: Parts) -> None:
    """Keep `parts` as the block for stamp `key_` and cover key `cover`; a file that cannot be
    written is only a lost cache."""
    body = json.dumps([[list(ids), text] for ids, text in parts], ensure_ascii=False).encode()
    head = json.dumps({"key": key_, "cover": cover, "digest": _digest(body)}).encode()
    try:
        home.indexes.mkdir(parents=True, exist_ok=True)
        write_bytes(home.episode_block, head + b"\n" + body, durable=False)
    except OSError:
        pass
