"""The supervised model server (#17): a crash is logged and restarted with back-off, at most 3 times in
10 minutes, then reported; a clean stop ends even a server that ignores SIGTERM within 10 s.

A small Python HTTP server stands in for vLLM (it answers GET /v1/models and dies when told to).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from assistant.cli.chat_cli import shut_down
from assistant.model.serving import LocalServer, ServerHandle, served_models
from assistant.model.supervisor import ServerStatus, Supervisor, read_status, status_path, write_status
from tests.reliability_probes import fake_model_server
from tests.test_serving import alive

ROOT = Path(__file__).resolve().parents[1]


def fake(tmp_path, *, die_after: float, die_runs: int, ignore_term: bool = False,
         slow_restart: bool = False) -> LocalServer:
    return fake_model_server(tmp_path / "data", tmp_path / "runs", die_after=die_after, die_runs=die_runs,
                             ignore_term=ignore_term, slow_restart=slow_restart)


def wait_for(cond, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return False


def test_a_crashed_server_is_logged_and_restarted(tmp_path):
    srv = fake(tmp_path, die_after=2.5, die_runs=1)
    said: list[str] = []
    status_file = status_path(tmp_path / "data")
    with srv:
        first_pid = srv.pid
        sup = Supervisor(srv, status_file, backoff_s=(0.2,), poll_s=0.1, say=said.append).start()
        try:
            assert wait_for(lambda: sup.restarts_recovered == 1)
            assert srv.pid != first_pid and served_models(srv.base_url) == ["m"]
            assert read_status(status_file).state == "ready"
            time.sleep(1.0)  # the second run does not die: no further restarts
            assert sup.crashes == 1 and sup.restarts_recovered == 1
        finally:
            sup.stop()
    crash = next(m for m in said if "exited with code 17" in m)
    assert "simulated crash" in crash  # the log's tail comes with the report
    assert any("attempt 1 of 3" in m for m in said)
    assert read_status(status_file).state == "stopped"


def test_restarts_are_capped_then_reported(tmp_path):
    srv = fake(tmp_path, die_after=2.5, die_runs=99)
    said: list[str] = []
    status_file = status_path(tmp_path / "data")
    with srv:
        sup = Supervisor(srv, status_file, max_restarts=3, window_s=600, backoff_s=(0.1, 0.2, 0.3), poll_s=0.1,
                         say=said.append).start()
        try:
            assert wait_for(lambda: (read_status(status_file) or ServerStatus("ready")).state == "failed", 60)
        finally:
            sup.stop()
        assert sup.crashes == 4 and sup.restarts_recovered == 3
        assert int((tmp_path / "runs").read_text()) == 4  # the first start and three restarts, no more
    status_lines = [m for m in said if m.startswith("Giving up")]
    assert len(status_lines) == 1 and "4 times within 10 minutes" in status_lines[0]


def test_status_file_banner_and_staleness(tmp_path):
    path = status_path(tmp_path)
    write_status(path, ServerStatus("restarting", attempt=2, max_attempts=3, pid=os.getpid()))
    status = read_status(path)
    assert status.state == "restarting" and "attempt 2 of 3" in status.banner()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    write_status(path, ServerStatus("restarting", attempt=1, max_attempts=3, pid=dead.pid))
    assert read_status(path) is None  # left behind by a supervisor that is gone
    path.write_text("{not json")
    assert read_status(path) is None


def test_a_clean_stop_ends_a_server_that_ignores_sigterm_within_10_s(tmp_path):
    srv = fake(tmp_path, die_after=-1, die_runs=0, ignore_term=True)
    srv.start()
    srv.wait_ready()
    pid = srv.pid
    t0 = time.monotonic()
    srv.stop()
    took = time.monotonic() - t0
    assert took < 10.0, took
    assert wait_for(lambda: not alive(pid), 2)


# Stands in for the Chainlit process: it ignores SIGTERM, so only the SIGKILL after the grace ends it.
STUBBORN_UI = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); "
               "time.sleep(120)")


def test_run_stops_the_ui_and_a_server_that_both_ignore_sigterm_within_10_s(tmp_path):
    srv = fake(tmp_path, die_after=-1, die_runs=0, ignore_term=True)
    srv.start()
    srv.wait_ready()
    server_pid = srv.pid
    sup = Supervisor(srv, status_path(tmp_path / "data"), poll_s=0.1, say=lambda m: None).start()
    ui = subprocess.Popen([sys.executable, "-c", STUBBORN_UI], stdout=subprocess.PIPE, text=True)
    assert ui.stdout.readline().strip() == "up"
    t0 = time.monotonic()
    shut_down(ui, ServerHandle(srv.base_url, "m", server=srv), sup)
    took = time.monotonic() - t0
    assert took < 10.0, took
    assert ui.poll() is not None and wait_for(lambda: not alive(server_pid), 2)
    time.sleep(0.5)
    assert sup.crashes == 0 and sup.restarts_recovered == 0  # a stop is not a crash: nothing restarted
    assert int((tmp_path / "runs").read_text()) == 1


def test_a_stop_during_a_restart_leaves_no_server_behind(tmp_path):
    # The first run crashes; the restart takes 30 s to answer (like vLLM loading); the app stops meanwhile.
    srv = fake(tmp_path, die_after=2.5, die_runs=1, slow_restart=True)
    said: list[str] = []
    with srv:
        sup = Supervisor(srv, status_path(tmp_path / "data"), backoff_s=(0.1,), poll_s=0.1, say=said.append).start()
        assert wait_for(lambda: (tmp_path / "runs").read_text() == "2", 30)  # the restart was launched
        restarted_pid = srv.pid
        t0 = time.monotonic()
        shut_down(None, ServerHandle(srv.base_url, "m", server=srv), sup)
        assert time.monotonic() - t0 < 10.0
        assert not sup._thread.is_alive() or wait_for(lambda: not sup._thread.is_alive(), 5)
    assert wait_for(lambda: not alive(restarted_pid), 2)
    time.sleep(1.0)
    assert (tmp_path / "runs").read_text() == "2" and srv.proc is None  # nothing started after the stop
    assert sup.restarts_recovered == 0 and not any("did not come back" in m for m in said)


UI_BANNER = r"""
import asyncio, json, os, sys, threading, time
from pathlib import Path
import assistant.ui.app as app
from assistant.settings import Settings
from assistant.model.supervisor import ServerStatus, status_path, write_status

