"""The ordered readers that rewrite a sampled program as its text asks (tools/_program_readers.py)."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._program_readers import CLAIM_READERS, QUESTION_READERS, header_of, readers_for
from tools._table_ops_model import Program
from tools._table_program import run_sampled

SITES = Table(name="sites", title="", columns=["Site", "Patients", "Nurses"], rows=[
    ["North", "120", "14"], ["Central", "300", "31"], ["South", "95", "9"]])
TYPED = TypedTable.build(SITES)
SITE, PATIENTS, NURSES = TYPED.idents
# One row's value checked against a number: the plainest program, which no rule needs to rewrite.
PLAIN = {"filters": [{"column": SITE, "op": "=", "value": "Central"}], "fn": "value", "column": PATIENTS,
         "check": {"op": "=", "against": "value", "value": "300"}}


@pytest.mark.parametrize("kind, text", [
    ("claim", "Central has 300 patients."),
    ("question", "How many patients does Central have?"),
])
@pytest.mark.parametrize("reader", sorted({*CLAIM_READERS, *QUESTION_READERS}, key=lambda r: r.__name__),
                         ids=lambda r: r.__name__)
def test_a_reader_leaves_a_program_its_text_gives_no_reason_to_change(reader, kind, text):
    program = Program.model_validate(PLAIN)
    assert reader(program, TYPED, text) == program


def test_each_kind_reads_its_own_rules_after_the_shared_ones():
    claim, question = readers_for("claim"), readers_for("question")
    assert claim is CLAIM_READERS and question is QUESTION_READERS
    shared = [r.__name__ for r in claim[:7]]
    # a range's bound first: the stated bound then reads its order on a column of numbers
    assert shared[:3] == [r.__name__ for r in question[:3]] \
        == ["read_possible_bound", "read_stated_bound", "read_base_row"]
    assert [r.__name__ for r in claim[4:7]] == [r.__name__ for r in question[4:7]] \
        == ["read_stated_year", "read_stated_percent", "add_numbered_kind"]
    assert question[-1].__name__ == "_yes_no_counts"  # last: the filters the readers settled are what it counts
    assert len(set(claim)) == len(claim) and len(set(question)) == len(question)  # none applied twice


def test_a_yes_no_question_counts_the_rows_its_filters_select():
    ran = run_sampled(PLAIN, TYPED, "question", "Does Central have 300 patients?")
    assert ran.program.fn == "count" and ran.execution is not None
    assert run_sampled(PLAIN, TYPED, "question", "How many patients does Central have?").program.fn == "value"


def test_the_header_of_an_identifier_and_of_none():
    assert header_of(TYPED, NURSES) == "Nurses" and header_of(TYPED, "no_such_column") == ""
