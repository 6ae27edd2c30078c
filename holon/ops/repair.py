"""`holon doctor --repair`: set aside what holon can rebuild, and rebuild it.

What is derived is repaired; what an operator chose is not (a corrupt settings.json, agent.json
or budget.json is reported with the file to restore):

- `registry.json` that cannot be read: kept as `registry.json.corrupt-<time>`, and a new one is
  written from every home found (under $HOLON_HOME/agents, named in the old file's text, in the
  due index, or a private child of these; holon.home.regsalvage);
- a run state (`state.json`) that is not valid: set aside and rebuilt from the ledgers;
- a wake hint that cannot be read: set aside (the agent is still woken by the next tick);
- ledgers a git merge broke: lines that are not records move to `<ledger>.rejects`, merged
  events are renumbered (holon.agent.ledgermerge);
- a HOLON_HOME without its top-level `.gitignore` gets the one `holon init` writes (an
  operator's own is never replaced).

Each action is {"file", "action", "detail"}; a home that cannot be opened is {"file", "action":
"failed", "detail": "<kind>: <message>", "hint"}.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from holon.agent import ledgermerge, wakehints
from holon.agent.handle import Agent
from holon.errors import HolonError
from holon.home import registry, runstate
from holon.home.init import ignore_secrets
from holon.home.layout import Home
from holon.paths import holon_home
from holon.store import jsonl


def repair(agents: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Repair the registry and every home (or the AGENTs named); what was done, in order."""
    actions: list[dict[str, Any]] = []
    root = holon_home()
    if root.is_dir() and ignore_secrets(root):
        actions.append(_action(root / ".gitignore", "written", "keys, logs, locks stay out of git"))
    _, error = registry.load_or_none()
    if error is not None:
        done = registry.rebuild()
        actions.append(
            _action(
                registry.registry_path(),
                "rebuilt",
                _rebuilt(done),
            )
        )
    homes = [registry.resolve(a) for a in agents] if agents else registry.scan()[0]
    for home in homes:
        actions += repair_home(home)
    return actions


def _rebuilt(done: dict[str, Any]) -> str:
    said = f"{done['agents']} agent(s) found"
    if done["outside"]:
        said += f" (kept from outside the agents directory: {', '.join(done['outside'])})"
    if done["dropped"]:
        said += f"; dropped, their homes are gone: {', '.join(done['dropped'])}"
    return f"{said}; the old file is {done['set_aside']}"


def repair_home(home: Home) -> list[dict[str, Any]]:
    actions = []
    try:
        runstate.read(home)
        state_ok = True
    except runstate.Unreadable as exc:
        state_ok, problem = False, str(exc)
    try:
        agent = Agent(home)  # sets an unreadable run state aside and rebuilds it
        agent.state()
        if not state_ok:
            actions.append(_action(home.state_json, "rebuilt", f"it {problem}; set aside"))
        for path in (home.wake_hint, home.wake_hint_converting):
            if os.path.lexists(path) and wakehints.read(agent, path) is None:
                actions.append(_action(path, "set_aside", "it could not be read as a wake hint"))
        actions += _settle_ledgers(agent)
    except HolonError as exc:
        failed = _action(home.agent_json, "failed", f"{exc.kind}: {exc.message}")
        actions.append({**failed, "hint": exc.hint})
    return actions


def _settle_ledgers(agent: Agent) -> list[dict[str, Any]]:
    """Lines of a ledger that are not records (merge conflict markers) move to
    `<ledger>.rejects`; merged events are renumbered (holon.agent.ledgermerge); no record lost."""
    found = ledgermerge.problems(agent.home, full=True)
    actions = []
    with agent.state_lock():
        for name, p in sorted(found.items()):
            path = agent.home.ledger / name
            if p["bad"]:
                moved = jsonl.repair(path)
                actions.append(
                    _action(path, "repaired", f"{moved} line(s) moved to {path}.rejects")
                )
        if found:
            n = ledgermerge.renumber(agent.home.events)
            agent.events_rewritten()
            if n:
                actions.append(_action(agent.home.events, "renumbered", f"{n} merged event(s)"))
    if found:
        ledgermerge.record_clean(agent.home)
    return actions


def _action(path: os.PathLike, action: str, detail: str) -> dict[str, Any]:
    return {"file": os.fspath(path), "action": action, "detail": detail}
