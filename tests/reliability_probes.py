"""Probes whose counts go into docs/bench/reliability.json (tests assert them; the bench records them).

``cross_user_reads``: two accounts on a live Chainlit server, each trying to read, list, rename and delete
the other's thread through Chainlit's HTTP API. Every attempt that gets the other's data (or changes it)
counts as one.
"""

from __future__ import annotations

import datetime as dt
import json
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
    """``chainlit run assistant/ui/app.py`` on a free port with its own data folder; yields the base URL."""
    port = free_port()
    env = dict(os.environ, EVIDENTIA_DATA_DIR=str(data_dir), EVIDENTIA_LLM_BASE_URL="http://127.0.0.1:9/v1",
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", **env_extra)
    env.pop("CHAINLIT_AUTH_SECRET", None)
    log_path = data_dir / "chainlit.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "chainlit", "run", "assistant/ui/app.py", "--headless",
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


# --- lost turns across a model-server kill ----------------------------------------------------------
QUESTIONS = ["When did Wang Zhizhi join the NBA?", "Which team did Wang Zhizhi join first?",
             "How tall is Wang Zhizhi?", "Where was Wang Zhizhi born?", "Which position did Wang Zhizhi play?",
             "Who coached Wang Zhizhi in Dallas?", "When did Wang Zhizhi retire?", "Did Wang Zhizhi play in 2008?",
             "Which league did Wang Zhizhi play in before the NBA?", "What number did Wang Zhizhi wear?"]
TEXT = ("Wang Zhizhi joined the NBA in 2001 with the Dallas Mavericks. He was born in Beijing. "
        "He played centre and later joined the Los Angeles Clippers.")


def lost_turns_after_server_kill(work: Path) -> dict:
    """Each question is asked while the model server is killed mid-turn (alternately in the intent and
    the answer step); then the app "restarts" (a new store on the same file) and counts the questions it
    no longer has. A last question is asked by an app process that is itself killed -9 mid-turn."""
    import asyncio
    import threading

    from assistant.deps import Deps
    from assistant.llm import LLMClient
    from assistant.answer.loop import Assistant
    from tools.contracts import Session
    from assistant.settings import Settings
    from memory.store import Memory
    from tests.fake_openai import FakeOpenAI, Reply

    work.mkdir(parents=True, exist_ok=True)
    settings = Settings(_env_file=None, data_dir=work / "data", llm_max_retries=0, llm_timeout_s=30)
    asked: dict[str, str] = {}

    async def one(i: int, question: str) -> str:
        box: list = []
        die_on = "intent" if i % 2 else "answer"

        def handler(req):
            kind = "intent" if req.get("response_format") else ("tools" if req.get("tools") else "answer")
            if kind == die_on or (die_on == "answer" and kind == "tools"):
                threading.Thread(target=box[0].__exit__, args=(None, None, None), daemon=True).start()
                raise ConnectionAbortedError("model server killed")
            return Reply(content=json.dumps({"task": "question", "answer_type": [], "entities": ["Wang Zhizhi"],
                                             "relation": "", "time": "", "location": "", "options": [],
                                             "rewrite": question}))

        srv = FakeOpenAI(handler)
        box.append(srv)
        srv.__enter__()
        deps = Deps(settings, llm=LLMClient(settings, base_url=srv.base_url, model="fake-model"))
        session = Session(f"kill-{i}")
        session.texts.append(("wang.txt", TEXT))
        result = await Assistant(deps, session).run_turn(question)
        deps.memory.close()
        return result.status

    statuses = [asyncio.run(one(i, q)) for i, q in enumerate(QUESTIONS)]
    for i, q in enumerate(QUESTIONS):
        asked[f"kill-{i}"] = q
    asked["app-killed"] = killed_app_turn(work / "data")["question"]
    memory = Memory(settings.memory_path)
    lost, outcomes = 0, {}
    for conversation, question in asked.items():
        turns = memory.turns(conversation)
        kept = [t for t in turns if t["user_text"] == question]
        lost += not kept
        outcomes[conversation] = kept[0]["status"] if kept else "lost"
    return {"turns_tried": len(asked), "lost_turns_after_server_kill": lost, "statuses_at_kill": statuses,
            "stored_outcomes": outcomes}


_APP_KILLED = r"""
import asyncio, sys
from assistant.deps import Deps
from assistant.llm import LLMClient
from assistant.answer.loop import Assistant
from tools.contracts import Session
from assistant.settings import Settings

settings = Settings(_env_file=None, data_dir=sys.argv[1], llm_base_url=sys.argv[2], llm_timeout_s=120,
                    llm_max_retries=0)
deps = Deps(settings, llm=LLMClient(settings, base_url=sys.argv[2], model="fake-model"))
bot = Assistant(deps, Session(sys.argv[4] if len(sys.argv) > 4 else "app-killed"))
print("STARTED", flush=True)
asyncio.run(bot.run_turn(sys.argv[3]))
"""


def killed_app_turn(data_dir: Path, question: str = "Which team did Wang Zhizhi join in 2001?",
                    conversation: str = "app-killed") -> dict:
    """A turn whose app process is killed -9 while the model is thinking (the fake model never answers)."""
    import signal

    from tests.fake_openai import FakeOpenAI, Reply

    with FakeOpenAI(lambda req: Reply(content="{}", delay_s=60)) as srv:
        proc = subprocess.Popen([sys.executable, "-c", _APP_KILLED, str(data_dir), srv.base_url, question,
                                 conversation], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        started = proc.stdout.readline().strip() == "STARTED"
        deadline = time.time() + 120
        while not srv.requests and time.time() < deadline and proc.poll() is None:
            time.sleep(0.2)
        in_flight = bool(srv.requests)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    return {"question": question, "started": started, "killed_in_flight": in_flight,
            "stderr": proc.stderr.read()[-2000:]}


# --- supervised restarts ------------------------------------------------------------------------------
# A stand-in for vLLM: answers GET /v1/models, counts its starts in runs_file, and the first die_runs
# starts crash die_after_s seconds after coming up.
# argv: port die_after_s runs_file die_runs [flags]; flags, comma-separated: ignore-term (SIGTERM does nothing),
# slow-restart (every start after the first takes 30 s before it answers, like vLLM loading a model).
FAKE_MODEL_SERVER = r"""
import json, os, signal, sys, threading, time
from http.server import BaseHTTPRequestHandler, HTTPServer
port, die_after, runs_file, die_runs = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
flags = sys.argv[5].split(",") if len(sys.argv) > 5 else []
if "ignore-term" in flags:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
runs = int(open(runs_file).read()) + 1 if os.path.exists(runs_file) else 1
open(runs_file, "w").write(str(runs))
if "slow-restart" in flags and runs > 1:
    time.sleep(30)
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        body = json.dumps({"data": [{"id": "m"}]}).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
srv = HTTPServer(("127.0.0.1", port), H)
print(f"INFO start {runs} Application startup complete.", flush=True)
if die_after >= 0 and runs <= die_runs:
    def die():
        time.sleep(die_after)
        print("ERROR engine core died: simulated crash", flush=True)
        os._exit(17)
    threading.Thread(target=die, daemon=True).start()
srv.serve_forever()
"""


def fake_model_server(data_dir: Path, runs_file: Path, *, die_after: float, die_runs: int,
                      ignore_term: bool = False, slow_restart: bool = False):
    """A LocalServer running FAKE_MODEL_SERVER on a free port (what the supervisor tests watch)."""
    from assistant.model.serving import LocalServer
    from assistant.settings import Settings

    settings = Settings(_env_file=None, data_dir=data_dir, vllm_port=free_port(), vllm_startup_timeout_s=60)
    flags = [name for name, on in (("ignore-term", ignore_term), ("slow-restart", slow_restart)) if on]
    cmd = [sys.executable, "-c", FAKE_MODEL_SERVER, str(settings.vllm_port), str(die_after), str(runs_file),
           str(die_runs)] + ([",".join(flags)] if flags else [])
    return LocalServer(settings, cuda=False, command=cmd, env=dict(os.environ), echo=lambda m: None, progress=False)


def server_restarts_recovered(work: Path, crashes: int = 3) -> dict:
    """A stand-in model server that crashes ``crashes`` times; how many restarts brought it back."""
    from assistant.model.serving import served_models
    from assistant.model.supervisor import Supervisor, read_status, status_path

    work.mkdir(parents=True, exist_ok=True)
    srv = fake_model_server(work / "data", work / "runs", die_after=2.5, die_runs=crashes)
    settings = srv.settings
    with srv:
        sup = Supervisor(srv, status_path(settings.data_dir), backoff_s=(0.5,), poll_s=0.2, say=lambda m: None).start()
        try:
            deadline = time.monotonic() + 120
            while sup.restarts_recovered < crashes and time.monotonic() < deadline:
                time.sleep(0.2)
            time.sleep(1.0)
            answers = served_models(srv.base_url) is not None
            state = read_status(status_path(settings.data_dir)).state
        finally:
            sup.stop()
    return {"crashes": sup.crashes, "server_restarts_recovered": sup.restarts_recovered,
            "answers_after": answers, "state_after": state}
