"""A question about the change between two columns of numbers: "How much did coverage in Kenya change between
2022 and 2023?", "Which country rose the most from 2022 to 2023?".

Found as a new user with an HTML table of measles vaccine coverage, a column per year: no program can subtract one
column from another, so none voted, and the fallback answered "2023", reasoning "R3C4 - R2C4 = 93 - 63 = 30%"
from India's and Nigeria's rows; it was shown as verified. Kenya went from 89 to 86.

The question's form settles the program, as a claim's does (tools._claim_changes): the two things after "from … to"
or "between … and" are two columns of numbers, and the change is the second minus the first, row by row
(``Program.minus_column``). "How much" asks it of the one row the question names (the model's filter on the row
names); "which … rose/fell the most" asks for the row with the largest or smallest change.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable
from tools._claim_changes import one_column, year_pair
from tools._table_ops_model import Program, RowFilter
from tools.lang.lexicon import change_pattern

_SPAN = re.compile(r"\b(?:from|between)\s+(?:the\s+)?(?:years?\s+)?(?P<a>[^,;.?]{1,40}?)\s+(?:to|and)\s+"
                   r"(?:the\s+)?(?P<b>[^,;.?]{1,40}?)\s*(?:[,;.?!]|$)", re.I)
_HOW_MUCH = re.compile(r"\bhow\s+(?:much|many\s+(?:percentage\s+)?points)\b|\bwhat\s+(?:was|is|were)\s+the\s+"
                       r"(?:change|difference|increase|decrease|rise|drop|fall|gain|growth)\b|\bhow\s+did\b[^?]*"
                       r"\bchange\b", re.I)
_CHANGE_WORD = re.compile(r"\b(?:change[ds]?|difference|increase[ds]?|decrease[ds]?|rise|rose|risen|drop(?:ped)?|"
                          r"fall|fell|fallen|gain(?:ed)?|grow|grew|grown|growth|decline[ds]?)\b", re.I)
_UP = change_pattern("up", "past", "participle")
_DOWN = change_pattern("down", "past", "participle")
_WHICH_MOST = re.compile(r"^\s*(?:which|what)\b[^?]*?\b(?:(?P<up>" + _UP + r")|(?P<down>" + _DOWN + r"))\b"
                         r"[^?]*?\b(?:the\s+)?(?:most|(?P<rate>fastest|quickest|most\s+quickly|most\s+rapidly))\b",
                         re.I)
# "Which country had the largest drop in coverage between 2019 and 2021?" (found as a new user: the programs
# compared 2022 alone and answered India; the Philippines fell 10 points)
_WHICH_LARGEST = re.compile(
    r"^\s*(?:which|what)\b[^?]*?\b(?:largest|biggest|greatest|steepest|sharpest|highest|most)\s+"
    r"(?:(?P<up>" + change_pattern("up", "noun", improve=True) + r")|(?P<down>" + change_pattern("down", "noun")
    + r"))\b",
    re.I)


def _how_much_changed(question: str) -> bool:
    """"How much did coverage change …?": an amount of change, not "How much did it cost in Belmont?"."""
    return bool(_HOW_MUCH.search(question) and _CHANGE_WORD.search(question))


def change_columns(typed: TypedTable, question: str) -> tuple[str, str] | None:
    """(from, to): the two columns of numbers the question spans, or None."""
    m = _SPAN.search(question)
    if m is None:
        # "Which county saw the biggest increase in measles cases?" over "Measles cases 2023" and "… 2024": the
        # one measure's two years (found as a new user: the programs took the largest 2024 count)
        asks_change = _WHICH_MOST.search(question) or _WHICH_LARGEST.search(question) or _how_much_changed(question)
        return year_pair(typed, question) if asks_change else None
    a, b = one_column(typed, m.group("a")), one_column(typed, m.group("b"))
    if not a or not b or a == b or not (typed.is_numeric(a) and typed.is_numeric(b)):
        return None
    return a, b


def read_column_change(program: Program, typed: TypedTable, question: str) -> Program:
    """The program the question's change between two columns asks for (module docstring); any other as written."""
    span = change_columns(typed, question)
    label = typed.label_col
    if span is None:
        return _period_rows_change(program, typed, question)
    if not label:
        return program
    a, b = span
    filters = [f for f in program.filters if f.column not in (a, b)]  # the change's own columns are no condition
    label_ident = typed.columns[label - 1].ident
    which = _WHICH_MOST.search(question) or _WHICH_LARGEST.search(question)
    if which:  # the answer is a row: a filter naming one is no condition of the question's
        filters = [f for f in filters if not (f.column == label_ident and f.op == "=")]
        # "grew fastest" is a rate: the change as a share of where it started (Asia-Pacific's 187.9 -> 241.3,
        # +28.4%, not North America's larger +42.5 on 412.5; found as a new user, the programs took the largest
        # 2023 revenue)
        rate = which.groupdict().get("rate") is not None  # _WHICH_LARGEST has no such group
        return Program(filters=filters, fn="argmax" if which.group("up") else "argmin", column=b, minus_column=a,
                       per_column=a if rate else None, answer_column=label_ident)
    if _HOW_MUCH.search(question) and any(f.column == label_ident and f.op == "=" for f in filters):
        return Program(filters=filters, fn="max", column=b, minus_column=a, answer_column=label_ident)
    return program


def _period_rows_change(program: Program, typed: TypedTable, question: str) -> Program:
    """"How much did TB incidence in Kenya change between 2019 and 2021?" over a long table (a row per country and
    year): the difference between the two years' rows of the thing the model's filters keep.

    Found as a new user: one program of five ran, on Kenya's rows after 2019 (2020 and 2021: 8); Kenya went from
    267 to 251. The two periods must be cells of the table's one column of years; the measure is the program's
    column of numbers. The difference is unsigned (the reason names the two rows)."""
    m = _SPAN.search(question)
    if m is None or not _how_much_changed(question):
        return program
    years = [c for c in typed.columns if c.numeric and c.holds_years]
    if len(years) != 1 or not typed.is_numeric(program.column) or program.column == years[0].ident \
            or program.per_column or program.minus_column:
        return program
    time = years[0]
    written = {" ".join(typed.text(r, time.index).split()) for r in range(1, typed.table.n_rows + 1)}
    a, b = m.group("a").strip(), m.group("b").strip()
    if a not in written or b not in written or a == b:
        return program
    keep = [f for f in program.filters if f.column != time.ident]
    return Program(filters=keep + [RowFilter(column=time.ident, op="=", value=a),
                                   RowFilter(column=time.ident, op="=", value=b)],
                   fn="difference", column=program.column, answer_column=program.answer_column)
