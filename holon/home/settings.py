"""`.holon/settings.json`: what an operator chose, the part of the agent's state kept in git.

The run state (`state.json`: pids, run ids, timestamps, token counters, working memory) changes
several times a turn and is ignored by git. What survives a clone or a restored commit is
projected from it into settings.json, which is written only when that projection changes:

    lifecycle              "paused" or "stopped" (null while the agent runs)
    model_override         the model chosen with `holon model set`
    model_summaries        the model writes episode summaries (`holon model summaries`)
    current_work_item_id   the work item the agent is on
    active_workspace_id, attached_workspaces

The run state records the settings it was last merged with (`settings_basis`); a settings.json
that differs from it was changed outside holon (a checkout, a pull, an edit) and wins.
Plain dicts and the stdlib only: home migrations use it too.
"""

from __future__ import annotations

import os
from typing import Any

from holon import jsonfile
from holon.errors import HolonError
from holon.home.layout import DOT, STATE_JSON_HINT, Home, corrupt, read_record
from holon.store.atomic import write_json
from holon.vocab import SCHEMA_VERSION

LIFECYCLE = ("paused", "stopped")
HINT = (
    f"restore it from git (`git checkout -- {DOT}/settings.json`) or fix the JSON by hand; "
    "keys: lifecycle (null, paused, stopped), model_override, model_summaries (true, false), "
    "current_work_item_id, "
    "active_workspace_id, attached_workspaces"
)


def _opt_str(v: Any) -> bool:
    return v is None or isinstance(v, str)


def _str_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


# key -> (default, valid?)
FIELDS: dict[str, tuple[Any, Any]] = {
    "lifecycle": (None, lambda v: v is None or v in LIFECYCLE),
    "model_override": (None, _opt_str),
    "model_summaries": (False, lambda v: isinstance(v, bool)),
    "current_work_item_id": (None, _opt_str),
    "active_workspace_id": ("agent_home", lambda v: isinstance(v, str) and bool(v)),
    "attached_workspaces": ([], _str_list),
}


def project(state: dict[str, Any]) -> dict[str, Any]:
    """The settings part of a run state (a dumped AgentState)."""
    status = state.get("status")
    out: dict[str, Any] = {"lifecycle": status if status in LIFECYCLE else None}
    for key, (default, _) in FIELDS.items():
        if key != "lifecycle":
            value = state.get(key, default)
            out[key] = list(value) if isinstance(value, list) else value
    return out


def overlay(state: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    """`state` (a dumped AgentState) with `settings` applied; the lifecycle decides the status."""
    out = {**state, **{k: v for k, v in settings.items() if k != "lifecycle"}}
    lifecycle, status = settings.get("lifecycle"), state.get("status")
    if lifecycle in LIFECYCLE and status != lifecycle:
        out["status"] = lifecycle
        out["paused_from"] = None
    elif lifecycle is None and status in LIFECYCLE:
        out["status"] = "awake_idle"
        out["paused_from"] = None
    return out


def read(home: Home) -> dict[str, Any] | None:
    """The settings (every key, defaults filled in), or None when the file is missing. A file that
    is not JSON or holds a value of the wrong type raises `corrupt_state`: it is tracked, so the
    operator restores it; holon never discards it."""
    try:
        data = jsonfile.object_of(home.settings_json, 1 << 20)
    except jsonfile.Unreadable as exc:
        raise corrupt(home.settings_json, str(exc), HINT) from None
    if data is None:
        return None
    out = {}
    for key, (default, valid) in FIELDS.items():
        value = data.get(key, default)
        if not valid(value):
            raise corrupt(home.settings_json, f"has an invalid {key}: {value!r}", HINT)
        out[key] = value
    return out


def effective(home: Home) -> dict[str, Any]:
    """The run state as plain JSON with the settings applied as `Agent.state()` applies them: what
    a reader that avoids pydantic (the next_due index, admission's stopped check, `holon agents`)
    reads instead of state.json. A missing run state (a fresh clone) is the default one; a file
    that is not JSON raises `corrupt_state` naming it (the Agent sets a bad run state aside)."""
    state = read_record(home.state_json, STATE_JSON_HINT)
    if state is None:
        state = {"status": "awake_idle"}
    elif not isinstance(state, dict):
        raise corrupt(home.state_json, "is not a JSON object", STATE_JSON_HINT)
    elif not isinstance(state.get("status", "awake_idle"), str) or not isinstance(
        state.get("closure") or {}, dict
    ):
        raise corrupt(home.state_json, "has an invalid status or closure", STATE_JSON_HINT)
    found = read(home)
    if found is not None and state.get("settings_basis") != found:
        state = {**overlay(state, found), "settings_basis": found}
    return state


def lenient(home: Home) -> dict[str, Any]:
    """`effective`, except that an unreadable run state counts as the default one: for readers
    that must not refuse work because of it (the next Agent sets it aside and rebuilds it). A
    corrupt settings.json still raises: it holds the operator's choices."""
    try:
        return effective(home)
    except HolonError as exc:
        if exc.kind != "corrupt_state" or not home.state_json.exists():
            raise
        found = read(home)
        base: dict[str, Any] = {"status": "awake_idle"}
        return overlay(base, found) if found is not None else base


def write(home: Home, settings: dict[str, Any]) -> None:
    write_json(home.settings_json, {"schema_version": SCHEMA_VERSION, **settings})


def file_key(home: Home) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(home.settings_json)
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns
