"""The learned yes/no verdict reader (#78): features, the committed weights, the rule as fallback, and the dev-only
measurement that chose it (no model, no PubMedQA text committed)."""

from __future__ import annotations

import json
import logging
import random
from pathlib import Path

import numpy as np
import pytest

from assistant.answer import verdict_reader
from assistant.answer.verdict_reader import (FEATURE_NAMES, READ_SENTENCES, ReaderUnavailable, fit_reader,
                                             load_reader, read_artefact, reader_features)
from assistant.answer.verdicts import CodeVerdict, verdict_from_evidence
from tests.conftest import KB_DATA

ASPIRIN = "Does aspirin reduce the risk of stroke?"


def _conclusion(*sentences: str) -> dict[str, str]:
    return {f"S{i + 7}": s for i, s in enumerate(sentences)}


@pytest.fixture(autouse=True)
def _learned_reader(monkeypatch):
    monkeypatch.delenv("EVIDENTIA_VERDICT_READER", raising=False)
    verdict_reader._load.cache_clear()
    yield
    verdict_reader._load.cache_clear()


def test_features_have_one_name_each_and_read_only_the_closing_sentences():
    many = ["Background one.", "Methods two.", "Aspirin did not reduce the risk of stroke.", "Results.", "Done."]
    x = reader_features(ASPIRIN, many)
    assert x.shape == (len(FEATURE_NAMES),)
    assert np.array_equal(x, reader_features(ASPIRIN, many[-READ_SENTENCES:]))  # only the last three count
    near = reader_features(ASPIRIN, ["Aspirin did not reduce the risk of stroke.", "Results.", "Done."])
    named = dict(zip(FEATURE_NAMES, near))
    assert named["third_last:negated_finding"] == 1 and named["last:negated_finding"] == 0
    assert named["third_last:question_coverage"] == 1.0  # it repeats aspirin, reduce, risk, stroke
    short = dict(zip(FEATURE_NAMES, reader_features(ASPIRIN, ["Aspirin helps."])))
    assert short["last:present"] == 1 and short["second_last:present"] == 0 == short["third_last:present"]


def test_the_committed_reader_loads_and_reads_conclusions_it_never_saw():
    reader = load_reader()
    assert reader is not None and reader.labels[0] == "yes" and set(reader.labels) == {"yes", "no", "maybe"}
    assert reader.weights.shape == (3, len(FEATURE_NAMES)) and len(reader.trained_ids) == 700
    no = verdict_from_evidence({}, _conclusion("Aspirin did not reduce the risk of stroke."), ASPIRIN)
    assert (no.verdict, no.by, no.cue, no.evidence_id) == ("no", "reader", "did not", "S7")
    yes = verdict_from_evidence({}, _conclusion("Aspirin reduced the risk of stroke significantly."), ASPIRIN)
    assert (yes.verdict, yes.by, yes.rule) == ("yes", "reader", "yes")
    assert dict(yes.probabilities)["yes"] > 0.5 and abs(sum(dict(yes.probabilities).values()) - 1) < 1e-9


def test_a_negated_result_before_a_positive_conclusion_is_weighed_where_it_stands():
    """The rule reads "did not differ" anywhere in the last two sentences as "no"; the reader learned that a
    results sentence followed by a finding that restates the question is mostly a "yes" (dev: 47 such misses)."""
    concl = _conclusion("Patients were followed for two years.", "Stroke rates did not differ between the groups.",
                        "Aspirin reduces the risk of stroke in these patients.")
    decided = verdict_from_evidence({}, concl, ASPIRIN)
    assert (decided.verdict, decided.rule, decided.rule_verdict) == ("yes", "no", "no")
    assert decided.conclusion_ids == ("S7", "S8", "S9")
    line = decided.explain()
    assert line.startswith("**Verdict: Yes.**") and "[S7, S8, S9]" in line and "fitted on 700 PubMedQA" in line


def test_a_reader_verdict_is_not_turned_by_the_models_reading_and_the_rule_is_switchable(monkeypatch):
    concl = _conclusion("Aspirin reduced the risk of stroke significantly.", "It is safe.")
    learned = verdict_from_evidence({}, concl, ASPIRIN)
    assert learned.by == "reader" and not learned.wants_reading
    monkeypatch.setenv("EVIDENTIA_VERDICT_READER", "rule")
    ruled = verdict_from_evidence({}, concl, ASPIRIN)
    # the path before #78: the model's reading may turn the rule's "yes"
    assert (ruled.by, ruled.verdict, ruled.wants_reading) == ("rule", "yes", True)
    monkeypatch.setenv("EVIDENTIA_VERDICT_READER", "leaned")
    with pytest.raises(ValueError, match="EVIDENTIA_VERDICT_READER must be one of learned, rule"):
        verdict_from_evidence({}, concl, ASPIRIN)


