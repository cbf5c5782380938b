"""A row against the rest of its group combined (tools._claim_others)."""

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_others import read_others_combined
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
