"""Concurrent chat sessions through the turn loop: errors, turn times, lost turns, crossed evidence.

Run on demand::

    .venv/bin/python tests/bench/bench_load.py                 # 20 sessions against the scripted fake server
    .venv/bin/python tests/bench/bench_load.py --real          # and once against the served model

Each session is one conversation of its own, with its own uploaded text naming a project that no other
session knows ("Project Kestrel was started in 1907 by the Amber team."). It asks a question and then an
elliptical follow-up ("Which team started it?"), so memory has to carry the right entity per session. All
sessions share one ``Deps`` (one LLM client, one memory store), as the Chainlit process does.

After the run the memory store is re-opened from disk and every conversation is checked:

- **lost**: a turn that ran but is not stored (or has no user message);
- **crossed**: a stored turn whose evidence, rewrite or answer names another session's project;
- **errors**: a turn whose status is ``error`` or that raised.

Writes ``docs/bench/load.{json,md,png}``; ``tests/bench/bench_reliability.py`` copies the counts into
``docs/bench/reliability.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from assistant.deps import Deps  # noqa: E402
from assistant.llm import LLMClient  # noqa: E402
from assistant.answer.loop import Assistant  # noqa: E402
from tools.contracts import Session  # noqa: E402
from assistant.settings import Settings  # noqa: E402
from tests.fake_openai import FakeOpenAI, Reply  # noqa: E402

CODENAMES = ["Kestrel", "Ocelot", "Marigold", "Tundra", "Quasar", "Juniper", "Basalt", "Heron", "Cobalt",
             "Saffron", "Glacier", "Mongoose", "Zephyr", "Lantern", "Obsidian", "Pelican", "Sequoia", "Walrus",
             "Yarrow", "Thistle", "Falcon", "Granite", "Lynx", "Nimbus"]
TEAMS = ["Amber", "Birch", "Cedar", "Delta", "Ember", "Fjord", "Garnet", "Harbor", "Indigo", "Jasper", "Krypton",
         "Lagoon", "Maple", "Nectar", "Onyx", "Prairie", "Quartz", "Raven", "Sierra", "Topaz", "Umber", "Violet",
         "Willow", "Xenon"]


@dataclass
class Script:
    """What one session knows and asks."""

    index: int
    codename: str
    team: str
    year: int
    conversation_id: str = field(default_factory=lambda: f"load-{uuid.uuid4().hex[:10]}")

    @property
    def text(self) -> str:
        return (f"Project {self.codename} was started in {self.year} by the {self.team} team. "
                f"The {self.team} team works in building {self.index + 1}.")

    @property
    def questions(self) -> list[str]:
        return [f"When was Project {self.codename} started?", "Which team started it?"]


def scripts(n: int) -> list[Script]:
    if n > len(CODENAMES):
        raise SystemExit(f"at most {len(CODENAMES)} sessions (one codename each)")
    return [Script(i, CODENAMES[i], TEAMS[i], 1900 + i) for i in range(n)]


# --- the scripted model ------------------------------------------------------------------------------
class ScriptedModel:
    """Answers like a well-behaved model, from what the request itself carries.

    The intent frame names the project found in the message, or else in the prompt's history (the follow-up);
    the answer quotes the first evidence line that names a project, with its id. Nothing is looked up in the
    bench's own tables, so a crossed history or evidence list shows up as a wrong project in the stored turn.
    """

    def __init__(self, delay_s: float):
        self.delay_s = delay_s

    def __call__(self, req: dict) -> Reply:
        prompt = "\n".join(str(m.get("content") or "") for m in req.get("messages", []))
        schema = ((req.get("response_format") or {}).get("json_schema") or {}).get("name", "")
        if schema == "GroundedAnswer":  # the answer (#14): statements whose citations are evidence ids
            found = self._first_project_line(prompt)
            statements = [{"text": found[1], "cite": [found[0]]}] if found else []
            return Reply(content=json.dumps({"statements": statements}), delay_s=self.delay_s)
        if req.get("response_format"):
            return Reply(content=json.dumps(self._frame(req)), delay_s=self.delay_s)
        if req.get("tools"):  # the loop plans text questions itself; an answer tool call ends any round
            return Reply(tool_calls=[("answer", json.dumps({"text": "No tool was needed."}))], delay_s=self.delay_s)
        found = self._first_project_line(prompt)
        text = f"{found[1]} [{found[0]}]" if found else "The evidence does not say."
        return Reply(content=text, delay_s=self.delay_s)

    @staticmethod
    def _first_project_line(prompt: str) -> tuple[str, str] | None:
        """The first evidence line that names a project: (its id, its text)."""
        line = next((ln for ln in prompt.splitlines() if re.match(r"\s*-?\s*\[S\d+\]", ln) and "Project" in ln), "")
        m = re.search(r"\[(S\d+)\]\s*(.*)", line)
        return (m.group(1), m.group(2).strip()) if m else None

    @staticmethod
    def _frame(req: dict) -> dict:
        user = str(req["messages"][-1].get("content") or "")
        message = user.split("Message:")[-1].strip()
        own = re.findall(r"Project (\w+)", message)
        history = re.findall(r"Project (\w+)", user.split("Message:")[0])
        project = (own or history or [""])[-1]
        rewrite = message if own or not project else f"{message.rstrip('?')} (Project {project})?"
        return {"task": "question", "answer_type": [], "entities": [f"Project {project}"] if project else [],
                "relation": "", "time": "", "location": "", "options": [], "rewrite": rewrite}


# --- one run -----------------------------------------------------------------------------------------
@dataclass
class TurnRow:
    session: int
    question: str
    status: str
    seconds: float
    error: str = ""


async def run_session(deps: Deps, script: Script, rows: list[TurnRow]) -> None:
    session = Session(script.conversation_id, user=f"load-user-{script.index}")
    session.texts.append((f"{script.codename.lower()}.txt", script.text))
    bot = Assistant(deps, session)
    for q in script.questions:
        t0 = time.perf_counter()
        try:
            result = await bot.run_turn(q)
            rows.append(TurnRow(script.index, q, result.status, time.perf_counter() - t0,
                                result.answer if result.status == "error" else ""))
        except Exception as exc:  # noqa: BLE001 - a raised turn is an error to count, not a crash of the bench
            rows.append(TurnRow(script.index, q, "raised", time.perf_counter() - t0, f"{type(exc).__name__}: {exc}"))


def audit(memory_path: Path, plan: list[Script]) -> dict:
    """Re-open the store from disk and count lost and crossed turns per conversation."""
    from memory.store import Memory

    memory = Memory(memory_path)
    lost = crossed = 0
    examples: list[str] = []
    try:
        for s in plan:
            turns = memory.turns(s.conversation_id)
            asked = [t.get("user_text") for t in turns]
            lost += sum(1 for q in s.questions if q not in asked)
            others = [o.codename for o in plan if o.codename != s.codename]
            for t in turns:
                texts = [t.get("rewrite") or "", t.get("answer") or ""]
                texts += [e["text"] for e in memory.turn_evidence(t["id"])]
                named = {o for o in others for x in texts if re.search(rf"\b{o}\b", x)}
                if named:
                    crossed += 1
                    examples.append(f"{s.codename}: turn {t['idx']} names {sorted(named)}")
    finally:
        memory.close()
    return {"lost": lost, "crossed": crossed, "examples": examples[:5]}


async def run(mode: str, n: int, delay_s: float, timeout_s: float) -> dict:
    plan = scripts(n)
    with tempfile.TemporaryDirectory(prefix=f"evidentia-load-{mode}-") as tmp:
        base = Settings(_env_file=None) if mode == "real" else None
        fake = FakeOpenAI(ScriptedModel(delay_s)) if mode == "fake" else None
        if fake:
            fake.__enter__()
        try:
            url = fake.base_url if fake else base.effective_base_url
            model = "fake-model" if fake else base.llm_model
            settings = Settings(_env_file=None, data_dir=Path(tmp) / "data", llm_base_url=url, llm_model=model,
                                llm_timeout_s=timeout_s)
            deps = Deps(settings, llm=LLMClient(settings, base_url=url, model=model))
            rows: list[TurnRow] = []
            t0 = time.perf_counter()
            await asyncio.gather(*[run_session(deps, s, rows) for s in plan])
            wall = time.perf_counter() - t0
            memory_path = settings.memory_path
            deps.memory.close()
            await deps.aclose()
        finally:
            if fake:
                fake.__exit__(None, None, None)
        checked = audit(memory_path, plan)
    times = sorted(r.seconds for r in rows)
    errors = [r for r in rows if r.status in ("error", "raised")]
    p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))] if times else float("nan")
    statuses = {s: sum(1 for r in rows if r.status == s) for s in sorted({r.status for r in rows})}
    out = {"mode": mode, "model": model, "sessions": n, "turns": len(rows), "errors": len(errors),
           "error_examples": [f"session {r.session}: {r.error[:200]}" for r in errors[:3]],
           "turn_median_s": statistics.median(times) if times else float("nan"), "turn_p95_s": p95,
           "wall_s": wall, "lost_turns": checked["lost"], "crossed_turns": checked["crossed"],
           "crossed_examples": checked["examples"], "statuses": statuses,
           # What each user saw: their turns' times and statuses, in order.
           "per_session": {str(i): [(r.seconds, r.status) for r in rows if r.session == i] for i in range(n)}}
    print(json.dumps(out, indent=2), flush=True)
    return out


def write(results: list[dict]) -> None:
    from assistant.evals.report import write_bench

    metrics: dict[str, tuple[float, str]] = {}
    for r in results:
        sfx = "" if r["mode"] == "fake" else "_real"
        metrics.update({
            f"concurrent_sessions{sfx}": (r["sessions"], "count"),
            f"concurrent_errors{sfx}": (r["errors"], "count"),
            f"lost_turns{sfx}": (r["lost_turns"], "count"),
            f"crossed_turns{sfx}": (r["crossed_turns"], "count"),
            f"turn_median_s{sfx}": (r["turn_median_s"], "s"),
            f"turn_p95_s{sfx}": (r["turn_p95_s"], "s"),
        })
    lines = []
    for r in results:
        what = "the scripted fake server" if r["mode"] == "fake" else f"the served model `{r['model']}`"
        lines.append(f"- **{r['mode']}** ({what}): {r['sessions']} sessions × 2 turns at once, {r['turns']} turns in "
                     f"{r['wall_s']:.1f} s; errors {r['errors']}, lost {r['lost_turns']}, crossed "
                     f"{r['crossed_turns']}; statuses {r['statuses']}; turn median {r['turn_median_s']:.2f} s, "
                     f"p95 {r['turn_p95_s']:.2f} s." + (f" Errors: {r['error_examples']}" if r["errors"] else ""))
        if r["mode"] == "real" and r.get("per_session"):
            lines += [f"  - user {int(i) + 1}: " + ", ".join(f"turn {k + 1} {sec:.1f} s ({st})"
                                                            for k, (sec, st) in enumerate(turns))
                      for i, turns in r["per_session"].items()]
    notes = ("One `Deps` shared by every session (as in the Chainlit process), the real loop and tools, each "
             "session with its own uploaded text and a follow-up that needs its own memory. After the run the "
             "store is re-opened from disk; a turn is *lost* if its question is not stored, *crossed* if its "
             "rewrite, answer or evidence names another session's project.\n\n" + "\n".join(lines) +
             "\n\nCommand: `.venv/bin/python tests/bench/bench_load.py [--real [--real-sessions N]]`.")
    write_bench("load", metrics, notes=notes)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--delay", type=float, default=0.3, help="the fake server's seconds per request")
    ap.add_argument("--real", action="store_true", help="also run once against the served model")
    ap.add_argument("--real-sessions", type=int, default=None,
                    help="sessions of the real run (default: --sessions); e.g. 4 users on one CPU server")
    ap.add_argument("--timeout", type=float, default=900.0, help="per LLM request, seconds (real mode)")
    args = ap.parse_args()
    results = [asyncio.run(run("fake", args.sessions, args.delay, args.timeout))]
    if args.real:
        results.append(asyncio.run(run("real", args.real_sessions or args.sessions, args.delay, args.timeout)))
    write(results)


if __name__ == "__main__":
    main()
