"""Units of the chat core: registry, prompts, evidence ids, citation checks, intent rules, memory."""


import json
import re
from pathlib import Path

import pytest
import sqlite_utils
from pydantic import BaseModel

import prompts
from assistant.answer.citations import check_citations, mark_invalid, normalize_answer
from tools.contracts import EvidenceLedger, cited_ids
from memory.migrations import MIGRATIONS, UI_MIGRATIONS, migrate
from memory.store import Memory
from tools.registry import REGISTRY, DuplicateToolError, load_all, tool
from tools.intent import IntentFrame, contextualize, extract_options, looks_elliptical, rule_task

SNAPSHOT = Path(__file__).parent / "snapshots" / "tool_schemas.json"


# -- registry ----------------------------------------------------------------------------
def test_registry_derives_schemas_from_models_and_pins_them():
    load_all()
    schemas = {name: t.openai_schema() for name, t in sorted(REGISTRY.items())}
    for name, schema in schemas.items():
        fn = schema["function"]
        assert fn["name"] == name and fn["description"]
        assert fn["parameters"] == {k: v for k, v in REGISTRY[name].input_model.model_json_schema().items()
                                    if k != "title"}
    if not SNAPSHOT.exists():
        pytest.fail(f"no pinned schemas; run: python -m tests.snapshots.update  (writes {SNAPSHOT})")
    pinned = json.loads(SNAPSHOT.read_text())
    assert schemas == pinned, "tool schemas changed: review, then run python -m tests.snapshots.update"


def test_duplicate_tool_name_fails_at_registration():
    load_all()

    class In(BaseModel):
        x: int

    class Out(BaseModel):
        y: int

    with pytest.raises(DuplicateToolError):
        @tool("intent")
        def clash(ctx, args: In) -> Out:
            """Clashes with the intent tool."""


def test_tool_needs_docstring_and_models():
    class In(BaseModel):
        x: int

    with pytest.raises(TypeError):
        @tool("no_doc_tool_for_test")
        def nodoc(ctx, args: In) -> In:
            pass
    with pytest.raises(TypeError):
        @tool("untyped_tool_for_test")
        def untyped(ctx, args) -> In:
            """Has no input model."""
    assert "no_doc_tool_for_test" not in REGISTRY and "untyped_tool_for_test" not in REGISTRY


# -- prompts -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", prompts.names())
def test_every_prompt_renders_with_its_sample(name):
    first = (prompts.PROMPTS_DIR / f"{name}.j2").read_text().splitlines()[0]
    m = re.fullmatch(r"\{# sample: (.*) #\}", first.strip())
    assert m, f"{name}.j2 must start with a '{{# sample: {{...}} #}}' line"
    text = prompts.render(name, **json.loads(m.group(1)))
    assert text.strip() and "{{" not in text


def test_prompt_with_missing_variable_fails():
    import jinja2

    with pytest.raises(jinja2.UndefinedError):
        prompts.render("answer_user", question="q")


# -- evidence and citations ---------------------------------------------------------------
def test_ledger_ids_are_stable_and_typed():
    led = EvidenceLedger()
    s1 = led.add_sentence("A.", source="d", doc_id="d1")
    s2 = led.add_sentence("B.", source="d", doc_id="d1")
    assert (s1.id, s2.id) == ("S1", "S2")
    assert led.add_sentence("A.", source="d", doc_id="d1").id == "S1"  # same sentence, same id
    c = led.add_cell("tbl.csv", 3, 2, "220", source="tbl.csv", header="Cases")
    assert c.id == "T1:R3C2"
    assert led.add_cell("other.csv", 1, 1, "x", source="other.csv").id == "T2:R1C1"
    p = led.add_path("a —treats→ b", triples=[("a", "treats", "b")], source="kg")
    assert p.id == "P1" and led.add_path("again", triples=[("a", "treats", "b")], source="kg").id == "P1"
    assert {e.id for e in led.citable()} == {"S1", "S2", "T1:R3C2", "T2:R1C1", "P1"}


def test_cited_ids_parses_all_kinds_in_order():
    assert cited_ids("x [S2] y [T1:R3C2], [P1] and (S2; S7) again [T3]") == ["S2", "T1:R3C2", "P1", "S7", "T3"]
    assert cited_ids("no ids, S 1, XS1, [XS1]") == []


@pytest.mark.parametrize("prose", ["The spike S1 subunit binds ACE2.", "P53 is a tumour suppressor.",
                                   "Table T1 lists it.", "Stage S2 and phase P3 follow."])
def test_ids_in_prose_are_not_citations(prose):
    # Only bracketed ids cite: a bare "S1" or "P53" is a word, and must neither count as support nor be
    # flagged as a missing id.
    assert cited_ids(prose) == []
    led = EvidenceLedger()
    led.add_sentence("A.", source="d")
    check = check_citations(prose, led)
    assert check.invalid == [] and not check.ok and "cites no evidence" in check.problems[0]


