"""A scheduler sandbox for the ops tests: fake `crontab`, `systemctl` and `holon` on PATH.

A file stands in for the crontab and a log for systemctl; HOME and XDG_CONFIG_HOME point into
tmp_path, so no test can touch the real user's crontab, units or launchd plists.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import executable


@pytest.fixture
def sandbox(tmp_path, monkeypatch) -> Path:
    """The bin directory that is the whole PATH (a fake `holon` in it); returns it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    executable(bin_dir / "holon", "#!/bin/sh\nexit 0\n")
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("FAKE_CRONTAB", str(tmp_path / "crontab.txt"))
    monkeypatch.setenv("FAKE_SYSTEMCTL_LOG", str(tmp_path / "systemctl.log"))
    return bin_dir
