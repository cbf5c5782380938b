"""JSON layouts (#15, #13): how structured outputs are laid out, side by side on the same claims and messages.

vLLM's JSON grammar lets the model write whitespace between tokens, and Qwen2.5-Coder pretty-prints: a table
program came back as '{\\n  "filters": [],\\n  "fn": "count", …'. Re-serialised compactly, 30 sampled programs
on WTQ training tables took 34% fewer tokens. ``EVIDENTIA_VLLM_JSON_LAYOUT`` chooses the layout: ``free`` (the
default server), ``one-line`` (guidance backend; one line with ', ' and ': ', as the prompts' examples are
written) or ``compact`` (xgrammar's disable_any_whitespace). This benchmark measures what each buys.

Run on demand, once per server configuration (the server must be restarted in between)::

    evidentia model serve &                                             # free, the default
    .venv/bin/python tests/bench/bench_json_layout.py measure --arm default --claims 8
    EVIDENTIA_VLLM_JSON_LAYOUT=compact evidentia model serve &           # after stopping the first
    .venv/bin/python tests/bench/bench_json_layout.py measure --arm compact-json --claims 8
    EVIDENTIA_VLLM_JSON_LAYOUT=one-line evidentia model serve &
    .venv/bin/python tests/bench/bench_json_layout.py measure --arm one-line-json --claims 8
    .venv/bin/python tests/bench/bench_json_layout.py report --base default --arms compact-json,one-line-json

``measure`` checks the first N PubHealthTab test claims one at a time (the claim-check latency of
docs/bench/tables.json, and the tokens each check generated), runs the intent step on the 20 messages of
bench_intent_tokens.py, and records what share of the structured outputs held a newline (0 shows the arm
was served without free whitespace). ``report`` writes docs/bench/json_layout.{json,md,png}. The quality side
(the same PubHealthTab dev claims and chat bench under each arm) is bench_format_gate.py --candidate ARM.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from contextvars import ContextVar
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "bench"))

from assistant.settings import Settings  # noqa: E402

ARMS_DIR = "json-layout"  # under <data dir>/eval


def arm_path(arm: str) -> Path:
    return Settings().data_dir / "eval" / ARMS_DIR / f"{arm}.json"


class Counter:
    """Generated tokens of every LLM call made inside a context, and whether structured outputs held newlines."""

    def __init__(self) -> None:
        self.sink: ContextVar[list[int]] = ContextVar("json_layout_sink")
        self.structured = 0
        self.with_newline = 0

    def install(self) -> None:
        from assistant.llm import LLMClient

        create = LLMClient._create
        counter = self

        async def counting_create(self, **kwargs):
            resp = await create(self, **kwargs)
            usage = getattr(resp, "usage", None)
            try:
                counter.sink.get().append(int(getattr(usage, "completion_tokens", 0) or 0))
            except LookupError:
                pass
            if "response_format" in kwargs and not kwargs.get("stream"):
                for choice in getattr(resp, "choices", []) or []:
                    text = getattr(getattr(choice, "message", None), "content", "") or ""
                    counter.structured += 1
                    counter.with_newline += "\n" in text
            return resp

        LLMClient._create = counting_create


async def claim_checks(counter: Counter, n: int) -> list[dict]:
    from bench_tables import eval_data_dir, load_pubhealthtab, select_items

    from assistant.llm import LLMClient
    from kb.embeddings import Embedder
    from kb.errors import LLMResponseError
    from tools.verify_claim import check_claim

    settings = Settings()
    embedder = Embedder(settings.embedding_model)
    items = select_items("pubhealthtab", load_pubhealthtab(eval_data_dir(settings)), seed=0, limit=n)
    llm = LLMClient(settings)
    out = []
    try:
        for it in items:
            made: list[int] = []
            token = counter.sink.set(made)
            t0 = time.perf_counter()
            try:
                label = (await check_claim(llm, it.table, it.claim, embedder=embedder)).label
            except LLMResponseError as exc:  # counted as a failed check (its time and tokens still count)
                label = f"error: {str(exc)[:80]}"
            finally:
                counter.sink.reset(token)
            out.append({"id": it.id, "seconds": round(time.perf_counter() - t0, 2), "tokens": sum(made),
                        "calls": len(made), "label": label, "gold": it.label})
            print(json.dumps(out[-1]), flush=True)
    finally:
        await llm.aclose()
    return out


def measure(arm: str, claims: int) -> None:
    import bench_intent_tokens

    counter = Counter()
    counter.install()
    checks = asyncio.run(claim_checks(counter, claims))
    intent_file = arm_path(arm).with_suffix(".intent.json")
    intent_file.parent.mkdir(parents=True, exist_ok=True)
    asyncio.run(bench_intent_tokens.run(intent_file))  # it counts its own tokens; ours sees the newlines
    intent = json.loads(intent_file.read_text())
    data = {"arm": arm, "claims": checks, "intent": intent,
            "structured_outputs": counter.structured, "structured_with_newline": counter.with_newline}
    arm_path(arm).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"{arm}: claim check median {statistics.median(c['seconds'] for c in checks):.1f} s, "
          f"{counter.with_newline} of {counter.structured} structured outputs held a newline")


def report(base: str, arms: list[str]) -> None:
    from assistant.evals.report import write_bench

    data = {x: json.loads(arm_path(x).read_text()) for x in [base] + arms}

    def med(arm: str, key: str) -> float:
        return statistics.median(c[key] for c in data[arm]["claims"])

    def intent(arm: str, key: str) -> float:
        return data[arm]["intent"]["summary"][key]

    def newline_share(arm: str) -> float:
        return data[arm]["structured_with_newline"] / max(1, data[arm]["structured_outputs"])

    results = {}
    for arm in [base] + arms:
        results.update({
            f"claim_check_median_s__{arm}": (med(arm, "seconds"), "s"),
            f"claim_check_tokens_median__{arm}": (med(arm, "tokens"), "tokens"),
            f"intent_latency_median_s__{arm}": (intent(arm, "seconds_median"), "s"),
            f"intent_tokens_per_turn_mean__{arm}": (intent(arm, "tokens_mean"), "tokens"),
            f"structured_outputs_with_newline__{arm}": (newline_share(arm), "share"),
        })
        if arm != base:
            results[f"claim_check_time_ratio__{arm}"] = (med(arm, "seconds") / med(base, "seconds"), f"{arm} / {base}")
    claims = data[base]["claims"]
    same = {arm: sum(x["label"] == y["label"] for x, y in zip(claims, data[arm]["claims"])) for arm in arms}
    right = {arm: sum(c["label"] == c["gold"] for c in data[arm]["claims"]) for arm in [base] + arms}
    head = " | ".join(f"s / tokens / label ({a})" for a in [base] + arms)
    rows = "\n".join(
        f"| {c['id'][:8]} | " + " | ".join(f"{data[a]['claims'][i]['seconds']} / {data[a]['claims'][i]['tokens']} / "
                                          f"{data[a]['claims'][i]['label']}" for a in [base] + arms)
        + f" | {c['gold']} |" for i, c in enumerate(claims))
    notes = (f"Arms: `{base}` (the default server) and " + ", ".join(f"`{a}`" for a in arms) + ", measured one after "
             "the other by tests/bench/bench_json_layout.py on the same machine with nothing else running. Claim "
             f"checks: the first {len(claims)} PubHealthTab test claims, one at a time, default variant; right: "
             + ", ".join(f"{a} {right[a]}" for a in [base] + arms) + f" of {len(claims)}; same label as {base}: "
             + ", ".join(f"{a} {same[a]}" for a in arms) + ". Intent: the 20 messages of bench_intent_tokens.py, "
             "six conversations side by side. The share of structured outputs holding a newline shows which arm was "
             "really served without free whitespace.\n\n"
             f"| claim | {head} | gold |\n|---|" + "---|" * (len(arms) + 2) + "\n" + rows + "\n\n"
             "Quality (PubHealthTab dev and the chat bench under each arm): docs/bench/<arm>_gate.md.\n")
    write_bench("json_layout", results, notes=notes, plot={
        "x": ["claim check s", "claim tokens", "intent s", "intent tokens"],
        "series": {a: [med(a, "seconds"), med(a, "tokens"), intent(a, "seconds_median"), intent(a, "tokens_mean")]
                   for a in [base] + arms},
        "xlabel": "measure", "ylabel": "median (s or tokens)", "logx": False})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--arm", required=True, help="a name for the configuration being served (default, one-line-json)")
    m.add_argument("--claims", type=int, default=8)
    r = sub.add_parser("report")
    r.add_argument("--base", default="default")
    r.add_argument("--arms", default="compact-json,one-line-json", help="comma-separated arms beside the base")
    args = ap.parse_args()
    if args.cmd == "measure":
        measure(args.arm, args.claims)
    else:
        report(args.base, [a for a in args.arms.split(",") if a])


if __name__ == "__main__":
    main()
