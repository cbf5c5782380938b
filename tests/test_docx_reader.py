"""kb.docx_reader: Word files built here with python-docx (their text, headings, spans and tables known exactly),
and a hostile set (zip bombs, entity declarations, other formats under a .docx name) each refused quickly with a
message naming the file."""

from __future__ import annotations

import io
import random
import time
import zipfile
from pathlib import Path

import docx
import pytest
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls

from kb.document_model import DocumentError
from kb.docx_reader import DocxLimits, read_docx


def _ins(text: str) -> object:
    return parse_xml(f'<w:ins {nsdecls("w")} w:id="1" w:author="Ann" w:date="2024-01-01T00:00:00Z">'
                     f'<w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:ins>')


def _del(text: str) -> object:
    return parse_xml(f'<w:del {nsdecls("w")} w:id="2" w:author="Ann" w:date="2024-01-01T00:00:00Z">'
                     f'<w:r><w:delText xml:space="preserve">{text}</w:delText></w:r></w:del>')


def _paper(path: Path) -> Path:
    d = docx.Document()
    d.add_heading("Statins in the elderly", 0)
    d.add_paragraph("A short preface.")
    d.add_heading("1 Methods", 1)
    p = d.add_paragraph("We enrolled")
    p._p.append(_ins(" 120"))
    p._p.append(_del(" 90"))
    p.add_run(" patients.")
    d.add_paragraph("Follow-up lasted two years.")
    d.add_heading("2 Results", 1)
    d.add_paragraph("Table 2: Deaths by arm", style="Caption")
    t = d.add_table(rows=4, cols=3)
    t.cell(0, 0).merge(t.cell(1, 0))  # vertical merge inside the header
    t.cell(0, 1).merge(t.cell(0, 2))  # horizontal merge over the second header row
    t.cell(0, 0).text = "Outcome"
    t.cell(0, 1).text = "Arm"
    t.cell(1, 1).text, t.cell(1, 2).text = "Statin", "Placebo"
    t.cell(2, 0).merge(t.cell(3, 0))  # a body cell merged across rows
    t.cell(2, 0).text = "Deaths"
    t.cell(2, 1).text, t.cell(2, 2).text = "3", "7"
    t.cell(3, 1).text, t.cell(3, 2).text = "4", "9"
    d.add_paragraph("Deaths were fewer with statins.")
    t2 = d.add_table(rows=2, cols=2)
    t2.cell(0, 0).text, t2.cell(0, 1).text = "Site", "Patients"
    t2.cell(1, 0).text, t2.cell(1, 1).text = "Leeds", "60"
    d.add_heading("References", 1)
    d.add_paragraph("[1] Smith J. A trial. 2020.")
    d.sections[0].header.paragraphs[0].text = "Running header text"
    d.save(path)
    return path


def test_paper_text_spans_headings_and_tables(tmp_path):
    doc = read_docx(_paper(tmp_path / "paper.docx"))
    expected = ("Statins in the elderly\n\nA short preface.\n\n"
                "1 Methods\n\nWe enrolled 120 patients.\n\nFollow-up lasted two years.\n\n"
                "2 Results\n\nTable 2: Deaths by arm\n\nDeaths were fewer with statins.")
    assert doc.text == expected
    assert (doc.name, doc.kind, doc.pages) == ("paper.docx", "docx", 0)
    heads = ["Statins in the elderly", "1 Methods", "2 Results"]
    starts = [expected.index(h) for h in heads]
    assert [(s.start, s.end, s.heading, s.page, s.word_boxes) for s in doc.spans] == [
        (starts[0], starts[1], heads[0], None, []), (starts[1], starts[2], heads[1], None, []),
        (starts[2], len(expected), heads[2], None, [])]
    assert doc.span_at(expected.index("120")).heading == "1 Methods"
    assert "Running header" not in doc.text and " 90" not in doc.text and "Smith" not in doc.text

    t1, t2 = doc.tables
    assert (t1.label, t1.caption, t1.header_rows, t1.page) == ("Table 2", "Table 2: Deaths by arm", 2, None)
    assert t1.grid == [["Outcome", "Arm", "Arm"], ["Outcome", "Statin", "Placebo"],
                       ["Deaths", "3", "7"], ["Deaths", "4", "9"]]
    assert (t2.label, t2.caption, t2.header_rows) == ("Table 2", "", 1)  # no caption: its place in reading order
    assert t2.grid == [["Site", "Patients"], ["Leeds", "60"]]
    assert "Leeds" not in doc.text  # table text is not body text
    assert doc.notes == [
        "it has tracked changes; it was read as if they were all accepted (insertions kept, deletions left out)",
        "the text from its “References” heading on was left out: a reference list is not evidence",
        "Table 2: cells merged across rows were repeated in each row they cover"]


