"""Per-turn latency (intent, retrieval, generation) and first-try citation validity, real model.

Run on demand: ``.venv/bin/python tests/bench/bench_chat.py [--limit N] [--area chat-bf16]``. Needs the
served model and the default knowledge base (``evidentia kb build --default``, ``evidentia kb kg load
hetionet``). Writes docs/bench/<area>.{json,md,png} (default area: chat) and the per-turn rows beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from assistant.deps import Deps  # noqa: E402
from assistant.evals.report import write_bench  # noqa: E402
from assistant.answer.loop import Assistant  # noqa: E402
from tools.contracts import Session  # noqa: E402
from assistant.settings import Settings  # noqa: E402

# Twenty questions in eight conversations; later turns in a conversation are follow-ups.
CONVERSATIONS: list[list[str]] = [
    ["Why does a metal spoon feel colder than a wooden spoon?", "And what about a plastic one?"],
    ["What drugs treat Parkinson's disease?", "What are its symptoms?", "Which of those drugs also treats restless legs?"],
    ["How do plants make their food?", "What do they need for it?"],
    ["What causes the seasons on Earth?", "Why is it warmer in summer?"],
    ["What are the symptoms of glaucoma?", "How is it treated?", "Who is at risk?"],
    ["Which of these conducts electricity best? A) wood B) copper C) rubber D) glass"],
    ["What is the function of the mitochondria?", "And of the ribosomes?"],
    ["What is an example of a renewable energy source?", "Why is it renewable?", "What about coal?",
     "Does smoking increase the risk of lung cancer?"],
    ["At what temperature does water boil at sea level?"],
]

# Questions the default knowledge base holds no answer to, so the right outcome is an abstention (status
# no_evidence). Established by searching the KB's text (SQL LIKE over all 9,010 sentences: no sentence names
# glaucoma with risk; none gives water's boiling point, "sea level" occurs nowhere) and its graphs (Hetionet
# has no risk-factor relation). They stay in the bench: a verified answer to them is a wrong one.
# "And of the ribosomes?" (their function) was added on 2026-11-27: 3 of the 9,010 sentences name ribosomes, all
# about pseudouridine or frameshifting; ConceptNet says only "ribosome is part of animal cell", and Hetionet lists
# genes that participate in ribosome biogenesis or the ribosome. It had counted as verified with those gene facts.
# "And what about a plastic one?" (after the metal and wooden spoons: why it feels as it does) was added on
# 2026-11-27 afternoon: "plastic" occurs in 2 of the KB's everyday sentences ("plastic is a nonrenewable resource",
# "Air cannot pass through plastic."), and none of ConceptNet's HasProperty/IsA/CapableOf edges of plastic speaks of
# heat, cold, insulating or conducting. Two runs had abstained on it and counted as wrong.
# "What is the function of the mitochondria?" was moved here on 2026-11-29: 13 of the 9,010 sentences name
# mitochondria (ten from one PubMed abstract on cell death in the lace plant, three from SciFact abstracts on
# autophagy, mtDNA and fatty-acid oxidation), and none states their function;
# Hetionet holds GO processes ("mitochondrion organization") with the genes in them. Its "verified" answers ("The
# cell nucleus controls many of the functions of the cell") had passed the subject check through the linked
# process's word "organization" (commit 572c006).
NOT_IN_KB = frozenset({"Who is at risk?", "At what temperature does water boil at sea level?",
                       "And of the ribosomes?", "And what about a plastic one?",
                       "What is the function of the mitochondria?"})


# Multiple-choice questions and their right letter: a verified reply naming another option is a wrong answer,
# not a right status (the 2026-11-27 run counted "**D) glass**" as verified and right).
MC_GOLD = {"Which of these conducts electricity best? A) wood B) copper C) rubber D) glass": "B"}
_MC_CHOICE = re.compile(r"\*\*([A-Z])\)")


def mc_choice(answer: str) -> str | None:
    """The option letter a multiple-choice reply names first ("**B) copper** [S2]" -> "B"), or None."""
    m = _MC_CHOICE.search(answer)
    return m.group(1) if m else None


def right_answer(row: dict) -> bool:
    """False only for a multiple-choice reply that names the wrong option."""
    gold = MC_GOLD.get(row["question"])
    return gold is None or mc_choice(row["answer"]) == gold


def right_status(row: dict) -> bool:
    """Verified (and, for multiple choice, the right option) where the KB answers the question; an abstention where
    it does not."""
    if row["question"] in NOT_IN_KB:
        return row["status"] == "no_evidence"
    return row["status"] == "verified" and right_answer(row)


BENCH_DIR = Path(__file__).resolve().parents[2] / "docs" / "bench"


def area_dir(area: str) -> Path:
    """docs/bench/ holds the latest run of the default ("chat"); another area (a configuration measured beside it,
    e.g. chat-bf16) goes under docs/bench/runs/ (#75: one canonical result per area)."""
    return BENCH_DIR if area == "chat" else BENCH_DIR / "runs"


async def main(limit: int | None, resume: bool, area: str) -> None:
    rows_path = area_dir(area) / f"{area}_turns.json"
    settings = Settings()
    deps = Deps(settings)
    # --resume keeps measured conversations and runs only those not yet measured (whole conversations,
    # so follow-ups always have their context).
    rows = json.loads(rows_path.read_text()) if resume and rows_path.exists() else []
    done = {r["question"] for r in rows}
    n = len(rows)
    for convo in CONVERSATIONS:
        if all(q in done for q in convo):
            continue
        bot = Assistant(deps, Session(f"bench-{uuid.uuid4().hex[:8]}", user="bench"))
        for q in convo:
            if limit is not None and n >= limit:
                break
            t0 = time.perf_counter()
            r = await bot.run_turn(q)
            n += 1
            rows.append({"question": q, "status": r.status, "first_try_valid": r.first_try_valid,
                         "support_flagged": r.support_flagged, "regenerated": r.regenerated,
                         "guard_fired": r.guard_fired, "abstained": r.abstained, "unnamed_subjects": r.unnamed_subjects, "pool": r.pool,
                         "cited": r.cited, "invalid": r.invalid, "rewrite": (r.intent or {}).get("rewrite"),
                         "entities": (r.intent or {}).get("entities"), **r.timings,
                         "generated_tokens": r.generated_tokens,
                         "wall_s": time.perf_counter() - t0, "answer": r.answer[:300]})
            print(f"[{n:2d}] {r.status:11s} first_try={r.first_try_valid} {r.timings.get('total_s', 0):6.1f}s  {q}",
                  flush=True)
    await deps.aclose()

    def med(key):
        vals = [r[key] for r in rows if r.get(key) is not None]
        return statistics.median(vals) if vals else float("nan")

    judged = [r for r in rows if r["first_try_valid"] is not None]
    # A turn with no evidence at all counts as not valid on the first try: it produced no citation.
    first_try_rate = sum(1 for r in rows if r["first_try_valid"]) / len(rows) if rows else 0.0
    results = {
        "turn_latency_median_s": (med("total_s"), "s"),
        "intent_latency_median_s": (med("intent_s"), "s"),
        "retrieval_latency_median_s": (med("retrieval_s"), "s"),
        "generation_latency_median_s": (med("generation_s"), "s"),
        # every LLM request of the turn (intent, tool rounds, answer, regeneration), from the server's usage
        "generated_tokens_per_turn_median": (med("generated_tokens"), "tokens"),
        "first_try_citation_valid_rate": (first_try_rate, "ratio"),
        "final_verified_rate": (sum(1 for r in rows if r["status"] == "verified") / len(rows), "ratio"),
        # Verified multiple-choice replies that name the wrong option (MC_GOLD): verified is not right.
        "wrong_option_verified": (sum(1 for r in rows if r["status"] == "verified" and not right_answer(r)), "count"),
        # Verified (the right option, for MC_GOLD) where the KB holds the answer, abstained where it does not.
        "right_status_rate": (sum(1 for r in rows if right_status(r)) / len(rows), "ratio"),
        # The support check (#14): turns where a statement's names, numbers or most of its words were not in what
        # it cited.
        "support_check_fired_rate": (sum(1 for r in rows if r.get("support_flagged")) / len(rows), "ratio"),
        # The subject check: the evidence shown or cited named none of the turn's subjects.
        "subject_check_fired_rate": (sum(1 for r in rows if r.get("unnamed_subjects")) / len(rows), "ratio"),
        # The citation regex behind the grammar: it must never fire.
        "citation_guard_fired": (sum(1 for r in rows if r.get("guard_fired")), "count"),
        "questions": (len(rows), "count"),
    }
    rows_path.parent.mkdir(parents=True, exist_ok=True)
    rows_path.write_text(json.dumps(rows, indent=2))
    statuses = {s: sum(1 for r in rows if r["status"] == s) for s in sorted({r["status"] for r in rows})}
    write_bench(area, results, notes=(
        f"Model: `{settings.llm_model}` at {settings.effective_base_url}. {len(rows)} questions in "
        f"{len(CONVERSATIONS)} conversations (follow-ups included); {len(judged)} reached the answer step. "
        f"Statuses: {statuses}. First-try rate counts a turn as valid only if its first answer passed the "
        "citation check (turns that found no evidence count as not valid). Final verified rate: turns whose kept "
        "answer is `verified` (not `cited_by_code`, `unverified` or `no_evidence`). Right status rate: verified where "
        f"the KB holds the answer, `no_evidence` for the {len(NOT_IN_KB)} questions it does not answer "
        f"({'; '.join(sorted(NOT_IN_KB))}); a multiple-choice reply counts only if it names the right option "
        f"({len(MC_GOLD)} such question). Served weights: "
        f"{served_weights(settings)}. Per-turn rows: {rows_path.name}."),
        runs=area != "chat")


def served_weights(settings: Settings) -> str:
    """The folder the server says it serves: the configured format is not it where the server fell back to bf16
    (an AVX2-only CPU has no 4-bit kernel; seen on an AMD EPYC, where this note said w4a16 over bf16 turns)."""
    from assistant.model.serving import served_model_entries

    entries = served_model_entries(settings.effective_base_url, timeout=5)
    root = str(entries[0].get("root") or "") if entries else ""
    if not root:
        return f"{settings.model_format} (as configured; the server did not say)"
    return f"`{Path(root).name or root}` (the server's own model root)"


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--resume", action="store_true", help="keep docs/bench/<area>_turns.json; run the rest")
    ap.add_argument("--area", default="chat", help="results name under docs/bench/ (default: chat)")
    args = ap.parse_args()
    asyncio.run(main(args.limit, args.resume, args.area))
