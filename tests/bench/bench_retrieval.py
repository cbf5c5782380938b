"""Benchmark: exact OT-JSD re-ranking time against the pool size R, and a 100k-sentence KB's memory.

Run on demand:  .venv/bin/python tests/bench/bench_retrieval.py [--base 3000] [--rows 100000]

The KB: ``--base`` real sentences from the default sources (OpenBookQA, WorldTree, MedQuAD, PubMedQA,
SciFact) are embedded with MiniLM; the store is then filled to ``--rows`` sentences by repeating that
text (each copy tagged, so it is a distinct row) with the base sentence's real vectors plus small
Gaussian noise on the token vectors (so copies are near, not exact, duplicates). Embedding 100k
sentences for real would take 10+ minutes on 2 shared cores; everything else (SQLite, FAISS,
float16 token memmap, BM25 statistics) is the real code path at full size.

Measured per query (10 OpenBookQA test questions + their correct answer; query encoding excluded):
- top-15 exact OT-JSD over the FAISS top-R pool (pruned by a provable lower bound, same top 15 and same
  scores as solving all R), and the time to solve all R exactly (no pruning), for R in 100 .. 20,000;
- RSS of a fresh process that opens the 100k KB, loads the model and answers queries at R = 1,000.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402


R_VALUES = [100, 300, 1000, 3000, 10000, 20000]
K = 15
THESIS_SECONDS_PER_QUESTION = (16 * 60, 20 * 60)  # end to end (methods.md §2)
THESIS_RETRIEVAL_SHARE = 0.9  # "about 90% of it in retrieval": so the thesis's retrieval is an estimate
# The thesis retrieves for every (question, option) pair, as mc_answer does: one re-rank per option
# (OpenBookQA has 4), so a question costs this many re-ranks here too.
RERANKS_PER_QUESTION = 4


def base_sentences(n: int) -> list[str]:
    from assistant.settings import Settings
    from kb.default_corpus import DefaultCorpus, limited
    from kb.ingest import document_sentences
    from tests.shared_data import kb_mirror_dir

    # The configured mirror: a fresh clone away from ../shared failed here when only ../shared was read.
    corpus = DefaultCorpus(kb_mirror_dir(Settings()), Path(tempfile.gettempdir()) / "kb-sources")
    per = n // 5
    out: list[str] = []
    for src in corpus.sources():
        got = []
        for doc in limited(src.documents(), per):
            got += [s.text for s in document_sentences(doc)]
        out += got[:per]
    return list(dict.fromkeys(out))


class ReplicatingStore:
    """A TextStore whose encoder looks up precomputed base encodings (copies get small noise)."""

    @staticmethod
    def make(path: Path, base: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]], noise: float, seed: int = 0):
        from kb.text_store import TextStore

        rng = np.random.default_rng(seed)

        class _Store(TextStore):
            def _encode(self, texts, progress=None):
                vecs = np.zeros((len(texts), 384), np.float32)
                toks = []
                keys = list(base)
                for i, t in enumerate(texts):
                    key = t.split("] ", 1)[1] if t.startswith("[copy ") else t
                    if key not in base:  # the splitter cut a tagged copy differently: any real encoding
                        key = keys[int(rng.integers(len(keys)))]
                    v, z, ids = base[key]
                    if key != t:
                        z = z + rng.normal(0, noise, z.shape).astype(np.float32)
                        v = v + rng.normal(0, noise / 10, v.shape).astype(np.float32)
                        v /= np.linalg.norm(v)
                    vecs[i] = v
                    toks.append((z, ids))
                if progress:
                    progress(len(texts))
                return vecs, toks

        return _Store(path)


def build_kb(path: Path, n_base: int, n_rows: int) -> dict:
    from kb.embeddings import Embedder
    from kb.ingest import Document
    from kb.text_store import TextStore

    sents = base_sentences(n_base)
    embedder = Embedder()
    real = TextStore(path.parent / "base-kb", embedder=embedder)
    t = time.perf_counter()
    vecs, toks = real._encode(sents)
    embed_s = time.perf_counter() - t
    base = {s: (vecs[i], toks[i][0], toks[i][1]) for i, s in enumerate(sents)}
    store = ReplicatingStore.make(path, base, noise=0.05)
    store._embedder = embedder  # vocabulary size only
    docs, copy, batch = [], 0, 50
    texts = []
    while len(texts) < n_rows:
        for s in sents:
            texts.append(s if copy == 0 else f"[copy {copy}] {s}")
            if len(texts) >= n_rows:
                break
        copy += 1
    # The splitter must not cut a copy apart: one sentence per document line, joined by newlines.
    for i in range(0, len(texts), batch):
        docs.append(Document(doc_id=f"bench-{i // batch}", text="\n\n".join(texts[i:i + batch]),
                             title=f"bench {i // batch}", source="bench", license="mixed (bench)"))
    t = time.perf_counter()
    res = store.add_documents(docs, collection="bench", show_progress=True, desc="100k KB")
    return {"embed_s": embed_s, "n_base": len(sents), "ingest_s": time.perf_counter() - t, **res,
            "rows": len(store)}


def rerank_times(path: Path, queries: list[str]) -> dict:
    from kb._ot import TokenBag, otjsd_scores, otjsd_top_k
    from kb.embeddings import Embedder
    from kb.text_store import TextStore
    from tools.text_search import candidate_bag, ot_scales

    store = TextStore(path, embedder=Embedder())
    store._load()
    enc_t = time.perf_counter()
    vecs, toks = store._encode(queries)
    encode_ms = 1000 * (time.perf_counter() - enc_t) / len(queries)
    out = {"topk": {}, "full": {}, "solved": {}, "tokens_per_candidate": None}
    out["cold"] = {}
    for R in R_VALUES:
        # First pass: the memmap pages these candidates live on may not be in the page cache yet.
        cold = []
        for i in range(len(queries)):
            z, ids = toks[i]
            w = store.bm25.token_weights(ids)
            cand, _ = store.dense_search(vecs[i], R)
            t = time.perf_counter()
            otjsd_top_k(TokenBag.from_texts([z], [w], ot_scales([z], [w])), candidate_bag(store, cand), K)
            cold.append(time.perf_counter() - t)
        out["cold"][R] = statistics.median(cold)
        tk, fl, solved = [], [], []
        for i in range(len(queries)):
            z, ids = toks[i]
            w = store.bm25.token_weights(ids)
            cand, _ = store.dense_search(vecs[i], R)
            t = time.perf_counter()
            q = TokenBag.from_texts([z], [w], ot_scales([z], [w]))
            c = candidate_bag(store, cand)
            idx, scores, info = otjsd_top_k(q, c, K)
            tk.append(time.perf_counter() - t)
            solved.append(info["solved"])
            if R <= 1000 and i < 3:  # the exhaustive solve is only timed where it is affordable
                t = time.perf_counter()
                full = otjsd_scores(q, c)
                fl.append(time.perf_counter() - t)
                order = np.lexsort((np.arange(len(full)), full))[:K]
                assert list(order) == list(idx), "pruned top-k differs from the exhaustive top-k"
                assert np.allclose(full[order], scores, atol=0), "pruned scores differ"
            if R == 1000 and i == 0:
                out["tokens_per_candidate"] = float(np.mean(np.diff(c.offsets)))
        out["topk"][R] = statistics.median(tk)
        out["full"][R] = statistics.median(fl) if fl else None
        out["solved"][R] = statistics.median(solved)
        print(f"R={R:>6}: top-{K} {out['topk'][R]:.3f} s (first pass {out['cold'][R]:.3f} s, solved "
              f"{out['solved'][R]:.0f})"
              + (f", all R exact {out['full'][R]:.3f} s" if fl else ""), flush=True)
    out["encode_ms"] = encode_ms
    return out


def rss_probe(path: str, queries_json: str) -> None:
    """Run in a fresh process: open the KB, search at R=1000, print peak RSS in GB."""
    from kb.embeddings import Embedder
    from kb.text_store import TextStore
    from tools.text_search import rank_kb

    store = TextStore(path, embedder=Embedder())
    for q in json.loads(queries_json):
        rank_kb(store, q, K, "otjsd", 1000)
        rank_kb(store, q, K, "fused", 1000)
    rss_now = int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    # VmHWM, not ru_maxrss: after fork+exec, ru_maxrss still counts the (large) parent's pages.
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    peak = int(status["VmHWM"].split()[0]) * 1024
    print(json.dumps({"peak_gb": peak / 1024**3, "now_gb": rss_now / 1024**3,
                      "ru_maxrss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", type=int, default=3000)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=10)
    ap.add_argument("--keep", type=Path, default=None, help="Keep the KB in this folder (reused if present).")
    ap.add_argument("--rss-probe", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rss_probe:
        rss_probe(*args.rss_probe)
        return
    from assistant.evals.report import write_bench
    from assistant.evals.retrieval_eval import load_mc
    from assistant.settings import Settings
    from tests.shared_data import eval_data_dir

    questions = eval_data_dir(Settings()) / "openbookqa" / "test.jsonl"
    if not questions.exists():
        raise SystemExit(f"bench_retrieval: {questions} is missing; set EVIDENTIA_EVAL_DATA_DIR to the folder "
                         "that holds openbookqa/test.jsonl.")
    qs = load_mc(questions, args.queries)
    queries = [f"{q['question']} {q['options'][q['answer']]}" for q in qs]
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-retrieval-"))
    kb_path = work / "kb"
    build = {}
    if not (kb_path / "meta.json").exists():
        build = build_kb(kb_path, args.base, args.rows)
        print("built:", build, flush=True)
    load_start = os.getloadavg()[0]
    times = rerank_times(kb_path, queries)
    probe = subprocess.run([sys.executable, __file__, "--rss-probe", str(kb_path), json.dumps(queries[:3])],
                           capture_output=True, text=True, check=True)
    rss = json.loads(probe.stdout.strip().splitlines()[-1])
    disk = sum(f.stat().st_size for f in kb_path.glob("*") if f.is_file())
    r1k, r20k = times["topk"][1000], times["topk"][20000]
    lo, hi = THESIS_SECONDS_PER_QUESTION
    per_question = RERANKS_PER_QUESTION * (r20k + times["encode_ms"] / 1000)
    results = {
        "otjsd_rerank_r1000_median_s": (r1k, "s"),
        "otjsd_rerank_r20000_median_s": (r20k, "s"),
        "otjsd_exhaustive_r1000_median_s": (times["full"][1000], "s"),
        "kb_100k_rss_gb": (rss["peak_gb"], "GB"),
        "kb_100k_disk_gb": (disk / 1e9, "GB"),
        "query_encode_ms": (times["encode_ms"], "ms"),
        # Like with like (#18): our retrieval for one question (one encode + R = 20,000 re-rank per option)
        # against the thesis's per-question retrieval share, which is itself an estimate (90% of 16 min).
        "retrieval_per_question_r20000_s_estimate": (per_question, "s"),
        "speedup_vs_thesis_retrieval_per_question_min_estimate": (THESIS_RETRIEVAL_SHARE * lo / per_question, "x"),
    }
    notes = f"""
