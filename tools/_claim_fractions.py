"""Claims that state a fraction of a whole over a column of shares: "Poland generated more than half of its
electricity from coal" over a Coal share column of "61.0%".

Found as a new user: every program checked Poland's "61.0%" against 0.5, the fraction as a number, and the
claim went to the judge (168 s), whose reason quoted a 50 the table never states. On a column of percentages the
fraction is that many percent (half: 50), on a column of proportions (all between 0 and 1) the fraction itself.
:func:`read_stated_fraction` sets the check's value so, with the comparison the words before it set ("more than
half": >; "about half": = within a tenth of it; "the majority": >).

A fraction of another value ("half as many beds as East", "more than half of East's beds") is a multiple, read by
``tools._claim_multiples``; "of its / their / all / the / Poland's" marks a share of a whole, and only a check
against a value on a column of shares is read so (a check against another row is a multiple).
"""

from __future__ import annotations

import re

from tools._cells import TypedTable, cell_number, format_value, written_tolerance
from tools._claim_counts import names_column
from tools._claim_multiples import _BOUND
from tools._values import BOUND_OPS
from tools._grounding import column_named
from tools.lang.lexicon import ROUGH_WORDS, content_words, word_in
from tools._table_ops import selected_rows
from tools._table_ops_model import Check, Program, RowFilter
from tools._table_shape import total_rows

_FRACTIONS = {"half": 0.5, "a half": 0.5, "one half": 0.5, "a third": 1 / 3, "one third": 1 / 3,
              "two thirds": 2 / 3, "a quarter": 0.25, "one quarter": 0.25, "three quarters": 0.75,
              "a fifth": 0.2, "one fifth": 0.2, "a tenth": 0.1, "one tenth": 0.1,
              "the majority": 0.5, "a majority": 0.5}
STATED_FRACTION = re.compile(
    _BOUND + r"\b(?P<fraction>" + "|".join(sorted((re.escape(k) for k in _FRACTIONS), key=len, reverse=True))
    + r")\s+of\s+(?:its|their|his|her|the|all|[^\W\d_][\w.-]*['’]s)(?!\w)", re.I)
ROUGH_FRACTION_TOLERANCE = 0.1  # "about half": 45% to 55%
_PERCENT_HEADER = re.compile(r"%|\b(?:percent|percentage|per cent|share|proportion|fraction|rate|pct)\b", re.I)


def stated_fraction(claim: str) -> tuple[float, str, float] | None:
    """(fraction, op, relative tolerance) of a share of a whole the claim states, or None."""
    m = STATED_FRACTION.search(claim)
    if not m:
        return None
    phrase = m.group("fraction").lower()
    bound = (m.group("bound") or "").lower()
    if "majority" in phrase:
        return _FRACTIONS[phrase], ">", 0.0  # a majority is more than half
    op = BOUND_OPS.get(bound, "=")
    return _FRACTIONS[phrase], op, (ROUGH_FRACTION_TOLERANCE if op == "=" else 0.0)


def _scale(typed: TypedTable, ident: str) -> float | None:
    """100 for a column of percentages ("61.0%", or a header that says share or %), 1 for proportions (every
    number between 0 and 1), None for a column of anything else (counts, amounts: no fraction of a whole)."""
    try:
        col = typed.column(ident)
    except KeyError:
        return None
    xs = [x for x in col.numbers if x is not None]
    if not xs:
        return None
    cells = [v for v in typed.table.column_values(col.index) if cell_number(v) is not None]
    if sum(v.strip().endswith("%") for v in cells) * 2 > len(cells) or _PERCENT_HEADER.search(col.name):
        return 1.0 if all(0 <= x <= 1 for x in xs) and not any(v.strip().endswith("%") for v in cells) else 100.0
    return None


