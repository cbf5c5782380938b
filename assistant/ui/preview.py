"""Column names for the browser's table preview, which reads each column by a key path.

Chainlit's Dataframe element gives each column to TanStack Table as ``accessorKey: <column name>``, and TanStack
reads a key with a dot as a path into nested objects ("PM2.5 (µg/m³)" as ``row["PM2"]["5 (µg/m³)"]``), so such a
column was shown empty (found as a new user: the air-quality table's PM2.5 column, blank in every row, beside the
answer computed from it; TanStack/table#4296 calls this expected). Two columns with one name share one key, so
the second overwrote the first. The preview's names therefore write a dot as the one-dot leader (U+2024, which
looks the same), and a repeated name gets its number; the table itself, its cells and its evidence keep the names
as uploaded.
"""

from __future__ import annotations

ONE_DOT_LEADER = "\u2024"


def preview_columns(columns: list[str]) -> list[str]:
    """Display names for ``columns`` that the preview reads as written: no dots, none repeated, none empty."""
    out: list[str] = []
    seen: set[str] = set()
    for i, name in enumerate(columns, start=1):
        shown = (str(name).strip() or f"Column {i}").replace(".", ONE_DOT_LEADER)
        base, n = shown, 2
        while shown in seen:
            shown, n = f"{base} ({n})", n + 1
        seen.add(shown)
        out.append(shown)
    return out
