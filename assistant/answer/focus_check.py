"""Is a cited page about what the question asks about? A check learned from MedQuAD's dev foci (#78).

Seen on MedQuAD's dev split (docs/eval/medquad-dev.md): with every page on a question's focus (the disease, drug or
test it asks about) hidden, the assistant answered 4 of 10 anyway, two of them from MedQuAD pages on other foci as if
they were the focus ("What are the treatments for Acute respiratory distress syndrome?" from the pages on adult
acute myeloid and lymphoblastic leukaemia; "Temporal epilepsy, familial" from four pages on other syndromes), one
from a SciFact abstract and a WorldTree fact, one from Hetionet facts. The support check passes such statements:
they repeat what the page they cite says.

A KB page that names its subject in its title (a MedQuAD page: "<focus> — <site>: <question>",
:func:`kb.default_corpus.page_focus`) can be checked against the question: features of the question against that
focus (:func:`focus_features`), weighed by a logistic regression fitted on pairs made from retrieval over the
default KB on MedQuAD *training* foci: the dev half's foci outside the MedQuAD evaluation's own items (the test
half is never read). A pair is a question and a page retrieval returned for it, with the focus's own pages present
(the page on the focus: about it) and with them removed (what retrieval returns instead: not about it, the
"related page" of the failure). Built and measured by ``evidentia eval medquad-focus`` (docs/eval/medquad-focus-dev.md);
fitted by ``evidentia kb focus-check``.

A page on a kind of what the question names ("Acute Bronchitis" for "bronchitis", an entity of the intent frame) is
about it too (:func:`names_in_full`, a rule beside the learned weights, measured on its own). Documents whose title
names no subject (an abstract, a WorldTree or OpenBookQA fact, an upload) are not judged: nothing here says what
they are about. Inference is numpy over a handful of word features: no encoder (its cosine was tried and added
nothing, docs/eval/medquad-focus-dev.md).

The fitted weights are a few numbers, committed beside this file (``focus_check.npz``) with the ids of the MedQuAD
pages whose questions they were fitted on (no MedQuAD text), so a test can check that none is a test-split focus.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from assistant.answer.support import word_share
from kb.default_corpus import page_focus

log = logging.getLogger(__name__)

ARTEFACT = Path(__file__).with_name("focus_check.npz")

FEATURE_NAMES: tuple[str, ...] = ("covered", "stems_covered", "missing", "missing_number", "in_order")
_POSSESSIVE = re.compile(r"[’']s\b", re.I)
_TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    """Lower-cased letters-and-digits tokens, a possessive "'s" dropped ("Parkinson's" ~ "Parkinson"); numbers and
    one-letter tokens kept: "Noonan syndrome 6" is not "Noonan syndrome 1", nor "type A2" "type A1"."""
    return _TOKEN.findall(_POSSESSIVE.sub("", (text or "").lower()))


def _contiguous(part: list[str], whole: list[str]) -> bool:
    n = len(part)
    return bool(n) and any(whole[i:i + n] == part for i in range(len(whole) - n + 1))


def focus_features(question: str, focus: str) -> np.ndarray:
    """The features (:data:`FEATURE_NAMES`) of a question against a page's focus.

    - ``covered``: the share of the focus's tokens the question has; ``stems_covered`` the same over content
      words' 5-letter stems (:func:`assistant.answer.support.word_share`: "diseases" ~ "disease");
    - ``missing``: how many of the focus's tokens the question lacks; ``missing_number`` whether one of them has
      a digit (the focus is a numbered neighbour: "type 2" for "type 1");
    - ``in_order``: the focus's tokens stand together, in order, in the question.
    """
    f, q = tokens(focus), tokens(question)
    asked = set(q)
    lacking = [t for t in dict.fromkeys(f) if t not in asked]
    distinct = len(set(f)) or 1
    return np.asarray([1 - len(lacking) / distinct, word_share(focus, question), len(lacking),
                       any(any(ch.isdigit() for ch in t) for t in lacking), _contiguous(f, q)],
                      dtype=np.float64)


def names_in_full(entity: str, focus: str) -> bool:
    """The kind-of rule: a page whose focus has every token of what the question names is about it ("Acute
    Bronchitis" for "bronchitis", "Adrenal Insufficiency and Addison's Disease" for "Addison's disease").

    Not learned: MedQuAD's labels count such a page as another focus (12 of its 2,447 training pairs not about their
    question, "Episodic ataxia" for "Ataxia"), the chat bench's gold as the answer ("What is bronchitis?" is
    answered from the page "Acute Bronchitis", which opens with what bronchitis is). Measured on its own beside
    the learned check in docs/eval/medquad-focus-dev.md."""
    named = set(tokens(entity))
    return bool(named) and named <= set(tokens(focus))


@dataclass(frozen=True)
class FocusCheck:
    """A logistic regression over :func:`focus_features`: the probability that a page is about the asked focus."""

    weights: np.ndarray  # (features,)
    bias: float
    trained_ids: tuple[str, ...] = ()  # the MedQuAD pages whose questions it was fitted on
    regularisation: float = 1.0  # scikit-learn's C, chosen by cross-validation on the training pairs

    def probability(self, features: np.ndarray) -> np.ndarray:
        """P(about the focus) of each row of ``features`` (n, len(FEATURE_NAMES))."""
        return 1.0 / (1.0 + np.exp(-(np.atleast_2d(features) @ self.weights + self.bias)))

    def about(self, question: str, foci: Sequence[str], entities: Sequence[str] = ()) -> list[bool]:
        """Whether each of ``foci`` is what ``question`` asks about: the learned check (probability >= 0.5), or a
        page on a kind of what is asked (:func:`names_in_full`, for one of the question's ``entities``)."""
        if not foci:
            return []
        x = np.stack([focus_features(question, f) for f in foci])
        return [bool(p >= 0.5) or any(names_in_full(e, f) for e in entities)
                for p, f in zip(self.probability(x), foci)]

    def save(self, path: Path | None = None) -> Path:
        path = path or ARTEFACT
        np.savez_compressed(path, weights=self.weights, bias=np.array(self.bias),
                            feature_names=np.array(FEATURE_NAMES), trained_ids=np.array(self.trained_ids),
                            regularisation=np.array(self.regularisation))
        return path


def fit_check(features: np.ndarray, labels: Sequence[int], regularisation: float,
              ids: Sequence[str] = ()) -> FocusCheck:
    """Fit the check (scikit-learn's logistic regression, L2, ``C = regularisation``) on feature rows and 0/1
    labels (1: the page is on the question's focus)."""
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=regularisation, max_iter=5000).fit(features, list(labels))
    return FocusCheck(np.asarray(model.coef_[0], dtype=np.float64), float(model.intercept_[0]), tuple(ids),
                      regularisation)


