"""Operator entry points used by the CLI: prompt an agent and wait, or a one-shot run."""

from __future__ import annotations

import shutil
import tempfile
from typing import Any

from holon import config
from holon.agent import admission
from holon.agent.handle import Agent
from holon.errors import UsageError
from holon.home import registry
from holon.home.init import init_home, materialise, resolve_template
from holon.home.layout import Home
from holon.runtime.tick import tick
from holon.runtime.turn import context
from holon.store import jsonl

NO_MODEL_HINT = (
    "set HOLON_MODEL (e.g. scripted/path/to/script.jsonl), `model` in $HOLON_HOME/config.toml, "
    "or pass --model"
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
    agent = Agent(home)
    admission.check_runnable(home)
    if wait and context.model_chain(agent, model) is None:
        raise UsageError("no model is configured", kind="no_model_configured", hint=NO_MODEL_HINT)
    env = admission.admit(
        home, ingress, "operator_prompt", admission.text_body(text), priority=priority
    )
    if not wait:
        return {"agent_id": home.agent_id, "message_id": env["id"], "status": "queued"}
    return settle_message(agent, env["id"], model)


def settle_message(agent: Agent, message_id: str, model: str | None) -> dict[str, Any]:
    """Tick until `message_id` has been processed (by us or a concurrent tick) and describe the
    result."""
    found = None
    for _ in range(10_000):
        report = tick(agent.home, until_idle=True, model=model, wait=True)
        found = next(
            (t for t in report.turns if t["message_id"] == message_id), None
        ) or _from_ledgers(agent, message_id)
        if found is not None or report.outcome in ("paused", "stopped"):
            break
        if not agent.home.queue.has_pending() and not agent.home.queue.in_progress():
            found = _from_ledgers(agent, message_id)
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
    return out


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
