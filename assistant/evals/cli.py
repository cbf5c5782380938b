"""``evidentia eval ...``: each benchmark module adds its own commands via ``register(group)``."""

from __future__ import annotations

import click


@click.group("eval")
def eval_group() -> None:
    """Score the system on public benchmarks; results go to docs/eval/."""


def _attach() -> None:
    from assistant.evals import kg_eval, retrieval_eval, tables_eval

    tables_eval.register(eval_group)
    retrieval_eval.register(eval_group)
    kg_eval.register(eval_group)


_attach()
