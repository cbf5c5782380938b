"""The reading of a message: what it states, parsed once and shared by every rule that reads it.

Before, each rule re-tokenised the raw claim with its own pattern: the stated-bound rule found "more than 400",
the rough-value rule "roughly 30,000", the negation rule "did not", each over the whole string again, and two rules
could read the same number differently. :func:`read` parses a message once (cached by its text, so each rule
that asks gets the same :class:`Reading`) into typed parts:

- :class:`StatedNumber`: each number as written, its value, the bound the words before it set ("more than 400"
  -> ">"), whether those words make it rough ("about 5%"), and its value at a magnitude word ("30 thousand");
- :class:`Superlative`: each word that asks for an extreme, which way, and at which place ("second-highest");
- :class:`MainNegation`: a plain negation of the main verb, and the claim without it.

The words come from :mod:`tools.lang.lexicon`; this module holds how they combine with numbers and clauses. It
reads no table: what a message says about a table's rows and columns is the grounding's (``tools._grounding``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from tools.lang.lexicon import (BOUND_WORDS, CARDINALS, MAX_WORDS, MIN_WORDS, ORDINAL_WORDS, ROUGH_NUMBER_PATTERN,
                                SCALE_WORDS, SUPERLATIVES, extreme_words)

_NUMBER = r"[−-]?\d[\d,]*(?:\.\d+)?"
_NUMBER_WORDS = {w: n for w, n in CARDINALS.items() if n >= 1}  # "one" to "twelve" (after a bound only)
# The longest phrase first, so "no more than" is not read as "more than"; a number (or a number word) right after,
# and not the start of a span: "over 2019 to 2022", "under 18-65" bound nothing.
_BOUNDED = re.compile(
    r"\b(?P<bound>" + "|".join(re.escape(b) for b in sorted(BOUND_WORDS, key=len, reverse=True)) + r")\s+"
    r"(?P<number>" + _NUMBER + "|" + "|".join(_NUMBER_WORDS) + r")\b"
    r"(?!\s*(?:to|through|until|till|and|[-–])\s*\d)", re.I)
_ROUGH = re.compile(r"\b(?:" + ROUGH_NUMBER_PATTERN + r")\s+(?P<number>" + _NUMBER + r")\s*(?P<scale>"
                    r"thousand|million|billion|k\b|bn\b)?", re.I)
# not inside a word or a name ("COVID-19", "v2.1", "H5N1"); a multiple's "x" may follow ("4.93x faster")
_PLAIN = re.compile(r"(?<![\w.])(?<![^\W\d_]-)(?P<number>" + _NUMBER + r")(?:[x×](?!\w)|(?!\w|\.\d))"
                    r"(?P<percent>\s*%)?")

# A plain negation of the main verb (tools._claim_text reads the claim without it and turns the verdict round).
_AUX = r"did|does|do|is|was|are|were|has|have|had"
_NEGATION = re.compile(rf"\b(?P<aux>{_AUX})\s+not\b|\b(?P<short>{_AUX})n['’]t\b", re.I)
_OTHER_NEGATIVE = re.compile(r"\b(?:no|none|never|neither|nor|without|nothing|nobody|only|cannot|can['’]t|won['’]t|"
                             r"couldn['’]t|wouldn['’]t|shouldn['’]t|not)\b", re.I)
# ("than", "as" and "since" open no clause of their own here: "X did not have more cases than Y" is turned round
# whole, as is "resistance has not fallen since 2019")
_CLAUSE = re.compile(r"\b(?:that|which|who|whom|whose|because|but|while|although|though|if|unless|when|whereas|"
                     r"and|or)\b", re.I)
# a quotation (a title: "I Don't Like Mondays"): double quotes, or a single quote that opens a word
_QUOTES = re.compile(r"[\"“”]|(?:^|\s)['‘’]")
MAX_SUBJECT_WORDS = 8


def _number_value(written: str) -> float | None:
    word = written.lower()
    if word in _NUMBER_WORDS:
        return _NUMBER_WORDS[word]
    try:
        return float(written.replace(",", "").replace("−", "-"))
    except ValueError:
        return None


@dataclass(frozen=True)
class StatedNumber:
    """A number the message writes, where (``start``, ``end``: the digits or number word), and how it is stated."""

    text: str
    value: float
    start: int
    end: int
    percent: bool = False
    bound: str | None = None  # the comparison the words before it set: ">", ">=", "<", "<="
    rough: bool = False  # "about", "roughly", "nearly", ... right before it
    scaled: float | None = None  # its value at a magnitude word after it ("30 thousand" -> 30000)


@dataclass(frozen=True)
class Superlative:
    """A word that asks for an extreme: ``sense`` "max" or "min" ("" for one whose sense depends on the column:
    "best", "oldest", "top"), at ``place`` (2 for "second-highest")."""

    word: str
    sense: str
    place: int = 1


@dataclass(frozen=True)
class MainNegation:
    """A plain negation of the main verb ("did not", "wasn't") and the message without it."""

    text: str  # as written: "did not"
    start: int
    end: int
    positive: str  # the message without the negation: "Yemen did have the most deaths."


@dataclass(frozen=True)
class Reading:
    """What a message states, parsed once (:func:`read`)."""

    text: str
    numbers: tuple[StatedNumber, ...]
    superlatives: tuple[Superlative, ...]
    negation: MainNegation | None

    def bounds(self) -> dict[float, str]:
        """number -> the comparison the words before it set, for each number the message bounds one way only."""
        seen: dict[float, set[str]] = {}
        for n in self.numbers:
            if n.bound:
                seen.setdefault(round(n.value, 6), set()).add(n.bound)
        return {value: next(iter(ops)) for value, ops in seen.items() if len(ops) == 1}

    def rough_values(self) -> set[float]:
        """The numbers written as rough, as written and at their magnitude word ("about 30 thousand": 30, 30000)."""
        out = set()
        for n in self.numbers:
            if n.rough:
                out.add(round(n.value, 6))
                if n.scaled is not None:
                    out.add(round(n.scaled, 6))
        return out


def _numbers(text: str) -> tuple[StatedNumber, ...]:
    found: dict[int, dict] = {}
    for m in _PLAIN.finditer(text):
        value = _number_value(m.group("number"))
        if value is not None:
            found[m.start("number")] = {"text": m.group("number"), "value": value, "start": m.start("number"),
                                        "end": m.end("number"), "percent": bool(m.group("percent"))}
    for m in _BOUNDED.finditer(text):
        value = _number_value(m.group("number"))
        if value is not None:
            entry = found.setdefault(m.start("number"), {"text": m.group("number"), "value": value,
                                                         "start": m.start("number"), "end": m.end("number")})
            entry["bound"] = BOUND_WORDS[" ".join(m.group("bound").lower().split())]
    for m in _ROUGH.finditer(text):
        entry = found.get(m.start("number"))
        if entry is None:
            continue
        entry["rough"] = True
        if m.group("scale"):
            entry["scaled"] = entry["value"] * SCALE_WORDS[m.group("scale").lower()]
    return tuple(StatedNumber(**found[k]) for k in sorted(found))


def _superlatives(text: str) -> tuple[Superlative, ...]:
    kept = extreme_words(text)  # "most"/"least" only as "the most", "the second most"
    out = []
    for m in re.finditer(r"[a-z0-9][a-z0-9-]*", text.lower()):
        word = m.group(0)
        first, _, rest = word.partition("-")
        place = 1
        if first in ORDINAL_WORDS and rest in SUPERLATIVES:  # "second-highest"
            place, word = ORDINAL_WORDS[first], rest
        elif first in SUPERLATIVES and rest:  # "lowest-calorie", "best-selling"
            word = first
        if word not in SUPERLATIVES or (word in ("most", "least") and word not in kept):
            continue
        if place == 1:
            before = text.lower()[:m.start()].split()
            if before and before[-1] in ORDINAL_WORDS:  # "the second highest"
                place = ORDINAL_WORDS[before[-1]]
        sense = "max" if word in MAX_WORDS else "min" if word in MIN_WORDS else ""
        out.append(Superlative(word, sense, place))
    return tuple(out)


def _main_negation(text: str) -> MainNegation | None:
    found = list(_NEGATION.finditer(text))
    if len(found) != 1:
        return None
    m = found[0]
    before, after = text[:m.start()], text[m.end():]
    if _OTHER_NEGATIVE.search(before) or _OTHER_NEGATIVE.search(after) or _CLAUSE.search(before) \
            or _CLAUSE.search(after) or len(before.split()) > MAX_SUBJECT_WORDS or not before.strip():
        return None
    if _QUOTES.search(text):
        return None
    aux = m.group("aux") or m.group("short")
    return MainNegation(m.group(0), m.start(), m.end(), " ".join((before + aux + after).split()))


@lru_cache(maxsize=512)
def read(text: str) -> Reading:
    """The reading of ``text`` (module docstring); parsed once per text, the same object for every reader."""
    return Reading(text=text, numbers=_numbers(text), superlatives=_superlatives(text),
                   negation=_main_negation(text))
