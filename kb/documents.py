"""Read an uploaded PDF or DOCX for evidence, and turn the tables found in it into tables the claim and table
question path reads like any uploaded CSV (#81).

The readers live in ``kb.pdf_reader`` (pdfplumber and pypdfium2, in a child process under limits) and
``kb.docx_reader`` (python-docx, after checking the zip); this module picks one by what the file *is*, not only by
its name, and names the tables.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable

from kb.document_model import DocTable, DocumentError, ReadDocument
from kb.table_html import split_html_header
from kb.table_model import Table
from kb.table_normalise import merge_header_rows, table_from_grid
from kb.tables import safe_table_name

DOCUMENT_SUFFIXES = {".pdf", ".docx", ".docm"}


def is_document(name: str) -> bool:
    return Path(name).suffix.lower() in DOCUMENT_SUFFIXES


def read_document(path: Path, *, name: str | None = None, settings: Any = None,
                  progress: Callable[[int, int], None] | None = None) -> ReadDocument:
    """The reading of a PDF or DOCX upload; ``DocumentError`` (one sentence for the user) when it cannot be read.

    The kind is told by the file's first bytes: a ``.pdf`` that is really a Word file is read as one, with a note
    that says so, rather than refused or mis-read."""
    label = name or path.name
    if not path.is_file():
        raise DocumentError(f"{label}: no such file.")
    with path.open("rb") as fh:
        head = fh.read(8)
    suffix = Path(label).suffix.lower()
    looks_pdf = head.startswith(b"%PDF-") or (suffix == ".pdf" and b"%PDF-" in _first_kb(path))
    looks_zip = head.startswith(b"PK\x03\x04")
    if looks_pdf:
        from kb.pdf_reader import PdfLimits, read_pdf

        doc = read_pdf(path, name=label, limits=_pdf_limits(settings), progress=progress)
        if suffix != ".pdf":
            doc.notes.insert(0, f"{label} is a PDF despite its name; it was read as one")
        return doc
    if looks_zip or suffix in (".docx", ".docm"):
        from kb.docx_reader import DocxLimits, read_docx

        limits = DocxLimits(max_bytes=_setting(settings, "document_max_bytes", DocxLimits.max_bytes))
        doc = read_docx(path, name=label, limits=limits)
        if suffix == ".pdf":
            doc.notes.insert(0, f"{label} is a Word document despite its name; it was read as one")
        return doc
    # Neither: the PDF reader says what it looks like (an image, HTML, empty…).
    from kb.pdf_reader import read_pdf

    return read_pdf(path, name=label, limits=_pdf_limits(settings), progress=progress)


def _first_kb(path: Path) -> bytes:
    # PDF readers accept junk before "%PDF-" within the first kilobyte (some generators write a BOM or a line).
    with path.open("rb") as fh:
        return fh.read(1024)


def _setting(settings: Any, name: str, default: Any) -> Any:
    return getattr(settings, name, default) if settings is not None else default


def _pdf_limits(settings: Any):
    from kb.pdf_reader import PdfLimits

    base = PdfLimits()
    return PdfLimits(max_bytes=int(_setting(settings, "document_max_bytes", base.max_bytes)),
                     max_pages=int(_setting(settings, "pdf_max_pages", base.max_pages)),
                     max_chars_per_page=base.max_chars_per_page,
                     timeout_s=float(_setting(settings, "document_timeout_s", base.timeout_s)),
                     max_memory_mb=base.max_memory_mb)


def table_name_for(file_name: str, found: DocTable) -> str:
    """"paper.pdf" and "Table 2" -> "paper Table 2": the name a user types to pick it."""
    return f"{Path(file_name).stem} {found.label}"


def tables_of(doc: ReadDocument, *, settings: Any = None,
              existing_names: Iterable[str] = ()) -> list[tuple[DocTable, Table]]:
    """Each table found in ``doc`` with its :class:`Table`, in the document's order; a table that cannot be read
    as one (no rows under its header) is left out and said in ``doc.notes``.

    Multi-row headers are joined as the HTML reader joins a ``<thead>`` of several rows ("Model / Acc." ->
    "Model Acc."), and each table's title is its caption, its source the file and page. Header rows that read as
    numbers are taken for data, unless the document marks them as its header (``DocTable.header_marked``)."""
    names = list(existing_names)
    out: list[tuple[DocTable, Table]] = []
    for found in doc.tables:
        where = f"page {found.page}" if found.page else ""
        try:
            head = max(found.header_rows, 0)
            if found.header_marked and 0 < head < len(found.grid):
                header, body = merge_header_rows(found.grid[:head]), found.grid[head:]
            else:
                header, body, _merged = split_html_header(found.grid, head)
            if not body:
                raise DocumentError("no rows under its header")
            name = safe_table_name(table_name_for(doc.name, found), names)
            table = table_from_grid(body, name=name, header=header, title=found.caption or found.label,
                                    source=f"{doc.name}, {where}" if where else doc.name, settings=settings,
                                    notes=[f"read from {found.label} of {doc.name}" + (f" on {where}" if where else "")],
                                    detect_header=header is None)
        except Exception as exc:  # noqa: BLE001 - one unreadable table leaves the others, and says so
            doc.notes.append(f"{found.label}{' on ' + where if where else ''} could not be read as a table ({exc})")
            continue
        names.append(table.name)
        out.append((found, table))
    return out
