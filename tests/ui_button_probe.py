"""The upload message and its buttons, driven without a browser: a fake Chainlit in a child process.

``assistant.ui.app`` is imported in a fresh interpreter (it configures Chainlit at import), its Chainlit calls are
replaced by recorders, and a probe ``body`` (Python source) drives ``acknowledge_table`` and the button callbacks.
The body sees ``sent`` (each message's content, button labels and payloads), ``loads`` (each file read, with the sheet,
replaced name and decimal mark asked for), ``Action`` (a button click's payload), ``load_table``, ``app`` and
``sys.argv[1]``, and prints one line ``JSON{...}`` that :func:`run_probe` returns.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PRELUDE = r"""
import asyncio, json, sys
from pathlib import Path
import assistant.ui.app as app
from assistant.ui.upload_registry import UploadRegistry
from tools.contracts import Session
from kb.tables import load_table

sent, loads = [], []
class FakeMessage:
    def __init__(self, content="", elements=None, actions=None, **kw):
        self.content, self.actions = content, actions or []
    async def send(self):
        sent.append({"content": self.content, "labels": [a.label for a in self.actions],
                     "payloads": [a.payload for a in self.actions]})
        return self

class FakeBot:
    deps = None
    session = Session("c1", user="ann")

def fake_add_table_file(deps, session, path, *, name, sheet=None, replace=None, decimal=None):
    loads.append({"path": str(path), "sheet": sheet, "replace": replace, "decimal": decimal})
    return load_table(path, name=name, sheet=sheet, decimal=decimal)

class FakeAction:  # the real ones need a live Chainlit context
    def __init__(self, name, label="", tooltip="", payload=None):
        self.name, self.label, self.payload = name, label, payload

class Action:
    def __init__(self, payload): self.payload = payload

registry = UploadRegistry()
app._uploads = lambda: registry
app._assistant = lambda: FakeBot()
app.add_table_file = fake_add_table_file
app.cl.Message = FakeMessage
app.cl.Action = FakeAction
app.cl.Dataframe = lambda **kw: None
"""


def run_probe(body: str, arg: Path, tmp_path: Path) -> dict:
    """Run ``body`` after the fake Chainlit, with ``arg`` as its argument; the JSON it printed."""
    env = dict(os.environ, EVIDENTIA_DATA_DIR=str(tmp_path / "data"), EVIDENTIA_LLM_BASE_URL="http://127.0.0.1:9/v1",
               CHAINLIT_AUTH_SECRET="test-secret")
    env.pop("EVIDENTIA_AUTH_PASSWORD", None)
    proc = subprocess.run([sys.executable, "-c", PRELUDE + body, str(arg)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads([ln for ln in proc.stdout.splitlines() if ln.startswith("JSON")][-1][4:])
