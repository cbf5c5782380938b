"""What a range allows: "Can the adult dose of cephalexin be higher than 900 mg?" over a cell "250-1000".

Found as a new user over an antibiotics TSV whose "Adult dose (mg)" writes "500", "250 to 500" and "250-1000": the
column is text to a program, so every "Adult dose (mg) > 900" failed ("only numbers have an order") and the model's
own judgement answered. The column has bound columns (tools._table_shape), and "can", "could", "may" or "might"
ask what the range allows: some value of it is above 900 when its upper bound is, below when its lower bound is. So
an order on such a column, in a filter or in the check of the row's value, is read on the bound the words point to.

Without a modal word the text states a fact of the whole range ("the dose is higher than 900 mg"), which a range
that straddles the number neither supports nor refutes; such programs are left as written (they fail, and the
model's judgement answers as before).
"""

from __future__ import annotations

import re

from tools._interval_claims import bound_pairs
from tools._table_ops_model import Program

# "May" before a number or a capitalised "May" mid-sentence is a month ("in May 2014"); any other is a modal
_MODAL = re.compile(r"\b(?:[Cc]an|[Cc]ould|[Mm]ight|may|^May)\b(?!\s+\d)")
_UP, _DOWN = (">", ">="), ("<", "<=")


def asks_possibility(text: str) -> bool:
    """Does the text ask what is possible ("Can … be higher than …?", "could reach")?"""
    return _MODAL.search((text or "").strip()) is not None


def _bound(typed, ident: str, op: str, pairs: dict[str, tuple[str, str]]) -> str | None:
    """The bound column an order ``op`` on the range column ``ident`` reads: the upper for "above", the lower for
    "below"; None when ``ident`` is no range column of text (an estimate's column is read as its number)."""
    try:
        col = typed.column(ident)
    except KeyError:
        return None
    if col.numeric or col.name not in pairs:
        return None
    lower, upper = pairs[col.name]
    return upper if op in _UP else lower if op in _DOWN else None


def read_possible_bound(program: Program, typed, text: str) -> Program:
    """``program`` with each order on a range column of text read on the bound the text's "can" points to
    (module docstring); unchanged when the text asks no possibility or the table has no such column."""
    if not asks_possibility(text):
        return program
    pairs = {header: (lower, upper) for header, lower, upper in bound_pairs(typed)}
    if not pairs:
        return program
    filters, update = [], {}
    for f in program.filters:
        bound = _bound(typed, f.column, f.op, pairs) if f.than_column is None else None
        filters.append(f.model_copy(update={"column": bound}) if bound else f)
    if filters != program.filters:
        update["filters"] = filters
    chk = program.check
    if chk is not None and chk.against == "value" and program.fn == "value" \
            and (bound := _bound(typed, program.column, chk.op, pairs)):
        update["column"] = bound
    return program.model_copy(update=update) if update else program
