"""The skills block of the prompt: the catalog (name, scope, description, SKILL.md path; never the
bodies) and the active skills as metadata, in a stable order so the block moves only when a skill
or an activation changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from holon import confined, jsonfile, safetext
from holon.home import skills
from holon.home.layout import Home

MAX_LISTED = 64  # skills shown in the prompt (holon skills list shows them all)
MAX_STATE_BYTES = 4 << 20
STATES = ("turn_active", "session_active")
GUIDANCE = (
    "If a listed skill matches the task, open its SKILL.md first (for example `cat <path>`) and "
    "follow its workflow; the description alone is not the workflow. Files a skill names are "
    "relative to its directory."
)


def active_skills(home: Home) -> dict[str, dict[str, Any]]:
    """`active_skills` of the run state as written last (holon.runtime.turn.skills), {} when there
    is none or it cannot be read: the prompt never fails over it."""
    try:
        state = jsonfile.object_of(home.state_json, MAX_STATE_BYTES) or {}
    except (ValueError, OSError):
        return {}
    found = state.get("active_skills")
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, dict)}


def block(
    home: Home,
    workspace_anchor: Path | None = None,
    refused: list[confined.Refused] | None = None,
) -> str | None:
    """The skills block, None when the agent sees no skill; a catalog or SKILL.md that was not
    read is appended to `refused`."""
    catalog = skills.discover(home, workspace_anchor, refused=refused)
    if not catalog:
        return None
    active = active_skills(home)
    lines = ["# Skills", GUIDANCE]
    for s in catalog[:MAX_LISTED]:
        desc = s.description or "(no description)"
        lines.append(f"- {s.label} [{s.scope}]: {desc}")
        lines.append(f"  {safetext.one_line(s.path, 1000)}")
    if len(catalog) > MAX_LISTED:
        lines.append(f"[… {len(catalog) - MAX_LISTED} more skills not listed]")
    on = [
        f"{s.label} ({active[s.name].get('state')})"
        for s in catalog
        if s.name in active
        and active[s.name].get("path") == s.path
        and active[s.name].get("state") in STATES
    ]
    if on:
        lines.append("Active skills: " + ", ".join(on))
    return "\n".join(lines)
