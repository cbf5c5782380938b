"""Shared evaluation plumbing: bounded concurrency keeps its bound, runs everything, and fails loudly."""

from __future__ import annotations

import asyncio

import pytest

from assistant.evals.report import bounded_map


def test_bounded_map_runs_every_item_with_at_most_n_in_flight():
    in_flight, peak, done = 0, 0, []

    async def work(i):
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01 * (i % 3))
        done.append(i)
        in_flight -= 1

    asyncio.run(bounded_map(work, range(10), 3))
    assert sorted(done) == list(range(10))
    assert peak == 3


def test_bounded_map_raises_the_first_error_and_cancels_the_rest():
    started = []

    async def work(i):
        started.append(i)
        if i == 1:
            raise RuntimeError("server down")
        await asyncio.sleep(10)

    with pytest.raises(RuntimeError, match="server down"):
        asyncio.run(asyncio.wait_for(bounded_map(work, range(6), 2), timeout=5))
    assert 5 not in started  # the queue behind the failure never started


def test_mcnemar_exact_on_hand_worked_cases():
    from assistant.evals.report import mcnemar

    same = {str(i): i % 2 == 0 for i in range(10)}
    assert mcnemar(same, same) == {"n": 10, "a_only": 0, "b_only": 0, "p": 1.0}
    # 6 discordant items, all won by a: p = 2 * (1/2)^6
    a = {str(i): True for i in range(8)}
    b = {str(i): i >= 6 for i in range(8)}
    r = mcnemar(a, b)
    assert (r["a_only"], r["b_only"]) == (6, 0) and r["p"] == pytest.approx(2 / 64)
    # 5 vs 3 discordant: p = 2 * P(X <= 3), X ~ Bin(8, 1/2) = 2 * 93/256
    a = {str(i): i < 5 for i in range(8)}
    b = {str(i): i >= 5 for i in range(8)}
    assert mcnemar(a, b)["p"] == pytest.approx(2 * 93 / 256)
    # only shared items count
    assert mcnemar({"x": True}, {"y": False})["n"] == 0


def test_obqa_answer_eval_per_retriever_with_fake_llm(tmp_path, fake_llm_server):
    """Every retriever answers the same questions; accuracy, paired tests and the report come from the log."""
    import json

    from assistant.evals.retrieval_eval import run_answer_eval
    from assistant.settings import Settings
    from tests.fake_openai import Reply

    data = tmp_path / "eval-data" / "openbookqa"
    data.mkdir(parents=True)
    (data / "openbook.txt").write_text('"A bee is a pollinating animal."\n"Metals conduct electricity."\n'
                                      '"A thermometer measures temperature."\n')
    qs = [("q1", "Which animal pollinates flowers?", ["a bee", "a rock"], "A"),
          ("q2", "What measures temperature?", ["a ruler", "a thermometer"], "B"),
          ("q3", "What conducts electricity?", ["metal", "wood"], "A")]
    (data / "test.jsonl").write_text("\n".join(json.dumps(
        {"id": i, "question": {"stem": q, "choices": [{"label": "AB"[k], "text": t} for k, t in enumerate(opts)]},
         "answerKey": a}) for i, q, opts, a in qs) + "\n")

    def judge(request):  # always "A", citing the first evidence id shown
        prompt = request["messages"][-1]["content"]
        return Reply(content=json.dumps({"answer": "A", "evidence": ["S1"] if "[S1]" in prompt else [],
                                         "confidence": "high"}))

    with fake_llm_server(judge) as srv:
        settings = Settings(_env_file=None, data_dir=tmp_path / "data", llm_base_url=srv.base_url,
                            llm_model="fake-model", llm_max_retries=0, llm_timeout_s=60,
                            eval_data_dir=tmp_path / "eval-data", mc_decider="judge")
        variants = run_answer_eval(settings, "obqa", retrievers=["bm25", "fused"], limit=3, chains=False,
                                   docs_dir=tmp_path / "docs", concurrency=2)
        n_requests = len(srv.requests)
        # resumed from the log: nothing is asked again
        run_answer_eval(settings, "obqa", retrievers=["bm25", "fused"], limit=3, chains=False,
                        docs_dir=tmp_path / "docs", concurrency=2)
        assert len(srv.requests) == n_requests == 6
    assert variants["bm25"]["accuracy"] == variants["fused"]["accuracy"] == 2 / 3  # "A" is right on q1, q3
    assert variants["fused"]["n"] == 3 and variants["fused"]["cited_rate"] == 1.0
    assert variants["fused"]["judge_failed_rate"] == 0.0 and variants["fused"]["rejected_citation_rate"] == 0.0
    report = json.loads((tmp_path / "docs" / "eval" / "obqa.json").read_text())
    assert report["paired"]["fused vs bm25"] == {"n": 3, "a_only": 0, "b_only": 0, "p": 1.0}
    assert "judge only" in (tmp_path / "docs" / "eval" / "obqa.md").read_text()

    # The likelihood decider on the same questions: its own variant beside the judge's, paired with it.
    from tests.kbloom_fake import ScriptedLM

    lm = ScriptedLM(word_logprobs={"rock": -1.0, "bee": -6.0, "ruler": -2.0, "thermometer": -2.0, "metal": -2.0,
                                   "wood": -1.0}, default=-2.0,
                    prompt_bias={"pollinating": {"bee": 5.0}, "measures": {"thermometer": 1.0},
                                 "conduct": {"metal": 3.0}})
    with fake_llm_server(lm.handler) as srv:
        likely = run_answer_eval(settings.model_copy(update={"llm_base_url": srv.base_url, "mc_decider": "likelihood"}),
                                 "obqa", retrievers=["fused"], limit=3, docs_dir=tmp_path / "docs")
        assert not any("messages" in r for r in srv.requests)  # no judge was asked
    assert likely["fused+likelihood"]["accuracy"] == 1.0 and likely["fused+likelihood"]["n"] == 3
    report = json.loads((tmp_path / "docs" / "eval" / "obqa.json").read_text())
    assert set(report["variants"]) == {"bm25", "fused", "fused+likelihood"}
    assert report["paired"]["fused+likelihood vs fused (judge only)"] == {"n": 3, "a_only": 1, "b_only": 0, "p": 1.0}
    assert report["paired"]["fused vs bm25"]["n"] == 3  # the judge run's paired test is kept
    assert "+likelihood by the likelihood decider" in (tmp_path / "docs" / "eval" / "obqa.md").read_text()


