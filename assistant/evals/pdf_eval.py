"""``evidentia eval pdf``: how faithfully a PDF upload is read (#81).

Three measures, each over content whose truth is known because we made the PDF:

- **Tables.** Dev tables of SciTab (those of its tuning claims, table-disjoint from the test subset) and of
  WikiTableQuestions (its training tables) are drawn into PDFs in three styles (ruled, booktabs, plain), read back by
  the upload path (``kb.pdf_reader`` then ``kb.documents.tables_of``), and compared with the table as the benchmark
  loader reads it: was a table found, are the column names right, is every cell right, position by position.
- **Claims.** SciTab dev claims are checked against the original table and against the table read from each style's
  PDF. Where the read table equals the original exactly (same names, same cells: the checker's input is identical),
  the verdict is the same by construction and is not run twice; every claim on a table that reads differently is run
  on both. The accuracy loss is the extraction's cost.
- **Text.** Multi-page papers made of PubMedQA abstracts (one or two columns, running header, page numbers,
  references) are read back: is each sentence's page right, and does retrieval over the PDF's text give the same
  top 5 as over the same text given as a .txt.

Per-item records go to ``docs/eval/pdf-items.jsonl`` (ids, counts and verdicts; no benchmark text); the report's
figures recompute from it (``evidentia eval recompute pdf``).
"""

from __future__ import annotations

import asyncio
import functools
import json
import random
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import click

LOG_NAME = "pdf-items.jsonl"
DEFAULT_SEED = 0  # tables_eval's: the same dev split as the claim benchmarks' (its test subset is drawn by seed)
TABLE_SAMPLE = 60  # tables per benchmark and style: enough to see a 5% cell error rate (±3 points)
TEXT_PAPERS = 12
CLAIM_SAMPLE = 120


def _norm(text: str) -> str:
    return " ".join(str(text).split())


def latin1(text: str) -> str:
    """A cell as the standard PDF fonts draw it (``pdf_render.drawable``: what Latin-1 lacks becomes "?"): the
    extraction is scored against what was drawn, and the count of cells changed by drawing is reported beside it."""
    from assistant.evals.pdf_render import drawable

    return drawable(text)


def table_fidelity(original, extracted) -> dict[str, Any]:
    """Found, column names right, and cells right position by position (a missing cell is wrong)."""
    cols = [latin1(_norm(c)) for c in original.columns]
    cells = [[latin1(_norm(v)) for v in row] for row in original.rows]
    total = sum(len(r) for r in cells)
    if extracted is None:
        return {"found": False, "headers_right": 0, "headers": len(cols), "cells_right": 0, "cells": total,
                "exact": False}
    got_cols = [_norm(c) for c in extracted.columns]
    got = [[_norm(v) for v in row] for row in extracted.rows]
    headers_right = sum(1 for i, c in enumerate(cols) if i < len(got_cols) and got_cols[i] == c)
    right = sum(1 for r, row in enumerate(cells) for c, v in enumerate(row)
                if r < len(got) and c < len(got[r]) and got[r][c] == v)
    exact = (got_cols, got) == (cols, cells)
    return {"found": True, "headers_right": headers_right, "headers": len(cols), "cells_right": right,
            "cells": total, "exact": exact, "shape": [len(got), len(got_cols)],
            "drawn_changed": sum(1 for row in original.rows for v in row if latin1(v) != v)}


def read_back_tables(pdf: Path, settings: Any) -> list:
    from kb.documents import tables_of
    from kb.pdf_reader import read_pdf

    doc = read_pdf(pdf)
    return [t for _, t in tables_of(doc, settings=settings)]


# -- the tables to draw ---------------------------------------------------------------------------
def scitab_dev_tables(settings, seed: int) -> tuple[list[tuple[str, Any]], list]:
    """(table id, Table) of SciTab's dev claims in seeded order, and those claims."""
    return _scitab_dev_tables(str(settings.eval_data_dir), seed)


