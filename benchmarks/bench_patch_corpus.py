"""Benchmark: real per-commit diffs with drift, applied by holon, `git apply --recount` and (with
`--old REV`) an older holon; the apply rate and the wrong trees of each, per variant.

A corpus is a list of (path, before, after) file pairs from real commits (`pairs`), stored
compactly (`write_pairs`, `read_pairs`: gzipped JSON lines). Each pair gives one `git diff` per
context size (-U0, -U1, -U3), and each diff is applied to the before file in these variants:

- `exact`: as generated;
- `off10`, `off50`, `off200`: every hunk header's line numbers 10, 50 or 200 lines off (down,
  or up when that stays in the file);
- `inserted`: 1-5 foreign lines inserted in the file above each hunk (between hunks);
- `counts`: every hunk header's old and new counts one short or one long.

An outcome is `applied` when the result is exactly the after file (with the foreign lines at the
corresponding places), `refused` when the tool fails, and `wrong` when it reports success with any
other content: the outcome a patch tool must never produce. One exception: a drifted patch that
still fits exactly at its (wrong) line numbers is indistinguishable from a correct patch of that
file, so applying it there is `literal`, not wrong.

Build a corpus from repositories: `python benchmarks/bench_patch_corpus.py --repo PATH
[--repo PATH] --limit N --write tests/patch/corpus/pairs.jsonl.gz`. Measure:
`python benchmarks/bench_patch_corpus.py --repo PATH --limit N [--old main]` or
`--pairs FILE`.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import pickle
import random
import re
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

GIT = ["git", "-c", "core.autocrlf=false", "-c", "core.quotepath=true"]
HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
LINE = re.compile(rb"[^\n]*\n|[^\n]+$")
CONTEXTS = (0, 1, 3)
VARIANTS = ("exact", "off10", "off50", "off200", "inserted", "counts")
GIT_APPLY = "git apply --recount"
MAX_BYTES = 12_000  # a pair's files, each, so a corpus stays small


@dataclass
class Pair:
    name: str  # "<project> <commit> <path>"
    path: str
    before: bytes
    after: bytes


@dataclass
class Hunk:
    old_start: int
    old: list[bytes]  # context and removed lines (body text, without the tag)
    new_len: int
    header_at: int  # index of the header line in the diff


@dataclass
class Case:
    name: str
    context: int
    variant: str
    path: str
    pre: bytes
    patch: bytes
    expected: bytes
    literal: bytes | None  # the result of applying at the header's numbers, when they fit
    outcomes: dict[str, str] = field(default_factory=dict)


def git(repo: Path, *args: str, data: bytes | None = None, check: bool = True) -> bytes:
    done = subprocess.run([*GIT, *args], cwd=repo, input=data, capture_output=True, check=check)
    return done.stdout


def lines_of(data: bytes) -> list[bytes]:
    return LINE.findall(data)


# -- the corpus: file pairs from real commits


def pairs(repo: Path, limit: int, rev: str = "HEAD", project: str | None = None) -> list[Pair]:
    """The modified text files (each at most MAX_BYTES) of the last `limit` non-merge commits."""
    project = project or repo.name
    out: list[Pair] = []
    revs = git(repo, "rev-list", "--no-merges", f"--max-count={limit}", rev).decode().split()
    for commit in revs:
        listing = git(repo, "diff-tree", "-r", "--no-renames", "--diff-filter=M", f"{commit}^!")
        for row in listing.decode("utf-8", "replace").splitlines():
            meta, _, path = row.partition("\t")
            old_blob, new_blob = meta.split()[2:4]
            before, after = (
                git(repo, "cat-file", "blob", old_blob),
                git(repo, "cat-file", "blob", new_blob),
            )
            if max(len(before), len(after)) > MAX_BYTES or not _text(before) or not _text(after):
                continue
            out.append(Pair(f"{project} {commit[:10]} {path}", path, before, after))
    return out


def _text(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\0" not in data and b"\r" not in data


def write_pairs(path: Path, items: list[Pair]) -> None:
    rows = [
        json.dumps(
            {"name": p.name, "path": p.path, "before": p.before.decode(), "after": p.after.decode()}
        )
        for p in items
    ]
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
        out.write(("\n".join(rows) + "\n").encode())


def read_pairs(path: Path) -> list[Pair]:
    rows = gzip.decompress(path.read_bytes()).decode().splitlines()
    return [
        Pair(r["name"], r["path"], r["before"].encode(), r["after"].encode())
        for r in map(json.loads, rows)
    ]


# -- cases: a diff per context size, in every variant


def diff(pair: Pair, context: int, tmp: Path) -> bytes:
    """`git diff -U<context>` of the pair, as a/<path> b/<path>."""
    (tmp / "a").write_bytes(pair.before)
    (tmp / "b").write_bytes(pair.after)
    text = git(tmp, "diff", "--no-index", f"-U{context}", "--no-color", "a", "b", check=False)
    body = text[text.index(b"\n@@") + 1 :]
    return f"--- a/{pair.path}\n+++ b/{pair.path}\n".encode() + body


def parse_hunks(lines: list[bytes]) -> list[Hunk]:
    hunks: list[Hunk] = []
    for i, line in enumerate(lines):
        match = HUNK.match(line.rstrip(b"\n"))
        if match:
            hunks.append(Hunk(int(match.group(1)), [], 0, i))
        elif hunks and line[:1] in (b" ", b"-"):
            hunks[-1].old.append(line[1:].rstrip(b"\n"))
        if hunks and not match and line[:1] in (b" ", b"+"):
            hunks[-1].new_len += 1
    return hunks


def span(h: Hunk) -> tuple[int, int]:
    """The hunk's old range [a, b) as 0-based line indexes (an insertion: an empty range)."""
    a = h.old_start - 1 if h.old else h.old_start
    return a, a + len(h.old)


