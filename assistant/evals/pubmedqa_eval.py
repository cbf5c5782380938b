"""``evidentia eval pubmedqa``: grounded answering and honest abstention over the default KB (#14).

PubMedQA (ori_pqal.json, 1,000 expert-labelled yes/no/maybe questions, each with its abstract) is asked
through the whole chat turn (intent, plan, retrieval, one ranked pool, the grammar-bound answer):

- *answerable*: a fixed seeded 150 of the questions whose abstracts are in the default KB (the KB holds the
  first ~2,000 PubMedQA sentences, 176 abstracts); *unanswerable*: a fixed seeded 150 whose abstracts are not.
- ``accuracy``: the answer's verdict (the yes/no/maybe slot of the schema) equals the gold decision on the
  answerable half; an abstention or a missing verdict counts as wrong. Beside it, the always-"yes" baseline.
- ``citation_precision``: of the sentences cited on the answerable half, the share from the question's own
  abstract (the closest evidence of an abstention counts too: it is shown as a citation).
- ``abstain_rate_answerable`` / ``abstain_rate_unanswerable``: the share of turns that said the evidence does
  not answer (or found none).
- ``refrain_accuracy``: over both halves, the refrain decision is right when it matches whether the gold
  abstract is in the KB (QUASAR-faithful on CompMix: 0.838).

Per-item results go to ``<data_dir>/eval/pubmedqa-answers.jsonl``; an interrupted run resumes there.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from pathlib import Path

import click

BENCHMARK = "pubmedqa"
SEED = 14
HALF = 150
VARIANT = "default"
QUASAR_FAITHFUL_REFRAIN = 0.838


def questions_path(kb_mirror_dir: Path | None) -> Path:
    return (kb_mirror_dir or Path("")) / "pubmedqa" / "ori_pqal.json"


def load_questions(kb_mirror_dir: Path | None) -> dict[str, dict]:
    path = questions_path(kb_mirror_dir)
    if not path.exists():
        raise click.ClickException(f"{path} not found: set EVIDENTIA_KB_MIRROR_DIR (e.g. ../shared/kb-data).")
    return json.loads(path.read_text(encoding="utf-8"))


def pmids_in_kb(store) -> set[str]:
    """PubMed ids whose abstract has live sentences in the text store."""
    rows = store.db.execute("SELECT DISTINCT doc_id FROM sentences WHERE doc_id LIKE 'pubmed:%' AND live = 1")
    return {r[0].split(":", 1)[1] for r in rows}


def choose_items(data: dict[str, dict], in_kb: set[str], half: int = HALF, seed: int = SEED) -> list[dict]:
    """The fixed items: ``half`` answerable then ``half`` unanswerable, each drawn with ``seed`` from sorted ids."""
    rng = random.Random(seed)
    answerable = sorted(p for p in data if p in in_kb)
    unanswerable = sorted(p for p in data if p not in in_kb)
    if len(answerable) < half:
        raise click.ClickException(f"Only {len(answerable)} PubMedQA abstracts are in the KB (need {half}); build "
                                   "it with `evidentia kb build --default`.")
    picked = [(p, True) for p in rng.sample(answerable, half)] + [(p, False) for p in rng.sample(unanswerable, half)]
    return [{"id": p, "question": data[p]["QUESTION"], "gold": data[p]["final_decision"], "answerable": a}
            for p, a in picked]


def dev_items(data: dict[str, dict], in_kb: set[str], seed: int = SEED) -> list[dict]:
    """Tuning items, disjoint from :func:`choose_items`: every KB abstract it left out, and as many of the rest."""
    test = {it["id"] for it in choose_items(data, in_kb, seed=seed)}
    answerable = sorted(p for p in data if p in in_kb and p not in test)
    unanswerable = random.Random(seed + 1).sample(sorted(p for p in data if p not in in_kb and p not in test),
                                                  len(answerable))
    return [{"id": p, "question": data[p]["QUESTION"], "gold": data[p]["final_decision"], "answerable": p in in_kb}
            for p in answerable + unanswerable]


def limited(items: list[dict], limit: int | None) -> list[dict]:
    """The first ``limit`` of each half (the order inside a half is the seeded draw)."""
    if not limit:
        return items
    return [it for it in items if it["answerable"]][:limit] + [it for it in items if not it["answerable"]][:limit]


def record_of(result, item: dict, seconds: float) -> dict:
    """What one turn says about the item: verdict, abstention, and where its cited sentences come from."""
    by_id = {e.id: e for e in result.evidence}
    cited_docs = [str(by_id[c].meta.get("doc_id", "")) for c in result.cited
                  if c in by_id and by_id[c].kind == "sentence"]
    gold_doc = f"pubmed:{item['id']}"
    abstained = bool(result.abstained or result.status in ("no_evidence", "error") or
                     (result.verdict is None and result.status != "verified"))
    model_verdict = result.model_verdict
    return {"answerable": item["answerable"], "gold": item["gold"], "pred": result.verdict,
            "correct": result.verdict == item["gold"] and not abstained, "abstained": abstained,
            # the same turn's verdict slot, as the model filled it (verdict_by="code" does not show it)
            "pred_model": model_verdict, "correct_model": model_verdict == item["gold"] and not abstained,
            # the negation rule's verdict before the model's reading of the conclusion could turn it
            "pred_rule": result.rule_verdict, "correct_rule": result.rule_verdict == item["gold"] and not abstained,
            "reading": result.reading,
            "required_answer": result.required_answer,
            "status": result.status, "cited_sentences": len(cited_docs),
            "cited_from_gold": sum(d == gold_doc for d in cited_docs),
            "retrieved_gold": any(str(e.meta.get("doc_id", "")) == gold_doc for e in result.evidence),
            "support_flagged": result.support_flagged, "regenerated": result.regenerated,
            "guard_fired": result.guard_fired, "first_try_valid": result.first_try_valid,
            "unnamed_subjects": list(result.unnamed_subjects),
            "pool": (result.pool or {}).get("pool"), "seconds": round(seconds, 1),
            "error": result.answer if result.status == "error" else ""}


def summarise(records: list[dict], correct_key: str = "correct") -> dict:
    """The report's variant row from per-item records (both halves); ``correct_key`` picks whose verdict counts."""
    records = [{**r, "correct": r.get(correct_key, False)} for r in records]
    ans = [r for r in records if r["answerable"]]
    una = [r for r in records if not r["answerable"]]
    cited = sum(r["cited_sentences"] for r in ans)
    answered = [r for r in ans if not r["abstained"]]
    out = {
        "n_answerable": len(ans), "n_unanswerable": len(una),
        "accuracy": sum(r["correct"] for r in ans) / len(ans) if ans else 0.0,
        "accuracy_when_answered": sum(r["correct"] for r in answered) / len(answered) if answered else 0.0,
        "citation_precision": sum(r["cited_from_gold"] for r in ans) / cited if cited else 0.0,
        "abstain_rate_answerable": sum(r["abstained"] for r in ans) / len(ans) if ans else 0.0,
        "abstain_rate_unanswerable": sum(r["abstained"] for r in una) / len(una) if una else 0.0,
        "refrain_accuracy": (sum(r["abstained"] != r["answerable"] for r in records) / len(records)
                             if records else 0.0),
        "gold_retrieved_rate": sum(r["retrieved_gold"] for r in ans) / len(ans) if ans else 0.0,
        "verified_rate": sum(r["status"] == "verified" for r in records) / len(records) if records else 0.0,
        "support_check_fired_rate": sum(r["support_flagged"] > 0 for r in records) / len(records) if records else 0.0,
        # The subject check (no shown or cited item names the question's entities), per half: it should fire on
        # the unanswerable half, and a firing on the answerable half is a false abstention it caused.
        "subject_check_fired_rate_answerable": (sum(bool(r.get("unnamed_subjects")) for r in ans) / len(ans)
                                                if ans else 0.0),
        "subject_check_fired_rate_unanswerable": (sum(bool(r.get("unnamed_subjects")) for r in una) / len(una)
                                                  if una else 0.0),
        "error_rate": sum(r["status"] == "error" for r in records) / len(records) if records else 0.0,
        "s_per_question": sum(r["seconds"] for r in records) / len(records) if records else 0.0,
        "required_answer_rate_answerable": (sum(r.get("required_answer", False) for r in ans) / len(ans)
                                            if ans else 0.0),
        "required_answer_rate_unanswerable": (sum(r.get("required_answer", False) for r in una) / len(una)
                                              if una else 0.0),
    }
    return out


