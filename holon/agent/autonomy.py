"""Caps for an agent left alone: how many turns in a row it may drive itself.

A self-driven turn is one the agent caused itself: a keep-working message from its work queue
(continue_active, activate_queued) or a follow-up from its own Enqueue. Any other message that
runs a turn (operator, timer, task result, external event, a parent's delegation) resets the
count. At the cap the tick runs no such turn: it sets the message aside (queue/dead/) with an
action_required brief saying how to go on. The cap is `runtime.max_self_driven_turns`
(HOLON_MAX_SELF_DRIVEN_TURNS; 0 turns it off).
"""

from __future__ import annotations

from typing import Any

from holon import config

DEFAULT_MAX_SELF_DRIVEN_TURNS = 10
# the `subsystem` of a system origin the agent itself caused (holon.agent.admission._origin)
SELF_SUBSYSTEMS = frozenset({"work_queue", "followup"})


def max_self_driven_turns() -> int:
    """The cap in force (0: none)."""
    return max(
        0,
        config.env_int(
            "HOLON_MAX_SELF_DRIVEN_TURNS",
            "runtime.max_self_driven_turns",
            DEFAULT_MAX_SELF_DRIVEN_TURNS,
        ),
    )


def is_self_driven(origin: dict[str, Any]) -> bool:
    """Whether a message with this origin was caused by the agent itself."""
    return origin.get("kind") == "system" and origin.get("subsystem") in SELF_SUBSYSTEMS


def reached(count: int) -> int | None:
    """The cap, when `count` self-driven turns in a row have reached it; else None."""
    cap = max_self_driven_turns()
    return cap if cap and count >= cap else None


def stop_text(agent_id: str, message_id: str, cap: int, kept: str) -> str:
    """The brief of a self-driven message set aside at the cap."""
    return (
        f"stopped after {cap} self-driven turns in a row (its own keep-working messages and "
        f"Enqueue follow-ups, with no operator, timer, task or external input between them): "
        f"message {message_id} was not run and is kept in {kept}. To let it go on, prompt it "
        f"(`holon prompt {agent_id} 'continue'`), which resets the count; to change the cap, set "
        "runtime.max_self_driven_turns in config.toml (or HOLON_MAX_SELF_DRIVEN_TURNS; 0 removes "
        "it)"
    )


def status(count: int) -> dict[str, int | None]:
    """The `self_driven_turns` part of `holon status`: the count so far and the cap."""
    return {"consecutive": count, "cap": max_self_driven_turns() or None}
