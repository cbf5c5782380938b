"""A question or claim about a column of formulas saved without their results (tools._grounding)."""

from __future__ import annotations

from pathlib import Path

import openpyxl

from assistant.answer.citations import is_no_evidence_answer
from kb.tables import NOT_COMPUTED, Table, load_table
from tests.test_table_program import llm_for, qa_ctx, scripted
from tests.test_tables_filter import BagOfWordsEmbedder
from tools._cells import TypedTable
from tools._grounding import uncomputed_column_asked
from tools.table_qa import Input as QAInput
from tools.table_qa import table_qa
from tools.verify_claim import check_claim

F = NOT_COMPUTED
COUNTIES = Table(name="vacc", title="Vaccination", columns=["County", "Population", "Fully vaccinated", "Coverage"],
                 rows=[["Alder", "48210", "35120", f"=C2/B2{F}"],
                       ["Birchwood", "120554", "95010", f"=C3/B3{F}"],
                       ["Dunmore", "67402", "57991", f"=C4/B4{F}"],
                       ["Total", f"=SUM(B2:B4){F}", f"=SUM(C2:C4){F}", ""]])


def test_a_named_column_of_formulas_without_results_is_found():
    typed = TypedTable.build(COUNTIES)
    assert uncomputed_column_asked(typed, "Which county has the highest coverage?").name == "Coverage"
    assert uncomputed_column_asked(typed, "Is coverage above 80% in Dunmore?").name == "Coverage"
    # columns holding values (the totals row's formulas aside) are read as usual
    assert uncomputed_column_asked(typed, "What is the population of Alder?") is None
    assert uncomputed_column_asked(typed, "Which county has the most fully vaccinated people?") is None
    # one computed value is a value: programs read it
    some = Table(name="v", title="v", columns=COUNTIES.columns, rows=[r[:3] + ["0.73"] if i == 0 else r
                                                                        for i, r in enumerate(COUNTIES.rows)])
    assert uncomputed_column_asked(TypedTable.build(some), "Which county has the highest coverage?") is None
    # the words name a column holding values too: not settled here
    two = Table(name="t", title="t", columns=["County", "Coverage (first dose)", "Coverage (full)"],
                rows=[["A", "0.9", f"=B2{F}"], ["B", "0.8", f"=B3{F}"]])
    assert uncomputed_column_asked(TypedTable.build(two), "Which county has the highest coverage?") is None


def _saved_without_results(path: Path) -> Path:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(COUNTIES.columns)
    for i, (name, pop, full, _) in enumerate(COUNTIES.rows[:3], start=2):
        ws.append([name, int(pop), int(full), f"=C{i}/B{i}"])
    wb.save(path)  # openpyxl saves formulas without results, as scripts that write workbooks do
    return path


async def test_a_question_about_it_says_so_without_a_program(tmp_settings, fake_llm_server, tmp_path):
    table = load_table(_saved_without_results(tmp_path / "vacc.xlsx"))
    with fake_llm_server(scripted(["county", "coverage"])) as srv:
        ctx = qa_ctx(tmp_settings, srv)
        ctx.session.tables.clear()
        ctx.session.add_table(table)
        out = await table_qa(ctx, QAInput(question="Which county has the highest coverage?"))
    assert srv.requests == []  # settled by the upload's form: no column choice, no program
    assert out.decided_by == "columns" and out.cells == [] and out.answer == "not in the table"
    reply = out.reply()
    assert reply.startswith("**Not enough information**") and "Coverage holds 3 formulas" in reply
    assert "saving it stores the results" in reply and "Birchwood" not in reply
    assert is_no_evidence_answer(reply)  # the citation check reads it as an honest "cannot say"
    assert any("no program was run: Coverage holds only formulas" in line for line in out.programs)


async def test_a_claim_about_it_is_not_enough_info(tmp_settings, fake_llm_server):
    with fake_llm_server(scripted(["county", "coverage"])) as srv:
        check = await check_claim(llm_for(tmp_settings, srv), COUNTIES, "Dunmore has the highest coverage.",
                                  embedder=BagOfWordsEmbedder())
    assert srv.requests == []
    assert check.label == "NOT ENOUGH INFO" and check.decided_by == "columns" and "Coverage holds 3" in check.reason
