"""Roll-ups of episodes (holon.context.rollups) are a memory-search source: found by their words,
with their span, and read back whole by MemoryGet."""

from __future__ import annotations

from holon.context import rollups
from holon.home.init import init_home
from holon.memory import index
from holon.store import jsonl


def _episode(n: int, text: str) -> dict:
    return {
        "id": f"ep_{n}",
        "created_at": "2026-05-01T10:00:00.000Z",
        "workspace_id": "agent_home",
        "turns": {"first_index": n, "last_index": n, "count": 1},
        "transcript": {"start_offset": n * 100, "end_offset": n * 100 + 100},
        "summary": f"turn {n} — operator_prompt: {text}",
        "files": [f"src/m{n}.py"],
    }


def test_a_roll_up_is_found_and_read_back_whole():
    home = init_home(None, "mem")
    texts = ["We picked the KESTREL queue because it is durable."] + [
        f"Routine check {n}." for n in range(1, rollups.FANOUT)
    ]
    for n, text in enumerate(texts):
        jsonl.append(home.context_episodes, _episode(n, text))
    (rec,) = rollups.roll_up(home, "mem", before=10**9)
    found = [r for r in index.search(home, "kestrel durable")["results"] if r["kind"] == "rollup"]
    assert len(found) == 1
    (hit,) = found
    assert hit["source_path"] == ".holon/ledger/context_rollups.jsonl"
    assert hit["title"] == f"roll-up, turns 0–{rollups.FANOUT - 1} ({rollups.FANOUT} episodes)"
    assert hit["metadata"]["rollup_id"] == rec["id"] and hit["metadata"]["level"] == 1
    assert hit["metadata"]["turns"]["first_index"] == 0
    got = index.get(home, hit["source_ref"])
    assert got["content"].startswith(rec["summary"])
    assert "src/m7.py" in got["content"]
