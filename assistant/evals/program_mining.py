"""``evidentia kb programs``: mine verified table programs into the program bank (#77), and build the bank.

``mine --source S`` samples programs for each item of a training or tuning split under today's grammar and rules
(the live path) and keeps the one most of the right programs wrote (tools.program_mining: what "right" means, and
why a program right only through a rewrite rule is not kept). A claim labelled NOT ENOUGH INFO has no program to
show and is skipped. Each item's outcome is appended to a per-source log in the data folder as soon as it is known,
so an interrupted run resumes where it stopped; the log is the mining checkpoint.

``build`` writes a bank file from the mined logs. The bank that ships (kb/program_bank.jsonl) takes only sources
whose licence allows redistributing their text (WikiTableQuestions, CC BY-SA 4.0, with attribution); the evaluation
fixtures (TabFact, SciTab, PubHealthTab) are not redistributed, so a bank with them is written to the data folder
for measurements only.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import click

from kb.program_bank import DEFAULT_BANK, BankEntry, write_entries


@dataclass(frozen=True)
class Source:
    kind: str
    license: str
    shippable: bool
    benchmark: str


SOURCES = {
    "wtq-train": Source("question", "CC BY-SA 4.0, WikiTableQuestions (Pasupat and Liang, 2015), training.tsv", True,
                        "wikitablequestions"),
    "tabfact-dev": Source("claim", "MIT, TabFact (Chen et al., 2020); evaluation fixture, not redistributed", False,
                          "tabfact"),
    "scitab-dev": Source("claim", "MIT, SciTab (Lu et al., 2023); evaluation fixture, not redistributed", False,
                         "scitab"),
    "pubhealthtab-dev": Source("claim", "CC BY-NC 4.0, PubHealthTab (Akhtar et al., 2022); not redistributed", False,
                               "pubhealthtab"),
}
DEFAULT_SEED = 0


@dataclass
class MiningItem:
    id: str
    text: str
    table: object  # kb.tables.Table
    gold: list[str]  # the answers (a question) or [label] (a claim)


def mining_log_path(settings, source: str) -> Path:
    return Path(settings.data_dir) / "programs" / f"mined-{source}.jsonl"


def load_items(settings, source: str, seed: int = DEFAULT_SEED) -> list[MiningItem]:
    """The source's items in a fixed, seeded order (a limit takes the same first items every time)."""
    from assistant.evals.tables_eval import WTQ_SPLIT_FILES, load_split, load_wtq, select_items

    if source not in SOURCES:
        raise click.ClickException(f"Unknown source {source!r}; choose one of {', '.join(SOURCES)}.")
    if source == "wtq-train":
        if not settings.kb_mirror_dir or not (Path(settings.kb_mirror_dir) / "wikitablequestions").exists():
            raise click.ClickException("WikiTableQuestions not found: set EVIDENTIA_KB_MIRROR_DIR "
                                       "(e.g. ../shared/kb-data).")
        items = sorted(load_wtq(Path(settings.kb_mirror_dir) / "wikitablequestions", WTQ_SPLIT_FILES["dev"]),
                       key=lambda it: it.id)
        random.Random(seed).shuffle(items)
        return [MiningItem(it.id, it.question, it.table, list(it.answers)) for it in items]
    if settings.eval_data_dir is None or not Path(settings.eval_data_dir).exists():
        raise click.ClickException("Benchmark data not found: set EVIDENTIA_EVAL_DATA_DIR (e.g. ../shared/eval-data).")
    bench = SOURCES[source].benchmark
    items = select_items(bench, load_split(bench, Path(settings.eval_data_dir), "dev"), seed=seed, limit=None,
                         split="dev")
    return [MiningItem(str(it.id), it.claim, it.table, [it.label]) for it in items]


def dev_log_path(settings, source: str) -> Path:
    """The dev-split evaluation log of a claim source (``evidentia eval <benchmark> --split dev``)."""
    from assistant.evals.tables_eval import _slug

    return Path(settings.data_dir) / "eval" / f"tables-{SOURCES[source].benchmark}-{_slug(settings.llm_model)}-dev.jsonl"


