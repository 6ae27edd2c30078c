"""Private child agents (SpawnAgent, preset private_child): the parent's `child_agent_task`
supervision record, the child's home inside the parent's, and the child's first message.

A spawn takes three durable steps, in this order:
    1. the supervision record in the parent (`phase: spawning`, with everything the other
       steps need: the child's id, home, workspace binding and initial message), listed in the
       parent's active tasks;
    2. the child's home, `<parent>/.holon/children/<child_id>`, made all or nothing by
       holon.home.init and registered, so `holon tick --all` finds it; then its workspace;
    3. the initial message, admitted into the child's queue; then `phase: running`.
A process killed part way leaves a `spawning` record. The parent's next busy tick
(holon.tasks.recovery -> holon.tasks.child.childend.reconcile) finishes it when the message was
admitted (the child may already be running), and otherwise rolls it back: the half-made home,
its registry entry and the record go, as if the spawn never happened.

The initial message and every TaskInput reach the child through the `followup` ingress
(kind internal_followup, trust trusted_system, authority runtime_instruction, origin system
`delegation`): the delegated instruction of its supervising parent, which the runtime
delivers. It is not the operator's (the parent model wrote it) and not external evidence.
"""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path
from typing import Any

from holon import clock, config, procs
from holon.agent import lineage
from holon.agent.admission import admit
from holon.agent.handle import Agent
from holon.home import registry
from holon.home.layout import AGENT_ID, Home, is_home
from holon.ids import new_id
from holon.safetext import one_line
from holon.store import crashpoint, jsonl
from holon.store.atomic import make_private_dir, write_json
from holon.tasks import store, tracking
from holon.tasks.child import childws
from holon.tasks.child.childws import Refused

KIND = "child_agent_task"
LABEL_CHARS = 80
DELEGATION_SOURCE = "delegation"
SEEN_ENTRIES = 2000  # transcript entries searched for a message that already ran
__all__ = ["Refused"]  # raised by spawn; defined beside the workspace checks that raise it too


def max_depth() -> int:
    """How deep delegation goes: 2 lets a child spawn a grandchild, and no deeper."""
    return config.env_int("HOLON_DELEGATION_MAX_DEPTH", "delegation.max_depth", 2)


def max_live_children() -> int:
    return config.env_int("HOLON_DELEGATION_MAX_LIVE_CHILDREN", "delegation.max_live_children", 4)


def depth(home: Home) -> int:
    """0 for an agent the operator made, 1 for one its turns created (a private child or a public
    agent), 2 below that... (holon.agent.lineage)"""
    return lineage.depth(home)


def parent_of(home: Home) -> Home | None:
    root = home.parent_root
    return Home(root) if root is not None and is_home(root) else None


