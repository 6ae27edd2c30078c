"""SDK exceptions -> ProviderFailure: one classification for every transport,
never carrying a secret.

    APITimeoutError                      timeout            (retryable)
    APIConnectionError (reset, refused)  connection         (retryable)
    APIStatusError 429                   rate_limited       (retryable; retry-after /
                                                             retry-after-ms parsed)
    APIStatusError 408                   timeout            (retryable)
    APIStatusError 5xx                   server_error       (retryable)
    APIStatusError 401 / 403             auth               (fail fast)
    APIStatusError 4xx, body says the
      prompt does not fit the context    context_length_exceeded (terminal)
    APIStatusError other 4xx             client_error       (fail fast)
    malformed JSON, unexpected shape     invalid_response   (fail fast)

Diagnostics follow the spec's `transport_diagnostics`: stage, url, status,
the is_timeout / is_connect / is_request / is_body / is_decode flags and the
exception class chain. The flags come from a per-request Probe hooked into the
SDK's http client, so "reset after the headers arrived" is told apart from
"refused before anything was sent".
"""

from __future__ import annotations

import re
import time
from email.utils import parsedate_to_datetime
from typing import Any

from holon import keys
from holon.errors import HolonError
from holon.model.conversation import ProviderFailure
from holon.safetext import redact_urls

REDACTED = "[REDACTED]"
_CONTEXT_CODES = {"context_length_exceeded", "string_above_max_length"}
_CONTEXT_TEXT = re.compile(
    r"context[ _]length|maximum context|context window|prompt is too long|"
    r"prompt too long|too many input tokens|input is too long",
    re.IGNORECASE,
)
_BEARER = re.compile(r"(Bearer\s+)[A-Za-z0-9._~+/=-]+", re.IGNORECASE)
_KEY_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)$", re.IGNORECASE)
MESSAGE_CHARS = 600
MIN_SECRET = 4  # a shorter value would redact ordinary words


class Probe:
    """httpx2 event hooks for one request: was it sent, did response headers arrive, with what
    status."""

    def __init__(self) -> None:
        self.sent = False
        self.headers_received = False
        self.status: int | None = None
        self.url: str | None = None

    def on_request(self, request: Any) -> None:
        self.sent = True
        self.url = str(request.url)

    def on_response(self, response: Any) -> None:
        self.headers_received = True
        self.status = response.status_code

    def hooks(self) -> dict[str, list]:
        return {"request": [self.on_request], "response": [self.on_response]}


def missing_key(provider: str, key_env: str, model_ref: str) -> ProviderFailure:
    """A request whose key is in neither the environment nor the keys file: fail before sending,
    naming both ways to provide it."""
    return ProviderFailure(
        "missing_credentials",
        f"{provider}: no {key_env} for {model_ref}; {keys.how_to_set(key_env)}",
        diagnostics={"stage": "credentials", "credential_env": key_env},
    )


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """`text` without `secrets` (longest first), bearer tokens, or credentials in a URL
    (user:password@, a key-like query parameter)."""
    for secret in sorted(secrets, key=len, reverse=True):
        if secret and len(secret) >= MIN_SECRET:
            text = text.replace(secret, REDACTED)
    return redact_urls(_BEARER.sub(r"\1" + REDACTED, text))


def url_secrets(url: str | None) -> tuple[str, ...]:
    """What in a configured URL may be a credential, which a server may echo in an error body:
    the user and password of its userinfo and every query value, each as written, decoded and
    encoded (a server may echo any of them)."""
    from urllib.parse import quote, unquote, unquote_plus, urlsplit

    try:
        parts = urlsplit(url or "")
    except ValueError:
        return ()
    found = [parts.username or "", parts.password or ""]
    for pair in parts.query.split("&"):
        name, eq, value = pair.partition("=")
        found.append(value if eq else name)
    forms = set()
    for raw in found:
        for form in (raw, unquote(raw), unquote_plus(raw), quote(unquote(raw), safe="")):
            if len(form) >= MIN_SECRET:
                forms.add(form)
    return tuple(forms)


def known_secrets(base_url: str | None = None) -> tuple[str, ...]:
    """Every value an error text must not carry: the URL's (url_secrets), the keys in the keys
    file, and the environment's key-like variables (..._KEY, ..._TOKEN, ..._SECRET)."""
    import os

    try:
        stored = tuple(keys.stored_values())
    except HolonError:  # an unreadable keys file: its values are not known here
        stored = ()
    env = tuple(v for k, v in os.environ.items() if _KEY_ENV.search(k) and len(v) >= MIN_SECRET)
    return url_secrets(base_url) + stored + env


def scrub(failure: ProviderFailure, base_url: str | None = None) -> ProviderFailure:
    """A failure as it may be recorded (timeline, events, briefs, stderr): its message and every
    string of its diagnostics passed through `redact`, with every known secret (known_secrets:
    `base_url` is the provider's). The runner scrubs each failure it sees."""
    secrets = known_secrets(base_url)
    failure.message = redact(failure.message, secrets)
    failure.args = (failure.message,)
    failure.diagnostics = _scrubbed(failure.diagnostics, secrets)
    return failure


def _scrubbed(value: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {k: _scrubbed(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v, secrets) for v in value]
    return value


def source_chain(exc: BaseException) -> list[str]:
    names: list[str] = []
    seen: set[int] = set()
    node: BaseException | None = exc
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        root = type(node).__module__.split(".")[0]
        names.append(type(node).__name__ if root == "builtins" else f"{root}.{type(node).__name__}")
        node = node.__cause__ or (None if node.__suppress_context__ else node.__context__)
    return names


def retry_after_seconds(headers: Any) -> float | None:
    """`retry-after-ms` (milliseconds) or `retry-after` (seconds or an HTTP date), else None."""
    if headers is None:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(raw).timestamp() - time.time())
    except (TypeError, ValueError, IndexError):
        return None


