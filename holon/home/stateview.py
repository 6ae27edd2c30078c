"""The run state as stored, for readers that must stay light (`holon status`): state.json as a
plain dict when it is current, without pydantic (whose import is most of such a command).

`current` answers only when the full read (`Agent.state()`, holon.home.runstate) would take the
file as it is: an object of this schema version, a known status, the settings it was merged with
equal to settings.json, no offset past the end of the transcript, and every part a reader uses
present with the type it has when holon writes it. Otherwise it answers None, and the reader
goes the full way, which validates, repairs and rebuilds. Stdlib only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from holon import jsonfile, vocab
from holon.home import settings
from holon.home.layout import Home
from holon.store import jsonl

if TYPE_CHECKING:  # the record's keys, typed (stdlib, but kept off the light path)
    from holon.model.dicts import StateView

SCHEMA_VERSION = vocab.SCHEMA_VERSION
STATUSES = frozenset(vocab.AGENT_STATUSES)
_OPTIONAL_STR = (str, type(None))
_OPTIONAL_DICT = (dict, type(None))
# the parts a light reader uses, with the types holon writes them as
SHAPE: dict[str, tuple[type, ...]] = {
    "id": (str,),
    "status": (str,),
    "sleeping_until": _OPTIONAL_STR,
    "last_brief_at": _OPTIONAL_STR,
    "last_tick_at": _OPTIONAL_STR,
    "token_usage": (dict,),
    "model_override": _OPTIONAL_STR,
    "last_turn": _OPTIONAL_DICT,
    "closure": _OPTIONAL_DICT,
    "last_continuation": _OPTIONAL_DICT,
    "current_work_item_id": _OPTIONAL_STR,
    "active_workspace_id": (str,),
    "cwd": _OPTIONAL_STR,
    "pending_wake_hint": _OPTIONAL_DICT,
    "inflight": (dict,),
    "active_task_ids": (list,),
    "turn_index": (int,),
    "total_input_tokens": (int,),
    "total_output_tokens": (int,),
    "working_memory": (dict,),
    "context": (dict,),
}
_CONTEXT = {
    "window_start": int,
    "episodes_through": int,
    "compression_epoch": int,
    "compacted_turns": int,
    "calibration": dict,
    "learned_window": dict,
}
_MEMORY = ("archived_episode_count", "revision")
_CTX = tuple(_CONTEXT.items())
_COUNTS = ("turn_index", "total_input_tokens", "total_output_tokens")
_TOKENS = ("input_tokens", "output_tokens")


def current(home: Home) -> StateView | None:
    """state.json as stored when the full read would take it unchanged; else None."""
    try:
        data = jsonfile.object_of(home.state_json)
    except jsonfile.Unreadable:
        return None
    if data is None or not _shaped(data):
        return None
    found = settings.read(home)
    if found is not None and data.get("settings_basis") != found:
        return None  # settings.json changed outside holon: the full read merges it
    if _furthest_offset(data) > jsonl.end_offset(home.transcript):
        return None  # the ledgers were rewound under it: the full read rebuilds it
    return cast("StateView", data)


def _shaped(data: dict[str, Any]) -> bool:
    if data.get("schema_version", SCHEMA_VERSION) != SCHEMA_VERSION:
        return False
    if any(not isinstance(data.get(k, ...), types) for k, types in SHAPE.items()):
        return False
    usage = data["token_usage"]
    total = usage.get("total")
    if data["status"] not in STATUSES or not isinstance(total, dict):
        return False
    if not all(_count(v) for v in (usage.get("total_model_rounds"), *map(total.get, _TOKENS))):
        return False
    if not all(_count(data[k]) for k in _COUNTS) or not all(
        isinstance(t, str) for t in data["active_task_ids"]
    ):
        return False
    ctx, memory = data["context"], data["working_memory"]
    return (
        all(_count(ctx.get(k)) if t is int else isinstance(ctx.get(k), t) for k, t in _CTX)
        and all(_count(memory.get(k)) for k in _MEMORY)
        and isinstance(memory.get("active_episode_builder"), _OPTIONAL_DICT)
        and isinstance(ctx.get("last_request"), _OPTIONAL_DICT)
        and isinstance(ctx.get("last_compaction"), _OPTIONAL_DICT)
        and all(isinstance(v, dict) for v in data["inflight"].values())
    )


def _count(value: Any) -> bool:
    return type(value) is int and 0 <= value <= 2**53


def _furthest_offset(data: dict[str, Any]) -> int:
    """The largest transcript offset the state points at (holon.home.runstate.rewound)."""
    ctx = data["context"]
    builder = data["working_memory"].get("active_episode_builder") or {}
    offsets = [ctx["window_start"], ctx["episodes_through"]]
    offsets += [_int(v.get("transcript_offset")) for v in data["inflight"].values()]
    offsets += [_int(builder.get("start_offset")), _int(builder.get("end_offset"))]
    return max(offsets)


def _int(value: Any) -> int:
    return value if type(value) is int else 0
