"""The table benchmarks' loaders, item selection, and a resumable scripted run."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from assistant.evals.report import NOT_RECORDED, code_version
from assistant.evals.tables_eval import (
    CARRIED, LABELS3, SCITAB_SUBSET, load_pubhealthtab, load_scitab, load_split, load_tabfact, run_benchmark,
    select_items, summarize)
from assistant.llm import LLMClient
from tests.conftest import EVAL_DATA, KB_DATA
from tests.fake_openai import Reply
from tests.test_tables_filter import BagOfWordsEmbedder

pytestmark = pytest.mark.skipif(not (EVAL_DATA / "scitab").exists(), reason="eval data not mirrored")


def judged(label: str, calls: list | None = None):
    """A fake server that judges every claim ``label`` citing R1C1 (and writes a plain reason otherwise); each
    request is appended to ``calls`` when given."""
    def handler(req):
        if calls is not None:
            calls.append(req)
        if "response_format" in req:
            return Reply(content=json.dumps({"label": label, "cited_cells": ["R1C1"], "reason": "x"}))
        return Reply(content="R1C1 says so.")

    return handler


def test_loaders_map_labels_and_tables():
    sci = load_scitab(EVAL_DATA)
    assert len(sci) == 1224 and Counter(i.label for i in sci) == {"SUPPORTS": 457, "REFUTES": 411,
                                                                   "NOT ENOUGH INFO": 356}
    assert len({id(i.table) for i in sci}) == 213
    pht = load_pubhealthtab(EVAL_DATA)
    assert len(pht) == 194 and Counter(i.label for i in pht) == {"SUPPORTS": 103, "REFUTES": 46,
                                                                  "NOT ENOUGH INFO": 45}
    measles = next(i.table for i in pht if "Measles Outbreaks" in i.table.title)
    assert measles.columns[:3] == ["Province", "Year", "Number of cases"]
    assert measles.cell(1, 1) == "Quebec" and measles.row_label_col == 1
    tf = load_tabfact(EVAL_DATA)
    assert len(tf) == 1998 and set(i.label for i in tf) == {"SUPPORTS", "REFUTES"}
    for item in sci + pht + tf:
        assert item.table.n_cols >= 1 and all(len(r) == item.table.n_cols for r in item.table.rows)


def test_scitab_subset_is_fixed_by_seed():
    sci = load_scitab(EVAL_DATA)
    a = select_items("scitab", sci, seed=0, limit=None)
    b = select_items("scitab", list(reversed(sci)), seed=0, limit=None)
    assert len(a) == SCITAB_SUBSET and [i.id for i in a] == [i.id for i in b]
    assert [i.id for i in select_items("scitab", sci, seed=1, limit=None)] != [i.id for i in a]
    assert [i.id for i in select_items("scitab", sci, seed=0, limit=5)] == [i.id for i in a[:5]]


async def test_scripted_run_writes_report_and_resumes(tmp_settings, tmp_path, fake_llm_server):
    handler = judged("SUPPORTS")

    # A check that times out is left for the next run by design; on a loaded machine three concurrent checks
    # against the in-process server once took over the fixture's 10 s, and the resumed run then checked it; once
    # more, beside an evaluation run on 2 cores, with the request timeout raised (the 5 s connect timeout, then).
    tmp_settings = tmp_settings.model_copy(update={"llm_timeout_s": 120, "llm_connect_timeout_s": 60})
    with fake_llm_server(handler) as srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        path = await run_benchmark("pubhealthtab", tmp_settings, variants=["full", "direct"], limit=3, llm=llm,
                                   embedder=BagOfWordsEmbedder(), docs_dir=tmp_path, echo=lambda *_: None,
                                   concurrency=3)
        first_requests = len(srv.requests)
        await run_benchmark("pubhealthtab", tmp_settings, variants=["full", "direct"], limit=3, llm=llm,
                            embedder=BagOfWordsEmbedder(), docs_dir=tmp_path, echo=lambda *_: None)
        assert len(srv.requests) == first_requests  # everything resumed from the log
    again = await run_benchmark("pubhealthtab", tmp_settings, variants=["full"], limit=3, llm=llm,
                                docs_dir=tmp_path, echo=lambda *_: None, report_only=True)
    assert json.loads(again.read_text())["variants"]["direct"]["n"] == 3  # report from the log, server gone
    report = json.loads(path.read_text())
    assert set(report["variants"]) == {"full", "direct"} and report["items"] == 3 and len(report["item_ids"]) == 3
    full = report["variants"]["full"]
    golds = [json.loads(line)["gold"] for line in open(report["log"]) if '"full"' in line]
    assert full["n"] == 3 and full["accuracy"] == pytest.approx(sum(g == "SUPPORTS" for g in golds) / 3)
    assert set(full["confusion"]) >= {"SUPPORTS", "REFUTES", "NOT ENOUGH INFO"} and "macro_f1" in full
    # Each variant beside the constant on its own items: here the majority label of the three claims.
    assert full["majority_baseline_same_items"] == pytest.approx(
        sum(g == report["majority_label"] for g in golds) / 3)
    assert report["thesis"]["full"] == 81.41 and not report["complete"]
    assert report["paired"]["full vs direct"] == {"n": 3, "a_only": 0, "b_only": 0, "p": 1.0}  # same scripted answers
    md = (tmp_path / "eval" / "pubhealthtab.md").read_text()
    assert "Paired, full vs direct: on 3 shared claims" in md
    assert f"PARTIAL run: 3 of the {len(report['selection_ids'])} selected items" in md
    assert (tmp_path / "eval" / "pubhealthtab.png").exists() and (tmp_path / "eval" / "pubhealthtab.md").exists()


def test_citation_rates_split_by_cell_grammar():
    def rec(valid, constrained):
        return {"gold": "SUPPORTS", "pred": "SUPPORTS", "latency_s": 1.0, "citations_valid": valid,
                **({"cells_constrained": True} if constrained else {})}

    records = [rec(False, False), rec(False, False), rec(True, False), rec(True, True), rec(False, True),
               rec(True, True), rec(True, True)]
    out = summarize(records, LABELS3)
    assert out["invalid_citation_rate"] == pytest.approx(3 / 7)
    assert out["invalid_citation_rate_constrained"] == pytest.approx(1 / 4)
    assert summarize(records[:3], LABELS3)["invalid_citation_rate_constrained"] is None


async def test_a_timed_out_check_is_left_for_the_next_run_not_counted(tmp_settings, tmp_path, fake_llm_server):
    slow_claims = {"first": True}

    def handler(req):
        if "response_format" in req and slow_claims["first"]:
            slow_claims["first"] = False
            return Reply(content="{}", delay_s=2.5)  # outlives the client's timeout
        return Reply(content=json.dumps({"label": "SUPPORTS", "cited_cells": ["R1C1"], "reason": "x"}))

    settings = tmp_settings.model_copy(update={"llm_timeout_s": 1.0})
    said: list[str] = []
    with fake_llm_server(handler) as srv:
        llm = LLMClient(settings, base_url=srv.base_url, model="fake-model")
        path = await run_benchmark("pubhealthtab", settings, variants=["direct"], limit=3, llm=llm,
                                   docs_dir=tmp_path, echo=said.append)
        report = json.loads(path.read_text())
        assert report["variants"]["direct"]["n"] == 2 and report["variants"]["direct"]["errors"] == 0
        assert any("timed out" in s and "run the same command again" in s for s in said)
        path = await run_benchmark("pubhealthtab", settings, variants=["direct"], limit=3, llm=llm,
                                   docs_dir=tmp_path, echo=said.append)
    assert json.loads(path.read_text())["variants"]["direct"]["n"] == 3  # the second run did the skipped one


async def test_retry_errors_reruns_only_the_failed_checks(tmp_settings, tmp_path, fake_llm_server):
    broken = {"left": 1}

    def handler(req):
        if broken["left"]:
            broken["left"] -= 1
            return Reply(content='{"label": "SUPP')  # unreadable, and not a whitespace run: logged as an error
        return Reply(content=json.dumps({"label": "SUPPORTS", "cited_cells": ["R1C1"], "reason": "x"}))

    with fake_llm_server(handler) as srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        run = dict(variants=["direct"], limit=3, llm=llm, docs_dir=tmp_path, echo=lambda *_: None)
        first = json.loads((await run_benchmark("pubhealthtab", tmp_settings, **run)).read_text())
        assert first["variants"]["direct"]["errors"] == 1
        await run_benchmark("pubhealthtab", tmp_settings, **run)
        assert len(srv.requests) == 3  # a plain resume keeps the logged error
        again = json.loads((await run_benchmark("pubhealthtab", tmp_settings, retry_errors=True, **run)).read_text())
    assert len(srv.requests) == 4 and again["variants"]["direct"]["errors"] == 0 and again["variants"]["direct"]["n"] == 3


async def test_a_check_logged_against_an_earlier_reading_of_its_table_is_run_again(
        tmp_settings, tmp_path, fake_llm_server, monkeypatch):
    from assistant.evals import tables_eval

    def handler(req):
        return Reply(content=json.dumps({"label": "SUPPORTS", "cited_cells": ["R1C1"], "reason": "x"}))

    said: list[str] = []
    with fake_llm_server(handler) as srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        await run_benchmark("pubhealthtab", tmp_settings, variants=["direct"], limit=3, llm=llm,
                            docs_dir=tmp_path, echo=said.append)
        first = len(srv.requests)
        chosen = [it.id for it in select_items("pubhealthtab", load_pubhealthtab(EVAL_DATA), seed=0, limit=3)]
        real_loader = tables_eval.BENCHMARKS["pubhealthtab"]

        def reread(eval_dir):  # the loader now reads the second chosen claim's table differently
            items = real_loader[0](eval_dir)
            for it in items:
                if it.id == chosen[1]:
                    it.table.rows[0][0] = it.table.rows[0][0] + " (corrected)"
            return items

        monkeypatch.setitem(tables_eval.BENCHMARKS, "pubhealthtab", (reread, *real_loader[1:]))
        path = await run_benchmark("pubhealthtab", tmp_settings, variants=["direct"], limit=3, llm=llm,
                                   docs_dir=tmp_path, echo=said.append)
        assert len(srv.requests) == first + 1  # only the changed table's check ran again
    assert any("1 checks were logged by another commit's code or against an earlier reading" in s for s in said)
    report = json.loads(path.read_text())
    assert report["variants"]["direct"]["n"] == 3  # the new record replaces the stale one, not added to it
    records = [json.loads(line) for line in open(report["log"])]
    assert len(records) == 4 and all("table_sha" in r for r in records)
    assert len({r["table_sha"] for r in records if r["id"] == chosen[1]}) == 2


def test_pubhealthtab_broken_flattened_grids_are_read_from_the_html():
    from assistant.evals.tables_eval import flattened_grid_is_broken, pubhealthtab_table

    pht = {it.id: it for it in load_pubhealthtab(EVAL_DATA)}
    raw = {json.loads(line)["_id"]: json.loads(line)
           for line in (EVAL_DATA / "pubhealthtab" / "pubhealthtab_testset.jsonl").read_text().splitlines()
           if line.strip()}
    broken = [i for i, r in raw.items() if flattened_grid_is_broken(r["table"].get("header_horizontal") or [],
                                                                      r["table"].get("rows") or [],
                                                                      r["table"].get("header_vertical") or [])]
    assert len(broken) == 61
    # A rowspan in the page: the flattened rows slid "Dava" under the wrong header; the HTML keeps it under
    # "Manufacturer", beside the brand it belongs to.
    methotrexate = next(pht[i].table for i in broken if "Dava" in json.dumps(raw[i]["table"]["rows"])
                        and "Routes" in raw[i]["table"].get("header_horizontal", []))
    man = methotrexate.columns.index("Manufacturer") + 1
    brand = methotrexate.columns.index("Brand Names") + 1
    row = next(r for r in range(1, methotrexate.n_rows + 1) if methotrexate.cell(r, man) == "Dava")
    assert methotrexate.cell(row, brand) == "Rheumatrex Dose Pack (scored)"
    # A two-row header with colspans: one merged name per column, no "Column N" padding.
    polls = next(pht[i].table for i in broken if "POLLING AVERAGE" in raw[i]["table"].get("header_horizontal", []))
    assert polls.columns == ["YEAR", "POLLING AVERAGE HEADING INTO CONVENTIONS",
                             "POLLING AVERAGE 30 DAYS AFTER CONVENTIONS", "ACTUAL RESULT"]
    assert polls.rows[0] == ["1972", "Nixon +16.0", "Nixon +29.7", "Nixon +23.2"]
    # Tables whose flattened grid is sound are read from it, as before.
    sound = next(i for i in raw if i not in broken and raw[i]["table"].get("header_vertical"))
    assert pubhealthtab_table(raw[sound], name="x").rows[0][0] == raw[sound]["table"]["header_vertical"][0]


async def test_program_variant_logs_who_decided(tmp_settings, tmp_path, fake_llm_server):
    """The program variant runs through the same log and report, with decided_by counted per variant (#13)."""
    def handler(req):
        name = req.get("response_format", {}).get("json_schema", {}).get("name")
        assert name == "ColumnChoice", "with not_in_table chosen, no program and no judge may be requested"
        return Reply(content=json.dumps({"columns": ["not_in_table"]}))

    with fake_llm_server(handler) as srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        path = await run_benchmark("pubhealthtab", tmp_settings, variants=["program"], limit=2, llm=llm,
                                   embedder=BagOfWordsEmbedder(), docs_dir=tmp_path, echo=lambda *_: None)
    report = json.loads(path.read_text())
    program = report["variants"]["program"]
    assert program["n"] == 2 and program["decided_by"] == {"columns": 2}
    golds = [json.loads(line)["gold"] for line in open(report["log"])]
    assert program["accuracy"] == pytest.approx(sum(g == "NOT ENOUGH INFO" for g in golds) / 2)
    records = [json.loads(line) for line in open(report["log"])]
    assert all(r["programs"]["not_in_table"] and r["pred"] == "NOT ENOUGH INFO" for r in records)


def test_wtq_tables_selection_and_denotation():
    from assistant.evals.tables_eval import denotation_match, load_wtq, select_wtq

    wtq = KB_DATA / "wikitablequestions"
    if not wtq.exists():
        pytest.skip("no WikiTableQuestions mirror")
    items = load_wtq(wtq)
    first = select_wtq(items, seed=0)
    assert len(first) == 300 and [i.id for i in select_wtq(list(reversed(items)), seed=0)] == [i.id for i in first]
    cyclists = next(i for i in items if i.id == "nu-0")
    assert cyclists.answers == ["Italy"] and cyclists.table.columns[4] == "UCI ProTour Points"
    assert cyclists.table.rows[0][3] == "5h 29' 10\""  # backslash-escaped quotes read as quotes
    assert denotation_match("100000", ["100,000"]) and denotation_match("Chile, Ecuador", ["Ecuador", "Chile"])
    assert not denotation_match("Chile", ["Ecuador", "Chile"]) and not denotation_match("3", ["4"])


def tiny_wtq(root):
    """A two-question WikiTableQuestions mirror: 'which team won the most?' (PSV) and Ajax's wins (12)."""
    wtq = root / "wtq"
    (wtq / "csv" / "1-csv").mkdir(parents=True)
    (wtq / "csv" / "1-csv" / "0.csv").write_text('"Team","Wins"\n"Ajax","12"\n"PSV","19"\n"Feyenoord","7"\n')
    (wtq / "data").mkdir()
    (wtq / "data" / "pristine-unseen-tables.tsv").write_text(
        "id\tutterance\tcontext\ttargetValue\nq-1\twhich team won the most?\tcsv/1-csv/0.csv\tPSV\n"
        "q-2\thow many wins did ajax have?\tcsv/1-csv/0.csv\t12\n")
    return wtq


async def test_wtq_run_scores_both_variants(tmp_settings, tmp_path, fake_llm_server):
    from assistant.evals.tables_eval import run_wtq

    wtq = tiny_wtq(tmp_path)
    argmax = {"filters": [], "fn": "argmax", "column": "wins", "answer_column": "team"}

    def handler(req):
        name = req.get("response_format", {}).get("json_schema", {}).get("name")
        if name == "ColumnChoice":
            return Reply(content=json.dumps({"columns": ["team", "wins"]}))
        if name == "TableProgram":
            return Reply(content=json.dumps(argmax), more_choices=[json.dumps(argmax)] * 4)
        return Reply(content=json.dumps({"answer": "12", "cited_cells": ["R1C2"], "reason": "Row 1."}))

    with fake_llm_server(handler) as srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        path = await run_wtq(tmp_settings, variants=["program", "llm"], llm=llm, docs_dir=tmp_path, wtq_dir=wtq,
                             echo=lambda *_: None)
    report = json.loads(path.read_text())
    logged = [json.loads(line) for line in
              (tmp_settings.data_dir / "eval" / "wikitablequestions-fake-model.jsonl").read_text().splitlines()]
    # the samples per request are logged, so a replay knows which programs voted first
    assert [r["programs"]["batches"] for r in logged if r["variant"] == "program"] == [[5], [5]]
    # the scripted programs always answer PSV (right once), the scripted model always 12 (right once)
    assert report["variants"]["program"]["accuracy"] == 0.5 and report["variants"]["llm"]["accuracy"] == 0.5
    assert report["variants"]["program"]["decided_by"] == {"program": 2}
    assert report["majority_baseline"] == 0.5 and report["paired"]["program vs llm"]["n"] == 2
    assert report["first_option_baseline"] == 0.0  # the first row's first cell, Ajax, answers neither question
    assert report["complete"] and "subset (seed 0); complete." in (tmp_path / "eval" / "wikitablequestions.md").read_text()
    # Only one variant run: the report says which, not "PARTIAL: 2 of 2 questions".
    with fake_llm_server(handler) as srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        other = tmp_settings.model_copy(update={"data_dir": tmp_path / "other-data"})
        await run_wtq(other, variants=["program"], llm=llm, docs_dir=tmp_path, wtq_dir=wtq, echo=lambda *_: None)
    assert "PARTIAL: questions answered per variant of the 2: program 2; not run: llm." in \
        (tmp_path / "eval" / "wikitablequestions.md").read_text()


def test_wtq_replay_re_votes_logged_programs_without_the_model(tmp_settings, tmp_path):
    """--replay: the logged samples voted again under today's rules, paired with the logged answers."""
    from assistant.evals.report import ResultsLog
    from assistant.evals.tables_eval import replay_wtq_log

    wtq = tiny_wtq(tmp_path)
    all_rows = {"filters": [], "fn": "value", "column": "wins", "answer_column": "team"}
    ajax = {"filters": [{"column": "team", "op": "=", "value": "Ajax"}], "fn": "value", "column": "wins",
            "answer_column": "team"}
    log = ResultsLog(tmp_settings.data_dir / "eval" / "wikitablequestions-fake-model.jsonl")
    # As logged before the grounding rule: three programs listing every team's wins outvoted two reading "ajax".
    runs = [{"raw": all_rows, "ran": True}] * 3 + [{"raw": ajax, "ran": True}] * 2
    log.add("program", "q-2", gold=["12"], pred="12, 19, 7", correct=False, decided_by="program",
            programs={"program_form": "ops", "runs": runs, "not_in_table": False})
    # A question the model answered after a split vote keeps that answer when the replay splits too.
    log.add("program", "q-1", gold=["PSV"], pred="PSV", correct=True, decided_by="llm",
            programs={"program_form": "ops", "runs": [{"raw": None, "ran": False, "error": "x"}],
                      "not_in_table": False})
    lines = []
    result = replay_wtq_log(tmp_settings, limit=None, seed=0, split="test", echo=lines.append, wtq_dir=wtq,
                            model="fake-model")
    assert (result.items, result.logged_correct, result.replayed_correct, result.needs_model) == (2, 1, 2, 0)
    assert [c["id"] for c in result.changed] == ["q-2"] and result.changed[0]["replayed"] == "12"
    assert "[gained]" in lines[0] and "replayed under the current rules 1.000" in lines[-1]


def test_wtq_replay_asks_as_the_chat_asks_with_the_options_the_question_offers(tmp_path):
    """A replay must answer a choice question as the live path does: over the rows the options name, then matched
    to an option in code. Re-voting alone answered "12" where the run answered "above", and PSV (outside the
    two named teams) for "ajax or feyenoord"."""
    from tools.program_replay import replay_wtq
    from assistant.evals.tables_eval import QAItem, denotation_match, load_wtq

    table = load_wtq(tiny_wtq(tmp_path))[0].table
    ajax_wins = {"filters": [{"column": "team", "op": "=", "value": "Ajax"}], "fn": "value", "column": "wins",
                 "answer_column": "team"}
    most_wins = {"filters": [], "fn": "argmax", "column": "wins", "answer_column": "team"}
    items = [QAItem("c-1", "did ajax win above or below 10 games?", ["above"], table),
             QAItem("c-2", "which team won more games, ajax or feyenoord?", ["Ajax"], table)]
    records = [{"id": item.id, "pred": item.answers[0], "correct": True, "decided_by": "program",
                "programs": {"program_form": "ops", "not_in_table": False,
                             "runs": [{"raw": raw, "ran": True}] * 5}}
               for item, raw in zip(items, (ajax_wins, most_wins))]
    result = replay_wtq(items, records, denotation_match)
    assert (result.items, result.replayed_correct, result.needs_model) == (2, 2, 0), result.changed
    assert result.changed == []


def test_wtq_replay_votes_a_second_batch_only_where_the_first_splits(tmp_path):
    """A question logged with two batches of programs ([5, 5]) is replayed as the chat runs it: the first batch
    alone while it decides, both where it splits."""
    from tools.program_replay import replay_question
    from assistant.evals.tables_eval import load_wtq

    table = load_wtq(tiny_wtq(tmp_path))[0].table
    most = {"raw": {"filters": [], "fn": "argmax", "column": "wins", "answer_column": "team"}, "ran": True}
    fewest = {"raw": {"filters": [], "fn": "argmin", "column": "wins", "answer_column": "team"}, "ran": True}
    broken = {"raw": None, "ran": False, "error": "not valid JSON"}
    question = "which team stands out by its wins?"
    answer, outcome = replay_question(table, question, [most, most, fewest, fewest, broken] + [most] * 3 + [fewest] * 2,
                                      [5, 5])
    assert answer == "PSV" and outcome.votes == {"PSV": 5, "Feyenoord": 4} and outcome.batches == [5, 5]
    answer, outcome = replay_question(table, question, [most] * 3 + [fewest] * 2 + [fewest] * 5, [5, 5])
    assert answer == "PSV" and outcome.votes == {"PSV": 3, "Feyenoord": 2} and outcome.batches == [5]
    # logged before batches were recorded: all runs are one batch
    answer, outcome = replay_question(table, question, [most] * 3 + [fewest] * 2 + [fewest] * 5)
    assert answer == "Feyenoord" and outcome.batches == [10]


def test_dev_split_shares_no_table_with_the_reported_items():
    """#75: a rule tuned on a dev claim is never tuned on a test table. The counts are the issue's, measured with
    the same selection (table-disjoint TabFact 281, SciTab 181, PubHealthTab 108)."""
    from assistant.evals.tables_eval import BENCHMARKS, TABFACT_SUBSET, load_split, table_fingerprint

    sizes = {}
    for benchmark in BENCHMARKS:
        test = select_items(benchmark, load_split(benchmark, EVAL_DATA, "test"), seed=0, limit=None)
        dev = select_items(benchmark, load_split(benchmark, EVAL_DATA, "dev"), seed=0, limit=None, split="dev")
        assert dev and not {i.id for i in test} & {i.id for i in dev}, benchmark
        test_tables = {table_fingerprint(i.table) for i in test}
        assert not test_tables & {table_fingerprint(i.table) for i in dev}, benchmark
        sizes[benchmark] = len(dev)
    assert sizes == {"tabfact": 281, "scitab": 181, "pubhealthtab": 108}
    assert len(select_items("tabfact", load_tabfact(EVAL_DATA), seed=0, limit=None)) == TABFACT_SUBSET


def test_wtq_dev_questions_are_on_tables_the_test_subset_never_uses():
    from assistant.evals.tables_eval import load_wtq, select_wtq, table_fingerprint

    wtq = KB_DATA / "wikitablequestions"
    test = {table_fingerprint(i.table) for i in select_wtq(load_wtq(wtq, "pristine-unseen-tables"), seed=0)}
    dev = select_wtq(load_wtq(wtq, "training"), seed=0)
    assert len(dev) == 300 and not test & {table_fingerprint(i.table) for i in dev}


async def test_published_predictions_are_carried_into_the_next_report(tmp_settings, tmp_path, fake_llm_server):
    """A variant run on another machine (its log gone) keeps its numbers and pairs with the new one (on dev: a
    sealed test run carries nothing, see test_a_sealed_test_run_counts_only_this_commits_checks)."""
    handler = judged("SUPPORTS")

    with fake_llm_server(handler) as srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        first = json.loads((await run_benchmark("pubhealthtab", tmp_settings, split="dev", variants=["direct"], limit=4, llm=llm,
                                                docs_dir=tmp_path, echo=lambda *_: None)).read_text())
        assert set(first["predictions"]["direct"].values()) == {"SUPPORTS"}
        # Another machine: an empty data dir, the published report only.
        other = tmp_settings.model_copy(update={"data_dir": tmp_path / "other-data"})
        second = json.loads((await run_benchmark("pubhealthtab", other, split="dev", variants=["full"], limit=4, llm=llm,
                                                 embedder=BagOfWordsEmbedder(), docs_dir=tmp_path,
                                                 echo=lambda *_: None)).read_text())
    carried, ran = second["variants"]["direct"], first["variants"]["direct"]
    assert carried["n"] == 4 and all(carried[k] == ran[k] for k in ("accuracy", "macro_f1", "confusion"))
    assert second["paired"]["full vs direct"]["n"] == 4
    assert "Carried over from the published report's per-item predictions (checked on another machine; " \
        "latencies are of the items checked here): direct (4 items)" in (tmp_path / "eval" / "pubhealthtab-dev.md").read_text()


async def test_a_variant_resumes_on_another_machine_from_the_published_predictions(tmp_settings, tmp_path,
                                                                                   fake_llm_server):
    """A run cut short on one machine goes on elsewhere: the published items are not checked again."""
    calls = []

    handler = judged("SUPPORTS", calls)

    with fake_llm_server(handler) as srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        await run_benchmark("pubhealthtab", tmp_settings, split="dev", variants=["direct"], limit=2, llm=llm, docs_dir=tmp_path,
                            echo=lambda *_: None)
        per_check = len(calls)
        other = tmp_settings.model_copy(update={"data_dir": tmp_path / "other-data"})
        lines = []
        second = json.loads((await run_benchmark("pubhealthtab", other, split="dev", variants=["direct"], limit=4, llm=llm,
                                                 docs_dir=tmp_path, echo=lines.append)).read_text())
    assert "2 checks to run" in lines[0]
    assert len(calls) == 2 * per_check  # the two new items only
    direct = second["variants"]["direct"]
    assert direct["n"] == 4 and direct["timed_items"] == 2 and len(second["predictions"]["direct"]) == 4
    assert "direct (2 items)" in (tmp_path / "eval" / "pubhealthtab-dev.md").read_text()
    # The report says which code made which predictions instead of mixing them silently.
    here = code_version() or NOT_RECORDED
    assert second["provenance"] == {"direct": {here: 2, CARRIED: 2}}
    assert (f"Code behind the predictions: direct: 2 at {here}, 2 carried from the published report "
            "(MORE THAN ONE CODE VERSION).") in (tmp_path / "eval" / "pubhealthtab-dev.md").read_text()
    logged = [json.loads(line) for line in next((tmp_path / "other-data" / "eval").glob("*.jsonl")).open()]
    assert len(logged) == 2 and {r.get("commit", NOT_RECORDED) for r in logged} == {here}


async def test_rerun_published_checks_the_carried_items_again_and_the_new_records_win(tmp_settings, tmp_path,
                                                                                      fake_llm_server):
    """Items carried from another machine's report (older rules) can be checked again here; the report then
    counts this machine's records, not the carried predictions."""
    label = {"now": "SUPPORTS"}

    def handler(req):
        if "response_format" in req:
            return Reply(content=json.dumps({"label": label["now"], "cited_cells": ["R1C1"], "reason": "x"}))
        return Reply(content="R1C1 says so.")

    with fake_llm_server(handler) as srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        await run_benchmark("pubhealthtab", tmp_settings, split="dev", variants=["direct"], limit=2, llm=llm, docs_dir=tmp_path,
                            echo=lambda *_: None)
        other = tmp_settings.model_copy(update={"data_dir": tmp_path / "other-data"})
        label["now"] = "REFUTES"
        lines = []
        again = json.loads((await run_benchmark("pubhealthtab", other, split="dev", variants=["direct"], limit=2, llm=llm,
                                                docs_dir=tmp_path, echo=lines.append,
                                                rerun_published=True)).read_text())
        resumed = []
        await run_benchmark("pubhealthtab", other, split="dev", variants=["direct"], limit=2, llm=llm, docs_dir=tmp_path,
                            echo=resumed.append, rerun_published=True)
    assert "2 checks to run" in lines[0] and "0 checks to run" in resumed[0]  # rerun once, then resumed
    assert set(again["predictions"]["direct"].values()) == {"REFUTES"}
    assert again["variants"]["direct"]["n"] == 2 and again["variants"]["direct"]["timed_items"] == 2


async def test_a_sealed_test_run_counts_only_this_commits_checks(tmp_settings, tmp_path, fake_llm_server):
    """#75: on the test split nothing is carried from a published report or from a check another commit logged; the
    report records its commit, date, tuning split and the ledger's count, and the run is in the ledger."""
    from assistant.evals.sealed import ledger

    handler = judged("SUPPORTS")

    log_dir = tmp_settings.data_dir / "eval"
    log_dir.mkdir(parents=True)
    item = select_items("pubhealthtab", load_split("pubhealthtab", EVAL_DATA, "test"), seed=0, limit=1)[0]
    # A check an older commit logged for the first item: a sealed run must make it again.
    (log_dir / "tables-pubhealthtab-fake-model.jsonl").write_text(json.dumps(
        {"variant": "direct", "id": item.id, "gold": item.label, "pred": "REFUTES", "commit": "0000000"}) + "\n")
    lines: list[str] = []
    with fake_llm_server(handler) as srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        report = json.loads((await run_benchmark("pubhealthtab", tmp_settings, variants=["direct"], limit=2,
                                                 llm=llm, docs_dir=tmp_path, echo=lines.append)).read_text())
    assert "by another commit's code" in lines[0] and "2 checks to run" in lines[1]
    assert set(report["predictions"]["direct"].values()) == {"SUPPORTS"}
    assert report["sealed"] is True and report["commit"] == (code_version() or "unknown")
    assert report["tuning_split"].startswith("PubHealthTab eval-split claims on tables no test claim uses")
    assert report["test_runs"] == {"sealed_at_this_commit": 1, "exploratory_at_this_commit": 0, "all_commits": 1}
    assert [(e["benchmark"], e["kind"], e["checked"]) for e in ledger(tmp_path)] == [("pubhealthtab", "sealed", 2)]
    assert "Sealed test run at" in (tmp_path / "eval" / "pubhealthtab.md").read_text()


async def test_an_exploratory_test_run_is_counted_and_never_published(tmp_settings, tmp_path, fake_llm_server):
    from assistant.evals.sealed import exploratory_docs_dir, ledger

    handler = judged("REFUTES")

    with fake_llm_server(handler) as srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        path = await run_benchmark("pubhealthtab", tmp_settings, variants=["direct"], limit=1, llm=llm,
                                   docs_dir=tmp_path, echo=lambda *_: None, exploratory=True)
    assert path.parent == exploratory_docs_dir(tmp_settings) / "eval"
    assert not (tmp_path / "eval" / "pubhealthtab.json").exists()
    assert "EXPLORATORY" in path.with_suffix(".md").read_text() and "sealed" not in json.loads(path.read_text())
    assert [e["kind"] for e in ledger(tmp_path)] == ["exploratory"]


@pytest.mark.parametrize("args", [["--replay"], ["--limit", "5"]])
@pytest.mark.parametrize("benchmark", ["tabfact", "wikitablequestions"])
def test_the_cli_refuses_a_look_at_test_unless_exploratory(benchmark, args):
    from click.testing import CliRunner

    from assistant.cli import main

    result = CliRunner().invoke(main, ["eval", benchmark, *args])
    assert result.exit_code == 2 and "The test split is sealed" in result.output and "--exploratory" in result.output


def test_claim_replay_re_votes_logged_programs_without_the_model():
    """--replay for the claim sets: the logged samples voted again under today's rules, paired with the log."""
    from types import SimpleNamespace

    from tools.program_replay import replay_claims
    from kb.tables import Table

    table = Table(name="sites", title="Sites", columns=["Site", "Enrolled", "Target"],
                  rows=[["Leeds", "120", "150"], ["Oslo", "90", "80"], ["Lyon", "45", "100"]])
    claim = "Oslo enrolled more than its target."
    item = SimpleNamespace(id="c-1", table=table, claim=claim)
    # As logged before the same-row rule: Oslo's Enrolled > Oslo's Enrolled, three times, refuted the claim.
    self_check = {"filters": [{"column": "site", "op": "=", "value": "Oslo"}], "fn": "value", "column": "enrolled",
                  "answer_column": "site", "check": {"op": ">", "against": "row", "value": "Oslo"}}
    runs = [{"raw": self_check, "ran": True}] * 3
    records = [{"id": "c-1", "gold": "SUPPORTS", "pred": "REFUTES", "decided_by": "program",
                "programs": {"program_form": "ops", "runs": runs}}]
    result = replay_claims([item], records)
    assert (result.items, result.logged_correct, result.replayed_correct, result.needs_model) == (1, 0, 1, 0)
    assert result.changed[0]["replayed"] == "SUPPORTS" and "3 logged claims" not in result.summary()
    assert result.summary().startswith("1 logged claims with ops programs")


def test_denotation_match_reads_a_list_as_the_answer_writes_it():
    from assistant.evals.tables_eval import denotation_match

    gold = ["Bangkok, Thailand", "Incheon, South Korea", "Macau"]
    assert denotation_match("Macau; Bangkok, Thailand; Incheon, South Korea", gold)
    assert not denotation_match("Bangkok, Thailand; Macau", gold)
    assert denotation_match("Chile, Ecuador", ["Ecuador", "Chile"])
    assert not denotation_match("Chile", ["Chile", "Peru"])


def test_a_sealed_run_is_stamped_with_the_commit_that_made_its_checks(tmp_path, monkeypatch, tmp_settings):
    """A commit made while a sealed run goes on does not rename the run in its ledger entry or its report."""
    import assistant.evals.sealed as sealed

    monkeypatch.setattr(sealed, "code_version", lambda: "aaaaaaa")
    run = sealed.SealedRun("pubhealthtab", "test", False, tmp_settings, tmp_path)
    monkeypatch.setattr(sealed, "code_version", lambda: "bbbbbbb")  # a docs-only commit, mid-run
    run.record(items=1, checked=1, variants=["program"])
    assert run.stamp("dev")["commit"] == "aaaaaaa" and sealed.ledger(tmp_path)[0]["commit"] == "aaaaaaa"
    assert run.stamp("dev")["test_runs"]["sealed_at_this_commit"] == 1


async def test_a_run_under_another_prompt_layout_has_its_own_log_and_report(tmp_settings, tmp_path, fake_llm_server):
    """EVIDENTIA_TABLE_PROMPT_LAYOUT (#80): a dev run under instructions-first neither resumes from nor overwrites the
    default layout's log and report, and each record says the layout it ran under."""
    def handler(req):
        return Reply(content=json.dumps({"columns": ["not_in_table"]}))

    other = tmp_settings.model_copy(update={"table_prompt_layout": "instructions-first"})
    paths = {}
    with fake_llm_server(handler) as srv:
        for settings in (tmp_settings, other):
            llm = LLMClient(settings, base_url=srv.base_url, model="fake-model")
            paths[settings.table_prompt_layout] = await run_benchmark(
                "pubhealthtab", settings, variants=["program"], split="dev", limit=2, llm=llm,
                embedder=BagOfWordsEmbedder(), docs_dir=tmp_path, echo=lambda *_: None)
    assert len(srv.requests) == 4  # two claims under each layout, one column choice each: nothing resumed across
    reports = {k: json.loads(p.read_text()) for k, p in paths.items()}
    assert paths["table-first"] != paths["instructions-first"]
    assert "instructions-first" in paths["instructions-first"].name
    logs = {k: [json.loads(line) for line in open(r["log"])] for k, r in reports.items()}
    assert reports["table-first"]["log"] != reports["instructions-first"]["log"]
    assert {r["prompt_layout"] for r in logs["instructions-first"]} == {"instructions-first"}
    assert {r["prompt_layout"] for r in logs["table-first"]} == {"table-first"}


async def test_a_sealed_test_run_refuses_another_prompt_layout(tmp_settings, tmp_path):
    import click

    other = tmp_settings.model_copy(update={"table_prompt_layout": "instructions-first"})
    with pytest.raises(click.ClickException, match="default configuration"):
        await run_benchmark("pubhealthtab", other, variants=["program"], limit=1, docs_dir=tmp_path,
                            echo=lambda *_: None)
