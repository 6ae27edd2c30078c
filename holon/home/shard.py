"""Shards: `--shard K/N` gives each agent to exactly one of N processes by a hash of its agent id.

K counts from 0 (0/3, 1/3, 2/3), like a Kubernetes Indexed Job's JOB_COMPLETION_INDEX. The
shard of an agent is sha256(agent id) mod N, stable across hosts and holon versions.
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

from holon.errors import UsageError

MAX_SHARDS = 4096


class Shard(NamedTuple):
    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def label(self) -> str:
        """A file-name-safe form (`K-of-N`)."""
        return f"{self.index}-of-{self.count}"

    def owns(self, agent_id: str) -> bool:
        return shard_of(agent_id, self.count) == self.index


def shard_of(agent_id: str, count: int) -> int:
    digest = hashlib.sha256(agent_id.encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big") % count


def parse(text: str) -> Shard:
    """`K/N` with 0 <= K < N <= MAX_SHARDS; anything else raises `bad_shard`."""
    k, sep, n = text.partition("/")
    if sep and k.isdigit() and n.isdigit() and 0 < int(n) <= MAX_SHARDS and int(k) < int(n):
        return Shard(int(k), int(n))
    raise UsageError(
        f"--shard takes K/N with 0 <= K < N <= {MAX_SHARDS}, not {text[:40]!r}",
        kind="bad_shard",
        hint="shards count from 0: with three processes use --shard 0/3, 1/3 and 2/3",
    )
