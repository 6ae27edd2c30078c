"""holon.jsonfile: a home's small files read without trusting them; and the readers built on
it (identity, run state, settings, registry) on each way a file can be corrupt."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from holon import jsonfile
from holon.errors import HolonError, UsageError
from holon.home import registry, runstate, settings
from holon.home.layout import read_identity
from holon.paths import registry_path


@pytest.mark.parametrize(
    "data, problem",
    [
        (b"", "is empty"),
        (b'{"a": [1, 2', "is not valid JSON (Expecting ',' delimiter at line 1)"),
        (b"\xff\xfe{}", "is not valid UTF-8"),
        (b'{"a": NaN}', "is not valid JSON (NaN is not a JSON number)"),
        (b'{"a": 1e999}', "is not valid JSON (number 1e999 is too large)"),
        (b"[" * 100_000, "is not valid JSON (nested deeper than 128 levels)"),
    ],
)
def test_parse_refuses_what_is_not_strict_json(tmp_path, data, problem):
    (tmp_path / "f.json").write_bytes(data)
    with pytest.raises(jsonfile.Unreadable) as err:
        jsonfile.load(tmp_path / "f.json")
    assert str(err.value) == problem


@pytest.mark.parametrize("value", [b"[]", b"null", b'"x"', b"1", b"true"])
def test_object_of_wants_an_object(tmp_path, value):
    (tmp_path / "f.json").write_bytes(value)
    with pytest.raises(jsonfile.Unreadable, match="is not a JSON object"):
        jsonfile.object_of(tmp_path / "f.json")


def test_a_missing_file_or_dangling_link_is_none(tmp_path):
    assert jsonfile.load(tmp_path / "nope") is None
    (tmp_path / "link").symlink_to(tmp_path / "gone")
    assert jsonfile.object_of(tmp_path / "link") is None


def test_nothing_but_a_regular_file_is_read_and_never_blocks(tmp_path):
    os.mkfifo(tmp_path / "fifo")  # opening it for reading would wait for a writer
    (tmp_path / "zero").symlink_to("/dev/zero")  # reading it would never end
    (tmp_path / "dir").mkdir()
    for name, problem in [("fifo", "not a regular"), ("zero", "not a regular"), ("dir", "dir")]:
        with pytest.raises(jsonfile.Unreadable, match=problem):
            jsonfile.load(tmp_path / name)


def test_a_file_over_the_limit_is_refused(tmp_path):
    (tmp_path / "big").write_bytes(b" " * 100)
    with pytest.raises(jsonfile.Unreadable, match="too large"):
        jsonfile.read_bytes(tmp_path / "big", limit=99)
    assert jsonfile.read_bytes(tmp_path / "big", limit=100) == b" " * 100


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file of mode 000")
def test_an_unreadable_file_says_permission_denied(tmp_path):
    (tmp_path / "f.json").write_text("{}")
    (tmp_path / "f.json").chmod(0)
    with pytest.raises(jsonfile.Unreadable, match="permission denied"):
        jsonfile.load(tmp_path / "f.json")


@pytest.mark.parametrize(
    "ident, problem",
    [
        ([], "is not a JSON object"),
        (None, "is not a JSON object"),
        ({"agent_id": 7}, "has an invalid agent_id (7)"),
        ({"agent_id": "../x"}, "has an invalid agent_id"),
        ({"home_format": "2"}, "has an invalid home_format"),
        ({"home_format": -1}, "has an invalid home_format"),
        ({"home_format": 1e308}, "has an invalid home_format"),
        ({"migrations": "m001"}, "has an invalid migrations list"),
        ({"budget": [1]}, "has an invalid budget"),
    ],
)
def test_an_identity_of_the_wrong_shape_is_corrupt_state(agent, ident, problem):
    import json

    agent.agent_json.write_text(json.dumps(ident))
    with pytest.raises(HolonError) as err:
        read_identity(agent.agent_json)
    assert err.value.kind == "corrupt_state"
    assert err.value.message.startswith(f"{agent.agent_json} {problem}")
    assert "git checkout" in err.value.hint


@pytest.mark.parametrize(
    "text",
    [
        '{"id": "a", "turn_index": -1}',
        '{"id": "a", "turn_index": 1e308}',
        '{"id": "a", "context": {"window_start": -5}}',
        '{"id": "a", "inflight": {"m": {"turn_id": "t", "transcript_offset": -1}}}',
        '{"id": "a", "inflight": {"m": {"transcript_offset": 0}}}',
        '{"id": "a", "context": {"calibration": {"m": -1}}}',
        '{"id": "a", "turn_index": NaN}',
    ],
)
def test_a_run_state_with_fields_out_of_range_is_unreadable(agent, text):
    agent.state_json.write_text(text)
    with pytest.raises(runstate.Unreadable):
        runstate.read(agent)


def test_settings_that_are_null_are_corrupt_not_missing(agent):
    agent.settings_json.write_text("null")
    with pytest.raises(HolonError) as err:
        settings.read(agent)
    assert err.value.kind == "corrupt_state" and "settings.json is not a JSON object" in str(
        err.value
    )


def test_a_corrupt_registry_is_rebuilt_from_the_agents_directory(agent, holon_env):
    registry_path().write_bytes(b"\x00\x01")
    with pytest.raises(UsageError):
        registry.load()
    assert registry.resolve("a").root == agent.root  # found by its directory all the same
    done = registry.rebuild()
    assert done["agents"] == "1" and done["set_aside"].startswith(f"{registry_path()}.corrupt-")
    assert registry.load() == {"a": str(agent.root)}
    assert Path(done["set_aside"]).read_bytes() == b"\x00\x01"  # kept for the operator


def test_resolve_never_echoes_a_huge_argument(holon_env):
    with pytest.raises(UsageError) as err:
        registry.resolve("x" * 100_000)
    assert len(err.value.message) < 300