@functools.lru_cache(maxsize=2)  # the tables part and the claims part both ask; the split is read once
def _scitab_dev_tables(eval_data_dir: str, seed: int) -> tuple[list[tuple[str, Any]], list]:
    from assistant.evals.tables_eval import load_split, select_items, table_fingerprint

    items = select_items("scitab", load_split("scitab", Path(eval_data_dir), "dev"), seed=seed,
                         limit=None, split="dev")
    tables: dict[str, Any] = {}
    for it in items:
        tables.setdefault(table_fingerprint(it.table), it.table)
    ordered = sorted(tables.items())
    random.Random(seed).shuffle(ordered)
    return ordered, items


def wtq_dev_tables(settings, seed: int) -> list[tuple[str, Any]]:
    from assistant.evals.tables_eval import WTQ_SPLIT_FILES, load_wtq, table_fingerprint

    wtq_dir = Path(settings.kb_mirror_dir) / "wikitablequestions"
    tables: dict[str, Any] = {}
    for it in load_wtq(wtq_dir, WTQ_SPLIT_FILES["dev"]):
        tables.setdefault(table_fingerprint(it.table), it.table)
    ordered = sorted(tables.items())
    random.Random(seed).shuffle(ordered)
    return ordered


def draw_and_read(table, style: str, folder: Path, settings: Any) -> tuple[Any | None, float, str]:
    """Draw ``table`` in ``style``, read it back; (the read table or None, seconds, error)."""
    from assistant.evals.pdf_render import render_table_pdf

    pdf = folder / f"{style}.pdf"
    caption = f"Table 1: {latin1(_norm(table.title))[:150]}"
    try:
        render_table_pdf(pdf, [list(table.columns)], [list(r) for r in table.rows], style=style, caption=caption)
    except ValueError as exc:  # does not fit one page even in 5 pt type: not a reading error
        return None, 0.0, f"not drawn: {exc}"[:200]
    t0 = time.perf_counter()
    try:
        read = read_back_tables(pdf, settings)
    except Exception as exc:  # noqa: BLE001 - a refused PDF is a miss, logged with its reason
        return None, time.perf_counter() - t0, f"{type(exc).__name__}: {exc}"[:200]
    return (read[0] if read else None), time.perf_counter() - t0, ""


# A table drawn on one page, as a paper prints it: longer tables (WTQ has lists of hundreds of rows) would be split
# across pages, which this reader does not join; they are left out of the sample and the report says so.
MAX_DRAWN_ROWS, MAX_DRAWN_COLS = 40, 12


def fits_one_page(table) -> bool:
    return table.n_rows <= MAX_DRAWN_ROWS and table.n_cols <= MAX_DRAWN_COLS


def run_tables(settings, log: list[dict], *, seed: int, sample: int, styles: tuple[str, ...], echo=print) -> dict:
    """Draw and read the sampled dev tables of both benchmarks in every style; returns {(bench, tid, style): Table}."""
    scitab, _ = scitab_dev_tables(settings, seed)
    sources = {"scitab": [t for t in scitab if fits_one_page(t[1])][:sample],
               "wikitablequestions": [t for t in wtq_dev_tables(settings, seed) if fits_one_page(t[1])][:sample]}
    read_tables: dict[tuple[str, str, str], Any] = {}
    with tempfile.TemporaryDirectory(prefix="evidentia-pdf-eval-") as tmp:
        for bench, tables in sources.items():
            for n, (tid, table) in enumerate(tables, 1):
                for style in styles:
                    got, seconds, error = draw_and_read(table, style, Path(tmp), settings)
                    read_tables[(bench, tid, style)] = got
                    log.append({"part": "table", "benchmark": bench, "id": tid, "style": style,
                                "rows": table.n_rows, "cols": table.n_cols, "seconds": round(seconds, 3),
                                "error": error, **table_fidelity(table, got)})
                if n % 10 == 0:
                    echo(f"  {bench}: {n}/{len(tables)} tables drawn and read in {len(styles)} styles")
    return read_tables


