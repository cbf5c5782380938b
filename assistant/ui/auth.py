"""Who may log in to the web UI, as plain functions the Chainlit callbacks call.

Three modes, chosen at start-up:

- **accounts**: users added with ``evidentia user add`` log in with their own password;
- **single-user**: no accounts, ``EVIDENTIA_AUTH_PASSWORD`` set: one fixed user name
  (``EVIDENTIA_SINGLE_USER_NAME``, default ``owner``) with that password. Any other name is refused, so
  the shared password cannot open someone else's chats by typing their name;
- **local**: neither: one local user, for the person who started the UI on this machine. It listens on loopback
  only and lets in only a browser that holds this install's key (:func:`local_ui_key`), which the start-up
  address carries (``http://127.0.0.1:8000/?key=…``, see :func:`start_url` and assistant/ui/access.py): other
  users of the machine and pages in the browser reach the landing page only.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Literal

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from assistant.settings import Settings
from memory.accounts import Accounts

LoginMode = Literal["accounts", "single_user", "local"]
_hasher = PasswordHasher()


def login_mode(settings: Settings, accounts: Accounts) -> LoginMode:
    if accounts.names():
        return "accounts"
    return "single_user" if settings.auth_password else "local"


@dataclass
class LoginLimiter:
    """Failed logins over a sliding window, per user name; too many under one name and that name waits.

    A name with ``per_name`` failures in the window is refused, even with the right password, until they age
    out: guessing gets at most ``per_name`` tries a minute per name. Failures under other names never lock a name
    out, so a flood of wrong names (or wrong passwords for someone else) cannot keep the others from logging in
    (#79: 50 failures under any names used to lock every user out, correct passwords included).

    ``overall`` is a ceiling on failures in all, and it binds only names that have failed themselves in this
    window: under a flood, each attacked name gets one try a window instead of ``per_name``, while a name with no
    recent failure (the people who type their password right) is never refused. Chainlit's login callback is not
    given the request, so there is no per-address limit; behind a proxy every user would share one address anyway.
    """

    per_name: int = 5
    overall: int = 50
    window_s: float = 60.0
    clock: Callable[[], float] = time.monotonic
    _by_name: dict[str, int] = field(default_factory=dict)  # failures in the window, per case-folded name
    _failures: deque = field(default_factory=deque)  # (time, name) of each failure in the window, oldest first
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _expire(self, now: float) -> None:
        # Each failure is forgotten once, oldest first, so a flood of guessed names costs O(1) a try and the
        # memory held is the failures of one window (argon2's cost bounds how many that can be).
        while self._failures and now - self._failures[0][0] > self.window_s:
            _, name = self._failures.popleft()
            left = self._by_name[name] - 1
            if left:
                self._by_name[name] = left
            else:
                del self._by_name[name]

    def allowed(self, name: str) -> bool:
        with self._lock:
            self._expire(self.clock())
            mine = self._by_name.get(name.casefold(), 0)
            return mine == 0 or (mine < self.per_name and len(self._failures) < self.overall)

    def failed(self, name: str) -> None:
        now = self.clock()
        with self._lock:
            self._expire(now)
            key = name.casefold()
            self._failures.append((now, key))
            self._by_name[key] = self._by_name.get(key, 0) + 1


def private_secret(path: Path) -> str:
    """A random secret kept in ``path``: made once, readable by its owner only from the start."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        # Written whole to a private temporary file (mode 0600 from its creation, never world-readable between
        # a write and a chmod), then linked into place: a second process starting at the same moment either
        # wins the link or reads the complete secret, never an empty file.
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_urlsafe(48))
            try:
                os.link(tmp, path)
            except FileExistsError:  # another process made it first; theirs is used
                pass
        finally:
            os.unlink(tmp)
    elif path.stat().st_mode & 0o077:  # made by an older version or by hand: others must not read it
        path.chmod(0o600)
    return path.read_text().strip()