ABSTAINED = "abstained"  # the published prediction of a turn that abstained (an abstention is scored wrong)
# Each published variant and the record fields holding its verdict and whether it was right.
VERDICT_KEYS = {VARIANT: ("pred", "correct"), "rule-only": ("pred_rule", "correct_rule"),
                "model-verdict-slot": ("pred_model", "correct_model")}


def prediction_of(record: dict, variant: str = VARIANT) -> str | None:
    """A variant's published prediction for one logged turn: its verdict (yes/no/maybe, None when it gave none),
    or ``abstained``; right exactly when it equals the gold decision, as :func:`summarise` scores it."""
    return ABSTAINED if record["abstained"] else record.get(VERDICT_KEYS[variant][0])


def per_item(records: list[dict], items: list[dict], variants: list[str]) -> dict:
    """What the report publishes item by item, for ``eval recompute`` (#75), in the items' order: ``item_ids`` (the
    answerable half: the items accuracy and the baselines are computed over), ``predictions`` ({variant: {id:
    prediction}} on those), and the unanswerable half's ids and (shared by every variant: the same turns)
    predictions, which abstain_rate_unanswerable and refrain_accuracy count. Labels only, no PubMedQA text."""
    by_id = {r["id"]: r for r in records}
    ordered = [by_id[it["id"]] for it in items if it["id"] in by_id]
    answerable = [r for r in ordered if r["answerable"]]
    unanswerable = [r for r in ordered if not r["answerable"]]
    return {"item_ids": [r["id"] for r in answerable],
            "predictions": {v: {r["id"]: prediction_of(r, v) for r in answerable} for v in variants},
            "unanswerable_item_ids": [r["id"] for r in unanswerable],
            "unanswerable_predictions": {r["id"]: prediction_of(r) for r in unanswerable}}


