"""holon.ops.queue: an unreadable dead letter is listed, never retried."""

from __future__ import annotations

import pytest

from holon.errors import UsageError
from holon.ops import queue


def test_an_unreadable_dead_letter_is_listed_and_not_retried(agent):
    agent.queue.ensure()
    (agent.queue.dead / "x.json.unreadable").write_text("{not json")
    (row,) = queue.listing(agent, dead=True)
    assert (row["state"], row["message_id"], row["file"]) == (
        "dead_unreadable",
        None,
        "x.json.unreadable",
    )
    with pytest.raises(UsageError) as caught:
        queue.retry(agent, "x.json.unreadable")
    assert caught.value.kind == "unknown_message"