def error_fields(body: Any) -> tuple[str | None, str | None, str]:
    """(code, type, message) from an OpenAI, Anthropic or chat-completions error body (or its
    `error`)."""
    err = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(err, dict):
        code = err.get("code")
        return (
            str(code) if code is not None else None,
            err.get("type") if isinstance(err.get("type"), str) else None,
            str(err.get("message") or err.get("detail") or ""),
        )
    return None, None, str(err or "")[:500]


def is_context_overflow(status: int | None, body: Any) -> bool:
    code, _type, message = error_fields(body)
    if code in _CONTEXT_CODES:
        return True
    return status in (None, 400, 413, 422) and bool(_CONTEXT_TEXT.search(message))


def status_kind(status: int, body: Any) -> str:
    if is_context_overflow(status, body):
        return "context_length_exceeded"
    if status == 429:
        return "rate_limited"
    if status == 408:
        return "timeout"
    if status >= 500:
        return "server_error"
    if status in (401, 403):
        return "auth"
    return "client_error"


def _class_names(exc: BaseException) -> set[str]:
    return {c.__name__ for c in type(exc).__mro__}


def from_exception(
    exc: BaseException,
    *,
    provider: str,
    probe: Probe | None = None,
    url: str | None = None,
    secrets: tuple[str, ...] = (),
) -> ProviderFailure:
    """Classify an exception raised by the openai / anthropic SDK (or by JSON decoding) for one
    request."""
    names = _class_names(exc)
    chain = source_chain(exc)
    chain_set = {name.rsplit(".", 1)[-1] for name in chain}
    probe = probe or Probe()
    status: int | None = getattr(exc, "status_code", None) if "APIStatusError" in names else None
    body = getattr(exc, "body", None)
    retry_after = None
    if "APITimeoutError" in names or "TimeoutException" in names:
        kind = "timeout"
    elif "APIConnectionError" in names or names & {
        "TransportError",
        "RemoteProtocolError",
        "ReadError",
    }:
        kind = "connection"
    elif status is not None:
        kind = status_kind(status, body)
        if kind == "rate_limited":
            retry_after = retry_after_seconds(
                getattr(getattr(exc, "response", None), "headers", None)
            )
    elif "APIResponseValidationError" in names or isinstance(exc, ValueError):
        kind = "invalid_response"
    elif "APIError" in names:  # an error event inside a stream
        kind = stream_error_kind(*error_fields(body)[:2])
    else:
        kind = "invalid_response"
    is_connect = bool(chain_set & {"ConnectError", "ConnectTimeout"})
    is_decode = kind == "invalid_response" and bool(
        chain_set & {"JSONDecodeError", "DecodingError"} | ({"JSONDecodeError"} & names)
    )
    is_body = probe.headers_received and kind in {"timeout", "connection"}
    stage = (
        "connect"
        if is_connect
        else "body"
        if is_body
        else "decode"
        if is_decode
        else "response"
        if status is not None or probe.headers_received
        else "request"
    )
    secrets = secrets + url_secrets(url) + url_secrets(probe.url)
    diag: dict[str, Any] = {
        "stage": stage,
        "url": redact(probe.url or url or "", secrets) or None,
        "reqwest": {
            "is_timeout": kind == "timeout" and status is None,
            "is_connect": is_connect,
            "is_request": probe.sent and not probe.headers_received and not is_connect,
            "is_body": is_body,
            "is_decode": is_decode,
            "is_redirect": False,
        },
        "source_chain": chain,
    }
    seen_status = status if status is not None else probe.status
    if seen_status is not None:  # a body reset after a 200 still tells which status arrived
        diag["status"] = seen_status
        diag["reqwest"]["status"] = seen_status
    request_id = _request_id(exc)
    if request_id:
        diag["request_id"] = request_id
    message = redact(_message(kind, status, exc, body, provider), secrets)[:MESSAGE_CHARS]
    return ProviderFailure(
        kind, message, status=status, retry_after_s=retry_after, diagnostics=diag
    )


def stream_error_kind(code: str | None, etype: str | None) -> str:
    """Kind for an error reported inside a 200 response (`response.failed`, an SSE `error`
    event)."""
    key = (code or etype or "").lower()
    if key in _CONTEXT_CODES:
        return "context_length_exceeded"
    if key in {"rate_limit_exceeded", "rate_limit_error", "too_many_requests"}:
        return "rate_limited"
    if key in {
        "invalid_prompt",
        "invalid_request_error",
        "invalid_image",
        "insufficient_quota",
        "usage_limit_reached",
        "usage_not_included",
    }:
        return "client_error"
    if key in {"authentication_error", "invalid_api_key", "permission_error"}:
        return "auth"
    return "server_error"  # server_error, overloaded, unknown: a transient provider-side failure


def _request_id(exc: BaseException) -> str | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    return headers.get("x-request-id") or headers.get("request-id")


def _message(kind: str, status: int | None, exc: BaseException, body: Any, provider: str) -> str:
    _code, _type, api_message = error_fields(body)
    detail = api_message or getattr(exc, "message", None) or str(exc) or type(exc).__name__
    head = f"{provider}: {kind}" + (f" (HTTP {status})" if status is not None else "")
    return f"{head}: {detail}"[: MESSAGE_CHARS * 4]  # cut again once redacted: never mid-secret