@dataclass(frozen=True)
class LocalKey:
    """This install's key to the local mode (#79), and when it was made (POSIX seconds): logins from before it were
    given to whoever asked, so they end; deleting the file makes a new key and ends every local login."""

    value: str
    since: float


def local_ui_key(settings: Settings) -> LocalKey:
    """The local mode's key, kept in the data folder as ``local_ui_key`` (mode 0600)."""
    path = settings.data_dir / "local_ui_key"
    value = private_secret(path)
    return LocalKey(value, path.stat().st_mtime)


def start_url(settings: Settings, accounts: Accounts, host: str | None = None, port: int | None = None) -> str:
    """The address to open: in the local mode it carries the key, which the UI turns into a cookie."""
    host, port = host or settings.chainlit_host, port or settings.chainlit_port
    base = f"http://{f'[{host}]' if ':' in host else host}:{port}"
    return f"{base}/?key={local_ui_key(settings).value}" if login_mode(settings, accounts) == "local" else base


def single_user_password_since(settings: Settings) -> float:
    """When ``EVIDENTIA_AUTH_PASSWORD`` took its current value (POSIX seconds), as noted in the data folder.

    The password lives in the environment, so a change can only be noticed at start-up: its argon2 hash is
    kept (mode 0600) beside the threads, and a password that no longer matches it is recorded as new, so
    sessions opened with the old one end, as they do when an account's password changes.
    """
    path = settings.data_dir / "single_user_password.json"
    password = settings.auth_password or ""
    try:
        noted = json.loads(path.read_text())
        _hasher.verify(noted["hash"], password)
        return float(noted["since"])
    except (OSError, ValueError, KeyError, TypeError, VerificationError, InvalidHashError):
        pass  # none noted yet, unreadable, or a different password: note this one as new
    since = time.time()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".single_user_password.")  # 0600 from the start
    with os.fdopen(fd, "w") as f:
        json.dump({"hash": _hasher.hash(password), "since": since}, f)
    os.replace(tmp, path)
    return since


def login_still_valid(settings: Settings, accounts: Accounts, mode: LoginMode, name: str,
                      issued_at: float | None, *, single_user_since: float = 0.0, local_since: float = 0.0,
                      token_id: str | None = None) -> bool:
    """Whether a login token for ``name`` issued at ``issued_at`` (POSIX seconds) may still use the UI.

    A token is valid for 15 days whatever happens meanwhile: its account is removed, its password changed
    because someone else learnt it, it is logged out, or accounts replace the local or single-user mode. So each
    request re-checks it rather than trusting the signature alone. A token must be from after its password was
    last set (to the second, as tokens record it: ``single_user_since`` in single-user mode, ``local_since``, when
    this install's local key was made, in the local mode); one whose age is unknown is refused, and so is one
    logged out (``token_id``, see assistant.ui.access.token_id).
    """
    if issued_at is None or (token_id is not None and accounts.login_revoked(token_id)):
        return False
    if mode == "accounts":
        set_at = accounts.password_set_at(name)
        return set_at is not None and issued_at >= int(set_at)
    if mode == "single_user":
        return secrets.compare_digest(name.encode(), settings.single_user_name.encode()) and \
            issued_at >= int(single_user_since)
    return name == "local" and issued_at >= int(local_since)


def check_login(settings: Settings, accounts: Accounts, limiter: LoginLimiter, mode: LoginMode,
                username: str, password: str) -> str | None:
    """The user name to log in as, or None (wrong name or password, or too many recent failures)."""
    if mode == "local" or not limiter.allowed(username):
        return None
    if mode == "accounts":
        ok = accounts.verify(username, password)
    else:  # single user: the name is fixed, and compared like the password, in constant time
        ok = secrets.compare_digest(username.encode(), settings.single_user_name.encode()) & \
            secrets.compare_digest(password.encode(), (settings.auth_password or "").encode())
    if not ok:
        limiter.failed(username)
        return None
    return username
