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

from tools._cells import TypedTable, text_words
from tools._claim_grounding import row_names_in
from tools._table_checks import row_names
from tools._table_ops import selected_rows
from tools._table_ops_model import VALUE_MAX_CHARS, Check, Program, RowFilter

# "than all the other countries", and "than all other regions" too (found as a new user: without "the" the programs
# compared the North with the South alone and supported "The North had more deaths than all other regions combined")
_OTHERS = re.compile(r"\b(?:(?P<up>more|greater|higher|larger|bigger)|(?P<down>fewer|less|lower|smaller))\b[^.;]*?"
                     r"\bthan\s+(?:(?:all\s+)?(?:of\s+)?the\s+(?:other|rest|remaining)|all\s+(?:other|remaining))\b"
                     r"[^.;]*?\b(?:combined|together|put\s+together|in\s+total|added\s+up)\b", re.I)


def read_others_combined(program: Program, typed: TypedTable, claim: str) -> Program:
    """``program`` as "the others' sum, compared with the named row" where the claim sets a row against the rest
    of its group combined (module docstring); otherwise as written."""
    m = _OTHERS.search(claim)
    chk = program.check
    label = typed.label_col
    if m is None or chk is None or not label:
        return program
    if program.fn != "sum" or chk.against != "row" \
            or not any(row_names(typed, r, chk.value) for r in range(1, typed.table.n_rows + 1)) \
            or [text_words(n) for n in row_names_in(typed, claim[:m.start()])[0][:1]] != [text_words(chk.value)]:
        # the model compared the named row with one other row, or the sum the wrong way: written from the claim
        return _named_row_against_the_rest(program, typed, claim, m)
    ident = typed.columns[label - 1].ident
    filters = [f for f in program.filters if not (f.column == ident and f.op == "=" and f.value == chk.value)]
    if not any(f.column == ident and f.op == "!=" and f.value == chk.value for f in filters):
        filters.append(RowFilter(column=ident, op="!=", value=chk.value))
    op = "<" if m.group("up") else ">"
    return program.model_copy(update={"filters": filters, "check": chk.model_copy(update={"op": op})})


def _named_row_against_the_rest(program: Program, typed: TypedTable, claim: str, m: re.Match) -> Program:
    """"The North had more deaths than all other regions combined": the sum of the column the program reads over
    the rows but the one the claim names before its comparison, checked against that row; the program as written
    when the claim names no one row there or the column holds no numbers."""
    subjects, _ = row_names_in(typed, claim[:m.start()])
    try:
        numeric = typed.column(program.column).numeric
    except KeyError:
        return program
    ident = typed.columns[typed.label_col - 1].ident
    keep = [f for f in program.filters if f.column != ident]  # a group the claim names stays ("African countries")
    if not subjects:
        # "Cholera in Haiti killed more …" names no row as the table writes it ("Cholera Haiti"); the model's own
        # filters found it (Country = 'Haiti') when they keep exactly one row (found as a new user), and are then
        # what picked the row, not a group
        picking = [f for f in program.filters if f.op in ("=", "contains")]
        chosen = selected_rows(Program(filters=picking, fn="count", column=program.column), typed) \
            if picking else None
        subjects = [typed.row_name(chosen[0])] if chosen and len(chosen) == 1 else []
        keep = [f for f in keep if f not in picking]
    if len(subjects) != 1 or not numeric:
        return program
    return Program(filters=keep + [RowFilter(column=ident, op="!=", value=subjects[0][:VALUE_MAX_CHARS])], fn="sum",
                   column=program.column, answer_column=program.answer_column,
                   check=Check(op="<" if m.group("up") else ">", against="row", value=subjects[0][:VALUE_MAX_CHARS]))
