"""The execution-aware reranker of table programs (#77): features, the choice, fitting out of fold. No model."""

from __future__ import annotations

import numpy as np
import pytest

from assistant.evals.program_rerank import LoggedItem, evaluate
from tests.test_table_program import CASES, CLAIM, LOOKUP, WRONG_ROW
from tools._cells import TypedTable
from tools._table_program import run_sampled
from tools.program_rerank import FEATURES, Reranker, ScoredRun, choose_by
from tools.program_replay import features_of

UNSTATED = {**LOOKUP, "check": {"op": ">", "against": "value", "value": "100"}}


def feature(run: ScoredRun, name: str) -> float:
    return float(run.features[FEATURES.index(name)])


def test_features_say_what_each_program_reads_of_the_claim():
    typed = TypedTable.build(CASES)
    sampled = [run_sampled(p, typed, "claim", CLAIM) for p in (LOOKUP, LOOKUP, WRONG_ROW)]
    runs = features_of(sampled, typed, "claim", CLAIM)
    assert [r.verdict for r in runs] == ["SUPPORTS", "SUPPORTS", "REFUTES"]
    lookup, wrong = runs[0], runs[2]
    assert feature(lookup, "vote_share") == pytest.approx(2 / 3) and feature(wrong, "vote_share") == pytest.approx(1 / 3)
    assert feature(lookup, "plurality") == 1 and feature(wrong, "plurality") == 0
    assert feature(lookup, "filter_values_stated") == 1 and feature(wrong, "filter_values_stated") == 0  # Alberta
    assert feature(lookup, "check_stated") == 1 and feature(lookup, "column_named") == 1
    assert feature(lookup, "fn_value") == 1 and feature(lookup, "fn_count") == 0
    assert feature(lookup, "log_rows_selected") == pytest.approx(np.log1p(1))


def test_a_question_program_whose_answer_is_not_the_kind_asked_is_marked():
    typed = TypedTable.build(CASES)
    question = "How many cases did Ontario have?"
    count = {"filters": [{"column": "province", "op": "=", "value": "Ontario"}], "fn": "value", "column": "cases",
             "answer_column": "province"}
    name = {**count, "column": "province"}
    runs = features_of([run_sampled(p, typed, "question", question) for p in (count, name)], typed, "question",
                        question)
    assert [feature(r, "answer_kind_fits") for r in runs] == [1.0, 0.0]


def test_no_program_ran_gives_nothing_to_choose():
    typed = TypedTable.build(CASES)
    broken = run_sampled({**LOOKUP, "column": "nowhere"}, typed, "claim", CLAIM)
    assert features_of([broken], typed, "claim", CLAIM) == [] and choose_by([]) is None


def test_the_choice_sums_the_probabilities_of_each_answers_programs():
    runs = [ScoredRun(0, "A", np.zeros(1), 0.3), ScoredRun(1, "A", np.zeros(1), 0.3), ScoredRun(2, "B", np.zeros(1), 0.9)]
    assert choose_by(runs) == "B"  # 0.9 > 0.6
    runs[1].p_right = 0.7
    assert choose_by(runs) == "A"  # 1.0 > 0.9
    assert choose_by(runs, lambda r: 1.0) == "A"  # the plurality


def test_a_saved_reranker_loads_and_scores_alike(tmp_path):
    n = len(FEATURES)
    rng = np.random.default_rng(0)
    model = Reranker(rng.normal(size=n), np.abs(rng.normal(size=n)) + 0.5, rng.normal(size=n), 0.2, "test 3")
    model.save(tmp_path / "r.npz")
    again = Reranker.load(tmp_path / "r.npz")
    runs = [ScoredRun(0, "A", rng.normal(size=n)), ScoredRun(1, "B", rng.normal(size=n))]
    assert [r.p_right for r in again.score([ScoredRun(r.index, r.verdict, r.features) for r in runs])] \
        == pytest.approx([r.p_right for r in model.score(runs)])
    np.savez(tmp_path / "old.npz", features=np.array(["vote_share"]), mean=np.zeros(1), scale=np.ones(1),
             coef=np.zeros(1), intercept=np.zeros(1), fitted_on=np.array([""]))
    with pytest.raises(ValueError, match="refit"):
        Reranker.load(tmp_path / "old.npz")


def synthetic_items(n_tables: int = 30) -> list[LoggedItem]:
    """Items where the wrong answer has the most votes half the time, and only the right programs check what the
    claim states: a reranker that learns check_stated beats the plurality there."""
    rng = np.random.default_rng(1)
    items = []
    for t in range(n_tables):
        for k in range(2):
            wrong_majority = (t + k) % 2 == 0
            n_right, n_wrong = (2, 3) if wrong_majority else (3, 2)
            runs, labels = [], []
            for right, count in ((True, n_right), (False, n_wrong)):
                for _ in range(count):
                    x = rng.normal(scale=0.1, size=len(FEATURES))
                    x[FEATURES.index("check_stated")] = 1.0 if right else 0.0
                    x[FEATURES.index("vote_share")] = count / 5
                    runs.append(ScoredRun(len(runs), "SUPPORTS" if right else "REFUTES", x))
                    labels.append(right)
            items.append(LoggedItem(f"s:{t}:{k}", "synthetic", "claim", ["SUPPORTS"], f"table{t}", runs, labels,
                                    "REFUTES" if wrong_majority else "SUPPORTS"))
    return items


