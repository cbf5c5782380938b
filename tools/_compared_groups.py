"""Two groups of rows compared by their totals or means: "Hospitals in the South have more beds in total than
hospitals in the East".

Found as a new user over a hospital-capacity table (Hospital, Region, Beds, …): of five programs, three asked for
rows in both regions at once (no row is), and two compared the South's total with one southern hospital's beds,
a comparison nobody made; an earlier run fell back to the judge, which refuted the true claim with bed counts the
table does not hold. The grammar has no "the same sum over other rows", and the sentence's form fixes the
program, so it is built in code (as tools._compared_rows builds a two-row comparison) and decides, no model call:

- one "<comparative> … than" (or "compared to/with"), not negated, with a direction ("more", "fewer", "cheaper");
- "in total", "combined", "altogether" (a sum), or "on average", "average", "mean" (a mean): without one, "the
  South has more beds than the East" could be each hospital's, or the largest, and is left to the programs;
- the words before the comparative write one value of a text column (not the row names) held by some rows but not
  all, and the words after "than" another value of the same column: the two groups;
- exactly one column of numbers is named by its header's words (price words name the one price column);
- the claim writes no number other than those in the header and the two values.
"""

from __future__ import annotations

import re
from collections import Counter

from tools._cells import TypedTable, norm_text, writes_whole
from tools._claim_compare import stated_comparisons
from tools._compared_rows import LARGER, NEGATION, SMALLER, WordsProgram, numbers_column_named, than_form
from tools._grounding import question_numbers
from tools._table_shape import rows_but_totals

_TOTAL = re.compile(r"\b(?:in\s+total|combined|altogether|put\s+together|taken\s+together|all\s+together)\b", re.I)
_MEAN = re.compile(r"\b(?:on\s+average|average|mean)\b", re.I)


def _groups_written(typed: TypedTable, text: str) -> set[tuple[str, str]]:
    """(column identifier, value) of each value of a text column other than the row names that ``text`` writes
    whole, held by some of the table's rows but not all."""
    said = norm_text(text)
    rows = rows_but_totals(typed)
    out: set[tuple[str, str]] = set()
    for col in typed.columns:
        if col.numeric or col.index == typed.label_col:
            continue
        held_by = Counter(typed.text(r, col.index).strip() for r in rows)
        for value, held in held_by.items():
            if len(norm_text(value)) >= 2 and any(ch.isalpha() for ch in value) and held < len(rows) \
                    and writes_whole(said, norm_text(value)):
                out.add((col.ident, value))
    return out


def compared_groups(typed: TypedTable, claim: str) -> WordsProgram | None:
    """The program of "<group A> … <comparative> … in total/on average … than <group B>", or None when the claim is
    not that plain (module docstring)."""
    claim = than_form(claim)
    comparisons = stated_comparisons(claim)
    fn = "sum" if _TOTAL.search(claim) else "avg" if _MEAN.search(claim) else None
    if fn is None or len(comparisons) != 1 or NEGATION.search(claim):
        return None
    word, start, end = comparisons[0]
    if word not in LARGER and word not in SMALLER:
        return None
    before, after = _groups_written(typed, claim[:start]), _groups_written(typed, claim[end:])
    if len(before) != 1 or len(after) != 1:
        return None
    (col_a, a), (col_b, b) = before.pop(), after.pop()
    if col_a != col_b or a == b:
        return None
    column = numbers_column_named(typed, claim)
    if column is None:
        return None
    written = " ".join([typed.column(column).name, a, b])
    if question_numbers(claim) - question_numbers(written):
        return None
    label = typed.columns[typed.label_col - 1].ident if typed.label_col else column
    return WordsProgram({"filters": [{"column": col_a, "op": "=", "value": a}], "fn": fn, "column": column,
                         "answer_column": label,
                         "check": {"op": ">" if word in LARGER else "<", "against": "group", "value": b,
                                   "group_column": col_a}})
