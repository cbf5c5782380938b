"""Tables on a page, as grids of cell text with their boxes, and a found grid turned into a DocTable.

Ruled tables come from pdfplumber. Tables drawn with horizontal rules only (booktabs), or without rules, are
found only on a page with a "Table N" caption, from the words themselves: rows from lines (a wrapped cell's lines
join its row), columns from clear vertical strips, and header cells merged over several columns. Table finding
has its own thresholds and its own way of failing (prose in columns taken for a table), so it is apart from the
layout of the body text; the words inside a table found here are left out of that text.
"""

from __future__ import annotations

import math
import re

from kb._pdf_layout import _SENTENCE_END
from kb._pdf_words import WORD_GAP, _Line, _Page, _Word, _clean, _contains, _group_lines
from kb.document_model import Box, DocTable

# PDF points unless said otherwise
RULE_MIN_WIDTH = 40.0  # horizontal rules shorter than this are underlines, not table rules
RULE_ALIGN = 6.0  # the rules of one booktabs table start and end within this of each other
TABLE_COL_GAP = 6.0  # in a table without vertical rules, columns are apart by a clear strip at least this wide
SHORT_CELL_WORDS = 6  # a text-found table's cells are mostly this short; prose is not
PROSE_CELL_WORDS = 40  # a "cell" this long is a paragraph: a grid of mostly such cells is ruled prose
LONG_CELL_SHARE = 0.3  # ...more than this share of longer cells and it is prose laid out in columns
CAPTION_MAX_GAP = 48.0  # a caption lies within this many points above or below its table
UNRULED_MAX_GAP = 2.5  # rows of a table without rules are no further apart than this many line heights
WRAPPED_PITCH = 0.8  # a line this much closer to the one above than rows usually are continues its cell
SPAN_COVER = 0.5  # a header phrase over this share of a further column's width spans it (a merged cell)
CENTRED = 0.1  # a top-row phrase whose middle is this near (share of their width) two columns' middle spans both

_CAPTION = re.compile(r"^(?:Table|TABLE)\s+([0-9]{1,3}[A-Za-z]?|[IVXLC]{1,6})\b")
_NUMERIC = re.compile(r"^[\s(\[<>≤≥~±+\-−–]*[$€£]?\d[\d\s.,%()\[\]±+\-−–/:;*]*$")


# -- finding tables -------------------------------------------------------------------------------------------

def _find_tables(plumber_page, page: _Page) -> list[tuple[list[list[str | None]], tuple[float, ...]]]:
    """Ruled tables first; then, only on a page with a "Table N" caption (prose in two columns must not turn
    into a table), tables with horizontal rules only (booktabs), then tables without rules under a caption."""
    found = []
    for table in plumber_page.find_tables():
        grid = table.extract(x_tolerance_ratio=WORD_GAP)
        if _plausible(grid, strict=False):
            found.append((grid, tuple(table.bbox)))
    if found:
        return found
    captions = _captions(page.words)
    if not captions:
        return []
    for bbox in _rule_regions(plumber_page, captions):
        grid = _grid_from_words([w for w in page.words if _contains(bbox, w.middle)])
        if _plausible(grid, strict=True):
            found.append((grid, bbox))
    if found:
        return found
    for caption in captions:
        rows = _rows_under(caption, page)
        grid = _grid_from_words([w for line in rows for w in line.words])
        if rows and _plausible(grid, strict=True):
            found.append((grid, _bounds([w for line in rows for w in line.words])))
    return found


def _plausible(grid: list[list[str | None]], *, strict: bool) -> bool:
    """At least two rows and two columns with something in them, and not mostly paragraphs (a page framed by
    rules with a rule between its columns is not a table); with ``strict`` (no vertical rules to go by) mostly
    short cells, so prose laid out in columns is not taken for a table."""
    rows = [row for row in grid if any(cell for cell in row)]
    if len(rows) < 2 or sum(1 for col in zip(*rows) if any(col)) < 2:
        return False
    cells = [cell for row in rows for cell in row if cell]
    if sum(1 for cell in cells if len(cell.split()) > PROSE_CELL_WORDS) > len(cells) / 2:
        return False
    if not strict:
        return True
    long = sum(1 for cell in cells if len(cell.split()) > SHORT_CELL_WORDS)
    full_rows = sum(1 for row in rows if sum(1 for cell in row if cell) >= 2)
    return long <= LONG_CELL_SHARE * len(cells) and full_rows >= 2


def _captions(words: list[_Word]) -> list[tuple[str, tuple[float, float, float, float]]]:
    """The "Table N ..." stretches of the page's lines (a line is cut at wide gaps, so a caption in one column
    does not take the other column's words), with their boxes."""
    out = []
    for line in _group_lines(words):
        for segment in _segments(line.words, 2 * TABLE_COL_GAP):
            text = " ".join(w.text for w in segment)
            if _CAPTION.match(text):
                out.append((text, _bounds(segment)))
    return out


