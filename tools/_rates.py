"""A rate the message names over a column of counts: "Which trial had the highest completion rate?".

Found as a new user, over a trials table with Enrolled and Completed counts: all five programs took the trial
with the most completed participants (EPS-5, 2,480 of 3,050: 81%), not the highest rate (DELTA-4, 95%). A rate of
a count is that count over the population it is part of. When the word before "rate" names the column the
program reads ("completion" and Completed), and that column holds counts, :func:`read_rate` divides it by the
column that holds its population: the numeric column at least as large in every row, and at least as large as
every other such column (Enrolled, not Completed, for serious adverse events). No such column: no rate is read.

A share written out is read the same way: "Which outbreak had the highest share of cases hospitalized?" took the
most hospitalized (260 of 1,040), not the highest share (31 of 36; found as a new user). The phrase after "share /
proportion / percentage of" must name one count column that is at least the measure in every row.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable
from tools._grounding import column_named
from tools._table_ops_model import RATIO_FNS, Program
from tools.lang.lexicon import RANK_HEADER

_RATE = re.compile(r"\b([^\W\d_][\w-]*)\s+(?:rate|rates|ratio)\b", re.I)
# "the highest share of cases hospitalized", "the lowest proportion of its participants": the population follows.
_SHARE_OF = re.compile(r"\b(?:share|proportion|fraction|percentage|percent)\s+of\s+(?:the\s+|its\s+|their\s+|all\s+)?"
                       r"([^\W\d_][\w\s-]{0,40}?)\s*(?=[?.,;]|\b(?:in|among|across|at|on|during|than|and|or|was|were|"
                       r"is|are|who|that|with)\b|$)", re.I)
# A rate named by what it counts in other words: "the case fatality rate" is deaths per case, "mortality" deaths
# (found as a new user: "What was the case fatality rate of diphtheria in Nigeria?" answered 596, the deaths)
_RATE_OF = {"fatality": "deaths", "mortality": "deaths", "hospitalization": "hospitalized",
            "hospitalisation": "hospitalised", "admission": "admitted", "admissions": "admitted"}
_ALREADY_A_RATE = re.compile(r"%|\b(?:rate|ratio|per|percent|percentage|share|proportion|fraction)\b|/", re.I)


def _holds_counts(typed: TypedTable, c: int) -> bool:
    col = typed.columns[c - 1]
    xs = [x for x in col.numbers if x is not None]
    return bool(xs) and not col.holds_years and not RANK_HEADER.search(col.name) \
        and not _ALREADY_A_RATE.search(col.name) and all(x >= 0 for x in xs) \
        and not any(v.strip().endswith("%") for v in typed.table.column_values(c))


def _at_least(typed: TypedTable, big: int, small: int) -> bool:
    """Whether column ``big`` is at least column ``small`` in every row that has both (most rows do)."""
    pairs = [(typed.columns[big - 1].numbers[r], typed.columns[small - 1].numbers[r])
             for r in range(typed.table.n_rows)]
    pairs = [(b, s) for b, s in pairs if b is not None and s is not None]
    return bool(pairs) and len(pairs) * 2 > typed.table.n_rows and all(b >= s for b, s in pairs)


def population(typed: TypedTable, c: int) -> int | None:
    """The column that holds column ``c``'s population (module docstring), or None."""
    bigger = [col.index for col in typed.columns
              if col.index != c and col.numeric and _holds_counts(typed, col.index) and _at_least(typed, col.index, c)]
    whole = [b for b in bigger if all(b == o or _at_least(typed, b, o) for o in bigger)]
    return whole[0] if len(whole) == 1 else None


def _share_of(typed: TypedTable, c: int, message: str) -> int | None:
    """The population a "share of <population>" phrase names for the counts in column ``c``, or None."""
    for m in _SHARE_OF.finditer(message):
        named = [col.index for col in typed.columns
                 if col.index != c and col.numeric and _holds_counts(typed, col.index)
                 and column_named(col.name, m.group(1)) and _at_least(typed, col.index, c)]
        if len(named) == 1:
            return named[0]
    return None


_CASE_FATALITY = re.compile(r"\bcase[- ]fatality\b", re.I)


def _cases_of(typed: TypedTable, c: int, message: str) -> int | None:
    """For "the case fatality rate", the column of cases that bounds column ``c``: deaths per case, not per head
    of a population column beside it; None for any other message."""
    if not _CASE_FATALITY.search(message):
        return None
    cases = [col.index for col in typed.columns if col.index != c and col.numeric and _holds_counts(typed, col.index)
             and column_named(col.name, "cases") and _at_least(typed, col.index, c)]
    return cases[0] if len(cases) == 1 else None


_ONE_ROW_READS = ("value", "avg", "sum", "min", "max")


def read_rate(program: Program, typed: TypedTable, message: str, *, one_row: bool = False) -> Program:
    """The program's extreme over a count the message calls a rate runs over that count per its population
    (module docstring); any other program as written.

    ``one_row`` (questions): a value read from the one row a filter names is that row's rate, as the largest over
    that row ("What was the event rate in the placebo arm?" answered 61, the events; found as a new user over a
    trial's arms). Not for claims: a claim's check states the rate in its own form ("14.8%")."""
    label = typed.columns[typed.label_col - 1].ident if typed.label_col else None
    # "rows where Region = 'North' -> avg of Deaths" is the same one cell as its value (found as a new user: "What
    # was the death rate in the North?" answered 3, the deaths)
    if one_row and program.fn in _ONE_ROW_READS and not program.per_column and label is not None \
            and any(f.column == label and f.op == "=" for f in program.filters):
        rated = read_rate(program.model_copy(update={"fn": "max", "nth": 1}), typed, message)
        return rated if rated.per_column else program
    if program.fn not in RATIO_FNS or program.per_column:
        return program
    try:
        measure = typed.column(program.column)
    except KeyError:
        return program
    if not measure.numeric or not _holds_counts(typed, measure.index):
        return program
    if any(column_named(measure.name, m.group(1))
           or (m.group(1).lower() in _RATE_OF and column_named(measure.name, _RATE_OF[m.group(1).lower()]))
           for m in _RATE.finditer(message)):
        whole = _cases_of(typed, measure.index, message) or population(typed, measure.index)
    else:
        whole = _share_of(typed, measure.index, message)
    if whole is None:
        return program
    return program.model_copy(update={"per_column": typed.columns[whole - 1].ident})
