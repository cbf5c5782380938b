"""A Word (.docx) upload read for evidence: body text in document order with its headings, and its tables.

The zip is checked before python-docx opens it, because a .docx is a zip of XML and its size on disk says
little about what it holds: the members' declared sizes and compression ratios are bounded (zip bombs), every
XML part python-docx will parse is refused if it declares a DOCTYPE or entities (billion laughs, external
entities), and the paragraph count is bounded. python-docx is then used for the package, the styles and the
body's XML; the text itself is taken from the XML here, since python-docx's ``Paragraph.text`` leaves out the
runs of tracked insertions (they sit inside ``w:ins``, not directly in the paragraph).

Tracked changes are read as if accepted (insertions kept, deletions left out). Section headers and footers,
footnotes, comments, hidden text and the text of tables are not body text. Nothing in the file is run.
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from kb.document_model import DocTable, DocumentError, ReadDocument, TextSpan
from kb.glyphs import normalise_glyphs
from kb.table_html import split_html_header


@dataclass(frozen=True)
class DocxLimits:
    max_bytes: int = 50 * 1024**2
    max_uncompressed_bytes: int = 300 * 1024**2
    max_paragraphs: int = 200_000
    max_zip_ratio: float = 200.0


MAX_MEMBERS = 10_000  # a Word file has tens of parts; thousands of tiny members only cost time to check
RATIO_MIN_BYTES = 1024 * 1024  # small parts can compress absurdly well (runs of spaces); only big ones are judged
PROLOG_BYTES = 64 * 1024  # an XML part's DOCTYPE must come before its root element, within this many bytes

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
_CT_NS = "http://schemas.openxmlformats.org/package/2006/content-types"


# What reading a member of a damaged or odd zip can raise (NotImplementedError: an unknown compression method;
# RuntimeError: an encrypted member).
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError, ValueError,
               NotImplementedError, RuntimeError)


def _q(tag: str) -> str:
    return f"{{{_W}}}{tag}"


# A parser for the two small package parts read here before python-docx: no entities, no network.
_SAFE_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False)


def read_docx(path: Path, *, name: str | None = None, limits: DocxLimits = DocxLimits()) -> ReadDocument:
    """Read a .docx (or .docm/.dotx) file; every failure is a :class:`DocumentError` naming the file."""
    path = Path(path)
    name = name or path.name
    data = _read_bytes(path, name, limits)
    _refuse_if_not_zip(data, name)
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except _ZIP_ERRORS as exc:
        raise DocumentError(f"{name} is damaged or cut short (it is not a readable zip archive, which a .docx "
                            "is); save it again in Word and upload it again.") from exc
    notes: list[str] = []
    with zf:
        members = _check_members(zf, name, limits)
        _refuse_other_formats(zf, members, name)
        _refuse_entity_declarations(zf, members, name)
        _count_raw_paragraphs(zf, members, name, limits)
        if any(m.lower().endswith("vbaproject.bin") or m.lower().endswith("vbadata.xml") for m in members):
            notes.append("it carries macros; they were not run")
        if any(re.fullmatch(r"word/comments\w*\.xml", m.lower()) for m in members):
            notes.append("its comments were not read")
    document = _open_document(data, name)
    try:
        return _read_body(document, name, limits, notes)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        # python-docx reads styles lazily and raises these on values the schema does not allow (a style type
        # "bogus"); the file is damaged, not the reader wrong. DocumentError is none of these, so passes through.
        raise _damaged(name) from exc


# --- the file and the zip -------------------------------------------------------------------------------------


def _read_bytes(path: Path, name: str, limits: DocxLimits) -> bytes:
    try:
        size = path.stat().st_size
        if size > limits.max_bytes:
            raise DocumentError(f"{name} is {size / 1024**2:,.1f} MB; the limit for a Word file is "
                                f"{limits.max_bytes / 1024**2:,.1f} MB.")
        return path.read_bytes()
    except OSError as exc:
        raise DocumentError(f"{name} could not be read from disk.") from exc


def _refuse_if_not_zip(data: bytes, name: str) -> None:
    """A .docx is a zip archive; name what the file is instead, so the user knows what to do."""
    if not data:
        raise DocumentError(f"{name} is empty (0 bytes).")
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return
    head = data[:1024]
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        # An OLE container: an old binary .doc, or a password-protected .docx (Office encrypts the whole
        # package into an OLE stream named EncryptedPackage).
        if "EncryptedPackage".encode("utf-16-le") in data[:1024 * 1024] or b"EncryptedPackage" in data[:1024 * 1024]:
            raise DocumentError(f"{name} is password-protected; remove the password in Word, save it, and upload "
                                "it again.")
        raise DocumentError(f"{name} is an old Word .doc; save it as .docx or PDF and upload it again.")
    if head.lstrip().startswith(b"%PDF") or b"%PDF-" in head:
        raise DocumentError(f"{name} is a PDF, not a Word document; upload it as a .pdf file.")
    if head.lstrip().startswith(b"{\\rtf"):
        raise DocumentError(f"{name} is an RTF file, not a .docx; save it as .docx or PDF and upload it again.")
    if re.match(rb"\s*<(!doctype html|html)", head, re.I):
        raise DocumentError(f"{name} is a web page (HTML), not a Word document.")
    if b"\x00" not in head and sum(32 <= b < 127 or b in (9, 10, 13) or b >= 128 for b in head) >= 0.95 * len(head):
        raise DocumentError(f"{name} is plain text, not a Word document; upload it as a .txt file.")
    raise DocumentError(f"{name} is not a Word document (a .docx is a zip archive, and this file is not one).")


def _check_members(zf: zipfile.ZipFile, name: str, limits: DocxLimits) -> dict[str, zipfile.ZipInfo]:
    """Bound what the archive expands to, from the sizes its directory declares (zipfile never inflates a member
    past its declared size, so these sizes hold when python-docx reads the parts)."""
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        raise DocumentError(f"{name} holds {len(infos):,} files inside its zip; a Word document has tens, so it "
                            "was not read.")
    total = sum(i.file_size for i in infos)
    if total > limits.max_uncompressed_bytes:
        raise DocumentError(f"{name} expands to {total / 1024**2:,.0f} MB when unpacked; the limit is "
                            f"{limits.max_uncompressed_bytes / 1024**2:,.0f} MB, so it was not read.")
    for i in infos:
        if i.flag_bits & 0x1:
            raise DocumentError(f"{name} is password-protected (its zip is encrypted); remove the password, save "
                                "it, and upload it again.")
        if i.file_size > RATIO_MIN_BYTES and i.file_size > limits.max_zip_ratio * max(i.compress_size, 1):
            raise DocumentError(f"{name} has a part ({_part_name(i)}) that expands "
                                f"{i.file_size // max(i.compress_size, 1):,}-fold when unpacked, which real Word "
                                "files never do; it was not read.")
    return {i.filename: i for i in infos}


def _refuse_other_formats(zf: zipfile.ZipFile, members: dict[str, zipfile.ZipInfo], name: str) -> None:
    """A zip that is not a Word package: say what it is (another Office format, OpenDocument, a plain zip)."""
    main = _main_part_name(zf, members, name)
    if "word/document.xml" in members or (main.startswith("word/") and main in members):
        return
    if "xl/workbook.xml" in members:
        raise DocumentError(f"{name} is an Excel workbook, not a Word document; upload it as .xlsx.")
    if "ppt/presentation.xml" in members:
        raise DocumentError(f"{name} is a PowerPoint presentation, not a Word document; save it as PDF.")
    if "mimetype" in members and members["mimetype"].file_size < 200:
        try:
            mimetype = zf.read("mimetype")
        except _ZIP_ERRORS:
            mimetype = b""
        if mimetype.startswith(b"application/vnd.oasis.opendocument"):
            raise DocumentError(f"{name} is an OpenDocument file, not a Word document; save it as .docx or PDF.")
    raise DocumentError(f"{name} is not a Word document: it is a zip archive without the part "
                        f"{_shown(main or 'word/document.xml')} that holds a Word document's text.")


def _main_part_name(zf: zipfile.ZipFile, members: dict[str, zipfile.ZipInfo], name: str) -> str:
    """The part the package's relationships name as its main document ("" if none)."""
    rels = members.get("_rels/.rels")
    if rels is None or rels.file_size > 1024 * 1024:
        return ""
    _check_prolog(zf, rels, name)
    try:
        root = etree.fromstring(zf.read(rels), _SAFE_PARSER)
    except (etree.XMLSyntaxError, *_ZIP_ERRORS):
        return ""
    for rel in root.iter(f"{{{_REL_NS}}}Relationship"):
        if rel.get("Type", "").endswith("/officeDocument") and rel.get("TargetMode") != "External":
            return rel.get("Target", "").lstrip("/")
    return ""


