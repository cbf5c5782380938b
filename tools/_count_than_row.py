"""A count of the rows beyond a named row: "How many teams had more points than Sílex?" counts the teams whose
points exceed Sílex's, not Sílex's own row.

The row filters the model writes compare a column with a value written in the program, never with another row's
value, so asked this, every program it writes counts the named row (1) or every other row ("Team != 'Sílex'").
The question's form says what was meant: a count, a comparing word ("more", "fewer", "larger", …) before "than",
and after "than" a row (:func:`tools._grounding.row_compared_with`) that the program's filter selects.
Code reads the named row's value of the column the question
compares on, and counts the rows strictly beyond it. Found on WikiTableQuestions' training split (the tuning
split): every sample of "how many schools have a larger intake than sacred heart?" counted Sacred Heart's row.
"""

from __future__ import annotations

import re
from dataclasses import replace

from tools._cells import TypedTable, cell_number, format_value
from tools._grounding import COMPARED_WITH_ROW, GREATER_WORDS, bound_of_row, column_named, row_compared_with
from tools._table_ops_model import VALUE_MAX_CHARS, Execution, Program, RowFilter
from tools._table_shape import selects_only
from tools.lang.lexicon import RANK_HEADER

# "how many more points did X have than Y" asks for a difference (tools._question_rules), not a count.
_COUNT = re.compile(r"^\s*how many\s+(?!more\b|fewer\b|less\b)", re.I)
# "how many cities do not have lower populations than Valenza?" counts the rest, ties included: left as written.
_NEGATED = re.compile(r"\b(?:not|never|no)\b|n't\b", re.I)


def read_count_than_row(program: Program, typed: TypedTable, question: str) -> Program:
    """A count filtered on the row named after "more … than" counts the rows beyond that row's value.

    The compared column is the one column of numbers the question names before "than" (the words after the
    comparing word first: "more points", "a larger intake"); not a rank or place, whose "higher" is the smaller
    number. Anything less certain leaves the program as written.
    """
    counted, m, row = _count_form(typed, question)
    named = _filters_naming(program, typed, row)
    if len(named) != 1:
        return program
    before = question[counted.end():m.start()]
    compared = _compared_column(typed, m.group("noun")) or _compared_column(typed, before)
    bound = typed.number(row, compared.index) if compared is not None else None
    if bound is None:
        return program
    op = ">" if m.group("word").casefold() in GREATER_WORDS else "<"
    # As the cell writes it ("12675", not "12,675"), so that the reason quotes the table's own number.
    written = typed.text(row, compared.index).strip()
    value = written if cell_number(written) == bound and len(written) <= VALUE_MAX_CHARS else format_value(bound)
    beyond = RowFilter(column=compared.ident, op=op, value=value)
    filters = [beyond if f is named[0] else f for f in program.filters]
    return program.model_copy(update={"filters": filters})


def cite_compared_row(execution: Execution, program: Program, typed: TypedTable, question: str) -> Execution:
    """A bound that is the named row's value ("Beds > 310" for "more beds than Riverside General") was read from
    that row: its cell is cited, and the reason says whose value it is."""
    row = row_compared_with(typed, question)
    bounded = [f for f in program.filters if row is not None and bound_of_row(typed, f, row)]
    if not bounded:
        return execution
    cells, bounds = list(execution.cells), list(execution.bounds)
    for f in bounded:
        col = typed.column(f.column)
        if (row, col.index) not in cells:
            cells.append((row, col.index))
        bounds.append(f"{col.name} {f.op} {f.value}, {_possessive(typed.row_name(row))} {col.name}")
    return replace(execution, cells=cells, bounds=bounds,
                   steps=execution.steps + [f"the bound is {_possessive(typed.row_name(row))} value (R{row})"])


def _possessive(name: str) -> str:
    """"Riverside General's"; a name that already is one stays as it is ("Saint Anne's", found as a new user:
    "Saint Anne's's Nurses")."""
    if re.search(r"['’]s$|s['’]$", name):
        return name
    return name + ("'" if name.endswith("s") else "'s")


def counts_of_compared_row(programs: list[Program], typed: TypedTable, question: str) -> list[str]:
    """Why each program cannot answer a "how many … more … than <row>" question ('' for one that can).

    A count of the compared row itself (always 1), or of every other row, is no answer once another program
    compares a column with that row's value ("TD's > 12" for "more touchdowns than Anthony Hines", a column whose
    name the question does not say, so :func:`read_count_than_row` could not rewrite the counts). With no such
    program, nothing is withheld.
    """
    _, _, row = _count_form(typed, question)
    if row is None or not any(bound_of_row(typed, f, row) for p in programs for f in p.filters):
        return ["" for _ in programs]
    whys = []
    for p in programs:
        named = _filters_naming(p, typed, row)
        whys.append(f"it counts by {named[0].value!r}, the row the question compares with, not the rows beyond "
                    "its value" if named else "")
    return whys


def _count_form(typed: TypedTable, question: str) -> tuple[re.Match | None, re.Match | None, int | None]:
    """("how many", "more … than <row>", the row) of a count compared with a row; the row is None otherwise."""
    counted = _COUNT.match(question)
    m = COMPARED_WITH_ROW.search(question)
    if not counted or not m or _NEGATED.search(question[:m.start()]):
        return counted, m, None
    return counted, m, row_compared_with(typed, question)


def _filters_naming(program: Program, typed: TypedTable, row: int | None) -> list[RowFilter]:
    """A count's filters that select ``row`` alone ("Team = 'Sílex'"), or every other row ("Team != 'Sílex'")."""
    if row is None or program.fn != "count":
        return []
    return [f for f in program.filters if f.op in ("=", "!=", "contains") and not typed.is_numeric(f.column)
            and selects_only(typed, f, row)]


def _compared_column(typed: TypedTable, words: str):
    """The one column of numbers ``words`` name, not a rank or place; None when none or several."""
    found = [col for col in typed.columns
             if col.numeric and column_named(col.name, words) and not RANK_HEADER.search(col.name)]
    return found[0] if len(found) == 1 else None
