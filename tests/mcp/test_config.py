"""[mcp_servers.NAME] validation, model-visible names, which servers an agent uses, the tool
list cache, and `holon mcp add|remove` editing config.toml."""

from __future__ import annotations

import json

import pytest

from holon import config as holon_config
from holon.errors import UsageError
from holon.home.layout import Home
from holon.mcp import admin, cache, config, names
from holon.mcp.failure import HINTS, McpFailure


def write_config(holon_env, text: str) -> None:
    holon_env.mkdir(parents=True, exist_ok=True)
    (holon_env / "config.toml").write_text(text)
    holon_config.reset()


def test_a_stdio_server_takes_the_codex_keys_with_their_defaults():
    server = config.parse(
        "time", {"command": "t", "args": ["--x"], "env": {"A": "1"}, "disabled_tools": ["b"]}
    )
    assert (server.transport, server.args, server.env) == ("stdio", ("--x",), {"A": "1"})
    assert (server.startup_timeout_s, server.tool_timeout_s, server.enabled) == (10, 60, True)
    assert server.offers("a") and not server.offers("b")
    only = config.parse("h", {"url": "https://x/mcp", "enabled_tools": ["a"]})
    assert only.transport == "http" and only.offers("a") and not only.offers("c")


@pytest.mark.parametrize(
    "table, problem",
    [
        ({}, "exactly one of command"),
        ({"command": "a", "url": "http://x"}, "exactly one of command"),
        ({"command": "a", "headers": {}}, "do not apply"),
        ({"url": "ftp://x"}, "http:// or https://"),
        ({"command": "a", "args": "x"}, "args must be an array"),
        ({"command": "a", "env": {"A": 1}}, "env must be a table of strings"),
        ({"command": "a", "tool_timeout_s": 0}, "tool_timeout_s"),
        ({"command": "a", "enabled": "yes"}, "enabled must be"),
        ({"command": "a", "colour": "red"}, "unknown keys colour"),
    ],
)
def test_a_bad_table_is_invalid_config_naming_the_problem(table, problem):
    with pytest.raises(UsageError) as err:
        config.parse("s", table)
    assert err.value.kind == "invalid_config" and problem in err.value.message


def test_the_digest_follows_what_decides_the_tool_list():
    base = config.parse("s", {"command": "a"})
    assert base.digest == config.parse("s", {"command": "a", "tool_timeout_s": 5}).digest
    assert base.digest != config.parse("s", {"command": "a", "args": ["b"]}).digest


def test_names_are_mapped_cut_and_collisions_refused():
    assert names.model_name("srv", "get.thing/now") == "mcp__srv__get_thing_now"
    assert len(names.model_name("s", "x" * 100)) == 64
    with pytest.raises(names.Collision):
        names.assign("s", ["a.b", "a_b"], set())
    with pytest.raises(names.Collision):
        names.assign("s", ["a"], {"mcp__s__a"})


def test_an_agent_uses_enabled_servers_its_own_choice_winning(holon_env, agent):
    write_config(
        holon_env,
        '[mcp_servers.on]\ncommand = "a"\n[mcp_servers.off]\ncommand = "b"\nenabled = false\n',
    )
    assert [s.name for s in config.for_agent(agent)] == ["on"]
    agent.mcp_json.write_text(json.dumps({"enabled": ["off"], "disabled": ["on"]}))
    assert [s.name for s in config.for_agent(agent)] == ["off"]


def test_a_private_child_gets_only_what_its_parent_grants(holon_env, agent):
    write_config(holon_env, '[mcp_servers.on]\ncommand = "a"\n')
    child = Home(agent.children_dir / "a.c-123456")
    assert config.for_agent(child) == []
    agent.mcp_json.write_text(json.dumps({"grant_children": ["on"]}))
    assert [s.name for s in config.for_agent(child)] == ["on"]


def test_a_corrupt_mcp_json_is_corrupt_state(holon_env, agent):
    write_config(holon_env, '[mcp_servers.on]\ncommand = "a"\n')
    agent.mcp_json.write_text("{")
    with pytest.raises(UsageError) as err:
        config.for_agent(agent)
    assert err.value.kind == "corrupt_state"