async def _answer_all(settings, items: list[dict], concurrency: int, log) -> None:
    from assistant.deps import Deps
    from assistant.evals.report import bounded_map
    from assistant.answer.loop import Assistant
    from tools.contracts import Session

    deps = Deps(settings)

    async def one(item: dict) -> None:
        bot = Assistant(deps, Session(f"pubmedqa-{item['id']}", user="eval"))
        t = time.perf_counter()
        result = await bot.run_turn(item["question"])
        if result.status == "error" and result.error_kind == "llm_unavailable":
            if "did not answer within" in result.answer:  # busy, not wrong: asked again on the next run
                click.echo(f"{item['id']}: skipped (the server was too busy); it is asked again on the next run.")
                return
            raise click.ClickException(result.answer)
        rec = log.add(VARIANT, item["id"], **record_of(result, item, time.perf_counter() - t))
        click.echo(f"{item['id']} ({'in KB' if item['answerable'] else 'not in KB'}): {rec['status']}, "
                   f"verdict {rec['pred']} (gold {rec['gold']}), {rec['cited_from_gold']}/{rec['cited_sentences']} "
                   f"cited from its abstract, {rec['seconds']:.0f} s")

    try:
        await bounded_map(one, [it for it in items if not log.get(VARIANT, it["id"])], concurrency)
    finally:
        await deps.aclose()


