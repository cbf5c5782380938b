"""No lost turns (#17): the question is stored when a turn starts and its outcome when it ends.

The model server is killed mid-turn (the scripted fake server shuts itself down while answering), the
turn is cancelled, or the app process itself is killed; after a "restart" (a new Memory on the same file)
the conversation still holds the question, the failure and the evidence of the tools that ran.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from assistant.answer.turn import Step, TurnHooks
from memory.store import Memory
from tests.fake_openai import FakeOpenAI, Reply, tool_reply
from tests.reliability_probes import killed_app_turn
from tests.test_loop import Router, frame, make_assistant, patched_tools, said  # noqa: F401

QUESTION = "When did Wang Zhizhi join the NBA?"


class DiesWhileAnswering:
    """Answers the intent, then the server is killed while the answer is being generated."""

    def __init__(self, server_box: list, die_on: str = "answer"):
        self.router = Router(intents=[frame(entities=["Wang Zhizhi", "NBA"], rewrite=QUESTION)],
                             answers=[said(("In 2001.", ["S1"]))])
        self.box, self.die_on = server_box, die_on

    def __call__(self, req):
        kind = "answer" if req.get("stream") else "intent"
        if kind == self.die_on:
            srv = self.box[0]
            threading.Thread(target=srv.__exit__, args=(None, None, None), daemon=True).start()
            raise ConnectionAbortedError("the model server was killed")  # the connection drops mid-request
        return self.router(req)


class StepLog(TurnHooks):
    def __init__(self):
        self.ended: list[Step] = []

    async def step_end(self, step):
        self.ended.append(step)


@pytest.mark.parametrize("die_on,stage", [("answer", "answer"), ("intent", "intent")])
async def test_a_server_killed_mid_turn_loses_nothing(tmp_settings, patched_tools, die_on, stage):
    box: list = []
    srv = FakeOpenAI(DiesWhileAnswering(box, die_on=die_on))
    box.append(srv)
    srv.__enter__()
    bot, deps = make_assistant(tmp_settings, srv, conversation="killed")
    hooks = StepLog()
    result = await bot.run_turn(QUESTION, hooks)

    assert result.status == "error" and result.error_kind == "llm_unavailable"
    assert "cannot be reached" in result.answer and f"during the {stage} step" in result.answer
    # and why: a server that closed the connection mid-request is not one that was never started
    assert f"during the {stage} step: the server closed the connection." in result.answer
    assert "/retry" in result.answer
    if die_on == "intent":  # the step that did not finish is shown as failed, never as "✓ … nothing"
        assert hooks.ended[0].name == "intent" and hooks.ended[0].error

    # "Restart": a new store on the same file still has the question, the failure and the evidence gathered.
    deps.memory.close()
    again = Memory(tmp_settings.memory_path)
    turns = again.turns("killed")
    assert [t["user_text"] for t in turns] == [QUESTION]
    assert turns[0]["status"] == "error" and "cannot be reached" in turns[0]["error"]
    assert again.last_failed_turn("killed")["id"] == result.turn_id
    if die_on == "answer":
        assert {e["evidence_id"] for e in again.turn_evidence(result.turn_id)} == {"S1", "S2"}
        assert [c["name"] for c in again.turn_tool_calls(result.turn_id)] == ["intent", "text_search"]


async def test_a_cancelled_turn_is_kept_as_interrupted(tmp_settings, patched_tools):
    router = Router(intents=[frame(entities=["Wang Zhizhi", "NBA"], rewrite=QUESTION)])

    def slow(req):
        if not req.get("stream"):
            return router(req)
        return Reply(content=said(("In 2001.", ["S1"])), delay_s=30)

    with FakeOpenAI(slow) as srv:
        bot, deps = make_assistant(tmp_settings, srv, conversation="cancelled")
        task = asyncio.create_task(bot.run_turn(QUESTION))
        for _ in range(200):
            await asyncio.sleep(0.05)
            if len(srv.requests) >= 2:  # the answer request is in flight
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    turns = Memory(tmp_settings.memory_path).turns("cancelled")
    assert [(t["user_text"], t["status"]) for t in turns] == [(QUESTION, "interrupted")]
    assert "answer step" in turns[0]["error"]


async def test_tools_of_earlier_model_rounds_are_kept_when_the_server_dies(tmp_settings, patched_tools):
    # Round 1: the model calls text_search (evidence S1, S2); round 2: the server is killed.
    box: list = []
    router = Router(intents=[frame(task="command", rewrite="/investigate wang")],
                    tool_turns=[tool_reply("text_search", {"query": "wang"})])

    def handler(req):
        if req.get("tools") and not router.tool_turns:
            threading.Thread(target=box[0].__exit__, args=(None, None, None), daemon=True).start()
            raise ConnectionAbortedError("the model server was killed")
        return router(req)

    srv = FakeOpenAI(handler)
    box.append(srv)
    srv.__enter__()
    tmp_settings.max_tool_rounds = 4
    bot, deps = make_assistant(tmp_settings, srv, conversation="rounds")
    result = await bot.run_turn("/investigate wang")
    assert result.status == "error" and "during the tools step" in result.answer
    assert [s.name for s in result.steps] == ["intent", "text_search"]
    deps.memory.close()
    again = Memory(tmp_settings.memory_path)
    assert [(c["name"], c["origin"], c["error"]) for c in again.turn_tool_calls(result.turn_id)] == [
        ("intent", "plan", ""), ("text_search", "model", "")]
    assert {e["evidence_id"] for e in again.turn_evidence(result.turn_id)} == {"S1", "S2"}


async def test_a_step_cut_off_by_cancellation_is_shown_and_kept_as_failed(tmp_settings, patched_tools):
    with FakeOpenAI(lambda req: Reply(content="{}", delay_s=30)) as srv:
        bot, deps = make_assistant(tmp_settings, srv, conversation="cut")
        hooks = StepLog()
        task = asyncio.create_task(bot.run_turn(QUESTION, hooks))
        for _ in range(200):
            await asyncio.sleep(0.05)
            if srv.requests:  # the intent request is in flight
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    # Never "✓ intent: nothing": the front end is told the step did not finish.
    assert [(s.name, s.error) for s in hooks.ended] == [("intent", "interrupted before it finished")]
    turns = Memory(tmp_settings.memory_path).turns("cut")
    assert [(t["user_text"], t["status"]) for t in turns] == [(QUESTION, "interrupted")]
    calls = deps.memory.turn_tool_calls(turns[0]["id"])
    assert [(c["name"], c["error"]) for c in calls] == [("intent", "interrupted before it finished")]


def test_a_killed_app_process_leaves_the_question_marked_interrupted(tmp_path):
    # The fake model never answers the intent request; the app process is killed -9 while it waits.
    run = killed_app_turn(tmp_path / "data", question=QUESTION)
    assert run["started"] and run["killed_in_flight"], run["stderr"]
    turns = Memory(tmp_path / "data" / "memory.db").turns("app-killed")
    assert [(t["user_text"], t["status"]) for t in turns] == [(QUESTION, "interrupted")]
    assert "cut off" in turns[0]["error"]


def test_a_running_turn_of_a_live_process_is_not_called_interrupted(tmp_path):
    mem = Memory(tmp_path / "m.db")
    cid = mem.ensure_conversation("live")
    mem.begin_turn(cid, "still thinking")
    assert [t["status"] for t in mem.turns(cid)] == ["running"]
    assert mem.turns(cid, finished=True) == [] and mem.last_failed_turn(cid) is None


def test_a_dead_turn_whose_pid_was_reused_reads_as_interrupted(tmp_path):
    # After a container restart the new app often has the old app's pid: the start time tells them apart.
    mem = Memory(tmp_path / "m.db")
    cid = mem.ensure_conversation("reused")
    turn_id = mem.begin_turn(cid, "asked before the restart")
    mem.db["turns"].update(turn_id, {"pid_started": mem.db["turns"].get(turn_id)["pid_started"] - 3600})
    turns = mem.turns(cid)
    assert [(t["user_text"], t["status"]) for t in turns] == [("asked before the restart", "interrupted")]
    assert mem.last_failed_turn(cid)["id"] == turn_id
