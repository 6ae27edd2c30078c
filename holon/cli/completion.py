"""`holon completion bash|zsh|fish`: the shell script that completes commands, options, agent
ids, task ids and work item ids (click's completion, with holon's ids added)."""

from __future__ import annotations

import click

SHELLS = ("bash", "zsh", "fish")
COMPLETE_VAR = "_HOLON_COMPLETE"


@click.command("completion")
@click.argument("shell", type=click.Choice(SHELLS))
def completion_cmd(shell: str) -> None:
    """Print the completion script for SHELL: commands, options, agent ids, task ids and work
    item ids complete with Tab.

    \b
      bash:  eval "$(holon completion bash)"          (in ~/.bashrc)
      zsh:   eval "$(holon completion zsh)"           (in ~/.zshrc)
      fish:  holon completion fish > ~/.config/fish/completions/holon.fish
    """
    from click.shell_completion import get_completion_class

    root = click.get_current_context().find_root().command  # the holon group
    cls = get_completion_class(shell)
    click.echo(cls(root, {}, "holon", COMPLETE_VAR).source())


def add_id_completion(command: click.Command) -> None:
    """Give the AGENT, TASK_ID and WORK_ITEM_ID arguments of `command` (and its subcommands)
    their candidates, unless they have their own."""
    for param in command.params:
        complete = _BY_NAME.get(param.name or "")
        if complete is not None and getattr(param, "_custom_shell_complete", None) is None:
            param._custom_shell_complete = complete  # click's slot for shell_complete=
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            add_id_completion(sub)


def _agents(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    from holon.home.registry import all_homes

    return [h.agent_id for h in all_homes() if h.agent_id.startswith(incomplete)]


def _tasks(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    from holon.tasks import store

    home = _home(ctx)
    ids = [r["id"] for r in store.all_records(home)] if home is not None else []
    return [i for i in ids if i.startswith(incomplete)]


def _work(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    from holon.ops import work

    home = _home(ctx)
    ids = [r["id"] for r in work.listing(home, True)] if home is not None else []
    return [i for i in ids if i.startswith(incomplete)]


def _home(ctx: click.Context):
    """The home of the AGENT given earlier on the line, or None."""
    from holon.errors import HolonError
    from holon.home.registry import resolve

    agent = ctx.params.get("agent")
    try:
        return resolve(agent) if agent else None
    except HolonError:
        return None


_BY_NAME = {
    "agent": _agents,
    "agents": _agents,
    "task_id": _tasks,
    "work_item_id": _work,
}
