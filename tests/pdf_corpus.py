"""PDFs for the PDF reader's tests, generated on the fly (no binary files in the repository).

Well-formed documents are drawn with reportlab's canvas, so every line and rule sits where the test expects it;
the hostile ones are raw PDF bytes written by hand (:func:`raw_pdf`), so each defect is exactly the one named.
Each builder writes one file and returns what the test needs to know about its content.
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from reportlab.lib import colors
from reportlab.lib.pagesizes import letter
from reportlab.lib.utils import simpleSplit
from reportlab.pdfgen import canvas
from reportlab.platypus import Table, TableStyle

W, H = letter  # 612 x 792 points
MARGIN = 72
DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def _text(c: canvas.Canvas, text: str, x: float, y: float, width: float, *, font: str = "Helvetica",
          size: float = 10, leading: float = 13) -> float:
    """Draw ``text`` wrapped to ``width`` from baseline ``y`` down; the baseline below the last line."""
    c.setFont(font, size)
    for line in simpleSplit(text, font, size, width):
        c.drawString(x, y, line)
        y -= leading
    return y


# -- well-formed documents ------------------------------------------------------------------------------------

PAGE_SENTENCES = {
    1: ["The alpha cohort enrolled one hundred adults in Leeds.", "Each adult gave written consent before the visit.",
        "Baseline blood pressure was measured twice at rest.", "Most participants walked to the clinic."],
    2: ["The bravo cohort followed the same protocol in York.", "Nurses recorded every dose in a paper diary.",
        "Diaries were checked against pharmacy records weekly.", "Nine diaries were lost during the winter."],
    3: ["Systolic pressure fell by eight points in the bravo cohort.", "The alpha cohort saw a smaller change.",
        "No serious adverse events were reported in either cohort.", "The effect persisted at the final visit."],
}
HEADINGS = {1: "1 Introduction", 2: "2 Methods", 3: "3 Results"}
RUNNING_HEADER = "Journal of Trials"


def running_header_doc(path: Path) -> dict[int, list[str]]:
    """Three one-column pages, each with a running header (its volume page number changes), a bold heading, two
    paragraphs of known sentences and a "Page N of 3" footer."""
    c = canvas.Canvas(str(path), pagesize=letter)
    for page, sentences in PAGE_SENTENCES.items():
        c.setFont("Helvetica", 9)
        c.drawString(MARGIN, H - 40, f"{RUNNING_HEADER}, vol. 12, p. {100 + page}")
        y = _text(c, HEADINGS[page], MARGIN, H - 100, W - 2 * MARGIN, font="Helvetica-Bold", size=14, leading=22)
        y = _text(c, " ".join(sentences[:2]) * 1, MARGIN, y - 6, W - 2 * MARGIN)
        _text(c, " ".join(sentences[2:]), MARGIN, y - 10, W - 2 * MARGIN)
        c.setFont("Helvetica", 9)
        c.drawCentredString(W / 2, 30, f"Page {page} of 3")
        c.showPage()
    c.save()
    return PAGE_SENTENCES


LEFT = [f"Left sentence {n} reports a finding about cohort {n} in the spring sample." for n in range(1, 13)]
RIGHT = [f"Right sentence {n} describes a result for clinic {n} during the autumn season." for n in range(1, 13)]
TITLE = "A Two Column Study of Sleep"
ABSTRACT = ("Abstract. We studied sleep in two seasons across many clinics. The abstract spans the full width of the "
            "page above both columns of the body.")


PROSE_CAPTION = "Table 1 summarises the cohorts of both seasons in numbers."


def two_column_doc(path: Path, *, caption_in_prose: bool = False, rules: bool = False) -> tuple[list[str], list[str]]:
    """A title and an abstract across the page, then two columns whose lines share baselines; with
    ``caption_in_prose`` the left column starts with a sentence that starts like a table caption, with ``rules``
    the abstract and the columns are boxed, with a rule under the abstract and one between the columns (as some
    journals print): to pdfplumber, a grid of two rows and two columns."""
    c = canvas.Canvas(str(path), pagesize=letter)
    y = _text(c, TITLE, MARGIN, H - 80, W - 2 * MARGIN, font="Helvetica-Bold", size=16, leading=24)
    abstract_top = y + 4
    y = _text(c, ABSTRACT, MARGIN, y - 6, W - 2 * MARGIN)
    col_w, gutter = (W - 2 * MARGIN - 24) / 2, 24
    bottom = _text(c, " ".join(([PROSE_CAPTION] if caption_in_prose else []) + LEFT), MARGIN, y - 20, col_w)
    _text(c, " ".join(RIGHT), MARGIN + col_w + gutter, y - 20, col_w)
    if rules:
        left, right, split, bottom = MARGIN - 4, W - MARGIN + 4, y - 2, bottom + 4
        c.rect(left, bottom, right - left, abstract_top - bottom)
        c.line(left, split, right, split)
        c.line(W / 2, split, W / 2, bottom)
    c.showPage()
    c.save()
    return LEFT, RIGHT


def hyphen_ligature_doc(path: Path) -> bool:
    """Words broken across line ends ("evid-" / "ence", "COVID-" / "19"), and, where the DejaVu font is on the
    machine, words drawn with the ﬁ and ﬂ ligature characters. True when the ligatures were drawn."""
    c = canvas.Canvas(str(path), pagesize=letter)
    c.setFont("Helvetica", 10)
    lines = ["The strength of the evid-", "ence was moderate in the first trial. Rates of COVID-",
             "19 infection fell in the second year of the study."]
    y = H - 100
    for line in lines:
        c.drawString(MARGIN, y, line)
        y -= 13
    ligatures = DEJAVU.exists()
    if ligatures:
        from reportlab.pdfbase import pdfmetrics
        from reportlab.pdfbase.ttfonts import TTFont

        pdfmetrics.registerFont(TTFont("DejaVuSans", str(DEJAVU)))
        c.setFont("DejaVuSans", 10)
        c.drawString(MARGIN, y - 20, "The main \ufb01ndings were robust and \ufb02at across the sites.")
    c.showPage()
    c.save()
    return ligatures


SUPERSCRIPTS = ("Chi\u00b2 was 4.2 at 10\u2075 cells per m\u00b2; \u00bd of the samples were H\u2082O at 37\u00b0C "
                "(5 \u00b5g).")


def superscripts_doc(path: Path) -> bool:
    """A line with superscript, subscript and fraction digits, µ and °, drawn in DejaVu (which has them all) where
    the font is on the machine. True when drawn."""
    if not DEJAVU.exists():
        return False
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    pdfmetrics.registerFont(TTFont("DejaVuSans", str(DEJAVU)))
    c = canvas.Canvas(str(path), pagesize=letter)
    c.setFont("DejaVuSans", 10)
    c.drawString(MARGIN, H - 100, SUPERSCRIPTS)
    c.showPage()
    c.save()
    return True


# A paragraph that happens to wrap before "1)" and "2.", set justified so that every line but its last reaches
# the right edge, as a typesetter sets it: one paragraph, not list items.
WRAPPED_MARKERS = ["In the survey the participants named the factors that had shaped their choices, and they had:",
                   "1) education and 2) income in mind far more often than age. The results of stage one were",
                   "confirmed in every clinic, and then again in much larger numbers in the follow up of stage",
                   "2. The analysis weighted each answer by the size of the clinic."]
# Lists set as lists: items on lines of their own, the line before each one short; and items whose lines hang
# under their text, the line before the next item reaching the right edge.
SHORT_LIST = ["The risk factors were:", "1) education", "2) income", "3) age over 65 years"]
HANGING_LIST = [("(a)", ["The first item is long enough that it runs on to a second line which is set",
                             "flush with its text and reaches the right edge of the column as well."]),
                ("(b)", ["The second item is short."])]


def _justified(c: canvas.Canvas, lines: list[str], x: float, y: float, width: float | None, *,
               last_too: bool = False, size: float = 10, leading: float = 13) -> float:
    """Lines drawn as given, each but the last (or every one, with ``last_too``) stretched to ``width`` by its word
    spacing (none stretched without a width); the baseline below the last line."""
    for i, line in enumerate(lines):
        t = c.beginText(x, y)
        t.setFont("Helvetica", size)
        gaps = line.count(" ")
        stretch = width is not None and gaps and (last_too or i < len(lines) - 1)
        # the word spacing is part of the graphics state: it is set on every line, 0 where not stretched
        t.setWordSpace((width - c.stringWidth(line, "Helvetica", size)) / gaps if stretch else 0)
        t.textLine(line)
        c.drawText(t)
        y -= leading
    return y


def list_markers_doc(path: Path) -> None:
    """:data:`WRAPPED_MARKERS` as one justified paragraph, then :data:`SHORT_LIST` and :data:`HANGING_LIST`."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    width = max(stringWidth(line, "Helvetica", 10) for line in WRAPPED_MARKERS) + 4
    c = canvas.Canvas(str(path), pagesize=letter)
    y = _justified(c, WRAPPED_MARKERS, MARGIN, H - 100, width)
    y = _justified(c, SHORT_LIST, MARGIN, y - 10, None)
    for marker, lines in HANGING_LIST:
        c.setFont("Helvetica", 10)
        c.drawString(MARGIN, y, marker)
        y = _justified(c, lines, MARGIN + 18, y, width - 18, last_too=len(lines) > 1)
    c.showPage()
    c.save()


