"""Benchmark: apply real per-commit diffs, with drift injected, through holon, `git apply --recount`
and GNU `patch --fuzz`; report the apply rate and the misapplications of each.

Run from a checkout: `python benchmarks/bench_patch_corpus.py --repo PATH [--limit N] [--quick]`.
Every modified text file of the last N non-merge commits of PATH gives one unified diff per context
size (-U3, -U1, -U0), and each diff is applied to the pre-commit file in several variants:

- `exact`: as generated;
- `drift`: 1-5 foreign lines inserted somewhere between consecutive hunks (and above the first);
- `far`: 50 foreign lines inserted at the top, so every hint is off by more than the window;
- `counts`: `drift` with every hunk header's counts off by one or two.

A result is `applied` when the file is exactly the post-commit content (with the same foreign
lines at the corresponding places), `refused` when the tool fails, and `misapplied` when it
reports success and the content differs: the one outcome a patch tool must never produce. A case
is `locatable` when every hunk's old lines are the unique match within max(20, 2 x old lines) of
its hint (the header's line, moved by the previous hunk's true offset), or at the hint itself (a
hunk that only adds lines: at the hint, which is the start or the end of the file). A hunk without
a context line with text counts only as that unique match, even at its hint: its line number alone
cannot tell it from a copy nearby. holon is expected to apply every locatable case.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from holon.patch.apply import apply_hunks
from holon.patch.errors import PatchError
from holon.patch.parser import parse_patch
from holon.patch.textfile import decode

GIT = ["git", "-c", "core.autocrlf=false", "-c", "core.quotepath=true"]
HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
LINE = re.compile(rb"[^\n]*\n|[^\n]+$")
CONTEXTS = (3, 1, 0)
VARIANTS = ("exact", "drift", "far", "counts")
TOOLS = ("holon", "git apply --recount", "patch --fuzz=2")
FAR = 50


@dataclass
class Hunk:
    old_start: int
    old: list[bytes]  # context and removed lines (body text, without the tag)
    new_len: int
    header_at: int  # index of the header line in the diff
    context: bool = False  # a context line with text: without one, only uniqueness places it


@dataclass
class Case:
    name: str
    path: str
    pre: bytes
    patch: bytes
    expected: bytes
    locatable: bool
    outcomes: dict[str, str] = field(default_factory=dict)


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run([*GIT, *args], cwd=repo, capture_output=True, check=True).stdout


def lines_of(data: bytes) -> list[bytes]:
    return LINE.findall(data)


def parse_hunks(diff: list[bytes]) -> list[Hunk]:
    hunks: list[Hunk] = []
    for i, line in enumerate(diff):
        match = HUNK.match(line.rstrip(b"\n"))
        if match:
            hunks.append(Hunk(int(match.group(1)), [], 0, i))
        elif hunks and line[:1] in (b" ", b"-"):
            hunks[-1].old.append(line[1:].rstrip(b"\n").removesuffix(b"\r"))
            hunks[-1].context |= line[:1] == b" " and bool(line[1:].strip())
        if hunks and not match and line[:1] in (b" ", b"+"):
            hunks[-1].new_len += 1
    return hunks


def span(h: Hunk) -> tuple[int, int]:
    """The hunk's old range [a, b) as 0-based line indexes (an insertion: an empty range)."""
    a = h.old_start - 1 if h.old else h.old_start
    return a, a + len(h.old)


def inject(pre: list[bytes], post: list[bytes], hunks: list[Hunk], plan: dict[int, int], tag: str):
    """Insert foreign lines into pre before the given indexes, and at the corresponding places in
    post (after every hunk that ends at or before the index)."""
    new_pre, new_post = list(pre), list(post)
    for q in sorted(plan, reverse=True):
        delta = sum(h.new_len - len(h.old) for h in hunks if span(h)[1] <= q)
        junk = [f"holon corpus {tag} {q}.{j}\n".encode() for j in range(plan[q])]
        new_pre[q:q] = junk
        new_post[q + delta : q + delta] = junk
    return b"".join(new_pre), b"".join(new_post)


def true_starts(hunks: list[Hunk], plan: dict[int, int]) -> list[int]:
    """Each hunk's start once the foreign lines are in: a hunk with old lines moves down by those
    inserted at or above its first line, an insertion by those strictly above it."""
    out = []
    for h in hunks:
        a, _ = span(h)
        out.append(a + sum(n for q, n in plan.items() if q < a or (q == a and h.old)))
    return out


