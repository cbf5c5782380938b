"""Logging out ends the login token itself (#79): before, the browser's cookie was cleared but the token stayed
valid for its 15 days, so a copy of it (a shared computer's history, a proxy log) still opened the chats."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import jwt
import pytest

from assistant.settings import Settings
from assistant.ui.auth import login_still_valid
from memory.accounts import Accounts

ROOT = Path(__file__).resolve().parents[1]
SECRET = "a test secret that is long enough for HS256 signing"


@pytest.fixture
def signed(monkeypatch):
    monkeypatch.setenv("CHAINLIT_AUTH_SECRET", SECRET)

    def token(name: str, iat: float, exp_in: float = 15 * 86400) -> str:
        return jwt.encode({"identifier": name, "metadata": {}, "iat": int(iat), "exp": int(iat + exp_in)}, SECRET,
                          algorithm="HS256")

    return token


def test_a_revoked_token_is_refused_and_others_are_not(tmp_path, signed):
    from assistant.ui.access import revoke_token, token_id, token_issued_at

    accounts = Accounts(tmp_path / "threads.db")
    accounts.add("ann", "correct horse")
    settings = Settings(_env_file=None, data_dir=tmp_path / "data")
    now = time.time()
    first, second = signed("ann", now), signed("ann", now, exp_in=86400)  # two logins (two browsers)

    def valid(token: str) -> bool:
        return login_still_valid(settings, accounts, "accounts", "ann", token_issued_at(token),
                                 token_id=token_id(token))

    assert valid(first) and valid(second)
    assert revoke_token(first, accounts.revoke_login)
    assert not valid(first) and valid(second)  # this login only: another browser's stays in
    # The same token written another way (base64 padding after the signature) is still it.
    variant = first + "="
    assert jwt.decode(variant, SECRET, algorithms=["HS256"])["identifier"] == "ann"  # PyJWT accepts it…
    assert variant != first and not valid(variant)  # …and it is refused with the original
    # Anything that is not a valid token of ours records nothing.
    assert not revoke_token("not.a.token", accounts.revoke_login)
    forged = jwt.encode({"identifier": "ann", "iat": int(now)}, "another secret, as long as ours" * 2)
    assert not revoke_token(forged, accounts.revoke_login)
    assert not revoke_token(None, accounts.revoke_login)


def test_revocations_are_kept_until_the_token_would_have_expired(tmp_path):
    import sqlite3

    accounts = Accounts(tmp_path / "threads.db")
    accounts.revoke_login("old", "ann", time.time() - 10)  # since expired (its signature is refused anyway)
    assert accounts.login_revoked("old") and not accounts.login_revoked("new")
    accounts.revoke_login("new", "ann", time.time() + 3600)
    accounts.revoke_login("newer", "bob", time.time() + 3600)  # each revocation drops the expired ones
    kept = {r[0] for r in sqlite3.connect(accounts.path).execute("SELECT token_id FROM evidentia_revoked_logins")}
    assert kept == {"new", "newer"}


PROBE = r"""
import json
from starlette.testclient import TestClient
import assistant.ui.app  # noqa: F401  (installs the login checks)
from chainlit.server import app

out = {}
ann = TestClient(app)
ann.post("/login", data={"username": "ann", "password": "correct horse"})
token = ann.cookies.get("access_token")
out["logged_in"] = ann.get("/user").status_code
other = TestClient(app)  # another browser, logged in the same second: a token of its own
other.post("/login", data={"username": "ann", "password": "correct horse"})
out["logout"] = ann.post("/logout").status_code
out["cookie_after_logout"] = ann.cookies.get("access_token")
stolen = TestClient(app)
out["old_token_as_cookie"] = stolen.get("/user", cookies={"access_token": token}).status_code
out["old_token_as_bearer"] = TestClient(app).get("/user", headers={"Authorization": "Bearer " + token}).status_code
out["threads_with_old_token"] = TestClient(app).post("/project/threads",
                                                     json={"filter": {}, "pagination": {"first": 5}},
                                                     headers={"Authorization": "Bearer " + token}).status_code
out["exchange_old_token"] = TestClient(app).post("/auth/jwt", headers={"Authorization": "Bearer " + token}).status_code
out["other_browser"] = other.get("/user").status_code
print("JSON" + json.dumps(out))
"""


def test_logout_through_the_app_ends_the_token(tmp_path):
    """The real app (Chainlit's /login and /logout routes with Evidentia's checks), through Starlette's test client."""
    Accounts(tmp_path / "threads.db").add("ann", "correct horse")
    env = dict(os.environ, EVIDENTIA_DATA_DIR=str(tmp_path), EVIDENTIA_LLM_BASE_URL="http://127.0.0.1:9/v1",
               CHAINLIT_AUTH_SECRET=SECRET)
    env.pop("EVIDENTIA_AUTH_PASSWORD", None)
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads([ln for ln in proc.stdout.splitlines() if ln.startswith("JSON")][-1][4:])
    assert out["logged_in"] == 200 and out["logout"] == 200 and not out["cookie_after_logout"]
    assert out["old_token_as_cookie"] == out["old_token_as_bearer"] == out["threads_with_old_token"] == 401
    assert out["exchange_old_token"] == 404  # not traded for a fresh token either
    assert out["other_browser"] == 200