Exact OT-JSD re-ranking (POT `ot.emd2` on the exact JSD cost; top {K} kept) of the FAISS top-R pool, median over
{len(queries)} OpenBookQA test queries, query encoding excluded ({times['encode_ms']:.0f} ms per query). Each query
runs twice per R: the first pass reads candidate token vectors that may not be in the page cache yet (disk);
the reported median is the second pass (steady state of a running server). Both are listed.
The top-{K} time uses a provable lower bound (JSD >= ln2 (1 - sum sqrt(p q)), relaxed to an EMD bound) to skip
candidates that cannot enter the top {K}; for R <= 1,000 the bench checks that the pruned top {K} and its scores
equal those of solving every candidate, and times that exhaustive solve too.
The candidates' token distributions are not computed at query time: the store keeps the square roots of
softmax(20 z / |z|) per token (`tok_root.f16`, written at index time), the bound streams them in chunks, and
exact costs square the few rows actually solved. Before that change (same machine, same bench, 2026-11-21):
R = 1,000 0.263 s, R = 20,000 6.29 s.

| R | top-{K} median (s), warm | first pass (s) | exact problems solved | all-R exhaustive (s) |
|---|---|---|---|---|
""" + "\n".join(f"| {R} | {times['topk'][R]:.3f} | {times['cold'][R]:.3f} | {times['solved'][R]:.0f} | "
                + (f"{times['full'][R]:.3f}" if times["full"][R] is not None else "not timed") + " |"
                for R in R_VALUES) + f"""

