"""Recall over an agent's life: 20 facts planted by the operator at turns 1, 10, 50 and 150 of a
run of hundreds of turns (about 19 KB of tool output a turn, a 128k-token window, so the window
is compacted again and again), then checked four ways:

- visible: the fact is in the request the agent would send next (system blocks, episode block,
  conversation), after the run;
- in-turn: the agent's own MemorySearch, asked with the operator's paraphrased question as its
  query, shows the fact in its top 5 (what the model reads: titles and snippets);
- cli: `holon memory search AGENT QUERY --limit 5` with a natural query shows it;
- lost: none of the three.

It also counts the facts in the episode records and the episode summaries that name the command
their turns ran, and reports the context build time per turn at two ages (turn 100 and the run's
last turns; bench_context.py measures that ratio interleaved).
Targets (issue 36): in-turn >= 18/20, visible >= 80% including the first turns, none lost.
Run: PYTHONPATH=. python benchmarks/bench_recall.py [--quick]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

WINDOW = 128_000
PLANT_AT = (1, 10, 50, 150)
# about 19 KB of log lines a turn
CMD = "seq -f 'worker %g: processed batch of records, status ok' 1 380"
# (planted sentence, operator's paraphrased question, natural CLI query, marker): the marker is
# in the sentence and in neither the question nor the query; each question shares a word or two
# with its sentence (the index matches words, it does not stem them)
FACTS = (
    (
        "We chose PostgreSQL for the billing service because it gives us row-level locking.",
        "Which database did we pick for billing, and why?",
        "billing database",
        "PostgreSQL",
    ),
    (
        "The staging cluster lives in the Frankfurt region, eu-central-1.",
        "Where is our staging cluster hosted?",
        "staging cluster region",
        "Frankfurt",
    ),
    (
        "The weekly release freeze begins every Thursday at 15:00 UTC.",
        "When does the release freeze start each week?",
        "release freeze",
        "Thursday",
    ),
    (
        "The on-call escalation contact is Marguerite Okafor.",
        "Who do we escalate on-call incidents to?",
        "on-call escalation",
        "Okafor",
    ),
    (
        "The internal API gateway listens on port 8443.",
        "Which port does the internal API gateway use?",
        "API gateway port",
        "8443",
    ),
    (
        "The nightly backup job keeps 35 days of snapshots.",
        "How long do we retain the nightly backup snapshots?",
        "backup retention",
        "35 days",
    ),
    (
        "Customer exports must be encrypted with age, not GPG.",
        "What tool should encrypt customer exports?",
        "encrypt customer exports",
        "not GPG",
    ),
    (
        "The mobile app's minimum supported iOS version is 16.4.",
        "What is the oldest iOS version the mobile app supports?",
        "minimum iOS version",
        "16.4",
    ),
    (
        "Feature flags are managed in a self-hosted Unleash instance.",
        "What system manages our feature flags?",
        "feature flags",
        "Unleash",
    ),
    (
        "The search service was rewritten in Rust to cut its p99 latency.",
        "Why was the search service rewritten, and in what?",
        "search service rewrite",
        "Rust",
    ),
    (
        "The data warehouse is Snowflake; the dbt models run hourly.",
        "Which data warehouse do we use?",
        "data warehouse",
        "Snowflake",
    ),
    (
        "Invoices are generated on the 3rd business day of each month.",
        "On which day of the month do invoices go out?",
        "invoices generated",
        "3rd business day",
    ),
    (
        "The legacy monolith repository is called atlas-core.",
        "What is the name of the legacy monolith repo?",
        "legacy monolith repository",
        "atlas-core",
    ),
    (
        "Load tests must stay under 2,000 requests per second against production.",
        "What is the load test limit against production?",
        "load tests production",
        "2,000",
    ),
    (
        "The design system uses the Inter typeface at 14 px.",
        "Which font does our design system use?",
        "design system typeface",
        "Inter typeface",
    ),
    (
        "Password hashing uses argon2id with 64 MiB of memory.",
        "What algorithm do we use for password hashing?",
        "password hashing",
        "argon2id",
    ),
    (
        "The Kafka topic for order events is orders.v3.",
        "What topic carries the order events?",
        "order events topic",
        "orders.v3",
    ),
    (
        "Our SLA promises 99.95% monthly uptime to enterprise customers.",
        "What uptime do we promise enterprise customers?",
        "enterprise uptime SLA",
        "99.95",
    ),
    (
        "Terraform state is stored in the bucket tf-state-prod-7731.",
        "Where is the Terraform state kept?",
        "terraform state bucket",
        "tf-state-prod-7731",
    ),
    (
        "The code freeze for the Q3 launch begins on September 12.",
        "When does the Q3 launch code freeze begin?",
        "Q3 code freeze",
        "September 12",
    ),
)
PER_TURN = len(FACTS) // len(PLANT_AT)


def planted(turn: int) -> list[tuple[str, str, str, str]]:
    """The facts the operator's message of `turn` (1-based) carries."""
    if turn not in PLANT_AT:
        return []
    i = PLANT_AT.index(turn) * PER_TURN
    return list(FACTS[i : i + PER_TURN])


