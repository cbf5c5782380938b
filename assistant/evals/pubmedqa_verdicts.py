"""``evidentia eval pubmedqa-verdicts --split dev``: yes/no readers of a PubMedQA conclusion, side by side (#78).

No LLM and no retrieval: each dev question is read over the closing sentences of its own abstract (the KB's
document text, split as the KB splits it), which is what the chat's verdict reads once the answer cites that
abstract. The dev questions are the 700 of ori_pqal.json outside the evaluation's fixed 300
(:func:`assistant.evals.pubmedqa_eval.choose_items`, seed 14, over the abstracts the default KB holds); the test
items are never read here, and the command has no test split.

Rows: the constant answers, the negation rule (today's, and on three sentences), MiniLM sentence embeddings in a
logistic regression (the obvious learned reader), and the learned reader of
:mod:`assistant.answer.verdict_reader` (on two and on three sentences). Every learned row is scored by 5-fold
cross-validation (folds stratified by label over the sorted question ids, seed 14), its regularisation chosen
inside each training fold by a second 5-fold cross-validation, so no fold's score saw its own items. The reader
against the rule is compared item by item (exact McNemar, paired bootstrap interval of the accuracy difference).

Writes docs/eval/pubmedqa-verdicts-dev.{json,md,png} and the per-item log docs/eval/pubmedqa-verdicts-dev.jsonl
(id, gold, fold, each row's prediction, the reader's probabilities: labels only, no PubMedQA text), from which
every number of the table recomputes. ``evidentia kb verdict-reader`` fits the shipped reader on all 700.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import click
import numpy as np

BENCHMARK = "pubmedqa-verdicts-dev"
SEED = 14  # the evaluation's seed (assistant/evals/pubmedqa_eval.py), used for the folds too
FOLDS = 5
REGULARISATION_GRID = (0.1, 0.3, 1.0, 3.0, 10.0)  # scikit-learn's C
FOLD_SEEDS = (0, 1, 2, 3, 4)  # the reader re-scored on other fold draws: how much the number moves
BOOTSTRAP = 2000
LABELS = ("yes", "no", "maybe")
RULE = "rule (last 2)"
READER = "reader (last 3, shipped)"
READER_ALL = "reader (last 3, every question)"


@dataclass(frozen=True)
class Example:
    """One dev question over its own abstract's closing sentences (reading order)."""

    id: str
    question: str
    sentences: tuple[str, ...]
    gold: str


def default_kb_pmids(kb_mirror_dir: Path | None, data_dir: Path) -> set[str]:
    """The PubMed ids whose abstracts the default KB build takes (``evidentia kb build --default``: the first
    ``DEFAULT_LIMIT_PER_SOURCE`` sentences' worth of ori_pqal.json), without opening a store."""
    from kb.default_corpus import DEFAULT_LIMIT_PER_SOURCE, DefaultCorpus, limited

    corpus = DefaultCorpus(kb_mirror_dir, data_dir / "kb-sources")
    return {d.doc_id.split(":", 1)[1] for d in limited(corpus.pubmedqa(), DEFAULT_LIMIT_PER_SOURCE)}


def dev_ids(data: dict[str, dict], in_kb: set[str]) -> list[str]:
    """Every question id outside the evaluation's fixed test items, sorted."""
    from assistant.evals.pubmedqa_eval import choose_items

    test = {it["id"] for it in choose_items(data, in_kb)}
    return sorted(p for p in data if p not in test)


def abstract_sentences(record: dict) -> list[str]:
    """An abstract's sentences as the KB holds them (kb.default_corpus joins CONTEXTS and LONG_ANSWER; the KB's
    splitter cuts them)."""
    from kb.ingest import split_sentences

    text = " ".join(record.get("CONTEXTS", []) + ([record["LONG_ANSWER"]] if record.get("LONG_ANSWER") else []))
    return [s.text for s in split_sentences(text)]


def examples_of(data: dict[str, dict], ids: Sequence[str], keep: int = 3) -> list[Example]:
    return [Example(p, data[p]["QUESTION"], tuple(abstract_sentences(data[p])[-keep:]), data[p]["final_decision"])
            for p in ids]


