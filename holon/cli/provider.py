"""`holon provider doctor`: configured providers, credential presence (never values), retry
policy."""

from __future__ import annotations

import click

from holon.cli.output import emit_json


@click.group("provider")
def provider_group() -> None:
    """Inspect model providers and their transports."""


@provider_group.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
def doctor_cmd(as_json: bool) -> None:
    """List each built-in and configured provider: transport, endpoint, whether its credential is
    present (its value is never printed), and the retry policy."""
    from holon.providers.doctor import provider_doctor

    doc = provider_doctor()
    if as_json:
        emit_json(doc)
        return
    for p in doc["providers"]:
        cred = (
            "no credential needed"
            if not p.get("credentials_required")
            else (
                f"{p.get('credential_env')}: "
                f"{'present' if p.get('credentials_present') else 'MISSING'}"
            )
        )
        state = "ok" if p.get("supported") else "unsupported"
        click.echo(
            f"{p['id']:<14} {p.get('transport') or '-':<24} {state:<11} {cred}  "
            f"{p.get('base_url') or ''}"
        )
    policy = doc.get("retry_policy", {})
    click.echo(
        f"retry: {policy.get('max_retries')} retries on {', '.join(policy.get('retryable', []))}; "
        f"backoff base {policy.get('backoff_base_ms')} ms; retry-after capped at "
        f"{policy.get('retry_after_cap_s')} s"
    )
