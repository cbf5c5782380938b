"""Questions of frequency: "Who won the most times?", "Which adverse event was most frequent on placebo?".

"Most frequent" means two things, and the table's form says which:

- :func:`read_frequency`: over rows that repeat a name (one row per race), the name in most rows. A largest
  value of a column the question does not name becomes the most common value of the answer column;
- :func:`read_frequency_of_measure`: over rows that each name a different thing (one row per adverse event, a
  count per arm), the row whose count in the column the question names is the largest. A most common value is
  no answer there: every name occurs once, so all of them tie.
"""

from __future__ import annotations

import re

from kb.tables import Table
from tools._cells import TypedTable
from tools._grounding import column_named, named_words
from tools._table_ops_model import Program
from tools.lang.lexicon import singular

FREQUENCY = re.compile(r"\bmost (?:times|often|frequent(?:ly)?|common(?:ly)?)\b|\b(?:appears?|occurs?|listed) "
                       r"(?:the )?most\b", re.I)
_MOST_NOUN = re.compile(r"\b(?:the\s+)?most\s+([^\W\d_]{3,})\b", re.I)


def most_rows_asked(question: str, typed: TypedTable) -> bool:
    """"Which drug was tested in the most trials?" over a table whose rows are trials (its row-label column is
    "Trial", or it is named "trials"): the most of the rows themselves, a count of rows per drug."""
    found = _MOST_NOUN.search(question)
    if found is None:
        return False
    return singular(found.group(1).casefold()) in row_kinds(typed.table)


def row_kinds(table: Table) -> set[str]:
    """What one row of the table is, in the singular: the last word of the table's name ("trials") and of its
    row-label header ("Trial")."""
    label = table.row_label_col
    kinds = {singular(w) for w in re.findall(r"[^\W\d_]+", table.name.casefold())[-1:]}
    if label is not None:
        kinds |= {singular(w) for w in re.findall(r"[^\W\d_]+", table.columns[label - 1].casefold())[-1:]}
    return kinds


def read_frequency(program: Program, typed: TypedTable, question: str) -> Program:
    """"Who won the most times?" asks which name occurs in most rows (found as a new user: the programs took the
    winner of the row with the most finishers, right by chance). A largest value of a column the question does
    not name becomes the most common value of the program's answer column. So does "the most <rows>" ("Which drug
    was tested in the most trials?" over a table of trials, found as a new user: the drug of the largest trial won,
    3 of 5 programs)."""
    if program.fn not in ("max", "argmax") or not (FREQUENCY.search(question) or most_rows_asked(question, typed)):
        return program
    try:
        measured = typed.column(program.column).name
    except KeyError:
        return program
    if column_named(measured, question):
        return program
    answer = program.answer_column if program.fn == "argmax" and program.answer_column else program.column
    return program.model_copy(update={"fn": "most_common", "column": answer, "filters": program.filters})


def _all_distinct(typed: TypedTable, index: int) -> bool:
    """Whether the column's non-empty cells all differ (so no value occurs more often than another)."""
    cells = [typed.text(r, index).strip().casefold() for r in range(1, typed.table.n_rows + 1)]
    cells = [c for c in cells if c]
    return len(cells) > 1 and len(set(cells)) == len(cells)


def read_frequency_of_measure(program: Program, typed: TypedTable, question: str) -> Program:
    """"Which adverse event was most frequent on placebo?" over one row per adverse event: the row with the most
    cases in the one number column the question names ("Placebo (n=412)"), not the most common event name.

    Found as a new user over an adverse-event table (counts per arm): three of five programs took the most common
    name, which ties all six rows, and the answer was "Any serious adverse event" (Headache has the most cases).
    Read so only when the answer column names each row once and exactly one number column is named (a dose's
    number names its arm: "on 20 mg" is "Drug 20 mg (n=415)").
    """
    if program.fn != "most_common" or not FREQUENCY.search(question):
        return program
    try:
        answer = typed.column(program.column)
    except KeyError:
        return program
    if answer.numeric or not _all_distinct(typed, answer.index):
        return program
    named = [col for col in typed.columns
             if col.numeric and col.index != answer.index and named_words(col.name, question, short_numbers=True)]
    if len(named) != 1:
        return program
    return program.model_copy(update={"fn": "argmax", "column": named[0].ident, "answer_column": answer.ident})
