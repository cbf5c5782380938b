"""``evidentia eval medquad``: does a text answer answer, and does the assistant abstain when the KB cannot (#78)?

MedQuAD (``<kb mirror>/medquad/medquad_answered.jsonl.gz``: 16,407 answered question-answer pairs from NIH sites)
is where the default KB takes its answer documents from, so each question has a known *gold document*. Questions
are grouped by their focus (the disease, drug or test a page is about) and the foci are split in two by a hash of
their name: ``dev`` to tune on, ``test`` sealed (:mod:`assistant.evals.sealed`). From each split, with a fixed seed:

- *answerable*: ``per_half`` foci, one question each, whose gold document is in the KB for the run (the default KB
  holds only ~140 MedQuAD pages, so the gold pages not in it are added to the run's copy). Right: the reply
  cites a sentence of the gold document and does not abstain. Beside it, ROUGE-L (F1, words) of the reply's
  statements against the gold answer, and whether any document on the same focus was cited.
- *unanswerable*: ``per_half`` other foci, one question each, with **every** KB document on that focus removed for
  the run. Both changes are made in a copy of the text KB under the data folder; the user's KB is never changed. Right: the reply
  abstains (``no_evidence``, or says the evidence does not answer).

``accuracy`` is the share right over both halves. Baselines beside it, on the same items and the same KB copy:
*always abstain* (right on every unanswerable question: the constant, 0.5 with equal halves) and the *top sentence*
text search retrieves for the question (never abstains; right when that sentence is from the gold document).
Per-item records go to ``<data_dir>/eval/medquad-<split>.jsonl``; an interrupted run resumes there.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import random
import re
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import click

BENCHMARK = "medquad"
SEED = 21
PER_HALF = 50
VARIANT = "default"
MIRROR_FILE = ("medquad", "medquad_answered.jsonl.gz")


@dataclass(frozen=True)
class Item:
    id: str  # the KB document id of the gold answer: "medquad:<file>#<qid>"
    question: str
    focus: str
    qtype: str
    answerable: bool
    gold_answer: str


# -- the data ------------------------------------------------------------------------------------------------
def load_records(kb_mirror_dir: Path | None) -> list[dict]:
    path = Path(kb_mirror_dir or "").joinpath(*MIRROR_FILE)
    if not path.exists():
        raise click.ClickException(f"{path} not found: set EVIDENTIA_KB_MIRROR_DIR (e.g. ../shared/kb-data).")
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def kb_doc_id(rec: dict) -> str:
    """The id the default KB gives this record's answer (kb.default_corpus.medquad_documents)."""
    where = (rec.get("file") or "").removesuffix(".xml") or rec.get("collection", "")
    return f"medquad:{where}#{rec['qid']}"


def focus_key(rec: dict) -> str:
    return re.sub(r"\s+", " ", (rec.get("focus") or "").strip().lower())


def split_of(focus: str) -> str:
    """``dev`` or ``test`` for a focus, fixed by its name: a focus (and every question on it) is in one split only."""
    return "dev" if hashlib.sha1(focus.encode("utf-8")).digest()[0] % 2 == 0 else "test"


def medquad_docs_in_kb(store) -> set[str]:
    rows = store.db.execute("SELECT doc_id FROM documents WHERE doc_id LIKE 'medquad:%'")
    return {r[0] for r in rows}


def choose_items(records: list[dict], split: str, *, per_half: int = PER_HALF,
                 seed: int = SEED) -> tuple[list[Item], set[str]]:
    """The split's fixed items (answerable half, then unanswerable half) and the KB document ids to hide for them.

    A focus gives one question (drawn with ``seed``), so no two items share a page. The unanswerable half's foci lose
    every page on them, across collections.
    """
    by_focus: dict[str, list[dict]] = {}
    for rec in records:
        key = focus_key(rec)
        if key and split_of(key) == split:
            by_focus.setdefault(key, []).append(rec)
    foci = sorted(by_focus)
    rng = random.Random(f"{seed}-{split}")
    rng.shuffle(foci)
    if len(foci) < 2 * per_half:
        raise click.ClickException(f"Only {len(foci)} MedQuAD foci in the {split} split (need {2 * per_half}).")
    items, hidden = [], set()
    for n, focus in enumerate(foci[:2 * per_half]):
        answerable = n < per_half
        rec = rng.choice(sorted(by_focus[focus], key=kb_doc_id))
        if not answerable:
            hidden |= {kb_doc_id(r) for r in by_focus[focus]}
        items.append(Item(id=kb_doc_id(rec), question=rec["question"], focus=rec.get("focus") or focus,
                          qtype=rec.get("qtype", ""), answerable=answerable, gold_answer=rec["answer"]))
    return items, hidden