# -- claims -----------------------------------------------------------------------------------------
async def run_claims(settings, log: list[dict], read_tables: dict, *, seed: int, sample: int,
                     styles: tuple[str, ...], echo=print, concurrency: int = 3) -> None:
    """SciTab dev claims on the original table and on each style's read table (run only where they differ)."""
    from assistant.evals.report import bounded_map
    from assistant.evals.tables_eval import LABELS3, table_fingerprint
    from assistant.llm import LLMClient
    from tools.verify_claim import check_claim

    _, items = scitab_dev_tables(settings, seed)
    drawn = {tid for (bench, tid, _s) in read_tables if bench == "scitab"}
    items = [it for it in items if table_fingerprint(it.table) in drawn][:sample]
    from kb.embeddings import Embedder

    llm = LLMClient(settings)
    embedder = Embedder(settings.embedding_model)  # the program variant's CCoE fallback filters columns
    verdicts: dict[tuple[str, str], str] = {}
    jobs = []
    for it in items:
        tid = table_fingerprint(it.table)
        differing = [s for s in styles if (read := read_tables[("scitab", tid, s)]) is None
                     or table_fingerprint(read) != tid]
        if differing:
            jobs.append((it, "original", it.table))
            jobs += [(it, s, read_tables[("scitab", tid, s)]) for s in differing]

    async def one(job) -> None:
        it, variant, table = job
        if table is None:
            verdicts[(it.id, variant)] = "NO TABLE"  # nothing found to check against: a wrong verdict
            return
        try:
            check = await check_claim(llm, table, it.claim, embedder=embedder, variant="program", labels=LABELS3,
                                      seed=seed)
            verdicts[(it.id, variant)] = check.label
        except Exception as exc:  # noqa: BLE001 - an error is a wrong verdict, logged
            verdicts[(it.id, variant)] = f"ERROR {type(exc).__name__}"
        echo(f"  claim {it.id[:8]} {variant}: {verdicts[(it.id, variant)]} (gold {it.label})")

    echo(f"  {len(items)} dev claims; {len(jobs)} checks on tables that read differently")
    try:
        await bounded_map(one, jobs, concurrency)
    finally:
        await llm.aclose()
    for it in items:
        tid = table_fingerprint(it.table)
        base = verdicts.get((it.id, "original"))
        rec = {"part": "claim", "benchmark": "scitab", "id": it.id, "table": tid, "gold": it.label}
        for style in styles:
            same = (read_tables[("scitab", tid, style)] is not None
                    and table_fingerprint(read_tables[("scitab", tid, style)]) == tid)
            rec[style] = "same table" if same else verdicts.get((it.id, style))
        rec["original"] = base  # None where every style read the table exactly (not run: nothing differs)
        log.append(rec)


# -- text -------------------------------------------------------------------------------------------
def paper_pages(settings, seed: int, papers: int) -> list[list[tuple[str | None, list[str]]]]:
    """Papers of 3-4 pages, each page a few PubMedQA abstracts' sentences (with a heading)."""
    from kb.ingest import split_sentences

    data = json.loads((Path(settings.kb_mirror_dir) / "pubmedqa" / "ori_pqal.json").read_text(encoding="utf-8"))
    keys = sorted(data)
    random.Random(seed).shuffle(keys)
    out, k = [], 0
    for p in range(papers):
        pages = []
        for page in range(3 + p % 2):
            sents = [latin1(_norm(s.text)) for ctx in data[keys[k]]["CONTEXTS"] for s in split_sentences(ctx)]
            k += 1
            pages.append((f"{page + 1} {data[keys[k - 1]]['QUESTION'][:60]}" if page % 2 == 0 else None,
                          [s for s in sents if len(s) > 25][:8]))
        out.append(pages)
    return out


