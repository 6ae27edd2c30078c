"""holon.paths: HOLON_HOME (from the environment, else the platform data dir) and its files."""

from __future__ import annotations

import os
from pathlib import Path

from holon import paths


def test_holon_home_env_wins(holon_env):
    assert paths.holon_home() == holon_env
    assert paths.config_path() == holon_env / "config.toml"
    assert paths.agents_dir() == holon_env / "agents"
    assert paths.registry_path() == holon_env / "registry.json"


def test_relative_and_tilde_holon_home_become_absolute(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOLON_HOME", "rel/home")
    assert paths.holon_home() == tmp_path / "rel" / "home"
    assert paths.holon_home().is_absolute()
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("HOLON_HOME", "~/hh")
    assert paths.holon_home() == tmp_path / "user" / "hh"


def test_without_env_uses_the_platform_data_dir(monkeypatch, tmp_path):
    import platformdirs

    monkeypatch.delenv("HOLON_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert paths.holon_home() == Path(platformdirs.user_data_dir("holon", appauthor=False))
    assert paths.holon_home() == tmp_path / "data" / "holon"
    monkeypatch.setenv("HOLON_HOME", "")  # empty counts as unset
    assert paths.agents_dir() == tmp_path / "data" / "holon" / "agents"


def test_nothing_is_created(holon_env):
    paths.holon_home(), paths.config_path(), paths.agents_dir(), paths.registry_path()
    assert not os.path.exists(holon_env)
