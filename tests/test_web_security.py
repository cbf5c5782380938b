"""The web app's own security: CORS never grants a foreign site the user's credentials (#17).

Runs in a subprocess because Chainlit's config is process-global (see test_app_handlers.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CORS_PROBE = r"""
import json
from starlette.testclient import TestClient
import assistant.ui.app  # noqa: F401  (applies the origin policy)
from chainlit.config import config
from chainlit.server import app

# The page's own address, as a browser on this machine sends it: the local mode answers no other Host (#79), and
# only a browser that holds the install's key (the printed address sets it as a cookie)
client = TestClient(app, base_url="http://127.0.0.1:8000")
client.cookies.set("evidentia_key", assistant.ui.app.LOCAL_KEY.value)
out = {"origins": list(config.project.allow_origins),
       "other_host": TestClient(app).get("/project/settings").status_code}  # Host: testserver
for origin in ["https://evil.example", "http://127.0.0.1:8000", "https://notes.example.org"]:
    r = client.options("/project/threads", headers={"Origin": origin, "Access-Control-Request-Method": "POST"})
    out[origin] = r.headers.get("access-control-allow-origin")
# The chat socket's handshake (engineio polling), from the UI's own page, other pages, and no page at all.
out["socket"] = {}
for origin in [None, "http://testserver", "http://testserver:3000", "https://evil.example", "http://127.0.0.1:8000",
               "https://notes.example.org"]:
    r = client.get("/ws/socket.io/?EIO=4&transport=polling", headers={"Origin": origin} if origin else {})
    out["socket"][str(origin)] = r.status_code
print("JSON" + json.dumps(out))
"""


def _cors(tmp_path, **env):
    full = dict(os.environ, EVIDENTIA_DATA_DIR=str(tmp_path / "data"), EVIDENTIA_LLM_BASE_URL="http://127.0.0.1:9/v1",
                CHAINLIT_AUTH_SECRET="test-secret", **env)
    full.pop("EVIDENTIA_AUTH_PASSWORD", None)
    if "EVIDENTIA_ALLOWED_ORIGINS" not in env:
        full.pop("EVIDENTIA_ALLOWED_ORIGINS", None)
    proc = subprocess.run([sys.executable, "-c", CORS_PROBE], cwd=ROOT, env=full, capture_output=True, text=True,
                          timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads([ln for ln in proc.stdout.splitlines() if ln.startswith("JSON")][-1][4:])


def test_cors_grants_only_the_apps_own_origin(tmp_path):
    out = _cors(tmp_path)
    # The install's login-signing secret was made on first start, readable by its owner only.
    secret = tmp_path / "data" / "chainlit_auth_secret"
    assert secret.stat().st_mode & 0o777 == 0o600 and len(secret.read_text().strip()) >= 40
    assert "*" not in out["origins"]
    assert out["https://evil.example"] is None
    assert out["http://127.0.0.1:8000"] == "http://127.0.0.1:8000"
    # The socket opens for the UI's own page (host and port as the browser used them: 127.0.0.1:8000 here) and for
    # non-browser clients, not for another site nor for a page on another port or name of the same host.
    assert out["socket"] == {"None": 200, "http://testserver": 400, "http://testserver:3000": 400,
                             "https://evil.example": 400, "http://127.0.0.1:8000": 200,
                             "https://notes.example.org": 400}
    # A request that names another host is refused before any route (a DNS-rebinding page's)
    assert out["other_host"] == 421


def test_cors_origins_are_configurable_and_star_is_refused(tmp_path):
    out = _cors(tmp_path, EVIDENTIA_ALLOWED_ORIGINS="https://notes.example.org, *")
    assert out["origins"] == ["https://notes.example.org"]
    assert out["https://notes.example.org"] == "https://notes.example.org"
    assert out["https://evil.example"] is None
    assert out["socket"]["https://notes.example.org"] == 200 and out["socket"]["https://evil.example"] == 400


def test_an_existing_secret_readable_by_others_is_made_private(tmp_path):
    secret = tmp_path / "data" / "chainlit_auth_secret"
    secret.parent.mkdir(parents=True)
    secret.write_text("an older install's secret, long enough to sign logins with\n")
    secret.chmod(0o644)
    _cors(tmp_path)
    assert secret.stat().st_mode & 0o777 == 0o600
    assert secret.read_text().startswith("an older install's secret")  # kept: existing logins stay valid
    assert [p.name for p in secret.parent.iterdir() if p.name.startswith(".auth_secret")] == []
