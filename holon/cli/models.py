"""`holon models [--provider NAME]`: the context windows holon knows, and the models a
provider's endpoint lists."""

from __future__ import annotations

import click

from holon.cli.output import emit_json


@click.command("models")
@click.option(
    "--provider",
    "provider_id",
    metavar="NAME",
    help="Ask this provider's models endpoint what it serves (10 s timeout; needs its key).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
def models_cmd(provider_id: str | None, as_json: bool) -> None:
    """List the model families holon knows with their context windows, and the models set in
    config.toml; with --provider, the models that provider lists.

    A model ref is provider/model (`openai/gpt-5`); a model of no known family is given a
    window of 32768 tokens unless `[models."REF"] context_window` in config.toml says more.
    """
    from holon.ops import models

    if provider_id is not None:
        rows = models.listed_by(provider_id)
        if as_json:
            emit_json(rows)
        for r in [] if as_json else rows:
            click.echo(f"{r['model_ref']:<50} {r['context_window']:>9}")
        return
    doc = models.table()
    if as_json:
        emit_json(doc)
        return
    click.echo(f"{'FAMILY (model name starts with)':<50} {'WINDOW':>9}")
    for f in doc["families"]:
        click.echo(f"{f['family']:<50} {f['context_window']:>9}")
    click.echo(f"{'(any other model)':<50} {doc['default_context_window']:>9}")
    for m in doc["configured"]:
        click.echo(f"{m['model_ref']:<50} {m['context_window']:>9}  (config.toml)")
