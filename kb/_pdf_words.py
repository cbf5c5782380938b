"""A PDF page's words with their boxes, from whichever source has them, and those words grouped into lines.

Everything after this works on the same few things: a :class:`_Word` (its text, type size, weight, and its box
both as shown and in the frame its text reads left to right), a :class:`_Line` of them, and the :class:`_Page`
that holds a page's words, lines and tables. The words come from pdfplumber on a sound page, from pdfium's text
layer where pdfminer fails on the page, or from tesseract's TSV for a page that is only an image. The three
sources are kept together so that they clean text and place boxes the same way (a page read from pdfium's layer
gives the text and spans that pdfplumber's words give), and below the table finding and the layout so that both
can work on lines without importing each other.
"""

from __future__ import annotations

import math
import re
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from kb._pdf_render import MAX_RENDER_PIXELS
from kb.glyphs import normalise_glyphs

# PDF points unless said otherwise
WORD_GAP = 0.15  # letters further apart than this share of their type size are two words (for PDFs that
#                  draw no space characters; pdfplumber's fixed 3 pt glues 10 pt words together)
LINE_OVERLAP = 0.3  # a word joins a line when they overlap vertically by this share of the shorter (superscripts)
OCR_DPI = 300
PDFIUM_LINE_END_HYPHEN = 2  # pdfium's code for a hyphen that ends a line
_CID = re.compile(r"\(cid:\d+\)")  # pdfminer's stand-in for a glyph it cannot map to a character
_BOLD = re.compile(r"Bold|Black|Heavy|Semibold|Demi", re.I)


@dataclass(slots=True)
class _Word:
    """A word with its box on the page as shown (``box``) and in the frame its text reads left to right
    (``x0, top, x1, bottom``: the same unless the page's text runs sideways)."""

    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    size: float
    bold: bool
    page: int
    box: tuple[float, float, float, float]

    @property
    def middle(self) -> tuple[float, float]:
        return (self.box[0] + self.box[2]) / 2, (self.box[1] + self.box[3]) / 2


class _Line:
    def __init__(self, words: list[_Word]) -> None:
        self.words = words

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)

    @property
    def top(self) -> float:
        return min(w.top for w in self.words)

    @property
    def bottom(self) -> float:
        return max(w.bottom for w in self.words)

    @property
    def height(self) -> float:
        return self.bottom - self.top

    @property
    def x0(self) -> float:
        return self.words[0].x0

    @property
    def x1(self) -> float:
        return max(w.x1 for w in self.words)

    @property
    def size(self) -> float:
        sizes = sorted(w.size for w in self.words)
        return sizes[len(sizes) // 2]

    @property
    def bold(self) -> bool:
        return all(w.bold for w in self.words)

    @property
    def page(self) -> int:
        return self.words[0].page


@dataclass
class _Page:
    number: int
    width: float = 0.0  # of the reading frame
    height: float = 0.0
    status: str = "ok"  # ok | chars | no_area | image | blank | damaged
    direction: str = "ltr"  # the way most of its text runs, as pdfplumber says: ltr, ttb, btt or rtl
    ocr: bool = False
    words: list[_Word] = field(default_factory=list)
    lines: list["_Line"] = field(default_factory=list)
    tables: list[tuple[list[list[str | None]], tuple[float, float, float, float]]] = field(default_factory=list)
    table_words: list[_Word] = field(default_factory=list)  # the words inside the tables, out of ``words``
    sideways: bool = False  # words across the page's reading direction were left out
    offpage: bool = False  # words outside the page's box were left out
    undecoded: bool = False  # glyphs without a character map were left out
    plain: bool = False  # read from pdfium's text layer alone (pdfminer failed on it), without looking for tables


# -- pdfplumber's words ---------------------------------------------------------------------------------------

def _extract_words(plumber_page) -> list[dict]:
    """pdfplumber's words, split where the type size changes (a heading run into text, a raised footnote mark).
    pdfplumber measures a sideways character's "size" along the line, so each letter of sideways text would be a
    word of its own: where most text is sideways, the words are taken again without splitting on size."""
    options = {"use_text_flow": False, "keep_blank_chars": False, "x_tolerance_ratio": WORD_GAP, "return_chars": True}
    words = plumber_page.extract_words(extra_attrs=["size"], **options)
    if _dominant_direction(words) == "ltr":
        return words
    return plumber_page.extract_words(**options)


def _dominant_direction(words: list[dict]) -> str:
    weight: Counter = Counter()
    for w in words:
        weight[w.get("direction", "ltr")] += len(w["text"])
    return weight.most_common(1)[0][0] if weight else "ltr"


def _take_words(raw: list[dict], page: _Page, width: float, height: float) -> None:
    """Clean pdfplumber's words and turn the page's dominant text direction into left to right. Words across that
    direction (a margin stamp) and words off the page (hidden from a reader of the page) are left out."""
    direction = _dominant_direction(raw)
    page.width, page.height = (height, width) if direction in ("ttb", "btt") else (width, height)
    page.direction = direction
    for w in raw:
        box = (float(w["x0"]), float(w["top"]), float(w["x1"]), float(w["bottom"]))
        if not _contains((0.0, 0.0, width, height), ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)):
            page.offpage = True
            continue
        if w.get("direction", "ltr") != direction:
            page.sideways = True
            continue
        text = _clean(w["text"])
        if _CID.search(text):
            page.undecoded = True
            text = _CID.sub("", text).strip()
        if not text:
            continue
        x0, top, x1, bottom = _to_reading_frame(box, direction, width, height)
        chars = w.get("chars") or []
        bold = w["bold"] if "bold" in w else bool(chars) and all(_BOLD.search(str(c.get("fontname", "")))
                                                                 for c in chars)
        size = float(w["size"]) if direction == "ltr" and w.get("size") else bottom - top
        page.words.append(_Word(text, x0, top, x1, bottom, size, bold, page.number, box))


