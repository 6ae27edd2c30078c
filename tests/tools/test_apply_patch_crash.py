"""A multi-file ApplyPatch killed at every durable step: after recovery the files are all old
(before the commit mark) or all new (after it), no temp file is left in the tree, and the
journal directory is empty."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from helpers import run, subprocess_env

from holon.home.init import init_home
from holon.home.layout import Home
from holon.patch import journal

PATCH = (
    "--- a/proj/m.txt\n+++ b/proj/m.txt\n@@ -1,2 +1,2 @@\n keep\n-m\n+M\n"
    "--- /dev/null\n+++ b/proj/new/dir/a.txt\n@@ -0,0 +1 @@\n+added\n"
    "--- a/proj/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-d\n"
    "diff --git a/proj/r.txt b/proj/r2.txt\nrename from proj/r.txt\nrename to proj/r2.txt\n"
    "--- a/proj/r.txt\n+++ b/proj/r2.txt\n@@ -1 +1 @@\n-r\n+R\n"
)
OLD = {"m.txt": "keep\nm\n", "d.txt": "d\n", "r.txt": "r\n"}
NEW = {"m.txt": "keep\nM\n", "new/dir/a.txt": "added\n", "r2.txt": "R\n"}


def reset(home: Path) -> Path:
    proj = home / "proj"
    if proj.exists():
        for dirpath, dirnames, filenames in os.walk(proj, topdown=False):
            for name in filenames:
                os.unlink(os.path.join(dirpath, name))
            for name in dirnames:
                os.rmdir(os.path.join(dirpath, name))
    proj.mkdir(exist_ok=True)
    for name, text in OLD.items():
        (proj / name).write_text(text)
    return proj


def tree(proj: Path) -> tuple[dict[str, str], list[str]]:
    """(files with their text, directories) under proj."""
    files, dirs = {}, []
    for dirpath, dirnames, filenames in os.walk(proj):
        dirs += [os.path.relpath(os.path.join(dirpath, d), proj) for d in dirnames]
        for name in filenames:
            path = os.path.join(dirpath, name)
            files[os.path.relpath(path, proj)] = Path(path).read_text()
    return files, sorted(dirs)


def apply_patch(**env: str):
    args = json.dumps({"patch": PATCH})
    return run("tool", "call", "a", "ApplyPatch", "--input", args, env=subprocess_env(**env))


@pytest.fixture
def home(holon_env):
    return Path(init_home(None, "a").root)


def patch_steps(home: Path, tmp_path: Path) -> list[str]:
    """The durable steps named patch.* of one uninterrupted ApplyPatch, in order."""
    reset(home)
    trace = tmp_path / "trace"
    assert apply_patch(HOLON_CRASH_TRACE=str(trace)).returncode == 0
    assert tree(home / "proj")[0] == NEW
    steps = [line.split()[2] for line in trace.read_text().splitlines()]
    return [s for s in steps if s.startswith("patch.")]


def test_crash_at_every_step_is_all_old_or_all_new_after_recovery(home, tmp_path):
    steps = patch_steps(home, tmp_path)
    assert steps.count("patch.replace") == 3 and steps.count("patch.unlink") == 2
    assert steps.count("patch.stage") == 3 and steps.count("patch.mkdir") == 2
    committed_after = steps.index("patch.commit") + 1  # killed at a later step: the mark is durable
    published_after = steps.index("patch.intent.publish") + 1
    jdir = Home(home).patches
    for k in range(1, len(steps) + 1):
        proj = reset(home)
        proc = apply_patch(HOLON_CRASH_AT=f"patch.*:{k}")
        assert proc.returncode == -signal.SIGKILL, (k, steps[k - 1], proc.stderr)
        assert journal.recover(jdir) == (1 if k > published_after else 0), (k, steps[k - 1])
        files, dirs = tree(proj)
        expected = NEW if k > committed_after else OLD
        assert files == expected, (k, steps[k - 1], files)
        assert dirs == (["new", "new/dir"] if expected is NEW else []), (k, dirs)
        assert os.listdir(jdir) == [], (k, steps[k - 1])
        leftovers = [n for _, _, names in os.walk(home) for n in names if ".tmp." in n]
        assert leftovers == [], (k, steps[k - 1])


@pytest.mark.parametrize("spec", ["patch.intent:1:torn", "patch.commit:1:torn"])
def test_a_torn_journal_write_is_rolled_back(home, spec):
    proj = reset(home)
    assert apply_patch(HOLON_CRASH_AT=spec).returncode == -signal.SIGKILL
    journal.recover(Home(home).patches)
    assert tree(proj) == (OLD, []) and os.listdir(Home(home).patches) == []


@pytest.mark.parametrize("spec", ["patch.commit:1:enospc", "patch.stage:2:enospc"])
def test_a_full_disk_while_committing_changes_nothing(home, spec):
    proj = reset(home)
    proc = apply_patch(HOLON_CRASH_AT=spec)
    assert proc.returncode == 1 and json.loads(proc.stdout)["error"]["kind"] == "io_error"
    assert tree(proj) == (OLD, []) and os.listdir(Home(home).patches) == []


def test_the_next_apply_patch_finishes_an_interrupted_one(home):
    proj = reset(home)
    assert apply_patch(HOLON_CRASH_AT="patch.replace:2").returncode == -signal.SIGKILL
    assert len(os.listdir(Home(home).patches)) == 1
    other = "--- /dev/null\n+++ b/other.txt\n@@ -0,0 +1 @@\n+o\n"
    proc = run("tool", "call", "a", "ApplyPatch", "--input", json.dumps({"patch": other}))
    assert proc.returncode == 0, proc.stderr
    assert tree(proj) == (NEW, ["new", "new/dir"]) and os.listdir(Home(home).patches) == []


def test_the_next_tick_finishes_an_interrupted_apply_patch(home):
    proj = reset(home)
    assert apply_patch(HOLON_CRASH_AT="patch.unlink:1").returncode == -signal.SIGKILL
    assert run("tick", "a").returncode == 0
    assert tree(proj) == (NEW, ["new", "new/dir"]) and os.listdir(Home(home).patches) == []