def _from_log(settings, source: str) -> dict[str, dict]:
    """The logged program runs of a claim source's dev evaluation, by item id (``--from-log``)."""
    from assistant.evals.report import read_run_log

    if SOURCES[source].kind != "claim":
        raise click.ClickException("--from-log reads a claim benchmark's dev evaluation log; "
                                   f"{source} has none (mine it with the model).")
    path = dev_log_path(settings, source)
    if not path.exists():
        raise click.ClickException(f"No dev evaluation log at {path}: run `evidentia eval "
                                   f"{SOURCES[source].benchmark} --split dev` first, or mine with the model.")
    return {item_id: rec["programs"] for item_id, rec in read_run_log(path).get("program", {}).items()
            if (rec.get("programs") or {}).get("runs") and rec["programs"].get("program_form", "ops") == "ops"}


async def mine(settings, source: str, *, limit: int, concurrency: int = 2, per_item: int = 1, llm=None,
               echo=print, show_progress: bool = True, from_log: bool = False) -> dict:
    """Mine the first ``limit`` items of ``source`` not yet in its log; returns counts and seconds per 100 items.

    ``from_log``: no model call; the programs a dev evaluation logged for the items are replayed under today's rules
    and verified alike (items the log has no programs for are left for a later run)."""
    from assistant.evals.report import ResultsLog, bounded_map
    from assistant.evals.tables_eval import LOGGED_PROGRAM_FIELDS, denotation_match
    from assistant.llm import LLMClient
    from kb.errors import LLMResponseError, LLMTimeout
    from tools.program_mining import bank_entry, sample_verified, verified
    from tools.program_replay import replay_runs

    items = load_items(settings, source)[:limit]
    log = ResultsLog(mining_log_path(settings, source))
    logged = _from_log(settings, source) if from_log else {}
    done_before = sum(1 for it in items if log.get(source, it.id) is not None)
    todo = [it for it in items if log.get(source, it.id) is None and (not from_log or it.id in logged)]
    unlogged = len(items) - done_before - len(todo)
    echo(f"{source}: {len(items)} items, {done_before} already mined ({log.path}); {len(todo)} to mine"
         + (f"; {unlogged} have no logged programs (left for a run with the model)" if unlogged else ""))
    own = llm is None and not from_log
    llm = llm or (None if from_log else LLMClient(settings))
    counts: Counter[str] = Counter()
    from tqdm import tqdm

    bar = tqdm(total=len(todo), desc=f"mining {source}", disable=not show_progress, dynamic_ncols=True)
    t0 = time.perf_counter()
    kind = SOURCES[source].kind

    async def one(item: MiningItem) -> None:
        start = time.perf_counter()
        if kind == "claim" and item.gold[0] not in ("SUPPORTS", "REFUTES"):
            log.add(source, item.id, kept=[], skipped="the gold label is NOT ENOUGH INFO: no program shows it",
                    seconds=0.0)
            counts["skipped"] += 1
            bar.update(1)
            return
        right = (lambda answer: denotation_match(answer, item.gold)) if kind == "question" \
            else (lambda verdict: verdict == item.gold[0])
        try:
            if from_log:
                found = verified(replay_runs(item.table, item.text, logged[item.id]["runs"], kind), item.table, kind,
                                 item.text, right)
            else:
                found = await sample_verified(llm, item.table, kind, item.text, right,
                                              n=settings.table_program_samples,
                                              temperature=settings.table_program_temperature)
        except (LLMTimeout, LLMResponseError) as exc:  # not logged: the next run tries it again
            echo(f"  {item.id}: {type(exc).__name__}: {str(exc)[:120]} (not logged; retried next run)")
            counts["failed"] += 1
            bar.update(1)
            return
        seconds = time.perf_counter() - start
        if found.by_form:  # code wrote the program, not the model: nothing to show it
            log.add(source, item.id, kept=[], skipped="the form fixed the program (no model program)",
                    seconds=seconds)
            counts["skipped"] += 1
        else:
            kept = [bank_entry(f"{source}:{item.id}:{n}", kind, item.table, item.text, program, result,
                               gold=" | ".join(item.gold), source=source, license=SOURCES[source].license).model_dump()
                    for n, (program, result) in enumerate(found.programs[:per_item])]
            log.add(source, item.id, kept=kept, right=found.right, right_after_rewrite=found.right_after_rewrite,
                    ran=found.ran, samples=found.samples, seconds=seconds, gold=item.gold,
                    **({"from_log": str(dev_log_path(settings, source))} if from_log else {}),
                    programs=found.outcome.model_dump(include=LOGGED_PROGRAM_FIELDS) if found.outcome else None)
            counts["kept" if kept else "none right"] += 1
        bar.update(1)

    try:
        await bounded_map(one, todo, concurrency)
    finally:
        bar.close()
        if own:
            await llm.aclose()
    elapsed = time.perf_counter() - t0
    done = sum(counts[k] for k in ("kept", "none right", "skipped"))
    summary = {"source": source, "items": len(items), "mined_now": done, **counts,
               "seconds_per_100_items": round(100 * elapsed / done, 1) if done else None, "log": str(log.path)}
    echo(f"{source}: {counts['kept']} items gave a verified program, {counts['none right']} none, "
         f"{counts['skipped']} skipped, {counts['failed']} failed"
         + (f"; {summary['seconds_per_100_items']:.0f} s per 100 items at concurrency {concurrency}" if done else ""))
    return summary


