"""Format detection: a file's name, an optional explicit format and its first bytes decide its reader.

The readers live one per format: ``kb.table_csv``, ``kb.table_markdown``, ``kb.table_json``, ``kb.table_html``
and ``kb.table_xlsx``; bytes become text in ``kb.text_decoding``.
"""

from __future__ import annotations

import re
from pathlib import Path

from kb.errors import TableError

FORMATS = ("csv", "tsv", "xlsx", "json", "markdown", "html")
_SUFFIX_FORMAT = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "csv", ".xlsx": "xlsx", ".xlsm": "xlsx",
                  ".json": "json", ".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html"}


def _detect_format(name: str, fmt: str | None, head: bytes) -> str:
    if fmt:
        fmt = {"md": "markdown", "xls": "xlsx"}.get(fmt.lower(), fmt.lower())
        if fmt not in FORMATS:
            raise TableError(f"Unknown table format {fmt!r}; supported: {', '.join(FORMATS)}.")
        return fmt
    suffix = Path(name).suffix.lower()
    if suffix == ".xls":
        raise TableError("Old .xls workbooks are not supported; save the sheet as .xlsx or CSV.")
    if suffix in _SUFFIX_FORMAT:
        return _SUFFIX_FORMAT[suffix]
    if head.startswith(b"PK\x03\x04"):
        return "xlsx"
    stripped = head.lstrip()
    if stripped[:1] in (b"{", b"["):
        return "json"
    if stripped[:1] == b"|":
        return "markdown"
    if stripped[:1] == b"<" and re.search(rb"<(?:table|html|!doctype)", stripped[:512], re.IGNORECASE):
        return "html"
    return "csv"
