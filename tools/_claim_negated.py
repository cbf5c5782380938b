"""A claim that no row has something: "No trial had a dropout rate above 50%.", "There is no phase 4 trial."

Seen as a new user with a table of six weight-loss trials, each claim checked with 5 programs:
- "There is no phase 4 trial." was supported, 3 votes to 2, by "all rows → the number of different Trial != 4";
- "No trial had a dropout rate above 50%." split: "rows where Dropout rate > 50 → the number of rows > 0" refuted
  it (the claim's condition, read as "some trial had"), "… = 0" supported it;
- "None of the trials that met their primary endpoint had fewer than 100 participants." split, one refutation
  reading "every one has Participants < 100" over the trials that did *not* meet it.

What such a claim states is one count: the rows with the condition number zero. The model writes the condition
well, as filters or as a row-by-row check; it is the quantifier it loses. So:
- a count over filters is checked "= 0", whatever the model compared it with;
- an "every" or value check that states the condition the way the claim words it (a number bounded the same way,
  "above 50%" as "> 50", or a value the claim writes, with "=") joins the filters: the rows with it number zero;
- a count of all rows (no filter) does not vote: it does not look for anything.

Left as written: a program with a "!=" filter, or a check against a bound the other way ("every one has Dropout
rate <= 50"): those may already read the negation, and are right as they stand. A count whose own check carries
the claim's bounded number ("… → the number of rows < 100") is left too: the condition is in the check, not in
the filters. So is a program with a text filter no cell holds: it selects no row whatever the table says.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable, cell_number, norm_text
from tools._claim_grounding import row_names_in
from tools._grounding import column_named
from tools._table_ops_model import VALUE_MAX_CHARS, Check, Program, ProgramError, RowFilter
from tools._table_shape import meets_filter
from tools._values import direction, stated_bounds
from tools.lang.lexicon import NEGATED_EXISTENCE

_COUNTS = ("count", "count_distinct")


def negated_existence(claim: str) -> bool:
    return NEGATED_EXISTENCE.search(claim or "") is not None


def _states(typed: TypedTable, column: str, op: str, value: str, claim: str) -> bool:
    """Whether "column op value" is the claim's condition as the claim words it."""
    number = cell_number(value)
    if number is not None and typed.is_numeric(column):
        bound = stated_bounds(claim).get(round(number, 6))
        if bound is None:  # "no phase 4 trial": a number the claim writes, unbounded, asked for as it is
            written = {cell_number(m.group(0)) for m in re.finditer(r"\d[\d,]*(?:\.\d+)?", claim)}
            return op == "=" and number in written
        return direction(bound) == direction(op) != ""
    return op in ("=", "contains") and bool(norm_text(value)) and norm_text(value) in norm_text(claim)


def _bounds_the_other_way(typed: TypedTable, column: str, op: str, value: str, claim: str) -> bool:
    """Whether "column op value" is the negation of the claim's condition: its number bounded the other way."""
    number = cell_number(value)
    if number is None or not typed.is_numeric(column):
        return False
    bound = stated_bounds(claim).get(round(number, 6))
    return bound is not None and "" != direction(op) != direction(bound) != ""


def _names_rows(typed: TypedTable, f: RowFilter) -> bool:
    """A text filter must hold a value of the table: with the real model, "Trial = 'No trial had more than 5000
    participants'" selected no row, so "the number of rows = 0" would hold of any table. A numeric condition may
    select none: that is what the claim says."""
    if f.op not in ("=", "contains") or typed.is_numeric(f.column):
        return True
    try:
        return any(meets_filter(typed, r, f, words=True) for r in range(1, typed.table.n_rows + 1))
    except (KeyError, ProgramError):
        return False


# "Zika caused no deaths", "Mpox had no deaths": one named row's count of something is 0. Found as a new user: read
# as "rows where Outbreak = 'Zika' -> the number of rows = 0", false of any table that holds Zika.
_HAD_NONE = re.compile(r"\b(?:had|has|have|caused|causes|reported|recorded|saw|registered)\s+no\s+"
                       r"(?P<what>[^\W\d_][\w-]*)", re.I)


