"""safetext: terminal controls escaped (newline and tab kept, CRLF kept), labels one bounded
line, credentials in URLs redacted wherever the URL appears."""

from __future__ import annotations

import json

import pytest

from holon.safetext import for_terminal, one_line, redact_url, redact_urls


def test_for_terminal_escapes_what_drives_a_terminal_and_keeps_layout():
    text = "a\tb\r\nc\x1b]0;t\x07d\x1b[2Je\rf\x9bg\x7fh\u202ei\x00"
    shown = for_terminal(text)
    assert shown == (
        "a\tb\r\nc\\u001b]0;t\\u0007d\\u001b[2Je\\u000df\\u009bg\\u007fh\\u202ei\\u0000"
    )
    assert for_terminal("plain ünïcode\n") == "plain ünïcode\n"


def test_for_terminal_keeps_json_valid_and_equal():
    doc = json.dumps({"t": "x\u009by\u0085"}, ensure_ascii=False)
    assert json.loads(for_terminal(doc)) == json.loads(doc)


def test_one_line_escapes_every_break_and_bounds_the_length():
    label = one_line("a\nb\rc\u2028d\x1b" + "z" * 500)
    assert "\n" not in label and "\r" not in label and "\u2028" not in label
    assert label.startswith("a\\u000ab\\u000dc\\u2028d\\u001b") and len(label) == 200
    assert label.endswith("…") and one_line("ok") == "ok"


@pytest.mark.parametrize(
    "url, shown",
    [
        ("http://user:pw@h:9/v1?api-key=s2&x=1", "http://***@h:9/v1?api-key=***&x=1"),
        ("https://u:p@ss@h/v1", "https://***@h/v1"),
        ("https://h/v1?token=abc#frag", "https://h/v1?token=***#frag"),
        ("https://h/v1?api-version=2024-01-01", "https://h/v1?api-version=2024-01-01"),
        (
            "https://h/v1?Signature=x&X-Amz-Credential=y",
            "https://h/v1?Signature=***&X-Amz-Credential=***",
        ),
        ("https://api.openai.com/v1", "https://api.openai.com/v1"),
    ],
)
def test_redact_url(url, shown):
    assert redact_url(url) == shown


def test_redact_urls_in_free_text():
    text = 'Connection error to "http://me:hunter2@127.0.0.1:9/v1?key=k3y": refused'
    assert redact_urls(text) == 'Connection error to "http://***@127.0.0.1:9/v1?key=***": refused'
