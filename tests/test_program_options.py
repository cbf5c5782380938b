"""The options code sets on a program, one record by the stage each feeds (tools._table_ops_model.Options, issue 76):
what each variant computes, and programs written with the old flat fields (per_column, minus_column, nth, group,
across, more_rows_than) loading into it, checked on the programs of a committed PubHealthTab dev log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._table_ops import execute
from tools._table_ops_model import RATIO_FNS, AcrossColumns, Change, MoreRowsThan, Options, Program, ProgramError, \
    Ratio, RelativeChange, RowGroups
from tools._table_shape import describe

DEV_LOG = sorted((Path(__file__).resolve().parent.parent / "docs" / "eval" / "runs").glob(
    "pubhealthtab-dev-*.jsonl"))[0]
# What Program.model_dump() wrote for a program with no option set, before the options record.
FLAT_DEFAULTS = {"per_column": None, "minus_column": None, "nth": 1, "group": None, "across": [],
                 "more_rows_than": None}

SITES = TypedTable.build(Table(name="sites", title="Sites", columns=[
    "Site", "Country", "Dropouts", "Enrolled", "Enrolled 2022", "Enrolled 2023"], rows=[
    ["Leeds", "UK", "12", "100", "80", "100"],
    ["Porto", "Portugal", "20", "90", "60", "90"],
    ["Lyon", "France", "7", "120", "100", "120"],
    ["York", "UK", "9", "80", "85", "80"],
]))


def _logged_raws() -> list[dict]:
    records = [json.loads(line) for line in DEV_LOG.read_text().splitlines() if line.strip()]
    return [run["raw"] for rec in records for run in (rec.get("programs") or {}).get("runs") or [] if run.get("raw")]


def test_the_dev_logs_programs_load_as_written_and_in_the_old_flat_form():
    raws = _logged_raws()
    assert len(raws) > 100, DEV_LOG
    for raw in raws:
        program = Program.model_validate(raw)
        assert program.options == Options()
        assert Program.model_validate({**raw, **FLAT_DEFAULTS}) == program
        assert Program.model_validate(program.model_dump(mode="json")) == program


@pytest.mark.parametrize("flat, options", [
    ({"per_column": "x"}, Options(derive=Ratio(per_column="x"))),
    ({"minus_column": "x"}, Options(derive=Change(minus_column="x"))),
    ({"per_column": "x", "minus_column": "x"}, Options(derive=RelativeChange(from_column="x"))),
    ({"nth": 3}, Options(nth=3)),
    ({"group": "mean"}, Options(grouping=RowGroups(by="mean"))),
    ({"across": ["a", "b"]}, Options(grouping=AcrossColumns(columns=["a", "b"]))),
    ({"across": ["a", "b"], "group": "total"}, Options(grouping=AcrossColumns(columns=["a", "b"]))),  # ran across
    ({"more_rows_than": 0}, Options(row_count=MoreRowsThan(rows=0))),
])
def test_each_old_flat_field_loads_into_its_stage_on_the_logged_programs(flat, options):
    """Each logged program (and its columns), written with the old field set as code set it, loads with that option,
    and nothing else of it changes; the options round-trip through JSON, as a log stores them."""
    for raw in _logged_raws()[:40]:
        named = {k: (v.replace("x", raw["column"]) if isinstance(v, str) and k != "group" else v)
                 for k, v in flat.items()}
        expected = json.loads(options.model_dump_json().replace('"x"', json.dumps(raw["column"])))
        program = Program.model_validate({**raw, **FLAT_DEFAULTS, **named})
        assert program.options.model_dump(mode="json") == expected
        assert program.model_copy(update={"options": Options()}) == Program.model_validate(raw)
        assert Program.model_validate_json(program.model_dump_json()) == program


def test_a_program_that_divides_by_one_column_and_subtracts_another_does_not_load():
    """No program could run so (the executor refused it); the options record cannot hold it."""
    with pytest.raises(ValueError, match="not both"):
        Program.model_validate({"fn": "max", "column": "a", "per_column": "b", "minus_column": "c"})
    with pytest.raises(ValueError, match="once"):
        Program.model_validate({"fn": "max", "column": "a", "nth": 2, "options": {"nth": 3}})


def test_a_stage_is_replaced_by_name_and_a_misspelt_one_is_refused():
    options = Options(nth=2)
    assert options.replaced(derive=Ratio(per_column="b")) == Options(derive=Ratio(per_column="b"), nth=2)
    with pytest.raises(TypeError, match="per_column"):
        options.replaced(per_column="b")  # model_copy(update=...) would have taken it and changed nothing


def test_undivided_drops_a_ratio_and_keeps_the_change_a_relative_change_divides():
    assert Options(derive=Ratio(per_column="b"), nth=2).undivided() == Options(nth=2)
    assert Options(derive=RelativeChange(from_column="b")).undivided() == Options(derive=Change(minus_column="b"))
    assert Options(derive=Change(minus_column="b")).undivided() == Options(derive=Change(minus_column="b"))


@pytest.mark.parametrize("fn, options, result, words", [
    ("argmax", Options(derive=Ratio(per_column="enrolled")), "Porto", "the largest Dropouts per Enrolled"),
    ("argmin", Options(derive=Change(minus_column="enrolled_2022")), "York",
     "the smallest Enrolled 2023 minus Enrolled 2022"),
    ("argmax", Options(derive=RelativeChange(from_column="enrolled_2022")), "Porto",
     "relative change from Enrolled 2022 to Enrolled 2023"),
    ("argmax", Options(nth=2), "Leeds", "second largest"),
    ("argmax", Options(grouping=RowGroups(by="total")), "UK", "add up to the largest total"),
    ("argmax", Options(grouping=RowGroups(by="mean")), "Portugal", "largest average"),
    # every value held by more than 0 rows, not only the commonest (UK)
    ("most_common", Options(row_count=MoreRowsThan(rows=0)), ["UK", "Portugal", "France"], "found in more than 0 rows"),
])
def test_each_option_feeds_its_stage(fn, options, result, words):
    column = "enrolled_2023" if options.subtracts else "dropouts"
    answer = "country" if options.grouping is not None or fn == "most_common" else "site"
    program = Program(fn=fn, column="country" if fn == "most_common" else column, answer_column=answer,
                      options=options)
    assert execute(program, SITES).result == result
    assert words in describe(program, SITES)


def test_a_row_across_columns_is_its_cells_not_the_rows():
    program = Program(filters=[{"column": "site", "op": "=", "value": "York"}], fn="avg", column="enrolled_2022",
                      answer_column="site",
                      options=Options(grouping=AcrossColumns(columns=["enrolled_2022", "enrolled_2023"])))
    assert execute(program, SITES).result == 82.5
    assert "the mean of its cells from Enrolled 2022 to Enrolled 2023" in describe(program, SITES)


def test_a_derived_column_feeds_the_ranking_functions_only():
    assert set(RATIO_FNS) == {"argmax", "argmin", "max", "min"}
    with pytest.raises(ProgramError, match="feeds"):
        execute(Program(fn="sum", column="dropouts", options=Options(derive=Ratio(per_column="enrolled"))), SITES)
