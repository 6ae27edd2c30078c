"""Spec (Agent Identity And Visibility Contract, routing rules: `holon run` without --agent uses
a temporary private agent): the temporary agent is private and self-owned, of kind `named`,
not a `child` (a parent-supervised kind) without a parent."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import run


def test_holon_run_temporary_agent_is_private_self_owned_not_a_child(holon_env, script):
    proc = run("run", "hello", "--keep", "--json", "--model", script({"text": "hi"}))
    assert proc.returncode == 0, proc.stderr
    home = Path(json.loads(proc.stdout)["home"])
    ident = json.loads((home / ".holon" / "agent.json").read_text())
    assert (ident["kind"], ident["visibility"], ident["ownership"]) == (
        "named",
        "private",
        "self_owned",
    )
    assert ident.get("lineage_parent_agent_id") is None
    assert json.loads(run("agents", "--all", "--json").stdout) == []  # never registered