def gaps(hunks: list[Hunk], rng: random.Random) -> dict[int, int]:
    """One insertion point (index -> line count) in the gap before each hunk, if there is room."""
    plan, prev = {}, 0
    for h in hunks:
        a, b = span(h)
        last = a if h.old else a - 1
        if last >= prev:
            plan[rng.randint(prev, last)] = rng.randint(1, 5)
        prev = b
    return plan


def skew_counts(diff: list[bytes], hunks: list[Hunk], rng: random.Random) -> list[bytes]:
    out = list(diff)
    for h in hunks:
        match = HUNK.match(diff[h.header_at].rstrip(b"\n"))
        assert match
        a, b, c, d, rest = match.groups()
        b2 = max(int(b or 1) + rng.choice((-2, -1, 1, 2)), 0)
        d2 = max(int(d or 1) + rng.choice((-2, -1, 1, 2)), 0)
        out[h.header_at] = b"@@ -%s,%d +%s,%d @@%s\n" % (a, b2, c, d2, rest)
    return out


def locatable(pre: bytes, hunks: list[Hunk], truth: list[int]) -> bool:
    """Whether every hunk is at its hint or the unique match near it (see the module docstring);
    an insertion without context must be at its hint."""
    keys = [line.rstrip(b"\n").removesuffix(b"\r") for line in lines_of(pre)]
    drift, lo = 0, 0
    for h, t in zip(hunks, truth, strict=True):
        a, _ = span(h)
        hint, m = a + drift, len(h.old)
        if not h.old and not (t == hint and (hint == len(keys) or hint == lo == 0)):
            return False  # an insertion without context is placed only at the file's edges
        if t != hint or not h.context:  # without context text, the hint alone proves nothing
            reach = max(20, 2 * m)
            window = range(max(lo, hint - reach), min(len(keys) - m, hint + reach) + 1)
            if [s for s in window if keys[s : s + m] == h.old] != [t]:
                return False
        drift, lo = t - a, t + m
    return True


def cases_for(repo: Path, commit: str, parent: str, rng: random.Random) -> list[Case]:
    out: list[Case] = []
    for context in CONTEXTS:
        text = git(
            repo,
            "diff",
            f"-U{context}",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            "--diff-filter=M",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            parent,
            commit,
        )
        for chunk in re.split(rb"(?m)^(?=diff --git )", text):
            if b"\n@@ " not in chunk or b"\nGIT binary patch" in chunk:
                continue
            path = chunk.split(b"\n+++ b/", 1)[1].split(b"\n", 1)[0].decode("utf-8", "replace")
            if path.startswith('"'):
                continue
            out += variants(repo, commit, parent, path, context, chunk, rng)
    return out


def variants(repo, commit, parent, path, context, chunk, rng) -> list[Case]:
    pre = git(repo, "show", f"{parent}:{path}")
    post = git(repo, "show", f"{commit}:{path}")
    try:
        decode(pre, path)
        decode(post, path)
    except PatchError:
        return []
    diff = lines_of(chunk)
    hunks = parse_hunks(diff)
    name = f"{commit[:10]} {path} -U{context}"
    pl, tl = lines_of(pre), lines_of(post)
    cases = []
    for variant in VARIANTS:
        patch = diff
        plan = {} if variant == "exact" else {0: FAR} if variant == "far" else gaps(hunks, rng)
        a, b = inject(pl, tl, hunks, plan, variant)
        if variant == "counts":
            patch = skew_counts(diff, hunks, rng)
        ok = locatable(a, hunks, true_starts(hunks, plan))
        cases.append(Case(f"{name} {variant}", path, a, b"".join(patch), b, ok))
    return cases


def run_holon(pre: bytes, patch: bytes) -> bytes | None:
    try:
        [fp] = parse_patch(patch.decode("utf-8"))
        return apply_hunks(decode(pre, "f"), fp, "f")[0]
    except PatchError:
        return None


