"""Claims of a change between two columns or two rows: "Deaths in Kenya rose from 2019 to 2020".

Found as a new user over a table of deaths by country with a column per year: of five programs, one compared
Kenya's 2020 with its 2019; the others checked 2021 against a number nobody stated, compared Kenya with itself,
or counted rows ("Ghana fell between 2020 and 2021" got one refutation from "2020 <= 2021"). The claim's form
settles the program: the two things after "from … to" (or "between … and") are two columns or two rows, the
claim names the one row (or column) they belong to, and the verb says which way. So code writes it.

Without "from … to", a table with the one measure in two year columns settles it too. Found as a new user over
county measles cases with "Measles cases 2023" and "Measles cases 2024": "Measles cases rose in every county with
MMR coverage above 90%" was supported by "every one has Measles cases 2023 >= 0" (two of those counties fell, 3 to
0 and 7 to 4). The verb then compares the later year's column with the earlier one's, row by row; so does a
yes/no question's ("Did cases fall in Ashford?"), and "more cases in 2024 than in 2023" compares the two years it
names. Quarters ("DDD Q1", "DDD Q2") order like years.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable, text_words
from tools._claim_grounding import NEGATED_BEFORE, row_names_in, stated_direction
from tools._grounding import GREATER_WORDS, column_named
from tools._table_ops_model import MIRRORED_OPS, VALUE_MAX_CHARS, Check, Program, RowFilter
from tools._values import BOUND_OPS
from tools.lang.lexicon import change_pattern

_UP = change_pattern("up", "base", "third", "past", "participle", "noun")
_DOWN = change_pattern("down", "base", "third", "past", "participle", "noun")
_CHANGE = re.compile(
    r"\b(?:(?P<up>" + _UP + r")|(?P<down>" + _DOWN + r"))\b(?:\s+[^\s.;,]+){0,4}?\s+(?:from|between)\s+"
    r"(?:(?:the\s+)?(?:year\s+|years\s+)?)(?P<a>[^,;.]{1,40}?)\s+(?:to|and)\s+(?:the\s+)?(?P<b>[^,;.]{1,40}?)"
    r"\s*(?:[,;.?!]|$)", re.I)
# "more measles cases in 2024 than in 2023": one measure's columns of two years compared in each row
_THAN_YEAR = re.compile(r"\b(?P<word>more|fewer|less|higher|lower|greater|smaller|larger)\b[^?.;]*?\b(?:in\s+)?"
                        r"(?P<first>(?:19|20)\d\d|Q[1-4])\s+than\s+(?:in\s+)?(?P<second>(?:19|20)\d\d|Q[1-4])\b",
                        re.I)
# A period in a header: a year, a quarter ("DDD per 100 bed-days Q1"), or both ("Q1 2025")
_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)\b")
_QUARTER = re.compile(r"\bQ([1-4])\b", re.I)


def _period(text: str) -> tuple[int, int] | None:
    """(year, quarter) named in ``text``, 0 for a part it lacks; None for no period or more than one of a kind."""
    years, quarters = _YEAR.findall(text), _QUARTER.findall(text)
    if len(years) > 1 or len(quarters) > 1 or not (years or quarters):
        return None
    return (int(years[0]) if years else 0, int(quarters[0]) if quarters else 0)


_EVERY = re.compile(r"\b(?:every|each|all)\b", re.I)
_SOME = re.compile(r"\b(?:any|some|at\s+least\s+one|one\s+or\s+more)\b", re.I)


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
            stem = text_words(_QUARTER.sub(" ", _YEAR.sub(" ", col.name)))
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
    m = _THAN_YEAR.search(text)
    if m is None or NEGATED_BEFORE.search(text[:m.start()]):  # "did not have more …": left as written
        return None
    first, second = _period(m.group("first")), _period(m.group("second"))
    if first is None or second is None:
        return None
    pair = year_columns(typed, text, first, second)
    if pair is None:
        return None
    return pair, ">" if m.group("word").lower() in GREATER_WORDS else "<"


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
        return Program(filters=[_names(typed, rows[0])], fn="max", column=later, minus_column=earlier,
                       per_column=earlier, answer_column=program.answer_column,
                       check=Check(op=op, against="value", value=value))
    # an amount: the later minus the earlier for a rise, the earlier minus the later for a fall ("fell by 3")
    first, second = (later, earlier) if not m.group("down") else (earlier, later)
    return Program(filters=[_names(typed, rows[0])], fn="max", column=first, minus_column=second,
                   answer_column=program.answer_column, check=Check(op=op, against="value", value=value))


def read_change(program: Program, typed: TypedTable, claim: str) -> Program:
    """The program the claim's "rose/fell from A to B" states (module docstring); any other claim as written."""
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
    if not rows and _EVERY.search(claim):
        # "Every African country's coverage rose from 2022 to 2023": each selected row, by the model's filters
        # on other columns (found as a new user: "the number of African rows with 2022 != 0 > 0" supported it).
        filters = [f for f in program.filters if f.column not in (a_col, b_col)]
        return Program(filters=filters, fn="every", column=b_col, answer_column=program.answer_column,
                       check=Check(op=op, against="column", value=a_col))
    if not rows and _SOME.search(claim):
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
