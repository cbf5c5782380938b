"""Changes and comparisons across the columns of one table: a claim of a change between two columns or rows, a claim
over a column of changes, a question about the change between two columns, questions comparing two columns of
each row, a claim comparing two arms' columns, one row's values across year columns, and a row named by its base
name.

Each section below opens with a comment that says what it reads and the case it came from.
"""

from __future__ import annotations

import math
import re
from statistics import median_high

from tools._cells import TypedTable, norm_text, text_words
from tools._claim_grounding import NEGATED_BEFORE, change_columns, row_names_in, stated_direction, years_agree
from tools._claim_multiples import _BOUND, ROUGH_MULTIPLE_TOLERANCE, stated_scale
from tools._grounding import GREATER_WORDS, column_named, question_numbers, row_stated, value_grounded
from tools._table_ops import selected_rows
from tools._table_ops_model import MIRRORED_OPS, VALUE_MAX_CHARS, AcrossColumns, Change, Check, Options, Program, \
    RelativeChange, RowFilter
from tools._table_shape import by_share
from tools._values import BOUND_OPS, rewrite_text_filters
from tools.lang.lexicon import ROUGH_WORDS, WORD, change_pattern, content_words
from tools.lang.reading import read


# ======================================================================================================================
# Claims of a change between two columns or two rows: "Deaths in Kenya rose from 2019 to 2020".
#
# Found as a new user over a table of deaths by country with a column per year: of five programs, one compared
# Kenya's 2020 with its 2019; the others checked 2021 against a number nobody stated, compared Kenya with itself,
# or counted rows ("Ghana fell between 2020 and 2021" got one refutation from "2020 <= 2021"). The claim's form
# settles the program: the two things after "from … to" (or "between … and") are two columns or two rows, the
# claim names the one row (or column) they belong to, and the verb says which way. So code writes it.
#
# Without "from … to", a table with the one measure in two year columns settles it too. Found as a new user over
# county measles cases with "Measles cases 2023" and "Measles cases 2024": "Measles cases rose in every county with
# MMR coverage above 90%" was supported by "every one has Measles cases 2023 >= 0" (two of those counties fell, 3 to
# 0 and 7 to 4). The verb then compares the later year's column with the earlier one's, row by row; so does a
# yes/no question's ("Did cases fall in Ashford?"), and "more cases in 2024 than in 2023" compares the two years it
# names. Quarters ("DDD Q1", "DDD Q2") order like years.
# ======================================================================================================================

_UP = change_pattern("up", "base", "third", "past", "participle", "noun")
_DOWN = change_pattern("down", "base", "third", "past", "participle", "noun")
_CHANGE = re.compile(
    r"\b(?:(?P<up>" + _UP + r")|(?P<down>" + _DOWN + r"))\b(?:\s+[^\s.;,]+){0,4}?\s+(?:from|between)\s+"
    r"(?:(?:the\s+)?(?:year\s+|years\s+)?)(?P<a>[^,;.]{1,40}?)\s+(?:to|and)\s+(?:the\s+)?(?P<b>[^,;.]{1,40}?)"
    r"\s*(?:[,;.?!]|$)", re.I)
# "more measles cases in 2024 than in 2023": one measure's columns of two periods compared in each row, the comparing
# word first, then the two periods (tools.lang.reading's years and "Q1" quarters) joined by "than"
_THAN_WORD = re.compile(r"\b(?P<word>more|fewer|less|higher|lower|greater|smaller|larger)\b", re.I)
_THAN = re.compile(r"\s+than\s+(?:in\s+)?", re.I)
_CLAUSE_END = re.compile(r"[?.;]")


def _periods(text: str) -> list[tuple[int, int, tuple[int, int]]]:
    """(start, end, (year, quarter)) of each period ``text`` writes, in order: a year, or a quarter written "Q1" (a
    header's period: "DDD per 100 bed-days Q1", "Q1 2025"; 0 for a part it lacks)."""
    reading = read(text)
    return sorted([(y.start, y.end, (y.value, 0)) for y in reading.year_list()]
                  + [(q.start, q.end, (0, q.quarter)) for q in reading.quarters if q.short])


def _period(text: str) -> tuple[int, int] | None:
    """(year, quarter) named in ``text``, 0 for a part it lacks; None for no period or more than one of a kind."""
    periods = [period for _, _, period in _periods(text)]
    years, quarters = [y for y, q in periods if y], [q for y, q in periods if q]
    if len(years) > 1 or len(quarters) > 1 or not (years or quarters):
        return None
    return (years[0] if years else 0, quarters[0] if quarters else 0)


def _than_periods(text: str) -> tuple[re.Match, tuple[int, int], tuple[int, int]] | None:
    """(the comparing word, the first period, the second) of "more … in 2024 than in 2023": the first comparing word
    followed, within its clause, by two periods joined by "than"; None for none."""
    periods = _periods(text)
    for word in _THAN_WORD.finditer(text):
        for start, end, first in periods:
            if start < word.end():
                continue
            if _CLAUSE_END.search(text, word.end(), start):
                break
            second = next((p for s, _, p in periods if s >= end and _THAN.fullmatch(text, end, s)), None)
            if second is not None:
                return word, first, second
    return None


def one_column(typed: TypedTable, phrase: str) -> str | None:
    """The one column ``phrase`` names: by its whole header, else the one header that has it as words."""
    words = text_words(phrase)
    exact = [c.ident for c in typed.columns if text_words(c.name) == words]
    if len(exact) == 1:
        return exact[0]
    within = [c.ident for c in typed.columns if words and f" {words} " in f" {text_words(c.name)} "]
    return within[0] if len(within) == 1 else None


