"""The input channel of a task: framed writes to `stdin.fifo`, read by its supervisor.

Each frame is one byte of kind (`d` data, `e` end of file), four bytes of
payload length (big-endian), then the payload, and is at most PIPE_BUF bytes,
so every write of a frame is atomic: frames from two writers never interleave
and a full channel refuses a whole frame, never half of one.
"""

from __future__ import annotations

import errno
import os
import select
import struct

FRAME_MAX = getattr(select, "PIPE_BUF", 512)
HEADER = struct.Struct(">cI")
PAYLOAD_MAX = FRAME_MAX - HEADER.size


class NoReader(Exception):
    """Nobody reads the channel (no supervisor, or the fifo is gone)."""


def frames(data: bytes, *, eof: bool = False) -> list[tuple[bytes, int]]:
    """(frame, payload bytes) pairs for `data`, then an end-of-file frame when asked."""
    out = [
        (HEADER.pack(b"d", len(chunk)) + chunk, len(chunk))
        for chunk in (data[i : i + PAYLOAD_MAX] for i in range(0, len(data), PAYLOAD_MAX))
    ]
    if eof:
        out.append((HEADER.pack(b"e", 0), 0))
    return out


def send(path: os.PathLike, data: bytes, *, eof: bool = False) -> tuple[int, bool]:
    """Write `data` (and an end of file) without blocking: (payload bytes written, all sent).
    Raises NoReader when the channel has no reader."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno in (errno.ENXIO, errno.ENOENT):
            raise NoReader(str(path)) from None
        raise
    written = 0
    try:
        for frame, size in frames(data, eof=eof):
            try:
                os.write(fd, frame)
            except BlockingIOError:
                return written, False
            written += size
    finally:
        os.close(fd)
    return written, True


class Decoder:
    """Turns what the supervisor reads from the fifo into ("data", bytes) and ("eof", b"")."""

    def __init__(self) -> None:
        self.buffer = b""

    def feed(self, chunk: bytes) -> list[tuple[str, bytes]]:
        self.buffer += chunk
        out = []
        while len(self.buffer) >= HEADER.size:
            kind, size = HEADER.unpack_from(self.buffer)
            if kind not in (b"d", b"e") or size > PAYLOAD_MAX:
                self.buffer = b""  # not a frame: drop what cannot be trusted
                break
            end = HEADER.size + size
            if len(self.buffer) < end:
                break
            payload, self.buffer = self.buffer[HEADER.size : end], self.buffer[end:]
            out.append(("eof" if kind == b"e" else "data", payload))
        return out