def _segments(words: list[_Word], gap: float) -> list[list[_Word]]:
    out: list[list[_Word]] = []
    for w in words:
        if out and w.x0 - out[-1][-1].x1 < gap:
            out[-1].append(w)
        else:
            out.append([w])
    return out


def _bounds(words: list[_Word]) -> tuple[float, float, float, float]:
    return (min(w.box[0] for w in words), min(w.box[1] for w in words), max(w.box[2] for w in words),
            max(w.box[3] for w in words))


def _rule_regions(plumber_page, captions) -> list[tuple[float, float, float, float]]:
    """Regions between the first and last of two or more stacked horizontal rules of the same extent, next to a
    caption: a table drawn with horizontal rules only."""
    rules = sorted((e for e in plumber_page.horizontal_edges if e["x1"] - e["x0"] >= RULE_MIN_WIDTH),
                   key=lambda e: e["top"])
    stacks: list[list[dict]] = []
    for rule in rules:
        stack = next((s for s in stacks if abs(s[0]["x0"] - rule["x0"]) <= RULE_ALIGN
                      and abs(s[0]["x1"] - rule["x1"]) <= RULE_ALIGN), None)
        if stack is None:
            stacks.append([rule])
        elif rule["top"] - stack[-1]["top"] > 2:  # a filled thin rectangle has two edges a hair apart
            stack.append(rule)
    regions = []
    for stack in stacks:
        if len(stack) < 2:
            continue
        bbox = (min(r["x0"] for r in stack), stack[0]["top"], max(r["x1"] for r in stack), stack[-1]["top"])
        if any(_caption_distance(bbox, box) <= CAPTION_MAX_GAP for _text, box in captions):
            regions.append(bbox)
    return regions


def _rows_under(caption, page: _Page) -> list["_Line"]:
    """The lines just under a caption that look like the rows of a table without rules: cells apart, lines close
    together, up to the first gap or line of prose."""
    _text, (_x0, _top, _x1, cap_bottom) = caption
    rows: list[_Line] = []
    for line in _group_lines([w for w in page.words if w.top >= cap_bottom - 1]):
        above = rows[-1].bottom if rows else cap_bottom
        if line.top - above > (UNRULED_MAX_GAP * max(line.height, 1.0) if rows else CAPTION_MAX_GAP):
            break
        if len(_segments(line.words, TABLE_COL_GAP)) < 2:
            prose = line.x1 - line.x0 > 0.5 * page.width or (len(line.words) >= 3 and _SENTENCE_END.search(
                line.text))
            if rows and prose:  # a line of prose: the table has ended
                break
            if not rows:  # the caption's own second line
                continue
        rows.append(line)
    return rows if len(rows) >= 2 else []


# -- a grid from the words of a table without vertical rules --------------------------------------------------

def _grid_from_words(words: list[_Word]) -> list[list[str | None]]:
    """A grid from a table drawn without vertical rules. Rows are lines (a line set closer than the rows are
    apart continues the cell above it, wrapped); columns are the x-ranges that clear vertical strips
    (TABLE_COL_GAP wide) separate, judged below the header rows (which bridge or widen them). Each phrase goes to
    the column it starts in; a header phrase merged over further columns (centred over two, or across most of
    one) marks those cells None, as pdfplumber does for a ruled table."""
    rows = _wrapped_rows(_group_lines(words))
    if len(rows) < 2:
        return []
    # the most columns, and of those the ones seen below the most rows: the header's cells bridge or widen them
    candidates = [_column_ranges(rows[k:]) for k in range(min(3, len(rows) - 1))]
    columns = candidates[max(range(len(candidates)), key=lambda k: (len(candidates[k]), k))]
    if len(columns) < 2:
        return []
    grid: list[list[str | None]] = []
    for r, row in enumerate(rows):
        cells: list[list[str]] = [[] for _ in columns]
        merged: set[int] = set()
        for line in row:
            for phrase in _segments(line.words, TABLE_COL_GAP):
                x0, x1 = phrase[0].x0, max(w.x1 for w in phrase)
                home, spanned = ((r == 0 and _centred_over_two(x0, x1, columns, max(w.x1 for w in words)))
                                 or _place(x0, x1, columns))
                cells[home].append(" ".join(w.text for w in phrase))
                merged.update(spanned)
        grid.append([None if k in merged and not cell else " ".join(cell) for k, cell in enumerate(cells)])
    return grid


