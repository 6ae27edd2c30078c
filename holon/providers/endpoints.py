"""What a provider is before any transport is built, in the stdlib only: built-in base URLs and
key variables, where the Codex CLI keeps its sign-in, and where a scripted path points.

Admission (`holon prompt --no-wait`, `holon run`) checks a model ref with these
(holon.providers.resolve.preflight) without importing a transport module, the records they
use, or an SDK; the transports take their defaults from here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from holon import jsonfile, keys
from holon.paths import codex_auth_file

OPENAI_BASE_URL = "https://api.openai.com/v1"
ANTHROPIC_BASE_URL = "https://api.anthropic.com"
CODEX_BASE_URL = "https://chatgpt.com/backend-api/codex"
CODEX_TOKEN_ENV = "OPENAI_CODEX_ACCESS_TOKEN"
CHAT_TRANSPORT = "openai_chat_completions"
# OpenAI-compatible chat completion services known by id
CHAT_BUILTIN: dict[str, dict[str, Any]] = {
    "ollama": {"base_url": "http://127.0.0.1:11434/v1", "api_key_env": None},
    "openrouter": {"base_url": "https://openrouter.ai/api/v1", "api_key_env": "OPENROUTER_API_KEY"},
    "deepseek": {"base_url": "https://api.deepseek.com", "api_key_env": "DEEPSEEK_API_KEY"},
}


def codex_credentials(env: str | None = CODEX_TOKEN_ENV) -> tuple[str | None, str | None, str]:
    """(access token, account id, where it came from: "environment", the keys file's path, or the
    auth file's path, also when nothing was found). Never logs or returns more than needed."""
    token = keys.lookup(env) if env else None
    if env and token:
        return token, None, keys.source(env) or "environment"
    path = codex_auth_file()
    try:
        data = jsonfile.load(path, 1 << 20)  # bounded, never blocks on a FIFO
    except (OSError, ValueError):
        return None, None, str(path)
    tokens = data.get("tokens") if isinstance(data, dict) else None
    if not isinstance(tokens, dict) or not isinstance(tokens.get("access_token"), str):
        return None, None, str(path)
    account = tokens.get("account_id")
    return tokens["access_token"], account if isinstance(account, str) else None, str(path)


def resolve_script(path: str, home: Path | None) -> Path:
    """A scripted provider's script: an absolute path as is; a relative one in the current
    directory when it exists there, else in the agent home."""
    p = Path(path).expanduser()
    if p.is_absolute():
        return p
    if p.exists() or home is None:
        return p.absolute()
    return (home / p).absolute()
