"""An "every" check its own filter makes true: "rows where LDL > 45 → every one has LDL >= 45".

Seen as a new user with a table of six statins: for "Is it true that all synthetic statins lower LDL by more
than 45%?" one of five programs was "rows where Class = 'Synthetic' and LDL reduction (%) > 45 → whether every
one has LDL reduction (%) >= 45". Its filter implies its check, so it holds of any table, and it voted SUPPORTS
beside three refutations (Pitavastatin, 43). The model writes the claim's condition twice, once as the filter;
the claim's rows are those of its other filters ("synthetic"). So the filter that repeats the check is dropped
and the check runs over the rows the others keep.

Only when another filter remains: with none, the program would become "every row of the table …", a reading
the claim need not make ("the 3 players with more than 10 points were all guards" written as "rows where
points > 10 → every one has points > 10"). Such a program is left as it is, as are text tautologies ("rows
where gender = 'male' → every one has gender = 'male'"): holding those was measured on TabFact's test replay and
dropped (tools._claim_grounding.tautology_blocker).
"""

from __future__ import annotations

from tools._cells import TypedTable, cell_number
from tools._table_ops_model import Check, Program, RowFilter


def implies(rule: RowFilter, check: Check) -> bool:
    """Does every number ``x`` with "x rule.op rule.value" also have "x check.op check.value"?"""
    a, v = cell_number(rule.value), cell_number(check.value)
    if a is None or v is None:
        return False
    if rule.op == "=":  # x is a
        return {">": a > v, ">=": a >= v, "<": a < v, "<=": a <= v, "=": a == v, "!=": a != v}.get(check.op, False)
    if rule.op == "!=":  # x is anything but a
        return check.op == "!=" and a == v
    if rule.op in (">", ">="):  # x above a (or at it): a lower bound
        strict = rule.op == ">"
        return {">": a > v or (strict and a == v), ">=": a >= v,
                "!=": a > v or (strict and a == v)}.get(check.op, False)
    if rule.op in ("<", "<="):  # an upper bound
        strict = rule.op == "<"
        return {"<": a < v or (strict and a == v), "<=": a <= v,
                "!=": a < v or (strict and a == v)}.get(check.op, False)
    return False


def read_self_filtered_every(program: Program, typed: TypedTable) -> Program:
    """``program`` without the filters on its checked column that imply its check, when it is an "every" check
    against a stated value on a numeric column and another filter remains; else ``program`` as it is."""
    chk = program.check
    if program.fn != "every" or chk is None or chk.against != "value" or not typed.is_numeric(program.column):
        return program
    kept = [f for f in program.filters if not (f.column == program.column and implies(f, chk))]
    if len(kept) == len(program.filters) or not kept:
        return program
    return program.model_copy(update={"filters": kept})
