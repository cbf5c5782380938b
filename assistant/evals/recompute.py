"""``evidentia eval recompute``: recompute the published evaluation figures from their per-item predictions.

A table benchmark's report (``docs/eval/<name>.json``) publishes, beside its figures, each variant's prediction for
every item. With the benchmark's gold labels those predictions give the figures again: accuracy (and macro F1 for the
claim benchmarks, by the same :func:`~assistant.evals.report.classification_metrics`), n, and the model-free
baselines (by the same :func:`~assistant.evals.report.label_baselines`). A figure that does not come out again as
published (to 1e-9) is a mismatch. The committed run logs (``docs/eval/runs/*.jsonl``) are checked too: against the
report whose provenance names their commit, and against the figures their README states.

The multiple-choice reports (medqa, medmcqa, obqa, csqa) publish each variant's chosen letters and which of them the
judge's fallback picked (``fallback_item_ids``): accuracy, accuracy_with_fallback, judge_failed_rate and n (llm_items)
come again from them and the gold letters, the majority and first-option baselines from the gold of ``item_ids``.
PubMedQA's report publishes each variant's verdict (or ``abstained``) on the answerable half (``item_ids``) and the
turns' outcome on the unanswerable half: accuracy and the abstention and refrain figures come again from them.

Reports without per-item predictions (kg-harvest, and medqa, obqa, pubmedqa until they are run again, ...) cannot be
recomputed: they are listed as "no per-item log", with what is missing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import click

from assistant.evals.report import read_run_log

Status = Literal["ok", "mismatch", "no per-item log"]
OK, MISMATCH, NO_LOG = "ok", "mismatch", "no per-item log"
NOT_RECOMPUTABLE = "not recomputable: no per-item predictions"
CLAIM_BENCHMARKS = ("scitab", "pubhealthtab", "tabfact")
WTQ = "wikitablequestions"
MC_BENCHMARKS = ("medqa", "medmcqa", "obqa", "csqa")  # kg_eval.run_medical / run_one_hop, retrieval_eval
PUBMEDQA = "pubmedqa"
PLACES = 9  # published and recomputed figures must agree after rounding to 1e-9
RUNS_DIR = "runs"


@dataclass
class MetricRow:
    """One published figure beside its recomputation; ``ok`` is None where it cannot be recomputed."""

    variant: str  # "" for a figure of the whole report (the baselines)
    metric: str
    published: Any
    recomputed: Any = None
    ok: bool | None = None
    note: str = ""


@dataclass
class RecomputeResult:
    """What recomputing one report (or one committed run log) gave."""

    report: str
    status: Status
    rows: list[MetricRow] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # for "no per-item log": what the report lacks

    def mismatches(self) -> list[MetricRow]:
        return [row for row in self.rows if row.ok is False]


@dataclass(frozen=True)
class GoldItem:
    """What scoring needs of a benchmark item: its gold label (claims) or answers (WTQ), and for WTQ the
    "first option" the first-option baseline answers (the first row's first cell)."""

    gold: str
    answers: tuple[str, ...] = ()
    first_option: str = ""


# -- comparing ------------------------------------------------------------------------------------------------
def same(published: Any, recomputed: Any, places: int = PLACES) -> bool:
    """Whether two figures agree: numbers after rounding to ``places`` decimals, anything else exactly."""
    numbers = (int, float)
    if isinstance(published, numbers) and isinstance(recomputed, numbers) \
            and not isinstance(published, bool) and not isinstance(recomputed, bool):
        return round(float(published), places) == round(float(recomputed), places)
    return published == recomputed


def compared(variant: str, metric: str, published: Any, recomputed: Any, *, places: int = PLACES,
             note: str = "") -> MetricRow:
    return MetricRow(variant, metric, published, recomputed, same(published, recomputed, places), note)


def status_of(rows: list[MetricRow]) -> Status:
    return MISMATCH if any(row.ok is False for row in rows) else OK


# -- gold labels ------------------------------------------------------------------------------------------------
def benchmark_and_split(name: str) -> tuple[str, str]:
    """``pubhealthtab-dev`` -> (``pubhealthtab``, ``dev``); ``tabfact`` -> (``tabfact``, ``test``)."""
    return (name[: -len("-dev")], "dev") if name.endswith("-dev") else (name, "test")


def is_table_benchmark(name: str) -> bool:
    return benchmark_and_split(name)[0] in CLAIM_BENCHMARKS + (WTQ,)


def has_gold_loader(name: str) -> bool:
    """Whether the gold of the report ``name`` can be loaded: the table benchmarks (and their dev splits), and the
    test reports of the multiple-choice benchmarks and PubMedQA (obqa-dev-mc-decider and the like are not theirs)."""
    return is_table_benchmark(name) or name in MC_BENCHMARKS + (PUBMEDQA,)


@lru_cache(maxsize=16)
def gold_items(benchmark: str, split: str, eval_dir: Path, kb_dir: Path) -> dict[str, GoldItem]:
    """Every item of the file ``split`` draws from, by id.

    By id from the whole file rather than from the split's seeded selection: a gold label does not depend on which
    items are selected, and the selection has been redefined after reports were published (the dev splits, #75).
    Cached: a report and the run logs beside it read the same file.
    """
    if benchmark in MC_BENCHMARKS:
        return mc_gold_items(benchmark, eval_dir)
    if benchmark == PUBMEDQA:
        return pubmedqa_gold_items(kb_dir)
    from assistant.evals import tables_eval

    if benchmark == WTQ:
        items = tables_eval.load_wtq(kb_dir / WTQ, tables_eval.WTQ_SPLIT_FILES[split])
        return {it.id: GoldItem(tables_eval.wtq_answer_label(it.answers), tuple(it.answers),
                                tables_eval.wtq_first_option(it.table))
                for it in items}
    if benchmark == "pubhealthtab" and split == "dev":
        claims = tables_eval.load_pubhealthtab(eval_dir, "eval")  # the eval file whole, as the dev reports ran it
    else:
        claims = tables_eval.BENCHMARKS[benchmark][0](eval_dir)
    return {str(it.id): GoldItem(it.label) for it in claims}


def mc_gold_items(benchmark: str, eval_dir: Path) -> dict[str, GoldItem]:
    """A multiple-choice benchmark's gold letters and first option letters, by id, read by the runners' loaders from
    the files they read: MedQA / MedMCQA as kg_eval reads them, OBQA / CSQA as retrieval_eval (kg_eval's 1-hop run
    reads the same files, with the same ids and letters)."""
    if benchmark in ("obqa", "csqa"):
        from assistant.evals.retrieval_eval import MC_FILES, load_mc

        items = load_mc(Path(eval_dir) / MC_FILES[benchmark])
    else:
        from assistant.evals.kg_eval import load_benchmark

        items = load_benchmark(Path(eval_dir), benchmark)
    return {str(it["id"]): GoldItem(it["answer"], first_option=next(iter(it["options"]), "")) for it in items}


def pubmedqa_gold_items(kb_dir: Path) -> dict[str, GoldItem]:
    """PubMedQA's gold decisions (yes/no/maybe) by PubMed id, from the KB mirror's ori_pqal.json as the runner reads
    it."""
    from assistant.evals.pubmedqa_eval import load_questions, questions_path

    path = questions_path(Path(kb_dir))
    if not path.exists():  # the command names the missing file (load_questions would say it differently)
        raise FileNotFoundError(2, "No such file", str(path))
    return {str(pmid): GoldItem(q["final_decision"]) for pmid, q in load_questions(Path(kb_dir)).items()}


def is_right(benchmark: str, pred: str, item: GoldItem) -> bool:
    """Whether a prediction is right: the gold label for a claim, the gold denotation for a WTQ question."""
    if benchmark == WTQ:
        from assistant.evals.tables_eval import denotation_match

        return denotation_match(pred, list(item.answers))
    return pred == item.gold


# -- one variant's predictions ----------------------------------------------------------------------------
def prediction_metrics(benchmark: str, preds: dict[str, str], golds: dict[str, GoldItem],
                       labels: list[str] | None) -> dict[str, Any]:
    """accuracy, n (and macro_f1 for claims) of ``preds`` against the gold items, as the evaluation computes them."""
    if benchmark == WTQ:
        right = sum(is_right(WTQ, pred, golds[item_id]) for item_id, pred in preds.items())
        return {"accuracy": right / len(preds) if preds else 0.0, "n": len(preds)}
    from assistant.evals.report import classification_metrics

    ids = list(preds)
    metrics = classification_metrics([golds[i].gold for i in ids], [preds[i] for i in ids], labels or [])
    return {"accuracy": metrics["accuracy"], "macro_f1": metrics["macro_f1"], "n": metrics["n"]}


def variant_rows(benchmark: str, variant: str, published: dict | None, preds: dict[str, str] | None,
                 golds: dict[str, GoldItem], labels: list[str] | None, majority_label: str | None) -> list[MetricRow]:
    """A variant's published accuracy / macro_f1 / n (and same-items baseline) beside their recomputation."""
    if published is None:
        return [MetricRow(variant, "variant", None, f"{len(preds or {})} predictions", False,
                          "predictions published for a variant with no published figures")]
    metrics = [k for k in ("accuracy", "macro_f1", "n") if published.get(k) is not None]
    if preds is None:
        # Kept from a report published before per-item predictions were: the evaluation marks those variants.
        note = NOT_RECOMPUTABLE if published.get("from_earlier_run") else \
            "published without per-item predictions and not marked from_earlier_run"
        ok = None if published.get("from_earlier_run") else False
        return [MetricRow(variant, k, published[k], None, ok, note) for k in metrics]
    recomputed = prediction_metrics(benchmark, preds, golds, labels)
    rows = [compared(variant, k, published[k], recomputed.get(k)) for k in metrics]
    if published.get("majority_baseline_same_items") is not None and majority_label is not None:
        same_items = sum(golds[i].gold == majority_label for i in preds) / len(preds) if preds else None
        rows.append(compared(variant, "majority_baseline_same_items", published["majority_baseline_same_items"],
                             same_items))
    return rows


# -- the model-free baselines ------------------------------------------------------------------------------
BASELINE_KEYS = ("majority_baseline", "majority_label", "baseline_items", "first_option_baseline")


def baseline_rows(report: dict, item_ids: list[str], golds: dict[str, GoldItem]) -> list[MetricRow]:
    """The report's majority (and first-option, constant-label) baselines, recomputed with ``label_baselines`` over
    the gold labels of its ``item_ids``: the items the evaluation computed them over."""
    from assistant.evals.report import label_baselines

    if report.get("majority_baseline") is None:
        return []
    items = [golds[i] for i in item_ids]
    first = [it.first_option for it in items] if "first_option_baseline" in report else None
    recomputed = label_baselines([it.gold for it in items], first_labels=first)
    rows = [compared("", key, report[key], recomputed.get(key)) for key in BASELINE_KEYS if key in report]
    for label, share in (report.get("constant_label_baselines") or {}).items():
        rows.append(compared("", f"constant_label_baselines[{label}]", share,
                             recomputed.get("constant_label_baselines", {}).get(label)))
    return rows


# -- a report ---------------------------------------------------------------------------------------------------
def recompute_report(path: Path, eval_dir: Path, kb_dir: Path) -> RecomputeResult:
    """Recompute a published ``docs/eval/<name>.json`` from its per-item predictions and the benchmark's gold."""
    report = json.loads(Path(path).read_text(encoding="utf-8"))
    name = Path(path).stem
    if benchmark_and_split(name)[0] == "chat":
        return recompute_chat(name, report)
    if benchmark_and_split(name)[0] == "medquad":
        return recompute_medquad(name, report)
    if name.startswith("medquad-focus"):
        return recompute_focus_check(name, report, Path(path).with_suffix(".jsonl"), Path(kb_dir))
    if name.startswith("program-reranker"):
        return recompute_reranker(name, report, Path(path).with_suffix(".jsonl"))
    if name.startswith("pubmedqa-verdicts"):
        return recompute_verdict_reader(name, report, Path(path).with_suffix(".jsonl"), Path(kb_dir))
    if name == "rules":
        return recompute_rules(name, report, Path(path).parent, Path(eval_dir), Path(kb_dir))
    if name == "pdf":
        return recompute_pdf(name, report, Path(path).parent)
    missing = [key for key in ("predictions", "item_ids") if not report.get(key)]
    if missing or not has_gold_loader(name):
        return no_log_result(name, report, missing or ["a gold-label loader for this benchmark"])
    benchmark, split = benchmark_and_split(name)
    golds = gold_items(benchmark, split, Path(eval_dir), Path(kb_dir))
    item_ids = [str(i) for i in report["item_ids"]]
    listed = item_ids + [str(i) for i in report.get("unanswerable_item_ids") or []] if benchmark == PUBMEDQA \
        else item_ids
    unknown = [i for i in listed if i not in golds]
    if unknown:
        rows = [MetricRow("", "item_ids in the benchmark data", len(listed), len(listed) - len(unknown), False,
                          f"not in the benchmark data: {', '.join(unknown[:5])}")]
        return RecomputeResult(name, MISMATCH, rows)
    if benchmark in MC_BENCHMARKS:
        rows = mc_rows(report, item_ids, golds)
    elif benchmark == PUBMEDQA:
        rows = pubmedqa_rows(report, item_ids, golds)
    else:
        rows = prediction_rows(benchmark, report, item_ids, golds)
    rows += baseline_rows(report, item_ids, golds)
    return RecomputeResult(name, status_of(rows), rows)


def prediction_rows(benchmark: str, report: dict, item_ids: list[str], golds: dict[str, GoldItem]) -> list[MetricRow]:
    """Every variant's rows: published variants beside their predictions, and predictions without a published
    variant. Predictions are scored over the report's ``item_ids`` only, as the evaluation selects them."""
    from assistant.evals.report import label_baselines

    published = report.get("variants") or {}
    predictions = report["predictions"]
    majority_label = label_baselines([golds[i].gold for i in item_ids]).get("majority_label")
    selected = set(item_ids)
    rows = []
    for variant in list(published) + [v for v in predictions if v not in published]:
        preds = predictions.get(variant)
        if preds is not None:
            outside = [i for i in preds if i not in selected]
            if outside:
                rows.append(MetricRow(variant, "predictions outside item_ids", 0, len(outside), False,
                                      f"e.g. {', '.join(outside[:3])}"))
            preds = {str(i): p for i, p in preds.items() if i in selected}
        rows += variant_rows(benchmark, variant, published.get(variant), preds, golds, report.get("labels"),
                             majority_label)
    return rows


def selected_predictions(variant: str, preds: dict | None, item_ids: list[str]) -> tuple[dict | None, list[MetricRow]]:
    """A variant's predictions on the report's ``item_ids``, and a mismatch row for any published outside them."""
    if preds is None:
        return None, []
    selected = set(item_ids)
    outside = [str(i) for i in preds if str(i) not in selected]
    rows = [MetricRow(variant, "predictions outside item_ids", 0, len(outside), False,
                      f"e.g. {', '.join(outside[:3])}")] if outside else []
    return {str(i): p for i, p in preds.items() if str(i) in selected}, rows


def unbacked_rows(variant: str, published: dict, metrics: list[str]) -> list[MetricRow]:
    """A published variant without predictions: not recomputable where the evaluation marked it from an earlier run
    (a report published before per-item predictions were), else a mismatch."""
    if published.get("from_earlier_run"):
        return [MetricRow(variant, k, published[k], None, None, NOT_RECOMPUTABLE) for k in metrics]
    return [MetricRow(variant, k, published[k], None, False,
                      "published without per-item predictions and not marked from_earlier_run") for k in metrics]


# -- multiple choice (medqa, medmcqa, obqa, csqa) -------------------------------------------------------------------
MC_METRICS = ("accuracy", "accuracy_with_fallback", "judge_failed_rate", "n", "llm_items")


def mc_metrics(preds: dict[str, str], golds: dict[str, GoldItem], fallbacks: set[str]) -> dict[str, Any]:
    """As :func:`~assistant.evals.report.fallback_scores` scores a variant: ``accuracy`` counts a letter the judge's
    fallback picked as wrong, ``accuracy_with_fallback`` scores it as an answer."""
    n = len(preds)
    right = {i for i, pred in preds.items() if pred == golds[i].gold}
    failed = fallbacks & set(preds)
    return {"accuracy": len(right - failed) / n if n else 0.0, "accuracy_with_fallback": len(right) / n if n else 0.0,
            "judge_failed_rate": len(failed) / n if n else 0.0, "n": n, "llm_items": n}


def each_variant(published: dict, predictions: dict, item_ids: list[str]):
    """Each published variant, then each with predictions only: (variant, its predictions on ``item_ids``, its
    published figures or None, rows for what is off: predictions outside ``item_ids``, or without figures)."""
    for variant in list(published) + [v for v in predictions if v not in published]:
        preds, off = selected_predictions(variant, predictions.get(variant), item_ids)
        pub = published.get(variant)
        if pub is None:
            off = [*off, MetricRow(variant, "variant", None, f"{len(preds or {})} predictions", False,
                                   "predictions published for a variant with no published figures")]
        yield variant, preds, pub, off


def mc_rows(report: dict, item_ids: list[str], golds: dict[str, GoldItem]) -> list[MetricRow]:
    """Every variant's published accuracy figures beside their recomputation from its letters, and the report's
    ``llm_items`` (MedQA: the items every variant answered) beside the number of its items."""
    published = report.get("variants") or {}
    predictions = report["predictions"]
    fallback_ids = report.get("fallback_item_ids") or {}
    rows = []
    for variant, preds, pub, off in each_variant(published, predictions, item_ids):
        rows += off
        if pub is None:
            continue
        metrics = [k for k in MC_METRICS if isinstance(pub.get(k), (int, float)) and not isinstance(pub.get(k), bool)]
        if preds is None:
            if any(k in pub for k in ("accuracy", "accuracy_with_fallback")):
                rows += unbacked_rows(variant, pub, metrics)
            else:  # a variant no item was answered under (MedQA's rates-only rows): its count is 0
                rows += [compared(variant, k, pub[k], 0) for k in metrics]
            continue
        fallbacks = {str(i) for i in fallback_ids.get(variant) or []}
        stray = sorted(fallbacks - set(preds))
        if stray:
            rows.append(MetricRow(variant, "fallback_item_ids without a prediction", 0, len(stray), False,
                                  f"e.g. {', '.join(stray[:3])}"))
        recomputed = mc_metrics(preds, golds, fallbacks)
        for k in metrics:
            if pub.get("judge_flag_missing") and k in ("accuracy", "judge_failed_rate"):
                # some records predate the judge_failed flag: which answers were fallbacks is not known
                rows.append(MetricRow(variant, k, pub[k], None, None, "records without the judge_failed flag"))
            else:
                rows.append(compared(variant, k, pub[k], recomputed[k]))
    if isinstance(report.get("llm_items"), int) and any(predictions.values()):
        rows.append(compared("", "llm_items", report["llm_items"], len(item_ids)))
    return rows


# -- PubMedQA ----------------------------------------------------------------------------------------------------
def pubmedqa_metrics(preds: dict[str, str | None], unanswerable: dict[str, str | None],
                     golds: dict[str, GoldItem]) -> dict[str, Any]:
    """As :func:`~assistant.evals.pubmedqa_eval.summarise` scores a variant: accuracy on the answerable half (an
    abstention is wrong), the abstention rates of both halves, refrain accuracy over both."""
    from assistant.evals.pubmedqa_eval import ABSTAINED

    n, m = len(preds), len(unanswerable)
    right = sum(pred == golds[i].gold for i, pred in preds.items())
    abstained = sum(pred == ABSTAINED for pred in preds.values())
    abstained_una = sum(pred == ABSTAINED for pred in unanswerable.values())
    answered = n - abstained
    out = {"n_answerable": n, "accuracy": right / n if n else 0.0,
           "accuracy_when_answered": right / answered if answered else 0.0,
           "abstain_rate_answerable": abstained / n if n else 0.0}
    if unanswerable:
        out.update(n_unanswerable=m, abstain_rate_unanswerable=abstained_una / m,
                   refrain_accuracy=(answered + abstained_una) / (n + m))
    return out


def pubmedqa_rows(report: dict, item_ids: list[str], golds: dict[str, GoldItem]) -> list[MetricRow]:
    """Every variant's accuracy, abstention and refrain figures from its predictions, the report's item count and
    its always-"yes" baseline from the answerable half's gold."""
    published = report.get("variants") or {}
    predictions = report["predictions"]
    unanswerable_ids = [str(i) for i in report.get("unanswerable_item_ids") or []]
    unanswerable = {str(i): p for i, p in (report.get("unanswerable_predictions") or {}).items()}
    rows = []
    both = sorted(set(item_ids) & set(unanswerable_ids))
    if both:
        rows.append(MetricRow("", "items in both halves", 0, len(both), False, f"e.g. {', '.join(both[:3])}"))
    if set(unanswerable) != set(unanswerable_ids):
        rows.append(MetricRow("", "unanswerable_predictions = unanswerable_item_ids", len(unanswerable_ids),
                              len(set(unanswerable) & set(unanswerable_ids)), False))
    for variant, preds, pub, off in each_variant(published, predictions, item_ids):
        rows += off
        if pub is None:
            continue
        recomputed = pubmedqa_metrics(preds or {}, unanswerable, golds)
        metrics = [k for k in recomputed if isinstance(pub.get(k), (int, float))]
        rows += unbacked_rows(variant, pub, metrics) if preds is None else \
            [compared(variant, k, pub[k], recomputed[k]) for k in metrics]
    if isinstance(report.get("items"), int):
        rows.append(compared("", "items", report["items"], len(item_ids) + len(unanswerable_ids)))
    if report.get("yes_baseline") is not None:
        golds_here = [golds[i].gold for i in item_ids]
        rows.append(compared("", "yes_baseline", report["yes_baseline"],
                             sum(g == "yes" for g in golds_here) / len(golds_here) if golds_here else 0.0))
    return rows


def recompute_chat(name: str, report: dict) -> RecomputeResult:
    """The gold-scored chat bench: each logged reply scored again against chat_gold.jsonl, the figures recomputed."""
    from assistant.evals.chat_eval import load_questions, score_reply, summarize

    per_item = report.get("per_item")
    if not per_item:
        return no_log_result(name, report, ["per_item"])
    golds = {q.id: q for q in load_questions()}
    unknown = sorted(set(per_item) - set(golds))
    if unknown:
        return RecomputeResult(name, MISMATCH, [MetricRow("", "questions in chat_gold.jsonl", len(per_item),
                                                          len(per_item) - len(unknown), False, ", ".join(unknown[:5]))])
    scored = [{"answerable": golds[i].answerable, "status": r["status"],
               "right": score_reply(golds[i], r["status"], r["answer"] or ""),
               "citations_valid": r["citations_valid"], "seconds": r.get("seconds")} for i, r in per_item.items()]
    figures = summarize(scored)
    published = report.get("variants", {}).get("default", {})
    rows = [compared("default", metric, published.get(metric), figures[metric]) for metric in figures
            if metric in published]
    return RecomputeResult(name, status_of(rows), rows)


def recompute_medquad(name: str, report: dict) -> RecomputeResult:
    """MedQuAD (#78): our replies and both baselines re-scored from their per-item records, the figures recomputed."""
    from assistant.evals.medquad_eval import VARIANT, summarise

    per_item = report.get("per_item")
    if not per_item:
        return no_log_result(name, report, ["per_item"])
    listed = set(str(i) for i in report.get("item_ids") or [])
    stray = sorted(set(per_item) - listed)
    if stray:
        return RecomputeResult(name, MISMATCH, [MetricRow("", "per-item records among item_ids", len(per_item),
                                                          len(per_item) - len(stray), False, ", ".join(stray[:5]))])
    rows: list[MetricRow] = []
    logs = {VARIANT: per_item, **(report.get("baseline_per_item") or {})}
    for variant, records in logs.items():
        figures = summarise(list(records.values()))
        published = report.get("variants", {}).get(variant, {})
        rows += [compared(variant, metric, published.get(metric), figures[metric]) for metric in figures
                 if metric in published]
    return RecomputeResult(name, status_of(rows), rows)


def recompute_verdict_reader(name: str, report: dict, log: Path, kb_dir: Path) -> RecomputeResult:
    """The yes/no reader's dev table (#78): every row scored again from its per-item log, gold labels checked
    against ori_pqal.json where the mirror is there."""
    from assistant.evals.pubmedqa_verdicts import recompute

    if not log.exists():
        return no_log_result(name, report, [log.name])
    data_path = kb_dir / "pubmedqa" / "ori_pqal.json"
    data = json.loads(data_path.read_text(encoding="utf-8")) if data_path.exists() else None
    try:
        figures = recompute(log, data)
    except ValueError as exc:
        return RecomputeResult(name, MISMATCH, [MetricRow("", "gold labels", "", "", False, str(exc))])
    rows = [compared(variant, metric, published.get(metric), figures.get(variant, {}).get(metric))
            for variant, published in report.get("variants", {}).items() for metric in published
            if metric in figures.get(variant, {})]
    return RecomputeResult(name, status_of(rows), rows)


def recompute_focus_check(name: str, report: dict, log: Path, kb_dir: Path) -> RecomputeResult:
    """The focus check's dev measurement (#78): every figure again from its per-item log; where the MedQuAD mirror
    is there, each pair's label and each candidate's "on the focus" checked against the pages' own foci first."""
    from assistant.evals.medquad_focus import read_log, recompute

    if not log.exists():
        return no_log_result(name, report, [log.name])
    if (kb_dir / "medquad").exists():
        from assistant.evals.medquad_eval import focus_key, kb_doc_id, load_records

        focus = {kb_doc_id(r): focus_key(r) for r in load_records(kb_dir)}
        _, pairs, items = read_log(log)
        wrong = [p["doc_id"] for p in pairs if (focus.get(p["doc_id"]) == focus.get(p["item_id"])) != p["about"]]
        wrong += [c["doc_id"] for it in items for c in it["candidates"]
                  if c["judged"] and (focus.get(c["doc_id"]) == focus.get(it["id"])) != c["on_focus"]]
        if wrong:
            return RecomputeResult(name, MISMATCH, [MetricRow("", "gold labels", "", "", False,
                                                              f"labels the mirror does not give: {wrong[:5]}")])
    figures = recompute(log)
    rows = [compared(variant, metric, published.get(metric), figures.get(variant, {}).get(metric))
            for variant, published in report.get("variants", {}).items() for metric in published
            if metric in figures.get(variant, {})]
    return RecomputeResult(name, status_of(rows), rows)


def recompute_reranker(name: str, report: dict, log: Path) -> RecomputeResult:
    """The program reranker's out-of-fold measurement (#77): each arm's accuracy again from its per-item log."""
    from assistant.evals.program_rerank import read_log, summarise

    if not log.exists():
        return no_log_result(name, report, [log.name])
    figures = summarise(read_log(log))
    rows = [compared(variant, metric, published.get(metric), figures.get(variant, {}).get(metric))
            for variant, published in report.get("variants", {}).items() for metric in published]
    return RecomputeResult(name, status_of(rows), rows)


def recompute_rules(name: str, report: dict, logs_dir: Path, eval_dir: Path, kb_dir: Path) -> RecomputeResult:
    """The per-rule measurement (assistant/evals/rules_eval.py): its log's gold labels against the benchmarks',
    then every count of the report summarised again from the log."""
    from assistant.evals.rules_eval import (EXAMPLES_LOG_NAME, LOG_NAME, VETO_LOG_NAME, summarise,
                                            summarise_examples, summarise_rewrites, summarise_vetoes,
                                            summarise_withholds)

    path, veto_path = logs_dir / LOG_NAME, logs_dir / VETO_LOG_NAME
    missing = [str(p) for p in (path, veto_path) if not p.exists()]
    if missing:
        return no_log_result(name, report, missing)

    def read(log: Path) -> list[dict]:
        return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]

    records, veto_records = read(path), read(veto_path)
    rows = []
    for label, recs in (("settle", records), ("veto", veto_records)):
        for benchmark in sorted({r["benchmark"] for r in recs}):
            golds = gold_items(benchmark, "dev", eval_dir, kb_dir)
            mine = [r for r in recs if r["benchmark"] == benchmark]
            agree = sum(1 for r in mine if str(r["id"]) in golds and golds[str(r["id"])].gold == r["gold"])
            rows.append(compared(f"{label} {benchmark}", "logged gold = benchmark gold (items)", len(mine), agree))
    examples_path = logs_dir / EXAMPLES_LOG_NAME
    if report.get("examples") and not examples_path.exists():
        return no_log_result(name, report, [str(examples_path)])
    figures = {**summarise(records), "vetoes": summarise_vetoes(veto_records),
               "withholds": summarise_withholds(veto_records), "rewrites": summarise_rewrites(veto_records),
               "examples": summarise_examples(read(examples_path) if examples_path.exists() else [])}
    for part in ("benchmarks", "rules", "vetoes", "withholds", "rewrites", "examples"):
        for key, row in report.get(part, {}).items():
            for sub, value in row.items():
                got = figures[part].get(key, {}).get(sub)
                if isinstance(value, dict):
                    rows += [compared(f"{key} {sub}", metric, v, (got or {}).get(metric)) for metric, v in value.items()]
                else:
                    rows.append(compared(key, sub, value, got))
    return RecomputeResult(name, status_of(rows), rows)


