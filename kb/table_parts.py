"""Choosing one table among the several a page or file holds (an HTML page's tables, a Markdown file's tables).

The choice works as a workbook's sheets do: each table gets a label ("table 2 (Year, Cases, Deaths)"), the one
read is ``Table.sheet`` and the labels are ``Table.sheet_names``, so the UI's buttons and the CLI's ``--sheet``
offer the others; ``load_table(sheet=...)`` takes a label, "table 2", or a 0-based index. The notes say which
table was read and which others there are (#79: the page's first table, a navigation bar, was taken blindly).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kb.errors import TableError

MAX_OFFERED = 20  # tables offered by label (buttons in the UI); any of them can still be asked for by number
_NUMBERED = re.compile(r"^\s*table\s+(\d+)\b", re.I)


def too_many_rows(limit: int) -> TableError:
    return TableError(f"The table has more than {limit:,} rows; the limit is {limit:,} (EVIDENTIA_TABLE_MAX_ROWS). "
                      "Upload a smaller extract.")


# Markup characters: a label is shown in Markdown (the upload message, its buttons), where a page's caption must not
# become a link, an image or emphasis.
_MARKUP = re.compile(r"[\[\]<>*_`|!\\#~]")


def _clip(text: str, most: int) -> str:
    text = " ".join(_MARKUP.sub(" ", text).split())
    return text if len(text) <= most else text[:most - 1].rstrip() + "…"


def describe_part(caption: str | None, first_cells: list[str]) -> str:
    """A few words that tell a table apart: its caption, or else its first header cells."""
    if caption and caption.strip():
        return _clip(caption, 60)
    cells = [c for c in first_cells if c.strip()]
    return ", ".join(_clip(c, 24) for c in cells[:3]) + (", …" if len(cells) > 3 else "")


def part_label(number: int, description: str) -> str:
    """"table 2 (Measles cases)": 1-based, as a person counts the tables on a page."""
    return f"table {number}" + (f" ({description})" if description else "")


def pick_part(labels: list[str], sheet: str | int | None, default: int, where: str) -> int:
    """The 0-based index of the table ``sheet`` names: a label, "table N" (1-based, as labelled), or a 0-based
    index (as a workbook's sheets are numbered); ``default`` when ``sheet`` is None."""
    if sheet is None:
        return default
    if isinstance(sheet, int) or (isinstance(sheet, str) and sheet.strip().isdigit()):
        index = int(sheet)
        if 0 <= index < len(labels):
            return index
        raise TableError(f"The {where} has {len(labels)} table{'s' * (len(labels) != 1)}; there is no table number "
                         f"{index} (counting from 0).")
    if sheet in labels:
        return labels.index(sheet)
    numbered = _NUMBERED.match(sheet)
    if numbered and 1 <= int(numbered.group(1)) <= len(labels):
        return int(numbered.group(1)) - 1
    raise TableError(f"The {where} has no table {sheet!r}; its tables are: {offered_list(labels)}.")


def offered_list(labels: list[str], skip: int | None = None, most: int = 10) -> str:
    others = [label for i, label in enumerate(labels) if i != skip]
    return ", ".join(others[:most]) + (f" and {len(others) - most} more" if len(others) > most else "")


def offered(labels: list[str], chosen: int) -> list[str]:
    """The labels offered as choices: the first :data:`MAX_OFFERED`, and the one read."""
    return [label for i, label in enumerate(labels) if i < MAX_OFFERED or i == chosen]


def choice_note(labels: list[str], chosen: int, where: str) -> str:
    """"read table 2 of 5 (Year, Cases); the page also has: table 1 (Home, About), …"."""
    read = labels[chosen].split(" ", 2)
    description = f" {read[2]}" if len(read) > 2 else ""
    return (f"read table {chosen + 1} of {len(labels)}{description}; the {where} also has: "
            f"{offered_list(labels, skip=chosen)}")


def stopped_note(number: int, reason: str, where: str) -> str:
    """"stopped reading the page at table 3, which has more than 5,000 rows (EVIDENTIA_TABLE_MAX_ROWS); …"."""
    return f"stopped reading the {where} at table {number}, which has {reason}; any tables after it were not read"


def over_rows(limit: int) -> str:
    return f"more than {limit:,} rows (EVIDENTIA_TABLE_MAX_ROWS)"


@dataclass
class ChosenTable:
    """The table read from a page or file of several, and the others as choices."""

    grid: list[list[str]]
    header: list[str] | None
    caption: str | None
    notes: list[str]
    labels: list[str]  # the tables offered, as ``Table.sheet_names``; empty when there is one table
    chosen: str | None  # the label of the table read (``Table.sheet``); None when there is one table
    number: int  # 1-based number of the table read
    default: bool  # the table read is the one read when none is asked for
