"""Table programs as grammar-bound SQL (issue 13): the grammar, the SQLite sandbox, provenance, voting."""

from __future__ import annotations

import json
import re

import pytest

from assistant.deps import Deps
from tools.contracts import EvidenceLedger
from assistant.llm import LLMClient
from prompts import render
from tools.contracts import Session
from kb.tables import Table
from tests.program_votes import vote_problems, work
from tests.fake_openai import Reply
from tests.test_table_program import CASES, CLAIM, LOOKUP, is_columns, is_program, llm_for, typed
from tests.test_tables_filter import BagOfWordsEmbedder
from tools import ToolContext
from tools._cells import TypedTable
from tools._table_ops_model import ProgramError
from tools._table_program import solve, table_for_prompt
from tools._table_sql import Sandbox, describe_sql, execute_sql, sql_grammar
from tools.verify_claim import Input, check_claim, verify_claim

# CASES: Province | Year | Cases | Unit price (€/kg); R1 Quebec 2010 12, R2 Ontario 2011 220, R3 Alberta 2011 1,012,
# R4 Québec 2011 678, R5 Manitoba 2011 n/a.
GOOD = "SELECT cases AS value, cases = 220 AS verdict FROM t WHERE province = 'Ontario'"
WRONG_ROW = "SELECT cases AS value, cases = 220 AS verdict FROM t WHERE province = 'Alberta'"
BROKEN = "SELECT SUM(cases) AS value, SUM(cases) = 220 AS verdict FROM t WHERE province = 'Atlantis'"


def big_table(n: int = 3000) -> TypedTable:
    return TypedTable.build(Table(name="big", title="big", columns=["name", "n"],
                                  rows=[[f"r{i}", str(i)] for i in range(n)]))


# -- typed columns in SQLite ---------------------------------------------------------------------
def test_numeric_columns_are_real_numbers_parsed_from_decorated_cells():
    with Sandbox(typed()) as box:
        assert box.query("SELECT unit_price_kg FROM t") == [(3.5e6,), (4512.0,), (12.0,), (-12.3,), (0.215,)]
        assert box.query("SELECT cases FROM t WHERE _r = 5") == [(None,)]  # "n/a" is a gap, not a zero
        assert box.query("SELECT province FROM t WHERE _r = 4") == [("Québec",)]  # text stays as shown
    # Numbers order and add as numbers ("1,012" > "678"), text compares case- and accent-insensitively.
    assert execute_sql("SELECT SUM(cases) FROM t WHERE year = 2011", typed(), "question").result == 1910.0
    top = execute_sql("SELECT province FROM t ORDER BY cases DESC LIMIT 1", typed(), "question")
    assert top.result == "Alberta" and top.result_text == "Alberta (1012)"
    both = execute_sql("SELECT COUNT(*) FROM t WHERE province = 'QUEBEC'", typed(), "question")
    assert both.result == 2.0 and both.decisive_rows == [1, 4]
    assert execute_sql("SELECT COUNT(*) FROM t WHERE province LIKE 'queb%'", typed(), "question").result == 2.0


def test_numbers_compare_within_the_precision_the_claim_wrote():
    t = TypedTable.build(Table(name="p", title="p", columns=["model", "acc"], rows=[["A", "3.46"], ["B", "0.934"]]))
    run = lambda v: execute_sql(f"SELECT acc AS value, acc = {v} AS verdict FROM t WHERE model = 'A'", t).truth
    assert run("3.5") is True and run("3.4") is False and run("3.46") is True
    assert execute_sql("SELECT acc AS value, acc > 3.5 AS verdict FROM t WHERE model = 'A'", t).truth is False
    assert execute_sql("SELECT acc AS value, 0.93 = acc AS verdict FROM t WHERE model = 'B'", t).truth is True