def _wrapped_rows(lines: list["_Line"]) -> list[list["_Line"]]:
    """Lines into table rows: a line whose pitch from the one above is well under the usual row pitch is a
    wrapped cell's next line (rows are set apart by padding; a cell's lines by the type's leading)."""
    pitches = sorted(b.top - a.top for a, b in zip(lines, lines[1:]))
    usual = pitches[len(pitches) // 2] if pitches else 0.0
    rows: list[list[_Line]] = []
    for line in lines:
        if rows and line.top - rows[-1][-1].top < WRAPPED_PITCH * usual:
            rows[-1].append(line)
        else:
            rows.append([line])
    return rows


def _column_ranges(rows: list[list["_Line"]]) -> list[tuple[float, float]]:
    spans = sorted((w.x0, w.x1) for row in rows for line in row for w in line.words)
    merged: list[list[float]] = []
    for x0, x1 in spans:
        if merged and x0 - merged[-1][1] < TABLE_COL_GAP:
            merged[-1][1] = max(merged[-1][1], x1)
        else:
            merged.append([x0, x1])
    return [(a, b) for a, b in merged]


def _centred_over_two(x0: float, x1: float, columns: list[tuple[float, float]],
                      right_edge: float) -> tuple[int, list[int]] | None:
    """(k, [k + 1]) when a top-row phrase is centred over columns k and k + 1 together: a header cell merged
    across both ("Arm" over "Statin" and "Placebo"), drawn centred, so it may start in either. The two columns
    reach from the first one's start to where the column after them starts (their cells' width, not their
    values')."""
    middle = (x0 + x1) / 2
    for k in range(len(columns) - 1):
        left = columns[k][0]
        right = columns[k + 2][0] - TABLE_COL_GAP if k + 2 < len(columns) else right_edge
        across_gap = x0 < columns[k + 1][0] and x1 > columns[k][1]  # over the strip between them
        if across_gap and x0 >= left - 1 and x1 <= right + 1 and abs(middle - (left + right) / 2) <= CENTRED * (
                right - left):
            return k, [k + 1]
    return None


def _place(x0: float, x1: float, columns: list[tuple[float, float]]) -> tuple[int, list[int]]:
    """The column a phrase from ``x0`` to ``x1`` belongs to (the one it starts in, else the one it overlaps most,
    else the nearest), and the further columns it covers for the most part (a merged header cell)."""
    def overlap(k: int) -> float:
        a, b = columns[k]
        return min(x1, b) - max(x0, a)

    ks = range(len(columns))
    home = next((k for k in ks if columns[k][0] - 1 <= x0 <= columns[k][1]), None)
    if home is None:
        best = max(ks, key=overlap)
        home = best if overlap(best) > 0 else min(ks, key=lambda k: abs(sum(columns[k]) / 2 - (x0 + x1) / 2))
    spanned = [k for k in ks if k > home and overlap(k) > SPAN_COVER * (columns[k][1] - columns[k][0])]
    return home, spanned


def _caption_distance(bbox, box) -> float:
    """How far a caption's box lies above or below a table's (infinite when beside it or inside it)."""
    x0, top, x1, bottom = bbox
    cx0, ctop, cx1, cbottom = box
    if cx0 >= x1 or cx1 <= x0:
        return math.inf
    if cbottom <= top + 2:
        return top - cbottom
    if ctop >= bottom - 2:
        return ctop - bottom
    return math.inf


# -- the DocTable ---------------------------------------------------------------------------------------------

def _doc_table(grid: list[list[str | None]], bbox, page: _Page, index: int) -> DocTable:
    """A found grid as a DocTable: cells cleaned (a cell's lines joined by spaces), empty rows and columns
    dropped, merged header cells repeated to the right, with the caption nearest above or below and its label."""
    cells = [[None if cell is None else " ".join(_clean(" ".join(cell.split())).split()) for cell in row]
             for row in grid]
    cells = [row for row in cells if any(row)]
    keep = [k for k in range(len(cells[0])) if any(row[k] for row in cells)] if cells else []
    cells = [[row[k] for k in keep] for row in cells]
    header_rows = _header_rows(cells)
    for r, row in enumerate(cells):
        for c, cell in enumerate(row):
            if cell is None:  # the part of a merged cell to the right of its text
                row[c] = row[c - 1] if r < header_rows and c > 0 else ""
    captions = _captions(page.words)
    near = min(captions, key=lambda cap: _caption_distance(bbox, cap[1]), default=None)
    caption = near[0] if near and _caption_distance(bbox, near[1]) <= CAPTION_MAX_GAP else ""
    match = _CAPTION.match(caption)
    label = f"Table {match.group(1)}" if match else f"Table {index}"
    x0, top, x1, bottom = bbox
    return DocTable(label=label, caption=caption, page=page.number, grid=cells, header_rows=header_rows,
                    bbox=Box(page=page.number, x0=x0, top=top, x1=x1, bottom=bottom))


def _header_rows(cells: list[list[str | None]]) -> int:
    """2 when the first row has merged or blank cells over a second row of labels (no numbers) and numbers
    below them; else 1."""
    if len(cells) < 3:
        return 1
    first, second = cells[0], cells[1]
    labels = [c for c in second if c]
    if len(labels) < 2 or any(_NUMERIC.match(c) for c in labels):
        return 1
    merged = any(c is None for c in first)
    blanks = any(c == "" for c in first)
    numbers_below = any(c and _NUMERIC.match(c) for row in cells[2:] for c in row)
    return 2 if merged or (blanks and numbers_below) else 1
