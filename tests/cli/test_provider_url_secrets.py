"""Credentials in a provider's base URL (user:password@, a key in the query) are never copied
into the agent's files, the events, the briefs, or what holon prints."""

from __future__ import annotations

import os
from pathlib import Path

from holon.model.conversation import ProviderFailure
from holon.providers import errors

USER_SECRET, QUERY_SECRET = "s3cretUSERpw", "s3cretQUERYkey"
BASE_URL = f"http://user:{USER_SECRET}@127.0.0.1:9/v1?api-key={QUERY_SECRET}"


def leaks(text: str) -> bool:
    return USER_SECRET in text or QUERY_SECRET in text


def test_a_dead_endpoint_with_credentials_in_its_url_leaks_them_nowhere(holon):
    hh = Path(os.environ["HOLON_HOME"])
    assert holon("init", "--agent-id", "a").returncode == 0
    (hh / "config.toml").write_text(
        f'[providers.leaky]\ntransport = "openai_chat_completions"\nbase_url = "{BASE_URL}"\n'
        'api_key_env = ""\n'
    )
    printed = []
    for args in (
        ("prompt", "a", "hello", "--model", "leaky/m"),
        ("tick", "a", "--model", "leaky/m"),
        ("provider", "doctor"),
        ("provider", "doctor", "--json"),
        ("doctor", "a"),
        ("doctor", "a", "--json"),
        ("status", "a"),
        ("status", "a", "--json"),
        ("briefs", "a"),
        ("events", "a", "--jsonl"),
        ("transcript", "a", "--jsonl"),
    ):
        proc = holon(*args)
        printed.append((args, proc.stdout + proc.stderr))
    assert not [args for args, out in printed if leaks(out)]
    doctor = dict(printed)[("provider", "doctor")]
    assert "http://***@127.0.0.1:9/v1?api-key=***" in doctor
    events = (hh / "agents" / "a" / ".holon" / "ledger" / "events.jsonl").read_text()
    assert "provider_attempt_timeline" in events and "***@127.0.0.1" in events  # it did fail
    files = [p for p in hh.rglob("*") if p.is_file() and p.name != "config.toml"]
    assert [p for p in files if leaks(p.read_bytes().decode("utf-8", "replace"))] == []


def test_scrub_redacts_urls_in_the_message_and_every_diagnostic():
    failure = ProviderFailure(
        "connection",
        f"cannot reach {BASE_URL}",
        diagnostics={"url": BASE_URL, "chain": [{"u": BASE_URL}], "n": 3},
    )
    scrubbed = errors.scrub(failure)
    assert not leaks(scrubbed.message) and not leaks(str(scrubbed.diagnostics))
    assert not leaks(str(scrubbed)) and scrubbed.diagnostics["n"] == 3