def _to_reading_frame(box: tuple[float, float, float, float], direction: str, width: float,
                      height: float) -> tuple[float, float, float, float]:
    """A box as seen with the page turned so that text in ``direction`` reads left to right."""
    x0, top, x1, bottom = box
    if direction == "ttb":  # turned a quarter counter-clockwise
        return top, width - x1, bottom, width - x0
    if direction == "btt":
        return height - bottom, x0, height - top, x1
    if direction == "rtl":  # upside down
        return width - x1, height - bottom, width - x0, height - top
    return box


def _clean(text: str) -> str:
    """:func:`kb.glyphs.normalise_glyphs` (ﬁ→fi, odd spaces → space, full-width digits → ASCII, no soft hyphens or
    zero-width marks; "²", "⁵", "½", "µ" kept, unlike NFKC), without control characters."""
    text = normalise_glyphs(text)
    return "".join(ch for ch in text if ch >= " " and not 0x7f <= ord(ch) < 0xa0)


def _contains(bbox: tuple[float, float, float, float], point: tuple[float, float], slack: float = 1.0) -> bool:
    x0, top, x1, bottom = bbox
    return x0 - slack <= point[0] <= x1 + slack and top - slack <= point[1] <= bottom + slack


# -- lines ----------------------------------------------------------------------------------------------------

def _group_lines(words: list[_Word]) -> list[_Line]:
    """Words into lines: top to bottom, a word joining the current line when it overlaps the line's tallest word
    vertically by LINE_OVERLAP of the shorter (so raised footnote marks stay in their line)."""
    lines: list[_Line] = []
    core: tuple[float, float] = (0.0, 0.0)
    for w in sorted(words, key=lambda w: (w.top, w.x0)):
        if lines:
            overlap = min(core[1], w.bottom) - max(core[0], w.top)
            if overlap >= LINE_OVERLAP * min(core[1] - core[0], w.bottom - w.top):
                lines[-1].words.append(w)
                if w.bottom - w.top > core[1] - core[0]:
                    core = (w.top, w.bottom)
                continue
        lines.append(_Line([w]))
        core = (w.top, w.bottom)
    for line in lines:
        line.words.sort(key=lambda w: w.x0)
    return lines


