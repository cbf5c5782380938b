"""Pieces shared by ``verify_claim`` and ``table_qa``: the collapsed view, cell citations, evidence."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, Field, create_model

from kb.tables import Table

# Prompt budget for the table: the served model has a 4,096-token window that must also hold
# the instructions, three explanations (<= 360 tokens) and the answer (<= 120). Qwen's tokenizer
# splits digits one by one, so numeric tables run at ~1.8 characters per token: 4,500 characters
# stay under ~2,500 tokens.
TABLE_PROMPT_CHARS = 4500
MAX_CITED_CELLS = 6
# The judge's reason is capped in the schema (the server's grammar enforces maxLength): at ~4
# tokens/s every character is time, and the reason only has to be one sentence.
REASON_MAX_CHARS = 200
REASON_SCHEMA_EXTRA = {"maxLength": REASON_MAX_CHARS}
# Token budget for a judgement whose reason may reach the cap: a 200-character reason took ~100 tokens when
# measured, and up to 200 where every character is a token (Qwen splits digits). The 200-token budget cut
# judgements that had reached the cap; most of those, it turned out, were the model emitting whitespace after
# the reason instead of the closing brace, which the LLM client now closes (``close_json_after_value``).
JUDGEMENT_MAX_TOKENS = REASON_MAX_CHARS + 150
CELL_PATTERN = r"^R[0-9]+C[0-9]+$"  # any cell id; a view narrows it to its own cells (cell_pattern)
NO_CELLS = r"^$"  # the pattern of a view with no cells
_CELL_RE = re.compile(r"(?:T\d+\s*:\s*)?\bR\s*(\d+)\s*[,;/ ]?\s*C\s*(\d+)\b", re.I)


@dataclass
class CollapsedView:
    """Which rows and columns of ``table`` the model sees, in full-table coordinates."""

    table: Table
    cols: list[int]
    rows: list[int]
    markdown: str = ""
    shown_rows: list[int] = field(default_factory=list)

    @classmethod
    def build(cls, table: Table, cols: list[int], rows: list[int], max_chars: int = TABLE_PROMPT_CHARS):
        markdown = table.to_markdown(cols=cols, rows=rows, max_rows=None, max_chars=max_chars)
        shown = [int(m) for m in re.findall(r"^\| R(\d+) \|", markdown, re.M)]
        return cls(table=table, cols=list(cols), rows=list(rows), markdown=markdown, shown_rows=shown)

    def contains(self, r: int, c: int) -> bool:
        return r in self.shown_rows and c in self.cols


    def cell_pattern(self) -> str:
        """A regex matching exactly the cells shown: the view is a product of its shown rows and its columns.

        Given to the server's grammar, it makes a citation of a cell the model never saw impossible to
        write (before, 22% of PubHealthTab judgements cited such cells, mostly counting the ``row`` column
        as C1). The label precedes ``cited_cells`` in every schema, so the verdict is decoded unchanged.
        """
        if not self.shown_rows or not self.cols:
            return NO_CELLS
        rows = "|".join(str(r) for r in self.shown_rows)
        cols = "|".join(str(c) for c in self.cols)
        return rf"^R(?:{rows})C(?:{cols})$"


def cited_cells_schema_extra(pattern: str = CELL_PATTERN) -> dict[str, Any]:
    """JSON-schema extras for a ``cited_cells`` list: the grammar writes only ids matching ``pattern``."""
    return {"maxItems": 0 if pattern == NO_CELLS else MAX_CITED_CELLS, "items": {"type": "string", "pattern": pattern}}


@lru_cache(maxsize=64)
def cited_for_view(schema: type[BaseModel], cell_pattern: str = CELL_PATTERN) -> type[BaseModel]:
    """``schema`` with its ``cited_cells`` narrowed to ``cell_pattern`` (a view's own cells).

    The verdict or answer fields precede ``cited_cells`` in every table schema, so the narrowing cannot
    change what the model decodes for them.
    """
    description = schema.model_fields["cited_cells"].description
    return create_model(schema.__name__, __base__=schema,
                        cited_cells=(list[str], Field(description=description,
                                                      json_schema_extra=cited_cells_schema_extra(cell_pattern))))


def parse_cell(text: str) -> tuple[int, int] | None:
    m = _CELL_RE.search(text or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def validate_cells(cited: list[str], view: CollapsedView) -> tuple[list[tuple[int, int]], list[str]]:
    """Split cited cells into those inside the collapsed view (deduplicated) and the rest."""
    valid: list[tuple[int, int]] = []
    invalid: list[str] = []
    for text in cited:
        cell = parse_cell(text)
        if cell is None or not view.contains(*cell):
            invalid.append(text)
        elif cell not in valid:
            valid.append(cell)
    return valid, invalid


def cells_in_text(text: str, view: CollapsedView) -> list[tuple[int, int]]:
    """Cells an explanation mentions that exist in the view (for the steps shown to the user)."""
    out: list[tuple[int, int]] = []
    for m in _CELL_RE.finditer(text or ""):
        cell = (int(m.group(1)), int(m.group(2)))
        if view.contains(*cell) and cell not in out:
            out.append(cell)
    return out


def register_evidence(evidence, view: CollapsedView, cells: list[tuple[int, int]], **meta: Any) -> tuple[str, list[str]]:
    """Add the collapsed table (with highlights, for the UI's dataframe) and its decisive cells.

    Returns the table id (``T<n>``) and the cell ids (``T<n>:R<r>C<c>``).
    """
    table = view.table
    label_col = table.row_label_col
    # The decisive cells' rows and columns are shown too: a program reads the whole table, so a cell it used
    # can lie outside the filtered view (Kenya's row of "Uganda had more deaths than Kenya"), and its side
    # panel showed a table without it.
    rows = sorted(set(view.shown_rows) | {r for r, _ in cells})
    cols = sorted(set(view.cols) | {c for _, c in cells})
    # meta keys follow the UI's dataframe contract: names, cell values, and their full-table numbers.
    ev = evidence.add_table(
        table.name, view.markdown, source=table.title,
        columns=[table.columns[c - 1] for c in cols], col_numbers=cols,
        rows=[[table.rows[r - 1][c - 1] for c in cols] for r in rows],
        row_numbers=rows, highlighted=[f"R{r}C{c}" for r, c in cells],
        notes=list(table.notes), **meta)
    ids = []
    for r, c in cells:
        cell = evidence.add_cell(table.name, r, c, table.cell(r, c), source=table.title,
                                 header=table.columns[c - 1], where=table.source,
                                 row_label=table.cell(r, label_col) if label_col else "")
        ids.append(cell.id)
    return ev.id, ids
