"""A row's value against the range its own row gives: "Glucose is within its reference range", "Potassium is above
the upper limit of its reference range", "Which results are below their reference range?".

Found as a new user over a TSV of lab results ("Result", "Reference range": "3.5–5.0"): no program compared a row's
value with its own range. "Glucose is within its reference range" (92 in 70–99) went to the model's judgement and was
refuted; "Which results are above their reference range?" listed every result; "Potassium is above the upper limit
…" was supported by "upper bound > lower bound" (1 of 5 programs).

The message's form settles it when it places something within, inside, in, outside, above, over, below or under a
range, interval or limits (with "the upper/lower limit of" naming one bound), and the table has one interval column
(tools._table_shape) and one other number column (or one the message names). A claim naming one row is
decided here, in code; a which/how-many question becomes a program filtering on the row's own bounds (the value
column against the bound columns, tools._claim_changes's "than_column"). "Outside" keeps a row below its lower
bound or above its upper (the filter's ``alternative``); a negation turns the placement round ("not within" is
outside, "not above" at most the bound).
"""

from __future__ import annotations

import re

from kb.table_model import Table
from tools._cells import TypedTable
from tools._claim_trend import TrendCheck
from tools._grounding import column_named, row_stated, yes_no_asked
from tools._intervals import bound_pairs
from tools._table_ops_model import VALUE_MAX_CHARS, Program, RowFilter
from tools._table_shape import interval_bounds, interval_columns

_PLACED = re.compile(
    r"(?:(?P<neg>\bnot\s+|n['’]t\s+))?\b(?P<pos>within|inside|in|outside|above|over|exceeds?|exceeding|higher than|"
    r"greater than|below|under|beneath|lower than|less than)\s+(?:the\s+)?(?:(?P<limit>upper|lower)\s+"
    r"(?:limit|bound|end)\s+of\s+)?(?:its|their|the|a)?\s*(?:[\w-]+\s+){0,2}?(?:ranges?|intervals?|limits)\b", re.I)
_ABOVE = {"above", "over", "exceed", "exceeds", "exceeding", "higher than", "greater than"}
_BELOW = {"below", "under", "beneath", "lower than", "less than"}
_WITHIN = {"within", "inside", "in"}


def _placement(text: str) -> tuple[str, str | None, bool] | None:
    """(within | outside | above | below, the limit named or None, negated) the text states, or None."""
    m = _PLACED.search(text or "")
    if m is None:
        return None
    pos = " ".join(m.group("pos").lower().split())
    side = "within" if pos in _WITHIN else "outside" if pos == "outside" else "above" if pos in _ABOVE else "below"
    return side, (m.group("limit") or "").lower() or None, bool(m.group("neg"))


def _holds(side: str, limit: str | None, value: float, lo: float, hi: float) -> bool:
    if side == "within":
        return lo <= value <= hi
    if side == "outside":
        return value < lo or value > hi
    if side == "above":
        return value > (lo if limit == "lower" else hi)
    return value < (hi if limit == "upper" else lo)


def _value_column(typed: TypedTable, skip: set[int], text: str) -> int | None:
    """The one number column besides the label and the intervals (or the one the text names among several)."""
    candidates = [c for c in typed.columns if c.numeric and c.index not in skip and c.index != typed.label_col]
    if len(candidates) > 1:
        candidates = [c for c in candidates if column_named(c.name, text)]
    return candidates[0].index if len(candidates) == 1 else None