def test_the_rule_reads_the_last_two_of_three_closing_sentences():
    concl = _conclusion("Aspirin did not reduce the risk of stroke.", "Results.", "Aspirin helps.")
    assert verdict_from_evidence({}, concl, ASPIRIN, by="rule").verdict == "yes"
    assert verdict_from_evidence({}, concl, ASPIRIN, by="rule").conclusion_ids == ("S8", "S9")
    assert verdict_from_evidence({}, dict(list(concl.items())[:2]), ASPIRIN, by="rule").verdict == "no"


def test_without_a_conclusion_or_a_question_and_for_sameness_the_rule_decides():
    assert verdict_from_evidence({"S1": "Drug X was not superior."}, None, ASPIRIN).by == "rule"
    assert verdict_from_evidence({}, _conclusion("Drug X helps."), "").by == "rule"
    same = verdict_from_evidence({}, {"S9": "Outcomes were comparable."}, question="Is A the same as B?")
    assert (same.by, same.verdict, same.cited) == ("rule", "yes", ("S9",))


def test_a_missing_artefact_falls_back_to_the_rule_with_a_logged_note(monkeypatch, tmp_path, caplog):
    monkeypatch.setattr(verdict_reader, "ARTEFACT", tmp_path / "absent.npz")
    concl = _conclusion("Patients were followed.", "Stroke rates did not differ.", "Aspirin reduces stroke risk.")
    with caplog.at_level(logging.WARNING, logger="assistant.answer.verdict_reader"):
        decided = verdict_from_evidence({}, concl, ASPIRIN)
    assert (decided.by, decided.verdict, decided.cue) == ("rule", "no", "did not")
    assert "fall back to the negation rule" in caplog.text and "evidentia kb verdict-reader" in caplog.text


def test_an_artefact_for_other_features_is_refused(tmp_path):
    reader = load_reader()
    path = reader.save(tmp_path / "reader.npz")
    assert np.allclose(read_artefact(path).weights, reader.weights)  # the round trip keeps the weights
    with np.load(path) as data:
        stale = {k: data[k] for k in data.files}
    stale["feature_names"] = stale["feature_names"][:-1]
    np.savez(tmp_path / "stale.npz", **stale)
    with pytest.raises(ReaderUnavailable, match="built for other features; rebuild it"):
        read_artefact(tmp_path / "stale.npz")
    (tmp_path / "junk.npz").write_text("not numpy")
    with pytest.raises(ReaderUnavailable, match="could not be read"):
        read_artefact(tmp_path / "junk.npz")


# -- fitting and the dev measurement ---------------------------------------------------------------------------
def _synthetic(n: int, seed: int = 3):
    """Conclusions whose label follows where a negation stands, as on PubMedQA: negated last sentence -> no,
    a hedge -> maybe, else yes (a negated results sentence before a positive finding stays yes)."""
    from assistant.evals.pubmedqa_verdicts import Example

    rng = random.Random(seed)
    out = []
    for i in range(n):
        drug, outcome = rng.choice(["aspirin", "statins", "metformin"]), rng.choice(["stroke", "mortality", "pain"])
        q = f"Does {drug} reduce {outcome}?"
        kind = rng.choice(["no", "yes", "yes-after-results", "maybe"])
        last = {"no": f"{drug} did not reduce {outcome}.", "yes": f"{drug} reduced {outcome}.",
                "yes-after-results": f"{drug} reduced {outcome}.",
                "maybe": f"{drug} may reduce {outcome}; further trials are warranted."}[kind]
        before = "Baseline rates did not differ." if kind == "yes-after-results" else "Patients were enrolled."
        out.append(Example(str(5000 + i), q, ("Methods were standard.", before, last), kind.split("-")[0]))
    return out


def test_a_fitted_reader_learns_the_synthetic_pattern_and_saves_round_trip(tmp_path):
    train = _synthetic(90)
    reader = fit_reader([e.question for e in train], [e.sentences for e in train], [e.gold for e in train], 1.0,
                        ids=[e.id for e in train])
    test = _synthetic(40, seed=11)
    assert sum(reader.read(e.question, e.sentences).verdict == e.gold for e in test) >= 36
    again = read_artefact(reader.save(tmp_path / "r.npz"))
    e = test[0]
    assert again.probabilities(e.question, e.sentences) == pytest.approx(reader.probabilities(e.question, e.sentences))
    assert again.trained_ids == reader.trained_ids


