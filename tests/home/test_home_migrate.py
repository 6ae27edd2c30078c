"""holon.home.migrate: a home of format 1 becomes git-friendly (its .gitignore block and
settings.json) on the first command that opens it, keeping the user's .gitignore lines."""

from __future__ import annotations

import json

from helpers import run

from holon.home import migrate
from holon.home.layout import (
    GITIGNORE,
    GITIGNORE_BEGIN,
    GITIGNORE_END,
    HOME_FORMAT,
    merged_gitignore,
)
from holon.store.atomic import read_json, write_json

FORMAT_1_GITIGNORE = """\
# runtime-local files that never belong in git
locks/
queue/tmp/
indexes/
tasks/*/stdin
tasks/*/stdin.fifo
tasks/*/control.sock
*.tmp.*
"""


def test_a_new_gitignore_is_the_block():
    assert merged_gitignore(None) == GITIGNORE
    assert merged_gitignore("") == GITIGNORE
    assert GITIGNORE.splitlines()[0] == GITIGNORE_BEGIN
    assert GITIGNORE.splitlines()[-1] == GITIGNORE_END
    patterns = [line for line in GITIGNORE.splitlines() if not line.startswith("#")]
    for path in ("/state.json", "/queue/", "/tasks/", "/timers/", "/locks/", "/next_due"):
        assert path in patterns
    for tracked in ("settings.json", "agent.json", "ledger", "budget.json", "workspace.json"):
        assert not any(tracked in p for p in patterns), tracked


def test_a_format_1_gitignore_loses_its_holon_lines_and_keeps_the_users():
    assert merged_gitignore(FORMAT_1_GITIGNORE) == GITIGNORE
    mine = FORMAT_1_GITIGNORE + "\n# mine\nnotes-private/\n"
    assert merged_gitignore(mine) == GITIGNORE + "\n# mine\nnotes-private/\n"


def test_the_block_is_replaced_in_place_of_an_older_one_and_user_lines_survive():
    old_block = f"{GITIGNORE_BEGIN}\nlocks/\n{GITIGNORE_END}\n"
    text = "top-line\n" + old_block + "bottom-line\n!keep.me\n"
    merged = merged_gitignore(text)
    assert merged == GITIGNORE + "\ntop-line\nbottom-line\n!keep.me\n"
    assert merged_gitignore(merged) == merged  # a current file is left as it is


def _make_format_1(home) -> None:
    """What `holon init` of home format 1 left, after a pause and `holon model set`."""
    ident = read_json(home.agent_json)
    write_json(home.agent_json, {**ident, "home_format": 1, "migrations": ["m001_initial_layout"]})
    home.gitignore.write_text(FORMAT_1_GITIGNORE + "my-scratch/\n")
    home.settings_json.unlink()
    state = read_json(home.state_json)
    state.pop("settings_basis")
    write_json(home.state_json, {**state, "status": "paused", "model_override": "p/m"})


def test_a_format_1_home_is_upgraded_by_the_next_command(agent):
    _make_format_1(agent)
    r = run("status", "a", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["status"] == "paused"
    ident = read_json(agent.agent_json)
    assert ident["migrations"] == migrate.NAMES
    assert ident["home_format"] == HOME_FORMAT == 2
    assert agent.gitignore.read_text() == GITIGNORE + "\nmy-scratch/\n"
    settings = read_json(agent.settings_json)
    assert settings["lifecycle"] == "paused" and settings["model_override"] == "p/m"
    assert settings["active_workspace_id"] == "agent_home"


def test_migrations_run_once(agent):
    _make_format_1(agent)
    assert migrate.apply_pending(agent) == migrate.NAMES[1:]
    files = (agent.agent_json, agent.gitignore, agent.settings_json)
    before = [p.stat().st_mtime_ns for p in files]
    assert migrate.pending(agent) == []
    assert migrate.apply_pending(agent) == []
    assert run("status", "a").returncode == 0
    assert [p.stat().st_mtime_ns for p in files] == before


def test_a_new_home_records_every_migration(agent):
    assert read_json(agent.agent_json)["migrations"] == migrate.NAMES
    assert migrate.pending(agent) == []
    assert agent.gitignore.read_text() == GITIGNORE


def test_the_upgrade_keeps_an_existing_settings_file(agent):
    _make_format_1(agent)
    write_json(agent.settings_json, {"schema_version": 1, "model_override": "chosen/by-hand"})
    migrate.apply_pending(agent)
    assert read_json(agent.settings_json) == {
        "schema_version": 1,
        "model_override": "chosen/by-hand",
    }


def test_a_corrupt_state_does_not_stop_the_upgrade(agent):
    _make_format_1(agent)
    agent.state_json.write_text("<<<<<<< HEAD\n{}\n=======\n{}\n>>>>>>> other\n")
    assert migrate.apply_pending(agent) == migrate.NAMES[1:]
    assert read_json(agent.settings_json)["lifecycle"] is None


def test_a_corrupt_agent_json_is_named_with_a_hint(agent):
    agent.agent_json.write_text('{"agent_id": "a",\n<<<<<<< HEAD\n')
    r = run("status", str(agent.root))
    assert r.returncode == 1
    first, hint = r.stderr.splitlines()[:2]
    assert first.startswith(f"holon: corrupt_state: {agent.agent_json} is not valid JSON")
    assert hint.startswith("hint: restore it from git")
    assert "Traceback" not in r.stderr


def test_m003_records_the_unsealed_messages_queued_before_it_and_keeps_them(agent):
    _make_format_1(agent)
    agent.queue.ensure()
    agent.queue.put({"id": "msg_old1", "kind": "operator_prompt"}, "normal")
    agent.queue.put({"id": "msg_new1", "kind": "operator_prompt", "seal": "x"}, "normal")
    (agent.queue.new / "0-1-1-ffff.json").write_text("{")  # unreadable: left to the tick
    migrate.apply_pending(agent)
    assert read_json(agent.admission_legacy)["ids"] == ["msg_old1"]
    assert migrate.legacy_ids(agent) == ["msg_old1"]
    migrate.m003_sealed_admission(agent)  # idempotent
    assert migrate.legacy_ids(agent) == ["msg_old1"]
    agent.admission_legacy.write_text("[")
    assert migrate.legacy_ids(agent) == []  # a damaged list admits nothing