def recompute_pdf(name: str, report: dict, logs_dir: Path) -> RecomputeResult:
    """The PDF reading evaluation (assistant/evals/pdf_eval.py): every figure summarised again from its log."""
    from assistant.evals.pdf_eval import LOG_NAME, summarise

    path = logs_dir / LOG_NAME
    if not path.exists():
        return no_log_result(name, report, [str(path)])
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    figures = summarise(records, tuple(report.get("styles") or ()))
    rows = [compared(variant, metric, value, figures.get(variant, {}).get(metric))
            for variant, published in report.get("variants", {}).items() for metric, value in published.items()]
    return RecomputeResult(name, status_of(rows), rows)


def no_log_result(name: str, report: dict, missing: list[str]) -> RecomputeResult:
    """A report that cannot be recomputed: what it lacks, and the figures it publishes without per-item support."""
    rows = [MetricRow(variant, key, summary[key], note="no per-item log")
            for variant, summary in (report.get("variants") or {}).items() if isinstance(summary, dict)
            for key in ("accuracy", "macro_f1", "n") if isinstance(summary.get(key), (int, float))]
    if report.get("majority_baseline") is not None:
        rows.append(MetricRow("", "majority_baseline", report["majority_baseline"],
                              note="its items are not recorded in the report"))
    return RecomputeResult(name, NO_LOG, rows, missing)