def test_a_long_cell_clipped_as_the_grammar_offers_it_selects_the_cells_it_starts():
    long = "A ban on abortions after the first trimester of pregnancy"
    t = TypedTable.build(Table(name="p", title="p", columns=["Item", "Favor"], rows=[[long, "41"], ["Other", "5"]]))
    clipped = _rule(sql_grammar(t, "claim"), "tv0")[0]
    assert clipped.endswith("…'") and len(clipped) < len(long)
    ex = execute_sql(f"SELECT favor AS value, favor = 41 AS verdict FROM t WHERE item = {clipped}", t)
    assert ex.truth is True and ex.decisive_rows == [1]
    assert execute_sql(f"SELECT COUNT(*) FROM t WHERE item != {clipped}", t, "question").result == 1.0


def test_short_forms_of_cells_match_as_whole_words_only_when_nothing_is_equal():
    t = TypedTable.build(Table(name="p", title="p", columns=["Province", "Cases"], rows=[
        ["Quebec (QC)", "678"], ["Ontario", "220"], ["New Ontario", "5"]]))
    ex = execute_sql("SELECT cases AS value, cases = 678 AS verdict FROM t WHERE province = 'quebec'", t)
    assert ex.decisive_rows == [1] and ex.truth and "contains it as words" in " ".join(ex.steps)
    assert execute_sql("SELECT COUNT(*) FROM t WHERE province = 'Ontario'", t, "question").result == 1.0
    with pytest.raises(ProgramError, match="no row matches"):
        execute_sql("SELECT cases AS value, cases = 678 AS verdict FROM t WHERE province = 'Queb'", t)


# -- provenance ----------------------------------------------------------------------------------
@pytest.mark.parametrize("sql, truth, rows, cells", [
    # a lookup cites the cells it filtered on and read, in the row it matched ("quebec" = "Québec")
    ("SELECT cases AS value, cases = 678 AS verdict FROM t WHERE province = 'quebec' AND year = 2011",
     True, [4], {(4, 1), (4, 2), (4, 3)}),
    # argmax: the top row only, with the column it sorted by
    ("SELECT province AS value, province = 'Quebec' AS verdict FROM t WHERE year = 2011 ORDER BY cases DESC LIMIT 1",
     False, [3], {(3, 1), (3, 2), (3, 3)}),
    # MIN: the row holding the minimum, named by its label
    ("SELECT MIN(cases) AS value, MIN(cases) > 200 AS verdict FROM t WHERE year = 2011", True, [2],
     {(2, 1), (2, 2), (2, 3)}),
    # COUNT: every row it counted, by the column it filtered on
    ("SELECT COUNT(*) AS value, COUNT(*) = 3 AS verdict FROM t WHERE cases > 200", True, [2, 3, 4],
     {(2, 1), (3, 1), (4, 1), (2, 3), (3, 3), (4, 3)}),
    # a subquery's row is cited too: Ontario's cases against Alberta's
    ("SELECT cases AS value, cases < (SELECT cases FROM t WHERE province = 'Alberta') AS verdict FROM t "
     "WHERE province = 'Ontario'", True, [2], {(2, 1), (2, 3), (3, 1), (3, 3)}),
    # every row must meet the check: Manitoba's n/a does not (as with the fixed operations)
    ("SELECT cases AS value, cases >= 200 AS verdict FROM t WHERE year = 2011", False, [2, 3, 4, 5],
     {(r, c) for r in (2, 3, 4, 5) for c in (2, 3)}),
])
def test_cells_cited_are_the_ones_that_decided(sql, truth, rows, cells):
    ex = execute_sql(sql, typed(), "claim")
    assert ex.truth is truth and ex.decisive_rows == rows and set(ex.cells) == cells


def test_values_come_back_beside_the_verdict_as_the_table_shows_them():
    ex = execute_sql("SELECT cases AS value, cases < (SELECT cases FROM t WHERE province = 'Alberta') AS verdict "
                     "FROM t WHERE province = 'Ontario'", typed())
    assert ex.result == "220" and ex.check_text.startswith("< 1012 (SELECT Cases FROM t WHERE Province")
    assert "(SELECT Cases FROM t WHERE Province = 'Alberta') = 1012" in ex.steps
    assert execute_sql("SELECT unit_price_kg FROM t WHERE province = 'Ontario'", typed(), "question").result == "4,512"
    text = describe_sql("SELECT province AS value, province = 'Alberta' AS verdict FROM t WHERE unit_price_kg > 1 "
                        "ORDER BY cases DESC LIMIT 1", typed())
    assert text == ("rows where Unit price (€/kg) > 1 sorted by Cases DESC, first 1 → Province; "
                    "check: Province = 'Alberta'")


