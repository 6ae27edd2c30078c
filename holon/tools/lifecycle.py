"""Lifecycle tools: Sleep, Enqueue (own follow-up message) and NotifyOperator."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from holon import clock
from holon.agent import admission, budget, timers
from holon.tasks.child import childnotify
from holon.tools.base import SleepEffect, Tool, ToolArgs, ToolContext, ToolEffects, ToolOutput
from holon.vocab import DEFAULT_PRIORITY, FOLLOWUP_PRIORITIES


class Sleep(Tool):
    name = "Sleep"
    family = "lifecycle"
    description = (
        "End your turn and rest until something wakes you: an operator prompt, a message, a timer "
        "or a task_result. After starting a long task, end the turn with Sleep and let the "
        "task_result wake you instead of polling. Omit duration_ms to rest until woken; a "
        "positive duration_ms also wakes you with a timer after that many milliseconds."
    )
    guidance: ClassVar[str] = (
        "Sleep: after starting a long task, end the turn (call Sleep) and let the "
        "task_result wake you; do not poll. Omit duration_ms unless you need a timed "
        "wake-up."
    )

    class Args(ToolArgs):
        duration_ms: int | None = Field(
            None,
            ge=0,
            le=timers.MAX_DELAY_S * 1000,
            description="Optional timed wake-up in ms; omit to rest until another wake signal.",
        )
        reason: str | None = Field(None, description="Why you sleep and what should wake you.")

    def run(self, ctx: ToolContext, args: Args) -> ToolOutput:
        until = clock.iso(clock.now_ts() + args.duration_ms / 1000) if args.duration_ms else None
        ctx.agent.event(
            "sleep_requested", until=until, reason=args.reason, slept_at=clock.now_iso()
        )
        effect = SleepEffect(until=until, reason=args.reason, duration_ms=args.duration_ms or None)
        text = (
            f"sleeping until {until} (or an earlier wake signal)"
            if until
            else "sleeping until woken"
        )
        return ToolOutput(
            text + "; end your turn now", {"sleeping_until": until}, ToolEffects(sleep=effect)
        )


class Enqueue(Tool):
    name = "Enqueue"
    family = "lifecycle"
    description = (
        "Queue a follow-up message to yourself (kind internal_followup, runtime authority, never "
        "operator authority). It runs as a later turn, ordered by priority."
    )

    class Args(ToolArgs):
        text: str = Field(min_length=1)
        priority: Literal[FOLLOWUP_PRIORITIES] = DEFAULT_PRIORITY  # type: ignore[valid-type]

    def run(self, ctx: ToolContext, args: Args) -> ToolOutput:
        env = admission.admit(
            ctx.home,
            "followup",
            "internal_followup",
            admission.text_body(args.text),
            priority=args.priority,
            causation_id=ctx.message_id,
            model_ref=budget.turn_model(ctx.agent, ctx.message_id),
        )
        return ToolOutput(
            f"queued follow-up {env['id']} ({args.priority})",
            {"message_id": env["id"], "priority": args.priority},
        )


class NotifyOperator(Tool):
    name = "NotifyOperator"
    family = "lifecycle"
    description = (
        "Send your operator a brief now, without ending the turn. visibility: action_required (you "
        "need their input), work_done (a deliverable is finished) or turn_result (an update). "
        "A private child's notification goes to its supervising parent."
    )

    class Args(ToolArgs):
        text: str = Field(min_length=1)
        visibility: Literal["action_required", "work_done", "turn_result"] = "turn_result"

    def run(self, ctx: ToolContext, args: Args) -> ToolOutput:
        agent = ctx.agent
        if childnotify.supervised(agent):
            return _to_parent(ctx, args.text, args.visibility)
        brief = agent.brief(
            "ack",
            args.text,
            related_message_id=ctx.message_id,
            visibility=args.visibility,
            work_item_id=agent.state().current_work_item_id,
            turn_id=ctx.turn_id,
        )
        return ToolOutput(f"operator notified ({args.visibility})", {"brief_id": brief["id"]})


def _to_parent(ctx: ToolContext, text: str, visibility: str) -> ToolOutput:
    """A private child's notification: queued for its supervising parent
    (holon.tasks.child.childnotify), and kept in the child's own briefs."""
    routed = childnotify.notify_parent(ctx.agent, text, visibility)
    if routed is None:
        return ToolOutput(
            "your supervising parent's task has ended: nobody to notify; end the turn with your "
            "result",
            {"routed_to": None},
        )
    brief = ctx.agent.brief(
        "ack",
        text,
        related_message_id=ctx.message_id,
        visibility=visibility,
        work_item_id=ctx.agent.state().current_work_item_id,
        turn_id=ctx.turn_id,
    )
    parent = routed["parent_agent_id"]
    return ToolOutput(
        f"notification sent to your supervising parent {parent} ({visibility})",
        {"brief_id": brief["id"], "routed_to": "parent_supervisor", **routed},
    )
