"""assistant.evals.pdf_render: each table style gives a one-page PDF whose text layer holds every cell; a paper's
sentences land on the pages they were given; two columns put words on both halves of the page."""

from __future__ import annotations

import pdfplumber
import pytest

from assistant.evals.pdf_render import (STYLES, PaperPage, drawable, render_paper_pdf, render_table_pdf,
                                        undrawable)

HEADER = [["Outcome", "Arm", "", "p value"], ["", "Statin (n=60)", "Placebo & co <x>", ""]]
ROWS = [["Deaths", "3", "7", "0.04"], ["Stroke, fatal (±)", "1", "2", "0.51"],
        ["A long outcome label with enough words to need wrapping when columns get tight", "12.5%", "9·1", "<0.001"]]


def _words(page) -> list[dict]:
    return page.extract_words(keep_blank_chars=False, use_text_flow=True)


@pytest.mark.parametrize("style", STYLES)
def test_each_style_renders_every_cell(tmp_path, style):
    path = tmp_path / f"{style}.pdf"
    render_table_pdf(path, HEADER, ROWS, style=style, caption="Table 2: Outcomes by arm", title="Trial results",
                     prose_above="The trial enrolled 120 patients.", prose_below="Deaths were fewer.")
    with pdfplumber.open(path) as pdf:
        assert len(pdf.pages) == 1
        page = pdf.pages[0]
        text = " ".join(page.extract_text().split())
        lines = page.lines + page.rects
    for cell in [c for row in HEADER + ROWS for c in row if c] + ["Table 2: Outcomes by arm", "Trial results",
                                                                 "The trial enrolled 120 patients."]:
        assert " ".join(cell.split()) in text or all(w in text for w in cell.split()), cell  # wrapped cells: words
    assert text.index("The trial enrolled") < text.index("Table 2:") < text.index("Deaths 3 7") \
        < text.index("Deaths were fewer.")
    if style == "plain":
        assert not lines
    elif style == "booktabs":
        horizontal = {round(x["top"]) for x in page.lines if abs(x["top"] - x["bottom"]) < 1}
        assert len(horizontal) == 3 and not [x for x in page.lines if abs(x["x0"] - x["x1"]) < 1]
    else:
        assert [x for x in page.lines if abs(x["x0"] - x["x1"]) < 1], "ruled tables have vertical rules"


def test_two_row_header_draws_a_span(tmp_path):
    path = tmp_path / "span.pdf"
    render_table_pdf(path, HEADER, ROWS, style="ruled")
    with pdfplumber.open(path) as pdf:
        page = pdf.pages[0]
        words = {w["text"]: w for w in page.extract_words()}
        statin, placebo, arm = words["Statin"], words["Placebo"], words["Arm"]
        # "Arm" is centred over the two columns it spans, and no rule divides it.
        assert statin["x0"] < arm["x0"] < placebo["x1"]
        assert (arm["x0"] + arm["x1"]) / 2 == pytest.approx((statin["x0"] + placebo["x1"]) / 2, abs=40)
        verticals_through_arm = [x for x in page.lines if abs(x["x0"] - x["x1"]) < 1 and arm["x0"] < x["x0"] < arm["x1"]
                                 and x["top"] <= arm["top"] <= x["bottom"]]
        assert not verticals_through_arm


def test_wide_table_goes_landscape_and_wraps(tmp_path):
    header = [[f"Measure {i}" for i in range(12)]]
    rows = [[f"value {r}.{c} with several words" for c in range(12)] for r in range(5)]
    path = tmp_path / "wide.pdf"
    render_table_pdf(path, header, rows, style="booktabs")
    with pdfplumber.open(path) as pdf:
        page = pdf.pages[0]
        assert len(pdf.pages) == 1 and page.width > page.height
        text = page.extract_text()
    assert all(f"{r}.{c}" in text for r in range(5) for c in range(12))


