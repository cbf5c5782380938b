"""``evidentia kb ...``: build and inspect the knowledge base.

The text commands are in assistant.cli.kb_text_cli and the KG commands in assistant.cli.kb_kg_cli. They live in
``assistant`` because they read ``Settings``: kb/ stays below the app and imports nothing from it.
"""

from __future__ import annotations

import click


@click.group("kb")
def kb_group() -> None:
    """Build and inspect the knowledge base (text, tables, knowledge graphs)."""


def _attach() -> None:
    from assistant.cli import kb_kg_cli, kb_text_cli
    from assistant.evals import medquad_focus, program_mining, program_rerank, pubmedqa_verdicts

    kb_text_cli.register(kb_group)
    kb_kg_cli.register(kb_group)
    pubmedqa_verdicts.register_build(kb_group)  # the yes/no verdict reader, fitted on PubMedQA dev questions
    medquad_focus.register_build(kb_group)  # the focus check, fitted on MedQuAD dev foci
    programs = program_mining.register(kb_group)  # the bank of verified table programs (worked examples)
    program_rerank.register(programs)  # the reranker of sampled programs, fitted on what mining logged


_attach()