def test_judge_rates_count_only_records_that_logged_them():
    from assistant.evals.retrieval_eval import _judge_rates

    assert _judge_rates([{"correct": True}]) == {}  # logs from before the field existed
    recs = [{"judge_failed": True, "rejected_citations": []}, {"judge_failed": False, "rejected_citations": ["S9"]},
            {"judge_failed": False, "rejected_citations": []}, {"correct": False}]
    assert _judge_rates(recs) == {"judge_failed_rate": 1 / 3, "rejected_citation_rate": 1 / 3}


def test_paired_notes_show_tiny_p_values_instead_of_zero():
    from assistant.evals.report import paired_notes

    tiny, large = paired_notes({"full vs a": {"n": 194, "a_only": 48, "b_only": 10, "p": 4.5e-7},
                                "full vs b": {"n": 194, "a_only": 18, "b_only": 14, "p": 0.5966}}, "claims")
    assert "p = 4.5e-07" in tiny and "p = 0.000" not in tiny and "real difference" in tiny
    assert "p = 0.597" in large and "no difference" in large


def test_fallback_scores_keep_the_judges_fallbacks_apart():
    from assistant.evals.report import fallback_scores

    recs = [{"correct": True, "judge_failed": False}, {"correct": True, "judge_failed": True},  # lucky fallback
            {"correct": False, "judge_failed": True}, {"correct": False, "judge_failed": False}]
    scores = fallback_scores(recs)
    assert scores["accuracy"] == 1 / 4  # only the model's own right answer counts
    assert scores["accuracy_with_fallback"] == 2 / 4
    assert scores["judge_failed_rate"] == 2 / 4
    # Records logged before the flag existed: the split is unknown, so no "accuracy" is claimed.
    old = fallback_scores([{"correct": True}, {"correct": False, "judge_failed": False}])
    assert "accuracy" not in old and "judge_failed_rate" not in old
    assert old == {"accuracy_with_fallback": 0.5, "judge_flag_missing": 1}
    assert fallback_scores([]) == {}


def test_label_baselines_from_gold_labels():
    from assistant.evals.report import baseline_notes, label_baselines

    base = label_baselines(["B", "A", "B", "C", "B"], ["A", "A", "A", "A", "A"])
    assert base["majority_label"] == "B" and base["majority_baseline"] == 3 / 5
    assert base["first_option_baseline"] == 1 / 5 and base["baseline_items"] == 5
    tie = label_baselines(["REFUTES", "SUPPORTS"])
    assert tie["majority_label"] == "REFUTES" and tie["majority_baseline"] == 0.5
    assert "first_option_baseline" not in tie
    assert "'B'" in baseline_notes(base) and "0.600" in baseline_notes(base) and "0.200" in baseline_notes(base)
    with pytest.raises(ValueError):
        label_baselines(["A", "B"], ["A"])


