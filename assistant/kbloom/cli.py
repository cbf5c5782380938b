"""``evidentia kb kg harvest``: grow a KG for a relation from the served language model (K-Bloom)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

BERTNET_FILES = {"conceptnet": "bertnet_relation_info_conceptnet.json", "lama": "bertnet_relation_info_lama.json"}


def bertnet_path(settings, collection: str) -> Path:
    if settings.eval_data_dir is None:
        raise click.ClickException("Set EVIDENTIA_EVAL_DATA_DIR to the folder holding lm_kg_extraction/ "
                                   "(../shared/eval-data) to use --from-bertnet.")
    if collection not in BERTNET_FILES:
        raise click.ClickException(f"--from-bertnet takes {' or '.join(BERTNET_FILES)}:<Relation>, not {collection!r}.")
    return Path(settings.eval_data_dir) / "lm_kg_extraction" / BERTNET_FILES[collection]


def definition_from_options(settings, relation: str | None, prompts: tuple[str, ...], seeds: tuple[str, ...],
                            from_bertnet: str | None):
    """A validated relation definition from the options; a ClickException says what is wrong."""
    from kb.kg_harvest import RelationDefinitionError, load_bertnet, parse_definition

    try:
        if from_bertnet:
            if prompts or seeds:
                raise click.ClickException("Give either --from-bertnet or --prompt/--seed, not both.")
            collection, _, name = from_bertnet.partition(":")
            if not name:
                raise click.ClickException("--from-bertnet takes COLLECTION:Relation, e.g. conceptnet:AtLocation.")
            return load_bertnet(bertnet_path(settings, collection), name)
        if not relation or not prompts or not seeds:
            raise click.ClickException("Give --relation, at least one --prompt and at least one --seed head,tail "
                                       "(or --from-bertnet conceptnet:<Relation>).")
        pairs = []
        for s in seeds:
            head, sep, tail = s.partition(",")
            if not sep:
                raise click.ClickException(f"--seed {s!r}: write the pair as head,tail")
            pairs.append((head, tail))
        return parse_definition({"init_prompts": list(prompts), "seed_ent_tuples": pairs}, name=relation)
    except RelationDefinitionError as exc:
        raise click.ClickException(f"Nothing was harvested or stored. {exc}") from None


def harvest_config(limit: int, prompts: int, min_score: float | None, seed: int):
    from assistant.kbloom.harvest import HarvestConfig
    from assistant.kbloom.search import SearchConfig

    return HarvestConfig(limit=limit, prompts=prompts, min_score=min_score, search=SearchConfig(seed=seed))


@click.command("harvest")
@click.option("--relation", help="Relation name (letters, digits, '-', '_'), e.g. PartOf.")
@click.option("--prompt", "prompts", multiple=True, help='Initial prompt with slots, e.g. "<ENT0> is a part of <ENT1> ."')
@click.option("--seed", "seeds", multiple=True, help="A seed pair head,tail (repeat; up to 5 is typical).")
@click.option("--from-bertnet", help="Take the relation from BertNet's relation_info, e.g. conceptnet:AtLocation.")
@click.option("--limit", default=100, show_default=True, type=click.IntRange(1, 5000), help="Tuples to keep.")
@click.option("--prompts-kept", "prompts_kept", default=5, show_default=True, type=click.IntRange(1, 20),
              help="Weighted prompts kept after paraphrasing (the thesis keeps 20; each costs a scoring pass).")
@click.option("--min-score", type=float, default=None, help="Keep only tuples whose final score reaches this.")
@click.option("--sampling-seed", "seed_value", default=0, show_default=True, help="Seed of the sampled proposals.")
@click.option("--restart", is_flag=True, help="Ignore a checkpoint of an interrupted run and start over.")
def harvest_cmd(relation, prompts, seeds, from_bertnet, limit, prompts_kept, min_score, seed_value, restart) -> None:
    """Harvest tuples of one relation from the served model into the KG store (resumes if interrupted)."""
    from assistant.deps import Deps
    from assistant.kbloom.harvest import CheckpointFile, HarvestError, harvest, harvest_settings, run_key, save
    from kb.errors import LLMResponseError, LLMUnavailable
    from assistant.settings import Settings
    from kb.kg_store import KGLoadError

    settings = Settings()
    definition = definition_from_options(settings, relation, prompts, seeds, from_bertnet)
    cfg = harvest_config(limit, prompts_kept, min_score, seed_value)
    deps = Deps(harvest_settings(settings))
    runs_dir = settings.kb_dir / "harvest_runs"

    async def go():
        try:
            model = await deps.llm.resolved_model()
            key = run_key(definition, model, cfg)
            if restart:
                CheckpointFile(runs_dir, key).delete()
            result = await harvest(definition, llm=deps.llm, embedder=deps.embedder, model=model, cfg=cfg,
                                   checkpoints_dir=runs_dir, progress=True)
            return result, save(deps.kg, result, runs_dir, key)
        finally:
            await deps.aclose()

    try:
        result, counts = asyncio.run(go())
    except (LLMUnavailable, LLMResponseError) as exc:
        raise click.ClickException(f"{exc} The harvest's progress so far is kept; run the same command again "
                                   "to continue.") from None
    except (HarvestError, KGLoadError) as exc:
        raise click.ClickException(f"Nothing was stored. {exc}") from None
    prov = result.provenance
    click.echo(f"{'Resumed and stored' if result.resumed else 'Stored'} {result.source}: {counts['edges']} tuples, "
               f"{counts['nodes']} entities (from {result.candidates} proposed pairs, {result.pruned} pruned); "
               f"final-score threshold {prov.threshold:.3f}.")
    click.echo("Prompts: " + "; ".join(f"{w.weight:.2f} {w.prompt}" for w in prov.prompts))
    click.echo("Stage times: " + ", ".join(f"{k} {v:.0f} s" for k, v in prov.timings_s.items()))
    for t in result.tuples[:10]:
        click.echo(f"  {t.head} —{prov.template}→ {t.tail}  (score {t.final:.3f})")


def register(kb_group: click.Group) -> None:
    """Add ``harvest`` to ``evidentia kb kg`` (kb/ cannot import the model side, so it is attached from here)."""
    kb_group.commands["kg"].add_command(harvest_cmd)