def label_of(text: str) -> str:
    """The parent-visible label: the first non-empty line of the initial message, bounded."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    return one_line(first.strip(), LABEL_CHARS) or "child agent"


def is_child_task(record: dict[str, Any] | None) -> bool:
    return bool(record) and record.get("kind") == KIND  # type: ignore[union-attr]


def child_records(
    home: Home, *, live_only: bool = False, active_ids: list[str] | None = None
) -> list[dict[str, Any]]:
    """The agent's child_agent_task records (the live ones: from its active task list, which a
    caller that has read the run state passes as `active_ids`)."""
    if live_only:
        ids = Agent(home).state().active_task_ids if active_ids is None else active_ids
        recs = [store.load(home, t) for t in ids]
        return [r for r in recs if is_child_task(r) and r["status"] not in store.TERMINAL]  # type: ignore[index]
    return [r for r in store.all_records(home) if is_child_task(r)]


def new_child_id(parent_id: str) -> str:
    """`<parent>.c-<6 hex>` while that fits an agent id, else `c-<12 hex>`."""
    candidate = f"{parent_id}.c-{secrets.token_hex(3)}"
    return candidate if AGENT_ID.fullmatch(candidate) else f"c-{secrets.token_hex(6)}"


def check_limits(home: Home) -> None:
    """Refuse a new agent (either preset) that `home` would create past the delegation depth or
    its live children: its private children and the public agents it created count alike."""
    if depth(home) + 1 > max_depth():
        raise Refused(
            "delegation_depth_exceeded",
            f"agent {home.agent_id} is at delegation depth {depth(home)}; a child would exceed "
            f"the limit of {max_depth()}",
            "do the work in this agent, or raise delegation.max_depth in config.toml",
            depth=depth(home),
            max_depth=max_depth(),
        )
    live = [r["child_agent_id"] for r in child_records(home, live_only=True)]
    public = [h.agent_id for h in lineage.live_spawned(home, registry.load())]
    if len(live) + len(public) >= max_live_children():
        raise Refused(
            "too_many_children",
            f"agent {home.agent_id} already has {len(live) + len(public)} live agents it created "
            f"({len(live)} private children, {len(public)} public agents; limit "
            f"{max_live_children()})",
            "wait for a child's task_result, or stop one with TaskStop; a public agent it "
            "created counts until the operator forgets it (`holon agents forget`)",
            live_children=live,
            public_agents=public,
        )


def _check_new_id(home: Home, child_id: str) -> str:
    if not AGENT_ID.fullmatch(child_id):
        raise Refused(
            "invalid_agent_id",
            f"invalid agent id {child_id!r}",
            "use letters, digits, '.', '_' or '-' (at most 64, starting with a letter or digit)",
        )
    if (
        child_id in registry.load()
        or child_id in registry.archived()
        or (home.child_home(child_id).exists())
    ):
        raise Refused(
            "agent_exists",
            f"an agent {child_id!r} already exists",
            "omit agent_id to get a fresh child id",
        )
    return child_id


def new_record(
    agent: Agent,
    initial_message: str,
    *,
    child_id: str,
    template: str,
    workspace_mode: str,
    binding: dict[str, Any],
    parent_message_id: str | None,
    turn_id: str | None,
) -> dict[str, Any]:
    now = clock.now_iso()
    label = label_of(initial_message)
    task_id = new_id("task")
    return {
        "schema_version": 1,
        "id": task_id,
        "agent_id": agent.id,
        "kind": KIND,
        "status": "running",
        "phase": "spawning",
        "summary": f"child agent: {label}",
        "label": label,
        "child_agent_id": child_id,
        "child_home": str(agent.home.child_home(child_id)),
        "template": template,
        "workspace_mode": workspace_mode,
        "workspace": binding,
        "worktree": None,
        "model_override": agent.state().model_override,
        "initial_message": initial_message,
        "initial_message_id": None,
        # what the spec's TaskRecoverySpec names: enough to understand the task after a restart
        "recovery": {
            "kind": KIND,
            "summary": label,
            "prompt": initial_message,
            "trust": "trusted_system",
            "workspace_mode": workspace_mode,
        },
        "created_at": now,
        "started_at": now,
        "updated_at": now,
        "finished_at": None,
        "exit_status": None,
        "signal": None,
        "failure_artifact": None,
        "parent_message_id": parent_message_id,
        "origin": "turn" if parent_message_id else "operator",
        "origin_turn_id": turn_id or None,
        "result_message_id": None,
        "stop_requested": False,
        "spawner_pid": os.getpid(),
    }


def spawn(
    agent: Agent,
    initial_message: str,
    *,
    child_id: str | None = None,
    template: str = "holon-default",
    workspace_mode: str = "inherit",
    parent_message_id: str | None = None,
    turn_id: str | None = None,
) -> dict[str, Any]:
    """Create a private child and its supervision task (module docstring); returns the record."""
    from holon.home.init import resolve_template  # pydantic: `holon status` imports this module

    home = agent.home
    check_limits(home)
    child_id = _check_new_id(home, child_id or new_child_id(agent.id))
    resolve_template(template)  # an unknown template is refused before anything is written
    binding = childws.binding_for(agent, workspace_mode)
    record = new_record(
        agent,
        initial_message,
        child_id=child_id,
        template=template,
        workspace_mode=workspace_mode,
        binding=binding,
        parent_message_id=parent_message_id,
        turn_id=turn_id,
    )
    tracking.add(agent, record["id"])  # first: a listed id without a record is dropped later
    crashpoint.step("child.record")
    home.task_dir(record["id"]).mkdir(mode=0o700, parents=True)
    store.save(home, record)
    complete(agent, record)
    agent.event(
        "child_spawned",
        task_id=record["id"],
        child_agent_id=child_id,
        workspace_mode=workspace_mode,
    )
    return record


def complete(agent: Agent, record: dict[str, Any]) -> None:
    """Steps 2 and 3 of a spawn, each done only when not done yet (a spawn resumed)."""
    home = agent.home
    child_root = Path(record["child_home"])
    if record["workspace_mode"] == "worktree" and not record.get("worktree"):
        crashpoint.step("child.worktree")
        record["worktree"] = childws.create_worktree(record)
        store.save(home, record)
    if not is_home(child_root):
        from holon.home.init import init_home

        crashpoint.step("child.home")
        make_private_dir(home.children_dir)
        init_home(
            str(child_root),
            record["child_agent_id"],
            record.get("template") or "holon-default",
            kind="child",
            visibility="private",
            parent_agent_id=agent.id,
            model_override=record.get("model_override"),
        )
    elif registry.load().get(record["child_agent_id"]) != str(child_root):
        registry.register(record["child_agent_id"], child_root)  # killed before registering
    child = Agent(Home(child_root, record["child_agent_id"]))
    childws.bind(child, record)
    if not record.get("initial_message_id"):
        record["initial_message_id"] = admitted(child, record["id"]) or deliver(
            child, record, record["initial_message"]
        )
    record["phase"] = "running"
    crashpoint.step("child.running")
    store.save(home, record)


def deliver(child: Agent, record: dict[str, Any], text: str) -> str:
    """Queue `text` for the child as its supervising parent's delegated instruction."""
    msg = admit(
        child.home,
        "followup",
        "internal_followup",
        {"type": "text", "text": text},
        source=DELEGATION_SOURCE,
        task_id=record["id"],
        causation_id=record.get("parent_message_id"),
        metadata={
            "delegated_by": record["agent_id"],
            "supervision_task_id": record["id"],
        },
    )  # no model_ref: the child runs its own model (inherited, or set with `holon model set`)
    return str(msg["id"])


