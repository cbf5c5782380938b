"""Benchmark: the model's work per job — requests, prompt tokens (cached and computed) and generated tokens.

    .venv/bin/python tests/bench/bench_tokens.py [--claims N] [--questions N] [--turns N] [--area tokens]

On a CPU, prefill dominates: every prompt token the server computes costs about as much as a few generated ones
(docs/bench/llm.md), so the count that matters most is ``computed`` (prompt tokens minus those vLLM's prefix
cache served). Three jobs, each counted with :func:`assistant.llm.counting_tokens`, one job at a time:

- a claim check (``tools.verify_claim.check_claim``, default variant) on N PubHealthTab claims of the
  table-disjoint dev split (the tuning split: the counts are not a result on it);
- a table question (``tools.table_qa.answer_question``) on N WikiTableQuestions dev questions (training.tsv);
- a chat turn (``Assistant.run_turn`` over the default knowledge base) on the first N opening questions of the
  chat bench (tests/bench/bench_chat.py).

Needs the served model (``evidentia model serve``; cached counts need its ``--enable-prompt-tokens-details``,
which ``evidentia model serve`` passes), EVIDENTIA_EVAL_DATA_DIR and EVIDENTIA_KB_MIRROR_DIR, and for the chat
turns the default knowledge base. Writes docs/bench/tokens.{json,md,png} and the per-job rows in
docs/bench/tokens_jobs.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from assistant.evals.report import DOCS_DIR, code_version, write_bench  # noqa: E402
from assistant.llm import LLMClient, counting_tokens  # noqa: E402
from assistant.model.serving import server_counters  # noqa: E402
from assistant.settings import Settings  # noqa: E402

COUNTS = ("requests", "samples", "prompt_tokens", "cached_prompt_tokens", "computed_prompt_tokens",
          "generated_tokens", "server_computed_prompt_tokens", "server_cached_prompt_tokens",
          "server_generated_tokens")


class ServerWindow:
    """The server's own token counters over one job (assistant.model.serving.server_counters): the measure of
    computed prompt tokens, since the per-request cached count is not one for n-sample requests. ``alone`` says
    whether nothing else was running on the server when the job began (else the counts are not the job's)."""

    def __init__(self, settings: Settings):
        self.url = settings.effective_base_url
        try:
            self.before = server_counters(self.url)
        except Exception:  # another OpenAI-compatible server: no vLLM counters, the per-request usage only
            self.before = None

    def counts(self) -> dict:
        if self.before is None:
            return {"server_alone": None}
        after = server_counters(self.url)
        return {"server_alone": self.before["running"] == 0,
                **{f"server_{k}_prompt_tokens" if k != "generated" else "server_generated_tokens":
                   int(after[k] - self.before[k]) for k in ("computed", "cached", "generated")}}


async def claim_jobs(settings: Settings, llm: LLMClient, embedder, n: int) -> list[dict]:
    from assistant.evals.tables_eval import DEFAULT_SEED, load_split, select_items
    from tools.verify_claim import check_claim

    items = select_items("pubhealthtab", load_split("pubhealthtab", Path(settings.eval_data_dir), "dev"),
                         seed=DEFAULT_SEED, limit=None, split="dev")[:n]
    rows = []
    for item in items:
        window = ServerWindow(settings)
        with counting_tokens() as usage:
            t0 = time.perf_counter()
            check = await check_claim(llm, item.table, item.claim, embedder=embedder)
            seconds = time.perf_counter() - t0
        rows.append({"job": "claim check", "id": item.id, "decided_by": check.decided_by, "seconds": seconds,
                     "table_cells": item.table.n_rows * len(item.table.columns), **usage.as_dict(),
                     **window.counts()})
        print(f"  claim {item.id}: {usage.as_dict()} {seconds:.0f} s ({check.decided_by})", flush=True)
    return rows


async def question_jobs(settings: Settings, llm: LLMClient, embedder, n: int) -> list[dict]:
    from assistant.evals.tables_eval import DEFAULT_SEED, WTQ_SPLIT_FILES, load_wtq, select_wtq
    from tools.table_qa import answer_question

    wtq_dir = Path(settings.kb_mirror_dir) / "wikitablequestions"
    items = select_wtq(load_wtq(wtq_dir, WTQ_SPLIT_FILES["dev"]), seed=DEFAULT_SEED)[:n]
    rows = []
    for item in items:
        window = ServerWindow(settings)
        with counting_tokens() as usage:
            t0 = time.perf_counter()
            res = await answer_question(llm, item.table, item.question, embedder=embedder)  # as the chat asks
            seconds = time.perf_counter() - t0
        rows.append({"job": "table question", "id": item.id, "decided_by": res.decided_by, "seconds": seconds,
                     "table_cells": item.table.n_rows * len(item.table.columns), **usage.as_dict(),
                     **window.counts()})
        print(f"  question {item.id}: {usage.as_dict()} {seconds:.0f} s ({res.decided_by})", flush=True)
    return rows


async def turn_jobs(settings: Settings, n: int) -> list[dict]:
    from assistant.answer.loop import Assistant
    from assistant.deps import Deps
    from tests.bench.bench_chat import CONVERSATIONS
    from tools.contracts import Session

    deps = Deps(settings)
    rows = []
    try:
        for conversation in CONVERSATIONS[:n]:
            bot = Assistant(deps, Session(conversation_id=f"bench-tokens-{uuid.uuid4().hex[:8]}"))
            window = ServerWindow(settings)
            t0 = time.perf_counter()
            result = await bot.run_turn(conversation[0])
            seconds = time.perf_counter() - t0
            usage = {"requests": result.model_requests, "samples": None, "prompt_tokens": result.prompt_tokens,
                     "cached_prompt_tokens": result.cached_prompt_tokens,
                     "computed_prompt_tokens": result.prompt_tokens - result.cached_prompt_tokens,
                     "generated_tokens": result.generated_tokens, **window.counts()}
            rows.append({"job": "chat turn", "id": conversation[0], "decided_by": result.status,
                         "seconds": seconds, "table_cells": None, **usage})
            print(f"  turn {conversation[0]!r}: {usage} {seconds:.0f} s ({result.status})", flush=True)
    finally:
        await deps.aclose()
    return rows


def summary(rows: list[dict]) -> dict[str, tuple[float, str]]:
    results: dict[str, tuple[float, str]] = {}
    for job in ("claim check", "table question", "chat turn"):
        mine = [r for r in rows if r["job"] == job]
        if not mine:
            continue
        key = job.replace(" ", "_")
        for count in COUNTS:
            values = [r[count] for r in mine if r.get(count) is not None]
            if values:
                results[f"{key}_{count}_median"] = (statistics.median(values),
                                                    "requests" if count in ("requests", "samples") else "tokens")
        results[f"{key}_seconds_median"] = (statistics.median(r["seconds"] for r in mine), "s")
        results[f"{key}_jobs"] = (len(mine), "jobs")
    return results


async def main_async(args) -> None:
    settings = Settings()
    if not settings.eval_data_dir or not settings.kb_mirror_dir:
        raise SystemExit("Set EVIDENTIA_EVAL_DATA_DIR and EVIDENTIA_KB_MIRROR_DIR (../shared/eval-data, "
                         "../shared/kb-data).")
    llm = LLMClient(settings)
    rows: list[dict] = []
    try:
        if args.claims or args.questions:
            from kb.embeddings import Embedder

            embedder = Embedder(settings.embedding_model)
            rows += await claim_jobs(settings, llm, embedder, args.claims)
            rows += await question_jobs(settings, llm, embedder, args.questions)
    finally:
        await llm.aclose()
    if args.turns:
        rows += await turn_jobs(settings, args.turns)
    results = summary(rows)
    cached_reported = any(r["cached_prompt_tokens"] for r in rows)
    alone = all(r.get("server_alone") for r in rows)
    notes = (f"Per job, one job at a time (medians; per-job rows in `docs/bench/{args.area}_jobs.json`), "
             f"commit {code_version()}. Jobs: {args.claims} PubHealthTab dev claims (claim check, default variant), "
             f"{args.questions} WikiTableQuestions dev questions (table question), {args.turns} chat-bench opening "
             "questions (chat turn, default knowledge base). `computed` = prompt tokens the server computed "
             "(prompt minus those its prefix cache served) as the client's per-request usage says it; `server_*` "
             "are the server's own counters over each job (vLLM's /metrics), the measure, since a request with n "
             "samples is fanned out and its usage then counts the siblings' cache hits as cached. "
             + ("Nothing else ran on the server during any job. " if alone else "**Some jobs began while another "
                "client used the server: their `server_*` counts include that client's tokens.** ")
             + ("" if cached_reported else "The server reported no cached prompt tokens: it was started without "
                "`--enable-prompt-tokens-details` (or served none from cache), so `computed` equals the prompt. ")
             + "Generated with `tests/bench/bench_tokens.py`.")
    write_bench(args.area, results, notes=notes, runs=args.area != "tokens")
    out = DOCS_DIR / "bench" / ("" if args.area == "tokens" else "runs") / f"{args.area}_jobs.json"
    out.write_text(json.dumps(rows, indent=1, default=str) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=6)
    parser.add_argument("--questions", type=int, default=6)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--area", default="tokens", help="another name writes under docs/bench/runs/")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