def run_text(settings, log: list[dict], *, seed: int, papers: int, echo=print) -> None:
    from assistant.evals.pdf_render import PaperPage, render_paper_pdf
    from kb.pdf_reader import read_pdf
    from tools.text_search import search_uploaded

    with tempfile.TemporaryDirectory(prefix="evidentia-pdf-text-") as tmp:
        for n, pages in enumerate(paper_pages(settings, seed, papers)):
            two = n % 2 == 1
            pdf = Path(tmp) / f"paper{n}.pdf"
            render_paper_pdf(pdf, [PaperPage(heading=h, sentences=s) for h, s in pages], two_columns=two,
                             references=["A. Author. A cited paper. J. Evid. 2020;1:1-9."])
            doc = read_pdf(pdf)
            flat = _norm(doc.text)
            squeezed_offsets = _squeeze_map(doc.text)
            right = total = 0
            for page_no, (_h, sents) in enumerate(pages, 1):
                for s in sents:
                    total += 1
                    at = flat.find(_norm(s))
                    if at >= 0 and doc.page_at(squeezed_offsets[at]) == page_no:
                        right += 1
            # The same content as a .txt: each page's heading as its own paragraph, then its sentences.
            original = "\n\n".join((f"{h}\n\n" if h else "") + " ".join(s) for h, s in pages)
            queries = [" ".join(s.split()[:8]) for _h, sents in pages for s in sents[1:2]]
            same_top = 0
            for q in queries:
                a = [_norm(x[1]) for x in search_uploaded([("paper.pdf", doc.text)], q, 5)]
                b = [_norm(x[1]) for x in search_uploaded([("paper.txt", original)], q, 5)]
                same_top += a == b
            log.append({"part": "text", "id": f"paper{n}", "two_columns": two, "pages": len(pages),
                        "sentences": total, "pages_right": right, "queries": len(queries), "same_top5": same_top,
                        "notes": doc.notes})
            echo(f"  paper{n} ({'two' if two else 'one'} column): pages right {right}/{total}, "
                 f"same top-5 {same_top}/{len(queries)}")


def _squeeze_map(text: str) -> list[int]:
    """For each character of the whitespace-collapsed text, its offset in ``text``."""
    out, prev_space = [], True
    for i, ch in enumerate(text):
        if ch.isspace():
            if not prev_space:
                out.append(i)
            prev_space = True
        else:
            out.append(i)
            prev_space = False
    return out


