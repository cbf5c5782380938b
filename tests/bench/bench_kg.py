"""Benchmark: per-question KG path retrieval time (subgraph build + GAT training + path extraction).

Run: ``.venv/bin/python tests/bench/bench_kg.py [--questions 40]``. Needs the MedQA DDB graph in the
store (``evidentia kb kg load medqa-ddb``) and Hetionet for the size sweep (``kb kg load hetionet``);
the data dir is the default one (``EVIDENTIA_DATA_DIR``).

1. ``kg_paths_median_s_2000``: MedQA test questions (seeded sample), linked on the DDB KG (linking is
   not timed), then ``find_paths`` with node_budget 2,000, D_max 3: median wall time.
2. Sweep: Hetionet subgraphs of growing size (node budget 250 … 20,000, D_max 3) around random
   disease/compound seeds; time against size -> docs/bench/kg.png.
Wall time and process CPU time are both recorded: the machine's 2 cores are shared (vLLM and other
jobs), so wall time includes waiting for a core.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

from assistant.evals.report import write_bench  # noqa: E402
from assistant.settings import Settings  # noqa: E402

SEED = 0


def _time(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=40)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    settings = Settings()
    from assistant.embeddings import Embedder
    from kb.kg_store import KGStore
    from kb.linking import node_embeddings
    from tools.kg_paths import RetrievalConfig, find_paths, get_linker, link_question

    store = KGStore(settings.kb_dir / "kg.db")
    embedder = Embedder(settings.embedding_model)
    eval_dir = settings.eval_data_dir or Path(__file__).resolve().parents[3] / "shared" / "eval-data"
    items = [json.loads(line) for line in open(eval_dir / "medqa" / "medqa_us_4opt_test.mirage.jsonl")]
    random.Random(SEED).shuffle(items)
    items = items[:args.questions]

    # -- 1. MedQA questions on the DDB KG, node budget 2,000 -----------------------------------
    linker = get_linker(store, "medqa-ddb", embedder)
    emb = node_embeddings(store, "medqa-ddb", embedder)
    graph = linker.graph
    prepared = []
    for it in items:
        opts = list(it["options"].values())
        qc, oc, _ = link_question(linker, it["question"], opts, [])
        q = embedder.encode([it["question"] + " " + " ".join(opts)])[0]
        prepared.append(([c.index for c in qc], {k: [c.index for c in v] for k, v in oc.items()}, q))
    find_paths(graph, emb, prepared[0][2], prepared[0][0], prepared[0][1], RetrievalConfig())  # warm-up
    per_variant: dict[str, list[tuple[float, float, int]]] = {}
    for variant in ("full", "gcn", "no-filter"):
        rows = []
        for qn, on, q in prepared:
            if not qn and not any(on.values()):
                continue
            res, wall, cpu = _time(lambda: find_paths(graph, emb, q, qn, on, RetrievalConfig(variant=variant)))
            rows.append((wall, cpu, res.sub.size))
        per_variant[variant] = rows
        print(f"{variant}: n={len(rows)} median wall {statistics.median(r[0] for r in rows):.3f}s "
              f"cpu {statistics.median(r[1] for r in rows):.3f}s, median subgraph {statistics.median(r[2] for r in rows)}")

    # -- 2. size sweep on Hetionet ---------------------------------------------------------------
    het = store.graph("hetionet")
    het_cache = list(store.cache_dir().glob("hetionet.*.npy"))
    if het_cache:
        het_emb = node_embeddings(store, "hetionet", embedder)
        feat_note = "Hetionet name embeddings"
    else:  # timing does not depend on the feature values; avoid a 25k-name encoding pass
        rng = np.random.default_rng(SEED)
        het_emb = rng.standard_normal((het.num_nodes, embedder.dim)).astype(np.float32)
        het_emb /= np.linalg.norm(het_emb, axis=1, keepdims=True)
        feat_note = "random unit features (Hetionet name embeddings not cached; timing is feature-independent)"
    rng = random.Random(SEED)
    seeds_pool = [i for i, k in enumerate(het.kinds) if k in ("Disease", "Compound")]
    budgets = [250, 500, 1000, 2000, 5000, 10000, 20000]
    sweep = {"size": [], "full": [], "gcn": [], "no-filter": [], "full_cpu": []}
    for budget in budgets:
        sizes, times = [], {"full": [], "gcn": [], "no-filter": [], "full_cpu": []}
        for rep in range(args.reps):
            seeds = rng.sample(seeds_pool, 3)
            q = het_emb[seeds].mean(axis=0)
            q /= np.linalg.norm(q)
            for variant in ("full", "gcn", "no-filter"):
                res, wall, cpu = _time(lambda: find_paths(het, het_emb, q, seeds[:2], {"A": [seeds[2]]},
                                                          RetrievalConfig(variant=variant, node_budget=budget)))
                times[variant].append(wall)
                if variant == "full":
                    times["full_cpu"].append(cpu)
                    sizes.append(res.sub.size)
        sweep["size"].append(int(statistics.median(sizes)))
        for k in times:
            sweep[k].append(statistics.median(times[k]))
        print(f"budget {budget}: size {sweep['size'][-1]}, full {sweep['full'][-1]:.3f}s (cpu {sweep['full_cpu'][-1]:.3f}s), "
              f"gcn {sweep['gcn'][-1]:.3f}s, no-filter {sweep['no-filter'][-1]:.3f}s")

    full = per_variant["full"]
    med = statistics.median(r[0] for r in full)
    results = {
        "kg_paths_median_s_2000": (med, "s"),
        "kg_paths_median_cpu_s_2000": (statistics.median(r[1] for r in full), "s"),
        "kg_paths_p90_s_2000": (float(np.percentile([r[0] for r in full], 90)), "s"),
        "kg_paths_gcn_median_s_2000": (statistics.median(r[0] for r in per_variant["gcn"]), "s"),
        "kg_paths_nofilter_median_s_2000": (statistics.median(r[0] for r in per_variant["no-filter"]), "s"),
        "median_subgraph_nodes_2000": (statistics.median(r[2] for r in full), "nodes"),
    }
    for size, t in zip(sweep["size"], sweep["full"]):
        results[f"kg_paths_full_s_at_{size}_nodes"] = (t, "s")
    load = os.getloadavg()[0]
    notes = f"""
