"""`holon provider doctor`: configured providers, where each credential comes from (never its
value), retry policy."""

from __future__ import annotations

import click

from holon.cli.output import emit_json


@click.group("provider")
def provider_group() -> None:
    """Inspect model providers and their transports."""


@provider_group.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
def doctor_cmd(as_json: bool) -> None:
    """List each built-in and configured provider: transport, status, and whether its key is
    set and where from: the environment, the keys file (`holon keys`) or, for openai-codex, the
    Codex CLI sign-in. Settings from `[providers.NAME]` in config.toml are merged over the
    defaults field by field. Key values are never printed. Ends with the retry policy.

    STATUS is `ready`, `no key` or `unsupported`. Exit 1 when a provider in use (the default
    model's, or one configured in config.toml) is not ready.
    """
    from holon.providers.doctor import provider_doctor

    doc = provider_doctor()
    in_use = _in_use(doc["providers"])
    unusable = [p["id"] for p in doc["providers"] if p["id"] in in_use and _status(p) != "ready"]
    if as_json:
        emit_json({**doc, "in_use": sorted(in_use), "unusable": unusable})
    else:
        _table(doc)
    if unusable:
        from holon.cli import failures

        bad = [p for p in doc["providers"] if p["id"] in unusable]
        names = [p["credential_env"] for p in bad if _status(p) == "no key" and p["credential_env"]]
        failures.error(
            "provider_unusable",
            f"{', '.join(unusable)} cannot be used: " + "; ".join(_credential(p) for p in bad),
            f'set the key: printf %s "$KEY" | holon keys set {names[0]} -'
            if names
            else f"fix [providers.{unusable[0]}] in config.toml, or choose another model",
        )
        click.get_current_context().exit(1)


def _table(doc: dict) -> None:
    click.echo(f"{'PROVIDER':<14} {'TRANSPORT':<24} {'STATUS':<11} {'CREDENTIAL':<40} ENDPOINT")
    for p in doc["providers"]:
        click.echo(
            f"{p['id']:<14} {p.get('transport') or '-':<24} {_status(p):<11} "
            f"{_credential(p):<40} {p.get('base_url') or '-'}".rstrip()
        )
    policy = doc.get("retry_policy", {})
    click.echo(
        f"retry: {policy.get('max_retries')} retries on {', '.join(policy.get('retryable', []))}; "
        f"backoff base {policy.get('backoff_base_ms')} ms; retry-after capped at "
        f"{policy.get('retry_after_cap_s')} s"
    )


def _status(p: dict) -> str:
    if not p.get("supported"):
        return "unsupported"
    if p.get("credentials_required") and not p.get("credentials_present"):
        return "no key"
    return "ready"


def _in_use(providers: list[dict]) -> set[str]:
    """The default model's provider and every provider configured in config.toml."""
    from holon.config import default_model

    ref = default_model() or ""
    used = {ref.partition("/")[0]} if "/" in ref else set()
    return used | {p["id"] for p in providers if "config" in (p.get("source") or "")}


def _credential(p: dict) -> str:
    if not p.get("supported"):
        return f"({p.get('diagnostic')})"
    if not p.get("credentials_required"):
        return "no credential needed"
    name = p.get("credential_env") or "Codex CLI sign-in"
    if not p.get("credentials_present"):
        return f"{name}: MISSING"
    source = p.get("credential_source")
    where = source if source in ("environment", "codex auth file") else f"keys file {source}"
    return f"{name}: present ({where})"
