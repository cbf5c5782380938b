"""Benchmark: the client's own work in a claim check, with the model's replies given instantly (#80).

    .venv/bin/python tests/bench/bench_client_cpu.py [--claims N] [--log docs/eval/runs/pubhealthtab-dev-*.jsonl]

A claim check waits on the server for its column choice and its program samples; what the client computes in
between (reading the claim, typing the table, building the grammar, running and voting the programs, the column
filter and the judge's view when the vote splits) delays the check by as much, since the server then has nothing
to do for it. Here a scripted OpenAI-compatible server (tests/fake_openai.py, over real HTTP) answers each
request at once with what the model answered in a committed dev-split log: its column choice and its sampled
programs as it wrote them; a split vote's judge gets a fixed judgement. So the check's wall time is the client's
work (and the local HTTP round trips), measured per check as wall and CPU seconds; cProfile names where it goes.

The log's claims and tables are the PubHealthTab tuning split's (EVIDENTIA_EVAL_DATA_DIR), so nothing here is a
result on a test split. Writes docs/bench/client-cpu.{json,md,png}; the profile's top functions go in the .md.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from assistant.evals.report import code_version, write_bench  # noqa: E402
from assistant.llm import LLMClient  # noqa: E402
from assistant.settings import Settings  # noqa: E402
from tests.fake_openai import FakeOpenAI, Reply  # noqa: E402

DEFAULT_LOG = ROOT / "docs" / "eval" / "runs" / "pubhealthtab-dev-d4eaa6a.jsonl"


def logged_claims(log: Path) -> dict[str, dict]:
    """The program variant's records of a dev log that sampled programs, by item id."""
    out = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        programs = record.get("programs") or {}
        if record.get("variant") == "program" and programs.get("runs"):
            out[record["id"]] = record
    return out


def replier(record: dict):
    """The scripted server for one claim: the logged column choice, the logged program samples, a fixed judge."""
    programs = record["programs"]
    raws = [json.dumps(run["raw"]) if run.get("raw") else "{}" for run in programs["runs"]]

    def handler(req: dict) -> Reply:
        name = req.get("response_format", {}).get("json_schema", {}).get("name", "")
        if name == "ColumnChoice":
            return Reply(content=json.dumps({"columns": programs.get("columns_needed") or []}))
        if name == "TableProgram":
            n = int(req.get("n") or 1)
            batch = (raws * (n // max(1, len(raws)) + 1))[:n]
            return Reply(content=batch[0], more_choices=batch[1:])
        # the judge and its explanations (a split vote): a fixed, valid judgement citing nothing
        return Reply(content=json.dumps({"label": "SUPPORTS", "cited_cells": [], "reason": "fixed",
                                         "explanation": "fixed"}))
    return handler


async def run(items: list, records: dict[str, dict], embedder, settings: Settings) -> list[dict]:
    from tools.verify_claim import check_claim

    rows = []
    for item in items:
        with FakeOpenAI(replier(records[item.id])) as server:
            llm = LLMClient(settings, base_url=server.base_url, model="fake-model")
            wall0, cpu0 = time.perf_counter(), time.process_time()
            check = await check_claim(llm, item.table, item.claim, embedder=embedder)
            wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
            await llm.aclose()
            rows.append({"id": item.id, "decided_by": check.decided_by, "requests": len(server.requests),
                         "wall_s": wall, "cpu_s": cpu, "cells": item.table.n_rows * item.table.n_cols})
            print(f"  {item.id}: {wall:.2f} s wall, {cpu:.2f} s CPU, {len(server.requests)} requests "
                  f"({check.decided_by})", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=20)
    parser.add_argument("--log", type=Path, default=DEFAULT_LOG)
    args = parser.parse_args()
    from assistant.evals.tables_eval import DEFAULT_SEED, load_split, select_items
    from kb.embeddings import Embedder

    settings = Settings()
    if not settings.eval_data_dir:
        raise SystemExit("Set EVIDENTIA_EVAL_DATA_DIR (../shared/eval-data).")
    records = logged_claims(args.log)
    items = [it for it in select_items("pubhealthtab", load_split("pubhealthtab", Path(settings.eval_data_dir), "dev"),
                                       seed=DEFAULT_SEED, limit=None, split="dev") if it.id in records][:args.claims]
    t0 = time.perf_counter()
    embedder = Embedder(settings.embedding_model)
    embedder.encode(["warm up"])  # the model loads once per process, as in the app; not a check's cost
    load_s = time.perf_counter() - t0
    asyncio.run(run(items[:1], records, embedder, settings))  # first-call imports and caches, not counted
    profile = cProfile.Profile()
    profile.enable()
    rows = asyncio.run(run(items, records, embedder, settings))
    profile.disable()
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(25)
    top = "\n".join(line for line in text.getvalue().splitlines() if line.strip())[:6000]
    results = {"client_wall_s_median": (statistics.median(r["wall_s"] for r in rows), "s"),
               "client_cpu_s_median": (statistics.median(r["cpu_s"] for r in rows), "s"),
               "client_wall_s_max": (max(r["wall_s"] for r in rows), "s"),
               "requests_median": (statistics.median(r["requests"] for r in rows), "requests"),
               "embedder_load_s": (load_s, "s"), "claims": (len(rows), "claims")}
    notes = (f"{len(rows)} PubHealthTab dev claims from `{args.log.relative_to(ROOT)}`, the model's logged replies "
             f"served at once by a scripted server, one check at a time, commit {code_version()}; the first check "
             "ran once before, uncounted (imports, caches). The wall and CPU seconds are the client's own work per "
             "check under cProfile (which slows Python code by roughly 1.3-2x, so these are upper bounds). "
             "Generated with `tests/bench/bench_client_cpu.py`.\n\nWhere it goes (cProfile, cumulative, all checks):"
             f"\n\n```\n{top}\n```\n")
    write_bench("client-cpu", results, notes=notes)
    (ROOT / "docs" / "bench" / "client-cpu_checks.json").write_text(json.dumps(rows, indent=1) + "\n",
                                                                    encoding="utf-8")


if __name__ == "__main__":
    main()