def range_check(claim: str, table: Table) -> TrendCheck | None:
    """The verdict on a claim placing one row's value within, outside, above or below that row's range, or None
    (module docstring)."""
    placed = _placement(claim)
    if placed is None:
        return None
    intervals = interval_columns(table)
    if len(intervals) != 1:
        return None
    typed = TypedTable.build(table)
    value_col = _value_column(typed, set(intervals), claim)
    row = row_stated(typed, claim) if value_col is not None and typed.label_col else None
    if row is None:
        return None
    interval = intervals[0]
    value, bounds = typed.number(row, value_col), interval_bounds(typed.text(row, interval))
    if value is None or bounds is None:
        return None
    side, limit, negated = placed
    holds = _holds(side, limit, value, *bounds) != negated
    lo, hi = bounds
    where = ("within" if lo <= value <= hi else "above the upper bound" if value > hi else "below the lower bound")
    reason = (f"{typed.row_name(row)}'s {typed.columns[value_col - 1].name} is {typed.text(row, value_col).strip()} "
              f"and its {table.columns[interval - 1]} is {typed.text(row, interval).strip()}: {where}, so the table "
              f"{'supports' if holds else 'refutes'} the claim.")
    return TrendCheck("SUPPORTS" if holds else "REFUTES",
                      [(row, typed.label_col), (row, value_col), (row, interval)], reason)


def _bound_filters(value: str, lower: str, upper: str, side: str, limit: str | None,
                   negated: bool) -> list[RowFilter]:
    """The filters, all to hold, that keep a row whose ``value`` is placed against its own bounds as stated."""
    if side in ("within", "outside") and negated:  # "not within" is outside, "not outside" within
        side, negated = ("outside" if side == "within" else "within"), False
    if side == "within":
        return [RowFilter(column=value, op=">=", value="", than_column=lower),
                RowFilter(column=value, op="<=", value="", than_column=upper)]
    if side == "outside":
        return [RowFilter(column=value, op="<", value="", than_column=lower,
                          alternative=RowFilter(column=value, op=">", value="", than_column=upper))]
    if side == "above":  # "not above the upper limit": at most it
        bound = lower if limit == "lower" else upper
        return [RowFilter(column=value, op="<=" if negated else ">", value="", than_column=bound)]
    bound = upper if limit == "upper" else lower
    return [RowFilter(column=value, op=">=" if negated else "<", value="", than_column=bound)]


_WHICH_OR_HOW_MANY = re.compile(r"^\s*(?:which|what|who|list|name|how many)\b", re.I)


def read_range_question(program: Program, typed: TypedTable, question: str) -> Program:
    """"Which results are above their reference range?" as the rows whose value is above their own upper bound
    (within: at least the lower and at most the upper; "how many" counts them; "Is potassium within its reference
    range?" asks whether that row meets them: found as a new user, 5 of 5 programs counted Potassium's row and
    answered yes for 5.6 in 3.5–5.0). ``typed`` is the table with its intervals' bound columns
    (tools._table_shape)."""
    yes_no = yes_no_asked(question or "")
    placed = _placement(question) if _WHICH_OR_HOW_MANY.match(question or "") or yes_no else None
    pairs = bound_pairs(typed) if placed else []
    if not placed or len(pairs) != 1 or not typed.label_col:
        return program
    _, lower, upper = pairs[0]
    bound_cols = {typed.column(lower).index, typed.column(upper).index}
    interval_cols = {c.index for c in typed.columns if c.name == pairs[0][0].strip()} | bound_cols
    value_col = _value_column(typed, interval_cols, question)
    if value_col is None:
        return program
    value = typed.columns[value_col - 1].ident
    filters = _bound_filters(value, lower, upper, *placed)
    label = typed.columns[typed.label_col - 1].ident
    if yes_no:  # "Is potassium within its reference range?": whether the row it names meets its own bounds
        row = row_stated(typed, question)
        name = typed.text(row, typed.label_col).strip() if row else ""
        if not name or len(name) > VALUE_MAX_CHARS:
            return program
        return Program(filters=[RowFilter(column=label, op="=", value=name), *filters], fn="count", column=label)
    if program.fn == "count" or re.match(r"^\s*how many\b", question, re.I):
        return Program(filters=filters, fn="count", column=label)
    return Program(filters=filters, fn="value", column=label, answer_column=label)
