"""Dates a table question states, read into its program's filters (split from tools._question_rules).

- :func:`read_stated_part`: "how many trials were in November 2006?" written as "Date = '13 November 2006'" means
  the dates that contain the month the question states;
- :func:`add_stated_date`: "how many shows were in April?" with no filter on the dates filters them on "April";
- :func:`add_stated_quarter`: "the total revenue in the first quarter of 2024" keeps January to March 2024.

They run in the order tools._program_readers gives them, beside the other readers of a question's form.
"""

from __future__ import annotations

import re

from tools._cells import QUARTER, TypedTable, iso_month_match, words_match
from tools._grounding import value_grounded
from tools._table_ops_model import MAX_FILTERS, Program, RowFilter
from tools.lang.lexicon import MONTH_NAMES, WORD

_DAY = re.compile(r"^\d{1,2}(?:st|nd|rd|th)?$")


def read_stated_part(program: Program, typed: TypedTable, question: str) -> Program:
    """"How many trials were in November 2006?" written as "Date = '13 November 2006'" counts one day.

    The model copies a whole cell where the question states part of it. When the words the question leaves out
    are only a day's number and the part it states is a run of the cell's words with a month or a year in it,
    the filter becomes "contains" that part (WTQ's training split: "november 2006", "august 1939").
    """
    asked = set(WORD.findall(question.casefold()))
    filters, changed = [], False
    for f in program.filters:
        try:
            numeric = typed.column(f.column).numeric
        except KeyError:
            numeric = True
        if f.op == "=" and not numeric:
            words = [(m.start(), m.end(), m.group(0).casefold()) for m in WORD.finditer(f.value)]
            stated = [i for i, (_, _, w) in enumerate(words) if w in asked]
            left_out = [w for i, (_, _, w) in enumerate(words) if i not in stated]
            if stated and left_out and stated == list(range(stated[0], stated[-1] + 1)) \
                    and all(_DAY.match(w) for w in left_out) \
                    and any(not words[i][2].isdigit() or len(words[i][2]) == 4 for i in stated):
                part = f.value[words[stated[0]][0]:words[stated[-1]][1]]
                f, changed = RowFilter(column=f.column, op="contains", value=part), True
        filters.append(f)
    return program.model_copy(update={"filters": filters}) if changed else program


_MONTH = r"(?:january|february|march|april|june|july|august|september|october|november|december)"
_YEAR = r"(?:1[0-9]{3}|20[0-9]{2})"
# The longest first: "March 2010" before "March"; "May" only with a year (else it is the verb).
_DATE_PARTS = [re.compile(p, re.I) for p in (rf"\b(?:{_MONTH}|may),?\s+{_YEAR}\b", rf"\b{_MONTH}\b",
                                               rf"\b{_YEAR}\b")]


def add_stated_date(program: Program, typed: TypedTable, question: str) -> Program:
    """"How many shows were in April?" written with no filter on the dates counts every show.

    A month (with or without its year) or a year the question states, found as words in the cells of a text
    column, and in no filter value the program wrote, becomes a "contains" filter on that column (found as a new
    user: a tour table's "3 March 2010" dates; the model counted all 7 rows). A filter on that column with a
    value the question does not state is replaced ("Which venues did they play in May 2010?" was written
    "Date = '5 March 2010'").
    """
    if program.fn in ("every", "only"):
        return program
    part = next((m.group(0) for p in _DATE_PARTS for m in [p.search(question)] if m), "")
    if not part or any(part.casefold() in f.value.casefold() for f in program.filters):
        return program
    for col in typed.columns:
        if col.numeric or not any(words_match(v, part) or iso_month_match(v, part)
                                  for v in typed.table.column_values(col.index)):
            continue
        on_it = [f for f in program.filters if f.column == col.ident]
        if any(f.op != "=" or value_grounded(f.value, question) for f in on_it):
            return program  # the program reads this column as asked, in its own way
        kept = [f for f in program.filters if f.column != col.ident]
        if len(kept) >= MAX_FILTERS:
            return program
        return program.model_copy(update={"filters": kept + [RowFilter(column=col.ident, op="contains", value=part)]})
    return program


_QUARTER_NUMBER = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}


def add_stated_quarter(program: Program, typed: TypedTable, question: str) -> Program:
    """"What was the total revenue in the first quarter of 2024?" keeps January to March of 2024.

    Found as a new user: over a table of months written "2024-01", the sum ran over all six months. A quarter the
    question states ("first quarter", "Q3 2019") becomes its three months as filters on the column that holds
    months (ISO dates, or month names as words), which a question's program reads as any of them; only when the
    program has no other filter, since a program holds three at most.
    """
    m = QUARTER.search(question)
    if not m or program.fn in ("every", "only"):
        return program
    q = _QUARTER_NUMBER[m.group("ord").lower()] if m.group("ord") else int(m.group("n"))
    year = m.group("year") or next(iter(re.findall(r"\b(?:1[89]|20)\d{2}\b", question)), None)
    months = [f"{name.capitalize()} {year}" if year else name.capitalize() for name in MONTH_NAMES[3 * q - 3:3 * q]]
    for col in typed.columns:
        cells = typed.table.column_values(col.index)
        if not any(iso_month_match(v, months[0]) or words_match(v, months[0]) for v in cells):
            continue
        if any(f.column != col.ident for f in program.filters):
            return program
        return program.model_copy(update={"filters": [RowFilter(column=col.ident, op="=", value=v) for v in months]})
    return program
