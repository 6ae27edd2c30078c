"""Token budgets and the model an agent runs: checked before every provider request.

Budgets come from `.holon/budget.json` (set by `holon model budget`), else from
`budget` in agent.json. The daily budget counts UTC days.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from holon import clock, config, jsonfile
from holon.agent import lineage
from holon.agent.handle import Agent
from holon.errors import HolonError
from holon.home.layout import Home, corrupt
from holon.store import crashpoint
from holon.store.atomic import read_json, write_json

if TYPE_CHECKING:
    from holon.model.conversation import TokenUsage

BUDGET_KEYS = ("daily_tokens", "turn_tokens")
HINT = (
    "set the budgets again with `holon model budget AGENT --daily-tokens N --turn-tokens N` "
    "(0 removes a limit), which rewrites the file, or fix its JSON by hand"
)


def effective_model(agent: Agent, override: str | None = None) -> tuple[str | None, str]:
    """(model ref, source): --model, then the agent's override, then the runtime default."""
    if override:
        return override, "invocation"
    state = agent.state()
    if state.model_override:
        return state.model_override, "agent_override"
    return config.default_model(), "runtime_default"


def turn_model(agent: Agent, message_id: str | None) -> str | None:
    """The model an operator chose for the running turn of `message_id` (a tick's --model, else
    the one its message carries), or None: the messages that turn causes carry it."""
    if not message_id:
        return None
    inflight = agent.state().inflight.get(message_id) or {}
    ref = inflight.get("model_ref")
    return ref if isinstance(ref, str) and ref else None


def model_state(override: str | None) -> dict[str, object]:
    """The `model` part of the status document, for an agent whose model override (the run
    state's `model_override`) is `override`."""
    default = config.default_model()
    return {
        "source": "agent_override" if override else "runtime_default",
        "runtime_default_model": default,
        "effective_model": override or default,
        "effective_fallback_models": config.fallback_models(),
        "override_model": override,
    }


def limits(agent: Agent) -> dict[str, int]:
    """The budgets in force: budget.json's, else agent.json's `budget`; a limit that is not a
    positive whole number sets none. A budget.json that cannot be read (not JSON, not an object,
    not a file) raises `corrupt_state` naming it: holon never runs as if it were not there."""
    data = stored(agent)
    ident = agent.identity().get("budget") or {}
    out = {}
    for key in BUDGET_KEYS:
        value = data.get(key, ident.get(key))
        if type(value) is int and 0 < value <= 2**53:  # anything else sets no limit
            out[key] = value
    return out


def stored(agent: Agent) -> dict[str, object]:
    """budget.json as an object ({} when missing); `corrupt_state` when it cannot be read."""
    try:
        data = jsonfile.object_of(agent.home.budget_json, 1 << 20)
    except jsonfile.Unreadable as exc:
        raise corrupt(agent.home.budget_json, str(exc), HINT) from None
    return data or {}


def today() -> str:
    return clock.now_iso()[:10]


def family_usage_today(home: Home, own: int | None = None) -> int:
    """Tokens spent today (UTC) by the agent and every agent it created: its private children
    (archived ones too) and the public agents its turns made (holon.agent.lineage), and theirs.
    An agent's tokens count against the budget of each agent above it. `own`: the agent's own
    use today when the caller has it (its cached run state, see own_usage_today), else read
    from state.json."""
    return _family_usage(home, today(), set(), own)


def _family_usage(home: Home, day: str, seen: set[str], own: int | None = None) -> int:
    key = os.path.realpath(home.root)
    if key in seen:  # a hand-made loop of lineage is counted once
        return 0
    seen.add(key)
    if own is None:
        state = read_json(home.state_json) or {}
        by_day = state.get("token_usage_by_day") if isinstance(state, dict) else None
        own = by_day.get(day, 0) if isinstance(by_day, dict) else 0
    total = own if type(own) is int else 0
    try:
        entries = [e.path for e in os.scandir(home.children_dir) if not e.name.startswith(".")]
    except (FileNotFoundError, NotADirectoryError):
        entries = []
    below = [Home(path) for path in entries] + lineage.spawned(home)
    midnight = clock.parse_iso(day + "T00:00:00Z").timestamp()
    for other in below:
        try:  # an agent untouched since midnight spent nothing today: an old archive costs a stat
            if os.stat(other.state_json).st_mtime < midnight:
                continue
        except OSError:
            continue
        total += _family_usage(other, day, seen)
    return total


def own_usage_today(agent: Agent) -> int:
    """The agent's own tokens today, from its cached run state (no read of state.json)."""
    return agent.state().token_usage_by_day.get(today(), 0)


