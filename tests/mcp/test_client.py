"""One connection per server per tick, in process: the cache saves a start, a new server
version is listed again, and the pool stops what the tick started."""

from __future__ import annotations

import sys

import pytest
from helpers import REPO

from holon.mcp import cache, client, config, discovery, pool, transport
from holon.mcp.failure import McpFailure

pytestmark = pytest.mark.slow

FAULT = str(REPO / "tests" / "support" / "mcp_fault_server.py")


@pytest.fixture
def server(holon_env, agent, tmp_path, monkeypatch):
    starts = tmp_path / "starts.log"
    monkeypatch.setenv("FAULT_STARTS", str(starts))
    monkeypatch.setenv("FAULT_VERSION", "1.0")
    holon_env.mkdir(parents=True, exist_ok=True)
    (holon_env / "config.toml").write_text(
        f"[mcp_servers.f]\ncommand = {sys.executable!r}\nargs = [{FAULT!r}]\n"
        "tool_timeout_s = 5\n".replace("'", '"')
    )
    from holon import config as holon_config

    holon_config.reset()
    yield config.servers()[0], starts
    pool.close_all()


def test_the_cache_saves_a_start_and_a_new_version_is_listed_again(agent, server, monkeypatch):
    srv, starts = server
    names = [s.model_name for s in discovery.tools(agent, agent.root, agent.root)]
    assert "mcp__f__echo" in names and len(starts.read_text().splitlines()) == 1
    assert pool.close_all() == 1
    assert [s.model_name for s in discovery.tools(agent, agent.root, agent.root)] == names
    assert len(starts.read_text().splitlines()) == 1  # from the cache: nothing started
    spec = discovery.find(agent, "mcp__f__echo")
    monkeypatch.setenv("FAULT_VERSION", "2.0")
    result = discovery.call(agent, agent.root, agent.root, spec, {"text": "hi"})
    assert result["content"][0]["text"] == "hi"
    assert cache.read(agent, srv)["server_version"] == "2.0"
    assert len(starts.read_text().splitlines()) == 2  # one start served the call and the list


def test_a_connection_is_kept_for_the_tick_and_stopped_by_the_pool(agent, server):
    srv, starts = server
    first = pool.connection(srv, agent, agent.root, agent.root)
    assert isinstance(first, client.Connection) and first.alive
    assert pool.connection(srv, agent, agent.root, agent.root) is first
    assert discovery.probe(agent, srv, agent.root, agent.root)["tools"] >= 5
    pid = first.wire.pid
    assert pool.close_all() == 0  # probe dropped it
    assert not first.alive
    import os

    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_command_that_does_not_exist_is_unavailable(agent):
    srv = config.parse("nope", {"command": "/nonexistent/mcp", "startup_timeout_s": 2})
    with pytest.raises(McpFailure) as err:
        pool.connection(srv, agent, agent.root, agent.root)
    assert err.value.kind == "mcp_server_unavailable"
    assert not list(agent.scratch.iterdir())  # its scratch directory is gone with it
    assert transport.MAX_LINE == 16 << 20
