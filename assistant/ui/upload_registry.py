"""Uploads a chat may reopen, kept on the server and named by an opaque id.

A button in the browser (e.g. "Use sheet Q2") comes back with a payload the browser controls. Putting the
upload's path in that payload let a forged click load any file the server can read (``/etc/os-release``, the
auth secret) as a table. So the payload carries only a random id; the path stays here, in the chat's own
session, and a sheet must be one the workbook actually has.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path

from kb.tables import TableError


@dataclass(frozen=True)
class Upload:
    path: Path
    file_name: str
    table: str
    sheets: tuple[str, ...] = ()


@dataclass
class UploadRegistry:
    """One per chat session; ids are unguessable and mean nothing outside this session."""

    _uploads: dict[str, Upload] = field(default_factory=dict)

    def register(self, path: Path, file_name: str, table: str, sheets: list[str] | tuple[str, ...] = ()) -> str:
        upload_id = secrets.token_urlsafe(16)
        self._uploads[upload_id] = Upload(Path(path), file_name, table, tuple(sheets))
        return upload_id

    def resolve(self, upload_id: object, sheet: object) -> tuple[Upload, str]:
        """The upload and sheet a (client-sent) choice names; a clear :class:`TableError` for anything else."""
        upload = self._uploads.get(upload_id) if isinstance(upload_id, str) else None
        if upload is None:
            raise TableError("That button belongs to an upload this chat no longer has; upload the file again.")
        if not isinstance(sheet, str) or sheet not in upload.sheets:
            # A workbook's sheets or a page's tables ("table 2 (Beds by hospital)"): named as the file holds them.
            kind = ("tables", "file") if all(s.startswith("table ") for s in upload.sheets) else ("sheets", "workbook")
            raise TableError(f"The {kind[1]} {upload.file_name} has no such {kind[0][:-1]}; its {kind[0]} are: "
                             f"{', '.join(upload.sheets) or 'none'}.")
        return upload, sheet

    def reading(self, upload_id: object, decimal: object) -> tuple[Upload, str]:
        """The upload and decimal mark a (client-sent) "Read with decimal commas/points" choice names."""
        upload = self._uploads.get(upload_id) if isinstance(upload_id, str) else None
        if upload is None:
            raise TableError("That button belongs to an upload this chat no longer has; upload the file again.")
        if decimal not in (",", "."):
            raise TableError("A decimal mark is ',' (comma) or '.' (point).")
        return upload, decimal
