"""The local element store that lets a reopened chat show its evidence panels again."""

from __future__ import annotations

import base64
import urllib.parse

import pytest

from assistant.ui.storage import LocalElementStorage


def _decode(url: str) -> bytes:
    head, _, body = url.partition(",")
    return base64.b64decode(body) if head.endswith(";base64") else urllib.parse.unquote(body).encode()


async def test_round_trip_as_data_url_survives_a_new_client(tmp_path):
    text = "Wang Zhizhi joined the NBA in 2001. — Wang Zhizhi · ünïcode"
    key = "local/3f2a/S1"
    first = LocalElementStorage(tmp_path / "el")
    out = await first.upload_file(key, text, mime="text/plain")
    assert out["object_key"] == key and _decode(out["url"]).decode() == text
    again = LocalElementStorage(tmp_path / "el")  # as after a restart
    url = await again.get_read_url(key)
    assert url.startswith("data:text/plain;charset=utf-8;base64,") and _decode(url).decode() == text
    await again.upload_file(key, b"\x00\x01", mime="application/octet-stream")
    assert _decode(await again.get_read_url(key)) == b"\x00\x01"
    assert await again.delete_file(key) and not await again.delete_file(key)
    with pytest.raises(FileNotFoundError):
        await again.get_read_url(key)


async def test_keys_with_path_syntax_stay_inside_the_folder(tmp_path):
    store = LocalElementStorage(tmp_path / "el")
    await store.upload_file("../../etc/passwd/x", "a", mime="text/plain")
    assert [p.parent for p in (tmp_path / "el").iterdir()] == [tmp_path / "el"]
    assert not (tmp_path / "etc").exists()


async def test_large_blob_is_not_copied_and_resumes_as_a_note(tmp_path):
    store = LocalElementStorage(tmp_path / "el", max_inline_bytes=1000)
    out = await store.upload_file("local/big/table.csv", b"x" * 5_000_000, mime="text/csv")
    assert "not kept in the chat history" in _decode(out["url"]).decode()
    assert not (tmp_path / "el").exists() or not any((tmp_path / "el").iterdir())
    with pytest.raises(FileNotFoundError):  # the data layer then falls back to the stored note
        await store.get_read_url("local/big/table.csv")