REFERENCE_ENTRY = "Smith J, Zebra K. Zebra outcomes in the wild. Lancet. 2020;395:1-9."


def references_doc(path: Path) -> None:
    """A body paragraph, then a "References" heading and entries that run onto a second page."""
    c = canvas.Canvas(str(path), pagesize=letter)
    y = _text(c, "Our trial found a clear benefit of the drug on sleep. The benefit lasted a year.", MARGIN,
              H - 100, W - 2 * MARGIN)
    y = _text(c, "References", MARGIN, y - 20, 300, font="Helvetica-Bold", size=12, leading=18)
    for n in range(1, 4):
        y = _text(c, f"{n}. {REFERENCE_ENTRY}", MARGIN, y - 4, W - 2 * MARGIN)
    c.showPage()
    _text(c, f"4. {REFERENCE_ENTRY} Quokka trial.", MARGIN, H - 100, W - 2 * MARGIN)
    c.showPage()
    c.save()


RULED = [["Characteristic", "Treatment", "Control"], ["Age, years", "54.2", "55.1"],
         ["Women, n (%)", "61 (48)", "58 (46)"], ["Body mass index", "27.3", "27.9"]]
BOOKTABS = [["Outcome", "Drug", "Placebo", "p value"], ["Mortality", "12", "19", "0.04"],
            ["Stroke", "3", "5", "0.31"], ["Readmission", "22", "30", "0.12"]]
