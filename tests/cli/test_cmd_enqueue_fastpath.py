"""The plain `holon enqueue` runs without click (holon.cli.entry -> holon.cli.fastpath): the same
output, exit code and queued message as through click, for every form it takes; anything else
(help, usage errors, odd argv) is click's; and it imports no click."""

from __future__ import annotations

import inspect
import io
import json
import os
import re
import subprocess
import sys

import click
import pytest
from helpers import subprocess_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from holon.agent import control
from holon.cli import entry, failures, fastpath
from holon.cli import main as click_main
from holon.cli.enqueue import enqueue_cmd
from holon.home.init import init_home

K = ("--kind", "channel_event")


class Stdin(io.TextIOWrapper):
    def __init__(self, data: bytes) -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8")

    def isatty(self) -> bool:
        return False


VARYING = [
    (re.compile(r"msg_[0-9a-z]+"), "<ID>"),
    (re.compile(r"\d{4}-\d\d-\d\dT[\d:.]+Z"), "<TIME>"),
    (re.compile(r'"seal": "[^"]*"'), '"seal": "<SEAL>"'),
]


def _normal(text: str) -> str:
    for pattern, repl in VARYING:
        text = pattern.sub(repl, text)
    return text


def _run(main, argv, capsys, monkeypatch, stdin: bytes = b""):
    monkeypatch.setattr(sys, "stdin", Stdin(stdin))
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, _normal(out), _normal(err)


def _queued(home) -> list[dict]:
    drop = {"id", "created_at", "seal"}
    return [{k: v for k, v in m.items() if k not in drop} for m in home.queue.peek_all()]


def _both(argv, capsys, monkeypatch, tmp_path, stdin: bytes = b""):
    """(fast path result, click result), each on a fresh agent `a`: (rc, out, err, queued)."""
    results = []
    for i, main in enumerate((entry.main, click_main.main)):
        monkeypatch.setenv("HOLON_HOME", str(tmp_path / f"h{i}"))
        home = init_home(None, "a")
        (tmp_path / "body.json").write_text('{"from": "file"}')
        rc, out, err = _run(main, argv, capsys, monkeypatch, stdin)
        results.append((rc, out, err, _queued(home)))
    return results


PLAIN = [
    (["enqueue", "a", *K, "--text", "hi"], b""),
    (["enqueue", "a", "--kind=webhook_event", "--json-body", '{"k": [1, 2]}', "--json"], b""),
    (["enqueue", "a", "--kind", "webhook_event", "--event-type", "push", "--source", "gh"], b""),
    (["enqueue", "--kind", "system_tick", "a", "--text=x", "--priority", "interject"], b""),
    (["enqueue", "a", *K, "--text", "x", "--sender", "u1", "--source=chan", "--json"], b""),
    (["enqueue", "a", *K, "--text", "-"], "from stdin ✓".encode()),
    (["enqueue", "a", *K, "--json-body", "-"], b'{"piped": true}'),
    (["enqueue", "a", *K, "--text", ""], b""),
    (["enqueue", "a", *K, "--text", "x", "--json-body", "1"], b""),
    (["enqueue", "a", *K, "--json-body", "{bad"], b""),
    (["enqueue", "a", *K, "--text", "x", "--source", "two\nlines"], b""),
    (["enqueue", "nobody", *K, "--text", "x"], b""),
    (["enqueue", "a", *K, "--text", "nul\x00byte"], b""),
]


