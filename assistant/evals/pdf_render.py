"""PDFs with known content, drawn with reportlab: a one-page table in one of three rule styles, and a multi-page
"paper" whose every sentence is on a known page. The PDF extraction evaluation and the PDF reader's tests compare
what a reader extracts with what was drawn here.

Only reportlab's standard fonts (Helvetica) are used, so nothing depends on fonts installed on the machine. They
are drawn with Latin-1 only: every other character (Greek letters, ≥, en dashes) is drawn as "?". :func:`drawable` gives the text exactly as drawn, so an evaluation compares an extraction with that,
and :func:`undrawable` says which characters of a text were replaced, so a loss in the render is never counted
against the extraction.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.enums import TA_CENTER, TA_JUSTIFY
from reportlab.lib.pagesizes import landscape, letter
from reportlab.lib.styles import ParagraphStyle
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.platypus import (BaseDocTemplate, Flowable, Frame, PageBreak, PageTemplate, Paragraph, Spacer,
                                Table, TableStyle)

STYLES = ("ruled", "booktabs", "plain")  # ruled: every cell boxed; booktabs: three rules; plain: no lines

FONT, BOLD, ITALIC = "Helvetica", "Helvetica-Bold", "Helvetica-Oblique"
MARGIN = 54.0  # points (3/4 inch)
CELL_PAD = 3.0  # left and right padding inside a table cell
MIN_FONT = 5.0

# --- characters -----------------------------------------------------------------------------------------------

# Latin-1 only, as the evaluation scores against (its ``latin1``): the fonts' WinAnsi encoding would also draw a
# few more (dashes, curly quotes, €), but one rule for the render and the scoring keeps them in step. A no-break
# space is drawn as a space and a soft hyphen is dropped, as a PDF reader shows them; C0/C1 control characters
# have no glyph and become "?".
_MAPPED = {"\u00a0": " ", "\u00ad": ""}


def _is_drawable(ch: str) -> bool:
    return ch in "\t\n\r" or (" " <= ch < "\u0100" and not "\x7f" <= ch <= "\x9f")


def drawable(text: str) -> str:
    """``text`` as it is drawn: characters the standard fonts lack become "?", and whitespace runs one space
    (as a reportlab Paragraph lays them out)."""
    out = "".join(_MAPPED.get(ch, ch if _is_drawable(ch) else "?") for ch in text)
    return " ".join(out.split())


def undrawable(text: str) -> set[str]:
    """The characters of ``text`` that :func:`drawable` replaces with "?"."""
    return {ch for ch in text if ch not in _MAPPED and not _is_drawable(ch)}


def _markup(text: str) -> str:
    """Paragraph markup for plain text: reportlab reads <, > and & as markup."""
    return escape(drawable(text))


# --- tables ---------------------------------------------------------------------------------------------------


def render_table_pdf(path: Path, header: list[list[str]], rows: list[list[str]], *, style: str,
                     caption: str = "Table 1: ...", title: str | None = None, font_size: float = 9,
                     prose_above: str | None = None, prose_below: str | None = None) -> None:
    """One page: an optional title, optional prose, the caption, the table, optional prose after it.

    ``header`` holds one or two rows; in the first of two, an empty string means "spanned by the cell to its left"
    and is drawn as one cell spanning those columns. A table too wide for a portrait page is drawn on a landscape
    page, then in smaller type (down to 5 pt); long cell text wraps inside its cell. Raises ``ValueError`` if the
    table cannot fit on one page.
    """
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, not {style!r}")
    if not 1 <= len(header) <= 2:
        raise ValueError("header must have one or two rows")
    width = max(len(r) for r in [*header, *rows])
    header = [list(r) + [""] * (width - len(r)) for r in header]
    rows = [list(r) + [""] * (width - len(r)) for r in rows]

    size = float(font_size)
    while size >= MIN_FONT:
        for pagesize in (letter, landscape(letter)):
            avail_w, avail_h = pagesize[0] - 2 * MARGIN, pagesize[1] - 2 * MARGIN
            table = _table(header, rows, style, size, avail_w)
            if table is None:
                continue
            story = _table_page_story(table, caption, title, size, prose_above, prose_below)
            if sum(f.wrap(avail_w, avail_h)[1] + f.getSpaceBefore() + f.getSpaceAfter() for f in story) <= avail_h:
                doc = _OnePage(str(path), pagesize=pagesize, leftMargin=MARGIN, rightMargin=MARGIN,
                               topMargin=MARGIN, bottomMargin=MARGIN)
                doc.build(story)
                if doc.page != 1:  # the measure above missed something; a second page breaks the contract
                    raise ValueError(f"the table ran onto {doc.page} pages")
                return
        size = round(size * 0.85, 2)
    raise ValueError(f"the table ({len(header) + len(rows)} rows x {width} columns) does not fit on one page "
                     f"even in {MIN_FONT:g} pt type")


class _OnePage(BaseDocTemplate):
    def __init__(self, filename: str, **kw):
        super().__init__(filename, **kw)
        frame = Frame(self.leftMargin, self.bottomMargin, self.width, self.height, id="body",
                      leftPadding=0, rightPadding=0, topPadding=0, bottomPadding=0)
        self.addPageTemplates([PageTemplate(id="page", frames=[frame])])


def _table_page_story(table: Table, caption: str, title: str | None, size: float, prose_above: str | None,
                      prose_below: str | None) -> list[Flowable]:
    prose = ParagraphStyle("prose", fontName=FONT, fontSize=size + 1, leading=(size + 1) * 1.3, spaceAfter=8,
                           alignment=TA_JUSTIFY)
    story: list[Flowable] = []
    if title:
        story.append(Paragraph(_markup(title), ParagraphStyle("title", fontName=BOLD, fontSize=size + 5,
                                                              leading=(size + 5) * 1.25, spaceAfter=10)))
    if prose_above:
        story.append(Paragraph(_markup(prose_above), prose))
    if caption:
        story.append(Paragraph(_markup(caption), ParagraphStyle("caption", fontName=FONT, fontSize=size,
                                                                leading=size * 1.25, spaceAfter=4)))
    story.append(table)
    if prose_below:
        story.append(Spacer(0, 8))
        story.append(Paragraph(_markup(prose_below), prose))
    return story


def _table(header: list[list[str]], rows: list[list[str]], style: str, size: float,
           avail_w: float) -> Table | None:
    """The table as a reportlab flowable whose columns fit ``avail_w``, or None if even the longest words do not."""
    spans = _header_spans(header)
    spanned = {(0, c) for start, end in spans for c in range(start + 1, end + 1)}
    widths = _column_widths(header, rows, spanned, spans, size, avail_w)
    if widths is None:
        return None
    leading = size * 1.2
    cell = ParagraphStyle("cell", fontName=FONT, fontSize=size, leading=leading)
    head = ParagraphStyle("head", parent=cell, fontName=BOLD)
    head_centred = ParagraphStyle("head-centred", parent=head, alignment=TA_CENTER)
    span_starts = {start for start, _ in spans}
    data: list[list[object]] = []
    for r, row in enumerate(header):
        data.append(["" if (r, c) in spanned else
                     Paragraph(_markup(v), head_centred if r == 0 and c in span_starts else head)
                     for c, v in enumerate(row)])
    data += [[Paragraph(_markup(v), cell) for v in row] for row in rows]

    commands: list[tuple] = [("LEFTPADDING", (0, 0), (-1, -1), CELL_PAD), ("RIGHTPADDING", (0, 0), (-1, -1), CELL_PAD),
                             ("TOPPADDING", (0, 0), (-1, -1), 2), ("BOTTOMPADDING", (0, 0), (-1, -1), 2),
                             ("VALIGN", (0, 0), (-1, -1), "TOP")]
    commands += [("SPAN", (start, 0), (end, 0)) for start, end in spans]
    last_head = len(header) - 1
    if style == "ruled":
        commands.append(("GRID", (0, 0), (-1, -1), 0.5, colors.black))
    elif style == "booktabs":
        commands += [("LINEABOVE", (0, 0), (-1, 0), 1.0, colors.black),
                     ("LINEBELOW", (0, last_head), (-1, last_head), 0.5, colors.black),
                     ("LINEBELOW", (0, -1), (-1, -1), 1.0, colors.black)]
    return Table(data, colWidths=widths, style=TableStyle(commands), repeatRows=0, hAlign="LEFT")


def _header_spans(header: list[list[str]]) -> list[tuple[int, int]]:
    """(first, last) columns of each span in the first of two header rows: a non-empty cell followed by empties."""
    if len(header) < 2:
        return []
    spans, row = [], header[0]
    c = 0
    while c < len(row):
        end = c
        if row[c].strip():
            while end + 1 < len(row) and not row[end + 1].strip():
                end += 1
        if end > c:
            spans.append((c, end))
        c = end + 1
    return spans


def _column_widths(header: list[list[str]], rows: list[list[str]], spanned: set[tuple[int, int]],
                   spans: list[tuple[int, int]], size: float, avail_w: float) -> list[float] | None:
    """Each column as wide as its longest text if they all fit; else at least its longest word, with the width
    left over shared in proportion to how much each column would still like. None: the words alone are too wide."""
    width = len(header[0])
    natural, minimum = [2 * CELL_PAD + 1] * width, [2 * CELL_PAD + 1] * width
    span_cells = {(0, start) for start, _ in spans}  # their text is measured against the columns they span
    for r, row in enumerate([*header, *rows]):
        font = BOLD if r < len(header) else FONT
        for c, v in enumerate(row):
            if (r, c) in spanned or (r, c) in span_cells:
                continue
            text = drawable(v)
            natural[c] = max(natural[c], stringWidth(text, font, size) + 2 * CELL_PAD + 1)
            longest_word = max((stringWidth(w, font, size) for w in text.split()), default=0)
            minimum[c] = max(minimum[c], longest_word + 2 * CELL_PAD + 1)
    if sum(minimum) > avail_w:
        return None
    if sum(natural) <= avail_w:
        return natural
    extra = avail_w - sum(minimum)
    wants = [n - m for n, m in zip(natural, minimum)]
    return [m + extra * w / sum(wants) for m, w in zip(minimum, wants)]


# --- papers ---------------------------------------------------------------------------------------------------


@dataclass
class PaperPage:
    """One page of a paper: an optional heading, sentences, and an optional table (header rows, body rows,
    caption) drawn after them. Everything here is drawn on this page, or the render fails."""

    heading: str | None
    sentences: list[str]
    table: tuple[list[list[str]], list[list[str]], str] | None = None


SENTENCES_PER_PARAGRAPH = 4
COLUMN_GAP = 18.0


class _PageMark(Flowable):
    """A zero-size flowable at the end of a page's content: the page it lands on tells whether the content fit."""

    def __init__(self, page: int):
        super().__init__()
        self.intended_page = page
        self.width = self.height = 0

    def wrap(self, avail_w, avail_h):
        return 0, 0

    def draw(self):
        pass