def test_fitted_out_of_fold_the_reranker_learns_what_the_vote_misses():
    items = synthetic_items()
    fitted = evaluate(items)
    accuracy = {arm: np.mean([it.arms[arm] for it in items]) for arm in ("plurality", "reranker", "majority+rules")}
    assert accuracy["plurality"] == pytest.approx(0.5) and accuracy["majority+rules"] == pytest.approx(0.5)
    assert accuracy["reranker"] > 0.95
    assert fitted["coef"][FEATURES.index("check_stated")] > 0


def test_too_little_data_is_a_clear_error():
    import click

    items = synthetic_items(1)
    with pytest.raises(click.ClickException, match="Too little to fit on"):
        evaluate(items)


def weights(**named: float) -> Reranker:
    coef = np.array([named.get(f, 0.0) for f in FEATURES])
    return Reranker(np.zeros(len(FEATURES)), np.ones(len(FEATURES)), coef, 0.0, "test")


def test_with_the_reranker_on_it_chooses_among_the_programs_that_ran_instead_of_the_vote():
    from tools._table_program import ProgramOutcome, decide

    typed = TypedTable.build(CASES)
    other_year = {**LOOKUP, "filters": [{"column": "year", "op": "=", "value": "2010"}]}  # Quebec's 12: REFUTES
    sampled = [run_sampled(p, typed, "claim", CLAIM) for p in (LOOKUP, other_year, other_year, other_year, LOOKUP)]
    assert [s.execution is not None for s in sampled] == [True] * 5

    def decided(rerank):
        outcome = ProgramOutcome(kind="claim")
        decide(outcome, sampled, typed, "claim", CLAIM, rerank=rerank)
        return outcome

    assert decided(None).winner == "REFUTES"  # 3 of 5
    chosen = decided(weights(filter_values_stated=5.0))  # "2010" is not in the claim; "Ontario" is
    assert chosen.winner == "SUPPORTS" and chosen.confidence == 0.4 and chosen.votes == {"SUPPORTS": 2, "REFUTES": 3}
    assert decided(weights(vote_share=5.0)).winner == "REFUTES"


async def test_the_chooser_setting_reaches_the_live_path(tmp_settings, fake_llm_server, monkeypatch):
    from tests.test_table_program import llm_for, scripted
    from tests.test_tables_filter import BagOfWordsEmbedder
    from tools import _table_program
    from tools.verify_claim import check_claim

    other_year = {**LOOKUP, "filters": [{"column": "year", "op": "=", "value": "2010"}]}
    monkeypatch.setattr(_table_program, "load_reranker", lambda: weights(filter_values_stated=5.0))
    settings = tmp_settings.model_copy(update={"table_chooser": "reranker"})
    with fake_llm_server(scripted(["province", "cases"], [LOOKUP, other_year, other_year, other_year, LOOKUP])) as srv:
        check = await check_claim(llm_for(settings, srv), CASES, CLAIM, embedder=BagOfWordsEmbedder())
    assert check.label == "SUPPORTS" and check.decided_by == "program"


def test_a_missing_reranker_says_how_to_fit_one(tmp_path):
    from tools.program_rerank import load_reranker

    with pytest.raises(ValueError, match="evidentia kb programs rerank"):
        load_reranker(tmp_path / "none.npz")


def test_a_choices_mean_logprob_is_read_from_the_reply_and_none_without_one():
    from types import SimpleNamespace as NS

    from assistant.llm import _mean_logprob

    tokens = [NS(logprob=-0.5), NS(logprob=-1.5), NS(logprob=float("-inf"))]  # -inf: a token the grammar forced
    assert _mean_logprob(NS(logprobs=NS(content=tokens))) == pytest.approx(-1.0)
    assert _mean_logprob(NS(logprobs=None)) is None and _mean_logprob(NS()) is None


def test_a_logged_programs_logprob_reaches_its_features_when_replayed():
    from tools.program_replay import replayed_features

    runs = [{"raw": LOOKUP, "logprob": -0.25}, {"raw": LOOKUP}]
    first, second = replayed_features(CASES, CLAIM, runs, "claim")
    assert feature(first, "mean_logprob") == -0.25 and feature(first, "logprob_known") == 1
    assert feature(second, "mean_logprob") == 0 and feature(second, "logprob_known") == 0


def test_the_published_measurement_recomputes_from_its_per_item_log(tmp_path):
    import json

    from assistant.evals.program_rerank import ARMS, summarise
    from assistant.evals.recompute import recompute_report

    records = [{"id": f"s:{i}", "source": "s", "kind": "claim" if i < 3 else "question", "programs": 5,
                "arms": {arm: (i + k) % 2 == 0 for k, arm in enumerate(ARMS)}} for i in range(5)]
    log = tmp_path / "program-reranker-dev.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    report = {"benchmark": "program-reranker-dev", "variants": summarise(records)}
    assert report["variants"]["plurality (claims)"] == {"accuracy": 2 / 3, "n": 3}
    path = tmp_path / "program-reranker-dev.json"
    path.write_text(json.dumps(report))
    assert recompute_report(path, tmp_path, tmp_path).status == "ok"
    report["variants"]["reranker (questions)"]["accuracy"] = 0.9
    path.write_text(json.dumps(report))
    result = recompute_report(path, tmp_path, tmp_path)
    assert result.status != "ok" and [r.variant for r in result.mismatches()] == ["reranker (questions)"]
