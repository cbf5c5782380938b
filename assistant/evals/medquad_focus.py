"""``evidentia eval medquad-focus --split dev``: is a cited page about the focus the question asks about? (#78)

No LLM. The MedQuAD evaluation (:mod:`assistant.evals.medquad_eval`) hides every page on half its foci; on its dev
split the assistant then answered some of those questions from a *related* page as if it were the focus. This
command learns the focus check of :mod:`assistant.answer.focus_check` and measures it, in two parts:

1. **Training pairs**, from MedQuAD's dev half only: its foci outside the evaluation's own dev items (the split has
   no third part; the test half is never read). One question per focus (``TRAIN_FOCI``, drawn with ``SEED``), asked
   of text search (:func:`tools.text_search.rank_kb`, the search the answer's evidence comes from) over a copy of
   the default KB with those questions' gold pages added (made once under the data folder, as the evaluation makes
   its own). Each question gives one pair *about* its focus (its gold page) and one pair *not about* it for each
   other focus among the pages of the top ``CANDIDATES`` sentences once every page on the question's focus is
   filtered out of the ranking (no index is rebuilt): what retrieval returns when the focus is missing, which is
   the "related page" of the failure. Pages of test-half foci and of the evaluation's items are filtered out too,
   so no pair reads them. Every learned row is scored out of fold (5 folds by question, stratified by label, seed
   ``SEED``; a logistic regression's C chosen inside each training fold, a threshold likewise).
2. **The evaluation's dev items** (``PER_HALF`` answerable, ``PER_HALF`` hidden, in the evaluation's own KB copy),
   at the level of retrieval: the pages of the top ``CANDIDATES`` sentences for each question, and which of them
   each variant, fitted on all the training pairs, keeps. An answerable item should keep its gold page; on a hidden
   item, a reply abstains whatever the model cites when the check rejects every candidate (a page whose title names
   no subject is never rejected).

Beside it, the chat bench's dev questions that retrieve a judged page: whether the check would leave the reply
nothing to cite.

Writes docs/eval/medquad-focus-dev.{json,md,png} and the per-item log docs/eval/medquad-focus-dev.jsonl (ids,
labels, folds and each variant's decisions; no MedQuAD text), from which every figure recomputes (:func:`recompute`).
``evidentia kb focus-check`` fits the shipped check on all the training pairs.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import click
import numpy as np

from assistant.evals.medquad_eval import PER_HALF, Item, choose_items, focus_key, kb_doc_id, split_of

BENCHMARK = "medquad-focus-dev"
SEED = 78
TRAIN_FOCI = 400
CANDIDATES = 8  # the sentences text search hands the answer (Settings.evidence_k)
DEPTH = 60  # ranked deep enough that CANDIDATES sentences remain once a focus's pages are filtered out
FOLDS = 5
REGULARISATION_GRID = (0.01, 0.1, 1.0, 10.0, 100.0)  # scikit-learn's C
FOLD_SEEDS = (0, 1, 2, 3, 4)  # the shipped check re-scored on other fold draws: how much the number moves

OFF = "check off (today)"
REJECT = "always reject"
COVERED = "focus words in question (one threshold)"
COSINE = "MiniLM cosine (one threshold)"
WITH_COSINE = "learned, with cosine"
LEARNED = "learned check"
SHIPPED = "learned check + kind-of rule (shipped)"
VARIANTS = (OFF, REJECT, COVERED, COSINE, WITH_COSINE, LEARNED, SHIPPED)
PAIR_METRICS = ("accuracy", "about_kept", "related_rejected")
ITEM_METRICS = ("gold_kept_answerable", "focus_kept_answerable", "all_rejected_answerable", "all_rejected_hidden",
                "top_rejected_hidden", "judged_rejected_hidden")


# -- the training questions -----------------------------------------------------------------------
def evaluation_foci(records: list[dict]) -> frozenset[str]:
    """The foci of the MedQuAD evaluation's dev items (both halves, ``PER_HALF`` each): kept out of training."""
    items, _ = choose_items(records, "dev", per_half=PER_HALF)
    return frozenset(focus_key({"focus": it.focus}) for it in items)


