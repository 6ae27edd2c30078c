"""What one turn did, read from its rounds and tool results: commands run, files touched,
verification, and a one-line account. Deterministic: the same turn always gives the same
evidence, so working memory and episodes replay exactly."""

from __future__ import annotations

import re
from typing import Any

from holon.text import shorten

# a verification command: a test, lint, type-check or build tool at the start of a command
# (after `cd dir &&`, env assignments or a pipe), not any command that mentions "test"
VERIFY = re.compile(
    r"(?:^|[;&|(]\s*)(?:\w+=\S*\s+)*"
    r"(?:python3? -m (?:pytest|unittest|mypy|ruff)|uv run |poetry run )?(?:[\w.~-]*/)*"
    r"(?:pytest|tox|nox|ruff|mypy|pyright|flake8|eslint|tsc|jest|vitest|ctest|"
    r"cargo (?:test|check|clippy|build)|go (?:test|vet|build)|npm (?:test|run)|"
    r"yarn (?:test|run)|pnpm (?:test|run)|make|gradle|mvn|\./\S*test\S*)\b"
)
CMD_CHARS = 160
ASK_HEAD, ASK_TAIL = 300, 200  # a long message keeps its start and its end
REPLY_HEAD, REPLY_TAIL = 160, 80  # a reply's conclusion is often at its end: both are kept
# a reply that gives a reason or a choice: a decision worth keeping, not a routine report
REASONED = re.compile(
    r"\b(?:because|since|so that|due to|in order to|decided|decide|chose|choose|chosen|"
    r"instead of|rather than|prefer|trade-?off|went with|switched to|will not|won't)\b",
    re.IGNORECASE,
)
# calls that change what the agent works on (as a changed file does): the turn's reply is a
# decision
WORK_TOOLS = frozenset({"CreateWorkItem", "UpdateWorkItem", "CompleteWorkItem", "PickWorkItem"})


def excerpt(text: str, head: int = ASK_HEAD, tail: int = ASK_TAIL) -> str:
    """The start and the end of a text on one line (a code word at either end survives)."""
    flat = " ".join(text.split())
    if len(flat) <= head + tail + 3:
        return flat
    if tail <= 0:
        return f"{flat[:head].rstrip()} …"
    return f"{flat[:head].rstrip()} … {flat[-tail:].lstrip()}"


def _calls(rounds: list[dict[str, Any]], results: dict[str, dict[str, Any]]):
    for index, rnd in enumerate(rounds):
        for call in rnd.get("tool_calls") or []:
            yield call, results.get(f"{index}:{call.get('id')}") or {}


def _exit(envelope: dict[str, Any]) -> Any:
    result = envelope.get("result") or {}
    if not isinstance(result, dict):
        return None
    if "exit_status" in result:
        return result.get("exit_status")
    return result.get("disposition")


def turn_evidence(
    message: dict[str, Any], rounds: list[dict[str, Any]], results: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    commands: list[dict[str, Any]] = []
    files: list[str] = []
    tools: dict[str, int] = {}
    for call, res in _calls(rounds, results):
        name = str(call.get("name"))
        tools[name] = tools.get(name, 0) + 1
        args = call.get("arguments") or {}
        env = res.get("envelope") or {}
        if name == "ExecCommand" and isinstance(args.get("cmd"), str):
            commands.append({"cmd": shorten(args["cmd"], CMD_CHARS), "exit": _exit(env)})
        elif name == "ExecCommandBatch":
            items = ((env.get("result") or {}).get("items")) or []
            for item in items if isinstance(items, list) else []:
                if isinstance(item, dict) and isinstance(item.get("cmd"), str):
                    commands.append(
                        {"cmd": shorten(item["cmd"], CMD_CHARS), "exit": item.get("exit_status")}
                    )
        elif name == "ApplyPatch" and env.get("status") == "success":
            result = env.get("result") or {}
            for group in ("added", "modified", "deleted"):
                files += [str(p) for p in result.get(group) or []]
            files += [str(r.get("to")) for r in result.get("renamed") or [] if isinstance(r, dict)]
    verification = [c for c in commands if VERIFY.search(c["cmd"])]
    final = rounds[-1].get("text", "") if rounds else ""
    replied = excerpt(final, REPLY_HEAD, REPLY_TAIL) if final else ""
    changed = bool(files) or bool(WORK_TOOLS & set(tools))
    return {
        "asked": excerpt(str(message.get("text", ""))),
        "kind": message.get("message_kind"),
        "replied": replied,
        "decided": bool(replied) and (changed or bool(REASONED.search(final))),
        "commands": commands,
        "files": list(dict.fromkeys(files)),
        "verification": verification,
        "tools": tools,
        "rounds": len(rounds),
    }


def command_line(c: dict[str, Any]) -> str:
    status = c.get("exit")
    return f"`{c['cmd']}` → {'exit ' + str(status) if isinstance(status, int) else status}"
