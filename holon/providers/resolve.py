"""Model ref -> transport, and the one place a provider's effective settings are decided.

`settings(provider_id)` merges field by field: the built-in defaults of a known provider id (or,
for a configured id, of the transport its table names), then only the keys present in
`[providers.NAME]` of config.toml. `make_provider` builds the transport from them; `preflight`
finds, without an SDK or the network, what would make a turn with a model ref fail for sure;
`credential_status` says where a provider's key comes from, never what it is. Unknown providers
and transports fail closed (`unsupported_transport` in a turn, `unknown_provider` before one).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from holon import config, keys
from holon.errors import UsageError
from holon.paths import config_path
from holon.providers import endpoints
from holon.providers.endpoints import resolve_script

if TYPE_CHECKING:
    from holon.model.conversation import Provider

# transport -> the module whose `factory` builds it, imported only when a turn needs it: the
# settings and preflight below run on admission and stay in the stdlib
FACTORIES = {
    "openai_responses": "holon.providers.openai_responses",
    "anthropic_messages": "holon.providers.anthropic_messages",
    "openai_codex_stream": "holon.providers.codex_stream",
    "openai_chat_completions": "holon.providers.chat_completions",
}
# the transports a [providers.NAME] table may name (a built-in id may also name its own)
CONFIG_TRANSPORTS = ("anthropic_messages", "openai_chat_completions", "openai_responses")
FIELDS = ("transport", "base_url", "api_key_env")

_OPENAI = {
    "transport": "openai_responses",
    "base_url": endpoints.OPENAI_BASE_URL,
    "api_key_env": "OPENAI_API_KEY",
    "base_url_env": "OPENAI_BASE_URL",  # read when the table sets no base_url
}
_ANTHROPIC = {
    "transport": "anthropic_messages",
    "base_url": endpoints.ANTHROPIC_BASE_URL,
    "api_key_env": "ANTHROPIC_API_KEY",
    "base_url_env": "ANTHROPIC_BASE_URL",
}
# provider id -> its defaults; a table overrides transport, base_url and api_key_env one by one
BUILTIN: dict[str, dict[str, Any]] = {
    "openai": _OPENAI,
    "anthropic": _ANTHROPIC,
    "openai-codex": {
        "transport": "openai_codex_stream",
        "base_url": endpoints.CODEX_BASE_URL,
        "api_key_env": endpoints.CODEX_TOKEN_ENV,
        "override_env": "OPENAI_CODEX_BASE_URL",  # holon's own variable: wins over the table
    },
    **{
        pid: {"transport": endpoints.CHAT_TRANSPORT, **conf}
        for pid, conf in endpoints.CHAT_BUILTIN.items()
    },
}
# what a configured id (not built in) starts from, by the transport its table names
TRANSPORT_DEFAULTS: dict[str, dict[str, Any]] = {
    "openai_responses": _OPENAI,
    "anthropic_messages": _ANTHROPIC,
    "openai_chat_completions": {"base_url": None, "api_key_env": None},
}
CODEX_AUTH_FILE = "codex auth file"


def _table(provider_id: str) -> dict[str, Any] | None:
    tables = config.get("providers", {})
    table = tables.get(provider_id) if isinstance(tables, dict) else None
    return table if isinstance(table, dict) else None


def _transport(provider_id: str, table: dict[str, Any] | None) -> tuple[Any, str, dict | None]:
    """(transport, where it came from, the problem with it or None)."""
    builtin = BUILTIN.get(provider_id, {}).get("transport")
    if table is None or "transport" not in table:
        if builtin:
            return builtin, "default", None
        why = "no [providers.{0}] table" if table is None else "[providers.{0}] names no transport"
        return (
            None,
            "default",
            _problem(
                "unknown_provider",
                f"unknown provider {provider_id!r}: it is not built in and config.toml has "
                + why.format(provider_id),
                f"use one of: {', '.join(known_providers())}; or give [providers.{provider_id}] a "
                f"transport ({', '.join(CONFIG_TRANSPORTS)}), base_url and api_key_env",
            ),
        )
    name = table["transport"]
    if isinstance(name, str) and (name == builtin or name in CONFIG_TRANSPORTS):
        return name, "config", None
    return (
        name,
        "config",
        _problem(
            "unknown_provider",
            f"provider {provider_id!r} uses unsupported transport {name!r}",
            f"set transport in [providers.{provider_id}] to one of {', '.join(CONFIG_TRANSPORTS)}",
            transport=name if isinstance(name, str) else repr(name),
        ),
    )


def _problem(kind: str, message: str, hint: str, **diagnostics: Any) -> dict[str, Any]:
    return {"kind": kind, "message": message, "hint": hint, "diagnostics": diagnostics}


def _field(table: dict[str, Any], name: str, provider_id: str) -> tuple[bool, Any, dict | None]:
    """(present, value, problem): a table's base_url must be a non-empty string; its
    api_key_env a variable's name, or "" for an endpoint that takes no key."""
    if name not in table:
        return False, None, None
    value = table[name]
    ok = isinstance(value, str) and (
        bool(value) if name == "base_url" else not value or keys.NAME.fullmatch(value) is not None
    )
    if ok:
        return True, value or None, None
    what = "a URL" if name == "base_url" else 'an environment variable\'s name, or ""'
    return (
        True,
        None,
        _problem(
            "invalid_config",
            f"{name} in [providers.{provider_id}] must be {what}",
            f"fix {name} in [providers.{provider_id}] of {config_path()}",
        ),
    )


