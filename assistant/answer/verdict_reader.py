"""A yes/no/maybe reading of an abstract's conclusion, learned from PubMedQA dev questions (#78).

The negation rule (:mod:`assistant.answer.verdicts`) answers "no" when any of the last two sentences states a
negated finding. What it gets wrong on the 700 PubMedQA dev questions is mostly *where* the negation stands: a
results sentence before the conclusion ("In the reversal phase, we did not find any significant difference")
followed by a positive finding ("These results indicate that T-cell deficiency may affect spatial learning"),
gold "yes". This reader keeps the rule's cues but learns how much each one counts from where it stands (last
sentence, the one before, the one before that) and from how much of the question that sentence repeats, in a
logistic regression over yes/no/maybe fitted on the dev questions only (never on the evaluation's fixed 300).

Measured by 5-fold cross-validation on those 700 (``evidentia eval pubmedqa-verdicts --split dev``, the table in
docs/eval/pubmedqa-verdicts-dev.md). Tried and not kept, on the same folds: MiniLM sentence embeddings of the
question and the conclusion (alone near always-"yes"; they added nothing to these features, with or without
their cosine to the question), TF-IDF words of the conclusion (with negated words marked) and of the question
(below the rule, and no gain when added to it), and each of the rule's cue phrases as its own feature.

The fitted weights are a few hundred numbers, committed beside this file (``verdict_reader.npz``; built by
``evidentia kb verdict-reader``); no PubMedQA text is in it, only the ids it was fitted on, so a test can check
that none of them is a test item. Inference is numpy only: no model is loaded.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from assistant.answer.verdict_cues import _NEGATED_FINDING, _SAMENESS_FINDING, asks_sameness, content_words

log = logging.getLogger(__name__)

# The conclusion the reader sees: the last three sentences of the abstract (dev, 5-fold: last two 0.70, three
# 0.72, four 0.72; the rule alone is best on two).
READ_SENTENCES = 3
LABELS = ("yes", "no", "maybe")
ARTEFACT = Path(__file__).with_name("verdict_reader.npz")

# Negating words beyond the rule's phrases ("no moderating effect", "lack of understanding", "unlikely"): on their
# own too common in "yes" conclusions to decide (dev: "not" in 20 missed "no" and 20 "yes"/"maybe"), so they are
# features whose weight is learned, not rules.
_NEGATION_WORD = re.compile(r"\b(no|not|never|without|lack\w*|unlikely|insufficient|little)\b", re.I)
# Hedging, the mark of a "maybe" conclusion ("may", "further studies are warranted").
_HEDGE = re.compile(r"\b(may|might|could|possibly|potential\w*|suggest\w*|further|unclear|remain\w*|warrant\w*|"
                    r"larger|needed|appear\w*)\b", re.I)

_SLOT_FEATURES = ("negated_finding", "negated_finding_x_coverage", "negation_word", "negation_word_x_coverage",
                  "sameness_finding", "sameness_finding_x_coverage", "question_coverage", "present",
                  "negated_finding_most_about", "sameness_finding_most_about")
_SLOTS = ("last", "second_last", "third_last")[:READ_SENTENCES]
FEATURE_NAMES: tuple[str, ...] = tuple(f"{slot}:{name}" for slot in _SLOTS for name in _SLOT_FEATURES) + (
    "asks_sameness", "hedged")


def closing(sentences: Sequence[str]) -> list[str]:
    """The last :data:`READ_SENTENCES` sentences, in reading order."""
    return list(sentences)[-READ_SENTENCES:]


def _most_about(coverages: list[float]) -> int:
    """The slot (0 = last sentence) whose sentence repeats most of the question; ties go to the later sentence."""
    return int(np.argmax(coverages))


def reader_features(question: str, sentences: Sequence[str]) -> np.ndarray:
    """The feature vector (:data:`FEATURE_NAMES`) of a question over the closing sentences of an abstract, given in
    reading order (only the last :data:`READ_SENTENCES` count; missing ones are empty slots)."""
    last_first = list(reversed(closing(sentences)))
    last_first += [""] * (READ_SENTENCES - len(last_first))
    sameness = asks_sameness(question)
    asked = content_words(question)
    coverages = [len(asked & content_words(s)) / len(asked) if asked else 0.0 for s in last_first]
    about = _most_about(coverages)
    out: list[float] = []
    for slot, (text, coverage) in enumerate(zip(last_first, coverages)):
        negated = bool(_NEGATED_FINDING.search(text)) and not sameness
        negation_word = bool(_NEGATION_WORD.search(text)) and not sameness
        same = bool(_SAMENESS_FINDING.search(text)) and sameness
        out += [negated, negated * coverage, negation_word, negation_word * coverage, same, same * coverage,
                coverage, bool(text), slot == about and negated, slot == about and same]
    out += [sameness, bool(_HEDGE.search(" ".join(last_first)))]
    return np.asarray(out, dtype=np.float64)


@dataclass(frozen=True)
class Reading:
    """What the reader made of one conclusion: its verdict, the probability of each label, and the words that
    weighed most (a negating or sameness phrase and the index, in reading order, of the sentence holding it)."""

    verdict: str
    probabilities: dict[str, float]
    cue: str = ""
    cue_index: int | None = None


@dataclass(frozen=True)
class VerdictReader:
    """A multinomial logistic regression over :func:`reader_features`."""

    labels: tuple[str, ...]
    weights: np.ndarray  # (labels, features)
    bias: np.ndarray  # (labels,)
    trained_ids: tuple[str, ...] = ()
    regularisation: float = 1.0  # scikit-learn's C, chosen by cross-validation on the training questions

    def probabilities(self, question: str, sentences: Sequence[str]) -> dict[str, float]:
        scores = self.weights @ reader_features(question, sentences) + self.bias
        p = np.exp(scores - scores.max())
        p /= p.sum()
        return {lab: float(v) for lab, v in zip(self.labels, p)}

    def read(self, question: str, sentences: Sequence[str]) -> Reading:
        probs = self.probabilities(question, sentences)
        verdict = max(self.labels, key=lambda lab: probs[lab])  # ties: the first label (yes)
        cue, index = _cue(question, closing(sentences), verdict)
        offset = max(0, len(list(sentences)) - READ_SENTENCES)
        return Reading(verdict, probs, cue, None if index is None else index + offset)

    def save(self, path: Path | None = None) -> Path:
        path = path or ARTEFACT
        np.savez_compressed(path, labels=np.array(self.labels), weights=self.weights, bias=self.bias,
                            feature_names=np.array(FEATURE_NAMES), trained_ids=np.array(self.trained_ids),
                            regularisation=np.array(self.regularisation), read_sentences=np.array(READ_SENTENCES))
        return path


def _cue(question: str, sentences: list[str], verdict: str) -> tuple[str, int | None]:
    """The phrase an explanation quotes: for a sameness question the stated sameness, else the negated finding or
    negating word, from the sentence most about the question first, then from the last sentence back."""
    sameness = asks_sameness(question)
    patterns = [_SAMENESS_FINDING] if sameness else [_NEGATED_FINDING, _NEGATION_WORD]
    if sameness and verdict != "yes" or not sameness and verdict == "yes":
        return "", None
    asked = content_words(question)
    order = sorted(range(len(sentences)), key=lambda i: (-len(asked & content_words(sentences[i])), -i))
    for pattern in patterns:
        for i in order:
            m = pattern.search(sentences[i])
            if m:
                return m.group(0), i
    return "", None


def fit_reader(questions: Sequence[str], conclusions: Sequence[Sequence[str]], golds: Sequence[str],
               regularisation: float, ids: Sequence[str] = ()) -> VerdictReader:
    """Fit the reader (scikit-learn's multinomial logistic regression, L2, ``C = regularisation``)."""
    from sklearn.linear_model import LogisticRegression

    X = np.stack([reader_features(q, c) for q, c in zip(questions, conclusions)])
    model = LogisticRegression(C=regularisation, max_iter=5000).fit(X, list(golds))
    classes = [str(c) for c in model.classes_]
    if len(classes) == 2:  # scikit-learn keeps one row for two classes: make it a softmax over both
        weights = np.vstack([-model.coef_[0] / 2, model.coef_[0] / 2])
        bias = np.array([-model.intercept_[0] / 2, model.intercept_[0] / 2])
    else:
        weights, bias = model.coef_, model.intercept_
    order = [classes.index(lab) for lab in LABELS if lab in classes]  # yes first: ties answer yes
    return VerdictReader(tuple(classes[i] for i in order), np.asarray(weights)[order], np.asarray(bias)[order],
                         tuple(ids), regularisation)


class ReaderUnavailable(Exception):
    """The fitted reader is missing, unreadable, or was built for other features; the sentence says which."""


def read_artefact(path: Path) -> VerdictReader:
    """The reader saved at ``path``; :class:`ReaderUnavailable` when there is none that fits this code."""
    try:
        with np.load(path, allow_pickle=False) as data:
            names = tuple(str(n) for n in data["feature_names"])
            if names != FEATURE_NAMES or int(data["read_sentences"]) != READ_SENTENCES:
                raise ReaderUnavailable(f"the verdict reader at {path} was built for other features; rebuild it "
                                        "with `evidentia kb verdict-reader`")
            return VerdictReader(tuple(str(lab) for lab in data["labels"]), np.asarray(data["weights"]),
                                 np.asarray(data["bias"]), tuple(str(i) for i in data["trained_ids"]),
                                 float(data["regularisation"]))
    except FileNotFoundError:
        raise ReaderUnavailable(f"there is no verdict reader at {path}; build it with "
                                "`evidentia kb verdict-reader`") from None
    except (OSError, KeyError, ValueError) as exc:
        raise ReaderUnavailable(f"the verdict reader at {path} could not be read ({exc}); rebuild it with "
                                "`evidentia kb verdict-reader`") from None


def load_reader(path: Path | None = None) -> VerdictReader | None:
    """The committed reader (:data:`ARTEFACT` unless ``path``), loaded once; None, with one logged note, when it
    cannot be used, so the negation rule decides instead."""
    return _load(path or ARTEFACT)


@lru_cache(maxsize=4)
def _load(path: Path) -> VerdictReader | None:
    try:
        return read_artefact(path)
    except ReaderUnavailable as exc:
        log.warning("yes/no verdicts fall back to the negation rule: %s", exc)
        return None
