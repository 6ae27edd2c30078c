"""Closed pipes: a follow mode notices its reader went away while it waits (POLLERR/POLLHUP on
stdout), not at its next write hours later, and a command whose reader closed the pipe ends with
exit 0, quietly. Stdlib only: the click-free admission path may use it too."""

from __future__ import annotations

import select
import sys
import time


class ReaderGone(Exception):
    """The reader of stdout went away (`| head` is done): the command ends with exit 0. Not an
    OSError on purpose: click turns an EPIPE OSError into exit 1."""


def wait(seconds: float, stream=None) -> None:
    """Sleep `seconds`, or raise ReaderGone as soon as the reader of `stream` (stdout) is gone."""
    if reader_gone(seconds, stream):
        raise ReaderGone()


def reader_gone(seconds: float = 0.0, stream=None) -> bool:
    """Whether the reader of `stream` (default stdout) went away, waiting up to `seconds` for it.
    A pipe whose read end closed polls POLLERR, a hung-up terminal POLLHUP; a file never does."""
    fd = _fileno(sys.stdout if stream is None else stream)
    if fd is None or not hasattr(select, "poll"):
        time.sleep(seconds)
        return False
    poller = select.poll()
    poller.register(fd, 0)  # no events asked: only POLLERR, POLLHUP and POLLNVAL are reported
    for _, revents in poller.poll(max(0, int(seconds * 1000))):
        if revents & (select.POLLERR | select.POLLHUP | select.POLLNVAL):
            return True
    return False


def _fileno(stream) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, ValueError, OSError):  # CliRunner's StringIO has none
        return None