# -- the committed run logs (docs/eval/runs) -------------------------------------------------------------
def run_log_name(path: Path) -> tuple[str, str]:
    """``pubhealthtab-dev-d4eaa6a.jsonl`` -> (``pubhealthtab-dev``, ``d4eaa6a``): the README's naming, report name
    then the commit the run ran at."""
    report_name, _, commit = path.stem.rpartition("-")
    return report_name, commit


# Figures the runs README states of each log, in the last cell of its row; only what a log alone can give again.
README_FIGURES = {
    "items logged": re.compile(r"(\d+) of \d+"),
    "right": re.compile(r"(\d+) right"),
    "always SUPPORTS": re.compile(r"always SUPPORTS (\d+(?:\.\d+)?)"),
    "accuracy": re.compile(r"(?:the published report, |right \()(0\.\d+)"),
    "paired": re.compile(r"paired with ([0-9a-f]{7}): (\d+) gained, (\d+) lost"),
}


def readme_figures(readme: Path) -> dict[str, dict[str, tuple[str, ...]]]:
    """The figures the runs README states, by log file name: ``{"tabfact-32467a8.jsonl": {"right": ("351",)}}``."""
    try:
        text = readme.read_text(encoding="utf-8")
    except OSError:
        return {}
    figures = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        named = re.fullmatch(r"`([^`]+\.jsonl)`", cells[0]) if len(cells) > 1 else None
        if named:
            found = {key: m.groups() for key, pattern in README_FIGURES.items() if (m := pattern.search(cells[-1]))}
            figures[named.group(1)] = found
    return figures


