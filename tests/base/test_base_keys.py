"""holon.keys: the 0600 keys file, the environment first, errors and reports that never carry a
value."""

from __future__ import annotations

import json
import os
import stat

import pytest

from holon import keys
from holon.errors import UsageError

SECRET = "sk-canary-keys-0123456789abcdef"


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_set_replace_remove_round_trip(holon_env):
    assert keys.path() == holon_env / "keys.json" and keys.names() == []
    keys.set_key("OPENAI_API_KEY", SECRET + "\n")  # a trailing newline from stdin is dropped
    keys.set_key("ANTHROPIC_API_KEY", "other")
    assert mode(keys.path()) == 0o600
    assert keys.names() == ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"]
    assert keys.lookup("OPENAI_API_KEY") == SECRET
    keys.set_key("OPENAI_API_KEY", "replaced")
    assert keys.lookup("OPENAI_API_KEY") == "replaced"
    assert keys.remove("OPENAI_API_KEY") is True and keys.remove("OPENAI_API_KEY") is False
    assert json.loads(keys.path().read_text()) == {"keys": {"ANTHROPIC_API_KEY": "other"}}
    assert [p.name for p in holon_env.iterdir()] == ["keys.json"]  # no temporary file left


def test_a_file_others_could_read_is_rewritten_0600(holon_env):
    holon_env.mkdir()
    keys.path().write_text(json.dumps({"keys": {"A": "1"}}))
    keys.path().chmod(0o644)
    keys.set_key("B", "2")
    assert mode(keys.path()) == 0o600 and keys.names() == ["A", "B"]


def test_the_environment_wins_over_the_file(monkeypatch):
    keys.set_key("OPENAI_API_KEY", "from-file")
    assert keys.source("OPENAI_API_KEY") == str(keys.path())
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    assert keys.lookup("OPENAI_API_KEY") == "from-env"
    assert keys.source("OPENAI_API_KEY") == "environment"
    monkeypatch.setenv("OPENAI_API_KEY", "")  # set but empty: the file still answers
    assert keys.lookup("OPENAI_API_KEY") == "from-file"
    assert keys.lookup("NOT_SET") is None and keys.source("NOT_SET") is None


@pytest.mark.parametrize(
    "text", ["{not json", "[]", json.dumps({"keys": ["a"]}), json.dumps({"other": {}})]
)
def test_a_corrupt_file_is_reported_not_overwritten(holon_env, text):
    holon_env.mkdir()
    keys.path().write_text(text)
    for call in (keys.names, keys.verify, lambda: keys.set_key("A", "v")):
        with pytest.raises(UsageError) as info:
            call()
        assert info.value.kind == "corrupt_keys" and info.value.hint
    assert keys.path().read_text() == text
    assert keys.lookup("A") is None and keys.source("A") is None  # the caller reports it missing
    assert "is not valid JSON" in keys.how_to_set("A") or "no `keys` object" in keys.how_to_set("A")


def test_an_unreadable_path_is_a_clear_error(holon_env):
    (holon_env / "keys.json").mkdir(parents=True)
    with pytest.raises(UsageError) as info:
        keys.names()
    assert info.value.kind == "unreadable_keys" and str(keys.path()) in info.value.message
    assert keys.lookup("A") is None


@pytest.mark.parametrize("name", [SECRET, "1ABC", "", "A B", "A=B", "X" * 129])
def test_a_bad_name_is_refused_without_repeating_it(name):
    with pytest.raises(UsageError) as info:
        keys.set_key(name, "v")
    assert info.value.kind == "invalid_key_name" and info.value.exit_code == 2
    assert not name or name not in info.value.message + info.value.hint


@pytest.mark.parametrize("value", ["", "  \n", f"{SECRET}\nsecond line", "a\0b", "x" * 20000])
def test_a_bad_value_is_refused_without_repeating_it(value):
    with pytest.raises(UsageError) as info:
        keys.set_key("OPENAI_API_KEY", value)
    assert info.value.kind == "invalid_key_value"
    assert SECRET not in info.value.message + info.value.hint
    assert not keys.path().exists()


def test_report_says_where_from_never_what(monkeypatch):
    keys.set_key("OPENAI_API_KEY", SECRET)
    keys.set_key("CUSTOM", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    doc = keys.report({"OPENAI_API_KEY": ["openai"], "ANTHROPIC_API_KEY": ["anthropic"], "X": []})
    assert SECRET not in json.dumps(doc)
    assert doc["file"] == {"path": str(keys.path()), "exists": True, "mode": "0600"}
    rows = {r["name"]: r for r in doc["keys"]}
    assert list(rows) == ["ANTHROPIC_API_KEY", "CUSTOM", "OPENAI_API_KEY", "X"]
    assert rows["OPENAI_API_KEY"]["source"] == str(keys.path())
    assert rows["OPENAI_API_KEY"]["providers"] == ["openai"]
    assert rows["ANTHROPIC_API_KEY"]["source"] == "environment"
    assert rows["CUSTOM"]["in_file"] and rows["CUSTOM"]["providers"] == []
    assert rows["X"]["set"] is False and rows["X"]["source"] is None


def test_how_to_set_names_both_ways():
    hint = keys.how_to_set("DEEPSEEK_API_KEY")
    assert "export DEEPSEEK_API_KEY=..." in hint and "holon keys set DEEPSEEK_API_KEY" in hint


def test_concurrent_sets_all_land(holon_env):
    """Each `holon keys set` is a read-modify-write of one file: they are serialised."""
    import subprocess
    import sys

    from helpers import subprocess_env

    code = (
        "import sys; from holon import keys\n"
        "for i in range(10): keys.set_key(f'K_{sys.argv[1]}_{i}', 'v' + sys.argv[1])\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(n)], env=subprocess_env())
        for n in range(8)
    ]
    assert [p.wait(timeout=60) for p in procs] == [0] * 8
    assert len(keys.names()) == 80


def test_a_keys_fifo_is_refused_without_blocking(holon_env):
    holon_env.mkdir(parents=True, exist_ok=True)
    os.mkfifo(holon_env / "keys.json")  # opening it for reading would wait for a writer
    with pytest.raises(UsageError) as info:
        keys.names()
    assert info.value.kind == "unreadable_keys" and "not a regular file" in info.value.message
    assert keys.lookup("A") is None