def settings(provider_id: str) -> dict[str, Any]:
    """The effective settings of `provider_id`: transport, base_url, api_key_env (None: no key
    needed), where each came from ("default", "config" or "environment"), the table's other keys
    (`options`) and `problem` (kind, message, hint) when no turn can use it."""
    found = _table(provider_id)
    transport, t_src, problem = _transport(provider_id, found)
    table = found or {}
    defaults = BUILTIN.get(provider_id) or TRANSPORT_DEFAULTS.get(str(transport), {})
    base_url, b_src = defaults.get("base_url"), "default"
    if defaults.get("base_url_env") and os.environ.get(defaults["base_url_env"]):
        base_url, b_src = os.environ[defaults["base_url_env"]], "environment"
    present, value, bad_url = _field(table, "base_url", provider_id)
    if present:
        base_url, b_src = value, "config"
    if defaults.get("override_env") and os.environ.get(defaults["override_env"]):
        base_url, b_src = os.environ[defaults["override_env"]], "environment"
    key_env, k_src = defaults.get("api_key_env"), "default"
    present, value, bad_key = _field(table, "api_key_env", provider_id)
    if present:
        key_env, k_src = value, "config"
    problem = problem or bad_url or bad_key
    if problem is None and not base_url:
        problem = _problem(
            "unknown_provider",
            f"provider {provider_id!r} has no base_url",
            f"add base_url to [providers.{provider_id}] in {config_path()}",
            transport=transport,
            missing="base_url",
        )
    return {
        "provider": provider_id,
        "transport": transport,
        "base_url": base_url,
        "api_key_env": key_env,
        "sources": {"transport": t_src, "base_url": b_src, "api_key_env": k_src},
        "builtin": provider_id in BUILTIN,
        "configured": found is not None,
        "options": {k: v for k, v in table.items() if k not in FIELDS},
        "problem": problem,
    }


def known_providers() -> list[str]:
    """Built-in provider ids, configured ids and `scripted`."""
    tables = config.get("providers", {})
    configured = list(tables) if isinstance(tables, dict) else []
    return sorted({*BUILTIN, *configured, "scripted"})


def key_variables() -> dict[str, list[str]]:
    """Variable name -> the provider ids that read their key from it (built in and configured)."""
    out: dict[str, list[str]] = {}
    for pid in known_providers():
        if pid != "scripted":
            env = settings(pid)["api_key_env"]
            if env:
                out.setdefault(env, []).append(pid)
    return out


def split_ref(model_ref: str) -> tuple[str, str] | None:
    provider_id, slash, model = model_ref.partition("/")
    if not slash or not provider_id.strip() or not model.strip():
        return None
    return provider_id, model


