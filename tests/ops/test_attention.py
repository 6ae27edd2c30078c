"""`holon doctor`'s operator attention per agent: last activity, what it waits on (operator,
timer, provider outage with the next retry), unanswered action_required records, notify hook
failures; and the [notify] table checked once for the installation."""

from __future__ import annotations

from holon import config
from holon.agent import admission
from holon.agent.handle import Agent
from holon.ops import attention, doctor
from holon.runtime.tick import tick


def checks(home) -> dict[str, dict]:
    a = Agent(home)
    found = attention.agent_findings("a", home, a.state(), doctor.finding)
    return {f["check"]: f for f in found}


def _prompt(home, text: str = "go") -> None:
    admission.admit(home, "cli_prompt", "operator_prompt", admission.text_body(text))


def test_an_unanswered_question_is_reported_until_the_operator_answers(agent, script):
    model = script(
        {
            "text": "",
            "tool_calls": [
                {
                    "name": "NotifyOperator",
                    "arguments": {"text": "Which region?", "visibility": "action_required"},
                }
            ],
        },
        {"text": "Asked."},
        {"text": "Deploying to eu."},
    )
    _prompt(agent, "deploy")
    tick(agent, model=model)
    found = checks(agent)
    ask = found["action_required"]
    assert ask["status"] == "warn" and "latest at" in ask["message"]
    assert ask["message"].endswith(": Which region?") and len(ask["event_seqs"]) == 1
    assert found["activity"]["message"].startswith("last activity at ")
    _prompt(agent, "eu")
    tick(agent, model=model)
    assert "action_required" not in checks(agent)


def test_waiting_on_a_timer_and_on_a_provider_outage(agent, script, monkeypatch):
    monkeypatch.setenv("HOLON_RETRY_BASE_S", "100")
    a = Agent(agent)
    a.update_state(
        lambda s: setattr(s, "closure", {"outcome": "waiting", "waiting_reason": "awaiting_timer"})
    )
    a.update_state(lambda s: setattr(s, "sleeping_until", "2030-01-01T00:00:00.000Z"))
    assert checks(agent)["waiting"]["message"] == (
        "waiting on a timer (asleep until 2030-01-01T00:00:00.000Z)"
    )
    _prompt(agent)
    down = {"error": {"status": 503, "message": "upstream unavailable"}}
    assert tick(agent, model=script(down, down, down)).turns[0]["status"] == "deferred"
    said = checks(agent)["waiting"]["message"]
    assert said.startswith("waiting on a provider outage: 1 message(s) deferred, next retry at ")


def test_a_failed_notify_hook_is_reported(agent):
    Agent(agent).event("notify_hook_failed", record_seq=3, problem="exit status 1")
    found = checks(agent)
    assert found["notify_hook"]["status"] == "warn"
    assert "exit status 1" in found["notify_hook"]["message"]
    assert "activity" not in found  # the hook's failure is not the agent's activity


def test_the_notify_table_is_checked_once(holon_env):
    holon_env.mkdir(parents=True, exist_ok=True)
    (holon_env / "config.toml").write_text('[notify]\ncommand = ["mail", "-s", "holon", "me"]\n')
    config.reset()
    [ok] = attention.notify_finding(doctor.finding)
    assert ok["status"] == "ok" and ok["message"] == "hook mail for action_required (timeout 10 s)"
    (holon_env / "config.toml").write_text("[notify]\ncommand = []\n")
    config.reset()
    [bad] = attention.notify_finding(doctor.finding)
    assert bad["status"] == "error" and bad["kind"] == "invalid_config"
    assert [f["check"] for f in doctor.run()["findings"]].count("notify") == 1
