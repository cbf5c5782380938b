"""``evidentia eval ...``: each benchmark module adds its own commands via ``register(group)``."""

from __future__ import annotations

import click


@click.group("eval")
def eval_group() -> None:
    """Score the system on public benchmarks; results go to docs/eval/."""


@eval_group.command("baselines")
@click.argument("benchmarks", nargs=-1)
def baselines_command(benchmarks: tuple[str, ...]) -> None:
    """Add majority/first-option baselines to published docs/eval reports (measured numbers untouched)."""
    from assistant.evals.baselines import patch_report
    from assistant.evals.report import DOCS_DIR
    from assistant.settings import Settings

    eval_dir = Settings().eval_data_dir
    if eval_dir is None:
        raise click.ClickException("Set EVIDENTIA_EVAL_DATA_DIR to the benchmark folder (../shared/eval-data).")
    paths = ([DOCS_DIR / "eval" / f"{b}.json" for b in benchmarks] if benchmarks
             else sorted((DOCS_DIR / "eval").glob("*.json")))
    for path in paths:
        try:
            added = patch_report(path, eval_dir, fallbacks_unknown=True)
        except (KeyError, OSError, ValueError) as exc:
            click.echo(f"{path.name}: no baseline ({type(exc).__name__}: {exc})")
            continue
        shown = {k: round(v, 4) if isinstance(v, float) else v for k, v in added.items() if k != "fallbacks"}
        click.echo(f"{path.name}: {shown}")


def _attach() -> None:
    from assistant.evals import (chat_eval, kg_eval, kg_harvest_eval, kg_relations_eval, medquad_eval, medquad_focus,
                                 pdf_eval, pubmedqa_eval, pubmedqa_verdicts, rules_eval,
                                 readme_numbers, recompute, retrieval_eval, tables_eval)

    tables_eval.register(eval_group)
    retrieval_eval.register(eval_group)
    kg_eval.register(eval_group)
    kg_relations_eval.register(eval_group)
    pubmedqa_eval.register(eval_group)
    pubmedqa_verdicts.register(eval_group)
    medquad_eval.register(eval_group)
    medquad_focus.register(eval_group)
    kg_harvest_eval.register(eval_group)
    recompute.register(eval_group)
    readme_numbers.register(eval_group)
    chat_eval.register(eval_group)
    rules_eval.register(eval_group)
    pdf_eval.register(eval_group)


_attach()
