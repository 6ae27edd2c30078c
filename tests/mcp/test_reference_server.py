"""The issue's check, through the real `holon` entry point: a reference MCP server nobody here
wrote (mcp-server-time, from PyPI) configured in config.toml as a user would, beside a server
that cannot start."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from helpers import transcript

from holon.store import storedonce

pytestmark = pytest.mark.slow

TIME_SERVER = shutil.which("mcp-server-time") or str(
    Path(sys.executable).parent / "mcp-server-time"
)


def _configure(holon_env: Path) -> None:
    holon_env.mkdir(parents=True, exist_ok=True)
    (holon_env / "config.toml").write_text(
        "[mcp_servers.time]\n"
        f'command = "{TIME_SERVER}"\n'
        'args = ["--local-timezone", "UTC"]\n'
        "\n"
        "[mcp_servers.gone]\n"
        'command = "/nonexistent/mcp-server"\n'
        "startup_timeout_s = 5\n"
    )


def _results(home: Path) -> dict[str, dict]:
    """Tool name -> envelope, whole again (the ledger keeps a text once, in the receipt)."""
    entries = [storedonce.expand_entry(e) for e in transcript(home) if e["kind"] == "tool_result"]
    return {e["data"]["tool_name"]: e["data"]["envelope"] for e in entries}


def test_time_server_tools_in_a_scripted_turn(holon, holon_env, agent, script):
    _configure(holon_env)
    listed = holon("mcp", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [s["name"] for s in json.loads(listed.stdout)["servers"]] == ["gone", "time"]

    tools = holon("mcp", "tools", "a", "--json")
    assert tools.returncode == 0, tools.stderr
    names = [t["name"] for t in json.loads(tools.stdout)["tools"]]
    assert names == ["mcp__time__get_current_time", "mcp__time__convert_time"]

    listed = {s["name"]: s for s in json.loads(holon("mcp", "list", "--json").stdout)["servers"]}
    assert listed["time"]["status"] == "ok" and listed["time"]["tools"] == 2
    assert listed["gone"]["status"] == "error"
    assert listed["gone"]["last_error"]["kind"] == "mcp_server_unavailable"

    ref = script(
        {
            "tool_calls": [
                {"name": "mcp__time__get_current_time", "arguments": {"timezone": "Asia/Tokyo"}},
                {
                    "name": "mcp__time__convert_time",
                    "arguments": {
                        "source_timezone": "UTC",
                        "time": "12:00",
                        "target_timezone": "Asia/Tokyo",
                    },
                },
            ]
        },
        {"text": "it is late in Tokyo"},
    )
    holon("model", "set", "a", ref)
    done = holon("prompt", "a", "what time is it in Tokyo?")
    assert done.returncode == 0, done.stderr
    assert "it is late in Tokyo" in done.stdout
    results = _results(agent.root)
    now = results["mcp__time__get_current_time"]
    assert now["status"] == "success"
    assert now["result"]["structured_content"]["timezone"] == "Asia/Tokyo"
    assert now["result"]["provenance"]["content_authority"] == "external_evidence"
    converted = results["mcp__time__convert_time"]["result"]["structured_content"]
    assert converted["target"]["datetime"].endswith("21:00:00+09:00")
    assert converted["time_difference"] == "+9.0h"

    called = holon(
        "tool", "call", "a", "mcp__time__get_current_time", "--input", '{"timezone": "UTC"}'
    )
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["result"]["structured_content"]["timezone"] == "UTC"


def test_prompt_cache_key_is_stable_across_debug_prompt_runs(holon, holon_env, agent, script):
    _configure(holon_env)
    holon("model", "set", "a", script({"text": "ok"}))
    keys, tools = [], []
    for _ in range(2):
        shown = holon("debug", "prompt", "a", "--json")
        assert shown.returncode == 0, shown.stderr
        doc = json.loads(shown.stdout)
        keys.append(doc["manifest"]["prompt_cache_key"])
        tools.append([t for t in doc["request"]["tools"] if t.startswith("mcp__")])
    assert keys[0] == keys[1]
    assert tools[0] == tools[1] == ["mcp__time__get_current_time", "mcp__time__convert_time"]


def test_git_server_reads_a_repository_in_a_turn(holon, holon_env, agent, script, tmp_path):
    import subprocess

    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("one\n")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "the first commit"], check=True)
    (repo / "a.txt").write_text("two\n")
    server = shutil.which("mcp-server-git") or str(Path(sys.executable).parent / "mcp-server-git")
    added = holon("mcp", "add", "git", "--", server, "--repository", str(repo))
    assert added.returncode == 0, added.stderr
    ref = script(
        {
            "tool_calls": [
                {"name": "mcp__git__git_status", "arguments": {"repo_path": str(repo)}},
                {"name": "mcp__git__git_log", "arguments": {"repo_path": str(repo)}},
            ]
        },
        {"text": "read it"},
    )
    holon("model", "set", "a", ref)
    done = holon("prompt", "a", "what changed?")
    assert done.returncode == 0, done.stderr
    results = _results(agent.root)
    assert "modified:   a.txt" in results["mcp__git__git_status"]["result"]["text"]
    assert "the first commit" in results["mcp__git__git_log"]["result"]["text"]