Targets: R = 1,000 <= 0.5 s: {'met' if r1k <= 0.5 else 'NOT met'} ({r1k:.3f} s). R = 20,000 <= 5 s:
{'met' if r20k <= 5 else 'NOT met'} ({r20k:.3f} s).

Compared with the thesis, like with like (an estimate): the thesis reports 16-20 minutes per question end to end,
about {THESIS_RETRIEVAL_SHARE:.0%} of it retrieval, so its retrieval per question is estimated at
{THESIS_RETRIEVAL_SHARE * lo / 60:.1f}-{THESIS_RETRIEVAL_SHARE * hi / 60:.1f} min. A question here needs one query
encoding and one R = 20,000 re-rank per option ({RERANKS_PER_QUESTION} for OpenBookQA): about {per_question:.2f} s, i.e.
{THESIS_RETRIEVAL_SHARE * lo / per_question:,.0f}-{THESIS_RETRIEVAL_SHARE * hi / per_question:,.0f} times less
(`speedup_vs_thesis_retrieval_per_question_min_estimate` uses the 16-minute end). Not like for like in one respect:
the thesis re-ranked Wikipedia chunks of up to 512 tokens, this KB holds sentences of about
{times['tokens_per_candidate'] or 0:.0f} content tokens, and the OT cost grows with the candidates' token count.

