"""``evidentia eval chat``: the chat scored on its answers, not on its statuses (#75).

Questions over the default knowledge base and graphs (``chat_gold.jsonl`` beside this module), each with the gold
answer strings a right reply names (an entity, a number) or, for a question the knowledge base cannot answer, none:
there the right outcome is an abstention (status ``no_evidence``). Code checks every reply; no model judges one.

- A reply **answers right** when it is grounded (status ``verified`` or ``cited_by_code``) and names a gold string
  as a whole phrase (case, punctuation and citation marks aside).
- **Abstention** precision and recall: of the replies that abstained, the share asked of what the KB cannot answer;
  of those questions, the share that abstained.
- **Citation validity**: the share of replies whose every cited id is in that turn's evidence.
- The baseline without a model: the top sentence text search retrieves for the question, shown as the answer (it
  never abstains, and sees the question alone, without the conversation before it).

The conversations are split by a fixed seed into a dev half, to tune on, and a test half, run once per result and
sealed like the table benchmarks (:mod:`assistant.evals.sealed`).
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import statistics
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import click

BENCHMARK = "chat"
QUESTIONS = Path(__file__).with_name("chat_gold.jsonl")
SPLIT_SEED = 0  # which conversations are the test half: fixed once, never chosen by a result
GROUNDED = ("verified", "cited_by_code")
ABSTAINED = "no_evidence"
_CITATION = re.compile(r"\[[A-Z]\d+(?::[^\]]*)?\]")


@dataclass(frozen=True)
class Question:
    id: str
    conversation: str
    question: str
    answers: tuple[str, ...]  # empty: the knowledge base cannot answer it
    why: str  # where the answer is (or why there is none), for a reader checking the gold

    @property
    def answerable(self) -> bool:
        return bool(self.answers)


def load_questions(path: Path = QUESTIONS) -> list[Question]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [Question(r["id"], r["conversation"], r["question"], tuple(r["answers"]), r["why"]) for r in rows]


def split_questions(questions: list[Question], split: str) -> list[Question]:
    """The test or dev half, whole conversations at a time (a follow-up stays with the turn it follows)."""
    conversations = sorted({q.conversation for q in questions})
    test = set(random.Random(SPLIT_SEED).sample(conversations, len(conversations) // 2))
    return [q for q in questions if (q.conversation in test) == (split == "test")]


def normalise(text: str) -> str:
    """Casefolded words and numbers only, one space apart: what "names the answer" compares."""
    text = _CITATION.sub(" ", text or "").casefold().replace("’", "'")
    return " ".join(re.findall(r"[\w.%°]+(?:'\w+)?", text)).replace(" .", " ").strip(" .")


def names_answer(text: str, answers: tuple[str, ...]) -> bool:
    """Whether ``text`` names one of ``answers`` as a whole phrase."""
    padded = f" {normalise(text)} "
    return any(f" {normalise(a)} " in padded for a in answers)


def score_reply(q: Question, status: str, answer: str) -> bool:
    """Right: a grounded reply naming a gold answer, or an abstention where the KB holds none."""
    if not q.answerable:
        return status == ABSTAINED
    return status in GROUNDED and names_answer(answer, q.answers)


def summarize(rows: list[dict]) -> dict:
    """The report's figures from per-item rows (``answerable``, ``status``, ``right``, ``citations_valid``)."""
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    abstained = [r for r in rows if r["status"] == ABSTAINED]
    seconds = [r["seconds"] for r in rows if r.get("seconds") is not None]
    return {
        "accuracy": sum(r["right"] for r in rows) / len(rows) if rows else None,
        "answered_right": sum(r["right"] for r in answerable) / len(answerable) if answerable else None,
        "abstention_recall": (sum(r["status"] == ABSTAINED for r in unanswerable) / len(unanswerable)
                              if unanswerable else None),
        "abstention_precision": (sum(not r["answerable"] for r in abstained) / len(abstained) if abstained else None),
        "citation_valid": sum(r["citations_valid"] for r in rows) / len(rows) if rows else None,
        "median_turn_s": statistics.median(seconds) if seconds else None,
        "n": len(rows), "answerable": len(answerable), "unanswerable": len(unanswerable),
    }


def baseline_rows(questions: list[Question], store) -> list[dict]:
    """The top retrieved sentence as the answer, for each question alone (never abstains, cites that sentence)."""
    from tools.text_search import rank_kb

    rows = []
    for q in questions:
        ranked = rank_kb(store, q.question, k=1)
        hits = store.hits(ranked.rows[:1]) if len(ranked.rows) else []
        answer = hits[0].text if hits else ""
        status = "verified" if hits else ABSTAINED
        rows.append({"id": q.id, "answerable": q.answerable, "status": status, "answer": answer[:300],
                     "right": score_reply(q, status, answer), "citations_valid": True})
    return rows


async def _ask_conversation(deps, questions: list[Question]) -> list[dict]:
    """One conversation's turns, in order, through the whole loop; a row per turn."""
    from assistant.answer.loop import Assistant
    from tools.contracts import Session

    bot = Assistant(deps, Session(f"chat-eval-{uuid.uuid4().hex[:8]}", user="eval"))
    rows = []
    for q in questions:
        t0 = time.perf_counter()
        r = await bot.run_turn(q.question)
        evidence_ids = {e.id for e in r.evidence}
        rows.append({"id": q.id, "conversation": q.conversation, "answerable": q.answerable, "status": r.status,
                     "right": score_reply(q, r.status, r.answer), "answer": r.answer,
                     "cited": r.reply_cited, "citations_valid": set(r.reply_cited) <= evidence_ids and not r.invalid,
                     "seconds": round(time.perf_counter() - t0, 2)})
    return rows


