"""``evidentia eval recompute``: every published table report's figures come again from its per-item predictions and
the benchmark's gold labels, and a changed prediction, figure or README statement is caught."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from assistant.evals.cli import eval_group
from assistant.evals.recompute import (MISMATCH, NO_LOG, NOT_RECOMPUTABLE, OK, gold_items, is_right,
                                       recompute_report, recompute_run_log)
from assistant.evals.report import DOCS_DIR
from tests.shared_data import EVAL_DATA, KB_DATA

EVAL_DOCS = DOCS_DIR / "eval"
RUN_LOGS = sorted((EVAL_DOCS / "runs").glob("*.jsonl"))
WITH_PREDICTIONS = sorted(p for p in EVAL_DOCS.glob("*.json") if json.loads(p.read_text()).get("predictions"))
needs_eval_data = pytest.mark.skipif(not EVAL_DATA.exists(), reason=f"benchmark data not found at {EVAL_DATA}")


def needs_data_for(name: str):
    """The eval data for every table benchmark, and the KB mirror too for WikiTableQuestions."""
    if not EVAL_DATA.exists():
        pytest.skip(f"benchmark data not found at {EVAL_DATA}")
    if name.startswith("wikitablequestions") and not KB_DATA.exists():
        pytest.skip(f"WikiTableQuestions not found under {KB_DATA}")


def copy_report(name: str, tmp_path: Path, source: Path | None = None) -> Path:
    """A copy of a committed report (``source``, else the published one) in ``<tmp>/eval/``, the layout
    ``--docs-dir`` reads."""
    (tmp_path / "eval").mkdir(exist_ok=True)
    return Path(shutil.copy(source or EVAL_DOCS / f"{name}.json", tmp_path / "eval" / f"{name}.json"))


# the TabFact report the sealed run replaced: it keeps a variant ("full") carried from an earlier run
TABFACT_NOT_SEALED = EVAL_DOCS / "runs" / "tabfact-report-not-sealed.json"


def rewrite(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def cli(tmp_path: Path, *args: str, data: bool = True):
    env = {"EVIDENTIA_EVAL_DATA_DIR": str(EVAL_DATA) if data else None,
           "EVIDENTIA_KB_MIRROR_DIR": str(KB_DATA) if data else None}
    return CliRunner(env=env).invoke(eval_group, ["recompute", "--docs-dir", str(tmp_path), *args])


def test_the_committed_reports_include_every_table_benchmark_with_predictions():
    names = {p.stem for p in WITH_PREDICTIONS}
    assert {"tabfact", "scitab", "pubhealthtab", "wikitablequestions"} <= names


@pytest.mark.parametrize("path", WITH_PREDICTIONS, ids=lambda p: p.stem)
def test_every_published_report_recomputes_from_its_predictions(path):
    needs_data_for(path.stem)
    result = recompute_report(path, EVAL_DATA, KB_DATA)
    assert result.status == OK, [r for r in result.mismatches()]
    assert any(r.metric == "accuracy" and r.ok for r in result.rows)
    assert any(r.metric == "majority_baseline" and r.ok for r in result.rows)


@pytest.mark.parametrize("path", RUN_LOGS, ids=lambda p: p.stem)
def test_every_committed_run_log_agrees_with_the_figures_it_backs(path):
    needs_data_for(path.stem)
    result = recompute_run_log(path, EVAL_DATA, KB_DATA)
    assert result.status == OK, result.mismatches()
    assert any(r.metric == "items logged (README)" and r.ok for r in result.rows)


@needs_eval_data
def test_the_logs_behind_the_published_reports_are_checked_against_them():
    result = recompute_run_log(EVAL_DOCS / "runs" / "tabfact-7894591.jsonl", EVAL_DATA, KB_DATA)
    assert {"tabfact.json accuracy", "tabfact.json predictions = log's", "right (README)"} <= {
        r.metric for r in result.rows if r.ok}


@needs_eval_data
def test_a_variant_from_an_earlier_run_is_not_recomputable_rather_than_wrong(tmp_path):
    result = recompute_report(copy_report("tabfact", tmp_path, TABFACT_NOT_SEALED), EVAL_DATA, KB_DATA)
    full = [r for r in result.rows if r.variant == "full"]
    assert full and all(r.ok is None and r.note == NOT_RECOMPUTABLE for r in full)
    assert result.status == OK


@needs_eval_data
def test_a_variant_without_predictions_nor_the_earlier_run_mark_is_a_mismatch(tmp_path):
    path = copy_report("tabfact", tmp_path, TABFACT_NOT_SEALED)
    rewrite(path, lambda d: d["variants"]["full"].pop("from_earlier_run"))
    result = recompute_report(path, EVAL_DATA, KB_DATA)
    assert result.status == MISMATCH
    assert {r.variant for r in result.mismatches()} == {"full"}


@needs_eval_data
def test_one_flipped_claim_prediction_is_a_mismatch_of_that_variants_accuracy(tmp_path):
    path = copy_report("tabfact-dev", tmp_path)

    def flip_first(data):
        preds = data["predictions"]["program"]
        first = data["item_ids"][0]
        preds[first] = "REFUTES" if preds[first] == "SUPPORTS" else "SUPPORTS"

    rewrite(path, flip_first)
    result = recompute_report(path, EVAL_DATA, KB_DATA)
    assert result.status == MISMATCH
    wrong = {(r.variant, r.metric) for r in result.mismatches()}
    assert ("program", "accuracy") in wrong
    assert all(r.ok for r in result.rows if r.metric in ("n", "majority_baseline"))  # only the scores moved


def test_one_wrong_wtq_answer_is_a_mismatch_of_that_variants_accuracy(tmp_path):
    needs_data_for("wikitablequestions")
    path = copy_report("wikitablequestions", tmp_path)
    data = json.loads(path.read_text())
    golds = gold_items("wikitablequestions", "test", EVAL_DATA, KB_DATA)
    right_one = next(i for i, pred in data["predictions"]["program"].items()
                     if is_right("wikitablequestions", pred, golds[i]))
    rewrite(path, lambda d: d["predictions"]["program"].__setitem__(right_one, "ERROR"))
    result = recompute_report(path, EVAL_DATA, KB_DATA)
    assert result.status == MISMATCH
    assert [(r.variant, r.metric) for r in result.mismatches()] == [("program", "accuracy")]


@needs_eval_data
def test_a_published_figure_changed_by_hand_is_a_mismatch(tmp_path):
    path = copy_report("pubhealthtab-dev", tmp_path)
    rewrite(path, lambda d: d.__setitem__("majority_baseline", d["majority_baseline"] + 1e-6))
    result = recompute_report(path, EVAL_DATA, KB_DATA)
    assert [r.metric for r in result.mismatches()] == ["majority_baseline"]


@needs_eval_data
def test_a_readme_figure_the_log_does_not_give_is_a_mismatch(tmp_path):
    runs = tmp_path / "eval" / "runs"
    runs.mkdir(parents=True)
    log = Path(shutil.copy(EVAL_DOCS / "runs" / "pubhealthtab-dev-0132c9f.jsonl", runs))
    (runs / "README.md").write_text("| file | items logged |\n|---|---|\n"
                                    "| `pubhealthtab-dev-0132c9f.jsonl` | 26 of 195: 23 right (always SUPPORTS 19) |\n")
    result = recompute_run_log(log, EVAL_DATA, KB_DATA)
    assert result.status == MISMATCH
    assert [(r.metric, r.published, r.recomputed) for r in result.mismatches()] == [("right (README)", 23, 22)]


def test_a_report_without_predictions_has_no_per_item_log(tmp_path):
    result = recompute_report(EVAL_DOCS / "medqa.json", tmp_path, tmp_path)  # no data needed: nothing to score
    assert result.status == NO_LOG
    assert "predictions" in result.missing
    assert any(r.metric == "accuracy" and r.ok is None for r in result.rows)


@needs_eval_data
def test_the_command_exits_1_on_a_mismatching_report_and_0_on_a_true_one(tmp_path):
    path = copy_report("tabfact-dev", tmp_path)
    ok = cli(tmp_path)
    assert ok.exit_code == 0, ok.output
    assert ok.output.startswith("tabfact-dev: ok | program accuracy 0.6833333333 = 0.6833333333")

    rewrite(path, lambda d: d["variants"]["program"].__setitem__("accuracy", 0.7))
    bad = cli(tmp_path, "tabfact-dev")
    assert bad.exit_code == 1, bad.output
    assert "tabfact-dev: mismatch" in bad.output and "program accuracy 0.7 != 0.6833333333" in bad.output


def test_the_command_says_which_data_folders_to_set(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no .env of the checkout's
    copy_report("medqa", tmp_path)
    result = cli(tmp_path, data=False)
    assert result.exit_code == 2
    assert "EVIDENTIA_EVAL_DATA_DIR" in result.output and "EVIDENTIA_KB_MIRROR_DIR" in result.output


@pytest.mark.skipif(not (EVAL_DATA.exists() and KB_DATA.exists()), reason="the data folders are checked first")
def test_the_command_refuses_an_unknown_report_name(tmp_path):
    copy_report("medqa", tmp_path)
    result = cli(tmp_path, "no-such-report")
    assert result.exit_code == 2 and "no-such-report" in result.output
