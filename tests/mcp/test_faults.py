"""Servers written with the SDK (tests/support/mcp_fault_server.py) that crash, hang, flood,
answer garbage or isError, through real scripted turns: each failure is its own error kind and
the turn goes on. And the server runs confined: scrubbed environment, `.holon/` read-only."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from helpers import REPO, subprocess_env, transcript, wait_for

from holon.store import storedonce

pytestmark = pytest.mark.slow

FAULT = REPO / "tests" / "support" / "mcp_fault_server.py"


def configure(holon_env: Path, mode: str = "ok", **extra: str) -> None:
    holon_env.mkdir(parents=True, exist_ok=True)
    lines = [
        "[mcp_servers.fault]",
        f"command = {json.dumps(sys.executable)}",
        f"args = [{json.dumps(str(FAULT))}, {json.dumps(mode)}]",
        "tool_timeout_s = 3",
        "startup_timeout_s = 20",
        *(f"{k} = {v}" for k, v in extra.items()),
    ]
    (holon_env / "config.toml").write_text("\n".join(lines) + "\n")


def call(tool: str, **arguments) -> dict:
    return {"name": f"mcp__fault__{tool}", "arguments": arguments}


def results(home: Path) -> list[dict]:
    """The tool results, whole again (the ledger keeps a text once, in the receipt)."""
    entries = [storedonce.expand_entry(e) for e in transcript(home) if e["kind"] == "tool_result"]
    return [e["data"] for e in entries]


def test_each_fault_is_its_own_error_and_the_turn_goes_on(holon, holon_env, agent, script):
    configure(holon_env)
    ref = script(
        {"tool_calls": [call("crash"), call("echo", text="back again")]},
        {"tool_calls": [call("hang"), call("huge", chars=20_000_000)]},
        {"tool_calls": [call("garbage"), call("fail", reason="no such thing")]},
        {"tool_calls": [call("huge", chars=100_000), call("image")]},
        {"text": "survived"},
    )
    holon("model", "set", "a", ref)
    done = holon("prompt", "a", "break things", timeout=120)
    assert done.returncode == 0, done.stderr
    assert "survived" in done.stdout
    got = [
        (r["tool_name"].removeprefix("mcp__fault__"), r["envelope"]) for r in results(agent.root)
    ]
    kinds = [(name, (env["error"] or {}).get("kind", env["status"])) for name, env in got]
    assert kinds == [
        ("crash", "mcp_server_unavailable"),
        ("echo", "success"),  # started again after the crash
        ("hang", "tool_timeout"),
        ("huge", "invalid_mcp_response"),  # one message over the 16 MiB line limit
        ("garbage", "invalid_mcp_response"),
        ("fail", "mcp_tool_error"),  # isError
        ("huge", "success"),
        ("image", "success"),
    ]
    envs = dict(got[6:])
    big = envs["huge"]["result"]
    assert big["text_truncated"] and big["text_chars"] == 100_000
    assert Path(big["text_artifact_path"]).read_text() == "x" * 100_000
    pixel = envs["image"]["result"]["content"][1]
    assert pixel["type"] == "image" and pixel["mime_type"] == "image/png"
    assert Path(pixel["artifact_path"]).read_bytes().startswith(b"\x89PNG")
    assert got[0][1]["error"]["details"]["server"] == "fault"
    assert got[2][1]["error"]["retryable"] is True


def test_a_server_that_cannot_start_leaves_the_turn_its_other_tools(
    holon, holon_env, agent, script
):
    configure(holon_env, "exit")
    ref = script({"tool_calls": [{"name": "Sleep", "arguments": {}}]}, {"text": "fine"})
    holon("model", "set", "a", ref)
    done = holon("prompt", "a", "hello", timeout=120)
    assert done.returncode == 0, done.stderr
    assert "fine" in done.stdout
    listed = json.loads(holon("mcp", "list", "--json").stdout)["servers"][0]
    assert listed["status"] == "error"
    assert listed["last_error"]["kind"] == "mcp_server_unavailable"
    assert listed["last_error"]["details"]["exit_status"] == 3
    events = (agent.root / ".holon" / "ledger" / "events.jsonl").read_text()
    assert '"mcp_server_unavailable"' in events
    report = json.loads(holon("doctor", "a", "--json").stdout)
    checks = {f["check"]: f for f in report["agents"][0]["findings"]}
    assert checks["mcp:fault"]["status"] == "error"
    assert checks["mcp:fault"]["kind"] == "mcp_server_unavailable"


def test_the_server_runs_in_the_agents_sandbox(holon, holon_env, agent, script):
    configure(holon_env, env='{ SERVER_OWN = "given" }')
    protected = agent.root / ".holon" / "planted"
    ref = script(
        {
            "tool_calls": [
                call("env", name="FAULT_API_TOKEN"),
                call("env", name="SERVER_OWN"),
                call("write", path=str(protected)),
                call("write", path=str(agent.root / "notes.txt")),
                call("child"),
            ]
        },
        {"text": "checked"},
    )
    holon("model", "set", "a", ref)
    env = subprocess_env(FAULT_API_TOKEN="s3cret-value")
    from helpers import run

    done = run("prompt", "a", "probe", env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    texts = [r["envelope"]["result"]["text"] for r in results(agent.root)]
    assert texts[0] == "<unset>"  # a secret of holon's environment never reaches the server
    assert texts[1] == "given"  # the server's own env table does
    assert texts[2].startswith("refused")
    assert not protected.exists()
    assert texts[3] == "written"
    pid = int(texts[4])  # the server and what it started stopped with the tick

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"

    wait_for(gone, timeout=10)


def test_a_schema_that_cannot_be_strict_is_sent_as_given(holon, holon_env, agent):
    configure(holon_env, "badschema")
    shown = holon("mcp", "tools", "a", "--json")
    assert shown.returncode == 0, shown.stderr
    rows = {t["name"]: t for t in json.loads(shown.stdout)["tools"]}
    assert set(rows) == {"mcp__fault__echo", "mcp__fault__weird_name_with_spaces"}
    assert rows["mcp__fault__echo"]["strict"] is False  # an open map: strict would change it
    assert rows["mcp__fault__weird_name_with_spaces"]["strict"] is True
    assert "non-strict" in holon("mcp", "tools", "a").stdout
