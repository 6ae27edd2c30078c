"""ApplyPatch under concurrent writers: holon writers serialise and lose no edit; a change by any
other writer between ApplyPatch's read and its replace is refused as `file_changed`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import subprocess_env

from holon.agent.handle import Agent
from holon.home.init import init_home
from holon.home.layout import Home
from holon.patch import commit as patch_commit
from holon.tools.base import ToolContext
from holon.tools.registry import call

SLOTS = 60
DRIVER = r"""
import json, os, sys, time
from pathlib import Path
from holon.agent.handle import Agent
from holon.home.layout import Home
from holon.tools.base import ToolContext
from holon.tools.registry import call

home, root, go, slots = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4:]
ctx = ToolContext(agent=Agent(Home(home)), execution_root=root, cwd=root)
while not os.path.exists(go):
    time.sleep(0.001)
out = {}
for i in map(int, slots):
    patch = f"--- a/f.txt\n+++ b/f.txt\n@@ -{i + 1} +{i + 1} @@\n-slot {i}\n+slot {i} edited\n"
    env = call(ctx, "ApplyPatch", {"patch": patch}).envelope
    out[i] = env["status"] if env["status"] == "success" else env["error"]["kind"]
print(json.dumps(out))
"""


def slots_file(root: Path) -> Path:
    path = root / "f.txt"
    path.write_text("".join(f"slot {i}\n" for i in range(SLOTS)))
    return path


def test_twenty_processes_of_two_agents_lose_no_edit(holon_env, tmp_path):
    """Two agents patch one shared directory from 20 processes at once, 3 edits each: every
    reported success is in the file (and, holon writers being serialised, every edit succeeds)."""
    homes = [init_home(None, name).root for name in ("a", "b")]
    shared = tmp_path / "shared"
    shared.mkdir()
    target = slots_file(shared)
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", DRIVER, str(homes[n % 2]), str(shared), str(go)]
            + [str(n + 20 * k) for k in range(3)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=subprocess_env(),
        )
        for n in range(20)
    ]
    time.sleep(1.0)  # let them import; then start them together
    go.touch()
    results: dict[int, str] = {}
    outcomes = [proc.communicate(timeout=120) + (proc.returncode,) for proc in procs]
    for out, err, code in outcomes:
        assert code == 0, err
        results.update({int(k): v for k, v in json.loads(out).items()})
    lines = target.read_text().splitlines()
    lost = [i for i, status in results.items() if status == "success" and "edited" not in lines[i]]
    assert lost == [], f"reported applied but lost: {lost}"
    assert sorted(results) == list(range(SLOTS))
    assert set(results.values()) == {"success"}, results
    assert lines == [f"slot {i} edited" for i in range(SLOTS)]
    assert not [p for p in shared.iterdir() if ".tmp." in p.name]
    assert all(os.listdir(Home(h).patches) == [] for h in homes)


def test_concurrent_cli_calls_lose_no_edit(holon_env, tmp_path):
    """The same through `holon tool call`, each process one edit."""
    home = Path(init_home(None, "a").root)
    target = slots_file(home)
    procs = []
    for i in range(8):
        patch = f"--- a/f.txt\n+++ b/f.txt\n@@ -{i + 1} +{i + 1} @@\n-slot {i}\n+slot {i} edited\n"
        args = ["tool", "call", "a", "ApplyPatch", "--input", json.dumps({"patch": patch})]
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "holon", *args],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=subprocess_env(),
            )
        )
    outcomes = [proc.communicate(timeout=120) + (proc.returncode,) for proc in procs]
    for out, err, code in outcomes:
        assert code == 0 and json.loads(out)["status"] == "success", (code, out, err)
    lines = target.read_text().splitlines()
    assert lines[:8] == [f"slot {i} edited" for i in range(8)] and lines[8] == "slot 8"


@pytest.fixture
def ctx(agent):
    home = Home(agent.root)
    return ToolContext(agent=Agent(home), execution_root=home.root, cwd=home.root)


def external_write_during_staging(monkeypatch, action):
    """Run `action` (another writer: an editor, a command) right after ApplyPatch staged its
    files, i.e. between its read and its replace."""
    real = patch_commit.stage_bytes
    done = []

    def stage_then_interfere(path, data, *, mode=None):
        tmp = real(path, data, mode=mode)
        if not done:
            done.append(path)
            action()
        return tmp

    monkeypatch.setattr(patch_commit, "stage_bytes", stage_then_interfere)


def no_temp_files(root: Path) -> bool:
    return not [n for _, _, names in os.walk(root) for n in names if ".tmp." in n]


MODIFY = "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+A\n"
ADD = "--- /dev/null\n+++ b/new/n.txt\n@@ -0,0 +1 @@\n+n\n"
DELETE = "--- a/g.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-g\n"


@pytest.mark.parametrize(
    "interfere, path, what",
    [
        (lambda r: (r / "f.txt").write_text("a\nthe editor's line\n"), "f.txt", "was modified"),
        (lambda r: (r / "f.txt").chmod(0o600), "f.txt", "changed mode"),
        (lambda r: (r / "g.txt").write_text("g\nmore\n"), "g.txt", "was modified"),
        (lambda r: (r / "g.txt").unlink(), "g.txt", "was deleted or replaced by a non-file"),
        (lambda r: (r / "new/n.txt").write_text("theirs\n"), "new/n.txt", "was created"),
    ],
)
def test_a_change_between_read_and_replace_is_file_changed(ctx, monkeypatch, interfere, path, what):
    root = ctx.execution_root
    (root / "f.txt").write_text("a\n")
    (root / "g.txt").write_text("g\n")
    (root / "new").mkdir()
    external_write_during_staging(monkeypatch, lambda: interfere(root))
    env = call(ctx, "ApplyPatch", {"patch": MODIFY + ADD + DELETE}).envelope
    assert env["status"] == "error" and env["error"]["kind"] == "file_changed", env
    assert env["error"]["message"] == (
        f"{path}: {what} by another writer after ApplyPatch read it; nothing was changed"
    )
    assert "Re-read the file" in env["error"]["recovery_hint"]
    assert env["error"]["details"] == {"path": path}
    # nothing of the patch was applied, and the other writer's change is kept
    assert (root / "f.txt").read_text() in ("a\n", "a\nthe editor's line\n")
    assert not (root / "g.txt").exists() or (root / "g.txt").read_text() in ("g\n", "g\nmore\n")
    assert not (root / "new/n.txt").exists() or (root / "new/n.txt").read_text() == "theirs\n"
    assert no_temp_files(root) and os.listdir(ctx.home.patches) == []
