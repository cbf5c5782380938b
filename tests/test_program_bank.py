"""The program bank (#77): skeletons, retrieval by form, worked examples in the program prompt, mining and building.

Loop logic against the scripted fake OpenAI server; no model."""

from __future__ import annotations

import json

import click
import pytest

from assistant.evals import program_mining
from assistant.evals.program_mining import MiningItem, build, mine, mining_log_path
from kb.program_bank import DEFAULT_BANK, BankEntry, BankError, ProgramBank, read_entries, write_entries
from kb.tables import Table
from tests.test_table_program import CASES, CLAIM, LOOKUP, WRONG_ROW, is_program, llm_for, scripted
from tests.test_tables_filter import BagOfWordsEmbedder
from tools._cells import TypedTable
from tools.worked_examples import column_sketch, skeleton
from tools.verify_claim import check_claim

MEDALS = Table(name="medals", title="Medals", columns=["Country", "Year", "Medals"],
               rows=[["Norway", "2018", "39"], ["Canada", "2018", "29"], ["Germany", "2014", "31"]])


@pytest.mark.parametrize("text, table, expected", [
    ("Norway won 39 medals in 2018.", MEDALS, "[VAL] won [NUM] [COL] in [YEAR] ."),
    ("How many countries won more than 20 medals?", MEDALS, "how many [COL] won more than [NUM] [COL] ?"),
    ("Canada won fewer medals than Germany", MEDALS, "[VAL] won fewer [COL] than [VAL]"),
    # without a table only the numbers and years are read
    ("Canada won fewer medals than Germany in 2018", None, "canada won fewer medals than germany in [YEAR]"),
    ("Ontario had 220 cases.", CASES, "[VAL] had [NUM] [COL] ."),
])
def test_a_skeleton_masks_what_the_message_names_by_its_kind(text, table, expected):
    assert skeleton(text, TypedTable.build(table) if table is not None else None) == expected


def entry(n: int, text: str, program: dict, *, table: str = "t", kind: str = "claim") -> BankEntry:
    return BankEntry(id=f"test:{n}:0", kind=kind, text=text, skeleton=skeleton(text), columns=["a (text)"],
                     program=program, source="test", table=table)


VALUE = {"filters": [], "fn": "value", "column": "a", "answer_column": "a",
         "check": {"op": "=", "against": "value", "value": "1"}}
COUNT = {"filters": [], "fn": "count", "column": "a", "answer_column": "a",
         "check": {"op": "=", "against": "value", "value": "1"}}
ARGMAX = {"filters": [], "fn": "argmax", "column": "a", "answer_column": "a",
          "check": {"op": "=", "against": "value", "value": "x"}}


def test_retrieval_ranks_by_form_and_never_shows_an_items_own_table():
    bank = ProgramBank.build([
        entry(1, "how many teams scored more than 12 goals in 2001", COUNT, table="a"),
        entry(2, "the team with the most goals in 2001 was milan", ARGMAX, table="b"),
        entry(3, "how many players scored more than 3 goals", COUNT, table="c"),
    ])
    asked = skeleton("how many clubs scored more than 40 goals in 1999")
    assert [e.id for e in bank.nearest(asked, 1)] == ["test:1:0"]
    assert [e.id for e in bank.nearest(asked, 1, exclude_table="a")] == ["test:3:0"]
    assert bank.nearest(asked, 0) == [] and ProgramBank.build([]).nearest(asked, 3) == []


def test_retrieval_prefers_a_second_form_to_a_copy_of_the_first():
    # three near copies of one count program and one argmax: two examples should not both be the count
    bank = ProgramBank.build([entry(i, f"how many teams scored more than {i} goals", COUNT) for i in range(3)]
                             + [entry(9, "which team scored the most goals", ARGMAX)])
    chosen = bank.nearest(skeleton("how many teams scored more than 7 goals"), 2)
    assert chosen[0].program["fn"] == "count" and {e.program["fn"] for e in chosen} == {"count", "argmax"}


