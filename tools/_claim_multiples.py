"""Claims that state a multiple of another value: "South has twice as many general beds as East".

The grammar's checks compare with a value or with another row's (or column's) value; a claim that states a
multiple ("twice", "3 times more", "half as many", "five-fold fewer") compares with that multiple of it. Code reads
the multiple from the claim's words and sets it on the check (:func:`read_multiplier`), with the comparison the
words before it set ("more than twice": >; "twice": = within 5%; "nearly twice": = within 15%), and keeps a check
against the multiple itself out of the vote (:func:`multiple_blocker`: "twice as many" checked as a count = 2).
A stated difference in percent ("about 20% higher than February") scales the other value by 1.2, within the
precision it is written with (half a point, or 2.5 points for "about"). All were found as a new user.
"""

from __future__ import annotations

import re

from tools._cells import cell_number
from tools._table_ops_model import MIRRORED_OPS, Program
from tools._values import BOUND_OPS
from tools.lang.lexicon import ROUGH_PATTERN

_MULTIPLE_WORDS = {"twice": 2.0, "double": 2.0, "thrice": 3.0, "triple": 3.0, "quadruple": 4.0, "half": 0.5,
                   "two": 2.0, "three": 3.0, "four": 4.0, "five": 5.0, "six": 6.0, "seven": 7.0, "eight": 8.0,
                   "nine": 9.0, "ten": 10.0}
# The words before a multiple or a percentage that bound it ("more than twice", "about 20% higher").
_BOUND = (r"(?:\b(?P<bound>more than|over|above|at least|less than|under|below|at most|" + ROUGH_PATTERN
          + r")\s+)?")
# "twice as many", "double the", "3 times more", "three-fold higher", "half as many", "five times fewer": a multiple
# of the other value, with the bound the words before it set ("more than twice", "at least three times").
_MULTIPLIER = re.compile(
    _BOUND +
    r"\b(?:(?P<word>twice|double|thrice|triple|quadruple|half)|(?P<n>\d+(?:\.\d+)?|two|three|four|five|six|seven|"
    r"eight|nine|ten)[- ]?(?:times|fold|x))\b"
    r"(?=\s+(?:as|the|that|of|what|its|their|(?P<down>less|lower|smaller|fewer)|more|higher|larger|greater|"
    r"bigger)\b|\s+[^\W\d_][\w.-]*['’]s\b)", re.I)  # or a possessive: "three times Spain's"
# "the first half of 2020" is a period, not a multiple
_HALF_OF_A_PERIOD = re.compile(r"\b(?:first|second|last|the|latter|former|other|back)\s+$", re.I)
EXACT_MULTIPLE_TOLERANCE = 0.05  # "twice as many": within 5% of twice the other value
ROUGH_MULTIPLE_TOLERANCE = 0.15  # "nearly/about twice": within 15%


# "about 20% higher than", "15 percent fewer than": the other value scaled by 1 ± the percentage.
_PERCENT_DIFFERENCE = re.compile(
    _BOUND +
    r"(?P<pct>\d+(?:\.\d+)?)\s*(?:%|percent\b|per cent\b)\s*"
    r"(?:(?P<up>higher|more|larger|greater|bigger|above)|(?P<down>lower|less|smaller|fewer|below))\s+than\b", re.I)
ROUGH_PERCENT_POINTS = 2.5  # "about 20% higher": 17.5% to 22.5% higher


def _percent_difference(claim: str) -> tuple[float, str, float] | None:
    """(factor, op, relative tolerance) for "about 20% higher than", or None."""
    m = _PERCENT_DIFFERENCE.search(claim)
    if not m:
        return None
    pct = float(m.group("pct"))
    factor = 1 + pct / 100 if m.group("up") else 1 - pct / 100
    if factor <= 0:
        return None
    bound = (m.group("bound") or "").lower()
    op = BOUND_OPS.get(bound, "=")
    decimals = len(m.group("pct").partition(".")[2])
    points = ROUGH_PERCENT_POINTS if bound and op == "=" else 0.5 * 10 ** -decimals  # "20%" is 19.5% to 20.5%
    if m.group("up") is None and op in (">", ">=", "<", "<="):
        # "more than 20% lower than" is below 0.8 times the other value
        op = MIRRORED_OPS[op]
    return factor, op, (points / 100) / factor if op == "=" else 0.0


def _first_multiplier(claim: str) -> re.Match | None:
    return next((m for m in _MULTIPLIER.finditer(claim)
                 if (m.group("word") or "").lower() != "half" or not _HALF_OF_A_PERIOD.search(claim[:m.start()])),
                None)


def _multiple(m: re.Match) -> float:
    """The number the claim writes ("twice" and "2 times": 2)."""
    n = m.group("word") or m.group("n")
    return _MULTIPLE_WORDS.get(n.lower()) or float(n)


def _factor(m: re.Match) -> float:
    """The factor the other value is scaled by: the multiple, or its inverse for "five times fewer"."""
    n = _multiple(m)
    return 1.0 / n if m.group("down") and not m.group("word") else n