def message(turn: int) -> str:
    facts = planted(turn)
    if not facts:
        return f"Step {turn}: run the batch check again and report."
    lines = [f"Step {turn}: before you run the batch check, note these for later:"]
    return "\n".join(lines + [f"- {fact}" for fact, _, _, _ in facts])


def write_script(path: Path, turns: int) -> None:
    """`turns` turns of one ExecCommand round and a reply, then one turn per fact: MemorySearch
    with the operator's question, and a reply."""
    with open(path, "w") as fh:
        for i in range(turns):
            call = {"id": f"c{i}", "name": "ExecCommand", "arguments": {"cmd": CMD, "login": False}}
            fh.write(json.dumps({"text": "", "tool_calls": [call]}) + "\n")
            fh.write(json.dumps({"text": f"Batch check {i + 1} done; all ok."}) + "\n")
        for i, (_, question, _, _) in enumerate(FACTS):
            args = {"query": question, "limit": 5}
            call = {"id": f"q{i}", "name": "MemorySearch", "arguments": args}
            fh.write(json.dumps({"text": "", "tool_calls": [call]}) + "\n")
            fh.write(json.dumps({"text": "Answered from memory."}) + "\n")


def run_turn(home, text: str, model: str) -> None:
    from holon.agent.admission import admit
    from holon.runtime.tick import tick

    admit(home, "cli_prompt", "operator_prompt", {"type": "text", "text": text})
    tick(home, model=model)


def visible(home, model: str) -> str:
    """Everything the agent's next request holds, as one text."""
    from holon.ops import debug

    return json.dumps(debug.next_prompt(home, model)["request"], ensure_ascii=False)


