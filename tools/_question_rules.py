"""Rules a table question's form settles, applied to each sampled program before and after it runs.

The small model writes programs that run but answer a nearby question. Where the question's form says what was
meant, code reads the program so (WikiTableQuestions' training split, the tuning split, showed each case):

- :func:`read_as_asked`: "which team has the most points?" written as "max of points" is the team that has it;
- :func:`read_position`: "the last design code on this chart" is a row's place in the table, not a maximum of
  a column the question never names;
- :func:`read_choice`: "which had more, A or B?" compares exactly the rows A and B;
- :func:`read_frequency`: "who won the most times?" counts rows per name, not the row with the most of a
  column the question never names;
- :func:`one_of_several`: a first/last question answered by a list is its first or last row;
- :func:`yes_or_no`: a yes/no question is answered by whether a row meets its filters.

Which programs then vote is decided in ``tools._table_program`` (answer kind, ``tools._question_grounding``).
"""

from __future__ import annotations

import re
from dataclasses import replace

from tools._answer_type import AnswerKind, position_asked
from tools._cells import TypedTable
from tools._question_grounding import alternatives, column_named
from tools._table_ops import MAX_FILTERS, VALUE_MAX_CHARS, Execution, Program, RowFilter, format_value


def read_as_asked(program: Program, typed: TypedTable, expected: AnswerKind | None) -> Program:
    """A which/who question's "max of points, answer column team" is the team of the row with the most points.

    The model names the answer column on every program; when the question asks for a name and that column holds
    names, a maximum or minimum of another column can only have been meant as the row that has it.
    """
    if expected != "name" or program.fn not in ("max", "min") or not program.answer_column \
            or program.answer_column == program.column:
        return program
    try:
        answer = typed.column(program.answer_column)
    except KeyError:
        return program
    if answer.numeric:
        return program
    return program.model_copy(update={"fn": "argmax" if program.fn == "max" else "argmin"})


def read_position(program: Program, typed: TypedTable, question: str) -> Program:
    """"What is the last design code on this chart?" asks for a row by its place in the table, not by a measure.

    A largest or smallest value of a column the question does not name answers some other question; the
    program's answer column, listed in table order, is what was asked (:func:`one_of_several` then takes the
    first or the last row).
    """
    if program.fn not in ("max", "min", "argmax", "argmin") or position_asked(question) is None:
        return program
    try:
        measured = typed.column(program.column).name
    except KeyError:
        return program
    if column_named(measured, question):
        return program
    answer = program.answer_column if program.fn in ("argmax", "argmin") and program.answer_column else program.column
    return program.model_copy(update={"fn": "value", "column": answer})


def read_choice(program: Program, typed: TypedTable, question: str) -> Program:
    """"Which had a higher share in 1900, Jewish or Roman Catholic?" compares the two rows the question names.

    The model often filters on one of them only, so its largest value is that row's by construction (seen on
    WTQ's training split). A largest or smallest value, asked with two cells of one column on either side of
    "or", is taken over exactly those two rows, and names the one that has it.
    """
    if program.fn not in ("max", "min", "argmax", "argmin"):
        return program
    choice = alternatives(question, typed)
    if choice is None:
        return program
    column, values = choice
    others = [f for f in program.filters if f.column != column][:MAX_FILTERS - 2]
    pair = [RowFilter(column=column, op="=", value=v[:VALUE_MAX_CHARS]) for v in values]
    return program.model_copy(update={"filters": others + pair, "answer_column": column,
                                      "fn": "argmin" if program.fn in ("min", "argmin") else "argmax"})


_FREQUENCY = re.compile(r"\bmost (?:times|often|frequent(?:ly)?|common(?:ly)?)\b|\b(?:appears?|occurs?|listed) "
                        r"(?:the )?most\b", re.I)


def read_frequency(program: Program, typed: TypedTable, question: str) -> Program:
    """"Who won the most times?" asks which name occurs in most rows (found as a new user: the programs took the
    winner of the row with the most finishers, right by chance). A largest value of a column the question does
    not name becomes the most common value of the program's answer column."""
    if program.fn not in ("max", "argmax") or not _FREQUENCY.search(question):
        return program
    try:
        measured = typed.column(program.column).name
    except KeyError:
        return program
    if column_named(measured, question):
        return program
    answer = program.answer_column if program.fn == "argmax" and program.answer_column else program.column
    return program.model_copy(update={"fn": "most_common", "column": answer, "filters": program.filters})


def yes_or_no(ex: Execution) -> Execution:
    """A yes/no question's count read as its answer: yes when a row meets the filters, else no."""
    answer, n = ("yes" if ex.selected else "no"), len(ex.selected)
    return replace(ex, result=answer, result_text=answer,
                   steps=ex.steps + [f"{n} row{' meets' if n == 1 else 's meet'} the question's conditions: {answer}"])


def one_of_several(ex: Execution, position: str | None) -> Execution:
    """A first/last question's answer listed over several rows: the first or last of them, in table order."""
    if position is None or not isinstance(ex.result, list) or len(ex.result) < 2 or ex.truth is not None:
        return ex
    i = 0 if position == "first" else -1
    row = ex.decisive_rows[i]
    cols = list(dict.fromkeys(c for _, c in ex.cells))  # the cells of every listed row may exceed the cap
    return replace(ex, result=ex.result[i], result_text=format_value(ex.result[i]), decisive_rows=[row],
                   cells=[(row, c) for c in cols],
                   steps=ex.steps + [f"the {position} of the {len(ex.result)} rows, in the table's order: R{row}"])