def mined_entries(settings, sources: list[str]) -> list[BankEntry]:
    """The entries the mined logs of ``sources`` hold (the last record of an item wins)."""
    from assistant.evals.report import ResultsLog

    entries = []
    for source in sources:
        path = mining_log_path(settings, source)
        if not path.exists():
            raise click.ClickException(f"Nothing mined from {source} yet ({path}): run "
                                       f"`evidentia kb programs mine --source {source}` first.")
        for rec in ResultsLog(path).records(source):
            entries += [BankEntry.model_validate(e) for e in rec.get("kept", [])]
    return entries


def build(settings, sources: list[str], out: Path | None, echo=print) -> Path:
    """Write the bank of ``sources`` to ``out`` (the shipped bank when None, which takes shippable sources only)."""
    unknown = [s for s in sources if s not in SOURCES]
    if unknown:
        raise click.ClickException(f"Unknown source(s) {', '.join(unknown)}; choose from {', '.join(SOURCES)}.")
    target = out or DEFAULT_BANK
    if target.resolve() == DEFAULT_BANK.resolve():
        held = [s for s in sources if not SOURCES[s].shippable]
        if held:
            raise click.ClickException(
                f"{', '.join(held)} may not be redistributed, so it cannot go into the bank that ships "
                f"({DEFAULT_BANK}); write it elsewhere with --out (e.g. {Path(settings.data_dir) / 'programs'}"
                "/bank-dev.jsonl) and point EVIDENTIA_TABLE_PROGRAM_BANK at it.")
    entries = mined_entries(settings, sources)
    write_entries(target, entries)
    per_source = Counter(e.source for e in entries)
    echo(f"Wrote {len(entries)} programs to {target} ("
         + ", ".join(f"{s}: {n}" for s, n in sorted(per_source.items())) + ")")
    return target


def register(group) -> click.Group:
    """Add ``programs`` (mine, build) to ``group``; returns it, for the commands that read what mining wrote."""

    @group.group("programs")
    def programs_group() -> None:
        """The bank of verified table programs shown as worked examples (EVIDENTIA_TABLE_EXAMPLES)."""

    @programs_group.command("mine")
    @click.option("--source", type=click.Choice(list(SOURCES)), required=True)
    @click.option("--limit", type=click.IntRange(1), default=100, show_default=True,
                  help="Items of the source to mine, in its fixed seeded order (already mined ones are skipped).")
    @click.option("--concurrency", type=click.IntRange(1, 16), default=2, show_default=True)
    @click.option("--from-log", is_flag=True,
                  help="Ask no model: replay the programs the source's dev evaluation logged (claim sources).")
    def mine_cmd(source: str, limit: int, concurrency: int, from_log: bool) -> None:
        """Sample, run and keep the programs that get a source's items right (resumes from its log)."""
        from assistant.settings import Settings

        asyncio.run(mine(Settings(), source, limit=limit, concurrency=concurrency, echo=click.echo,
                         from_log=from_log))

    @programs_group.command("build")
    @click.option("--source", "sources", multiple=True, type=click.Choice(list(SOURCES)),
                  help="Sources to take (repeat); default: those that may ship (wtq-train).")
    @click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
                  help=f"Where to write the bank; default: the bank that ships ({DEFAULT_BANK.name}).")
    def build_cmd(sources: tuple[str, ...], out: Path | None) -> None:
        """Write a bank file from the mined logs."""
        from assistant.settings import Settings

        chosen = list(sources) or [s for s, src in SOURCES.items() if src.shippable]
        build(Settings(), chosen, out, echo=click.echo)

    return programs_group