# -- the KB without the unanswerable half's pages ----------------------------------------------------------------
def eval_kb(settings, records: list[dict], items: list[Item], hidden: set[str], split: str,
            echo=click.echo) -> Path:
    """A copy of the text KB with the answerable items' gold pages added (where missing) and ``hidden`` removed, made
    once per split and item set, under the data folder. The user's own KB is only read."""
    from kb.default_corpus import medquad_documents
    from kb.text_store import TextStore

    source = Path(settings.kb_dir) / "text"
    target = Path(settings.data_dir) / "eval" / f"{BENCHMARK}-{split}-kb"
    gold = {it.id for it in items if it.answerable}
    stamp = hashlib.sha256("\n".join(sorted(gold) + ["--"] + sorted(hidden)).encode()).hexdigest()[:16]
    made_from = _kb_signature(source)
    marker = target / "MADE"
    if marker.exists() and marker.read_text().split() == [stamp, made_from]:
        return target / "text"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target / "text")
    store = TextStore(target / "text", embedding_model=settings.embedding_model)
    lacking = gold - medquad_docs_in_kb(store)
    missing = [r for r in records if kb_doc_id(r) in lacking]
    echo(f"Making the run's KB: adding {len(missing)} gold pages, hiding every page on "
         f"{sum(not it.answerable for it in items)} foci …")
    if missing:
        store.add_documents(list(medquad_documents(missing)), collection="medquad", show_progress=False)
    removed = store.remove_documents(sorted(hidden & medquad_docs_in_kb(store)))
    store.close()
    marker.write_text(f"{stamp} {made_from}\n")
    echo(f"  removed {removed['documents']} documents, {removed['sentences']} sentences")
    return target / "text"


def _kb_signature(store_dir: Path) -> str:
    """What the copy was made from: the user's KB's documents and live sentences (not file times: opening a store
    touches its files)."""
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(f"file:{store_dir / 'text.db'}?mode=ro", uri=True)) as db:
        docs = db.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
        rows, live = db.execute("SELECT COUNT(*), COALESCE(SUM(live), 0) FROM sentences").fetchone()
    return f"{docs}-{rows}-{live}"


# -- scoring ---------------------------------------------------------------------------------------------------
_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence (one row of the dynamic programme at a time)."""
    if len(a) < len(b):
        a, b = b, a
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, 1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


def rouge_l(candidate: str, reference: str) -> float:
    """ROUGE-L F1 over lower-cased words (Lin 2004, beta = 1); 0.0 when either side has no words."""
    c, r = words(candidate), words(reference)
    if not c or not r:
        return 0.0
    lcs = _lcs_length(c, r)
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(c), lcs / len(r)
    return 2 * precision * recall / (precision + recall)


def record_of(result, item: Item, seconds: float) -> dict:
    """What one turn says about the item: abstained or not, which documents it cited, how close its words are."""
    by_id = {e.id: e for e in result.evidence}
    cited_docs = [str(by_id[c].meta.get("doc_id", "")) for c in result.cited
                  if c in by_id and by_id[c].kind == "sentence"]
    abstained = bool(result.abstained or result.status in ("no_evidence", "error"))
    focus = item.focus.lower()
    return {"answerable": item.answerable, "status": result.status, "abstained": abstained,
            "gold_cited": item.id in cited_docs,
            # a sentence's source is its document's title, "<focus> — <site>: <question>"
            "focus_cited": any(focus and focus in str(by_id[c].source).lower() for c in result.cited if c in by_id),
            "cited_docs": sorted(set(cited_docs)), "rouge_l": round(rouge_l(result.answer, item.gold_answer), 4),
            # the focus check's abstention: the subjects of the pages the reply would have cited (#78)
            "off_focus": list(getattr(result, "off_focus", []) or []),
            "answer": result.answer[:1500], "seconds": round(seconds, 1),
            "error": result.answer if result.status == "error" else ""}


def is_right(rec: dict) -> bool:
    return (not rec["abstained"] and rec["gold_cited"]) if rec["answerable"] else rec["abstained"]


def summarise(records: list[dict]) -> dict[str, Any]:
    """A variant's figures from its per-item records (both halves)."""
    ans = [r for r in records if r["answerable"]]
    una = [r for r in records if not r["answerable"]]

    def share(rows: list[dict], key) -> float:
        return sum(bool(key(r)) for r in rows) / len(rows) if rows else 0.0

    return {"accuracy": share(records, is_right),
            "gold_cited_answerable": share(ans, lambda r: r["gold_cited"] and not r["abstained"]),
            "focus_cited_answerable": share(ans, lambda r: r["focus_cited"] and not r["abstained"]),
            "rouge_l_answerable": (sum(r["rouge_l"] for r in ans if not r["abstained"]) / len(ans)) if ans else 0.0,
            "abstain_rate_answerable": share(ans, lambda r: r["abstained"]),
            "abstain_rate_unanswerable": share(una, lambda r: r["abstained"]),
            "s_per_question": (sum(r.get("seconds") or 0 for r in records) / len(records)) if records else 0.0,
            "n_answerable": len(ans), "n_unanswerable": len(una)}