def test_the_cache_answers_only_for_the_same_config_and_keeps_tools_past_a_failure(agent):
    server = config.parse("s", {"command": "a"})
    cache.store(agent, server, version="1", tools=[{"name": "t"}])
    assert cache.fresh(cache.read(agent, server))
    assert cache.read(agent, config.parse("s", {"command": "b"})) is None
    failure = McpFailure("mcp_server_unavailable", "gone").to_record()
    entry = cache.store(agent, server, version=None, tools=None, error=failure)
    assert entry["tools"] == [{"name": "t"}] and entry["server_version"] == "1"
    assert not cache.fresh(entry) and "mcp_server_unavailable" in HINTS


def test_add_and_remove_keep_the_rest_of_config_toml(holon_env):
    write_config(holon_env, '# mine\nmodel = "scripted/x"\n\n[runtime]\nmax_rounds = 5\n')
    admin.add("time", command=["mcp-server-time", "--local-timezone", "UTC"], env={"A": "b"})
    admin.add("web", url="https://example.com/mcp", bearer_token_env="WEB_TOKEN")
    assert [s.name for s in config.servers()] == ["time", "web"]
    assert config.servers()[0].args == ("--local-timezone", "UTC")
    with pytest.raises(UsageError) as err:
        admin.add("time", command=["x"])
    assert err.value.kind == "mcp_server_exists"
    admin.remove("time")
    text = (holon_env / "config.toml").read_text()
    assert text.startswith('# mine\nmodel = "scripted/x"\n\n[runtime]\nmax_rounds = 5\n')
    assert [s.name for s in config.servers()] == ["web"]
    with pytest.raises(UsageError) as err:
        admin.remove("time")
    assert err.value.kind == "unknown_mcp_server"
    with pytest.raises(UsageError) as err:
        admin.add("Bad Name", command=["x"])
    assert err.value.kind == "invalid_input"


def test_rows_show_status_from_the_newest_cache(holon_env, agent):
    write_config(holon_env, '[mcp_servers.s]\ncommand = "a"\n[mcp_servers.t]\ncommand = "b"\n')
    assert [r["status"] for r in admin.rows([agent])] == ["unknown", "unknown"]
    server = config.servers()[0]
    cache.store(agent, server, version="2", tools=[{"name": "x"}, {"name": "y"}])
    row = admin.rows([agent])[0]
    assert (row["status"], row["tools"], row["server_version"]) == ("ok", 2, "2")


def test_a_listing_is_bounded_before_it_reaches_the_prompt():
    from holon.mcp import discovery

    server = config.parse("s", {"command": "a"})
    huge = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(2000)}}
    listed = [
        {"name": "big", "inputSchema": huge},
        {"name": "long", "description": "d" * 10_000},
        {"name": "notaschema", "inputSchema": "x"},
        *({"name": f"t{i}"} for i in range(200)),
    ]
    found = discovery.specs(server, {"tools": listed}, set())
    assert len(found) == discovery.MAX_TOOLS
    assert "mcp__s__big" not in {s.model_name for s in found}
    assert "mcp__s__notaschema" not in {s.model_name for s in found}
    assert len(found[0].description) == discovery.MAX_DESCRIPTION


def test_enable_disable_and_grant_write_the_agents_choice(holon_env, agent):
    write_config(holon_env, '[mcp_servers.on]\ncommand = "a"\nenabled = false\n')
    admin.choose(agent, "on", on=True)
    assert [s.name for s in config.for_agent(agent)] == ["on"]
    admin.choose(agent, "on", on=False)
    assert config.for_agent(agent) == []
    admin.choose(agent, "on", on=True, children=True)
    assert config.agent_choice(agent) == {
        "enabled": [],
        "disabled": ["on"],
        "grant_children": ["on"],
    }
    admin.choose(agent, "on", on=False, children=True)
    assert config.agent_choice(agent)["grant_children"] == []
    with pytest.raises(UsageError) as err:
        admin.choose(agent, "nope", on=True)
    assert err.value.kind == "unknown_mcp_server"


def test_a_bad_table_leaves_the_agent_its_other_servers(holon_env, agent):
    write_config(holon_env, '[mcp_servers.good]\ncommand = "a"\n[mcp_servers.bad]\nurl = 5\n')
    assert [s.name for s in config.for_agent(agent)] == ["good"]
    with pytest.raises(UsageError) as err:
        config.servers()
    assert err.value.kind == "invalid_config" and "[mcp_servers.bad]" in err.value.message