def dev_examples(settings) -> list[Example]:
    """The 700 dev examples; refuses when the local KB's PubMedQA abstracts are not the default build's (then the
    fixed test items, drawn from the KB's abstracts, would not be the ones excluded here)."""
    from assistant.evals.pubmedqa_eval import load_questions
    from assistant.answer.verdict_reader import READ_SENTENCES

    data = load_questions(settings.kb_mirror_dir)
    in_kb = default_kb_pmids(settings.kb_mirror_dir, settings.data_dir)
    local = _local_kb_pmids(settings)
    if local and local != in_kb:
        raise click.ClickException(
            f"The local KB holds {len(local)} PubMedQA abstracts, the default build {len(in_kb)}: the evaluation's "
            "fixed test items would then differ from the ones kept out here. Rebuild the KB with "
            "`evidentia kb build --default`.")
    return examples_of(data, dev_ids(data, in_kb), keep=READ_SENTENCES)


def _local_kb_pmids(settings) -> set[str]:
    from assistant.deps import Deps
    from assistant.evals.pubmedqa_eval import pmids_in_kb

    try:
        store = Deps(settings).text_kb
        return set() if store.is_empty else pmids_in_kb(store)
    except Exception:  # noqa: BLE001 - no readable store: the default build's abstracts define the test items
        return set()


# -- readers ------------------------------------------------------------------------------
def rule_prediction(ex: Example, sentences: int = 2) -> str:
    """Today's negation rule over the last ``sentences`` sentences."""
    from assistant.answer.verdicts import negation_rule

    closing = ex.sentences[-sentences:]
    return negation_rule({}, {f"S{i}": s for i, s in enumerate(closing)}, ex.question).verdict


def _choose_regularisation(X: np.ndarray, y: np.ndarray, seed: int) -> float:
    """The C of :data:`REGULARISATION_GRID` with the best inner cross-validated accuracy (ties: the smaller C)."""
    from sklearn.model_selection import StratifiedKFold

    from assistant.evals.report import best_regularisation

    folds = list(StratifiedKFold(FOLDS, shuffle=True, random_state=seed).split(X, y))
    return best_regularisation(X, y, folds, REGULARISATION_GRID)


