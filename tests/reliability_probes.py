"""Probes whose counts go into docs/bench/reliability.json (tests assert them; the bench records them).

``cross_user_reads``: two accounts on a live Chainlit server, each trying to read, list, rename and delete
the other's thread through Chainlit's HTTP API. Every attempt that gets the other's data (or changes it)
counts as one.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
PASSWORDS = {"ann": "ann's long password", "bob": "bob's long password"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def chainlit_server(data_dir: Path, **env_extra):
    """``chainlit run assistant/app.py`` on a free port with its own data folder; yields the base URL."""
    port = free_port()
    env = dict(os.environ, EVIDENTIA_DATA_DIR=str(data_dir), EVIDENTIA_LLM_BASE_URL="http://127.0.0.1:9/v1",
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", **env_extra)
    env.pop("CHAINLIT_AUTH_SECRET", None)
    log_path = data_dir / "chainlit.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "chainlit", "run", "assistant/app.py", "--headless",
                                 "--host", "127.0.0.1", "--port", str(port)], cwd=ROOT, env=env,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.time() + 180
            while True:
                try:
                    if httpx.get(url + "/auth/config", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError("chainlit did not start:\n" + log_path.read_text()[-3000:])
                time.sleep(1)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _add_thread(threads_db: Path, owner: str, name: str) -> str:
    """A thread with one message, written where Chainlit's data layer keeps them."""
    con = sqlite3.connect(threads_db)
    with con:
        (user_id,) = con.execute('SELECT id FROM users WHERE identifier = ?', [owner]).fetchone()
        tid = str(uuid.uuid4())
        now = dt.datetime.now(dt.timezone.utc).isoformat()
        con.execute('INSERT INTO threads (id, "createdAt", name, "userId", "userIdentifier", tags, metadata) '
                    'VALUES (?, ?, ?, ?, ?, ?, ?)', [tid, now, name, user_id, owner, "[]", "{}"])
        con.execute('INSERT INTO steps (id, name, type, "threadId", streaming, output, "createdAt", start, "end") '
                    'VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?)',
                    [str(uuid.uuid4()), owner, "user_message", tid, f"{owner}'s private question", now, now, now])
    con.close()
    return tid


def cross_user_reads(data_dir: Path) -> dict:
    """Run the two-user probe; returns the attempts made and how many leaked or changed the other's data."""
    from memory.accounts import Accounts

    data_dir.mkdir(parents=True, exist_ok=True)
    accounts = Accounts(data_dir / "threads.db")
    for name, password in PASSWORDS.items():
        accounts.add(name, password)
    attempts, leaks, own_ok, own_listed = [], 0, 0, 0
    with chainlit_server(data_dir) as url:
        clients = {}
        for name, password in PASSWORDS.items():
            c = httpx.Client(base_url=url, timeout=30)
            r = c.post("/login", data={"username": name, "password": password})
            r.raise_for_status()
            clients[name] = c
        bad = httpx.Client(base_url=url, timeout=30)
        assert bad.post("/login", data={"username": "ann", "password": PASSWORDS["bob"]}).status_code == 401
        threads = {name: _add_thread(data_dir / "threads.db", name, f"{name}'s chat") for name in PASSWORDS}
        for me, other in [("ann", "bob"), ("bob", "ann")]:
            c, theirs = clients[me], threads[other]
            own = c.get(f"/project/thread/{threads[me]}")
            own_ok += own.status_code == 200 and f"{me}'s private question" in own.text
            checks = {
                "read": c.get(f"/project/thread/{theirs}"),
                "element": c.get(f"/project/thread/{theirs}/element/{uuid.uuid4()}"),
                "list": c.post("/project/threads", json={"pagination": {"first": 50},
                                                          "filter": {"userId": "x"}}),
                "rename": c.put("/project/thread", json={"threadId": theirs, "name": "pwned"}),
                "delete": c.request("DELETE", "/project/thread", json={"threadId": theirs}),
            }
            own_listed += threads[me] in checks["list"].text
            for kind, r in checks.items():
                leaked = (f"{other}'s private question" in r.text or theirs in r.text) if r.status_code == 200 \
                    else False
                attempts.append({"user": me, "kind": kind, "status": r.status_code, "leaked": leaked})
                leaks += leaked
        con = sqlite3.connect(data_dir / "threads.db")
        intact = {name: con.execute("SELECT name FROM threads WHERE id = ?", [tid]).fetchone()
                  for name, tid in threads.items()}
        con.close()
        changed = sum(row is None or row[0] != f"{name}'s chat" for name, row in intact.items())
        anonymous = httpx.get(f"{url}/project/thread/{threads['ann']}", timeout=30)
        attempts.append({"user": None, "kind": "read", "status": anonymous.status_code,
                         "leaked": anonymous.status_code == 200})
        leaks += anonymous.status_code == 200
    return {"attempts": attempts, "cross_user_reads": leaks + changed, "own_reads_ok": own_ok,
            "own_threads_listed": own_listed}
