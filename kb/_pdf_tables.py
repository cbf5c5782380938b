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
TABLE_COL_GAP = 6.0  # in a table without vertical rules, columns are apart by a clear strip at least this wide...
COL_GAP_EM = 0.5  # ...or this share of the type size where that is less: a word space is about 0.25-0.33 of it,
#                   and cells padded 3 pt a side leave only 6 pt between the text of two columns
SHORT_CELL_WORDS = 6  # a text-found table's cells' lines are mostly this short; prose's are not
PROSE_CELL_WORDS = 40  # a "cell" this long is a paragraph: a grid of mostly such cells is ruled prose
LONG_CELL_SHARE = 0.3  # ...more than this share of longer cells and it is prose laid out in columns
CAPTION_MAX_GAP = 48.0  # a caption lies within this many points above or below its table
UNRULED_MAX_GAP = 2.5  # rows of a table without rules are no further apart than this many line heights
WRAPPED_PITCH = 0.8  # a line this much closer to the one above than rows usually are continues its cell
LEADING_SPREAD = 0.1  # pitches within this share of the smallest one are the type's leading (a cell's lines)...
ROW_PADDING = 0.25  # ...when others are at least this share of the type size more: rows set apart by padding
CONTINUING_SHARE = 0.75  # the leading-pitched lines are a wrapped cell's lines if this share of them look it
SPAN_COVER = 0.5  # a header phrase over this share of a further column's width spans it (a merged cell)
BOLD_BODY_SHARE = 0.5  # a header set in bold over a body of which more than this share of the words is not
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
    # judged by a cell's lines: a table's narrow columns wrap a long cell into short lines; prose has long ones
    long = sum(1 for cell in cells if max(len(line.split()) for line in cell.split("\n")) > SHORT_CELL_WORDS)
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
            if not rows:  # the caption's own second line
                continue
            if _prose(line, rows, page.width):  # the table has ended
                break
        rows.append(line)
    return rows if len(rows) >= 2 else []


def _prose(line: "_Line", rows: list["_Line"], width: float) -> bool:
    """Whether a line of one phrase under the rows of a table without rules is prose after the table (wide, or a
    sentence's end) rather than a wrapped cell's next line: that starts right of the table's left edge (under a
    later column), or lies closer to the line above than the rows lie apart (the leading inside a cell)."""
    if line.x1 - line.x0 > 0.5 * width:
        return True
    pitches = [b.top - a.top for a, b in zip(rows, rows[1:])]
    if line.x0 > min(row.x0 for row in rows) + TABLE_COL_GAP or (
            pitches and line.top - rows[-1].top < WRAPPED_PITCH * max(pitches)):
        return False
    return len(line.words) >= 3 and bool(_SENTENCE_END.search(line.text))


# -- a grid from the words of a table without vertical rules --------------------------------------------------

def _grid_from_words(words: list[_Word]) -> list[list[str | None]]:
    """A grid from a table drawn without vertical rules. Rows are lines (a line set closer than the rows are
    apart continues the cell above it, wrapped); columns are the x-ranges that clear vertical strips
    (:func:`_column_gap` wide) separate, judged below the header rows (which bridge or widen them). Each phrase goes to
    the column it starts in; a header phrase merged over further columns (centred over two, or across most of
    one) marks those cells None, as pdfplumber does for a ruled table."""
    gap = _column_gap(words)
    rows = _wrapped_rows(_group_lines(words), gap)
    if len(rows) < 2:
        return []
    # the most columns, and of those the ones seen below the most rows: the header's cells bridge or widen them
    candidates = [_column_ranges(rows[k:], gap) for k in range(min(3, len(rows) - 1))]
    columns = candidates[max(range(len(candidates)), key=lambda k: (len(candidates[k]), k))]
    if len(columns) < 2:
        return []
    grid: list[list[str | None]] = []
    for r, row in enumerate(rows):
        cells: list[list[list[str]]] = [[] for _ in columns]  # each cell's lines, each line's phrases
        merged: set[int] = set()
        for n, line in enumerate(row):
            for phrase in _segments(line.words, gap):
                x0, x1 = phrase[0].x0, max(w.x1 for w in phrase)
                home, spanned = ((r == 0 and _centred_over_two(x0, x1, columns, max(w.x1 for w in words)))
                                 or _place(x0, x1, columns))
                if len(cells[home]) <= n:
                    cells[home] += [[] for _ in range(n + 1 - len(cells[home]))]
                cells[home][n].append(" ".join(w.text for w in phrase))
                merged.update(spanned)
        # a wrapped cell's lines joined by a line break, as pdfplumber gives a ruled cell's
        grid.append([None if k in merged and not cell else "\n".join(" ".join(p) for p in cell if p)
                     for k, cell in enumerate(cells)])
    return grid


