"""Claims that an interval includes or excludes a value: "The confidence interval for men included 1."

Found as a new user over a table of hazard ratios with 95% CIs: that claim was supported by "upper bound >= 1"
alone (2 of 5 programs), a check an interval of 1.10-1.50 would pass too. An interval holds a value when its lower
bound is at most the value and its upper bound at least it, two conditions on the bound columns of
:mod:`tools._table_shape`. A claim that names an interval (CI, confidence interval, range) and says it
includes (contains, crosses, spans) or excludes (does not include, …) a number, over a program whose filters keep
one row, is read as the count of that row's intervals holding the number: at least 1 for "includes", 0 for
"excludes".
"""

from __future__ import annotations

import re

from tools._cells import TypedTable, cell_number, format_value
from tools._table_ops import selected_rows
from tools._table_ops_model import MAX_FILTERS, Check, Program, RowFilter
from tools._table_shape import LOWER_BOUND, UPPER_BOUND

_NAMES_INTERVAL = re.compile(r"\b(?:CI|CIs|confidence|credible|interval|intervals|range)\b", re.I)
_HOLDS = re.compile(r"\b(?P<neg>(?:does|did|do)\s+not\s+|(?:doesn|didn|don)['’]t\s+)?"
                    r"(?P<verb>includ|contain|cross|span|overlap|exclud)\w*\s+(?:the\s+(?:value\s+|null\s+)?)?"
                    r"(?P<n>[-−]?\d+(?:\.\d+)?)(?!\.?\d)", re.I)
def bound_pairs(typed: TypedTable) -> list[tuple[str, str, str]]:
    """(interval header, lower bound ident, upper bound ident) for each interval column split into its bounds."""
    names = {col.name: col.ident for col in typed.columns}
    return [(name[: -len(LOWER_BOUND)], ident, names[name[: -len(LOWER_BOUND)] + UPPER_BOUND])
            for name, ident in names.items()
            if name.endswith(LOWER_BOUND) and name[: -len(LOWER_BOUND)] + UPPER_BOUND in names]


def interval_claim(claim: str) -> bool:
    """Whether the claim says an interval includes or excludes a number (its check's 0 or 1 is a count of rows)."""
    m = _HOLDS.search(claim or "")
    return m is not None and _NAMES_INTERVAL.search(claim[: m.start()]) is not None


def _holding(program: Program, typed: TypedTable, text: str) -> tuple[list[RowFilter], bool] | None:
    """The program's filters (but those on the bounds) with the interval's "holds N" conditions, and whether the
    text says "excludes"; None when the text says no such thing of one interval column of this table."""
    pairs = bound_pairs(typed)
    if not pairs or not interval_claim(text):
        return None
    m = _HOLDS.search(text)
    if len(pairs) > 1:
        named = [p for p in pairs if p[1] in (program.column, program.answer_column)
                 or p[2] in (program.column, program.answer_column)]
        if len(named) != 1:
            return None
        pairs = named
    _, lower, upper = pairs[0]
    number = cell_number(m.group("n").replace("−", "-"))
    # the model's own try at the condition goes too: an order on the estimate with the stated number ("Hazard ratio
    # > 1": found as a new user, it kept Diabetes alone of the four subgroups whose intervals hold 1)
    filters = [f for f in program.filters if f.column not in (lower, upper)
               and not (f.op in ("<", "<=", ">", ">=") and number is not None and cell_number(f.value) == number)]
    if number is None or len(filters) > MAX_FILTERS - 2:
        return None
    excludes = (m.group("verb").lower() == "exclud") != bool(m.group("neg"))
    # A closed interval holds its bounds: 0.83-1.00 holds 1 (found as a new user, EXSCEL's 0.91 (0.83-1.00) was
    # listed among the trials whose interval excluded 1). A filter's "<=" allows half a unit of the value as written
    # ("1" would let a lower bound of 1.4 hold it), so the value is written with the bounds' own decimals ("1.00"),
    # within which no other bound can lie.
    value = f"{number:.{_decimals(typed, lower, upper)}f}"
    return [*filters, RowFilter(column=lower, op="<=", value=value), RowFilter(column=upper, op=">=", value=value)], \
        excludes


