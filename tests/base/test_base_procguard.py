"""holon.procguard: a process holding a secret is not dumpable (so no command of the same user
reads its /proc/<pid>/environ or memory); one without pays nothing."""

from __future__ import annotations

import ctypes
import os
import sys

import pytest

from holon import procguard

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux prctl")


def _dumpable_after(environ: dict[str, str]) -> int:
    """In a forked child: guard_environment(environ), then PR_GET_DUMPABLE as the exit code."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child exits at once
        libc = ctypes.CDLL(None)
        libc.prctl(4, 1, 0, 0, 0)  # dumpable, whatever this test process became before
        procguard._done = False
        procguard.guard_environment(environ)
        os._exit(libc.prctl(3, 0, 0, 0, 0))
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_a_credential_in_the_environment_makes_the_process_undumpable():
    assert _dumpable_after({"OPENAI_API_KEY": "sk-x", "PATH": "/bin"}) == 0
    assert _dumpable_after({"PATH": "/bin", "LANG": "C"}) == 1


def test_credential_like_names():
    assert procguard.looks_secret("gh_token") and procguard.looks_secret("MY_DB_PASSWORD")
    assert not procguard.looks_secret("PATH") and not procguard.looks_secret("HOME")
