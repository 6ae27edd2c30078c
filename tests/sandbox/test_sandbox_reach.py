"""What a command cannot reach past its sandbox: the processes above it (/proc/<pid>/environ and
mem), the keys file across `holon keys set` and re-creation, and every other agent's files in a
$HOLON_HOME under /tmp (a writable root of every workspace-write agent)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from helpers import subprocess_env, wait_for, write_script
from sandbox_marks import needs_landlock

from holon.agent.handle import Agent
from holon.sandbox import mountns

pytestmark = needs_landlock
needs_mountns = pytest.mark.skipif(not mountns.available(), reason="needs a mount namespace")

# Walks up from the command to PID 1; prints one JSON line per process: its command line and
# what reading its environ and opening its mem gave.
PROBE = r"""
import json, os, re
pid = os.getpid()
while pid > 1:
    row = {"pid": pid}
    try:
        try:
            row["cmdline"] = open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace")
        except OSError as exc:  # a /proc of its own that shows no process it may not read
            row["cmdline"] = row["environ"] = row["mem"] = "absent: " + exc.strerror
            print(json.dumps(row))
            break
        for name in ("environ", "mem"):
            try:
                with open(f"/proc/{pid}/{name}", "rb") as fh:
                    data = fh.read(1 << 20) if name == "environ" else b"opened"
                row[name] = data.decode(errors="replace")
            except OSError as exc:
                row[name] = "denied: " + exc.strerror
        status = open(f"/proc/{pid}/status").read()
        pid = int(re.search(r"PPid:\s+(\d+)", status).group(1))
    except (OSError, AttributeError):
        break
    print(json.dumps(row))
"""


def _keys(holon, tmp_path: Path) -> tuple[str, str, dict]:
    """A key in keys.json and another in the caller's environment: their values, and the env."""
    stored, exported = f"sk-stored-{uuid.uuid4().hex}", f"sk-env-{uuid.uuid4().hex}"
    proc = holon("keys", "set", "ANTHROPIC_API_KEY", "-", input=stored)
    assert proc.returncode == 0, proc.stderr
    return stored, exported, subprocess_env(OPENAI_API_KEY=exported)