def test_the_fast_paths_options_are_derived_from_the_click_command():
    """The fast path's option table, choices, defaults and keywords are the click command's, so a
    change to either that the other misses fails here."""
    options = [p for p in enqueue_cmd.params if isinstance(p, click.Option)]
    arguments = [p.name for p in enqueue_cmd.params if isinstance(p, click.Argument)]
    assert arguments == ["agent"]
    assert fastpath._VALUED == {o: p.name for p in options if not p.is_flag for o in p.opts}
    assert {o: p.name for p in options if p.is_flag for o in p.opts} == {"--json": "as_json"}
    choices = {p.name: tuple(p.type.choices) for p in options if isinstance(p.type, click.Choice)}
    assert choices == {"kind": fastpath.ENQUEUE_KINDS, "priority": fastpath.PRIORITIES}
    assert [p.name for p in options if p.required] == []  # --kind: required unless --jsonl
    argv = ["a", "--kind", fastpath.ENQUEUE_KINDS[0]]
    # the root's help options: click caches the command's help option from the first context,
    # and one without them would drop `-h` from the man page generated later in this process
    ctx = enqueue_cmd.make_context("enqueue", list(argv), help_option_names=["-h", "--help"])
    by_click = ctx.params
    assert fastpath.parse(["enqueue", *argv]) == {
        k: v for k, v in by_click.items() if v is not None
    }
    assert fastpath.parse(["enqueue", "a"]) is None  # --kind is required
    keywords = list(inspect.signature(fastpath.enqueue).parameters)
    assert keywords == [p.name for p in enqueue_cmd.params if p.name not in ("as_json", "jsonl")]
    line_fields = {"text", "json"} | {
        k for k in keywords if k not in ("agent", "text", "json_body")
    }
    assert set(fastpath.LINE_FIELDS) == line_fields  # a line holds what one enqueue takes


@pytest.mark.parametrize(("argv", "stdin"), PLAIN)
def test_the_plain_form_runs_without_click_and_matches_click(
    argv, stdin, capsys, monkeypatch, tmp_path
):
    assert fastpath.parse(argv) is not None
    fast, slow = _both(argv, capsys, monkeypatch, tmp_path, stdin)
    assert fast == slow
    rc, out, err, queued = fast
    assert (rc == 0) == bool(queued) and (rc == 0) == (err == "")
    if rc:
        assert err.startswith("holon: ") and "Traceback" not in err


def test_a_json_body_from_a_file_matches(capsys, monkeypatch, tmp_path):
    argv = ["enqueue", "a", *K, "--json-body", f"@{tmp_path / 'body.json'}", "--json"]
    fast, slow = _both(argv, capsys, monkeypatch, tmp_path)
    assert fast == slow and fast[0] == 0 and fast[3][0]["body"]["value"] == {"from": "file"}


def test_a_stopped_agent_is_refused_alike(capsys, monkeypatch, tmp_path):
    argv = ["enqueue", "a", *K, "--text", "x"]
    results = []
    for i, main in enumerate((entry.main, click_main.main)):
        monkeypatch.setenv("HOLON_HOME", str(tmp_path / f"s{i}"))
        control.stop(init_home(None, "a"))
        results.append(_run(main, argv, capsys, monkeypatch))
    assert results[0] == results[1] and results[0][0] == 3
    assert results[0][2].startswith("holon: agent_stopped:")


OTHERS = [
    ["enqueue"],
    ["enqueue", "--help"],
    ["enqueue", "a", "-h"],
    ["enqueue", "a", "--text", "x"],  # no --kind
    ["enqueue", "a", "--kind", "bogus", "--text", "x"],
    ["enqueue", "a", *K, "--text", "x", "--priority", "urgent"],
    ["enqueue", "a", "b", *K, "--text", "x"],
    ["enqueue", "a", *K, "--kind", "system_tick", "--text", "x"],
    ["enqueue", "a", *K, "--text", "--json"],
    ["enqueue", "a", *K, "--text", "-x"],
    ["enqueue", "a", *K, "--text"],
    ["enqueue", "--", "a", *K, "--text", "x"],
    ["enqueue", "a", *K, "--text", "x", "--json=1"],
    ["enqueue", "a", *K, "--text", "x", "--colour", "red"],
    ["enqueue", "a\udcff", *K, "--text", "x"],
    ["enqueue", "a", *K, "--text", "bad \udcff"],
    ["--version"],
    ["enqueu", "a", *K, "--text", "x"],
]


@pytest.mark.parametrize("argv", OTHERS)
def test_anything_else_is_clicks(argv, capsys, monkeypatch, tmp_path):
    assert fastpath.parse(argv) is None
    fast, slow = _both(argv, capsys, monkeypatch, tmp_path)
    assert fast == slow


