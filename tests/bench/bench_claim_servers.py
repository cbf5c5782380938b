"""Benchmark: a whole claim check through two OpenAI-compatible servers, paired per claim (#80).

    .venv/bin/python tests/bench/bench_claim_servers.py --server vllm=http://127.0.0.1:8008/v1 \
        --server llama=http://127.0.0.1:8011/v1 [--claims 6] [--area claim-servers]

``tools.verify_claim.check_claim`` (the default ``program`` variant: column choice, five programs, the CCoE
fallback on a split vote) on the first N PubHealthTab dev claims (the tuning split), each checked once per server,
one check at a time, the first server alternating from claim to claim. Nothing else may use the machine. Reports
seconds per check (median, and the paired ratio), and the verdicts (right per server, and where they differ).

Gate, fixed before the run: the second server is worth serving through on this machine if its median paired ratio
of seconds is at most 0.67 (1.5x faster, the issue's threshold). With a few claims the verdicts decide nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from assistant.evals.report import write_bench  # noqa: E402
from assistant.evals.tables_eval import LABELS3, load_split, select_items  # noqa: E402
from assistant.llm import LLMClient  # noqa: E402
from assistant.settings import Settings  # noqa: E402

GATE = 0.67


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", action="append", required=True, help="name=base_url (give two)")
    ap.add_argument("--claims", type=int, default=6)
    ap.add_argument("--area", default="claim-servers")
    ap.add_argument("--runs", action="store_true", help="write under docs/bench/runs/")
    args = ap.parse_args()
    from kb.embeddings import Embedder
    from tools.verify_claim import check_claim

    settings = Settings()
    items = select_items("pubhealthtab", load_split("pubhealthtab", Path(settings.eval_data_dir), "dev"), seed=0,
                         limit=args.claims, split="dev")
    servers = dict(s.split("=", 1) for s in args.server)
    clients = {}
    for name, base in servers.items():
        probe = LLMClient(settings, base_url=base)
        model = (await probe.list_models())[0]
        await probe.aclose()
        clients[name] = LLMClient(settings, base_url=base, model=model)
    embedder = Embedder(settings.embedding_model)
    rows = []
    for i, item in enumerate(items):
        order = list(servers) if i % 2 == 0 else list(servers)[::-1]
        for name in order:
            t0 = time.perf_counter()
            check = await check_claim(clients[name], item.table, item.claim, embedder=embedder, labels=LABELS3)
            rows.append({"id": item.id, "server": name, "seconds": time.perf_counter() - t0, "label": check.label,
                         "gold": item.label, "decided_by": check.decided_by})
            print(f"  {item.id[:8]} {name}: {check.label} (gold {item.label}, {check.decided_by}) "
                  f"{rows[-1]['seconds']:.1f} s", flush=True)
    for client in clients.values():
        await client.aclose()
    a, b = list(servers)
    by = {(r["id"], r["server"]): r for r in rows}
    ratios = [by[(it.id, b)]["seconds"] / by[(it.id, a)]["seconds"] for it in items]
    results = {f"claim_check_median_s__{n}": (statistics.median(r["seconds"] for r in rows if r["server"] == n), "s")
               for n in servers}
    results.update({f"right__{n}": (sum(r["label"] == r["gold"] for r in rows if r["server"] == n), "claims")
                    for n in servers})
    results[f"paired_ratio_{b}_over_{a}"] = (statistics.median(ratios), "x")
    differ = sum(by[(it.id, a)]["label"] != by[(it.id, b)]["label"] for it in items)
    ratio = statistics.median(ratios)
    notes = (f"{len(items)} PubHealthTab dev claims, each checked once per server, one at a time, alternating which "
             f"goes first. Gate fixed before the run: {b}'s median paired ratio of seconds at most {GATE}: "
             f"{ratio:.2f}, {'MET' if ratio <= GATE else 'NOT met'}. Verdicts differ on {differ} of {len(items)} "
             "(sampling differs between servers; a few claims decide nothing about accuracy). Servers: "
             + ", ".join(f"{n} = {u}" for n, u in servers.items()) + ".")
    print(notes)
    write_bench(args.area, results, notes=notes, runs=args.runs)


if __name__ == "__main__":
    asyncio.run(main())
