"""Untrusted text on the operator's terminal: escape sequences from command output, model text and
channel messages are shown escaped on a tty (a real pty here) and kept byte for byte in a pipe."""

from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
import time

from helpers import holon_cmd, subprocess_env

from holon.cli.terminal import TerminalGuard, guard_terminal

# an OSC that retitles the window, a CSI that clears the screen, a bell, a bare CR, a C1 CSI
HOSTILE = "A\x1b]0;pwned\x07B\x1b[2JC\rD\u009b31mE"
CMD = r"printf 'out\033[31mRED\033]0;title\007\r\n'; sleep 2"
RAW_MARKERS = (b"\x1b", b"\x07", "\u009b".encode())


def in_pty(*args: str, timeout: float = 60) -> tuple[int, bytes]:
    """Run `holon ARGS` with stdout and stderr on a pty; (exit code, everything it printed)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [*holon_cmd(), *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env=subprocess_env(),
    )
    os.close(follower)
    out, end = b"", time.monotonic() + timeout
    while time.monotonic() < end:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed its side
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    os.close(leader)
    return proc.wait(timeout=timeout), out


def piped(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*holon_cmd(), *args], capture_output=True, env=subprocess_env())


def assert_escaped(out: bytes) -> None:
    for marker in RAW_MARKERS:
        assert marker not in out, (marker, out[:2000])
    assert b"\\u001b" in out


def ran_turn(tmp_path, holon) -> str:
    """A turn whose command printed escapes and whose final text carries them; returns the task
    id of a background command that printed escapes too."""
    rounds = [
        {"tool_calls": [{"name": "ExecCommand", "arguments": {"cmd": CMD, "yield_time_ms": 500}}]},
        {"text": "final " + HOSTILE},
        {"text": "the task ended"},
    ]
    path = tmp_path / "script.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rounds))
    assert holon("init", "--agent-id", "a").returncode == 0
    code, out = in_pty("prompt", "a", "go", "--model", f"scripted/{path}")
    assert code == 0, out
    assert_escaped(out)
    assert b"final A" in out
    (task,) = json.loads(piped("task", "list", "a", "--json").stdout)
    return task["task_id"]


def test_transcript_briefs_and_task_output_are_escaped_on_a_tty_and_exact_in_a_pipe(
    tmp_path, holon
):
    task_id = ran_turn(tmp_path, holon)
    holon("enqueue", "a", "--kind", "channel_event", "--text", HOSTILE, "--source", "ch")
    for args, raw in (
        (("transcript", "a"), HOSTILE.encode()),
        (("briefs", "a"), HOSTILE.encode()),
        (("task", "output", "a", task_id), b"out\x1b[31mRED\x1b]0;title\x07"),
    ):
        code, out = in_pty(*args)
        assert code == 0, (args, out)
        assert_escaped(out)
        proc = piped(*args)
        assert proc.returncode == 0
        assert raw in proc.stdout, (args, proc.stdout)  # a pipe gets every byte as written


def test_json_on_a_tty_stays_valid_json_with_the_same_value(tmp_path, holon):
    ran_turn(tmp_path, holon)
    code, out = in_pty("briefs", "a", "--jsonl")
    assert code == 0
    assert_escaped(out)
    texts = [json.loads(line)["text"] for line in out.decode().splitlines() if line.strip()]
    assert any(HOSTILE in t for t in texts)


def test_an_error_quoting_input_is_escaped_on_a_tty(holon):
    code, out = in_pty("status", "no-such-\x1b]0;x\x07agent")
    assert code != 0 and b"holon: " in out
    assert b"\x1b" not in out and b"\x07" not in out


def test_the_guard_escapes_text_and_bytes_and_leaves_pipes_alone(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    raw = io.BytesIO()
    tty = Tty()
    tty.buffer = raw  # type: ignore[attr-defined]
    guard = TerminalGuard(tty)
    guard.write("ok\tline\r\n\x1b[2Jx\u202eevil\n")
    assert tty.getvalue() == "ok\tline\r\n\\u001b[2Jx\\u202eevil\n"
    guard.buffer.write(b"\x1b]0;t\x07")
    assert raw.getvalue() == b"\\u001b]0;t\\u0007"
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stdout", pipe)
    monkeypatch.setattr(sys, "stderr", tty)
    guard_terminal()
    assert sys.stdout is pipe and isinstance(sys.stderr, TerminalGuard)
