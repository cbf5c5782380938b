"""Kernels for UCRET column filtering: tokens, Jaccard overlap, softmax and Jensen–Shannon distance.

Kept free of models and I/O so they can be tested against hand-worked values.
"""

from __future__ import annotations

import re

import numpy as np

from kb.tables import _MARKUP, parse_number

STOPWORDS = frozenset("""
a an the of in on at to for from by with and or but not no nor is are was were be been being am do does did
has have had this that these those it its as than then there their they them he she his her we our you your
i me my which who whom what when where why how all any both each more most other some such only own same so
too very can will just should would could may might must also into over under about between through during
before after above below up down out off again further once here s t
""".split())

_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+", re.UNICODE)


def tokens(text: str) -> set[str]:
    """Normalised content tokens: lower-cased words and numbers, no stopwords, no markup.

    Numbers lose thousands separators and trailing zeros (``"1,234.50"`` -> ``"1234.5"``) so the
    claim's "1234.5" meets the cell's "1,234.50".
    """
    out = set()
    for tok in _TOKEN.findall(_MARKUP.sub(" ", text).lower()):
        if tok[0].isdigit():
            out.add(normalise_number_token(tok))
        elif tok not in STOPWORDS:
            out.add(tok)
    return out


def normalise_number_token(tok: str) -> str:
    if "," in tok and re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", tok):
        tok = tok.replace(",", "")
    if "." in tok:
        tok = tok.rstrip("0").rstrip(".") or "0"
    return tok


def jaccard(a: set[str], b: set[str]) -> float:
    """``|a ∩ b| / |a ∪ b|``; 0 for two empty sets."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def softmax(x: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """Row-wise softmax of ``x`` (..., d) / temperature."""
    z = np.asarray(x, dtype=np.float64) / temperature
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def js_distance(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Jensen–Shannon distance (square root of the base-2 divergence, in [0, 1]).

    Parameters
    ----------
    p : array (..., d)
        Probability vectors.
    q : array (..., d) or (d,)
        Probability vectors, broadcast against ``p``.

    Returns
    -------
    array (...)
        The distances.
    """
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    m = 0.5 * (p + q)

    def kl(a, b):
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(a > 0, a * np.log2(a / b), 0.0)
        return terms.sum(axis=-1)

    div = 0.5 * kl(p, m) + 0.5 * kl(q, m)
    return np.sqrt(np.clip(div, 0.0, 1.0))


def claim_numbers(claim: str) -> list[float]:
    """Numbers mentioned in a claim (years, counts, percentages…)."""
    out = []
    for tok in re.findall(r"[-−]?\d[\d,]*(?:\.\d+)?%?", claim):
        value = parse_number(tok)
        if value is not None:
            out.append(value)
    return out


def number_matches(value: float, wanted: float) -> bool:
    """A cell value equals a claimed number, allowing the claim's rounding (0.93 vs 0.9312)."""
    if value == wanted:
        return True
    text = repr(abs(wanted))
    decimals = len(text.split(".")[1]) if "." in text and not text.endswith(".0") else 0
    return round(value, decimals) == round(wanted, decimals) or round(abs(value), decimals) == round(abs(wanted), decimals)
