"""A row sharing a value with a named row: "which nation won the same number of gold medals as hungary?" asks for
the other rows whose Gold equals Hungary's, not for Hungary.

The row filters the model writes compare a column with a value written in the program, never with another row's
value, so asked this, its programs select the named row itself ("Nation = 'Hungary'", then its Nation: the
question's own words) or every other row. Found on WikiTableQuestions' training split (the tuning split): every
sample of "which nation won the same number of gold medals as hungary?" answered Hungary, and of "matti yrjola had
the same distance recorded as who?" his own distance.

The question's form says what was meant: "the same <column> as <row>", one column named between "same" and "as"
(:func:`tools._grounding.same_as_row`) and one row stated after "as" (or before "same", when "as who /
which other …" asks for the rest). Code reads that row's value and selects the other rows holding it. Anything
less certain leaves the program as written.
"""

from __future__ import annotations

from dataclasses import replace

from tools._cells import TypedTable
from tools._grounding import asks_for_the_other_row, expected_answer, same_as_row
from tools._question_rules import places_by_order
from tools._table_ops_model import MAX_FILTERS, VALUE_MAX_CHARS, Execution, Program, RowFilter
from tools._table_shape import meets_filter, selects_only
from tools.lang.lexicon import is_superlative

# What a program may compute over the rows "the same … as" selects; sums, averages and extremes asked for stay.
SAME_AS_FNS = ("value", "count", "argmax", "argmin", "next_row", "previous_row")


def read_same_as_row(program: Program, typed: TypedTable, question: str) -> Program:
    """A value or count filtered on the row named after "the same … as" selects the other rows sharing its value;
    so does a largest or smallest over that row alone when the question asks for no extreme. A count, when the
    question asks which row, reads the rows' names instead, and so does the row after or before it when the
    question places nothing in the table's order.

    The filter that selects that row alone becomes its exclusion ("Nation != 'Hungary'", or kept, when written
    so), and the shared value is added ("Gold = 3"), in place of any value the program wrote for that column; with
    no filter naming the row, the row is left out by its name. A value of the shared column itself would only echo
    the shared value: its answer column is read instead, or the row's name.
    """
    if "same" not in question.casefold() or program.fn not in SAME_AS_FNS:
        return program
    found = same_as_row(typed, question)
    if found is None:
        return program
    row, col = found
    label = typed.columns[typed.label_col - 1].ident if typed.label_col else None
    read, fn = program.column, program.fn
    if fn in ("argmax", "argmin"):
        # "which team had the same points as latvia?" read as the team with the most points among Latvia's rows:
        # an extreme the question never asks for, over the named row alone, is that row's answer column (its
        # name when the answer column is the compared one: "VC of the row with the largest VC").
        if is_superlative(question):
            return program
        read, fn = _naming_column(program, program.column, label), "value"
    asks_which = expected_answer(question) == "name" or asks_for_the_other_row(question)
    if fn in ("next_row", "previous_row"):
        # "… the same city as which other orchestra?" read as the row listed after Manchester's: the question
        # places nothing in the table's order, so the neighbour was not asked (found as a new user); the column
        # it read from the neighbour says nothing of what was asked, so the rows' names are read
        if places_by_order(question) or not asks_which:
            return program
        read, fn = label, "value"
    if fn == "count" and asks_which:
        # "… the same city as which other orchestra?" counted: a count names no orchestra (found as a new user)
        read, fn = _naming_column(program, col.ident, label), "value"
    if fn == "value" and read == col.ident:
        # "matti yrjola had the same distance recorded as who?" read as Matti's Distance: the row's name was asked
        read = _naming_column(program, col.ident, label)
    if fn == "value" and read in (None, col.ident):
        return program
    written = typed.text(row, col.index).strip()
    naming = [f for f in program.filters if f.op in ("=", "!=", "contains") and f.column != col.ident
              and not typed.is_numeric(f.column) and selects_only(typed, f, row)]
    if len(written) > VALUE_MAX_CHARS or len(naming) > 1 or (program.fn in ("argmax", "argmin") and not naming):
        return program
    if naming:
        excluded = naming[0].model_copy(update={"op": "!="})
    elif label is not None and label != col.ident and len(name := typed.text(row, typed.label_col).strip()) <= \
            VALUE_MAX_CHARS:  # a name cut short would leave the row in
        excluded = RowFilter(column=label, op="!=", value=name)
    else:
        return program
    kept = [f for f in program.filters if f not in naming and f.column != col.ident]
    filters = kept + [RowFilter(column=col.ident, op="=", value=written), excluded]
    if len(filters) > MAX_FILTERS:
        return program
    return program.model_copy(update={"filters": filters, "column": read, "fn": fn})


def _naming_column(program: Program, besides: str, label: str | None) -> str | None:
    """What names the answer's rows: the program's answer column, unless it is ``besides`` (or unset), else the
    table's row names."""
    return program.answer_column if program.answer_column not in (None, "", besides) else label


def cite_shared_row(execution: Execution, program: Program, typed: TypedTable, question: str) -> Execution:
    """The shared value ("Gold = 3" for "the same number of gold medals as hungary") was read from the named row:
    its cell is cited, and the reason says whose value it is."""
    if "same" not in question.casefold() or (found := same_as_row(typed, question)) is None:
        return execution
    row, col = found
    shared = [f for f in program.filters if f.op == "=" and f.column == col.ident and meets_filter(typed, row, f)]
    if not shared:
        return execution
    cells = list(execution.cells)
    if (row, col.index) not in cells:
        cells.append((row, col.index))
    whose = typed.row_name(row)
    return replace(execution, cells=cells,
                   bounds=execution.bounds + [f"{col.name} = {shared[0].value}, as for {whose}"],
                   steps=execution.steps + [f"the value is the one {whose} has (R{row})"])
