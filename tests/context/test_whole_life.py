"""A whole life in the prompt: 320 turns against the scripted provider, each running a command
that prints 16 KB into a 24k-token window (a compaction every turn, so every turn is an episode
and they roll up two levels), with 20 facts told at turns 1-5, 10-14, 50-54 and 150-154. At the
end every fact is still in the request sent, the first turns' in the episode block (in a roll-up),
which covers every turn before the window; every request stays within its budget; episodes name
their commands; roll-ups are found by memory search."""

from __future__ import annotations

import json
import re

import pytest

from holon.agent.admission import admit
from holon.home.init import init_home
from holon.memory import index
from holon.providers import scripted
from holon.runtime.tick import tick
from holon.store import jsonl

pytestmark = pytest.mark.slow

TURNS = 320
CMD = "printf '%*s' 16000 '' | tr ' ' x; echo"
FACTS = [
    "the database is PostgreSQL, chosen for row-level security",
    "deploys go out from the blue-cedar branch",
    "the on-call pager rotates on Thursdays",
    "the staging bucket is named gravel-orchid",
    "invoices are archived under the walnut prefix",
    "the metrics host is heron-seven",
    "feature flags live in the saffron service",
    "the VPN realm is called tundra-lantern",
    "backups are encrypted with the juniper key",
    "the mobile app ships from the copper-wren pipeline",
    "support tickets are triaged in the quartz queue",
    "the search cluster runs on marble nodes",
    "customer exports are capped by the plover limit",
    "the CDN provider is codenamed silver-fennel",
    "load tests run every night on the osprey rig",
    "the legal hold list is kept in the cobalt vault",
    "error budgets are tracked on the ember board",
    "the billing cron is owned by team larkspur",
    "release notes are drafted in the hazel doc",
    "the cache tier is called dune-kestrel",
]
FACT_TURNS = [1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 50, 51, 52, 53, 54, 150, 151, 152, 153, 154]
FIRST_TURNS = 5


def _key(fact: str) -> str:
    return fact.rsplit(" ", 1)[-1]  # the fact's last word is its own


def _ask(turn: int) -> str:
    ask = f"Turn {turn}: run the command and report."
    if turn in FACT_TURNS:
        ask += f" Remember that {FACTS[FACT_TURNS.index(turn)]}."
    return ask


@pytest.fixture(scope="module")
def life(tmp_path_factory):
    root = tmp_path_factory.mktemp("life")
    sent: list = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOLON_HOME", str(root / "home"))
        mp.setenv("HOLON_CONTEXT_WINDOW", "24000")
        mp.setenv("HOLON_DEFAULT_DAILY_TOKENS", "0")
        original = scripted.ScriptedProvider.complete

        def spy(self, request):  # the real provider answers; the test keeps what it was sent
            sent[:] = [request]
            return original(self, request)

        mp.setattr(scripted.ScriptedProvider, "complete", spy)
        home = init_home(None, "a")
        path = root / "script.jsonl"
        call = {"name": "ExecCommand", "arguments": {"cmd": CMD, "login": False}}
        with open(path, "w") as fh:
            for i in range(1, TURNS + 1):
                fh.write(json.dumps({"text": "", "tool_calls": [{**call, "id": f"c{i}"}]}) + "\n")
                fh.write(json.dumps({"text": f"Turn {i} done."}) + "\n")
        for i in range(1, TURNS + 1):
            admit(home, "cli_prompt", "operator_prompt", {"type": "text", "text": _ask(i)})
            report = tick(home, model=f"scripted/{path}")
            assert [t["status"] for t in report.turns] == ["completed"], (i, report.to_dict())
        yield home, sent[0]


def test_every_fact_is_still_in_the_last_request(life):
    home, request = life
    episode_block = request.frame.context_blocks[0].text
    conversation = json.dumps([i.model_dump() for i in request.conversation], ensure_ascii=False)
    missing = [f for f in FACTS if _key(f) not in episode_block + conversation]
    assert not missing, missing
    # the first turns left the window long ago: they are in the episode block, in a roll-up
    assert f"Turn {FACT_TURNS[-1]}: run" not in conversation
    for fact in FACTS[:FIRST_TURNS]:
        assert _key(fact) in episode_block and _key(fact) not in conversation, fact
    assert "## Roll-up ru-" in episode_block
    rollups = list(jsonl.read(home.context_rollups))
    assert {r["level"] for r in rollups} == {1, 2}
    assert rollups[0]["turns"]["first_index"] == 1


def test_the_block_covers_every_turn_before_the_window(life):
    home, request = life
    built = [e["data"] for e in jsonl.read(home.events) if e["kind"] == "turn_context_built"]
    assert all(b["estimated_tokens"] <= b["prompt_budget"] for b in built)
    text = request.frame.context_blocks[0].text
    spans = []
    for line in text.splitlines():
        if line.startswith(("## Roll-up ", "## Episode ", "## Earlier ", "## Routine ")):
            span = line.split(" · turn")[1].split(" · ")[0].split(":")[0].strip("s ")
            first, _, last = span.partition("–")
            spans.append((int(first), int(last or first)))
    assert spans[0][0] == 1
    assert all(b[0] == a[1] + 1 for a, b in zip(spans, spans[1:], strict=False)), spans
    # ... up to the turn the conversation starts with
    first = re.search(r"Turn (\d+): run", request.conversation[0].text)
    assert first is not None and spans[-1][1] == int(first.group(1)) - 1, spans[-1]


def test_episodes_name_their_commands_and_roll_ups_are_searchable(life):
    home, _ = life
    episodes = list(jsonl.read(home.context_episodes))
    assert episodes
    for ep in episodes:
        assert "ran `printf '%*s' 16000 '' | tr ' ' x; echo` → exit 0" in ep["summary"], ep["id"]
    hits = index.search(home, "blue-cedar branch")["results"]
    assert "rollup" in {h["kind"] for h in hits}
