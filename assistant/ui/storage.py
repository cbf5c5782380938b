"""Where the chat's side elements live between restarts: a folder on this machine.

Chainlit's SQL data layer keeps messages itself but hands element *contents* (the evidence panels
behind ``[S1]``, ``[T1-R2C2]``, ``[P1]``) to a blob-storage client, and without one it drops them:
a reopened conversation showed its answers with dead citation chips. This client stores each
element as a file under the data folder and gives it back as a ``data:`` URL, so nothing has to be
served or reached over the network; the browser reads the content straight from the thread.

Large blobs (a 100 MB uploaded table) are not copied into the history: the table itself is kept
by the session's memory, and its element resumes as a one-line note saying so.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import urllib.parse
from pathlib import Path
from typing import Any

from chainlit.data.storage_clients.base import BaseStorageClient

# A data: URL is carried inside the thread's JSON, so only evidence-sized elements travel that way.
MAX_INLINE_BYTES = 2 * 1024 * 1024


def not_kept_url(size: int) -> str:
    note = f"(This {size / 1e6:.0f} MB file is not kept in the chat history; its table stays in the conversation.)"
    return "data:text/plain;charset=utf-8," + urllib.parse.quote(note)


def data_url(mime: str, raw: bytes) -> str:
    kind = mime or "application/octet-stream"
    if kind.startswith("text/") and "charset" not in kind:
        kind += ";charset=utf-8"
    return f"data:{kind};base64,{base64.b64encode(raw).decode('ascii')}"


class LocalElementStorage(BaseStorageClient):
    """Element contents as files in ``root``, read back as ``data:`` URLs."""

    def __init__(self, root: Path, max_inline_bytes: int = MAX_INLINE_BYTES):
        self.root = Path(root)
        self.max_inline_bytes = max_inline_bytes

    def _path(self, object_key: str) -> Path:
        # Keys hold user ids and element names; hashing keeps them out of path syntax altogether.
        return self.root / hashlib.sha256(object_key.encode("utf-8")).hexdigest()

    async def upload_file(self, object_key: str, data: bytes | str, mime: str = "application/octet-stream",
                          overwrite: bool = True, content_disposition: str | None = None) -> dict[str, Any]:
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        if len(raw) > self.max_inline_bytes:
            return {"object_key": object_key, "url": not_kept_url(len(raw))}
        path = self._path(object_key)
        if not overwrite and path.exists():
            return {"object_key": object_key, "url": data_url(*await asyncio.to_thread(self._read, path))}
        await asyncio.to_thread(self._write, path, mime, raw)
        return {"object_key": object_key, "url": data_url(mime, raw)}

    def _write(self, path: Path, mime: str, raw: bytes) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".part")
        tmp.write_bytes(mime.encode("utf-8") + b"\n" + raw)
        tmp.replace(path)  # a crash mid-write never leaves half an element behind

    @staticmethod
    def _read(path: Path) -> tuple[str, bytes]:
        mime, _, raw = path.read_bytes().partition(b"\n")
        return mime.decode("utf-8"), raw

    async def get_read_url(self, object_key: str) -> str:
        path = self._path(object_key)
        if not path.exists():
            raise FileNotFoundError(f"element {object_key!r} is not stored")
        return data_url(*await asyncio.to_thread(self._read, path))

    async def delete_file(self, object_key: str) -> bool:
        path = self._path(object_key)
        if not path.exists():
            return False
        await asyncio.to_thread(path.unlink)
        return True

    async def close(self) -> None:
        return None