class _Paper(BaseDocTemplate):
    def __init__(self, filename: str, *, two_columns: bool, running_header: str, page_numbers: bool):
        super().__init__(filename, pagesize=letter, leftMargin=MARGIN, rightMargin=MARGIN, topMargin=MARGIN + 18,
                         bottomMargin=MARGIN + 12)
        self.running_header, self.page_numbers = running_header, page_numbers
        if two_columns:
            col = (self.width - COLUMN_GAP) / 2
            frames = [Frame(self.leftMargin + i * (col + COLUMN_GAP), self.bottomMargin, col, self.height,
                            id=f"column{i + 1}", leftPadding=0, rightPadding=0, topPadding=0, bottomPadding=0)
                      for i in range(2)]
        else:
            frames = [Frame(self.leftMargin, self.bottomMargin, self.width, self.height, id="body",
                            leftPadding=0, rightPadding=0, topPadding=0, bottomPadding=0)]
        self.frame_width = frames[0].width
        self.addPageTemplates([PageTemplate(id="page", frames=frames, onPage=self._decorate)])
        self.misplaced: list[tuple[int, int]] = []  # (intended page, page it landed on)

    def _decorate(self, canvas, doc) -> None:
        """The running header on top of every page and its number at the bottom: furniture a reader must drop."""
        canvas.saveState()
        width, height = self.pagesize
        if self.running_header:
            canvas.setFont(ITALIC, 8)
            canvas.drawString(MARGIN, height - MARGIN + 4, drawable(self.running_header))
            canvas.setLineWidth(0.4)
            canvas.line(MARGIN, height - MARGIN, width - MARGIN, height - MARGIN)
        if self.page_numbers:
            canvas.setFont(FONT, 9)
            canvas.drawCentredString(width / 2, MARGIN - 10, str(doc.page))
        canvas.restoreState()

    def afterFlowable(self, flowable) -> None:
        if isinstance(flowable, _PageMark) and flowable.intended_page != self.page:
            self.misplaced.append((flowable.intended_page, self.page))


