"""Persisted records: agent identity and state, briefs, transcript entries, events, turn
terminals."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from holon import vocab
from holon.model.conversation import TokenUsage

SCHEMA_VERSION = vocab.SCHEMA_VERSION
# a count, an offset or a pid in a persisted record: a hand-edited or corrupt file with a negative
# or absurd one is refused when it is read (the run state is then rebuilt), never acted on
Count = Annotated[int, Field(ge=0, le=2**53)]
Ratio = Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)]


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow")
    schema_version: int = SCHEMA_VERSION


# spelled once, in holon.vocab; a member is named as its value
AgentStatus = Enum("AgentStatus", [(s, s) for s in vocab.AGENT_STATUSES], module=__name__, type=str)


class AgentIdentity(_Record):
    agent_id: str
    kind: Literal["default", "named", "child"] = "named"
    visibility: Literal["public", "private"] = "public"
    ownership: Literal["self_owned", "parent_supervised"] = "self_owned"
    profile_preset: Literal["public_named", "private_child"] = "public_named"
    lineage_parent_agent_id: str | None = None
    # a public agent another agent's turn created: its creator's home, which binds it (its
    # depth, children and daily tokens count against it: holon.agent.lineage), the lineage's
    # root, and its depth below that root
    lineage_parent_home: str | None = None
    lineage_root_agent_id: str | None = None
    lineage_depth: int | None = None
    created_at: str
    template: dict[str, Any] = Field(default_factory=dict)
    home_format: int = 1
    migrations: list[str] = Field(default_factory=list)


class TurnTerminalRecord(_Record):
    turn_index: int
    completed_at: str
    duration_ms: int
    kind: Literal["completed", "aborted"] = "completed"
    last_assistant_message: str = ""
    message_id: str | None = None


class TokenUsageSummary(BaseModel):
    """AgentTokenUsageSummary: cumulative usage, model rounds, and the last turn that reported
    usage."""

    total: TokenUsage = Field(default_factory=TokenUsage)
    total_model_rounds: Count = 0
    last_turn: TokenUsage | None = None


class WorkingMemory(BaseModel):
    """The spec's `workingMemory`: structured working state derived after each settled turn, its
    revision, the delta not yet shown to the model, and the open episode builder."""

    current: dict[str, Any] = Field(default_factory=dict)
    revision: Count = 0
    pending_delta: list[str] = Field(default_factory=list)
    last_prompted_revision: Count = 0
    # the rendering last handed to a prompt (the base the next delta is taken against)
    last_prompted: list[str] = Field(default_factory=list)
    active_episode_id: str | None = None
    archived_episode_count: Count = 0
    active_episode_builder: dict[str, Any] | None = None
    last_turn_id: str | None = None  # the last settled turn merged in (a repeated settle skips)


class ContextState(BaseModel):
    """Where the conversation window starts, how estimates are calibrated, and the last
    compaction."""

    # byte offset into the transcript where the replayed conversation begins; earlier turns live
    # on in episodes
    window_start: Count = 0
    compression_epoch: Count = 0
    compacted_turns: Count = 0
    # transcript offset up to which finalized episodes cover the turns
    episodes_through: Count = 0
    # working memory as of the last compaction: shown in the episode block until the next one
    snapshot: list[str] = Field(default_factory=list)
    snapshot_revision: Count = 0
    # model ref -> provider-reported input tokens / holon's estimate (smoothed)
    calibration: dict[str, Ratio] = Field(default_factory=dict)
    # model ref -> a window learned from a context-length error (smaller than the configured one)
    learned_window: dict[str, Count] = Field(default_factory=dict)
    # model ref -> successful requests since its learned window last changed (holon.context
    # .window.probed raises the window after enough of them)
    window_probe: dict[str, Count] = Field(default_factory=dict)
    last_request: dict[str, Any] | None = None
    last_compaction: dict[str, Any] | None = None
    # the memory files (name -> text) as the stable prefix shows them: taken at the first turn and
    # at each compaction (holon.context.memoryfiles); None before the first
    memory_basis: dict[str, str] | None = None
    # name -> digest of the text the model last saw of each memory file (the basis, or a later
    # turn context's copy of an edit)
    memory_shown: dict[str, str] = Field(default_factory=dict)
    # episodes finalized while model summaries were on, waiting for theirs (holon.context
    # .summaries; written at the settle after the one that finalized them was recorded)
    summaries_pending: list[str] = Field(default_factory=list)


class AgentState(_Record):
    id: str
    status: AgentStatus = AgentStatus.awake_idle
    sleeping_until: str | None = None
    current_run_id: str | None = None
    run_owner_pid: Count | None = None
    pending: Count = 0
    active_task_ids: list[str] = Field(default_factory=list)
    last_wake_reason: str | None = None
    last_brief_at: str | None = None
    last_tick_at: str | None = None
    context_summary: str | None = None
    compacted_message_count: Count = 0
    total_message_count: Count = 0
    total_input_tokens: Count = 0
    total_output_tokens: Count = 0
    total_model_rounds: Count = 0
    token_usage: TokenUsageSummary = Field(default_factory=TokenUsageSummary)
    token_usage_by_day: dict[str, Count] = Field(default_factory=dict)
    model_override: str | None = None
    # the agent's model writes a summary of each episode (`holon model summaries AGENT on`)
    model_summaries: bool = False
    attached_workspaces: list[str] = Field(default_factory=list)
    active_workspace_id: str = "agent_home"
    cwd: str | None = None
    turn_index: Count = 0
    last_turn: TurnTerminalRecord | None = None
    closure: dict[str, Any] | None = None
    last_continuation: dict[str, Any] | None = None
    current_work_item_id: str | None = None
    # the work item that was current when the running turn began (its brief binds to it)
    bound_work_item_id: str | None = None
    pending_wake_hint: dict[str, Any] | None = None
    # message id -> {turn_id, transcript_offset, started_at, pid}: turns that began and have not
    # settled
    inflight: dict[str, dict[str, Any]] = Field(default_factory=dict)
    last_settled_turn_id: str | None = None
    # the message of the last settled turn, and whether it was to be dead-lettered: a tick that
    # finds it still in queue/cur/ (a crash after the settle) finishes it instead of running it
    last_settled_message_id: str | None = None
    last_settled_dead_letter: bool = False
    paused_from: str | None = None
    # the spent daily budget holding the queue since a tick found it (holon.runtime.tick._held)
    budget_hold: dict[str, Any] | None = None
    # turns in a row the agent drove itself (holon.agent.autonomy); any other turn resets it
    self_driven_turns: Count = 0
    working_memory: WorkingMemory = Field(default_factory=WorkingMemory)
    context: ContextState = Field(default_factory=ContextState)
    # skill name -> {state: turn_active|session_active, scope, path, activated_at, turn_id}
    # (holon.runtime.turn.skills: bounded; a completed turn's settle promotes turn_active)
    active_skills: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # the settings.json content (holon.home.settings) this state was last merged with: a
    # settings.json that differs was changed outside holon (a git checkout, an edit) and wins
    settings_basis: dict[str, Any] | None = None

    @field_validator("inflight")
    @classmethod
    def _inflight(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """A turn in flight names its turn and where it began in the transcript."""
        for rec in value.values():
            if not isinstance(rec.get("turn_id"), str):
                raise ValueError("an in-flight turn has no turn_id")
            for key in ("transcript_offset", "segment_offset"):
                offset = rec.get(key, 0)
                if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
                    raise ValueError(f"an in-flight turn has an invalid {key}")
            if not isinstance(rec.get("model_ref") or "", str):
                raise ValueError("an in-flight turn has an invalid model_ref")
        return value


class BriefRecord(_Record):
    id: str
    agent_id: str
    kind: Literal["ack", "result", "failure"]
    created_at: str
    text: str
    visibility: Literal["action_required", "work_done", "turn_result"] = "turn_result"
    work_item_id: str | None = None
    attachments: list[dict[str, Any]] | None = None
    related_message_id: str | None = None
    related_task_id: str | None = None
    workspace_id: str | None = None  # the workspace active when written (memory search scope)


class TranscriptEntry(_Record):
    """One transcript line. `kind` is one of: operator_message (any admitted message),
    assistant_round, tool_call, tool_result, brief, runtime_failure, note."""

    id: str
    agent_id: str
    created_at: str
    kind: str
    turn_id: str | None = None
    message_id: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)


class AuditEvent(_Record):
    id: str
    agent_id: str
    event_seq: int
    created_at: str
    kind: str
    data: dict[str, Any] = Field(default_factory=dict)


class FailureArtifact(BaseModel):
    """Operator-facing failure, one shape everywhere (category: transport, protocol, runtime, task,
    unknown)."""

    category: Literal["transport", "protocol", "runtime", "task", "unknown"] = "unknown"
    summary: str
    kind: str | None = None
    provider: str | None = None
    model_ref: str | None = None
    status: int | None = None
    task_id: str | None = None
    exit_status: int | None = None
    source_chain: list[str] | None = None
    metadata: dict[str, str] | None = None
