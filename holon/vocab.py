"""The words holon's records are spelled with, said once: message priorities, message kinds,
agent and task statuses, schema versions.

No imports, so the lightest paths (the queue, the enqueue fast path, the idle tick's readers)
and the pydantic records (holon.model, whose enums are built from these tuples) take them from
the same place.
"""

# every persisted record holon writes carries `schema_version`; this is the one they are at
SCHEMA_VERSION = 1

# message priorities, in dequeue order: a queue file name starts with the priority's band,
# its index here (holon.store.queue)
PRIORITIES = ("interject", "next", "normal", "background")
DEFAULT_PRIORITY = "normal"
# what an agent may give the follow-ups it queues for itself (the Enqueue tool): never interject
FOLLOWUP_PRIORITIES = PRIORITIES[1:]

# what a queued message is (holon.model.messages.MessageKind)
MESSAGE_KINDS = (
    "operator_prompt",
    "channel_event",
    "webhook_event",
    "callback_event",
    "timer_tick",
    "system_tick",
    "task_result",
    "task_status",
    "control",
    "brief_ack",
    "brief_result",
    "internal_followup",
)
# the kinds a script may admit with `holon enqueue` (its trust and authority follow from them)
ENQUEUE_KINDS = ("channel_event", "webhook_event", "timer_tick", "system_tick")

# an agent's status in its run state (holon.model.records.AgentStatus)
AGENT_STATUSES = (
    "booting",
    "awake_idle",
    "awake_running",
    "awaiting_task",
    "asleep",
    "paused",
    "stopped",
)

# a task's status in its record: running until it ends in one of the terminal ones
TASK_RUNNING = "running"
TASK_TERMINAL = ("completed", "failed", "cancelled", "interrupted")
TASK_STATUSES = (TASK_RUNNING, *TASK_TERMINAL)
