"""Adding a table file to a conversation: shared by the Chainlit shell and the terminal chat.

A workbook with several sheets loads its first sheet; ``sheet`` picks another, and ``replace`` keeps the
table's name (so follow-ups that named it still find it) when the user switches sheets.
"""

from __future__ import annotations

import csv
import re
import statistics
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from tools.contracts import Session


def add_table_file(deps, session: Session, path: Path, *, name: str | None = None, sheet: str | None = None,
                   replace: str | None = None, decimal: str | None = None) -> Any:
    """Load ``path`` (display name ``name``, sheet ``sheet``) into ``session`` and memory; returns the Table.

    ``replace`` is the name of a table this one replaces (another sheet of the same workbook, or the same file read
    with the other decimal mark). ``decimal`` ("," or "."): the decimal mark of a text table's numbers; None reads
    it from the file (and the notes say what was assumed).
    Raises the loader's ``TableError`` with a message for the user; the session is unchanged then.
    """
    from kb.tables import load_table

    existing = [n for n in session.tables if n != replace]
    table = load_table(path, name=name or path.name, settings=deps.settings, sheet=sheet, existing_names=existing,
                       decimal=decimal)
    loaded = _same_table_loaded(session, table, replace)
    if loaded is not None:
        # Asking twice with the same --table (or uploading a file again) used to add "X (2)", a twin that
        # made "which table?" ambiguous; the same content keeps its first name instead.
        return loaded.model_copy(update={"notes": [f"Already loaded as {loaded.name}: the same content, "
                                                   "so nothing was added."]})
    if replace:
        table.name = replace
    session.add_table(table)
    deps.memory.save_table(session.conversation_id, table.name, table.model_dump_json())
    return table


def _same_table_loaded(session: Session, table: Any, replace: str | None) -> Any | None:
    """The conversation's table with exactly ``table``'s content (file, sheet, title, cells), if any."""
    for name, loaded in session.tables.items():
        if name != replace and (loaded.source, loaded.sheet, loaded.title, loaded.columns, loaded.rows) == (
                table.source, table.sheet, table.title, table.columns, table.rows):
            return loaded
    return None


def other_sheets(table: Any) -> list[str]:
    """The workbook's sheets (or the HTML page's or Markdown file's tables) other than the one loaded; empty for a
    file with one."""
    names = list(getattr(table, "sheet_names", None) or [])
    return [s for s in names if s != getattr(table, "sheet", None)] if len(names) > 1 else []


def describe(table: Any, *, how_to_switch: str = "") -> str:
    """One plain-text line (plus notes) acknowledging a loaded table."""
    sheets = other_sheets(table)
    text = f"Loaded table {table.name}: {len(table.rows):,} rows × {len(table.columns)} columns"
    if sheets:
        kind = getattr(table, "sheet_kind", "sheet")  # a workbook's sheets, or a page's tables
        text += f" from {kind} {table.sheet!r}; other {kind}s: {', '.join(sheets)}"
        text += f" ({how_to_switch})" if how_to_switch else ""
    text += "."
    if table.notes:
        text += "\n  " + "\n  ".join(table.notes)
    return text


