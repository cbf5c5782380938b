"""End to end with the real served model (#81): a paper PDF made here, with a results table; a question about
its text is answered citing a sentence with its page, and a claim about its table is checked with cited cells
that carry the table's page."""

from __future__ import annotations

import pytest

from assistant.answer.loop import Assistant
from assistant.deps import Deps
from assistant.evals.pdf_render import PaperPage, render_paper_pdf
from assistant.ui.uploads import add_document_file
from tools.contracts import Session, cited_ids

pytestmark = pytest.mark.real_model


@pytest.fixture
def paper(tmp_path):
    path = tmp_path / "lakeview trial.pdf"
    render_paper_pdf(path, [
        PaperPage(heading="1 Methods", sentences=[
            "The Lakeview trial enrolled 1,248 adults with hypertension.",
            "Fourteen community clinics took part in the Lakeview trial.",
            "Participants were randomised to pharmacist-led care or usual care."]),
        PaperPage(heading="2 Results", sentences=[
            "Blood pressure fell in both arms over twelve months.",
            "Table 2 gives the fall in systolic pressure by arm."],
            table=([["Arm", "Participants", "Fall in systolic pressure (mmHg)"]],
                   [["Pharmacist-led", "624", "18.4"], ["Usual care", "624", "9.7"]],
                   "Table 2: Fall in systolic blood pressure at twelve months."))],
        references=["A. Author. An earlier trial of pharmacist-led care. J. Evid. 2019;3:10-19."])
    return path


async def test_a_paper_is_answered_and_checked_with_pages(real_settings, tmp_path, paper):
    deps = Deps(real_settings.model_copy(update={"data_dir": tmp_path / "data"}))
    bot = Assistant(deps, Session("e2e-pdf"))
    stored = add_document_file(deps, bot.session, paper)
    assert stored.table_names == ["lakeview trial Table 2"]

    asked = await bot.run_turn("How many community clinics took part in the Lakeview trial?")
    print(f"\n[{asked.status}] {asked.answer}")
    cited = [e for e in asked.cited_evidence if e.kind == "sentence"]
    assert cited and all(c in {e.id for e in asked.evidence} for c in cited_ids(asked.answer))
    clinic = [e for e in cited if "clinics" in e.text]
    assert clinic and clinic[0].source == "lakeview trial.pdf, page 1", [(e.text, e.source) for e in cited]

    claim = await bot.run_turn("Is it true that pharmacist-led care lowered systolic pressure by 18.4 mmHg?")
    print(f"\n[{claim.status}] {claim.answer}")
    cells = [e for e in claim.cited_evidence if e.kind == "cell"]
    assert "Supported" in claim.answer, claim.answer
    assert any(e.text == "18.4" for e in cells), [(e.id, e.text) for e in cells]
    assert all(e.meta.get("where") == "lakeview trial.pdf, page 2" for e in cells)
