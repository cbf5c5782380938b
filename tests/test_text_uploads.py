"""Uploaded texts (.txt/.md) have their own size limit and one clear message when refused (#17)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from assistant.session import Session
from assistant.uploads import add_text_file
from kb.errors import TableError


@pytest.fixture
def deps(tmp_settings):
    return SimpleNamespace(settings=tmp_settings.model_copy(update={"text_max_bytes": 1000}))


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
