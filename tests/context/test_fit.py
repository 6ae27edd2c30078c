"""holon.context.fit: how many whole turns to fold away, and where to cut one long turn."""

from __future__ import annotations

from holon.context import fit
from holon.context.fit import TurnCut


def test_nothing_is_dropped_while_everything_fits():
    assert fit.turns_to_drop([100] * 10, 100, 100, 1200) == 0
    assert fit.turns_to_drop([], 100, 100, 200) == 0


def test_a_compaction_drops_down_to_the_retain_share():
    # 1200 tokens in a budget of 1000: dropping 2 turns would fit, but the cut goes down to
    # RETAIN (850) so the next turns append without another one
    prior = [100] * 10
    drop = fit.turns_to_drop(prior, 100, 100, 1000)
    assert drop == 4
    assert 100 + sum(prior[drop:]) + 100 <= int(1000 * fit.RETAIN)
    assert 100 + sum(prior[drop - 1 :]) + 100 > int(1000 * fit.RETAIN)  # no more than needed
    # the oldest turns go first: a big old turn alone can make room
    assert fit.turns_to_drop([800, 50, 50], 100, 100, 1000) == 1


def test_all_prior_turns_go_when_even_that_does_not_fit():
    assert fit.turns_to_drop([100, 100, 100], 500, 900, 1000) == 3


def _cut(budget, n=20, head=50, full=100, short=10, note=5):
    return fit.cut_turn(head, [full] * n, [short] * n, note, budget)


def _size(cut, n=20, head=50, full=100, short=10, note=5):
    return (
        head
        + (note if cut.elided else 0)
        + short * (cut.summarized - cut.elided)
        + full * (n - cut.summarized)
    )


def test_a_turn_that_fits_is_not_cut():
    cut = _cut(2050)
    assert cut == TurnCut(0, 0) and not cut.summarized


def test_summaries_move_in_steps_of_step_rounds():
    assert _cut(1500) == TurnCut(fit.STEP, 0)  # 8 summarized: 1330 tokens
    assert _cut(1000) == TurnCut(2 * fit.STEP, 0)  # 8 would be 1330: the next step, 610
    for budget in (1500, 1000):
        assert _size(_cut(budget)) <= budget


def test_the_newest_rounds_stay_full_while_possible():
    # 16 summarized is 610 tokens; the next step stops before the KEEP_FULL newest rounds
    cut = _cut(500)
    assert cut == TurnCut(20 - fit.KEEP_FULL, 0) and cut.summarized
    assert _size(cut) == 430


def test_rounds_are_elided_with_a_note_when_summaries_do_not_fit():
    cut = _cut(300)
    # summaries of rounds 0-17 are 430 tokens: the oldest are left out, in steps of STEP
    assert cut == TurnCut(18, 2 * fit.STEP)
    assert _size(cut) == 50 + 5 + 2 * 10 + 2 * 100 <= 300
    assert _cut(354) == TurnCut(18, 2 * fit.STEP)  # 18/8 would be 355: one token too many
    assert _cut(355) == TurnCut(18, fit.STEP)


def test_even_the_newest_rounds_are_summarized_as_a_last_resort():
    # keeping the 2 newest rounds full never fits: they are summarized too, oldest elided
    cut = _cut(100)
    assert cut == TurnCut(20, 2 * fit.STEP)
    assert _size(cut) == 95
    assert _cut(10) == TurnCut(20, 19)  # nothing fits: the deepest cut keeps the newest summary
    assert fit.cut_turn(10, [], [], 5, 5) == TurnCut(0, 0)  # no rounds: nothing to cut


def test_the_note_counts_only_when_rounds_are_elided():
    full, short, note = [100] * 10, [1] * 10, 1000
    # summaries of the 8 oldest rounds fit: nothing is elided, so the (huge) note costs nothing
    assert fit.cut_turn(0, full, short, note, 208) == TurnCut(8, 0)
    # eliding would bring the note: summarizing the newest rounds too is the smaller cut
    assert fit.cut_turn(0, full, short, note, 150) == TurnCut(10, 0)


def test_a_growing_turn_keeps_its_prefix_between_steps():
    """As a long turn grows, what it leaves out moves only in STEP multiples, about once per STEP
    rounds (a change there rewrites the prompt from the note on); the summarized/full boundary
    only ever moves among the newest rounds, so everything before them stays as it was sent."""
    cuts = []
    for n in range(40, 300):
        cut = fit.cut_turn(10, [100] * n, [10] * n, 5, 1500)
        assert cut.elided % fit.STEP == 0
        if cut.summarized % fit.STEP:  # off the STEP grid only when all older rounds are
            assert cut.summarized == n - fit.KEEP_FULL
        cuts.append(cut)
    moves = sum(1 for a, b in zip(cuts, cuts[1:], strict=False) if a.elided != b.elided)
    assert any(c.elided for c in cuts) and moves <= len(cuts) // fit.STEP + 1