def test_a_plain_enqueue_imports_no_click(tmp_path):
    code = (
        "import sys\nfrom holon.cli.entry import main\nrc = main(sys.argv[1:])\n"
        "sys.stderr.write(f'RC:{rc} CLICK:{\"click\" in sys.modules}')\n"
    )
    env = subprocess_env(HOLON_HOME=str(tmp_path / "hh"))
    subprocess.run([sys.executable, "-m", "holon", "init", "--agent-id", "a"], env=env, check=True)
    for argv, click_seen in (
        (["enqueue", "a", *K, "--text", "hi"], False),
        (["enqueue", "a", "--text", "x"], True),  # a usage error (no --kind) is click's
    ):
        proc = subprocess.run(
            [sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env
        )
        assert proc.stderr.endswith(f"CLICK:{click_seen}"), proc.stderr
    queued = list((tmp_path / "hh" / "agents" / "a" / ".holon" / "queue" / "new").iterdir())
    assert len(queued) == 1


def test_failures_report_one_bounded_line_and_the_contracts_exit_codes(capsys):
    from holon.errors import InvalidInput
    from holon.store.locks import LockBusy

    def raise_(exc):
        def run():
            raise exc

        return run

    assert failures.guarded(lambda: 0) == 0
    assert failures.guarded(raise_(InvalidInput("bad\nthing " + "x" * 900, hint="fix it"))) == 2
    err = capsys.readouterr().err
    line, hint = err.splitlines()
    assert line.startswith("holon: invalid_input: bad thing x") and len(line) < 640
    assert hint == "hint: fix it"
    assert failures.guarded(raise_(LockBusy("/l"))) == 1
    assert capsys.readouterr().err.startswith("holon: busy: another holon process holds")
    assert failures.guarded(raise_(OSError(28, "No space left on device", "/f"))) == 1
    assert capsys.readouterr().err.startswith("holon: disk_full: No space left on device: /f")
    assert failures.guarded(raise_(KeyError("k"))) == 1
    assert capsys.readouterr().err.startswith("holon: internal_error: KeyError: 'k'")
    assert failures.guarded(raise_(KeyboardInterrupt())) == 130
    assert json.dumps(failures.one_line("a\nb")) == '"a b"'


TOKENS = [
    "enqueue", "a", "b", "-", "--", "-h", "--help", "--json", "--json=1", "--kind", "--kind=",
    "channel_event", "webhook_event", "timer_tick", "system_tick", "bogus", "--text", "--text=",
    "--text=hi", "hi", "", " ", "x\ny", "\x00", "\x1b[2J", "é✓", "--json-body", '{"k": 1}',
    "[1, 2]", "NaN", "{bad", "--priority", "interject", "background", "urgent", "--source",
    "--source=s", "--sender", "--event-type", "push", "--unknown", "-x", "=", "a=b",
]  # fmt: skip


@settings(max_examples=int(os.environ.get("HOLON_FUZZ_EXAMPLES") or 40), deadline=None,
          database=None, suppress_health_check=list(HealthCheck))  # fmt: skip
@given(
    st.lists(st.sampled_from(TOKENS), max_size=9).map(
        lambda rest: ["enqueue", "a", "--kind", "channel_event", *rest]
    )
    | st.lists(st.sampled_from(TOKENS), min_size=1, max_size=9)
)
def test_any_command_line_gives_the_same_through_either_path(argv):
    """Random command lines built from the options, their values and hostile text: whichever
    path takes one, the exit code, output, error and queued message are click's."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        results = []
        for i, main in enumerate((entry.main, click_main.main)):
            mp.setenv("HOLON_HOME", os.path.join(tmp, f"h{i}"))
            home = init_home(None, "a")
            mp.setattr(sys, "stdin", Stdin(b"from stdin"))
            out, err = io.StringIO(), io.StringIO()
            mp.setattr(sys, "stdout", out)
            mp.setattr(sys, "stderr", err)
            rc = main(list(argv))
            results.append((rc, _normal(out.getvalue()), _normal(err.getvalue()), _queued(home)))
        assert results[0] == results[1], argv
        assert results[0][0] in (0, 1, 2, 3) and "Traceback" not in results[0][2]