def test_obqa_report_scores_a_failed_judge_as_its_own_outcome(tmp_path, fake_llm_server):
    """Synthetic log records: a fallback that happens to be right is not counted as the model's answer."""
    import json

    from assistant.evals.report import ResultsLog
    from assistant.evals.retrieval_eval import run_answer_eval
    from assistant.settings import Settings

    data = tmp_path / "eval-data" / "openbookqa"
    data.mkdir(parents=True)
    (data / "openbook.txt").write_text('"A bee is a pollinating animal."\n')
    qs = [("q1", "A"), ("q2", "B"), ("q3", "A"), ("q4", "A")]
    (data / "test.jsonl").write_text("\n".join(json.dumps(
        {"id": i, "question": {"stem": f"question {i}?", "choices": [{"label": "A", "text": "x"},
                                                                     {"label": "B", "text": "y"}]},
         "answerKey": a}) for i, a in qs) + "\n")
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", llm_base_url="http://127.0.0.1:9/v1",
                        llm_model="fake-model", llm_max_retries=0, eval_data_dir=tmp_path / "eval-data",
                        mc_decider="judge")
    log = ResultsLog(settings.data_dir / "eval" / "obqa-answers-judge-only.jsonl")
    outcomes = {"q1": (True, False), "q2": (True, True), "q3": (False, True), "q4": (False, False)}
    for item_id, (correct, failed) in outcomes.items():
        log.add("bm25", item_id, pred="A", gold="A", correct=correct, cited=["S1"], judge_failed=failed,
                rejected_citations=[], decided_by="fallback" if failed else "model",
                citation_by="code" if failed else "model", seconds=1.0)
    with fake_llm_server(lambda req: pytest.fail("every item is in the log: nothing may be asked")) as srv:
        settings = settings.model_copy(update={"llm_base_url": srv.base_url})
        variants = run_answer_eval(settings, "obqa", retrievers=["bm25"], limit=4, chains=False,
                                   docs_dir=tmp_path / "docs")
    assert variants["bm25"]["accuracy"] == 1 / 4
    assert variants["bm25"]["accuracy_with_fallback"] == 2 / 4
    assert variants["bm25"]["judge_failed_rate"] == 2 / 4 and variants["bm25"]["code_cited_rate"] == 2 / 4
    report = json.loads((tmp_path / "docs" / "eval" / "obqa.json").read_text())
    assert report["majority_baseline"] == 3 / 4 and report["majority_label"] == "A"
    assert report["first_option_baseline"] == 3 / 4
    md = (tmp_path / "docs" / "eval" / "obqa.md").read_text()
    assert "judge_failed_rate" in md and "accuracy_with_fallback" in md and "always 'A'" in md


def test_patch_report_adds_baselines_to_a_published_report_and_keeps_its_numbers(tmp_path):
    import json

    from assistant.evals.baselines import FALLBACKS_UNKNOWN, patch_report

    data = tmp_path / "eval-data" / "openbookqa"
    data.mkdir(parents=True)
    golds = ["B", "B", "A", "C", "B"]  # the report covers only the first 4 questions
    (data / "test.jsonl").write_text("\n".join(json.dumps(
        {"id": f"q{i}", "question": {"stem": "?", "choices": [{"label": lab, "text": lab} for lab in "ABCD"]},
         "answerKey": g}) for i, g in enumerate(golds)) + "\n")
    out = tmp_path / "obqa.json"
    variants = {"bm25": {"accuracy": 0.5, "n": 4}}
    out.write_text(json.dumps({"benchmark": "obqa", "model": "m", "items": 4, "seed": 0, "variants": variants}))
    (tmp_path / "obqa.md").write_text("# obqa\n\n| variant | accuracy |\n|---|---|\n| bm25 | 0.5 |\n\nNotes.\n")
    for _ in range(2):  # idempotent
        patch_report(out, tmp_path / "eval-data", fallbacks_unknown=True)
    report = json.loads(out.read_text())
    assert report["variants"] == variants  # measured numbers untouched
    assert report["majority_baseline"] == 2 / 4 and report["majority_label"] == "B"
    assert report["first_option_baseline"] == 1 / 4 and report["baseline_items"] == 4
    assert report["judge_failed_rate"] is None and report["fallbacks"] == FALLBACKS_UNKNOWN
    md = (tmp_path / "obqa.md").read_text()
    assert md.count("Baselines without any model") == 1 and md.count(FALLBACKS_UNKNOWN) == 1
    assert md.index("| bm25 |") < md.index("Baselines") < md.index("Notes.")