TWO_ROW_HEADER_SOURCE = [["", "Women", "", "Men", ""], ["Event", "n", "%", "n", "%"],
                         ["Death", "4", "3.1", "6", "4.8"], ["Infarction", "2", "1.6", "3", "2.4"]]
TWO_ROW_HEADER = [["", "Women", "Women", "Men", "Men"]] + TWO_ROW_HEADER_SOURCE[1:]  # the span repeated
CAPTIONS = {1: "Table 1. Baseline characteristics", 2: "Table 2: Primary outcomes by arm",
            3: "Table 3. Events by sex"}


def _table(c: canvas.Canvas, data: list[list[str]], style: list, y_top: float) -> float:
    t = Table(data, style=TableStyle([("FONT", (0, 0), (-1, -1), "Helvetica", 10)] + style))
    _w, h = t.wrapOn(c, W, H)
    t.drawOn(c, MARGIN, y_top - h)
    return y_top - h


def tables_doc(path: Path) -> None:
    """Page 1: a fully ruled table; page 2: a booktabs table (three horizontal rules only); page 3: a ruled table
    whose header has two rows, the first with cells spanning two columns. Each has a caption above it and prose
    before and after."""
    c = canvas.Canvas(str(path), pagesize=letter)
    grid = [("GRID", (0, 0), (-1, -1), 0.5, colors.black)]
    booktabs = [("LINEABOVE", (0, 0), (-1, 0), 1.0, colors.black), ("LINEBELOW", (0, 0), (-1, 0), 0.5, colors.black),
                ("LINEBELOW", (0, -1), (-1, -1), 1.0, colors.black)]
    spans = grid + [("SPAN", (1, 0), (2, 0)), ("SPAN", (3, 0), (4, 0))]
    pages = [(1, RULED, grid), (2, BOOKTABS, booktabs), (3, TWO_ROW_HEADER_SOURCE, spans)]
    for number, data, style in pages:
        y = _text(c, f"This page introduces the table below, which is number {number} of three.", MARGIN, H - 100,
                  W - 2 * MARGIN)
        y = _text(c, CAPTIONS[number], MARGIN, y - 14, W - 2 * MARGIN)
        y = _table(c, data, style, y - 2)
        _text(c, "The prose after the table discusses it in plain words.", MARGIN, y - 24, W - 2 * MARGIN)
        c.showPage()
    c.save()


UNRULED = [["Dose", "Patients", "Response"], ["10 mg", "40", "22%"], ["20 mg", "38", "35%"],
           ["40 mg", "41", "51%"]]


