"""holon.confined: a file read beneath its root: symlinks only within it, regular files only,
bounded, never blocking; a typed refusal for everything else, never another exception."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from holon import confined


@pytest.fixture
def root(tmp_path):
    r = tmp_path / "root"
    (r / "memory").mkdir(parents=True)
    (r / "CLAUDE.md").write_text("rules\n")
    (tmp_path / "keys.json").write_text('{"OPENAI_API_KEY": "sk-secret"}')
    return r


def refusal(root, rel, **kw) -> confined.Refused:
    with pytest.raises(confined.Refused) as info:
        confined.read(root, rel, 1000, **kw)
    assert info.value.path == os.path.join(root, rel)
    assert info.value.reason in confined.REASONS
    return info.value


def test_a_regular_file_and_relative_links_inside_the_root_are_read(root):
    assert confined.read(root, "CLAUDE.md", 100).text == "rules\n"
    (root / "AGENTS.md").symlink_to("CLAUDE.md")
    assert confined.read(root, "AGENTS.md", 100).text == "rules\n"
    (root / "memory" / "self.md").symlink_to("../CLAUDE.md")  # .. that stays inside
    assert confined.read(root, "memory/self.md", 100).text == "rules\n"
    (root / "mem").symlink_to("memory")  # a directory link inside
    assert confined.read(root, "mem/self.md", 100).text == "rules\n"
    (root / "abs.md").symlink_to(root / "CLAUDE.md")  # absolute, but inside the root
    assert confined.read(root, "abs.md", 100).text == "rules\n"


def test_missing_files_roots_and_directories_are_none(root, tmp_path):
    assert confined.read(root, "AGENTS.md", 100) is None
    assert confined.read(root, "nowhere/AGENTS.md", 100) is None
    assert confined.read(tmp_path / "gone", "AGENTS.md", 100) is None
    (root / "dangling").symlink_to("missing.md")
    assert confined.read(root, "dangling", 100) is None


def test_links_out_of_the_root_are_refused(root, tmp_path):
    (root / "AGENTS.md").symlink_to(tmp_path / "keys.json")
    assert refusal(root, "AGENTS.md").reason == "symlink_escape"
    (root / "memory" / "self.md").symlink_to("../../keys.json")
    assert refusal(root, "memory/self.md").reason == "symlink_escape"
    (root / "hop").symlink_to("memory")
    (root / "memory" / "out").symlink_to("../..")  # a chain whose second link escapes
    assert refusal(root, "hop/out/keys.json").reason == "symlink_escape"
    (root / "env").symlink_to("/proc/self/environ")
    assert refusal(root, "env").reason == "symlink_escape"
    assert refusal(root, "../keys.json").reason == "symlink_escape"


def test_a_symlink_loop_is_refused(root):
    (root / "x").symlink_to("y")
    (root / "y").symlink_to("x")
    assert refusal(root, "x").reason == "symlink_loop"


def test_fifos_devices_and_directories_are_refused_without_blocking(root):
    os.mkfifo(root / "fifo")
    assert refusal(root, "fifo").reason == "not_regular"
    (root / "link").symlink_to("fifo")
    assert "FIFO" in refusal(root, "link").detail
    assert refusal(root, "memory").reason == "not_regular"
    assert refusal(root, "CLAUDE.md/x").reason == "not_regular"
    with pytest.raises(confined.Refused) as info:
        confined.read("/dev", "zero", 10)
    assert info.value.reason == "not_regular"


def test_size_is_bounded_refused_or_truncated(root):
    (root / "big.md").write_bytes(b"x" * 5000)
    assert refusal(root, "big.md").reason == "too_large"
    got = confined.read(root, "big.md", 1000, truncate=True)
    assert got.data == b"x" * 1000 and got.truncated
    exact = confined.read(root, "big.md", 5000)
    assert len(exact.data) == 5000 and not exact.truncated


def test_proc_files_that_report_size_zero_are_still_bounded():
    got = confined.read("/proc/self", "status", 10, truncate=True)
    assert got is not None and len(got.data) == 10 and got.truncated


def test_invalid_utf8_is_replaced(root):
    (root / "bad.md").write_bytes(b"ok \xff\xfe end")
    assert confined.read(root, "bad.md", 100).text == "ok \ufffd\ufffd end"


def test_names_lists_a_directory_inside_the_root_only(root, tmp_path):
    (root / "memory" / "b.md").write_text("b")
    (root / "memory" / "a.md").write_text("a")
    (root / "memory" / ".hidden").write_text("h")
    assert confined.names(root, "memory") == ["a.md", "b.md"]
    assert confined.names(root, "nothing") is None
    (root / "skills").symlink_to(tmp_path)
    with pytest.raises(confined.Refused) as info:
        confined.names(root, "skills")
    assert info.value.reason == "symlink_escape"


def test_a_fifo_in_the_path_never_hangs(root, tmp_path):
    """In a fresh interpreter, with a deadline: reading through FIFOs returns at once."""
    os.mkfifo(root / "memory" / "self.md")
    code = (
        "from holon import confined\n"
        f"for rel in ('memory/self.md', 'memory/self.md/x'):\n"
        "    try:\n"
        f"        confined.read({str(root)!r}, rel, 100)\n"
        "    except confined.Refused as e:\n"
        "        print(e.reason)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=20, env=env
    )
    assert proc.stdout.split() == ["not_regular", "not_regular"], proc.stderr


def test_a_file_swapped_for_a_symlink_after_it_was_looked_at_is_not_followed(
    root, tmp_path, monkeypatch
):
    """The race: lstat saw a regular file (or a directory), then the agent put a symlink there.
    The open itself never follows it (O_NOFOLLOW)."""
    (root / "AGENTS.md").symlink_to(tmp_path / "keys.json")
    (root / "sub").symlink_to(tmp_path)
    real_stat = os.stat
    looks = {"AGENTS.md": real_stat(root / "CLAUDE.md"), "sub": real_stat(root / "memory")}

    def stale_stat(name, *a, **kw):
        return looks.get(name) or real_stat(name, *a, **kw)

    monkeypatch.setattr(confined.os, "stat", stale_stat)
    for rel in ("AGENTS.md", "sub/keys.json"):
        err = refusal(root, rel)
        assert (err.reason, err.detail) == ("unreadable", "changed while it was read")
