"""The lines of the pages laid out for reading: running lines dropped, columns found, paragraphs and headings.

Works on the lines of :mod:`kb._pdf_words` alone (no parser, no tables, which are out of the words by then): page
numbers and running headers and footers are dropped from the margins, a page in two columns is read left column
first, and the lines of each column become paragraphs and headings by type size, weight, line pitch, indent and
sentence ends, up to the heading of the reference list. These are the reader's layout heuristics, tuned by the
thresholds below; they are apart from the parsing and the table finding, which change for other reasons.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from kb._pdf_words import _Line, _Page, _group_lines

# PDF points unless said otherwise
MARGIN_ZONE = 0.08  # running headers, footers and page numbers live in the top or bottom 8% of the page
RUNNING_SHARE = 0.5  # a margin line (digits masked) on at least half the pages, and on 2 or more, is running
MIN_NUMBERED_HEADER_WORDS = 3  # a margin line with a changing number at one end is running if this long
GUTTER_BAND = (0.3, 0.7)  # a column gutter is looked for in this middle part of the page width
GUTTER_STEP = 2.0  # candidate gutter positions are this far apart...
MAX_GUTTER_CANDIDATES = 200  # ...or further, on a page so wide (a hostile media box) that they would be more
GUTTER_PAD = 3.0  # no word comes within this of the gutter's middle, so a gutter is at least 6 pt wide
MIN_COLUMN_ROWS = 3  # each column of a two-column stretch has at least this many lines...
MIN_COLUMN_WIDTH = 0.25  # ...typically at least this share of the page wide (prose, not a list of labels)
PARA_GAP = 1.45  # a line pitch this many times the usual one starts a new paragraph
USUAL_LEADING = 1.2  # line pitch over type size in most typesetting; assumed where too few lines say otherwise
MIN_PITCH_SAMPLES = 8  # fewer pairs of lines than this in the whole text are too few to tell the usual pitch
INDENT = 8.0  # a line indented this much more than the one above, after a full stop, starts a paragraph
MARKER_ROOM = 0.5  # a list marker would have fit on the line above when it left the marker's width and this
#                    share of the type size (a space, and some) free before the right edge: a break made on purpose
MARKER_INDENT = 0.3  # a marker line starting this share of the type size off where the paragraph's lines start
SHORT_LINE = 0.15  # a line stopping this share of the block's width short, after a full stop, ends a paragraph
HEADING_SIZE_STEP = 1.0  # type this much larger than the body's marks a heading; a change this big a new paragraph
HEADING_MAX_WORDS = 12
HEADING_MAX_CHARS = 100
NUMBERED_HEADING_MAX_WORDS = 8  # "2.1 Study design" in body type is a heading only when this short...
NUMBERED_HEADING_MAX_WIDTH = 0.6  # ...and not a full line (this share of its column's width at most)

_PAGE_NUMBER = re.compile(r"^(?:page\s*)?[-–—(\[]?\s*(?:\d{1,4}|[ivxlc]{1,6}|[IVXLC]{1,6})\s*[-–—)\]]?"
                          r"(?:\s*(?:of|/)\s*\d{1,4})?$", re.I)
# "2.1 Study design", "IV. Results": a section number, then words of letters only ("2 CARD16 VERSION" is code)
_NUMBERED_HEADING = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2}){0,3}\.?|[IVX]{1,5}\.)\s+"
                               r"[A-Z](?:[^\W\d_]|[\s,:;&'’()/\-–])*$")
_REFERENCES = re.compile(r"^(?:\d{1,2}\.?\s+|[IVX]{1,5}\.\s+)?(?:references?|bibliography|literature\s+cited|"
                         r"works\s+cited|reference\s+list|references\s+and\s+notes)\s*:?$", re.I)
_CAPTION_START = re.compile(r"^(?:Table|TABLE|Figure|FIGURE|Fig\.)\s+[0-9IVXLC]")  # a caption is a paragraph
_EDGE_NUMBER = re.compile(r"^\d{1,4}\b|\b\d{1,4}$")  # a page number at either end of a running header
# an item of a list ("• ...", "2) ...", "(b) ..."), its own paragraph unless the paragraph only wrapped there (see
# _list_item); not "al. found" wrapped from "et"
_BULLET = re.compile(r"^(?:[•◦▪▫●○■□‣⁃∙·*–—-]|\(?\d{1,2}[.)]|\(?[a-z]\))\s")
_SENTENCE_END = re.compile(r"[.!?:][\"'”’)\]]*$")


# -- running headers, footers and page numbers ----------------------------------------------------------------

def _strip_running_lines(pages: list[_Page]) -> str | None:
    """Drop page numbers and running headers and footers; the note that says what was dropped.

    A margin line is running when its text, digits masked, is on half the pages or more (and on 2 or more), or
    when it carries a page number at one end that changes from page to page ("Chapter 2: Methods 14"): books and
    some journals change the header with each chapter, or between odd and even pages."""
    def zone(line: _Line, page: _Page) -> str | None:
        if line.bottom <= page.height * MARGIN_ZONE:
            return "header"
        if line.top >= page.height * (1 - MARGIN_ZONE):
            return "footer"
        return None

    margin_lines = [(page, line, (z, _mask(line.text))) for page in pages for line in page.lines
                    if (z := zone(line, page))]
    pages_with = Counter()
    for key in {(page.number, key) for page, _line, key in margin_lines}:
        pages_with[key[1]] += 1
    counters: dict[tuple[str, str], set[str]] = {}
    for _page, line, key in margin_lines:
        if len(line.words) >= MIN_NUMBERED_HEADER_WORDS and (end := _EDGE_NUMBER.search(line.text)):
            counters.setdefault(key, set()).add(end.group(0))
    need = max(2, math.ceil(RUNNING_SHARE * sum(1 for p in pages if p.lines)))
    running = {k for k, n in pages_with.items() if n >= need or (n >= 2 and len(counters.get(k, ())) >= 2)}
    dropped: dict[tuple[str, str], str] = {}
    numbers = False
    for page, line, key in margin_lines:
        if _PAGE_NUMBER.match(line.text):
            numbers = True
        elif key in running:
            dropped.setdefault(key, line.text)
        else:
            continue
        page.lines.remove(line)
    return _running_note(dropped, numbers)


def _mask(text: str) -> str:
    return " ".join(re.sub(r"\d+", "#", text.lower()).split())


def _running_note(dropped: dict[tuple[str, str], str], numbers: bool) -> str | None:
    parts = []
    for kind in ("header", "footer"):
        texts = [text for (z, _k), text in dropped.items() if z == kind]
        if texts:
            quoted = ", ".join(f"'{_short(t)}'" for t in texts[:3]) + (f" (and {len(texts) - 3} more)"
                                                                      if len(texts) > 3 else "")
            parts.append(f"a running {kind} {quoted}" if len(texts) == 1 else f"running {kind}s {quoted}")
    if numbers:
        parts.append("page numbers")
    if not parts:
        return None
    return "dropped " + (", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0])


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


# -- columns --------------------------------------------------------------------------------------------------

@dataclass
class _Block:
    """Lines read one after another with a meaningful vertical rhythm: a column, or a full-width stretch."""

    lines: list[_Line]


def _reading_blocks(lines: list[_Line], width: float) -> tuple[list[_Block], bool]:
    """The page's lines in reading order: full-width lines above, the left column, the right column, then what
    is below (each part split again where it has columns of its own). True when columns were found."""
    if not lines:
        return [], False
    split = _find_gutter(lines, width)
    if split is None:
        return [_Block(lines)], False
    start, end, x = split
    above, _ = _reading_blocks(lines[:start], width)
    below, _ = _reading_blocks(lines[end:], width)
    middle = [w for line in lines[start:end] for w in line.words]
    left = _group_lines([w for w in middle if w.x1 <= x])
    right = _group_lines([w for w in middle if w.x0 >= x])
    return above + [_Block(left), _Block(right)] + below, True


def _find_gutter(lines: list[_Line], width: float) -> tuple[int, int, float] | None:
    """The longest run of consecutive lines that a vertical strip near the page's middle crosses without touching
    a word, with enough column-wide text on both sides: (first line, line after the run, the strip's x)."""
    covered = [_merged_spans(line) for line in lines]
    best: tuple[int, float, int, int, float] | None = None
    step = max(GUTTER_STEP, width * (GUTTER_BAND[1] - GUTTER_BAND[0]) / MAX_GUTTER_CANDIDATES)
    x = width * GUTTER_BAND[0]
    while x <= width * GUTTER_BAND[1]:
        run_start = 0
        for i in range(len(lines) + 1):
            crossing = i == len(lines) or any(a < x < b for a, b in covered[i])
            if not crossing:
                continue
            if i - run_start >= 2 * MIN_COLUMN_ROWS and _two_columns(lines[run_start:i], x, width):
                score = (i - run_start, -abs(x - width / 2))
                if best is None or score > best[:2]:
                    best = (*score, run_start, i, x)
            run_start = i + 1
        x += step
    return None if best is None else (best[2], best[3], best[4])


def _merged_spans(line: _Line) -> list[tuple[float, float]]:
    out: list[list[float]] = []
    for w in line.words:
        a, b = w.x0 - GUTTER_PAD, w.x1 + GUTTER_PAD
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def _two_columns(lines: list[_Line], x: float, width: float) -> bool:
    left = [line for line in lines if line.words[0].x1 <= x]
    right = [line for line in lines if line.words[-1].x0 >= x]
    if len(left) < MIN_COLUMN_ROWS or len(right) < MIN_COLUMN_ROWS:
        return False

    def typical_width(side: list[float]) -> float:
        return sorted(side)[len(side) // 2]

    left_w = typical_width([max(w.x1 for w in line.words if w.x1 <= x) - line.words[0].x0 for line in left])
    right_w = typical_width([line.words[-1].x1 - min(w.x0 for w in line.words if w.x0 >= x) for line in right])
    return min(left_w, right_w) >= MIN_COLUMN_WIDTH * width


# -- paragraphs and headings ----------------------------------------------------------------------------------

@dataclass
class _Stats:
    body_size: float
    body_bold: bool
    pitch: float  # the usual distance from one line's top to the next's, in body type


def _stats(blocks: list[_Block]) -> _Stats:
    sizes: Counter = Counter()
    bold = 0
    total = 0
    for block in blocks:
        for line in block.lines:
            for w in line.words:
                sizes[round(w.size, 1)] += len(w.text)
                bold += len(w.text) if w.bold else 0
                total += len(w.text)
    body = sizes.most_common(1)[0][0] if sizes else 10.0
    pitches = sorted(b.top - a.top for block in blocks for a, b in zip(block.lines, block.lines[1:])
                     if abs(a.size - body) < 0.5 and 0 < b.top - a.top < 3 * body)
    pitch = pitches[len(pitches) // 2] if pitches else USUAL_LEADING * body
    if len(pitches) < MIN_PITCH_SAMPLES:  # too few lines to tell; a gap in so short a text says little
        pitch = min(pitch, USUAL_LEADING * body)
    return _Stats(body, bold > total / 2, pitch)


@dataclass
class _Para:
    lines: list[_Line]
    heading: bool = False


def _paragraphs(blocks: list[_Block], stats: _Stats) -> tuple[list[_Para], int | None]:
    """Lines into paragraphs and headings, in reading order, up to a reference-list heading (its page returned).
    A paragraph that runs off the end of a column or page goes on in the next unless its last line ended a
    sentence."""
    paras: list[_Para] = []
    edge: _Edge | None = None  # the block before's
    for block in blocks:
        left = min(line.x0 for line in block.lines)
        right = max(line.x1 for line in block.lines)
        before, edge = edge, _Edge(left, right, _edge_reached(block.lines, left, right))
        prev: _Line | None = None
        for line in block.lines:
            if _REFERENCES.match(line.text):
                return paras, line.page
            cur = paras[-1] if paras else None
            if cur is None or cur.heading:
                starts = True
            elif prev is None:  # the first line of a column or page
                starts = _breaks_across(cur.lines[-1], line, before)
            else:
                wrap_x0 = left if prev is cur.lines[0] else prev.x0  # where a wrapped line of the paragraph starts
                starts = _breaks(prev, line, stats, edge, wrap_x0)
            if _is_heading(line, stats, starts, right - left):
                if cur and cur.heading and prev is not None and _continues_heading(cur.lines[-1], line):
                    cur.lines.append(line)
                else:
                    paras.append(_Para([line], heading=True))
            elif starts:
                paras.append(_Para([line]))
            else:
                cur.lines.append(line)
            prev = line
    return paras, None


@dataclass
class _Edge:
    """A block's left and right edges, and whether its right edge is one that text wraps at: lines that are not
    list items reach it (a list of short items alone has no such edge; its longest item is no wrapped line)."""

    left: float
    right: float
    wraps: bool


def _edge_reached(lines: list[_Line], left: float, right: float) -> bool:
    return sum(1 for line in lines if right - line.x1 <= SHORT_LINE * (right - left)
               and not _BULLET.match(line.text)) >= 2


def _list_item(prev: _Line, line: _Line, edge: _Edge | None, wrap_x0: float | None) -> bool:
    """Whether ``line``, which starts with a list marker ("1)", "2.", "•"), starts a list item rather than being
    where a paragraph wrapped ("... the factors were: 1) education ..."): the line above it ended clearly short of
    the right edge (the marker would have fit there, so the break was made on purpose), or the marker line starts
    elsewhere than the paragraph's wrapped lines do (a list indented, or the items' lines hung under the text)."""
    if edge is None or not edge.wraps:
        return True
    marker = line.words[0]
    if edge.right - prev.x1 > marker.x1 - marker.x0 + MARKER_ROOM * line.size:
        return True
    return wrap_x0 is not None and abs(line.x0 - wrap_x0) > MARKER_INDENT * line.size


def _breaks_across(last: _Line, line: _Line, edge: _Edge | None) -> bool:
    """Whether ``line``, the first of a column or page, starts a new paragraph after ``last``, the last line
    before it (``edge``: its block's): the vertical gap says nothing here, so only a finished sentence, a list item
    or new type do."""
    if abs(line.size - last.size) >= HEADING_SIZE_STEP:
        return True
    if _BULLET.match(line.text) and _list_item(last, line, edge, None):
        return True
    return bool(_SENTENCE_END.search(last.text))


def _breaks(prev: _Line, line: _Line, stats: _Stats, edge: _Edge, wrap_x0: float) -> bool:
    """Whether ``line`` starts a new paragraph after ``prev`` in the same block."""
    pitch = line.top - prev.top
    if pitch <= 0 or pitch > PARA_GAP * stats.pitch:
        return True
    if abs(line.size - prev.size) >= HEADING_SIZE_STEP:
        return True
    if _BULLET.match(line.text) and _list_item(prev, line, edge, wrap_x0):
        return True
    if not _SENTENCE_END.search(prev.text):
        return False
    left, right = edge.left, edge.right
    return (line.x0 - prev.x0 >= INDENT or right - prev.x1 > SHORT_LINE * (right - left)
            or bool(_CAPTION_START.match(line.text)))


def _is_heading(line: _Line, stats: _Stats, starts: bool, block_width: float) -> bool:
    text = line.text
    if not starts or len(line.words) > HEADING_MAX_WORDS or len(text) > HEADING_MAX_CHARS:
        return False
    if text[-1] in ".,;" or not any(ch.isalpha() for ch in text):
        return False
    if line.size >= stats.body_size + HEADING_SIZE_STEP:
        return True
    if line.bold and not stats.body_bold:
        return True
    # "2.1 Study design" in body type; a full line starting "15 Patients ..." is the start of a paragraph
    return (bool(_NUMBERED_HEADING.match(text)) and len(line.words) <= NUMBERED_HEADING_MAX_WORDS
            and line.x1 - line.x0 <= NUMBERED_HEADING_MAX_WIDTH * block_width)


def _continues_heading(prev: _Line, line: _Line) -> bool:
    """A heading's second line: same type, close below, and not a numbered heading of its own."""
    return (abs(line.size - prev.size) < 0.5 and 0 < line.top - prev.top <= PARA_GAP * line.size
            and not _NUMBERED_HEADING.match(line.text))
