"""ApplyPatch's write-ahead journal and directory locks: a committed transaction is finished, an
uncommitted one undone, a live one left alone, a corrupt one set aside; writers serialise."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from holon.patch import commit as patch_commit
from holon.patch import dirlock, journal
from holon.patch.commit import apply
from holon.patch.errors import PatchError
from holon.patch.parser import parse_patch

REPO = Path(__file__).resolve().parents[2]
PATCH = (
    "--- a/m.txt\n+++ b/m.txt\n@@ -1 +1 @@\n-m\n+M\n"
    "--- /dev/null\n+++ b/sub/dir/n.txt\n@@ -0,0 +1 @@\n+n\n"
    "--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-d\n"
)


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "tree"
    root.mkdir()
    for name in "md":
        (root / f"{name}.txt").write_text(f"{name}\n")
    return root.resolve()


def files(root: Path) -> dict[str, str]:
    out = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            out[os.path.relpath(os.path.join(dirpath, name), root)] = Path(
                dirpath, name
            ).read_text()
    return out


OLD = {"m.txt": "m\n", "d.txt": "d\n"}
NEW = {"m.txt": "M\n", "sub/dir/n.txt": "n\n"}


def staged(root: Path, jdir: Path, *, committed: bool, aborted: bool = False) -> Path:
    """A transaction left as a crash would leave it: journal published, temps staged, nothing
    replaced. Returns the journal path."""
    from holon.patch.transaction import plan

    changes = plan(root, root, parse_patch(PATCH))
    writes = [c for c in changes if c.dst is not None]
    record = journal.intent(
        patch_commit._missing_dirs(writes),
        [(journal.temp_path(c.dst), c.dst) for c in writes],
        [c.src for c in changes if c.src is not None],
        patch_commit.lock_dirs(changes),
    )
    tx = journal.Journal.begin(jdir, record)
    patch_commit._stage(writes, record)
    if committed:
        tx.commit()
    if aborted:
        tx.abort()
    os.close(tx.fd)  # the process "dies": its flock goes with it
    return tx.path


def test_recover_rolls_a_committed_transaction_forward(tree, tmp_path):
    jdir = tmp_path / "journal"
    staged(tree, jdir, committed=True)
    assert files(tree) != NEW
    assert journal.recover(jdir) == 1
    assert files(tree) == NEW and os.listdir(jdir) == []
    assert journal.recover(jdir) == 0  # nothing left: idempotent


def test_recover_rolls_an_uncommitted_transaction_back(tree, tmp_path):
    jdir = tmp_path / "journal"
    staged(tree, jdir, committed=False)
    assert any(".tmp." in name for name in files(tree)) and (tree / "sub/dir").is_dir()
    assert journal.recover(jdir) == 1
    assert files(tree) == OLD and not (tree / "sub").exists() and os.listdir(jdir) == []


def test_recover_rolls_an_aborted_transaction_back(tree, tmp_path):
    """A re-check after the commit mark failed and the process died undoing it."""
    jdir = tmp_path / "journal"
    staged(tree, jdir, committed=True, aborted=True)
    assert journal.recover(jdir) == 1
    assert files(tree) == OLD and os.listdir(jdir) == []


def test_recover_keeps_a_rename_source_whose_target_was_taken(tmp_path):
    root = (tmp_path / "tree").resolve()
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    jdir = tmp_path / "journal"
    from holon.patch.transaction import plan

    patch = "diff --git a/a.txt b/b.txt\nrename from a.txt\nrename to b.txt\n"
    changes = plan(root, root, parse_patch(patch))
    record = journal.intent(
        [],
        [(journal.temp_path(c.dst), c.dst) for c in changes],
        [c.src for c in changes],
        patch_commit.lock_dirs(changes),
        {c.src: c.dst for c in changes},
    )
    tx = journal.Journal.begin(jdir, record)
    patch_commit._stage(changes, record)
    tx.commit()
    os.close(tx.fd)
    (root / "b.txt").write_text("someone else's b\n")  # made after the crash
    assert journal.recover(jdir) == 1
    assert files(root) == {"a.txt": "a\n", "b.txt": "someone else's b\n"}


def test_recover_finishes_a_half_done_roll_forward(tree, tmp_path):
    jdir = tmp_path / "journal"
    path = staged(tree, jdir, committed=True)
    record = json.loads(path.read_text().splitlines()[0])
    tmp, dst = record["replace"][0]
    os.replace(tmp, dst)  # the crash came after the first rename
    assert journal.recover(jdir) == 1 and files(tree) == NEW


def test_recover_keeps_an_edit_made_after_the_crash(tree, tmp_path):
    """Rolling forward never overwrites a file another writer changed since the crash."""
    jdir = tmp_path / "journal"
    staged(tree, jdir, committed=True)
    (tree / "m.txt").write_text("edited after the crash\n")
    (tree / "d.txt").unlink()
    (tree / "d.txt").write_text("made anew\n")
    assert journal.recover(jdir) == 1
    assert files(tree) == {
        "m.txt": "edited after the crash\n",
        "d.txt": "made anew\n",
        "sub/dir/n.txt": "n\n",
    }


def test_recover_leaves_a_live_transaction_alone(tree, tmp_path):
    jdir = tmp_path / "journal"
    path = staged(tree, jdir, committed=True)
    fd = os.open(path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # its writer is still running
    try:
        assert journal.recover(jdir) == 0 and path.exists()
    finally:
        os.close(fd)
    assert journal.recover(jdir) == 1 and files(tree) == NEW


def test_unpublished_intent_is_removed(tmp_path):
    jdir = tmp_path / "journal"
    jdir.mkdir()
    (jdir / "x.tmp").write_text('{"schema_ver')  # torn while it was written
    assert journal.recover(jdir) == 0 and os.listdir(jdir) == []


@pytest.mark.parametrize(
    "content",
    [
        "not json\n",
        "[]\n",
        '{"schema_version": 99}\n',
        json.dumps(
            {
                "schema_version": 1,
                "mkdirs": [],
                "unlink": [],
                "locks": [],
                "old": {"/etc/passwd": None},
                "replace": [["/tmp/anything", "/etc/passwd"]],
            }
        ),
        "\x00" * 100,
        "[" * 100_000 + "\n",
        '{"schema_version": 1, "mkdirs": "/", "unlink": [], "locks": [], "old": {}, "replace": []}',
    ],
)
def test_a_corrupt_journal_is_set_aside_never_obeyed(tmp_path, content):
    jdir = tmp_path / "journal"
    jdir.mkdir()
    (jdir / "j.jsonl").write_text(content)
    assert journal.recover(jdir) == 0
    assert os.listdir(jdir) == ["j.jsonl.corrupt"]


def test_recover_without_a_journal_directory_is_nothing(tmp_path):
    assert journal.recover(tmp_path / "missing") == 0
    (tmp_path / "file").write_text("x")
    assert journal.recover(tmp_path / "file") == 0


def test_dirlock_serialises_and_times_out(tmp_path):
    fd = os.open(tmp_path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        start = time.monotonic()
        with pytest.raises(PatchError) as info:
            with dirlock.held([tmp_path], timeout=0.2):
                pass
        assert info.value.kind == "file_busy" and info.value.retryable
        assert time.monotonic() - start >= 0.2
    finally:
        os.close(fd)
    with dirlock.held([tmp_path, tmp_path / ".", tmp_path / "missing"]) as held:
        assert held == dirlock.keys([tmp_path])


def test_a_second_writer_waits_and_applies_to_the_new_content(tree):
    """A writer in another process holds the directory: the ApplyPatch here waits, then plans
    against what that writer left, so both edits survive."""
    (tree / "f.txt").write_text("one\ntwo\n")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            f"fd = os.open({str(tree)!r}, os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('locked', flush=True); time.sleep(0.5)\n"
            f"open({str(tree / 'f.txt')!r}, 'w').write('ONE\\ntwo\\n')\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
    apply(tree, tree, parse_patch("--- a/f.txt\n+++ b/f.txt\n@@ -2 +2 @@\n-two\n+TWO\n"))
    assert holder.wait(10) == 0
    holder.stdout.close()
    assert (tree / "f.txt").read_text() == "ONE\nTWO\n"