def cross_validated(X: np.ndarray, y: np.ndarray, seed: int = SEED) -> tuple[list[str], list[int], list[float],
                                                                              np.ndarray]:
    """Out-of-fold predictions of a logistic regression (C chosen inside each training fold): predictions, each
    item's fold, each fold's C, and the out-of-fold probabilities (columns in :data:`LABELS` order)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    preds = np.empty(len(y), dtype=object)
    fold_of = np.zeros(len(y), dtype=int)
    probs = np.zeros((len(y), len(LABELS)))
    chosen = []
    for k, (tr, te) in enumerate(StratifiedKFold(FOLDS, shuffle=True, random_state=seed).split(X, y)):
        c = _choose_regularisation(X[tr], y[tr], seed)
        model = LogisticRegression(C=c, max_iter=5000).fit(X[tr], y[tr])
        preds[te] = model.predict(X[te])
        p = model.predict_proba(X[te])
        for j, lab in enumerate(model.classes_):
            probs[te, LABELS.index(str(lab))] = p[:, j]
        fold_of[te] = k
        chosen.append(c)
    return [str(p) for p in preds], fold_of.tolist(), chosen, probs


def shipped(examples: Sequence[Example], reader: Sequence[str], rule: Sequence[str]) -> list[str]:
    """What verdicts.py answers: the reader's verdict, the rule's for a question about sameness."""
    from assistant.answer.verdicts import asks_sameness

    return [r if asks_sameness(ex.question) else p for ex, p, r in zip(examples, reader, rule)]


def reader_matrix(examples: Sequence[Example], sentences: int = 3) -> np.ndarray:
    from assistant.answer.verdict_reader import reader_features

    return np.stack([reader_features(ex.question, ex.sentences[-sentences:]) for ex in examples])


def embedding_matrix(examples: Sequence[Example], encode: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """MiniLM vectors of the question (q) and of the conclusion (c): [c, q * c, |q - c|]."""
    q = encode([ex.question for ex in examples])
    c = encode([" ".join(ex.sentences) for ex in examples])
    return np.hstack([c, q * c, np.abs(q - c)])


# -- scoring ------------------------------------------------------------------------------
def scores(golds: Sequence[str], preds: Sequence[str]) -> dict[str, float]:
    from assistant.evals.report import classification_metrics

    m = classification_metrics(list(golds), list(preds), LABELS)
    return {"accuracy": m["accuracy"], "macro_f1": m["macro_f1"], "n": m["n"],
            "no_recall": m["per_label"]["no"]["recall"], "maybe_recall": m["per_label"]["maybe"]["recall"]}


def paired_bootstrap(golds: Sequence[str], a: Sequence[str], b: Sequence[str], seed: int = SEED,
                     rounds: int = BOOTSTRAP) -> dict[str, float]:
    """Accuracy of ``a`` minus that of ``b`` on the same items, with a 95% percentile interval over ``rounds``
    resamples of the items."""
    g = np.asarray(golds)
    diff = (np.asarray(a) == g).astype(float) - (np.asarray(b) == g).astype(float)
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, len(diff), size=(rounds, len(diff)))].mean(axis=1)
    return {"difference": float(diff.mean()), "low": float(np.percentile(means, 2.5)),
            "high": float(np.percentile(means, 97.5)), "rounds": rounds}


def measure(examples: Sequence[Example], encode: Callable[[list[str]], np.ndarray] | None = None,
            fold_seeds: Sequence[int] = FOLD_SEEDS) -> dict:
    """Every row's per-item predictions and scores, the paired comparison, and the reader's spread over fold
    draws. ``encode``: a sentence encoder for the embeddings row (None leaves that row out)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # small fits: BLAS threads only contend (40x slower on 2 busy cores)
        return _measure(examples, encode, fold_seeds)


def _measure(examples: Sequence[Example], encode: Callable[[list[str]], np.ndarray] | None,
             fold_seeds: Sequence[int]) -> dict:
    from assistant.answer.verdicts import asks_sameness
    from assistant.evals.report import mcnemar

    ids = [ex.id for ex in examples]
    golds = [ex.gold for ex in examples]
    y = np.asarray(golds)
    predictions: dict[str, list[str]] = {
        "always-yes": ["yes"] * len(golds),
        "always-no": ["no"] * len(golds),
        RULE: [rule_prediction(ex, 2) for ex in examples],
        "rule (last 3)": [rule_prediction(ex, 3) for ex in examples],
    }
    regularisation: dict[str, list[float]] = {}
    if encode is not None:
        predictions["MiniLM embeddings"], _, regularisation["MiniLM embeddings"], _ = cross_validated(
            embedding_matrix(examples, encode), y)
    predictions["reader (last 2)"], _, regularisation["reader (last 2)"], _ = cross_validated(
        reader_matrix(examples, 2), y)
    X = reader_matrix(examples, 3)
    predictions[READER_ALL], folds, regularisation[READER], probs = cross_validated(X, y)
    predictions[READER] = shipped(examples, predictions[READER_ALL], predictions[RULE])
    spread = [scores(golds, shipped(examples, cross_validated(X, y, seed)[0], predictions[RULE]))["accuracy"]
              for seed in fold_seeds]
    right = {name: dict(zip(ids, (p == g for p, g in zip(preds, golds)))) for name, preds in predictions.items()}
    return {
        "ids": ids, "golds": golds, "folds": folds, "predictions": predictions,
        "reader_probabilities": probs.round(4).tolist(),
        "variants": {name: scores(golds, preds) for name, preds in predictions.items()},
        "regularisation": regularisation,
        "paired": {f"{READER} vs {RULE}": mcnemar(right[READER], right[RULE])},
        "bootstrap": {f"{READER} minus {RULE}": paired_bootstrap(golds, predictions[READER], predictions[RULE])},
        "reader_fold_seeds": dict(zip([str(s) for s in fold_seeds], spread)),
        "sameness_questions": sum(asks_sameness(ex.question) for ex in examples),
    }


