"""The top few rows: "Which three trials had the most participants?", "the top 5 countries by cases".

Found as a new user over a JSON of trials: the question was answered with ALPHA alone (one program of five ran,
the row with the most participants). The grammar's extremes take one row (or the nth); "three … the most" asks for
the three rows with the largest values. The question's form settles it: the extreme the model wrote over some
column becomes the rows whose value is at least the third largest (ties kept), their answer column listed.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable, format_value
from tools._table_ops import selected_rows
from tools._table_ops_model import Program, RowFilter
from tools.lang.lexicon import CARDINALS

_TOP = re.compile(r"^\s*(?:which|what|name|list|show|give\s+me)\s+(?:are\s+)?(?:the\s+)?(?:top\s+)?"
                  r"(?P<n>\d+|two|three|four|five|six|seven|eight|nine|ten)\s+[^\W\d_][\w-]*\b[^?]*?"
                  r"\b(?P<word>most|largest|highest|biggest|greatest|fewest|least|lowest|smallest)\b|"
                  r"^\s*(?:which|what|name|list|show|give\s+me)\s+(?:are\s+|were\s+)?(?:the\s+)?top\s+"
                  r"(?P<n2>\d+|two|three|four|five|six|seven|eight|nine|ten)\b", re.I)
# (at the start only: "which album was the first to peak in the top ten positions?" asks for a chart position)
_LOW = {"fewest", "least", "lowest", "smallest"}
MAX_TOP = 20


def top_asked(question: str) -> tuple[int, bool] | None:
    """(n, largest): how many rows the question asks for and from which end, or None."""
    m = _TOP.search(question)
    if m is None:
        return None
    text = (m.group("n") or m.group("n2")).lower()
    n = int(text) if text.isdigit() else int(CARDINALS[text])
    return (n, not (m.group("word") and m.group("word").lower() in _LOW)) if 2 <= n <= MAX_TOP else None


def _measure(program: Program, typed: TypedTable) -> str | None:
    """The column of numbers the program ranks by: an extreme's (or a most-common's) column, or the column a
    threshold filter of a listing bounds ("rows where participants >= 800 -> trial", the model's guess at the
    cut-off); None when it ranks by none."""
    if program.fn in ("argmax", "argmin", "max", "min", "most_common") and typed.is_numeric(program.column) \
            and not program.per_column and not program.minus_column:
        return program.column
    bounded = {f.column for f in program.filters if f.op in ("<", "<=", ">", ">=", "=") and typed.is_numeric(f.column)}
    listing = program.fn == "value" or (program.fn == "most_common" and not typed.is_numeric(program.column))
    return bounded.pop() if listing and len(bounded) == 1 else None


def read_top_rows(program: Program, typed: TypedTable, question: str) -> Program:
    """The rows among the ``n`` largest (smallest) of the column the program ranks by (module docstring), the
    model's own filters on that column dropped (its guesses at the cut-off); any other program as written."""
    asked = top_asked(question)
    if asked is None or not typed.label_col:
        return program
    measure = _measure(program, typed)
    if measure is None:
        return program
    n, largest = asked
    keep = [f for f in program.filters if f.column != measure]
    rows = selected_rows(Program(filters=keep, fn="count", column=measure), typed)
    if rows is None:
        return program
    c = typed.column(measure).index
    values = sorted((x for r in rows if (x := typed.number(r, c)) is not None), reverse=largest)
    if not values:
        return program
    label = typed.columns[typed.label_col - 1].ident
    named = program.column if program.fn in ("value", "most_common") else program.answer_column
    answer = named if named and named != measure else label
    # n rows or fewer to choose from: every one of them is among the top n
    cut = [] if len(values) <= n else [RowFilter(column=measure, op=">=" if largest else "<=",
                                                 value=format_value(values[n - 1]))]
    return Program(filters=[*keep, *cut], fn="value", column=answer, answer_column=answer)
