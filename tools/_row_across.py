"""The executor's part of a program grouped across columns (``options.grouping``, an
:class:`~tools._table_ops_model.AcrossColumns`): one row's cells in several columns aggregated (the mean, total,
median, largest or smallest of them, or the column holding the largest or smallest). Code sets it
(tools._claim_changes.read_across_years); no grammar offers it."""

from __future__ import annotations

import math
import statistics
from typing import Any

from tools._cells import TypedTable, is_empty, with_written_unit
from tools._table_checks import check_result
from tools._table_ops_model import Execution, NoNumbersError, Program, ProgramError
from tools._table_shape import column_index

ACROSS_FNS = ("avg", "sum", "median", "min", "max", "argmax", "argmin")


def execute_across(program: Program, typed: TypedTable, rows: list[int], filter_cols: list[int],
                   steps: list[str]) -> Execution:
    """Run a program grouped across columns over the one row its filters selected (module docstring)."""
    if program.fn not in ACROSS_FNS:
        raise ProgramError(f"{program.fn} does not aggregate across columns ({', '.join(ACROSS_FNS)} do)")
    if len(rows) != 1:
        raise ProgramError(f"an aggregate across columns reads one row; the filters select {len(rows)}")
    [r] = rows
    across = program.options.across
    cols = [column_index(typed, ident, "column") for ident in across]
    pairs = [(c, typed.number(r, c)) for c in cols if not is_empty(typed.text(r, c))]
    pairs = [(c, x) for c, x in pairs if x is not None]
    if not pairs:
        raise NoNumbersError(f"{typed.row_name(r)} has no numbers in {', '.join(across)}")
    xs = [x for _, x in pairs]
    fn = program.fn
    result: Any
    if fn in ("argmax", "argmin"):
        best = max(xs) if fn == "argmax" else min(xs)
        read = [c for c, x in pairs if x == best]
        names = [typed.columns[c - 1].name for c in read]
        result = names[0] if len(names) == 1 else names
        result_text = f"{', '.join(names)} ({' '.join(typed.text(r, read[0]).split())})"
    else:
        result = float({"avg": lambda v: math.fsum(v) / len(v), "sum": math.fsum, "median": statistics.median,
                        "max": max, "min": min}[fn](xs))
        read = [c for c, x in pairs if x == result] if fn in ("max", "min") else [c for c, _ in pairs]
        result_text = with_written_unit([typed.text(r, c) for c, _ in pairs], round(result, 2))
    first, last = typed.columns[cols[0] - 1].name, typed.columns[cols[-1] - 1].name
    said = {"avg": "mean", "sum": "total", "median": "median", "max": "largest", "min": "smallest",
            "argmax": "year of the largest", "argmin": "year of the smallest"}[fn]
    listed = ", ".join(f"{typed.columns[c - 1].name} {' '.join(typed.text(r, c).split())}" for c, _ in pairs)
    steps.append(f"the {said} of {typed.row_name(r)}'s {first} to {last} ({listed}): {result_text}")
    truth, check_text, extra = None, "", []
    if program.check is not None:
        if program.check.against != "value":
            raise ProgramError("an aggregate across columns is checked against a value")
        truth, check_text, extra = check_result(program, typed, result, cols[0], rows)
    label = typed.label_col
    cells = ([(r, label)] if label else []) + [(r, c) for c in dict.fromkeys(filter_cols + read) if c != label]
    return Execution(selected=rows, result=result, result_text=result_text, decisive_rows=[r],
                     cells=list(dict.fromkeys(cells + extra)), truth=truth, check_text=check_text, steps=steps)