def _ancestors(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def _holon_rows(rows: list[dict]) -> list[dict]:
    """The holon and pytest processes above the command (not the command's own shells), or the
    first process above it that its /proc does not show."""
    marks = ("-m\0holon", "-m\0pytest", "absent: ")
    return [r for r in rows if any(m in r.get("cmdline", "") for m in marks)]


def _unreadable(row: dict) -> bool:
    return all(row[k].startswith(("denied", "absent")) for k in ("environ", "mem"))


@pytest.mark.parametrize("mode", ["workspace-write", "full-access", "read-only"])
def test_no_ancestor_environ_or_mem_is_readable(home, holon, tmp_path, mode):
    proc = holon("sandbox", "set", str(home), mode, "--network", "deny")
    assert proc.returncode == 0, proc.stderr
    stored, exported, env = _keys(holon, tmp_path)
    (tmp_path / "probe.py").write_text(PROBE)
    args = {"cmd": f"python3 {tmp_path / 'probe.py'}", "login": False}
    proc = holon("tool", "call", str(home), "ExecCommand", "--input", json.dumps(args), env=env)
    assert proc.returncode == 0, proc.stderr
    assert stored not in proc.stdout and exported not in proc.stdout
    rows = _ancestors(json.loads(proc.stdout)["result"]["stdout_preview"])
    above = _holon_rows(rows)
    assert above, rows  # `holon tool call` itself and pytest are among the ancestors
    assert all(_unreadable(row) for row in above), rows
    if os.getuid() == 0:  # a /proc of its own: not even the command line of a holon process
        assert not any("-m\0holon" in row["cmdline"] for row in rows), rows


def test_a_turn_command_reads_no_key_of_the_tick(holon, tmp_path):
    stored, exported, env = _keys(holon, tmp_path)
    proc = holon("init", "--agent-id", "a")
    assert proc.returncode == 0, proc.stderr
    (tmp_path / "probe.py").write_text(PROBE)
    cmd = f"python3 {tmp_path / 'probe.py'}; cat $HOLON_HOME/keys.json"
    model = write_script(
        tmp_path / "s.jsonl",
        [
            {"tool_calls": [{"name": "ExecCommand", "arguments": {"cmd": cmd, "login": False}}]},
            {"text": "done"},
        ],
    )
    proc = holon("prompt", "a", "look around", "--model", model, env=env)
    assert proc.returncode == 0, proc.stderr
    home = Path(os.environ["HOLON_HOME"]) / "agents" / "a"
    everything = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    assert b"environ" in everything  # the probe ran and reported
    assert stored.encode() not in everything and exported.encode() not in everything


def _background(holon, home: Path, cmd: str) -> str:
    args = {"cmd": cmd, "login": False, "yield_time_ms": 50}
    proc = holon("tool", "call", str(home), "ExecCommand", "--input", json.dumps(args))
    result = json.loads(proc.stdout)["result"]
    assert result["disposition"] == "promoted_to_task", result
    return result["task_handle"]["task_id"]


@needs_mountns
def test_keys_stay_hidden_from_a_running_task_across_set_and_recreation(home, holon, tmp_path):
    keys = Path(os.environ["HOLON_HOME"]) / "keys.json"
    shared = tmp_path / "shared"
    shared.mkdir()
    holon("keys", "set", "OPENAI_API_KEY", "-", input="sk-first")
    # each step waits for the test's go file, then copies what it sees of keys.json
    cmd = (
        f"for s in 1 2 3; do while [ ! -e {shared}/go$s ]; do sleep 0.02; done; "
        f"cat {keys} > {shared}/out$s 2>&1; touch {shared}/done$s; done"
    )
    task_id = _background(holon, home, cmd)
    values = ["sk-rotated-" + uuid.uuid4().hex, "sk-recreated-" + uuid.uuid4().hex]
    holon("keys", "set", "OPENAI_API_KEY", "-", input=values[0])  # rename over the old file
    (shared / "go1").touch()
    wait_for(lambda: (shared / "done1").exists(), timeout=20)
    keys.unlink()
    holon("keys", "set", "ANTHROPIC_API_KEY", "-", input=values[1])  # a new file, a new inode
    (shared / "go2").touch()
    wait_for(lambda: (shared / "done2").exists(), timeout=20)
    shutil.copy(keys, tmp_path / "k")
    keys.unlink()
    os.rename(tmp_path / "k", keys)  # moved in from elsewhere
    (shared / "go3").touch()
    wait_for(lambda: (shared / "done3").exists(), timeout=20)
    for step in ("out1", "out2", "out3"):
        seen = (shared / step).read_text()
        assert "sk-" not in seen and "No such file" in seen, (step, seen)
    assert task_id


def _agents(holon, *ids: str) -> dict[str, Path]:
    out = {}
    for agent in ids:
        proc = holon("init", "--agent-id", agent)
        assert proc.returncode == 0, proc.stderr
        out[agent] = Path(os.environ["HOLON_HOME"]) / "agents" / agent
    proc = holon("enqueue", "b", "--kind", "channel_event", "--text", "hi")
    assert proc.returncode == 0, proc.stderr  # b has an admission key now
    return out


@needs_mountns
@pytest.mark.parametrize("mode", ["workspace-write", "full-access"])
def test_an_agent_reaches_nothing_of_another_under_tmp(holon, tmp_path, call, mode):
    hh = Path(os.environ["HOLON_HOME"])
    assert str(hh).startswith("/tmp/")  # beneath a writable root of every workspace-write agent
    homes = _agents(holon, "a", "b")
    holon("keys", "set", "OPENAI_API_KEY", "-", input="sk-in-keys-file")
    (hh / "config.toml").write_text("# operator config\n")
    proc = holon("sandbox", "set", "a", mode, "--network", "deny")
    assert proc.returncode == 0, proc.stderr
    b = homes["b"]
    key = (b / ".holon/admission.key").read_text()
    before = {p: p.read_bytes() for p in b.rglob("*") if p.is_file()}
    attempts = [
        f"cat {b}/.holon/admission.key",
        f"cat {hh}/keys.json {hh}/registry.json {hh}/config.toml",
        f"echo '{{}}' > {b}/.holon/queue/new/forged.json",
        f"echo x >> {b}/AGENTS.md",
        f"mkdir -p {b}/notes && echo x > {b}/notes/planted.md",
        f"ls -la {hh} {hh}/agents",
    ]
    code, env = call(homes["a"], "ExecCommand", {"cmd": "; ".join(attempts), "login": False})
    result = env["result"]
    out = result["stdout_preview"] + result["stderr_preview"]
    assert key.strip() not in out and "sk-in-keys-file" not in out and "schema_version" not in out
    assert (
        "operator config" not in out and " b\n" not in out and " b" not in out.split("agents:")[-1]
    )
    after = {p: p.read_bytes() for p in b.rglob("*") if p.is_file()}
    assert after == before
    # its own home is still there, writable, with a read-only .holon
    code, env = call(homes["a"], "ExecCommand", {"cmd": "echo y > mine.txt; echo z > .holon/z"})
    assert (homes["a"] / "mine.txt").read_text() == "y\n" and not (homes["a"] / ".holon/z").exists()


@needs_mountns
@pytest.mark.parametrize("outside", [False, True])
def test_a_private_child_reads_no_admission_key_above_it(holon, tmp_path, call, outside):
    where = [str(tmp_path / "p-home")] if outside else []  # the parent outside $HOLON_HOME too
    proc = holon("init", *where, "--agent-id", "p")
    assert proc.returncode == 0, proc.stderr
    parent = Path(where[0]) if outside else Path(os.environ["HOLON_HOME"]) / "agents" / "p"
    spawn = {"tool_calls": [{"name": "SpawnAgent", "arguments": {"initial_message": "count"}}]}
    holon("model", "set", "p", write_script(tmp_path / "p.jsonl", [spawn, {"text": "ok"}]))
    proc = holon("prompt", "p", "delegate")
    assert proc.returncode == 0, proc.stderr
    (child,) = [p for p in (parent / ".holon/children").iterdir() if p.is_dir()]
    sibling = parent / ".holon/children/p.c-sibling"  # another child of p, made later
    (sibling / ".holon").mkdir(parents=True)
    (sibling / ".holon/admission.key").write_text("sibling-key-" + uuid.uuid4().hex)
    keys = [(parent / ".holon/admission.key").read_text().strip()]
    keys.append((sibling / ".holon/admission.key").read_text())
    cmd = (
        f"cat {parent}/.holon/admission.key ../../admission.key {sibling}/.holon/admission.key; "
        "echo x > ../../queue/new/f"
    )
    code, env = call(child, "ExecCommand", {"cmd": cmd, "login": False})
    out = env["result"]["stdout_preview"] + env["result"]["stderr_preview"]
    assert not any(k in out for k in keys) and env["result"]["exit_status"] != 0
    assert not (parent / ".holon/queue/new/f").exists()
    cmd = f"echo mine > {child}/notes.txt"  # it works in p's workspace; its home is its own
    code, env = call(child, "ExecCommand", {"cmd": cmd, "login": False})
    assert (child / "notes.txt").read_text() == "mine\n", env


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def test_an_unprivileged_user_reads_no_ancestor_and_no_other_agent(tmp_path):
    if os.getuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root to switch to another user with setpriv")
    base = Path("/tmp") / f"holon-nobody-reach-{uuid.uuid4().hex}"
    base.mkdir()
    os.chmod(base, 0o777)
    (base / "probe.py").write_text(PROBE)
    repo = str(Path(__file__).resolve().parents[2])
    env = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": repo,
        "HOLON_HOME": str(base / "hh"),
        "HOME": str(base),
        "OPENAI_API_KEY": "sk-nobody-secret",
    }
    try:
        if subprocess.run([*NOBODY, sys.executable, "-c", "1"], capture_output=True).returncode:
            pytest.skip("the interpreter is not usable by another user here")

        def holon(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run(
                [*NOBODY, sys.executable, "-m", "holon", *args],
                capture_output=True,
                text=True,
                env=env,
                cwd=str(base),
                timeout=60,
            )

        for agent in ("a", "b"):
            assert holon("init", "--agent-id", agent).returncode == 0
        assert holon("enqueue", "b", "--kind", "channel_event", "--text", "hi").returncode == 0
        key = (base / "hh/agents/b/.holon/admission.key").read_text().strip()
        cmd = f"python3 {base}/probe.py; cat {base}/hh/agents/b/.holon/admission.key"
        args = json.dumps({"cmd": cmd, "login": False})
        proc = holon("tool", "call", "a", "ExecCommand", "--input", args)
        assert proc.returncode == 0, proc.stderr
        assert key not in proc.stdout and "sk-nobody-secret" not in proc.stdout
        rows = _ancestors(json.loads(proc.stdout)["result"]["stdout_preview"])
        tool = _holon_rows(rows)
        assert tool and all(_unreadable(r) for r in tool), rows
    finally:
        shutil.rmtree(base, ignore_errors=True)


@needs_mountns
def test_a_holon_run_agent_is_out_of_other_agents_reach(holon, tmp_path, call, script):
    homes = _agents(holon, "a", "b")
    proc = holon("run", "go", "--keep", "--json", "--model", script({"text": "ran"}))
    assert proc.returncode == 0, proc.stderr
    run_home = Path(json.loads(proc.stdout)["home"])
    key = (run_home / ".holon/admission.key").read_text().strip()
    cmd = f"cat {run_home}/.holon/admission.key; echo x > {run_home}/.holon/queue/new/f"
    code, env = call(homes["a"], "ExecCommand", {"cmd": cmd, "login": False})
    out = env["result"]["stdout_preview"] + env["result"]["stderr_preview"]
    assert key not in out and not (run_home / ".holon/queue/new/f").exists()


def test_without_a_mount_namespace_no_other_agent_is_writable(holon, monkeypatch):
    homes = _agents(holon, "a", "b")
    monkeypatch.setattr(mountns, "_available", False)
    from holon.home.layout import Home
    from holon.sandbox import confine
    from holon.tasks.command import command

    a, b = Home(homes["a"]), homes["b"]
    cmd = f"echo x > {b}/.holon/queue/new/f; echo planted-by-a > {b}/AGENTS.md; echo n > notes/n.md"
    spec = command.CommandSpec(cmd, a.root, "/bin/sh", False, False, False, 5000, a.root)
    fin = command.run(Agent(a), spec)
    assert fin.stderr.count("Permission denied") == 2, fin.stderr
    assert (
        not (b / ".holon/queue/new/f").exists()
        and "planted-by-a" not in (b / "AGENTS.md").read_text()
    )
    assert (a.root / "notes/n.md").read_text() == "n\n"  # its own home stays writable
    doc = confine.describe(a)
    assert doc["enforcement"] == "landlock" and doc["hidden"] == []


@needs_mountns
@pytest.mark.skipif(os.getuid() != 0, reason="only root may read a disk's device node")
def test_root_reads_no_disk_beneath_the_hidden_files(home, call):
    from holon.sandbox import places

    disks = [d for d in places.block_devices() if _readable(d)]
    if not disks:
        pytest.skip("no disk device this process can read (a VM may refuse even root)")
    cmd = "; ".join(f"head -c 4096 {d} | wc -c" for d in disks)
    code, env = call(home, "ExecCommand", {"cmd": cmd, "login": False})
    assert env["result"]["stdout_preview"].split() == ["0"] * len(disks)


def _readable(device: str) -> bool:
    try:
        with open(device, "rb") as fh:
            return len(fh.read(1)) == 1
    except OSError:
        return False


@needs_mountns
def test_a_writable_root_in_another_agents_home_shows_nothing_of_it(holon, call):
    homes = _agents(holon, "a", "b")
    b = homes["b"]
    proc = holon("sandbox", "set", "a", "workspace-write", "--writable-root", str(b))
    assert proc.returncode == 0, proc.stderr
    key = (b / ".holon/admission.key").read_text().strip()
    cmd = f"cat {b}/.holon/admission.key; echo x > {b}/.holon/queue/new/f; echo x > {b}/p.txt"
    code, env = call(homes["a"], "ExecCommand", {"cmd": cmd, "login": False})
    assert key not in json.dumps(env)
    assert not (b / ".holon/queue/new/f").exists() and not (b / "p.txt").exists()


@needs_mountns
def test_the_codex_sign_in_is_hidden(home, holon, tmp_path):
    codex = tmp_path / "codex-home"
    codex.mkdir()
    token = f"codex-token-{uuid.uuid4().hex}"
    (codex / "auth.json").write_text(json.dumps({"tokens": {"access_token": token}}))
    args = {"cmd": f"cat {codex}/auth.json; ls {codex}", "login": False}
    env = subprocess_env(CODEX_HOME=str(codex))
    proc = holon("tool", "call", str(home), "ExecCommand", "--input", json.dumps(args), env=env)
    assert proc.returncode == 0, proc.stderr
    assert (
        token not in proc.stdout
        and "auth.json" in json.loads(proc.stdout)["result"]["stderr_preview"]
    )


@needs_mountns
@pytest.mark.parametrize("mode", ["workspace-write", "full-access"])
def test_an_agent_reaches_nothing_of_another_registered_outside_holon_home(
    holon, tmp_path, call, mode
):
    """`holon init PATH` puts a home anywhere, /tmp included (a writable root of every
    workspace-write agent): its `.holon/` is as far out of another agent's reach as one inside
    $HOLON_HOME, whether it was made before or after that agent's sandbox was set."""
    b = tmp_path / "elsewhere" / "b"
    proc = holon("init", str(b), "--agent-id", "b")
    assert proc.returncode == 0, proc.stderr
    homes = _agents(holon, "a")  # and b gets its admission key
    assert holon("sandbox", "set", "a", mode, "--network", "deny").returncode == 0
    key = (b / ".holon/admission.key").read_text().strip()
    before = {p: p.read_bytes() for p in (b / ".holon").rglob("*") if p.is_file()}
    attempts = [
        f"cat {b}/.holon/admission.key",
        f"echo '{{}}' > {b}/.holon/queue/new/forged.json",
        f"ls -la {b}/.holon",
    ]
    code, env = call(homes["a"], "ExecCommand", {"cmd": "; ".join(attempts), "login": False})
    out = env["result"]["stdout_preview"] + env["result"]["stderr_preview"]
    assert key not in out and "ledger" not in out and "sandbox.json" not in out, out
    after = {p: p.read_bytes() for p in (b / ".holon").rglob("*") if p.is_file()}
    assert after == before
    assert not (b / ".holon/queue/new/forged.json").exists()
    # its own files outside .holon stay as the sandbox mode has them: readable
    code, env = call(homes["a"], "ExecCommand", {"cmd": f"cat {b}/AGENTS.md", "login": False})
    assert env["result"]["exit_status"] == 0, env