def unruled_table_doc(path: Path) -> None:
    """A caption, then a table drawn as text in columns without any rule, then prose."""
    c = canvas.Canvas(str(path), pagesize=letter)
    y = _text(c, "The doses were compared in one small study of adults.", MARGIN, H - 100, W - 2 * MARGIN)
    y = _text(c, "Table 4. Response by dose", MARGIN, y - 14, W - 2 * MARGIN)
    c.setFont("Helvetica", 10)
    for row in UNRULED:
        y -= 4
        for x, cell in zip((MARGIN, MARGIN + 110, MARGIN + 220), row):
            c.drawString(x, y, cell)
        y -= 13
    _text(c, "Higher doses gave a higher response in this sample of adults.", MARGIN, y - 24, W - 2 * MARGIN)
    c.showPage()
    c.save()


SPANNED_SOURCE = [["Outcome", "Arm", "", "p value"], ["", "Statin", "Placebo", ""], ["Deaths", "3", "7", "0.04"],
                  ["A long outcome label that wraps onto a second line", "12", "9", "0.31"]]
SPANNED = [["Outcome", "Arm", "Arm", "p value"]] + SPANNED_SOURCE[1:]


def booktabs_spans_doc(path: Path) -> None:
    """A booktabs table (horizontal rules only) whose first header cell "Arm" is merged over two columns and
    drawn centred, and whose last row's label wraps onto a second line in its cell."""
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import Paragraph

    label = ParagraphStyle("cell", fontName="Helvetica", fontSize=10, leading=12)
    data = [list(row) for row in SPANNED_SOURCE]
    data[-1][0] = Paragraph(SPANNED_SOURCE[-1][0], label)
    style = [("FONT", (0, 0), (-1, -1), "Helvetica", 10), ("SPAN", (1, 0), (2, 0)), ("ALIGN", (1, 0), (2, 0), "CENTER"),
             ("LINEABOVE", (0, 0), (-1, 0), 1.0, colors.black), ("LINEBELOW", (0, 1), (-1, 1), 0.5, colors.black),
             ("LINEBELOW", (0, -1), (-1, -1), 1.0, colors.black), ("VALIGN", (0, 0), (-1, -1), "TOP")]
    c = canvas.Canvas(str(path), pagesize=letter)
    y = _text(c, "Outcomes were compared between the arms of the trial.", MARGIN, H - 100, W - 2 * MARGIN)
    y = _text(c, "Table 5. Outcomes by arm", MARGIN, y - 14, W - 2 * MARGIN)
    t = Table(data, colWidths=[150, 70, 70, 60], style=TableStyle(style))
    _w, h = t.wrapOn(c, W, H)
    t.drawOn(c, MARGIN, y - 2 - h)
    _text(c, "Deaths were fewer with the statin.", MARGIN, y - 30 - h, W - 2 * MARGIN)
    c.showPage()
    c.save()


# A table whose long cells wrap onto two to four lines inside their cells (drawn by the evaluation's renderer, in
# each rule style): a title that wraps and ends a sentence, notes of fifteen words, numbers with spaces, a wrapped
# header, a row without a title, and a row whose every cell wraps.
WRAPPED_HEADER = ["Title", "Year", "Director", "Studio", "Catalogue numbers", "Country of first release", "Notes"]
WRAPPED_ROWS = [
    ["The Long Road (director's cut, restored).", "1998", "Anna Maria Holt", "North Film Studio Company",
     "+44 20 7946 0018 +44 20 7946 0019", "United Kingdom",
     "Nominated for a regional award after a long festival run across three countries that year"],
    ["Harbour Lights", "2001", "Anna Maria Holt", "North Film Studio Company", "0042", "Ireland",
     "Won the critics prize; the film was later restored and shown again at the national archive"],
    ["", "2003", "Jon Berg", "Coastline Pictures", "0057", "Norway", "Uncredited"],
    ["Winter Field", "2007", "Jon Berg", "Coastline Pictures", "0061 0062", "Norway",
     "Voice only, recorded in two sessions during the summer break between the two seasons of filming"],
    ["A Very Long Film Title That Needs Two Lines Of Its Own", "2009", "Maria Dolores Fernandez Ortega",
     "South Coast Independent Studios", "+34 91 123 4567 +34 91 765 4321", "Spain and Portugal",
     "Shot on location in the north over six weeks with a small local crew and borrowed lights"],
    ["Glass House", "2010", "Jon Berg", "Coastline Pictures", "0077", "Sweden", ""],
]