def test_a_malformed_bank_line_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / "bank.jsonl"
    write_entries(path, [entry(1, "a claim of 3", VALUE)])
    assert [e.id for e in read_entries(path)] == ["test:1:0"]
    path.write_text(path.read_text() + '{"id": "x"}\n')
    with pytest.raises(BankError, match="line 2"):
        read_entries(path)


def bank_of_medals(path):
    typed = TypedTable.build(MEDALS)
    program = {"filters": [{"column": "country", "op": "=", "value": "Norway"}], "fn": "value", "column": "medals",
               "answer_column": "country", "check": {"op": "=", "against": "value", "value": "39"}}
    write_entries(path, [BankEntry(id="test:norway:0", kind="claim", text="Norway won 39 medals.",
                                   skeleton=skeleton("Norway won 39 medals.", typed), columns=column_sketch(typed),
                                   program=program, source="test", table=typed.table.fingerprint())])


async def program_prompts(settings, fake_llm_server, bank, k: int):
    """Check CLAIM on CASES with ``k`` worked examples from ``bank``: the check and the program prompts sent."""
    settings = settings.model_copy(update={"table_examples": k, "table_program_bank": bank})
    prompts = []
    handler = scripted(["province", "cases"], [LOOKUP] * 5)

    def recording(req):
        if is_program(req):
            prompts.append(req["messages"][-1]["content"])
        return handler(req)

    with fake_llm_server(recording) as srv:
        check = await check_claim(llm_for(settings, srv), CASES, CLAIM, embedder=BagOfWordsEmbedder())
    return check, prompts


@pytest.mark.parametrize("k", [0, 2])
async def test_worked_examples_reach_the_program_prompt_only_when_asked(tmp_settings, fake_llm_server, tmp_path, k):
    bank_of_medals(tmp_path / "bank.jsonl")
    check, prompts = await program_prompts(tmp_settings, fake_llm_server, tmp_path / "bank.jsonl", k)
    assert check.label == "SUPPORTS" and len(prompts) == 1
    shown = "Worked examples on other tables" in prompts[0]
    assert shown == (k > 0)
    assert ("Norway won 39 medals." in prompts[0]) == (k > 0)


async def test_an_items_own_table_is_never_its_worked_example(tmp_settings, fake_llm_server, tmp_path):
    typed = TypedTable.build(CASES)
    write_entries(tmp_path / "bank.jsonl", [BankEntry(
        id="test:own:0", kind="claim", text=CLAIM, skeleton=skeleton(CLAIM, typed), columns=column_sketch(typed),
        program=LOOKUP, source="test", table=typed.table.fingerprint())])
    _, prompts = await program_prompts(tmp_settings, fake_llm_server, tmp_path / "bank.jsonl", 4)
    assert prompts and "Worked examples" not in prompts[0]


def test_a_missing_bank_says_how_to_make_one(tmp_path):
    from kb.program_bank import load_bank

    with pytest.raises(BankError, match="evidentia kb programs mine"):
        load_bank(tmp_path / "none.jsonl", "claim")


UNSTATED = {**LOOKUP, "check": {"op": ">", "against": "value", "value": "100"}}  # a threshold never stated


