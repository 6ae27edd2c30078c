"""`holon workspace list|use|detach AGENT`: which project an agent works in (its execution
binding)."""

from __future__ import annotations

from pathlib import Path

import click

from holon.cli.output import emit_json


@click.group("workspace")
def workspace_group() -> None:
    """An agent's workspaces: where its file and shell tools run.

    Every agent has exactly one active workspace; `agent_home` (its own
    directory) is always attached and cannot be detached. A directory in a
    git repository is known by the repository's main checkout (its anchor):
    the workspace AGENTS.md (else CLAUDE.md) is read there.
    """


def _render(bound: dict) -> str:
    line = (
        f"{bound['workspace_id']} ({bound['mode']}): root {bound['execution_root']} · "
        f"cwd {bound['cwd']}"
    )
    tree = bound.get("worktree")
    if tree:
        line += f" · worktree branch {tree['branch']} from {tree['base_commit'][:12]}"
    return line


@workspace_group.command("list")
@click.argument("agent")
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
def list_cmd(agent: str, as_json: bool) -> None:
    """List AGENT's attached workspaces (`*` marks the active one) and retained worktrees."""
    from holon.home.registry import resolve
    from holon.ops import workspace

    doc = workspace.listing(resolve(agent))
    if as_json:
        emit_json(doc)
        return
    for row in doc["attached"]:
        gone = "" if row["exists"] else " (missing)"
        click.echo(f"{'*' if row['active'] else ' '} {row['workspace_id']}  {row['anchor']}{gone}")
    click.echo(f"active: {_render(doc['active'])}")
    for kept in doc["retained"]:
        click.echo(
            f"retained worktree {kept['path']} (branch {kept['branch']}): {kept['reason']}, "
            f"{len(kept['changed_files'])} changed file(s)"
        )


@workspace_group.command("use")
@click.argument("agent")
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--id", "workspace_id", help="An attached workspace id (agent_home: the home).")
@click.option("--isolated", is_flag=True, help="Work in a git worktree of the agent's own.")
@click.option("--label", help="With --isolated: names the worktree and its branch.")
@click.option("--cwd", help="Working directory inside the execution root.")
@click.option("--json", "as_json", is_flag=True, help="Print the new binding as JSON.")
def use_cmd(
    agent: str,
    path: Path | None,
    workspace_id: str | None,
    isolated: bool,
    label: str | None,
    cwd: str | None,
    as_json: bool,
) -> None:
    """Make PATH (or --id ID) AGENT's active workspace; waits for no running turn."""
    from holon.errors import UsageError
    from holon.home.registry import resolve
    from holon.ops import workspace

    if (path is None) == (workspace_id is None):
        raise UsageError(
            "give exactly one of PATH or --id ID",
            kind="invalid_input",
            hint="PATH attaches a directory; --id activates an attached one (or agent_home)",
        )
    if label and not isolated:
        raise UsageError("--label names an isolated worktree", hint="add --isolated")
    bound = workspace.use(
        resolve(agent),
        path=path,
        workspace_id=workspace_id,
        isolated=isolated,
        label=label,
        cwd=cwd,
    )
    if as_json:
        emit_json(bound)
    else:
        click.echo(_render(bound))


@workspace_group.command("detach")
@click.argument("agent")
@click.argument("workspace_id")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def detach_cmd(agent: str, workspace_id: str, as_json: bool) -> None:
    """Forget WORKSPACE_ID (not the active one); nothing is deleted: an isolated worktree is
    kept and listed as retained (`holon workspace list`)."""
    from holon.home.registry import resolve
    from holon.ops import workspace

    out = workspace.detach(resolve(agent), workspace_id)
    if as_json:
        emit_json(out)
        return
    click.echo(f"detached {workspace_id}")
    tree = out.get("worktree")
    if tree and tree.get("removed"):
        click.echo(f"removed worktree {tree['path']}")
    elif tree:
        files = ", ".join(tree.get("changed_files") or []) or "none"
        click.echo(f"kept worktree {tree['path']}: {tree['retained_reason']} (changed: {files})")