def test_obqa_retrieval_names_recall_at_1_for_what_it_is_and_has_a_constant_baseline():
    from assistant.evals.retrieval_eval import constant_fact_baseline, retrieval_metrics

    m = retrieval_metrics([1, 3, None, 1])
    assert "accuracy" not in m and m["recall_at_1"] == m["recall@1"] == 0.5
    base = constant_fact_baseline(["Plants need light.", "plants need light", "Metals conduct."])
    assert base["majority_baseline"] == 2 / 3 and base["majority_label"] == "plants need light"
    assert "recall@1" in base["majority_baseline_metric"]


def test_a_rerun_keeps_the_hand_written_section_marked(tmp_path):
    from assistant.evals.report import write_bench, write_eval

    write_bench("area", {"tok_s": (10.0, "tok/s")}, notes="first run", docs_dir=tmp_path)
    md = tmp_path / "bench" / "area.md"
    md.write_text(md.read_text() + "\n## Added by hand after the run (not generated)\n\nW4A16 is 1.7x bf16.\n")
    write_bench("area", {"tok_s": (11.0, "tok/s")}, notes="second run", docs_dir=tmp_path)
    write_bench("area", {"tok_s": (12.0, "tok/s")}, notes="third run", docs_dir=tmp_path)
    text = md.read_text()
    assert "| tok_s | 12 | tok/s |" in text and "second run" not in text and "third run" in text
    assert text.count("## Added by hand after the run") == 1 and text.count("W4A16 is 1.7x bf16.") == 1
    assert text.count("_Kept from the previous version") == 1  # marked once, however often it is re-run
    assert text.index("third run") < text.index("## Added by hand")

    write_eval("bench", model="m", items=1, seed=0, variants={"a": {"accuracy": 1.0}}, docs_dir=tmp_path)
    assert "Added by hand" not in (tmp_path / "eval" / "bench.md").read_text()  # nothing to keep: nothing added


def _git(repo, *args):
    import subprocess

    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_code_version_names_the_commit_and_whether_its_code_changed(tmp_path):
    from assistant.evals.report import code_version

    assert code_version(tmp_path) is None  # not a git checkout: nothing to claim
    (tmp_path / "tools").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "tools" / "rule.py").write_text("X = 1\n")
    (tmp_path / "docs" / "notes.md").write_text("first\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "one")
    head = code_version(tmp_path)
    assert head is not None and len(head) == 7 and not head.endswith("+dirty")
    (tmp_path / "docs" / "notes.md").write_text("edited\n")  # not code: the results stay the commit's
    (tmp_path / "tools" / "new_untracked.py").write_text("")
    assert code_version(tmp_path) == head
    (tmp_path / "tools" / "rule.py").write_text("X = 2\n")
    assert code_version(tmp_path) == head + "+dirty"


def test_results_log_stamps_each_record_with_the_code_that_made_it(tmp_path):
    import json

    from assistant.evals.report import ResultsLog, provenance

    log = ResultsLog(tmp_path / "log.jsonl", commit="abc1234")
    log.add("program", 1, pred="SUPPORTS")
    log.add("program", 2, pred="REFUTES", commit="def5678")  # a caller's own stamp is kept
    unstamped = ResultsLog(tmp_path / "other.jsonl", commit="")
    unstamped.add("program", 3, pred="SUPPORTS")
    lines = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [r["commit"] for r in lines] == ["abc1234", "def5678"]
    assert "commit" not in unstamped.get("program", "3")
    reread = ResultsLog(tmp_path / "log.jsonl")  # what a resumed run reads back
    assert reread.get("program", "1")["commit"] == "abc1234"
    assert provenance(reread.records("program") + unstamped.records("program")) == {
        "abc1234": 1, "def5678": 1, "not recorded": 1}


def test_results_log_stamps_the_running_checkout_by_default(tmp_path):
    from assistant.evals.report import ResultsLog, code_version

    rec = ResultsLog(tmp_path / "log.jsonl").add("v", "a", pred="x")
    assert rec.get("commit") == code_version()  # this checkout's commit (None outside git: no stamp)
