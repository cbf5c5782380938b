"""Values that recur over rows: "Which drugs were tested in more than one trial?" over a table of one row per trial.

Found as a new user over a trials XLSX: 3 of 5 programs read "more than one" as "Participants > 1" and listed every
drug, shown as computed. The number bounds how many rows (trials) hold the value, not a cell. When a "which/what
<noun>" question bounds a count of the table's own rows ("in more than one trial", "in at least 2 trials", "in
multiple trials") and the noun names one text column (Drug), the answer is every value of that column held by more
rows than that, among the rows the program's other filters keep; a filter that put the bound's number on a column
of numbers goes.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable, cell_number
from tools._frequency_rules import row_kinds
from tools._grounding import question_numbers
from tools._table_ops_model import Program
from tools.lang.lexicon import CARDINALS, content_words, related, singular

_ASKED = re.compile(r"^\s*(?:which|what)\s+(?P<noun>[^\W\d_]+)", re.I)
_NEGATION = re.compile(r"\b(?:not|never|no)\b|n't\b", re.I)  # "did not have more than one song …": the others
_NUMBER = r"\d+|" + "|".join(CARDINALS)
# the rows' noun may follow a word or two that qualify them: "in at least 2 phase III trials"
_OVER_ROWS = re.compile(rf"\b(?:(?P<more>more than|over)\s+(?P<n>{_NUMBER})|at least\s+(?P<least>{_NUMBER})|"
                        rf"(?P<several>multiple|several|two or more))\s+(?P<rows>[\w-]+(?:\s+[\w-]+){{0,2}})", re.I)


def _count(word: str) -> int | None:
    n = CARDINALS.get(word.casefold())
    if n is None:
        n = cell_number(word)
    return int(n) if n is not None and float(n).is_integer() else None


def rows_bound(typed: TypedTable, question: str) -> tuple[str, int, str] | None:
    """(the identifier of the column asked for, the count of rows a value must exceed, the bound's number as
    written) of "which <noun> … in more than N <rows>?", or None."""
    asked = _ASKED.match(question or "")
    found = _OVER_ROWS.search(question or "")
    kinds = row_kinds(typed.table)
    if asked is None or found is None or _NEGATION.search(question) \
            or not any(singular(w.casefold()) in kinds for w in found.group("rows").split()):
        return None
    if found.group("several"):
        more_than, written = 1, "1"  # "in multiple trials": the model writes its "> 1" on a column of numbers
    else:
        written = found.group("n") or found.group("least")
        n = _count(written)
        if n is None:
            return None
        more_than = n if found.group("n") else n - 1
    noun = singular(asked.group("noun").casefold())
    columns = [col for col in typed.columns if not col.numeric and col.index != typed.label_col
               and any(related(noun, w) for w in content_words(col.name))]
    if len(columns) != 1 or more_than < 0:
        return None
    return columns[0].ident, more_than, written


def read_rows_per_value(program: Program, typed: TypedTable, question: str) -> Program:
    """The values of the asked column held by more rows than the question's bound (module docstring); any other
    program as written."""
    bound = rows_bound(typed, question)
    if bound is None:
        return program
    column, more_than, written = bound
    # a filter on a column of numbers with the bound's number, or with one the question does not state, is the
    # bound misread as a cell's ("Participants > 1")
    n, stated = _count(written), question_numbers(question)
    kept = [f for f in program.filters if f.column != column and not (typed.is_numeric(f.column) and (
        (x := cell_number(f.value)) is None or x == n or round(abs(x), 6) not in stated))]
    return program.model_copy(update={"filters": kept, "fn": "most_common", "column": column,
                                      "answer_column": column, "more_rows_than": more_than, "check": None, "nth": 1,
                                      "per_column": None, "minus_column": None, "group": None, "across": []})
