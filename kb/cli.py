"""``evidentia kb ...``: build and inspect the knowledge base (text in kb.text_cli, KGs in kb.kg_cli)."""

from __future__ import annotations

import click


@click.group("kb")
def kb_group() -> None:
    """Build and inspect the knowledge base (text, tables, knowledge graphs)."""


def _attach() -> None:
    from kb import kg_cli, text_cli

    text_cli.register(kb_group)
    kg_cli.register(kb_group)


_attach()