def log_lines(result: dict) -> list[str]:
    """The per-item log: one JSON line per dev question (labels only)."""
    lines = []
    for i, item_id in enumerate(result["ids"]):
        lines.append(json.dumps({
            "id": item_id, "gold": result["golds"][i], "fold": result["folds"][i],
            "predictions": {name: preds[i] for name, preds in result["predictions"].items()},
            "reader_probabilities": dict(zip(LABELS, result["reader_probabilities"][i]))}, sort_keys=True))
    return lines


def recompute(log_path: Path, data: dict[str, dict] | None = None) -> dict[str, dict[str, float]]:
    """Each row's scores from the per-item log; with ``data`` (ori_pqal.json), its gold labels are checked first."""
    records = [json.loads(line) for line in log_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    wrong = [r["id"] for r in records if data is not None and data[r["id"]]["final_decision"] != r["gold"]]
    if wrong:
        raise ValueError(f"{log_path.name} logs a gold label that ori_pqal.json does not have for "
                         f"{', '.join(wrong[:5])}")
    names = list(records[0]["predictions"]) if records else []
    golds = [r["gold"] for r in records]
    return {name: scores(golds, [r["predictions"][name] for r in records]) for name in names}


def notes_for(result: dict) -> str:
    from assistant.evals.report import paired_notes

    b = next(iter(result["bootstrap"].values()))
    n_same = result["sameness_questions"]
    spread = list(result["reader_fold_seeds"].values())
    chosen = ", ".join(f"{name}: {', '.join(f'{c:g}' for c in cs)}" for name, cs in result["regularisation"].items())
    lines = [
        f"{len(result['ids'])} PubMedQA dev questions (ori_pqal.json without the evaluation's fixed 300 test items, "
        f"seed {SEED}), each read over the closing sentences of its own abstract as the default KB holds it; no "
        "LLM, no retrieval. Learned rows: out-of-fold predictions of 5-fold cross-validation (folds stratified by "
        f"label over sorted ids, seed {SEED}), the logistic regression's C chosen inside each training fold by a "
        f"second 5-fold cross-validation from {', '.join(f'{c:g}' for c in REGULARISATION_GRID)} (chosen, fold by "
        f"fold: {chosen}).",
        "",
        f"- `{RULE}`: today's negation rule (assistant/answer/verdicts.py) over the last two sentences, the reader's "
        "fallback; `rule (last 3)` the same over three. The rule's word list was chosen on these same 700 "
        "questions, so its number is an in-sample one, and the learned rows' are not.",
        "- `MiniLM embeddings`: the project's sentence encoder (all-MiniLM-L6-v2) of the question q and the "
        "conclusion c, [c, q*c, |q-c|], in a logistic regression.",
        f"- `{READER}`: assistant/answer/verdict_reader.py, a logistic regression over the rule's cues in each of "
        "the last three sentences (negated finding, a negating word, stated sameness for a sameness question), "
        "each also weighed by the share of the question's content words its sentence repeats, which sentence "
        "repeats most, and hedging words; `reader (last 2)` the same features with only two sentences (every "
        "question). Its features hold the rule's own cues, so it is the reader and the rule combined. Shipped, a "
        f"question about sameness ({n_same} here) keeps the rule's reading; `{READER_ALL}` is the reader on those "
        "too. Its weights are fitted out of fold, but its features and the three sentences were chosen among a "
        "handful of tries (named in verdict_reader.py) on these same 700 questions: a selection the cross-validation "
        "does not undo. The fixed 300 test items (`evidentia eval pubmedqa`) are the check.",
        f"- The bar set by the path before #78 (docs/eval/pubmedqa.md): the rule with the model's one-token reading "
        "scored 0.716 on the same 700 conclusions (last two sentences, logged with the model on 2026-11-26; not "
        "recomputed here: this command calls no model).",
        *paired_notes(result["paired"], unit="questions"),
        f"- Paired bootstrap ({b['rounds']} resamples of the questions): {READER} minus {RULE} = "
        f"{b['difference']:+.3f} accuracy, 95% interval [{b['low']:+.3f}, {b['high']:+.3f}].",
        f"- The reader's accuracy over other fold draws (seeds {', '.join(result['reader_fold_seeds'])}): "
        f"{min(spread):.3f} to {max(spread):.3f} (mean {np.mean(spread):.3f}).",
        f"- Per-item predictions: `docs/eval/{BENCHMARK}.jsonl` (id, gold, fold, each row's label, and the "
        f"out-of-fold probabilities of `{READER_ALL}`); every number above recomputes from it, the gold labels "
        "checked against ori_pqal.json (assistant.evals.pubmedqa_verdicts.recompute).",
    ]
    return "\n".join(lines)


def write_report(result: dict, docs_dir: Path | None = None) -> Path:
    from assistant.evals.report import DOCS_DIR, label_baselines, write_eval

    out_dir = (docs_dir or DOCS_DIR) / "eval"
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{BENCHMARK}.jsonl").write_text("\n".join(log_lines(result)) + "\n", encoding="utf-8")
    extra = {**label_baselines(result["golds"]), "paired": result["paired"], "bootstrap": result["bootstrap"],
             "reader_fold_seeds": result["reader_fold_seeds"], "regularisation": result["regularisation"],
             "sameness_questions": result["sameness_questions"],
             "folds": FOLDS, "split": "dev"}
    return write_eval(BENCHMARK, model="none (no LLM)", items=len(result["ids"]), seed=SEED,
                      variants=result["variants"], notes=notes_for(result), docs_dir=docs_dir, extra=extra,
                      metric_keys=["accuracy", "macro_f1", "no_recall", "maybe_recall", "n"])


def build_reader(examples: Sequence[Example], path: Path | None = None):
    """Fit the shipped reader on every dev example (C by 5-fold cross-validation on them) and save it."""
    from threadpoolctl import threadpool_limits

    from assistant.answer import verdict_reader

    y = np.asarray([ex.gold for ex in examples])
    with threadpool_limits(1):
        c = _choose_regularisation(reader_matrix(examples, 3), y, SEED)
        reader = verdict_reader.fit_reader([ex.question for ex in examples], [ex.sentences for ex in examples],
                                           list(y), c, ids=[ex.id for ex in examples])
    reader.save(path or verdict_reader.ARTEFACT)
    return reader


def register(group) -> None:
    from assistant.settings import Settings

    @group.command("pubmedqa-verdicts")
    @click.option("--split", type=click.Choice(["dev"]), default="dev", show_default=True,
                  help="Only dev: the fixed 300 test items are read once, by `evidentia eval pubmedqa`.")
    @click.option("--embeddings/--no-embeddings", default=True, show_default=True,
                  help="Include the MiniLM embeddings row (encodes 1,400 texts: a few minutes on 2 cores).")
    def pubmedqa_verdicts(split: str, embeddings: bool) -> None:
        """Yes/no readers of PubMedQA conclusions on the 700 dev questions: rule, embeddings, learned reader."""
        settings = Settings()
        examples = dev_examples(settings)
        encode = None
        if embeddings:
            from kb.embeddings import Embedder

            embedder = Embedder(settings.embedding_model)
            encode = embedder.encode
        click.echo(f"{len(examples)} {split} questions; cross-validating ...")
        write_report(measure(examples, encode))


def register_build(group) -> None:
    from assistant.settings import Settings

    @group.command("verdict-reader")
    def verdict_reader() -> None:
        """Fit the yes/no verdict reader on the 700 PubMedQA dev questions (assistant/answer/verdict_reader.npz)."""
        examples = dev_examples(Settings())
        reader = build_reader(examples)
        from assistant.answer.verdict_reader import ARTEFACT

        click.echo(f"Fitted on {len(reader.trained_ids)} dev questions (C = {reader.regularisation:g}); "
                   f"saved {ARTEFACT}.")