settings = Settings(_env_file=None, data_dir=Path(sys.argv[1]))
path = status_path(settings.data_dir)
shown = []
class FakeMessage:
    def __init__(self, content="", **kw): self.content = content
    async def send(self): shown.append(("send", self.content))
    async def update(self): shown.append(("update", self.content))
app.cl.Message = FakeMessage

async def main():
    await app.wait_for_model_server(settings, poll_s=0.05)     # no supervisor: nothing shown
    write_status(path, ServerStatus("restarting", attempt=1, max_attempts=3, pid=os.getpid()))
    def back():
        time.sleep(0.5)
        write_status(path, ServerStatus("ready", pid=os.getpid()))
    threading.Thread(target=back).start()
    t0 = time.monotonic()
    await app.wait_for_model_server(settings, poll_s=0.05)
    print("JSON" + json.dumps({"shown": shown, "held_s": time.monotonic() - t0}))
asyncio.run(main())
"""


def test_the_ui_shows_a_banner_and_holds_the_question_while_restarting(tmp_path):
    env = dict(os.environ, EVIDENTIA_DATA_DIR=str(tmp_path / "data"), EVIDENTIA_LLM_BASE_URL="http://127.0.0.1:9/v1",
               CHAINLIT_AUTH_SECRET="test-secret")
    proc = subprocess.run([sys.executable, "-c", UI_BANNER, str(tmp_path / "data")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads([ln for ln in proc.stdout.splitlines() if ln.startswith("JSON")][-1][4:])
    assert [kind for kind, _ in out["shown"]] == ["send", "update"]
    assert "restarting (attempt 1 of 3)" in out["shown"][0][1] and "back" in out["shown"][1][1]
    assert out["held_s"] >= 0.4