# -- summary, report --------------------------------------------------------------------------------
def summarise(records: list[dict], styles: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """The report's figures from the per-item records (also what recompute checks)."""
    variants: dict[str, dict[str, Any]] = {}
    for bench in ("scitab", "wikitablequestions"):
        for style in styles:
            recs = [r for r in records if r["part"] == "table" and r["benchmark"] == bench and r["style"] == style]
            undrawn = [r for r in recs if r["error"].startswith("not drawn")]
            recs = [r for r in recs if r not in undrawn]
            if not recs:
                continue
            cells, headers = sum(r["cells"] for r in recs), sum(r["headers"] for r in recs)
            variants[f"{bench} tables, {style}"] = {
                "tables": len(recs), "found": round(sum(r["found"] for r in recs) / len(recs), 4),
                "cell_accuracy": round(sum(r["cells_right"] for r in recs) / cells, 4) if cells else None,
                "header_accuracy": round(sum(r["headers_right"] for r in recs) / headers, 4) if headers else None,
                "exact_tables": round(sum(r["exact"] for r in recs) / len(recs), 4), "not_drawn": len(undrawn)}
    claims = [r for r in records if r["part"] == "claim"]
    if claims:
        def right(r: dict, variant: str) -> bool:
            verdict = r.get(variant)
            if verdict == "same table" or (variant == "original" and verdict is None):
                verdict = r.get("original") or "same"  # identical input: the original's verdict, or unrun
                return verdict == "same" or verdict == r["gold"]
            return verdict == r["gold"]

        run_original = [r for r in claims if r.get("original") is not None]
        for style in styles:
            ran = [r for r in run_original if r.get(style) != "same table"]
            lost = sum(right(r, "original") for r in ran) - sum(right(r, style) for r in ran)
            variants[f"scitab claims, {style}"] = {
                "claims": len(claims), "on_changed_tables": len(ran),
                "accuracy_loss_points": round(100 * lost / len(claims), 2),
                "original_right_on_changed": sum(right(r, "original") for r in ran),
                "pdf_right_on_changed": sum(right(r, style) for r in ran)}
    text = [r for r in records if r["part"] == "text"]
    if text:
        variants["text"] = {
            "papers": len(text), "sentences": sum(r["sentences"] for r in text),
            "page_accuracy": round(sum(r["pages_right"] for r in text) / max(1, sum(r["sentences"] for r in text)), 4),
            "same_top5": round(sum(r["same_top5"] for r in text) / max(1, sum(r["queries"] for r in text)), 4)}
    return variants


def register(group) -> None:
    @group.command("pdf")
    @click.option("--tables", "table_sample", default=TABLE_SAMPLE, show_default=True,
                  help="Dev tables per benchmark (each drawn in every style).")
    @click.option("--claims", "claim_sample", default=CLAIM_SAMPLE, show_default=True,
                  help="SciTab dev claims (0: skip the claims, which need the model server).")
    @click.option("--papers", default=TEXT_PAPERS, show_default=True, help="Generated multi-page papers.")
    @click.option("--seed", default=DEFAULT_SEED, show_default=True)
    @click.option("--docs-dir", type=click.Path(path_type=Path), default=None, hidden=True)
    def pdf_command(table_sample: int, claim_sample: int, papers: int, seed: int, docs_dir: Path | None) -> None:
        """Extraction fidelity of PDF uploads: tables (cells, headers), claims on read tables, text pages."""
        from assistant.evals.pdf_render import STYLES
        from assistant.evals.report import DOCS_DIR, code_version, write_eval
        from assistant.settings import Settings

        settings = Settings()
        if not settings.eval_data_dir or not settings.kb_mirror_dir:
            raise click.ClickException("Set EVIDENTIA_EVAL_DATA_DIR and EVIDENTIA_KB_MIRROR_DIR (../shared/...).")
        records: list[dict] = []
        t0 = time.perf_counter()
        click.echo(f"tables: {table_sample} dev tables of SciTab and of WikiTableQuestions, styles {', '.join(STYLES)}")
        read_tables = run_tables(settings, records, seed=seed, sample=table_sample, styles=STYLES, echo=click.echo)
        click.echo(f"text: {papers} generated papers")
        run_text(settings, records, seed=seed, papers=papers, echo=click.echo)
        if claim_sample:
            click.echo(f"claims: {claim_sample} SciTab dev claims")
            asyncio.run(run_claims(settings, records, read_tables, seed=seed, sample=claim_sample, styles=STYLES,
                                   echo=click.echo))
        out = (docs_dir or DOCS_DIR) / "eval"
        out.mkdir(parents=True, exist_ok=True)
        commit = code_version() or ""
        with (out / LOG_NAME).open("w", encoding="utf-8") as fh:
            for rec in records:
                fh.write(json.dumps({**rec, "commit": commit}) + "\n")
        variants = summarise(records, STYLES)
        notes = NOTES.format(seconds=time.perf_counter() - t0, commit=commit or "unknown", seed=seed,
                             rows=MAX_DRAWN_ROWS, cols=MAX_DRAWN_COLS)
        write_eval("pdf", model=settings.llm_model if claim_sample else "none (tables and text need no model)",
                   items=len(records), seed=seed, variants=variants, docs_dir=docs_dir, notes=notes,
                   extra={"styles": list(STYLES), "log": f"docs/eval/{LOG_NAME}",
                          "majority_baseline": None, "split": "dev"},
                   chart_metric="cell_accuracy")


NOTES = """\
How it was measured (`evidentia eval pdf`, commit {commit}, seed {seed}, {seconds:.0f} s): dev tables only (SciTab's
tuning claims' tables, table-disjoint from its test subset; WikiTableQuestions' training tables). Each table is drawn
(at most {rows} rows and {cols} columns: a longer table would be split across pages) into a one-page PDF with
reportlab in three styles (ruled: every cell boxed; booktabs: three horizontal rules; plain:
no lines), read back by the upload path, and compared with the table as the benchmark loader reads it, cell by cell
at the same position. Characters outside Latin-1 cannot be drawn by the standard PDF fonts: they are scored against
what was drawn ("?"). Claims: each SciTab dev claim is checked on the original table and on each style's read table;
where a read table equals the original exactly, the checker's input is identical and the verdict is not run again.
The loss is (original right − PDF right) over all claims. Text: generated papers of PubMedQA abstracts, one and two
columns, with a running header, page numbers and references: the page of each sentence, and whether the top 5 of the
upload search over the PDF's text equals that over the same text as a .txt. There is no test split here: nothing was
tuned on these tables beyond the reader's unit tests, and the baselines of a claim benchmark do not apply (the
figure is a difference between two readings of the same claims).
"""
