"""Operator entry points used by the CLI: prompt an agent and wait, or a one-shot run."""

from __future__ import annotations

import shutil
import tempfile
from typing import Any

from holon import config
from holon.agent import admission, budget
from holon.agent.handle import Agent
from holon.errors import UsageError
from holon.home import registry
from holon.home.init import init_home, materialise, resolve_template
from holon.home.layout import Home
from holon.providers import resolve
from holon.runtime.tick import tick
from holon.store import jsonl

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
    priority: str = "normal",
    ingress: str = "cli_prompt",
) -> dict[str, Any]:
    """Admit an operator prompt (after the checks a turn would otherwise fail on) and, with
    `wait`, tick until it is settled. The message carries `model`, and so does the work it
    causes."""
    agent = Agent(home)
    admission.check_runnable(home)
    body = admission.text_body(text)
    admission.check_text(body, ingress)
    check_model(agent, model)
    env = admission.admit(
        home, ingress, "operator_prompt", body, priority=priority, model_ref=model
    )
    if not wait:
        return {"agent_id": home.agent_id, "message_id": env["id"], "status": "queued"}
    return settle_message(agent, env["id"], model)


def check_model(agent: Agent, model: str | None) -> str:
    """The model a turn of this agent would run with (--model, the agent's override, the
    default), after the checks that need no network (a malformed ref, an unknown provider, a
    missing key or script); refused when there is none."""
    ref, _ = budget.effective_model(agent, model)
    if not ref:
        raise UsageError(
            f"no model is configured for {agent.id}",
            kind="no_model_configured",
            hint=NO_MODEL_HINT.format(agent=agent.id),
        )
    resolve.preflight(ref, home=agent.home.root)
    return ref


def settle_message(agent: Agent, message_id: str, model: str | None) -> dict[str, Any]:
    """Tick until `message_id` has been processed (by us or a concurrent tick) and describe the
    result."""
    found = None
    queue = agent.home.queue
    for _ in range(10_000):
        report = tick(agent.home, until_idle=True, model=model, wait=True)
        found = next(
            (t for t in report.turns if t["message_id"] == message_id), None
        ) or _from_ledgers(agent, message_id)
        if found is not None or report.outcome in ("paused", "stopped"):
            break
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
    text: str, *, agent_id: str | None, create: bool, keep: bool, model: str | None
) -> dict[str, Any]:
    if agent_id is None:
        tmp = tempfile.mkdtemp(prefix="holon-run-")
        home = _private_home(tmp)
        try:
            out = prompt(home, text, wait=True, model=model, ingress="run_once")
        finally:
            if not keep:
                shutil.rmtree(tmp, ignore_errors=True)
        if keep:
            out["home"] = str(home.root)
        elif out["status"] in ("deferred", "failed") and out.get("hint"):
            out["hint"] = (
                "the temporary agent is removed with its queue: run it again later, or use "
                "--keep or --agent to keep the message queued"
            )
        return out
    try:
        home = registry.resolve(agent_id)
    except UsageError:
        if not create:
            raise UsageError(
                f"no agent {agent_id!r}",
                kind="unknown_agent",
                hint=f"add --create-agent to create it, or `holon init --agent-id {agent_id}`",
            ) from None
        home = init_home(None, agent_id)
    return prompt(home, text, wait=True, model=model, ingress="run_once")


def _private_home(tmp: str) -> Home:
    """A temporary private agent: a real home that is not registered."""
    source, provenance = resolve_template("holon-default")
    root = f"{tmp}/agent"
    materialise(Home(root).root, source, "run", provenance, "child", "private")
    config.reset()
    return Home(root, "run")