def plain_doc(path: Path, pages: int = 1, text: str = "A plain sentence about the trial.") -> None:
    c = canvas.Canvas(str(path), pagesize=letter)
    for n in range(1, pages + 1):
        _text(c, f"{text} This is page {n}.", MARGIN, H - 100, W - 2 * MARGIN)
        c.showPage()
    c.save()


# -- raw PDF bytes --------------------------------------------------------------------------------------------

def raw_pdf(objects: list[bytes], *, root: int = 1, trailer_extra: bytes = b"", header: bytes = b"%PDF-1.7\n",
            xref: bool = True) -> bytes:
    """A PDF file from object bodies (object n is ``objects[n-1]``), with a correct xref table unless told not to."""
    out = bytearray(header + b"%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    start = len(out)
    if xref:
        out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
        out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R %s>>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, root,
                                                                                    trailer_extra, start)
    return bytes(out)


def stream(data: bytes, extra: bytes = b"") -> bytes:
    return b"<< /Length %d %s>>\nstream\n" % (len(data), extra) + data + b"\nendstream"


FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"


def simple_pdf(page_texts: list[bytes], *, catalog_extra: bytes = b"", page_extra: bytes = b"",
               mediabox: bytes = b"[0 0 612 792]", extra_objects: list[bytes] = (), at: bytes = b"72 700") -> bytes:
    """Pages each showing one line of text (a content stream per page); objects: 1 catalog, 2 pages, 3 font, then
    pages and contents in pairs, then ``extra_objects`` (numbered from 4 + 2 * pages)."""
    n = len(page_texts)
    kids = b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(n))
    objects = [b"<< /Type /Catalog /Pages 2 0 R " + catalog_extra + b">>",
               b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, n), FONT]
    for i, text in enumerate(page_texts):
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox " + mediabox + b" /Resources << /Font << /F1 3 0 R "
                       b">> >> /Contents %d 0 R " % (5 + 2 * i) + page_extra + b">>")
        objects.append(stream(b"BT /F1 12 Tf " + at + b" Td (" + text + b") Tj ET"))
    return raw_pdf(objects + list(extra_objects))


def many_pages_pdf(count: int) -> bytes:
    """``count`` pages that share one content stream: a large page count in a small file, built in no time."""
    kids = b" ".join(b"%d 0 R" % (5 + i) for i in range(count))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, count),
               FONT, stream(b"BT /F1 12 Tf 72 700 Td (A page of a long report.) Tj ET")]
    objects += [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
                b"/Contents 4 0 R >>"] * count
    return raw_pdf(objects)


def bomb_pdf(inflated_bytes: int = 1100 * 1024**2) -> bytes:
    """A page whose FlateDecode content stream inflates to ``inflated_bytes`` of spaces from about 1 MB on disk.

    Deflating a gigabyte takes seconds, so one 4 MB chunk is deflated once after a full flush (which resets the
    compressor, making each chunk's output the same bytes) and that output repeated; the checksum is computed
    chunk by chunk. The test never holds the inflated stream."""
    prefix, chunk = b"BT /F1 12 Tf 72 700 Td (Bomb) Tj ET\n", b" " * (4 * 1024**2)
    count = inflated_bytes // len(chunk)
    comp = zlib.compressobj(9)
    head = comp.compress(prefix) + comp.flush(zlib.Z_FULL_FLUSH)
    unit = comp.compress(chunk) + comp.flush(zlib.Z_FULL_FLUSH)
    last_block = comp.flush()[:-4]  # the final empty block, without this compressor's checksum
    adler = zlib.adler32(prefix)
    for _ in range(count):
        adler = zlib.adler32(chunk, adler)
    data = head + unit * count + last_block + adler.to_bytes(4, "big")
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>", FONT,
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
               b"/Contents 5 0 R >>", stream(data, b"/Filter /FlateDecode ")]
    return raw_pdf(objects)


def reportlab_bytes(draw: Callable[[canvas.Canvas], None], **kw) -> bytes:
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=letter, **kw)
    draw(c)
    c.save()
    return buf.getvalue()


def _one_line(text: str) -> Callable[[canvas.Canvas], None]:
    def draw(c: canvas.Canvas) -> None:
        _text(c, text, MARGIN, H - 100, W - 2 * MARGIN)
        c.showPage()
    return draw


def encrypted_pdf(user: str, owner: str) -> bytes:
    from reportlab.lib.pdfencrypt import StandardEncryption

    return reportlab_bytes(_one_line("A secret sentence about the trial."),
                           encrypt=StandardEncryption(user, ownerPassword=owner, canPrint=0))