def _decimals(typed: TypedTable, *idents: str) -> int:
    """The most decimals a cell of these columns writes (at least 1): "0.83" and "1.17" give 2."""
    cells = [typed.text(r, typed.column(i).index) for i in idents for r in range(1, typed.table.n_rows + 1)]
    return max([1, *(len(m.group(1)) for c in cells if (m := re.search(r"\.(\d+)", c)))])


_WHICH_OR_HOW_MANY = re.compile(r"^\s*(?:which|what|who|list|name|how many)\b", re.I)


def read_interval_question(program: Program, typed: TypedTable, question: str) -> Program:
    """"Which subgroups' confidence intervals include 1?" lists the rows whose bounds hold 1, and "how many …"
    counts them. Found as a new user: only claims were read so. "Exclude" asks for the other rows with an interval
    (:func:`_excluding`)."""
    label = typed.label_col
    read = _holding(program, typed, question) if _WHICH_OR_HOW_MANY.match(question or "") and label else None
    if read is None:
        return program
    filters, excludes = read
    if excludes:
        filters = _excluding(filters)
    ident = typed.columns[label - 1].ident
    if program.fn == "count":
        return program.model_copy(update={"filters": filters, "check": None, "nth": 1})
    return program.model_copy(update={"filters": filters, "fn": "value", "column": ident, "answer_column": ident,
                                      "check": None, "nth": 1, "per_column": None, "minus_column": None,
                                      "group": None})


def _excluding(holding: list[RowFilter]) -> list[RowFilter]:
    """Filters selecting the rows whose interval does not hold the value, from the filters of those that do (the
    program's own, then the two bound conditions): a lower bound above it or an upper bound below it. Found as a
    new user: "Which trials had a confidence interval that excluded 1?" was answered with the trial whose upper
    bound is largest. A row with no interval has neither bound, so it is not selected."""
    *scope, at_most, at_least = holding
    return [*scope, RowFilter(column=at_most.column, op=">", value=at_most.value,
                              alternative=RowFilter(column=at_least.column, op="<", value=at_least.value))]


def read_interval_inclusion(program: Program, typed: TypedTable, claim: str) -> Program:
    """The claim's "includes / excludes N" as the count of the selected row's intervals holding N (module
    docstring); any other program as written."""
    read = _holding(program, typed, claim)
    if read is None:
        return program
    holding, excludes = read
    row_only = program.model_copy(update={"filters": holding[:-2], "fn": "count", "check": None})
    if len(selected_rows(row_only, typed) or []) != 1:
        return program  # one row's interval: "the CI of the overall hazard ratio"
    check = Check(op="=", value="0") if excludes else Check(op=">=", value="1")
    return program.model_copy(update={"filters": holding, "fn": "count", "check": check, "nth": 1,
                                      "per_column": None, "minus_column": None})


def interval_notes(program: Program, typed: TypedTable, rows: list[int]) -> list[str]:
    """What a count of the intervals holding N found, row by row, for the reason: "Women's 95% CI is 0.52 to 0.99,
    which does not include 1". Without it the reason read "The number of rows is 0 (rows: Women)" (found as a new
    user), which says nothing about an interval. Empty for any other program."""
    if program.fn != "count":
        return []
    for header, lower, upper in bound_pairs(typed):
        below = next((f for f in program.filters if f.column == lower and f.op == "<="), None)
        above = next((f for f in program.filters if f.column == upper and f.op == ">="), None)
        value = cell_number(below.value) if below else None
        if below is None or above is None or value is None or cell_number(above.value) != value:
            continue
        lc, uc = typed.column(lower).index, typed.column(upper).index
        if not rows:  # none holds N: the rows the claim names, without the bounds' conditions
            named = [f for f in program.filters if f is not below and f is not above]
            rows = selected_rows(program.model_copy(update={"filters": named}), typed) or []
        notes = []
        for r in rows[:3]:
            a, b = typed.number(r, lc), typed.number(r, uc)
            if a is not None and b is not None:
                notes.append(f"{typed.row_name(r)}'s {header.strip()} is {format_value(a)} to {format_value(b)}, "
                             f"which {'includes' if a < value < b else 'does not include'} {format_value(value)}")
        return notes
    return []