def year_groups(typed: TypedTable) -> dict[str, dict[tuple[int, int], str]]:
    """Numeric columns with one period in their header, by the header's other words: {"measles cases":
    {(2023, 0): ident, (2024, 0): ident}}. A header that is only a year goes under "". A group whose periods are
    not all of one kind (years, quarters, or both) is left out: "Cases Q1" and "Cases 2024" have no order."""
    groups: dict[str, dict[tuple[int, int], str]] = {}
    for col in typed.columns:
        period = _period(col.name)
        if col.numeric and period is not None:
            reading = read(col.name)
            stem = text_words(reading.without([*reading.year_list(), *(q for q in reading.quarters if q.short)]))
            groups.setdefault(stem, {}).setdefault(period, col.ident)
    return {stem: cols for stem, cols in groups.items()
            if len({(year > 0, quarter > 0) for year, quarter in cols}) == 1}


def one_group(groups: dict[str, dict[tuple[int, int], str]], text: str) -> dict[tuple[int, int], str] | None:
    """The one group ``text`` names by its words, else the only group there is; None when that is not one."""
    named = [stem for stem in groups if stem and column_named(stem, text)]
    chosen = named if named else list(groups)
    return groups[chosen[0]] if len(chosen) == 1 else None


def year_pair(typed: TypedTable, claim: str) -> tuple[str, str] | None:
    """The (earlier, later) columns of the one measure the table holds for exactly two years or quarters ("Measles
    cases 2023", "Measles cases 2024"; "DDD Q1", "DDD Q2"), when the claim names that measure or the table has no
    other such pair; else None."""
    group = one_group({stem: cols for stem, cols in year_groups(typed).items() if len(cols) == 2}, claim)
    if group is None:
        return None
    earlier, later = sorted(group)
    return group[earlier], group[later]


def year_columns(typed: TypedTable, text: str, first: tuple[int, int], second: tuple[int, int]
                 ) -> tuple[str, str] | None:
    """The columns of one measure for the years ``first`` and ``second`` ("more cases in 2024 than in 2023"), the
    measure chosen as :func:`year_pair` does; None unless both exist."""
    group = one_group({stem: cols for stem, cols in year_groups(typed).items()
                        if first in cols and second in cols}, text)
    if group is None or first == second:
        return None
    return group[first], group[second]


def than_years(typed: TypedTable, text: str) -> tuple[tuple[str, str], str] | None:
    """((the first year's column, the second's), op) for "more/fewer … in 2024 than in 2023" over one measure's
    year columns; None for any other text."""
    found = _than_periods(text)
    if found is None or NEGATED_BEFORE.search(text[:found[0].start()]):  # "did not have more …": left as written
        return None
    word, first, second = found
    pair = year_columns(typed, text, first, second)
    if pair is None:
        return None
    return pair, ">" if word.group("word").lower() in GREATER_WORDS else "<"


# "Metformin's price rose by more than 10%": the amount of the change, which the bare verb's comparison of the two
# columns does not check (found as a new user: supported by 4.60 > 4.20, a rise of 9.5%)
_BY_AMOUNT = re.compile(
    r"\b(?:(?P<up>" + change_pattern("up", "past", "participle") + r")|(?P<down>"
    + change_pattern("down", "past", "participle") + r"))\s+by\s+(?P<cmp>more\s+than|over|less\s+than|under|at\s+least|at\s+most|"
    r"exactly)?\s*(?P<n>\d+(?:\.\d+)?)\s*(?P<pct>%|percent\b|per\s+cent\b)?", re.I)
_AMOUNT_OPS = {**BOUND_OPS, "exactly": "="}


def _by_amount(program: Program, typed: TypedTable, claim: str) -> Program | None:
    """The named row's change between the table's two year columns checked against the amount the claim states
    ("rose by more than 10%": (2024 - 2023) / 2023 > 0.10; "fell by 3": 2024 - 2023 = -3), or None when the claim
    states no amount, names no one row, or the table has no such pair."""
    m = _BY_AMOUNT.search(claim)
    if m is None or NEGATED_BEFORE.search(claim[:m.start()]):
        return None
    pair = year_pair(typed, claim)
    rows, _ = row_names_in(typed, claim[:m.start()])
    if pair is None or len(rows) != 1 or not all(typed.column(c).numeric for c in pair):
        return None
    earlier, later = pair
    op = _AMOUNT_OPS.get(" ".join((m.group("cmp") or "exactly").lower().split()), "=")
    n = m.group("n")
    amount = float(n)
    decimals = len(n.split(".")[1]) if "." in n else 0
    # a percentage is a share of the earlier value, written to the claim's precision
    value = f"{amount / 100:.{decimals + 2}f}" if m.group("pct") else n
    if m.group("pct"):
        if m.group("down"):  # a fall of 10% is a change of -0.10: "by more than 10%" is "below -0.10"
            value, op = f"-{value}", MIRRORED_OPS[op]
        return Program(filters=[_names(typed, rows[0])], fn="max", column=later,
                       options=Options(derive=RelativeChange(from_column=earlier)),
                       answer_column=program.answer_column, check=Check(op=op, against="value", value=value))
    # an amount: the later minus the earlier for a rise, the earlier minus the later for a fall ("fell by 3")
    first, second = (later, earlier) if not m.group("down") else (earlier, later)
    return Program(filters=[_names(typed, rows[0])], fn="max", column=first,
                   options=Options(derive=Change(minus_column=second)),
                   answer_column=program.answer_column, check=Check(op=op, against="value", value=value))


