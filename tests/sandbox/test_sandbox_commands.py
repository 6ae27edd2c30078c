"""Real commands run by the agent, through `holon tool call`: what each sandbox mode lets them
write, read and connect to."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from pathlib import Path

import pytest
from sandbox_marks import needs_landlock

pytestmark = needs_landlock


def _set(holon, home: Path, *args: str) -> None:
    proc = holon("sandbox", "set", str(home), *args)
    assert proc.returncode == 0, proc.stderr


def test_workspace_write_allows_the_workspace_and_temp_only(home, sh):
    probe = f"holon-sandbox-probe-{uuid.uuid4().hex}"
    outside = Path.home() / probe
    try:
        code, out, _ = sh(home, "echo hi > inside.txt && cat inside.txt && mkdir -p d/e && echo ok")
        assert (code, out) == (0, "hi\nok\n")
        assert (home / "inside.txt").read_text() == "hi\n"
        code, _, err = sh(home, f"echo x > {outside}")
        assert code != 0 and "Permission denied" in err and not outside.exists()
        code, _, err = sh(home, f"echo x > /etc/{probe}")
        assert code != 0 and not Path(f"/etc/{probe}").exists()
        code, out, _ = sh(home, f"echo t > /tmp/{probe} && cat /tmp/{probe}")
        assert (code, out) == (0, "t\n")
    finally:
        for p in (outside, Path(f"/etc/{probe}"), Path(f"/tmp/{probe}")):
            p.unlink(missing_ok=True)


@pytest.mark.parametrize(
    "cmd",
    [
        "echo '{}' > .holon/queue/new/forged.json",
        "cd .holon/queue/new && echo '{}' > forged.json",
        "mv inside.txt .holon/queue/new/forged.json",
        "rm -f .holon/agent.json",
        "ln -s /tmp .holon/queue/new/forged.json",
        "python3 -c \"open('.holon/state.json', 'a').write('x')\"",
    ],
)
def test_the_runtime_state_is_read_only_in_every_mode(home, sh, holon, cmd):
    (home / "inside.txt").write_text("{}\n")
    before = {p: p.read_bytes() for p in (home / ".holon").rglob("*") if p.is_file()}
    for mode in ("workspace-write", "full-access", "read-only"):
        _set(holon, home, mode)
        code, _, _ = sh(home, cmd)
        assert code != 0, mode
        assert list((home / ".holon/queue/new").iterdir()) == [], mode
    after = {p: p.read_bytes() for p in before}
    assert after == before  # sandbox.json aside (written by the operator's `sandbox set`)
    # the commands' scratch directories are gone
    assert not list((home / ".holon/scratch").iterdir())


def test_a_workdir_inside_the_runtime_state_cannot_write_it(home, sh):
    code, _, err = sh(home, "echo x > f", workdir=".holon/queue/new")
    assert code != 0 and not (home / ".holon/queue/new/f").exists()


def test_read_only_writes_nowhere_but_scratch(home, sh, holon):
    _set(holon, home, "read-only")
    code, _, _ = sh(home, "echo x > inside.txt")
    assert code != 0 and not (home / "inside.txt").exists()
    probe = f"/tmp/holon-sandbox-probe-{uuid.uuid4().hex}"
    code, _, _ = sh(home, f"echo x > {probe}")
    assert code != 0 and not os.path.exists(probe)
    code, out, _ = sh(home, 'echo s > "$TMPDIR/s" && cat "$TMPDIR/s" && cat AGENTS.md | head -1')
    assert code == 0 and out.startswith("s\n")


class _Listener:
    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()


def test_network_denied_then_allowed(home, sh, holon):
    listener = _Listener()
    connect = (
        f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {listener.port}), "
        'timeout=5).close(); print(\\"connected\\")"'
    )
    try:
        code, out, err = sh(home, connect)
        assert code != 0 and "Permission denied" in err and listener.accepted == 0
        _set(holon, home, "workspace-write", "--network", "allow")
        code, out, _ = sh(home, connect)
        assert (code, out) == (0, "connected\n")
        assert listener.accepted == 1
    finally:
        listener.sock.close()


def test_a_denied_write_says_sandbox_denied_in_the_receipt(home, call):
    code, env = call(home, "ExecCommand", {"cmd": "echo x > /etc/holon-nope", "login": False})
    denied = env["result"]["sandbox_denied"]
    assert denied["mode"] == "workspace-write" and "sandbox" in denied["hint"]
    proc_render = call(home, "ExecCommand", {"cmd": "false", "login": False})[1]
    assert "sandbox_denied" not in proc_render["result"]  # a plain failure is not blamed on it


def _wait_task(home: Path, task_id: str) -> dict:
    path = home / ".holon/tasks" / task_id / "task.json"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        rec = json.loads(path.read_text()) if path.exists() else {}
        if rec.get("status") not in (None, "running"):
            return rec
        time.sleep(0.05)
    raise AssertionError(f"task {task_id} did not end")


@pytest.mark.parametrize("tty", [False, True])
def test_background_and_tty_tasks_are_confined_the_same_way(home, call, tty):
    probe = f"holon-sandbox-probe-{uuid.uuid4().hex}"
    cmd = (
        "sleep 0.5; echo x > .holon/queue/new/forged.json; echo x > /etc/"
        + probe
        + "; echo y > inside.txt; echo done"
    )
    code, env = call(
        home, "ExecCommand", {"cmd": cmd, "login": False, "tty": tty, "yield_time_ms": 50}
    )
    assert env["result"]["disposition"] == "promoted_to_task"
    rec = _wait_task(home, env["result"]["task_handle"]["task_id"])
    assert rec["status"] == "completed"
    assert (home / "inside.txt").read_text() == "y\n"
    assert not Path("/etc", probe).exists()
    assert [p.name for p in (home / ".holon/queue/new").iterdir() if "forged" in p.name] == []
    scratch = home / ".holon/scratch" / rec["id"]
    deadline = time.monotonic() + 5  # removed right after the terminal record is written
    while scratch.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not scratch.exists()


def test_batch_items_are_confined(home, call):
    code, env = call(
        home,
        "ExecCommandBatch",
        {"commands": [{"cmd": "echo a > a.txt"}, {"cmd": "echo x > .holon/forged"}]},
    )
    items = env["result"]["items"]
    assert [i["exit_status"] for i in items][0] == 0 and items[1]["exit_status"] != 0
    assert (home / "a.txt").exists() and not (home / ".holon/forged").exists()


def test_environment_policy(home, sh, holon):
    env = {
        **os.environ,
        "OPENAI_API_KEY": "sk-secret-1",
        "GH_TOKEN": "ghp-secret-2",
        "MY_DB_PASSWORD": "pw-3",
        "PLAIN_SETTING": "visible",
    }
    from helpers import subprocess_env

    def run_env() -> str:
        proc = holon(
            "tool",
            "call",
            str(home),
            "ExecCommand",
            "--input",
            json.dumps({"cmd": "env", "login": False}),
            env=subprocess_env(**{k: v for k, v in env.items() if k not in os.environ}),
        )
        return json.loads(proc.stdout)["result"]["stdout_preview"]

    out = run_env()
    assert "PLAIN_SETTING=visible" in out
    assert "sk-secret-1" not in out and "ghp-secret-2" not in out and "pw-3" not in out
    assert f"HOLON_AGENT_HOME={home}" in out and "HOLON_SANDBOX=workspace-write,network=deny" in out
    _set(holon, home, "workspace-write", "--pass-env", "GH_TOKEN")
    out = run_env()
    assert "GH_TOKEN=ghp-secret-2" in out and "sk-secret-1" not in out


def test_apply_patch_never_writes_the_runtime_state(home, call, holon):
    forged = "--- /dev/null\n+++ b/.holon/queue/new/forged.json\n@@ -0,0 +1 @@\n+{}\n"
    code, env = call(home, "ApplyPatch", {"patch": forged})
    assert code == 1 and env["error"]["kind"] == "sandbox_denied"
    assert list((home / ".holon/queue/new").iterdir()) == []
    ok = "--- /dev/null\n+++ b/notes/n.md\n@@ -0,0 +1 @@\n+hello\n"
    assert call(home, "ApplyPatch", {"patch": ok})[0] == 0
    _set(holon, home, "read-only")
    edit = "--- a/notes/n.md\n+++ b/notes/n.md\n@@ -1 +1 @@\n-hello\n+bye\n"
    code, env = call(home, "ApplyPatch", {"patch": edit})
    assert (
        env["error"]["kind"] == "sandbox_denied" and (home / "notes/n.md").read_text() == "hello\n"
    )
