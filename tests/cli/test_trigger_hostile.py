"""`holon trigger` under attack: the token off argv (stdin, environment), deliveries racing
rotate and revoke in real processes, and corrupt trigger files reported, never a traceback."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import REPO, subprocess_env

from holon.agent import triggers
from holon.home.layout import Home

WORKER = r"""
import json, sys, time
from holon.agent import triggers
tokens, until, out = json.loads(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
log = []
while time.time() < until:
    for token in tokens:
        started = time.time()
        try:
            triggers.deliver(token)
            log.append([started, time.time(), "ok", token])
        except Exception as exc:
            log.append([started, time.time(), getattr(exc, "kind", type(exc).__name__), token])
        time.sleep(0.01)  # let the operator's rotate and revoke get the lock too
open(out, "w").write(json.dumps(log))
"""


def rotate(holon) -> str:
    proc = holon("trigger", "rotate", "a", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["token"]


def descriptor(home: Path) -> dict:
    return json.loads(Home(home).trigger_descriptor.read_text())


@pytest.fixture
def home(holon) -> Path:
    assert holon("init", "--agent-id", "a").returncode == 0
    return Path(os.environ["HOLON_HOME"]) / "agents" / "a"


def test_token_from_the_environment_or_the_first_line_of_stdin(home, holon):
    token = rotate(holon)
    proc = holon("trigger", "deliver", "--json", env=subprocess_env(HOLON_TRIGGER_TOKEN=token))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["trigger_count"] == 1
    proc = holon("trigger", "deliver", "-", input=f"{token}\nthe body\n")
    assert proc.returncode == 0, proc.stderr
    hint = json.loads(Home(home).wake_hint.read_text())
    assert [p["body"] for p in hint["payloads"]] == ["the body\n"]
    assert token not in Home(home).wake_hint.read_text()
    proc = holon("trigger", "deliver", "-", input="htr_wrong\n")
    assert proc.returncode == 2 and "unknown_trigger" in proc.stderr
    proc = holon("trigger", "deliver")
    assert proc.returncode == 2 and proc.stderr.startswith("holon: missing_token: ")
    assert "HOLON_TRIGGER_TOKEN" in proc.stderr
    assert descriptor(home)["trigger_count"] == 2


def test_help_warns_that_a_token_on_the_command_line_is_visible(holon):
    out = holon("trigger", "deliver", "--help").stdout
    assert "HOLON_TRIGGER_TOKEN" in out and "`ps`" in out


def workers(tokens: list[str], until: float, logs: list[Path]) -> list[subprocess.Popen]:
    return [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, json.dumps(tokens), str(until), str(log)],
            env=subprocess_env(),
            cwd=REPO,
        )
        for log in logs
    ]


def test_deliveries_racing_rotate_and_revoke_never_restore_an_old_descriptor(home, holon, tmp_path):
    old = rotate(holon)
    until = time.time() + 10.0
    logs = [tmp_path / f"log{i}.json" for i in range(4)]
    running = workers([old], until, logs[:2])
    time.sleep(1.0)
    new = rotate(holon)
    rotated_at = time.time()
    running += workers([new], until, logs[2:])
    new_hash = hashlib.sha256(new.encode()).hexdigest()
    seen = []
    for _ in range(20):
        seen.append(descriptor(home)["token_sha256"])
        time.sleep(0.05)
    assert set(seen) == {new_hash}  # no delivery of the old token wrote the old descriptor back
    assert holon("trigger", "revoke", "a").returncode == 0
    revoked_at = time.time()
    states = []
    while time.time() < until:
        states.append(descriptor(home)["status"])
        time.sleep(0.05)
    for w in running:
        assert w.wait(timeout=30) == 0
    assert states and set(states) == {"revoked"}, (rotated_at, revoked_at, until)
    entries = [e for log in logs for e in json.loads(log.read_text())]
    assert all(e[2] in ("ok", "unknown_trigger") for e in entries), {e[2] for e in entries}
    for token, cut in ((old, rotated_at), (new, revoked_at)):
        mine = [e for e in entries if e[3] == token]
        assert any(e[2] == "ok" for e in mine), "the race never delivered before the cut"
        assert any(e[0] > cut for e in mine), "no delivery was tried after the cut"
        assert [e for e in mine if e[0] > cut and e[2] == "ok"] == []
    final = descriptor(home)
    assert final["status"] == "revoked" and final["token_sha256"] == new_hash
    assert final["trigger_count"] == sum(e[2] == "ok" for e in entries)
    for token in (old, new):
        with pytest.raises(triggers.TriggerRefused):
            triggers.deliver(token)


def test_deliveries_after_revoke_in_real_processes_are_refused(home, holon, tmp_path):
    token = rotate(holon)
    assert holon("trigger", "revoke", "a").returncode == 0
    log = tmp_path / "log.json"
    (worker,) = workers([token], time.time() + 1, [log])
    assert worker.wait(timeout=30) == 0
    assert {e[2] for e in json.loads(log.read_text())} == {"unknown_trigger"}
    assert descriptor(home)["status"] == "revoked"


@pytest.mark.parametrize("garbage", ["{not json", "[1, 2]", '{"entries": "x"}', '{"entries": [1]}'])
def test_a_corrupt_trigger_index_is_reported_with_a_hint(home, holon, garbage):
    token = rotate(holon)
    triggers.index_path().write_text(garbage)
    proc = holon("trigger", "deliver", "-", input=token + "\n")
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("holon: corrupt_state: ") and "\nhint: " in proc.stderr
    assert "trigger_index.json" in proc.stderr and "Traceback" not in proc.stderr
    assert token not in proc.stderr
    proc = holon("trigger", "rotate", "a")
    assert proc.returncode == 1 and proc.stderr.startswith("holon: corrupt_state: ")


@pytest.mark.parametrize("garbage", ["{torn", "[]", '"text"'])
def test_a_corrupt_descriptor_is_reported_and_rotate_repairs_it(home, holon, garbage):
    token = rotate(holon)
    Home(home).trigger_descriptor.write_text(garbage)
    for args, stdin in ((("trigger", "show", "a"), None), (("trigger", "deliver", "-"), token)):
        proc = holon(*args, input=stdin)
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr.startswith("holon: corrupt_state: ") and "\nhint: " in proc.stderr
    fresh = rotate(holon)
    proc = holon("trigger", "deliver", "-", input=fresh + "\n")
    assert proc.returncode == 0, proc.stderr
