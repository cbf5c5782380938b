"""The pages put together into a ReadDocument: its tables, its body text with spans, and notes on what was left out.

The last step of a reading, in the child process: each page's grids become DocTables, its words become lines laid
out by :mod:`kb._pdf_layout`, and the paragraphs become one text, grown word by word, in which hyphenated line
ends are joined and each stretch of one page under one heading is a TextSpan that keeps every word's box. It also
says, as notes (or as the DocumentError of a document without text), which pages were skipped and why. It is apart
from the layout because it owns the offsets into the text that every citation of a PDF depends on.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from typing import Iterator

from kb._pdf_layout import _Block, _Para, _paragraphs, _reading_blocks, _short, _stats, _strip_running_lines
from kb._pdf_tables import _doc_table
from kb._pdf_words import _Page, _Word, _group_lines
from kb.document_model import DocTable, DocumentError, ReadDocument, TextSpan

log = logging.getLogger(__name__)

_HYPHEN_END = re.compile(r"[^\W\d_]-$")  # a letter, then a hyphen, at a line's end


# == the text and its spans ===================================================================================

def _pieces(para: _Para) -> Iterator[tuple[str, _Word, bool]]:
    """(separator, word, drop the previous word's hyphen) for the words of a paragraph. A line ending in a letter
    and "-" joins the next line's first word without a space: without the hyphen before a lowercase letter
    ("evid-" "ence" -> "evidence"), with it before a digit or capital ("COVID-" "19" -> "COVID-19")."""
    prev: _Word | None = None
    for line in para.lines:
        for i, w in enumerate(line.words):
            if prev is None:
                yield "", w, False
            elif i == 0 and _HYPHEN_END.search(prev.text) and w.text[0].islower():
                yield "", w, True
            elif i == 0 and _HYPHEN_END.search(prev.text) and (w.text[0].isdigit() or w.text[0].isupper()):
                yield "", w, False
            else:
                yield " ", w, False
            prev = w


def _para_text(para: _Para) -> str:
    out = ""
    for sep, w, trim in _pieces(para):
        out = (out[:-1] if trim else out) + sep + w.text
    return out


class _TextBuilder:
    """The body text, grown word by word, with one span per stretch of one page under one heading."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.spans: list[TextSpan] = []
        self._span: TextSpan | None = None

    def add(self, word: _Word, sep: str, trim: bool, heading: str) -> None:
        if trim:
            self._drop_hyphen()
        if self.length and sep:
            self._emit(sep)
        start = self.length
        self._emit(word.text)
        if self._span is None or (self._span.page, self._span.heading) != (word.page, heading):
            self._span = TextSpan(start=start, end=start, page=word.page, heading=heading)
            self.spans.append(self._span)
        x0, top, x1, bottom = word.box
        self._span.word_boxes.append((start, self.length, round(x0, 2), round(top, 2), round(x1, 2), round(bottom, 2)))
        self._span.end = self.length

    def _emit(self, s: str) -> None:
        self.parts.append(s)
        self.length += len(s)

    def _drop_hyphen(self) -> None:
        # the hyphen is the last character written (the previous word's), inside the current span
        self.parts[-1] = self.parts[-1][:-1]
        self.length -= 1
        start, end, *box = self._span.word_boxes[-1]
        self._span.word_boxes[-1] = (start, end - 1, *box)
        self._span.end -= 1

    @property
    def text(self) -> str:
        return "".join(self.parts)


def _build_text(paras: list[_Para]) -> tuple[str, list[TextSpan]]:
    builder = _TextBuilder()
    heading = ""
    for para in paras:
        if para.heading:
            heading = _short(_para_text(para), 200)
        for i, (sep, word, trim) in enumerate(_pieces(para)):
            builder.add(word, "\n\n" if i == 0 else sep, trim, heading)
    return builder.text, builder.spans


# == putting the pages together ===============================================================================

def _assemble(pages: list[_Page], name: str, tesseract: str | None, max_chars_per_page: int,
              notes: list[str]) -> ReadDocument:
    if not any(p.words or p.tables for p in pages):
        raise _no_text(pages, name, tesseract, max_chars_per_page)
    notes += _page_notes(pages, max_chars_per_page, tesseract)
    tables: list[DocTable] = []
    for page in pages:
        for grid, bbox in page.tables:
            try:
                tables.append(_doc_table(grid, bbox, page, len(tables) + 1))
            except Exception:  # noqa: BLE001 - one odd grid costs its table, not the document
                log.debug("a table on page %s could not be read", page.number, exc_info=True)
                notes.append(f"a table on page {page.number} could not be read as a table and was left out")
        page.lines = _group_lines(page.words)
    running = _strip_running_lines(pages)
    blocks: list[_Block] = []
    column_pages = []
    for page in pages:
        page_blocks, columns = _reading_blocks(page.lines, page.width)
        blocks += [b for b in page_blocks if b.lines]
        if columns:
            column_pages.append(page.number)
    paras, references_page = _paragraphs(blocks, _stats(blocks))
    text, spans = _build_text(paras)
    if column_pages:
        notes.append(f"read 2 columns on {_pages_phrase(column_pages)}, left column first")
    if running:
        notes.append(running)
    if references_page is not None:
        notes.append(f"the reference list (from page {references_page}) is not indexed")
    return ReadDocument(name=name, kind="pdf", pages=len(pages), text=text, spans=spans, tables=tables, notes=notes,
                        ocr=any(p.ocr for p in pages))


def _no_text(pages: list[_Page], name: str, tesseract: str | None, max_chars_per_page: int) -> DocumentError:
    status = Counter(p.status for p in pages)
    if status["image"] and not tesseract:
        return DocumentError(f"{name} has no text layer (a scanned document?); install tesseract-ocr to read it by "
                             "OCR, or upload its text.")
    if status["image"]:
        return DocumentError(f"{name} has no text layer, and OCR found no text on its pages; upload its text.")
    if status["chars"]:
        return DocumentError(f"{name} could not be read: its pages hold more than {max_chars_per_page:,} "
                             "characters each, far more than a page of text, so they were skipped.")
    if status["damaged"]:
        return DocumentError(f"{name} could not be read: its pages are damaged.")
    return DocumentError(f"{name} has no text to read (its pages are blank).")


def _page_notes(pages: list[_Page], max_chars_per_page: int, tesseract: str | None) -> list[str]:
    def where(status: str) -> list[int]:
        return [p.number for p in pages if p.status == status]

    notes = []
    if chars := where("chars"):
        notes.append(f"{_pages_phrase(chars)} skipped: more than {max_chars_per_page:,} characters a page")
    if no_area := where("no_area"):
        notes.append(f"{_pages_phrase(no_area)} skipped: no area (a 0×0 page)")
    if damaged := where("damaged"):
        notes.append(f"{_pages_phrase(damaged)} skipped: damaged, could not be read")
    if (images := where("image")) and tesseract:
        notes.append(f"{_pages_phrase(images)} not read: only images, and OCR (tesseract) found no text on them")
    elif images:
        notes.append(f"{_pages_phrase(images)} not read: only images, no text layer (a scan?); install "
                     "tesseract-ocr to read such pages by OCR")
    if ocr := [p.number for p in pages if p.ocr]:
        notes.append(f"{_pages_phrase(ocr)} read by OCR (tesseract); check figures against the page")
    if sideways := [p.number for p in pages if p.sideways]:
        notes.append(f"text running across the reading direction on {_pages_phrase(sideways)} (such as a margin "
                     "stamp) was left out")
    if plain := [p.number for p in pages if p.plain and p.words]:
        notes.append(f"{_pages_phrase(plain)} read from the plain text layer (the PDF is partly damaged), without "
                     "looking for tables")
    if offpage := [p.number for p in pages if p.offpage]:
        notes.append(f"text outside the visible page on {_pages_phrase(offpage)} was left out")
    if undecoded := [p.number for p in pages if p.undecoded]:
        notes.append(f"some characters on {_pages_phrase(undecoded)} could not be decoded (a font without a "
                     "character map) and were left out")
    return notes


def _pages_phrase(numbers: list[int]) -> str:
    """[1, 2, 3, 4, 7] -> "pages 1–4 and 7"; [3] -> "page 3"."""
    runs: list[list[int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    parts = [f"{r[0]}–{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs]
    if len(parts) == 1 and len(runs[0]) == 1:
        return f"page {parts[0]}"
    listed = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
    return f"pages {listed}"
