"""Claims that a row's value rises or falls with the dose, over a table with one column per dose arm, settled in
code: "Insomnia increased with dose" over "Placebo (n=412) | Drug 10 mg (n=409) | Drug 20 mg (n=415)".

Found as a new user over an adverse-event table: that claim was refuted (rightly: 1.5%, 2.7%, 2.2%) for a wrong
reason, two programs comparing Insomnia's 20 mg cell with Dizziness's; the grammar has no "each arm above the one
before", and tools._claim_trend's rules run along rows, not columns.

- the claim says something rose or fell (tools._claim_trend's verbs), not negated, "with (increasing) dose" or
  "dose-dependently";
- the table has three arms or more: number columns whose headers give a dose ("10 mg", "0.5 mg/kg") or name the
  placebo or control arm (dose 0), each dose once;
- the claim names exactly one row.

The arms are ordered by dose. Where every cell writes a percentage ("11 (2.7%)") the percentages are compared,
since arms differ in size; else the numbers. The claim holds when every arm's value is strictly above (below) the
one before; a refutation cites the first pair that breaks the run.
"""

from __future__ import annotations

import re

from kb.table_model import Table
from tools._cells import TypedTable, format_value
from tools._claim_trend import NEGATED, TREND_VERB, TrendCheck
from tools._grounding import row_stated

_WITH_DOSE = re.compile(r"\b(?:with|by|across)\s+(?:(?:increasing|higher|rising|greater|the|each)\s+)*"
                        r"(?:doses?|dosages?|dose levels?)\b|\bdose[- ]dependent(?:ly)?\b", re.I)
_DOSE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:mg|g|mcg|µg|μg|ug|ml|iu|units?)(?:/\w+)?\b", re.I)
_NO_DOSE = re.compile(r"\b(?:placebo|control|vehicle|sham)\b", re.I)
_PERCENT = re.compile(r"\(\s*(\d+(?:\.\d+)?)\s*%\s*\)")
MIN_ARMS = 3


def _arms(typed: TypedTable) -> list[tuple[float, int]] | None:
    """(dose, column) for each dose arm, in dose order; None when fewer than three or a dose repeats."""
    arms = []
    for col in typed.columns:
        if not col.numeric:
            continue
        doses = {float(m.group(1)) for m in _DOSE.finditer(col.name)}
        if len(doses) == 1:
            arms.append((doses.pop(), col.index))
        elif not doses and _NO_DOSE.search(col.name):
            arms.append((0.0, col.index))
    if len(arms) < MIN_ARMS or len({d for d, _ in arms}) < len(arms):
        return None
    return sorted(arms)


def dose_trend_check(claim: str, table: Table) -> TrendCheck | None:
    """The verdict on a claim that a row's value rises or falls with the dose, or None (module docstring)."""
    verb = TREND_VERB.search(claim)
    if not verb or not _WITH_DOSE.search(claim) or NEGATED.search(claim):
        return None
    typed = TypedTable.build(table)
    arms = _arms(typed)
    row = row_stated(typed, claim) if arms else None
    if row is None:
        return None
    texts = [typed.text(row, c).strip() for _, c in arms]
    shares = [_PERCENT.search(t) for t in texts]
    if all(shares):
        values, shown = [float(m.group(1)) for m in shares], [m.group(1) + "%" for m in shares]
    else:
        values = [typed.number(row, c) for _, c in arms]
        if any(v is None for v in values):
            return None
        shown = [format_value(v) for v in values]
    rising = verb.group("up") is not None
    label = typed.row_name(row)
    listed = ", ".join(f"{typed.columns[c - 1].name} {t}" for (_, c), t in zip(arms, texts))
    for i in range(1, len(arms)):
        if (values[i] > values[i - 1]) != rising or values[i] == values[i - 1]:
            (_, before), (_, after) = arms[i - 1], arms[i]
            moved = "stays at" if values[i] == values[i - 1] else ("falls to" if rising else "rises to")
            return TrendCheck("REFUTES", [(row, typed.label_col or 1), (row, before), (row, after)],
                              f"{label} by dose: {listed}. From {typed.columns[before - 1].name} to "
                              f"{typed.columns[after - 1].name} it {moved} {shown[i]}, so the table refutes the claim.")
    cells = [(row, typed.label_col or 1)] + [(row, c) for _, c in arms]
    return TrendCheck("SUPPORTS", cells, f"{label} by dose: {listed}; each arm's value is "
                      f"{'above' if rising else 'below'} the one before, so the table supports the claim.")

