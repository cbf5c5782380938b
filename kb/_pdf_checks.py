"""What is known of a PDF before its pages are parsed, and what it carries besides its pages.

The checks that turn a broken or hostile file into a sentence for the user before the expensive reading starts:
the file itself (there, a file, not too big, the PDF signature, and otherwise what it seems to be); opening it
with pypdfium2 and pdfplumber, telling a password, an encryption that cannot be opened or a cut-short download
from plain damage; a page's area and character count, counted by pdfium before pdfminer is let at the page; and
the notes on embedded JavaScript and attached files, found but never run or opened. None of it reads text, so it
is apart from the words, the tables and the layout.
"""

from __future__ import annotations

import logging
import stat
from pathlib import Path
from typing import Any

from kb._pdf_words import _Page
from kb.document_model import DocumentError
from kb.table_limits import size_over_limit

log = logging.getLogger(__name__)

HEADER_WINDOW = 1024  # readers accept junk before "%PDF-" within the first kilobyte, so the check does too
CUT_SHORT_WINDOW = 64 * 1024  # a file holding objects in this much of its start, but no "%%EOF", was cut short


# -- the file -------------------------------------------------------------------------------------------------

def _check_file(path: Path, name: str, max_bytes: int) -> None:
    """The checks that need no parser: the file is there, a file, not too big, and starts like a PDF."""
    try:
        st = path.stat()
    except OSError as exc:
        raise DocumentError(f"{name} could not be opened (it is missing or cannot be read).") from exc
    if not stat.S_ISREG(st.st_mode):
        raise DocumentError(f"{name} is not a file, so it cannot be read as a PDF.")
    if st.st_size == 0:
        raise DocumentError(f"{name} is empty (0 bytes).")
    if st.st_size > max_bytes:
        raise DocumentError(f"{name} is {size_over_limit(st.st_size, max_bytes)} "
                            "(EVIDENTIA_DOCUMENT_MAX_BYTES); upload a smaller file.")
    try:
        with path.open("rb") as fh:
            head = fh.read(HEADER_WINDOW)
    except OSError as exc:
        raise DocumentError(f"{name} could not be opened (it cannot be read).") from exc
    if b"%PDF-" not in head:
        raise DocumentError(_not_a_pdf(name, head))


def _not_a_pdf(name: str, head: bytes) -> str:
    """What a file without the PDF signature seems to be, in a sentence."""
    if not head.strip():
        return f"{name} is empty (it holds only blank space)."
    low = head[:512].lower()
    kinds = [(head.startswith(b"PK\x03\x04") and b"word/" in head, "a Word document (.docx)"),
             (head.startswith(b"PK\x03\x04"), "a ZIP archive (such as a .docx or .xlsx file)"),
             (head.startswith(b"\x89PNG"), "a PNG image"), (head.startswith(b"\xff\xd8\xff"), "a JPEG image"),
             (head.startswith((b"GIF87a", b"GIF89a")), "a GIF image"),
             (head.startswith((b"II*\x00", b"MM\x00*")), "a TIFF image"),
             (head.startswith(b"\xd0\xcf\x11\xe0"), "an old Office file (.doc or .xls)"),
             (head.startswith(b"{\\rtf"), "an RTF document"), (head.startswith(b"%!PS"), "a PostScript file"),
             (b"<html" in low or b"<!doctype html" in low, "an HTML web page")]
    what = next((kind for hit, kind in kinds if hit), None)
    if what is None:
        try:
            head.decode("utf-8")
            what = "plain text"
        except UnicodeDecodeError:
            what = None
    if what is None:
        return f"{name} is not a PDF (it does not start with the PDF signature)."
    return f"{name} is not a PDF: it looks like {what}. Upload the PDF itself, or the file under its own name."


def _open_pdfium(path: Path, name: str):
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == pdfium_c.FPDF_ERR_PASSWORD:
            raise DocumentError(f"{name} is password-protected; open it, save or print it as a PDF without a "
                                "password, and upload that.") from exc
        if getattr(exc, "err_code", None) == pdfium_c.FPDF_ERR_SECURITY:
            raise DocumentError(f"{name} is encrypted in a way that cannot be opened here; save it again "
                                "without encryption and upload that.") from exc
        raise _damaged(path, name) from exc