def make_provider(
    model_ref: str,
    *,
    home: Path | None = None,
    cursor: Path | None = None,
    continuation: Path | None = None,
) -> Provider:
    """The transport for `model_ref`. A scripted path is resolved against `home` too; `cursor` is
    where the scripted provider keeps its position, `continuation` where a transport that can
    continue a previous response keeps what it last sent (the caller's agent home decides
    where)."""
    import importlib

    from holon.model.conversation import ProviderFailure

    parts = split_ref(model_ref)
    if parts is None:
        raise ProviderFailure(
            "unsupported_transport",
            f"model ref {model_ref!r} is not of the form provider/model",
            category="protocol",
        )
    provider_id, model = parts
    if provider_id == "scripted":
        from holon.providers.scripted import ScriptedProvider

        return ScriptedProvider(resolve_script(model, home), cursor)
    conf = settings(provider_id)
    problem = conf["problem"]
    if problem is not None:
        raise ProviderFailure(
            "unsupported_transport",
            f"{problem['message']}; {problem['hint']}",
            category="protocol",
            diagnostics={
                "stage": "candidate_selection",
                "provider": provider_id,
                "known_providers": sorted(BUILTIN),
                "config_transports": list(CONFIG_TRANSPORTS),
                **problem["diagnostics"],
            },
        )
    factory = importlib.import_module(FACTORIES[conf["transport"]]).factory
    provider = factory(model_ref, conf)
    if continuation is not None and hasattr(provider, "use_continuation"):
        provider.use_continuation(continuation)
    return provider


def credential_status(model_ref: str) -> dict[str, Any]:
    """{"provider", "api_key_env" (None when no key is needed), "present" (found, or none needed),
    "source" ("environment", the keys file's path, "codex auth file" or None)}; never the key."""
    provider_id, _model = _parts(model_ref)
    if provider_id == "scripted":
        return {"provider": provider_id, "api_key_env": None, "present": True, "source": None}
    return provider_credentials(provider_id, settings(provider_id))


def provider_credentials(provider_id: str, conf: dict[str, Any]) -> dict[str, Any]:
    """credential_status for a provider whose settings are `conf`."""
    env = conf["api_key_env"]
    if conf["transport"] == "openai_codex_stream":
        token, _account, where = endpoints.codex_credentials(env)
        source = where if where in ("environment", str(keys.path())) else CODEX_AUTH_FILE
        present, source = bool(token), source if token else None
    else:
        source = keys.source(env) if env else None
        present = env is None or source is not None
    return {"provider": provider_id, "api_key_env": env, "present": present, "source": source}


def _parts(model_ref: str) -> tuple[str, str]:
    parts = split_ref(model_ref)
    if parts is None:
        raise UsageError(
            f"{model_ref!r} is not a model ref: it must be provider/model with both parts",
            kind="invalid_model_ref",
            hint="use provider/model, e.g. openai/gpt-5, anthropic/claude-sonnet-4-5 or "
            "scripted/PATH",
        )
    return parts


def preflight(model_ref: str, *, home: Path | None = None) -> None:
    """Raise the UsageError a turn with `model_ref` would surely fail with: invalid_model_ref,
    unknown_provider, invalid_config (also a config.toml that does not parse),
    missing_credentials, missing_script, corrupt_keys / unreadable_keys. Imports no SDK and opens
    no connection; `home` is the agent home a relative script path is also looked up in."""
    provider_id, model = _parts(model_ref)
    if provider_id == "scripted":
        script = resolve_script(model, home)
        if not script.is_file():
            raise UsageError(
                f"script not found: {script}",
                kind="missing_script",
                hint="give the path of a JSONL script (relative paths are resolved against the "
                "current directory, then the agent home)",
            )
        return
    conf = settings(provider_id)
    problem = conf["problem"]
    if problem is not None:
        raise UsageError(problem["message"], kind=problem["kind"], hint=problem["hint"])
    status = provider_credentials(provider_id, conf)
    if status["present"]:
        return
    env = status["api_key_env"]
    if env is None:  # openai-codex with api_key_env = "": only a Codex CLI sign-in would do
        raise UsageError(
            f"{model_ref} needs a Codex CLI sign-in and {endpoints.codex_auth_file()} has none",
            kind="missing_credentials",
            hint=f"sign in with the Codex CLI, or set api_key_env in [providers.{provider_id}]",
        )
    keys.verify()  # a keys file that cannot be read says so, rather than "missing"
    codex = " and there is no Codex CLI sign-in" if provider_id == "openai-codex" else ""
    raise UsageError(
        f"{model_ref} needs the key {env}, which is set neither in the environment nor in "
        f"{keys.path()}{codex}",
        kind="missing_credentials",
        hint=keys.how_to_set(env),
    )