def inject(pre: list[bytes], post: list[bytes], hunks: list[Hunk], rng: random.Random):
    """1-5 foreign lines in the gap above each hunk of pre (where there is one), and at the
    corresponding places in post."""
    plan, prev = {}, 0
    for h in hunks:
        a, b = span(h)
        last = a if h.old else a - 1
        if last >= prev:
            plan[rng.randint(prev, last)] = rng.randint(1, 5)
        prev = b
    new_pre, new_post = list(pre), list(post)
    for q in sorted(plan, reverse=True):
        delta = sum(h.new_len - len(h.old) for h in hunks if span(h)[1] <= q)
        junk = [f"holon corpus inserted {q}.{j}\n".encode() for j in range(plan[q])]
        new_pre[q:q] = junk
        new_post[q + delta : q + delta] = junk
    return b"".join(new_pre), b"".join(new_post)


def rewrite_headers(
    lines: list[bytes], hunks: list[Hunk], shift: int, counts: random.Random | None
):
    """The diff with every header's line numbers moved by `shift` and, given `counts`, its counts
    one short or long."""
    out = list(lines)
    for h in hunks:
        a, b, c, d, rest = HUNK.match(lines[h.header_at].rstrip(b"\n")).groups()
        b, d = int(b if b is not None else 1), int(d if d is not None else 1)
        if counts is not None:
            b, d = max(b + counts.choice((-1, 1)), 0), max(d + counts.choice((-1, 1)), 0)
        a2, c2 = int(a) + shift, int(c) + shift
        out[h.header_at] = b"@@ -%d,%d +%d,%d @@%s\n" % (a2, b, c2, d, rest)
    return out


def literal(pre: bytes, hunks: list[Hunk], lines: list[bytes]) -> bytes | None:
    """The patch applied exactly at its headers' line numbers, or None where it does not fit."""
    keys = [x.rstrip(b"\n") for x in lines_of(pre)]
    out: list[bytes] = []
    pos = 0
    src = lines_of(pre)
    for h in hunks:
        match = HUNK.match(lines[h.header_at].rstrip(b"\n"))
        start = int(match.group(1)) - (1 if h.old else 0)
        if start < pos or keys[start : start + len(h.old)] != h.old:
            return None
        out += src[pos:start]
        end = h.header_at + 1
        while end < len(lines) and not lines[end].startswith(b"@@"):
            if lines[end][:1] == b"+":
                out.append(lines[end][1:])
            elif lines[end][:1] == b" ":
                out.append(src[start])
            start += lines[end][:1] in (b" ", b"-")
            end += 1
        pos = start
    return b"".join(out + src[pos:])


def cases(pair: Pair, tmp: Path, rng: random.Random) -> list[Case]:
    out: list[Case] = []
    for context in CONTEXTS:
        text = diff(pair, context, tmp)
        if b"\\ No newline" in text:
            continue  # the foreign lines and shifted numbers would not keep the end of the file
        lines = lines_of(text)
        hunks = parse_hunks(lines)
        for variant in VARIANTS:
            pre, post, patch = pair.before, pair.after, lines
            if variant == "inserted":
                pre, post = inject(lines_of(pre), lines_of(post), hunks, rng)
            elif variant.startswith("off"):
                n = int(variant[3:])
                shift = -n if rng.random() < 0.5 and min(h.old_start for h in hunks) > n else n
                patch = rewrite_headers(lines, hunks, shift, None)
            elif variant == "counts":
                patch = rewrite_headers(lines, hunks, 0, rng)
            fits = literal(pre, parse_hunks(patch), patch) if variant != "exact" else None
            out.append(
                Case(pair.name, context, variant, pair.path, pre, b"".join(patch), post, fits)
            )
    return out


def all_cases(items: list[Pair], seed: int = 1) -> list[Case]:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="holon-corpus-") as tmp:
        return [c for p in items for c in cases(p, Path(tmp), rng)]


# -- tools


def holon_apply(items: list[tuple[bytes, bytes]]) -> list[bytes | None]:
    """Apply each (pre, patch) with the holon on sys.path, in memory."""
    from holon.patch.apply import apply_hunks
    from holon.patch.errors import PatchError
    from holon.patch.parser import parse_patch
    from holon.patch.textfile import decode

    out: list[bytes | None] = []
    for pre, patch in items:
        try:
            [fp] = parse_patch(patch.decode("utf-8"))
            out.append(apply_hunks(decode(pre, "f"), fp, "f")[0])
        except PatchError:
            out.append(None)
    return out