def render_paper_pdf(path: Path, pages: list[PaperPage], *, two_columns: bool = False,
                     running_header: str = "Journal of Evidence", page_numbers: bool = True,
                     references: Sequence[str] = (), hyphenate: Sequence[str] = (),
                     table_style: str = "booktabs", font_size: float = 10) -> None:
    """A paper whose page ``i + 1`` holds exactly ``pages[i]``: its heading, its sentences (in paragraphs of up to
    four, justified) and its table. Each page's content is followed by a page break, and a render whose content
    spills onto another page raises ``ValueError``, so the page of every sentence is known exactly.

    The running header and page number are drawn on every page; ``two_columns`` lays each page out in two frames
    (the text fills the left column, then the right). ``references`` ("Smith J. …") follow the last page under a
    "References" heading and may run onto further pages. A word listed in ``hyphenate`` (letters only) is broken
    with a "-" wherever it falls across a line end ("pharmaco-" / "kinetics"), as a typesetter would, and no other
    word is; whether one falls there depends on the layout. The sentences' text is unchanged.
    """
    if table_style not in STYLES:
        raise ValueError(f"table_style must be one of {STYLES}, not {table_style!r}")
    doc = _Paper(str(path), two_columns=two_columns, running_header=running_header, page_numbers=page_numbers)
    body = ParagraphStyle("body", fontName=FONT, fontSize=font_size, leading=font_size * 1.3, spaceAfter=6,
                          alignment=TA_JUSTIFY, hyphenationLang=_hyphenator(hyphenate) if hyphenate else "",
                          hyphenationMinWordLength=5)
    heading = ParagraphStyle("heading", fontName=BOLD, fontSize=font_size + 2, leading=(font_size + 2) * 1.3,
                             spaceBefore=4, spaceAfter=6)
    caption = ParagraphStyle("caption", fontName=FONT, fontSize=font_size - 1, leading=(font_size - 1) * 1.25,
                             spaceBefore=6, spaceAfter=4)
    story: list[Flowable] = []
    for number, page in enumerate(pages, start=1):
        if number > 1:
            story.append(PageBreak())
        if page.heading:
            story.append(Paragraph(_markup(page.heading), heading))
        for i in range(0, len(page.sentences), SENTENCES_PER_PARAGRAPH):
            markup = " ".join(_markup(s) for s in page.sentences[i:i + SENTENCES_PER_PARAGRAPH])
            story.append(Paragraph(markup, body))
        if page.table is not None:
            head, rows, table_caption = page.table
            story.append(Paragraph(_markup(table_caption), caption))
            story.append(_fitted_table(head, rows, table_style, font_size - 1, doc.frame_width))
        story.append(_PageMark(number))
    if references:
        story.append(Paragraph("References", heading))
        ref_style = ParagraphStyle("reference", parent=body, alignment=0, fontSize=font_size - 1,
                                   leading=(font_size - 1) * 1.25, spaceAfter=3)
        story += [Paragraph(f"[{n}] {_markup(r)}", ref_style) for n, r in enumerate(references, start=1)]
    doc.build(story)
    if doc.misplaced:
        intended, landed = doc.misplaced[0]
        raise ValueError(f"page {intended}'s content does not fit on one page (it ran onto page {landed}); "
                         "give that page fewer sentences or a smaller table")


def _hyphenator(words: Sequence[str]):
    """reportlab's hyphenation hook: the split points of the given words (every one, longest head first), so a
    listed word that falls across a line end is broken there with a "-", and no other word ever is."""
    allowed = {w.lower() for w in words if w.isalpha()}

    def splits(word: str) -> list[tuple[str, str]]:
        if word.lower() not in allowed:
            return []
        return [(word[:i], word[i:]) for i in range(len(word) - 2, 2, -1)]

    return splits


def _fitted_table(header: list[list[str]], rows: list[list[str]], style: str, size: float,
                  avail_w: float) -> Table:
    """A page's table at the largest type size (down to 5 pt) at which its columns fit the frame."""
    width = max(len(r) for r in [*header, *rows])
    header = [list(r) + [""] * (width - len(r)) for r in header]
    rows = [list(r) + [""] * (width - len(r)) for r in rows]
    while size >= MIN_FONT:
        table = _table(header, rows, style, size, avail_w)
        if table is not None:
            return table
        size = round(size * 0.85, 2)
    raise ValueError(f"a table of {width} columns does not fit a {avail_w:.0f} pt wide column")