def test_table_too_big_for_a_page_is_refused(tmp_path):
    with pytest.raises(ValueError, match="does not fit on one page"):
        render_table_pdf(tmp_path / "tall.pdf", [["A", "B"]], [[str(i), str(i)] for i in range(400)], style="plain")


def test_characters_outside_the_font_are_replaced_and_reported(tmp_path):
    assert drawable("α ≥ 5 µg – “ok”\u00a0± 1\u00ad2") == "? ? 5 µg ? ?ok? ± 12"
    assert undrawable("α ≥ 5 µg – ok") == {"α", "≥", "–"}
    path = tmp_path / "greek.pdf"
    render_table_pdf(path, [["Dose", "Effect"]], [["≥ 5 µg", "α-blocker"]], style="plain")
    with pdfplumber.open(path) as pdf:
        text = pdf.pages[0].extract_text()
    assert drawable("≥ 5 µg") in text and drawable("α-blocker") in text


def _pages(n_sentences: int) -> list[PaperPage]:
    return [PaperPage(f"{p} Section", [f"Page {p} sentence {i} reports that outcome {p}{i} improved with statins."
                                       for i in range(n_sentences)]) for p in range(1, 4)]


def test_paper_sentences_are_on_their_pages(tmp_path):
    pages = _pages(9)
    pages[1].table = (HEADER, ROWS, "Table 1: Outcomes")
    path = tmp_path / "paper.pdf"
    render_paper_pdf(path, pages, references=["Smith J. A trial of statins. 2020.", "Doe A. Another. 2021."])
    with pdfplumber.open(path) as pdf:
        assert len(pdf.pages) == 3
        texts = [" ".join(p.extract_text().split()) for p in pdf.pages]
    for number, (page, text) in enumerate(zip(pages, texts), start=1):
        assert text.startswith("Journal of Evidence") and text.endswith(f" {number}")  # header and page number
        for sentence in page.sentences:
            assert sentence in text
        others = [t for i, t in enumerate(texts, start=1) if i != number]
        assert not any(page.sentences[0] in t for t in others)
    assert "Table 1: Outcomes" in texts[1] and "Statin (n=60)" in texts[1]
    assert "References [1] Smith J. A trial of statins. 2020." in texts[2]


def test_two_columns_use_both_halves(tmp_path):
    pages = _pages(45)
    path = tmp_path / "columns.pdf"
    render_paper_pdf(path, pages, two_columns=True, running_header="", page_numbers=False)
    with pdfplumber.open(path) as pdf:
        for number, page in enumerate(pdf.pages, start=1):
            middle = page.width / 2
            words = _words(page)
            left = [w for w in words if w["x1"] < middle]
            right = [w for w in words if w["x0"] > middle]
            assert left and right and len(left) + len(right) == len(words)  # no word straddles the gutter
            text = " ".join(page.extract_text().split())
            assert "Journal" not in text and not text.endswith(f" {number}")
            assert f"Page {number} sentence 44" in " ".join(w["text"] for w in right)


def test_overfull_page_is_refused(tmp_path):
    with pytest.raises(ValueError, match="page 1's content does not fit"):
        render_paper_pdf(tmp_path / "full.pdf", [PaperPage(None, ["A sentence that repeats on and on."] * 400),
                                                 PaperPage(None, ["Short."])])


def test_listed_word_is_hyphenated_at_a_line_end(tmp_path):
    sentence = ("Patients Patients Patients Patients whose pharmacokinetics were studied in detail had lower levels "
                "of the drug than those in the control arm.")
    path = tmp_path / "hyphen.pdf"
    render_paper_pdf(path, [PaperPage(None, [sentence])], two_columns=True, hyphenate=["pharmacokinetics"])
    with pdfplumber.open(path) as pdf:
        text = pdf.pages[0].extract_text()
    assert "pharmacoki-\nnetics" in text
    assert text.replace("-\n", "").replace("\n", " ").startswith("Journal of Evidence " + sentence)