def read_change(program: Program, typed: TypedTable, claim: str) -> Program:
    """The program the claim's "rose/fell from A to B" states (section comment); any other claim as written."""
    m = _CHANGE.search(claim)
    label = typed.label_col
    if program.check is None or not label:
        return program
    if m is None and (amount := _by_amount(program, typed, claim)) is not None:
        return amount
    if m is None and (years := than_years(typed, claim)) is not None:
        (first, second), op = years
        return _columns_change(program, typed, claim, (second, first), op, claim)
    if m is None:
        said = stated_direction(claim)
        pair = year_pair(typed, claim) if said else None
        if said is None or pair is None:
            return program
        op, bare = said
        return _columns_change(program, typed, claim, pair, op, claim[:bare.start()] + " " + claim[bare.end():])
    if NEGATED_BEFORE.search(claim[:m.start()]):
        return program
    op = ">" if m.group("up") else "<"
    rest = claim[:m.start()] + " " + claim[m.end():]
    a_col, b_col = one_column(typed, m.group("a")), one_column(typed, m.group("b"))
    if a_col and b_col and a_col != b_col:  # a column per year: two columns of one row
        return _columns_change(program, typed, claim, (a_col, b_col), op, rest)
    a_rows, a_rest = row_names_in(typed, m.group("a"))
    b_rows, b_rest = row_names_in(typed, m.group("b"))
    if len(a_rows) != 1 or len(b_rows) != 1 or a_rest or b_rest or a_rows == b_rows:
        return program  # a row per year: the same column of two rows, which the claim must name
    measures = [c for c in typed.columns if c.numeric and c.index != label and column_named(c.name, rest)]
    column = measures[0].ident if len(measures) == 1 else program.column
    try:
        if not typed.column(column).numeric or typed.column(column).index == label:
            return program
    except KeyError:
        return program
    return Program(filters=[_names(typed, b_rows[0])], fn="value", column=column,
                   answer_column=program.answer_column,
                   check=Check(op=op, against="row", value=a_rows[0][:VALUE_MAX_CHARS]))


def _columns_change(program: Program, typed: TypedTable, claim: str, columns: tuple[str, str], op: str,
                    rest: str) -> Program:
    """Column ``columns[1]`` compared (``op``) with ``columns[0]`` in the one row the claim names, or in every row
    the model's filters select when the claim says every/each/all; otherwise the program as written."""
    a_col, b_col = columns
    if not (typed.column(a_col).numeric and typed.column(b_col).numeric):
        return program
    rows, _ = row_names_in(typed, rest)
    if not rows and read(claim).quantified("every"):  # every, each, all
        # "Every African country's coverage rose from 2022 to 2023": each selected row, by the model's filters
        # on other columns (found as a new user: "the number of African rows with 2022 != 0 > 0" supported it).
        filters = [f for f in program.filters if f.column not in (a_col, b_col)]
        return Program(filters=filters, fn="every", column=b_col, answer_column=program.answer_column,
                       check=Check(op=op, against="column", value=a_col))
    if not rows and read(claim).quantified("some"):  # any, some, at least one, one or more
        # "Did any drug get cheaper?": some selected row changed that way, counted by a filter on the two columns
        filters = [f for f in program.filters if f.column not in (a_col, b_col)]
        return Program(filters=filters + [RowFilter(column=b_col, op=op, value="", than_column=a_col)], fn="count",
                       column=b_col, answer_column=program.answer_column, check=Check(op=">=", value="1"))
    if len(rows) != 1:
        return program
    return Program(filters=[_names(typed, rows[0])], fn="value", column=b_col,
                   answer_column=program.answer_column, check=Check(op=op, against="column", value=a_col))


def _names(typed: TypedTable, row_name: str) -> RowFilter:
    label = typed.label_col
    assert label
    return RowFilter(column=typed.columns[label - 1].ident, op="=", value=row_name[:VALUE_MAX_CHARS])


# ======================================================================================================================
# Claims that something rose or fell, over a table with a column of changes: "MRSA resistance fell since 2019"
# over "Change since 2019 (pp)".
#
# Found as a new user over an antibiotic-resistance table (pathogen, antibiotic, isolates, "Resistant (%)",
# "Change since 2019 (pp)"): no program read the change column. Two compared one row's resistance with another's
# and failed, two checked the resistance against numbers the claim does not state ("< 19", "> 0"), and the claim
# was decided by those. The table states the change, so the claim's form settles the program: the one row the claim
# names, its change, compared with zero in the verb's direction (a rise is above zero, a fall below).
#
# Left to the programs: a claim that states an amount ("rose by more than 2 points": the model writes that bound
# itself), a negated verb, a table with its measure in two year columns (tools._claim_changes compares those), a
# table with several change columns the claim does not choose between, a claim whose year is not the column's
# ("fell since 2015" over "Change since 2019"), and a claim that names no one row.
# ======================================================================================================================

def change_column_for(typed: TypedTable, claim: str) -> str | None:
    """The change column a claim of a rise or fall is read from: the table's only one, or the one the claim names
    among several; None when there is none, or the claim states another year."""
    columns = change_columns(typed)
    if len(columns) > 1:
        columns = [c for c in columns if column_named(typed.column(c).name, claim)]
    if len(columns) != 1 or not years_agree(typed.column(columns[0]).name, claim):
        return None
    return columns[0]


def read_change_column(program: Program, typed: TypedTable, claim: str) -> Program:
    """The named row's change compared with zero in the claim's direction (section comment); any other claim
    as written."""
    said = stated_direction(claim)
    if said is None or program.check is None or year_pair(typed, claim) is not None:
        return program
    column = change_column_for(typed, claim)
    if column is None:
        return program
    filters = _one_named_row(program, typed, claim, column)
    if filters is None:
        return program
    return Program(filters=filters, fn="value", column=column, answer_column=program.answer_column,
                   check=Check(op=said[0], against="value", value="0"))


def _one_named_row(program: Program, typed: TypedTable, claim: str, column: str) -> list[RowFilter] | None:
    """Filters that select the one row the claim is about: the model's own (on other columns than the change),
    else the row label the claim writes, else both together; None unless one of these selects exactly one row
    and the claim names a text cell of that row."""
    own = [f for f in program.filters if f.column != column]
    label = typed.label_col
    names, _ = row_names_in(typed, claim)
    by_name = [RowFilter(column=typed.columns[label - 1].ident, op="=", value=names[0][:VALUE_MAX_CHARS])] \
        if label and len(names) == 1 else []
    numbers = question_numbers(claim)
    for filters in (own, by_name, own + by_name):
        if not filters:
            continue
        rows = selected_rows(Program(filters=filters, fn="count", column=column), typed)
        if rows is not None and len(rows) == 1 and any(
                value_grounded(typed.text(rows[0], col.index), claim, numbers)
                for col in typed.columns if not col.numeric and typed.text(rows[0], col.index).strip()):
            return filters
    return None


