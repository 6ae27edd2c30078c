"""holon.home.shard: `K/N` parsing (K from 0) and a stable split of agent ids."""

from __future__ import annotations

import pytest

from holon.errors import UsageError
from holon.home.shard import Shard, parse, shard_of


def test_parse_and_a_split_that_gives_every_agent_one_shard():
    assert parse("0/3") == Shard(0, 3) and str(parse("2/3")) == "2/3"
    assert parse("1/4").label == "1-of-4"
    ids = [f"agent{i:03d}" for i in range(300)]
    owners = [[k for k in range(3) if Shard(k, 3).owns(i)] for i in ids]
    assert all(len(o) == 1 for o in owners)
    assert {o[0] for o in owners} == {0, 1, 2}
    assert shard_of("agent000", 3) == shard_of("agent000", 3)  # stable: sha256, not hash()


@pytest.mark.parametrize("text", ["3/3", "1", "-1/2", "a/b", "0/0", "1/2/3", "0/99999", ""])
def test_bad_shards_are_usage_errors(text):
    with pytest.raises(UsageError) as err:
        parse(text)
    assert err.value.kind == "bad_shard" and "0/3, 1/3 and 2/3" in err.value.hint
