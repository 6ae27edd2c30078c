"""The records holon keeps as plain dicts, typed: task records, work items, timers, the closure,
continuation and in-flight turns inside the run state, and the status view of it.

They stay dicts where they are read on light paths (the supervisor, the idle tick, `holon
status`) or stored beside the state model as free-form JSON; these TypedDicts say their keys
once. Standard library only, so any of those paths may import it. A key a record gains later
(a task's end, a timer's schedule) is `NotRequired`.
"""

from typing import Any, NotRequired, TypedDict


class TaskRecord(TypedDict):
    """`tasks/<task_id>/task.json`, the keys every task has (holon.tasks.store)."""

    schema_version: int
    id: str
    agent_id: str
    kind: str  # command_task | child_agent_task
    status: str  # holon.vocab.TASK_STATUSES
    summary: str
    created_at: str
    started_at: str
    updated_at: str
    finished_at: str | None
    exit_status: int | None
    signal: int | None
    failure_artifact: dict[str, Any] | None
    parent_message_id: str | None
    origin: str  # turn | operator
    result_message_id: str | None
    stop_requested: bool


class CommandTaskRecord(TaskRecord):
    """A command that outlived its yield (holon.tasks.store.new_record)."""

    command: dict[str, Any]
    pid: int
    supervisor_pid: int | None


class ChildTaskRecord(TaskRecord):
    """A private child agent under supervision (holon.tasks.child.children.new_record)."""

    phase: str
    label: str
    child_agent_id: str
    child_home: str
    template: str
    workspace_mode: str
    workspace: dict[str, Any]
    worktree: dict[str, Any] | None
    model_override: str | None
    initial_message: str
    initial_message_id: str | None
    recovery: dict[str, Any]
    origin_turn_id: str | None
    spawner_pid: int


class WorkItem(TypedDict):
    """One line of `ledger/work_items.jsonl`; the latest per id wins (holon.agent.workitems)."""

    schema_version: int
    id: str
    agent_id: str
    workspace_id: str
    objective: str
    state: str  # open | completed | ...
    plan_status: str  # holon.agent.workitems.PLAN_STATUSES
    todo_list: list[dict[str, str]]
    blocked_by: str | None
    recheck_at: str | None
    recheck_consumed_at: str | None
    result_summary: str | None
    # the wait its last turn ended on: {"kind": "task", "task_ids"} | {"kind": "external",
    # "trigger_count"} | None (holon.agent.workitems.active_wait)
    wait: NotRequired[dict[str, Any] | None]
    created_at: str
    updated_at: str


class Timer(TypedDict):
    """`timers/<timer_id>.json` (holon.agent.timers.build): once, every interval, or on a cron."""

    schema_version: int
    id: str
    agent_id: str
    text: str
    guard: str | None
    source: str
    created_at: str
    fired_count: int
    last_fired_at: str | None
    schedule: NotRequired[str]  # once | every | cron
    due_ts: NotRequired[float]
    due_at: NotRequired[str]
    interval_s: NotRequired[float]
    cron: NotRequired[str]
    tz: NotRequired[str]
    model_ref: NotRequired[str]


class WorkSignal(TypedDict):
    """A settled turn's pointer to the work item to go on with (ClosureDecision.work_signal)."""

    work_item_id: str
    status: str  # active | queued
    reactivation_mode: str  # continue_active | activate_queued


class Closure(TypedDict):
    """`AgentState.closure`: the ClosureDecision of the last settled turn
    (holon.runtime.turn.closure.apply_closure)."""

    turn_id: str
    message_id: str
    terminal_observed: bool
    decided_at: str
    outcome: NotRequired[str]  # failed | waiting | continuable | completed
    waiting_reason: NotRequired[str]
    work_signal: NotRequired[WorkSignal]
    runtime_posture: NotRequired[str]  # asleep | awake | paused | stopped
    model_ref: NotRequired[str]


class Continuation(TypedDict):
    """`AgentState.last_continuation`: how a message continues the closure before it
    (holon.runtime.turn.closure.resolve_continuation)."""

    message_id: str
    model_visible: bool
    mode: str
    prior_closure_outcome: str
    matched_waiting_reason: bool
    evidence: list[str]
    resolved_at: str
    prior_waiting_reason: NotRequired[str]


class InflightTurn(TypedDict):
    """`AgentState.inflight[message_id]`: a turn that began and has not settled
    (holon.runtime.turn.state)."""

    turn_id: str
    transcript_offset: int
    started_at: str
    pid: int
    model_ref: str | None
    segment_offset: NotRequired[int]


class StateView(TypedDict):
    """state.json as the light readers take it (holon.home.stateview.current, `holon status`):
    the parts of `AgentState` they use, as JSON. tests/home/test_home_stateview.py derives these
    keys, and the types stateview checks, from `AgentState`."""

    id: str
    status: str  # holon.vocab.AGENT_STATUSES
    sleeping_until: str | None
    last_brief_at: str | None
    last_tick_at: str | None
    token_usage: dict[str, Any]
    model_override: str | None
    last_turn: dict[str, Any] | None
    closure: Closure | None
    last_continuation: Continuation | None
    current_work_item_id: str | None
    active_workspace_id: str
    cwd: str | None
    pending_wake_hint: dict[str, Any] | None
    inflight: dict[str, InflightTurn]
    active_task_ids: list[str]
    turn_index: int
    total_input_tokens: int
    total_output_tokens: int
    working_memory: dict[str, Any]
    context: dict[str, Any]