# -- pdfium's text layer, where pdfminer fails on a page ------------------------------------------------------

def _pdfium_words(pdfium_page) -> list[dict]:
    """pdfium's characters as words in pdfplumber's form (top-left origin, "size", "bold"): pdfium writes a space
    between words and a line break between lines itself, so words are the runs between them."""
    import ctypes

    import pypdfium2.raw as pdfium_c

    left, _bottom, _right, top = pdfium_page.get_mediabox()
    textpage = pdfium_page.get_textpage()
    rect, font = pdfium_c.FS_RECTF(), ctypes.create_string_buffer(128)
    words: list[dict] = []
    current: dict | None = None
    try:
        for i in range(textpage.count_chars()):
            code = pdfium_c.FPDFText_GetUnicode(textpage.raw, i)
            line_end = code == PDFIUM_LINE_END_HYPHEN  # the next character is on the next line
            code = ord("-") if line_end else code
            if not 0 < code < 0x110000 or chr(code).isspace():
                current = None
                continue
            pdfium_c.FPDFText_GetLooseCharBox(textpage.raw, i, ctypes.byref(rect))
            box = (rect.left - left, top - rect.top, rect.right - left, top - rect.bottom)
            if current is not None and (box[1] >= current["bottom"] or box[0] < current["x0"]):
                current = None  # a new line without pdfium's line break between
            pdfium_c.FPDFText_GetFontInfo(textpage.raw, i, font, len(font), None)
            bold = pdfium_c.FPDFText_GetFontWeight(textpage.raw, i) >= 600 or bool(_BOLD.search(font.value.decode(
                "latin-1")))
            if current is None:
                current = {"text": "", "x0": box[0], "top": box[1], "x1": box[2], "bottom": box[3], "bold": bold,
                           "size": pdfium_c.FPDFText_GetFontSize(textpage.raw, i)}
                words.append(current)
            current["text"] += chr(code)
            current["x1"], current["bold"] = max(current["x1"], box[2]), current["bold"] and bold
            if line_end:
                current = None
    finally:
        textpage.close()
    return words


# -- OCR ------------------------------------------------------------------------------------------------------

def _ocr(pdfium_page, page: _Page, tesseract: str, timeout_s: float) -> None:
    """Read an image-only page with the tesseract CLI; its TSV output gives each word's box in pixels."""
    width, height = pdfium_page.get_size()
    scale = min(OCR_DPI / 72, math.sqrt(MAX_RENDER_PIXELS / max(width * height, 1.0)))
    image = pdfium_page.render(scale=scale, grayscale=True).to_pil()
    with tempfile.TemporaryDirectory(prefix="evidentia-ocr-") as tmp:
        png = Path(tmp) / "page.png"
        image.save(png)
        done = subprocess.run([tesseract, str(png), "stdout", "tsv"], capture_output=True, timeout=timeout_s,
                              check=False)
    if done.returncode != 0:
        return
    page.words = list(_ocr_words(done.stdout.decode("utf-8", "replace"), scale, page.number))
    page.width, page.height = image.width / scale, image.height / scale
    if page.words:
        page.ocr, page.status = True, "ok"


def _ocr_words(tsv: str, scale: float, number: int) -> Iterator[_Word]:
    rows = [line.split("\t") for line in tsv.splitlines()]
    if not rows:
        return
    col = {key: i for i, key in enumerate(rows[0])}
    for row in rows[1:]:
        if len(row) != len(col) or row[col["level"]] != "5":  # level 5: a word
            continue
        text = _clean(row[col["text"]]).strip()
        if not text or float(row[col["conf"]]) < 0:
            continue
        left, top = int(row[col["left"]]) / scale, int(row[col["top"]]) / scale
        right, bottom = left + int(row[col["width"]]) / scale, top + int(row[col["height"]]) / scale
        yield _Word(text, left, top, right, bottom, bottom - top, False, number, (left, top, right, bottom))
