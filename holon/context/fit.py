"""Fitting a conversation into a token budget, as pure arithmetic over estimated sizes.

Between turns the window drops whole turns from its start, and drops enough at once (down to
RETAIN of the budget) that the next several turns append without another cut: the prompt stays
a stable, cacheable prefix between compactions. Inside one long turn the triggering message and
the newest rounds always stay; older rounds are first shown by their summaries, then left out,
in steps of STEP rounds so the prefix changes only once per STEP rounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate

RETAIN = 0.85  # a compaction leaves the conversation at this share of its budget
STEP = 8  # in-turn cuts move in steps of this many rounds
KEEP_FULL = 2  # the newest rounds of a turn always shown in full (while they fit at all)


def turns_to_drop(prior: list[int], fixed: int, current: int, budget: int) -> int:
    """How many of the oldest prior turns to fold away (0 when everything fits). `prior` holds
    each prior turn's tokens, oldest first; `fixed` is the frame and tools; `current` the turn
    being run."""
    total = fixed + sum(prior) + current
    if total <= budget:
        return 0
    target = int(budget * RETAIN)
    drop = 0
    remaining = sum(prior)
    while drop < len(prior) and fixed + remaining + current > target:
        remaining -= prior[drop]
        drop += 1
    return drop


@dataclass(frozen=True)
class TurnCut:
    summarized: int  # rounds [elided, summarized) are shown by their summaries
    elided: int  # rounds [0, elided) are left out, with a note


def cut_turn(head: int, full: list[int], short: list[int], note: int, budget: int) -> TurnCut:
    """Where to cut a long turn. `head` is the message and turn context, `full[i]` and `short[i]`
    round i shown in full and summarized, `note` the elision note. Returns the smallest cut that
    fits, or the deepest cut when nothing fits. What is left out moves in STEP multiples, so the
    prompt is rewritten from the note on about once per STEP rounds; between those moves a round
    turns from full to summarized only among the newest ones, after everything sent before."""
    n = len(full)
    full_pre = [0, *accumulate(full)]
    short_pre = [0, *accumulate(short)]

    def size(summarized: int, elided: int) -> int:
        return (
            head
            + (note if elided else 0)
            + short_pre[summarized]
            - short_pre[elided]
            + full_pre[n]
            - full_pre[summarized]
        )

    if size(0, 0) <= budget:
        return TurnCut(0, 0)
    limit = max(0, n - KEEP_FULL)  # the newest rounds stay whole while anything fits
    for summarized in range(STEP, limit + 1, STEP):
        if size(summarized, 0) <= budget:
            return TurnCut(summarized, 0)
    # every older round summarized (the boundary moves with the newest rounds only: what was
    # sent before it stays as it was), then the oldest left out, in STEP multiples
    for upto in (limit, n):
        most = max(0, upto - 1)  # the newest summarized round always shows
        for elided in (0, *range(STEP, most + STEP, STEP)):
            if size(upto, min(elided, most)) <= budget:
                return TurnCut(upto, min(elided, most))
    return TurnCut(n, max(0, n - 1))