def cli_found(env: dict[str, str], query: str, marker: str) -> bool:
    cmd = [sys.executable, "-m", "holon", "memory", "search", "bench", query, "--json"]
    r = subprocess.run([*cmd, "--limit", "5"], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        return False
    results = json.loads(r.stdout).get("results") or []
    return any(marker in f"{x.get('title', '')} {x.get('snippet', '')}" for x in results)


def in_turn_found(home) -> dict[str, bool]:
    """Question -> whether the MemorySearch of its turn showed the fact's marker."""
    from holon.store import jsonl

    shown: dict[str, str] = {}
    calls: dict[str, str] = {}
    for e in jsonl.read(home.transcript):
        data = e.get("data") or {}
        if e.get("kind") == "assistant_round":
            for c in data.get("tool_calls") or []:
                if c.get("name") == "MemorySearch":
                    calls[c["id"]] = (c.get("arguments") or {}).get("query", "")
        elif e.get("kind") == "tool_result" and data.get("call_id") in calls:
            shown[calls[data["call_id"]]] = str(data.get("rendered", ""))
    return {q: marker in shown.get(q, "") for _, q, _, marker in FACTS}


def build_ms(home, first: int, last: int) -> float:
    """Median context build time per turn (all rounds) over turns [first, last] (1-based)."""
    from holon.store import jsonl

    per_turn: dict[str, float] = {}
    for e in jsonl.read(home.events):
        if e["kind"] == "turn_context_built":
            d = e["data"]
            us = d.get("context_build_us", d["context_build_ms"] * 1000)
            per_turn[d["turn_id"]] = per_turn.get(d["turn_id"], 0.0) + us / 1000
    values = list(per_turn.values())[first - 1 : last]
    return statistics.median(values) if values else float("nan")


def report(rows: list[tuple[int, str, dict[str, bool]]]) -> None:
    cols = ("visible", "in-turn", "cli", "episodes", "lost")
    print(f"{'planted at':<12}" + "".join(f"{c:>10}" for c in cols))
    for at in PLANT_AT:
        mine = [r for t, _, r in rows if t == at]
        cells = "".join(f"{sum(r[c] for r in mine):>7}/{len(mine):<2}" for c in cols)
        print(f"turn {at:<7}{cells}")
    total = {c: sum(r[c] for _, _, r in rows) for c in cols}
    n = len(rows)
    print(f"{'all':<12}" + "".join(f"{total[c]:>7}/{n:<2}" for c in cols))
    for at, marker, r in rows:
        if r["lost"] or not r["in-turn"]:
            where = ", ".join(c for c in cols[:4] if r[c]) or "nowhere"
            print(f"  turn {at} fact {marker!r}: {where}")
    verdicts = [
        ("in-turn >= 18/20", total["in-turn"] >= 18 * n / 20),
        ("visible >= 80%", total["visible"] >= 0.8 * n),
        ("visible from turn 1", all(r["visible"] for t, _, r in rows if t == PLANT_AT[0])),
        ("none lost", total["lost"] == 0),
    ]
    print("targets: " + "; ".join(f"{name}: {'ok' if ok else 'MISSED'}" for name, ok in verdicts))


def main() -> int:
    quick = "--quick" in sys.argv
    turns = 200 if quick else 320
    tmp = Path(tempfile.mkdtemp(prefix="holon-bench-recall-"))
    os.environ.update(HOLON_HOME=str(tmp / "home"), HOLON_CONTEXT_WINDOW=str(WINDOW))
    try:
        from holon.agent.handle import Agent
        from holon.home.init import init_home
        from holon.store import jsonl

        home = init_home(None, "bench")
        script = tmp / "script.jsonl"
        write_script(script, turns)
        model = f"scripted/{script}"
        for i in range(1, turns + 1):
            run_turn(home, message(i), model)
        state = Agent(home).state()
        print(
            f"{turns} turns, {len(FACTS)} facts planted at turns "
            f"{', '.join(map(str, PLANT_AT))}; {WINDOW}-token window; "
            f"{state.context.compression_epoch} compactions, "
            f"{state.context.compacted_turns} turns folded"
        )
        prompt = visible(home, model)
        records = list(jsonl.read(home.context_episodes))
        episodes = json.dumps(records, ensure_ascii=False)
        named = sum(1 for r in records if "seq -f" in str(r.get("summary", "")))
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
        cli = {marker: cli_found(env, query, marker) for _, _, query, marker in FACTS}
        for _, question, _, _ in FACTS:
            run_turn(home, question, model)
        asked = in_turn_found(home)
        rows = []
        for at in PLANT_AT:
            for _, question, _, marker in planted(at):
                r = {
                    "visible": marker in prompt,
                    "in-turn": asked[question],
                    "cli": cli[marker],
                    "episodes": marker in episodes,
                }
                r["lost"] = not (r["visible"] or r["in-turn"] or r["cli"])
                rows.append((at, marker, r))
        report(rows)
        print(f"episode summaries that name their command: {named}/{len(records)}")
        early, late = build_ms(home, 91, 100), build_ms(home, turns - 9, turns)
        print(
            f"context build per turn (ms): turn 100: {early:.1f}, turn {turns}: {late:.1f} "
            f"({late / early:.2f}x; not interleaved, see bench_context.py)"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
