"""Untrusted text made safe to show or record: terminal controls escaped, labels kept to one
bounded line, credentials in URLs redacted. Stdlib only (the idle path may import it)."""

from __future__ import annotations

import re

MAX_LABEL_CHARS = 200
REDACTED = "***"

# C0 (but tab and newline), DEL, C1, and the bidirectional overrides and isolates that reorder
# what a terminal shows; a carriage return is kept only before a newline (CRLF output)
_TERMINAL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# one line: every control character, line and paragraph separators, and the format characters
# above, so a label can neither start a new line nor reorder its neighbours
_LABEL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]")
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>`]+")
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")
_SECRET_PARAM = re.compile(
    r"(key|token|secret|passw|pwd|auth|sig|credential|session|code)", re.IGNORECASE
)


def _escape(match: re.Match[str]) -> str:
    """`\\u001b` for ESC: a JSON escape too, so JSON shown through the guard stays valid JSON."""
    return f"\\u{ord(match.group()):04x}"


def for_terminal(text: str) -> str:
    """`text` with every character that could drive a terminal (escape sequences, C1 controls,
    a bare carriage return, bidi overrides) shown as `\\u` and four hex digits; newlines and tabs
    are kept."""
    if text.isprintable() or not _TERMINAL.search(text.replace("\r\n", "\n")):
        return text
    parts = text.split("\r\n")
    return "\r\n".join(_TERMINAL.sub(_escape, part) for part in parts)


def one_line(text: str, limit: int = MAX_LABEL_CHARS) -> str:
    """A label from outside (a source, a channel or sender id) as one bounded line: control and
    separator characters escaped, cut to `limit` characters with an ellipsis."""
    text = _LABEL.sub(_escape, text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def redact_url(url: str) -> str:
    """`url` without its credentials: user and password -> `***@`, the value of a key-like
    query parameter (key, token, secret, signature, ...) -> `***`."""
    url = _USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", url)
    head, sep, query = url.partition("?")
    if not sep:
        return url
    query, hsep, fragment = query.partition("#")
    params = []
    for param in query.split("&"):
        name, eq, value = param.partition("=")
        secret = eq and value and _SECRET_PARAM.search(name)
        params.append(f"{name}={REDACTED}" if secret else param)
    return head + sep + "&".join(params) + hsep + fragment


def redact_urls(text: str) -> str:
    """Every URL in free text (an error message, a log line) with its credentials redacted."""
    if "://" not in text:
        return text
    return _URL.sub(lambda m: redact_url(m.group()), text)
