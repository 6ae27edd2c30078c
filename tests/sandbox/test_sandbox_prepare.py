"""What the parent prepares so that the forked child only makes system calls: the mount plan with
its arguments encoded, and the registry parsed again only when it was replaced (an agent
registered between two commands of one process is hidden from the second)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sandbox_marks import needs_landlock

from holon import paths
from holon.agent.handle import Agent
from holon.home.layout import Home
from holon.sandbox import confine, mountns, places
from holon.sandbox.policy import Policy
from holon.tasks import store
from holon.tasks.command import command


def test_the_mount_plan_holds_every_call_in_order(tmp_path):
    dot = tmp_path / "ws" / ".holon"
    scratch = dot / "scratch" / "t1"
    scratch.mkdir(parents=True)
    secret = dot / "admission.key"
    secret.write_text("k")
    hidden, other = tmp_path / "hh", tmp_path / "other" / ".holon"
    keep = hidden / "agents" / "a"
    keep.mkdir(parents=True)
    other.mkdir(parents=True)
    plan = mountns.plan([str(scratch)], [str(dot)], [str(secret)], [(str(hidden), [str(keep)])])
    bind = mountns.MS_BIND | mountns.MS_REC
    b = os.fsencode
    assert plan.calls[0] == (b(scratch), b(scratch), None, bind, None)
    assert plan.calls[1] == (b(dot), b(dot), None, bind, None)
    source, target, fstype, flags, data = plan.calls[2]
    assert (source, target, fstype, data) == (None, b(dot), None, None)
    ro = mountns.MS_REMOUNT | mountns.MS_BIND | mountns.MS_RDONLY
    assert flags & ro == ro
    # a remount repeats the flags of the mount it lies on (a user namespace may not drop them)
    st = os.statvfs(dot)
    assert bool(flags & mountns.MS_NOSUID) == bool(st.f_flag & os.ST_NOSUID)
    assert bool(flags & mountns.MS_NOEXEC) == bool(st.f_flag & os.ST_NOEXEC)
    assert plan.calls[3] == (b"/dev/null", b(secret), None, mountns.MS_BIND, None)
    assert len(plan.calls) == 4
    assert plan.covers == (mountns.Cover(b(hidden), (b(keep),), (b(hidden / "agents"), b(keep))),)
    assert plan.proc == (os.getuid() == 0)
    empty = mountns.plan([], [], [], [(str(other), [])])
    assert empty.calls == () and empty.covers == (mountns.Cover(b(other), (), ()),)


def test_the_registry_is_parsed_again_only_once_replaced(home, holon, tmp_path, monkeypatch):
    parsed = []
    load = places.registry.load_or_none
    monkeypatch.setattr(places.registry, "load_or_none", lambda: parsed.append(1) or load())
    h, hidden = Home(home), os.path.realpath(paths.holon_home())
    assert places.other_homes(h, hidden) == places.other_homes(h, hidden) == []
    assert len(parsed) == 1
    b = tmp_path / "elsewhere" / "b"
    assert holon("init", str(b), "--agent-id", "b").returncode == 0
    assert places.other_homes(h, hidden) == [os.path.realpath(b / ".holon")]
    assert len(parsed) == 2


@needs_landlock
@pytest.mark.skipif(not mountns.available(), reason="needs a private mount namespace")
def test_an_agent_registered_between_two_commands_is_hidden_from_the_second(
    home, holon, tmp_path: Path
):
    h = Home(home)

    def run(cmd: str) -> command.Finished:
        spec = command.CommandSpec(cmd, home, "/bin/sh", False, False, False, 5000, home)
        return command.run(Agent(h), spec)

    assert run("true").exit_status == 0
    b = tmp_path / "elsewhere" / "b"
    assert holon("init", str(b), "--agent-id", "b").returncode == 0
    assert (b / ".holon" / "agent.json").is_file()
    seen = run(f"ls -A {b}/.holon; cat {b}/.holon/agent.json")
    assert seen.stdout == "" and seen.exit_status != 0, seen


def test_a_path_resolved_from_its_parent_is_what_realpath_says(tmp_path):
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / "sub" / "file").write_text("x")
    (tmp_path / "dirlink").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "up").symlink_to("..")
    (tmp_path / "real" / "sub" / "filelink").symlink_to("file")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere" / "x")
    names = [
        "real/sub/file",
        "dirlink/sub/file",
        "dirlink/up/dirlink/sub",
        "real/sub/filelink",
        "dangling",
        "dangling/deeper",
        "missing/child",
        "real/sub/../sub/file",
        "real/./sub",
    ]
    known: dict[str, str] = {}
    for name in names * 2:  # the second round answers from what the first resolved
        path = os.path.join(tmp_path, name)
        assert places._resolve(known, path) == os.path.realpath(path), name
    assert places._resolve(known, "/") == "/"


@pytest.mark.skipif(not mountns.available(), reason="needs a private mount namespace")
def test_holons_files_under_the_cover_get_no_bind_of_their_own(home, holon_env):
    """$HOLON_HOME in a writable root (here under the temporary directory): its files are out of
    sight beneath the cover, so only the agent's own `.holon/` is bound read-only."""
    h = Home(home)
    hidden = os.path.realpath(holon_env)
    assert (holon_env / "registry.json").is_file()
    roots = places.writable_roots(Policy(), home, h)
    assert any(places.inside(hidden, r) for r in roots)
    scratch = store.make_scratch(h, "task_x")
    ns = confine._namespace(h, roots, places.protected_paths(h), [], hidden, [], str(scratch))
    assert ns is not None
    targets = [os.fsdecode(call[1]) for call in ns.calls]
    assert os.path.realpath(h.dot) in targets
    assert not [t for t in targets if places.inside(t, hidden)], targets
    assert [os.fsdecode(c.target) for c in ns.covers] == [hidden]