# -- the sandbox ---------------------------------------------------------------------------------
HOSTILE = [
    "ATTACH DATABASE '{tmp}/evil.db' AS evil",
    "VACUUM INTO '{tmp}/copy.db'",
    "PRAGMA query_only = 0",
    "PRAGMA writable_schema = 1",
    "DELETE FROM t",
    "UPDATE t SET cases = 0",
    "INSERT INTO t (_r, province) VALUES (99, 'x')",
    "CREATE TABLE u (x)",
    "DROP TABLE t",
    "SELECT load_extension('{tmp}/evil.so') AS value, 1 AS verdict FROM t",
    "SELECT printf('%s', province) AS value, 1 AS verdict FROM t",
    "SELECT randomblob(2000000000) AS value, 1 AS verdict FROM t",
    "SELECT name AS value, 1 AS verdict FROM sqlite_master",
    "SELECT cases AS value, 1 AS verdict FROM t; DROP TABLE t",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) AS value, 1 AS verdict FROM c",
]


@pytest.mark.parametrize("sql", HOSTILE)
def test_escapes_are_refused_with_the_grammar_bypassed(sql, tmp_path):
    hostile = sql.format(tmp=tmp_path)
    with pytest.raises(ProgramError):  # the first wall: sqlglot's reading of the query
        execute_sql(hostile, typed())
    with Sandbox(typed()) as box:  # the second wall: the authorizer and the limits, on the raw text
        with pytest.raises(ProgramError, match="refused|could not run"):
            box.query(hostile)
        assert box.query("SELECT COUNT(*), SUM(cases) FROM t") == [(5, 1922.0)]  # nothing was written
    assert not list(tmp_path.iterdir())  # no file was attached, copied or loaded


def test_authorizer_refuses_recursion_and_other_tables_by_itself():
    with Sandbox(typed()) as box:
        box.con.setlimit(__import__("sqlite3").SQLITE_LIMIT_COMPOUND_SELECT, 500)  # lower the first wall
        with pytest.raises(ProgramError, match="refused: (a recursive query|reading c) is not allowed"):
            box.query("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c")
        with pytest.raises(ProgramError, match="reading sqlite_master is not allowed"):
            box.query("SELECT name FROM sqlite_master")
        with pytest.raises(ProgramError, match="the function printf is not allowed"):
            box.query("SELECT printf('%s', province) FROM t")


def test_cross_joins_and_long_runs_are_refused_or_stopped():
    with pytest.raises(ProgramError, match="no joins"):
        execute_sql("SELECT COUNT(*) AS value, 1 AS verdict FROM t a, t b, t c", big_table())
    with pytest.raises(ProgramError, match="no joins"):
        execute_sql("SELECT COUNT(*) AS value, 1 AS verdict FROM t JOIN t AS u", big_table())
    with Sandbox(big_table(), time_limit_s=0.2) as box:  # the grammar and sqlglot bypassed: the clock stops it
        with pytest.raises(ProgramError, match="longer than 0.2 s"):
            box.query("SELECT COUNT(*) FROM t a, t b, t c")
        assert box.query("SELECT COUNT(*) FROM t") == [(3000,)]  # and the sandbox still answers


@pytest.mark.parametrize("sql, message", [
    ("SELECT n FROM t", "more than 1,000 rows"),
    ("SELECT * FROM t", r"SELECT \* is not allowed"),
    ("SELECT upper(name) AS value, group_concat(name) = 'x' AS verdict FROM t", "GROUP_CONCAT is not allowed"),
    ("SELECT n AS value, n > (SELECT MAX(n) FROM t WHERE n < (SELECT 5 FROM t)) AS verdict FROM t", "nest at most"),
    ("SELECT n AS value, 1 AS verdict FROM (SELECT n FROM t)", "FROM t, once"),
    ("SELECT n AS value, 1 AS verdict FROM u", "the only table is t"),
    ("SELEC n FROM t", "does not parse"),
    ("EXPLAIN SELECT n FROM t", "only a SELECT is allowed, not EXPLAIN"),
    ("SELECT n AS value FROM t WHERE name = 'r1'", "AS verdict"),
    ("", "empty"),
])
def test_other_bad_programs_are_one_clear_step_error(sql, message):
    with pytest.raises(ProgramError, match=message):
        execute_sql(sql, big_table(), "question" if sql == "SELECT n FROM t" else "claim")