class CheckUnavailable(Exception):
    """The fitted check is missing, unreadable, or was built for other features; the sentence says which."""


def read_artefact(path: Path) -> FocusCheck:
    """The check saved at ``path``; :class:`CheckUnavailable` when there is none that fits this code."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if tuple(str(n) for n in data["feature_names"]) != FEATURE_NAMES:
                raise CheckUnavailable(f"the focus check at {path} was built for other features; rebuild it with "
                                       "`evidentia kb focus-check`")
            return FocusCheck(np.asarray(data["weights"], dtype=np.float64), float(data["bias"]),
                              tuple(str(i) for i in data["trained_ids"]), float(data["regularisation"]))
    except FileNotFoundError:
        raise CheckUnavailable(f"there is no focus check at {path}; build it with `evidentia kb focus-check`") \
            from None
    except (OSError, KeyError, ValueError) as exc:
        raise CheckUnavailable(f"the focus check at {path} could not be read ({exc}); rebuild it with "
                               "`evidentia kb focus-check`") from None


def load_check(path: Path | None = None) -> FocusCheck | None:
    """The committed check (:data:`ARTEFACT` unless ``path``), loaded once; None, with one logged note, when it
    cannot be used (then no page is judged, as before the check)."""
    return _load(path or ARTEFACT)


@lru_cache(maxsize=4)
def _load(path: Path) -> FocusCheck | None:
    try:
        return read_artefact(path)
    except CheckUnavailable as exc:
        log.warning("cited pages are not checked against the question's focus: %s", exc)
        return None


def judged_focus(doc_id: str, title: str) -> str:
    """The focus a cited document is judged against ("" when its title names none: not judged)."""
    return page_focus(doc_id, title)
