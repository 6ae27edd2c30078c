"""Long-lived agents over the real transports (OpenAI Responses, Anthropic Messages) against the
loopback server: hundreds of turns whose tool output is 20 KB each stay within the model's
window and the request size plateaus; a turn of 600 rounds keeps its operator message; what turn
1 said survives in an episode once the window has rolled past it; a context-length error is
recovered from within the turn, and a turn that cannot fit fails and teaches a smaller window.

The 300-turn run happens once per transport (module-scoped fixture); several tests read it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from helpers import run, subprocess_env
from provider_kits import (
    AnthropicKit,
    Driver,
    ResponsesKit,
    Wire,
    exec_then_final,
    isolate_env,
    share_tls_context,
    skip_fsync,
)

from holon import config
from holon.agent.handle import Agent
from holon.context.fit import KEEP_FULL, STEP
from holon.prompt.request import EPISODE_SHARE
from holon.store import jsonl

WINDOW = 64_000
TURNS = 300
CODE_WORD = "AMBER-FALCON-4471"
FIRST_ASK = f"Remember the code word {CODE_WORD}. Then run the command and report."
TRANSPORTS = [ResponsesKit(), AnthropicKit()]


def _ids(kit: Any) -> str:
    return kit.transport


# -- the 300-turn run ----------------------------------------------------------------------------


@dataclass
class LongRun:
    kit: Any
    wire: Wire
    home: Any
    log: list[tuple[int, int, int]] = field(default_factory=list)  # (turn, request, bytes)
    shapes: set[str] = field(default_factory=set)  # the request minus its conversation
    code_word: list[tuple[int, int, frozenset[str]]] = field(default_factory=list)
    marks: list[tuple[int, int, dict[str, Any]]] = field(default_factory=list)  # Anthropic
    # (turn, round, body) of the first request without turn 1's message
    rolled: tuple[int, int, dict[str, Any]] | None = None
    last: dict[str, Any] | None = None
    epoch: int = -1  # compression epoch of the previous request
    prefix_checked: int = 0  # consecutive requests with no compaction between them
    prefix_breaks: list[tuple[int, int, str]] = field(default_factory=list)
    episode_bytes: list[int] = field(default_factory=list)  # per request, parallel to log
    seconds: float = 0.0

    def observe(self, d: Driver, rec: Any) -> None:
        body = rec.json
        epoch = Agent(self.home).state().context.compression_epoch
        if self.last is not None and epoch == self.epoch:
            self.prefix_checked += 1
            problem = self.wire.prefix_problem(self.last, body)
            if problem:
                self.prefix_breaks.append((d.turn, d.round, problem))
        self.last, self.epoch = body, epoch
        conversation_key = "input" if self.wire.openai else "messages"
        shape = {k: v for k, v in body.items() if k != conversation_key}
        self.shapes.add(json.dumps(shape, sort_keys=True))
        places = set()
        episode = self.wire.episode_text(body)
        self.episode_bytes.append(len(episode.encode("utf-8")))
        if CODE_WORD in episode:
            places.add("episodes")
        if CODE_WORD in self.wire.conversation(body):
            places.add("conversation")
        if CODE_WORD in json.dumps(shape):
            places.add("system")
        self.code_word.append((d.turn, d.round, frozenset(places)))
        if d.turn > 1 and "conversation" not in places and self.rolled is None:
            self.rolled = (d.turn, d.round, body)
        if not self.wire.openai:
            self.marks.append((d.turn, d.round, cache_marks(body)))

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [e["data"] for e in jsonl.read(self.home.events) if e["kind"] == kind]


def cache_marks(body: dict[str, Any]) -> dict[str, Any]:
    """Where an Anthropic request carries cache_control: system block indexes and
    (message, block) positions."""
    system = [i for i, b in enumerate(body["system"]) if "cache_control" in b]
    messages = [
        (mi, bi)
        for mi, m in enumerate(body["messages"])
        for bi, b in enumerate(m["content"])
        if isinstance(b, dict) and "cache_control" in b
    ]
    last = (len(body["messages"]) - 1, len(body["messages"][-1]["content"]) - 1)
    first = body["messages"][0]["content"][0]
    episode = str(first.get("text", "")).startswith("# Earlier context")
    return {
        "system": system,
        "system_len": len(body["system"]),
        "messages": messages,
        "last": last,
        "episode": episode,
    }


@pytest.fixture(scope="module", params=TRANSPORTS, ids=_ids)
def long_run(request, module_server, tmp_path_factory):
    kit = request.param
    root = tmp_path_factory.mktemp(f"long-{kit.provider}")
    # the environment is set for the run only: the tests read what it recorded
    with pytest.MonkeyPatch.context() as mp:
        isolate_env(mp, root)
        mp.setenv("HOLON_CONTEXT_WINDOW", str(WINDOW))
        mp.setenv("HOLON_DEFAULT_DAILY_TOKENS", "0")  # hundreds of turns: no daily budget
        kit.setup(module_server, mp)
        share_tls_context(mp)
        skip_fsync(mp)
        config.reset()
        from holon.home.init import init_home

        home = init_home(None, "a")
        module_server.requests.clear()
        driver = Driver(home, module_server, kit)
        result = LongRun(kit, driver.wire, home)
        driver.observe = result.observe
        t0 = time.monotonic()
        for i in range(1, TURNS + 1):
            ask = FIRST_ASK if i == 1 else f"Turn {i}: run the command and report."
            turn = driver.run_turn(ask, keep=False)
            assert turn["status"] == "completed", turn
        result.seconds = time.monotonic() - t0
        result.log = driver.log
    config.reset()
    return result


def _budget(run_: LongRun) -> int:
    built = run_.events("turn_context_built")
    budgets = {e["prompt_budget"] for e in built}
    assert len(budgets) == 1, budgets
    return budgets.pop()


def test_requests_stay_within_the_budget_and_plateau_over_300_turns(long_run):
    log = long_run.log
    assert len(log) == 2 * TURNS  # each turn: the ExecCommand round, then the final text
    budget = _budget(long_run)
    built = long_run.events("turn_context_built")
    assert len(built) == 2 * TURNS
    over = [e for e in built if e["estimated_tokens"] > e["prompt_budget"]]
    assert not over, over[:3]
    largest = max(size for _, _, size in log)
    assert largest / 4 <= budget, (largest, budget)
    assert long_run.events("context_compacted"), "300 turns of 20 KB never compacted"

    first = {turn: size for turn, n, size in log if n == 0}
    at_100, at_300 = first[100], first[300]
    max_91_100 = max(size for turn, _, size in log if 91 <= turn <= 100)
    max_291_300 = max(size for turn, _, size in log if 291 <= turn <= 300)
    # what grows between turn 100 and 300 is the episode block, up to its share of the budget
    episodes_at = dict(zip([(t, n) for t, n, _ in log], long_run.episode_bytes, strict=True))
    assert max(long_run.episode_bytes) / 4 <= EPISODE_SHARE * budget
    print(
        f"\n[{long_run.kit.transport}] {TURNS} turns in {long_run.seconds:.1f}s; budget {budget} "
        f"tokens; largest request {largest} B (~{largest // 4} tokens, "
        f"{largest / 4 / budget:.2f} of budget); first request turn 100 {at_100} B, turn 300 "
        f"{at_300} B (x{at_300 / at_100:.3f}); max turns 91-100 {max_91_100} B, 291-300 "
        f"{max_291_300} B (x{max_291_300 / max_91_100:.3f}); "
        f"compactions {len(long_run.events('context_compacted'))}; episode block turn 100 "
        f"{episodes_at[(100, 0)]} B, turn 300 {episodes_at[(300, 0)]} B"
    )
    assert at_300 <= 1.2 * at_100
    assert max_291_300 <= 1.2 * max_91_100


def test_turn_1_code_word_survives_in_an_episode_after_the_window_rolls(long_run):
    transcript = list(jsonl.read(long_run.home.transcript))
    first_turn = next(e for e in transcript if e["kind"] == "message")["turn_id"]
    episodes = list(jsonl.read(long_run.home.context_episodes))
    holding = [ep for ep in episodes if CODE_WORD in ep["summary"]]
    assert holding, "no episode summary kept the code word of turn 1"
    assert holding[0]["turns"]["first_turn_id"] == first_turn

    # turn 1 is in the conversation while the window holds it ...
    assert "conversation" in long_run.code_word[0][2]
    # ... and once the window has rolled past it, the code word is in the episode block only
    assert long_run.rolled is not None, "the window never rolled past turn 1"
    turn, rnd, body = long_run.rolled
    assert CODE_WORD in long_run.wire.episode_text(body), f"turn {turn}: not in the episode block"
    assert CODE_WORD not in long_run.wire.conversation(body)
    later = [places for t, r, places in long_run.code_word if (t, r) >= (turn, rnd)]
    assert all("conversation" not in p and "system" not in p for p in later)
    assert CODE_WORD not in long_run.wire.conversation(long_run.last)


def test_the_stable_prefix_and_cache_marks_survive_compactions(long_run):
    # instructions/system, tools, prompt_cache_key, model and limits: one value over 600 requests,
    # compactions included (the episode block lives in the conversation, not in the prefix)
    assert len(long_run.shapes) == 1
    # between compactions every request extends the one before it byte for byte
    assert long_run.prefix_checked > TURNS, long_run.prefix_checked
    assert long_run.prefix_breaks == []
    if long_run.wire.openai:
        (shape,) = long_run.shapes
        assert json.loads(shape)["prompt_cache_key"].startswith("holon-a-")
        return
    compacted = 0
    for turn, n, marks in long_run.marks:
        where = f"turn {turn} request {n}"
        assert marks["system"] == [marks["system_len"] - 1], where
        assert len(marks["system"]) + len(marks["messages"]) <= 4, where
        rolling = [p for p in marks["messages"] if p != (0, 0) or not marks["episode"]]
        assert rolling == [marks["last"]], where  # exactly one rolling mark, on the newest block
        if marks["episode"]:
            compacted += 1
            assert (0, 0) in marks["messages"], where  # the episode block leads and is marked
    assert compacted > TURNS  # nearly every request after the first compaction


# -- one turn of 600 rounds ----------------------------------------------------------------------

ROUNDS = 600
ASK_600 = "Operator task QUARTZ-KESTREL-0915: count to six hundred with echo, one per call."


@dataclass
class LongTurn:
    wire: Wire
    home: Any
    turn: dict[str, Any]
    log: list[tuple[int, int, int]]
    missing: list[int]  # requests whose conversation lacks the operator message
    last: dict[str, Any]
    built: list[dict[str, Any]]  # turn_context_built events
    seconds: float
    prefix_breaks: list[tuple[int, str]]  # (request, why) where a request does not extend the last
    # requests that rewrote the turn before its newest 2 * STEP + KEEP_FULL rounds (what a provider
    # cache loses); a round turning from full to summarized among the newest ones is not one
    deep_breaks: list[int]


def _first_difference(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> int:
    def plain(msg: dict[str, Any]) -> str:
        return json.dumps(
            [{k: v for k, v in blk.items() if k != "cache_control"} for blk in msg["content"]]
        )

    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x["role"] != y["role"] or plain(x) != plain(y):
            return i
    return min(len(a), len(b))


@pytest.fixture(scope="module")
def long_turn(module_server, tmp_path_factory):
    """One turn of 600 ExecCommand rounds (`echo`), then final text, on a fresh agent with a
    16k window (Anthropic Messages: the cheaper SDK round trip)."""
    kit = AnthropicKit()
    root = tmp_path_factory.mktemp("long-turn")
    with pytest.MonkeyPatch.context() as mp:
        isolate_env(mp, root)
        mp.setenv("HOLON_MAX_ROUNDS", str(ROUNDS + 100))
        mp.setenv("HOLON_CONTEXT_WINDOW", "16000")
        mp.setenv("HOLON_DEFAULT_DAILY_TOKENS", "0")  # 600 rounds: no daily budget
        kit.setup(module_server, mp)
        share_tls_context(mp)
        skip_fsync(mp)
        config.reset()
        from holon.home.init import init_home

        home = init_home(None, "a")
        module_server.requests.clear()
        d = Driver(home, module_server, kit)
        missing: list[int] = []
        last: dict[str, Any] = {}

        breaks: list[tuple[int, str]] = []
        deep: list[int] = []
        # an assistant and a user message a round; a summarizing step rewrites up to STEP rounds
        # that were full, themselves behind up to STEP + KEEP_FULL newer ones
        tail = 2 * (2 * STEP + KEEP_FULL) + 2

        def observe(d: Driver, rec: Any) -> None:
            if ASK_600 not in d.wire.conversation(rec.json):
                missing.append(d.round)
            if "body" in last:
                problem = d.wire.prefix_problem(last["body"], rec.json)
                if problem:
                    breaks.append((d.round, problem))
                before = last["body"]["messages"]
                if _first_difference(before, rec.json["messages"]) < len(before) - tail:
                    deep.append(d.round)
            last["body"] = rec.json

        def plan(d: Driver, rec: Any) -> tuple[int, Any]:
            if d.round < ROUNDS:
                return d.wire.exec_call(d.count, f"echo round-{d.round:03d}-out", rec.size)
            return d.wire.final(d.count, "counted", rec.size)

        d.observe, d.plan = observe, plan
        t0 = time.monotonic()
        turn = d.run_turn(ASK_600, keep=False)
        seconds = time.monotonic() - t0
    config.reset()
    built = d.events("turn_context_built")
    return LongTurn(d.wire, home, turn, d.log, missing, last["body"], built, seconds, breaks, deep)


def test_a_600_round_turn_keeps_the_operator_message(long_turn):
    assert long_turn.turn["status"] == "completed", long_turn.turn
    assert len(long_turn.log) == ROUNDS + 1
    assert long_turn.missing == [], f"requests without the message: {long_turn.missing[:10]}"
    text = long_turn.wire.conversation(long_turn.last)
    assert ASK_600 in text
    assert f"round-{ROUNDS - 1}-out" in text  # the newest round is there in full
    assert "earlier rounds of this turn are not shown" in text
    over = [e for e in long_turn.built if e["estimated_tokens"] > e["prompt_budget"]]
    assert not over, over[:3]
    largest = max(size for _, _, size in long_turn.log)
    print(
        f"\n[600 rounds] {long_turn.seconds:.1f}s; largest request {largest} B (~{largest // 4} "
        f"tokens) vs budget {long_turn.built[-1]['prompt_budget']}; last request "
        f"{long_turn.log[-1][2]} B; prefix changed in {len(long_turn.prefix_breaks)} of "
        f"{ROUNDS} rounds, first at round {long_turn.prefix_breaks[0][0]}"
    )


def test_a_600_round_turn_stays_within_the_budget_the_provider_reports(long_turn):
    budget = long_turn.built[-1]["prompt_budget"]
    # the server reports usage.input_tokens = request bytes // 4; 2% allows a round of lag
    over = [(n, size // 4) for _, n, size in long_turn.log if size // 4 > 1.02 * budget]
    assert not over, f"{len(over)} requests over the {budget}-token budget, e.g. {over[:3]}"


def test_a_600_round_turn_rewrites_its_older_rounds_only_once_per_step(long_turn):
    """fit.py: what a long turn leaves out moves in STEP multiples, so the part of the request a
    provider has cached (everything before the newest rounds) is rewritten about once per STEP
    rounds, not every round."""
    assert long_turn.prefix_breaks, "the turn never needed a cut"
    cut_from = long_turn.prefix_breaks[0][0]
    allowed = (ROUNDS - cut_from) // STEP + 2
    assert len(long_turn.deep_breaks) <= allowed, (
        f"{len(long_turn.deep_breaks)} rewrites of older rounds in {ROUNDS - cut_from} rounds "
        f"(at most {allowed}): {long_turn.deep_breaks[:10]}"
    )


def test_a_summarized_result_is_never_longer_than_the_result(long_turn):
    rendered = {
        e["data"]["call_id"]: e["data"]["rendered"]
        for e in jsonl.read(long_turn.home.transcript)
        if e["kind"] == "tool_result"
    }
    results = [
        b
        for m in long_turn.last["messages"]
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert len(results) > 50  # many older rounds are in the last request, summarized or not
    longer = [b for b in results if len(b["content"]) > len(rendered[b["tool_use_id"]])]
    assert not longer, (
        f"{len(longer)} of {len(results)} results are shown longer than they are, e.g. "
        f"{longer[0]['content']!r} for {rendered[longer[0]['tool_use_id']]!r}"
    )
    # a short result is its own summary: shown as it is, no full-output file written for it
    assert all(b["content"] == rendered[b["tool_use_id"]] for b in results)
    assert not list(long_turn.home.artifacts.glob("result-*.log"))


# -- context-length errors -----------------------------------------------------------------------


def _driven(agent: Any, server: Any, kit: Any, monkeypatch: Any, turns: int) -> Driver:
    kit.setup(server, monkeypatch)
    share_tls_context(monkeypatch)
    monkeypatch.setenv("HOLON_CONTEXT_WINDOW", str(WINDOW))
    d = Driver(agent, server, kit)
    for i in range(turns):
        assert d.run_turn(f"warm-up {i}", keep=False)["status"] == "completed"
    return d


@pytest.mark.parametrize("kit", TRANSPORTS, ids=_ids)
def test_one_context_length_error_is_recovered_within_the_turn(kit, agent, server, monkeypatch):
    d = _driven(agent, server, kit, monkeypatch, 5)

    def plan(d: Driver, rec: Any) -> tuple[int, Any]:
        if d.round == 0:
            return d.wire.overflow()
        if d.round == 1:
            return d.wire.exec_call(d.count, "echo recovered", rec.size)
        return d.wire.final(d.count, "done after recovery", rec.size)

    d.plan = plan
    turn = d.run_turn("now overflow once")
    assert turn["status"] == "completed", turn
    sizes = [r.size for r in server.requests]
    assert len(sizes) == 3
    assert sizes[1] < sizes[0], sizes  # the retry of the same round is smaller
    rounds = [
        e["data"]
        for e in jsonl.read(agent.transcript)
        if e["kind"] == "assistant_round" and e["turn_id"] == turn["turn_id"]
    ]
    timeline = rounds[0]["provider_attempt_timeline"]
    outcomes = [(a.get("failure_kind"), a["outcome"]) for a in timeline["attempts"]]
    assert outcomes == [
        ("context_length_exceeded", "fail_fast_aborted"),
        (None, "succeeded"),
    ]
    recovery = timeline["context_recovery"]
    assert recovery["reason"] == "context_length_exceeded"
    assert recovery["compaction"] and recovery["compaction"]["reason"] == "overflow"
    assert "context_recovery" not in rounds[1]["provider_attempt_timeline"]
    print(f"\n[{kit.transport}] overflowed {sizes[0]} B, retried {sizes[1]} B")


@pytest.mark.parametrize("kit", TRANSPORTS, ids=_ids)
def test_a_turn_that_never_fits_fails_and_the_next_turn_is_smaller(kit, agent, server, monkeypatch):
    d = _driven(agent, server, kit, monkeypatch, 5)
    server.requests.clear()
    d.plan = lambda d, rec: d.wire.overflow()
    d.turn += 1
    # a 30 KB message: even the retry, compacted down to this turn alone, is large
    huge = "Review this log, it never fits:\n" + "log line 0123456789 abcdef\n" * 1150
    r = run("prompt", "a", huge, "--json", "--model", d.model_ref, env=subprocess_env())
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert "context length" in doc["failure_artifact"]["summary"]
    failed = [req.size for req in server.requests]
    assert len(failed) == 2, failed  # the request, then one retry after compacting
    assert failed[1] < failed[0]
    briefs = list(jsonl.read(Path(agent.briefs)))
    assert briefs[-1]["kind"] == "failure" and "context length" in briefs[-1]["text"]
    learned = Agent(agent).state().context.learned_window[d.model_ref]
    assert learned < WINDOW

    server.requests.clear()
    d.plan = exec_then_final("echo fits")
    turn = d.run_turn("and now?")
    assert turn["status"] == "completed", turn
    nxt = server.requests[0].size
    assert nxt < min(failed), (nxt, failed)  # the failed turn was folded away: never stuck
    print(
        f"\n[{kit.transport}] failed requests {failed} B, learned window {learned}; "
        f"next turn's first request {nxt} B"
    )
