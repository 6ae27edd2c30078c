"""What a `holon tick` run reports, and what its `--log` keeps: one agent's report merged over
passes, the exit code, the human lines (and which go to stderr), and the log policy (a run with
nothing to report writes nothing; a failed run's lines also go to stderr). Stdlib only: it is on
the tick's path, idle included; `holon.cli.tick` prints what this decides."""

from __future__ import annotations

from typing import Any

# --all --until-idle passes again while a pass ran anything: work one agent's turn made for
# another (a child it spawned, the task_result that wakes its parent) runs in the same command
MAX_PASSES = 100


def progressed(report: dict) -> bool:
    """Did the agent's tick do work another agent may now be waiting on?"""
    return bool(report.get("turns") or report.get("recovered") or report.get("fired"))


def merge(reports: list[dict], more: list[dict]) -> None:
    """Add one pass's reports, an agent already reported once keeping one report: its lists
    extended, its outcome the later one unless that is `idle`."""
    seen = {(r.get("agent_id"), r.get("home")): r for r in reports}
    for r in more:
        old = seen.get((r.get("agent_id"), r.get("home")))
        if old is None:
            reports.append(r)
            seen[(r.get("agent_id"), r.get("home"))] = r
            continue
        for key, value in r.items():
            if isinstance(value, list):
                old[key] = old.get(key, []) + value
            elif key != "outcome" or value != "idle":
                old[key] = value


def error_report(home: Any, exc: Exception) -> dict:
    """The report of an agent whose tick raised (with --all, reported, never raised)."""
    from holon.errors import HolonError

    report = {"agent_id": home.agent_id, "outcome": "error", "home": str(home.root)}
    if isinstance(exc, HolonError):
        hint = f" ({exc.hint})" if exc.hint else ""
        report["error"] = f"{exc.kind}: {exc.message}{hint}"
    else:
        report["error"] = f"internal_error: {type(exc).__name__}: {exc}"
    return report


def exit_code(reports: list[dict], all_agents: bool) -> int:
    """1 if a turn failed or an agent could not be ticked; 3 if a named agent is paused or
    stopped with work queued; else 0."""
    code = 0
    for r in reports:
        if r["outcome"] in ("missing", "broken", "error"):
            code = max(code, 1)
        if any(t["status"] == "failed" for t in r.get("turns", [])):
            code = max(code, 1)
        if r["outcome"] in ("paused", "stopped") and not all_agents:
            code = 3
    return code


def commits(flag: bool) -> bool:
    """--commit, or `[git] commit_after_turn = true` in config.toml."""
    if flag:
        return True
    from holon import config

    return config.get("git.commit_after_turn") is True


def error_lines(kind: str, message: str, hint: str | None = None) -> list[str]:
    """An error as the root group prints it."""
    return [f"holon: {kind}: {message}"] + ([f"hint: {hint}"] if hint else [])


def texts(reports: list[dict]) -> list[str]:
    """The report for the log and for stderr: a failed turn also says why."""
    return [text for text, _ in lines(reports, why=True)]


def lines(reports: list[dict], why: bool = False) -> list[tuple[str, bool]]:
    """The human report: (text, for stderr) per agent that did something."""
    out = []
    for r in reports:
        if r["outcome"] == "idle" and not r.get("fired") and not r.get("recovered"):
            continue
        line = f"{r['agent_id']}: {r['outcome']}"
        for t in r.get("turns", []):
            line += f"\n  {t['message_id']} {t['status']}"
            if t["status"] == "deferred" and t.get("not_before"):
                line += f" until {t['not_before']} (provider outage; retried then)"
            failure = t.get("failure_artifact") or {}
            if why and failure.get("summary"):
                line += f"\n    {failure.get('kind') or 'failed'}: {failure['summary']}"
        if r.get("held"):
            line += f"\n  {r['held']['message']}"
        if r.get("capped"):
            line += (
                f"\n  stopped at its cap of {r['capped']['cap']} self-driven turns in a row "
                f"(`holon briefs {r['agent_id']}` says how to go on)"
            )
        if r.get("dead_lettered"):
            line += f"\n  dead-lettered: {', '.join(r['dead_lettered'])}"
        if r["outcome"] in ("missing", "broken"):
            line += f" {r.get('home')}: {r.get('problem')}"
            line += f"\n  file: {r['file']}" if r.get("file") else ""
            line += "\nhint: fix or restore the file, or `holon agents forget ID` for a home gone"
        if r["outcome"] == "error":
            line += f" {r.get('home')}\n  {r.get('error')}"
        if r.get("commit_warning"):
            line += f"\n  commit: {r['commit_warning']}"
        if r["outcome"] in ("paused", "stopped"):
            line += f"\nhint: run `holon resume {r['agent_id']}` to process its queue"
        out.append((line, r["outcome"] in ("paused", "stopped", "missing", "broken", "error")))
    return out


def nothing_to_log(code: int, report: list[str], error: list[str]) -> bool:
    """A run that succeeded with nothing to report writes nothing."""
    return code == 0 and not report and not error


def log(what: str, code: int, report: list[str], error: list[str]) -> tuple[int, list[str]]:
    """Append the run's block to tick.log: (the exit code, the lines after the report for stderr
    when the run failed). A log that cannot be written fails the run and says so instead of
    where the log is."""
    from holon.ops import ticklog

    path = ticklog.log_path()
    try:
        ticklog.append(path, ticklog.block(what, code, report + error))
        return code, [f"log: {path}"]
    except OSError as exc:
        why = f"cannot write {path}: {exc.strerror or exc}"
        return code or 1, error_lines("log_failed", why, "check that $HOLON_HOME/logs is writable")
