"""A claim about one row's value, read by a program that did not pick that row out: the claim names the row.

Found on PubHealthTab's tuning split (its eval split): "Septicemia has a 1.4% death rate" over a table of causes of
death ("(10) Septicemia | systemic infection | 1.4%", fifteen rows) was sampled three times of five as "all rows →
% ALL DEATHS; check: result = 1.4%". A value check over fifteen different cells reads no claim, so those programs
did not run, the vote was left to one filter on the number itself and one average, and the fallback judge refuted a
true claim. The claim says which row it is about; the program only forgot to filter on it.

When a value program with a check selects several rows holding different values in its column, and the claim
writes exactly one of those rows' text cells (whole, as words, or without its list number: "Septicemia" for
"(10) Septicemia"), a cell no other row holds in its column, the program gets that row as one more filter. Claims
that name two of the rows ("A has a higher rate than B") or none are left as written.

A check against another row ("… more than heart disease") reads the same way, the compared row aside, and so does
a largest or smallest value compared with another row in a claim that is no superlative: seen as a new user,
"Dementia killed more people than heart disease" was supported by "all rows → max of Deaths (2022) > Ischaemic
heart disease's", which says that some row exceeds heart disease, right only because dementia's row is the
largest. "COPD killed more than lung cancer" (27,300 against 28,100) was supported the same way; it names its row
whole and is now read over COPD's row. ("Dementia" names "Dementia and Alzheimer's" only in part, which this rule
does not read: a part may name several rows.)

A sum is read the same way unless the claim asks for a total ("in total", "combined", "together", "overall", "in all"):
found as a new user, "Stroke caused roughly 30,000 deaths in 2022" was refuted by two programs of five as "all rows
→ sum of Deaths (2022) = 30,000" (232,817 over six causes).
"""

from __future__ import annotations

import re

from tools._cells import TypedTable, norm_text, writes_whole
from tools._table_checks import row_names
from tools._table_ops import selected_rows
from tools._table_ops_model import MAX_FILTERS, Program, RowFilter
from tools.lang.lexicon import is_superlative

# Words that ask for a sum over several rows, so a sum over them is the claim's own reading.
# Not a bare "all": "Stroke accounts for 6.7% of all deaths" names one row's share.
_TOTAL_ASKED = re.compile(r"\b(?:total|totals|totalled|totaled|combined|together|altogether|overall|sum|summed|"
                          r"in all|all of them|cumulative|between them)\b", re.I)
# A list number before a row's name: "(10) Septicemia", "10. Septicemia", "10) Septicemia".
_LIST_NUMBER = re.compile(r"^\(?\d{1,3}[.)]\s+")


def _names(cell: str) -> list[str]:
    """The ways a claim may write a text cell: the cell, and the cell without its list number."""
    plain = norm_text(cell)
    return list(dict.fromkeys([plain, _LIST_NUMBER.sub("", plain)]))


def _usable(name: str) -> bool:
    return len(name) >= 3 and any(ch.isalpha() for ch in name)


def rows_named(typed: TypedTable, claim: str, among: list[int]) -> dict[int, int]:
    """Of the rows ``among``, those the claim names by a text cell no other row of the table holds in its column:
    {row: the column whose cell names it (the first such column)}."""
    said = norm_text(claim)
    named: dict[int, int] = {}
    for col in typed.columns:
        if col.numeric:
            continue
        names = {r: [n for n in _names(typed.text(r, col.index)) if _usable(n)]
                 for r in range(1, typed.table.n_rows + 1)}
        counts: dict[str, int] = {}
        for written in names.values():
            for n in set(written):
                counts[n] = counts.get(n, 0) + 1
        for r in among:
            if any(counts[n] == 1 and writes_whole(said, n) for n in names[r]):
                named.setdefault(r, col.index)
    return named


def read_named_value_row(program: Program, typed: TypedTable, claim: str) -> Program:
    """``program`` with a filter on the one row the claim names, when it checks a value over several rows holding
    different values (module docstring); otherwise as it is."""
    chk = program.check
    if chk is None or program.across or len(program.filters) >= MAX_FILTERS:
        return program
    against_row = chk.against == "row"
    if not (program.fn in ("value", "sum") and chk.against in ("value", "row")
            or program.fn in ("max", "min") and against_row and not is_superlative(claim)):
        return program
    if program.fn == "sum" and _TOTAL_ASKED.search(claim):
        return program
    try:
        c = typed.column(program.column).index
    except KeyError:
        return program
    rows = selected_rows(program, typed)
    if not rows or len(rows) < 2 or len({norm_text(typed.text(r, c)) for r in rows}) < 2:
        return program
    named = rows_named(typed, claim, rows)
    if against_row:  # the row the check compares with is the claim's other row, not the one it is about
        named = {r: col for r, col in named.items() if not row_names(typed, r, chk.value)}
    if len(named) != 1:
        return program
    [(row, col)] = named.items()
    if col == c:  # the claim writes the very cell checked: the check, not the row, states it
        return program
    if any(writes_whole(norm_text(chk.value), n) for n in _names(typed.text(row, col)) if _usable(n)):
        # "… contains 'Lyme disease arthritis'" checks the row's name in another column: a misread claim,
        # which a filter on that row would refute (PubHealthTab tuning split)
        return program
    name_filter = RowFilter(column=typed.columns[col - 1].ident, op="=", value=typed.text(row, col))
    return program.model_copy(update={"filters": [*program.filters, name_filter]})