def test_caption_below_table_and_text_before_first_heading(tmp_path):
    d = docx.Document()
    d.add_paragraph("No heading yet.")
    t = d.add_table(rows=2, cols=2)
    for r, row in enumerate([["Drug", "Dose"], ["A", "5 mg"]]):
        for c, v in enumerate(row):
            t.cell(r, c).text = v
    d.add_paragraph("")
    d.add_paragraph("Table 4. Doses used")
    d.add_heading("Discussion", 2)
    d.add_paragraph("Doses were low.")
    d.save(tmp_path / "b.docx")
    doc = read_docx(tmp_path / "b.docx", name="upload.docx")
    assert doc.name == "upload.docx"
    assert doc.text == "No heading yet.\n\nTable 4. Doses used\n\nDiscussion\n\nDoses were low."
    assert [(s.start, s.end, s.heading) for s in doc.spans] == [(0, 38, ""), (38, len(doc.text), "Discussion")]
    (table,) = doc.tables
    assert (table.label, table.caption, table.header_rows, table.grid) == (
        "Table 4", "Table 4. Doses used", 1, [["Drug", "Dose"], ["A", "5 mg"]])
    assert doc.notes == []


def test_text_is_normalised_as_the_pdf_reader_does(tmp_path):
    # the one rule of kb.glyphs: ligatures spelled out, odd spaces made spaces, soft hyphens dropped; "²", "⁵",
    # "½", "µ" and "°" kept (NFKC would make "Chi²" "Chi2" and "10⁵" "105")
    d = docx.Document()
    d.add_paragraph("The \ufb01ndings: Chi\u00b2 = 4.2 at 10\u2075 cells, \u00bd dose of 5\u00a0\u00b5g at 37\u00b0C, "
                    "evi\u00addence.")
    t = d.add_table(rows=2, cols=2)
    for r, row in enumerate([["Area", "Dose"], ["12\u2009m\u00b2", "\u00bd\u00a0tablet"]]):
        for c, v in enumerate(row):
            t.cell(r, c).text = v
    d.save(tmp_path / "glyphs.docx")
    doc = read_docx(tmp_path / "glyphs.docx")
    assert doc.text == ("The findings: Chi\u00b2 = 4.2 at 10\u2075 cells, \u00bd dose of 5 \u00b5g at 37\u00b0C, "
                        "evidence.")
    assert doc.tables[0].grid == [["Area", "Dose"], ["12 m\u00b2", "\u00bd tablet"]]


def _docx_bytes(build=None) -> bytes:
    d = docx.Document()
    d.add_paragraph("Hello.")
    if build:
        build(d)
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def _rezip(data: bytes, replace: dict[str, bytes | None]) -> bytes:
    """The package with some members replaced (None: removed) or added."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if info.filename not in replace:
                dst.writestr(info.filename, src.read(info))
        for member, content in replace.items():
            if content is not None:
                dst.writestr(member, content)
    return out.getvalue()


def _zip_encrypted(data: bytes) -> bytes:
    """The package with every member flagged as encrypted (bit 0 of the general-purpose flags)."""
    out = bytearray(data)
    for sig, flags_at in ((b"PK\x01\x02", 8), (b"PK\x03\x04", 6)):
        i = out.find(sig)
        while i >= 0:
            out[i + flags_at] |= 1
            i = out.find(sig, i + 4)
    return bytes(out)


def _member(data: bytes, member: str) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return z.read(member)


def _document_xml(body: str, prolog: str = "") -> bytes:
    return (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n{prolog}'
            f'<w:document {nsdecls("w")}><w:body>{body}</w:body></w:document>').encode()


BILLION_LAUGHS = ('<!DOCTYPE w:document [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;">'
                  '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>')
EXTERNAL = '<!DOCTYPE w:document [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'


def _write_bomb(path: Path, member: str, megabytes: int, base: bytes | None = None) -> Path:
    """A package with ``megabytes`` MB of zeros in one member, streamed in 1 MB chunks so memory stays small."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        if base is not None:
            with zipfile.ZipFile(io.BytesIO(base)) as src:
                for info in src.infolist():
                    z.writestr(info.filename, src.read(info))
        with z.open(member, "w", force_zip64=True) as f:
            chunk = b"\0" * (1 << 20)
            for _ in range(megabytes):
                f.write(chunk)
    return path


