"""holon.home.layout: every path of a home lives under its root; a Home is a path-like."""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path

import pytest

from holon.errors import InvalidInput
from holon.home.layout import DOT, GITIGNORE, Home, is_home
from holon.store.atomic import write_json


def _path_attributes(home: Home) -> dict[str, Path]:
    out = {}
    for name, attr in vars(Home).items():
        if isinstance(attr, (property, cached_property)) and name not in ("agent_id", "root"):
            value = getattr(home, name)
            if isinstance(value, Path):
                out[name] = value
    return out


def test_every_path_is_under_the_root(tmp_path):
    home = Home(tmp_path / "h", "h")
    attrs = _path_attributes(home)
    assert len(attrs) >= 30  # the layout is large; make sure we saw it
    for name, path in attrs.items():
        assert path.is_absolute(), name
        assert path.is_relative_to(home.root) and path != home.root, name
    assert home.task_dir("task_1").is_relative_to(home.tasks)
    assert home.plan_path("wi_1") == home.root / "work-items" / "wi_1" / "plan.md"
    assert home.queue.root.is_relative_to(home.dot)
    assert len(set(attrs.values())) == len(attrs)  # no two names share a path


def test_runtime_files_live_in_dot_dir(tmp_path):
    home = Home(tmp_path)
    assert home.dot == tmp_path / DOT
    for name in ("agent_json", "state_json", "ledger", "messages", "events", "locks", "queue"):
        value = getattr(home, name)
        path = value.root if name == "queue" else value
        assert path.is_relative_to(home.dot), name
    for name in ("agents_md", "memory", "skills", "work_items_dir"):
        assert not getattr(home, name).is_relative_to(home.dot), name


def test_construction_creates_nothing(tmp_path):
    home = Home(tmp_path / "h")
    _path_attributes(home)
    assert not (tmp_path / "h").exists()
    assert not home.exists()


def test_is_home(tmp_path):
    assert not is_home(tmp_path)
    assert not is_home(tmp_path / "missing")
    (tmp_path / DOT / "agent.json").mkdir(parents=True)
    assert not is_home(tmp_path)  # a directory named agent.json is no home
    other = tmp_path / "other"
    write_json_path = other / DOT / "agent.json"
    write_json_path.parent.mkdir(parents=True)
    write_json(write_json_path, {"agent_id": "x"})
    assert is_home(other) and is_home(str(other)) and Home(other).exists()


def test_home_is_path_like(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    home = Home("rel")
    assert home.root == tmp_path / "rel"
    assert os.fspath(home) == str(home) == str(tmp_path / "rel")
    assert Path(home) == home.root
    assert os.path.join(home, "AGENTS.md") == str(home.agents_md)
    assert repr(home) == f"Home({str(tmp_path / 'rel')!r})"


def test_agent_id_from_agent_json_else_dir_name(tmp_path):
    home = Home(tmp_path / "dirname")
    assert home.agent_id == "dirname"
    assert Home(tmp_path / "x", "given").agent_id == "given"
    other = tmp_path / "y"
    (other / DOT).mkdir(parents=True)
    write_json(other / DOT / "agent.json", {"agent_id": "from-json"})
    assert Home(other).agent_id == "from-json"


def test_ensure_dirs_and_real_home(agent):
    assert agent.exists() and is_home(agent)
    for d in (
        agent.ledger,
        agent.tasks,
        agent.timers,
        agent.artifacts,
        agent.indexes,
        agent.locks,
        agent.queue.tmp,
        agent.queue.new,
        agent.queue.cur,
        agent.queue.dead,
    ):
        assert d.is_dir(), d
    assert (agent.dot / ".gitignore").read_text() == GITIGNORE
    agent.ensure_dirs()  # idempotent


@pytest.mark.parametrize("bad", ["../agent", "..", ".", "a/b", "", "/etc", "a\0b", None])
def test_an_id_is_one_checked_path_segment(tmp_path, bad):
    home = Home(tmp_path / "a")
    for make in (home.task_dir, home.scratch_dir, home.plan_path):
        with pytest.raises(InvalidInput) as info:
            make(bad)
        assert info.value.kind == "invalid_id"
    assert home.task_dir("task_1").parent == home.tasks
    assert home.task_dir("any name a directory may have").parent == home.tasks
    assert home.plan_path("wi_1") == home.work_items_dir / "wi_1" / "plan.md"