def recompute_run_log(path: Path, eval_dir: Path, kb_dir: Path) -> RecomputeResult:
    """Check a committed run log: its gold labels against the benchmark's, the README's figures for it, and the
    published report whose provenance names its commit (the report it backs)."""
    report_name, commit = run_log_name(path)
    name = f"{RUNS_DIR}/{path.stem}"
    if not is_table_benchmark(report_name):
        return RecomputeResult(name, NO_LOG, missing=[f"a gold-label loader for {report_name}"])
    benchmark, split = benchmark_and_split(report_name)
    golds = gold_items(benchmark, split, Path(eval_dir), Path(kb_dir))
    log = read_run_log(path)
    rows = gold_label_rows(log, golds)
    if any(row.ok is False for row in rows):
        return RecomputeResult(name, MISMATCH, rows)
    stated = readme_figures(path.parent / "README.md").get(path.name, {})
    rows += stated_figure_rows(benchmark, log, golds, stated, path.parent, report_name)
    rows += backed_report_rows(benchmark, log, golds, commit, path.parent.parent / f"{report_name}.json")
    return RecomputeResult(name, status_of(rows), rows)


def gold_label_rows(log: dict[str, dict[str, dict]], golds: dict[str, GoldItem]) -> list[MetricRow]:
    """Per variant: how many logged items are in the benchmark with the gold label the log recorded."""
    rows = []
    for variant, records in log.items():
        agreeing = sum(1 for i, rec in records.items() if i in golds and gold_as_logged(rec) == golds[i].gold)
        rows.append(compared(variant, "logged gold = benchmark gold (items)", len(records), agreeing))
    return rows


