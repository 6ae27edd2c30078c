"""Property: a real `git diff` of random before/after files applies back to exactly the after bytes,
also with its hunk line numbers shifted wherever each hunk's context is unique."""

import re
import shutil
import subprocess
from pathlib import Path
from tempfile import TemporaryDirectory

import lark
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from holon.agent.handle import Agent
from holon.home.layout import Home
from holon.patch.grammar import GRAMMAR
from holon.patch.parser import parse_patch
from holon.patch.textfile import decode
from holon.tools.base import ToolContext
from holon.tools.registry import call

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
GRAMMAR_PARSER = lark.Lark(GRAMMAR, start="start")
HEADER = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@", re.MULTILINE)

line = st.one_of(
    st.sampled_from(["", "}", "x", "  return y", "z\t", "z"]),
    st.text(alphabet="abcdefgh \u00e9", min_size=1, max_size=8),
)


@st.composite
def edits(draw):
    before = draw(st.lists(line, max_size=30))
    after = list(before)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(after)))
        op = draw(st.sampled_from(["insert", "delete", "replace"]))
        if op == "insert" or not after[at:]:
            after[at:at] = draw(st.lists(line, min_size=1, max_size=3))
        elif op == "delete":
            del after[at : at + draw(st.integers(1, 3))]
        else:
            after[at] = draw(line)
    crlf = draw(st.booleans())
    return _encode(before, draw(st.booleans()), crlf), _encode(after, draw(st.booleans()), crlf)


def _encode(lines: list[str], final_newline: bool, crlf: bool) -> bytes:
    sep = "\r\n" if crlf else "\n"
    text = sep.join(lines) + (sep if final_newline and lines else "")
    return text.encode("utf-8")


def git_patch(work: Path, before: bytes, after: bytes) -> str:
    (work / "before.txt").write_bytes(before)
    (work / "after.txt").write_bytes(after)
    out = subprocess.run(
        [
            "git",
            "-c",
            "core.quotepath=false",
            "diff",
            "--no-index",
            "--no-color",
            "--no-ext-diff",
            "before.txt",
            "after.txt",
        ],
        cwd=work,
        capture_output=True,
        check=False,
    ).stdout
    lines = out.decode("utf-8").split("\n")
    start = next(i for i, text in enumerate(lines) if text.startswith("--- "))
    return "\n".join(["--- a/f.txt", "+++ b/f.txt"] + lines[start + 2 :])


def run(work: Path, before: bytes, patch: str) -> dict:
    root = work / "root"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    (root / "f.txt").write_bytes(before)
    env = call(
        ToolContext(agent=Agent(Home(root, "t")), execution_root=root, cwd=root),
        "ApplyPatch",
        {"patch": patch},
    ).envelope
    env["after"] = (root / "f.txt").read_bytes()
    return env


def occurrences(keys: list[str], old: list[str]) -> int:
    if not old:
        return 1 if not keys else 2
    return sum(1 for s in range(len(keys) - len(old) + 1) if keys[s : s + len(old)] == old)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits(), st.lists(st.integers(-6, 6), min_size=8, max_size=8))
def test_git_diff_applies_back_exactly_even_when_shifted(case, shifts):
    before, after = case
    assume(before != after)
    with TemporaryDirectory() as tmp:
        work = Path(tmp)
        patch = git_patch(work, before, after)
        GRAMMAR_PARSER.parse(patch)
        env = run(work, before, patch)
        assert env["status"] == "success", env["error"]
        assert env["after"] == after
        offsets = iter(shifts * 10)
        shifted = HEADER.sub(
            lambda m: f"@@ -{max(0, int(m[1]) + next(offsets))}{m[2] or ''} +{m[3]}{m[4] or ''} @@",
            patch,
        )
        keys = decode(before, "f.txt").keys
        unique = all(occurrences(keys, h.old_lines) == 1 for h in parse_patch(shifted)[0].hunks)
        env = run(work, before, shifted)
        if unique:
            assert env["status"] == "success", env["error"]
            assert env["after"] == after
        else:
            assert env["status"] == "success" or env["error"]["kind"] in (
                "ambiguous_context",
                "context_not_found",
            )
