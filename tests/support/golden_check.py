"""Golden files: one shared normalize() and compare-or-rewrite
(HOLON_UPDATE_GOLDEN=1 or pytest --update-golden)."""

import os
import re
from pathlib import Path

GOLDEN = Path(__file__).resolve().parents[2] / "golden"


def check_golden(relative: str, actual: str) -> None:
    """Compare with golden/<relative>; HOLON_UPDATE_GOLDEN=1 rewrites it;
    a missing file is written and fails."""
    path = GOLDEN / relative
    if os.environ.get("HOLON_UPDATE_GOLDEN") == "1" or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        assert os.environ.get("HOLON_UPDATE_GOLDEN") == "1", (
            f"golden file {path} was missing and has been written; review it and rerun"
        )
        return
    assert actual == path.read_text(encoding="utf-8"), (
        f"{path} differs; review and rerun with --update-golden"
    )


_RULES = [
    (
        re.compile(r"\b(msg|turn|tr|evt|brf|task|wi|tmr|trg|call|ep)_[0-9a-z]{11}[0-9a-f]{6}\b"),
        r"\1_<id>",
    ),
    (re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})"), "<time>"),
    (
        re.compile(
            r'"(duration_ms|context_build_ms|provider_round_ms|pid|run_owner_pid|bytes)": \d+'
        ),
        r'"\1": <n>',
    ),
    (re.compile(r"\b\d+ ms\b"), "<n> ms"),
]


def normalize(text: str, *paths: str | os.PathLike) -> str:
    for p in sorted((os.fspath(p) for p in paths if p), key=len, reverse=True):
        text = text.replace(p, "<tmp>")
    for pattern, repl in _RULES:
        text = pattern.sub(repl, text)
    return text


def check(relative: str, actual: str) -> None:
    check_golden(relative, actual)
