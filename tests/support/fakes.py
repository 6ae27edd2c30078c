"""Fake scheduler executables for tests: a `crontab` backed by a file, a `systemctl` that logs."""

from __future__ import annotations

from pathlib import Path

FAKE_CRONTAB = """#!/bin/sh
case "$1" in
  -l) [ -f "$FAKE_CRONTAB" ] || { echo "no crontab for you" >&2; exit 1; }
      exec /bin/cat "$FAKE_CRONTAB";;
  -) [ -n "$FAKE_CRONTAB_REFUSE" ] && { echo "bad minute" >&2; exit 1; }
     exec /bin/cat > "$FAKE_CRONTAB";;
esac
exit 2
"""
FAKE_SYSTEMCTL = """#!/bin/sh
echo "$@" >> "$FAKE_SYSTEMCTL_LOG"
exit ${FAKE_SYSTEMCTL_EXIT:-0}
"""


def executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path
