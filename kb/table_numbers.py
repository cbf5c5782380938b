"""Numbers written with decimal commas ("891,1", "3.645.000", "12,5%"), rewritten the way every reader expects.

Found as a new user: a German CSV (semicolons, "3.645.000" inhabitants, "891,1" km², "12,5%" share) loaded
with no numeric column at all, so a claim about it could only come out NOT ENOUGH INFO; worse, a cell such as
"1,234" (1.234 in that convention) read as 1234. Every reader downstream (programs, SQL, the column filter,
the judge's prompt) parses numbers the decimal-point way (:func:`kb.table_model.parse_number`), so the table is
converted once, at ingestion, and a note tells the user that cells show the converted numbers.

The convention is decided for the whole table from the cells that only one convention writes: "891,1",
"0,75", "3.645.000" or "1.234,5" only with decimal commas; "0.5", "12.25" or "1,234,567" only with decimal points.
A table converts when it holds at least two cells of the first kind and none of the second, so an English
table's "0.93" or a lone "1,5" (pages 1 and 5?) never flips it. In a converted table the ambiguous forms follow
the table: "1.234" is 1234 and "1,234" is 1.234.
"""

from __future__ import annotations

import re

# A whole cell that is one number in the decimal-comma convention, with an optional currency sign and percent.
_COMMA_NUMBER = re.compile(
    r"^(?P<pre>[$€£¥]?\s*)(?P<sign>[+\-−]?)(?P<int>\d{1,3}(?:\.\d{3})+|\d+)(?:,(?P<dec>\d+))?(?P<post>\s*%?)$")
# Forms only one convention writes (a decimal part of other than three digits, or two or more group marks).
_COMMA_ONLY = re.compile(
    r"^[$€£¥]?\s*[+\-−]?(?:\d+,(?:\d{1,2}|\d{4,})|\d{1,3}(?:\.\d{3}){2,}(?:,\d+)?|\d{1,3}(?:\.\d{3})+,\d+)\s*%?$")
_POINT_ONLY = re.compile(
    r"^[$€£¥]?\s*[+\-−]?(?:\d*\.(?:\d{1,2}|\d{4,})|\d{1,3}(?:,\d{3}){2,}(?:\.\d+)?|\d{1,3}(?:,\d{3})+\.\d+)\s*%?$")
MIN_COMMA_CELLS = 2


def writes_decimal_commas(rows: list[list[str]]) -> bool:
    """Whether the table's numbers are written with decimal commas (the module's rule)."""
    comma = 0
    for row in rows:
        for cell in row:
            text = cell.strip()
            if _POINT_ONLY.match(text):
                return False
            comma += bool(_COMMA_ONLY.match(text))
    return comma >= MIN_COMMA_CELLS


def _point_form(m: re.Match) -> str:
    """'3.645.000' -> '3,645,000', '891,1' -> '891.1', '12,5%' -> '12.5%'."""
    whole = int(m.group("int").replace(".", ""))
    text = f"{whole:,}" if whole >= 10000 else str(whole)
    if m.group("dec") is not None:
        text += "." + m.group("dec")
    return m.group("pre") + m.group("sign") + text + m.group("post")


def convert_decimal_commas(rows: list[list[str]]) -> tuple[list[list[str]], int]:
    """The rows with every decimal-comma number in decimal-point form, and how many cells changed; the rows
    unchanged when the table does not write decimal commas."""
    if not writes_decimal_commas(rows):
        return rows, 0
    changed = 0
    out = []
    for row in rows:
        new = []
        for cell in row:
            m = _COMMA_NUMBER.match(cell.strip())
            if m and ("," in cell or "." in cell):
                converted = _point_form(m)
                changed += converted != cell
                cell = converted
            new.append(cell)
        out.append(new)
    return out, changed
