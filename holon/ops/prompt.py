"""Operator entry points used by the CLI: prompt an agent and wait, or a one-shot run.

`holon prompt --no-wait` only admits: the runtime (tick, tasks, home creation) is imported by the
functions that wait or run, so admitting stays light (tests/cli/test_imports_admission.py)."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from holon import config, paths, vocab
from holon.agent import admission
from holon.agent.handle import Agent
from holon.errors import UsageError
from holon.home import registry, settings
from holon.home.layout import Home
from holon.ops.workspace import bind_for_run
from holon.procs import supervises
from holon.store import jsonl
from holon.tasks import store

TASK_POLL_S = 0.15  # how often `holon run` looks whether the tasks it waits for have ended
NO_MODEL_HINT = (
    "pass --model provider/model, run `holon model set {agent} provider/model`, or set "
    '`model = "provider/model"` in $HOLON_HOME/config.toml (or HOLON_MODEL)'
)


def prompt(
    home: Home,
    text: str,
    *,
    wait: bool,
    model: str | None,
    priority: str = vocab.DEFAULT_PRIORITY,
    ingress: str = "cli_prompt",
    on_admitted: Callable[[str], Any] | None = None,
) -> dict[str, Any]:
    """Admit an operator prompt (after the checks a turn would otherwise fail on) and, with
    `wait`, tick until it is settled. The message carries `model`, and so does the work it
    causes. `on_admitted` is told the message id before any tick runs."""
    agent = Agent(home).ensure()
    admission.check_runnable(home)
    body = admission.text_body(text)
    admission.check_text(body, ingress)
    check_model(agent, model)
    env = admission.admit(
        home, ingress, "operator_prompt", body, priority=priority, model_ref=model
    )
    if not wait:
        return {"agent_id": home.agent_id, "message_id": env["id"], "status": "queued"}
    if on_admitted is not None:
        on_admitted(env["id"])
    return settle_message(agent, env["id"], model)


def check_model(agent: Agent, model: str | None) -> str:
    """The model a turn of this agent would run with (--model, the agent's override, the
    default), after the checks that need no network (a malformed ref, an unknown provider, a
    missing key or script); refused when there is none."""
    # as holon.agent.budget.effective_model, from the files: no run state is parsed to admit
    ref = model or settings.lenient(agent.home).get("model_override") or config.default_model()
    if not ref:
        raise UsageError(
            f"no model is configured for {agent.id}",
            kind="no_model_configured",
            hint=NO_MODEL_HINT.format(agent=agent.id),
        )
    from holon.providers import resolve

    resolve.preflight(ref, home=agent.home.root)
    return ref


def settle_message(agent: Agent, message_id: str, model: str | None) -> dict[str, Any]:
    """Tick until `message_id` has been processed (by us or a concurrent tick) and describe the
    result."""
    found = None
    queue = agent.home.queue
    for _ in range(10_000):
        report = _tick(agent.home, model)
        found = next(
            (t for t in report.turns if t["message_id"] == message_id), None
        ) or _from_ledgers(agent, message_id)
        if found is not None or report.outcome in ("paused", "stopped"):
            break
        if report.held:  # a spent budget holds the queue: the prompt waits, not consumed
            return _held(agent, message_id, report.held)
        if not queue.has_ready() and not queue.in_progress():  # what is left waits for later
            found = _from_ledgers(agent, message_id) or _deferred(agent, message_id)
            break
    if found is None:
        status = agent.state().status.value
        return {
            "agent_id": agent.id,
            "message_id": message_id,
            "status": status if status in ("paused", "stopped") else "pending",
            "exit_code": 3 if status in ("paused", "stopped") else 1,
            "hint": f"the prompt is queued; run `holon resume {agent.id}` to let it run"
            if status in ("paused", "stopped")
            else "the prompt is still queued; see `holon status`",
        }
    out = {"agent_id": agent.id, **found}
    out["exit_code"] = 0 if found["status"] == "completed" else 1
    if found["status"] == "deferred":
        out["hint"] = (
            f"the prompt stays queued and runs again after {found['not_before']}, when a tick "
            f"runs (`holon tick {agent.id}`, or the scheduler); see `holon status {agent.id}`"
        )
    elif found.get("note"):
        out["hint"] = found["note"]
    return out


def _held(agent: Agent, message_id: str, hold: dict[str, Any]) -> dict[str, Any]:
    """The prompt stays queued behind a spent daily budget (exit 3: not runnable for now)."""
    return {
        "agent_id": agent.id,
        "message_id": message_id,
        "status": "held",
        "held": hold,
        "exit_code": 3,
        "error": f"budget_exhausted: {hold['message']}",
        "hint": f"the prompt stays queued and runs at the first tick after {hold['renews_at']}, "
        f"or once `holon model budget {hold['agent_id']} --daily-tokens N` raises the budget; "
        f"see `holon status {agent.id}`",
    }


def _tick(home: Home, model: str | None) -> Any:
    """Tick `home` until idle, waiting for the turn lock (the runtime is imported only here)."""
    from holon.runtime.tick import tick

    return tick(home, until_idle=True, model=model, wait=True)


def _deferred(agent: Agent, message_id: str) -> dict[str, Any] | None:
    """The message, if it waits in the queue for a retry after a provider outage."""
    for name, _ in agent.home.queue.deferred():
        record = agent.home.queue.read_new(name) or {}
        if record.get("id") == message_id:
            return {
                "message_id": message_id,
                "status": "deferred",
                "final_text": "",
                "not_before": record.get("not_before"),
                "provider_retries": record.get("provider_retries"),
            }
    return None


def _from_ledgers(agent: Agent, message_id: str) -> dict[str, Any] | None:
    for brief in reversed(jsonl.tail(agent.home.briefs, 200)):
        if brief.get("related_message_id") == message_id and brief.get("kind") in (
            "result",
            "failure",
        ):
            status = "completed" if brief["kind"] == "result" else "failed"
            out = {
                "message_id": message_id,
                "status": status,
                "final_text": brief.get("text", ""),
                "token_usage": None,
                "provider_attempt_timeline": None,
            }
            if status == "failed":
                out["failure_artifact"] = {"category": "unknown", "summary": brief.get("text", "")}
            return out
    return None


def run_once(
    text: str,
    *,
    agent_id: str | None,
    create: bool,
    keep: bool,
    model: str | None,
    wait_for_tasks: bool = True,
    on_kept: Callable[[str], None] | None = None,
    workspace: Path | None = None,
) -> dict[str, Any]:
    """Prompt a temporary private agent (or `agent_id`) once, bound first to `workspace` when
    given (a named agent keeps its binding otherwise); unless `wait_for_tasks` is false,
    also wait for the tasks the run starts and run the turns their results cause. The temporary
    agent is removed at the end unless `keep`, or a task it started still runs: then it is kept,
    and when the run ends by an exception (Ctrl-C, an error) `on_kept` is told where."""
    if agent_id is not None:
        return _run_named(text, agent_id, create, model, wait_for_tasks, workspace)
    tmp = _temp_dir()
    try:
        home = _private_home(tmp)
        if workspace is not None:
            bind_for_run(home, workspace)
        out = prompt(home, text, wait=True, model=model, ingress="run_once")
        out = _with_tasks(out, home, set(), model, wait_for_tasks)
    except BaseException:
        notice = _dispose(tmp, keep)
        if keep and notice is None:
            notice = f"kept the temporary agent at {_private_root(tmp)}"
        if notice and on_kept is not None:
            on_kept(notice)
        raise
    notice = _dispose(tmp, keep)
    if keep or notice:
        out["home"] = _private_root(tmp)
    if notice:
        out["notice"] = notice
    elif not keep and out["status"] in ("deferred", "failed") and out.get("hint"):
        out["hint"] = (
            "the temporary agent is removed with its queue: run it again later, or use "
            "--keep or --agent to keep the message queued"
        )
    return out


def _run_named(
    text: str,
    agent_id: str,
    create: bool,
    model: str | None,
    wait_for_tasks: bool,
    workspace: Path | None = None,
) -> dict[str, Any]:
    """`run_once` as a public agent: nothing is removed; tasks still running are named."""
    try:
        home = registry.resolve(agent_id)
    except UsageError:
        if not create:
            raise UsageError(
                f"no agent {agent_id!r}",
                kind="unknown_agent",
                hint=f"add --create-agent to create it, or `holon init --agent-id {agent_id}`",
            ) from None
        from holon.home.init import init_home

        home = init_home(None, agent_id)
    if workspace is not None:
        bind_for_run(home, workspace)
    before = {r["id"] for r in store.all_records(home)}
    out = prompt(home, text, wait=True, model=model, ingress="run_once")
    out = _with_tasks(out, home, before, model, wait_for_tasks)
    running = [t["task_id"] for t in out.get("tasks", []) if t["status"] == "running"]
    if running:
        out["notice"] = (
            f"{_tasks_are(running)} still running in agent {agent_id}; a result is queued when "
            f"its task ends and runs at the next tick (`holon tick {agent_id}`); "
            f"`holon task list {agent_id}` shows them"
        )
    return out


def _with_tasks(
    out: dict[str, Any], home: Home, before: set[str], model: str | None, wait: bool
) -> dict[str, Any]:
    """`out` with the tasks started since `before` and, when `wait`, after they ended and the
    turns their results cause ran (which may start more), with the last turn's final text."""
    records = _started(home, before)
    seen: set[str] = set()
    turns: list[dict[str, Any]] = []
    while wait and ({r["id"] for r in records} - seen or any(_waits(home, r) for r in records)):
        seen = {r["id"] for r in records}
        _await(home, sorted(seen))
        turns.extend(_tick(home, model).turns)
        records = _started(home, before)
    if not records:
        return out
    out["tasks"] = [
        {
            "task_id": r["id"],
            "status": "running" if _running(home, r) else r.get("status"),
            "exit_status": r.get("exit_status"),
        }
        for r in records
    ]
    last = turns[-1] if turns else _last_result(Agent(home), records)
    if last is not None:
        out["final_text"] = last.get("final_text", "")
        if "raw_final_text" in out:
            out["raw_final_text"] = last.get("raw_final_text", out["final_text"])
        if last.get("status") == "failed" and out.get("exit_code") == 0:
            out.update(status="failed", exit_code=1, failure_artifact=last.get("failure_artifact"))
    return out