KB: {args.rows:,} sentences ({build.get('n_base', args.base)} real sentences from the five default sources embedded with
MiniLM, repeated with noise on the vectors to reach the size; see the module docstring), about
{times['tokens_per_candidate'] or 0:.1f} stored content tokens per sentence. Peak RSS of a fresh process that loads the
model, opens this KB (FAISS flat index, BM25 statistics, float16 token and root memmaps) and answers 3 queries at
R = 1,000 with otjsd and fused: {rss['peak_gb']:.2f} GB (target 2 GB). Disk: {disk / 1e9:.2f} GB, of which the token
vectors and their roots are {sum((kb_path / f).stat().st_size for f in ('tok_z.f16', 'tok_root.f16') if (kb_path / f).exists()) / 1e9:.2f} GB
(the price of the speed-up: the roots double the token storage).
Caveat: the copies make near-duplicate candidates, which can help the pruning; the exhaustive column does not
depend on that. Load average (1 min) at the start / end of the timing: {load_start:.1f} / {os.getloadavg()[0]:.1f} on 2 cores.
"""
    plot = {"x": R_VALUES, "series": {f"top-{K} (pruned, exact), warm": [times["topk"][R] for R in R_VALUES],
                                      "first pass": [times["cold"][R] for R in R_VALUES]},
            "xlabel": "pool size R", "ylabel": "seconds per query", "logx": True, "logy": True}
    full_x = [R for R in R_VALUES if times["full"][R] is not None]
    if len(full_x) == len(R_VALUES):
        plot["series"]["all R exact"] = [times["full"][R] for R in R_VALUES]
    write_bench("retrieval", results, notes=notes, plot=plot)
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
