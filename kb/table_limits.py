"""The size budgets a table upload must stay within, read from ``Settings`` once per load.

Bytes on disk say little about what a file becomes in memory (a 12 MB CSV of 2,000,000 cells took 29 s
and 263 MB to load here), so the readers count rows, columns and cells as the data expands and stop at
the first one over its budget, with one message naming the setting that raises it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kb.errors import TableError


@dataclass(frozen=True)
class TableLimits:
    max_bytes: int = 50 * 1024 * 1024
    max_rows: int = 200_000
    max_cols: int = 200
    max_cells: int = 1_000_000

    @classmethod
    def from_settings(cls, settings: Any) -> "TableLimits":
        if settings is None:
            return cls()
        return cls(int(settings.table_max_bytes), int(settings.table_max_rows), int(settings.table_max_cols),
                   int(settings.table_max_cells))


def too_many_cells(limit: int) -> TableError:
    return TableError(f"The table has more than {limit:,} cells; the limit is {limit:,} (EVIDENTIA_TABLE_MAX_CELLS). "
                      "Upload a smaller extract.")


def check_cells(grid: list[list[Any]], limit: int) -> None:
    """Refuse a grid (already read, e.g. from JSON) with more cells than ``limit``."""
    if sum(len(row) for row in grid) > limit:
        raise too_many_cells(limit)


def size_over_limit(size: int, limit: int) -> str:
    """``"2.3 MB; the limit is 2.0 MB"``, with enough decimals that the two numbers never read the same."""
    for decimals in (1, 3):
        shown, cap = f"{size / 1024**2:,.{decimals}f}", f"{limit / 1024**2:,.{decimals}f}"
        if shown != cap:
            return f"{shown} MB; the limit is {cap} MB"
    return f"{size:,} bytes; the limit is {limit:,} bytes"
