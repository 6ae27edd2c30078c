"""Every test gets its own HOLON_HOME and an environment without provider keys or HOLON_* settings."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    for key in list(os.environ):
        if key.startswith(("OPENAI_", "ANTHROPIC_", "HOLON_")) and key != "HOLON_UPDATE_GOLDEN":
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOLON_HOME", str(tmp_path / "holon-home"))
    from holon import config

    config.reset()
    yield
    config.reset()
