"""`holon keys set|list|remove|path`: provider keys for unattended runs, in a 0600 file; values
are never printed."""

from __future__ import annotations

import sys

import click

from holon.cli.output import emit_json


@click.group("keys")
def keys_group() -> None:
    """Provider API keys for runs whose environment has none (cron).

    cron, launchd and systemd start `holon tick` with an environment that has no secrets in it.
    A key stored here (in $HOLON_HOME/keys.json, readable only by you) is used when the
    environment variable of the same name is not set; when it is set, the environment wins.
    Key values are never printed.
    """


@keys_group.command("set")
@click.argument("name")
@click.argument("value", required=False)
@click.option(
    "--force", is_flag=True, help="Store it even though no configured provider reads NAME."
)
def set_cmd(name: str, value: str | None, force: bool) -> None:
    """Store a key under NAME, such as OPENAI_API_KEY.

    NAME is the environment variable the provider reads its key from. Give VALUE as `-`, or leave
    it out when piping, to read the key from standard input: it then stays out of your shell
    history and the process list. Left out at a terminal, the key is asked for without echoing
    it. Setting a NAME again replaces its value.

    \b
      printf %s "$KEY" | holon keys set OPENAI_API_KEY -
      holon keys set ANTHROPIC_API_KEY          # prompts, input hidden
    """
    from holon import keys

    keys.check_name(name)  # before asking for the secret
    if not force:
        _check_read(name)
    if value is None and sys.stdin.isatty():
        value = click.prompt(f"Value for {name}", hide_input=True, err=True)
    elif value is None or value == "-":
        from holon.cli.output import read_text_arg

        value = read_text_arg("-", "VALUE")
    else:
        click.echo(
            "note: a key given on the command line can be seen in shell history and by `ps`; "
            f"prefer: holon keys set {name} -  (the key on standard input)",
            err=True,
        )
    keys.set_key(name, value)
    click.echo(f"stored {name} in {keys.path()}")
    if keys.source(name) == "environment":
        click.echo(f"note: {name} is also set in this environment, which wins over the file")


def _mcp_tokens() -> set[str]:
    """The key names MCP servers send as bearer tokens (`bearer_token_env`)."""
    from holon.mcp import config

    return {s.bearer_token_env for s in config.servers() if s.bearer_token_env}


def _check_read(name: str) -> None:
    """Refuse a NAME that no built-in or configured provider reads its key from, suggesting the
    one meant (`openai` -> OPENAI_API_KEY). The name is not repeated: it may be a pasted key."""
    import difflib

    from holon.errors import UsageError
    from holon.providers.resolve import key_variables

    known = key_variables()
    if name in known or name in _mcp_tokens():
        return
    by_provider = {p.lower(): var for var, ids in known.items() for p in ids}
    guess = by_provider.get(name.lower()) or next(
        iter(difflib.get_close_matches(name.upper(), list(known), n=1, cutoff=0.5)), None
    )
    names = ", ".join(sorted(known)) or "none"
    raise UsageError(
        "no configured provider reads its key from that name"
        + (f"; did you mean {guess}?" if guess else f" (they read: {names})"),
        kind="unknown_key_name",
        hint=(f"holon keys set {guess} -" if guess else "use one of those names")
        + "; add --force to store it anyway (for a provider you configure later)",
    )


@keys_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
def list_cmd(as_json: bool) -> None:
    """Show which keys are set and where from.

    Lists the stored key names and every variable a built-in or configured provider reads its key
    from, each with where it is set: the environment (which wins) or the keys file. Never prints
    a value; warns when others can read the keys file."""
    from holon import keys
    from holon.providers.resolve import key_variables

    doc = keys.report(key_variables())
    if as_json:
        emit_json(doc)
        return
    file = doc["file"]
    state = f"mode {file['mode']}" if file["exists"] else "not created yet"
    click.echo(f"keys file: {file['path']} ({state})")
    for row in doc["keys"]:
        where = {"environment": "environment", None: "not set"}.get(row["source"], "keys file")
        also = " (also in the keys file)" if row["in_environment"] and row["in_file"] else ""
        click.echo(f"{row['name']:<28} {where:<12} {', '.join(row['providers']) or '-'}{also}")
    if file["exists"] and int(file["mode"], 8) & 0o077:
        click.echo(
            f"warning: others can read {file['path']}; run: chmod 600 {file['path']}", err=True
        )


@keys_group.command("remove")
@click.argument("name")
def remove_cmd(name: str) -> None:
    """Forget the key stored under NAME.

    The environment variable of that name, if set, is untouched."""
    from holon import keys
    from holon.errors import UsageError

    if not keys.remove(name):
        raise UsageError(
            f"no key named {name} in {keys.path()}",
            kind="unknown_key",
            hint="`holon keys list` shows the stored names",
        )
    click.echo(f"removed {name} from {keys.path()}")
    if keys.source(name) == "environment":
        click.echo(f"note: {name} is still set in this environment")


@keys_group.command("path")
def path_cmd() -> None:
    """Print the keys file's path.

    It is $HOLON_HOME/keys.json, mode 0600; printed whether or not it exists yet."""
    from holon import keys

    click.echo(str(keys.path()))