def _xml_members(zf: zipfile.ZipFile, members: dict[str, zipfile.ZipInfo], name: str) -> list[zipfile.ZipInfo]:
    """Every part python-docx may parse as XML: .xml and .rels by name, and any part [Content_Types].xml declares
    an XML type (a hostile package can give an XML type to a part named .bin). Images (SVG) are not parsed."""
    out = {n: i for n, i in members.items() if n.lower().endswith((".xml", ".rels"))}
    types = members.get("[Content_Types].xml")
    if types is not None and types.file_size > 1024 * 1024:  # a few KB in real files; it says which parts are XML
        raise DocumentError(f"{name} was not read: its list of part types is {types.file_size / 1024**2:,.1f} MB, "
                            "which a Word file never needs.")
    if types is not None:
        _check_prolog(zf, types, name)
        try:
            root = etree.fromstring(zf.read(types), _SAFE_PARSER)
        except (etree.XMLSyntaxError, *_ZIP_ERRORS):
            root = None
        if root is not None:
            xml_exts = {d.get("Extension", "").lower() for d in root.iter(f"{{{_CT_NS}}}Default")
                        if _is_xml_type(d.get("ContentType", ""))}
            for n, i in members.items():
                if n.rsplit(".", 1)[-1].lower() in xml_exts:
                    out[n] = i
            for o in root.iter(f"{{{_CT_NS}}}Override"):
                part = o.get("PartName", "").lstrip("/")
                if part in members and _is_xml_type(o.get("ContentType", "")):
                    out[part] = members[part]
    return list(out.values())