def run_pubmedqa(settings, *, limit: int | None = None, concurrency: int = 1, docs_dir: Path | None = None,
                 split: str = "test") -> dict:
    from assistant.deps import Deps
    from assistant.evals.report import ResultsLog, label_baselines, write_eval
    from assistant.answer.verdict_reader import load_reader
    from assistant.answer.verdicts import (CONCLUSION_SENTENCES, FORCE_ANSWER_COVERAGE, LEANS_NO_NATS,
                                           RULE_SENTENCES, verdict_reader_choice)

    store = Deps(settings).text_kb
    if store.is_empty:
        raise click.ClickException("The text KB is empty: build it with `evidentia kb build --default`.")
    data, in_kb = load_questions(settings.kb_mirror_dir), pmids_in_kb(store)
    items = limited(choose_items(data, in_kb) if split == "test" else dev_items(data, in_kb), limit)
    suffix = "" if split == "test" else f"-{split}"
    log = ResultsLog(settings.data_dir / "eval" / f"{BENCHMARK}{suffix}-answers.jsonl")
    asyncio.run(_answer_all(settings, items, concurrency, log))
    wanted = {it["id"] for it in items}
    records = [r for r in log.records(VARIANT) if r["id"] in wanted]
    variant = summarise(records)
    # The same turns scored by the model's own verdict slot: the ablation of the code verdict, at no extra cost.
    by_model = summarise(records, correct_key="correct_model")
    # And by the negation rule alone (no reading by the model): records from before the reading have no such key.
    by_rule = (summarise(records, correct_key="correct_rule") if all("correct_rule" in r for r in records) else None)
    answerable_golds = [r["gold"] for r in records if r["answerable"]]
    base = label_baselines(answerable_golds) if answerable_golds else {}
    base["yes_baseline"] = (sum(g == "yes" for g in answerable_golds) / len(answerable_golds)
                            if answerable_golds else 0.0)
    if split != "test":  # for tuning: printed, never published
        for name, row in ((VARIANT, variant), ("rule-only", by_rule or {}), ("model-verdict-slot", by_model)):
            click.echo(f"{split} {name}: " + ", ".join(f"{k} {v:.3f}" for k, v in row.items()))
        click.echo(f"{split} always-yes on the answerable half: {base['yes_baseline']:.3f}")
        return variant
    learned = verdict_reader_choice() == "learned" and load_reader() is not None
    notes = (f"{len(records)} of {len(items)} items answered ({variant['n_answerable']} whose abstract is in the "
             f"default KB, {variant['n_unanswerable']} whose abstract is not), drawn with seed {SEED} from "
             f"ori_pqal.json; each asked as a fresh chat turn (intent, plan, text and KG retrieval, one ranked pool, "
             f"the top {settings.answer_evidence_k} to a grammar-bound answer; 'does not answer' not offered when one "
             f"evidence item, with its document's title, carries {FORCE_ANSWER_COVERAGE:.0%} of the question's "
             f"content words). 'default': " + (
                 f"the verdict of the learned reader (assistant/answer/verdict_reader.py, fitted on the 700 PubMedQA "
                 f"questions outside the fixed 300; docs/eval/pubmedqa-verdicts-dev.md) over the last "
                 f"{CONCLUSION_SENTENCES} sentences (the conclusion) of the cited document most about the question, "
                 f"the negation rule's for a question about sameness, no model reading; 'rule-only': the negation "
                 f"rule over the last {RULE_SENTENCES} of them, on the same turns; "
                 if learned else
                 f"the verdict read from the last {RULE_SENTENCES} sentences (the conclusion) of the cited "
                 f"document most about the question: a negated finding answers no, and so does the model's reading "
                 f"of the conclusion when log P(no) > log P(yes) - {LEANS_NO_NATS} (one greedy token), else yes; "
                 f"'rule-only': the same turns without that reading; ") +
             "'model-verdict-slot': the same "
             f"turns scored by the verdict the model wrote in its yes/no/maybe slot. "
             f"The rules, the reader and the margin were tuned on PubMedQA questions outside the fixed 300 "
             f"(assistant/answer/verdicts.py), none on these. "
             f"Accuracy is on the answerable half, an abstention counting as wrong; always 'yes' (the majority "
             f"label and the first option) scores "
             f"{base['yes_baseline']:.3f} there. Citation precision: cited sentences from the question's own abstract "
             f"over all cited sentences (answerable half). Refrain accuracy: abstained exactly when the abstract is "
             f"not in the KB (QUASAR-faithful on CompMix: {QUASAR_FAITHFUL_REFRAIN}). Note that the KB's PubMedQA "
             "documents include each abstract's conclusion (LONG_ANSWER), so the answerable half is an open-book test.")
    variants = {VARIANT: variant, **({"rule-only": by_rule} if by_rule else {}), "model-verdict-slot": by_model}
    write_eval(BENCHMARK, model=settings.llm_model, items=len(records), seed=SEED,
               variants=variants, notes=notes, docs_dir=docs_dir,
               extra={**base, **per_item(records, items, list(variants))},
               metric_keys=["accuracy", "citation_precision", "abstain_rate_answerable", "abstain_rate_unanswerable",
                            "refrain_accuracy", "required_answer_rate_answerable",
                            "required_answer_rate_unanswerable", "verified_rate", "s_per_question"])
    return variant


def register(group) -> None:
    from assistant.settings import Settings

    @group.command(BENCHMARK)
    @click.option("--limit", type=int, default=None,
                  help=f"Only the first N of each half (default: all {HALF} + {HALF}).")
    @click.option("--concurrency", type=int, default=1, show_default=True,
                  help="Questions in flight at once (the server batches them).")
    @click.option("--split", type=click.Choice(["test", "dev"]), default="test", show_default=True,
                  help="test: the fixed 150 + 150, published in docs/eval; dev: the KB abstracts those leave out "
                       "and as many others, for tuning (printed only).")
    def pubmedqa(limit: int | None, concurrency: int, split: str) -> None:
        """PubMedQA over the default KB: accuracy, citation precision, abstention and refrain accuracy."""
        run_pubmedqa(Settings(), limit=limit, concurrency=concurrency, split=split)
