"""`holon gc AGENT...|--all [--dry-run] [--json]`: remove what retention allows."""

from __future__ import annotations

import click


@click.command("gc")
@click.argument("agents", nargs=-1, metavar="[AGENT]...")
@click.option("--all", "all_agents", is_flag=True, help="Every registered agent.")
@click.option("--dry-run", is_flag=True, help="Print what would be removed; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document per agent, as a list.")
def gc_cmd(agents: tuple[str, ...], all_agents: bool, dry_run: bool, as_json: bool) -> None:
    """Remove old artifacts, finished task directories, long-archived private children and old
    ledger segments of AGENT (or of every agent with --all), as `[retention]` in config.toml
    allows, and print each removal and the bytes freed.

    Never removed: what the context's replay window, an in-flight turn, an unsettled message or
    a live task still names, and ledger segments the memory index has not read yet. An agent
    whose turn lock is held (a tick is running) is skipped and reported as busy. Exit 0, also
    when an agent was busy; 1 when a home could not be collected (with --all, a broken home is
    reported with the error and the others are still collected).

    \b
    [retention] in $HOLON_HOME/config.toml (each also HOLON_RETENTION_<NAME>; 0 turns it off):
      artifact_keep_days = 30     artifacts older than this many days
      artifact_max_bytes = 0      the oldest artifacts past this total size
      task_keep_days = 30         finished task directories, archived private children
      segment_keep_days = 0       rotated ledger segments (off: the ledgers are the record)
      ledger_segment_bytes = 64 MiB   when a ledger is rotated into a segment (not by gc)
    """
    from holon.cli.output import emit_json
    from holon.errors import HolonError, UsageError
    from holon.home import registry
    from holon.ops.gc import gc

    if all_agents == bool(agents):
        raise UsageError(
            "name an AGENT or pass --all", kind="missing_agent", hint="holon gc --all --dry-run"
        )
    failed: list[dict] = []
    if all_agents:
        homes, broken = registry.scan()
        failed += [
            {**b, "outcome": "error", "error": f"{b['status']}: {b['problem']}"} for b in broken
        ]
    else:
        homes = [registry.resolve(a) for a in agents]
    reports: list = []
    for home in homes:
        try:
            reports.append(gc(home, dry_run=dry_run))
        except HolonError as exc:
            if not all_agents:
                raise
            failed.append(_failure(home, f"{exc.kind}: {exc.message}"))
        except OSError as exc:
            if not all_agents:
                raise
            failed.append(_failure(home, f"io_error: {exc.strerror or exc}"))
    if as_json:
        emit_json([r.to_json() for r in reports] + failed)
    else:
        for r in reports:
            click.echo(render(r))
        for f in failed:
            click.echo(f"{f['agent_id'] or '(registry)'}: not collected: {f['error']}", err=True)
    if failed:
        click.get_current_context().exit(1)


def _failure(home, error: str) -> dict:
    return {"agent_id": home.agent_id, "home": str(home.root), "outcome": "error", "error": error}


def render(r) -> str:
    if r.outcome == "busy":
        return f"{r.agent_id}: busy (a tick holds its turn lock); skipped, run gc again later"
    verb = "would remove" if r.outcome == "dry_run" else "removed"
    lines = [
        f"{r.agent_id}: {verb} {i.kind} {i.path} ({i.bytes} bytes, {i.reason})" for i in r.removed
    ]
    kept = f"; kept {r.kept} still in use" if r.kept else ""
    lines.append(f"{r.agent_id}: {verb} {len(r.removed)} item(s), {r.bytes_freed} bytes{kept}")
    return "\n".join(lines)