def image_only_pdf() -> bytes:
    """Two pages that are pictures of text (a scan): no text layer at all."""
    from PIL import Image, ImageDraw
    from reportlab.lib.utils import ImageReader

    img = Image.new("RGB", (600, 200), "white")
    ImageDraw.Draw(img).text((20, 80), "A scanned sentence about the trial.", fill="black")

    def draw(c: canvas.Canvas) -> None:
        for _ in range(2):
            c.drawImage(ImageReader(img), MARGIN, H - 300, width=450, height=150)
            c.showPage()
    return reportlab_bytes(draw)


def mixed_scan_pdf() -> bytes:
    """A page with a text layer, then a page that is only a picture."""
    from PIL import Image
    from reportlab.lib.utils import ImageReader

    def draw(c: canvas.Canvas) -> None:
        _text(c, "The typed page holds a sentence about the trial.", MARGIN, H - 100, W - 2 * MARGIN)
        c.showPage()
        c.drawImage(ImageReader(Image.new("RGB", (60, 20), "gray")), MARGIN, H - 300, width=450, height=150)
        c.showPage()
    return reportlab_bytes(draw)


def glyph_flood_pdf(glyphs: int = 100_000) -> bytes:
    """A normal first page, then a page with ``glyphs`` characters drawn in tiny type."""
    def draw(c: canvas.Canvas) -> None:
        _text(c, "The first page holds an ordinary sentence about the trial.", MARGIN, H - 100, W - 2 * MARGIN)
        c.showPage()
        c.setFont("Helvetica", 1)
        line = "x" * 500
        for i in range(glyphs // len(line)):
            c.drawString(10, H - 10 - (i % 700), line)
        c.showPage()
    return reportlab_bytes(draw)


def rotated_pdf() -> bytes:
    def draw(c: canvas.Canvas) -> None:
        _text(c, "This page is turned a quarter round by its Rotate entry.", MARGIN, H - 100, W - 2 * MARGIN)
        c.setPageRotation(90)
        c.showPage()
    return reportlab_bytes(draw)


def rtl_pdf() -> bytes:
    def draw(c: canvas.Canvas) -> None:
        if DEJAVU.exists():
            from reportlab.pdfbase import pdfmetrics
            from reportlab.pdfbase.ttfonts import TTFont

            pdfmetrics.registerFont(TTFont("DejaVuSans", str(DEJAVU)))
            c.setFont("DejaVuSans", 12)
        else:
            c.setFont("Helvetica", 12)
        c.drawString(MARGIN, H - 100, "שלום עולם and مرحبا بالعالم in one line.")
        c.showPage()
    return reportlab_bytes(draw)


def docx_bytes() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        zf.writestr("word/document.xml", "<w:document/>")
    return buf.getvalue()


def png_bytes() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), "red").save(buf, format="PNG")
    return buf.getvalue()


def jpeg_bytes() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), "blue").save(buf, format="JPEG")
    return buf.getvalue()


def sample_pdf_bytes(pages: int = 3) -> bytes:
    return reportlab_bytes(lambda c: [(_text(c, f"Sentence number {n} on its own page of the sample." * 4, MARGIN,
                                             H - 100, W - 2 * MARGIN), c.showPage()) for n in range(pages)])


# -- the hostile corpus ---------------------------------------------------------------------------------------

@dataclass
class Hostile:
    """One hostile or malformed upload: ``expect`` is "refuse" (a DocumentError naming the file and saying
    ``mention``), "read" (a reading whose text holds ``text`` and whose notes say ``mention``), or "either"."""

    name: str
    build: Callable[[Path], None]
    expect: str
    mention: str = ""
    text: str = ""
    limits: dict = field(default_factory=dict)
    no_tesseract: bool = False
    max_seconds: float = 25.0


def _bytes(data: bytes | Callable[[], bytes]) -> Callable[[Path], None]:
    return lambda path: path.write_bytes(data() if callable(data) else data)


def _cut(fraction: float) -> Callable[[Path], None]:
    return lambda path: path.write_bytes((lambda d: d[:int(len(d) * fraction)])(sample_pdf_bytes()))


def _directory(path: Path) -> None:
    path.mkdir()


def _broken_xref(path: Path) -> None:
    # every offset in the xref table is 9 bytes off, and startxref points into the middle of an object
    data = simple_pdf([b"Text behind a broken cross-reference table."])
    start = data.rindex(b"xref\n")
    table = re.sub(rb"(\d{10}) 00000 n", lambda m: b"%010d 00000 n" % (int(m.group(1)) + 9), data[start:])
    path.write_bytes(data[:start] + re.sub(rb"startxref\n\d+", b"startxref\n40", table))


