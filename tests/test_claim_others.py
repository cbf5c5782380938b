"""A row against the rest of its group combined (tools._claim_compare)."""

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_compare import read_others_combined
from tools._table_ops_model import Program

COVERAGE = Table(name="coverage", title="", columns=["Country", "WHO region", "Births (thousands)"], rows=[
    ["Kenya", "Africa", "1,437"], ["Nigeria", "Africa", "8,115"], ["India", "South-East Asia", "23,192"],
    ["Ethiopia", "Africa", "4,164"], ["Brazil", "Americas", "2,545"]])
TYPED = TypedTable.build(COVERAGE)
IDS = {c.name: c.ident for c in TYPED.columns}


def written(row: str = "Nigeria", op: str = ">") -> Program:
    """As the model wrote it 4 times of 5: the group's sum, Nigeria in it, compared the wrong way round."""
    return Program.model_validate({"filters": [{"column": IDS["WHO region"], "op": "=", "value": "Africa"}],
                                   "fn": "sum", "column": IDS["Births (thousands)"], "answer_column": IDS["Country"],
                                   "check": {"op": op, "against": "row", "value": row}})


@pytest.mark.parametrize("claim, verdict", [
    ("Nigeria had more births than all the other African countries combined.", "SUPPORTS"),  # 8,115 > 5,601
    ("Ethiopia had more births than the other African countries combined.", "REFUTES"),  # 4,164 < 9,552
    ("Kenya had fewer births than the other African countries put together.", "SUPPORTS"),
])
def test_the_others_are_the_group_without_the_row(claim, verdict):
    from tools._table_program import ProgramOutcome, decide, run_sampled

    row = next(r for r in ("Nigeria", "Ethiopia", "Kenya") if r in claim)
    sampled = [run_sampled(written(row).model_dump(), TYPED, "claim", claim) for _ in range(3)]
    outcome = ProgramOutcome(kind="claim")
    decide(outcome, sampled, TYPED, "claim", claim)
    assert outcome.winner == verdict, [r.error or r.program for r in outcome.runs]
    assert f"Country != '{row}'" in outcome.runs[0].program


def test_other_claims_are_left_as_written():
    assert read_others_combined(written(), TYPED, "Africa had more births than Nigeria.") == written()
    assert read_others_combined(written("Atlantis"), TYPED,
                                "Atlantis had more births than the other countries combined.") == written("Atlantis")


REGIONS = Table(name="regions", title="Regions", columns=["Region", "Cases", "Deaths", "Population"], rows=[
    ["North", "124", "3", "1,204,000"], ["South", "<5", "0", "310,500"], ["East", "57", "—", "845,200"],
    ["West", "9", "1", "402,000"], ["Central", "", "", "98,700"]])


@pytest.mark.parametrize("claim, verdict", [
    ("The North had more deaths than all other regions combined.", "SUPPORTS"),  # 3 > 0 + 1 (East "—", Central empty)
    ("The West had more deaths than all other regions combined.", "REFUTES"),  # 1 < 3 + 0
])
def test_all_other_rows_without_the_and_a_program_against_one_other_row(claim, verdict):
    """Found as a new user: "than all other regions combined" (no "the") was checked against the South alone."""
    from tools._table_program import run_sampled

    row = claim.split()[1]
    against_one = {"filters": [{"column": "region", "op": "=", "value": row}], "fn": "sum", "column": "deaths",
                   "answer_column": "region", "check": {"op": ">", "against": "row", "value": "South"}}
    ran = run_sampled(against_one, TypedTable.build(REGIONS), "claim", claim)
    assert ran.execution is not None, ran.error
    assert ran.execution.truth is (verdict == "SUPPORTS")
    assert [(f.op, f.value) for f in ran.program.filters] == [("!=", row)] and ran.program.check.value == row
    # the sum says what it did not count
    assert "not counted: East '—', Central empty" in ran.execution.result_text


@pytest.mark.parametrize("claim, truth", [
    ("The East had more cases than the West and South combined.", True),  # 57 > 9 + (<5): at most 14
    ("The West had more cases than the North and South combined.", False),  # 9 < 124 + (<5)
    ("The East had fewer cases than the West and South combined.", False),
])
def test_a_suppressed_count_in_a_combined_comparison_is_a_range(claim, truth):
    """Found as a new user: "<5" made every program fail, and the fallback invented the counts."""
    from tools._table_program import run_sampled

    row = claim.split()[1]
    raw = {"filters": [{"column": "region", "op": "=", "value": row}], "fn": "value", "column": "cases",
           "answer_column": "region", "check": {"op": ">", "against": "value", "value": "10"}}
    ran = run_sampled(raw, TypedTable.build(REGIONS), "claim", claim)
    assert ran.execution is not None and ran.execution.truth is truth, ran.error
    assert "combined, between" in ran.execution.check_text


def test_a_range_that_does_not_settle_the_comparison_does_not_vote():
    from tools._table_program import run_sampled

    table = Table(name="r", title="r", columns=["Region", "Cases"], rows=[["A", "12"], ["B", "9"], ["C", "<5"]])
    raw = {"filters": [{"column": "region", "op": "=", "value": "A"}], "fn": "value", "column": "cases",
           "answer_column": "region", "check": {"op": ">", "against": "value", "value": "10"}}
    ran = run_sampled(raw, TypedTable.build(table), "claim", "A had more cases than B and C combined.")
    assert ran.execution is None and "leave it open" in ran.error  # 12 against 9 to 14


OUTBREAKS = Table(name="o", title="Outbreaks", columns=["Outbreak", "Country", "Deaths"], rows=[
    ["Cholera Haiti", "Haiti", "9,792"], ["Ebola West Africa", "Guinea", "11,325"], ["Zika", "Brazil", ""],
    ["Diphtheria Yemen", "Yemen", "330"], ["Mpox", "Multi-country", "140"]])


def test_the_row_a_claim_does_not_name_as_written_is_the_one_the_model_s_filters_keep():
    """Found as a new user: "Cholera in Haiti killed more people than all the other outbreaks combined" (the row is
    "Cholera Haiti") was checked against Zika alone, whose deaths are empty."""
    from tools._table_program import run_sampled

    raw = {"filters": [{"column": "country", "op": "=", "value": "Haiti"}], "fn": "sum", "column": "deaths",
           "answer_column": "outbreak", "check": {"op": ">", "against": "row", "value": "Zika"}}
    ran = run_sampled(raw, TypedTable.build(OUTBREAKS), "claim",
                      "Cholera in Haiti killed more people than all the other outbreaks combined.")
    assert ran.execution is not None and ran.execution.truth is False, ran.error  # 9,792 < 11,795
    assert ran.execution.check_text == "< Cholera Haiti's Deaths 9,792"
    assert ran.execution.result_text == "11,795 (not counted: Zika empty)"


def test_a_count_of_every_row_checked_against_zero_does_not_vote():
    """Found as a new user: "Zika caused no deaths." was refuted by "the number of rows = 0"."""
    from tools._table_program import run_sampled

    from tools._claim_grounding import negated_count_blocker

    raw = {"filters": [], "fn": "count", "column": "deaths", "answer_column": "outbreak",
           "check": {"op": "=", "against": "value", "value": "0"}}
    typed = TypedTable.build(OUTBREAKS)
    assert "empty table" in negated_count_blocker(Program.model_validate(raw), "Zika caused no deaths.", typed)
    # through the rules, the claim is read as Zika's Deaths = 0, whose empty cell gives no value either
    ran = run_sampled(raw, typed, "claim", "Zika caused no deaths.")
    assert ran.execution is None and "is empty" in ran.error