@pytest.fixture(scope="module")
def bomb_400mb(tmp_path_factory) -> Path:
    return _write_bomb(tmp_path_factory.mktemp("bomb") / "bomb.docx", "word/document.xml", 400)


def _refused(path: Path, *, limits: DocxLimits = DocxLimits()) -> str:
    started = time.monotonic()
    with pytest.raises(DocumentError) as info:
        read_docx(path, limits=limits)
    assert time.monotonic() - started < 5, "a hostile file must be refused quickly"
    message = str(info.value)
    assert path.name in message and "\n" not in message and "Traceback" not in message
    return message


def test_zip_bomb_of_400mb_is_refused_before_unpacking(bomb_400mb):
    assert bomb_400mb.stat().st_size < 2 * 1024**2
    assert "expands to 400 MB" in _refused(bomb_400mb)


def test_member_with_a_bomb_ratio_is_refused(tmp_path):
    path = _write_bomb(tmp_path / "ratio.docx", "word/media/image1.bin", 10, base=_docx_bytes())
    assert "-fold" in _refused(path)


# (file name, bytes, a phrase the message must hold)
HOSTILE = [
    ("empty.docx", lambda: b"", "is empty"),
    ("notzip.docx", lambda: b"\x01\x02binary\x00stuff" * 50, "not a Word document"),
    ("old.docx", lambda: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 2000, "old Word .doc; save it as .docx or PDF"),
    ("locked.docx", lambda: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600
     + "EncryptedPackage".encode("utf-16-le") + b"\0" * 600, "password-protected"),
    ("paper.docx", lambda: b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n", "is a PDF"),
    ("notes.docx", lambda: b"Just some notes I typed.\nSecond line.\n", "plain text"),
    ("nodoc.docx", lambda: _rezip(_docx_bytes(), {"word/document.xml": None}), "not a Word document"),
    ("truncated.docx", lambda: _docx_bytes()[:3000], "damaged or cut short"),
    ("laughs.docx", lambda: _rezip(_docx_bytes(), {"word/document.xml": _document_xml(
        "<w:p><w:r><w:t>&lol3;</w:t></w:r></w:p>", BILLION_LAUGHS)}), "declares XML entities"),
    ("xxe.docx", lambda: _rezip(_docx_bytes(), {"word/document.xml": _document_xml(
        "<w:p><w:r><w:t>&xxe;</w:t></w:r></w:p>", EXTERNAL)}), "declares XML entities"),
    ("xxe-styles.docx", lambda: _rezip(_docx_bytes(), {"word/styles.xml": (
        f'<?xml version="1.0"?>{EXTERNAL}<w:styles {nsdecls("w")}/>').encode()}), "word/styles.xml"),
    ("utf16.docx", lambda: _rezip(_docx_bytes(), {"word/document.xml": (
        f'<?xml version="1.0" encoding="UTF-16"?>{EXTERNAL}<w:document {nsdecls("w")}><w:body/></w:document>'
    ).encode("utf-16")}), "declares XML entities"),
    ("nothing.docx", lambda: _rezip(_docx_bytes(), {"word/document.xml": _document_xml("<w:sectPr/>")}), "no text"),
    ("sheet.docx", lambda: _rezip(b"PK\x05\x06" + b"\0" * 18, {"xl/workbook.xml": b"<workbook/>"}),
     "Excel workbook"),
    ("zipcrypto.docx", lambda: _zip_encrypted(_docx_bytes()), "password-protected"),
    ("bogus-style.docx", lambda: _rezip(_docx_bytes(), {"word/styles.xml": _member(_docx_bytes(), "word/styles.xml")
                                                        .replace(b'w:type="paragraph"', b'w:type="bogus"')}),
     "damaged"),
    ("broken-xml.docx", lambda: _rezip(_docx_bytes(), {"word/document.xml": b"<w:document><w:body>"}),
     "damaged"),
]


@pytest.mark.parametrize("file_name, make, phrase", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_files_are_refused_with_one_sentence(tmp_path, file_name, make, phrase):
    path = tmp_path / file_name
    path.write_bytes(make())
    assert phrase in _refused(path)


def test_too_many_paragraphs(tmp_path):
    path = tmp_path / "long.docx"
    path.write_bytes(_docx_bytes(lambda d: [d.add_paragraph(f"Line {i}.") for i in range(60)]))
    assert "more than 50 paragraphs" in _refused(path, limits=DocxLimits(max_paragraphs=50))
    assert len(read_docx(path, limits=DocxLimits(max_paragraphs=100)).text.split("\n\n")) == 61


def test_file_over_the_byte_limit(tmp_path):
    path = tmp_path / "big.docx"
    path.write_bytes(_docx_bytes())
    assert "the limit for a Word file" in _refused(path, limits=DocxLimits(max_bytes=1000))


def test_docm_with_macros_is_read_and_noted(tmp_path):
    data = _docx_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        types = z.read("[Content_Types].xml").replace(
            b"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
            b"application/vnd.ms-word.document.macroEnabled.main+xml")
    path = tmp_path / "macro.docm"
    path.write_bytes(_rezip(data, {"[Content_Types].xml": types, "word/vbaProject.bin": b"\xd0\xcf\x11\xe0 macro"}))
    doc = read_docx(path)
    assert doc.text == "Hello."
    assert doc.notes == ["it carries macros; they were not run"]


def test_hidden_text_and_field_codes_are_not_text(tmp_path):
    def build(d):
        p = d.add_paragraph("Shown")
        p._p.append(parse_xml(f'<w:r {nsdecls("w")}><w:rPr><w:vanish/></w:rPr><w:t> secret</w:t></w:r>'))
        p._p.append(parse_xml(f'<w:r {nsdecls("w")}><w:instrText> PAGE </w:instrText></w:r>'))
        p._p.append(parse_xml(f'<w:hyperlink {nsdecls("w")}><w:r><w:t xml:space="preserve"> link</w:t></w:r>'
                              '</w:hyperlink>'))
    path = tmp_path / "hidden.docx"
    path.write_bytes(_docx_bytes(build))
    doc = read_docx(path)
    assert doc.text == "Hello.\n\nShown link"
    assert doc.notes == ["its hidden text was left out"]


def test_damaged_copies_are_read_or_refused_never_crash(tmp_path):
    """Random damage, to the zip's bytes and to the XML inside it: every copy is read or refused with a
    DocumentError; no other exception escapes."""
    base = _paper(tmp_path / "base.docx").read_bytes()
    with zipfile.ZipFile(io.BytesIO(base)) as z:
        parts = {i.filename: z.read(i) for i in z.infolist()}
    rng = random.Random(7)
    path = tmp_path / "damaged.docx"
    outcomes = {"read": 0, "refused": 0}
    for k in range(120):
        if k % 2:
            data = bytearray(base)
            for _ in range(rng.randint(1, 20)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        else:
            member = rng.choice(sorted(parts))
            xml = bytearray(parts[member])
            for _ in range(rng.randint(1, 10)):
                xml[rng.randrange(len(xml))] = rng.choice(b'<>"/=wpt01 ')
            data = _rezip(base, {member: bytes(xml)})
        path.write_bytes(bytes(data))
        try:
            read_docx(path)
            outcomes["read"] += 1
        except DocumentError as exc:
            assert "damaged.docx" in str(exc)
            outcomes["refused"] += 1
    assert outcomes["read"] and outcomes["refused"]
