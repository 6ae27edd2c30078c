"""The framed input channel: atomic frames, no interleaving, a full channel refuses whole frames,
end of file as its own frame."""

from __future__ import annotations

import os

import pytest

from holon.tasks.command import inputchan


def test_frames_round_trip_through_the_decoder_in_any_split():
    data = bytes(range(256)) * 40  # larger than one frame
    stream = b"".join(f for f, _ in inputchan.frames(data, eof=True))
    assert all(len(f) <= inputchan.FRAME_MAX for f, _ in inputchan.frames(data))
    for cut in (1, 7, 4096, len(stream)):
        dec = inputchan.Decoder()
        got = []
        for i in range(0, len(stream), cut):
            got += dec.feed(stream[i : i + cut])
        assert b"".join(p for k, p in got if k == "data") == data
        assert got[-1] == ("eof", b"") and dec.buffer == b""


def test_empty_input_is_no_frame_and_garbage_is_dropped():
    assert inputchan.frames(b"") == []
    dec = inputchan.Decoder()
    assert dec.feed(b"x" * 10) == [] and dec.buffer == b""


def test_send_without_a_reader_and_to_a_full_channel(tmp_path):
    path = tmp_path / "stdin.fifo"
    with pytest.raises(inputchan.NoReader):
        inputchan.send(path, b"hi")
    os.mkfifo(path)
    with pytest.raises(inputchan.NoReader):  # a fifo nobody has open for reading
        inputchan.send(path, b"hi")
    reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        written, complete = inputchan.send(path, b"z" * 200_000, eof=True)
        assert not complete and 0 < written < 200_000
        assert written % inputchan.PAYLOAD_MAX == 0  # whole frames only
        dec, got = inputchan.Decoder(), []
        while True:
            try:
                chunk = os.read(reader, 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            got += dec.feed(chunk)
        assert sum(len(p) for _, p in got) == written and dec.buffer == b""
        assert inputchan.send(path, b"ok", eof=True) == (2, True)
    finally:
        os.close(reader)