@pytest.mark.timeout(60)
def test_like_means_sql_like_and_cannot_be_made_to_backtrack():
    t = TypedTable.build(Table(name="l", title="l", columns=["name", "n"], rows=[
        ["a" * 5000, "1"], ["100% Sure [x] a_b", "2"], ["axb", "3"]]))
    count = lambda pattern: execute_sql(f"SELECT COUNT(*) FROM t WHERE name LIKE '{pattern}'", t, "question").result
    assert count("a_b") == 1.0 and count("100% SURE [X]%") == 1.0 and count("%[x]%") == 1.0 and count("%") == 3.0
    with Sandbox(t) as box:
        assert box.query(r"SELECT n FROM t WHERE name LIKE '100\% sure [x] a\_b' ESCAPE '\'") == [(2.0,)]
    # Twenty wildcards against a 5,000-character cell: a backtracking regex would run for hours.
    assert count("%a" * 20 + "%b") == 0.0


def test_hostile_values_are_only_compared_as_text():
    sql = "SELECT COUNT(*) FROM t WHERE province = '''; DROP TABLE t; --'"
    assert execute_sql(sql, typed(), "question").result == 0.0


def test_limits_on_the_table():
    with pytest.raises(ProgramError, match="at most 100"):
        execute_sql("SELECT COUNT(*) FROM t", big_table(), "question", max_rows=100)
    with pytest.raises(ProgramError, match="longer than"):
        execute_sql("SELECT SUM(n) FROM t", big_table(), "question", time_limit_s=-1)


# -- the grammar ---------------------------------------------------------------------------------
def _rule(grammar: str, name: str) -> list[str]:
    line = next(line for line in grammar.splitlines() if line.startswith(f"{name} ::= "))
    return [json.loads(alt) for alt in line.split(" ::= ", 1)[1].split(" | ")]


def test_grammar_names_exactly_this_tables_identifiers_by_type():
    g = sql_grammar(typed(), "claim")
    assert _rule(g, "ncol") == ["year", "cases", "unit_price_kg"] and _rule(g, "tcol") == ["province"]
    assert 'AS verdict FROM t' in g and "AS verdict" not in sql_grammar(typed(), "question")
    # "=" filters on a text column take its own values (as the fixed operations' grammar); checks stay free text.
    assert _rule(g, "tv0") == ["'Quebec'", "'Ontario'", "'Alberta'", "'Québec'", "'Manitoba'"]
    assert "pred ::= ncol \" \" cmp \" \" (num | subq) | \"province\" \" \" eq \" \" tv0 |" in g
    assert 'check ::= nexpr " " cmp " " nexpr | tcol " " eq " " str' in g
    # Identifiers that are SQL keywords are quoted, so they parse and run.
    kw = TypedTable.build(Table(name="k", title="k", columns=["Order", "Group", "Value"],
                                rows=[["a", "1", "x"], ["b", "2", "y"]]))
    g = sql_grammar(kw, "question")
    assert _rule(g, "tcol") == ['"order"', "value"] and _rule(g, "ncol") == ['"group"']
    assert execute_sql('SELECT "order" FROM t ORDER BY "group" DESC LIMIT 1', kw, "question").result == "b"
    # A table with no numeric column admits no aggregate over a column (only COUNT(*)).
    text_only = sql_grammar(TypedTable.build(Table(name="x", title="x", columns=["a"], rows=[["p"]])), "claim")
    assert "ncol" not in text_only and "agg" not in text_only and '"COUNT(*)"' in text_only