def gold_as_logged(rec: dict) -> str:
    """A record's gold as a label: claim logs hold the label, WTQ logs the answer list."""
    from assistant.evals.tables_eval import wtq_answer_label

    gold = rec.get("gold")
    return wtq_answer_label(gold) if isinstance(gold, list) else str(gold)


def stated_figure_rows(benchmark: str, log: dict[str, dict[str, dict]], golds: dict[str, GoldItem],
                       stated: dict[str, tuple[str, ...]], runs_dir: Path, report_name: str) -> list[MetricRow]:
    """The README's figures for a log beside the log's own; a figure written with decimals is compared at the
    precision it is written with (0.702 against the recomputed accuracy rounded to three places)."""
    if len(log) != 1:  # the README states one variant's figures; which one would be a guess
        return [MetricRow("", figure, value, note="the log has several variants") for figure, value in stated.items()]
    (variant, records), = log.items()
    right = {i: is_right(benchmark, rec["pred"], golds[i]) for i, rec in records.items()}
    n = len(records)
    supports = sum(golds[i].gold == "SUPPORTS" for i in records)
    rows = []
    for figure, values in stated.items():
        if figure == "items logged":
            rows.append(compared(variant, "items logged (README)", int(values[0]), n))
        elif figure == "right":
            rows.append(compared(variant, "right (README)", int(values[0]), sum(right.values())))
        elif figure == "accuracy":
            rows.append(written_precision_row(variant, "accuracy (README)", values[0], sum(right.values()) / n))
        elif figure == "always SUPPORTS":
            if "." in values[0]:
                rows.append(written_precision_row(variant, "always SUPPORTS (README)", values[0], supports / n))
            else:
                rows.append(compared(variant, "always SUPPORTS right (README)", int(values[0]), supports))
        elif figure == "paired":
            rows += paired_rows(benchmark, variant, right, values, runs_dir / f"{report_name}-{values[0]}.jsonl",
                                golds)
    return rows


