"""A streamable HTTP server on loopback, reached by holon itself with its bearer token from
`holon keys`; without the key the server is unavailable and the turn goes on."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from helpers import REPO, transcript

pytestmark = pytest.mark.slow

FAULT = REPO / "tests" / "support" / "mcp_fault_server.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_server():
    port = free_port()
    env = {**os.environ, "FAULT_TOKEN": "tok-123"}
    proc = subprocess.Popen(
        [sys.executable, str(FAULT), "http", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        assert proc.poll() is None, "the HTTP server died"
        time.sleep(0.05)
    else:
        raise AssertionError("the HTTP server never listened")
    yield f"http://127.0.0.1:{port}/mcp"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def test_http_server_with_a_token_from_holon_keys(holon, holon_env, agent, script, http_server):
    holon_env.mkdir(parents=True, exist_ok=True)
    added = holon("mcp", "add", "web", "--url", http_server, "--bearer-token-env", "WEB_TOKEN")
    assert added.returncode == 0, added.stderr
    missing = holon("mcp", "tools", "a", "--json")
    assert json.loads(missing.stdout)["tools"] == []
    row = json.loads(holon("mcp", "list", "--json").stdout)["servers"][0]
    assert row["transport"] == "http" and row["last_error"]["kind"] == "mcp_server_unavailable"
    assert "WEB_TOKEN" in row["last_error"]["message"]

    stored = holon("keys", "set", "WEB_TOKEN", "-", input="tok-123")
    assert stored.returncode == 0, stored.stderr
    tools = json.loads(holon("mcp", "tools", "a", "--refresh", "--json").stdout)["tools"]
    assert "mcp__web__echo" in [t["name"] for t in tools]
    ref = script(
        {"tool_calls": [{"name": "mcp__web__echo", "arguments": {"text": "over http"}}]},
        {"text": "heard"},
    )
    holon("model", "set", "a", ref)
    done = holon("prompt", "a", "call it")
    assert done.returncode == 0, done.stderr
    result = [e for e in transcript(agent.root) if e["kind"] == "tool_result"][0]["data"]
    assert result["envelope"]["status"] == "success"
    assert result["envelope"]["result"]["text"] == "over http"
    assert "tok-123" not in (agent.root / ".holon" / "ledger" / "transcript.jsonl").read_text()
