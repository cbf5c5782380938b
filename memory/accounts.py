"""Login accounts for the web UI, and the login tokens ended by logging out, kept in the threads database beside
Chainlit's own tables.

Passwords are stored only as argon2id hashes (argon2-cffi's defaults, which follow RFC 9106); a hash is
re-computed when the library's parameters have grown since it was made.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlite_utils
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from memory.migrations import UI_MIGRATIONS, migrate

USER_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
MIN_PASSWORD_CHARS = 8
_hasher = PasswordHasher()
# Verifying an unknown name costs as much as a known one, so timing does not reveal which names exist.
_DUMMY_HASH = _hasher.hash("not a password of anyone")


class AccountError(ValueError):
    """A request about accounts that cannot be done; the message is for the user."""


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat()


class Accounts:
    def __init__(self, threads_db: Path | str):
        self.path = Path(threads_db)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    @contextmanager
    def _opened(self) -> Iterator[sqlite_utils.Database]:
        """The accounts database for one call, closed after it (each method opens its own connection)."""
        db = self._db()
        try:
            yield db
        finally:
            db.conn.close()

    def _db(self) -> sqlite_utils.Database:
        db = sqlite_utils.Database(self.path)
        migrate(db, UI_MIGRATIONS)
        if self.path.stat().st_mode & 0o077:
            # The hashes (and every user's chats) are for this install's owner only: another local user who
            # could read the file could guess passwords offline. SQLite gives its journal files the same mode.
            self.path.chmod(0o600)
        return db

    def names(self) -> list[str]:
        with self._opened() as db:
            return [r["name"] for r in db["evidentia_accounts"].rows_where(order_by="name")]

    def exists(self, name: str) -> bool:
        with self._opened() as db:
            return bool(db["evidentia_accounts"].count_where("name = ?", [name]))

    def add(self, name: str, password: str) -> None:
        if not USER_NAME_RE.fullmatch(name or ""):
            raise AccountError("A user name is 1-64 letters, digits, '.', '_', '@' or '-', starting with a "
                               "letter or digit.")
        _check_password(password)
        with self._opened() as db:
            with db.conn:
                if db["evidentia_accounts"].count_where("name = ?", [name]):
                    raise AccountError(f"The user {name} already exists; use `evidentia user passwd {name}`.")
                db["evidentia_accounts"].insert({"name": name, "password_hash": _hasher.hash(password),
                                                 "created_at": _now(), "updated_at": _now()})

    def set_password(self, name: str, password: str) -> None:
        _check_password(password)
        self._update_hash(name, _hasher.hash(password), missing_ok=False, password_set=True)

    def password_set_at(self, name: str) -> float | None:
        """When the user's password was last set (POSIX seconds); None if there is no such user.

        Logins from before it are no longer valid (see assistant/ui/auth.py), so a changed password ends the
        sessions of whoever knew the old one.
        """
        with self._opened() as db:
            rows = list(db["evidentia_accounts"].rows_where("name = ?", [name], select="updated_at"))
        return dt.datetime.fromisoformat(rows[0]["updated_at"]).timestamp() if rows else None

    def remove(self, name: str) -> None:
        with self._opened() as db:
            with db.conn:
                if not db["evidentia_accounts"].count_where("name = ?", [name]):
                    raise AccountError(f"There is no user {name}.")
                db["evidentia_accounts"].delete(name)

    def revoke_login(self, token_id: str, name: str, expires_at: float) -> None:
        """End one login token (logging out): refused from now on, though its signature stays valid until
        ``expires_at`` (POSIX seconds). Revocations of tokens that have expired since are dropped here."""
        with self._opened() as db:
            with db.conn:
                db["evidentia_revoked_logins"].delete_where("expires_at < ?", [time.time()])
                db["evidentia_revoked_logins"].upsert({"token_id": token_id, "name": name, "expires_at": expires_at},
                                                      pk="token_id")

    def login_revoked(self, token_id: str) -> bool:
        with self._opened() as db:
            return bool(db["evidentia_revoked_logins"].count_where("token_id = ?", [token_id]))

    def verify(self, name: str, password: str) -> bool:
        with self._opened() as db:
            rows = list(db["evidentia_accounts"].rows_where("name = ?", [name]))
        stored = rows[0]["password_hash"] if rows else _DUMMY_HASH
        try:
            _hasher.verify(stored, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False
        if not rows:
            return False
        if _hasher.check_needs_rehash(stored):  # the same password, hashed anew: sessions stay valid
            self._update_hash(name, _hasher.hash(password), missing_ok=True, password_set=False)
        return True

    def _update_hash(self, name: str, password_hash: str, *, missing_ok: bool, password_set: bool) -> None:
        # ``updated_at`` is when the password was last set (password_set_at), not when its hash was renewed.
        with self._opened() as db:
            with db.conn:
                if not db["evidentia_accounts"].count_where("name = ?", [name]):
                    if missing_ok:
                        return
                    raise AccountError(f"There is no user {name}; add it with `evidentia user add {name}`.")
                changes = {"password_hash": password_hash} | ({"updated_at": _now()} if password_set else {})
                db["evidentia_accounts"].update(name, changes)


def _check_password(password: str) -> None:
    if len(password or "") < MIN_PASSWORD_CHARS:
        raise AccountError(f"A password needs at least {MIN_PASSWORD_CHARS} characters.")
