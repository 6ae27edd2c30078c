"""Benchmark: how many real unified diffs the ApplyPatch freeform grammar lets llguidance decode.

Run from a checkout: `python benchmarks/bench_patch_grammar.py [--repo PATH] [--limit N]`. Every
commit's diff (`git show -U3`, `-U1` and `-U0`, merges skipped) is cut into its file sections; each
section, and each whole commit, that holon's parser accepts is fed byte by byte to llguidance, the
greedy-lexer CFG engine behind OpenAI's grammar-constrained custom tools. Prints the counts and the
acceptance rate (target: 100%). `--grammar FILE` measures another grammar file instead.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from holon.patch.errors import PatchError
from holon.patch.grammar import GRAMMAR
from holon.patch.parser import parse_patch

CONTEXTS = (3, 1, 0)
SHOW = ("show", "--format=", "--no-color", "--no-ext-diff", "--no-textconv")  # + -U<n> <commit>
TARGET = 1.0


class ByteDecoder:
    """llguidance with a byte-level tokenizer: a patch is accepted if every byte is allowed in turn
    and the grammar may stop after the last one."""

    def __init__(self, grammar: str = GRAMMAR) -> None:
        import llguidance

        tokenizer = llguidance.LLTokenizer("byte")  # token ids 0-254 are the bytes themselves
        self._fresh = llguidance.LLMatcher(
            tokenizer, llguidance.grammar_from("lark", grammar), log_level=0
        )
        if self._fresh.is_error():
            raise ValueError(f"llguidance refuses the grammar: {self._fresh.get_error()}")

    def accepts(self, text: str) -> bool:
        matcher = self._fresh.deep_copy()
        return all(matcher.consume_token(byte) for byte in text.encode("utf-8")) and (
            matcher.is_accepting()
        )


def parses(text: str) -> bool:
    try:
        parse_patch(text)
    except PatchError:
        return False
    return True


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True).stdout


def sections(diff: str) -> list[str]:
    """The file sections of one commit's diff, each starting at its `diff --git` line."""
    lines = diff.removesuffix("\n").split("\n")  # LF only: a CR or form feed is content
    starts = [i for i, line in enumerate(lines) if line.startswith("diff --git ")]
    bounds = zip(starts, [*starts[1:], len(lines)], strict=True)
    return ["".join(f"{line}\n" for line in lines[a:b]) for a, b in bounds]


def commits(repo: Path, limit: int) -> list[str]:
    """The newest `limit` commits of HEAD, merges left out."""
    out = _git(repo, "rev-list", "--no-merges", f"--max-count={limit}", "HEAD")
    return out.decode().split()


def history_patches(repo: Path, shas: list[str], contexts=CONTEXTS) -> Iterator[tuple[str, str]]:
    """(kind, patch) for each commit: kind is "file" or "commit"; diffs that are not UTF-8 are
    left out."""
    for sha in shas:
        for context in contexts:
            raw = _git(repo, *SHOW, f"-U{context}", sha)
            try:
                diff = raw.decode("utf-8")
            except UnicodeDecodeError:
                continue
            if diff.strip():
                yield "commit", diff
                yield from (("file", section) for section in sections(diff))


def measure(repo: Path, shas: list[str], grammar: str = GRAMMAR) -> dict[str, dict[str, int]]:
    """Per kind: patches seen, accepted by the parser, and of those accepted by llguidance."""
    decoder = ByteDecoder(grammar)
    counts: dict[str, dict[str, int]] = {}
    for kind, patch in history_patches(repo, shas):
        row = counts.setdefault(kind, {"patches": 0, "parsed": 0, "decoded": 0})
        row["patches"] += 1
        if parses(patch):
            row["parsed"] += 1
            row["decoded"] += decoder.accepts(patch)
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--limit", type=int, default=200, help="newest N commits (default 200)")
    parser.add_argument("--grammar", type=Path, help="a grammar file other than grammar.lark")
    parser.add_argument("--quick", action="store_true", help="the newest 20 commits only")
    parsed = parser.parse_args()
    limit = 20 if parsed.quick else parsed.limit
    grammar = parsed.grammar.read_text(encoding="utf-8") if parsed.grammar else GRAMMAR
    shas = commits(parsed.repo, limit)
    counts = measure(parsed.repo, shas, grammar)
    print(f"{parsed.repo}: {len(shas)} commits at -U{', -U'.join(map(str, CONTEXTS))}")
    missed = False
    for kind, row in sorted(counts.items()):
        rate = row["decoded"] / row["parsed"] if row["parsed"] else 1.0
        missed |= rate < TARGET
        print(
            f"  {kind + ' patches':<16} {row['patches']:6d} seen, {row['parsed']:6d} parsed, "
            f"{row['decoded']:6d} decoded by llguidance ({rate:.1%}; target 100%)"
        )
    print(f"  target: {'MISSED' if missed else 'met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
