"""Fuzz every CLI command and every tool with hostile input (hypothesis), in-process.

The command tree is walked from `holon.cli.main.cli` and the tools from the registry, so a new
command, option or tool is fuzzed without touching this file. For every example: the exit code
is 0-3, nothing says `internal_error` or prints a traceback, a failure is one
`holon: <kind>: <message>` line (plus an optional `hint:` line) or click's usage error, and the
agent home is whole afterwards (every JSON and JSONL file parses, no temp file is left).

Default: a few examples per command and tool (the whole file runs in about a minute). A sweep:
HOLON_FUZZ_EXAMPLES=200 pytest tests/cli/test_fuzz_inputs.py
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from holon.cli.main import cli, main

EXAMPLES = int(os.environ.get("HOLON_FUZZ_EXAMPLES") or 0)
SETTINGS = settings(
    max_examples=EXAMPLES or 12,
    deadline=None,
    database=None,
    derandomize=not EXAMPLES,  # the default run is the same every time; a sweep explores
    suppress_health_check=list(HealthCheck),
)

# commands that run until interrupted or touch the machine outside HOLON_HOME
SKIP_COMMANDS = {("watch",)}
SKIP_OPTIONS = {"--follow", "--install", "--uninstall"}

# ---------------------------------------------------------------------------------------------
# hostile values

SPECIAL = [
    "",
    " ",
    "-",
    "--",
    ".",
    "..",
    "../..",
    "../../../etc/passwd",
    "/",
    "a/b",
    "a/../a",
    "a\n",
    "a\r\nb",
    "\x00",
    "a\x00b",
    "\x01\x02\x7f",
    "\x1b[31mred\x1b[0m",
    "\x1b]0;title\x07",
    "\u202e\u200b",
    "é\u0301",
    "\U0001f600",
    "\ud800",
    "a" * 300,
    "x" * 5000,
    "NaN",
    "nan",
    "Infinity",
    "-inf",
    "1e400",
    "-1",
    "0",
    "1",
    "99999999999999999999",
    "1ms",
    "0s",
    "99999999999999999999d",
    "1.5",
    "true",
    "null",
    "* * * * * *",
    "* * * * *",
    "61 25 32 13 8",
    "@/dev/zero",
    "@/dev/null",
    "@/",
    "@/nonexistent/file",
    "@",
    "[1,2]",
    "{}",
    '{"a": NaN}',
    '{"a": 1e400}',
    '"\\ud800"',
    "[" * 100_000,
    "[" * 70 + "]" * 70,
    '{"a":' * 500 + "1" + "}" * 500,
    "%s%n%x",
    "$(echo hi)",
    "`id`",
    "'; rm -rf / #",
]


def _json_values() -> st.SearchStrategy[Any]:
    leaf = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.sampled_from(SPECIAL),
        st.text(max_size=40),
    )
    return st.recursive(
        leaf,
        lambda kids: st.one_of(
            st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=10), kids, max_size=4)
        ),
        max_leaves=12,
    )


JSON_VALUES = _json_values()
HOSTILE = st.one_of(
    st.sampled_from(SPECIAL),
    st.text(max_size=60),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x7F), max_size=30),
    st.integers(min_value=-(2**80), max_value=2**80).map(str),
    st.floats().map(repr),
    JSON_VALUES.map(lambda v: json.dumps(v, ensure_ascii=False)),
    st.integers(min_value=1, max_value=3000).map(lambda n: "[" * n + "]" * n),
)


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")  # a lone surrogate makes invalid UTF-8


# ---------------------------------------------------------------------------------------------
# the command tree


def _commands() -> list[tuple[tuple[str, ...], click.Command]]:
    found: list[tuple[tuple[str, ...], click.Command]] = []

    def walk(cmd: click.Command, path: tuple[str, ...]) -> None:
        if isinstance(cmd, click.Group):
            ctx = click.Context(cmd)
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None:
                    walk(sub, (*path, name))
        elif path not in SKIP_COMMANDS:
            found.append((path, cmd))

    walk(cli, ())
    return found


COMMANDS = _commands()


def _value(param: click.Parameter) -> st.SearchStrategy[str]:
    """A value for one parameter: usually plausible, often hostile."""
    name = param.name or ""
    if name in ("agent", "agents"):
        return st.one_of(st.just("a"), st.just("a"), HOSTILE)
    if isinstance(param.type, click.Choice):
        return st.one_of(st.sampled_from([str(c) for c in param.type.choices]), HOSTILE)
    if name == "path":  # `holon init PATH` creates it: keep it under the working directory
        return HOSTILE.map(lambda s: "p-" + s.replace("..", "dd").lstrip("/~"))
    return HOSTILE


@st.composite
def argv_for(draw: st.DrawFn, path: tuple[str, ...], cmd: click.Command) -> list[str]:
    argv = list(path)
    for param in cmd.params:
        if isinstance(param, click.Argument):
            count = draw(st.integers(0, 2)) if param.nargs == -1 else 1
            argv += [draw(_value(param)) for _ in range(count)]
            continue
        assert isinstance(param, click.Option)
        opt = max(param.opts, key=len)
        if opt in SKIP_OPTIONS or opt in ("--help", "-h") or not draw(st.booleans()):
            continue
        if param.is_flag:
            argv.append(opt)
        else:
            argv += [opt, draw(_value(param))]
    if draw(st.integers(0, 9)) == 0:  # sometimes an option no command has
        argv.append(draw(st.sampled_from(["--nope", "-z", "--json=1"])))
    return argv


# ---------------------------------------------------------------------------------------------
# running and checking

HOLON_LINE = re.compile(r"holon: [a-z][a-z0-9_]*: \S.*")


def invoke(argv: list[str], stdin: bytes = b"") -> tuple[int, str, str]:
    """`holon ARGV` in this process: exit code, stdout, stderr."""
    from holon import config

    config.reset()
    runner = CliRunner()
    with runner.isolation(input=stdin) as streams:
        code = main(argv)
        out, err = streams[0].getvalue(), streams[1].getvalue()
    return code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def check_outcome(argv: list[str], code: int, err: str) -> None:
    shown = repr(argv)[:300]
    assert code in (0, 1, 2, 3), f"{shown}: exit {code}\n{err[-2000:]}"
    assert "Traceback" not in err, f"{shown}:\n{err[-3000:]}"
    assert "internal_error" not in err, f"{shown}:\n{err[-2000:]}"
    lines = err.splitlines()
    holon_lines = [i for i, line in enumerate(lines) if line.startswith("holon: ")]
    if holon_lines:
        assert len(holon_lines) == 1, f"{shown}: more than one error line:\n{err[-2000:]}"
        i = holon_lines[0]
        assert HOLON_LINE.fullmatch(lines[i]), f"{shown}: malformed error line {lines[i]!r}"
        rest = lines[i + 1 :]
        if rest and rest[-1].startswith("log: "):  # `tick --log` ends with where the log is
            rest = rest[:-1]
        assert len(rest) <= 1 and all(r.startswith("hint: ") for r in rest), (
            f"{shown}: the error line is followed by {rest!r}"
        )
        assert len(lines[i]) <= 1000, f"{shown}: error line of {len(lines[i])} characters"
    elif code == 2:
        raise AssertionError(f"{shown}: exit 2 without a `holon: usage:` line:\n{err}")


def check_home(root: Path) -> None:
    """Nothing half-written: every JSON/JSONL file parses; no temporary file remains."""
    for path in root.rglob("*"):
        name = path.name
        assert ".tmp." not in name, f"temporary file left: {path}"
        if not path.is_file() or name.endswith(".corrupt"):
            continue
        if name.endswith(".json"):
            json.loads(path.read_bytes())
        elif name.endswith(".jsonl"):
            for line in path.read_bytes().splitlines():
                json.loads(line)


@pytest.fixture
def fuzz_home(holon_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from holon.home.init import init_home

    init_home(None, "a")
    work = tmp_path / "cwd" / "1" / "2" / "3" / "4"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    for var in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.setenv(var, "http://127.0.0.1:9/v1")  # no network, ever: a closed port
    monkeypatch.setenv("HOLON_TASK_INPUT_TIMEOUT_S", "1")
    return holon_env


@pytest.mark.parametrize("path,cmd", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS] or ["none"])
def test_fuzz_command(path: tuple[str, ...], cmd: click.Command, fuzz_home: Path) -> None:
    @SETTINGS
    @given(argv=argv_for(path, cmd), stdin=st.one_of(st.just(b""), HOSTILE.map(_bytes)))
    def run(argv: list[str], stdin: bytes) -> None:
        code, _out, err = invoke(argv, stdin)
        check_outcome(argv, code, err)
        check_home(fuzz_home)

    run()


# ---------------------------------------------------------------------------------------------
# tools


def _tool_names() -> list[str]:
    from holon.tools import registry

    return registry.names()


TOOLS = _tool_names()


@st.composite
def tool_input(draw: st.DrawFn, name: str) -> str:
    """`--input` for tool NAME: an object of its own fields with hostile values, or worse."""
    from holon.tools import registry

    tool = registry.get(name)
    assert tool is not None
    fields = list(tool.Args.model_fields)
    shape = draw(st.integers(0, 9))
    if shape == 0:
        return draw(HOSTILE)
    args: dict[str, Any] = {}
    for field in fields:
        if draw(st.booleans()):
            args[field] = draw(st.one_of(JSON_VALUES, st.sampled_from(SPECIAL)))
    if shape == 1:
        args[draw(st.text(max_size=20))] = draw(JSON_VALUES)
    if "cmd" in fields and draw(st.booleans()):  # a command that can run, with hostile options
        args["cmd"] = draw(st.sampled_from(["true", "echo hi", "exit 3", "printf '\\033[2J'"]))
    if "yield_time_ms" in args and not isinstance(args["yield_time_ms"], int):
        pass  # hostile types stay: they must be refused, not run
    elif "cmd" in args:
        args["yield_time_ms"] = draw(st.integers(0, 2000))  # never wait long on a real command
    return json.dumps(args, ensure_ascii=draw(st.booleans()))


@pytest.mark.parametrize("name", TOOLS)
def test_fuzz_tool(name: str, fuzz_home: Path) -> None:
    @SETTINGS
    @given(raw=tool_input(name))
    def run(raw: str) -> None:
        argv = ["tool", "call", "a", name, "--input", raw]
        code, out, err = invoke(argv)
        check_outcome(argv, code, err)
        if code in (0, 1) and out.strip().startswith("{"):
            env = json.loads(out)
            assert env["status"] in ("success", "error"), env
            if env["status"] == "error":
                assert len(json.dumps(env["error"], ensure_ascii=False)) < 20_000, (
                    "an error echoes a huge input"
                )
        check_home(fuzz_home)

    run()
