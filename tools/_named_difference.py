""""How many more patients per week does Riverbend see than Elm Park?" and "What is the difference in beds between
Surgery and the ICU?": the difference between the two rows the question names, in the column it names.

Found as a new user, after a question whose answer was the North district: four of five programs selected one
row (Riverbend, or the East district) for a difference that needs two, and the fifth took the two North clinics,
answering 340 (Northgate − Elm Park); Riverbend sees 400 more than Elm Park. The question's form settles it: the
row stated before "than" and the row stated after it, both named by their cells (:func:`row_stated`), and the
program's column when the question names it. Anything less certain leaves the program as written.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable
from tools._grounding import column_named, row_stated
from tools._table_ops_model import VALUE_MAX_CHARS, Program, RowFilter

_HOW_MANY_MORE = re.compile(
    r"^\s*how\s+(?:many|much)\s+(?:more|fewer|less|higher|lower|larger|smaller|bigger|greater)\b"
    r"(?P<first>.+?)\bthan\s+(?P<second>[^?]+?)\s*\??\s*$", re.I)
# "What is the difference in beds between Surgery and the ICU?" (found as a new user: no program ran, and the
# fallback answered from figures the table does not hold, "100 - 80 = 20 beds"; Surgery has 40, the ICU 16)
_DIFFERENCE_BETWEEN = re.compile(
    r"^\s*what\s+(?:is|was|'s)\s+the\s+difference\b(?P<measure>[^?]*?)\bbetween\s+(?P<first>.+?)\s+and\s+"
    r"(?P<second>[^?]+?)(?:\s+(?:in|for)\s+(?P<after>[^?]+?))?\s*\??\s*$", re.I)
_TOKEN = re.compile(r"[a-z0-9]+")
_READS_ONE_NUMBER = ("difference", "value", "sum", "max", "min")


def read_named_difference(program: Program, typed: TypedTable, question: str) -> Program:
    """The difference between the row stated before "than" and the row stated after it (module docstring)."""
    m = _HOW_MANY_MORE.search(question)
    measure = m.group("first") if m else ""
    if m is None and (m := _DIFFERENCE_BETWEEN.search(question)) is not None:
        measure = f"{m.group('measure')} {m.group('after') or ''}"
    label = typed.label_col
    if m is None or label is None or program.fn not in _READS_ONE_NUMBER or program.per_column \
            or program.minus_column:
        return program
    # the column the measure names with the most of its header's words ("DDD Q2" over "DDD Q1"); the program's
    # own when it is among the best
    said = set(_TOKEN.findall(measure.lower()))
    scores = {c.ident: len(set(_TOKEN.findall(c.name.lower())) & said) for c in typed.columns
              if c.numeric and c.index != label and column_named(c.name, measure)}
    top = max(scores.values(), default=None)
    best = [ident for ident, n in scores.items() if n == top]
    if program.column not in best:
        if len(best) != 1:
            return program
        program = program.model_copy(update={"column": best[0]})
    first, second = row_stated(typed, m.group("first")), row_stated(typed, m.group("second"))
    if first is None or second is None or first == second:
        return program
    names = [typed.text(r, label).strip() for r in (first, second)]
    if any(not name or len(name) > VALUE_MAX_CHARS for name in names) or names[0] == names[1]:
        return program
    ident = typed.columns[label - 1].ident
    return Program(filters=[RowFilter(column=ident, op="=", value=name) for name in names], fn="difference",
                   column=program.column)
