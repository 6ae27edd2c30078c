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


# The `slow` tests: `pytest -m "not slow"` is the quick subset to run while working; CI runs all.
# Whole files, chosen for what they do: many real `holon` processes, tasks that run for seconds,
# crash sweeps, property tests and fuzzing, and the heaviest files of the rest (by --durations), so
# the quick subset stays under 3 minutes. Everything under e2e/ is slow.
SLOW = {
    "agent/test_agent_handle.py",
    "agent/test_ledger_merge.py",
    "agent/test_timer_hostile.py",
    "cli/test_cli_home.py",
    "cli/test_cmd_enqueue_fastpath.py",
    "cli/test_cmd_gc.py",
    "cli/test_cmd_keys.py",
    "cli/test_cmd_run_tasks.py",
    "cli/test_cmd_schedule_e2e.py",
    "cli/test_cmd_tick_homes.py",
    "cli/test_cmd_tick_shard.py",
    "cli/test_cmd_watch.py",
    "cli/test_cmd_workspace.py",
    "cli/test_corrupt_runtime_files.py",
    "cli/test_forged_queue.py",
    "cli/test_fuzz_inputs.py",
    "cli/test_hostile_inputs.py",
    "cli/test_imports_admission.py",
    "cli/test_model_budget.py",
    "cli/test_provenance_render.py",
    "cli/test_provider_url_secrets.py",
    "cli/test_terminal_guard.py",
    "cli/test_trigger_hostile.py",
    "console/test_console_app.py",
    "console/test_console_tmux.py",
    "console/test_console_turns.py",
    "home/test_home_relocate.py",
    "patch/test_apply_patch_corpus.py",
    "patch/test_apply_patch_grammar.py",
    "patch/test_apply_patch_property.py",
    "providers/test_agent_turns.py",
    "providers/test_error_redaction.py",
    "providers/test_long_context.py",
    "providers/test_outage.py",
    "runtime/test_reliability.py",
    "runtime/test_turns.py",
    "runtime/test_watch.py",
    "sandbox/test_sandbox_commands.py",
    "sandbox/test_sandbox_reach.py",
    "store/test_store_durability.py",
    "tasks/test_child_crash.py",
    "tasks/test_child_e2e.py",
    "tasks/test_command_run.py",
    "tasks/test_lineage_limits.py",
    "tasks/test_recovery_identity.py",
    "tasks/test_task_supervisor.py",
    "tasks/test_task_tty.py",
    "tools/test_apply_patch_concurrency.py",
    "tools/test_apply_patch_crash.py",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tests = Path(__file__).resolve().parent
    for item in items:
        try:
            where = item.path.resolve().relative_to(tests).as_posix()
        except ValueError:
            continue
        if where in SLOW or where.startswith("e2e/"):
            item.add_marker(pytest.mark.slow)


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