def add_text_file(deps, session: Session, path: Path, *, name: str | None = None,
                  notes: list[str] | None = None) -> str:
    """Add an uploaded text to ``session``'s search; returns the text. Refuses what is too big or not text.
    ``notes``, when given, receives what reading its bytes assumed (an encoding guessed, bytes that are not UTF-8).

    Raises ``TableError`` (the upload error users see) with one sentence; the session is unchanged then.
    """
    from kb.errors import TableError
    from kb.table_limits import size_over_limit
    from kb.text_decoding import decode_upload, looks_binary

    label = name or path.name
    limit = int(deps.settings.text_max_bytes)
    size = path.stat().st_size
    if size > limit:
        raise TableError(f"The text {label} is {size_over_limit(size, limit)} for a text upload "
                         "(EVIDENTIA_TEXT_MAX_BYTES). Upload a smaller part.")
    with path.open("rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:  # grew while we looked
        raise TableError(f"The text {label} is over the {limit / 1024**2:,.1f} MB limit for a text upload "
                         "(EVIDENTIA_TEXT_MAX_BYTES).")
    if not data.strip():
        raise TableError(f"The file {label} is empty.")
    if looks_binary(data):
        raise TableError(f"The file {label} is binary, not text.")
    decoded = decode_upload(data)
    text = decoded.text
    if notes is not None:
        notes.extend(decoded.notes)
    # The same name uploaded again replaces its text (as memory keeps one text per name).
    session.texts[:] = [(n, t) for n, t in session.texts if n != label] + [(label, text)]
    deps.memory.save_text(session.conversation_id, label, text)
    return text


def add_document_file(deps, session: Session, path: Path, *, name: str | None = None,
                      progress: Callable[[int, int], None] | None = None) -> Any:
    """Read a PDF or DOCX upload into ``session`` and memory: its text joins the chat's search with the page of
    every sentence, and each table found in it is loaded like an uploaded table. Returns the ``StoredDocument``.

    Raises ``DocumentError`` (a ``TableError``: the upload error users see) with one sentence; the session and
    memory are unchanged then. The same name uploaded again replaces the document and its tables.
    """
    import hashlib
    import shutil

    from kb.document_model import DocumentError, StoredDocument
    from kb.documents import read_document, tables_of
    from kb.table_limits import size_over_limit

    label = name or path.name
    limit = int(deps.settings.document_max_bytes)
    size = path.stat().st_size if path.is_file() else 0
    if size > limit:
        raise DocumentError(f"The document {label} is {size_over_limit(size, limit)} for an upload "
                            "(EVIDENTIA_DOCUMENT_MAX_BYTES). Upload a smaller part.")
    doc = read_document(path, name=label, settings=deps.settings, progress=progress)
    previous = session.documents.get(label)
    replaced = set(previous.table_names) - {""} if previous is not None else set()
    found = tables_of(doc, settings=deps.settings, existing_names=[n for n in session.tables if n not in replaced])
    if not doc.text.strip() and not found:
        raise DocumentError(f"{label} has no text or tables that could be read.")
    # Kept beside the memory database, so a page can still be shown after a restart; named by content, so the
    # user's file name never becomes a path.
    with path.open("rb") as fh:  # streamed: an upload may be 50 MB
        digest = hashlib.file_digest(fh, "sha256").hexdigest()[:24]
    folder = deps.memory.document_dir(session.conversation_id)
    folder.mkdir(parents=True, exist_ok=True)
    kept = folder / f"{digest}{'.pdf' if doc.kind == 'pdf' else '.docx'}"
    shutil.copyfile(path, kept)
    loaded_as = {id(f): t.name for f, t in found}  # "" for a found table that could not be read as one
    stored = StoredDocument(document=doc, file_path=str(kept), table_names=[loaded_as.get(id(f), "") for f in doc.tables])
    for name_gone in replaced - set(stored.table_names):
        session.tables.pop(name_gone, None)
        deps.memory.forget_table(session.conversation_id, name_gone)
    session.texts[:] = [(n, t) for n, t in session.texts if n != label]
    if doc.text.strip():
        session.texts.append((label, doc.text))
        deps.memory.save_text(session.conversation_id, label, doc.text)
    active = session.active_table
    for _found, table in found:
        session.add_table(table)
        deps.memory.save_table(session.conversation_id, table.name, table.model_dump_json())
    if found:
        # The document's first table is the default for a claim that names none (a paper's Table 1 is read first).
        session.active_table = found[0][1].name
    elif active is not None:
        session.active_table = active
    session.documents[label] = stored
    deps.memory.save_document(session.conversation_id, label, stored.model_dump_json(), str(kept))
    return stored


def describe_document(stored: Any) -> str:
    """One paragraph acknowledging a read document: pages, text, the tables found with their pages, the notes."""
    doc = stored.document
    what = f"{doc.pages} page{'s' * (doc.pages != 1)}, " if doc.pages else ""
    text = f"Read {doc.name}: {what}{len(doc.text):,} characters of text"
    if doc.ocr:
        text += " (by OCR)"
    if doc.tables:
        where = [f"{t.label}" + (f" on page {t.page}" if t.page else "") for t in doc.tables]
        count = len(doc.tables)
        text += f"; {count} table{'s' * (count != 1)} found: {', '.join(where)}"
    else:
        text += "; no tables found"
    text += "."
    if any(stored.table_names):
        text += " Loaded as " + ", ".join(n for n in stored.table_names if n) + "."
    if doc.notes:
        text += "\n  " + "\n  ".join(doc.notes)
    return text


HEAD_BYTES = 4096  # the head only: an upload may be hundreds of megabytes


def looks_like_table(path: Path) -> bool:
    """Is this .txt or .md upload a table (delimited rows, or a Markdown table) rather than prose?

    Found as a new user: a .txt trial summary whose first line held a comma was loaded as a two-column CSV table
    (the old test: a comma in the first line and two lines), so "How many participants had hyperkalaemia?" was
    answered "1", the number of rows holding the word. Rows of a table have the same number of fields; prose
    lines have commas where the sentences need them, and long stretches between them.
    """
    try:
        with path.open("rb") as fh:
            data = fh.read(HEAD_BYTES)
    except OSError:
        return False
    return head_looks_like_table(data.decode("utf-8", "replace"), cut=len(data) == HEAD_BYTES)


def head_looks_like_table(head: str, *, cut: bool = False) -> bool:
    """:func:`looks_like_table` on the text itself; ``cut``: the head ends mid-file, so its last line may be part
    of one."""
    lines = [ln for ln in head.splitlines() if ln.strip()]
    if cut and len(lines) > 1:
        lines = lines[:-1]
    lines = lines[:30]
    if not lines:
        return False
    if lines[0].lstrip().startswith("|"):
        return True
    if len(lines) < 2:
        return False
    for delimiter in ("\t", ",", ";"):
        rows = list(csv.reader(lines, delimiter=delimiter))
        width, count = Counter(len(r) for r in rows).most_common(1)[0]
        if width < 2 or count < 2 or count < 0.8 * len(rows):  # a ragged row or two is still a table
            continue
        fields = [len(f.strip()) for r in rows for f in r]
        if delimiter != "\t" and len(rows) < 3 and any(f.strip().endswith((".", "?", "!")) for r in rows for f in r):
            continue  # two lines of prose ("Hello, world. / This is fine, I think.")
        # A tab is never punctuation; a comma or semicolon is, so its fields must be short, as cells are.
        if delimiter == "\t" or statistics.median(fields) <= 40:
            return True
    return False


# A message that only hands over its attachment: "Here are 2022 death figures", "Attached is our trial data", "I've
# uploaded the ward audit". Found as a new user: sent with a CSV of causes of death, "Here are 2022 death figures"
# named a header ("Deaths (2022)") and was checked as a claim, "Refuted" by "every Deaths (2022) = 2022".
_PRESENTS = re.compile(r"^\s*(?:here(?:'s|\s+is|\s+are)|attached(?:\s+(?:is|are))?|(?:this\s+is|these\s+are)\s+"
                       r"(?:my|our)|i(?:'ve|\s+have)?\s+(?:uploaded|attached|added|included|shared|sent)|please\s+find|"
                       r"see\s+(?:the\s+)?attached|uploading|sharing)\b", re.I)
_ASKS = re.compile(r"\?|\b(?:is\s+it\s+true|check|verify|true\s+that|can\s+you|could\s+you|please\s+(?:tell|say|"
                   r"find\s+out))\b", re.I)
# A second sentence may state a claim: "Here's my table. Stroke caused 29,800 deaths."
_MORE = re.compile(r"[.;:!]\s+\S")


def presents_upload(message: str) -> bool:
    """Whether a message sent with an upload only presents it (no claim to check, no question to answer): the
    upload's acknowledgement is then the whole reply."""
    text = " ".join((message or "").split())
    return bool(_PRESENTS.match(text)) and not _ASKS.search(text) and not _MORE.search(text)

