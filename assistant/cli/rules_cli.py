"""``evidentia rules``: the reading rules' catalogue (tools/rules.py), printed or written to docs/rules.md."""

from __future__ import annotations

from pathlib import Path

import click

CATALOGUE = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


@click.command("rules")
@click.option("--write", is_flag=True, help=f"Write the catalogue to {CATALOGUE.parent.name}/{CATALOGUE.name}.")
def rules_command(write: bool) -> None:
    """List the reading rules: name, stage, what each reads, the case it came from, one example."""
    from tools.rules import catalogue

    text = catalogue()
    if write:
        CATALOGUE.write_text(text, encoding="utf-8")
        click.echo(f"wrote {CATALOGUE}")
    else:
        click.echo(text, nl=False)