def baseline_records(items: list[Item], store) -> dict[str, list[dict]]:
    """The two constants' records: the top sentence text search retrieves (never abstains) and always abstaining."""
    from tools.text_search import rank_kb

    top, abstain = [], []
    for item in items:
        ranked = rank_kb(store, item.question, k=1)
        hits = store.hits(ranked.rows[:1]) if len(ranked.rows) else []
        doc = str(hits[0].doc_id) if hits else ""
        text = hits[0].text if hits else ""
        top.append({"id": item.id, "answerable": item.answerable, "status": "verified" if hits else "no_evidence",
                    "abstained": not hits, "gold_cited": doc == item.id, "focus_cited": bool(
                        hits and item.focus.lower() in hits[0].title.lower()),
                    "rouge_l": round(rouge_l(text, item.gold_answer), 4), "seconds": 0.0})
        abstain.append({"id": item.id, "answerable": item.answerable, "status": "no_evidence", "abstained": True,
                        "gold_cited": False, "focus_cited": False, "rouge_l": 0.0, "seconds": 0.0})
    return {"top-sentence baseline": top, "always-abstain baseline": abstain}


# -- running ---------------------------------------------------------------------------------------------------
def run(settings=None, *, split: str = "dev", per_half: int = PER_HALF, concurrency: int = 1,
        exploratory: bool = False, docs_dir: Path | None = None, echo=click.echo) -> Path:
    """Ask (or resume) the split's questions and write docs/eval/medquad[-dev].{json,md,png}."""
    from assistant.deps import Deps
    from assistant.evals.report import ResultsLog, provenance, write_eval
    from assistant.evals.sealed import SealedRun
    from assistant.settings import Settings
    from kb.text_store import TextStore

    settings = settings or Settings()
    store = Deps(settings).text_kb
    if store.is_empty:
        raise click.ClickException("The text KB is empty: build it with `evidentia kb build --default`.")
    records = load_records(settings.kb_mirror_dir)
    items, hidden = choose_items(records, split, per_half=per_half)
    kb_path = eval_kb(settings, records, items, hidden, split, echo)
    run_ = SealedRun(BENCHMARK, split, exploratory, settings, docs_dir)
    log = ResultsLog(Path(settings.data_dir) / "eval" / f"{BENCHMARK}-{split}.jsonl")
    todo = [it for it in items if not run_.counts(log.get(VARIANT, it.id))]
    echo(f"medquad ({split}): {len(items)} questions ({per_half} in the KB, {per_half} hidden); {len(todo)} to ask")
    # One holder for the turns and the baselines: the run's KB copy and its encoder are loaded once.
    deps = Deps(settings, text_kb=lambda d: TextStore(kb_path, embedder=d.embedder))
    asyncio.run(_answer_each(deps, log, todo, concurrency, echo))
    run_.record(items=len(items), checked=len(todo), variants=[VARIANT])
    wanted = {it.id: it for it in items}
    records = [r for r in log.records(VARIANT) if r["id"] in wanted and run_.made_here(r)]
    baselines = baseline_records(items, deps.text_kb)  # aclose closed only the model client
    variants = {VARIANT: summarise(records), **{k: summarise(v) for k, v in baselines.items()}}
    stamp = run_.stamp("the dev split (foci hashed to dev)")
    notes = (run_.note(stamp)
             + f"MedQuAD {split} split: {len(items)} questions, one per focus (foci split by a hash of their name, so "
             f"no page is in both splits), drawn with seed {SEED}: {per_half} whose gold answer is in the default KB "
             f"and {per_half} whose every page on the focus was removed, in a copy of the default KB made for the run "
             f"(which adds the gold pages the default KB lacks and hides {len(hidden)} pages). Each asked as a fresh chat turn. Right: in the KB, a reply that cites a "
             "sentence of the gold document and does not abstain; hidden, an abstention. ROUGE-L: F1 over words of "
             "the reply against the gold answer (an abstention scores 0). Baselines on the same items and KB copy: "
             "the top sentence text search retrieves (never abstains) and always abstaining (the constant). A hidden "
             "focus may still be answered by the knowledge graphs (Hetionet lists symptoms of many diseases): such a "
             "reply counts as wrong here, so the abstention figure is a lower bound on honest behaviour. "
             "Answered so far: " + f"{len(records)}.\n\n"
             + (f"Code behind the replies: {provenance(records)}.\n" if records else ""))
    name = BENCHMARK if split == "test" else f"{BENCHMARK}-{split}"
    by_id = {r["id"]: r for r in records}
    return write_eval(name, model=settings.llm_model, items=len(items), seed=SEED, variants=variants, notes=notes,
                      docs_dir=run_.report_dir,
                      metric_keys=["accuracy", "gold_cited_answerable", "focus_cited_answerable", "rouge_l_answerable",
                                   "abstain_rate_answerable", "abstain_rate_unanswerable", "s_per_question"],
                      extra={"split": split, "item_ids": [it.id for it in items],
                             "majority_baseline": variants["always-abstain baseline"]["accuracy"],
                             "majority_label": "always abstain", "baseline_items": len(items),
                             # Each of our replies and both baselines, item by item: what `eval recompute` re-scores.
                             "per_item": {i: {k: by_id[i][k] for k in ("answerable", "status", "abstained",
                                                                       "gold_cited", "focus_cited", "rouge_l",
                                                                       "seconds")}
                                          for i in wanted if i in by_id},
                             "baseline_per_item": {name_: {r["id"]: {k: r[k] for k in (
                                 "answerable", "abstained", "gold_cited", "focus_cited", "rouge_l")} for r in rows}
                                 for name_, rows in baselines.items()},
                             "items_detail": [asdict(it) | {"gold_answer": None} for it in items], **stamp})


