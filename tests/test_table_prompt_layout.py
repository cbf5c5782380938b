"""The table-program prompts' two layouts (Settings.table_prompt_layout, #80): what the server's prefix cache can
serve, and that a check sends the layout it is configured with."""

from __future__ import annotations

import os

import pytest

from kb.tables import Table
from tests.test_table_program import CASES, CLAIM, LOOKUP, is_columns, is_program, llm_for, scripted
from tests.test_tables_filter import BagOfWordsEmbedder
from tools._cells import TypedTable
from tools._table_program import program_prompt
from tools.verify_claim import check_claim

BEDS = Table(name="beds", title="Hospital beds", columns=["Hospital", "Beds", "Nurses"],
             rows=[["St Anne's", "420", "87"], ["Riverside", "610", "79"]])


def common_prefix(a: str, b: str) -> str:
    return os.path.commonprefix([a, b])


@pytest.mark.parametrize("kind", ["claim", "question"])
def test_instructions_first_opens_every_prompt_with_the_same_text_up_to_the_table(kind):
    one = program_prompt("instructions-first", "program", TypedTable.build(CASES), kind, "Quebec had 678 cases.")
    other = program_prompt("instructions-first", "columns", TypedTable.build(BEDS), kind, "Riverside has 610 beds.")
    shared = common_prefix(one, other)
    # everything before the data block is shared by every check of that kind: the instructions and the examples
    assert one.index("<data>") <= len(shared) + len("<data>") and "Examples" in shared
    # while today's layout shares nothing past the data block's opening line
    old_one = program_prompt("table-first", "program", TypedTable.build(CASES), kind, "Quebec had 678 cases.")
    old_other = program_prompt("table-first", "program", TypedTable.build(BEDS), kind, "Riverside has 610 beds.")
    assert len(common_prefix(old_one, old_other)) < len(shared) / 4


@pytest.mark.parametrize("layout", ["table-first", "instructions-first"])
def test_the_column_choice_and_the_program_share_the_table_and_the_claim(layout):
    typed, claim = TypedTable.build(CASES), "Quebec had 678 cases in 2011."
    columns = program_prompt(layout, "columns", typed, "claim", claim)
    program = program_prompt(layout, "program", typed, "claim", claim, ["province", "cases"], "")
    shared = common_prefix(columns, program)
    assert "| R4 | Québec | 2011 | 678 |" in shared and f"Claim: {claim}" in shared
    # each still asks its own task, and the program request names the columns the choice found
    assert "Which columns does the claim need?" in columns and "Which columns" not in program
    assert "The columns that matter most: province, cases." in program


def test_the_instructions_first_layout_computes_less_per_check():
    # characters outside the shared instructions: what a check must prefill beyond what the cache serves
    typed, claim = TypedTable.build(CASES), "Quebec had 678 cases in 2011."
    other = program_prompt("instructions-first", "program", TypedTable.build(BEDS), "claim", "Riverside has 610 beds.")
    new = [program_prompt("instructions-first", t, typed, "claim", claim) for t in ("columns", "program")]
    old = [program_prompt("table-first", t, typed, "claim", claim) for t in ("columns", "program")]
    new_computed = len(new[0]) - len(common_prefix(new[0], other)) + len(new[1]) - len(common_prefix(*new))
    old_computed = len(old[0]) + len(old[1]) - len(common_prefix(*old))
    assert new_computed < old_computed / 2


async def test_a_check_sends_the_configured_layout(tmp_settings, fake_llm_server):
    seen: list[tuple[str, str]] = []
    handler = scripted(["province", "cases"], [LOOKUP] * 5)

    def recording(req):
        kind = "columns" if is_columns(req) else "program" if is_program(req) else "other"
        seen.append((kind, req["messages"][-1]["content"]))
        return handler(req)

    settings = tmp_settings.model_copy(update={"table_prompt_layout": "instructions-first"})
    with fake_llm_server(recording) as srv:
        check = await check_claim(llm_for(settings, srv), CASES, CLAIM, embedder=BagOfWordsEmbedder())
    assert check.decided_by == "program" and check.label == "SUPPORTS"
    prompts = dict(seen)
    assert prompts["columns"].startswith("You will write a small program") and "<data>" in prompts["program"]
    assert prompts["program"].rstrip().endswith("Write the program for this claim.")
