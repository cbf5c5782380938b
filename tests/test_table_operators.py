"""The executor's operator table (issue 76): every function a program may name has one operator, in one stage, and
``execute`` runs each through it. What each operator computes is tested with the rules that use it; the refactor
that introduced the table was checked call by call against the branch it replaced (tests/execute_snapshot.py)."""

from __future__ import annotations

from typing import get_args

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._table_ops import OPERATORS, execute
from tools._table_ops_model import Fn, Program, ProgramError

SITES = TypedTable.build(Table(name="sites", title="Sites", columns=["Site", "Country", "Dropouts", "Enrolled"], rows=[
    ["Leeds", "UK", "12", "100"],
    ["Porto", "Portugal", "20", "90"],
    ["Lyon", "France", "7", "120"],
    ["York", "UK", "9", "80"],
]))


def test_every_function_a_program_may_name_has_one_operator():
    assert set(OPERATORS) == set(get_args(Fn))
    assert {op.stage for op in OPERATORS.values()} <= {"select", "aggregate", "compare", "rank"}


def test_only_the_counts_run_over_no_rows():
    assert {fn for fn, op in OPERATORS.items() if op.runs_on_no_rows} == {"count", "count_distinct"}
    none = [{"column": "country", "op": "=", "value": "Spain"}]
    assert execute(Program(filters=none, fn="count", column="site"), SITES).result == 0.0
    with pytest.raises(ProgramError, match="no row matches the filters"):
        execute(Program(filters=none, fn="sum", column="dropouts"), SITES)


@pytest.mark.parametrize("fn, column, check, expected", [
    ("value", "dropouts", None, "20"),
    ("count", "site", None, 4.0),
    ("count_distinct", "country", None, 3.0),
    ("sum", "dropouts", None, 48.0),
    ("avg", "dropouts", None, 12.0),
    ("median", "dropouts", None, 10.5),
    ("min", "dropouts", None, 7.0),
    ("max", "dropouts", None, 20.0),
    ("argmax", "dropouts", None, "Porto"),
    ("argmin", "enrolled", None, "York"),
    ("most_common", "country", None, "UK"),
    ("every", "dropouts", {"op": ">", "against": "value", "value": "5"}, True),
    ("only", "dropouts", {"op": ">", "against": "value", "value": "10"}, False),
])
def test_each_operator_runs_through_the_table(fn, column, check, expected):
    filters = [{"column": "site", "op": "=", "value": "Porto"}] if fn == "value" else []
    program = Program.model_validate({"filters": filters, "fn": fn, "column": column, "answer_column": "site",
                                      "check": check})
    assert execute(program, SITES).result == expected


def test_an_unknown_function_is_a_program_error():
    program = Program(fn="sum", column="dropouts").model_copy(update={"fn": "mode"})
    with pytest.raises(ProgramError, match="unknown operation 'mode'"):
        execute(program, SITES)
