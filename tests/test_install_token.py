"""The local mode is for the person who started it (#79): a per-install key, printed in the start-up address, is
needed for anything beyond the landing page. Before, anyone who could send a request to 127.0.0.1 (another user
of the machine, a page in the browser) got the local user's chats, tables and uploads."""

from __future__ import annotations

import re
import time

import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route, WebSocketRoute
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from assistant.settings import Settings
from assistant.ui.access import KEY_COOKIE, LocalKeyGate, cookie_value, holds_local_key
from assistant.ui.auth import local_ui_key, login_still_valid, start_url
from memory.accounts import Accounts

KEY = "k3y-of-this-install_0123456789abcdefghijklmnop"


def _app():
    async def home(request):
        return PlainTextResponse("every chat")

    async def socket(ws):
        await ws.accept()
        await ws.send_text("every chat")
        await ws.close()

    app = Starlette(routes=[Route("/", home), Route("/thread/{tid}", home), Route("/auth/config", home),
                            Route("/project/threads", home, methods=["POST", "OPTIONS"]),
                            WebSocketRoute("/ws", socket)])
    app.add_middleware(LocalKeyGate, key=KEY)
    return app


def test_without_the_key_only_the_landing_page_is_served():
    client = TestClient(_app(), base_url="http://127.0.0.1:8000")
    for method, path in [("GET", "/"), ("GET", "/thread/abc"), ("POST", "/project/threads"), ("GET", "/?key=wrong")]:
        r = client.request(method, path)
        assert r.status_code == 401 and "every chat" not in r.text and "/?key=" in r.text, (method, path)
    assert "not this install's" in client.get("/?key=wrong").text
    almost = TestClient(_app(), base_url="http://127.0.0.1:8000", cookies={KEY_COOKIE: KEY[:-1]})
    assert almost.get("/").status_code == 401
    with pytest.raises(WebSocketDisconnect):
        with client.websocket_connect("/ws") as ws:
            ws.receive_text()
    # What a browser may fetch without it: CORS preflights (sent without cookies) and the login configuration.
    assert client.options("/project/threads").status_code != 401
    assert client.get("/auth/config").status_code == 200


def test_the_printed_address_sets_the_key_and_everything_opens():
    client = TestClient(_app(), base_url="http://127.0.0.1:8000")
    r = client.get(f"/?key={KEY}", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/"  # the key leaves the address bar
    cookie = r.headers["set-cookie"]
    assert cookie.startswith(f"{KEY_COOKIE}={KEY};") and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    client.cookies.set(KEY_COOKIE, KEY)
    assert client.get("/").text == "every chat" and client.get("/thread/abc").text == "every chat"
    with client.websocket_connect("/ws") as ws:
        assert ws.receive_text() == "every chat"
    assert client.get(f"/thread/abc?key={KEY}", follow_redirects=False).headers["location"] == "/thread/abc"


@pytest.mark.parametrize("path", ["//evil.example/", "/%0d%0aSet-Cookie:%20x=1", "/a b"])
def test_the_redirect_stays_on_this_site(path):
    r = TestClient(_app(), base_url="http://127.0.0.1:8000").get(f"{path}?key={KEY}", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/"


def test_cookies_are_read_by_name():
    header = f"other=1; {KEY_COOKIE}={KEY}; access_token=abc"
    assert cookie_value(header, KEY_COOKIE) == KEY and cookie_value(header, "missing") is None
    assert holds_local_key(header, KEY) and not holds_local_key("", KEY) and not holds_local_key(None, KEY)
    assert not holds_local_key(f"x{KEY_COOKIE}={KEY}", KEY)


def test_the_key_is_made_once_private_and_in_the_start_address(tmp_path):
    settings = Settings(_env_file=None, data_dir=tmp_path / "data")
    accounts = Accounts(tmp_path / "threads.db")
    key = local_ui_key(settings)
    path = tmp_path / "data" / "local_ui_key"
    assert path.stat().st_mode & 0o777 == 0o600 and len(key.value) >= 40
    assert local_ui_key(settings) == key  # the same at every start
    assert start_url(settings, accounts) == f"http://127.0.0.1:8000/?key={key.value}"
    assert start_url(settings, accounts, "::1", 9000) == f"http://[::1]:9000/?key={key.value}"
    assert re.fullmatch(r"[A-Za-z0-9_-]+", key.value)  # nothing to escape in an address
    accounts.add("ann", "correct horse")  # with accounts there is no key in the address
    assert start_url(settings, accounts) == "http://127.0.0.1:8000"


def test_local_logins_from_before_the_key_end(tmp_path):
    # Before the key, anyone could ask for a local login token; those tokens must not outlive the change.
    settings = Settings(_env_file=None, data_dir=tmp_path / "data")
    accounts = Accounts(tmp_path / "threads.db")
    since = local_ui_key(settings).since
    assert not login_still_valid(settings, accounts, "local", "local", since - 3600, local_since=since)
    assert login_still_valid(settings, accounts, "local", "local", time.time(), local_since=since)


def test_the_running_ui_in_local_mode_opens_only_with_the_printed_address(tmp_path):
    """The real app as `chainlit run` starts it (no account, no password): without the key, the page, the login
    route and the API give nothing; the address it printed logs the browser in."""
    import httpx

    from tests.reliability_probes import chainlit_server

    data = tmp_path / "data"
    data.mkdir()
    with chainlit_server(data) as url:
        printed = re.search(r"open (http://\S+/\?key=\S+)", (data / "chainlit.log").read_text())
        assert printed and printed.group(1).startswith(url), (data / "chainlit.log").read_text()[-2000:]
        stranger = httpx.Client(base_url=url, timeout=10)
        assert stranger.get("/").status_code == 401
        assert stranger.post("/auth/header").status_code == 401  # no local login for the asking
        assert stranger.get("/ws/socket.io/?EIO=4&transport=polling").status_code == 401
        assert stranger.post("/project/threads", json={"filter": {}, "pagination": {"first": 5}}).status_code == 401
        owner = httpx.Client(base_url=url, timeout=10, follow_redirects=True)
        page = owner.get(printed.group(1).removeprefix(url))
        assert page.status_code == 200 and "<html" in page.text.lower()
        assert owner.post("/auth/header").status_code == 200 and owner.cookies.get("access_token")
        assert owner.get("/user").json()["identifier"] == "local"
        threads = owner.post("/project/threads", json={"filter": {}, "pagination": {"first": 5}})
        assert threads.status_code == 200
        # Logging out ends that token; the login page logs the key's holder straight back in with a new one.
        old = owner.cookies.get("access_token")
        assert owner.post("/logout").status_code == 200
        assert owner.post("/auth/header").status_code == 200 and owner.cookies.get("access_token") != old
        assert owner.get("/user").status_code == 200
        assert stranger.get("/user", headers={"Authorization": f"Bearer {old}"}).status_code == 401  # the key…
        keyed = httpx.Client(base_url=url, timeout=10, cookies={KEY_COOKIE: owner.cookies.get(KEY_COOKIE)})
        assert keyed.get("/user", headers={"Authorization": f"Bearer {old}"}).status_code == 401  # …and the token
