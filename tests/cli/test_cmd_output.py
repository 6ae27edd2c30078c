"""holon.cli.output: one JSON document, JSON lines, TEXT or stdin, JSON literal / @path / stdin."""

from __future__ import annotations

import io
import json
import sys

import pytest

from holon.cli import output
from holon.errors import InvalidInput


class Stdin(io.TextIOWrapper):
    def __init__(self, data: bytes, tty: bool = False) -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8")
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def test_emit_json_is_indented_unicode_and_stringifies_the_rest(capsys):
    from pathlib import Path

    output.emit_json({"é": Path("/x"), "n": [1]})
    out = capsys.readouterr().out
    assert out == '{\n  "é": "/x",\n  "n": [\n    1\n  ]\n}\n'


def test_emit_jsonl_is_one_compact_record_per_line(capsys):
    output.emit_jsonl(iter([{"a": 1, "b": "ü"}, [2]]))
    assert capsys.readouterr().out == '{"a":1,"b":"ü"}\n[2]\n'
    output.emit_jsonl([])
    assert capsys.readouterr().out == ""


def test_read_text_arg(monkeypatch):
    assert output.read_text_arg("literal") == "literal"
    monkeypatch.setattr(sys, "stdin", Stdin("piped ✓\n".encode()))
    assert output.read_text_arg("-") == "piped ✓\n"
    monkeypatch.setattr(sys, "stdin", Stdin(b"implicit"))
    assert output.read_text_arg(None) == "implicit"


def test_read_text_arg_refuses_a_terminal_and_bad_utf8(monkeypatch):
    monkeypatch.setattr(sys, "stdin", Stdin(b"", tty=True))
    with pytest.raises(InvalidInput) as info:
        output.read_text_arg(None, "--plan")
    assert info.value.kind == "missing_input" and "--plan" in info.value.message
    assert info.value.exit_code == 2 and info.value.hint
    monkeypatch.setattr(sys, "stdin", Stdin(b"ok\xff"))
    with pytest.raises(InvalidInput) as info:
        output.read_text_arg("-")
    assert info.value.kind == "invalid_utf8" and "byte 2" in info.value.message


def test_parse_json_arg_literal_file_and_stdin(tmp_path, monkeypatch):
    assert output.parse_json_arg('{"a": [1, null]}', "--x") == {"a": [1, None]}
    path = tmp_path / "v.json"
    path.write_text(json.dumps({"k": "v"}))
    assert output.parse_json_arg(f"@{path}", "--x") == {"k": "v"}
    monkeypatch.setattr(sys, "stdin", Stdin(b"42"))
    assert output.parse_json_arg("-", "--x") == 42


@pytest.mark.parametrize(
    "raw, kind",
    [("{nope", "invalid_json"), ("", "invalid_json"), ("@/no/such/file", "invalid_json")],
)
def test_parse_json_arg_errors(raw, kind):
    with pytest.raises(InvalidInput) as info:
        output.parse_json_arg(raw, "--input")
    assert info.value.kind == kind and info.value.message.startswith("--input")
    assert info.value.hint and info.value.exit_code == 2


def test_parse_json_arg_refuses_a_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes(b'"caf\xe9"')
    with pytest.raises(InvalidInput) as info:
        output.parse_json_arg(f"@{path}", "--input")
    assert info.value.kind == "invalid_utf8"
