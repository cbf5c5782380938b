"""Who may use the UI's API and chat socket, beyond the thread-author checks Chainlit makes itself.

Chainlit 2.12 checks a thread's author on its thread routes (read, element, rename, share, delete) and
lists threads by the caller's name. Three gaps remain, closed here:

- A login token stays valid for ``user_session_timeout`` (15 days) whatever happens to the account: after
  ``evidentia user remove`` or ``passwd``, or once accounts replace the local or single-user mode, an old
  browser cookie would still be let in. :func:`account_gate` re-checks the token's name and age against
  the current accounts on every request.
- ``PUT /feedback`` and ``DELETE /feedback`` write any message's feedback by id, with no author check, so
  one user could mark or delete feedback in another's chat. :class:`OwnedFeedbackDataLayer` checks the
  message's thread against the request's user.
- Its socket server is built with origin checks switched off (for its embeddable widget, unused here), so a
  page on another port of the same host, which the browser sends the login cookie from, could open a chat
  socket as the user. :func:`socket_origin_check` allows the page's own address and the configured origins.

The local mode (no accounts, no password) has one user, the person who started it. Three more checks keep it theirs
(#79): :func:`refuse_exposed_local_mode` refuses to start it on an address other than loopback, and
:class:`HostCheck` answers only requests whose ``Host`` header names this machine's loopback address (or the
configured host or origins), so a page whose DNS name is re-bound to 127.0.0.1 cannot read the chats; and
:class:`LocalKeyGate` lets past its landing page only a browser that holds this install's key (the address printed at
start-up carries it), so other users of the machine, and pages that send requests to 127.0.0.1, get nothing either.

Text that came from an upload, the knowledge base or the model is rendered as Markdown, where ``![x](http://…)``
is an image the browser fetches: a beacon, or a channel out if the model can be made to write the address.
:class:`NoRemoteContent` sends a Content-Security-Policy with every page that lets images and media load only from
this server (and inline data), so no text anywhere on the page (messages, side panels, streamed answers) can make
the browser call another host.
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import re
import secrets
from contextvars import ContextVar
from typing import Awaitable, Callable
from urllib.parse import parse_qsl, urlsplit

import jwt
from jwt.utils import base64url_decode
from chainlit.auth import get_current_user
from chainlit.auth import reuseable_oauth as token_from_request
from chainlit.auth.jwt import get_jwt_secret
from chainlit.data.sql_alchemy import SQLAlchemyDataLayer
from fastapi import Depends, HTTPException

# The user name of the HTTP request being served, set by account_gate (None outside a request).
_request_user: ContextVar[str | None] = ContextVar("evidentia_request_user", default=None)


def _claims(token: str | None) -> dict | None:
    """The claims of a login token this install signed and that has not expired; None for anything else."""
    if not token or not get_jwt_secret():
        return None
    try:
        return jwt.decode(token, get_jwt_secret(), algorithms=["HS256"])
    except jwt.InvalidTokenError:
        return None


def token_issued_at(token: str | None) -> float | None:
    """When a (Chainlit-signed) login token was issued; None if it is missing or not one of ours."""
    claims = _claims(token)
    return float(claims["iat"]) if claims and isinstance(claims.get("iat"), (int, float)) else None


def token_id(token: str | None) -> str | None:
    """A login token's identity, for revoking it: a hash of its signature's bytes, not of the text.

    One signed token can be written more than one way: PyJWT accepts ``=`` padding after a segment (and base64
    decoders that ignore the spare bits of a segment's last character accept more), so a hash of the text would
    let a revoked token back in with ``=`` added. The decoded signature is the same for all of them, and the
    claims cannot change without the secret.
    """
    if not token or token.count(".") != 2:
        return None
    try:
        signature = base64url_decode(token.rsplit(".", 1)[1].rstrip("=").encode("ascii"))
    except (ValueError, UnicodeEncodeError):
        return None
    return hashlib.sha256(signature).hexdigest()


def revoke_token(token: str | None, revoke: Callable[[str, str, float], None]) -> bool:
    """End a login token on logout (#79): ``revoke(token_id, name, expires_at)`` records it, and
    assistant.ui.auth.login_still_valid refuses it from then on. A token that is not a valid one of ours is not
    recorded (so unsigned requests cannot fill the table). Returns whether one was recorded."""
    claims = _claims(token)
    ident = token_id(token)
    if claims is None or ident is None or not isinstance(claims.get("identifier"), str):
        return False
    revoke(ident, claims["identifier"], float(claims.get("exp") or 0.0))
    return True


def account_gate(still_valid: Callable[[str, str | None], bool]) -> Callable[..., Awaitable[object]]:
    """A replacement for Chainlit's ``get_current_user`` dependency that refuses logins no longer valid.

    Installed with FastAPI's ``dependency_overrides``, so every route that asks for the current user gets it.
    ``still_valid(name, token)`` decides (see assistant.ui.auth.login_still_valid).
    """

    async def current_user(token: str | None = Depends(token_from_request)):
        user = await get_current_user(token)
        if user is not None and not await asyncio.to_thread(still_valid, user.identifier, token):
            raise HTTPException(status_code=401, detail="This login is no longer valid; log in again.")
        _request_user.set(getattr(user, "identifier", None))
        return user

    return current_user


def refuse_token_exchange(app) -> None:
    """Chainlit's ``POST /auth/jwt`` trades any token it can verify for a fresh one (for its embeddable copilot,
    unused here), so a token logged out or from before a password change would come back new, with a new
    signature and issue time. Evidentia answers that route with 404, ahead of Chainlit's own."""
    from fastapi.routing import APIRoute

    async def no_exchange():
        raise HTTPException(status_code=404, detail="Not found")

    app.router.routes.insert(0, APIRoute("/auth/jwt", no_exchange, methods=["POST"]))


class OwnedFeedbackDataLayer(SQLAlchemyDataLayer):
    """Chainlit's SQLite data layer, writing feedback only to the requesting user's own messages."""

    async def _author_of_step(self, step_id: str | None) -> str | None:
        rows = await self.execute_sql(
            query='SELECT t."userIdentifier" AS author FROM steps s JOIN threads t ON t."id" = s."threadId" '
                  'WHERE s."id" = :step_id', parameters={"step_id": step_id or ""})
        return rows[0]["author"] if isinstance(rows, list) and rows else None

    async def _check_feedback(self, for_id: str | None, thread_id: str | None, feedback_id: str | None) -> None:
        user = _request_user.get()
        if user is None:  # not an HTTP request (the app's own writes)
            return
        if feedback_id:  # an existing feedback must be on one of this user's messages
            rows = await self.execute_sql(query='SELECT "forId" AS for_id FROM feedbacks WHERE "id" = :id',
                                          parameters={"id": feedback_id})
            if isinstance(rows, list) and rows and await self._author_of_step(rows[0]["for_id"]) != user:
                raise HTTPException(status_code=403, detail="That feedback is on another user's chat.")
        if for_id is not None:
            if await self._author_of_step(for_id) != user:
                raise HTTPException(status_code=403, detail="That message is not in one of your chats.")
            if thread_id and await self.get_thread_author_or_none(thread_id) != user:
                raise HTTPException(status_code=403, detail="That chat is not yours.")

    async def get_thread_author_or_none(self, thread_id: str) -> str | None:
        try:
            return await self.get_thread_author(thread_id)
        except ValueError:
            return None

    async def upsert_feedback(self, feedback) -> str:
        await self._check_feedback(feedback.forId, feedback.threadId, feedback.id)
        return await super().upsert_feedback(feedback)

    async def delete_feedback(self, feedback_id: str) -> bool:
        await self._check_feedback(None, None, feedback_id)
        return await super().delete_feedback(feedback_id)


def socket_origin_check(allowed_origins: list[str]) -> Callable[[str | None, dict], bool]:
    """An origin test for python-engineio's ``cors_allowed_origins``: the UI's own address, or one configured.

    "Own" compares host and port with the request's Host header, not the scheme, so a TLS proxy in front
    (browser on https, app on http) still works; a page on another port of the same host does not.
    """
    configured = {o.rstrip("/") for o in allowed_origins}

    def allowed(origin: str | None, environ: dict) -> bool:
        if not origin:  # not a browser page (engineio checks only requests that carry an Origin)
            return True
        if origin.rstrip("/") in configured:
            return True
        host = environ.get("HTTP_HOST", "")
        return bool(host) and urlsplit(origin).netloc.lower() == host.lower()

    return allowed


# -- the local mode stays local (#79) -------------------------------------------------------------------------------
def is_loopback(host: str) -> bool:
    """Whether a host name or address is this machine's loopback ("127.0.0.1", "::1", "localhost")."""
    host = host.strip().strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def refuse_exposed_local_mode(mode: str, host: str) -> str | None:
    """Why the UI must not start (or None): the local mode lets everyone in, so it binds to loopback only."""
    if mode == "local" and not is_loopback(host):
        return (f"The UI would listen on {host} with no login: anyone who reaches this machine could read every chat "
                "and upload files. Add an account first (`evidentia user add NAME`) or set EVIDENTIA_AUTH_PASSWORD, "
                "or keep EVIDENTIA_CHAINLIT_HOST at 127.0.0.1.")
    return None


def allowed_hosts(host: str, port: int, origins: list[str]) -> frozenset[str]:
    """The ``Host`` header values the local mode answers: loopback names with the port, and the configured
    host and origins (lower case)."""
    names = {"127.0.0.1", "localhost", "[::1]", host.strip().lower()}
    hosts = {f"{n}:{port}" for n in names} | {n for n in names if port == 80}
    hosts |= {urlsplit(o).netloc.lower() for o in origins if urlsplit(o).netloc}
    return frozenset(hosts)


class HostCheck:
    """ASGI middleware: a request or socket whose ``Host`` header is not in ``allowed`` gets 421 and nothing else.

    Against DNS rebinding: a page on evil.example whose name now resolves to 127.0.0.1 reaches this server, but its
    requests carry ``Host: evil.example:8000``, which is refused before any route runs.
    """

    def __init__(self, app, allowed: frozenset[str]):
        self.app, self.allowed = app, allowed

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket"):
            host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1").lower()
            if host not in self.allowed:
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                    return
                body = b"Misdirected request: this server answers only on this machine's own address."
                await send({"type": "http.response.start", "status": 421,
                            "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


# -- the local mode's key (#79) ---------------------------------------------------------------------------------------
KEY_PARAM = "key"
KEY_COOKIE = "evidentia_key"
_KEY_COOKIE_AGE_S = 400 * 86400  # the longest a browser keeps a cookie
# What a browser without the key may fetch: CORS preflights (browsers send them without cookies, and they answer
# nothing of the user's) and the login configuration (how to log in; a readiness probe reads it).
_OPEN_PATHS = frozenset({"/auth/config"})
_SAFE_PATH = re.compile(r"/[A-Za-z0-9/_.-]*")


def cookie_value(cookie_header: str | None, name: str) -> str | None:
    """The value of cookie ``name`` in a ``Cookie`` request header (the first, as browsers send the most specific)."""
    for part in (cookie_header or "").split(";"):
        key, sep, value = part.strip().partition("=")
        if sep and key == name:
            return value
    return None


def holds_local_key(cookie_header: str | None, key: str) -> bool:
    """Whether a request's cookies carry this install's local key (compared in constant time)."""
    given = cookie_value(cookie_header, KEY_COOKIE)
    return given is not None and secrets.compare_digest(given.encode(), key.encode())


LANDING_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Evidentia</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 4em auto; line-height: 1.5">
<h1>Evidentia</h1>
<p>{why}</p>
<p>This Evidentia runs without accounts, for the person who started it. Open the address it printed when it
started, which ends in <code>/?key=&hellip;</code> (the key is also in the file <code>local_ui_key</code> in its data
folder). To let other people in, give them accounts: <code>evidentia user add NAME</code>.</p>
</body></html>
"""


class LocalKeyGate:
    """ASGI middleware for the local mode: only a browser that holds this install's key gets past the landing page.

    ``/?key=KEY`` (the address printed at start-up) answers with a redirect to ``/`` that stores the key in an
    HttpOnly cookie; every request after that carries it. Without it (another user of this machine, a page in the
    browser that sends requests to 127.0.0.1, a wrong key) a request gets the landing page (401) and a socket is
    closed. SameSite=Lax: cross-site POSTs and sockets carry no key either.
    """

    def __init__(self, app, key: str):
        self.app, self.key = app, key

    def _is_key(self, given: str) -> bool:
        return secrets.compare_digest(given.encode(), self.key.encode())

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = [v for k, v in query if k == KEY_PARAM]
        if scope["type"] == "http" and given:
            if not self._is_key(given[-1]):
                return await self._landing(send, "That key is not this install's.")
            # Only a plain path is sent back (no "//host", no encoded line breaks): the redirect stays on this site.
            path = scope["path"] if _SAFE_PATH.fullmatch(scope["path"]) and not scope["path"].startswith("//") else "/"
            cookie = (f"{KEY_COOKIE}={self.key}; Path=/; Max-Age={_KEY_COOKIE_AGE_S}; HttpOnly; SameSite=Lax")
            await send({"type": "http.response.start", "status": 303,
                        "headers": [(b"location", path.encode()), (b"set-cookie", cookie.encode()),
                                    (b"cache-control", b"no-store"), (b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        headers = dict(scope.get("headers") or [])
        if holds_local_key(headers.get(b"cookie", b"").decode("latin-1"), self.key):
            return await self.app(scope, receive, send)
        if scope["type"] == "http" and (scope.get("method") == "OPTIONS" or scope["path"] in _OPEN_PATHS):
            return await self.app(scope, receive, send)
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await self._landing(send, "This page needs the key of this install.")

    @staticmethod
    async def _landing(send, why: str) -> None:
        body = LANDING_PAGE.format(why=why).encode()
        await send({"type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"text/html; charset=utf-8"), (b"cache-control", b"no-store"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


# Images and media from this server or inline data only (#79). Scripts, styles and fonts are Chainlit's own and
# are left to it: the policy closes what rendered text can open, not the app's own assets.
CONTENT_POLICY = "img-src 'self' data: blob:; media-src 'self' data: blob:"


class NoRemoteContent:
    """ASGI middleware: every HTTP response carries :data:`CONTENT_POLICY` (see the module docstring)."""

    def __init__(self, app, policy: str = CONTENT_POLICY):
        self.app, self.header = app, (b"content-security-policy", policy.encode())

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def with_policy(message):
            if message["type"] == "http.response.start":
                headers = [h for h in message.get("headers", []) if h[0].lower() != self.header[0]]
                message = {**message, "headers": headers + [self.header]}
            await send(message)

        await self.app(scope, receive, with_policy)

