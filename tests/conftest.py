"""Every test gets its own HOLON_HOME and a clean environment;
`--update-golden` rewrites golden files."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(
    0, str(Path(__file__).resolve().parent / "support")
)  # shared helpers: tests/support/*.py

from helpers import run  # noqa: E402


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden", action="store_true", help="rewrite golden files instead of comparing"
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--update-golden"):
        os.environ["HOLON_UPDATE_GOLDEN"] = "1"


@pytest.fixture(autouse=True)
def holon_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in list(os.environ):
        if key.startswith(("OPENAI_", "ANTHROPIC_", "HOLON_")) and key != "HOLON_UPDATE_GOLDEN":
            monkeypatch.delenv(key, raising=False)
    home = tmp_path / "holon-home"
    monkeypatch.setenv("HOLON_HOME", str(home))
    monkeypatch.setenv("HOLON_RETRY_BACKOFF_MS", "1")
    from holon import config

    config.reset()
    return home


@pytest.fixture
def holon():
    return run


@pytest.fixture
def script(tmp_path: Path):
    """Write a scripted-provider script; returns the model ref."""
    import json

    def make(*rounds: dict, name: str = "script.jsonl") -> str:
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in rounds))
        return f"scripted/{path}"

    return make


@pytest.fixture
def agent(holon_env: Path):
    """A fresh agent home named `a`."""
    from holon.home.init import init_home

    return init_home(None, "a")