def read_multiplier(program: Program, claim: str) -> Program:
    """"South has twice as many general beds as East" compares South's value with twice East's.

    Found as a new user: the program checked South's beds against East's (6,034 = 2,118), a check the claim never
    states, and its reason said "the claim needs it = East's General beds". A check against another row or
    column of a claim that states a multiple takes that multiple, and the comparison the claim's words set ("more
    than twice": >; "twice": = within 5%; "nearly twice": = within 15%).
    """
    chk = program.check
    if chk is None or chk.against not in ("row", "column") or chk.factor:
        return program
    scale = stated_scale(claim)
    if scale is None:
        return program
    factor, op, tolerance = scale
    return program.model_copy(update={"check": chk.model_copy(update={
        "op": op, "factor": factor, "relative_tolerance": tolerance})})


def stated_scale(claim: str) -> tuple[float, str, float] | None:
    """(factor, op, relative tolerance) of the multiple the claim states, else of its difference in percent."""
    m = _first_multiplier(claim)
    if m is None:
        return _percent_difference(claim)
    factor = _factor(m)
    if factor <= 0 or factor == 1.0:
        return None
    bound = (m.group("bound") or "").lower()
    op = BOUND_OPS.get(bound, "=")
    tolerance = ROUGH_MULTIPLE_TOLERANCE if bound and op == "=" else EXACT_MULTIPLE_TOLERANCE
    return factor, op, tolerance if op == "=" else 0.0


# A column that holds multiples already: "Relative risk", "Odds ratio", "HR (95% CI)", "Fold change". Its
# value compared with the claim's multiple is the claim's own check ("seven times as common": RR > 7).
_RATIO_HEADER = re.compile(r"\b(?:ratio|relative risk|fold(?:[- ]change)?)\b", re.I)
_RATIO_ABBREVIATION = re.compile(r"\b(?:a?RR|a?OR|a?HR|IRR|FC)\b")  # as headers write them, in capitals
_MULTIPLE_READERS = ("value", "max", "min", "avg", "sum")  # what reads the column's values (not a count of rows)


def is_ratio_column(header: str) -> bool:
    """Whether ``header`` names a column of ratios or multiples."""
    return bool(_RATIO_HEADER.search(header) or _RATIO_ABBREVIATION.search(header))


def reads_ratio_column(program: Program, header: str) -> bool:
    """Whether ``program`` computes from the values of a ratio column as the table writes them."""
    return (program.fn in _MULTIPLE_READERS and not program.per_column and not program.minus_column
            and is_ratio_column(header))


def read_ratio_multiple(program: Program, header: str, claim: str) -> Program:
    """"Fever was more than seven times as common with the vaccine" checked as Relative risk > 7.

    Found as a new user over an adverse-events table with a "Relative risk" column: the one program that read it
    (7.3 > 7) was kept out of the vote as a check against the claim's multiple, and the model's fallback refuted
    the claim. A check of a ratio column against the multiple the claim states takes the comparison the claim's
    words set, as :func:`read_multiplier` does for another row ("seven times": = within 5%; "nearly": 15%).
    """
    chk = program.check
    m = _first_multiplier(claim)
    if chk is None or chk.against != "value" or m is None or not reads_ratio_column(program, header):
        return program
    said = cell_number(chk.value)
    if said is None or round(said, 6) != round(_factor(m), 6):
        return program
    bound = (m.group("bound") or "").lower()
    op = BOUND_OPS.get(bound, "=")
    tolerance = (ROUGH_MULTIPLE_TOLERANCE if bound else EXACT_MULTIPLE_TOLERANCE) if op == "=" else 0.0
    return program.model_copy(update={"check": chk.model_copy(update={"op": op, "relative_tolerance": tolerance})})


def multiple_blocker(program: Program, claim: str, header: str = "") -> str:
    """Why a check against the claim's multiple itself must not vote, or ``""``.

    Seen with the real model: "South has twice as many general beds as East" written as "the number of rows where
    Region = South = 2". The "2" is a multiple of another value, not a value of the table; such a check decides
    nothing, whichever way it comes out. Unless the program reads a column of ratios (``header``, the computed
    column's), whose values are multiples themselves.
    """
    chk = program.check
    if chk is None or chk.against != "value" or reads_ratio_column(program, header):
        return ""
    m = _first_multiplier(claim)
    if m is None:
        percent = _PERCENT_DIFFERENCE.search(claim)
        said = cell_number(chk.value)
        if percent and said is not None and round(said, 6) == round(float(percent.group("pct")), 6):
            return (f"the check compares with {chk.value!r}, the claim's difference in percent "
                    f"(“{percent.group(0).strip()}”), not a table value")
        return ""
    said = cell_number(chk.value)
    if said is None or round(said, 6) not in {round(_factor(m), 6), round(_multiple(m), 6)}:
        return ""
    return f"the check compares with {chk.value!r}, the claim's multiple (“{m.group(0).strip()}”), not a table value"