def run(settings=None, *, split: str = "test", exploratory: bool = False, limit: int | None = None,
        docs_dir: Path | None = None, echo=click.echo) -> Path:
    """Ask (or resume) the split's conversations and write docs/eval/chat[-dev].{json,md,png}."""
    from assistant.deps import Deps
    from assistant.evals.report import ResultsLog, provenance, write_eval
    from assistant.evals.sealed import SealedRun
    from assistant.settings import Settings
    from kb.errors import LLMUnavailable

    settings = settings or Settings()
    questions = split_questions(load_questions(), split)
    if limit:
        keep = sorted({q.conversation for q in questions})[:limit]
        questions = [q for q in questions if q.conversation in keep]
    run = SealedRun(BENCHMARK, split, exploratory, settings, docs_dir)
    docs_dir = run.report_dir
    log = ResultsLog(settings.data_dir / "eval" / f"chat-gold-{split}.jsonl")

    deps = Deps(settings)
    if "text" in deps.empty_sources():
        raise click.ClickException("The default knowledge base is empty: run `evidentia kb build --default` first.")
    conversations: dict[str, list[Question]] = {}
    for q in questions:
        conversations.setdefault(q.conversation, []).append(q)
    todo = [turns for turns in conversations.values() if not all(run.counts(log.get("default", q.id)) for q in turns)]

    async def ask_all() -> None:
        try:
            for n, turns in enumerate(todo, 1):
                for row in await _ask_conversation(deps, turns):  # a conversation is asked whole, or again
                    log.add("default", row["id"], **row)
                    echo(f"  [{n}/{len(todo)}] {row['status']:13s} {'right' if row['right'] else 'WRONG'} "
                         f"{row['seconds']:5.1f}s  {row['id']}")
        finally:
            await deps.aclose()

    try:
        if todo:
            asyncio.run(ask_all())
    except LLMUnavailable as exc:
        raise click.ClickException(str(exc)) from exc
    run.record(items=len(questions), checked=sum(len(t) for t in todo), variants=["default"])
    by_id = {q.id: q for q in questions}
    # Scored again from the logged reply, against today's gold (a gold string added later counts the same way).
    rows = [{**r, "answerable": by_id[r["id"]].answerable,
             "right": score_reply(by_id[r["id"]], r["status"], r.get("answer") or "")}
            for r in log.records("default") if r["id"] in by_id and run.made_here(r)]
    store = deps.text_kb  # the same stores the turns used (aclose closed only the model client)
    variants = {"default": summarize(rows), "top-sentence baseline": summarize(baseline_rows(questions, store))}
    stamp = run.stamp("the dev half of the conversations")
    answerable = sum(q.answerable for q in questions)
    notes = (run.note(stamp)
             + f"The {split} half of {len(load_questions())} questions (`assistant/evals/chat_gold.jsonl`): "
             f"{len(questions)} questions in {len(conversations)} conversations, {answerable} the default knowledge "
             f"base or graphs answer and {len(questions) - answerable} they do not. Answered so far: {len(rows)}. "
             "Right: a grounded reply (verified or cited by code) that names a gold answer as a whole phrase, or an "
             "abstention (no_evidence) where the knowledge base holds no answer; checked by code. The baseline "
             "shows the top sentence text search retrieves for the question alone.\n\n"
             + (f"Code behind the replies: {provenance(rows)}.\n" if rows else ""))
    name = BENCHMARK if split == "test" else f"{BENCHMARK}-{split}"
    return write_eval(name, model=settings.llm_model, items=len(questions), seed=SPLIT_SEED, variants=variants,
                      notes=notes, docs_dir=docs_dir,
                      metric_keys=["accuracy", "answered_right", "abstention_recall", "abstention_precision",
                                   "citation_valid", "median_turn_s", "n"],
                      extra={"split": split, "item_ids": [q.id for q in questions],
                             # The one constant reply: always abstaining is right on every unanswerable question.
                             "majority_baseline": (len(questions) - answerable) / len(questions) if questions else None,
                             "majority_label": "always abstain", "baseline_items": len(questions),
                             # Our replies, item by item: what `evidentia eval recompute` scores again.
                             "per_item": {r["id"]: {k: r.get(k) for k in ("status", "answer", "citations_valid",
                                                                          "seconds")} for r in rows},
                             **stamp})


def register(group) -> None:
    @group.command(BENCHMARK)
    @click.option("--split", type=click.Choice(["test", "dev"]), default="test", show_default=True,
                  help="test: the sealed half of the conversations; dev: the half to tune on.")
    @click.option("--limit", type=int, default=None, help="Only the first N conversations of the split.")
    @click.option("--exploratory", is_flag=True,
                  help="Allow --limit on the test half: counted in docs/eval/test-runs.jsonl, never published.")
    def cmd(split: str, limit: int | None, exploratory: bool) -> None:
        """The chat scored on answers: gold strings checked by code, abstentions where the KB has no answer."""
        from assistant.evals import sealed as sealing

        sealing.refuse_unsealed(split, replay=False, limit=limit, exploratory=exploratory)
        click.echo(f"Wrote {run(split=split, limit=limit, exploratory=exploratory)}")