def written_precision_row(variant: str, metric: str, written: str, recomputed: float) -> MetricRow:
    places = len(written.partition(".")[2])
    return compared(variant, metric, float(written), recomputed, places=places,
                    note=f"compared at the {places} decimals written")


def paired_rows(benchmark: str, variant: str, right: dict[str, bool], stated: tuple[str, ...], other: Path,
                golds: dict[str, GoldItem]) -> list[MetricRow]:
    """"paired with <commit>: G gained, L lost": items right here and wrong in the other log, and the reverse."""
    other_commit, gained, lost = stated
    if not other.exists():
        return [MetricRow(variant, f"paired with {other_commit} (README)", f"{gained} gained, {lost} lost",
                          note=f"{other.name} is not committed")]
    theirs = read_run_log(other).get(variant, {})
    other_right = {i: is_right(benchmark, rec["pred"], golds[i]) for i, rec in theirs.items() if i in golds}
    shared = set(right) & set(other_right)
    return [compared(variant, f"gained vs {other_commit} (README)", int(gained),
                     sum(right[i] and not other_right[i] for i in shared)),
            compared(variant, f"lost vs {other_commit} (README)", int(lost),
                     sum(other_right[i] and not right[i] for i in shared))]


def backed_report_rows(benchmark: str, log: dict[str, dict[str, dict]], golds: dict[str, GoldItem], commit: str,
                       report_path: Path) -> list[MetricRow]:
    """Where the published report says its predictions of a variant came from this log's commit: its predictions
    are the log's, and its figures come again from the log."""
    try:
        report = json.loads(report_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    rows = []
    for variant, commits in (report.get("provenance") or {}).items():
        if commit not in commits or variant not in log:
            continue
        published_preds = report.get("predictions", {}).get(variant, {})
        logged = {i: rec["pred"] for i, rec in log[variant].items() if i in set(report.get("item_ids", []))}
        agreeing = sum(1 for i, pred in published_preds.items() if logged.get(i) == pred)
        rows.append(compared(variant, f"{report_path.name} predictions = log's", len(published_preds), agreeing))
        recomputed = prediction_metrics(benchmark, logged, golds, report.get("labels"))
        published = report.get("variants", {}).get(variant, {})
        rows += [compared(variant, f"{report_path.name} {key}", published[key], recomputed.get(key))
                 for key in ("accuracy", "macro_f1", "n") if published.get(key) is not None]
    return rows


# -- all of them ----------------------------------------------------------------------------------------------
def recompute_all(eval_docs: Path, eval_dir: Path, kb_dir: Path,
                  names: tuple[str, ...] = ()) -> list[RecomputeResult]:
    """Every report ``<eval_docs>/*.json`` and run log ``<eval_docs>/runs/*.jsonl`` (or those ``names`` name: a
    report's name, a log's file name without ``.jsonl``, with or without ``runs/``)."""
    reports = {p.stem: p for p in sorted(eval_docs.glob("*.json"))}
    logs = {p.stem: p for p in sorted((eval_docs / RUNS_DIR).glob("*.jsonl"))}
    wanted = [n.removeprefix(f"{RUNS_DIR}/").removesuffix(".jsonl").removesuffix(".json") for n in names]
    unknown = [n for n in wanted if n not in reports and n not in logs]
    if unknown:
        raise cannot_check(f"No report or run log named {', '.join(unknown)} in {eval_docs}.")
    chosen = set(wanted) if wanted else set(reports) | set(logs)
    results = [recompute_report(p, eval_dir, kb_dir) for n, p in reports.items() if n in chosen]
    return results + [recompute_run_log(p, eval_dir, kb_dir) for n, p in logs.items() if n in chosen]


def shown(value: Any) -> str:
    return f"{value:.10g}" if isinstance(value, float) else str(value)


def row_text(row: MetricRow) -> str:
    """``program accuracy 0.702 = 0.702``; ``!=`` where they differ; the note where nothing was recomputed."""
    label = f"{row.variant} {row.metric}".strip()
    if row.recomputed is None and row.ok is not True:
        return f"{label} {shown(row.published)} ({row.note})"
    sign = "=" if row.ok else "!="
    return f"{label} {shown(row.published)} {sign} {shown(row.recomputed)}" + (f" ({row.note})" if row.note else "")


def result_line(result: RecomputeResult) -> str:
    """One line per report: name, status, then every figure published against recomputed."""
    head = f"{result.report}: {result.status}"
    if result.status == NO_LOG:  # nothing recomputed: what is missing and how much it leaves unchecked
        return f"{head} (missing: {', '.join(result.missing)})" + (f" | {unbacked_summary(result.rows)}"
                                                                   if result.rows else "")
    return head + (" | " + "; ".join(row_text(r) for r in result.rows) if result.rows else "")


def unbacked_summary(rows: list[MetricRow]) -> str:
    """``3 published figures (accuracy, n) of 2 variants and the majority_baseline, not recomputable``."""
    per_variant = [r for r in rows if r.variant]
    metrics = ", ".join(dict.fromkeys(r.metric for r in per_variant))
    variants = len({r.variant for r in per_variant})
    parts = [f"{len(per_variant)} published figures ({metrics}) of {variants} variants"] if per_variant else []
    parts += [f"the {r.metric}" for r in rows if not r.variant]
    return " and ".join(parts) + ", not recomputable"


def register(group) -> None:
    from assistant.evals.report import DOCS_DIR

    @group.command("recompute")
    @click.argument("names", nargs=-1)
    @click.option("--docs-dir", type=click.Path(file_okay=False, path_type=Path), default=DOCS_DIR,
                  show_default=True, help="The docs folder whose eval/*.json reports and eval/runs logs are checked.")
    def recompute_command(names: tuple[str, ...], docs_dir: Path) -> None:
        """Recompute published eval figures from their per-item predictions.

        Exit status: 0 when every recomputable figure comes out as published, 1 on any mismatch, 2 when nothing
        could be checked (data folders not set, a benchmark file or a named report missing).
        """
        from assistant.settings import Settings

        eval_dir, kb_dir = data_dirs(Settings())
        try:
            results = recompute_all(Path(docs_dir) / "eval", eval_dir, kb_dir, names)
        except FileNotFoundError as exc:  # a data folder without the benchmark's file: say which
            raise cannot_check(f"Benchmark file not found: {exc.filename}.") from exc
        for result in results:
            click.echo(result_line(result))
        if any(r.status == MISMATCH for r in results):
            click.get_current_context().exit(1)


def data_dirs(settings) -> tuple[Path, Path]:
    """The benchmark and KB-mirror folders, or a ClickException naming the ones that are not set."""
    folders = {"EVIDENTIA_EVAL_DATA_DIR (e.g. ../shared/eval-data)": settings.eval_data_dir,
               "EVIDENTIA_KB_MIRROR_DIR (e.g. ../shared/kb-data)": settings.kb_mirror_dir}
    absent = [env for env, folder in folders.items() if folder is None or not Path(folder).is_dir()]
    if absent:
        raise cannot_check("Gold labels come from the benchmark data: set " + " and ".join(absent) + ".")
    return Path(settings.eval_data_dir), Path(settings.kb_mirror_dir)


def cannot_check(message: str) -> click.ClickException:
    """A ClickException that exits 2, so that "could not check" differs from a mismatch's 1."""
    exc = click.ClickException(message)
    exc.exit_code = 2
    return exc