What is timed: subgraph expansion (D_max 3, node budget), per-question GAT training (2 layers, 4 heads x 8,
10 epochs, Adam lr 0.02, one torch thread) and shortest-path extraction/verbalization; linking and the
question embedding are not included. Part 1: {len(full)} MedQA test questions (seed {SEED}) on the DDB KG,
budget 2,000 nodes; target median <= 1 s: {"met" if med <= 1.0 else "NOT met"} ({med:.3f} s).
Part 2 (plot): Hetionet around random disease/compound seeds, {args.reps} reps per budget, {feat_note}.
Load average when finished: {load:.1f} on 2 cores (above 2 means other work shared the cores; the CPU
time column shows the work itself).

| budget | subgraph nodes | full (s) | full CPU (s) | gcn (s) | no-filter (s) |
|---|---|---|---|---|---|
""" + "\n".join(f"| {b} | {s} | {f:.3f} | {c:.3f} | {g:.3f} | {n:.3f} |" for b, s, f, c, g, n in zip(
        budgets, sweep["size"], sweep["full"], sweep["full_cpu"], sweep["gcn"], sweep["no-filter"]))
    write_bench("kg", results, notes=notes, plot={
        "x": sweep["size"], "series": {"GAT (full)": sweep["full"], "GCN": sweep["gcn"],
                                       "no filter": sweep["no-filter"], "GAT CPU time": sweep["full_cpu"]},
        "xlabel": "subgraph nodes", "ylabel": "seconds per question", "logx": True, "logy": True})


if __name__ == "__main__":
    main()
