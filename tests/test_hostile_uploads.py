"""At least 150 malformed and hostile uploads (tables and texts): each loads right or gets one clear message,
within 10 s and 500 MB (#17).

The corpus and the harness are in tests/hostile_uploads.py; each case runs in its own process.
"""

from __future__ import annotations

import json

import pytest

from tests.hostile_uploads import (RSS_LIMIT_MB, TIME_LIMIT_S, build_cases, counts, message_problem, run_corpus,
                                   write_summary)

CASES = build_cases()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    work = tmp_path_factory.mktemp("hostile")
    result = run_corpus(work, CASES)
    result["summary_path"] = write_summary(result, work / "hostile_uploads_summary.json")
    return result


def test_the_corpus_is_big_enough_and_named_once():
    assert len(CASES) >= 150  # #79: the first 68 plus new kinds in every format family
    assert len({c.name for c in CASES}) == len(CASES)


def test_no_crash_no_hang_no_formula_run(corpus):
    bad = [(o.case, o.kind, o.problem) for o in corpus["outcomes"] if o.kind not in ("loaded", "refused")]
    assert corpus["hostile_upload_crashes_or_hangs"] == 0, bad
    assert corpus["formulas_executed"] == 0
    assert corpus["max_seconds"] < TIME_LIMIT_S and corpus["max_rss_mb"] < RSS_LIMIT_MB


def test_the_summary_records_the_counts(corpus):
    summary = json.loads(corpus["summary_path"].read_text())
    assert {k: summary[k] for k in counts(corpus)} == counts(corpus)
    assert summary["tried"] == len(CASES) == len(summary["outcomes"])
    assert counts(corpus) == {"tried": len(CASES), "crashes_or_hangs": 0, "formulas_executed": 0, "silently_wrong": 0}
    assert any(c.upload == "text" for c in CASES)
    assert summary["by_class"]["loaded_right"] + summary["by_class"]["refused_clearly"] == len(CASES)
    assert summary["slowest_case"] in {c.name for c in CASES}


def test_each_outcome_falls_in_one_class():
    from tests.hostile_uploads import Outcome, classes

    got = classes([Outcome("a", "loaded", 0.1, 1.0), Outcome("b", "refused", 0.1, 1.0),
                   Outcome("c", "loaded", 0.1, 1.0, problem="cell 'x' read as 'y'"),
                   Outcome("d", "refused", 0.1, 1.0, problem="raw exception text"), Outcome("e", "hung", 10, 0)])
    assert got["loaded_right"] == got["refused_clearly"] == got["silently_wrong"] == 1
    assert got["refused_wrongly_or_unclearly"] == got["hung"] == 1 and got["crashed"] == 0


@pytest.mark.parametrize("case", [c.name for c in CASES])
def test_each_upload_loads_right_or_is_refused_clearly(corpus, case):
    outcome = next(o for o in corpus["outcomes"] if o.case == case)
    assert outcome.kind in ("loaded", "refused"), outcome.problem
    assert outcome.problem is None, f"{outcome.kind}: {outcome.problem}"


def test_message_check_rejects_raw_exception_text():
    # The harness's own judge must be able to fail.
    assert message_problem("ParseError: unclosed token: line 1, column 18")
    assert message_problem("Traceback (most recent call last): …")
    assert message_problem("")
    assert message_problem("The file empty.csv is empty.") is None
