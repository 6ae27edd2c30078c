"""Keys from the keys file reach the real SDKs' headers; provider settings merge field by field in
one place (resolve.settings) that the transports and the doctor share."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers import run, subprocess_env
from provider_kits import FRAME, SECRET, AnthropicKit, CodexKit, ResponsesKit

from holon import config, keys
from holon.model.conversation import ProviderFailure, ProviderRequest, UserItem
from holon.providers.doctor import provider_doctor
from holon.providers.resolve import make_provider, settings

ENV_SECRET = "sk-canary-env-fedcba9876543210"


def req(ref: str) -> ProviderRequest:
    return ProviderRequest(
        model_ref=ref, frame=FRAME, conversation=[UserItem(text="hi")], timeout_s=5.0
    )


def write_config(text: str) -> None:
    Path(os.environ["HOLON_HOME"], "config.toml").write_text(text, encoding="utf-8")
    config.reset()


def sent_key(recorded) -> str | None:
    """The key a request carried: `x-api-key`, or the bearer of `authorization` (the SDKs differ
    by version in which one they use)."""
    headers = recorded.headers
    bearer = headers.get("authorization", "")
    return headers.get("x-api-key") or (bearer[7:] if bearer.startswith("Bearer ") else None)


def complete(ref: str):
    return make_provider(ref).complete(req(ref))


def chat_ok(server) -> None:
    server.json(
        {
            "id": "c1",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "ok"},
                    "finish_reason": "stop",
                }
            ],
        }
    )


# -- the key comes from the keys file when the environment has none ------------------------------


def test_openai_sends_the_key_from_the_keys_file(server, monkeypatch):
    keys.set_key("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    server.json(ResponsesKit().text_round())
    assert complete("openai/m").text == "Done."
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"


def test_anthropic_sends_the_key_from_the_keys_file(server, monkeypatch):
    keys.set_key("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.json(AnthropicKit().text_round())
    assert complete("anthropic/m").text == "Done."
    assert sent_key(server.requests[0]) == SECRET


def test_chat_completions_and_codex_send_the_key_from_the_keys_file(server, monkeypatch):
    write_config(f'[providers.openrouter]\nbase_url = "{server.url}/v1"\n')
    keys.set_key("OPENROUTER_API_KEY", SECRET)
    chat_ok(server)
    assert complete("openrouter/m").text == "ok"
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    keys.set_key("OPENAI_CODEX_ACCESS_TOKEN", SECRET)
    monkeypatch.setenv("OPENAI_CODEX_BASE_URL", server.url)
    CodexKit().push_ok(server, ResponsesKit().text_round())
    assert complete("openai-codex/m").text == "Done."
    assert server.requests[1].headers["authorization"] == f"Bearer {SECRET}"


def test_the_environment_wins_over_the_keys_file(server, monkeypatch):
    keys.set_key("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ENV_SECRET)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.json(AnthropicKit().text_round())
    complete("anthropic/m")
    assert sent_key(server.requests[0]) == ENV_SECRET


def test_a_cron_tick_without_secrets_in_its_environment_uses_the_keys_file(server):
    """`holon prompt --no-wait`, then `holon tick` as cron runs it: no key in the environment."""
    assert run("init", "--agent-id", "a").returncode == 0
    r = run("keys", "set", "OPENAI_API_KEY", "-", input=SECRET)
    assert r.returncode == 0, r.stderr
    env = subprocess_env(OPENAI_BASE_URL=server.url + "/v1", HOLON_MODEL="openai/m")
    assert "OPENAI_API_KEY" not in env
    assert run("prompt", "a", "hello", "--no-wait", env=env).returncode == 0
    server.json(ResponsesKit().text_round())
    r = run("tick", "a", env=env)
    assert r.returncode == 0, r.stderr
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    home = Path(os.environ["HOLON_HOME"])
    for path in home.rglob("*"):
        if path.is_file() and path.name != "keys.json":
            assert SECRET not in path.read_text(errors="replace"), path


def test_the_printed_cron_line_runs_a_real_provider_with_a_key_from_holon_keys(server, tmp_path):
    """The whole unattended path: `holon schedule cron` pasted verbatim, run under cron's bare
    environment (`env -i`), a provider configured in config.toml, its key only in `holon keys`."""
    import getpass
    import subprocess

    home = Path(os.environ["HOLON_HOME"])
    assert run("init", "--agent-id", "a").returncode == 0
    write_config(f'model = "openai/m"\n[providers.openai]\nbase_url = "{server.url}/v1"\n')
    assert run("keys", "set", "OPENAI_API_KEY", "-", input=SECRET).returncode == 0
    assert run("prompt", "a", "hello", "--no-wait").returncode == 0
    line = run("schedule", "cron").stdout.rstrip("\n")
    command = line.split(" ", 5)[5].rpartition(" # holon tick: HOLON_HOME=")[0]
    server.json(ResponsesKit().text_round())
    user = tmp_path / "user"
    user.mkdir()
    cron_env = [f"HOME={user}", f"LOGNAME={getpass.getuser()}", "PATH=/usr/bin:/bin"]
    proc = subprocess.run(
        ["/usr/bin/env", "-i", *cron_env, "SHELL=/bin/sh", "/bin/sh", "-c", command],
        capture_output=True,
        text=True,
        cwd=user,
        timeout=120,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert sent_key(server.requests[0]) == SECRET
    briefs = [json.loads(ln) for ln in run("briefs", "a", "--jsonl").stdout.splitlines()]
    assert [b["kind"] for b in briefs] == ["result"]
    assert "a: ran" in (home / "logs" / "tick.log").read_text()


# -- settings merge field by field ---------------------------------------------------------------


def test_a_table_with_only_base_url_keeps_the_default_key(server, monkeypatch):
    write_config(f'[providers.openai]\nbase_url = "{server.url}/v1"\n')
    monkeypatch.setenv("OPENAI_API_KEY", ENV_SECRET)
    server.json(ResponsesKit().text_round())
    complete("openai/m")
    assert server.requests[0].headers["authorization"] == f"Bearer {ENV_SECRET}"
    conf = settings("openai")
    assert conf["api_key_env"] == "OPENAI_API_KEY"
    assert conf["sources"] == {
        "transport": "default",
        "base_url": "config",
        "api_key_env": "default",
    }


def test_switching_the_transport_keeps_the_default_key(server, monkeypatch):
    """[providers.openai] through chat completions (a proxy) still sends OPENAI_API_KEY."""
    write_config(
        f'[providers.openai]\ntransport = "openai_chat_completions"\nbase_url = "{server.url}/v1"\n'
    )
    keys.set_key("OPENAI_API_KEY", SECRET)
    chat_ok(server)
    assert complete("openai/m").text == "ok"
    assert server.requests[0].path == "/v1/chat/completions"
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"


def test_the_anthropic_table_overrides_one_field_at_a_time(server, monkeypatch):
    write_config('[providers.anthropic]\napi_key_env = "WORK_ANTHROPIC_KEY"\n')
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)  # base_url still from its default
    monkeypatch.setenv("ANTHROPIC_API_KEY", ENV_SECRET)  # no longer the one read
    keys.set_key("WORK_ANTHROPIC_KEY", SECRET)
    server.json(AnthropicKit().text_round())
    complete("anthropic/m")
    assert sent_key(server.requests[0]) == SECRET
    assert settings("anthropic")["sources"]["base_url"] == "environment"


@pytest.mark.parametrize("kit", [ResponsesKit(), AnthropicKit()], ids=lambda k: k.transport)
def test_an_empty_api_key_env_sends_no_key_at_all(kit, server, monkeypatch):
    write_config(
        f'[providers.local]\ntransport = "{kit.transport}"\nbase_url = "{server.url}/v1"\n'
        'api_key_env = ""\n'
    )
    monkeypatch.setenv("OPENAI_API_KEY", ENV_SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ENV_SECRET)
    kit.push_ok(server, kit.text_round())
    assert complete("local/m").text == "Done."
    headers = server.requests[0].headers
    assert "authorization" not in headers and "x-api-key" not in headers


def test_settings_of_built_in_and_configured_providers(monkeypatch):
    assert {k: settings("openai")[k] for k in ("transport", "base_url", "api_key_env")} == {
        "transport": "openai_responses",
        "base_url": "https://api.openai.com/v1",
        "api_key_env": "OPENAI_API_KEY",
    }
    write_config(
        '[providers.openai]\nbase_url = "http://cfg/v1"\nincremental_responses = true\n'
        '[providers.work]\ntransport = "openai_responses"\napi_key_env = "WORK_KEY"\n'
    )
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env/v1")  # the table's base_url wins over it
    conf = settings("openai")
    assert conf["base_url"] == "http://cfg/v1" and conf["options"] == {
        "incremental_responses": True
    }
    assert make_provider("openai/m").incremental is True
    work = settings("work")  # a configured id starts from its transport's defaults
    assert (work["base_url"], work["api_key_env"], work["builtin"], work["configured"]) == (
        "http://env/v1",
        "WORK_KEY",
        False,
        True,
    )


@pytest.mark.parametrize(
    "table, kind, text",
    [
        ('[providers.x]\nbase_url = "http://h"\n', "unknown_provider", "no transport"),
        ('[providers.x]\ntransport = "grpc"\n', "unknown_provider", "unsupported transport"),
        ("[providers.x]\ntransport = 5\n", "unknown_provider", "unsupported transport"),
        ('[providers.x]\ntransport = "openai_chat_completions"\n', "unknown_provider", "base_url"),
        ('[providers.x]\ntransport = "openai_responses"\nbase_url = 3\n', "invalid_config", "URL"),
        (
            '[providers.x]\ntransport = "openai_responses"\napi_key_env = "A-B"\n',
            "invalid_config",
            "api_key_env",
        ),
    ],
)
def test_a_table_no_turn_can_use_is_a_problem(table, kind, text):
    write_config(table)
    problem = settings("x")["problem"]
    assert problem["kind"] == kind and text in problem["message"] and problem["hint"]
    with pytest.raises(ProviderFailure) as info:
        make_provider("x/m")
    assert info.value.kind == "unsupported_transport"


def test_a_missing_key_names_both_ways_to_set_it():
    with pytest.raises(ProviderFailure) as info:
        complete("deepseek/m")
    failure = info.value
    assert failure.kind == "missing_credentials"
    assert "export DEEPSEEK_API_KEY=..." in failure.message
    assert "holon keys set DEEPSEEK_API_KEY" in failure.message
    assert failure.diagnostics == {"stage": "credentials", "credential_env": "DEEPSEEK_API_KEY"}


# -- provider doctor: where each key comes from, never what it is ---------------------------------


def test_doctor_says_where_each_key_comes_from(monkeypatch):
    keys.set_key("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ENV_SECRET)
    write_config('[providers.openai]\nbase_url = "http://cfg/v1"\n')
    doc = provider_doctor()
    by_id = {p["id"]: p for p in doc["providers"]}
    assert by_id["openai"]["credential_source"] == str(keys.path())
    assert by_id["openai"]["credentials_present"] is True
    assert by_id["openai"]["base_url"] == "http://cfg/v1"
    assert by_id["openai"]["settings_sources"]["api_key_env"] == "default"
    assert by_id["anthropic"]["credential_source"] == "environment"
    assert by_id["deepseek"]["credential_source"] is None
    assert SECRET not in json.dumps(doc) and ENV_SECRET not in json.dumps(doc)


def test_doctor_through_the_entry_point_never_prints_a_value(tmp_path):
    assert run("keys", "set", "OPENAI_API_KEY", "-", input=SECRET).returncode == 0
    codex = tmp_path / "codex"
    codex.mkdir()
    (codex / "auth.json").write_text(json.dumps({"tokens": {"access_token": SECRET}}))
    env = subprocess_env(ANTHROPIC_API_KEY=ENV_SECRET, CODEX_HOME=str(codex))
    human = run("provider", "doctor", env=env)
    as_json = run("provider", "doctor", "--json", env=env)
    assert human.returncode == 0 and as_json.returncode == 0, human.stderr + as_json.stderr
    for text in (human.stdout, human.stderr, as_json.stdout, as_json.stderr):
        assert SECRET not in text and ENV_SECRET not in text
    lines = {ln.split()[0]: ln for ln in human.stdout.splitlines()}
    keys_path = Path(os.environ["HOLON_HOME"]) / "keys.json"
    assert f"OPENAI_API_KEY: present (keys file {keys_path})" in lines["openai"]
    assert "ANTHROPIC_API_KEY: present (environment)" in lines["anthropic"]
    assert "OPENAI_CODEX_ACCESS_TOKEN: present (codex auth file)" in lines["openai-codex"]
    assert "DEEPSEEK_API_KEY: MISSING" in lines["deepseek"]
