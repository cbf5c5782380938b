"""How long something lasted, over a table with a start date and an end date in each row: "Which campaign lasted
the longest?", "How long did the HPV campaign last?".

Found as a new user with a TSV of vaccination campaigns (Start, End): "Which campaign lasted the longest?" was
answered, in all five programs, with the campaign that ended last (Measles catch-up, 18 days), not the longest
(HPV school, 74 days): no program can subtract one date from another. The question's form settles it: a duration
asked over a table with one start column and one end column of dates is the end minus the start, in days, row
by row (``Program.minus_column``, as for a change between two columns of numbers).
"""

from __future__ import annotations

import re

from tools._cells import TypedTable, format_value, text_words
from tools._table_ops_model import Check, Program, RowFilter
from tools._values import BOUND_OPS
from tools.lang.lexicon import CARDINALS

# "longest" and "shortest" alone too: over rows that each have a start and an end date, "Which campaign was the
# shortest?" asks how long each lasted
_DURATION = re.compile(r"\b(?:lasted|lasts?|lasting|duration|how\s+long|length\s+of\s+time|longest|shortest|"
                       r"longer|shorter)\b", re.I)
_SHORT = re.compile(r"\b(?:shortest|least|fewest|smallest|briefest|quickest|soonest)\b", re.I)
_LONG = re.compile(r"\b(?:longest|most|greatest|largest|longer)\b", re.I)
_START = re.compile(r"\b(?:start(?:ed|ing)?|begin(?:ning)?|began|from|onset|open(?:ed|ing)?|admi(?:tted|ssion)|"
                    r"launch(?:ed)?|first)\b", re.I)
_END = re.compile(r"\b(?:end(?:ed|ing)?|finish(?:ed)?|to|until|clos(?:e|ed|ing)|stop(?:ped)?|discharge(?:d)?|"
                  r"complet(?:ed|ion)|last)\b", re.I)


def date_span(typed: TypedTable) -> tuple[str, str] | None:
    """(start, end): the table's one column of start dates and one of end dates (by their names), or None."""
    dated = [c for c in typed.columns if c.holds_dates and not c.numeric]
    starts = [c for c in dated if _START.search(c.name) and not _END.search(c.name)]
    ends = [c for c in dated if _END.search(c.name) and not _START.search(c.name)]
    if len(starts) != 1 or len(ends) != 1:
        return None
    return starts[0].ident, ends[0].ident


def read_duration(program: Program, typed: TypedTable, text: str) -> Program:
    """The program the duration the text asks about needs (module docstring); any other as written."""
    if not _DURATION.search(text) or program.per_column or program.minus_column:
        return program
    span = date_span(typed)
    if span is None:
        return program
    start, end = span
    label = typed.columns[typed.label_col - 1].ident if typed.label_col else None
    filters = [f for f in program.filters if f.column not in (start, end)]  # the span's own dates are no condition
    if program.check is not None and program.fn not in ("argmax", "argmin"):
        # a claim of how long one row lasted is checked against the span it states, in days, not the dates the
        # model compared with ("the polio round lasted less than a week" was checked as "= 2024-02-16")
        stated = stated_days(text)
        if stated is None:
            return program
        program = program.model_copy(update={"check": Check(op=stated[0], against="value",
                                                            value=format_value(stated[1]))})
    if program.fn in ("argmax", "argmin"):  # which row lasted the longest (or shortest)
        fn = "argmin" if _SHORT.search(text) else "argmax" if _LONG.search(text) else program.fn
        return program.model_copy(update={"filters": filters, "fn": fn, "column": end, "minus_column": start,
                                          "answer_column": program.answer_column or label, "nth": program.nth})
    # "difference" too: the model writes "the difference between the two rows' Doses given" for "how long"
    if program.fn in ("value", "max", "min", "avg", "sum", "difference") and label is not None:
        if not any(f.column == label and f.op in ("=", "contains") for f in filters):
            named = _row_named_by_a_word(typed, text)
            if named is None:
                return program
            filters = filters + [RowFilter(column=label, op="=", value=named)]
        # how long the row the text names lasted: that row's end minus its start
        return program.model_copy(update={"filters": filters, "fn": "max", "column": end, "minus_column": start,
                                          "nth": 1})
    return program


_COMMON = {"the", "and", "for", "how", "long", "did", "does", "was", "were", "last", "lasted", "run", "campaign",
           "round", "trial", "study", "project", "phase", "programme", "program"}


def _row_named_by_a_word(typed: TypedTable, text: str) -> str | None:
    """The one row label that shares a word with the text ("How long did the cholera campaign run?" names
    "Cholera OCV"), or None when no row or several do. Words of three letters or more ("HPV"), not the common
    words of such questions."""
    asked = set(text_words(text).split()) - _COMMON
    label = typed.label_col
    hits = {" ".join(typed.text(r, label).split()) for r in range(1, typed.table.n_rows + 1)
            if asked & {w for w in text_words(typed.text(r, label)).split() if len(w) >= 3 and w not in _COMMON}}
    return hits.pop() if len(hits) == 1 else None


_DAYS = {"day": 1.0, "week": 7.0, "month": 30.4375, "year": 365.25}
_SPAN_STATED = re.compile(
    r"(?:(?P<cmp>longer\s+than|more\s+than|over|in\s+excess\s+of|exceeding|above|less\s+than|shorter\s+than|"
    r"fewer\s+than|under|below|within|at\s+least|no\s+less\s+than|not\s+less\s+than|at\s+most|no\s+more\s+than|"
    r"not\s+more\s+than|up\s+to|exactly|just|only)\s+)?(?P<n>\d+(?:\.\d+)?|an?|one|two|three|four|five|six|seven|"
    r"eight|nine|ten|eleven|twelve)\s+(?P<unit>day|week|month|year)s?\b", re.I)
_OPS = {**BOUND_OPS, "longer than": ">", "shorter than": "<", "within": "<="}


def stated_days(claim: str) -> tuple[str, float] | None:
    """(op, days): the span a claim states ("less than a week" -> ("<", 7), "74 days" -> ("=", 74)), or None.
    A month or a year is no whole number of days, so one stated without a comparison ("lasted 18 months") is
    not read."""
    m = _SPAN_STATED.search(claim)
    if m is None:
        return None
    n_text = m.group("n").lower()
    n = 1.0 if n_text in ("a", "an") else CARDINALS.get(n_text) if n_text in CARDINALS else float(n_text)
    unit = m.group("unit").lower()
    op = _OPS.get(" ".join((m.group("cmp") or "").lower().split()), "=")
    if op == "=" and unit in ("month", "year"):
        return None
    return op, round(n * _DAYS[unit], 4)