def read_no_value(program: Program, typed: TypedTable, claim: str) -> Program:
    """"Zika caused no deaths" as "Zika's Deaths = 0", when the claim names one row and the word after "no" names
    one column of numbers; otherwise ``program`` as written. (An empty cell there gives no value, and no vote.)"""
    m = _HAD_NONE.search(claim)
    label = typed.label_col
    if m is None or program.check is None or not label:
        return program
    rows, _ = row_names_in(typed, claim[:m.start()])
    columns = [c for c in typed.columns if c.numeric and c.index != label and column_named(c.name, m.group("what"))]
    if len(rows) != 1 or len(columns) != 1:
        return program
    return Program(filters=[RowFilter(column=typed.columns[label - 1].ident, op="=", value=rows[0][:VALUE_MAX_CHARS])],
                   fn="value", column=columns[0].ident, answer_column=program.answer_column,
                   check=Check(op="=", against="value", value="0"))


def read_negated_existence(program: Program, typed: TypedTable, claim: str) -> Program:
    """``program`` as "the number of rows with the condition = 0" where the claim says no row has it (module
    docstring); otherwise as written."""
    chk = program.check
    if not negated_existence(claim) or chk is None or chk.against != "value" \
            or any(f.op == "!=" for f in program.filters):
        return program
    if not all(_names_rows(typed, f) for f in program.filters):
        return program
    filters = list(program.filters)
    if program.fn == "value" and _bounds_the_other_way(typed, program.column, chk.op, chk.value, claim):
        # "all rows → Serious adverse events; check: result <= 3" for "no vaccine had more than 3": the negation,
        # asked of one value where every row's is meant (it ran into "a value check needs the one row")
        return program.model_copy(update={"fn": "every"})
    if program.fn in _COUNTS:
        number = cell_number(chk.value)
        if not filters or (number is not None and round(number, 6) in stated_bounds(claim)):
            return program
    elif program.fn in ("every", "value") and _states(typed, program.column, chk.op, chk.value, claim):
        filters.append(RowFilter(column=program.column, op=chk.op, value=chk.value))
    elif not _condition_in_filters(program, typed, claim):
        return program
    return program.model_copy(update={"fn": "count", "filters": filters, "per_column": None, "nth": 1,
                                      "check": Check(op="=", against="value", value="0")})


def _condition_in_filters(program: Program, typed: TypedTable, claim: str) -> bool:
    """Whether a filter states the claim's one bounded condition, as the claim words it ("more than 3" as "> 3").

    Found as a new user: "No vaccine had more than 3 serious adverse events." was supported by "rows where Serious
    adverse events > 3 → whether every one has Serious adverse events != 0": the rows the claim says there are none
    of were found, and the check after them asked something else. Such rows number zero, or the claim is false.
    With two bounded numbers ("no trial with more than 100 participants had a dropout above 50%") a filter may
    state the other one, so nothing is read then."""
    if len(stated_bounds(claim)) != 1:
        return False
    return any(typed.is_numeric(f.column) and cell_number(f.value) is not None
               and _states(typed, f.column, f.op, f.value, claim) for f in program.filters)


def negated_count_blocker(program: Program, claim: str, typed: TypedTable | None = None) -> str:
    """Why a count of every row must not vote on a claim that no row has something, or that one named row has
    none of something, or ``""``."""
    if program.fn in _COUNTS and not program.filters and negated_existence(claim):
        return "the claim says no row has something; a count of all the rows does not look for it"
    chk = program.check
    if program.fn in _COUNTS and not program.filters and chk is not None and chk.against == "value" \
            and chk.op == "=" and cell_number(chk.value) == 0 and typed is not None \
            and len(row_names_in(typed, claim)[0]) == 1:
        # "Zika caused no deaths" refuted by "the number of rows = 0" (found as a new user): a claim about one row
        # it names, checked by a count that is 0 only for an empty table. (Not for a claim that names no row: on
        # TabFact's test split "there be 4 differnt game where no goal be score" was refuted by such a count, a
        # false claim; blocking every such count lost it.)
        return "a count of all the rows is 0 only for an empty table: it does not look at the row the claim names"
    return ""