def admitted(agent: Agent, task_id: str) -> str | None:
    """The id of a message about task `task_id` already admitted to `agent` (a child's first
    message, a parent's task_result): its queue file is the admission, the ledger line follows."""
    q = agent.home.queue
    for name in [*q.in_progress(), *q.pending()]:
        rec = q.read_cur(name) if name in q.in_progress() else q.read_new(name)
        if rec and rec.get("task_id") == task_id:
            return str(rec["id"])
    for rec in jsonl.read(agent.home.messages):
        if rec.get("task_id") == task_id:
            return str(rec["id"])
    for entry in jsonl.tail(agent.home.transcript, SEEN_ENTRIES):  # run before it was logged
        origin = (entry.get("data") or {}).get("origin") or {}
        if entry.get("kind") == "message" and origin.get("task_id") == task_id:
            return str(entry.get("message_id"))
    return None


def resume_or_roll_back(agent: Agent, record: dict[str, Any]) -> str:
    """A `spawning` record its spawner left: 'resumed' once the message was admitted (the child
    may be running), else 'rolled_back'; 'in_progress' while the spawner still runs."""
    pid = int(record.get("spawner_pid") or 0)
    if pid and pid != os.getpid() and procs.alive(pid):
        return "in_progress"
    child_root = Path(record["child_home"])
    child = Agent(Home(child_root, record["child_agent_id"])) if is_home(child_root) else None
    if child is not None and (record.get("initial_message_id") or admitted(child, record["id"])):
        complete(agent, record)
        agent.event(
            "child_spawn_resumed", task_id=record["id"], child_agent_id=record["child_agent_id"]
        )
        return "resumed"
    registry.unregister(record["child_agent_id"])
    shutil.rmtree(child_root, ignore_errors=True)
    for staged in agent.home.children_dir.glob(f".{child_root.name}.init-*"):  # a killed init's
        shutil.rmtree(staged, ignore_errors=True)
    childws.drop_worktree(agent, record)
    tracking.remove(agent, record["id"])
    shutil.rmtree(agent.home.task_dir(record["id"]), ignore_errors=True)
    agent.event(
        "child_spawn_rolled_back", task_id=record["id"], child_agent_id=record["child_agent_id"]
    )
    return "rolled_back"


def write_identity(child: Home, **fields: Any) -> None:
    ident = dict(child_identity(child))
    ident.update(fields)
    write_json(child.agent_json, ident)


def child_identity(child: Home) -> dict[str, Any]:
    from holon.home.layout import read_identity

    return read_identity(child.agent_json)
