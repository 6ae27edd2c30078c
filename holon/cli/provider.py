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
    """List each built-in and configured provider: transport, endpoint, and whether its key is
    set and where from: the environment, the keys file (`holon keys`) or, for openai-codex, the
    Codex CLI sign-in. Settings from `[providers.NAME]` in config.toml are merged over the
    defaults field by field. Key values are never printed. Ends with the retry policy."""
    from holon.providers.doctor import provider_doctor

    doc = provider_doctor()
    if as_json:
        emit_json(doc)
        return
    for p in doc["providers"]:
        state = "ok" if p.get("supported") else "unsupported"
        click.echo(
            f"{p['id']:<14} {p.get('transport') or '-':<24} {state:<11} {_credential(p)}  "
            f"{p.get('base_url') or ''}".rstrip()
        )
    policy = doc.get("retry_policy", {})
    click.echo(
        f"retry: {policy.get('max_retries')} retries on {', '.join(policy.get('retryable', []))}; "
        f"backoff base {policy.get('backoff_base_ms')} ms; retry-after capped at "
        f"{policy.get('retry_after_cap_s')} s"
    )


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
