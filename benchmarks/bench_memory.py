"""Memory search (holon.memory.index) over a year of an agent's records: 100,000 indexed records
(10,000 with --quick) written straight into the ledgers, in a realistic mix: 40% tool executions
(a `tool_call` and a `tool_result` transcript entry each), 25% transcript messages, 20% briefs,
10% context episodes, 5% work items. Words are drawn Zipf-like from a few thousand pseudo-words;
about 5% of the records are Chinese, so the CJK projection is exercised.

Reports: the first build (`index.status`, from scratch: records/s and the index size); search
latency, median and p95 of about 280 in-process `index.search` calls in four classes (two
selective words, one common word, a two-character Chinese query, an operator's question whose
all-word match is thin; target: median <= 50 ms), each query run on this index and on a
1,000-record one built the same way, alternately, with the median per-pair ratio and its range;
the common words through the MemorySearch tool (validation, envelope, receipt) as a turn calls
it; `holon memory search` against an idle `holon tick` of the same agent as processes,
interleaved; the cost of the first search after one new brief (dirty marker set, as the runtime
sets it; the 20 newest work items are open, and the marker's full check covers their plans)
against a search with nothing new (the up-to-date check). Figures are reported, never asserted.
Run: PYTHONPATH=. python benchmarks/bench_memory.py [--quick]
"""

from __future__ import annotations

import itertools
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

SEED = 20_250_101
VOCAB = 5_000
TARGET_MS = 50.0
BASE_TS = 1_735_689_600  # 2025-01-01T00:00:00Z
YEAR = 365 * 86_400
OPEN_ITEMS = 20  # the newest work items are open; the older ones completed
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"] + [
    c + v + e for c in "bdgkmst" for v in "aeiou" for e in "nrs"
]
HAN = (
    "的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可那自能对生会后年"
    "家方多经发成作里用行同然小天心么看当起主现前所过些工十去意又没学度只还都日事把分开样面部"
    "全问无机本长高文理与电从新动力化明实种体定如制加量等外果把法进已数表代其头手相关务问题"
    "件信配置文件日志错误修复测试部署脚本服务器数据库接口查询结果计划任务检查运行构建版本目录"
    "模型缓存索引记忆搜索更新删除创建读写网络请求响应超时重试权限用户系统进程内存磁盘空间"
)
COMMANDS = (
    "ls -la",
    "cat",
    "grep -rn",
    "rg -n",
    "sed -n 1,120p",
    "python -m pytest -q",
    "python",
    "git log --oneline --",
    "git diff --stat",
    "make",
    "wc -l",
    "head -n 40",
)


