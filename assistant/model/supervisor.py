"""Watch the model server that ``evidentia run`` started, and bring it back when it dies.

A crash is logged with the tail of vLLM's log and the server is restarted with back-off, at most
``max_restarts`` times in ``window_s`` (3 in 10 minutes by default); past that it stays down and the
failure is reported. The state is written to a small JSON file in the data folder, which the UI (a
separate process) reads before each turn to show a banner and hold the question until the model is back.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Literal

from assistant.model.serving import LocalServer, ServingError

log = logging.getLogger(__name__)

ServerState = Literal["ready", "restarting", "failed", "stopped"]
STATUS_FILE = "model-server.json"


@dataclass
class ServerStatus:
    state: ServerState
    attempt: int = 0
    max_attempts: int = 0
    message: str = ""
    pid: int | None = None
    updated_at: float = 0.0

    def banner(self) -> str:
        if self.state == "restarting":
            return (f"The model server stopped and is restarting (attempt {self.attempt} of {self.max_attempts}); "
                    "your question will run when it is back.")
        if self.state == "failed":
            return f"The model server is down and was not restarted: {self.message}"
        return ""


def status_path(data_dir: Path) -> Path:
    return Path(data_dir) / STATUS_FILE


def write_status(path: Path, status: ServerStatus) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    tmp.write_text(json.dumps(asdict(status)))
    tmp.replace(path)  # readers never see half a file


def read_status(path: Path) -> ServerStatus | None:
    """The supervisor's last word, or None when no supervised server runs (an external server, tests)."""
    try:
        data = json.loads(Path(path).read_text())
        status = ServerStatus(**data)
    except (OSError, ValueError, TypeError):
        return None
    # A status left by a supervisor that is gone says nothing about now.
    if status.state in ("ready", "restarting") and status.pid and not _alive(status.pid):
        return None
    return status


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Supervisor:
    """A thread that polls the server process and restarts it after a crash."""

    def __init__(self, server: LocalServer, status_file: Path, *, max_restarts: int = 3, window_s: float = 600.0,
                 backoff_s: tuple[float, ...] = (2.0, 10.0, 30.0), poll_s: float = 2.0,
                 say: Callable[[str], None] | None = None, clock: Callable[[], float] = time.monotonic):
        self.server = server
        self.status_file = Path(status_file)
        self.max_restarts = max_restarts
        self.window_s = window_s
        self.backoff_s = backoff_s
        self.poll_s = poll_s
        self.say = say or (lambda m: log.warning(m))
        self.clock = clock
        self.restarts_recovered = 0
        self.crashes = 0
        self._restarts: deque[float] = deque()
        self._stop = threading.Event()
        # Held while a restart launches a process, so a stop never races a launch and leaves a server behind.
        self._launching = threading.Lock()
        self._thread: threading.Thread | None = None

    # -- life cycle ------------------------------------------------------------------------------
    def start(self) -> "Supervisor":
        self._write("ready")
        self._thread = threading.Thread(target=self._watch, name="model-server-supervisor", daemon=True)
        self._thread.start()
        return self

    def stop(self, join_s: float = 2.0) -> None:
        """Stop watching; return quickly (the caller then stops the server itself).

        After this no restart is launched, and a launch under way has finished, so the caller's
        ``server.stop()`` ends whatever process there is. A thread still waiting for that server to
        answer gives up once it is stopped.
        """
        self._stop.set()
        with self._launching:
            pass
        if self._thread is not None:
            self._thread.join(timeout=join_s)
        self._write("stopped")

    @property
    def state(self) -> ServerState:
        status = read_status(self.status_file)
        return status.state if status else "stopped"

    # -- the watch ---------------------------------------------------------------------------------
    def _watch(self) -> None:
        while not self._stop.wait(self.poll_s):
            proc = self.server.proc
            code = proc.poll() if proc is not None else None
            if proc is None or code is None:
                continue
            if proc is not self.server.proc or self._stop.is_set():
                continue  # stopped on purpose (Ctrl-C, SIGTERM) between our two looks: not a crash
            self.crashes += 1
            tail = self.server.log_tail(20)
            self.say(f"The model server (pid {proc.pid}) exited with code {code}. Last lines of "
                     f"{self.server.log_path}:\n{tail}")
            if not self._recover():
                return

    def _recover(self) -> bool:
        """Restart with back-off until the server answers; False once the restart budget is spent."""
        while not self._stop.is_set():
            now = self.clock()
            while self._restarts and now - self._restarts[0] > self.window_s:
                self._restarts.popleft()
            if len(self._restarts) >= self.max_restarts:
                message = (f"it crashed {len(self._restarts) + 1} times within {self.window_s / 60:.0f} minutes; "
                           f"see {self.server.log_path}, then restart `evidentia run`.")
                self.say("Giving up on the model server: " + message)
                self._write("failed", message=message)
                return False
            self._restarts.append(now)
            attempt = len(self._restarts)
            self._write("restarting", attempt=attempt)
            delay = self.backoff_s[min(attempt - 1, len(self.backoff_s) - 1)]
            self.say(f"Restarting the model server in {delay:.0f} s (attempt {attempt} of {self.max_restarts}).")
            if self._stop.wait(delay):
                return False
            try:
                with self._launching:
                    if self._stop.is_set():
                        return False
                    self.server.restart()
                self.server.wait_ready()
            except ServingError as exc:
                if self._stop.is_set():
                    return False
                self.say(f"The model server did not come back: {exc}")
                continue
            self.restarts_recovered += 1
            self.say(f"The model server is back (pid {self.server.pid}).")
            self._write("ready")
            return True
        return False

    def _write(self, state: ServerState, *, attempt: int = 0, message: str = "") -> None:
        write_status(self.status_file, ServerStatus(state=state, attempt=attempt, max_attempts=self.max_restarts,
                                                    message=message, pid=os.getpid(), updated_at=time.time()))