def read_stated_fraction(program: Program, typed: TypedTable, claim: str) -> Program:
    """A check of a share column against the fraction the claim states is against that fraction in the column's
    own scale (module docstring); any other program as written."""
    chk = program.check
    if chk is None or chk.against != "value" or program.fn not in ("value", "min", "max", "avg") or chk.factor:
        return program
    stated = stated_fraction(claim)
    scale = _scale(typed, program.column) if stated else None
    if stated is None or scale is None:
        return program
    written = cell_number(chk.value)
    fraction, op, tolerance = stated
    if written is not None and round(written, 6) not in {round(fraction, 6), round(fraction * 100, 6)}:
        return program  # the check compares with some other number the claim states
    return program.model_copy(update={"check": chk.model_copy(update={
        "op": op, "value": format_value(round(fraction * scale, 4)), "relative_tolerance": tolerance})})


# "St Mary has more than a third of all beds", "Kenya had 12% of the total deaths": a share of a column's total
_OF_TOTAL = re.compile(
    _BOUND + r"\b(?:(?P<fraction>" + "|".join(sorted((re.escape(k) for k in _FRACTIONS), key=len, reverse=True))
    + r")|(?P<percent>\d+(?:\.\d+)?)\s*(?:%|percent\b|per\s+cent\b))\s+of\s+(?:all\s+(?:the\s+)?|the\s+(?:total|"
    r"combined|overall)\s+(?:number\s+of\s+)?|the\s+)(?P<rest>[^.;,]{1,80})", re.I)


# Where the noun after "of all …" ends: "a majority of the people who score over par" is a share of the rows
_CLAUSE = re.compile(r"\b(?:who|that|which|whose|where|with|in|from|for|at|on|by|have|has|had|be|is|are|was|were|"
                     r"do|does|did|score|scored|get|got|make|made)\b", re.I)


