"""Work-item tools: CreateWorkItem, PickWorkItem, UpdateWorkItem, CompleteWorkItem, GetWorkItem,
ListWorkItems."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from holon.agent import timers, workitems
from holon.agent.handle import Agent
from holon.tools.base import (
    CompletionEffect,
    Tool,
    ToolArgs,
    ToolContext,
    ToolEffects,
    ToolFailure,
    ToolOutput,
)

GUIDANCE = """\
Work items track long objectives across turns: CreateWorkItem, then PickWorkItem to focus it. \
Update plan_status, todo_list (a full snapshot each time) and blocked_by as bookkeeping after \
material progress (a file change, a verification result, a blocker found); the plan body lives in \
the plan artifact file, edit it directly. When the objective is done, write the operator-facing \
report as your text in the same response that calls CompleteWorkItem; that text becomes the \
completion report."""


class Todo(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    text: str = Field(min_length=1)
    state: Literal["pending", "in_progress", "completed"] = "pending"


def _require(agent: Agent, work_item_id: str, *, open_only: bool = True) -> dict[str, Any]:
    rec = workitems.get(agent.home, work_item_id)
    if rec is None:
        known = [r["id"] for r in workitems.load_all(agent.home).values()][-10:]
        raise ToolFailure(
            "unknown_work_item",
            f"no work item {work_item_id!r}",
            details={"known": known},
            recovery_hint="call ListWorkItems to see valid ids",
        )
    if open_only and rec.get("state") != "open":
        raise ToolFailure(
            "work_item_completed",
            f"work item {work_item_id} is already completed",
            recovery_hint="create a new work item for follow-up work",
        )
    return rec


def _view(agent: Agent, rec: dict[str, Any]) -> dict[str, Any]:
    state = agent.state()
    facts = workitems.wait_facts(agent.home, state.active_task_ids)
    return workitems.view(agent.home, rec, state.current_work_item_id, facts=facts)


class CreateWorkItem(Tool):
    name = "CreateWorkItem"
    family = "work"
    mutates = True
    description = (
        "Create an open work item for a high-level objective (optional plan prose seeds its "
        "plan.md)."
    )
    guidance: ClassVar[str] = GUIDANCE

    class Args(ToolArgs):
        objective: str = Field(
            min_length=1, description="What done looks like, in one or two sentences."
        )
        plan_status: Literal["draft", "ready", "needs_input"] | None = None
        plan: str | None = Field(
            None, description="Initial plan prose, written to work-items/<id>/plan.md."
        )
        todo_list: list[Todo] | None = Field(None, description="Full checklist snapshot.")

    def run(self, ctx: ToolContext, args: Args) -> ToolOutput:
        agent = ctx.agent
        rec = workitems.new_record(
            agent.id,
            args.objective,
            plan_status=args.plan_status or "draft",
            todo_list=[t.model_dump() for t in args.todo_list or []],
        )
        if args.plan:
            workitems.write_plan(agent.home, rec["id"], args.plan)
        rec = workitems.append(agent, rec)
        agent.event("work_item_created", work_item_id=rec["id"], objective=rec["objective"])
        return ToolOutput(
            f"created work item {rec['id']} (not current; PickWorkItem to focus it)",
            {"work_item": _view(agent, rec)},
        )


class PickWorkItem(Tool):
    name = "PickWorkItem"
    family = "work"
    mutates = True
    description = "Make an open work item the current focus of this agent."

    class Args(ToolArgs):
        work_item_id: str

    def run(self, ctx: ToolContext, args: Args) -> ToolOutput:
        agent = ctx.agent
        rec = _require(agent, args.work_item_id)
        agent.update_state(lambda s: setattr(s, "current_work_item_id", rec["id"]))
        agent.event("work_item_picked", work_item_id=rec["id"])
        return ToolOutput(f"current work item is now {rec['id']}", {"work_item": _view(agent, rec)})


class UpdateWorkItem(Tool):
    name = "UpdateWorkItem"
    family = "work"
    mutates = True
    description = (
        "Update an open work item. todo_list replaces the whole checklist. blocked_by (null "
        "clears) records what the item waits on; recheck_after (positive ms, only with "
        "blocked_by) sets when the runtime reminds you to recheck, else a default applies."
    )

    class Args(ToolArgs):
        work_item_id: str
        objective: str | None = Field(None, min_length=1)
        plan_status: Literal["draft", "ready", "needs_input"] | None = None
        todo_list: list[Todo] | None = None
        blocked_by: str | None = None
        recheck_after: int | None = Field(
            None,
            gt=0,
            le=timers.MAX_DELAY_S * 1000,
            description="Milliseconds until a recheck reminder.",
        )

    def run(self, ctx: ToolContext, args: Args) -> ToolOutput:
        agent = ctx.agent
        rec = dict(_require(agent, args.work_item_id))
        given = args.model_fields_set
        if args.recheck_after is not None and not args.blocked_by:
            raise ToolFailure(
                "invalid_tool_input",
                "recheck_after applies only when setting a non-empty blocked_by",
                recovery_hint="pass blocked_by together with recheck_after, or drop recheck_after",
            )
        for key in ("objective", "plan_status"):
            if getattr(args, key) is not None:
                rec[key] = getattr(args, key)
        if args.todo_list is not None:
            rec["todo_list"] = [t.model_dump() for t in args.todo_list]
        if "blocked_by" in given:
            workitems.set_blocker(rec, args.blocked_by or None, args.recheck_after)
        rec = workitems.append(agent, rec)
        agent.event(
            "work_item_updated", work_item_id=rec["id"], fields=sorted(given - {"work_item_id"})
        )
        return ToolOutput(f"updated work item {rec['id']}", {"work_item": _view(agent, rec)})


class CompleteWorkItem(Tool):
    name = "CompleteWorkItem"
    family = "work"
    mutates = True
    description = (
        "Mark a work item completed. Write the operator-facing completion report as your text in "
        "the same response as this call; it becomes the item's report and the result brief."
    )

    class Args(ToolArgs):
        work_item_id: str

    def run(self, ctx: ToolContext, args: Args) -> ToolOutput:
        agent = ctx.agent
        rec = dict(_require(agent, args.work_item_id))
        report = ctx.round_text.strip()
        rec.update(
            state="completed",
            blocked_by=None,
            recheck_at=None,
            recheck_consumed_at=None,
            result_summary=report or None,
        )
        rec = workitems.append(agent, rec)
        agent.update_state(
            lambda s: (
                setattr(s, "current_work_item_id", None)
                if s.current_work_item_id == rec["id"]
                else None
            )
        )
        agent.event("work_item_completed", work_item_id=rec["id"], report=bool(report))
        result: dict[str, Any] = {"work_item": _view(agent, rec)}
        if not report:
            result["warning"] = {
                "kind": "missing_completion_report",
                "message": "no assistant text in the round that completed the item, so no "
                "completion report was recorded",
                "recovery_hint": "next time write the report as text in the same response",
            }
            return ToolOutput(f"completed work item {rec['id']} without a report", result)
        summary = workitems.record_delivery_summary(
            agent, rec["id"], report, turn_id=ctx.turn_id, message_id=ctx.message_id
        )
        result["delivery_summary_id"] = summary["id"]
        return ToolOutput(
            f"completed work item {rec['id']}; your text is its report",
            result,
            ToolEffects(completion=CompletionEffect(work_item_id=rec["id"], report=report)),
        )


class GetWorkItem(Tool):
    name = "GetWorkItem"
    family = "work"
    description = (
        "Read one work item: fields, readiness, plan_artifact (path, preview) and completion "
        "report."
    )

    class Args(ToolArgs):
        work_item_id: str

    def run(self, ctx: ToolContext, args: Args) -> ToolOutput:
        agent = ctx.agent
        rec = _require(agent, args.work_item_id, open_only=False)
        return ToolOutput(f"work item {rec['id']}", {"work_item": _view(agent, rec)})


class ListWorkItems(Tool):
    name = "ListWorkItems"
    family = "work"
    description = (
        "List work items with their readiness (current, queued_runnable, blocked, completed ...)."
    )

    class Args(ToolArgs):
        include_completed: bool = False

    def run(self, ctx: ToolContext, args: Args) -> ToolOutput:
        agent = ctx.agent
        state = agent.state()
        current = state.current_work_item_id
        facts = workitems.wait_facts(agent.home, state.active_task_ids)
        rows = [
            {
                "id": r["id"],
                "objective": r["objective"],
                "readiness": workitems.readiness(r, current, facts),
                "scheduling_state": workitems.scheduling_state(r, facts),
                "plan_status": r.get("plan_status"),
                "blocked_by": r.get("blocked_by"),
            }
            for r in workitems.load_all(agent.home).values()
            if args.include_completed or r.get("state") != "completed"
        ]
        return ToolOutput(
            f"{len(rows)} work item(s)", {"current_work_item_id": current, "work_items": rows}
        )
