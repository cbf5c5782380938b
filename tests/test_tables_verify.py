"""Claim verification and table QA against a scripted model (and one real-model check)."""

from __future__ import annotations

import json
import random
import re
import threading

import pytest

from assistant.deps import Deps
from tools.contracts import EvidenceLedger
from assistant.llm import LLMClient
from tools.contracts import Session
from tests.fake_openai import Reply
from tests.program_votes import vote_problems, work
from tests.test_tables_filter import MEASLES, BagOfWordsEmbedder
from tools import ToolContext, ToolError
from tools._table_llm import CELL_PATTERN, CollapsedView, cited_cells_schema_extra
from tools.table_qa import Input as QAInput
from tools.table_qa import answer_question, table_qa
from tools.verify_claim import LABELS, Input, check_claim, judgement_schema, verify_claim

CLAIM = "Quebec had 678 cases of measles in 2011."


def _is_judge(req: dict) -> bool:
    return "response_format" in req


def _prompt(req: dict) -> str:
    return req["messages"][-1]["content"]


def scripted(judge: dict, explanations: int = 3):
    """A handler: explanation requests must arrive together (a barrier), the judge gets ``judge``."""
    barrier = threading.Barrier(explanations, timeout=10) if explanations else None

    def handler(req):
        if _is_judge(req):
            return Reply(content=json.dumps(judge))
        barrier.wait()  # breaks (-> HTTP 500) unless all explanation requests are in flight at once
        return Reply(content="Assuming this label, R5C3 shows 678 and R5C2 shows 2011.")

    return handler


def _ctx(settings, srv, table=MEASLES):
    deps = Deps(settings, llm=LLMClient(settings, base_url=srv.base_url, model="fake-model"))
    deps.__dict__["embedder"] = BagOfWordsEmbedder()
    session = Session("c1")
    session.add_table(table)
    return ToolContext(deps=deps, evidence=EvidenceLedger(), session=session)