def test_every_prompt_example_runs_on_its_table():
    medals = TypedTable.build(Table(name="m", title="m", columns=["country", "year", "medals"], rows=[
        ["Norway", "2018", "39"], ["Germany", "2018", "31"], ["Canada", "2018", "29"], ["Norway", "2014", "26"]]))
    ran = 0
    for kind in ("claim", "question"):
        prompt = render("table_sql", kind=kind, text="x", title="m", columns=medals.schema_lines(),
                        table=table_for_prompt(medals), needed=[], error="")
        for sql in re.findall(r"^SELECT .*$", prompt, flags=re.M):
            execute_sql(sql, medals, kind)
            ran += 1
    assert ran == 7


def test_sql_prompt_shares_the_column_choices_head_for_the_prefix_cache():
    t = typed()
    common = dict(kind="claim", text=CLAIM, title=CASES.title, columns=t.schema_lines(), table=table_for_prompt(t))
    columns = render("table_program_columns", **common)
    head = columns[:columns.index(CLAIM) + len(CLAIM)]
    assert render("table_sql", needed=["cases"], error="", **common).startswith(head)


# -- the model in the loop (scripted) ------------------------------------------------------------
def is_sql(req):
    return "grammar" in (req.get("structured_outputs") or {})


def scripted_sql(columns, *batches, judge=None):
    batches = list(batches)

    def handler(req):
        if is_columns(req):
            return Reply(content=json.dumps({"columns": columns}))
        if is_sql(req):
            batch = batches.pop(0)
            first = batch[0]
            if isinstance(first, Reply):
                return first
            return Reply(content=first, more_choices=batch[1:])
        if is_program(req):
            raise AssertionError("the SQL form sent a fixed-operations program request")
        if "response_format" in req:
            assert judge is not None, "the CCoE judge was not expected"
            return Reply(content=json.dumps(judge))
        return Reply(content="Assuming this label, R2C3 shows 220.")

    return handler


async def test_sql_programs_vote_through_the_same_path(tmp_settings, fake_llm_server):
    with fake_llm_server(scripted_sql(["province", "cases"], [GOOD, GOOD, WRONG_ROW, GOOD, BROKEN])) as srv:
        check = await check_claim(llm_for(tmp_settings, srv), CASES, CLAIM, embedder=BagOfWordsEmbedder(),
                                  variant="program-sql")
    assert check.label == "SUPPORTS" and check.decided_by == "program" and check.variant == "program-sql"
    assert check.confidence == 0.6 and check.programs.votes == {"SUPPORTS": 3, "REFUTES": 1}
    assert check.programs.program_form == "sql" and check.cells == [(2, 1), (2, 3)]
    assert check.reason == "Cases is 220 (rows: Ontario); the claim needs it = 220, so the table supports the claim."
    assert "no row matches" in check.programs.runs[4].error and check.programs.runs[0].raw == {"sql": GOOD}
    [req] = [r for r in srv.requests if is_sql(r)]  # one request for all five samples
    assert req["n"] == 5 and req["temperature"] == 0.7 and "response_format" not in req
    grammar = req["structured_outputs"]["grammar"]
    assert _rule(grammar, "ncol") == ["year", "cases", "unit_price_kg"] and _rule(grammar, "tcol") == ["province"]
    assert "SELECT medals AS value" in req["messages"][-1]["content"]  # the SQL prompt, not the JSON one
    # program-sql+ccoe: 2 REFUTES against 2 SUPPORTS and the judge's SUPPORTS
    judge = {"label": "SUPPORTS", "cited_cells": ["R2C3"], "reason": "Row 2 says 220."}
    with fake_llm_server(scripted_sql(["cases"], [WRONG_ROW, WRONG_ROW, GOOD, GOOD, BROKEN], judge=judge)) as srv:
        both = await check_claim(llm_for(tmp_settings, srv), CASES, CLAIM, embedder=BagOfWordsEmbedder(),
                                 variant="program-sql+ccoe")
    assert both.label == "SUPPORTS" and both.decided_by == "program+ccoe" and both.confidence == 0.6


