"""Dates and durations a table question states: dates read into a program's filters, a stated year read at the grain
it is written in, and how long something lasted between a start and an end date.

Each section below opens with a comment that says what it reads and the case it came from.
"""

from __future__ import annotations

import re

from tools._cells import YEAR, TypedTable, format_value, iso_month_match, parse_date, text_words, words_match
from tools._grounding import value_grounded
from tools._table_ops_model import MAX_FILTERS, Change, Check, Program, RowFilter
from tools._values import BOUND_OPS
from tools.lang.lexicon import CARDINALS, MONTH_NAMES, MONTHS, OLDEST_YEAR, WORD
from tools.lang.reading import read


# ======================================================================================================================
# Dates a table question states, read into its program's filters (split from tools._question_rules).
#
# - :func:`read_stated_part`: "how many trials were in November 2006?" written as "Date = '13 November 2006'" means
#   the dates that contain the month the question states;
# - :func:`add_stated_date`: "how many shows were in April?" with no filter on the dates filters them on "April";
# - :func:`add_stated_quarter`: "the total revenue in the first quarter of 2024" keeps January to March 2024.
#
# They run in the order tools._program_readers gives them, beside the other readers of a question's form.
# ======================================================================================================================

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


def stated_date_part(question: str) -> str:
    """The month with its year, else the month, else the year the question writes first, as written ("March 2010",
    "March", "1066"; tools.lang.reading): the longest first, a month in full ("Mar" is left out) and "may" only
    with a year (else it is the verb); "" for none."""
    reading = read(question)
    months = [m for m in reading.months if m.full]
    with_year = next((m for m in months if m.year and not m.dotted), None)
    if with_year:
        return question[with_year.start:with_year.phrase_end]
    month = next((m for m in months if m.month != MONTHS["may"]), None)
    if month:
        return month.text
    years = reading.year_list(since=OLDEST_YEAR)
    return years[0].text if years else ""


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
    part = stated_date_part(question)
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


def add_stated_quarter(program: Program, typed: TypedTable, question: str) -> Program:
    """"What was the total revenue in the first quarter of 2024?" keeps January to March of 2024.

    Found as a new user: over a table of months written "2024-01", the sum ran over all six months. A quarter the
    question states ("first quarter", "Q3 2019") becomes its three months as filters on the column that holds
    months (ISO dates, or month names as words), which a question's program reads as any of them; only when the
    program has no other filter, since a program holds three at most.
    """
    reading = read(question)
    if not reading.quarters or program.fn in ("every", "only"):
        return program
    stated = reading.quarters[0]
    q = stated.quarter
    years = reading.year_list()  # its own year ("Q3 2019"), else the first the question writes
    year = stated.year.text if stated.year in years else years[0].text if years else None
    months = [f"{name.capitalize()} {year}" if year else name.capitalize() for name in MONTH_NAMES[3 * q - 3:3 * q]]
    for col in typed.columns:
        cells = typed.table.column_values(col.index)
        if not any(iso_month_match(v, months[0]) or words_match(v, months[0]) for v in cells):
            continue
        if any(f.column != col.ident for f in program.filters):
            return program
        return program.model_copy(update={"filters": [RowFilter(column=col.ident, op="=", value=v) for v in months]})
    return program


# ======================================================================================================================
# A year the text states, read at the grain it is written in: "after 2020" is a later year, not a later day.
#
# Found as a new user: "Every study published after 2020 enrolled fewer than 1,000 participants" was written as
# "Published > '2020-01-01'", which keeps a study of November 2020. When a filter orders a column of dates by a
# full date the text never writes, and the text writes that date's year as a bare number, the filter compares
# years ("Published > '2020'"; ``tools._cells.compare_dates`` reads a year at the year's grain). Claims and
# questions alike.
# ======================================================================================================================

_ORDER = ("<", "<=", ">", ">=")