def training_items(records: list[dict], n: int = TRAIN_FOCI, seed: int = SEED) -> list[Item]:
    """``n`` dev-half foci outside the evaluation's own dev items, one question each, drawn with ``seed``. The test
    half is never read."""
    taken = evaluation_foci(records)
    by_focus: dict[str, list[dict]] = {}
    for rec in records:
        key = focus_key(rec)
        if key and split_of(key) == "dev" and key not in taken:
            by_focus.setdefault(key, []).append(rec)
    foci = sorted(by_focus)
    rng = random.Random(f"{seed}-train")
    rng.shuffle(foci)
    items = []
    for key in foci[:n]:
        rec = rng.choice(sorted(by_focus[key], key=kb_doc_id))
        items.append(Item(id=kb_doc_id(rec), question=rec["question"], focus=rec.get("focus") or key,
                          qtype=rec.get("qtype", ""), answerable=True, gold_answer=""))
    return items


def training_pages(records: list[dict]) -> Callable[[str], bool]:
    """Which pages a training pair may read, by their focus key ("" for a page that names no subject): not a
    test-half focus, not one of the evaluation's dev items."""
    taken = evaluation_foci(records)
    return lambda key: not key or (split_of(key) == "dev" and key not in taken)


# -- retrieval --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Candidate:
    """A page retrieval returned for a question; ``rank``: its best sentence's place among the candidates."""

    doc_id: str
    focus: str  # what its title names ("" for a document that names none: not judged)
    rank: int


@dataclass
class Retrieved:
    """One question's candidate pages, with its focus's pages present and with them filtered out."""

    item: Item
    present: list[Candidate] = field(default_factory=list)
    removed: list[Candidate] = field(default_factory=list)


def _pages(hits, k: int) -> list[Candidate]:
    """The distinct documents of the first ``k`` sentences, in rank order."""
    from kb.default_corpus import page_focus

    out: dict[str, Candidate] = {}
    for rank, h in enumerate(hits[:k]):
        out.setdefault(h.doc_id, Candidate(h.doc_id, page_focus(h.doc_id, h.title), rank))
    return list(out.values())


def retrieve(store, items: Sequence[Item], keep: Callable[[str], bool] = lambda key: True, k: int = CANDIDATES,
             depth: int = DEPTH, echo=None) -> list[Retrieved]:
    """Each item's candidate pages: the top ``k`` sentences of :func:`tools.text_search.rank_kb` (the text search of
    the answer's evidence), ranked ``depth`` deep once and filtered: ``keep(focus key)`` drops pages no pair may
    read; ``present`` is what remains, ``removed`` what remains once every page on the item's own focus is
    filtered out too. No index is rebuilt."""
    from kb.default_corpus import page_focus
    from tools.text_search import rank_kb

    out = []
    for n, item in enumerate(items):
        own = focus_key({"focus": item.focus})
        ranked = rank_kb(store, item.question, k=depth)
        hits = [(h, focus_key({"focus": page_focus(h.doc_id, h.title)})) for h in store.hits(ranked.rows)]
        hits = [(h, key) for h, key in hits if keep(key)]
        out.append(Retrieved(item, _pages([h for h, _ in hits], k), _pages([h for h, key in hits if key != own], k)))
        if echo and (n + 1) % 50 == 0:
            echo(f"  retrieved {n + 1} of {len(items)}")
    return out


# -- pairs ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Pair:
    """A question and a page's focus: ``about`` when the page is on the question's own focus."""

    item_id: str
    question: str
    asked: str  # the question's focus, as the intent frame's entities name it (here its MedQuAD focus)
    doc_id: str
    focus: str
    about: bool
    retrieved: bool  # returned by retrieval (a gold page that was not is still an "about" pair)


def pairs_of(retrieved: Sequence[Retrieved]) -> list[Pair]:
    """Per question: its focus (the gold page, retrieved or not) as the pair about it, and each distinct other focus
    among the judged pages retrieval returns once the focus's own pages are filtered out as the pairs not about it."""
    out = []
    for r in retrieved:
        own = focus_key({"focus": r.item.focus})
        out.append(Pair(r.item.id, r.item.question, r.item.focus, r.item.id, r.item.focus, True,
                        any(c.doc_id == r.item.id for c in r.present)))
        seen = {own}
        for c in r.removed:
            key = focus_key({"focus": c.focus})
            if c.focus and key not in seen:
                seen.add(key)
                out.append(Pair(r.item.id, r.item.question, r.item.focus, c.doc_id, c.focus, False, True))
    return out


