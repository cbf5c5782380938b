"""The UI's Retry button re-asks a stored failed question of this conversation only (#17).

Runs in a subprocess because Chainlit's config is process-global (see test_app_handlers.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = r"""
import asyncio, json, sys
import assistant.ui.app as app
from memory.store import Memory
from tools.contracts import Session

mem = Memory(sys.argv[1])
mine = mem.ensure_conversation("mine", user="ann")
other = mem.ensure_conversation("other", user="bob")
t_mine = mem.record_turn(mine, user_text="What treats gout?", answer="", status="error", intent=None, evidence=[],
                         cited=[], valid_ids=set(), tool_calls=[], timings={}, error="cannot be reached")
t_other = mem.record_turn(other, user_text="bob's secret question", answer="", status="error", intent=None,
                          evidence=[], cited=[], valid_ids=set(), tool_calls=[], timings={}, error="x")

class Deps:
    memory = mem
class Bot:
    deps = Deps()
    session = Session("mine", user="ann")

sent, asked = [], []
class FakeMessage:
    def __init__(self, content="", **kw):
        self.content = content
    async def send(self):
        sent.append(self.content)
async def fake_answer(bot, text):
    asked.append(text)
class Action:
    def __init__(self, payload): self.payload = payload

app._assistant = lambda: Bot()
app.answer = fake_answer
app.cl.Message = FakeMessage

async def main():
    await app.on_retry(Action({"turn": t_other}))   # another conversation's failed turn
    await app.on_retry(Action({"turn": "../../etc"}))
    await app.on_retry(Action("junk"))
    refused = list(asked)
    await app.on_retry(Action({"turn": t_mine}))
    print("JSON" + json.dumps({"refused_asks": refused, "asked": asked, "sent": sent}))
asyncio.run(main())
"""


def test_retry_reasks_only_this_conversations_question(tmp_path):
    env = dict(os.environ, EVIDENTIA_DATA_DIR=str(tmp_path / "data"), EVIDENTIA_LLM_BASE_URL="http://127.0.0.1:9/v1",
               CHAINLIT_AUTH_SECRET="test-secret")
    env.pop("EVIDENTIA_AUTH_PASSWORD", None)
    proc = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "m.db")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads([ln for ln in proc.stdout.splitlines() if ln.startswith("JSON")][-1][4:])
    assert out["refused_asks"] == []
    assert out["asked"] == ["What treats gout?"]
    assert not any("bob's secret" in m for m in out["sent"])
    assert sum("not in this conversation" in m for m in out["sent"]) == 3