async def test_unrunnable_queries_retry_once_with_the_error_then_ccoe(tmp_settings, fake_llm_server):
    judge = {"label": "REFUTES", "cited_cells": ["R2C3"], "reason": "The judge read row 2."}
    cut = Reply(content="SELECT cases AS value, cases = 220 AS verdict FROM t WHERE pro", finish_reason="length",
                more_choices=[BROKEN])
    with fake_llm_server(scripted_sql(["cases"], [BROKEN] * 5, [cut], judge=judge)) as srv:
        check = await check_claim(llm_for(tmp_settings, srv), CASES, CLAIM, embedder=BagOfWordsEmbedder(),
                                  variant="program-sql")
    reqs = [r for r in srv.requests if is_sql(r)]
    assert len(reqs) == 2 and "A previous query failed: <data>no row matches" in reqs[1]["messages"][-1]["content"]
    assert check.decided_by == "ccoe" and check.label == "REFUTES" and check.programs.retried
    assert "cut off at 160 tokens" in check.programs.runs[0].error and not any(r.ran for r in check.programs.runs)


async def test_questions_answer_from_the_query(tmp_settings, fake_llm_server):
    question = "SELECT province FROM t WHERE year = 2011 ORDER BY cases DESC LIMIT 1"
    with fake_llm_server(scripted_sql(["province", "cases"], [question] * 3)) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), CASES, "question", "Which province had the most cases?",
                              n=3, program_form="sql")
    assert outcome.winner == "Alberta" and "Alberta (1012)" in outcome.reason and (3, 3) in outcome.cells
    assert "AS verdict" not in [r for r in srv.requests if is_sql(r)][0]["structured_outputs"]["grammar"]


async def test_the_setting_picks_the_form_on_the_chat_path_and_the_default_is_unchanged(tmp_settings,
                                                                                         fake_llm_server):
    def run(settings):
        deps = Deps(settings, llm=llm_for(settings, srv))
        deps.__dict__["embedder"] = BagOfWordsEmbedder()
        session = Session("c1")
        session.add_table(CASES)
        return verify_claim(ToolContext(deps=deps, evidence=EvidenceLedger(), session=session), Input(claim=CLAIM))

    sql_settings = tmp_settings.model_copy(update={"table_program_form": "sql"})
    with fake_llm_server(scripted_sql(["province", "cases"], [GOOD] * 5)) as srv:
        out = await run(sql_settings)
    assert out.verdict == "SUPPORTS" and out.cells == ["T1:R2C1", "T1:R2C3"] and out.confidence == 1.0
    assert out.programs[1] == ("program 1: rows where Province = 'Ontario' → Cases; check: Cases = 220 = 220 "
                               "→ SUPPORTS (rows R2)")

    def ops_only(req):
        assert not is_sql(req), "the default form sent a grammar"
        if is_columns(req):
            return Reply(content=json.dumps({"columns": ["province", "cases"]}))
        return Reply(content=json.dumps(LOOKUP), more_choices=[json.dumps(LOOKUP)] * 4)

    with fake_llm_server(ops_only) as srv:
        out = await run(tmp_settings)
    assert tmp_settings.table_program_form == "ops" and out.verdict == "SUPPORTS" and out.decided_by == "program"


# -- the real model ------------------------------------------------------------------------------
@pytest.mark.real_model
async def test_real_model_checks_a_claim_with_sql(real_settings):
    llm = LLMClient(real_settings)
    try:
        check = await check_claim(llm, CASES, "Alberta had 1,012 cases in 2011.", variant="program-sql")
    finally:
        await llm.aclose()
    ran = [r for r in check.programs.runs if r.ran]
    assert ran, f"no query ran: {[r.error for r in check.programs.runs]}"
    assert check.label == "SUPPORTS", work(check)
    assert not vote_problems([check], ["SUPPORTS"], decide_one=False)  # a split vote may fall back (program_votes)
    assert check.decided_by != "program" or (3, 3) in check.cells, work(check)
    assert all(1 <= r <= CASES.n_rows for r, _ in check.cells)