def _damaged(path: Path, name: str) -> DocumentError:
    """A file pdfium cannot open. Cut short (objects, but no end-of-file marker near the end) is common enough,
    after a failed download, to be told apart."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            start = fh.read(CUT_SHORT_WINDOW)
            fh.seek(max(size - HEADER_WINDOW, 0))
            cut_short = b"%%EOF" not in fh.read() and b" obj" in start
    except OSError:
        cut_short = False
    if cut_short:
        return DocumentError(f"{name} could not be read: it seems cut short (an incomplete download or copy?); "
                             "download or export it again.")
    return DocumentError(f"{name} could not be read: it is damaged or not a valid PDF.")


def _open_plumber(path: Path, name: str):
    """pdfplumber on the file, or None where pdfminer cannot parse what pdfium opened (pdfium repairs more, and
    pdfminer recurses on a trailer that points back at itself): the text is then read from pdfium alone."""
    import pdfplumber

    try:
        plumber = pdfplumber.open(str(path))
        plumber.pages  # noqa: B018 - walks the page tree now, where a loop in it is caught
        return plumber
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - pdfminer raises many types on a damaged file
        if "password" in str(exc).lower() or "encrypt" in type(exc).__name__.lower():
            raise DocumentError(f"{name} is encrypted in a way that cannot be opened here; save it again "
                                "without encryption and upload that.") from exc
        log.debug("pdfminer cannot parse %s", name, exc_info=True)
        return None


def _encrypted(pdf) -> bool:
    import pypdfium2.raw as pdfium_c

    return pdfium_c.FPDF_GetSecurityHandlerRevision(pdf.raw) != -1


def _active_content(pdf, plumber) -> set[str]:
    """{"javascript", "files"}: what the PDF carries that a viewer might run or open (this reader does neither)."""
    import pypdfium2.raw as pdfium_c

    found: set[str] = set()
    try:
        if pdfium_c.FPDFDoc_GetJavaScriptActionCount(pdf.raw) > 0:
            found.add("javascript")
        if pdf.count_attachments() > 0:
            found.add("files")
    except Exception:  # noqa: BLE001 - only a note depends on it
        pass
    if plumber is None:
        return found
    try:
        found |= _catalog_active_content(plumber.doc.catalog)
    except MemoryError:
        raise
    except Exception:  # noqa: BLE001 - a damaged (or looping) catalog: no note, the reading goes on
        pass
    return found


def _catalog_active_content(catalog: dict) -> set[str]:
    from pdfminer.pdftypes import resolve1

    def name_of(value: Any) -> str:
        return str(getattr(resolve1(value), "name", resolve1(value)))

    found = set()
    action = resolve1(catalog.get("OpenAction"))
    if isinstance(action, dict) and (name_of(action.get("S")) == "JavaScript" or "JS" in action):
        found.add("javascript")
    if "AA" in catalog:  # document-level "additional actions": scripts run on close, save or print
        found.add("javascript")
    names = resolve1(catalog.get("Names"))
    if isinstance(names, dict):
        if "JavaScript" in names:
            found.add("javascript")
        if "EmbeddedFiles" in names:
            found.add("files")
    return found


def _active_note(active: set[str]) -> str:
    if active == {"javascript"}:
        return "the PDF carries embedded JavaScript; it was not run"
    if active == {"files"}:
        return "the PDF carries attached files; they were not opened"
    return "the PDF carries embedded JavaScript and attached files; they were not run or opened"


# -- a page ---------------------------------------------------------------------------------------------------

def _check_with_pdfium(pdfium_page, page: _Page, max_chars_per_page: int) -> bool:
    """Mark pages without area or with too many characters; True when the page draws images."""
    if pdfium_page is None:
        return False
    import pypdfium2.raw as pdfium_c

    width, height = pdfium_page.get_size()
    if width < 1 or height < 1:
        page.status = "no_area"
        return False
    textpage = pdfium_page.get_textpage()
    try:
        chars = textpage.count_chars()
    finally:
        textpage.close()
    if chars > max_chars_per_page:
        page.status = "chars"
        return False
    if chars > 0:
        return False
    return any(True for _ in pdfium_page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=3))