async def test_mining_keeps_only_right_programs_that_check_what_the_claim_states(tmp_settings, fake_llm_server,
                                                                                 monkeypatch):
    items = [MiningItem("1", CLAIM, CASES, ["SUPPORTS"]),
             MiningItem("2", "Ontario had 300 cases.", CASES, ["SUPPORTS"]),
             MiningItem("3", "Alberta had no cases.", CASES, ["NOT ENOUGH INFO"])]
    monkeypatch.setattr(program_mining, "load_items", lambda settings, source: items)
    wrong_for_2 = {**LOOKUP, "check": {"op": "=", "against": "value", "value": "300"}}
    handler = scripted(["province", "cases"], [UNSTATED, WRONG_ROW, LOOKUP, LOOKUP, UNSTATED], [wrong_for_2] * 5)
    with fake_llm_server(handler) as srv:
        summary = await mine(tmp_settings, "tabfact-dev", limit=10, concurrency=1, llm=llm_for(tmp_settings, srv),
                             echo=lambda *_: None, show_progress=False)
    assert summary["kept"] == 1 and summary["none right"] == 1 and summary["skipped"] == 1
    records = {r["id"]: r for r in map(json.loads, mining_log_path(tmp_settings, "tabfact-dev").read_text()
                                       .splitlines())}
    [kept] = records["1"]["kept"]
    assert records["1"]["right"] == 2  # the two that check "> 100", which the claim never states, are not right
    assert kept["program"] == LOOKUP and kept["text"] == CLAIM
    assert kept["table"] == TypedTable.build(CASES).table.fingerprint()
    assert kept["skeleton"] == "[VAL] had [NUM] [COL] ." and "province (text)" in kept["columns"]
    assert records["2"]["kept"] == [] and "NOT ENOUGH INFO" in records["3"]["skipped"]
    # every sampled run is logged with the gold: what a reranker of programs learns from
    assert len(records["1"]["programs"]["runs"]) == 5 and records["1"]["gold"] == ["SUPPORTS"]
    # a second run resumes: nothing is asked again
    with fake_llm_server(scripted([])) as srv:
        again = await mine(tmp_settings, "tabfact-dev", limit=10, concurrency=1, llm=llm_for(tmp_settings, srv),
                           echo=lambda *_: None, show_progress=False)
        assert srv.requests == [] and again["mined_now"] == 0


async def test_mining_a_question_keeps_the_program_whose_answer_matches_the_gold(tmp_settings, fake_llm_server,
                                                                                  monkeypatch):
    question = "Which province had the most cases?"
    items = [MiningItem("q1", question, CASES, ["Alberta"])]
    monkeypatch.setattr(program_mining, "load_items", lambda settings, source: items)
    best = {"filters": [], "fn": "argmax", "column": "cases", "answer_column": "province"}
    least = {**best, "fn": "argmin"}
    with fake_llm_server(scripted(["province", "cases"], [least, best, best, least, best])) as srv:
        await mine(tmp_settings, "wtq-train", limit=1, concurrency=1, llm=llm_for(tmp_settings, srv),
                   echo=lambda *_: None, show_progress=False)
    [rec] = map(json.loads, mining_log_path(tmp_settings, "wtq-train").read_text().splitlines())
    # the two argmin programs are right only because a rewrite rule read "the most" for them: not kept, counted
    assert [k["program"]["fn"] for k in rec["kept"]] == ["argmax"] and rec["right"] == 5
    assert rec["right_after_rewrite"] == 2
    assert rec["kept"][0]["kind"] == "question" and "CC BY-SA" in rec["kept"][0]["license"]


def test_the_shipped_bank_takes_only_sources_that_may_be_redistributed(tmp_settings, tmp_path):
    log = mining_log_path(tmp_settings, "tabfact-dev")
    log.parent.mkdir(parents=True)
    kept = entry(1, CLAIM, LOOKUP).model_copy(update={"source": "tabfact-dev"}).model_dump()
    log.write_text(json.dumps({"variant": "tabfact-dev", "id": "1", "kept": [kept]}) + "\n")
    with pytest.raises(click.ClickException, match="may not be redistributed"):
        build(tmp_settings, ["tabfact-dev"], None, echo=lambda *_: None)
    out = build(tmp_settings, ["tabfact-dev"], tmp_path / "dev-bank.jsonl", echo=lambda *_: None)
    assert [e.id for e in read_entries(out)] == ["test:1:0"]
    with pytest.raises(click.ClickException, match="Nothing mined from wtq-train"):
        build(tmp_settings, ["wtq-train"], tmp_path / "b.jsonl", echo=lambda *_: None)
    assert DEFAULT_BANK.name == "program_bank.jsonl"


