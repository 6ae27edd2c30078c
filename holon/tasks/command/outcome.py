"""What running a command produces: its spec, and how it ended or what it became."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holon.tasks import store


@dataclass
class CommandSpec:
    cmd: str
    workdir: Path
    shell: str
    login: bool
    tty: bool
    accepts_input: bool
    yield_ms: int
    execution_root: Path  # the workspace: writable in the workspace-write sandbox

    @property
    def digest(self) -> str:
        return store.cmd_digest(self.cmd, str(self.workdir), self.shell, self.login, self.tty)

    def metadata(self) -> dict[str, Any]:
        return {
            "cmd": self.cmd,
            "cmd_digest": self.digest,
            "workdir": str(self.workdir),
            "shell": self.shell,
            "login": self.login,
            "tty": self.tty,
            "accepts_input": self.accepts_input,
            "execution_root": str(self.execution_root),
        }


@dataclass
class Finished:
    exit_status: int | None
    signal: int | None
    stdout: str
    stderr: str
    duration_ms: int


@dataclass
class Promoted:
    task: dict[str, Any]
    initial_output: str
    duration_ms: int
