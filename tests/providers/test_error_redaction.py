"""A server that echoes the request URL (its query string, its userinfo) or the key in an error
body: no secret reaches any file under HOLON_HOME or the terminal (holon.providers.errors)."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

import pytest
from helpers import run, subprocess_env
from provider_kits import SECRET

from holon import config

QUERY_SECRET = "QSECRET-query-4f2a9c"
PASSWORD = "PWSECRET-77ab31+/="
USER = "opuser-8d1e"
CANARIES = (SECRET, QUERY_SECRET, PASSWORD, quote(PASSWORD, safe=""), USER)


@pytest.mark.parametrize(("provider", "status"), [("openai", 400), ("anthropic", 500)])
def test_a_secret_echoed_in_an_error_body_is_stored_nowhere(server, provider, status):
    home = Path(os.environ["HOLON_HOME"])
    host = server.url.split("://", 1)[1]
    base = f"http://{USER}:{quote(PASSWORD, safe='')}@{host}/v1?deployment={QUERY_SECRET}&v=2"
    (home / "config.toml").write_text(
        f'model = "{provider}/m"\n[providers.{provider}]\nbase_url = "{base}"\n'
    )
    config.reset()

    def echo(rec):
        said = (
            f"no such route {rec.path} (from {base}); upstream {server.url}{rec.path}; "
            f"deployment {QUERY_SECRET}, user {USER} password {PASSWORD}, key {SECRET}"
        )
        return status, {"error": {"message": said, "type": "invalid_request_error"}}

    server.responder = echo
    env = subprocess_env(HOLON_RETRY_BACKOFF_MS="1")
    assert run("init", "--agent-id", "a", env=env).returncode == 0
    key = "OPENAI_API_KEY" if provider == "openai" else "ANTHROPIC_API_KEY"
    assert run("keys", "set", key, "-", input=SECRET, env=env).returncode == 0
    out = [run("prompt", "a", "hello", env=env)]
    assert out[0].returncode != 0 and server.requests  # it failed at the server
    assert any(QUERY_SECRET in r.path for r in server.requests)  # the query was really sent
    out += [run(*args, env=env) for args in (("status", "a", "--json"), ("events", "a"))]
    for proc in out:
        for canary in CANARIES:
            assert canary not in proc.stdout + proc.stderr, (canary, proc.args)
    for path in home.rglob("*"):
        if path.is_file() and path.name not in ("config.toml", "keys.json"):
            data = path.read_bytes()
            for canary in CANARIES:
                assert canary.encode() not in data, (canary, path)
