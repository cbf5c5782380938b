"""A choice between two comparing words, settled by comparing the computed value with the number the question
states: "Was DORADO's efficacy more or less than 85%?" is "more" when the programs compute 88.1.

The programs answer such a question with the value (88.1), which matches neither "more" nor "less", so the
model's own reading used to choose; the comparison is code's. Only words whose direction the number settles
are read ("more/less", "higher/lower", "above/below", …); "older or younger", "better or worse", "before or after"
depend on what the column measures and are left to the model.

Higher and above mean a smaller number for ranks and places: "in 1996/97 was the place above or below 10th?" is
"below" for 12th. That is read from an ordinal number ("10th") or a rank column's header.
"""

from __future__ import annotations

import re

from tools._cells import cell_number
from tools.lang.lexicon import RANK_HEADER

_UP = frozenset({"more", "higher", "larger", "bigger", "greater", "longer", "taller", "heavier", "faster", "above",
                 "over"})
_DOWN = frozenset({"less", "fewer", "lower", "smaller", "shorter", "lighter", "slower", "below", "under"})
# On a rank or a place, these words mean the better place: the smaller number.
_RANKED = frozenset({"higher", "lower", "above", "below"})
_NUMBER = r"(-?\d[\d,]*(?:\.\d+)?)(\s*%|st|nd|rd|th)?"
_ORDINAL = ("st", "nd", "rd", "th")
_YEAR = re.compile(r"1[89]\d\d|20\d\d")


_PAIR = re.compile(r"\b([^\W\d_]+)\s+or\s+([^\W\d_]+)\b", re.I)


def compares_with_number(question: str) -> bool:
    """Whether the question offers two comparing words and states the number to compare with ("more or less than
    85%?"): then the value of the row it asks about is what decides, not a difference between rows."""
    for found in _PAIR.finditer(question):
        words = [found.group(1).casefold(), found.group(2).casefold()]
        if {words[0], words[1]} & _UP and {words[0], words[1]} & _DOWN and _stated(question, words) is not None:
            return True
    return False


def comparing_option(question: str, options: list[str], computed: str, header: str = "") -> tuple[int, str] | None:
    """The 1-based option the comparison settles and the sentence that says why, or None.

    ``computed``: the programs' answer (one number); ``header``: the column it was read from ("" if unknown).
    """
    if len(options) != 2:
        return None
    words = [o.casefold() for o in options]
    if not (({words[0], words[1]} & _UP) and ({words[0], words[1]} & _DOWN)):
        return None
    value = _number(computed)
    found = _stated(question, words)
    if value is None or found is None:
        return None
    stated, after = found
    bound = _number(stated.group(1))
    if bound is None or bound == value:
        return None
    ranked = (stated.group(2) or "").strip().casefold() in _ORDINAL or bool(RANK_HEADER.search(header))
    # The subject is the computed value when the number follows the words ("efficacy more or less than 85%"), the
    # stated number when it precedes them ("is 159 above or below the laps Bell completed?").
    subject, other = (value, bound) if after else (bound, value)
    stated_text = stated.group(1) + (stated.group(2) or "").strip()
    for i, word in enumerate(words):
        up = word in _UP
        if word in _RANKED and ranked:
            up = not up
        if (subject > other) == up:
            first, second = (computed.strip(), stated_text) if after else (stated_text, computed.strip())
            than = "" if word in ("above", "below", "over", "under") else " than"
            return i + 1, f"{first} is {options[i]}{than} {second}."
    return None


def _stated(question: str, words: list[str]) -> tuple[re.Match, bool] | None:
    """The number the question compares with, and whether it follows the words (else it opens the question)."""
    pair = rf"\b{re.escape(words[0])}\s+or\s+{re.escape(words[1])}\b"
    after = re.search(pair + r"\s+(?:than\s+)?(?:the\s+)?" + _NUMBER + r"(?![\w.])", question, re.I)
    # Stated first, the number is the subject only where the question opens with it ("is 159 above or below …");
    # "the percentage in 1960 more or less than …" names a row by its number.
    before = re.search(r"^\s*(?:is|was|are|were)\s+" + _NUMBER + r"\s+" + pair, question, re.I)
    if (after is None) == (before is None):
        return None
    stated = after or before
    if _YEAR.fullmatch(stated.group(1)) and not stated.group(2):
        return None  # "was 2008's score above or below 2013?": a year names a row, it is not the bound
    return stated, after is not None


def _number(text: str) -> float | None:
    """A number, or an ordinal's ("12th")."""
    text = text.strip()
    if (ordinal := re.fullmatch(r"(\d+)(?:st|nd|rd|th)", text, re.I)) is not None:
        return float(ordinal.group(1))
    return cell_number(text)