def feature_matrix(questions: Sequence[str], foci: Sequence[str]) -> np.ndarray:
    """:func:`assistant.answer.focus_check.focus_features` of each (question, focus)."""
    from assistant.answer.focus_check import FEATURE_NAMES, focus_features

    if not questions:
        return np.zeros((0, len(FEATURE_NAMES)))
    return np.stack([focus_features(q, f) for q, f in zip(questions, foci)])


def cosines(questions: Sequence[str], foci: Sequence[str], encode: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """The sentence encoder's cosine of each (question, focus), every distinct text encoded once."""
    texts = sorted(set(questions) | set(foci))
    vectors = dict(zip(texts, encode(texts))) if texts else {}
    return np.asarray([float(vectors[q] @ vectors[f]) for q, f in zip(questions, foci)])


# -- learning -------------------------------------------------------------------------------------
def _folds(labels: np.ndarray, groups: Sequence[str], seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Folds by question (all pairs of a question in one fold), stratified by label."""
    from sklearn.model_selection import StratifiedGroupKFold

    return list(StratifiedGroupKFold(FOLDS, shuffle=True, random_state=seed).split(
        np.zeros(len(labels)), labels, np.asarray(groups)))


def choose_regularisation(X: np.ndarray, y: np.ndarray, groups: Sequence[str], seed: int = SEED) -> float:
    """The C of :data:`REGULARISATION_GRID` with the best inner cross-validated accuracy (ties: the smaller C)."""
    from assistant.evals.report import best_regularisation

    return best_regularisation(X, y, _folds(y, groups, seed), REGULARISATION_GRID)


def best_threshold(values: np.ndarray, y: np.ndarray) -> float:
    """The cut t (about when value >= t) with the most pairs right; ties: the lower cut."""
    cuts = np.unique(values)
    right = [int(((values >= t) == (y == 1)).sum()) for t in cuts]
    return float(cuts[int(np.argmax(right))])


@dataclass(frozen=True)
class Decider:
    """One variant fitted on training pairs: a logistic regression over some columns, or a threshold on one."""

    columns: tuple[int, ...]
    weights: np.ndarray | None = None
    bias: float = 0.0
    cut: float | None = None
    regularisation: float | None = None
    or_column: int | None = None  # a 0/1 column that makes a pair about on its own (the kind-of rule)

    def about(self, X: np.ndarray) -> np.ndarray:
        X = np.atleast_2d(X)
        x = X[:, list(self.columns)]
        about = x[:, 0] >= self.cut if self.cut is not None else x @ self.weights + self.bias >= 0.0  # p >= 0.5
        return about | (X[:, self.or_column] > 0) if self.or_column is not None else about


def fit_decider(X: np.ndarray, y: np.ndarray, groups: Sequence[str], columns: Sequence[int], *,
                threshold: bool = False, or_column: int | None = None, seed: int = SEED) -> Decider:
    """A threshold on one column, or a logistic regression over ``columns`` with C chosen by cross-validation;
    ``or_column`` is applied after, never fitted."""
    from sklearn.linear_model import LogisticRegression

    if threshold:
        return Decider(tuple(columns), cut=best_threshold(X[:, columns[0]], y), or_column=or_column)
    x = X[:, list(columns)]
    c = choose_regularisation(x, y, groups, seed)
    model = LogisticRegression(C=c, max_iter=5000).fit(x, y)
    return Decider(tuple(columns), np.asarray(model.coef_[0], dtype=np.float64), float(model.intercept_[0]),
                   regularisation=c, or_column=or_column)


def out_of_fold(X: np.ndarray, y: np.ndarray, groups: Sequence[str], columns: Sequence[int], *,
                threshold: bool = False, or_column: int | None = None, seed: int = SEED
                ) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """Out-of-fold decisions of :func:`fit_decider` (each fold fitted on the others), each pair's fold, and each
    fold's C or cut."""
    about = np.zeros(len(y), dtype=bool)
    fold_of = np.zeros(len(y), dtype=int)
    chosen = []
    for k, (tr, te) in enumerate(_folds(y, groups, seed)):
        decider = fit_decider(X[tr], y[tr], [groups[i] for i in tr], columns, threshold=threshold,
                              or_column=or_column, seed=seed)
        about[te] = decider.about(X[te])
        fold_of[te] = k
        chosen.append(decider.cut if threshold else decider.regularisation)
    return about, fold_of, chosen


# -- the variants -------------------------------------------------------------------------------------
def _specs(n_features: int) -> dict[str, dict]:
    """The learned variants over the columns [shipped features..., cosine, kind-of]: :func:`fit_decider`'s
    arguments."""
    from assistant.answer.focus_check import FEATURE_NAMES

    shipped = tuple(range(n_features))
    cosine, kind_of = n_features, n_features + 1
    return {COVERED: {"columns": (FEATURE_NAMES.index("covered"),), "threshold": True},
            COSINE: {"columns": (cosine,), "threshold": True},
            WITH_COSINE: {"columns": shipped + (cosine,)}, LEARNED: {"columns": shipped},
            SHIPPED: {"columns": shipped, "or_column": kind_of}}


def pair_scores(about: Sequence[bool], predicted: Sequence[bool]) -> dict[str, float]:
    """Accuracy over the pairs, and the share kept of the pairs about the focus and rejected of the others."""
    a, p = np.asarray(about, dtype=bool), np.asarray(predicted, dtype=bool)
    return {"accuracy": float((a == p).mean()) if len(a) else 0.0,
            "about_kept": float(p[a].mean()) if a.any() else 0.0,
            "related_rejected": float((~p[~a]).mean()) if (~a).any() else 0.0, "pairs": int(len(a))}


def item_record(item: Item, candidates: Sequence[Candidate], verdicts: dict[str, Sequence[bool | None]]) -> dict:
    """One dev item: its candidates and, per variant, which it keeps (``verdicts[variant][i]`` is the verdict on
    ``candidates[i]``; None: not judged, kept) and what that leaves."""
    own = focus_key({"focus": item.focus})
    rec = {"part": "item", "id": item.id, "answerable": item.answerable,
           "candidates": [{"doc_id": c.doc_id, "rank": c.rank, "judged": bool(c.focus),
                           "on_focus": bool(c.focus) and focus_key({"focus": c.focus}) == own} for c in candidates],
           "kept": {name: [a is not False for a in about] for name, about in verdicts.items()}}
    return rec


def item_outcome(rec: dict, variant: str) -> dict[str, bool]:
    """What a variant's decisions leave of one dev item (:func:`item_record`)."""
    kept = rec["kept"][variant]
    cands = rec["candidates"]
    left = [c for c, k in zip(cands, kept) if k]
    return {"gold_kept": any(c["doc_id"] == rec["id"] for c in left),
            "focus_kept": any(c["on_focus"] for c in left),
            # nothing left to cite: whatever the model picks, the reply abstains
            "all_rejected": bool(cands) and not left,
            "top_rejected": bool(cands) and not kept[0]}


def item_scores(records: Sequence[dict], variant: str) -> dict[str, float]:
    """A variant's figures over the dev items' records."""
    ans = [item_outcome(r, variant) for r in records if r["answerable"]]
    una = [item_outcome(r, variant) for r in records if not r["answerable"]]

    def share(rows, key) -> float:
        return sum(row[key] for row in rows) / len(rows) if rows else 0.0

    judged = [k for r in records if not r["answerable"] for k, c in zip(r["kept"][variant], r["candidates"])
              if c["judged"]]
    return {"gold_kept_answerable": share(ans, "gold_kept"), "focus_kept_answerable": share(ans, "focus_kept"),
            "all_rejected_answerable": share(ans, "all_rejected"), "all_rejected_hidden": share(una, "all_rejected"),
            "top_rejected_hidden": share(una, "top_rejected"),
            "judged_rejected_hidden": (sum(not k for k in judged) / len(judged)) if judged else 0.0}


def _verdicts(decider: Decider | None, X: np.ndarray, judged: Sequence[bool], reject: bool = False
              ) -> list[bool | None]:
    """A variant's verdict on each candidate: None for a page that names no subject."""
    about = decider.about(X) if decider is not None and len(X) else np.ones(len(judged), dtype=bool)
    return [None if not j else (False if reject else bool(a)) for j, a in zip(judged, about)]


def measure(train: Sequence[Retrieved], dev: Sequence[tuple[Item, Sequence[Candidate]]],
            encode: Callable[[list[str]], np.ndarray], chat: Sequence[tuple[str, str, Sequence[Candidate]]] = (),
            fold_seeds: Sequence[int] = FOLD_SEEDS) -> dict:
    """Every variant out of fold on the training pairs and, fitted on all of them, on the dev items' candidates;
    the shipped check's spread over fold draws; its verdicts on the chat questions' candidates (id, question,
    candidates)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # small fits: BLAS threads only contend on 2 busy cores
        return _measure(train, dev, encode, chat, fold_seeds)


def _matrix(questions: Sequence[str], foci: Sequence[str], asked: Sequence[str], encode) -> np.ndarray:
    """[shipped features..., cosine, kind-of] of each (question, page focus, the question's named focus)."""
    from assistant.answer.focus_check import names_in_full

    X = feature_matrix(questions, foci)
    if not len(questions):
        return np.zeros((0, X.shape[1] + 2))
    kind_of = [float(bool(a) and names_in_full(a, f)) for a, f in zip(asked, foci)]
    return np.hstack([X, cosines(questions, foci, encode)[:, None], np.asarray(kind_of)[:, None]])


def _measure(train, dev, encode, chat, fold_seeds) -> dict:
    from assistant.answer.focus_check import FEATURE_NAMES

    pairs = pairs_of(train)
    X = _matrix([p.question for p in pairs], [p.focus for p in pairs], [p.asked for p in pairs], encode)
    y = np.asarray([int(p.about) for p in pairs])
    groups = [p.item_id for p in pairs]
    specs = _specs(len(FEATURE_NAMES))
    predicted: dict[str, np.ndarray] = {OFF: np.ones(len(y), dtype=bool), REJECT: np.zeros(len(y), dtype=bool)}
    chosen: dict[str, list[float]] = {}
    folds = np.zeros(len(y), dtype=int)
    for name, spec in specs.items():
        predicted[name], folds, chosen[name] = out_of_fold(X, y, groups, **spec)
    spread = {str(s): pair_scores(y == 1, out_of_fold(X, y, groups, **specs[SHIPPED], seed=s)[0])["accuracy"]
              for s in fold_seeds}
    fitted = {name: fit_decider(X, y, groups, **spec) for name, spec in specs.items()}

    def decide(question: str, cands: Sequence[Candidate], asked: str) -> dict[str, list[bool | None]]:
        judged = [bool(c.focus) for c in cands]
        foci = [c.focus for c in cands if c.focus]
        Xc = _matrix([question] * len(foci), foci, [asked] * len(foci), encode)
        out = {OFF: _verdicts(None, Xc, judged), REJECT: _verdicts(None, Xc, judged, reject=True)}
        for name, decider in fitted.items():
            about = iter(decider.about(Xc)) if len(Xc) else iter(())
            out[name] = [None if not j else bool(next(about)) for j in judged]
        return out

    items = [item_record(item, cands, decide(item.question, cands, item.focus)) for item, cands in dev]
    chat_rows = []
    for qid, question, cands in chat:
        verdict = decide(question, cands, "")[SHIPPED]  # no intent frame here: the kind-of rule cannot apply
        chat_rows.append({"id": qid, "judged": [c.doc_id for c, v in zip(cands, verdict) if v is not None],
                          "rejected": [c.doc_id for c, v in zip(cands, verdict) if v is False],
                          "all_rejected": bool(cands) and all(v is False for v in verdict)})
    variants = {name: {**pair_scores(y == 1, predicted[name]), **item_scores(items, name)} for name in VARIANTS}
    pair_rows = [{"part": "pair", "item_id": p.item_id, "doc_id": p.doc_id, "about": p.about, "fold": int(f),
                  "retrieved": p.retrieved, "about_by": {name: bool(predicted[name][i]) for name in VARIANTS}}
                 for i, (p, f) in enumerate(zip(pairs, folds))]
    shipped = fitted[SHIPPED]
    return {"variants": variants, "pairs": pair_rows, "items": items, "chat": chat_rows,
            "chosen": {name: [float(c) for c in cs] for name, cs in chosen.items()},
            "fold_seeds": spread, "training_questions": len(train),
            "gold_retrieved": sum(p.retrieved for p in pairs if p.about),
            "unjudged_removed": sum(1 for r in train for c in r.removed if not c.focus),
            "removed": sum(len(r.removed) for r in train),
            "shipped": {"weights": dict(zip(FEATURE_NAMES, shipped.weights.round(4).tolist())),
                        "bias": round(shipped.bias, 4), "regularisation": shipped.regularisation}}


# -- the report -------------------------------------------------------------------------------------
def log_lines(result: dict) -> list[str]:
    """The per-item log (ids, labels, decisions; no MedQuAD text): a first line naming the variants, then one line
    per training pair and per dev item, each variant's decisions as "0"/"1" in that order (a pair's in
    ``about_by``, a dev item's per candidate in ``kept``)."""
    names = list(result["variants"])
    lines = [json.dumps({"part": "variants", "names": names})]
    for row in result["pairs"]:
        lines.append(json.dumps({**row, "about_by": "".join(str(int(row["about_by"][n])) for n in names)},
                                sort_keys=True))
    for row in result["items"]:
        kept = ["".join(str(int(row["kept"][n][i])) for n in names) for i in range(len(row["candidates"]))]
        lines.append(json.dumps({**row, "kept": kept}, sort_keys=True))
    return lines


def read_log(log_path: Path) -> tuple[list[str], list[dict], list[dict]]:
    """The variants' names, the pairs and the dev items of a per-item log, decisions keyed by variant again."""
    rows = [json.loads(line) for line in log_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    names = next(r["names"] for r in rows if r["part"] == "variants")
    pairs = [{**r, "about_by": {n: d == "1" for n, d in zip(names, r["about_by"])}} for r in rows
             if r["part"] == "pair"]
    items = [{**r, "kept": {n: [c[j] == "1" for c in r["kept"]] for j, n in enumerate(names)}} for r in rows
             if r["part"] == "item"]
    return names, pairs, items


def recompute(log_path: Path) -> dict[str, dict[str, float]]:
    """Each variant's figures from the per-item log."""
    names, pairs, items = read_log(log_path)
    return {name: {**pair_scores([p["about"] for p in pairs], [p["about_by"][name] for p in pairs]),
                   **item_scores(items, name)} for name in names}


def notes_for(result: dict) -> str:
    v = result["variants"]
    items = result["items"]
    n_ans = sum(r["answerable"] for r in items)
    spread = list(result["fold_seeds"].values())
    chosen = "; ".join(f"{name}: {', '.join(f'{c:.3g}' for c in cs)}" for name, cs in result["chosen"].items())
    unjudged_hidden = sum(1 for r in items if not r["answerable"] and not all(c["judged"] for c in r["candidates"]))
    chat = result["chat"]
    lines = [
        f"Training pairs: {result['training_questions']} MedQuAD questions, one per focus, from the dev half's foci "
        "outside the MedQuAD evaluation's own dev items (no test-half focus is read), each asked of text search over a "
        "copy of the default KB with their gold pages added: the question's focus (its gold page; retrieved in the "
        f"top {CANDIDATES} sentences for {result['gold_retrieved']} of them) is the pair about it, each other focus "
        f"among the pages of the top {CANDIDATES} sentences once every page on the question's focus is filtered out "
        f"of the ranking a pair not about it ({result['unjudged_removed']} of those {result['removed']} pages name no "
        "subject and are not judged). Figures on the pairs (accuracy, about_kept, related_rejected) are out of fold: "
        f"{FOLDS} folds by question, stratified by label, seed {SEED}; a C or a cut chosen inside each training fold "
        f"(fold by fold: {chosen}).",
        "",
        f"Dev items: the MedQuAD evaluation's dev split ({n_ans} answerable, {len(items) - n_ans} with every page on "
        "their focus hidden), in the evaluation's own KB copy, each variant fitted on all the training pairs. "
        f"Candidates: the pages of the top {CANDIDATES} sentences text search returns for the question (what the "
        "answer is shown, before the KG facts join the pool). `gold_kept_answerable`: the gold page is a candidate "
        "and kept; `all_rejected_*`: every candidate rejected, so the reply abstains whatever the model cites; "
        "`top_rejected_hidden`: the top sentence's page rejected; `judged_rejected_hidden`: the share of judged "
        f"candidates rejected on hidden items. On {unjudged_hidden} hidden items a candidate names no subject (an "
        "abstract, a WorldTree or OpenBookQA fact): such a page is never rejected, so no variant can reach 1.0 there.",
        "",
        f"- `{OFF}`: every page kept, as before the check; `{REJECT}`: every judged page rejected (the ceiling of "
        "judging titles alone).",
        f"- `{COVERED}`: the share of the page focus's words the question has, one cut learned; `{COSINE}`: the "
        "project's sentence encoder (all-MiniLM-L6-v2), cosine of the question and the page's focus, one cut learned.",
        f"- `{LEARNED}`: assistant/answer/focus_check.py, a logistic regression over the page focus's words in the "
        "question (their share, the share of their 5-letter stems, how many are missing, whether a missing one holds "
        f"a digit, whether they stand together in order); `{WITH_COSINE}` the same with the cosine added. Weights "
        f"fitted on all pairs: {result['shipped']['weights']}, bias {result['shipped']['bias']}, "
        f"C {result['shipped']['regularisation']:g}.",
        f"- `{SHIPPED}`: the learned check, or the kind-of rule (not learned): a page whose focus holds every word "
        "of what the question names is about it ('Acute Bronchitis' for 'bronchitis'). MedQuAD's labels count such a "
        "page as another focus, the chat bench's gold as the answer. The question names here its MedQuAD focus, as "
        "the intent frame's entities do (live, the model's entities are used: on the 20 logged dev turns of "
        "docs/eval/medquad-dev.md they were the focus, whole, 16 times, and split in parts 4 times).",
        f"- The shipped check's pair accuracy over other fold draws (seeds {', '.join(result['fold_seeds'])}): "
        f"{min(spread):.4f} to {max(spread):.4f}.",
        f"- Chat bench, dev half, first turns whose candidates include a judged page (over the user's KB; the learned "
        "check alone: without an intent frame no entity is named, so the kind-of rule cannot apply): "
        + ("; ".join(f"{c['id']}: {len(c['judged'])} judged, {len(c['rejected'])} rejected"
                     + (" (every candidate rejected)" if c["all_rejected"] else "") for c in chat) or "none") + ".",
        f"- Per item: `docs/eval/{BENCHMARK}.jsonl` (a line per training pair: its ids, label, fold and each "
        "variant's out-of-fold decision; a line per dev item: its candidates and each variant's decisions); every "
        "figure above recomputes from it (assistant.evals.medquad_focus.recompute).",
        f"- Shipped: `{SHIPPED}`, {v[SHIPPED]['accuracy']:.4f} of the pairs out of fold against "
        f"{v[OFF]['accuracy']:.4f} for keeping every page.",
    ]
    return "\n".join(lines)


def write_report(result: dict, docs_dir: Path | None = None) -> Path:
    from assistant.evals.report import DOCS_DIR, label_baselines, write_eval

    out_dir = (docs_dir or DOCS_DIR) / "eval"
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{BENCHMARK}.jsonl").write_text("\n".join(log_lines(result)) + "\n", encoding="utf-8")
    golds = ["about" if p["about"] else "not about" for p in result["pairs"]]
    extra = {**label_baselines(golds), "split": "dev", "folds": FOLDS, "candidates": CANDIDATES,
             "training_questions": result["training_questions"], "chosen": result["chosen"],
             "fold_seeds": result["fold_seeds"], "shipped": result["shipped"], "chat_dev": result["chat"],
             "item_ids": [r["id"] for r in result["items"]]}
    return write_eval(BENCHMARK, model="none (no LLM)", items=len(result["pairs"]), seed=SEED,
                      variants=result["variants"], notes=notes_for(result), docs_dir=docs_dir, extra=extra,
                      metric_keys=list(PAIR_METRICS + ITEM_METRICS))


# -- running ---------------------------------------------------------------------------------------
def _stores(settings, echo):
    """The training KB copy and the evaluation's dev KB copy (each made once under the data folder), and the
    training and dev items."""
    from assistant.deps import Deps
    from assistant.evals.medquad_eval import eval_kb, load_records
    from kb.text_store import TextStore

    if Deps(settings).text_kb.is_empty:
        raise click.ClickException("The text KB is empty: build it with `evidentia kb build --default`.")
    records = load_records(settings.kb_mirror_dir)
    train_items = training_items(records)
    dev_items, hidden = choose_items(records, "dev", per_half=PER_HALF)
    deps = Deps(settings)
    train_store = TextStore(eval_kb(settings, records, train_items, set(), "train", echo), embedder=deps.embedder)
    dev_store = TextStore(eval_kb(settings, records, dev_items, hidden, "dev", echo), embedder=deps.embedder)
    return records, train_items, dev_items, train_store, dev_store, deps


def training_retrieval(settings, echo=click.echo) -> tuple[list[Retrieved], dict]:
    records, train_items, dev_items, train_store, dev_store, deps = _stores(settings, echo)
    echo(f"Ranking {len(train_items)} training questions …")
    return retrieve(train_store, train_items, training_pages(records), echo=echo), {
        "dev_items": dev_items, "dev_store": dev_store, "deps": deps}


def run(settings=None, docs_dir: Path | None = None, echo=click.echo) -> Path:
    """Rank, pair, cross-validate, measure; write docs/eval/medquad-focus-dev.*."""
    from assistant.evals.chat_eval import load_questions, split_questions
    from assistant.settings import Settings

    settings = settings or Settings()
    train, rest = training_retrieval(settings, echo)
    echo(f"Ranking the {len(rest['dev_items'])} dev items …")
    dev = [(r.item, r.present) for r in retrieve(rest["dev_store"], rest["dev_items"], depth=CANDIDATES)]
    first_turns = {}
    for q in split_questions(load_questions(), "dev"):
        first_turns.setdefault(q.conversation, q)  # a follow-up's query is the model's rewrite: not read here
    asked = list(first_turns.values())
    chat = [(q.id, q.question, r.present) for q, r in zip(asked, retrieve(
        rest["deps"].text_kb, [Item(q.id, q.question, "", "", True, "") for q in asked], depth=CANDIDATES))]
    chat = [c for c in chat if any(cand.focus for cand in c[2])]
    result = measure(train, dev, rest["deps"].embedder.encode, chat)
    return write_report(result, docs_dir)


def build_check(train: Sequence[Retrieved], path: Path | None = None):
    """Fit the shipped check on every training pair (C by cross-validation on them) and save it."""
    from threadpoolctl import threadpool_limits

    from assistant.answer import focus_check

    pairs = pairs_of(train)
    X = feature_matrix([p.question for p in pairs], [p.focus for p in pairs])
    y = np.asarray([int(p.about) for p in pairs])
    with threadpool_limits(1):
        c = choose_regularisation(X, y, [p.item_id for p in pairs])
        check = focus_check.fit_check(X, y, c, ids=[r.item.id for r in train])
    check.save(path or focus_check.ARTEFACT)
    return check


def register(group) -> None:
    @group.command("medquad-focus")
    @click.option("--split", type=click.Choice(["dev"]), default="dev", show_default=True,
                  help="Only dev: the check is learned and measured on MedQuAD's dev foci; test is never read.")
    def medquad_focus(split: str) -> None:
        """The focus check on MedQuAD dev foci: training pairs out of fold, the dev items at retrieval level (#78)."""
        click.echo(f"Wrote {run()}")


def register_build(group) -> None:
    from assistant.settings import Settings

    @group.command("focus-check")
    def focus_check_cmd() -> None:
        """Fit the focus check on MedQuAD dev training pairs (assistant/answer/focus_check.npz)."""
        from assistant.answer.focus_check import ARTEFACT

        train, _ = training_retrieval(Settings())
        check = build_check(train)
        click.echo(f"Fitted on {len(check.trained_ids)} training questions (C = {check.regularisation:g}); "
                   f"saved {ARTEFACT}.")
