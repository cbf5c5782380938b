"""Tokens the intent step generates per turn, on a fixed list of 20 messages, real model (issue 15 §3).

Run on demand against the served model::

    .venv/bin/python tests/bench/bench_intent_tokens.py --out /tmp/after.json
    .venv/bin/python tests/bench/bench_intent_tokens.py --code /path/to/older/checkout --out /tmp/before.json
    .venv/bin/python tests/bench/bench_intent_tokens.py --report /tmp/before.json /tmp/after.json

``--code`` imports the intent tool from another checkout (the "before" of a change); the messages, the
conversation memory and the uploaded table are the same. Only the intent step runs: its LLM calls are
counted (``usage.completion_tokens`` of each response), so a turn that rules settle counts 0 tokens and
0 calls. Conversations run side by side, turns within one in order. ``--report`` writes docs/bench/intent_tokens.{json,md,png} from a before and an after run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from contextvars import ContextVar
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Twenty messages in six conversations: greetings and thanks, questions, follow-ups, a topic switch of the
# form "Now tell me about X.", options (lettered and inline), advice, a claim, and messages about an uploaded
# table (conversation "table" has one).
CONVERSATIONS: dict[str, list[str]] = {
    "parkinson": ["Hello!", "What drugs treat Parkinson's disease?", "What are its symptoms?",
                  "Now tell me about epilepsy.", "Thanks!"],
    "nba": ["When did Wang Zhizhi join the NBA?", "Which teams?", "And after that?"],
    "choice": ["Which of these conducts electricity best? A) wood B) copper C) rubber D) glass",
               "Which is larger, the sun or the moon?"],
    "advice": ["What dose of warfarin should I take?", "Is it true that smoking increases the risk of lung cancer?",
               "How do plants make their food?"],
    "table": ["Which trial had the highest efficacy?", "How many participants did it have?",
              "BETA-2 enrolled 4,512 participants.", "What is the capital of France?"],
    "glaucoma": ["What are the symptoms of glaucoma?", "How is it treated?", "Who is at risk?"],
}
TRIALS = {"name": "trials", "title": "Vaccine trials", "columns": ["Trial", "Participants", "Year", "Efficacy (%)"],
          "rows": [["ALPHA-1", "1,200", "2019", "81%"], ["BETA-2", "4,512", "2020", "67%"],
                   ["GAMMA-3", "730", "2021", "92%"], ["DELTA-4", "2,050", "2021", "74%"],
                   ["EPSILON", "610", "2022", "55%"], ["ZETA", "3,300", "2023", "88%"]]}


async def run(out: Path) -> None:
    from assistant.deps import Deps
    from tools.contracts import EvidenceLedger
    from assistant.llm import LLMClient
    from tools.contracts import Session
    from assistant.settings import Settings
    from kb.tables import Table
    from tools.registry import ToolContext
    from tools.intent import Input, intent

    sink: ContextVar[list[int]] = ContextVar("intent_token_sink")
    create = LLMClient._create

    async def counting_create(self, **kwargs):
        resp = await create(self, **kwargs)
        usage = getattr(resp, "usage", None)
        sink.get().append(int(getattr(usage, "completion_tokens", 0) or 0))
        return resp

    LLMClient._create = counting_create
    records: dict[tuple[str, int], dict] = {}

    async def conversation(deps, conv: str, messages: list[str]) -> None:
        session = Session(conv)
        if conv == "table":
            session.add_table(Table(**TRIALS))
        deps.memory.ensure_conversation(conv, user="bench")
        for i, message in enumerate(messages):
            turn_id = deps.memory.begin_turn(conv, message)
            ctx = ToolContext(deps=deps, evidence=EvidenceLedger(), session=session)
            made: list[int] = []
            token = sink.set(made)
            t0 = time.perf_counter()
            try:
                frame = await intent(ctx, Input(message=message))
            finally:
                sink.reset(token)
            rec = {"conversation": conv, "message": message, "tokens": sum(made), "llm_calls": len(made),
                   "seconds": round(time.perf_counter() - t0, 2), "task": frame.task, "entities": frame.entities,
                   "options": frame.options, "rewrite": frame.rewrite, "source": frame.source}
            records[(conv, i)] = rec
            print(json.dumps(rec, ensure_ascii=False), flush=True)
            deps.memory.finish_turn(turn_id, answer="(bench)", status="answered", intent=frame.model_dump(),
                                    evidence=[], cited=[], valid_ids=set(), tool_calls=[], timings={})

    with tempfile.TemporaryDirectory() as tmp:
        # The shared server may queue requests for minutes: count tokens, do not give up on a busy server.
        deps = Deps(Settings(data_dir=Path(tmp), llm_timeout_s=1800))
        try:
            # Conversations run side by side (turns within one stay in order): the tokens are the same,
            # the wall time on a shared server is not.
            await asyncio.gather(*(conversation(deps, c, m) for c, m in CONVERSATIONS.items()))
        finally:
            await deps.aclose()
    records = [records[(c, i)] for c, msgs in CONVERSATIONS.items() for i in range(len(msgs))]
    tokens = [r["tokens"] for r in records]
    summary = {"turns": len(records), "tokens_total": sum(tokens), "tokens_mean": statistics.mean(tokens),
               "tokens_median": statistics.median(tokens), "llm_calls": sum(r["llm_calls"] for r in records),
               "seconds_median": statistics.median(r["seconds"] for r in records)}
    print(json.dumps(summary))
    out.write_text(json.dumps({"summary": summary, "records": records}, indent=1, ensure_ascii=False) + "\n")


def report(before_path: Path, after_path: Path, what: str) -> None:
    from assistant.evals.report import write_bench

    before, after = (json.loads(Path(p).read_text()) for p in (before_path, after_path))
    b, a = before["summary"], after["summary"]
    results = {
        "intent_tokens_per_turn_median": (a["tokens_median"], "tokens"),
        "intent_tokens_per_turn_median_before": (b["tokens_median"], "tokens"),
        "intent_tokens_per_turn_mean": (a["tokens_mean"], "tokens"),
        "intent_tokens_per_turn_mean_before": (b["tokens_mean"], "tokens"),
        "intent_llm_calls": (a["llm_calls"], f"calls in {a['turns']} turns"),
        "intent_llm_calls_before": (b["llm_calls"], f"calls in {b['turns']} turns"),
        "intent_latency_median_s": (a["seconds_median"], "s"),
        "intent_latency_median_s_before": (b["seconds_median"], "s"),
    }
    rows = "\n".join(f"| {x['message']} | {y['tokens']} | {x['tokens']} | {y['task']} | {x['task']} | "
                     f"{', '.join(y['entities'])} | {', '.join(x['entities'])} |"
                     for x, y in zip(after["records"], before["records"]))
    notes = ("Tokens generated by the intent step per turn on the 20 messages of tests/bench/bench_intent_tokens.py, "
             f"before and after a change of the intent step: {what}\n\nBoth runs against the same served model, one "
             "after the other, six conversations side by side (the latencies are those of a server taking up to six "
             "requests at once; compare the tokens).\n\n"
             "| message | tokens before | tokens after | task before | task after | entities before | entities after |\n"
             "|---|---|---|---|---|---|---|\n" + rows)
    write_bench("intent_tokens", results, notes=notes,
                plot={"x": list(range(1, len(after["records"]) + 1)),
                      "series": {"before": [r["tokens"] for r in before["records"]],
                                 "after": [r["tokens"] for r in after["records"]]},
                      "xlabel": "message", "ylabel": "generated tokens (intent)", "logx": False})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--code", type=Path, default=ROOT, help="checkout whose intent tool is measured")
    ap.add_argument("--out", type=Path, default=Path("intent_tokens_run.json"))
    ap.add_argument("--report", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    ap.add_argument("--what", default="", help="with --report: the change measured, for the notes")
    args = ap.parse_args()
    sys.path.insert(0, str(args.code.resolve()))
    if args.report:
        report(*args.report, what=args.what)
    else:
        asyncio.run(run(args.out))


if __name__ == "__main__":
    main()
