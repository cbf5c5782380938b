"""What kind of answer a table question asks for, read from its form: a number, a name, or either; and
whether it asks for the first or the last of several rows.

"How many …?" asks for a number and "Which team …?" / "Who …?" for a name: the question's opening words
settle it, so code decides and the model is not asked. The table programs use it two ways
(``tools._table_program``): a program whose result is of the wrong kind does not vote while one of the right
kind ran, and "max of points" written with the answer column "team" for a which-question is read as the team
of the row with the most points (what the answer column says the model meant).

"What is the last design code on this chart?" asks for one row, in the table's order: a program that lists the
codes of several rows answers with the last of them (:func:`position_asked`).

Questions whose form does not settle it ("What was the score …?", "Which year …?") get ``None``: every
program votes as before.
"""

from __future__ import annotations

import re
from typing import Literal

from tools._cells import cell_number

AnswerKind = Literal["number", "name"]

_LEAD = r"^\s*(?:(?:in|on|at|for|from|of|during|to|by|with|after|before|other than [^,]+,)\s+)?"
_NUMBER = re.compile(
    _LEAD + r"(?:how (?:many|much|long|old|tall|far|high|big|large|often|heavy|wide|deep)\b"
    r"|(?:what|which)(?:'s| is| was| were| are)? the (?:total|number|sum|average|mean|difference|amount|count)\b"
    r"|(?:the )?total (?:number|amount|count)\b|number of\b)", re.I)
# Nouns after which/what that ask for a number, a date or a rank rather than a name.
_NOT_NAMES = ("year", "years", "season", "seasons", "date", "dates", "day", "days", "month", "months", "week", "weeks",
              "time", "times", "number", "numbers", "amount", "total", "score", "scores", "rank", "ranking", "round",
              "rounds", "age", "place", "position", "percentage", "percent", "count", "decade", "century", "is",
              "was", "were", "are", "did", "does", "do", "has", "had", "of", "the", "a", "an", "kind", "type")
_NOT_NAME = r"(?!(?:" + "|".join(_NOT_NAMES) + r")\b)[a-z]+"
# "Which of them …?", "Which of the studies …?" ask for rows by name too (found as a new user: "Which of the studies
# was published most recently?" voted for the date over the study's name).
_WHICH_OF = r"which\s+(?:one\s+)?of\s+(?:them|(?:the|these|those)\s+" + _NOT_NAME + ")"
# "Which was the first Alzheimer drug to be approved?": a row picked by its place in an order, by name.
_WHICH_WAS_FIRST = (r"which\s+(?:is|was|are|were)\s+the\s+(?:first|last|earliest|latest|oldest|newest)\s+"
                    + _NOT_NAME)
_NAME = re.compile(_LEAD + r"(?:who|whom|whose|" + _WHICH_OF + "|" + _WHICH_WAS_FIRST
                   + r"|(?:which|what|name (?:a|an|the|one|all|each))\s+" + _NOT_NAME + ")", re.I)


def expected_answer(question: str) -> AnswerKind | None:
    """``number`` for "how many/how much/what is the total …", ``name`` for "who/which <noun>", else None."""
    if _NUMBER.match(question):
        return "number"
    if _NAME.match(question):
        return "name"
    return None


def is_number(answer: str) -> bool:
    """Every part of a (comma-joined) answer reads as a number: '12', '4,512', '3.5%'."""
    parts = [p for p in re.split(r",\s+", answer.strip()) if p]
    return bool(parts) and all(cell_number(p) is not None for p in parts)


def fits(answer: str, expected: AnswerKind | None) -> bool:
    """Whether ``answer`` is the kind the question asks for (anything fits when the form does not say)."""
    if expected is None or not answer.strip():
        return True
    if expected == "number":
        return cell_number(answer.strip()) is not None or re.match(r"^\s*[-−]?\d", answer) is not None
    return not is_number(answer)


_FIRST, _LAST = re.compile(r"\bfirst\b", re.I), re.compile(r"\blast\b", re.I)
# "the first three games", "the last 2 seasons": several rows are asked for, so no one row is the answer.
_SEVERAL = re.compile(r"\b(?:first|last)\s+(?:\d+|two|three|four|five|six|seven|eight|nine|ten|few|several)\b",
                      re.I)


def position_asked(question: str) -> Literal["first", "last"] | None:
    """``first`` or ``last`` when the question asks for exactly one of them ("the last album released …")."""
    first, last = bool(_FIRST.search(question)), bool(_LAST.search(question))
    if first == last or _SEVERAL.search(question):
        return None
    return "first" if first else "last"


_YES_NO = re.compile(r"^\s*(?:is|was|are|were|did|does|do|has|have|had|can|could|will|would)\b", re.I)
_ALTERNATIVE = re.compile(r"\bor\b", re.I)


def yes_no_asked(question: str) -> bool:
    """A question answered yes or no ("Was X nominated in 2008?"), not a choice ("Did Sweden or Spain win?")."""
    return bool(_YES_NO.match(question)) and not _ALTERNATIVE.search(question.replace("yes or no", ""))