def old_holon_apply(root: Path, items: list[tuple[bytes, bytes]]) -> list[bytes | None]:
    """`holon_apply` in a child process that imports holon from `root`."""
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, __file__, "--worker"],
        input=pickle.dumps(items),
        capture_output=True,
        env=env,
        check=True,
    )
    return pickle.loads(done.stdout)


_local = threading.local()


def git_apply(path: str, pre: bytes, patch: bytes) -> bytes | None:
    if not hasattr(_local, "tmp"):
        _local.tmp = tempfile.mkdtemp(prefix="holon-corpus-git-")
    target = Path(_local.tmp) / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(pre)
    cmd = ["git", "apply", "--recount", "-p1", "-"]
    done = subprocess.run(cmd, cwd=_local.tmp, input=patch, capture_output=True, check=False)
    return target.read_bytes() if done.returncode == 0 else None


def judge(result: bytes | None, case: Case) -> str:
    if result is None:
        return "refused"
    if result == case.expected:
        return "applied"
    return "literal" if result == case.literal else "wrong"


def run(all_: list[Case], tools: list[str], old_root: Path | None = None, workers: int = 2) -> None:
    items = [(c.pre, c.patch) for c in all_]
    if "holon" in tools:
        for c, r in zip(all_, holon_apply(items), strict=True):
            c.outcomes["holon"] = judge(r, c)
    if "old" in tools and old_root is not None:
        for c, r in zip(all_, old_holon_apply(old_root, items), strict=True):
            c.outcomes["old"] = judge(r, c)
    if GIT_APPLY in tools:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(lambda c: git_apply(c.path, c.pre, c.patch), all_))
        for c, r in zip(all_, results, strict=True):
            c.outcomes[GIT_APPLY] = judge(r, c)


def table(all_: list[Case]) -> dict[str, dict[str, Counter]]:
    """variant key ("-U1 off10") -> tool -> Counter of outcomes."""
    out: dict[str, dict[str, Counter]] = {}
    for c in all_:
        for key in (f"-U{c.context} {c.variant}", "total"):
            for tool, outcome in c.outcomes.items():
                out.setdefault(key, {}).setdefault(tool, Counter())[outcome] += 1
    return out


def render(all_: list[Case]) -> str:
    t = table(all_)
    tools = sorted({tool for c in all_ for tool in c.outcomes}, key=lambda x: (x != "old", x))
    rows = [f"{len(all_)} cases from {len({c.name for c in all_})} file pairs"]
    rows.append(f"{'':14}" + "".join(f"{tool:>40}" for tool in tools))
    keys = sorted(k for k in t if k != "total") + ["total"]
    for key in keys:
        cells = []
        for tool in tools:
            c = t[key].get(tool, Counter())
            n = sum(c.values()) or 1
            cells.append(
                f"{c['applied']:>6}/{n:<6} {c['applied'] / n:6.1%} wrong {c['wrong']:>3}"
                f" lit {c['literal']:>3}"
            )
        rows.append(f"{key:14}" + "".join(f"{cell:>40}" for cell in cells))
    return "\n".join(rows)


def _export(rev: str) -> Path:
    """A tree of holon at `rev` (of this checkout), for the `old` tool."""
    top = Path(__file__).resolve().parent.parent
    out = Path(tempfile.mkdtemp(prefix="holon-old-"))
    archive = git(top, "archive", rev, "holon")
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, action="append", default=[])
    parser.add_argument("--limit", type=int, default=100, help="non-merge commits per repo")
    parser.add_argument("--pairs", type=Path, help="read the file pairs from a corpus file")
    parser.add_argument("--write", type=Path, help="write the file pairs to a corpus file")
    parser.add_argument("--max-pairs", type=int, default=0, help="keep at most this many pairs")
    parser.add_argument("--old", help="also run holon at this revision of this checkout")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        sys.stdout.buffer.write(pickle.dumps(holon_apply(pickle.loads(sys.stdin.buffer.read()))))
        return 0
    items = read_pairs(args.pairs) if args.pairs else []
    for repo in args.repo:
        project = repo.name if repo.name not in ("repo", ".git") else repo.parent.name
        items += pairs(repo, args.limit, project=project)
    if args.max_pairs:
        items = random.Random(args.seed).sample(items, min(args.max_pairs, len(items)))
    if args.write:
        write_pairs(args.write, items)
        print(f"wrote {len(items)} pairs to {args.write} ({args.write.stat().st_size} bytes)")
        return 0
    all_ = all_cases(items, args.seed)
    tools = ["holon", GIT_APPLY] + (["old"] if args.old else [])
    run(all_, tools, _export(args.old) if args.old else None)
    print(render(all_))
    wrong = [f"{c.name} -U{c.context} {c.variant}" for c in all_ if c.outcomes["holon"] == "wrong"]
    print("holon wrong:", *wrong[:20], sep="\n  ")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    if "--worker" in sys.argv:
        sys.path.insert(0, os.environ["PYTHONPATH"])
    sys.exit(main())