async def _answer_each(deps, log, todo, concurrency, echo) -> None:
    from assistant.answer.loop import Assistant
    from assistant.evals.report import bounded_map
    from tools.contracts import Session


    async def one(item: Item) -> None:
        bot = Assistant(deps, Session(f"medquad-{hashlib.sha1(item.id.encode()).hexdigest()[:10]}", user="eval"))
        t = time.perf_counter()
        result = await bot.run_turn(item.question)
        if result.status == "error" and result.error_kind == "llm_unavailable":
            raise click.ClickException(result.answer)
        rec = log.add(VARIANT, item.id, **record_of(result, item, time.perf_counter() - t))
        echo(f"  {'in KB ' if item.answerable else 'hidden'} {rec['status']:12s} "
             f"{'right' if is_right(rec) else 'WRONG'}  rouge-L {rec['rouge_l']:.2f}  {rec['seconds']:5.1f}s  "
             f"{item.question[:70]}")

    try:
        await bounded_map(one, todo, concurrency)
    finally:
        await deps.aclose()


def register(group) -> None:
    @group.command(BENCHMARK)
    @click.option("--split", type=click.Choice(["dev", "test"]), default="dev", show_default=True,
                  help="dev: the foci to tune on; test: the sealed foci, run once per result.")
    @click.option("--per-half", type=int, default=PER_HALF, show_default=True,
                  help="Questions in each half (in the KB, hidden).")
    @click.option("--concurrency", type=int, default=1, show_default=True,
                  help="Questions in flight at once (the server batches them).")
    @click.option("--exploratory", is_flag=True,
                  help="A look at the test split that publishes nothing (counted in docs/eval/test-runs.jsonl).")
    def cmd(split: str, per_half: int, concurrency: int, exploratory: bool) -> None:
        """MedQuAD: cites the gold page when the KB holds it, abstains when its pages are hidden (#78)."""
        from assistant.evals import sealed as sealing

        sealing.refuse_unsealed(split, replay=False, limit=per_half if per_half != PER_HALF else None,
                                exploratory=exploratory)
        click.echo(f"Wrote {run(split=split, per_half=per_half, concurrency=concurrency, exploratory=exploratory)}")