# -- the evaluation: both forms side by side on the dev split ------------------------------------
async def test_dev_split_runs_both_forms_on_the_same_claims(tmp_settings, tmp_path, fake_llm_server):
    from assistant.evals.tables_eval import load_pubhealthtab, run_benchmark
    from tests.conftest import EVAL_DATA

    if not (EVAL_DATA / "pubhealthtab").exists():
        pytest.skip("eval data not mirrored")
    any_table = "SELECT COUNT(*) AS value, COUNT(*) > 0 AS verdict FROM t"

    def handler(req):
        if is_columns(req):
            return Reply(content='{"columns": ["')  # unreadable: no NEI shortcut, the programs run
        if is_sql(req):
            return Reply(content=any_table, more_choices=[any_table] * 4)
        if is_program(req):
            return Reply(content="not json", more_choices=["not json"] * 4)  # no fixed-operations program runs
        if "response_format" in req:
            return Reply(content=json.dumps({"label": "REFUTES", "cited_cells": ["R1C1"], "reason": "Row 1."}))
        return Reply(content="Assuming this label, row 1 says so.")

    with fake_llm_server(handler) as srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        path = await run_benchmark("pubhealthtab", tmp_settings, variants=["program", "program-sql"], limit=2,
                                   llm=llm, embedder=BagOfWordsEmbedder(), docs_dir=tmp_path, echo=lambda *_: None,
                                   split="dev")
    report = json.loads(path.read_text())
    # the eval split's claims on tables no test claim uses (#75), not test
    assert path.name == "pubhealthtab-dev.json" and report["selection_size"] == 108
    assert set(report["item_ids"]) <= {it.id for it in load_pubhealthtab(EVAL_DATA, split="eval")}
    assert report["variants"]["program-sql"]["decided_by"] == {"program": 2}
    assert report["variants"]["program"]["decided_by"] == {"ccoe": 2}
    assert report["paired"]["program vs program-sql"]["n"] == 2
    records = [json.loads(line) for line in open(report["log"])]
    assert {r["programs"]["program_form"] for r in records if r["variant"] == "program-sql"} == {"sql"}
    assert {r["pred"] for r in records if r["variant"] == "program-sql"} == {"SUPPORTS"}


async def test_wtq_runs_the_sql_form_beside_the_default(tmp_settings, tmp_path, fake_llm_server):
    from assistant.evals.tables_eval import run_wtq

    from tests.test_tables_eval import tiny_wtq

    wtq = tiny_wtq(tmp_path)
    top = "SELECT team FROM t ORDER BY wins DESC LIMIT 1"

    def handler(req):
        if is_columns(req):
            return Reply(content=json.dumps({"columns": ["team", "wins"]}))
        if is_sql(req):
            return Reply(content=top, more_choices=[top] * 4)
        if is_program(req):
            # Feyenoord's row, whatever was asked (an argmin for "won the most" is now read as an argmax)
            wrong = {"filters": [{"column": "wins", "op": "=", "value": "7"}], "fn": "value", "column": "team",
                     "answer_column": "team"}
            return Reply(content=json.dumps(wrong), more_choices=[json.dumps(wrong)] * 4)
        raise AssertionError("no model answer was expected")

    with fake_llm_server(handler) as srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        path = await run_wtq(tmp_settings, variants=["program", "program-sql"], llm=llm, docs_dir=tmp_path,
                             wtq_dir=wtq, echo=lambda *_: None)
    report = json.loads(path.read_text())
    # SQL answers PSV (right once). The scripted fixed operations rank nothing ("wins = 7 → team"), so on the plain
    # superlative they do not vote and the question's own words answer PSV (tools._question_rules); on Ajax's
    # wins they answer Feyenoord's row (wrong)
    assert report["variants"]["program-sql"]["accuracy"] == 0.5 and report["variants"]["program"]["accuracy"] == 0.5
    records = [json.loads(line) for line in open(report["log"])]
    assert {r["id"]: r["pred"] for r in records if r["variant"] == "program"} == {"q-1": "PSV", "q-2": "Feyenoord"}
    assert report["paired"]["program vs program-sql"]["n"] == 2 and report["complete"] is False