def _is_xml_type(content_type: str) -> bool:
    ct = content_type.lower()
    return not ct.startswith("image/") and (ct.endswith("xml") or ct.endswith("+xml"))


_DECLARATION = re.compile(rb"<!(doctype|entity)", re.I)
_ELEMENT_START = re.compile(rb"<[A-Za-z_]")


def _check_prolog(zf: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> None:
    """Refuse an XML part that declares a DOCTYPE or entities before its root element."""
    try:
        with zf.open(info) as f:
            head = f.read(PROLOG_BYTES)
    except _ZIP_ERRORS as exc:
        raise _unpackable(name, info) from exc
    # UTF-16 and UTF-32 parts put NULs between the bytes of ASCII markup; without them one search fits all.
    head = head.replace(b"\x00", b"")
    root = _ELEMENT_START.search(head)
    prolog = head[:root.start()] if root else head
    if _DECLARATION.search(prolog):
        raise DocumentError(f"{name} was not read: its part {_part_name(info)} declares XML entities, which a Word "
                            "file never needs (a known way to attack XML readers).")
    if root is None and info.file_size > PROLOG_BYTES:
        raise DocumentError(f"{name} was not read: its part {_part_name(info)} has no XML element in its first "
                            f"{PROLOG_BYTES // 1024} KB, which a Word file never has.")


def _refuse_entity_declarations(zf: zipfile.ZipFile, members: dict[str, zipfile.ZipInfo], name: str) -> None:
    for info in _xml_members(zf, members, name):
        _check_prolog(zf, info, name)


_RAW_PARAGRAPH = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?p[\s>/]")


def _count_raw_paragraphs(zf: zipfile.ZipFile, members: dict[str, zipfile.ZipInfo], name: str,
                          limits: DocxLimits) -> None:
    """Count paragraph tags in the main part's bytes, streamed, so a file with millions of paragraphs is refused
    before it is parsed into a tree. Drawing paragraphs (``a:p``) count too: an upper bound is enough here; the
    exact count is checked again on the parsed body."""
    main = _main_part_name(zf, members, name) or "word/document.xml"
    info = members.get(main)
    if info is None:
        return  # python-docx reports the package as damaged
    count, tail = 0, b""
    try:
        with zf.open(info) as f:
            while chunk := f.read(1024 * 1024):
                buf = tail + chunk
                # The last 64 bytes are searched again with the next chunk, so only count matches before them.
                cut = max(len(buf) - 64, 0)
                count += sum(1 for m in _RAW_PARAGRAPH.finditer(buf) if m.start() < cut)
                tail = buf[cut:]
                if count > limits.max_paragraphs:
                    raise _too_many_paragraphs(name, limits)
            count += len(_RAW_PARAGRAPH.findall(tail))
    except _ZIP_ERRORS as exc:
        raise _unpackable(name, info) from exc
    if count > limits.max_paragraphs:
        raise _too_many_paragraphs(name, limits)


def _shown(text: str) -> str:
    """A name taken from inside the file, fit for a message: a damaged or hostile file can hold any characters."""
    shown = "".join(ch if ch.isprintable() else "?" for ch in text)
    return shown if len(shown) <= 80 else shown[:79] + "…"


def _part_name(info: zipfile.ZipInfo) -> str:
    return _shown(info.filename)


def _unpackable(name: str, info: zipfile.ZipInfo) -> DocumentError:
    return DocumentError(f"{name} is damaged: its part {_part_name(info)} cannot be unpacked.")


def _too_many_paragraphs(name: str, limits: DocxLimits) -> DocumentError:
    return DocumentError(f"{name} has more than {limits.max_paragraphs:,} paragraphs; the limit is "
                         f"{limits.max_paragraphs:,}. Upload the part you need as its own file.")


def _open_document(data: bytes, name: str):
    """python-docx's Document for the checked bytes. Macro-enabled files and templates (.docm, .dotx, .dotm) have
    the same body; python-docx only knows the .docx content type, so the others are registered for its package
    reader too (they open as the same DocumentPart; macros stay an unread binary part)."""
    from docx.opc.part import PartFactory
    from docx.package import Package
    from docx.parts.document import DocumentPart

    for content_type in _WORD_MAIN_TYPES:
        PartFactory.part_type_for.setdefault(content_type, DocumentPart)
    try:
        part = Package.open(io.BytesIO(data)).main_document_part
    except Exception as exc:  # noqa: BLE001 - python-docx raises many kinds on a damaged package; all mean that
        raise _damaged(name) from exc
    if not isinstance(part, DocumentPart):
        raise DocumentError(f"{name} is not a Word document (its main part is {_shown(part.content_type)}).")
    return part.document


def _damaged(name: str) -> DocumentError:
    return DocumentError(f"{name} is damaged and could not be read as a Word document (a part of it is missing or "
                         "not valid XML); open it in Word, save it again, and upload it again.")


_WORD_MAIN_TYPES = (
    "application/vnd.ms-word.document.macroEnabled.main+xml",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",
    "application/vnd.ms-word.template.macroEnabledTemplate.main+xml",
)


# --- the body ----------------------------------------------------------------------------------------------------


@dataclass
class _Para:
    text: str
    heading: bool
    caption_style: bool


@dataclass
class _Table:
    grid: list[list[str]]
    header_rows: int
    merged_body_rows: bool  # a body cell merged across rows had its text repeated


@dataclass
class _Walk:
    """What walking the body collects, in document order."""

    blocks: list[_Para | _Table] = field(default_factory=list)
    paragraphs: int = 0
    hidden_text: bool = False


# A reference list is not evidence: its heading ends the indexed text ("7 References", "Bibliography").
_REFERENCES = re.compile(r"^(?:[\dIVX]+(?:\.\d+)*\.?\s+)?(?:references?|bibliography|reference list|literature cited|"
                         r"works cited|cited literature)\s*:?$", re.I)
_CAPTION = re.compile(r"^\s*(?:Table|TABLE)\s+([A-Z]?\d+[A-Za-z]?|[IVXLC]+)(?=$|[\s.:,;—–-])")
_HEADING_STYLE = re.compile(r"^(?:heading\s*[1-9]|title)$", re.I)


def _read_body(document, name: str, limits: DocxLimits, notes: list[str]) -> ReadDocument:
    walk = _Walk()
    styles = _StyleJudge(document)
    _walk(document.element.body, walk, styles, name, limits)
    tracked = document.element.body.xpath(".//w:ins | .//w:del | .//w:moveFrom | .//w:moveTo")
    if tracked:
        notes.append("it has tracked changes; it was read as if they were all accepted (insertions kept, "
                     "deletions left out)")
    if walk.hidden_text:
        notes.append("its hidden text was left out")

    text, spans, cut = _body_text(walk.blocks)
    if cut is not None:
        notes.append(f"the text from its “{cut}” heading on was left out: a reference list is not evidence")
    tables = _doc_tables(walk.blocks, notes)
    if not text and not tables and cut is None:
        raise DocumentError(f"{name} has no text to read (it is empty, or holds only images).")
    return ReadDocument(name=name, kind="docx", pages=0, text=text, spans=spans, tables=tables, notes=notes)


def _walk(container, walk: _Walk, styles: "_StyleJudge", name: str, limits: DocxLimits) -> None:
    for child in container.iterchildren():
        tag = child.tag
        if tag == _q("p"):
            walk.paragraphs += 1
            if walk.paragraphs > limits.max_paragraphs:
                raise _too_many_paragraphs(name, limits)
            text = _paragraph_text(child, walk).strip()
            walk.blocks.append(_Para(text, styles.is_heading(child), styles.is_caption(child)))
        elif tag == _q("tbl"):
            walk.paragraphs += len(child.xpath(".//w:p"))
            if walk.paragraphs > limits.max_paragraphs:
                raise _too_many_paragraphs(name, limits)
            walk.blocks.append(_read_table(child, walk))
        elif tag in (_q("sdt"), _q("sdtContent"), _q("customXml")):
            _walk(child, walk, styles, name, limits)  # content controls wrap ordinary paragraphs and tables


# Elements whose content is shown as part of the paragraph; w:del and w:moveFrom (text tracked as removed) are not.
_INLINE_CONTAINERS = {_q(t) for t in ("hyperlink", "ins", "moveTo", "smartTag", "customXml", "sdt", "sdtContent",
                                      "fldSimple", "dir", "bdo")}
_OFF = {"0", "false", "off"}


def _paragraph_text(p, walk: _Walk) -> str:
    parts: list[str] = []

    def visit(el) -> None:
        for child in el.iterchildren():
            if child.tag == _q("r"):
                parts.append(_run_text(child, walk))
            elif child.tag in _INLINE_CONTAINERS:
                visit(child)

    visit(p)
    return "".join(parts)


def _run_text(r, walk: _Walk) -> str:
    vanish = r.find(f"{_q('rPr')}/{_q('vanish')}")
    if vanish is not None and vanish.get(_q("val"), "true").lower() not in _OFF:
        walk.hidden_text = True
        return ""
    out = []
    for child in r.iterchildren():
        tag = child.tag
        if tag == _q("t"):
            out.append(normalise_glyphs(child.text or ""))  # as the PDF reader does: ﬁ -> fi, "²" kept
        elif tag in (_q("tab"), _q("ptab")):
            out.append("\t")
        elif tag in (_q("br"), _q("cr")):
            out.append("\n")
        elif tag == _q("noBreakHyphen"):
            out.append("-")
        # w:delText (deleted), w:instrText (a field's code, not its result), w:softHyphen: not shown as text
    return "".join(out)


def _read_table(tbl, walk: _Walk) -> _Table:
    """A w:tbl as a rectangular grid: a cell spanning columns (gridSpan) or rows (vMerge) has its text repeated
    in every grid position it covers, so each cell keeps the coordinates a reader would give it."""
    grid: list[list[str]] = []
    hspan_rows: set[int] = set()
    vmerged_rows: set[int] = set()
    header_marked = 0
    for tr in _children(tbl, "tr"):
        props = tr.find(_q("trPr"))
        if props is not None and props.find(_q("del")) is not None:
            continue  # a row tracked as deleted
        r = len(grid)
        if props is not None and r == header_marked and _on(props.find(_q("tblHeader"))):
            header_marked += 1  # Word's "repeat as header row" marks the header rows
        row: list[str] = [""] * _grid_value(props, "gridBefore")
        for tc in _children(tr, "tc"):
            tc_pr = tc.find(_q("tcPr"))
            span = max(1, min(_grid_value(tc_pr, "gridSpan", 1), 1000))
            vmerge = tc_pr.find(_q("vMerge")) if tc_pr is not None else None
            col = len(row)
            if vmerge is not None and vmerge.get(_q("val"), "continue") != "restart" and r > 0:
                above = grid[r - 1]
                text = above[col] if col < len(above) else ""
                vmerged_rows.add(r)
            else:
                text = " ".join(" ".join(_paragraph_text(p, walk) for p in tc.iter(_q("p"))).split())
            if span > 1:
                hspan_rows.add(r)
            row += [text] * span
        grid.append(row)
    width = max((len(row) for row in grid), default=0)
    grid = [row + [""] * (width - len(row)) for row in grid]
    if header_marked:
        head = header_marked
    else:
        head = 2 if 0 in hspan_rows and len(grid) >= 2 else 1
    head = min(head, len(grid))
    # Header rows that read as numbers are data, as for HTML tables (a table with no header row gets 0).
    _, _, head = split_html_header(grid, head) if grid else (None, [], 0)
    return _Table(grid, head, any(r >= head for r in vmerged_rows))


def _children(el, tag: str):
    """Direct ``tag`` children, looking through content controls and custom XML that may wrap rows and cells."""
    for child in el.iterchildren():
        if child.tag == _q(tag):
            yield child
        elif child.tag in (_q("sdt"), _q("sdtContent"), _q("customXml")):
            yield from _children(child, tag)


def _grid_value(props, tag: str, default: int = 0) -> int:
    el = props.find(_q(tag)) if props is not None else None
    try:
        return max(0, min(int(el.get(_q("val"))), 1000)) if el is not None else default
    except (TypeError, ValueError):
        return default


def _on(el) -> bool:
    return el is not None and el.get(_q("val"), "true").lower() not in _OFF


class _StyleJudge:
    """Which paragraph styles are headings or captions: by name ("Heading 2", "Title", "Caption", or a style based
    on one), or by an outline level (0-8) on the style or the paragraph."""

    def __init__(self, document):
        from docx.enum.style import WD_STYLE_TYPE

        self._styles = {}
        for style in document.styles:
            if style.type == WD_STYLE_TYPE.PARAGRAPH:
                self._styles[style.style_id] = style
        self._default = document.styles.default(WD_STYLE_TYPE.PARAGRAPH)
        self._cache: dict[str | None, tuple[bool, bool]] = {}

    def _judge(self, style_id: str | None) -> tuple[bool, bool]:
        if style_id not in self._cache:
            style, heading, caption = self._styles.get(style_id, self._default), False, False
            for _ in range(8):  # the base-style chain; bounded, since a hostile file can make it a loop
                if style is None:
                    break
                style_name = style.name or ""
                heading = heading or bool(_HEADING_STYLE.match(style_name)) or _outline_level(style.element)
                caption = caption or style_name.lower() == "caption"
                style = style.base_style
            self._cache[style_id] = (heading, caption)
        return self._cache[style_id]

    def is_heading(self, p) -> bool:
        return self._judge(p.style)[0] or _outline_level(p)

    def is_caption(self, p) -> bool:
        return self._judge(p.style)[1]


def _outline_level(el) -> bool:
    level = el.find(f"{_q('pPr')}/{_q('outlineLvl')}")
    try:
        return level is not None and 0 <= int(level.get(_q("val"))) <= 8  # 9 is "body text"
    except (TypeError, ValueError):
        return False


def _body_text(blocks: list[_Para | _Table]) -> tuple[str, list[TextSpan], str | None]:
    """The paragraphs joined by blank lines, and one span per heading stretch: each span runs from its heading to
    the next heading, so together they cover the text exactly. Returns the references heading that ended it."""
    pieces: list[str] = []
    starts: list[tuple[int, str]] = []  # (offset, heading) where each stretch begins
    offset = 0
    for block in blocks:
        if not isinstance(block, _Para) or not block.text:
            continue
        single_line = " ".join(block.text.split())
        if _REFERENCES.match(single_line) and (block.heading or len(single_line) <= 40):
            # A heading, or a paragraph saying only "References" (a heading in all but its style).
            return _joined(pieces, starts, offset) + (single_line,)
        if pieces:
            offset += 2
        if block.heading:
            starts.append((offset, single_line))
        elif not starts:
            starts.append((0, ""))
        pieces.append(block.text)
        offset += len(block.text)
    return _joined(pieces, starts, offset) + (None,)


def _joined(pieces: list[str], starts: list[tuple[int, str]], length: int) -> tuple[str, list[TextSpan]]:
    text = "\n\n".join(pieces)
    assert len(text) == length
    ends = [s for s, _ in starts[1:]] + [length]
    return text, [TextSpan(start=s, end=e, heading=h) for (s, h), e in zip(starts, ends)]


def _doc_tables(blocks: list[_Para | _Table], notes: list[str]) -> list[DocTable]:
    """DocTables with their captions: the nearest non-empty paragraph before a table if it reads "Table N…", else
    the nearest one after it. Captions above are claimed first for every table, so "Table 2: …" between two
    tables goes to the table below it."""
    indexed = [(i, b) for i, b in enumerate(blocks) if isinstance(b, _Table) and any(any(c for c in row)
                                                                                     for row in b.grid)]
    captions: dict[int, _Para] = {}
    claimed: set[int] = set()
    for direction in (-1, 1):
        for i, _ in indexed:
            if i in captions:
                continue
            j = _adjacent_paragraph(blocks, i, direction)
            if j is not None and j not in claimed and _is_caption(blocks[j]):
                captions[i] = blocks[j]
                claimed.add(j)
    out = []
    for n, (i, table) in enumerate(indexed, start=1):
        caption = " ".join(captions[i].text.split()) if i in captions else ""
        m = _CAPTION.match(caption)
        label = f"Table {m.group(1)}" if m else f"Table {n}"
        if table.merged_body_rows:
            notes.append(f"{label}: cells merged across rows were repeated in each row they cover")
        out.append(DocTable(label=label, caption=caption, grid=table.grid, header_rows=table.header_rows))
    return out


def _adjacent_paragraph(blocks: list[_Para | _Table], i: int, direction: int) -> int | None:
    j = i + direction
    while 0 <= j < len(blocks):
        block = blocks[j]
        if isinstance(block, _Table):
            return None
        if block.text:
            return j
        j += direction
    return None


def _is_caption(para: _Para) -> bool:
    return bool(_CAPTION.match(para.text)) or (para.caption_style and para.text.lstrip().lower().startswith("table"))