# ======================================================================================================================
# A question about the change between two columns of numbers: "How much did coverage in Kenya change between
# 2022 and 2023?", "Which country rose the most from 2022 to 2023?".
#
# Found as a new user with an HTML table of measles vaccine coverage, a column per year: no program can subtract one
# column from another, so none voted, and the fallback answered "2023", reasoning "R3C4 - R2C4 = 93 - 63 = 30%"
# from India's and Nigeria's rows; it was shown as verified. Kenya went from 89 to 86.
#
# The question's form settles the program, as a claim's does (tools._claim_changes): the two things after "from … to"
# or "between … and" are two columns of numbers, and the change is the second minus the first, row by row
# (a :class:`~tools._table_ops_model.Change` in the program's options). "How much" asks it of the one row the
# question names (the model's filter on the row names); "which … rose/fell the most" asks for the row with the
# largest or smallest change.
# ======================================================================================================================

_SPAN = re.compile(r"\b(?:from|between)\s+(?:the\s+)?(?:years?\s+)?(?P<a>[^,;.?]{1,40}?)\s+(?:to|and)\s+"
                   r"(?:the\s+)?(?P<b>[^,;.?]{1,40}?)\s*(?:[,;.?!]|$)", re.I)
_HOW_MUCH = re.compile(r"\bhow\s+(?:much|many\s+(?:percentage\s+)?points)\b|\bwhat\s+(?:was|is|were)\s+the\s+"
                       r"(?:change|difference|increase|decrease|rise|drop|fall|gain|growth)\b|\bhow\s+did\b[^?]*"
                       r"\bchange\b", re.I)
_CHANGE_WORD = re.compile(r"\b(?:change[ds]?|difference|increase[ds]?|decrease[ds]?|rise|rose|risen|drop(?:ped)?|"
                          r"fall|fell|fallen|gain(?:ed)?|grow|grew|grown|growth|decline[ds]?)\b", re.I)
