"""PDF and DOCX uploads in a conversation (#81): text searched and cited with its page, tables loaded like an
uploaded CSV, everything kept with the conversation, and a refused file leaves nothing behind."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from assistant.evals.pdf_render import PaperPage, render_paper_pdf, render_table_pdf
from assistant.ui.uploads import add_document_file, describe_document
from kb.document_model import DocumentError
from kb.errors import TableError
from tools.contracts import EvidenceLedger, Session, ToolContext

PAGE1 = ["The Lakeview trial enrolled 1,248 adults across 14 community clinics.",
         "Participants were randomised to pharmacist-led titration or usual care."]
PAGE2 = ["At twelve months systolic pressure fell by 18.4 mmHg with pharmacist-led care.",
         "Hyperkalaemia occurred in nine participants of the intervention arm."]
PAGE3 = ["Adverse events were otherwise balanced between the two arms of the trial."]
RESULTS = ([["Arm", "Participants", "Fall (mmHg)"]],
           [["Pharmacist-led", "624", "18.4"], ["Usual care", "624", "9.7"]],
           "Table 2: Blood pressure at twelve months.")


@pytest.fixture
def deps(tmp_settings, tmp_path):
    from memory.store import Memory

    return SimpleNamespace(settings=tmp_settings, memory=Memory(tmp_path / "data" / "memory.db"))


@pytest.fixture
def paper(tmp_path):
    path = tmp_path / "lakeview.pdf"
    render_paper_pdf(path, [PaperPage(heading="1 Methods", sentences=PAGE1),
                            PaperPage(heading="2 Results", sentences=PAGE2, table=RESULTS),
                            PaperPage(heading=None, sentences=PAGE3)],
                     references=["A. Author. An earlier trial. J. Evid. 2020;1:1-9."])
    return path


def test_a_pdf_is_read_into_the_conversation_with_its_pages_and_tables(deps, paper):
    session = Session("c1")
    stored = add_document_file(deps, session, paper, name="lakeview.pdf")
    doc = stored.document
    assert doc.kind == "pdf" and doc.pages == 3
    for page, sentences in ((1, PAGE1), (2, PAGE2), (3, PAGE3)):
        for s in sentences:
            at = doc.text.find(s)
            assert at >= 0, s
            assert doc.page_at(at) == page and stored.where(at, at + len(s)) == f"page {page}"
    assert "An earlier trial" not in doc.text  # the reference list is not evidence
    assert "Journal of Evidence" not in doc.text  # nor the running header
    # The table is loaded under a name a user can type, with its caption and page.
    assert stored.table_names == ["lakeview Table 2"]
    table = session.tables["lakeview Table 2"]
    assert table.columns == ["Arm", "Participants", "Fall (mmHg)"]
    assert table.rows == [["Pharmacist-led", "624", "18.4"], ["Usual care", "624", "9.7"]]
    assert table.title.startswith("Table 2") and table.source == "lakeview.pdf, page 2"
    assert session.active_table == "lakeview Table 2"
    assert session.texts == [("lakeview.pdf", doc.text)]
    line = describe_document(stored)
    assert line.startswith("Read lakeview.pdf: 3 pages,") and "1 table found: Table 2 on page 2" in line


def test_a_pdf_sentence_is_cited_with_its_page_and_paragraph(deps, paper):
    from tools.text_search import Input, text_search

    session = Session("c2")
    add_document_file(deps, session, paper, name="lakeview.pdf")
    store = SimpleNamespace(is_empty=True, attach_embedder=lambda e: None)
    ctx = ToolContext(deps=SimpleNamespace(settings=deps.settings, text_kb=store, embedder=None),
                      evidence=EvidenceLedger(), session=session)
    out = text_search(ctx, Input(query="hyperkalaemia participants intervention arm", k=2))
    top = ctx.evidence.get(out.items[0].id)
    assert top.text.startswith("Hyperkalaemia occurred")
    assert top.source == "lakeview.pdf, page 2" and top.meta["page"] == 2
    assert top.meta["section"] == "2 Results"
    a, b = top.meta["in_paragraph"]
    assert top.meta["paragraph"][a:b].strip() == top.text.strip()


def test_the_document_comes_back_with_the_conversation(deps, paper, tmp_path):
    from assistant.cli.chat_cli import restore_session

    session = Session("c3")
    stored = add_document_file(deps, session, paper, name="lakeview.pdf")
    again = Session("c3")
    restore_session(deps, again)
    assert again.documents["lakeview.pdf"] == stored
    assert "lakeview Table 2" in again.tables and again.texts == session.texts
    # Its copy is kept beside the memory, named by content, not by the user's file name.
    kept = stored.file_path
    assert kept.endswith(".pdf") and "lakeview" not in kept and paper.read_bytes() == open(kept, "rb").read()


def test_uploading_the_same_name_again_replaces_the_document_and_its_tables(deps, paper, tmp_path):
    session = Session("c4")
    add_document_file(deps, session, paper, name="lakeview.pdf")
    plain = tmp_path / "v2.pdf"
    render_paper_pdf(plain, [PaperPage(heading="1 Methods", sentences=PAGE1)])
    stored = add_document_file(deps, session, plain, name="lakeview.pdf")
    assert stored.table_names == [] and "lakeview Table 2" not in session.tables
    assert [n for n, _ in session.texts] == ["lakeview.pdf"]
    assert [n for n, _ in deps.memory.tables("c4")] == []


def test_a_table_only_pdf_loads_its_table(deps, tmp_path):
    path = tmp_path / "deaths.pdf"
    render_table_pdf(path, [["Cause", "Deaths"]], [["Stroke", "29,800"], ["Cancer", "41,200"]], style="booktabs",
                     caption="Table 1: Deaths in 2022.")
    session = Session("c5")
    stored = add_document_file(deps, session, path)
    assert stored.table_names == ["deaths Table 1"]
    assert session.tables["deaths Table 1"].rows == [["Stroke", "29,800"], ["Cancer", "41,200"]]


@pytest.mark.parametrize("content,match", [
    (b"", "empty"),
    (b"%PDF-1.7\n%garbage that is not a PDF body\n", "pdf"),
    (b"PK\x03\x04" + b"\x00" * 40, "docx"),
    (b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, "image"),
])
def test_a_refused_document_leaves_the_conversation_unchanged(deps, tmp_path, content, match):
    path = tmp_path / f"bad.{'docx' if match == 'docx' else 'pdf'}"
    path.write_bytes(content)
    session = Session("c6")
    with pytest.raises(TableError) as err:  # DocumentError is the upload error users see
        add_document_file(deps, session, path, name=path.name)
    assert isinstance(err.value, DocumentError) and path.name in str(err.value)
    assert (session.texts, session.tables, session.documents) == ([], {}, {})
    assert deps.memory.documents("c6") == [] and not deps.memory.document_dir("c6").exists()


def test_a_document_over_the_size_limit_is_refused_before_it_is_read(deps, paper):
    small = SimpleNamespace(settings=deps.settings.model_copy(update={"document_max_bytes": 1000}),
                            memory=deps.memory)
    with pytest.raises(DocumentError, match="EVIDENTIA_DOCUMENT_MAX_BYTES"):
        add_document_file(small, Session("c7"), paper)


def test_a_docx_is_read_with_its_sections_and_table(deps, tmp_path):
    import docx

    d = docx.Document()
    d.add_heading("Methods", level=1)
    d.add_paragraph(PAGE1[0])
    d.add_heading("Results", level=1)
    d.add_paragraph(PAGE2[1])
    d.add_paragraph("Table 1: Arms.")
    t = d.add_table(rows=3, cols=2)
    for r, row in enumerate([["Arm", "Participants"], ["Pharmacist-led", "624"], ["Usual care", "624"]]):
        for c, v in enumerate(row):
            t.cell(r, c).text = v
    path = tmp_path / "trial.docx"
    d.save(path)
    session = Session("c8")
    stored = add_document_file(deps, session, path)
    at = stored.document.text.find(PAGE2[1])
    assert stored.where(at, at + 10) == "section “Results”"
    assert session.tables["trial Table 1"].rows == [["Pharmacist-led", "624"], ["Usual care", "624"]]


def test_the_cli_lists_a_cited_cell_with_its_file_and_page(capsys):
    from assistant.answer.turn import TurnResult
    from assistant.cli.chat_cli import print_evidence

    ledger = EvidenceLedger()
    cell = ledger.add_cell("lakeview Table 2", 1, 3, "18.4", source="Table 2: Blood pressure at twelve months.",
                           header="Fall (mmHg)", where="lakeview.pdf, page 2")
    result = TurnResult(answer=f"**Supported** [{cell.id}]", status="verified", intent=None, evidence=ledger.items(),
                        cited=[cell.id], invalid=[], steps=[], timings={"total_s": 1.0})
    print_evidence(result)
    out = capsys.readouterr().out
    assert f"[{cell.id}] 18.4  — Table 2: Blood pressure at twelve months., lakeview.pdf, page 2" in out
