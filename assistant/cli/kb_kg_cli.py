"""``evidentia kb kg ...``: load knowledge graphs from the mirror folders and show what is loaded."""

from __future__ import annotations

from pathlib import Path

import click


@click.group("kg")
def kg_group() -> None:
    """Knowledge graphs: load Hetionet, ConceptNet, the MedQA disease database or your own CSV."""


@kg_group.command("load")
@click.argument("name", type=click.Choice(["hetionet", "conceptnet", "medqa-ddb", "csv"]))
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--as", "graph_name", default=None, help="Store under this graph name (csv default: user).")
@click.option("--embed/--no-embed", default=True, show_default=True,
              help="Precompute node-name embeddings now (makes the first question fast).")
def load_cmd(name: str, path: Path | None, graph_name: str | None, embed: bool) -> None:
    """Load NAME (hetionet | conceptnet | medqa-ddb | csv PATH) into the KG store."""
    from assistant.deps import Deps
    from assistant.settings import Settings
    from kb.kg_loaders import load_source
    from kb.kg_store import KGLoadError

    deps = Deps(Settings())
    try:
        counts = load_source(deps.kg, name, deps.settings, path=path, graph_name=graph_name)
    except KGLoadError as exc:
        raise click.ClickException(f"Nothing was loaded: {exc}") from exc
    source = graph_name or ("user" if name == "csv" else name)
    click.echo(f"Loaded {source}: " + ", ".join(f"{k} {v:,}" for k, v in counts.items()))
    if name == "hetionet" and not deps.settings.kg_allow_noncommercial:
        click.echo("Non-commercial SIDER side-effect edges (CcSE) were skipped; set "
                   "EVIDENTIA_KG_ALLOW_NONCOMMERCIAL=1 to load them.")
    if embed:
        from kb.linking import node_embeddings

        node_embeddings(deps.kg, source, deps.embedder, progress=True)
        click.echo("Node-name embeddings cached.")


@kg_group.command("stats")
def stats_cmd() -> None:
    """Show the loaded graphs: nodes, edges, relation types, licenses, skipped edges."""
    from assistant.settings import Settings
    from kb.kg_store import KGStore

    settings = Settings()
    store = KGStore(settings.kb_dir / "kg.db")
    rows = store.stats()
    if not rows:
        click.echo("No knowledge graph loaded. Try: evidentia kb kg load hetionet")
        return
    from kb.kg_harvest import is_harvest, provenance

    for r in rows:
        if is_harvest(r["name"]):
            continue
        skipped = ", ".join(f"{k} {v:,}" for k, v in r["skipped"].items()) or "none"
        click.echo(f"{r['name']}: {r['nodes']:,} nodes, {r['edges']:,} edges, {r['relations']} relation types; "
                   f"license: {r['license']}; skipped: {skipped}")
    harvested = [r for r in rows if is_harvest(r["name"])]
    if harvested:
        click.echo("Harvested from a language model (not curated facts):")
    for r in harvested:
        prov = provenance(store, r["name"])
        detail = (f"relation {prov.relation}, model {prov.model}, {prov.date}, {len(prov.prompts)} prompts, "
                  f"{len(prov.seeds)} seeds, score threshold {prov.threshold:.3f}") if prov else "no provenance"
        click.echo(f"  {r['name']}: {r['edges']:,} tuples, {r['nodes']:,} entities; {detail}")


@kg_group.command("remove")
@click.argument("name")
def remove_cmd(name: str) -> None:
    """Drop graph NAME (e.g. a harvested harvest:<model>:<relation>) and everything stored with it."""
    from assistant.settings import Settings
    from kb.kg_store import KGStore

    store = KGStore(Settings().kb_dir / "kg.db")
    names = store.graph_names()
    if not store.remove_graph(name):
        raise click.ClickException(f"No graph named {name!r}; loaded: {', '.join(names) or 'none'}.")
    click.echo(f"Removed {name}.")


def register(group) -> None:
    group.add_command(kg_group)