_WENT_UP = change_pattern("up", "past", "participle")
_WENT_DOWN = change_pattern("down", "past", "participle")
_WHICH_MOST = re.compile(r"^\s*(?:which|what)\b[^?]*?\b(?:(?P<up>" + _WENT_UP + r")|(?P<down>" + _WENT_DOWN + r"))\b"
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


def spanned_columns(typed: TypedTable, question: str) -> tuple[str, str] | None:
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
    """The program the question's change between two columns asks for (section comment); any other as written."""
    span = spanned_columns(typed, question)
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
        derive = RelativeChange(from_column=a) if rate else Change(minus_column=a)
        return Program(filters=filters, fn="argmax" if which.group("up") else "argmin", column=b,
                       options=Options(derive=derive), answer_column=label_ident)
    if _HOW_MUCH.search(question) and any(f.column == label_ident and f.op == "=" for f in filters):
        return Program(filters=filters, fn="max", column=b, options=Options(derive=Change(minus_column=a)),
                       answer_column=label_ident)
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
            or program.options.derive is not None:
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


# ======================================================================================================================
# A claim comparing two groups of columns in one row: "Drug A more than halved the rate of stroke compared with
# placebo", over a table whose header groups each arm's columns ("Drug A (n=412) Events", "Drug A (n=412) %",
# "Placebo (n=405) Events", "Placebo (n=405) %").
#
# Found as a new user, on a trial's outcome table uploaded as HTML with a two-row header: the grammar's checks
# compare a row with a value or with another row, so no program could compare the two arms in the stroke row; the
# one that ran compared stroke with cardiovascular death and refuted the claim (2.9% against 6.2%: it holds).
#
# The claim's form settles the program when:
#
# - two numeric columns share a sub-header (the words after the group's name: "Events", "%") and differ in a group
#   name the claim writes whole ("Drug A", "placebo"; a parenthesised sample size is not part of the name), and
#   exactly two such groups are written;
# - the measure is the sub-header the claim's words ask for: a rate, risk or percentage reads "%" (or "rate"), a
#   number of events or cases the count; otherwise the one the program read, or the only one;
# - the row is the one the claim names, else the one the program selects.
#
# Without such groups, two whole number columns are the arms when the claim names each by words of its header that
# no other number column has ("20 mg" of "Drug 20 mg (n=415)"), the second right after "than" or "compared with"
# (:func:`_whole_column_arms`).
#
# Where both arms' cells write a count with its percentage ("41 (4.1%)") the percentages are compared, unless the claim
# asks for the counts ("more patients", "the number of"): arms differ in size (tools._table_shape.by_share).
#
# The check compares the group the claim names first with the one it names second, by the multiple or direction
# the claim states: "more than halved" is below half, "halved" and "nearly halved" within 15% of half, "doubled"
# likewise, "twice as high" and "20% lower than" as :mod:`tools._claim_multiples` reads them, "reduced" or "lower"
# below, "increased" or "higher" above. A claim that states none of these is left to the programs.
# ======================================================================================================================

_TOKEN = re.compile(r"[^\W_]+|%")
_PARENTHESISED = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_RATE_ASKED = re.compile(r"\b(?:rates?|risks?|percentages?|per ?cent|proportions?|shares?|incidence|prevalence)\b|%",
                         re.I)
_COUNT_ASKED = re.compile(r"\b(?:events?|cases?|number|counts?|patients|people|participants)\b", re.I)
_RATE_SUFFIX = {"%", "percent", "pct", "rate", "risk"}
_COUNT_SUFFIX = {"events", "n", "no", "number", "cases", "count", "patients"}
_VERB_FACTOR = {"halved": 0.5, "doubled": 2.0, "tripled": 3.0, "trebled": 3.0, "quadrupled": 4.0}
_SCALED = re.compile(_BOUND + r"\b(?P<verb>halved|doubled|tripled|trebled|quadrupled)\b", re.I)
_LOWER = re.compile(r"\b(?:reduced|reduces|reduce|reducing|lowered|lowers|lower|less|fewer|decreased|decreases|"
                    r"cut|cuts|smaller|below)\b", re.I)
# "bigger" found on PubHealthTab's tuning split: "Liberia has a bigger population than guinea", a table with a column
# per country, was supported by programs that compared Guinea with Liberia
_HIGHER = re.compile(r"\b(?:increased|increases|increase|raised|raises|higher|more|greater|larger|bigger|above)\b",
                     re.I)
_OVER = {"more than", "over", "above", "at least"}
_ROUGH = set(ROUGH_WORDS)


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(norm_text(_PARENTHESISED.sub(" ", text)))


def _written_at(phrase: list[str], words: list[str]) -> int | None:
    """Where ``words`` (the claim's) holds ``phrase`` whole and in order, or None."""
    n = len(phrase)
    return next((i for i in range(len(words) - n + 1) if words[i:i + n] == phrase), None)


def arm_columns(typed: TypedTable, claim: str, read: str = "") -> tuple[str, str] | None:
    """(the first-named group's column, the second's), identifiers of two numeric columns the claim compares
    within one row, or None (section comment). ``read``: the column the program read, which picks the measure
    when the claim's words do not."""
    words = _tokens(claim)
    label = typed.label_col
    by_suffix: dict[tuple[str, ...], dict[tuple[str, ...], str]] = {}
    for col in typed.columns:
        if not col.numeric or col.index == label:
            continue
        tokens = _tokens(col.name)
        for k in range(1, len(tokens)):
            by_suffix.setdefault(tuple(tokens[-k:]), {})[tuple(tokens[:-k])] = col.ident
    # per sub-header, the groups the claim writes, in the order it writes them
    named: dict[tuple[str, ...], list[tuple[int, str]]] = {}
    for suffix, groups in by_suffix.items():
        if len(groups) < 2:
            continue
        at = sorted((pos, ident) for prefix, ident in groups.items()
                    if (pos := _written_at(list(prefix), words)) is not None)
        if len(at) == 2 and at[0][0] != at[1][0]:
            named[suffix] = at
    if not named:
        return _whole_column_arms(typed, words)
    measures = list(named)
    if _RATE_ASKED.search(claim):
        measures = [s for s in measures if s[-1] in _RATE_SUFFIX]
    elif _COUNT_ASKED.search(claim):
        measures = [s for s in measures if s[-1] in _COUNT_SUFFIX]
    if len(measures) > 1 and read:
        measures = [s for s in measures if read in (ident for _, ident in named[s])]
    if len(measures) != 1:
        return None
    (_, first), (_, second) = named[measures[0]]
    return first, second


_BETWEEN = re.compile(r"\b(?:than|versus|vs|compared)\b")
_LINKING = {"on", "in", "the", "for", "with", "to", "at", "among", "of", "those", "that", "a", "an"}


def _whole_column_arms(typed: TypedTable, words: list[str]) -> tuple[str, str] | None:
    """Two number columns that are arms by themselves ("Drug 20 mg (n=415)", "Drug 10 mg (n=409)"), each named by
    words of its header that no other number column's header has ("20 mg", "10 mg"), with "than", "versus" or
    "compared" between the two: "Dizziness was more common on 20 mg than on 10 mg" (found as a new user: three
    programs counted the Dizziness row and supported the claim by chance)."""
    label = typed.label_col
    numeric = [col for col in typed.columns if col.numeric and col.index != label]
    headers = {col.ident: _tokens(col.name) for col in numeric}
    at = []
    for col in numeric:
        tokens = headers[col.ident]
        others = {t for ident, ts in headers.items() if ident != col.ident for t in ts}
        spans = [(i, j) for i in range(len(tokens)) for j in range(i + 1, len(tokens) + 1)
                 if any(t not in others for t in tokens[i:j])]
        found = sorted((pos, i - j) for i, j in spans if (pos := _written_at(tokens[i:j], words)) is not None)
        if found:
            at.append((found[0][0], -found[0][1], col.ident))
    if len(at) != 2:
        return None
    (first, first_len, first_col), (second, second_len, second_col) = sorted(at)
    between = words[first + first_len:second]
    if first + first_len > second or not _BETWEEN.search(" ".join(between)) or "not" in words[:second]:
        return None
    # the second arm follows the comparing word: "than on 10 mg", "compared with placebo", not "lower Sim than M0
    # … under similar Acc" (SciTab)
    last = max(i for i, w in enumerate(between) if _BETWEEN.fullmatch(w))
    if len(between) - last - 1 > 2 or any(w not in _LINKING for w in between[last + 1:]):
        return None
    # Not arms: a number after "than" is a bound ("more than 1 bronze"), and a phrase a row label writes names
    # that row ("minimizing DCE" over a DCE column)
    if any(w == "than" and nxt[:1].isdigit() for w, nxt in zip(words[first:], words[first + 1:])):
        return None
    labels = {t for r in range(1, typed.table.n_rows + 1) for t in _tokens(typed.text(r, label))} if label else set()
    if any(set(words[p:p + n]) <= labels for p, n in ((first, first_len), (second, second_len))):
        return None
    return first_col, second_col


def arms_compared(typed: TypedTable, text: str) -> tuple[str, str, str] | None:
    """(the first-named arm's column, the second's, "<" or ">") for two whole columns the text compares by
    direction alone ("more common on placebo than on the active drug"), or None: no such pair, or a multiple
    ("twice as common"), which a row filter cannot say."""
    arms = _whole_column_arms(typed, _tokens(text))
    compared = _stated_comparison(text) if arms is not None else None
    if arms is None or compared is None or compared[1] is not None:
        return None
    return arms[0], arms[1], compared[0]


def _stated_comparison(claim: str) -> tuple[str, float | None, float] | None:
    """(op, factor, relative tolerance) of the first group against the second, or None (section comment)."""
    m = _SCALED.search(claim)
    if m:
        factor = _VERB_FACTOR[m.group("verb").lower()]
        bound = (m.group("bound") or "").lower()
        if bound in _OVER:  # "more than halved": below half; "more than doubled": above twice
            return ("<" if factor < 1 else ">"), factor, 0.0
        if bound and bound not in _ROUGH:
            return None
        return "=", factor, ROUGH_MULTIPLE_TOLERANCE
    scale = stated_scale(claim)
    if scale is not None:
        factor, op, tolerance = scale
        return op, factor, tolerance
    lower, higher = bool(_LOWER.search(claim)), bool(_HIGHER.search(claim))
    if lower == higher:
        return None
    return ("<" if lower else ">"), None, 0.0


def read_arm_comparison(program: Program, typed: TypedTable, claim: str) -> Program:
    """``program`` read as the claim's comparison of two column groups within one row (section comment)."""
    label = typed.label_col
    if not label:
        return program
    arms = arm_columns(typed, claim, program.column)
    if arms is None:
        return program
    compared = _stated_comparison(claim)
    if compared is None:
        return program
    row = row_stated(typed, claim)
    if row is None:  # the claim names no one row: the one the program selects, if it selects one
        rows = selected_rows(program, typed) if program.filters else None
        row = rows[0] if rows is not None and len(rows) == 1 else None
    if row is None:
        return program
    name = typed.text(row, label).strip()
    if not name or len(name) > VALUE_MAX_CHARS:
        return program
    op, factor, tolerance = compared
    ident = typed.columns[label - 1].ident
    return Program(filters=[RowFilter(column=ident, op="=", value=name)], fn="value", column=arms[0],
                   check=Check(op=op, against="column", value=arms[1], factor=factor, relative_tolerance=tolerance,
                               by_share=by_share(typed, arms[0], arms[1], claim)))


# ======================================================================================================================
# Questions that compare two columns of each row: "Which sites missed their enrolment target?" keeps the rows where
# Enrolled < Target.
#
# Found as a new user, on a JSON export of trial sites: no program could say it (the grammar compares a column with
# a value), so two programs guessed a bound ("target < 35": no row), two took a difference of all five rows, and the
# one that ran named the site with the fewest enrolled (Graz; Lyon missed its target too). The question's form
# settles it:
#
# - a verb against "their/its/the" and a column the question names after it: "missed", "fell short of", "did not
#   meet/reach" keep the rows below it; "exceeded", "beat", "surpassed" above; "met", "reached", "hit" at or above;
#   "more/fewer … than their/its …" the comparison;
# - the other side is the one other numeric column the question names ("enrolment" names Enrolled), else the one
#   column on the same scale as the compared one while every other is far from it (a target of 55-80 patients is
#   met by Enrolled, 45-84, not by Dropouts, 3-11).
#
# Two columns that are arms of a trial ("Placebo (n=198)", "Active drug (n=1012)") are compared where the question
# names both with "than" between ("more common on placebo than on the active drug", tools._claim_changes), by the
# percentages their cells write when they write them (groups of different sizes, tools._table_shape.by_share).
#
# "Which …" lists the rows' names; "How many …" counts them; a yes/no question asks whether any row does. A program
# that reads neither column is replaced; anything less certain leaves the program as written.
# ======================================================================================================================

_OWN = r"\s+(?P<own>their|its|his|her|the)\s+(?P<b>[^?,.;]+)"
_BELOW = re.compile(r"\b(?:missed|miss|misses|fell\s+short\s+of|falls?\s+short\s+of|failed\s+to\s+(?:meet|reach|hit)|"
                    r"(?:did|do|does)\s+not\s+(?:meet|reach|hit)|didn't\s+(?:meet|reach|hit)|stayed\s+below|"
                    r"stayed\s+under)" + _OWN, re.I)
_ABOVE = re.compile(r"\b(?:exceeded|exceed|exceeds|beat|beats|surpassed|surpass|surpasses|overshot|went\s+over)"
                    + _OWN, re.I)
_AT_LEAST = re.compile(r"\b(?:met|meet|meets|reached|reach|reaches|hit|hits|achieved|achieve|achieves)" + _OWN, re.I)
_THAN_OWN = re.compile(r"\b(?P<word>more|fewer|less|higher|lower|greater|smaller|larger)\b[^?]*?\bthan\s+"
                       r"(?:their|its|his|her)\s+(?P<b>[^?,.;]+)", re.I)
_GREATER = {"more", "higher", "greater", "larger"}
_HOW_MANY = re.compile(r"^\s*how\s+many\b", re.I)


def _asked(question: str) -> tuple[str, str, bool] | None:
    """(op, the words naming the column compared with, whether a possessive makes it the row's own: "their
    target", not "the top 10") of the question, or None."""
    for pattern, op in ((_BELOW, "<"), (_ABOVE, ">"), (_AT_LEAST, ">=")):
        m = pattern.search(question)
        if m:
            return op, m.group("b"), m.group("own").lower() != "the"
    m = _THAN_OWN.search(question)
    if m:
        return (">" if m.group("word").lower() in _GREATER else "<"), m.group("b"), True
    return None


# "How many more Hungarians than Romanians …?", "how many positions above …": a difference, not rows counted
_DIFFERENCE = re.compile(r"^\s*how\s+(?:many|much)\s+(?:more|fewer|less|higher|lower|greater|larger|bigger|"
                         r"positions|places|points|spots|ranks)\b", re.I)


SAME_SCALE = 0.5  # |ln(median ratio)|: within a factor of about 1.6 of the target's median ...
OTHER_SCALE = 1.5  # ... while every other column is beyond a factor of about 4.5


def _same_scale(columns: list, against) -> list:
    """The one column whose values are on the scale of ``against``'s while the others' are far from it (a target
    of 55-80 patients is met by the enrolled 45-84, not the dropouts 3-11), or []."""
    base = [x for x in against.numbers if x is not None and x > 0]
    if not base:
        return []
    scale = {}
    for c in columns:
        xs = [x for x in c.numbers if x is not None and x > 0]
        if c is not against and xs:
            scale[c.ident] = abs(math.log(median_high(xs) / median_high(base)))
    near = [c for c in columns if scale.get(c.ident, math.inf) <= SAME_SCALE]
    if len(near) != 1:
        return []
    others_far = all(v >= OTHER_SCALE for ident, v in scale.items() if ident != near[0].ident)
    return near if others_far else []


def read_column_against(program: Program, typed: TypedTable, question: str) -> Program:
    """``program`` as the rows whose one named column stands to another as the question asks (section comment)."""
    label = typed.label_col
    if not label:
        return program
    name = typed.columns[label - 1].ident
    fn = "count" if program.fn == "count" or _HOW_MANY.match(question) else "value"
    years = than_years(typed, question)
    if years is not None:  # "more measles cases in 2024 than in 2023" (than_years)
        pair, op = years
        # a condition of the question's own ("with coverage below 90%") stays; the model's others go
        keep = [f for f in program.filters if f.column not in pair and f.column != name
                and f.column in typed.idents and column_named(typed.column(f.column).name, question)]
        return Program(filters=keep + [RowFilter(column=pair[0], op=op, value="", than_column=pair[1])],
                       fn=fn, column=name, answer_column=name)
    asked = _asked(question)
    if asked is None:
        # "Which adverse event was more common on placebo than on the active drug?": two arms, one column each
        arms = arms_compared(typed, question) if not _DIFFERENCE.match(question) else None
        if arms is None:
            return program
        first, second, op = arms
        return Program(filters=[RowFilter(column=first, op=op, value="", than_column=second,
                                          by_share=by_share(typed, first, second, question))],
                       fn=fn, column=name, answer_column=name)
    op, words, own = asked
    numeric = [c for c in typed.columns if c.numeric and c.index != label and not c.holds_years]
    against = [c for c in numeric if column_named(c.name, words)]
    if len(against) > 1:  # "their enrolment target": the head noun names it, "enrolment" the other side
        head = words.split()[-1] if words.split() else ""
        against = [c for c in against if column_named(c.name, head)]
    if len(against) != 1:
        return program
    measured = [c for c in numeric if c is not against[0] and column_named(c.name, question)]
    if not measured and own:  # "Which sites exceeded their target?": the one other column on the target's scale
        # (not for "the": "who was the first coach to reach the NCAA tournament?" named no measure, and the guess
        # compared Years with NCAA Tournament; WTQ's training split)
        measured = _same_scale(numeric, against[0])
    if len(measured) != 1:
        return program
    return Program(filters=[RowFilter(column=measured[0].ident, op=op, value="", than_column=against[0].ident)],
                   fn=fn, column=name, answer_column=name)


# ======================================================================================================================
# One row's values across a measure's year columns: "What was Nigeria's average coverage over 2019 to 2022?" over a
# wide table ("Country | 2019 | 2020 | 2021 | 2022") is the mean of Nigeria's four cells; "In which year was India's
# coverage highest?" names the column of its largest cell.
#
# Found as a new user over a WHO-style coverage table: the grammar aggregates a column over rows, so the five programs
# took the mean of one year's column over Nigeria's one row and answered 62 (2022) by 2 votes of 5 against 57, 56 and
# 57. The question's form settles it:
#
# - it asks for an average or mean, a total, the highest or the lowest value (or in which year that was);
# - it asks for no row ("which country …"), count ("how many …", "the number of …") or threshold ("at least 20%");
# - it names one row (all the words of its label) and the table has one measure whose columns are years
#   (tools._claim_changes's year groups: "2019" … "2022", or "Cases 2019" … "Cases 2022");
# - the years it names bound the columns ("from 2019 to 2021", "between 2020 and 2022"); none: every year of the
#   measure; years the table lacks: no reading.
#
# :func:`read_across_years` turns the model's program into that reading (an
# :class:`~tools._table_ops_model.AcrossColumns` grouping in the program's options, set by code only);
# :func:`tools._table_ops.execute_across` computes it over the one selected row, citing the cells it read.
# ======================================================================================================================

_AVERAGE = re.compile(r"\b(?:average|mean)\b", re.I)
_MEDIAN = re.compile(r"\bmedian\b", re.I)
_TOTAL = re.compile(r"\b(?:total|sum|combined|altogether|in\s+all)\b", re.I)
_HIGHEST = re.compile(r"\b(?:highest|maximum|peak|largest|greatest|most|best)\b", re.I)
_LOWEST = re.compile(r"\b(?:lowest|minimum|smallest|(?<!at )least|fewest|worst)\b", re.I)
# Not an aggregate of one row's cells: a row asked for ("which country …", "who …"), rows or years counted ("how many
# years …", "the total number of …"), or a threshold ("at least 20%", "below 2500"). Each seen on WTQ's training split.
_NOT_ACROSS = re.compile(r"\b(?:which|who|whom|whose)\b(?!\s+years?\b)|\bhow\s+many\b|\bnumber\s+of\b|"
                         r"\b(?:at\s+least|at\s+most|below|above|under|over|more\s+than|less\s+than|fewer\s+than|"
                         r"greater\s+than|exceed\w*)\s+\d", re.I)
_WHICH_YEAR = re.compile(r"\b(?:(?:in\s+)?(?:which|what)\s+years?|when)\b", re.I)
# a span of two years: the years as tools.lang.reading reads them, joined so, after an opening word or none
_SPAN_JOIN = re.compile(r"\s*(?:to|and|through|until|–|-|—)\s*", re.I)
_SPAN_OPENER = re.compile(r"\b(?:from|between|over|during|in)\s*$", re.I)


def _year_span(question: str) -> tuple[int, int, int, int] | None:
    """(first year, second year, start, end) of the first span of two years the question writes ("from 2019 to 2021",
    "2019-2022"), from its opening word if it has one; None for none."""
    years = read(question).year_list()
    for first, second in zip(years, years[1:]):
        if _SPAN_JOIN.fullmatch(question, first.end, second.start):
            opener = _SPAN_OPENER.search(question, 0, first.start)
            return first.value, second.value, opener.start() if opener else first.start, second.end
    return None


def _fn_asked(question: str) -> str | None:
    which_year = bool(_WHICH_YEAR.search(question))
    high, low = bool(_HIGHEST.search(question)), bool(_LOWEST.search(question))
    if high != low:
        return ("argmax" if high else "argmin") if which_year else ("max" if high else "min")
    if which_year or high:
        return None
    if _MEDIAN.search(question):
        return "median"
    if _AVERAGE.search(question):
        return "avg"
    if _TOTAL.search(question):
        return "sum"
    return None


def _columns_asked(group: dict[tuple[int, int], str], question: str) -> list[str] | None:
    """The group's columns in year order, within the span the question names; None when it names years the group
    lacks or one year alone (a single cell: no aggregate)."""
    years = sorted(group)
    span = _year_span(question)
    named = {y.value for y in read(question).year_list()}
    if span is not None:
        first, last = sorted(span[:2])
        chosen = [p for p in years if first <= p[0] <= last]
        if {first, last} - {p[0] for p in chosen}:
            return None
    elif named:
        return None
    else:
        chosen = years
    return [group[p] for p in chosen] if len(chosen) >= 2 else None


def read_across_years(program: Program, typed: TypedTable, question: str) -> Program:
    """``program`` as one row's aggregate across a measure's year columns, when the question asks for one (section
    comment); else unchanged."""
    span = _year_span(question)
    unspanned = question if span is None else question[:span[2]] + " " + question[span[3]:]
    fn = _fn_asked(question) if not _NOT_ACROSS.search(unspanned) else None  # "over 2019 to 2022" is no threshold
    label = typed.label_col
    if fn is None or not label or program.check is not None:
        return program
    groups = {stem: cols for stem, cols in year_groups(typed).items()
              if all(year > 0 and quarter == 0 for year, quarter in cols)}
    group = one_group(groups, question)
    if group is None or len(group) < 2:
        return program
    across = _columns_asked(group, question)
    row = row_stated(typed, read(question).without(read(question).year_list())) if across else None
    if row is None:
        return program
    name = typed.text(row, label).strip()
    if not name or len(name) > VALUE_MAX_CHARS or not set(content_words(name)) \
            or not set(content_words(name)) <= set(content_words(question)):
        return program  # the row named by all its words: "religious" does not name "Without religion"
    ident = typed.columns[label - 1].ident
    return Program(filters=[RowFilter(column=ident, op="=", value=name)], fn=fn, column=across[0],
                   answer_column=ident, options=Options(grouping=AcrossColumns(columns=across)))


# ======================================================================================================================
# A row named by its base name, when the model picked a variant of it: "our model" over the rows "Ours" and
# "Ours (w/o distill.)".
#
# Found as a new user, on a results table pasted from a paper: "Is it true that our model outperforms DistilBERT on
# every task …?" was written "Model = 'Ours (w/o distill.)'" by 3 of 5 programs, the ablation row, though the claim
# never mentions leaving anything out. When a row filter's value is another cell of its column plus a qualifier
# ("Ours" + " (w/o distill.)"), and the text writes none of the qualifier's words, the text names
# the base row: the filter becomes '=' that cell. Only a qualifier that leaves something out ("w/o", "without",
# "- attention", "(-RC)") is read so: "BERT-large" or "Dual2seq-Dep" is a system of its own. A qualifier the text
# writes ("the model without distillation") keeps the variant. The same holds for the row a check compares with.
# ======================================================================================================================

# A qualifier that leaves something out marks an ablation of the base row ("(w/o distill.)", "- attention",
# "without CRF"). Other variants are systems of their own: on SciTab's test replay, "Dual2seq-Dep" read as
# "Dual2seq" (the claim spoke of "the other systems") turned a right verdict wrong.
_ABLATION = re.compile(r"\bw/o\b|\bwithout\b|\bno\s|\bminus\b|\bablat|(?:\s|\()[-−–]\s*\w", re.I)
_SHORTEST_CHECKED = 2  # a one-letter part of a qualifier ("w/o" -> "w", "o") is read as punctuation


def _qualifier_written(extra: str, words: set[str]) -> bool:
    """Whether the text (``words``) writes a word of the qualifier ``extra``: the word itself, a longer form of it
    ("distill." -> "distillation"), or a shorter one of four letters or more. Not a word that only shares a
    stem: "distilbert" does not write "distill"."""
    for part in WORD.findall(extra):
        if len(part) < _SHORTEST_CHECKED:
            continue
        if part in words or any(w.startswith(part) or (len(w) >= 4 and part.startswith(w)) for w in words):
            return True
    return False


def base_cell(value: str, cells: list[str], text: str) -> str | None:
    """The cell of ``cells`` that ``value`` extends with a qualifier the text does not write, or None.

    The longest such cell wins ("Ours" over "O" for "Ours (w/o distill.)"); the value must go on past it at a
    word boundary ("BERT" for "BERT-large", not "Distil" for "DistilBERT").
    """
    want = norm_text(value)
    words = set(WORD.findall(norm_text(text)))
    best: str | None = None
    for cell in dict.fromkeys(c.strip() for c in cells):
        base = norm_text(cell)
        if not base or len(base) >= len(want) or not want.startswith(base) or want[len(base)].isalnum() \
                or not base[-1].isalnum():
            continue
        extra = want[len(base):]
        if not _ABLATION.search(extra) or _qualifier_written(extra, words):
            continue
        if best is None or len(base) > len(norm_text(best)):
            best = cell
    return best


def read_base_row(program: Program, typed: TypedTable, text: str) -> Program:
    """``program`` with each '=' filter on a text column, and a check against a named row, read as the base row
    when the text does not write the variant's qualifier (section comment)."""
    def to_base(f: RowFilter, values: list[str]) -> RowFilter | None:
        base = base_cell(f.value, values, text)
        return RowFilter(column=f.column, op="=", value=base) if base else None

    program = rewrite_text_filters(program, typed, "=", to_base)
    label = typed.label_col
    check = program.check
    if check is not None and check.against == "row" and label:
        base = base_cell(check.value, typed.table.column_values(label), text)
        if base:
            return program.model_copy(update={"check": check.model_copy(update={"value": base})})
    return program