def _names_the_amount(header: str, rest: str) -> bool:
    """Whether the noun phrase starting ``rest`` is the column ``header``'s amount: its last word is the header's
    (units in brackets aside). TabFact's "more than half of the away team have a score greater than 10" is about
    rows, though "away team" are words of the header "away team score"."""
    phrase = content_words(_CLAUSE.split(rest, maxsplit=1)[0])
    head = content_words(re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", header))
    return bool(phrase and head) and word_in(phrase[-1], [head[-1]]) and column_named(header, rest)


def read_share_of_total(program: Program, typed: TypedTable, claim: str) -> Program:
    """A value (or sum) of some rows of a column of amounts, checked against a number or another row, for a claim
    that states a fraction or percentage of all of that column: checked against that share of the column's total.

    Found as a new user: "St Mary accounts for more than a third of all beds" was supported by St Mary's 310 beds
    > 0.333, whatever the other clinics have; "Oakwood has more than a quarter of the total annual visits" by
    Oakwood's visits > Riverside's (5 of 5 programs). A column of shares (percentages, proportions) is
    :func:`read_stated_fraction`'s."""
    chk = program.check
    if chk is None or chk.against not in ("value", "row") or chk.factor \
            or program.fn not in ("value", "sum", "avg", "min", "max") or _scale(typed, program.column) is not None:
        return program
    try:
        col = typed.column(program.column)
    except KeyError:
        return program
    selected = selected_rows(program, typed)
    if selected is None or not col.numeric or (program.fn not in ("value", "sum") and len(selected) != 1):
        return program
    for m in _OF_TOTAL.finditer(claim):
        if not _names_the_amount(col.name, m.group("rest")):
            continue
        bound = (m.group("bound") or "").lower()
        op = BOUND_OPS.get(bound, "=")
        if m.group("percent"):
            fraction = float(m.group("percent")) / 100
            tolerance = written_tolerance(m.group("percent")) / float(m.group("percent") or 1) if op == "=" else 0.0
        else:
            phrase = m.group("fraction").lower()
            fraction = _FRACTIONS[phrase]
            op = ">" if "majority" in phrase else op
            tolerance = ROUGH_FRACTION_TOLERANCE if op == "=" else 0.0
        if bound in ROUGH_WORDS:
            tolerance = max(tolerance, ROUGH_FRACTION_TOLERANCE)
        # the model's own comparison (with another row, or a number of its choosing) is replaced, as the claim's
        # form settles it; over one row an average or an extreme is its value
        return program.model_copy(update={"fn": "sum", "check": Check(
            op=op, against="total", value=program.column, factor=fraction, relative_tolerance=tolerance)})
    return program


# "more than half of the hospitals are teaching hospitals": a share of the table's rows, named by their kind
_OF_THE_ROWS = re.compile(
    _BOUND + r"\b(?P<fraction>" + "|".join(sorted((re.escape(k) for k in _FRACTIONS), key=len, reverse=True))
    + r")\s+of\s+(?:all\s+)?(?:the\s+)?(?P<noun>[^\W\d_][\w-]*)", re.I)


# "most vaccines had an efficacy above 80%", "most of the hospitals …": more than half of the rows ("the most" is a
# superlative, and "most" after a verb or an article is not about rows)
_MOST_OF_THE_ROWS = re.compile(
    r"(?:^|[,;:]\s*)(?:but\s+|and\s+)?most\s+(?:of\s+(?:the\s+)?)?(?P<noun>[^\W\d_][\w-]*)", re.I)


def fraction_of_rows(claim: str, typed: TypedTable) -> tuple[float, str, float] | None:
    """(the number of rows the claim's fraction is, op, tolerance) when it states a fraction of the table's rows,
    named by the header of the column of row names ("half of the hospitals" over a Hospital column); else None.

    Found as a new user: "More than half of the hospitals are teaching hospitals" (3 of 6: false) was supported
    by a program comparing mean beds with half of another hospital's beds; "Most vaccines had an efficacy above
    80%" (3 of 6: false) was refuted by "the vaccine with the largest efficacy = 80", 1 of 5 programs."""
    label = typed.label_col
    if not label:
        return None
    n = typed.table.n_rows - len(total_rows(typed))
    for m in _MOST_OF_THE_ROWS.finditer(claim):
        if names_column(typed.columns[label - 1].name, m.group("noun").casefold()):
            return 0.5 * n, ">", 0.0
    for m in _OF_THE_ROWS.finditer(claim):
        if not names_column(typed.columns[label - 1].name, m.group("noun").casefold()):
            continue
        phrase, bound = m.group("fraction").lower(), (m.group("bound") or "").lower()
        op = ">" if "majority" in phrase else BOUND_OPS.get(bound, "=")
        return _FRACTIONS[phrase] * n, op, (ROUGH_FRACTION_TOLERANCE if op == "=" else 0.0)
    return None


def read_fraction_of_rows(program: Program, typed: TypedTable, claim: str) -> Program:
    """A count checked against the claim's share of the rows is checked against that many rows. An "every" whose
    condition is a number's bound is read as a count of the rows meeting it: "most vaccines had an efficacy above
    80%" written as "every one has Efficacy > 80" counts the vaccines with Efficacy > 80."""
    chk = program.check
    if chk is not None and program.fn == "every" and chk.against == "value" and chk.op in (">", ">=", "<", "<=") \
            and not chk.factor and not program.filters and fraction_of_rows(claim, typed) is not None:
        # (over every row only: a share of some rows is of those rows, not of the table's)
        condition = RowFilter(column=program.column, op=chk.op, value=chk.value)
        program = program.model_copy(update={"fn": "count", "filters": [condition],
                                             "check": Check(op="=", value="0")})
        chk = program.check
    stated = fraction_of_rows(claim, typed) if chk is not None and program.fn == "count" else None
    if stated is None or chk.against != "value":
        return program
    n, op, tolerance = stated
    return program.model_copy(update={"check": chk.model_copy(update={
        "op": op, "value": format_value(round(n, 4)), "relative_tolerance": tolerance, "factor": None})})


def fraction_of_rows_blocker(program: Program, typed: TypedTable, claim: str) -> str:
    """Why a program other than a count of some rows must not vote on a claim about a share of the rows, or
    ``""``. A count of every row checks none of the claim's condition: found as a new user, "more than half of
    the counties have coverage above 75%" was supported by "the number of rows > 2.5" (5 of 5 counties)."""
    if fraction_of_rows(claim, typed) is None:
        return ""
    if program.fn != "count":
        return "the claim states a share of the table's rows, which only a count of them checks"
    if not program.filters:
        return "it counts every row, so it checks nothing of the claim's condition on them"
    return ""