def read_stated_year(program: Program, typed: TypedTable, text: str) -> Program:
    """``program`` with each date filter the text only gives the year of read as that year (section comment)."""
    changed = False
    filters = []
    for f in program.filters:
        parsed = parse_date(f.value, year_alone=True) if f.op in _ORDER and typed.is_dated(f.column) else None
        if parsed is not None and parsed[1] > YEAR and f.value.casefold() not in text.casefold() \
                and _writes_year(text, parsed[0].year):
            f = f.model_copy(update={"value": str(parsed[0].year)})
            changed = True
        filters.append(f)
    return program.model_copy(update={"filters": filters}) if changed else program


def _stated(value: str, text: str) -> bool:
    """Whether ``text`` writes this filter's date or, for a year, the year."""
    parsed = parse_date(value, year_alone=True)
    if parsed is None:
        return False
    if value.casefold() in text.casefold():
        return True
    return parsed[1] == YEAR and _writes_year(text, parsed[0].year)


def _writes_year(text: str, year: int) -> bool:
    """Whether ``text`` writes ``year`` as a number of its own (not inside "2020-21" or "12020")."""
    return re.search(rf"(?<![\d-]){year}(?![\d-])", text) is not None


def dated_filter_columns(program: Program, typed: TypedTable, text: str) -> set[str]:
    """The columns of dates ``program`` filters by a date or year that ``text`` writes."""
    return {f.column for f in program.filters if typed.is_dated(f.column) and _stated(f.value, text)}


def leaves_out_stated_date(programs: list[Program], typed: TypedTable, text: str) -> list[str]:
    """For each program, why it does not vote (or ""): another program filters a column of dates by a date or year
    the claim writes, and this one reads that column nowhere.

    Found as a new user: "Is it true that every drug the FDA approved after 2022 treats Alzheimer disease?" had four
    programs check every FDA drug, refuted by two approved in 2017 and 2022, and one that kept the approvals after
    2022 (true). The date is what the claim states; a program without it checks another claim.
    """
    stated = [dated_filter_columns(p, typed, text) for p in programs]
    wanted = set().union(*stated) if stated else set()
    out = []
    for p in programs:
        read = {f.column for f in p.filters} | {p.column}
        missing = sorted(wanted - read)
        out.append(f"another program keeps the rows of the date the claim states ({typed.column(missing[0]).name}), "
                   "and this one reads every date" if missing else "")
    return out


# ======================================================================================================================
# How long something lasted, over a table with a start date and an end date in each row: "Which campaign lasted
# the longest?", "How long did the HPV campaign last?".
#
# Found as a new user with a TSV of vaccination campaigns (Start, End): "Which campaign lasted the longest?" was
# answered, in all five programs, with the campaign that ended last (Measles catch-up, 18 days), not the longest
# (HPV school, 74 days): no program can subtract one date from another. The question's form settles it: a duration
# asked over a table with one start column and one end column of dates is the end minus the start, in days, row
# by row (a :class:`~tools._table_ops_model.Change` of the program's options, as for a change between two columns of
# numbers).
# ======================================================================================================================

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
    """The program the duration the text asks about needs (section comment); any other as written."""
    if not _DURATION.search(text) or program.options.derive is not None:
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
        return program.model_copy(update={"filters": filters, "fn": fn, "column": end,
                                          "options": program.options.replaced(derive=Change(minus_column=start)),
                                          "answer_column": program.answer_column or label})
    # "difference" too: the model writes "the difference between the two rows' Doses given" for "how long"
    if program.fn in ("value", "max", "min", "avg", "sum", "difference") and label is not None:
        if not any(f.column == label and f.op in ("=", "contains") for f in filters):
            named = _row_named_by_a_word(typed, text)
            if named is None:
                return program
            filters = filters + [RowFilter(column=label, op="=", value=named)]
        # how long the row the text names lasted: that row's end minus its start
        return program.model_copy(update={"filters": filters, "fn": "max", "column": end, "options":
                                          program.options.replaced(derive=Change(minus_column=start), nth=1)})
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
