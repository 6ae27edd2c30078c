"""`holon tick`: lock, recover, fire due work, dequeue, run one turn, settle, persist.

1. take turn.lock without blocking (held: another tick is running; report busy)
2. recover: repair a stale awake_running marker, return messages left in
   queue/cur/ to new/ with delivery_attempts + 1 (dead-letter past the limit),
   recover tasks whose supervisor died
3. fire due timers, recheck reminders and pending wake hints into the queue
4. dequeue by priority band then admission order (a deferred message waits for
   its not-before time); run the turn; settle
5. with until_idle, repeat from 3

A turn whose provider is unavailable puts its message back with a not-before
time (exponential backoff) and resumes later; a permanent provider failure, or
the retry limit, dead-letters it. What becomes of a claimed message is
holon.runtime.turn.fate.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from holon import clock
from holon.agent import autonomy, budget, ledgermerge, nextdue, preflight
from holon.agent.handle import Agent
from holon.feed import notify
from holon.home.layout import Home
from holon.ids import is_id
from holon.mcp import pool
from holon.model.messages import MessageEnvelope
from holon.model.records import AgentState, AgentStatus
from holon.patch import journal
from holon.runtime import scheduler
from holon.runtime.turn import closure, fate, loop
from holon.runtime.turn.state import Running, TurnResult, idle
from holon.store import atomic
from holon.store.locks import FileLock, LockBusy
from holon.tasks import recovery
from holon.tasks.child import childend


@dataclass
class TickReport:
    agent_id: str
    outcome: str = "idle"  # idle | ran | woke | busy | paused | stopped | held | capped | error
    turns: list[dict[str, Any]] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)
    dead_lettered: list[str] = field(default_factory=list)
    deferred: list[dict[str, Any]] = field(default_factory=list)
    held: dict[str, Any] | None = None  # a spent daily budget holds the queue (budget.daily_hold)
    capped: dict[str, Any] | None = None  # the cap of self-driven turns stopped the agent
    fired: list[str] = field(default_factory=list)
    liveness: list[str] = field(default_factory=list)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in (None, [])}


def tick(
    home: Home,
    *,
    until_idle: bool = False,
    model: str | None = None,
    wait: bool = False,
    max_turns: int | None = None,
) -> TickReport:
    report = TickReport(agent_id=home.agent_id)
    home.locks.mkdir(parents=True, exist_ok=True)
    lock = FileLock(home.turn_lock)
    try:
        lock.acquire(blocking=wait)
    except LockBusy:
        report.outcome = "busy"
        return report
    try:
        fate.check_settings()
        agent = Agent(home)
        preflight.check(agent)  # a corrupt file stops the tick before any message is claimed
        ledgermerge.settle(agent)  # a git merge of the ledgers: renumbered, or ledger_conflict
        recover(agent, report)
        turns = 0
        recorded = False  # the last turn recorded last_tick_at in its own state write
        while True:
            report.fired.extend(scheduler.fire_due(agent, activate=turns == 0))
            status = agent.state().status
            if status in (AgentStatus.paused, AgentStatus.stopped):
                report.outcome = status.value if home.queue.has_pending() else report.outcome
                break
            if _held(agent, report):
                break
            claimed = fate.claim(agent, report.dead_lettered)
            if claimed is None:
                break
            if _over_cap(agent, *claimed, report):
                continue
            recorded = _run_one(agent, *claimed, model, report)
            notify.kick(home)  # the turn's records are durable: the hook runs detached
            turns += 1
            if not until_idle or (max_turns is not None and turns >= max_turns):
                break
        if not recorded:
            agent.update_state(lambda s: setattr(s, "last_tick_at", clock.now_iso()))
        nextdue.refresh(home)
    finally:
        pool.close_all()  # the MCP servers this tick started stop with it
        lock.release()
    notify.kick(home)  # records a crashed delivery left, or written outside a turn
    return report


def _held(agent: Agent, report: TickReport) -> bool:
    """True when a spent daily token budget holds the queue: no message is claimed, so none is
    consumed; each waits, visible in `holon status` and `holon doctor`, until the day rolls over
    or the budget is raised. The hold is recorded (event, brief) when it begins, and its end
    when it lifts."""
    before = agent.state().budget_hold
    ready = agent.home.queue.has_ready()
    if not ready and not before:
        return False
    hold = budget.daily_hold(agent, budget.own_usage_today(agent))
    if hold is None:
        if before:
            agent.update_state(lambda s: setattr(s, "budget_hold", None))
            agent.event("queue_released", budget=before.get("budget"), was=before)
        return False
    if not ready:
        return False
    if not before or before.get("renews_at") != hold["renews_at"]:
        agent.update_state(lambda s: setattr(s, "budget_hold", hold))
        waiting = len(agent.home.queue.pending())
        agent.event("queue_held", waiting=waiting, **hold)
        agent.brief(
            "failure",
            f"{waiting} message(s) held in the queue, none consumed: {hold['message']}",
            visibility="action_required",
        )
    report.outcome, report.held = "held", hold
    return True


def _over_cap(agent: Agent, name: str, message: MessageEnvelope, report: TickReport) -> bool:
    """A self-driven message past the cap of self-driven turns in a row (holon.agent.autonomy) is
    set aside, not run, with a brief saying how to go on. A turn already begun goes on."""
    state = agent.state()
    cap = autonomy.reached(state.self_driven_turns)
    origin = message.origin.model_dump(mode="json")
    if cap is None or message.id in state.inflight or not autonomy.is_self_driven(origin):
        return False
    reason = f"because the agent reached its cap of {cap} self-driven turns in a row"
    record = message.model_dump(mode="json")
    kept = "queue/dead/" + fate.dead_letter(
        agent, name, record, report.dead_lettered, reason=reason, brief=False
    )
    agent.event("self_driven_cap_reached", message_id=message.id, cap=cap, queue_file=kept)
    agent.brief(
        "failure",
        autonomy.stop_text(agent.id, message.id, cap, kept),
        related_message_id=message.id,
        visibility="action_required",
        work_item_id=message.work_item_id,
    )
    report.capped = {"cap": cap, "message_id": message.id}
    report.outcome = "capped" if report.outcome == "idle" else report.outcome
    return True


def _run_one(
    agent: Agent, name: str, message: MessageEnvelope, model: str | None, report: TickReport
) -> bool:
    """Run the claimed message's turn (or only wake the agent). The agent is marked running in
    the turn's first state write and idle again, with last_tick_at, in its settle's (a deferred
    turn's here). True when last_tick_at was recorded so (a turn ran)."""
    run_id = message.id
    state = agent.state()
    inflight = state.inflight.get(run_id)
    continuation = (
        state.last_continuation
        if inflight
        and state.last_continuation
        and state.last_continuation.get("message_id") == run_id
        else closure.resolve_continuation(state.closure, message)
    )
    if inflight:  # its turn began (then crashed, or was deferred): it goes on as a turn
        continuation = {**continuation, "model_visible": True}
    if not continuation["model_visible"]:
        _liveness_only(agent, name, message, continuation, report)
        return False

    self_driven = autonomy.is_self_driven(message.origin.model_dump(mode="json"))
    result = loop.run(
        agent,
        message,
        model=model,
        can_defer=fate.can_defer(message),
        queue_file=name,
        running=Running(continuation, self_driven),
    )
    if result.status == "deferred":
        _defer(agent, name, message, result, report)
    else:
        # before the message is done: a crash here redelivers it, and that tick refreshes
        nextdue.refresh(agent.home)
        childend.after_settle(agent, name)  # a private child that ended rejoins its parent
        if result.dead_letter:
            kind = (result.failure_artifact or {}).get("kind", "failure")
            fate.failed_for_good(agent, name, message, kind, report.dead_lettered)
        else:
            fate.done(agent, name)
    if agent.state().current_run_id == run_id:  # not settled (deferred): idle it here
        agent.update_state(idle)
    report.outcome = "ran"
    report.turns.append(_turn_summary(result))
    return True


def _defer(
    agent: Agent, name: str, message: MessageEnvelope, result: TurnResult, report: TickReport
) -> None:
    deferral = fate.defer(agent, name, message, result)
    report.deferred.append(deferral)
    result.extra.update(
        not_before=deferral["not_before"], provider_retries=deferral["provider_retries"]
    )


def _liveness_only(
    agent: Agent,
    name: str,
    message: MessageEnvelope,
    continuation: dict[str, Any],
    report: TickReport,
) -> None:
    """A wake without a model turn: the agent is awake again, nothing is added to the transcript."""

    def woke(s: AgentState) -> None:
        s.last_continuation = continuation
        s.last_wake_reason = message.kind.value
        if s.status == AgentStatus.asleep:
            s.status = AgentStatus.awake_idle
            s.sleeping_until = None

    agent.update_state(woke)
    fate.done(agent, name)
    agent.event(
        "liveness_wake",
        message_id=message.id,
        mode=continuation["mode"],
        prior_closure_outcome=continuation["prior_closure_outcome"],
    )
    report.outcome = "woke" if report.outcome == "idle" else report.outcome
    report.liveness.append(message.id)


def _turn_summary(result: TurnResult) -> dict[str, Any]:
    out = {
        "message_id": result.message_id,
        "turn_id": result.turn_id,
        "status": result.status,
        "final_text": result.final_text,
        "token_usage": result.token_usage,
        "provider_attempt_timeline": result.provider_attempt_timeline,
    }
    if result.failure_artifact:
        out["failure_artifact"] = result.failure_artifact
    out.update(result.extra)
    return out


def recover(agent: Agent, report: TickReport) -> None:
    """Undo what a crashed tick left behind. Runs under the turn lock."""
    state = agent.state()
    if state.status == AgentStatus.awake_running:
        stale_pid = state.run_owner_pid

        def repair(s: AgentState) -> None:
            s.status = AgentStatus.awake_idle
            s.current_run_id = None
            s.run_owner_pid = None

        agent.update_state(repair)
        agent.event("stale_run_repaired", run_id=state.current_run_id, owner_pid=stale_pid)
    queue = agent.home.queue
    for name in queue.in_progress():
        record = queue.read_cur(name)
        if record is None:  # not JSON: kept aside as queue/dead/<name>.unreadable
            queue.quarantine(queue.cur / name)
            continue
        try:
            MessageEnvelope.model_validate(record)
        except ValidationError as exc:  # it would fail every later tick at its claim
            reason = fate.not_an_envelope(exc)
            fate.dead_letter(agent, name, record, report.dead_lettered, reason=reason)
            continue
        if record.get("id") == state.last_settled_message_id and record["id"] not in state.inflight:
            _finish_settled(agent, name, record, state.last_settled_dead_letter, report)
            continue
        not_before = fate.deferral_in_progress(record)
        if not_before is not None:
            fate.finish_deferral(agent, name, record, not_before)
            continue
        fate.redeliver(agent, name, record, report.recovered, report.dead_lettered)
    queue.clean_tmp()
    journal.recover(agent.home.patches)  # an ApplyPatch killed part way: all old or all new
    _remove_stale_temps(agent, state)
    recovery.recover_tasks(agent)


def _remove_stale_temps(agent: Agent, state: AgentState) -> None:
    """Temp files of atomic writes whose writer died before its rename: in the directories the
    runtime writes whole files to (not the ledgers, which are appended), and the directories of
    the tasks still running."""
    home = agent.home
    active = [home.task_dir(t) for t in state.active_task_ids if is_id(t)]
    dirs = [home.dot, home.timers, home.indexes, *active]  # indexes: ledgermerge's checked file
    if state.status == AgentStatus.awake_running:  # a turn died: maybe while starting a task
        dirs += _unrecorded_task_dirs(home)
    removed = [name for d in dirs for name in atomic.remove_stale_temps(d)]
    if removed:
        agent.event("stale_temp_files_removed", files=removed)


def _finish_settled(
    agent: Agent, name: str, record: dict[str, Any], dead: bool, report: TickReport
) -> None:
    """A message whose turn settled before the tick died: finish what the tick was doing with its
    file (done, or set aside after a permanent provider failure). Its turn is never run again."""
    agent.event("message_settle_finished", message_id=record["id"], dead_letter=dead)
    childend.after_settle(agent, name)  # what the dead tick left of a private child's end
    fate.finish_settled(agent, name, record, dead, report.dead_lettered)


def _unrecorded_task_dirs(home: Home) -> list[str]:
    """Task directories without a task record: a turn killed while it started a command (its call
    is reported interrupted). Listed only after such a crash."""
    try:
        entries = list(os.scandir(home.tasks))
    except FileNotFoundError:
        return []
    return [
        e.path
        for e in entries
        if e.is_dir() and not os.path.exists(os.path.join(e.path, "task.json"))
    ]
