"""`holon sandbox show|set AGENT`: the sandbox mode of an agent's commands, and whether this system
enforces it."""

from __future__ import annotations

import click

from holon.cli.output import emit_json

MODES = ("read-only", "workspace-write", "full-access")


@click.group("sandbox")
def sandbox_group() -> None:
    """The sandbox around the commands an agent runs (ExecCommand, background tasks, batches,
    timer guards) and the files ApplyPatch may write.

    \b
    read-only        commands may write nowhere but their scratch directory ($TMPDIR)
    workspace-write  writes only in the execution root, temporary directories and
                     extra writable roots (the default)
    full-access      no confinement beyond the read-only .holon/ (an explicit choice)

    In every mode the agent's .holon/ is read-only to commands; $HOLON_HOME (keys, registry,
    config, logs, every other agent) is hidden from them but for the agent's own places, and
    its admission keys are masked, where the kernel allows (a mount namespace); commands cannot
    read the environment or memory of holon's processes; and credentials are removed from the
    environment unless passed with --pass-env.

    A command with `login` (the default) runs in a plain shell with the environment a login
    shell gives (PATH, the profile's exports), captured once per tick in the same sandbox with
    the profile's output discarded; `"login": false` gets the plain environment.
    """


def _show(agent: str, as_json: bool) -> None:
    from holon.home.registry import resolve
    from holon.sandbox.confine import describe

    doc = describe(resolve(agent))
    if as_json:
        emit_json(doc)
        return
    click.echo(f"mode:       {doc['mode']} ({doc['source']})")
    click.echo(f"network:    {doc['network']}")
    kernel = f", Landlock ABI {doc['landlock_abi']}" if "landlock_abi" in doc else ""
    click.echo(
        f"enforced:   {'yes' if doc['enforced'] else 'NO: commands are refused'} "
        f"({doc['enforcement']}{kernel})"
    )
    if doc["writable_roots"]:
        click.echo(f"writable:   {', '.join(doc['writable_roots'])} (extra)")
    click.echo(f"pass_env:   {', '.join(doc['pass_env']) or '(none)'}")
    click.echo(f"read-only:  {', '.join(doc['protected'])}")
    if doc["hidden"]:
        click.echo(f"hidden:     {', '.join(doc['hidden'])} (all but this agent's own places)")
    if doc.get("mount_namespace") is False and doc["enforcement"] == "landlock":
        click.echo(
            "note:       no private mount namespace here: new files directly in a directory "
            "or $HOLON_HOME are refused, and $HOLON_HOME is NOT hidden: commands can read "
            "keys.json and every agent's admission key (and write none of them)"
        )


@sandbox_group.command("show")
@click.argument("agent")
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
def show_cmd(agent: str, as_json: bool) -> None:
    """Show AGENT's sandbox mode, network setting, what stays read-only, and whether this
    system enforces it."""
    _show(agent, as_json)


@sandbox_group.command("set")
@click.argument("agent")
@click.argument("mode", type=click.Choice(MODES))
@click.option(
    "--network",
    type=click.Choice(("deny", "allow")),
    help="TCP connect and bind for commands (default: unchanged; allow with full-access).",
)
@click.option(
    "--pass-env",
    "pass_env",
    multiple=True,
    metavar="NAME",
    help="Pass this variable (or fnmatch pattern) to commands although it looks like a "
    "credential; repeat for several. Replaces the list.",
)
@click.option("--no-pass-env", is_flag=True, help="Pass no credential-like variable.")
@click.option(
    "--writable-root",
    "writable_roots",
    multiple=True,
    metavar="DIR",
    help="An extra absolute directory writable in workspace-write; repeat. Replaces the list.",
)
@click.option("--no-writable-roots", is_flag=True, help="Remove the extra writable roots.")
@click.option("--json", "as_json", is_flag=True, help="Print the new sandbox as JSON.")
def set_cmd(
    agent: str,
    mode: str,
    network: str | None,
    pass_env: tuple[str, ...],
    no_pass_env: bool,
    writable_roots: tuple[str, ...],
    no_writable_roots: bool,
    as_json: bool,
) -> None:
    """Set AGENT's sandbox MODE (saved in .holon/sandbox.json, tracked in git)."""
    from holon.home.registry import resolve
    from holon.sandbox import policy

    home = resolve(agent)
    chosen = policy.choose(
        policy.read(home),
        mode,
        network,
        () if no_pass_env else (pass_env or None),
        () if no_writable_roots else (writable_roots or None),
    )
    policy.write(home, chosen)
    _show(agent, as_json)
