"""Pictures of a document's page for the evidence panel: the region around a cited sentence with the sentence
highlighted, or a table cropped from its page (#81).

Chainlit's Markdown drops ``data:`` image URLs, and its side panel shows one element per citation chip, so the
panel's text links a picture served by this app under a same-origin path (the content policy allows images from
this server only). Each picture is a file named by a random token under its owner's folder: the route finds it
only for the logged-in user who owns it, so a token seen by someone else shows nothing.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from pathlib import Path
from typing import Any

ROUTE = "/evidentia/page-image"
_TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{16,64}$")


class PageImages:
    """PNG files under ``root``/<owner digest>/<token>.png."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def _folder(self, owner: str) -> Path:
        return self.root / hashlib.sha256(owner.encode("utf-8")).hexdigest()[:32]

    def put(self, owner: str, png: bytes) -> str:
        """Keep ``png`` for ``owner``; returns the URL path that shows it."""
        token = secrets.token_urlsafe(18)
        folder = self._folder(owner)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{token}.png").write_bytes(png)
        return f"{ROUTE}/{token}.png"

    def find(self, owner: str | None, token: str) -> Path | None:
        """The picture ``token`` of ``owner``, or ``None`` (unknown token, another user's, or no login)."""
        if not owner or not _TOKEN_RE.match(token):
            return None
        path = self._folder(owner) / f"{token}.png"
        return path if path.is_file() else None


def sentence_picture(stored: Any, start: int, end: int) -> bytes | None:
    """The page region of the sentence ``[start, end)``'s paragraph, the sentence highlighted; ``None`` where
    the document has no pages to show (DOCX) or its copy is gone."""
    from kb.pdf_reader import render_page_region

    doc = stored.document
    path = Path(stored.file_path or "")
    if doc.kind != "pdf" or not path.is_file():
        return None
    sentence = doc.boxes(start, end)
    if not sentence:
        return None
    page = sentence[0].page
    p_start, p_end = doc.paragraph_bounds(start, end)
    region = [b for b in doc.boxes(p_start, p_end) if b.page == page]
    return render_page_region(path, page, region or sentence, highlight=[b for b in sentence if b.page == page])


def table_picture(stored: Any, table_name: str) -> bytes | None:
    """The table ``table_name`` (loaded from this document) cropped from its page, or ``None``."""
    from kb.pdf_reader import render_table_image

    found = stored.table_of(table_name)
    path = Path(stored.file_path or "")
    if found is None or found.bbox is None or stored.document.kind != "pdf" or not path.is_file():
        return None
    return render_table_image(path, found)
