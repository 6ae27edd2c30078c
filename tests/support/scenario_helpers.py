"""Shared test helpers: run the CLI in process, build agents,
normalise transcripts for golden files."""

from __future__ import annotations

import io
import json
import os
import re
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "golden" / "scenarios"
T0 = 1_800_000_000.0  # a pinned HOLON_NOW


def cli(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    from holon.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO((stdin or "").encode()))
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = main(list(args))
    finally:
        sys.stdin = old_stdin
    return code, out.getvalue(), err.getvalue()


def init_agent(agent_id: str = "a"):
    from holon.home.registry import resolve

    code, _, err = cli("init", "--agent-id", agent_id)
    assert code == 0, err
    return resolve(agent_id)


def set_now(monkeypatch, ts: float) -> None:
    monkeypatch.setenv("HOLON_NOW", str(ts))


def subprocess_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    env["PYTHONPATH"] = str(REPO)
    env.update(extra)
    return env


_ID = re.compile(r"\b(msg|turn|tr|evt|brf|wi|dsum|tmr|trg)_[0-9a-z]{14,}\b")
_TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


def normalize(text: str, tmp: str | None = None) -> str:
    if tmp:
        text = text.replace(tmp, "<TMP>")
    seen: dict[str, str] = {}

    def sub(m: re.Match) -> str:
        key = m.group(0)
        if key not in seen:
            prefix = m.group(1).split("_")[0]
            count = sum(1 for v in seen.values() if v.startswith(prefix + "_"))
            seen[key] = f"{prefix}_{count + 1}"
        return seen[key]

    text = _ID.sub(sub, text)
    return _TS.sub("<TS>", text)


def transcript_view(home) -> str:
    """The transcript as compact lines: what the model and the operator saw,
    without ids or times."""
    from holon.store import jsonl

    lines = []
    for e in jsonl.read(home.transcript):
        d = e["data"]
        k = e["kind"]
        if k == "message":
            row = {
                "message": d["message_kind"],
                "origin": d["origin_kind"],
                "authority": d["authority_class"],
                "priority": d["priority"],
                "text": d["text"],
            }
        elif k == "assistant_round":
            row = {
                "assistant": d["text"],
                "calls": [[c["name"], c.get("arguments")] for c in d["tool_calls"]],
            }
        elif k == "tool_result":
            env = d["envelope"]
            row = {
                "tool_result": d["tool_name"],
                "status": d["status"],
                "summary": env.get("summary_text"),
            }
            if env.get("error"):
                row["error"] = env["error"]["kind"]
        elif k == "brief":
            b = d["brief"]
            row = {
                "brief": b["kind"],
                "visibility": b["visibility"],
                "text": b["text"],
                "work_item": b.get("work_item_id"),
            }
        elif k == "turn_terminal":
            row = {"turn_terminal": d["kind"]}
        else:
            continue
        lines.append(json.dumps(row, ensure_ascii=False, sort_keys=True))
    return "\n".join(lines) + "\n"


def check_golden(name: str, actual: str) -> None:
    from golden_check import check_golden as check

    check(f"scenarios/{name}/expected.txt", actual)


def script_for(name: str, home, substitutions: dict[str, str]) -> Path:
    """Copy golden/scenarios/<name>/script.jsonl into the agent home
    with {{placeholders}} filled."""
    text = (GOLDEN / name / "script.jsonl").read_text()
    for key, value in substitutions.items():
        text = text.replace("{{" + key + "}}", value)
    dest = home.root / "script.jsonl"
    dest.write_text(text)
    return dest
