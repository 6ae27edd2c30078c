"""resolve.preflight and resolve.credential_status: what would surely fail a turn with a model
ref, found without an SDK and without the network."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from provider_kits import SECRET

from holon import config, keys
from holon.errors import UsageError
from holon.providers.resolve import credential_status, preflight


def write_config(text: str) -> None:
    Path(os.environ["HOLON_HOME"], "config.toml").write_text(text, encoding="utf-8")
    config.reset()


def refused(ref: str, kind: str, home: Path | None = None) -> UsageError:
    with pytest.raises(UsageError) as info:
        preflight(ref, home=home)
    error = info.value
    assert error.kind == kind and error.exit_code == 2 and error.hint, (error.kind, error.message)
    assert SECRET not in error.message + error.hint
    return error


@pytest.mark.parametrize("ref", ["gpt-5", "openai/", "/gpt-5", "", "scripted/", " /m"])
def test_a_ref_not_of_the_form_provider_model(ref):
    assert "provider/model" in refused(ref, "invalid_model_ref").hint


def test_an_unknown_provider_names_the_known_ones():
    error = refused("mystery/m", "unknown_provider")
    for pid in ("openai", "anthropic", "openai-codex", "ollama", "openrouter", "deepseek"):
        assert pid in error.hint
    assert "[providers.mystery]" in error.hint


def test_a_table_with_an_unsupported_transport_or_no_base_url():
    write_config(
        '[providers.weird]\ntransport = "grpc"\n'
        '[providers.nourl]\ntransport = "openai_chat_completions"\n'
    )
    assert "openai_chat_completions" in refused("weird/m", "unknown_provider").hint
    assert "base_url" in refused("nourl/m", "unknown_provider").hint


def test_a_missing_key_names_both_ways_to_set_it():
    error = refused("anthropic/claude", "missing_credentials")
    assert "ANTHROPIC_API_KEY" in error.message and str(keys.path()) in error.message
    assert "export ANTHROPIC_API_KEY=..." in error.hint
    assert "holon keys set ANTHROPIC_API_KEY" in error.hint
    write_config('[providers.openai]\napi_key_env = "WORK_KEY"\n')
    assert "holon keys set WORK_KEY" in refused("openai/gpt-5", "missing_credentials").hint


def test_a_key_from_the_environment_or_the_file_passes(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    preflight("openai/gpt-5")
    keys.set_key("DEEPSEEK_API_KEY", SECRET)
    preflight("deepseek/deepseek-chat")
    preflight("ollama/llama3")  # needs no key
    refused("openrouter/meta/llama-3", "missing_credentials")  # a model part may hold slashes
    keys.set_key("OPENROUTER_API_KEY", SECRET)
    preflight("openrouter/meta/llama-3")


def test_a_corrupt_keys_file_says_so_rather_than_missing(holon_env):
    keys.path().write_text("{oops")
    assert refused("openai/gpt-5", "corrupt_keys")


def test_codex_accepts_a_cli_sign_in(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    assert "no Codex CLI sign-in" in refused("openai-codex/gpt-5", "missing_credentials").message
    (tmp_path / "auth.json").write_text(json.dumps({"tokens": {"access_token": SECRET}}))
    preflight("openai-codex/gpt-5")
    assert credential_status("openai-codex/gpt-5") == {
        "provider": "openai-codex",
        "api_key_env": "OPENAI_CODEX_ACCESS_TOKEN",
        "present": True,
        "source": "codex auth file",
    }


def test_a_scripted_ref_needs_its_script(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    error = refused("scripted/nope.jsonl", "missing_script")
    assert str(tmp_path / "nope.jsonl") in error.message
    (tmp_path / "here.jsonl").write_text('{"text": "hi"}\n')
    preflight("scripted/here.jsonl")  # the current directory first
    home = tmp_path / "agent"
    (home / "scripts").mkdir(parents=True)
    (home / "scripts" / "s.jsonl").write_text('{"text": "hi"}\n')
    preflight("scripted/scripts/s.jsonl", home=home)  # then the agent home
    refused("scripted/scripts/s.jsonl", "missing_script")
    preflight(f"scripted/{tmp_path / 'here.jsonl'}")
    refused(f"scripted/{tmp_path}", "missing_script")  # a directory is not a script


def test_credential_status_says_where_from_never_what(monkeypatch):
    assert credential_status("openai/gpt-5") == {
        "provider": "openai",
        "api_key_env": "OPENAI_API_KEY",
        "present": False,
        "source": None,
    }
    keys.set_key("OPENAI_API_KEY", SECRET)
    assert credential_status("openai/gpt-5")["source"] == str(keys.path())
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert credential_status("openai/gpt-5")["source"] == "environment"
    assert credential_status("ollama/llama3") == {
        "provider": "ollama",
        "api_key_env": None,
        "present": True,
        "source": None,
    }
    assert credential_status("scripted/x.jsonl")["api_key_env"] is None
    assert SECRET not in json.dumps(credential_status("openai/gpt-5"))
    with pytest.raises(UsageError) as info:
        credential_status("no-slash")
    assert info.value.kind == "invalid_model_ref"


def test_preflight_imports_no_sdk(tmp_path):
    script = tmp_path / "s.jsonl"
    script.write_text('{"text": "hi"}\n')
    code = (
        "import sys\n"
        "from holon.providers.resolve import preflight, credential_status\n"
        "from holon.errors import UsageError\n"
        f"for ref in ('openai/gpt-5', 'anthropic/c', 'openai-codex/g', 'ollama/l', "
        f"'deepseek/d', 'nope/m', 'bad', 'scripted/{script}'):\n"
        "    credential_status(ref) if '/' in ref and not ref.startswith('nope') else None\n"
        "    try:\n"
        "        preflight(ref)\n"
        "    except UsageError as exc:\n"
        "        print(exc.kind, file=sys.stderr)\n"
        "print(sorted({m.split('.')[0] for m in sys.modules}"
        " & {'openai', 'anthropic', 'httpx2', 'httpx'}))\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root), "OPENAI_API_KEY": SECRET}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, env=env
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
    assert out.stderr.split() == [
        "missing_credentials",
        "missing_credentials",
        "missing_credentials",
        "unknown_provider",
        "invalid_model_ref",
    ]
