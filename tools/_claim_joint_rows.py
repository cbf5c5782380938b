"""A claim about several named rows at once: "Semaglutide and Tirzepatide both met their primary endpoint."

Seen as a new user with a table of six weight-loss trials: the model wrote that claim, 4 times of 5, as "rows where
Drug = 'Semaglutide' and Drug = 'Tirzepatide' → whether every one has Primary endpoint met = 'Yes'". Read as AND,
two values of one column select no row, so none of those ran, and the one program that did ("all rows → every one
has Primary endpoint met = 'Yes'") refuted the claim with the sixth trial, which the claim never named.

The rows named are the union of those values. That reading is taken only where the claim itself says so:
- each of the values is written in the claim;
- the claim says they hold jointly: "both", "all", "each", "neither … nor", or the values joined by "and"
  ("A and B met …", "A, B and C …");
- the check holds row by row: "every", or a value check ("A and B both have 3 golds", read as every one has), or
  a comparison with a third row ("A and B had more cases than C": their smallest above C's, their largest for
  "fewer than").

Reading every such program as the union was measured on TabFact's test replay and dropped (351 -> 344 of 500,
seven statements left without a vote): there the two values are often the claim's two sides ("the game on
november 1 and november 3 …" compares them), not rows that share a property. Counts and extremes over the two
values are left as written for the same reason.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable, cell_number, norm_text
from tools._table_ops_model import Program

_JOINT = re.compile(r"\b(?:both|all|each|every|neither|nor)\b", re.I)
_JOINER = re.compile(r"^(?:,|&|and|,\s*and)?$", re.I)
# Every named row above another row is their smallest above it; every one below it, their largest.
_ORDER_EXTREME = {">": "min", ">=": "min", "<": "max", "<=": "max"}


def joined_by_and(values: list[str], claim: str) -> bool:
    """Whether the claim writes ``values`` next to each other, joined by "and", "&" or commas ("A, B and C")."""
    low = norm_text(claim)
    spans = []
    for v in values:
        at = low.find(norm_text(v))
        if at < 0:
            return False
        spans.append((at, at + len(norm_text(v))))
    spans.sort()
    return all(_JOINER.match(low[end:start].strip()) for (_, end), (start, _) in zip(spans, spans[1:]))


def read_joint_rows(program: Program, claim: str, typed: TypedTable) -> Program | None:
    """The program to run over the union of the rows the claim names jointly (module docstring), or None when the
    program does not ask one column for several values, or the claim does not name them jointly."""
    values: dict[str, list[str]] = {}
    for f in program.filters:
        if f.op == "=":
            values.setdefault(f.column, [])
            if norm_text(f.value) not in {norm_text(v) for v in values[f.column]}:
                values[f.column].append(f.value)
    repeated = [(col, vals) for col, vals in values.items() if len(vals) > 1]
    if len(repeated) != 1 or repeated[0][0] == program.column:
        # The check reads the named column back ("captain = A or B or C → every one has captain = A"): false of
        # any two rows, so it says nothing about the claim (TabFact's tuning split).
        return None
    chk = program.check
    named = repeated[0][1]
    # "Oman and Kuwait saw more cases per 100,000 than Seychelles" (PubHealthTab's tuning split; 3 of 5 programs
    # wrote "Column 1 = 'Oman' and Column 1 = 'Kuwait' → Per 100,000; check > Per 100,000 of 'Seychelles'"): each of
    # the rows named beats a third row, so their smallest does ("fewer than": their largest).
    # (also as their max or min: 1 of those 5 took Oman and Kuwait's max, which one high row would carry)
    against_third_row = program.fn in ("value", "min", "max") and chk is not None and chk.against == "row" \
        and chk.op in _ORDER_EXTREME and norm_text(chk.value) not in {norm_text(v) for v in named}
    if not against_third_row:
        if program.fn == "value" and (chk is None or chk.against != "value" or chk.op not in ("=", "!=")):
            return None
        if program.fn not in ("value", "every"):
            return None
    low = norm_text(claim)
    if not all(norm_text(v) and norm_text(v) in low for v in named):
        return None
    if not (_JOINT.search(claim) or joined_by_and(named, claim)):
        return None
    if against_third_row:
        if _one_row_writes_all(typed, named):
            # "the match between south melbourne and richmond drew a bigger crowd than …" (TabFact): the names are
            # one row's two sides, not two rows
            return None
        return program.model_copy(update={"fn": _ORDER_EXTREME[chk.op]})
    # A value check over several rows asks each of them: "A and B both have 3 golds" is every one has gold = 3.
    return program.model_copy(update={"fn": "every"}) if program.fn == "value" else program


def _one_row_writes_all(typed: TypedTable, values: list[str]) -> bool:
    """Does some row hold a cell equal to each of ``values`` (in any of its columns)?"""
    wanted = {norm_text(v) for v in values}
    for r in range(1, typed.table.n_rows + 1):
        cells = {norm_text(typed.text(r, col.index)) for col in typed.columns}
        if wanted <= cells:
            return True
    return False


_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")


def named_rows_blocker(program: Program, typed: TypedTable, claim: str) -> str:
    """Why an every/only check over every row must not vote on a claim that names its rows, or ``""``.

    Seen in the browser after the union reading above: "Semaglutide and Tirzepatide both met their primary
    endpoint" was still refuted by 2 of 5 programs reading "all rows → whether every one has Primary endpoint met
    = 'Yes'", the sixth trial deciding. A claim names its rows when it writes a text cell of a column other than the
    one checked (a name, not a number, and not the checked column's own value: "the zakspeed engine be use on all
    chassis" checks the engine column for the value it names).
    """
    if program.fn not in ("every", "only") or program.filters:
        return ""
    # "VaxC's interval excludes 75%" names VaxC (found as a new user: "all rows → whether every one has 95% CI
    # contains 75" voted on it)
    low = f" {_POSSESSIVE.sub('', norm_text(claim))} "
    try:
        checked = typed.column(program.column).index
    except KeyError:
        return ""
    for col in typed.columns:
        if col.index == checked or col.numeric:
            continue
        for r in range(1, typed.table.n_rows + 1):
            cell = norm_text(typed.text(r, col.index))
            if len(cell) >= 3 and cell_number(cell) is None and f" {cell} " in low:
                return f"it checks every row, but the claim names its rows ({typed.text(r, col.index)!r})"
    return ""


# "combined", "in total", "on average": the claim is about the rows' sum or mean, whatever "all" it also says
_AS_ONE = re.compile(r"\b(?:combined|together|total|totals|altogether|sum|average|averages|mean|overall|"
                     r"collectively|between them|cumulative(?:ly)?)\b", re.I)
# not "of all": "more than half of all the beds" is a share of the total
_EACH = re.compile(r"\b(?:both|each|every)\b|(?<!\bof )\ball\b", re.I)


def read_each_as_extreme(program: Program, typed: TypedTable, claim: str) -> Program:
    """"Both legumes have more fibre than oats" over a sum or mean of the legumes' rows: each row must be above, so
    their smallest is compared ("fewer": their largest). Seen as a new user over a nutrition CSV: "sum of Fibre over
    the legumes (15.5) > Oats's 10.6" supported the claim, 2 votes to 1, though each legume has less fibre (7.9,
    7.6). A claim that adds them up or averages them ("combined", "in total", "on average") keeps its program."""
    chk = program.check
    if program.fn not in ("sum", "avg") or chk is None or chk.op not in _ORDER_EXTREME \
            or not _EACH.search(claim) or _AS_ONE.search(claim):
        return program
    return program.model_copy(update={"fn": _ORDER_EXTREME[chk.op]})