def check(agent: Agent, turn_usage: TokenUsage) -> None:
    """Refuse the next provider request when a token budget is spent (raises Exhausted):
    the agent's own, and the daily budget of each agent above it in its lineage."""
    _check_ancestors(agent.home, turn_usage.total_tokens)
    spend = limits(agent)
    if not spend:
        return
    turn_total = turn_usage.total_tokens
    if "turn_tokens" in spend and turn_total >= spend["turn_tokens"]:
        raise _exhausted(
            f"turn token budget spent ({turn_total} of {spend['turn_tokens']} tokens)",
            budget="turn_tokens",
        )
    if "daily_tokens" in spend:
        used = family_usage_today(agent.home, own_usage_today(agent)) + turn_total  # + children
        if used >= spend["daily_tokens"]:
            raise _exhausted(
                f"daily token budget spent ({used} of "
                f"{spend['daily_tokens']} tokens today, UTC); it renews at 00:00 UTC",
                budget="daily_tokens",
            )


class Exhausted(Exception):
    """A token budget is spent: the turn loop stops the turn (holon.runtime.turn.stops)."""

    def __init__(self, message: str, diagnostics: dict[str, str]) -> None:
        super().__init__(message)
        self.message = message
        self.diagnostics = diagnostics


def _exhausted(message: str, **diagnostics: str) -> Exhausted:
    return Exhausted(message, diagnostics)


def _check_ancestors(home: Home, turn_total: int) -> None:
    """The daily budget of each agent above `home` in its lineage: its supervising parent, or
    the agent whose turn created it as a public agent, up to the root."""
    for above_home in lineage.ancestors(home):
        above = Agent(above_home)
        cap = limits(above).get("daily_tokens")
        used = family_usage_today(above.home) + turn_total if cap else 0
        if cap and used >= cap:
            raise _exhausted(
                f"daily token budget of {above.id}, which created this agent, is spent "
                f"({used} of {cap} tokens today, UTC, with the agents it created); it renews at "
                "00:00 UTC",
                budget="daily_tokens",
                agent_id=above.id,
            )


def daily_hold(agent: Agent, own: int | None = None) -> dict[str, object] | None:
    """The spent daily budget that holds the agent's queue: its own, else that of an agent above
    it in its lineage (holon.agent.lineage); None while every one has tokens left. A held
    message stays queued (nothing is claimed) until the day rolls over or the budget is raised.
    `own`: as family_usage_today."""
    for who in [agent, *(Agent(h) for h in lineage.ancestors(agent.home))]:
        cap = limits(who).get("daily_tokens")
        used = family_usage_today(who.home, own if who is agent else None) if cap else 0
        if cap and used >= cap:
            renews = clock.iso(clock.parse_iso(today() + "T00:00:00Z").timestamp() + 86400)
            whose = "its" if who is agent else f"{who.id}'s (above it in its lineage)"
            return {
                "budget": "daily_tokens",
                "agent_id": who.id,
                "used": used,
                "limit": cap,
                "renews_at": renews,
                "message": f"{whose} daily token budget is spent ({used} of {cap} tokens today, "
                f"UTC): queued messages wait until {renews} or until "
                f"`holon model budget {who.id} --daily-tokens N` raises it",
            }
    return None


def set_override(agent: Agent, model_ref: str | None) -> None:
    """Override the agent's model for future turns (None clears it: back to the runtime default)."""
    agent.update_state(lambda s: setattr(s, "model_override", model_ref))
    if model_ref is None:
        agent.event("model_override_cleared")
    else:
        agent.event("model_override_set", model_ref=model_ref)


def set_limits(agent: Agent, **given: int | None) -> None:
    """Set the budgets named in `given`; 0 removes a limit, None leaves it as it is."""
    changed = {k: v for k, v in given.items() if k in BUDGET_KEYS and v is not None}
    if not changed:
        return
    with agent.state_lock():
        try:
            data = stored(agent)
        except HolonError:  # setting the budgets again is the repair: keep the bad file aside
            stamp = clock.now_iso().replace(":", "").replace("-", "")
            crashpoint.step("budget.set_aside")
            os.replace(agent.home.budget_json, f"{agent.home.budget_json}.corrupt-{stamp}")
            data = {}
        data.update(changed)
        # a 0 is kept: it removes the limit here and hides one that agent.json sets
        data = {k: v for k, v in data.items() if k in BUDGET_KEYS and v is not None}
        write_json(agent.home.budget_json, {"schema_version": 1, **data})
    agent.event("budget_set", **changed)
