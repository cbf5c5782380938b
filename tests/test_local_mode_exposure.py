"""The local mode (no accounts, no password) stays on this machine (#79): it does not start on another address, and
it answers only requests addressed to this machine, so a DNS-rebinding page cannot read the chats."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route, WebSocketRoute
from starlette.testclient import TestClient

from assistant.ui.access import HostCheck, allowed_hosts, is_loopback, refuse_exposed_local_mode


@pytest.mark.parametrize("host, loopback", [
    ("127.0.0.1", True), ("localhost", True), ("::1", True), ("[::1]", True), ("127.0.0.2", True),
    ("0.0.0.0", False), ("192.168.1.20", False), ("evidentia.example", False), ("", False),
])
def test_loopback_addresses(host, loopback):
    assert is_loopback(host) is loopback


def test_the_local_mode_is_refused_beyond_loopback_and_the_other_modes_are_not():
    assert "no login" in refuse_exposed_local_mode("local", "0.0.0.0")
    assert refuse_exposed_local_mode("local", "127.0.0.1") is None
    assert refuse_exposed_local_mode("accounts", "0.0.0.0") is None
    assert refuse_exposed_local_mode("single_user", "0.0.0.0") is None


def _app(allowed: frozenset[str]):
    async def home(request):
        return PlainTextResponse("every chat")

    async def socket(ws):
        await ws.accept()
        await ws.send_text("every chat")
        await ws.close()

    app = Starlette(routes=[Route("/", home), WebSocketRoute("/ws", socket)])
    app.add_middleware(HostCheck, allowed=allowed)
    return app


def test_a_request_for_another_host_name_gets_nothing():
    allowed = allowed_hosts("127.0.0.1", 8000, ["http://127.0.0.1:8000", "http://localhost:8000"])
    assert {"127.0.0.1:8000", "localhost:8000", "[::1]:8000"} <= allowed and "evil.example:8000" not in allowed
    client = TestClient(_app(allowed), base_url="http://127.0.0.1:8000")
    assert client.get("/").text == "every chat"
    assert client.get("/", headers={"host": "localhost:8000"}).status_code == 200
    rebound = client.get("/", headers={"host": "evil.example:8000"})  # a rebinding page's own name
    assert rebound.status_code == 421 and "every chat" not in rebound.text
    assert client.get("/", headers={"host": "127.0.0.1:9999"}).status_code == 421  # another port's page
    with client.websocket_connect("/ws", headers={"host": "127.0.0.1:8000"}) as ws:  # (the client's default: testserver)
        assert ws.receive_text() == "every chat"
    from starlette.websockets import WebSocketDisconnect

    with pytest.raises(WebSocketDisconnect):
        with client.websocket_connect("/ws", headers={"host": "evil.example:8000"}) as ws:
            ws.receive_text()


def test_evidentia_run_refuses_the_local_mode_on_all_addresses_before_starting_anything(tmp_path, monkeypatch):
    from assistant.cli import main

    started = []
    monkeypatch.setattr("assistant.cli.chat_cli.ensure_default_kb", lambda settings: started.append("kb"))
    monkeypatch.setattr("assistant.model.serving.ensure_server", lambda settings: started.append("server"))
    env = {"EVIDENTIA_DATA_DIR": str(tmp_path), "EVIDENTIA_CHAINLIT_HOST": "0.0.0.0", "EVIDENTIA_AUTH_PASSWORD": None}
    result = CliRunner(env=env).invoke(main, ["run"])
    assert result.exit_code == 1 and "no login" in result.output and "evidentia user add" in result.output
    assert started == []


def test_the_running_ui_in_local_mode_answers_its_own_address_only(tmp_path):
    """The real app, as `chainlit run` starts it with no account and no password: its own address gets the landing
    page (the key is tests/test_install_token.py's), a request naming another host (a DNS-rebinding page) gets 421,
    on the API and the chat socket's path alike."""
    import httpx

    from tests.reliability_probes import chainlit_server

    data = tmp_path / "data"
    data.mkdir()
    with chainlit_server(data) as url:
        port = url.rsplit(":", 1)[1]
        assert httpx.get(url, timeout=10).status_code == 401  # the landing page: no key
        for path in ("/", "/project/threads", "/ws/socket.io/?EIO=4&transport=polling"):
            rebound = httpx.get(url + path, headers={"host": f"evil.example:{port}"}, timeout=10)
            assert rebound.status_code == 421, (path, rebound.status_code)