def _started(home: Home, before: set[str]) -> list[dict[str, Any]]:
    return [r for r in store.all_records(home) if r["id"] not in before]


def _running(home: Home, record: dict[str, Any]) -> bool:
    """Not ended, or ended while its live supervisor has yet to admit the result."""
    if record.get("status") not in store.TERMINAL:
        return True
    return not record.get("result_message_id") and _supervised(home, record)


def _supervised(home: Home, record: dict[str, Any]) -> bool:
    pid = store.read_marker(home, record["id"]) or int(record.get("supervisor_pid") or 0)
    return supervises(pid, record["id"])


def _waits(home: Home, record: dict[str, Any] | None) -> bool:
    """Worth waiting for: running under a live supervisor, whose end delivers the result (a task
    whose supervisor died is closed out by the next tick)."""
    return record is not None and _running(home, record) and _supervised(home, record)


def _await(home: Home, task_ids: list[str]) -> None:
    while any(_waits(home, store.load(home, task_id)) for task_id in task_ids):
        time.sleep(TASK_POLL_S)


def _last_result(agent: Agent, records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The settled turn of the latest task result, when a tick other than ours ran it."""
    for record in sorted(records, key=lambda r: r.get("finished_at") or "", reverse=True):
        message_id = record.get("result_message_id")
        found = _from_ledgers(agent, message_id) if message_id else None
        if found is not None:
            return found
    return None


def _dispose(tmp: str, keep: bool) -> str | None:
    """Remove the temporary agent unless `keep` or a task it started still runs; a notice that
    says where it is kept, and why, when a task still runs. Every way out of `run_once` ends
    here, so no home is deleted under a running task."""
    root = _private_root(tmp)
    home = Home(root, "run")
    running = [r["id"] for r in store.all_records(home) if _running(home, r)]
    if not running:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
        return None
    return (
        f"kept the temporary agent at {root}: {_tasks_are(running)} still running; when it "
        f"ends, `holon tick {root} --until-idle` runs its result (`holon task list {root}` "
        f"shows it); then remove {tmp}"
    )


def _tasks_are(task_ids: list[str]) -> str:
    return f"task {task_ids[0]} is" if len(task_ids) == 1 else f"tasks {', '.join(task_ids)} are"


def _temp_dir() -> str:
    """Where the temporary agent lives: beneath $HOLON_HOME (paths.runs_dir), where no other
    agent's command sees it (holon.sandbox.confine hides $HOLON_HOME whole); in the system's
    temporary directory, readable by the operator's other commands, only when $HOLON_HOME
    cannot be written."""
    base = paths.runs_dir()
    try:
        base.mkdir(mode=0o700, parents=True, exist_ok=True)
        return tempfile.mkdtemp(prefix="holon-run-", dir=base)
    except OSError:
        return tempfile.mkdtemp(prefix="holon-run-")


def _private_root(tmp: str) -> str:
    return f"{tmp}/agent"


def _private_home(tmp: str) -> Home:
    """A temporary private agent: a real home that is not registered. Kind `named`, private and
    self-owned (spec, Agent Identity routing rules: `holon run` without --agent uses a temporary
    private agent); never `child`, which is a parent-supervised kind, and it has no parent."""
    from holon.home.init import materialise, resolve_template

    source, provenance = resolve_template("holon-default")
    root = _private_root(tmp)
    materialise(Home(root).root, source, "run", provenance, "named", "private")
    config.reset()
    return Home(root, "run")