def _xref_self_loop(path: Path) -> None:
    # the page tree's Kids hold the Pages node itself, and an object stream Extends itself
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [2 0 R 4 0 R] /Count 2 >>", FONT,
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
               b"/Contents 5 0 R >>", stream(b"BT /F1 12 Tf 72 700 Td (Looped tree.) Tj ET"),
               stream(b"6 0 ", b"/Type /ObjStm /N 1 /First 4 /Extends 6 0 R ")]
    path.write_bytes(raw_pdf(objects))


def _xref_prev_loop(path: Path) -> None:
    # the trailer's /Prev sends a reader back to the same cross-reference table, for ever
    data = simple_pdf([b"A trailer that points at itself."])
    start = int(data.rsplit(b"startxref\n", 1)[1].split(b"\n")[0])
    path.write_bytes(data.replace(b"trailer\n<< ", b"trailer\n<< /Prev %d " % start))


def _deep_nesting(path: Path) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    objects = [b"<< /Type /Catalog /Pages 2 0 R /Deep 6 0 R >>", b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>", FONT,
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
               b"/Contents 5 0 R >>", stream(b"BT /F1 12 Tf 72 700 Td (Deep) Tj ET " + deep), deep,
               b"<<" * 50_000 + b">>" * 50_000]
    path.write_bytes(raw_pdf(objects))


def _javascript(path: Path) -> None:
    js = b"<< /S /JavaScript /JS (app.alert\\('hello'\\);) >>"
    data = simple_pdf([b"A page that would run a script on opening."],
                      catalog_extra=b"/OpenAction 6 0 R /Names << /JavaScript << /Names [(a) 6 0 R] >> >> ",
                      extra_objects=[js])
    path.write_bytes(data)


def _attachment(path: Path) -> None:
    data = simple_pdf([b"A page with a file attached to the document."],
                      catalog_extra=b"/Names << /EmbeddedFiles << /Names [(payload.exe) 6 0 R] >> >> ",
                      extra_objects=[b"<< /Type /Filespec /F (payload.exe) /EF << /F 7 0 R >> >>",
                                     stream(b"MZ not really a program", b"/Type /EmbeddedFile ")])
    path.write_bytes(data)


def _one_broken_page(path: Path) -> None:
    # page 2's content is a reference to an object that does not exist, and its resources are a number
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [4 0 R 6 0 R] /Count 2 >>", FONT,
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
               b"/Contents 5 0 R >>", stream(b"BT /F1 12 Tf 72 700 Td (The good page survives.) Tj ET"),
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources 42 /Contents 99 0 R >>"]
    path.write_bytes(raw_pdf(objects))


def _no_tounicode(path: Path) -> None:
    # a font whose codes map to made-up glyph names: no ToUnicode, no standard encoding to fall back on
    font = (b"<< /Type /Font /Subtype /Type1 /BaseFont /Mystery /FirstChar 65 /LastChar 70 /Widths [500 500 500 500 "
            b"500 500] /Encoding << /Type /Encoding /Differences [65 /g1 /g2 /g3 /g4 /g5 /g6] >> >>")
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>", font,
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
               b"/Contents 5 0 R >>", stream(b"BT /F1 12 Tf 72 700 Td (ABCDEF FEDCBA) Tj ET")]
    path.write_bytes(raw_pdf(objects))


def _zero_mediabox(path: Path) -> None:
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [4 0 R 6 0 R] /Count 2 >>", FONT,
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 0 0] /Resources << /Font << /F1 3 0 R >> >> "
               b"/Contents 5 0 R >>", stream(b"BT /F1 12 Tf 0 0 Td (Nowhere) Tj ET"),
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
               b"/Contents 7 0 R >>", stream(b"BT /F1 12 Tf 72 700 Td (The second page has room.) Tj ET")]
    path.write_bytes(raw_pdf(objects))


def _lying_count(path: Path) -> None:
    data = simple_pdf([b"One page that claims to be two billion."])
    path.write_bytes(data.replace(b"/Count 1 ", b"/Count 2000000000 "))


def _huge_length(path: Path) -> None:
    data = simple_pdf([b"A stream whose Length is absurd."])
    path.write_bytes(re.sub(rb"/Length \d+", b"/Length 99999999999", data, count=1))


def _no_root(path: Path) -> None:
    data = simple_pdf([b"No catalog."])
    path.write_bytes(data.replace(b"/Root 1 0 R", b""))