async def test_verdict_parsed_cells_checked_explanations_concurrent(tmp_settings, fake_llm_server):
    judge = {"label": "SUPPORTS", "cited_cells": ["R5C3", "R5C2", "R9C9", "nonsense"], "reason": "Row 5 says 678."}
    with fake_llm_server(scripted(judge)) as srv:
        ctx = _ctx(tmp_settings, srv)
        # The CCoE path, chosen explicitly: the default variant is now "program" (tests/test_table_program.py).
        out = await verify_claim(ctx, Input(claim=CLAIM, variant="full"))
    assert out.verdict == "SUPPORTS" and out.reason.startswith("Row 5 says 678")
    assert out.cells == ["T1:R5C3", "T1:R5C2"]
    assert out.invalid_citations == ["R9C9", "nonsense"] and out.citations_valid
    cell = ctx.evidence.get("T1:R5C3")
    assert cell.text == "678" and cell.meta["header"] == "Number of cases" and cell.meta["row_label"] == "Quebec"
    table_ev = ctx.evidence.get("T1")
    assert table_ev.kind == "table" and "R5C3" in table_ev.meta["highlighted"]
    meta = table_ev.meta
    assert meta["columns"] == [MEASLES.columns[c - 1] for c in meta["col_numbers"]]
    assert len(meta["rows"]) == len(meta["row_numbers"]) and 5 in meta["row_numbers"]
    r5 = meta["rows"][meta["row_numbers"].index(5)]
    assert r5[meta["col_numbers"].index(3)] == "678"
    assert set(out.explanations) == set(LABELS)
    explain_reqs = [r for r in srv.requests if r.get("messages") and not _is_judge(r)]
    judge_reqs = [r for r in srv.requests if _is_judge(r)]
    assert len(explain_reqs) == 3 and len(judge_reqs) == 1
    assert {lab for lab in LABELS if any(f"({lab})" in _prompt(r) for r in explain_reqs)} == set(LABELS)
    schema = judge_reqs[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["label"]["enum"] == list(LABELS)
    # the judge saw the three explanations
    assert _prompt(judge_reqs[0]).count("Assuming") >= 3


async def test_cells_outside_the_collapsed_table_are_rejected(tmp_settings, fake_llm_server):
    llm_judge = {"label": "REFUTES", "cited_cells": [], "reason": "x"}
    with fake_llm_server(scripted(llm_judge)) as srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        first = await check_claim(llm, MEASLES, CLAIM, embedder=BagOfWordsEmbedder(), variant="full")
        dropped = [c for c in range(1, MEASLES.n_cols + 1) if c not in first.cols]
        assert dropped, "the filter should drop something in this table"
        llm_judge["cited_cells"] = [f"R1C{dropped[0]}", "R0C1", "R6C1"]
        second = await check_claim(llm, MEASLES, CLAIM, embedder=BagOfWordsEmbedder(), variant="full")
    assert second.label == "REFUTES" and second.cells == []
    assert second.invalid_cells == [f"R1C{dropped[0]}", "R0C1", "R6C1"]
    assert second.citations_valid is False
    # the server's grammar was told which cells exist: exactly the collapsed view's
    pattern = [r for r in srv.requests if _is_judge(r)][-1]["response_format"]["json_schema"]["schema"][
        "properties"]["cited_cells"]["items"]["pattern"]
    assert re.fullmatch(pattern, "R5C3") and not re.fullmatch(pattern, f"R1C{dropped[0]}")


def test_cell_pattern_matches_exactly_the_cells_shown():
    rng = random.Random(7)
    for _ in range(20):
        cols = sorted(rng.sample(range(1, MEASLES.n_cols + 1), rng.randint(1, MEASLES.n_cols)))
        rows = sorted(rng.sample(range(1, MEASLES.n_rows + 1), rng.randint(1, MEASLES.n_rows)))
        view = CollapsedView.build(MEASLES, cols, rows)
        pattern = re.compile(view.cell_pattern())
        for r in range(0, MEASLES.n_rows + 12):  # R1 vs R10, R11: alternation must not accept prefixes
            for c in range(0, MEASLES.n_cols + 12):
                assert bool(pattern.fullmatch(f"R{r}C{c}")) == view.contains(r, c), (r, c, view.cell_pattern())
        assert not pattern.fullmatch(f"R{rows[0]}C{cols[0]} ") and not pattern.fullmatch("")
    empty = CollapsedView.build(MEASLES, [1], [])
    extra = cited_cells_schema_extra(empty.cell_pattern())
    assert extra["maxItems"] == 0 and not re.fullmatch(extra["items"]["pattern"], "R1C1")


@pytest.mark.parametrize("variant, n_requests, sees_all_columns", [
    ("no-ccoe", 1, False), ("direct", 1, True), ("no-filter", 4, True), ("full", 4, False)])
async def test_variants(tmp_settings, fake_llm_server, variant, n_requests, sees_all_columns):
    judge = {"label": "NOT ENOUGH INFO", "cited_cells": ["R1C1"], "reason": "x"}
    with fake_llm_server(scripted(judge)) as srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        check = await check_claim(llm, MEASLES, CLAIM, embedder=BagOfWordsEmbedder(), variant=variant)
    chat = [r for r in srv.requests if r.get("messages")]
    assert len(chat) == n_requests and check.label == "NOT ENOUGH INFO" and check.cells == [(1, 1)]
    judge_prompt = _prompt([r for r in chat if _is_judge(r)][0])
    assert ("C5 Strain" in judge_prompt) == sees_all_columns
    assert ("Assuming" in judge_prompt) == (variant in ("full", "no-filter"))


async def test_two_label_benchmarks_restrict_the_schema(tmp_settings, fake_llm_server):
    judge = {"label": "REFUTES", "cited_cells": ["R5C3"], "reason": "x"}
    with fake_llm_server(scripted(judge, explanations=2)) as srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        check = await check_claim(llm, MEASLES, CLAIM, embedder=BagOfWordsEmbedder(),
                                  labels=("SUPPORTS", "REFUTES"), variant="full")
    assert check.label == "REFUTES" and set(check.explanations) == {"SUPPORTS", "REFUTES"}
    schema = [r for r in srv.requests if _is_judge(r)][0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["label"]["enum"] == ["SUPPORTS", "REFUTES"]
    with pytest.raises(Exception):
        judgement_schema(("SUPPORTS", "REFUTES")).model_validate({"label": "NOT ENOUGH INFO", "cited_cells": [],
                                                                  "reason": ""})


async def test_verify_without_table_is_a_clear_error(tmp_settings, fake_llm_server):
    with fake_llm_server([]) as srv:
        ctx = _ctx(tmp_settings, srv)
        ctx.session = Session("empty")
        with pytest.raises(ToolError, match="No table has been uploaded"):
            await verify_claim(ctx, Input(claim=CLAIM))


# -- table QA ------------------------------------------------------------------------------------
async def test_multiple_choice_reports_ties_with_low_confidence(tmp_settings, fake_llm_server):
    def handler(req):
        if req.get("response_format", {}).get("json_schema", {}).get("name") == "ColumnChoice":
            # Programs come first now (#13); a table lacking the column leaves the options to the judge.
            return Reply(content=json.dumps({"columns": ["not_in_table"]}))
        if _is_judge(req):
            return Reply(content=json.dumps({"answer": 1, "equally_supported": [3, 9], "cited_cells": ["R4C2", "R5C2"],
                                             "reason": "Both rows say 2011."}))
        return Reply(content="R4C2 and R5C2 show 2011.")

    with fake_llm_server(handler) as srv:
        ctx = _ctx(tmp_settings, srv)
        out = await table_qa(ctx, QAInput(question="Which year had two outbreaks in Quebec?",
                                          options=["2011", "2008", "2011 (twice)"]))
    assert out.answer == "2011" and out.tied == ["2011", "2011 (twice)"] and out.confidence == "low"
    assert out.reply().startswith("**2011 or 2011 (twice) (tied)**")  # the headline says it is a tie
    assert "equally supported" in out.reason
    assert len([r for r in srv.requests if r.get("messages") and not _is_judge(r)]) == 3  # one per option
    judge = [r for r in srv.requests if _is_judge(r)][1]["response_format"]["json_schema"]
    assert judge["name"] == "ChoiceJudgement" and list(judge["schema"]["properties"])[0] == "answer"
    assert judge["schema"]["properties"]["cited_cells"]["items"]["pattern"] != CELL_PATTERN


async def test_free_form_answer_with_cells(tmp_settings, fake_llm_server):
    reply = {"answer": "678", "cited_cells": ["R5C2", "R77C1"], "reason": "Row 5."}
    with fake_llm_server([Reply(content=json.dumps(reply))]) as srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        res = await answer_question(llm, MEASLES, "How many cases did Quebec have in 2011?",
                                    embedder=BagOfWordsEmbedder(), use_program=False)  # the model's own path
    assert res.answer == "678" and res.cells == [(5, 2)] and res.invalid_cells == ["R77C1"] and res.tied == []
    schema = srv.requests[-1]["response_format"]["json_schema"]["schema"]
    assert list(schema["properties"]) == ["answer", "cited_cells", "reason"]  # the answer is decoded first
    pattern = schema["properties"]["cited_cells"]["items"]["pattern"]
    assert re.fullmatch(pattern, "R5C2") and not re.fullmatch(pattern, "R77C1")


# -- the real model ------------------------------------------------------------------------------
@pytest.mark.real_model
async def test_real_model_claim_check(real_settings):
    """The thesis path (variant "full": column filter, CCoE explanations, judge) on a claim the table states: the
    verdict is asserted, with the grammar's guarantees (a label, cells of the table, one explanation per label).

    What this cannot tell: a judge that always says SUPPORTS passes it. Measured 2026-12-06 (#75) on the served
    1.5B W4A16 default, this judge said SUPPORTS 4 times of 4 for "Ontario had 530 cases of measles in 2008." (the
    table says 53), as the design rule expects of the small model's prose judgement; so no refuted claim is
    asserted here (it would fail every run). The default path's verdicts, both ways, are asserted below."""
    llm = LLMClient(real_settings)
    try:
        check = await check_claim(llm, MEASLES, CLAIM, embedder=BagOfWordsEmbedder(), variant="full")
    finally:
        await llm.aclose()
    assert check.label == "SUPPORTS", check.reason
    assert set(check.explanations) == set(LABELS) and all(check.explanations.values())
    assert all(1 <= r <= MEASLES.n_rows and c in check.cols for r, c in check.cells)


@pytest.mark.real_model
async def test_real_model_default_verdicts_on_unambiguous_claims(real_settings):
    """The grammar alone guarantees a label and valid cells; this asserts the verdict. One claim the table states
    and one it contradicts (one matching row each), checked the default way, once each, with no retry: the model's
    programs must stand behind both labels, and a constant answer fails one of the two.

    A vote can split and fall back to CCoE (tests/program_votes.py says what is asserted instead, and why);
    measured 2026-12-06 (#75) on the served W4A16 default: 8 of 8 checks of each claim right and decided by the
    programs. A failure here is a finding to report, not to retry."""
    llm = LLMClient(real_settings)
    try:
        true = await check_claim(llm, MEASLES, "British Columbia had 82 cases of measles in 2010.")
        false = await check_claim(llm, MEASLES, "Ontario had 530 cases of measles in 2008.")
    finally:
        await llm.aclose()
    assert (true.label, false.label) == ("SUPPORTS", "REFUTES"), (work(true), work(false))
    assert not vote_problems([true, false], ["SUPPORTS", "REFUTES"])
    # the cases cell of the one matching row is cited where the programs decided (CCoE cites what it read)
    assert true.decided_by != "program" or (3, 3) in true.cells, work(true)
    assert false.decided_by != "program" or (2, 3) in false.cells, work(false)
    assert all(1 <= r <= MEASLES.n_rows for r, _ in true.cells + false.cells)


async def test_long_table_prompt_is_bounded(tmp_settings, fake_llm_server):
    from tests.test_tables_filter import _long_table
    from tools._table_llm import TABLE_PROMPT_CHARS

    judge = {"label": "SUPPORTS", "cited_cells": ["R7778C3"], "reason": "x"}
    with fake_llm_server(scripted(judge)) as srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        check = await check_claim(llm, _long_table(), "Zedville had a population of 678 in 2011.",
                                  embedder=BagOfWordsEmbedder(), variant="full")
    assert 7778 in check.rows and len(check.rows) <= 50
    assert len(check.collapsed) <= TABLE_PROMPT_CHARS + 200
    assert check.cells == [(7778, 3)] or 3 not in check.cols
    assert all(len(_prompt(r)) < TABLE_PROMPT_CHARS + 2000 for r in srv.requests if r.get("messages"))


def test_judgement_budgets_fit_a_reason_at_its_cap_one_character_per_token():
    """vLLM's guided decoding spends about one token per character inside a capped string: a judgement
    whose reason reaches the cap must still close its JSON (a 200-token budget cut 3 of ~100 in an eval)."""
    from tools import table_qa, verify_claim
    from tools._table_llm import REASON_MAX_CHARS

    label_and_cells = len('{"label": "NOT ENOUGH INFO", "cited_cells": ["R10C10", "R10C11", "R10C12", "R10C13", '
                          '"R10C14", "R10C15"], "reason": ""}')
    assert verify_claim.JUDGE_MAX_TOKENS >= REASON_MAX_CHARS + label_and_cells
    assert table_qa.ANSWER_MAX_TOKENS >= REASON_MAX_CHARS + label_and_cells


def test_the_registered_table_shows_every_decisive_cells_row_even_outside_the_filtered_view():
    from kb.tables import Table
    from tools._table_llm import register_evidence

    table = Table(name="malaria", title="Malaria", columns=["country", "year", "deaths"],
                  rows=[["Kenya", "2019", "12000"], ["Kenya", "2020", "12500"], ["Uganda", "2019", "5100"],
                        ["Uganda", "2020", "5600"]])
    view = CollapsedView.build(table, cols=[1, 3], rows=[4])  # the filter kept Uganda 2020 only
    ledger = EvidenceLedger()
    table_id, cells = register_evidence(ledger, view, [(4, 3), (1, 3), (1, 2)])
    meta = ledger.get(table_id).meta
    assert meta["row_numbers"] == [1, 4] and meta["col_numbers"] == [1, 2, 3]
    assert meta["rows"] == [["Kenya", "2019", "12000"], ["Uganda", "2020", "5600"]]
    assert ledger.get(table_id).text == view.markdown  # what the model was shown is unchanged
    assert cells == [f"{table_id}:R4C3", f"{table_id}:R1C3", f"{table_id}:R1C2"]


def test_numbers_a_judge_writes_that_neither_the_table_nor_the_claim_states_are_found():
    from tools.verify_claim import unstated_numbers

    reason = ("R5C3 shows 678 cases in 2011 (claim: 678) against 94 in 2007, a ratio of approximately 7.2 "
              "(-7.2 the other way); COVID-19 is not involved; see R5C2.")
    assert unstated_numbers(reason, MEASLES, CLAIM) == ["7.2", "-7.2"]
    assert unstated_numbers("Row 5 says 678; rows 2 and 3 do not.", MEASLES, CLAIM) == []


async def test_a_judges_reason_with_its_own_figure_says_so(tmp_settings, fake_llm_server):
    judge = {"label": "REFUTES", "cited_cells": ["R5C3"], "reason": "R5C3 shows 678, about 0.6667 of the total."}
    with fake_llm_server(scripted(judge)) as srv:
        out = await verify_claim(_ctx(tmp_settings, srv), Input(claim=CLAIM, variant="full"))
    assert out.reason.endswith("(The judge wrote 0.6667, which is in neither the cells it cites nor the claim: the "
                               "model's own figure, not computed by code.)")
