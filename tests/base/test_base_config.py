"""holon.config: config.toml under HOLON_HOME, cached until reset(); env_int precedence."""

from __future__ import annotations

import pytest

from holon import config
from holon.errors import UsageError
from holon.paths import config_path


def _write(text: str) -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    config.reset()


def test_missing_file_is_empty_config():
    assert not config_path().exists()
    assert config.load() == {}
    assert config.get("model") is None
    assert config.get("runtime.max_message_bytes", 7) == 7


def test_get_walks_dotted_keys():
    _write('model = "openai/gpt-x"\n[runtime]\nmax_message_bytes = 1024\n[a.b]\nc = "deep"\n')
    assert config.get("model") == "openai/gpt-x"
    assert config.get("runtime.max_message_bytes") == 1024
    assert config.get("a.b.c") == "deep"
    assert config.get("a.b.missing", "dflt") == "dflt"
    assert config.get("model.sub", "dflt") == "dflt"  # a string has no children


def test_load_is_cached_until_reset():
    _write('model = "first/m"\n')
    assert config.get("model") == "first/m"
    config_path().write_text('model = "second/m"\n')
    assert config.get("model") == "first/m"  # still the cached parse
    config.reset()
    assert config.get("model") == "second/m"


def test_invalid_toml_is_invalid_config():
    _write("model = = broken\n")
    with pytest.raises(UsageError) as err:
        config.load()
    assert err.value.kind == "invalid_config" and err.value.exit_code == 2
    assert str(config_path()) in err.value.message
    assert "fix the syntax" in err.value.hint


def test_invalid_utf8_is_invalid_config():
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_bytes(b'model = "\xff"\n')
    config.reset()
    with pytest.raises(UsageError) as err:
        config.get("model")
    assert err.value.kind == "invalid_config"


def test_env_int_precedence_env_then_config_then_default(monkeypatch):
    _write("[runtime]\nlimit = 50\n")
    assert config.env_int("HOLON_TEST_LIMIT", "runtime.limit", 9) == 50
    monkeypatch.setenv("HOLON_TEST_LIMIT", "70")
    assert config.env_int("HOLON_TEST_LIMIT", "runtime.limit", 9) == 70
    monkeypatch.setenv("HOLON_TEST_LIMIT", "   ")  # blank env does not count
    assert config.env_int("HOLON_TEST_LIMIT", "runtime.limit", 9) == 50
    monkeypatch.delenv("HOLON_TEST_LIMIT")
    assert config.env_int("HOLON_TEST_LIMIT", "runtime.other", 9) == 9
    assert config.env_int("HOLON_TEST_LIMIT", None, 9) == 9


def test_env_int_ignores_non_integer_config_value():
    _write('[runtime]\nlimit = "fifty"\n')
    assert config.env_int("HOLON_TEST_LIMIT", "runtime.limit", 9) == 9


def test_env_int_invalid_integer_is_invalid_config(monkeypatch):
    monkeypatch.setenv("HOLON_TEST_LIMIT", "12abc")
    with pytest.raises(UsageError) as err:
        config.env_int("HOLON_TEST_LIMIT", None, 9)
    assert err.value.kind == "invalid_config" and err.value.exit_code == 2
    assert "HOLON_TEST_LIMIT" in err.value.message and "'12abc'" in err.value.message


def test_default_and_fallback_models(monkeypatch):
    _write('model = "cfg/m"\nfallback_models = ["f/1", "f/2"]\n')
    assert config.default_model() == "cfg/m"
    assert config.fallback_models() == ["f/1", "f/2"]
    monkeypatch.setenv("HOLON_MODEL", "env/m")
    monkeypatch.setenv("HOLON_FALLBACK_MODELS", " e/1, ,e/2 ")
    assert config.default_model() == "env/m"
    assert config.fallback_models() == ["e/1", "e/2"]
    monkeypatch.setenv("HOLON_FALLBACK_MODELS", "")  # set but empty: no fallbacks, config ignored
    assert config.fallback_models() == []


def test_invalid_config_is_reported_by_the_cli():
    from scenario_helpers import cli, init_agent

    home = init_agent("a")
    _write("[[[ not toml\n")
    code, _, err = cli("enqueue", "a", "--kind", "channel_event", "--text", "hi")
    assert code == 2
    assert "invalid_config" in err and "hint:" in err
    assert not home.messages.exists()  # nothing admitted