def _column_gap(words: list[_Word]) -> float:
    """The least clear strip between two columns of a table in these words' type."""
    sizes = sorted(w.size for w in words)
    return min(TABLE_COL_GAP, COL_GAP_EM * sizes[len(sizes) // 2]) if sizes else TABLE_COL_GAP


def _wrapped_rows(lines: list["_Line"], gap: float = TABLE_COL_GAP) -> list[list["_Line"]]:
    """Lines into table rows: a wrapped cell's further lines join the row of its first line.

    Inside a cell, lines are the type's leading apart; rows are further apart by the cells' padding. So when the
    pitches from line to line form two groups, a tight one (the leading) and a loose one, the lines a tight pitch
    below the line above are wrapped cells' lines, if most of those lines look it (:func:`_continues`: text only
    under cells of their row, in fewer of them or not under the row's label, no number under a number; then also
    the few that do not, a row whose every cell wraps); where they do not (a table that only sets its header
    further apart, or groups of rows), they are rows. Without two groups, a line well under the usual pitch below
    the one above still continues it (a table with few wrapped cells, whose usual pitch is the rows')."""
    pitches = [b.top - a.top for a, b in zip(lines, lines[1:])]
    usual = sorted(pitches)[len(pitches) // 2] if pitches else 0.0
    joins = [pitch < WRAPPED_PITCH * usual for pitch in pitches]
    tight = _leading(pitches, lines)
    if tight is not None:
        columns = _line_columns(lines, gap)
        filled = [_filled(line, columns, gap) for line in lines]
        candidates, continuing = 0, []
        start = 0  # the first line of the row being read
        for i, pitch in enumerate(pitches, start=1):
            if pitch <= tight:
                candidates += 1
                cont = _continues(filled[start:i], filled[i])
                continuing.append(cont)
                if not cont:
                    start = i
            else:
                continuing.append(False)
                start = i
        if sum(continuing) >= CONTINUING_SHARE * candidates:  # the tight pitch is the leading: every such line
            joins = [join or pitch <= tight for join, pitch in zip(joins, pitches)]  # (a row whose cells all wrap)
    rows: list[list[_Line]] = []
    for i, line in enumerate(lines):
        if rows and joins[i - 1]:
            rows[-1].append(line)
        else:
            rows.append([line])
    return rows


def _leading(pitches: list[float], lines: list["_Line"]) -> float | None:
    """The largest pitch that is still the type's leading, when the pitches fall into that and a looser group
    (rows set apart by padding): those within LEADING_SPREAD of the smallest pitch, if some other is at least
    ROW_PADDING (of the type size) larger than them. None when the pitches are all alike."""
    sizes = sorted(w.size for line in lines for w in line.words)
    size = sizes[len(sizes) // 2] if sizes else 0.0
    real = [p for p in pitches if p > 0.5 * size]  # lines a hair apart are one line split by a raised mark
    if not real:
        return None
    tight = min(real) * (1 + LEADING_SPREAD)
    loose = [p for p in real if p > tight]
    if not loose or min(loose) - tight < ROW_PADDING * size:
        return None
    return tight


def _line_columns(lines: list["_Line"], gap: float) -> list[tuple[float, float]]:
    """The columns as :func:`_grid_from_words` finds them, from the lines before they are rows."""
    candidates = [_column_ranges([[line] for line in lines[k:]], gap) for k in range(min(3, max(1, len(lines) - 1)))]
    return candidates[max(range(len(candidates)), key=lambda k: (len(candidates[k]), k))]


def _filled(line: "_Line", columns: list[tuple[float, float]], gap: float) -> dict[int, str]:
    """The text of each column a line has text in (by where each phrase starts)."""
    out: dict[int, str] = {}
    for phrase in _segments(line.words, gap):
        home, _spanned = _place(phrase[0].x0, max(w.x1 for w in phrase), columns)
        out[home] = (out[home] + " " if home in out else "") + " ".join(w.text for w in phrase)
    return out


def _continues(row_filled: list[dict[int, str]], filled: dict[int, str]) -> bool:
    """Whether a line (``filled``: its text by column) a tight pitch under a row (``row_filled``: its lines' text
    by column) looks like the next line of the row's wrapped cells: it has text only in columns the row has text
    in, in fewer columns than the row's first line or not in the first column (the row's label; a cell that wraps
    is a long one, rarely every cell of a row), and puts no number under a number of one word (two values stacked
    in a column are two rows'; a number with spaces, "+855 31 234 5678", may wrap)."""
    if not filled:
        return False
    above = set().union(*row_filled)
    first = row_filled[0]
    if not set(filled) <= above or (0 in filled and len(filled) >= len(first)):
        return False
    last = row_filled[-1]
    return not any(k in last and _NUMERIC.match(last[k]) and " " not in last[k] and _NUMERIC.match(text)
                   for k, text in filled.items())


def _column_ranges(rows: list[list["_Line"]], gap: float = TABLE_COL_GAP) -> list[tuple[float, float]]:
    spans = sorted((w.x0, w.x1) for row in rows for line in row for w in line.words)
    merged: list[list[float]] = []
    for x0, x1 in spans:
        if merged and x0 - merged[-1][1] < gap:
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
                    header_marked=_bold_header(cells, header_rows,
                                                [w for w in page.table_words if _contains(bbox, w.middle)]),
                    bbox=Box(page=page.number, x0=x0, top=top, x1=x1, bottom=bottom))


def _bold_header(cells: list[list[str]], header_rows: int, words: list[_Word]) -> bool:
    """Whether the table's header rows are set in bold over a body that is mostly not: every word of the header is
    one of the table's bold words, and most words of the body are among its plain ones."""
    head = {t for row in cells[:header_rows] for cell in row for t in cell.split()}
    body = {t for row in cells[header_rows:] for cell in row for t in cell.split()}
    bold = {w.text for w in words if w.bold}
    plain = {w.text for w in words if not w.bold}
    return bool(head) and bool(body) and head <= bold and len(body & plain) > BOLD_BODY_SHARE * len(body)


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
