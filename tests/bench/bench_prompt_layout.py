"""Benchmark: the table-program prompts' two layouts side by side, paired per claim (#80).

    .venv/bin/python tests/bench/bench_prompt_layout.py [--per-benchmark N] [--area prompt-layout]

``table-first`` (today's default) puts the table and the claim before the instructions and examples, so only the
column-choice and program requests of one check share a prefix; ``instructions-first``
(``Settings.table_prompt_layout``) opens every prompt with the same instructions and examples, which the
server's prefix cache then serves to every check. Each claim (N per dev split of TabFact, SciTab and
PubHealthTab: the table-disjoint tuning splits) is checked under both layouts, one check at a time, the first
layout alternating from claim to claim so neither always finds the cache warmer.

What is counted per check, from the server's own counters (``/metrics``): prompt tokens computed (not served by
the prefix cache), prompt tokens served from the cache, generated tokens, and the wall-clock seconds. The
per-request usage the client sees cannot tell computed from cached tokens for a request with ``n`` samples
(vLLM fans it out into ``n`` requests that share one prompt), so the server's counters are the measure, and they
are only right when **nothing else uses the server** during the run: the script stops if the server's counters
move between checks.

Gate, fixed before the run: over the paired checks, the median ratio of computed prompt tokens
(instructions-first / table-first) at most 0.6. Accuracy is reported beside it (right verdicts per layout, and
the claims where only one layout was right) but with a few claims per split it decides nothing: the dev-split
runs do (``EVIDENTIA_TABLE_PROMPT_LAYOUT=instructions-first evidentia eval <benchmark> --split dev``).
The gate for making instructions-first the default, fixed before any such run: the whole table-disjoint dev
splits of TabFact (281 claims) and SciTab (181), each checked under both layouts at one commit; per benchmark,
instructions-first may be right on at most 2 claims fewer than table-first (the replay tolerance of #76), and
no exact McNemar test over the discordant claims may find it worse at the 5% level.
Writes docs/bench/<area>.{json,md,png} and the per-check rows in docs/bench/<area>_checks.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from assistant.evals.report import DOCS_DIR, code_version, write_bench  # noqa: E402
from assistant.llm import LLMClient  # noqa: E402
from assistant.model.serving import server_counters  # noqa: E402
from assistant.settings import Settings  # noqa: E402

LAYOUTS = ("table-first", "instructions-first")
BENCHMARKS = ("tabfact", "scitab", "pubhealthtab")
GATE_RATIO = 0.6
def paired_ratio(rows: list[dict]) -> list[float]:
    """Per claim checked under both layouts: instructions-first's computed prompt tokens / table-first's."""
    by_claim: dict[str, dict[str, dict]] = {}
    for r in rows:
        by_claim.setdefault(r["id"], {})[r["layout"]] = r
    return [pair["instructions-first"]["computed"] / pair["table-first"]["computed"]
            for pair in by_claim.values() if len(pair) == 2 and pair["table-first"]["computed"]]


async def main_async(args) -> None:
    from assistant.evals.tables_eval import DEFAULT_SEED, load_split, select_items
    from kb.embeddings import Embedder
    from tools.verify_claim import check_claim

    base = Settings()
    if not base.eval_data_dir:
        raise SystemExit("Set EVIDENTIA_EVAL_DATA_DIR (../shared/eval-data).")
    embedder = Embedder(base.embedding_model)
    items = [(bench, item) for bench in BENCHMARKS
             for item in select_items(bench, load_split(bench, Path(base.eval_data_dir), "dev"), seed=DEFAULT_SEED,
                                      limit=None, split="dev")[:args.per_benchmark]]
    clients = {layout: LLMClient(base.model_copy(update={"table_prompt_layout": layout})) for layout in LAYOUTS}
    rows: list[dict] = []
    try:
        for i, (bench, item) in enumerate(items):
            order = LAYOUTS if i % 2 == 0 else LAYOUTS[::-1]
            for layout in order:
                before = server_counters(base.effective_base_url)
                if before["running"]:
                    raise SystemExit("Another client is using the server: its counters would be counted here.")
                t0 = time.perf_counter()
                check = await check_claim(clients[layout], item.table, item.claim, embedder=embedder)
                seconds = time.perf_counter() - t0
                after = server_counters(base.effective_base_url)
                delta = {k: after[k] - before[k] for k in ("computed", "cached", "generated")}
                rows.append({"benchmark": bench, "id": f"{bench}:{item.id}", "layout": layout, "gold": item.label,
                             "pred": check.label, "decided_by": check.decided_by, "seconds": seconds, **delta})
                print(f"  {bench} {item.id} {layout}: {delta} {seconds:.0f} s {check.label} (gold {item.label})",
                      flush=True)
    finally:
        for client in clients.values():
            await client.aclose()
    write(rows, args.area)


def write(rows: list[dict], area: str) -> None:
    results: dict[str, tuple[float, str]] = {}
    for layout in LAYOUTS:
        mine = [r for r in rows if r["layout"] == layout]
        key = layout.replace("-", "_")
        for count in ("computed", "cached", "generated"):
            results[f"{key}_{count}_prompt_tokens_median" if count != "generated" else f"{key}_generated_tokens_median"] \
                = (statistics.median(r[count] for r in mine), "tokens")
        results[f"{key}_seconds_median"] = (statistics.median(r["seconds"] for r in mine), "s")
        results[f"{key}_right"] = (sum(r["pred"] == r["gold"] for r in mine), "claims")
    ratios = paired_ratio(rows)
    results["computed_ratio_median"] = (statistics.median(ratios), "ratio")
    results["paired_claims"] = (len(ratios), "claims")
    by_claim: dict[str, dict[str, bool]] = {}
    for r in rows:
        by_claim.setdefault(r["id"], {})[r["layout"]] = r["pred"] == r["gold"]
    only = {layout: sum(1 for v in by_claim.values() if len(v) == 2 and v[layout] and not all(v.values()))
            for layout in LAYOUTS}
    verdict = "met" if results["computed_ratio_median"][0] <= GATE_RATIO else "NOT met"
    notes = (f"Paired per claim, one check at a time on a server nothing else used (its /metrics counters), commit "
             f"{code_version()}; claims from the dev splits of {', '.join(BENCHMARKS)}. Gate fixed before the run: "
             f"median computed-prompt-token ratio (instructions-first / table-first) <= {GATE_RATIO}: **{verdict}** "
             f"({results['computed_ratio_median'][0]:.2f} over {len(ratios)} claims). Right only under "
             f"table-first: {only['table-first']}; only under instructions-first: {only['instructions-first']} "
             "(too few claims to decide accuracy; the dev-split runs do). Per-check rows in "
             f"`docs/bench/{area}_checks.json`. Generated with `tests/bench/bench_prompt_layout.py`.")
    write_bench(area, results, notes=notes)
    (DOCS_DIR / "bench" / f"{area}_checks.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-benchmark", type=int, default=8)
    parser.add_argument("--area", default="prompt-layout")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
