"""``evidentia kb add|build|stats|remove``: the text knowledge base from the command line."""

from __future__ import annotations

import json
import time

import click


def _store():
    from assistant.settings import Settings
    from kb.text_store import TextStore

    settings = Settings()
    return settings, TextStore(settings.kb_dir / "text", embedding_model=settings.embedding_model)


def register(group) -> None:
    @group.command("add")
    @click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
    @click.option("--license", "license_", default="", help="License text stored with these sentences.")
    @click.option("--collection", default="", help="Collection name (default: each file's path).")
    def add(paths, license_, collection):
        """Ingest txt, md, html, jsonl (and pdf with pypdf) files or folders into the text KB."""
        from kb.ingest import IngestError, expand_paths, parse_file
        from kb.instructions import instructions_warning

        _, store = _store()
        docs, failed = [], 0
        for p in expand_paths(paths):
            try:
                docs += parse_file(p, license=license_)
            except IngestError as exc:
                click.echo(f"skipped: {exc}", err=True)
                failed += 1
        if not docs:
            raise click.ClickException("Nothing to ingest: no readable text in the given paths.")
        res = store.add_documents(docs, collection=collection)
        click.echo(f"{res['documents']} documents: {res['added']} sentences added, {res['kept']} already there, "
                   f"{res['duplicates']} duplicates skipped" + (f"; {failed} files skipped" if failed else ""))
        for doc in docs:
            warning = instructions_warning(doc.title or doc.source, doc.text)
            if warning:
                click.echo("warning: " + warning, err=True)

    @group.command("build")
    @click.option("--default", "default", is_flag=True, help="Build the default corpus (5 public sources).")
    @click.option("--limit-per-source", type=int, default=None,
                  help="Max sentences per source (default 2000; 0 = everything). Re-running adds only what is new.")
    @click.option("--only", multiple=True, help="Only these sources (openbookqa, worldtree, medquad, pubmedqa, scifact).")
    def build(default, limit_per_source, only):
        """Build the text KB from the default sources (incremental and resumable)."""
        from kb.default_corpus import DEFAULT_LIMIT_PER_SOURCE, SourceUnavailable, build_default

        if not default:
            raise click.UsageError("Say what to build: --default (or use `evidentia kb add PATH`).")
        settings, store = _store()
        limit = DEFAULT_LIMIT_PER_SOURCE if limit_per_source is None else limit_per_source
        started = time.perf_counter()
        try:
            res = build_default(store, settings, limit_per_source=limit or None, only=list(only) or None,
                                echo=click.echo)
        except SourceUnavailable as exc:
            raise click.ClickException(str(exc)) from exc
        for name, r in res.items():
            if "error" not in r:
                click.echo(f"  {name}: {r['added']:,} added, {r['kept']:,} already there, "
                           f"{r['duplicates']:,} duplicates skipped")
        stats = store.stats()
        click.echo(f"KB: {stats['sentences']:,} sentences in {stats['documents']:,} documents "
                   f"({time.perf_counter() - started:.0f} s)")

    @group.command("stats")
    @click.option("--json", "as_json", is_flag=True)
    def stats(as_json):
        """Show the text KB's size per collection and on disk."""
        _, store = _store()
        if store.is_empty:
            click.echo("The text KB is empty: run `evidentia kb build --default`.")
            return
        s = store.stats()
        if as_json:
            click.echo(json.dumps(s, indent=2))
            return
        click.echo(f"{s['path']}: {s['sentences']:,} sentences, {s['documents']:,} documents, "
                   f"{s['tokens']:,} tokens, {s['disk_bytes'] / 1e6:.1f} MB on disk, model {s['model']}")
        for name, c in s["collections"].items():
            click.echo(f"  {name}: {c['sentences']:,} sentences in {c['documents']:,} documents — {c['license']}")

    @group.command("remove")
    @click.argument("doc_or_source")
    def remove(doc_or_source):
        """Remove a document (id, path, URL or title) or a whole source/collection from the text KB."""
        _, store = _store()
        res = store.remove(doc_or_source)
        if not res["documents"]:
            raise click.ClickException(f"Nothing in the text KB matches {doc_or_source!r}.")
        click.echo(f"removed {res['documents']} documents ({res['sentences']} sentences)")
