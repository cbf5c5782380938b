"""``evidentia eval scitab|pubhealthtab|tabfact``: table claim verification, the program variants (#13) and the
four UCRET ablations; ``evidentia eval wikitablequestions``: table QA scored by denotation.

Every benchmark table goes through the same normaliser as uploads (``kb.tables``), every claim
through ``tools.verify_claim.check_claim``. Per-item results are appended to a JSONL log under
``<data_dir>/eval`` keyed by (variant, item id), so an interrupted run resumes where it stopped;
the report (accuracy, macro F1, per-label P/R/F1, confusion matrix, median latency) is written
to ``docs/eval/<benchmark>.{json,md,png}`` from everything logged for the selected items.

Item selection: SciTab uses a fixed 300-claim subset drawn with ``--seed`` (ids recorded in the
JSON); PubHealthTab (test, 194) and TabFact (small test, 1,998) use all items in a seeded order,
so ``--limit N`` is a fixed, label-mixed sample. Items are run variant-inside-item, so a short
run gives every variant the same claims.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import statistics
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import click

from kb.tables import Table, grid_from_html, split_html_header, table_from_grid

LABELS3 = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
LABELS2 = ("SUPPORTS", "REFUTES")
DEFAULT_SEED = 0
# What a table eval logs of each outcome's programs: what the replay (tools.program_replay) votes again
# (the raw runs and the samples per request) and what a reader checks. One set for claims and questions alike.
LOGGED_PROGRAM_FIELDS = frozenset({"program_form", "columns_needed", "not_in_table", "runs", "votes", "retried",
                                   "batches"})
SCITAB_SUBSET = 300
# The code stamp of a prediction taken from the published report rather than this machine's log.
CARRIED = "carried from the published report"

THESIS_NOTES = """\
Published (thesis, UCRET with Llama-3.3-70B on one A6000/A100; methods.md §3): PubHealthTab 81.41, SciTab 60.88;
without column filtering 74.25 / 54.66; without CCoE 77.32 / 56.12; Qwen2.5-14B (full) 58.27 / 40.85.
Ours runs Qwen2.5-Coder-1.5B-Instruct (the served default weights, vLLM on 2 CPU cores): a model about 47x smaller than
Llama-3.3-70B and 9x smaller than Qwen2.5-14B, so absolute accuracy is not comparable; compare the variants
with each other (same model, same items). MiniLM-L6 embeddings replace the thesis's encoder in the filter.
"""
THESIS = {
    "pubhealthtab": {"model": "Llama-3.3-70B", "full": 81.41, "no-filter": 74.25, "no-ccoe": 77.32,
                     "qwen2.5-14b-full": 58.27},
    "scitab": {"model": "Llama-3.3-70B", "full": 60.88, "no-filter": 54.66, "no-ccoe": 56.12,
               "qwen2.5-14b-full": 40.85},
    "tabfact": {"model": "none published in the thesis"},
}


@dataclass
class ClaimItem:
    id: str
    claim: str
    label: str
    table: Table


# -- loaders ------------------------------------------------------------------------------------
def load_scitab(eval_dir: Path) -> list[ClaimItem]:
    data = json.loads((eval_dir / "scitab" / "sci_tab.json").read_text(encoding="utf-8"))
    tables: dict[str, Table] = {}
    items = []
    for rec in data:
        tid = rec["table_id"]
        if tid not in tables:
            tables[tid] = table_from_grid(rec["table_content_values"], header=rec["table_column_names"],
                                          name=tid, title=rec.get("table_caption") or rec.get("paper") or tid,
                                          source=f"SciTab {rec.get('paper_id', '')}".strip())
        items.append(ClaimItem(id=rec["id"], claim=rec["claim"], label=rec["label"].upper(), table=tables[tid]))
    return items


def pubhealthtab_table(rec: dict, name: str) -> Table:
    """A PubHealthTab record's table, from its flattened grid or, where that grid is broken, its HTML.

    The flattened form keeps row headers apart (``header_vertical``: put back as column 1). For 61 of the
    194 test tables it is broken: cells under a rowspan are dropped, so later cells slide left into the
    wrong column, and multi-row headers are flattened into one long list. Those tables are read from the
    page's ``html_code`` instead, with the spans expanded (``grid_from_html``).
    """
    t = rec["table"]
    header = list(t.get("header_horizontal") or [])
    rows = [list(r) for r in t.get("rows") or []]
    vertical = list(t.get("header_vertical") or [])
    title = t.get("caption") or t.get("website_title") or name
    if t.get("html_code") and flattened_grid_is_broken(header, rows, vertical):
        return pubhealthtab_html_table(t["html_code"], name=name, title=title, source=t.get("website", ""))
    if vertical:
        rows = [[vertical[i] if i < len(vertical) else ""] + r for i, r in enumerate(rows)]
        width = max(len(r) for r in rows) if rows else 0
        if header and len(header) < width:
            header = [""] * (width - len(header)) + header  # the corner cell above the row headers
    if not header:  # no horizontal header in the source: name the columns, never promote a data row
        header = [""] * max((len(r) for r in rows), default=0)
    return table_from_grid(rows, header=header, name=name, title=title, source=t.get("website", ""))


def table_fingerprint(table: Table) -> str:
    """A short hash of what the checker sees (:meth:`kb.tables.Table.fingerprint`), logged with each check so that a
    change in how a benchmark's tables are read makes the affected checks run again instead of mixing readings."""
    return table.fingerprint()


def flattened_grid_is_broken(header: list, rows: list[list], vertical: list) -> bool:
    """Ragged rows (cells dropped under spans) or more header names than columns (stacked header rows)."""
    widths = {len(r) for r in rows}
    width = max(widths, default=0) + (1 if vertical else 0)
    return len(widths) > 1 or len(header) > width