def test_the_dev_report_recomputes_from_its_per_item_log(tmp_path):
    from assistant.evals.pubmedqa_verdicts import BENCHMARK, READER, RULE, measure, recompute, write_report

    examples = _synthetic(80)
    result = measure(examples, encode=None, fold_seeds=(0,))
    assert set(result["predictions"]) >= {"always-yes", "always-no", RULE, READER}
    assert result["variants"]["always-yes"]["accuracy"] == sum(e.gold == "yes" for e in examples) / 80
    assert result["variants"][READER]["accuracy"] > result["variants"][RULE]["accuracy"]  # the rule misses the pattern
    path = write_report(result, docs_dir=tmp_path)
    log = tmp_path / "eval" / f"{BENCHMARK}.jsonl"
    assert recompute(log) == result["variants"] == json.loads(path.read_text())["variants"]
    first = json.loads(log.read_text().splitlines()[0])
    assert set(first) == {"id", "gold", "fold", "predictions", "reader_probabilities"}  # labels only, no text
    assert "exact McNemar" in (tmp_path / "eval" / f"{BENCHMARK}.md").read_text()


def test_dev_ids_are_every_question_outside_the_fixed_test_items():
    from assistant.evals.pubmedqa_eval import choose_items
    from assistant.evals.pubmedqa_verdicts import dev_ids

    data = {str(1000 + i): {"QUESTION": f"Q{i}?", "final_decision": "yes"} for i in range(600)}
    in_kb = {str(1000 + i) for i in range(200)}
    test = {it["id"] for it in choose_items(data, in_kb)}
    dev = dev_ids(data, in_kb)
    assert not set(dev) & test and set(dev) | test == set(data) and len(dev) == 300


@pytest.mark.skipif(not (KB_DATA / "pubmedqa" / "ori_pqal.json").exists(), reason="needs ../shared/kb-data")
def test_the_committed_reader_was_fitted_on_dev_questions_only(tmp_path):
    from assistant.evals.pubmedqa_eval import choose_items, load_questions
    from assistant.evals.pubmedqa_verdicts import default_kb_pmids, dev_ids

    data = load_questions(KB_DATA)
    in_kb = default_kb_pmids(KB_DATA, tmp_path)
    assert len(in_kb) == 176  # the default KB's PubMedQA abstracts (docs/eval/pubmedqa.md)
    test = {it["id"] for it in choose_items(data, in_kb)}
    trained = set(load_reader().trained_ids)
    assert len(test) == 300 and not trained & test
    assert trained == set(dev_ids(data, in_kb)) and len(trained) == 700


@pytest.mark.skipif(not (KB_DATA / "pubmedqa" / "ori_pqal.json").exists(), reason="needs ../shared/kb-data")
def test_the_published_dev_table_recomputes_from_its_log_and_the_gold_file(tmp_path):
    from assistant.evals.pubmedqa_eval import load_questions
    from assistant.evals.pubmedqa_verdicts import BENCHMARK, recompute
    from assistant.evals.report import DOCS_DIR

    data = load_questions(KB_DATA)
    published = json.loads((DOCS_DIR / "eval" / f"{BENCHMARK}.json").read_text())
    assert recompute(DOCS_DIR / "eval" / f"{BENCHMARK}.jsonl", data) == published["variants"]
    log = (DOCS_DIR / "eval" / f"{BENCHMARK}.jsonl").read_text().splitlines()
    first = json.loads(log[0])
    flipped = {"yes": "no", "no": "yes", "maybe": "yes"}[first["gold"]]
    (tmp_path / "bad.jsonl").write_text("\n".join([json.dumps({**first, "gold": flipped})] + log[1:]))
    with pytest.raises(ValueError, match="does not have"):
        recompute(tmp_path / "bad.jsonl", data)


def test_code_verdicts_default_to_the_rule():
    assert CodeVerdict("yes").by == "rule" and CodeVerdict("no").rule_verdict == "no"


def test_evidentia_eval_recompute_checks_the_published_dev_table(tmp_path):
    import json
    import shutil

    from assistant.evals.recompute import MISMATCH, OK, recompute_report
    from tests.shared_data import KB_DATA

    docs = Path(__file__).resolve().parents[1] / "docs" / "eval"
    for suffix in (".json", ".jsonl"):
        shutil.copy(docs / f"pubmedqa-verdicts-dev{suffix}", tmp_path / f"pubmedqa-verdicts-dev{suffix}")
    report = tmp_path / "pubmedqa-verdicts-dev.json"
    assert recompute_report(report, tmp_path, KB_DATA).status == OK
    tampered = json.loads(report.read_text())
    tampered["variants"]["reader (last 3, shipped)"]["accuracy"] = 0.9
    report.write_text(json.dumps(tampered))
    assert recompute_report(report, tmp_path, KB_DATA).status == MISMATCH