def hostile_cases() -> list[Hostile]:
    text_ok = b"An ordinary sentence on an ordinary page."
    return [
        Hostile("zero_bytes", _bytes(b""), "refuse", "empty"),
        Hostile("whitespace_only", _bytes(b" \n\t\n  "), "refuse", "empty"),
        Hostile("plain_text", _bytes(b"Dear reader,\nthis is a letter, not a PDF.\n"), "refuse", "text"),
        Hostile("html_renamed", _bytes(b"<!DOCTYPE html>\n<html><body><p>A web page</p></body></html>"), "refuse",
                "HTML"),
        Hostile("png_renamed", _bytes(png_bytes), "refuse", "PNG"),
        Hostile("jpeg_renamed", _bytes(jpeg_bytes), "refuse", "JPEG"),
        Hostile("docx_renamed", _bytes(docx_bytes), "refuse", "Word"),
        Hostile("directory", _directory, "refuse", "not a file"),
        Hostile("truncated_10", _cut(0.10), "either"),
        Hostile("truncated_50", _cut(0.50), "either"),
        Hostile("truncated_90", _cut(0.90), "either"),
        Hostile("garbage_after_header", _bytes(lambda: b"%PDF-1.7\n" + bytes(range(256)) * 80), "refuse"),
        Hostile("header_and_eof_only", _bytes(b"%PDF-1.4\n%%EOF\n"), "refuse"),
        Hostile("broken_xref", _broken_xref, "either", text="broken cross-reference"),
        Hostile("no_root", _no_root, "either"),
        Hostile("xref_self_loop", _xref_self_loop, "either"),
        Hostile("xref_prev_loop", _xref_prev_loop, "read", text="points at itself"),
        Hostile("deep_nesting", _deep_nesting, "either"),
        Hostile("huge_stream_length", _huge_length, "either"),
        Hostile("lying_page_count", _lying_count, "either"),
        Hostile("password_protected", _bytes(lambda: encrypted_pdf("secret", "owner")), "refuse", "password"),
        Hostile("empty_user_password", _bytes(lambda: encrypted_pdf("", "owner")), "read", "encrypted",
                text="A secret sentence"),
        Hostile("two_thousand_pages", _bytes(lambda: many_pages_pdf(2000)), "refuse", "EVIDENTIA_PDF_MAX_PAGES",
                max_seconds=10.0),
        Hostile("glyph_flood_page", _bytes(glyph_flood_pdf), "read", "page 2", text="ordinary sentence"),
        Hostile("decompression_bomb", _bytes(bomb_pdf), "either"),
        Hostile("javascript_open_action", _javascript, "read", "JavaScript", text="run a script"),
        Hostile("embedded_attachment", _attachment, "read", "attached files", text="file attached"),
        Hostile("image_only_no_tesseract", _bytes(image_only_pdf), "refuse", "tesseract", no_tesseract=True),
        Hostile("one_page_scanned", _bytes(mixed_scan_pdf), "read", "page 2 not read", text="typed page",
                no_tesseract=True),
        Hostile("one_broken_page", _one_broken_page, "either", text="good page survives"),
        Hostile("nul_bytes_in_text", _bytes(simple_pdf([b"Before\\000after a NUL \000 byte."])), "read",
                text="after a NUL"),
        Hostile("right_to_left", _bytes(rtl_pdf), "read", text="in one line"),
        Hostile("zero_mediabox_page", _zero_mediabox, "read", "page 1", text="second page has room"),
        Hostile("rotated_page", _bytes(rotated_pdf), "read", text="quarter round"),
        Hostile("huge_mediabox", _bytes(simple_pdf([text_ok], mediabox=b"[0 0 14400000 14400000]")), "either"),
        Hostile("over_size_limit", _bytes(lambda: sample_pdf_bytes(3)), "refuse", "limit",
                limits={"max_bytes": 1024}),
        Hostile("many_tiny_pages", _bytes(simple_pdf([b"Tiny page %d." % i for i in range(300)],
                                                     mediabox=b"[0 0 100 20]", at=b"2 5")), "read",
                text="Tiny page 299"),
        Hostile("font_without_tounicode", _no_tounicode, "either"),
        Hostile("blank_page", _bytes(simple_pdf([b""])), "refuse", "no text"),
        Hostile("timeout", _bytes(lambda: sample_pdf_bytes(3)), "refuse", "took longer than",
                limits={"timeout_s": 0.05}),
        Hostile("memory_limit", _bytes(lambda: sample_pdf_bytes(3)), "refuse", "memory",
                limits={"max_memory_mb": 40}),
    ]