def run_external(tool: str, path: str, pre: bytes, patch: bytes) -> bytes | None:
    with tempfile.TemporaryDirectory(prefix="holon-corpus-") as tmp:
        target = Path(tmp) / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(pre)
        if tool == "git apply --recount":
            cmd = ["git", "apply", "--recount", "-p1", "-"]
        else:
            cmd = ["patch", "-p1", "--fuzz=2", "--batch", "--no-backup-if-mismatch", "-r", "-"]
            cmd += ["-s"]
        done = subprocess.run(cmd, cwd=tmp, input=patch, capture_output=True, check=False)
        if done.returncode != 0:
            return None
        return target.read_bytes() if target.exists() else b""


def judge(result: bytes | None, expected: bytes) -> str:
    if result is None:
        return "refused"
    return "applied" if result == expected else "misapplied"


def run_case(case: Case, tools: tuple[str, ...]) -> Case:
    for tool in tools:
        result = (
            run_holon(case.pre, case.patch)
            if tool == "holon"
            else run_external(tool, case.path, case.pre, case.patch)
        )
        case.outcomes[tool] = judge(result, case.expected)
    return case


def collect(
    repo: Path, limit: int, contexts: tuple[int, ...], seed: int = 1, rev: str = "HEAD"
) -> list[Case]:
    rng = random.Random(seed)
    revs = git(repo, "rev-list", "--no-merges", f"--max-count={limit}", rev).decode().split()
    cases: list[Case] = []
    for commit in revs:
        parents = git(repo, "rev-list", "--parents", "-n", "1", commit).decode().split()[1:]
        if parents:
            cases += [
                c for c in cases_for(repo, commit, parents[0], rng) if _context_of(c) in contexts
            ]
    return cases


def _context_of(case: Case) -> int:
    return int(case.name.split(" -U", 1)[1].split(" ", 1)[0])


def report(cases: list[Case], tools: tuple[str, ...]) -> dict:
    table: dict = {}
    for tool in tools:
        per: dict = {}
        for case in cases:
            variant = case.name.rsplit(" ", 1)[1]
            key = f"-U{_context_of(case)} {variant}"
            per.setdefault(key, Counter())[case.outcomes[tool]] += 1
        total = Counter(case.outcomes[tool] for case in cases)
        table[tool] = {"total": dict(total), **{k: dict(v) for k, v in sorted(per.items())}}
    missed = [c.name for c in cases if c.locatable and c.outcomes.get("holon") != "applied"]
    return {
        "cases": len(cases),
        "locatable": sum(c.locatable for c in cases),
        "holon_locatable_not_applied": missed[:20],
        "holon_misapplied": [c.name for c in cases if c.outcomes.get("holon") == "misapplied"][:20],
        "tools": table,
    }


def render(summary: dict, tools: tuple[str, ...]) -> str:
    rows = [f"{summary['cases']} cases, {summary['locatable']} locatable"]
    keys = sorted({k for t in tools for k in summary["tools"][t] if k != "total"})
    width = max(len(t) for t in tools)
    rows.append(f"{'':10} " + "  ".join(f"{t:>{width + 12}}" for t in tools))
    for key in ["total", *keys]:
        cells = []
        for tool in tools:
            c = Counter(summary["tools"][tool].get(key, {}))
            n = sum(c.values()) or 1
            cells.append(f"{c['applied'] / n:>{width - 2}.1%} applied {c['misapplied']:>3} mis")
        rows.append(f"{key:10} " + "  ".join(cells))
    rows.append(
        f"holon: {len(summary['holon_locatable_not_applied'])} locatable not applied, "
        f"{len(summary['holon_misapplied'])} misapplied"
    )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--limit", type=int, default=100, help="non-merge commits to replay")
    parser.add_argument("--quick", action="store_true", help="20 commits, -U3 and -U1 only")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--holon-only", action="store_true", help="skip git apply and patch")
    args = parser.parse_args(argv)
    limit = min(args.limit, 20) if args.quick else args.limit
    contexts = (3, 1) if args.quick else CONTEXTS
    tools = (
        ("holon",)
        if args.holon_only
        else tuple(t for t in TOOLS if t == "holon" or shutil.which(t.split()[0]))
    )
    cases = collect(args.repo, limit, contexts)
    with ThreadPoolExecutor(max_workers=8) as pool:
        cases = list(pool.map(lambda c: run_case(c, tools), cases))
    summary = report(cases, tools)
    print(json.dumps(summary, indent=1) if args.json else render(summary, tools))
    return 0


if __name__ == "__main__":
    sys.exit(main())
