"""`holon doctor`: is the scheduler installed, when did ticks run, what needs attention; each with
its fix."""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

from holon.agent.due import due_reasons
from holon.home import registry
from holon.home.layout import Home
from holon.ops import schedule
from holon.procs import alive
from holon.store.atomic import read_json


def finding(
    check: str, status: str, message: str, fix: str | None = None, **extra: Any
) -> dict[str, Any]:
    return {"check": check, "status": status, "message": message, "fix": fix, **extra}


def scheduler_findings() -> list[dict[str, Any]]:
    exe = schedule.holon_executable()
    entries: list[tuple[str, str]] = []
    if shutil.which("crontab"):
        out = subprocess.run(["crontab", "-l"], capture_output=True, text=True)
        entries += [
            ("cron", ln)
            for ln in out.stdout.splitlines()
            if "tick --all" in ln and not ln.startswith("#")
        ]
    unit = schedule.systemd_dir() / f"{schedule.SYSTEMD_NAME}.service"
    if unit.exists():
        entries.append(("systemd", unit.read_text()))
    if schedule.launchd_path().exists():
        entries.append(("launchd", schedule.launchd_path().read_text()))
    if not entries:
        return [
            finding(
                "scheduler",
                "warn",
                "no scheduler entry runs `holon tick --all`; agents only run when "
                "you tick them or run `holon watch`",
                "holon schedule cron --install",
            )
        ]
    out = []
    for kind, text in entries:
        ok = exe in text
        out.append(
            finding(
                "scheduler",
                "ok" if ok else "warn",
                f"{kind} entry found" + ("" if ok else f" but it does not run this holon ({exe})"),
                None if ok else f"holon schedule {kind} --install",
                scheduler=kind,
            )
        )
    return out


def agent_findings(home: Home) -> list[dict[str, Any]]:
    state = read_json(home.state_json, {}) or {}
    aid = home.agent_id
    out = [
        finding(
            "last_tick",
            "ok" if state.get("last_tick_at") else "warn",
            f"{aid}: last tick at {state.get('last_tick_at') or 'never'}",
            None if state.get("last_tick_at") else f"holon tick {aid}",
            agent_id=aid,
            last_tick_at=state.get("last_tick_at"),
        )
    ]
    reasons = due_reasons(home)
    if reasons:
        out.append(
            finding(
                "due_work",
                "warn",
                f"{aid}: due work waiting: {', '.join(reasons)}",
                f"holon tick {aid} --until-idle",
                agent_id=aid,
                reasons=reasons,
            )
        )
    dead = home.queue.dead_letters()
    if dead:
        out.append(
            finding(
                "dead_letters",
                "warn",
                f"{aid}: {len(dead)} dead-lettered message(s) in {home.queue.dead}",
                f"ls {home.queue.dead}  # inspect, then mv a file to {home.queue.new} to retry",
                agent_id=aid,
                count=len(dead),
            )
        )
    pid = state.get("run_owner_pid")
    if state.get("status") == "awake_running" and not alive(int(pid or 0)):
        out.append(
            finding(
                "stale_lock",
                "warn",
                f"{aid}: marked awake_running by pid {pid}, which is gone",
                f"holon tick {aid}",
                agent_id=aid,
            )
        )
    if "task_recovery" in reasons:
        out.append(
            finding(
                "interrupted_tasks",
                "warn",
                f"{aid}: tasks whose supervisor died",
                f"holon tick {aid}",
                agent_id=aid,
            )
        )
    return out


def run() -> dict[str, Any]:
    findings = scheduler_findings()
    for home in registry.all_homes():
        findings += agent_findings(home)
    worst = (
        "fail"
        if any(f["status"] == "fail" for f in findings)
        else ("warn" if any(f["status"] == "warn" for f in findings) else "ok")
    )
    return {"status": worst, "holon": schedule.holon_executable(), "findings": findings}
