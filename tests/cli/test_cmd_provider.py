"""`holon provider doctor`: every provider with transport, endpoint and credential presence (never
the credential's value), configured tables, and the retry policy."""

from __future__ import annotations

import json

import pytest
from cmd_checks import fails, invoke, ok, ok_json

from holon import config
from holon.cli.provider import provider_group

SECRET = "sk-canary-provider-doctor-0123456789"


@pytest.fixture(autouse=True)
def private_home(tmp_path, monkeypatch):
    """No real ~/.codex/auth.json, no CODEX_HOME, no provider keys from the caller's shell."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("CODEX_HOME", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY", "LOCAL_KEY"):
        monkeypatch.delenv(name, raising=False)


def by_id(doc) -> dict:
    return {p["id"]: p for p in doc["providers"]}


def write_config(holon_env, text: str) -> None:
    holon_env.mkdir(parents=True, exist_ok=True)
    (holon_env / "config.toml").write_text(text)
    config.reset()


def test_json_lists_builtins_and_the_retry_policy(monkeypatch):
    monkeypatch.setenv("HOLON_RETRY_BACKOFF_MS", "250")
    doc = ok_json(provider_group, "doctor", "--json")
    providers = by_id(doc)
    for pid in (
        "openai",
        "anthropic",
        "openai-codex",
        "ollama",
        "openrouter",
        "deepseek",
        "scripted",
    ):
        assert providers[pid]["supported"] is True, pid
    assert providers["openai"]["transport"] == "openai_responses"
    assert providers["openai"]["credential_env"] == "OPENAI_API_KEY"
    assert providers["openai"]["credentials_present"] is False
    assert providers["ollama"]["credentials_required"] is False
    policy = doc["retry_policy"]
    assert policy["backoff_base_ms"] == 250 and policy["sdk_retries"] == 0
    assert set(policy["retryable"]) == {"connection", "rate_limited", "server_error", "timeout"}


def test_credential_presence_never_its_value(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    doc = ok_json(provider_group, "doctor", "--json")
    assert by_id(doc)["anthropic"]["credentials_present"] is True
    text = ok(provider_group, "doctor").stdout
    assert SECRET not in text and SECRET not in str(doc)
    line = next(ln for ln in text.splitlines() if ln.startswith("anthropic "))
    assert "ANTHROPIC_API_KEY: present" in line and "anthropic_messages" in line
    openai = next(ln for ln in text.splitlines() if ln.startswith("openai "))
    assert "OPENAI_API_KEY: MISSING" in openai
    assert "no credential needed" in next(
        ln for ln in text.splitlines() if ln.startswith("ollama ")
    )
    assert text.splitlines()[-1].startswith("retry: 2 retries on connection, rate_limited")


def test_configured_tables_and_unsupported_transports(holon_env, monkeypatch):
    write_config(
        holon_env,
        '[providers.local]\ntransport = "openai_chat_completions"\n'
        'base_url = "http://127.0.0.1:9/v1"\napi_key_env = "LOCAL_KEY"\n'
        '[providers.weird]\ntransport = "grpc"\n'
        '[providers.ollama]\nbase_url = "http://10.0.0.1:11434/v1"\n',
    )
    monkeypatch.setenv("LOCAL_KEY", SECRET)
    result = invoke(provider_group, "doctor", "--json")
    assert result.exit_code == 1  # a configured provider cannot be used
    doc = json.loads(result.stdout)
    assert (doc["unusable"], "weird" in doc["in_use"]) == (["weird"], True)
    providers = by_id(doc)
    assert providers["local"]["source"] == "config"
    assert providers["local"]["base_url"] == "http://127.0.0.1:9/v1"
    assert providers["local"]["credentials_present"] is True
    assert providers["weird"]["supported"] is False
    assert providers["weird"]["failure_kind"] == "unsupported_transport"
    assert providers["ollama"]["source"] == "builtin+config"
    assert providers["ollama"]["base_url"] == "http://10.0.0.1:11434/v1"
    result = invoke(provider_group, "doctor")
    text = result.stdout
    assert text.split()[:5] == ["PROVIDER", "TRANSPORT", "STATUS", "CREDENTIAL", "ENDPOINT"]
    assert "unsupported" in next(ln for ln in text.splitlines() if ln.startswith("weird "))
    assert result.stderr.startswith("holon: provider_unusable: weird cannot be used")
    assert SECRET not in text


def test_the_default_models_provider_without_a_key_exits_1(holon_env, monkeypatch):
    monkeypatch.setenv("HOLON_MODEL", "anthropic/claude-sonnet-4-5")
    result = invoke(provider_group, "doctor")
    assert result.exit_code == 1
    row = next(ln for ln in result.stdout.splitlines() if ln.startswith("anthropic "))
    assert row.split()[2:4] == ["no", "key"] and "ANTHROPIC_API_KEY: MISSING" in row
    assert "ok" not in row.split()
    assert "holon keys set ANTHROPIC_API_KEY -" in result.stderr
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    assert invoke(provider_group, "doctor").exit_code == 0


def test_invalid_config_is_a_usage_error(holon_env):
    write_config(holon_env, "[providers\n")
    fails("provider", "doctor", code=2, kind="invalid_config")
