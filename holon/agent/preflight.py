"""What every turn reads, checked before a tick claims a message: a corrupt file stops the tick.

A file a turn cannot do without (agent.json, settings.json, budget.json, workspace.json,
config.toml) that is corrupt would otherwise fail the turn half-way, and the message that
happened to be next would be retried and dead-lettered with a brief blaming it. Checked first,
the tick stops with the file's own error (`corrupt_state` or `invalid_config`, naming it, with the
repair as the hint) and the queue is left as it was. A run state that cannot be read is not an
error here: the Agent sets it aside and rebuilds it (holon.home.runstate).
"""

from __future__ import annotations

from holon import config
from holon.agent import budget, profiles, workspaces
from holon.agent.handle import Agent


def check(agent: Agent) -> None:
    """Raise the HolonError of the first file a turn would trip on; None when all can be used."""
    config.load()
    config.default_model()
    agent.identity()
    profiles.preset_of(agent.home)  # an unknown preset never widens to every tool
    agent.state()  # settings.json; a bad state.json is set aside and rebuilt
    budget.limits(agent)
    workspace(agent)


def workspace(agent: Agent) -> dict[str, object]:
    """workspace.json ({} when missing); `corrupt_state` when it is not a binding of the shape
    holon.agent.workspaces writes (or the older `{"execution_root": path}`)."""
    return workspaces.read(agent.home)
