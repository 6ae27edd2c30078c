"""`holon keys set|list|remove|path` through the real entry point: the key reaches the 0600 file
from stdin (or a hidden prompt) and never reaches any output, error or listing."""

from __future__ import annotations

import json
import os
import pty
import stat
import sys
import time
from pathlib import Path

import pytest
from cmd_checks import fails, ok, ok_json
from helpers import REPO, run, subprocess_env

from holon.cli.keys import keys_group

SECRET = "sk-canary-keys-cli-0123456789abcdef"
OTHER = "sk-canary-keys-cli-replaced-fedcba"


def keys_file(holon_env: Path) -> Path:
    return holon_env / "keys.json"


def stored(holon_env: Path) -> dict:
    return json.loads(keys_file(holon_env).read_text())["keys"]


def no_secret(*texts: str) -> None:
    for text in texts:
        assert SECRET not in text and OTHER not in text, text


def test_round_trip_from_stdin(holon_env):
    r = run("keys", "set", "OPENAI_API_KEY", "-", input=SECRET + "\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"stored OPENAI_API_KEY in {keys_file(holon_env)}\n"
    assert stat.S_IMODE(keys_file(holon_env).stat().st_mode) == 0o600
    assert stored(holon_env) == {"OPENAI_API_KEY": SECRET}
    listing = run("keys", "list")
    doc = json.loads(run("keys", "list", "--json").stdout)
    no_secret(r.stdout, r.stderr, listing.stdout, listing.stderr, json.dumps(doc))
    assert listing.stdout.splitlines()[0] == f"keys file: {keys_file(holon_env)} (mode 0600)"
    line = next(ln for ln in listing.stdout.splitlines() if ln.startswith("OPENAI_API_KEY "))
    assert line.split()[1:] == ["keys", "file", "openai"]
    rows = {row["name"]: row for row in doc["keys"]}
    assert rows["OPENAI_API_KEY"]["source"] == str(keys_file(holon_env))
    # every well-known provider variable is listed, set or not
    assert rows["ANTHROPIC_API_KEY"] == {
        "name": "ANTHROPIC_API_KEY",
        "set": False,
        "source": None,
        "in_environment": False,
        "in_file": False,
        "providers": ["anthropic"],
    }
    assert {"OPENROUTER_API_KEY", "DEEPSEEK_API_KEY", "OPENAI_CODEX_ACCESS_TOKEN"} <= set(rows)

    r = run("keys", "set", "OPENAI_API_KEY", input=OTHER)  # no VALUE, stdin is not a terminal
    assert r.returncode == 0 and stored(holon_env) == {"OPENAI_API_KEY": OTHER}
    no_secret(r.stdout, r.stderr)

    r = run("keys", "remove", "OPENAI_API_KEY")
    assert r.returncode == 0 and r.stdout == f"removed OPENAI_API_KEY from {keys_file(holon_env)}\n"
    assert stored(holon_env) == {}
    _, err = fails("keys", "remove", "OPENAI_API_KEY", code=2, kind="unknown_key")
    assert "holon keys list" in err


def test_a_value_on_the_command_line_works_with_a_warning(holon_env):
    r = run("keys", "set", "DEEPSEEK_API_KEY", SECRET)
    assert r.returncode == 0 and stored(holon_env) == {"DEEPSEEK_API_KEY": SECRET}
    assert "shell history" in r.stderr and "holon keys set DEEPSEEK_API_KEY -" in r.stderr
    no_secret(r.stdout, r.stderr)


def test_the_environment_wins_and_the_listing_says_so(holon_env):
    run("keys", "set", "ANTHROPIC_API_KEY", "-", input=SECRET)
    env = subprocess_env(ANTHROPIC_API_KEY=OTHER)
    listing = run("keys", "list", env=env)
    line = next(ln for ln in listing.stdout.splitlines() if ln.startswith("ANTHROPIC_API_KEY"))
    assert "environment" in line and "(also in the keys file)" in line
    doc = json.loads(run("keys", "list", "--json", env=env).stdout)
    row = next(r for r in doc["keys"] if r["name"] == "ANTHROPIC_API_KEY")
    assert row["source"] == "environment" and row["in_file"] and row["in_environment"]
    r = run("keys", "set", "ANTHROPIC_API_KEY", "-", input=SECRET, env=env)
    assert "also set in this environment, which wins" in r.stdout
    no_secret(listing.stdout, json.dumps(doc), r.stdout, r.stderr)


@pytest.mark.parametrize("name", [SECRET, "9LIVES", "A-B"])
def test_a_bad_name_fails_before_reading_and_is_not_repeated(holon_env, name):
    _, err = fails("keys", "set", name, "-", code=2, kind="invalid_key_name", stdin=OTHER)
    no_secret(err)
    assert name not in err and not keys_file(holon_env).exists()
    _, err = fails("keys", "remove", name, code=2, kind="invalid_key_name")
    assert name not in err


@pytest.mark.parametrize("value", ["", "\n", f"{SECRET}\n{SECRET}\n"])
def test_an_empty_or_multi_line_value_is_refused(holon_env, value):
    _, err = fails(
        "keys", "set", "OPENAI_API_KEY", "-", code=2, kind="invalid_key_value", stdin=value
    )
    no_secret(err)
    assert not keys_file(holon_env).exists()


def test_a_corrupt_keys_file_is_a_clear_error(holon_env):
    holon_env.mkdir()
    keys_file(holon_env).write_text('{"keys": {"OPENAI_API_KEY": "' + SECRET)
    for args in (["keys", "list"], ["keys", "list", "--json"]):
        r = run(*args)
        assert r.returncode == 2 and r.stdout == ""
        assert r.stderr.startswith(f"holon: corrupt_keys: {keys_file(holon_env)} is not valid JSON")
        assert "hint: " in r.stderr and "Traceback" not in r.stderr
        no_secret(r.stderr)
    r = run("keys", "set", "OPENAI_API_KEY", "-", input=OTHER)
    assert r.returncode == 2 and "corrupt_keys" in r.stderr
    assert keys_file(holon_env).read_text().endswith(SECRET)  # never overwritten
    assert run("keys", "path").stdout == f"{keys_file(holon_env)}\n"


def test_listing_warns_about_a_file_others_can_read(holon_env):
    ok(keys_group, "set", "CUSTOM_KEY", "-", "--force", input=SECRET)
    keys_file(holon_env).chmod(0o644)
    result = ok(keys_group, "list")
    assert f"chmod 600 {keys_file(holon_env)}" in result.stderr
    assert "CUSTOM_KEY" in result.stdout and SECRET not in result.output
    doc = ok_json(keys_group, "list", "--json")
    assert doc["file"]["mode"] == "0644"


def test_configured_providers_variables_are_listed(holon_env):
    holon_env.mkdir()
    (holon_env / "config.toml").write_text(
        '[providers.local]\ntransport = "openai_chat_completions"\n'
        'base_url = "http://127.0.0.1:9/v1"\napi_key_env = "LOCAL_KEY"\n'
        '[providers.openai]\napi_key_env = "WORK_OPENAI_KEY"\n'
    )
    from holon import config

    config.reset()
    rows = {r["name"]: r for r in ok_json(keys_group, "list", "--json")["keys"]}
    assert rows["LOCAL_KEY"]["providers"] == ["local"]
    assert rows["WORK_OPENAI_KEY"]["providers"] == ["openai"]
    assert "OPENAI_API_KEY" not in rows


def _read_until(fd: int, needle: bytes, timeout: float = 20.0) -> bytes:
    seen = b""
    end = time.monotonic() + timeout
    while needle not in seen and time.monotonic() < end:
        try:
            chunk = os.read(fd, 1024)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    return seen


def test_at_a_terminal_the_key_is_asked_for_without_echo(holon_env):
    env = subprocess_env()
    pid, fd = pty.fork()
    if pid == 0:  # the child: holon on a terminal of its own
        os.chdir(REPO)
        os.execve(
            sys.executable, [sys.executable, "-m", "holon", "keys", "set", "MY_KEY", "--force"], env
        )
    try:
        shown = _read_until(fd, b"Value for MY_KEY: ")
        assert b"Value for MY_KEY: " in shown, shown
        os.write(fd, SECRET.encode() + b"\r")
        shown += _read_until(fd, b"stored MY_KEY")
        shown += _read_until(fd, b"\n")
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0, shown
    assert b"stored MY_KEY in" in shown and SECRET.encode() not in shown  # not echoed
    assert stored(holon_env) == {"MY_KEY": SECRET}


@pytest.mark.parametrize(
    "name, meant",
    [("openai", "OPENAI_API_KEY"), ("ANTHROPIC_KEY", "ANTHROPIC_API_KEY"), ("FOO_BAR", None)],
)
def test_a_name_no_provider_reads_is_refused_with_the_one_meant(holon_env, name, meant):
    _, err = fails("keys", "set", name, "-", code=2, kind="unknown_key_name", stdin=SECRET)
    assert not keys_file(holon_env).exists()
    if meant:
        assert f"did you mean {meant}?" in err and f"hint: holon keys set {meant} -" in err
    else:
        assert "OPENAI_API_KEY" in err and "--force" in err
    r = run("keys", "set", name, "-", "--force", input=SECRET)
    assert r.returncode == 0 and stored(holon_env) == {name: SECRET}