def test_a_whole_table_id_is_not_a_citation():
    led = EvidenceLedger()
    tid = led.add_table("t.csv", "a\n1", source="t.csv").id
    check = check_citations(f"The table shows it [{tid}].", led)
    assert not check.ok and tid in check.invalid and "whole table" in " ".join(check.problems)
    assert mark_invalid(f"shows it [{tid}].", check.invalid) == f"shows it [{tid}⚠]."


@pytest.mark.parametrize("answer,substantive", [
    ("The evidence I found does not settle this.", False),
    ("There is not enough information in the evidence to say whether levodopa helps.", False),
    ("No relevant evidence was found.", False),
    ("Take 500 mg of levodopa twice a day. If symptoms persist, there is not enough information to say more.", True),
    ("Warfarin is dosed at 5 mg daily; the evidence does not say more.", True),
])
def test_a_hedge_does_not_excuse_an_uncited_claim(answer, substantive):
    led = EvidenceLedger()
    led.add_sentence("A.", source="d")
    check = check_citations(answer, led)
    assert check.substantive is substantive
    assert check.ok is (not substantive)


def test_citation_check_cases():
    led = EvidenceLedger()
    led.add_sentence("A.", source="d")
    assert check_citations("Yes [S1].", led).ok
    bad = check_citations("Yes [S1][S4].", led)
    assert not bad.ok and bad.invalid == ["S4"]
    none = check_citations("Yes, certainly.", led)
    assert not none.ok and "cites no evidence" in none.problems[0]
    honest = check_citations("The evidence I found does not settle this.", led)
    assert honest.ok and not honest.substantive
    assert mark_invalid("a [S1] b [S4]", ["S4"]) == "a [S1] b [S4⚠]"


# -- intent rules -----------------------------------------------------------------------------
def test_options_are_extracted_in_order():
    assert extract_options("Which is a mammal? A) shark B) whale C) trout") == ["shark", "whale", "trout"]
    assert extract_options("Pick one:\n(A) iron\n(B) wood") == ["iron", "wood"]
    assert extract_options("I have a) no idea") == []


@pytest.mark.parametrize("msg,table,task", [
    ("hello", False, "chit_chat"), ("thanks!", False, "chit_chat"), ("/tables", False, "command"),
    ("Is it true that cases fell in 2011?", True, "claim_check"), ("Measles cases rose in 2011.", True, "claim_check"),
    ("Who treats Parkinson's?", False, "question"), ("Which is bigger? A) sun B) moon", False, "multiple_choice"),
])
def test_rule_task(msg, table, task):
    assert rule_task(msg, extract_options(msg), table) == task


@pytest.mark.parametrize("msg,own,expected", [
    ("Which teams?", [], True), ("and in 2011?", [], True), ("Did he play for the Clippers?", ["Clippers"], True),
    ("What drugs treat Parkinson's disease?", ["Parkinson's disease"], False),
    ("How many measles cases were there in 2011?", ["measles"], False),
    ("Who is at risk?", ["risk"], True), ("What about coal?", ["coal"], True),
])
def test_elliptical_detection(msg, own, expected):
    assert looks_elliptical(msg, own) is expected


def test_contextualize_drops_invented_entities_and_carries_over():
    history = [{"user_text": "When did Wang Zhizhi join the NBA?", "rewrite": "",
                "intent": {"entities": ["Wang Zhizhi", "NBA"]}}]
    f = IntentFrame(task="question", entities=["Yao Ming"], rewrite="Which teams?")
    out = contextualize(f, "Which teams?", history, has_table=False, source="model")
    assert out.entities == ["Wang Zhizhi", "NBA"] and out.follow_up
    assert "Yao Ming" not in out.entities and "Wang Zhizhi" in out.rewrite
    first = contextualize(IntentFrame(task="question", entities=["Yao Ming"], rewrite="x", time="2003",
                                      location="Shanghai"), "Who is Yao Ming?", [], has_table=False, source="model")
    assert first.entities == ["Yao Ming"] and not first.follow_up
    assert first.time == "" and first.location == ""  # invented cues are dropped
    # The model already copied the entity into a follow-up frame: the rewrite must still name it.
    g = contextualize(IntentFrame(task="question", entities=["Wang Zhizhi"], rewrite="Which teams?"),
                      "Which teams?", history, has_table=False, source="model")
    assert "Wang Zhizhi" in g.rewrite and g.carried_over == ["Wang Zhizhi", "NBA"]


# -- memory ------------------------------------------------------------------------------------
def test_migrations_apply_once_and_are_recorded(tmp_path):
    db = sqlite_utils.Database(tmp_path / "m.db")
    applied = migrate(db)
    assert applied == [m.__name__ for m in MIGRATIONS]
    assert migrate(db) == []
    assert {r["name"] for r in db["_evidentia_migrations"].rows} == set(applied)
    for table in ("conversations", "turns", "intents", "tool_calls", "evidence", "citations", "session_tables",
                  "session_table_answers"):
        assert db[table].exists(), table
    ui = sqlite_utils.Database(tmp_path / "ui.db")
    assert migrate(ui, UI_MIGRATIONS) == ["ui001_chainlit_data_layer", "ui002_accounts", "ui003_revoked_logins"]
    assert migrate(ui, UI_MIGRATIONS) == []
    for table in ("users", "threads", "steps", "elements", "feedbacks", "evidentia_accounts"):
        assert ui[table].exists(), table