def test_a_run_with_worked_examples_has_its_own_log_name_and_records_its_bank(tmp_settings, tmp_path):
    from assistant.evals.tables_eval import layout_suffix, prompt_config

    assert layout_suffix(tmp_settings) == "" and prompt_config(tmp_settings)["examples"] == 0
    shipped = tmp_settings.model_copy(update={"table_examples": 4})
    assert layout_suffix(shipped) == "-examples4"
    own = tmp_settings.model_copy(update={"table_examples": 2, "table_program_bank": tmp_path / "Dev bank.jsonl"})
    assert layout_suffix(own) == "-examples2-dev-bank"
    assert prompt_config(own)["program_bank"].endswith("Dev bank.jsonl")


async def test_a_sealed_test_run_refuses_worked_examples(tmp_settings, tmp_path):
    from assistant.evals.tables_eval import run_benchmark, run_wtq

    settings = tmp_settings.model_copy(update={"table_examples": 2})
    with pytest.raises(click.ClickException, match="EVIDENTIA_TABLE_EXAMPLES"):
        await run_benchmark("pubhealthtab", settings, variants=["program"], docs_dir=tmp_path)
    with pytest.raises(click.ClickException, match="EVIDENTIA_TABLE_EXAMPLES"):
        await run_wtq(settings, variants=["program"], docs_dir=tmp_path)


async def test_mining_from_a_dev_log_asks_no_model_and_verifies_alike(tmp_settings, monkeypatch):
    from assistant.evals.program_mining import dev_log_path

    items = [MiningItem("1", CLAIM, CASES, ["SUPPORTS"]), MiningItem("2", "Ontario had 300 cases.", CASES, ["REFUTES"]),
             MiningItem("3", "Quebec had 12 cases.", CASES, ["SUPPORTS"])]  # 3: not in the log, left for later
    monkeypatch.setattr(program_mining, "load_items", lambda settings, source: items)
    log = dev_log_path(tmp_settings, "pubhealthtab-dev")
    log.parent.mkdir(parents=True)
    refuting = {**LOOKUP, "check": {"op": "=", "against": "value", "value": "300"}}
    log.write_text("\n".join(json.dumps({"variant": "program", "id": i, "gold": g, "programs": {"runs": [
        {"raw": p, "ran": True} for p in programs]}}) for i, g, programs in [
        ("1", "SUPPORTS", [LOOKUP, LOOKUP, WRONG_ROW]), ("2", "REFUTES", [refuting, UNSTATED])]) + "\n")
    summary = await mine(tmp_settings, "pubhealthtab-dev", limit=10, echo=lambda *_: None, show_progress=False,
                         from_log=True)
    assert summary["kept"] == 2 and summary["mined_now"] == 2
    records = {r["id"]: r for r in map(json.loads, mining_log_path(tmp_settings, "pubhealthtab-dev").read_text()
                                       .splitlines())}
    assert set(records) == {"1", "2"} and records["1"]["kept"][0]["program"] == LOOKUP
    assert records["2"]["kept"][0]["program"] == refuting and records["2"]["from_log"] == str(log)


async def test_mining_from_a_log_that_is_not_there_says_what_to_run(tmp_settings, monkeypatch):
    monkeypatch.setattr(program_mining, "load_items", lambda settings, source: [])
    with pytest.raises(click.ClickException, match="--split dev"):
        await mine(tmp_settings, "tabfact-dev", limit=1, echo=lambda *_: None, show_progress=False, from_log=True)
    with pytest.raises(click.ClickException, match="mine it with the model"):
        await mine(tmp_settings, "wtq-train", limit=1, echo=lambda *_: None, show_progress=False, from_log=True)
