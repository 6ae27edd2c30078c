"""Skill activation (runtime spec, Skill Discovery And Activation Contract).

holon has no file-read tool, so reading a skill is running a command: a successful ExecCommand (or
a successful item of an ExecCommandBatch) whose command line names a discovered skill's SKILL.md
(absolute, or relative to the command's workdir, the execution root or the agent home) activates
that skill with load_reason `read_skill_md`; one that names a file under the skill's `scripts/`
activates it with `run_skill_script` (path: that script). Activation appends `skill_activated`,
then marks the skill `turn_active` in the run state; a skill already active (turn or session) at the
same path is left alone. A completed turn's settle promotes `turn_active` to `session_active` in
its one state write (`settle_active`); a failed turn drops what it activated. At most MAX_ACTIVE
skills are active: the oldest activation goes first.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from holon import clock
from holon.agent import workspaces
from holon.agent.handle import Agent
from holon.home import skills
from holon.model.records import AgentState
from holon.runtime.turn.context import execution_root
from holon.runtime.turn.state import TurnState
from holon.tools.base import CallOutcome

MAX_ACTIVE = 32
MAX_SCANNED_CHARS = 16_000  # of one command line
MAX_TOKENS = 256
COMMAND_TOOLS = ("ExecCommand", "ExecCommandBatch")
# a path-like word of a shell command line: quotes, operators and `=` separate words
_WORD = re.compile(r"[^\s'\"|;&<>()=`]+")


def note_call(agent: Agent, ts: TurnState, call: dict[str, Any], outcome: CallOutcome) -> None:
    """Activate the skills a finished tool call read or ran (see the module docstring)."""
    env = outcome.envelope
    if call.get("name") not in COMMAND_TOOLS or env.get("status") != "success":
        return
    root, cwd = execution_root(agent)
    commands = succeeded(call, env.get("result") or {}, cwd)
    if not any("SKILL.md" in c or "scripts/" in c for c, _ in commands):
        return
    catalog = skills.discover(agent.home, anchor(agent))
    active = agent.state().active_skills
    found: dict[str, tuple[skills.Skill, str, str]] = {}
    for cmd, workdir in commands:
        for skill, reason, path in matches(catalog, cmd, [workdir, root, agent.home.root]):
            held = active.get(skill.name) or {}
            if skill.name not in found and held.get("path") != skill.path:
                found[skill.name] = (skill, reason, path)
    if not found:
        return
    now = clock.now_iso()
    for skill, reason, path in found.values():
        agent.event(
            "skill_activated",
            turn_id=ts.turn_id,
            skill=skill.name,
            scope=skill.scope,
            path=path,
            entrypoint_path=skill.path,
            load_reason=reason,
        )

    def apply(s: AgentState) -> None:
        for skill, _, _ in found.values():
            s.active_skills[skill.name] = {
                "state": "turn_active",
                "scope": skill.scope,
                "path": skill.path,
                "activated_at": now,
                "turn_id": ts.turn_id,
            }
        bound(s.active_skills)

    agent.update_state(apply)


def anchor(agent: Agent) -> Path:
    """The workspace anchor skills are found under: a worktree the agent works in is a projection
    of its workspace, not another workspace (runtime spec, Execution Binding)."""
    return Path(workspaces.binding(agent)["workspace_anchor"])


def succeeded(call: dict[str, Any], result: dict[str, Any], cwd: Path) -> list[tuple[str, Path]]:
    """(command line, workdir) of each command of the call that completed with exit status 0."""
    if call.get("name") == "ExecCommand":
        args = call.get("arguments") or {}
        if result.get("disposition") != "completed" or result.get("exit_status") != 0:
            return []
        workdir = args.get("workdir") if isinstance(args.get("workdir"), str) else None
        cmd = args.get("cmd")
        return [(cmd, Path(os.path.normpath(cwd / workdir)) if workdir else cwd)] if cmd else []
    return [
        (it["cmd"], Path(it["workdir"]))
        for it in result.get("items") or []
        if it.get("status") == "completed" and it.get("exit_status") == 0
    ]


def matches(
    catalog: list[skills.Skill], cmd: str, bases: list[Path]
) -> list[tuple[skills.Skill, str, str]]:
    """(skill, load_reason, path) for each word of `cmd` naming a skill's SKILL.md or one of its
    scripts, in the order of the words."""
    entry: dict[str, skills.Skill] = {}
    script_dirs: dict[str, skills.Skill] = {}
    for s in catalog:
        for form in {os.path.normpath(s.path), os.path.realpath(s.path)}:
            entry[form] = s
        for form in {os.path.normpath(s.dir), os.path.realpath(s.dir)}:
            script_dirs[os.path.join(form, "scripts") + os.sep] = s
    out = []
    for word in _WORD.findall(cmd[:MAX_SCANNED_CHARS])[:MAX_TOKENS]:
        if "SKILL.md" not in word and "scripts/" not in word:
            continue
        hit = _match(word, bases, entry, script_dirs)
        if hit is not None:
            out.append(hit)
    return out


def _match(
    word: str, bases: list[Path], entry: dict, script_dirs: dict
) -> tuple[skills.Skill, str, str] | None:
    candidates = [word] if os.path.isabs(word) else [os.path.join(b, word) for b in bases]
    for c in candidates:
        path = os.path.normpath(c)
        for form in (path, os.path.realpath(path)):
            if form in entry:
                return entry[form], "read_skill_md", entry[form].path
            for prefix, skill in script_dirs.items():
                if form.startswith(prefix) and len(form) > len(prefix):
                    return skill, "run_skill_script", path
    return None


def bound(active: dict[str, dict[str, Any]]) -> None:
    """Keep at most MAX_ACTIVE active skills: the oldest activations go first."""
    while len(active) > MAX_ACTIVE:
        oldest = min(active, key=lambda n: str(active[n].get("activated_at") or ""))
        del active[oldest]


def settle_active(s: AgentState, completed: bool) -> None:
    """In the settle's state write: a completed turn promotes its turn_active skills to
    session_active (no event); a failed turn drops them."""
    for name, rec in list(s.active_skills.items()):
        if rec.get("state") == "turn_active":
            if completed:
                s.active_skills[name] = {**rec, "state": "session_active"}
            else:
                del s.active_skills[name]


def listing(agent: Agent) -> list[dict[str, Any]]:
    """The skills the agent sees now (under its workspace anchor), each with its
    active state (`turn_active`, `session_active`, or None): `holon skills list`."""
    active = agent.state().active_skills
    out = []
    for s in skills.discover(agent.home, anchor(agent)):
        held = active.get(s.name) or {}
        on = held.get("path") == s.path
        out.append(
            {
                **s.to_dict(),
                "active": held.get("state") if on else None,
                "activated_at": held.get("activated_at") if on else None,
            }
        )
    return out