def test_memory_keeps_one_last_table_answer_per_conversation(tmp_path):
    mem = Memory(tmp_path / "mem.db")
    mem.save_table_answer("c", '{"answer": "Alberta"}')
    mem.save_table_answer("c", '{"answer": "Ontario"}')
    mem.save_table_answer("d", '{"answer": "Quebec"}')
    assert Memory(tmp_path / "mem.db").table_answer("c") == '{"answer": "Ontario"}'  # the latest, after reopen
    mem.save_table_answer("c", None)
    assert mem.table_answer("c") is None and mem.table_answer("d") == '{"answer": "Quebec"}'


def test_memory_persists_tables_and_turns_across_reopen(tmp_path):
    mem = Memory(tmp_path / "mem.db")
    cid = mem.ensure_conversation("c", user="ann")
    mem.save_table(cid, "cases.csv", '{"name": "cases.csv"}')
    tid = mem.record_turn(cid, user_text="q", answer="a [S1]", status="verified", intent={"entities": ["X"]},
                          evidence=[{"id": "S1", "kind": "sentence", "text": "t", "source": "s", "meta": {}}],
                          cited=["S1"], valid_ids={"S1"}, tool_calls=[{"name": "t", "arguments": {}}],
                          timings={"total_s": 1.0})
    mem.close()
    again = Memory(tmp_path / "mem.db")
    assert again.applied_migrations == []
    assert again.tables(cid) == [("cases.csv", '{"name": "cases.csv"}')]
    turns = again.turns(cid)
    assert turns[0]["id"] == tid and turns[0]["intent"]["entities"] == ["X"]
    assert again.conversations("ann")[0]["title"] == "q"
    assert again.conversations("bob") == []


def test_normalize_answer_fixes_small_model_habits():
    assert normalize_answer("Dallas (S1, S2) in 2001 (T1:R2C3).") == "Dallas [S1][S2] in 2001 [T1:R2C3]."
    text = "The evidence I found does not settle this. Wang Zhizhi joined in 2001 (S1)."
    assert normalize_answer(text) == "Wang Zhizhi joined in 2001 [S1]."
    assert normalize_answer("The evidence I found does not settle this.") == "The evidence I found does not settle this."


def test_empty_sources_sees_a_filled_text_store(tmp_settings):
    from assistant.deps import Deps
    from kb.ingest import Document

    deps = Deps(tmp_settings)
    assert deps.empty_sources() == {"text", "kg"}
    deps.text_kb.add_documents([Document(doc_id="d", text="Copper conducts electricity well.", title="t")],
                               collection="c", show_progress=False)
    assert deps.empty_sources() == {"kg"}


def test_rewrite_that_drops_what_the_turn_asks_is_replaced():
    history = [{"user_text": "When did Wang Zhizhi join the NBA?", "rewrite": "",
                "intent": {"entities": ["Wang Zhizhi"]}}]
    f = IntentFrame(task="question", entities=["Wang Zhizhi"], rewrite="When did Wang Zhizhi join the NBA?")
    out = contextualize(f, "And when did he leave?", history, has_table=False, source="model")
    assert "leave" in out.rewrite and "Wang Zhizhi" in out.rewrite


def test_embedding_threads_follow_where_the_llm_runs(tmp_path):
    from assistant.deps import embedding_threads
    from assistant.settings import Settings

    local = Settings(_env_file=None, data_dir=tmp_path, llm_base_url=None)
    remote = Settings(_env_file=None, data_dir=tmp_path, llm_base_url="http://gpu-box:8000/v1")
    # The embedded vLLM on this CPU: one thread, so the encoder does not spin against vLLM's pinned threads.
    assert embedding_threads(local, cpu_count=8, cuda=lambda: False) == 1
    # The embedded vLLM on a GPU, or any other server: the cores are free.
    assert embedding_threads(local, cpu_count=8, cuda=lambda: True) == 8
    assert embedding_threads(remote, cpu_count=8, cuda=lambda: False) == 8
    # An explicit setting always wins.
    pinned = Settings(_env_file=None, data_dir=tmp_path, llm_base_url="http://gpu-box:8000/v1", embedding_threads=3)
    assert embedding_threads(pinned, cpu_count=8, cuda=lambda: True) == 3


def test_an_evaluation_gives_deps_its_own_text_store(tmp_path):
    from assistant.deps import Deps
    from assistant.settings import Settings

    settings = Settings(_env_file=None, data_dir=tmp_path, llm_base_url="http://127.0.0.1:9/v1")
    built = []
    deps = Deps(settings, text_kb=lambda d: built.append(d) or "the open-book store")
    assert built == []  # nothing is built before it is used
    assert deps.text_kb == "the open-book store" and deps.text_kb == "the open-book store"
    assert built == [deps]  # once, from this holder (so it can share the encoder)
    assert Deps(settings).text_kb.path == settings.kb_dir / "text"  # without one, the configured KB's