_MOJIBAKE_SPACE = re.compile(r"^(?:[\u00c2\u00a0]\s*)+|(?:\s*[\u00c2\u00a0])+$")


def pubhealthtab_html_table(html: str, *, name: str, title: str, source: str) -> Table:
    grid, head_rows = grid_from_html(html)
    # "Â" is a non-breaking space mis-decoded by the crawl: blank at either end of a cell.
    grid = [[_MOJIBAKE_SPACE.sub("", v) for v in row] for row in grid]
    header, body, _ = split_html_header(grid, head_rows)
    if header is None:  # as for the flattened grids: name the columns, never promote a data row
        header = [""] * max((len(r) for r in grid), default=0)
    return table_from_grid(body, header=header, name=name, title=title, source=source)


def load_pubhealthtab(eval_dir: Path, split: str = "test") -> list[ClaimItem]:
    path = eval_dir / "pubhealthtab" / f"pubhealthtab_{split}set.jsonl"
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            items.append(ClaimItem(id=rec["_id"], claim=rec["claim"], label=rec["label"].upper(),
                                   table=pubhealthtab_table(rec, name=f"pubhealthtab-{rec['_id']}")))
    return items


def load_tabfact(eval_dir: Path) -> list[ClaimItem]:
    tables: dict[str, Table] = {}
    items = []
    for line in (eval_dir / "tabfact" / "tabfact_small_test.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        tid = rec["table_id"]
        if tid not in tables:
            tables[tid] = table_from_grid(rec["table_rows"], header=rec["table_header"], name=tid,
                                          title=rec.get("table_caption") or tid, source="TabFact")
        label = rec.get("label_text") or ("SUPPORTS" if rec["label"] == 1 else "REFUTES")
        items.append(ClaimItem(id=rec["id"], claim=rec["statement"], label=label, table=tables[tid]))
    return items


BENCHMARKS = {
    "scitab": (load_scitab, LABELS3, "SciTab (1,224 claims; fixed 300-claim subset by seed)"),
    "pubhealthtab": (load_pubhealthtab, LABELS3, "PubHealthTab test set (194 claims)"),
    "tabfact": (load_tabfact, LABELS2, "TabFact small test (1,998 statements, two labels; fixed 500 by seed)"),
}
TABFACT_SUBSET = 500
SPLITS = ("test", "dev")
# What each benchmark tunes on (#75): items whose table shares no fingerprint with any item of the test selection,
# so that a rule fitted on a dev claim is never fitted on a test table. Before 2026-12-06 the dev items of TabFact
# and SciTab were the claims outside the test subset, many of them on test tables, and PubHealthTab's eval split
# shared tables with its test split on 87 of its 195 claims.
DEV_DESCRIPTION = {
    "scitab": "SciTab claims outside the fixed 300-claim test subset, on tables none of its claims use",
    "pubhealthtab": "PubHealthTab eval-split claims on tables no test claim uses",
    "tabfact": "TabFact small-test statements outside the fixed 500-statement test subset, on tables none of "
               "them use",
}


def load_split(benchmark: str, eval_dir: Path, split: str) -> list[ClaimItem]:
    """The items a split draws from; PubHealthTab's dev split keeps only the eval claims on tables no test claim
    uses (the other benchmarks ship one split here, which :func:`select_items` divides)."""
    loader = BENCHMARKS[benchmark][0]
    if benchmark == "pubhealthtab" and split == "dev":
        test_tables = {table_fingerprint(it.table) for it in load_pubhealthtab(eval_dir, "test")}
        return [it for it in load_pubhealthtab(eval_dir, "eval") if table_fingerprint(it.table) not in test_tables]
    return loader(eval_dir)


def select_items(benchmark: str, items: list[ClaimItem], *, seed: int, limit: int | None,
                 split: str = "test") -> list[ClaimItem]:
    """The fixed, seeded selection (see the module docstring); ``limit`` takes its first N.

    ``split="dev"`` gives the tuning items: PubHealthTab's table-disjoint eval claims as loaded (seeded order), and
    for SciTab and TabFact the items outside the test subset whose table no test item uses, in seeded order.
    """
    ordered = sorted(items, key=lambda it: it.id)
    rng = random.Random(seed)
    if benchmark == "scitab":
        test = rng.sample(ordered, min(SCITAB_SUBSET, len(ordered)))
        chosen = test if split == "test" else _rest(ordered, test, seed)
    else:
        rng.shuffle(ordered)
        if benchmark == "tabfact":
            test = ordered[:TABFACT_SUBSET]
            chosen = test if split == "test" else ordered[TABFACT_SUBSET:]
        else:
            test, chosen = [], ordered
    if split == "dev" and test:
        test_tables = {table_fingerprint(it.table) for it in test}
        chosen = [it for it in chosen if table_fingerprint(it.table) not in test_tables]
    return chosen[:limit] if limit else chosen


def _rest(ordered: list[ClaimItem], taken: list[ClaimItem], seed: int) -> list[ClaimItem]:
    ids = {it.id for it in taken}
    rest = [it for it in ordered if it.id not in ids]
    random.Random(seed).shuffle(rest)
    return rest


# -- running ------------------------------------------------------------------------------------
def layout_suffix(settings) -> str:
    """The table-program prompt's configuration in a log's and a report's name where it is not the default, so a run
    under another layout (``EVIDENTIA_TABLE_PROMPT_LAYOUT``) or with worked examples (``EVIDENTIA_TABLE_EXAMPLES``,
    from a bank other than the shipped one: ``EVIDENTIA_TABLE_PROGRAM_BANK``) neither resumes from nor overwrites
    the default's."""
    fields = type(settings).model_fields
    suffix = "" if settings.table_prompt_layout == fields["table_prompt_layout"].default \
        else f"-{settings.table_prompt_layout}"
    if settings.table_chooser != fields["table_chooser"].default:
        suffix += f"-{settings.table_chooser}"
    if settings.table_examples != fields["table_examples"].default:
        bank = settings.table_program_bank
        suffix += f"-examples{settings.table_examples}" + (f"-{_slug(Path(bank).stem)}" if bank else "")
    return suffix


def run_config_suffix(settings, split: str, exploratory: bool) -> str:
    """:func:`layout_suffix` for a run on ``split``; a sealed test run publishes the default configuration only."""
    suffix = layout_suffix(settings)
    if suffix and split == "test" and not exploratory:
        raise click.ClickException("A sealed test run publishes the default configuration: unset "
                                   "EVIDENTIA_TABLE_PROMPT_LAYOUT, EVIDENTIA_TABLE_EXAMPLES and "
                                   "EVIDENTIA_TABLE_CHOOSER, or add --exploratory.")
    return suffix


def prompt_config(settings) -> dict:
    """What a logged check records of the program prompt's configuration (see :func:`layout_suffix`)."""
    bank = settings.table_program_bank
    return {"prompt_layout": settings.table_prompt_layout, "examples": settings.table_examples,
            "chooser": settings.table_chooser,
            **({"program_bank": str(bank)} if bank and settings.table_examples else {})}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")


def _invalid_rate(records: list[dict]) -> float | None:
    """Share of checks whose cited cells were all outside the collapsed table (None without records)."""
    return sum(1 for r in records if r.get("citations_valid") is False) / len(records) if records else None


def summarize(records: list[dict], labels: tuple[str, ...]) -> dict:
    from assistant.evals.report import classification_metrics

    golds = [r["gold"] for r in records]
    preds = [r["pred"] for r in records]
    m = classification_metrics(golds, preds, labels)
    lat = [r["latency_s"] for r in records if r.get("latency_s") is not None]
    return {"accuracy": m["accuracy"], "macro_f1": m["macro_f1"], "n": m["n"],
            "median_latency_s": statistics.median(lat) if lat else None, "timed_items": len(lat),
            "errors": sum(1 for r in records if r.get("error")),
            "invalid_citation_rate": _invalid_rate(records),
            # Since the judge's grammar admits only the view's own cells (logged as cells_constrained);
            # earlier records were checked in code only.
            "invalid_citation_rate_constrained": _invalid_rate([r for r in records if r.get("cells_constrained")]),
            "per_label": m["per_label"], "confusion": m["confusion"],
            # The program variants: how often code decided rather than the CCoE fallback (#13).
            **({"decided_by": dict(Counter(r["decided_by"] for r in records if r.get("decided_by")))}
               if any(r.get("decided_by") for r in records) else {})}


async def run_benchmark(benchmark: str, settings, *, variants: list[str], limit: int | None = None,
                        seed: int = DEFAULT_SEED, filter_method: str = "cosine", llm=None, embedder=None,
                        docs_dir: Path | None = None, echo=print, report_only: bool = False,
                        concurrency: int = 1, retry_errors: bool = False, split: str = "test",
                        rerun_published: bool = False, exploratory: bool = False) -> Path:
    """Run (or resume) ``benchmark`` for ``variants`` and write the report; returns the JSON path.

    ``concurrency`` checks are in flight at once; each check's ``latency_s`` is then its wall time while
    sharing the server, so the single-claim latency belongs in the benchmark (tests/bench/bench_tables.py).

    On the test split a run is sealed (:mod:`assistant.evals.sealed`): only checks made by this commit's code count
    (none is carried from a published report or an older log), the run is counted in the ledger, and the report
    records its commit, date and tuning split. ``exploratory`` runs go to the data folder, never to docs/.
    """
    from assistant.evals.report import (ResultsLog, bounded_map, label_baselines, mcnemar, paired_notes, provenance,
                                        write_eval)
    from assistant.evals.sealed import SealedRun
    from assistant.llm import LLMClient
    from kb.errors import LLMResponseError, LLMTimeout
    from tools.verify_claim import PROGRAM_VARIANTS, check_claim

    if settings.eval_data_dir is None or not Path(settings.eval_data_dir).exists():
        raise click.ClickException("Benchmark data not found: set EVIDENTIA_EVAL_DATA_DIR (e.g. ../shared/eval-data).")
    _, labels, description = BENCHMARKS[benchmark]
    if split == "dev":
        description = DEV_DESCRIPTION[benchmark] + " (the tuning split: not a reported result)"
    selection = select_items(benchmark, load_split(benchmark, Path(settings.eval_data_dir), split), seed=seed,
                             limit=None, split=split)
    items = selection[:limit] if limit else selection
    layout = run_config_suffix(settings, split, exploratory)
    own_llm = llm is None
    llm = llm or LLMClient(settings)
    # The program variants' CCoE fallback filters columns like "full" does.
    if embedder is None and not report_only and any(v in ("full", "no-ccoe") + PROGRAM_VARIANTS for v in variants):
        from kb.embeddings import Embedder

        embedder = Embedder(settings.embedding_model)
    suffix = ("" if filter_method == "cosine" else f"-{filter_method}") + ("" if split == "test" else f"-{split}") \
        + layout
    name = (benchmark if split == "test" else f"{benchmark}-{split}") + layout
    run = SealedRun(benchmark, split, exploratory, settings, docs_dir)
    docs_dir = run.report_dir
    # The published report: its per-item predictions resume a run begun elsewhere and fill the report below
    # (never in a sealed run: its checks are all this commit's).
    earlier = {} if run.sealed else earlier_report(docs_dir, name, seed)
    published = earlier.get("predictions", {})
    fingerprints = {it.id: table_fingerprint(it.table) for it in selection}

    def current(rec: dict) -> bool:
        """Whether a logged check saw the table as it is read now (records from before fingerprints count), and in
        a sealed run whether this commit's code made it."""
        return run.made_here(rec) and rec.get("table_sha") in (None, fingerprints.get(str(rec["id"])))

    try:
        if report_only:
            variants = []
        else:
            await llm.list_models()  # fail fast, with the client's clear message, if the server is down
            await llm._ensure_model()
        log = ResultsLog(settings.data_dir / "eval" / f"tables-{benchmark}-{_slug(llm.model)}{suffix}.jsonl")

        def pending(variant: str, item_id: str) -> bool:
            rec = log.get(variant, item_id)
            if rec is None:
                # Checked on another machine and published: an evaluation resumes across machines (its
                # per-item log stays behind), unless errors are to be retried or the published checks are to be
                # run again under today's rules (this machine's record then wins in the report).
                pred = published.get(variant, {}).get(item_id)
                return pred is None or rerun_published or (retry_errors and pred == "ERROR")
            return not current(rec) or (retry_errors and "error" in rec)

        todo = sum(1 for it in items for v in variants if pending(v, it.id))
        stale = sum(1 for it in items for v in variants if (rec := log.get(v, it.id)) and not current(rec))
        if stale:
            echo(f"{stale} checks were logged " + ("by another commit's code or " if run.sealed else "")
                 + "against an earlier reading of their table; they are run again.")
        echo(f"{benchmark}: {len(items)} items x {len(variants)} variants; {todo} checks to run "
             f"(the rest resume from {log.path})")
        done = skipped = 0

        async def run_one(job) -> None:
            nonlocal done, skipped
            item, variant = job
            t0 = time.perf_counter()
            try:
                check = await check_claim(llm, item.table, item.claim, embedder=embedder, variant=variant,
                                          labels=labels, filter_method=filter_method, seed=seed)
            except LLMTimeout as exc:  # a busy server is not a wrong answer: leave the item for the next run
                skipped += 1
                echo(f"  {variant:9s} {item.id}: skipped, {exc} It is checked on the next run.")
                return
            except LLMResponseError as exc:  # a bad answer counts as a wrong one, and is logged
                log.add(variant, item.id, gold=item.label, pred="ERROR", error=str(exc)[:300],
                        latency_s=time.perf_counter() - t0, table_sha=fingerprints[item.id])
                echo(f"  {variant:9s} {item.id}: ERROR {str(exc)[:100]}")
                return
            done += 1
            log.add(variant, item.id, gold=item.label, pred=check.label, latency_s=check.timings["total_s"],
                    timings=check.timings, cells=check.cell_refs, invalid_cells=check.invalid_cells,
                    citations_valid=check.citations_valid, kept_cols=check.cols, n_cols=item.table.n_cols,
                    n_rows=item.table.n_rows, reason=check.reason, explanations=check.explanations,
                    concurrency=concurrency, cells_constrained=True, table_sha=fingerprints[item.id],
                    **prompt_config(settings), decided_by=check.decided_by,
                    confidence=check.confidence,
                    programs=check.programs.model_dump(include=LOGGED_PROGRAM_FIELDS) if check.programs else None)
            echo(f"  [{done}/{todo}] {variant:9s} {item.id}: {check.label} (gold {item.label}) "
                 f"{check.timings['total_s']:.1f}s, {len(check.cols)}/{item.table.n_cols} cols")

        # Item-major order: an interrupted run leaves every variant with (nearly) the same items checked.
        jobs = [(item, v) for item in items for v in variants if pending(v, item.id)]
        await bounded_map(run_one, jobs, concurrency)
        if skipped:
            echo(f"{skipped} checks timed out and were not logged; run the same command again to do them.")
        if not report_only:
            run.record(items=len(items), checked=done, variants=variants)
    finally:
        if own_llm:
            await llm.aclose()

    ids = [it.id for it in items]
    selected = set(ids)
    results = {}
    from tools.verify_claim import SQL_VARIANTS, VARIANTS

    gold = {it.id: it.label for it in items}
    records_by_variant = {v: [r for r in log.records(v) if r["id"] in selected and current(r)] for v in VARIANTS}
    carried = {}
    for variant, preds in published.items():
        # Predictions published by an earlier run (another machine's log) still count, item by item; this
        # machine's own record of an item wins. Their latencies are not published, so the median latency
        # is over the items timed here.
        if variant in VARIANTS:
            own = {str(r["id"]) for r in records_by_variant[variant]}
            extra = [{"id": i, "gold": gold[i], "pred": p, "commit": CARRIED} for i, p in preds.items()
                     if i in gold and i not in own]
            if extra:
                records_by_variant[variant] = records_by_variant[variant] + extra
                carried[variant] = len(extra)
    predictions = {v: {str(r["id"]): r["pred"] for r in recs} for v, recs in records_by_variant.items() if recs}
    code = {v: provenance(recs) for v, recs in records_by_variant.items() if recs}
    baselines = label_baselines([it.label for it in items])  # always-one-label accuracy on these claims (#18)
    majority = baselines.get("majority_label")
    for variant in VARIANTS:
        if records_by_variant.get(variant):
            recs = records_by_variant[variant]
            results[variant] = summarize(recs, labels)
            # A variant run on part of the items is compared with the constant on *its* items (#18): a
            # subset can be richer in the majority label than the whole set.
            results[variant]["majority_baseline_same_items"] = (
                sum(r["gold"] == majority for r in recs) / len(recs) if majority else None)
    summaries_only = []
    for variant, summary in earlier.get("variants", {}).items():
        # Reports from before per-item predictions were published: keep their numbers, unpaired and marked.
        if variant in VARIANTS and variant not in results:
            results[variant] = {**summary, "from_earlier_run": True}
            summaries_only.append(variant)
    # Complete means the whole fixed selection (300 SciTab claims, 194 PubHealthTab...) in every variant
    # (the SQL program form's only where it was run: an experiment beside the default set).
    complete = all(results.get(v, {}).get("n") == len(selection) for v in VARIANTS
                   if v not in SQL_VARIANTS or v in results)
    # Paired exact McNemar against full (and program against each variant), on the claims both checked.
    correct = {v: {r["id"]: r["pred"] == r["gold"] for r in recs} for v, recs in records_by_variant.items() if recs}
    paired = {f"full vs {v}": mcnemar(correct["full"], correct[v]) for v in correct if v != "full"} \
        if "full" in correct else {}
    if "program" in correct:
        paired.update({f"program vs {v}": mcnemar(correct["program"], correct[v]) for v in correct
                       if v not in ("program", "full")})
    if "program+ccoe" in correct and "program-sql+ccoe" in correct:  # the two program forms' ensembles (#13)
        paired["program+ccoe vs program-sql+ccoe"] = mcnemar(correct["program+ccoe"], correct["program-sql+ccoe"])
    measured = ", ".join(f"{v}: n={r['n']}, median {r['median_latency_s']:.1f} s/claim"
                         for v, r in results.items() if r.get("median_latency_s") is not None)
    if complete:
        coverage = "complete"
    elif len(items) < len(selection):
        coverage = f"PARTIAL run: {len(items)} of the {len(selection)} selected items"
    else:  # every item was checked by some variant, not by all: the per-variant n below says which
        not_run = [v for v in VARIANTS if v not in results and v not in SQL_VARIANTS]
        coverage = (f"PARTIAL run: not every variant covers all {len(selection)} selected items"
                    + (f"; not run: {', '.join(not_run)}" if not_run else ""))
    stamp = run.stamp(DEV_DESCRIPTION[benchmark])
    notes = (run.note(stamp) + f"{description}. Selection seed {seed}; {coverage} "
             f"({measured}). Column filter: {filter_method}.\n\n"
             + ("Carried over from the published report's per-item predictions (checked on another machine; "
                "latencies are of the items checked here): "
                + ", ".join(f"{v} ({n} items)" for v, n in carried.items()) + ".\n\n" if carried else "")
             + (f"Numbers only, from the earlier published report (its per-item log is not on this machine, so "
                f"they are not paired with the new variants): {', '.join(summaries_only)}.\n\n"
                if summaries_only else "")
             + provenance_note(code)
             + ("\n".join(paired_notes(paired, "claims")) + "\n\n" if paired else "") + THESIS_NOTES)
    extra = {"labels": list(labels), "complete": complete, "filter_method": filter_method, "split": split,
             "item_ids": ids, "selection_size": len(selection), "selection_ids": [it.id for it in selection],
             "thesis": THESIS[benchmark], "log": str(log.path), "paired": paired, "provenance": code,
             # Our own outputs, item by item (no dataset text): what lets a later run pair with this one.
             "predictions": predictions,
             **baselines, **stamp}
    return write_eval(name, model=llm.model, items=len(items),
                      seed=seed, variants=results, notes=notes, extra=extra, docs_dir=docs_dir,
                      metric_keys=["accuracy", "majority_baseline_same_items", "macro_f1", "n", "median_latency_s",
                                   "invalid_citation_rate", "invalid_citation_rate_constrained"])


def provenance_note(code: dict[str, dict[str, int]]) -> str:
    """One line naming the code behind each variant's predictions, "" when none was run; a report over more than
    one commit (a run resumed across sessions, or carried from another machine) says so instead of mixing them."""
    if not code:
        return ""
    parts = []
    for variant, counts in code.items():
        stamps = ", ".join(f"{n} at {stamp}" if stamp != CARRIED else f"{n} {stamp}" for stamp, n in counts.items())
        parts.append(f"{variant}: {stamps}" + (" (MORE THAN ONE CODE VERSION)" if len(counts) > 1 else ""))
    return "Code behind the predictions: " + "; ".join(parts) + ".\n\n"


def earlier_report(docs_dir: Path | None, name: str, seed: int) -> dict:
    """The published ``docs/eval/<name>.json`` when it used the same seed, else ``{}``."""
    from assistant.evals.report import DOCS_DIR

    path = (docs_dir or DOCS_DIR) / "eval" / f"{name}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if data.get("seed") == seed else {}


# -- WikiTableQuestions (#13): free-form table QA scored by denotation ----------------------------------
WTQ_SUBSET = 300
WTQ_VARIANTS = ("program", "llm")  # voted programs with the model's answer as fallback; the model alone
WTQ_SQL_VARIANT = "program-sql"  # the same with SQL programs (#13's comparison of program forms); run on request


@dataclass
class QAItem:
    id: str
    question: str
    answers: list[str]
    table: Table


def wtq_table(path: Path, context: str) -> Table:
    """A WTQ CSV (quotes escaped with a backslash, not doubled) through the uploads' normaliser."""
    import csv
    import io

    text = path.read_text(encoding="utf-8")
    grid = [row for row in csv.reader(io.StringIO(text), escapechar="\\", doublequote=False)]
    header, body = (grid[0], grid[1:]) if grid else ([], [])
    return table_from_grid(body, header=header, name=context.replace("/", "-"), title=context,
                           source="WikiTableQuestions")


def load_wtq(wtq_dir: Path, split: str = "pristine-unseen-tables") -> list[QAItem]:
    """WTQ questions of ``split`` (``data/<split>.tsv``) with their CSV tables."""
    import csv

    path = wtq_dir / "data" / f"{split}.tsv"
    if not path.exists():
        path = wtq_dir / f"{split}.tsv"
    tables: dict[str, Table] = {}
    items = []
    with path.open(encoding="utf-8", newline="") as fh:
        for rec in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
            context = rec["context"]
            if context not in tables:
                tables[context] = wtq_table(wtq_dir / context, context)
            answers = [a.replace("\\n", " ").replace("\\p", "|").replace("\\\\", "\\")
                       for a in rec["targetValue"].split("|")]
            items.append(QAItem(id=rec["id"], question=rec["utterance"], answers=answers, table=tables[context]))
    return items


def _denotation_key(value: str) -> str | float:
    """What a WTQ value is compared as: a number when it reads as one, else normalised text."""
    from tools.table_qa import cell_number  # numbers read as the table tools read them

    text = " ".join(str(value).replace("\u2013", "-").split()).strip().strip(".").casefold()
    number = cell_number(text)
    if number is not None:
        return round(number, 6)
    import unicodedata

    text = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
    return re.sub(r"[^\w\s]", "", text).strip()


def denotation_match(predicted: str, gold: list[str]) -> bool:
    """The predicted values (split at ", " when gold has several, or at "; " when the answer lists values that
    hold commas) equal gold as a set; numbers as numbers."""
    from tools.table_qa import split_listed  # a listed answer split as the tool lists it

    parts = split_listed(predicted) if len(gold) > 1 else [p for p in [predicted] if p.strip()]
    return sorted(map(str, map(_denotation_key, parts))) == sorted(map(str, map(_denotation_key, gold)))


def wtq_answer_label(answers: list[str]) -> str:
    """A WTQ question's gold answer as one label (its values as compared, sorted): what the constant baselines count."""
    return "|".join(sorted(map(str, map(_denotation_key, answers))))


def wtq_first_option(table: Table) -> str:
    """The "first option" of a table question: the first row's first cell (its row name, usually)."""
    return str(_denotation_key(table.rows[0][0])) if table.rows and table.rows[0] else ""


def select_wtq(items: list[QAItem], *, seed: int) -> list[QAItem]:
    ordered = sorted(items, key=lambda it: it.id)
    return random.Random(seed).sample(ordered, min(WTQ_SUBSET, len(ordered)))


WTQ_SPLIT_FILES = {"test": "pristine-unseen-tables", "dev": "training"}


async def run_wtq(settings, *, variants: list[str], limit: int | None = None, seed: int = DEFAULT_SEED, llm=None,
                  docs_dir: Path | None = None, echo=print, report_only: bool = False,
                  wtq_dir: Path | None = None, split: str = "test", concurrency: int = 1,
                  exploratory: bool = False) -> Path:
    """``evidentia eval wikitablequestions``: a fixed, seeded 300-question subset, scored by denotation.

    ``split="dev"`` draws the subset from ``training.tsv`` instead (the tuning split, reported apart; its tables are
    WTQ's own training tables, none of them in pristine-unseen-tables). The test split is sealed as for the claim
    benchmarks (see :func:`run_benchmark`).
    """
    from assistant.evals.sealed import SealedRun

    config = run_config_suffix(settings, split, exploratory)
    run = SealedRun("wikitablequestions", split, exploratory, settings, docs_dir)
    docs_dir = run.report_dir
    from assistant.evals.report import (ResultsLog, bounded_map, label_baselines, mcnemar, paired_notes, provenance,
                                        write_eval)
    from assistant.llm import LLMClient
    from kb.errors import LLMResponseError, LLMTimeout
    from tools.table_qa import answer_question

    wtq_dir = wtq_dir or (Path(settings.kb_mirror_dir) / "wikitablequestions" if settings.kb_mirror_dir else None)
    if wtq_dir is None or not wtq_dir.exists():
        raise click.ClickException("WikiTableQuestions not found: set EVIDENTIA_KB_MIRROR_DIR "
                                   "(e.g. ../shared/kb-data).")
    selection = select_wtq(load_wtq(wtq_dir, WTQ_SPLIT_FILES[split]), seed=seed)
    items = selection[:limit] if limit else selection
    own_llm = llm is None
    llm = llm or LLMClient(settings)
    try:
        if report_only:
            variants = []
        else:
            await llm.list_models()
            await llm._ensure_model()
        suffix = ("" if split == "test" else f"-{split}") + config
        log = ResultsLog(settings.data_dir / "eval" / f"wikitablequestions-{_slug(llm.model)}{suffix}.jsonl")

        todo = [(it, v) for it in items for v in variants if not run.counts(log.get(v, it.id))]
        echo(f"wikitablequestions ({split}): {len(items)} questions x {len(variants)} variants; {len(todo)} to run")
        done = 0

        async def run_one(job) -> None:
            nonlocal done
            item, variant = job
            t0 = time.perf_counter()
            try:
                res = await answer_question(llm, item.table, item.question, use_filter=False,
                                            use_program=variant != "llm",
                                            program_form="sql" if variant == WTQ_SQL_VARIANT else "ops")
            except LLMTimeout as exc:
                echo(f"  {variant:8s} {item.id}: skipped, {exc}")
                return
            except LLMResponseError as exc:
                log.add(variant, item.id, gold=item.answers, pred="ERROR", correct=False, error=str(exc)[:300],
                        latency_s=time.perf_counter() - t0)
                return
            correct = denotation_match(res.answer, item.answers)
            log.add(variant, item.id, gold=item.answers, pred=res.answer, correct=correct,
                    latency_s=res.timings.get("total_s"), decided_by=res.decided_by, cells=res.cells,
                    **prompt_config(settings),
                    programs=res.programs.model_dump(include=LOGGED_PROGRAM_FIELDS) if res.programs else None)
            done += 1
            echo(f"  [{done}/{len(todo)}] {variant:8s} {item.id}: {res.answer!r} (gold {item.answers}) "
                 f"{'ok' if correct else 'wrong'}")

        await bounded_map(run_one, todo, concurrency)
        if not report_only:
            run.record(items=len(items), checked=done, variants=variants)
    finally:
        if own_llm:
            await llm.aclose()
    selected = {it.id for it in items}
    results: dict[str, dict] = {}
    correct: dict[str, dict[str, bool]] = {}
    code: dict[str, dict[str, int]] = {}
    for variant in WTQ_VARIANTS + (WTQ_SQL_VARIANT,):
        records = [r for r in log.records(variant) if r["id"] in selected and run.made_here(r)]
        if not records:
            continue
        lat = [r["latency_s"] for r in records if r.get("latency_s") is not None]
        results[variant] = {"accuracy": sum(bool(r["correct"]) for r in records) / len(records), "n": len(records),
                            "median_latency_s": statistics.median(lat) if lat else None, "timed_items": len(lat),
                            "errors": sum(1 for r in records if r.get("error")),
                            "decided_by": dict(Counter(r.get("decided_by", "error") for r in records))}
        correct[variant] = {r["id"]: bool(r["correct"]) for r in records}
        code[variant] = provenance(records)
    pairs = (("program", "llm"), ("program", WTQ_SQL_VARIANT))
    paired = {f"{a} vs {b}": mcnemar(correct[a], correct[b]) for a, b in pairs if a in correct and b in correct}
    baselines = label_baselines([wtq_answer_label(it.answers) for it in items],
                                first_labels=[wtq_first_option(it.table) for it in items])
    baselines.pop("constant_label_baselines", None)  # one per distinct answer: hundreds
    complete = all(results.get(v, {}).get("n") == len(selection) for v in WTQ_VARIANTS)
    if complete:
        coverage = "complete"
    else:  # say which part is missing: it read "PARTIAL: 300 of 300" when only the llm variant was not run
        covered = ", ".join(f"{v} {results[v]['n']}" for v in WTQ_VARIANTS if v in results)
        missing = [v for v in WTQ_VARIANTS if v not in results]
        coverage = (f"PARTIAL: questions answered per variant of the {len(selection)}: {covered or 'none'}"
                    + (f"; not run: {', '.join(missing)}" if missing else ""))
    stamp = run.stamp("WikiTableQuestions training.tsv (its own tables)")
    notes = (run.note(stamp) + f"WikiTableQuestions {WTQ_SPLIT_FILES[split]}, a fixed {len(selection)}-question "
             f"subset (seed {seed}); "
             f"{coverage}. Scored by "
             "denotation: the answer's values equal the gold values as a set, numbers compared as numbers. "
             "program: five voted table programs (five more when their vote splits), the model's own answer when "
             "none runs or the vote still splits; "
             "llm: the model's own answer over the table. The first option of a table question is taken to be "
             "the first row's first cell.\n\n" + provenance_note(code)
             + ("\n".join(paired_notes(paired, "questions")) if paired else ""))
    name = ("wikitablequestions" if split == "test" else f"wikitablequestions-{split}") + config
    return write_eval(name, model=llm.model, items=len(items), seed=seed, variants=results,
                      notes=notes, docs_dir=docs_dir, metric_keys=["accuracy", "n", "median_latency_s", "errors"],
                      extra={"complete": complete, "item_ids": [it.id for it in items], "paired": paired,
                             "provenance": code,
                             "selection_size": len(selection), "log": str(log.path), "split": split,
                             "predictions": {v: {str(r["id"]): r["pred"] for r in log.records(v)
                                                 if r["id"] in selected and run.made_here(r)}
                                             for v in results},
                             **baselines, **stamp})


def replay_wtq_log(settings, *, limit: int | None, seed: int, split: str, echo=print, wtq_dir: Path | None = None,
                   model: str | None = None):
    """``--replay``: the logged ``program`` answers against the same programs re-voted under today's rules."""
    from tools.program_replay import replay_wtq
    from assistant.evals.report import ResultsLog

    wtq_dir = wtq_dir or (Path(settings.kb_mirror_dir) / "wikitablequestions" if settings.kb_mirror_dir else None)
    if wtq_dir is None or not wtq_dir.exists():
        raise click.ClickException("WikiTableQuestions not found: set EVIDENTIA_KB_MIRROR_DIR (e.g. ../shared/kb-data).")
    selection = select_wtq(load_wtq(wtq_dir, WTQ_SPLIT_FILES[split]), seed=seed)
    items = selection[:limit] if limit else selection
    suffix = ("" if split == "test" else f"-{split}") + layout_suffix(settings)
    path = settings.data_dir / "eval" / f"wikitablequestions-{_slug(model or settings.llm_model)}{suffix}.jsonl"
    if not path.exists():
        raise click.ClickException(f"No logged answers to replay at {path}; run the evaluation first.")
    wanted = {it.id for it in items}
    records = [r for r in ResultsLog(path).records("program") if r["id"] in wanted]
    result = replay_wtq(items, records, denotation_match)
    result.echo_changes(echo)
    return result


def replay_claims_log(benchmark: str, settings, *, variant: str, limit: int | None, seed: int, split: str,
                      filter_method: str = "cosine", echo=print, model: str | None = None):
    """``--replay``: a claim benchmark's logged program checks re-voted under today's rules, paired."""
    from assistant.evals.report import ResultsLog
    from tools.program_replay import replay_claims
    from tools.rules import parse_off

    if settings.eval_data_dir is None or not Path(settings.eval_data_dir).exists():
        raise click.ClickException("Benchmark data not found: set EVIDENTIA_EVAL_DATA_DIR (e.g. ../shared/eval-data).")
    selection = select_items(benchmark, load_split(benchmark, Path(settings.eval_data_dir), split), seed=seed,
                             limit=None, split=split)
    items = selection[:limit] if limit else selection
    suffix = ("" if filter_method == "cosine" else f"-{filter_method}") + ("" if split == "test" else f"-{split}") \
        + layout_suffix(settings)
    path = settings.data_dir / "eval" / f"tables-{benchmark}-{_slug(model or settings.llm_model)}{suffix}.jsonl"
    if not path.exists():
        raise click.ClickException(f"No logged checks to replay at {path}; run the evaluation first.")
    wanted = {it.id for it in items}
    records = [r for r in ResultsLog(path).records(variant) if str(r["id"]) in wanted]
    result = replay_claims(items, records, parse_off(settings.rules_off))  # EVIDENTIA_RULES_OFF: measure a veto
    result.echo_changes(echo)
    return result


EXPLORATORY_HELP = ("Allow --replay or --limit on the test split: the look is counted in docs/eval/test-runs.jsonl "
                    "and its report goes to the data folder, never to docs/eval/.")


def _wtq_command() -> click.Command:
    @click.command("wikitablequestions",
                   help="Table QA on a fixed 300-question WikiTableQuestions subset; "
                        "writes docs/eval/wikitablequestions.*")
    @click.option("--limit", type=int, default=None, help="Only the first N questions of the fixed subset.")
    @click.option("--variant", "chosen", multiple=True, type=click.Choice(list(WTQ_VARIANTS) + [WTQ_SQL_VARIANT]),
                  help=f"Variant(s) to run (default: {', '.join(WTQ_VARIANTS)}).")
    @click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Question selection seed.")
    @click.option("--report-only", is_flag=True, help="Write the report from the results logged so far; run nothing.")
    @click.option("--split", type=click.Choice(SPLITS), default="test", show_default=True,
                  help="test: pristine-unseen-tables (reported); dev: training.tsv (the tuning split, reported "
                       "apart in docs/eval/wikitablequestions-dev.*).")
    @click.option("--concurrency", type=int, default=1, show_default=True, help="Questions answered at once.")
    @click.option("--replay", is_flag=True,
                  help="Re-vote the logged programs under the current rules (no model call) and list what changed.")
    @click.option("--exploratory", is_flag=True, help=EXPLORATORY_HELP)
    def command(limit, chosen, seed, report_only, split, concurrency, replay, exploratory):
        from assistant.evals import sealed as sealing
        from assistant.settings import Settings
        from kb.errors import LLMUnavailable

        sealing.refuse_unsealed(split, replay=replay, limit=limit, exploratory=exploratory)
        if replay:
            result = replay_wtq_log(Settings(), limit=limit, seed=seed, split=split, echo=click.echo)
            if split == "test":
                sealing.record_test_run("wikitablequestions", sealing.REPLAY, items=result.items, checked=0,
                                        variants=["program"])
            return
        try:
            asyncio.run(run_wtq(Settings(), variants=list(chosen or WTQ_VARIANTS), limit=limit, seed=seed,
                                echo=click.echo, report_only=report_only, split=split, concurrency=concurrency,
                                exploratory=exploratory))
        except LLMUnavailable as exc:
            raise click.ClickException(str(exc)) from exc

    return command


def register(group) -> None:
    from tools.verify_claim import SQL_VARIANTS, VARIANTS

    for name, (_, _, description) in BENCHMARKS.items():
        group.add_command(_command(name, description, VARIANTS, tuple(v for v in VARIANTS if v not in SQL_VARIANTS)))
    group.add_command(_wtq_command())


def _command(benchmark: str, description: str, variants: tuple[str, ...], default: tuple[str, ...]) -> click.Command:
    @click.command(benchmark, help=f"Claim verification on {description}; writes docs/eval/{benchmark}.*")
    @click.option("--limit", type=int, default=None, help="Only the first N items of the fixed selection.")
    @click.option("--variant", "chosen", multiple=True, type=click.Choice(list(variants)),
                  help=f"Variant(s) to run (default: {', '.join(default)}).")
    @click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Item selection and k-means seed.")
    @click.option("--filter-method", type=click.Choice(["cosine", "jsd"]), default="cosine", show_default=True,
                  help="UCRET (cosine) or UCRET-JS (jsd) column filter.")
    @click.option("--report-only", is_flag=True, help="Write the report from the results logged so far; run nothing.")
    @click.option("--concurrency", type=int, default=1, show_default=True,
                  help="Claims checked at once (the server batches them; per-claim latency then rises).")
    @click.option("--retry-errors", is_flag=True,
                  help="Run again the checks logged as errors (an unreadable judgement); the new result replaces them.")
    @click.option("--rerun-published", is_flag=True,
                  help="Check again the items whose result was carried from the published report (checked on "
                       "another machine, under the rules of that time); the new record replaces it in the report.")
    @click.option("--split", type=click.Choice(SPLITS), default="test", show_default=True,
                  help=f"test: the reported items; dev: the tuning items ({DEV_DESCRIPTION[benchmark]}), "
                       f"reported apart in docs/eval/{benchmark}-dev.*")
    @click.option("--replay", is_flag=True,
                  help="Re-vote the logged programs of the program variant under the current rules (no model call) "
                       "and list what changed.")
    @click.option("--exploratory", is_flag=True, help=EXPLORATORY_HELP)
    def command(limit, chosen, seed, filter_method, report_only, concurrency, retry_errors, rerun_published, split,
                replay, exploratory):
        from assistant.evals import sealed as sealing
        from assistant.settings import Settings
        from kb.errors import LLMUnavailable

        sealing.refuse_unsealed(split, replay=replay, limit=limit, exploratory=exploratory)
        if replay:
            replayed = [replay_claims_log(benchmark, Settings(), variant=variant, limit=limit, seed=seed,
                                          split=split, filter_method=filter_method, echo=click.echo)
                        for variant in chosen or ("program",)]
            if split == "test":
                sealing.record_test_run(benchmark, sealing.REPLAY, items=max(r.items for r in replayed), checked=0,
                                        variants=list(chosen or ("program",)))
            return
        try:
            asyncio.run(run_benchmark(benchmark, Settings(), variants=list(chosen or default), limit=limit,
                                      seed=seed, filter_method=filter_method, echo=click.echo,
                                      report_only=report_only, concurrency=concurrency,
                                      retry_errors=retry_errors, split=split, rerun_published=rerun_published,
                                      exploratory=exploratory))
        except LLMUnavailable as exc:
            raise click.ClickException(str(exc)) from exc

    return command