class Corpus:
    """Deterministic text: pseudo-words with Zipf-like frequencies, and Chinese sentences."""

    def __init__(self, seed: int) -> None:
        rng = random.Random(seed)
        seen: set[str] = set()
        self.vocab: list[str] = []
        while len(self.vocab) < VOCAB:
            word = "".join(rng.choice(SYLLABLES) for _ in range(rng.choice((2, 2, 3, 3, 3, 4))))
            if word not in seen:
                seen.add(word)
                self.vocab.append(word)  # rank order: vocab[0] is the most common
        self.cum = list(itertools.accumulate(1.0 / r for r in range(1, VOCAB + 1)))
        self.han = list(dict.fromkeys(HAN))
        self.han_cum = list(itertools.accumulate(1.0 / r**0.7 for r in range(1, len(self.han) + 1)))
        self.rank = {w: r for r, w in enumerate(self.vocab)}
        self.texts: list[str] = []  # a uniform sample of the text generated, for queries
        self.cjk_texts: list[str] = []
        self.seen = [0, 0]
        self.sampler = random.Random(seed + 7)

    def words(self, rng: random.Random, chars: int) -> str:
        drawn = rng.choices(self.vocab, cum_weights=self.cum, k=chars // 4 + 2)
        text = " ".join(drawn)[: chars + 1]
        text = text.rsplit(" ", 1)[0] if len(text) > chars else text
        self.keep(self.texts, 0, text)
        return text

    def chinese(self, rng: random.Random, chars: int) -> str:
        out: list[str] = []
        size = 0
        while size < chars:
            piece = "".join(rng.choices(self.han, cum_weights=self.han_cum, k=rng.randint(5, 16)))
            if rng.random() < 0.3:  # a name or identifier among the Chinese
                piece += " " + rng.choices(self.vocab, cum_weights=self.cum)[0] + " "
            piece += rng.choice("，。，。；")
            out.append(piece)
            size += len(piece)
        text = "".join(out)[:chars]
        self.keep(self.cjk_texts, 1, text)
        return text

    def keep(self, sample: list[str], which: int, text: str, size: int = 2_000) -> None:
        """Reservoir sampling: every text generated has the same chance to be in `sample`."""
        self.seen[which] += 1
        if len(sample) < size:
            sample.append(text)
        elif (j := self.sampler.randrange(self.seen[which])) < size:
            sample[j] = text

    def prose(self, rng: random.Random, chars: int, cjk: bool) -> str:
        return self.chinese(rng, chars) if cjk else self.words(rng, chars)

    def lines(self, rng: random.Random, chars: int, cjk: bool) -> str:
        """Command output: the same text in lines of about 70 characters (never inside a word,
        nor inside a Chinese sentence)."""
        text = self.prose(rng, chars, cjk)
        if cjk:
            return text.replace("。", "。\n")
        out, line = [], ""
        for word in text.split(" "):
            if line and len(line) + 1 + len(word) > 70:
                out.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        return "\n".join([*out, line])

    def command(self, rng: random.Random) -> str:
        a, b, c = rng.choices(self.vocab, cum_weights=self.cum, k=3)
        return rng.choice(
            (
                f"{rng.choice(COMMANDS)} {a}/{b}.py",
                f"{rng.choice(COMMANDS)} {a}/{b}/{c}.md",
                f"cd {a} && {rng.choice(COMMANDS)} {b}_{c}.txt",
                f"{rng.choice(COMMANDS)} {a} {b}.log | tail -n 20",
            )
        )

    def rare_pair(self, rng: random.Random) -> str:
        """Two words of the rarer half of the vocabulary that occur together in a generated text
        (someone recalling a record that exists)."""
        while True:
            rare = {w for w in rng.choice(self.texts).split() if self.rank[w] >= VOCAB // 2}
            if len(rare) >= 2:
                return " ".join(rng.sample(sorted(rare), 2))

    def cjk_query(self, rng: random.Random) -> str:
        """Two adjacent Han characters taken from a generated text (so the query has hits)."""
        while True:
            text = rng.choice(self.cjk_texts)
            i = rng.randrange(len(text) - 1)
            pair = text[i : i + 2]
            if all(ch in self.han for ch in pair):
                return pair


def iso(ts: float) -> str:
    ms = int(ts * 1000) % 1000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{ms:03d}Z"


def brief(corpus: Corpus, rng: random.Random, ident: str, ts: float, agent: str) -> dict:
    text = corpus.prose(rng, rng.randint(100, 600), rng.random() < 0.05)
    return {
        "schema_version": 1,
        "id": f"brf_{ident}",
        "agent_id": agent,
        "kind": "result",
        "created_at": iso(ts),
        "text": text,
        "visibility": "turn_result",
        "work_item_id": None,
        "workspace_id": "agent_home",
    }


def entry(agent: str, n: int, ts: float, kind: str, turn: int, data: dict) -> dict:
    return {
        "schema_version": 1,
        "id": f"tr_{n:016x}",
        "agent_id": agent,
        "created_at": iso(ts),
        "kind": kind,
        "turn_id": f"turn_{turn:012x}",
        "message_id": f"msg_{turn:012x}",
        "data": data,
    }


def transcript(corpus: Corpus, rng: random.Random, agent: str, turns: int, calls: int) -> list:
    """`turns` turns, each a message, a share of the `calls` tool executions and a terminal."""
    out: list[dict] = []
    call = 0
    for t in range(turns):
        ts = BASE_TS + t * YEAR / turns
        cjk = rng.random() < 0.05
        text = corpus.prose(rng, rng.randint(100, 600), cjk)
        msg = {
            "message_kind": "operator_prompt",
            "origin_kind": "operator",
            "trust": "trusted_operator",
            "text": text,
        }
        out.append(entry(agent, len(out), ts, "message", t, msg))
        for _ in range(calls * (t + 1) // turns - calls * t // turns):
            ts += rng.uniform(1, 30)
            cjk = rng.random() < 0.05
            key, cid = f"0:call_{call}", f"call_{call}"
            cmd = corpus.command(rng)
            args = {"key": key, "call_id": cid, "name": "ExecCommand", "arguments": {"cmd": cmd}}
            out.append(entry(agent, len(out), ts, "tool_call", t, {**args, "round_index": 0}))
            stdout = corpus.lines(rng, rng.randint(100, 560 - len(cmd)), cjk)
            result = {"exit_status": 0, "stdout_preview": stdout, "stderr_preview": ""}
            envelope = {
                "tool_name": "ExecCommand",
                "status": "success",
                "summary_text": "command completed: exit 0",
                "result": result,
                "error": None,
            }
            data = {
                "key": key,
                "call_id": cid,
                "tool_name": "ExecCommand",
                "status": "success",
                "envelope": envelope,
            }
            out.append(entry(agent, len(out), ts + rng.uniform(0.05, 5), "tool_result", t, data))
            call += 1
        out.append(entry(agent, len(out), ts + 6, "turn_terminal", t, {"kind": "completed"}))
    return out


def episodes(corpus: Corpus, rng: random.Random, n: int) -> list:
    out = []
    per = 4  # turns per episode
    for i in range(n):
        cjk = rng.random() < 0.05
        decisions = [corpus.prose(rng, rng.randint(30, 80), cjk) for _ in range(rng.randint(1, 3))]
        commands = [
            {"cmd": corpus.command(rng), "exit": rng.choice((0, 0, 0, 1))}
            for _ in range(rng.randint(1, 4))
        ]
        used = sum(map(len, decisions)) + sum(len(c["cmd"]) for c in commands)
        summary = corpus.prose(rng, max(60, rng.randint(100, 600) - used), cjk)
        out.append(
            {
                "schema_version": 1,
                "id": f"ep_{i}",
                "created_at": iso(BASE_TS + i * YEAR / n + 600),
                "workspace_id": "agent_home",
                "turns": {"first_index": i * per, "last_index": i * per + per - 1},
                "summary": summary,
                "decisions": decisions,
                "commands": commands,
            }
        )
    return out


def work_items(corpus: Corpus, rng: random.Random, agent: str, n: int) -> list:
    out = []
    open_from = n - min(OPEN_ITEMS, n // 10)
    for i in range(n):
        cjk = rng.random() < 0.05
        is_open = i >= open_from
        todos = [
            {
                "text": corpus.prose(rng, rng.randint(20, 70), cjk),
                "state": rng.choice(("pending", "completed")) if is_open else "completed",
            }
            for _ in range(rng.randint(1, 5))
        ]
        used = sum(len(t["text"]) for t in todos)
        created = BASE_TS + i * YEAR / n
        out.append(
            {
                "schema_version": 1,
                "id": f"wi_{i}",
                "agent_id": agent,
                "workspace_id": "agent_home",
                "objective": corpus.prose(rng, max(40, rng.randint(100, 600) - used), cjk),
                "state": "open" if is_open else "completed",
                "plan_status": "ready",
                "todo_list": todos,
                "created_at": iso(created),
                "updated_at": iso(created + rng.uniform(60, 86_400)),
            }
        )
    return out


def populate(home, corpus: Corpus, n: int, seed: int) -> int:
    """Write `n` indexed records into the home's ledgers (one write per ledger); their bytes."""
    from holon.store.atomic import dumps

    rng = random.Random(seed)
    n_tool, n_msg, n_brief, n_ep = n * 40 // 100, n * 25 // 100, n * 20 // 100, n * 10 // 100
    n_wi = n - n_tool - n_msg - n_brief - n_ep
    ledgers = {
        home.transcript: transcript(corpus, rng, home.agent_id, n_msg, n_tool),
        home.briefs: [
            brief(corpus, rng, f"{i:012x}", BASE_TS + i * YEAR / n_brief + 300, home.agent_id)
            for i in range(n_brief)
        ],
        home.context_episodes: episodes(corpus, rng, n_ep),
        home.work_items: work_items(corpus, rng, home.agent_id, n_wi),
    }
    total = 0
    for path, records in ledgers.items():
        data = "".join(dumps(r) + "\n" for r in records).encode("utf-8")
        with open(path, "ab") as fh:
            fh.write(data)
        total += len(data)
    return total


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def question(corpus: Corpus, rng: random.Random) -> str:
    """An operator's question about a record that exists: two of its rarer words and a common
    one, in a sentence of stopwords (the all-word match is thin; the fallback ranks)."""
    a, b = corpus.rare_pair(rng).split()
    return f"why did we {a} the {rng.choice(corpus.vocab[:20])} when {b} was there?"


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def interleaved(index, big, small, queries: list[str], exclude: str | None = None) -> dict:
    """Each query on the big index then on the small one, alternately: seconds on each, the
    per-pair ratios, and how many fell back to any word or found nothing on the big one."""
    out: dict = {"big": [], "small": [], "ratios": [], "fallback": 0, "empty": 0}
    for q in queries:
        doc: dict = {}

        def big_search(q=q, doc=doc):
            doc.update(index.search(big, q, limit=10, exclude_turn=exclude))

        tb = timed(big_search)
        ts = timed(lambda q=q: index.search(small, q, limit=10, exclude_turn=exclude))
        out["big"].append(tb)
        out["small"].append(ts)
        out["ratios"].append(tb / ts)
        out["fallback"] += doc["match"] == "any"
        out["empty"] += not doc["results"]
    return out


def report(name: str, m: dict, target_ms: float = TARGET_MS) -> None:
    med = statistics.median(m["big"]) * 1000
    ratios = m["ratios"]
    verdict = "ok" if med <= target_ms else "OVER"
    print(
        f"{'search, ' + name:<36} median {med:7.1f} ms  p95 {percentile(m['big'], 95) * 1000:7.1f}"
        f" ms  vs 1k records {statistics.median(m['small']) * 1000:6.1f} ms  ratio "
        f"{statistics.median(ratios):5.2f}x [{min(ratios):.2f}-{max(ratios):.2f}]  "
        f"target <= {target_ms:.0f} ms: {verdict}",
        flush=True,
    )
    print(
        f"{'':<36} {len(m['big'])} queries; {m['fallback']} fell back to any word, "
        f"{m['empty']} found nothing"
    )


def tool_searches(home, small, words: list[str]) -> dict:
    """MemorySearch through the tool registry (argument validation, envelope, receipt), as a
    turn calls it, alternating the big and the small index."""
    from holon.agent.handle import Agent
    from holon.tools import registry
    from holon.tools.base import ToolContext

    ctxs = [
        ToolContext(agent=Agent(h), execution_root=h.root, cwd=h.root, turn_id="turn_bench")
        for h in (home, small)
    ]
    out: dict = {"big": [], "small": [], "ratios": [], "fallback": 0, "empty": 0}
    for w in words:
        tb, ts = (
            timed(lambda c=c, w=w: registry.call(c, "MemorySearch", {"query": w})) for c in ctxs
        )
        out["big"].append(tb)
        out["small"].append(ts)
        out["ratios"].append(tb / ts)
    return out


def cli_vs_idle_tick(home, word: str, reps: int) -> None:
    """`holon memory search` and an idle `holon tick` of the same agent as processes, alternately:
    the median of the per-pair ratios (the cost of a search command is mostly its imports)."""
    import subprocess

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path[:1] + [os.getcwd()])}
    cmds = (
        [sys.executable, "-m", "holon", "memory", "search", home.agent_id, word],
        [sys.executable, "-m", "holon", "tick", home.agent_id],
    )
    pairs = []
    for _ in range(reps + 1):
        ts, ti = (timed(lambda c=c: subprocess.run(c, env=env, capture_output=True)) for c in cmds)
        pairs.append((ts, ti))
    pairs = pairs[1:]  # the first pair warms the OS cache
    ratios = [a / b for a, b in pairs]
    print(
        f"{'holon memory search vs idle tick':<36} median "
        f"{statistics.median(a for a, _ in pairs) * 1000:7.1f} ms vs "
        f"{statistics.median(b for _, b in pairs) * 1000:7.1f} ms  ratio "
        f"{statistics.median(ratios):5.2f}x [{min(ratios):.2f}-{max(ratios):.2f}]  "
        f"({reps} interleaved pairs, 1k-record agent)",
        flush=True,
    )


def main() -> int:
    quick = "--quick" in sys.argv
    n = 10_000 if quick else 100_000
    per_class = 40 if quick else 70
    reps = 20
    tmp = Path(tempfile.mkdtemp(prefix="holon-bench-memory-"))
    os.environ["HOLON_HOME"] = str(tmp / "home")
    try:
        from holon.home.init import init_home
        from holon.memory import index
        from holon.store import jsonl

        corpus = Corpus(SEED)
        home = init_home(None, "bench")
        t0 = time.perf_counter()
        written = populate(home, corpus, n, SEED + 1)
        gen = time.perf_counter() - t0
        print(
            f"{n:,} records written in {gen:.1f} s ({written / 1e6:.1f} MB of ledgers; "
            f"vocabulary {VOCAB:,} pseudo-words, {len(corpus.han)} Han characters)",
            flush=True,
        )

        rng = random.Random(SEED + 3)  # queries drawn from text this index holds
        classes = {
            "two selective words": [corpus.rare_pair(rng) for _ in range(per_class)],
            "one common word": [rng.choice(corpus.vocab[:20]) for _ in range(per_class)],
            "two-character Chinese": [corpus.cjk_query(rng) for _ in range(per_class)],
            "a question (stopwords, thin)": [question(corpus, rng) for _ in range(per_class)],
        }

        t0 = time.perf_counter()
        st = index.status(home)
        build = time.perf_counter() - t0
        docs = st["documents"]
        kinds = ", ".join(f"{k} {v:,}" for k, v in st["by_kind"].items())
        print(
            f"{'first build (index.status)':<36} {docs:,} documents in {build:6.1f} s  "
            f"{docs / build:8,.0f} records/s  index {st['bytes'] / 1e6:.1f} MB",
            flush=True,
        )
        print(f"{'':<36} ({kinds})")

        small = init_home(None, "small")
        populate(small, corpus, 1_000, SEED + 2)
        index.status(small)

        for h in (home, small):  # warm: imports, the state read, the OS cache
            index.search(h, corpus.vocab[0], limit=10)
        every = {"big": [], "small": [], "ratios": [], "fallback": 0, "empty": 0}
        for name, queries in classes.items():
            m = interleaved(index, home, small, queries)
            report(name, m)
            for k in ("big", "small", "ratios"):
                every[k] += m[k]
        report("all classes", {**every, "fallback": "-", "empty": "-"})
        report(
            "one common word, as MemorySearch",
            tool_searches(home, small, classes["one common word"]),
        )
        cli_vs_idle_tick(small, corpus.vocab[0], 10 if quick else 20)

        query = classes["two selective words"][0]
        updated, unchanged, check = [], [], []
        for i in range(reps):
            rec = brief(corpus, rng, f"new{i:08d}", time.time(), home.agent_id)
            jsonl.append(home.briefs, rec)
            home.mark_memory_dirty()
            updated.append(timed(lambda: index.search(home, query, limit=10)))
            unchanged.append(timed(lambda: index.search(home, query, limit=10)))
            check.append(timed(lambda: index._with_index(home, lambda conn, stale: None)))
        upd, same = statistics.median(updated) * 1000, statistics.median(unchanged) * 1000
        print(
            f"{'search after one new brief':<36} median {upd:7.1f} ms  vs nothing new "
            f"{same:7.1f} ms  difference {upd - same:+7.1f} ms  ({reps} briefs; "
            f"{min(OPEN_ITEMS, n * 5 // 100 // 10)} open work items)",
            flush=True,
        )
        print(
            f"{'search with nothing new':<36} median {same:7.1f} ms  of which the up-to-date "
            f"check (no query) {statistics.median(check) * 1000:.1f} ms"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
