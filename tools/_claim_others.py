"""A row against the rest of its group combined: "Nigeria had more births than all the other African countries
combined."

Found as a new user over a table of measles vaccine coverage: 4 of 5 programs read it "rows where WHO region =
'Africa' → sum of Births; check: > Births of 'Nigeria'" — a sum that holds Nigeria itself, compared the wrong way
round. The verdict (supported) was right by chance, and its reason said the claim needs Africa's total to exceed
Nigeria's births, which the claim never said. The others are the group without the named row, and the claim's
comparative runs from the named row to them: "more than the others combined" is others' sum < the row's value.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable
from tools._table_checks import row_names
from tools._table_ops_model import Program, RowFilter

_OTHERS = re.compile(r"\b(?:(?P<up>more|greater|higher|larger|bigger)|(?P<down>fewer|less|lower|smaller))\b[^.;]*?"
                     r"\bthan\s+(?:all\s+)?(?:of\s+)?the\s+(?:other|rest|remaining)\b[^.;]*?\b(?:combined|together|"
                     r"put\s+together|in\s+total|added\s+up)\b", re.I)


def read_others_combined(program: Program, typed: TypedTable, claim: str) -> Program:
    """``program`` as "the others' sum, compared with the named row" where the claim sets a row against the rest
    of its group combined (module docstring); otherwise as written."""
    m = _OTHERS.search(claim)
    chk = program.check
    label = typed.label_col
    if m is None or program.fn != "sum" or chk is None or chk.against != "row" or not label:
        return program
    if not any(row_names(typed, r, chk.value) for r in range(1, typed.table.n_rows + 1)):
        return program
    ident = typed.columns[label - 1].ident
    filters = [f for f in program.filters if not (f.column == ident and f.op == "=" and f.value == chk.value)]
    if not any(f.column == ident and f.op == "!=" and f.value == chk.value for f in filters):
        filters.append(RowFilter(column=ident, op="!=", value=chk.value))
    op = "<" if m.group("up") else ">"
    return program.model_copy(update={"filters": filters, "check": chk.model_copy(update={"op": op})})
