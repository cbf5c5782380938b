"""What a read document (a PDF or DOCX upload) holds: its body text with the page and section of every stretch, the
tables found in it, and what the reader assumed. A leaf module: the readers fill it, the app and tools read it.

Coordinates are PDF points with the origin at the top left of the page (pdfplumber's ``x0, top, x1, bottom``);
pages are numbered from 1 as people cite them.
"""

from __future__ import annotations

from bisect import bisect_right
from functools import cached_property

from pydantic import BaseModel, Field

from kb.errors import TableError


class DocumentError(TableError):
    """A document that cannot be read; the message (one sentence or two) is for the user."""


class Box(BaseModel):
    """A rectangle on one page, in points from the page's top left."""

    page: int
    x0: float
    top: float
    x1: float
    bottom: float


class TextSpan(BaseModel):
    """A stretch ``[start, end)`` of :attr:`ReadDocument.text` that lies on one page under one heading, with the
    boxes of its words (one box per word) so a sentence inside it can be shown highlighted on the page."""

    start: int
    end: int
    page: int | None = None  # None: the format has no pages (DOCX)
    heading: str = ""  # the section heading in force ("2 Methods"), "" before the first one
    # (start, end, x0, top, x1, bottom) of each word: its place in the text and its box on this span's page. Plain
    # tuples, not a Box per word: a dense 500-page book has about 700,000 words, and a model object per word cost
    # about 1.2 KB each in the app's memory (and in the conversation's stored reading).
    word_boxes: list[tuple[int, int, float, float, float, float]] = Field(default_factory=list)

    def word_box(self, i: int) -> tuple[int, int, Box]:
        """The ``i``-th word's (start, end, Box)."""
        start, end, x0, top, x1, bottom = self.word_boxes[i]
        return start, end, Box(page=self.page or 0, x0=x0, top=top, x1=x1, bottom=bottom)


class DocTable(BaseModel):
    """A table found in the document, as a grid of cell strings with its header rows first."""

    label: str  # "Table 2" where a caption names it, else "Table <n>" in reading order
    caption: str = ""
    page: int | None = None
    bbox: Box | None = None
    grid: list[list[str]]
    header_rows: int = 1  # how many leading rows of ``grid`` are header (multi-row headers are joined by the reader)
    # the document itself sets those rows apart as a header (bold over a plain body): they are column names even
    # where they read as numbers ("Recall | 0.1 | 0.2"), which an unmarked first row would not be taken for
    header_marked: bool = False


class ReadDocument(BaseModel):
    """A PDF or DOCX read for evidence: body text (no running headers, footers, page numbers or references), where
    each stretch of it lies, its tables, and every assumption the reader made, in words for the user."""

    name: str
    kind: str  # "pdf" | "docx"
    pages: int = 0  # 0 where the format has no pages
    text: str
    spans: list[TextSpan] = Field(default_factory=list)  # sorted by start, not overlapping
    tables: list[DocTable] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    ocr: bool = False  # the text came from OCR (tesseract), not a text layer

    @cached_property
    def _span_starts(self) -> list[int]:
        # Built once per reading: every cited sentence asks for its page, and a 500-page paper has ~10^4 spans.
        # (A reading is not changed after it is made; a changed span list would need a new ReadDocument.)
        return [s.start for s in self.spans]

    def span_at(self, offset: int) -> TextSpan | None:
        """The span holding character ``offset`` of :attr:`text`, or ``None``."""
        i = bisect_right(self._span_starts, offset) - 1
        if i >= 0 and self.spans[i].start <= offset < self.spans[i].end:
            return self.spans[i]
        return None

    def page_at(self, offset: int) -> int | None:
        span = self.span_at(offset)
        return span.page if span else None

    def paragraph_bounds(self, start: int, end: int) -> tuple[int, int]:
        """The paragraph (between blank lines) around ``[start, end)`` of the text."""
        left = self.text.rfind("\n\n", 0, start)
        right = self.text.find("\n\n", end)
        return (0 if left < 0 else left + 2), (len(self.text) if right < 0 else right)

    def boxes(self, start: int, end: int) -> list[Box]:
        """The boxes of the words that overlap ``[start, end)`` of the text, in reading order."""
        out: list[Box] = []
        for span in self.spans:
            if span.end <= start or span.start >= end:
                continue
            out += [Box(page=span.page or 0, x0=x0, top=top, x1=x1, bottom=bottom)
                    for (ws, we, x0, top, x1, bottom) in span.word_boxes if ws < end and we > start]
        return out


class StoredDocument(BaseModel):
    """An uploaded document as a conversation keeps it: its reading, where its copy lies (to show a page), and the
    name of the table loaded from each of its tables (parallel to ``document.tables``)."""

    document: ReadDocument
    file_path: str = ""
    table_names: list[str] = Field(default_factory=list)  # "" where a found table could not be read as one

    def table_of(self, table_name: str) -> DocTable | None:
        """The found table that the loaded table ``table_name`` was read from, or ``None``."""
        for found, name in zip(self.document.tables, self.table_names):
            if name and name == table_name:
                return found
        return None

    def where(self, start: int, end: int) -> str:
        """Where ``[start, end)`` of the text lies, as a person cites it: "page 5", "pages 5–6", or the section."""
        first = self.document.span_at(start)
        last = self.document.span_at(max(start, end - 1)) or first
        if first is None:
            return ""
        if first.page is None:
            return f"section “{first.heading}”" if first.heading else ""
        if last is not None and last.page not in (None, first.page):
            return f"pages {first.page}–{last.page}"
        return f"page {first.page}"
