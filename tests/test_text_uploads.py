"""Uploaded texts (.txt/.md) have their own size limit and one clear message when refused (#17)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tools.contracts import Session
from assistant.ui.uploads import add_text_file
from kb.errors import TableError


@pytest.fixture
def deps(tmp_settings, tmp_path):
    from memory.store import Memory

    return SimpleNamespace(settings=tmp_settings.model_copy(update={"text_max_bytes": 1000}),
                           memory=Memory(tmp_path / "memory.db"))


def test_a_text_is_added_and_decoded(tmp_path, deps):
    session = Session("t")
    p = tmp_path / "notes.txt"
    p.write_bytes("Café notes about São Paulo.".encode("latin-1"))
    text = add_text_file(deps, session, p, name="notes.txt")
    assert "São Paulo" in text and session.texts == [("notes.txt", text)]


@pytest.mark.parametrize("content,match", [
    (b"x" * 1001, r"1,001 bytes; the limit is 1,000 bytes for a text upload"),
    (b"", "empty"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "binary"),
])
def test_refused_texts_leave_the_session_unchanged(tmp_path, deps, content, match):
    session = Session("t")
    p = tmp_path / "up.txt"
    p.write_bytes(content)
    with pytest.raises(TableError, match=match):
        add_text_file(deps, session, p)
    assert session.texts == []


PROSE = ("The Lakeview Blood Pressure Study enrolled 1,248 adults aged 40 to 79 across 14 community clinics.\n\n"
         "Participants were randomised to pharmacist-led titration (624 participants) or usual care (624).\n\n"
         "At 12 months, systolic blood pressure fell by 18.4 mmHg in the pharmacist-led group, a difference of 8.7.\n")


@pytest.mark.parametrize("head,table", [
    (PROSE, False),  # found as a new user: read as a two-column CSV, and asked "how many …?" it answered "1"
    ("Hello, world.\nThis is fine, I think.\n", False),
    ("# Notes\n\nAspirin, 81 mg, daily.\n", False),
    ("Drug,Dose (mg)\nAspirin,81\nWarfarin,5\n", True),
    ("Drug,Note\nAspirin,\"take with food, not fasting\"\nWarfarin,\"check INR weekly, adjust\"\n", True),
    ("Drug\tDose\nAspirin\t81\n", True),
    ("name;value\nx;1\ny;2\n", True),
    ("| Drug | Dose |\n|---|---|\n| Aspirin | 81 |\n", True),
    ("a,b,c\n1,2,3\n4,5\n6,7,8\n9,10,11\n", True),  # one ragged row
])
def test_a_txt_upload_is_a_table_only_when_its_lines_are_rows(head, table):
    from assistant.ui.uploads import head_looks_like_table

    assert head_looks_like_table(head) is table


def test_the_cut_last_line_of_a_long_head_is_not_read_as_a_row(tmp_path):
    from assistant.ui.uploads import HEAD_BYTES, looks_like_table

    path = tmp_path / "long.csv.txt"
    body = "".join(f"row {i},{i}\n" for i in range(2000))
    path.write_text("name,value\n" + body, encoding="utf-8")
    assert len(path.read_bytes()) > HEAD_BYTES and looks_like_table(path)
    (tmp_path / "prose.txt").write_text(PROSE * 200, encoding="utf-8")
    assert not looks_like_table(tmp_path / "prose.txt")


def test_an_uploaded_text_is_kept_with_the_conversation(tmp_path, deps):
    # Found as a new user: tables came back with a reopened chat, uploaded texts did not.
    from assistant.cli.chat_cli import restore_session

    deps.memory.ensure_conversation("t")
    session = Session("t")
    (tmp_path / "notes.txt").write_text("Iron filings are in drawer seven.", encoding="utf-8")
    add_text_file(deps, session, tmp_path / "notes.txt")
    (tmp_path / "notes.txt").write_text("Iron filings moved to drawer eight.", encoding="utf-8")
    add_text_file(deps, session, tmp_path / "notes.txt")  # the same name again replaces it
    assert session.texts == [("notes.txt", "Iron filings moved to drawer eight.")]
    reopened = Session("t")
    restore_session(deps, reopened)
    assert reopened.texts == session.texts
    other = Session("u")
    deps.memory.ensure_conversation("u")
    restore_session(deps, other)
    assert other.texts == []
