"""The holes a code review found in the citation contract (#14), each closed and tested through the loop."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from pydantic import BaseModel

from assistant.cli import main
from tests.fake_openai import FakeOpenAI
from tests.test_cli_messages import cli_env  # noqa: F401
from tests.test_loop import Recorder, Router, SearchIn, frame, make_assistant, patched_tools, said  # noqa: F401
from tools.registry import REGISTRY, Tool
from tools.mc_answer import Input as MCInput, Output as MCOutput
from tools.verify_claim import Output as VerifyOutput


class _Table:
    name = "cases.csv"


def _install(monkeypatch, name: str, fn, output_model, input_model=SearchIn) -> None:
    monkeypatch.setitem(REGISTRY, name, Tool(name=name, description=name, fn=fn, input_model=input_model,
                                             output_model=output_model))


async def _ask_about_table(tmp_settings, srv, message: str):
    bot, _ = make_assistant(tmp_settings, srv)
    bot.session.tables["cases.csv"] = _Table()
    bot.session.active_table = "cases.csv"
    return await bot.run_turn(message, Recorder())


class ClaimIn(BaseModel):
    claim: str
    table: str | None = None


async def test_a_verdict_without_valid_cells_is_shown_not_replaced(tmp_settings, fake_llm_server, patched_tools,
                                                                    monkeypatch):
    def verdict_without_cells(ctx, args):
        ctx.evidence.add_table("cases.csv", "Province,Cases", source="cases.csv")  # the collapsed table only
        return VerifyOutput(verdict="REFUTES", table="cases.csv", table_id="T1", cells=[], explanations={},
                            reason="Quebec had 678 cases, not 700.", decided_by="ccoe", citations_valid=False)

    monkeypatch.setitem(REGISTRY, "verify_claim", Tool(name="verify_claim", description="verify",
                                                       fn=verdict_without_cells, input_model=ClaimIn,
                                                       output_model=VerifyOutput))
    router = Router(intents=[frame(task="claim_check", rewrite="Quebec had 700 cases.")])
    with fake_llm_server(router) as srv:
        result = await _ask_about_table(tmp_settings, srv, "Is it true that Quebec had 700 cases?")
    assert "no tool returned evidence" not in result.answer
    assert result.answer.startswith("**Refuted** by table cases.csv: Quebec had 678 cases")
    assert result.status == "unverified" and "cannot be checked" in result.answer and "Unverified" in result.answer


@pytest.mark.parametrize("unstated, status", [(["1995", "2000"], "unverified"), ([], "verified")])
async def test_a_tool_reply_whose_reason_gives_numbers_the_table_lacks_is_not_verified(
        tmp_settings, fake_llm_server, patched_tools, monkeypatch, unstated, status):
    """Found as a new user: "older" with two invented opening years, citing another clinic's name, was shown as
    verified. The table tool names such numbers; the loop does not call that reply verified."""
    def verdict(ctx, args):
        table = ctx.evidence.add_table("cases.csv", "Province,Cases", source="cases.csv")
        cell = ctx.evidence.add_cell("cases.csv", 1, 1, "Quebec", source="cases.csv")
        return VerifyOutput(verdict="SUPPORTS", table="cases.csv", table_id=table.id, cells=[cell.id],
                            explanations={}, reason="Quebec had 1995 cases in 2000.", decided_by="ccoe",
                            unstated_numbers=unstated)

    monkeypatch.setitem(REGISTRY, "verify_claim", Tool(name="verify_claim", description="verify", fn=verdict,
                                                       input_model=ClaimIn, output_model=VerifyOutput))
    router = Router(intents=[frame(task="claim_check", rewrite="Quebec had many cases.")])
    with fake_llm_server(router) as srv:
        result = await _ask_about_table(tmp_settings, srv, "Is it true that Quebec had many cases?")
    assert result.status == status


@pytest.mark.parametrize("citation_by,status", [("code", "cited_by_code"), ("model", "verified")])
async def test_a_code_chosen_citation_is_not_shown_as_the_models(tmp_settings, fake_llm_server, patched_tools,
                                                                 monkeypatch, citation_by, status):
    def judged(ctx, args):
        ev = ctx.evidence.add_sentence("Whales are mammals that breathe air.", source="OpenBookQA")
        return MCOutput(choice="B", answer="whale", cited=[ev.id], evidence=[ev.id], citation_by=citation_by)

    _install(monkeypatch, "mc_answer", judged, MCOutput, MCInput)
    question = "Which of these is a mammal? A) shark B) whale"
    router = Router(intents=[frame(task="multiple_choice", rewrite=question, options=["shark", "whale"])])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn(question, Recorder())
    assert result.cited == ["S1"]
    assert result.status == status  # a citation picked by word overlap is never plain "verified"
    assert ("Citation chosen by word overlap, not by the model" in result.answer) is (citation_by == "code")


class HedgeOut(BaseModel):
    note: str

    def reply(self) -> str:
        return ("Take 500 mg of levodopa twice a day. If symptoms persist, there is not enough information to "
                "say more.")


async def test_a_hedge_does_not_excuse_an_uncited_tool_reply(tmp_settings, fake_llm_server, patched_tools,
                                                             monkeypatch):
    _install(monkeypatch, "text_search", lambda ctx, args: HedgeOut(note="x"), HedgeOut)
    router = Router(intents=[frame(rewrite="How much levodopa should I take?")])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("How much levodopa should I take?", Recorder())
    assert result.status == "unverified" and "⚠ Unverified" in result.answer


@pytest.mark.parametrize("message", ["What dose of warfarin should I take?", "Hi! What treats Parkinson's disease?"])
async def test_a_model_made_chit_chat_label_does_not_skip_the_check(tmp_settings, fake_llm_server, patched_tools,
                                                                    message):
    router = Router(intents=[frame(task="chit_chat", rewrite=message)],
                    answers=[said(("Nothing here.", ["S1"]))])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn(message, Recorder())
    assert result.status != "chit_chat" and result.intent["task"] == "question"
    assert any(s.name == "text_search" for s in result.steps)


def test_the_terminal_says_a_draft_was_withdrawn_and_prints_the_final_answer_once(cli_env, patched_tools):  # noqa: F811
    bad = said(("He scored 40 points in 1999.", ["S2"]))
    question = "Tell me about Wang Zhizhi"
    router = Router(intents=[frame(entities=["Wang Zhizhi"], rewrite=question)], answers=[bad, bad])
    with FakeOpenAI(router) as srv:
        r = CliRunner().invoke(main, ["ask", question], catch_exceptions=False,
                               env={"EVIDENTIA_LLM_BASE_URL": srv.base_url, "EVIDENTIA_LLM_MODEL": "fake-model"})
    # The retry is said with the steps; the draft itself never reaches stdout, which holds the reply as the turn
    # kept it, once (#78: a changed reply was printed again under "Final answer:").
    assert "[draft withdrawn: Support check" in r.stderr
    assert r.stdout.count("He scored 40 points in 1999 [S2]") == 1 and "⚠ Unverified" in r.stdout
    assert "Final answer" not in r.output and "[unverified]" in r.output
