"""Rules as records (tools/rules.py): every rule's examples and counter-examples (settle, veto, withhold, annotate
and rewrite), the registry's checks (the rewrites' declared order among them), the conflict policy, the off switch,
the trace in a verdict, and the generated catalogue."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_table_program import llm_for
from tools._cells import TypedTable
from tools._table_ops_model import Program
from tools.rules import APPLIED_ORDER, REGISTRY, REWRITE_REGISTRY, REWRITE_RULES, RULES, Example, Rewrite, \
    RewriteExample, Rule, _check_registry, _check_rewrites, catalogue, parse_off, rewritten_fields, settle
from tools.verify_claim import check_claim

ROOT = Path(__file__).resolve().parents[1]
CASES = [(rule.name, ex) for rule in RULES for ex in rule.examples + rule.counter_examples] \
    + [(rewrite.name, ex) for rewrite in REWRITE_RULES for ex in rewrite.examples]


def outcome_of(rule: Rule, example: Example) -> str | None:
    """What a rule makes of its example: a settle rule's verdict, "veto" when a veto rule holds the program,
    "withhold" when a withhold rule holds some of the sampled programs, or "annotate" when an annotate rule adds to
    the program's run."""
    if rule.stage == "settle":
        out = rule.fn(example.text, example.table())
        return out.verdict if out is not None else None
    if rule.stage == "withhold":
        return "withhold" if held_by(rule, example) else None
    if rule.stage == "annotate":
        return "annotate" if noted_by(rule, example) else None
    from tools._cells import TypedTable
    from tools._table_ops import execute
    from tools._table_ops_model import Program

    typed = TypedTable.build(example.table())
    program = Program.model_validate(example.program)
    return "veto" if rule.fn(program, execute(program, typed), typed, example.text) else None


def held_by(rule: Rule, example: Example) -> tuple[int, ...]:
    """The places of the example's programs (each read as written, no rewrite, and run) that the withhold rule
    holds, given all of them at once as one sampling."""
    from tools._cells import TypedTable, format_value
    from tools._table_ops import execute
    from tools._table_ops_model import NoNumbersError, Program, ProgramError
    from tools._table_program import one_form_per_number
    from tools.rules import SampledRun

    typed = TypedTable.build(example.table())
    runs = []
    for raw in example.programs:
        program = Program.model_validate(raw)
        try:
            ex = execute(program, typed, union_same_column=rule.applies_to == "question")
        except ProgramError as exc:
            runs.append(SampledRun(program, None, raw, no_numbers=isinstance(exc, NoNumbersError)))
            continue
        verdict = format_value(ex.result) if rule.applies_to == "question" else "SUPPORTS" if ex.truth else "REFUTES"
        runs.append(SampledRun(program, ex, raw, verdict))
    if rule.applies_to == "question":
        runs = [r if not r.verdict else SampledRun(r.program, r.execution, r.raw, v, r.no_numbers)
                for r, v in zip(runs, one_form_per_number([r.verdict for r in runs]))]
    reasons = rule.fn(runs, typed, example.text)
    assert len(reasons) == len(runs)
    return tuple(i for i, why in enumerate(reasons) if why)


def noted_by(rule: Rule, example: Example):
    """What the annotate rule adds to the run of the example's program (as it reaches the rule, run as written)."""
    from tools._cells import TypedTable
    from tools._table_ops import execute
    from tools._table_ops_model import Program

    typed = TypedTable.build(example.table())
    program = Program.model_validate(example.program)
    return rule.fn(program, execute(program, typed, union_same_column=rule.applies_to == "question"), typed,
                   example.text)


@pytest.mark.parametrize("name, example", CASES, ids=[f"{n}: {e.text}" for n, e in CASES])
def test_every_rule_does_what_its_examples_say(name, example):
    # a rewrite rule's outcome is the fields it set (None: it left the program as it is)
    if isinstance(example, RewriteExample):
        assert rewritten_fields(REWRITE_REGISTRY[name], example) == example.expected
        return
    rule = REGISTRY[name]
    assert outcome_of(rule, example) == example.expected
    if rule.stage == "withhold":
        assert held_by(rule, example) == example.held
    if rule.stage == "annotate":  # the reason's words, the cells and the steps, each in full
        assert (noted_by(rule, example) or None) == example.note


def test_every_rule_has_an_example_it_decides_and_one_it_leaves_alone():
    for rule in RULES:
        assert any(e.expected for e in rule.examples) and any(e.expected is None for e in rule.counter_examples)
    for rewrite in REWRITE_RULES:
        assert any(e.expected for e in rewrite.examples) and any(e.expected is None for e in rewrite.examples)


def test_every_program_reader_is_a_rewrite_record_and_the_applied_order_is_the_readers_own():
    from tools._program_readers import CLAIM_READERS, QUESTION_READERS, REWRITES

    assert list(REWRITE_REGISTRY) == list(REWRITES) and len(REWRITE_RULES) == 81
    assert all(REWRITE_REGISTRY[name].fn is reader for name, reader in REWRITES.items())
    assert [REWRITE_REGISTRY[n].fn for n in APPLIED_ORDER["question"]] == list(QUESTION_READERS)
    assert [REWRITE_REGISTRY[n].fn for n in APPLIED_ORDER["claim"]] == list(CLAIM_READERS)
    # the dependencies the readers' module names: a question's rank order reads the value the stated value filled in
    assert "stated-value" in REWRITE_REGISTRY["rank-order"].after
    assert "quantifier" in REWRITE_REGISTRY["every-filter"].after


def _reads(program: Program, typed: TypedTable, text: str) -> Program:
    return program


def _rewrite(name: str, after: tuple[str, ...] = (), fn=_reads, applies_to="question", rewrites=True) -> Rewrite:
    example = RewriteExample("x", ("a",), (("1",),), {"fn": "count", "column": "a"}, {"fn": "count"} if rewrites else None)
    return Rewrite(name, applies_to, "a test", "a test", fn, (example,), after)


def test_the_rewrite_registry_refuses_a_missing_name_a_cycle_and_an_order_that_breaks_a_dependency():
    order = {"question": ("a", "b", "c"), "claim": ()}
    assert set(_check_rewrites([_rewrite("a"), _rewrite("b", ("a",)), _rewrite("c", ("a", "b"))], order)) == \
        {"a", "b", "c"}
    with pytest.raises(ValueError, match="'b' is after nowhere, which are no rewrite rules"):
        _check_rewrites([_rewrite("a"), _rewrite("b", ("nowhere",)), _rewrite("c")], order)
    with pytest.raises(ValueError, match="cycle: (a -> c -> b -> a|b -> a -> c -> b|c -> b -> a -> c)"):
        _check_rewrites([_rewrite("a", ("c",)), _rewrite("b", ("a",)), _rewrite("c", ("b",))], order)
    with pytest.raises(ValueError, match="'a' reads the output of c, which the questions' order applies after it"):
        _check_rewrites([_rewrite("a", ("c",)), _rewrite("b"), _rewrite("c")], order)
    # a dependency that one kind never applies does not bind that kind's order
    both = {"question": ("a", "b"), "claim": ("b",)}
    assert _check_rewrites([_rewrite("a"), _rewrite("b", ("a",), applies_to="both")], both)


def test_the_rewrite_registry_refuses_a_wrong_signature_kind_or_example_and_a_reader_without_a_record():
    order = {"question": ("a", "b"), "claim": ()}
    with pytest.raises(TypeError, match="does not take"):
        _check_rewrites([_rewrite("a", fn=lambda program, typed: program), _rewrite("b")], order)
    with pytest.raises(TypeError, match="returns a Program"):
        _check_rewrites([_rewrite("a", fn=lambda program, typed, text: program), _rewrite("b")], order)
    with pytest.raises(ValueError, match="applies to question, not claim"):
        _check_rewrites([_rewrite("a", applies_to="claim"), _rewrite("b")], order)
    with pytest.raises(ValueError, match="no example that it rewrites"):
        _check_rewrites([_rewrite("a", rewrites=False), _rewrite("b")], order)
    with pytest.raises(ValueError, match="no rewrite record: b"):
        _check_rewrites([_rewrite("a")], order)
    with pytest.raises(ValueError, match="declared twice"):
        _check_rewrites([_rewrite("a"), _rewrite("a"), _rewrite("b")], order)


def _rule(name: str, verdict: str | None, fn=None) -> Rule:
    class Out:
        def __init__(self, v):
            self.verdict, self.cells, self.reason = v, [(1, 1)], f"{name} says {v}"

    def settles(claim, table):
        return Out(verdict) if verdict else None

    return Rule(name, "settle", "a test", "a test", fn or settles, (Example("x", ("a",), (("1",),), verdict),))


def test_the_registry_refuses_a_duplicate_name_a_wrong_signature_and_a_rule_without_a_deciding_example():
    with pytest.raises(ValueError, match="declared twice"):
        _check_registry([_rule("a", "SUPPORTS"), _rule("a", "REFUTES")])
    with pytest.raises(TypeError, match="takes"):
        _check_registry([_rule("b", "SUPPORTS", fn=lambda text, table, extra: None)])
    with pytest.raises(ValueError, match="no example"):
        _check_registry([_rule("c", None)])


def test_rules_that_agree_decide_under_the_first_name_and_rules_that_disagree_leave_it_to_the_programs():
    table = Example("x", ("a",), (("1",),), None).table()
    agree = settle("x", table, rules=[_rule("first", "SUPPORTS"), _rule("quiet", None), _rule("second", "SUPPORTS")])
    assert agree.decided.rule == "first" and agree.names == ["first", "second"] and not agree.conflict
    disagree = settle("x", table, rules=[_rule("yes", "SUPPORTS"), _rule("no", "REFUTES")])
    assert disagree.decided is None and disagree.conflict and disagree.names == ["yes", "no"]
    assert settle("x", table, off=frozenset({"no"}), rules=[_rule("yes", "SUPPORTS"), _rule("no", "REFUTES")]
                  ).decided.rule == "yes"


def test_an_unknown_rule_name_to_switch_off_is_an_error_that_lists_the_rules(monkeypatch):
    assert parse_off(" trend-every-period, association ,") == {"trend-every-period", "association"}
    with pytest.raises(ValueError, match="unknown rule name.*trend-evry.*the rules are: significance"):
        parse_off("trend-evry")
    from assistant.settings import Settings

    monkeypatch.setenv("EVIDENTIA_RULES_OFF", "no-such-rule")
    with pytest.raises(ValueError, match="no-such-rule"):
        Settings()


def _no_model(req):
    raise AssertionError("the model was asked")


async def test_a_verdict_a_rule_settled_names_the_rule_and_switching_it_off_asks_the_programs(tmp_settings,
                                                                                             fake_llm_server):
    example = REGISTRY["trend-every-period"].examples[0]  # "Revenue grew every month in 2024" -> REFUTES
    with fake_llm_server(_no_model) as srv:
        check = await check_claim(llm_for(tmp_settings, srv), example.table(), example.text)
    assert check.decided_by == "rule:trend-every-period" and check.rules_fired == ["trend-every-period"]
    assert check.label == "REFUTES" and not srv.requests
    from tools.verify_claim import Output

    reply = Output(verdict=check.label, claim=example.text, table="t", table_id="T1", cells=["T1:R1C1"],
                   reason=check.reason, explanations={}, decided_by=check.decided_by).reply()
    assert "Settled in code by the rule `trend-every-period`" in reply

    off = tmp_settings.model_copy(update={"rules_off": "trend-every-period"})
    with fake_llm_server(_no_model) as srv:
        try:
            await check_claim(llm_for(off, srv), example.table(), example.text)
        except Exception:  # noqa: BLE001 - the fake answers nothing useful; what matters is that it was asked
            pass
    assert srv.requests, "with the rule off, the claim went to the model's programs"


def test_the_catalogue_in_docs_is_generated_from_the_registry():
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == catalogue(), \
        "docs/rules.md is out of date: run `evidentia rules --write`"
    assert all(f"`{rule.name}`" in catalogue() for rule in RULES + REWRITE_RULES)


# -- the per-rule measurement (evidentia eval rules) --------------------------------------------------------------
def test_the_measurement_counts_fired_right_decided_and_conflicts_as_worked_by_hand():
    from assistant.evals.rules_eval import summarise

    records = [  # one benchmark, four claims: majority gold SUPPORTS (3 of 4)
        {"benchmark": "tabfact", "id": "1", "gold": "SUPPORTS", "fired": [{"rule": "association", "verdict": "SUPPORTS"}]},
        {"benchmark": "tabfact", "id": "2", "gold": "REFUTES", "fired": [{"rule": "association", "verdict": "SUPPORTS"},
                                                                         {"rule": "record-field", "verdict": "REFUTES"}]},
        {"benchmark": "tabfact", "id": "3", "gold": "SUPPORTS", "fired": []},
        {"benchmark": "tabfact", "id": "4", "gold": "SUPPORTS", "fired": [{"rule": "record-field", "verdict": "REFUTES"}]},
    ]
    out = summarise(records)
    assert out["benchmarks"]["tabfact"] == {"claims": 4, "majority_label": "SUPPORTS", "majority_baseline": 0.75,
                                            "settled": 2, "conflicts": 1}
    assert out["rules"]["association"]["tabfact"] == {"fired": 2, "right": 1, "decided": 1, "decided_right": 1,
                                                      "majority_right_on_decided": 1}
    assert out["rules"]["record-field"]["tabfact"] == {"fired": 2, "right": 1, "decided": 1, "decided_right": 0,
                                                       "majority_right_on_decided": 1}
    assert out["rules"]["significance"]["scitab"]["fired"] == 0


def test_a_negated_claim_is_read_in_its_positive_form_and_the_verdict_turned_round():
    from assistant.evals.rules_eval import read_item

    example = REGISTRY["value-in-range"].examples[0]  # "Glucose is within its reference range." -> SUPPORTS
    fired, negated = read_item("Glucose is not within its reference range.", example.table())
    assert negated and fired == [{"rule": "value-in-range", "verdict": "REFUTES"}]


def test_the_committed_rules_report_recomputes_and_a_count_changed_by_hand_does_not(tmp_path):
    import json
    import shutil

    from assistant.evals.recompute import MISMATCH, OK, recompute_report
    from tests.shared_data import EVAL_DATA, KB_DATA

    if not EVAL_DATA.exists():
        pytest.skip(f"benchmark data not found at {EVAL_DATA}")
    assert recompute_report(ROOT / "docs" / "eval" / "rules.json", EVAL_DATA, KB_DATA).status == OK
    shutil.copy(ROOT / "docs" / "eval" / "rules-dev.jsonl", tmp_path / "rules-dev.jsonl")
    report = json.loads((ROOT / "docs" / "eval" / "rules.json").read_text())
    shutil.copy(ROOT / "docs" / "eval" / "rules-veto-dev.jsonl", tmp_path / "rules-veto-dev.jsonl")
    shutil.copy(ROOT / "docs" / "eval" / "rules-examples.jsonl", tmp_path / "rules-examples.jsonl")
    for change in (lambda r: r["rules"]["record-field"]["pubhealthtab"].__setitem__("right", 2),
                   lambda r: r["vetoes"]["tautology"]["pubhealthtab"].__setitem__("lost_when_off", 0),
                   lambda r: r["withholds"]["copied-beside-stated"]["pubhealthtab"].__setitem__("programs_held", 7)):
        changed = json.loads(json.dumps(report))
        change(changed)
        (tmp_path / "rules.json").write_text(json.dumps(changed))
        assert recompute_report(tmp_path / "rules.json", EVAL_DATA, KB_DATA).status == MISMATCH


def test_the_terminal_step_line_says_which_rule_decided_and_which_others_fired():
    from assistant.cli.chat_cli import summarize_output
    from tools.verify_claim import Output

    out = Output(verdict="REFUTES", claim="c", table="t", table_id="T1", cells=[], reason="r", explanations={},
                 decided_by="rule:trend-every-period", rules_fired=["trend-every-period"])
    assert summarize_output(out).startswith("decided by rule:trend-every-period; {")
    conflict = out.model_copy(update={"decided_by": "program", "rules_fired": ["association", "record-field"]})
    assert summarize_output(conflict).startswith("decided by program (association, record-field also fired); ")
    read = conflict.model_copy(update={"rules_fired": [], "rewritten_by": ["stated-bound"]})
    assert summarize_output(read).startswith("decided by program, read by stated-bound; ")
    noted = read.model_copy(update={"annotated_by": ["interval-in-reason"]})
    assert summarize_output(noted).startswith("decided by program, read by stated-bound, annotated by "
                                              "interval-in-reason; ")
    assert summarize_output({"hits": []}) == '{"hits": []}'


def test_the_rewrites_a_reply_names_are_those_of_the_winning_programs():
    from tools._table_program import ProgramOutcome, ProgramRun

    runs = [ProgramRun(program="a", ran=True, verdict="SUPPORTS", rewritten_by=["stated-bound", "ordinal"]),
            ProgramRun(program="b", ran=True, verdict="REFUTES", rewritten_by=["superlative"]),
            ProgramRun(program="c", ran=True, verdict="SUPPORTS", rewritten_by=["ordinal", "rough-value"]),
            ProgramRun(program="d", ran=False, error="x", rewritten_by=["multiplier"])]
    outcome = ProgramOutcome(kind="claim", runs=runs, winner="SUPPORTS")
    assert outcome.winning_rewrites() == ["stated-bound", "ordinal", "rough-value"]
    assert ProgramOutcome(kind="claim", runs=runs, winner=None).winning_rewrites() == []


# -- veto rules ---------------------------------------------------------------------------------------------------
def _held_by(*names: str):
    def fn(program, execution, typed, text):
        return f"{fn.__name__} says no"
    return [Rule(n, "veto", "a test", "a test", fn, (Example("x", ("a",), (("1",),), "veto", {}),)) for n in names]


def test_vetoes_are_a_union_every_one_runs_and_each_reason_is_kept():
    from tools.rules import veto

    held = veto(None, None, None, "x", rules=_held_by("first", "second"))
    assert [v.rule for v in held] == ["first", "second"] and all(v.reason for v in held)
    assert [v.rule for v in veto(None, None, None, "x", off=frozenset({"first"}), rules=_held_by("first", "second"))
            ] == ["second"]


def test_a_held_program_records_the_vetoes_and_switching_one_off_lets_it_vote():
    from tools._cells import TypedTable
    from tools._table_program import run_sampled
    from tools.program_replay import replay_runs

    example = REGISTRY["unstated-value"].examples[0]  # "Heart disease is the leading cause…", checked as > 700000
    typed = TypedTable.build(example.table())
    held = run_sampled(example.program, typed, "claim", example.text)
    assert held.execution is None and held.vetoed_by == ["unstated-value"]
    assert held.error.startswith("does not vote: the check compares with '700000'")
    runs = [{"raw": example.program}] * 3
    on = replay_runs(example.table(), example.text, runs, "claim")
    off = replay_runs(example.table(), example.text, runs, "claim", rules_off=frozenset({"unstated-value"}))
    assert on.winner is None and all(r.vetoed_by == ["unstated-value"] for r in on.runs)
    assert off.winner == "REFUTES" and off.votes == {"REFUTES": 3}  # 659,041 is not above 700,000


def test_the_veto_measurement_counts_held_changed_lost_and_gained_as_worked_by_hand():
    from assistant.evals.rules_eval import summarise_vetoes

    records = [
        {"benchmark": "pubhealthtab", "id": "1", "gold": "SUPPORTS", "replayed": "SUPPORTS",
         "off": {"tautology": "REFUTES"}, "held": {"tautology": 2}},  # right with it, wrong without: lost
        {"benchmark": "pubhealthtab", "id": "2", "gold": "REFUTES", "replayed": "SUPPORTS",
         "off": {"tautology": "REFUTES", "unnamed-row": None}, "held": {"tautology": 1, "unnamed-row": 3}},
        {"benchmark": "pubhealthtab", "id": "3", "gold": "REFUTES", "replayed": "REFUTES", "off": {}, "held": {}},
    ]
    out = summarise_vetoes(records)
    assert out["tautology"]["pubhealthtab"] == {"claims": 3, "programs_held": 3, "claims_changed": 2,
                                                "lost_when_off": 1, "gained_when_off": 1}
    assert out["unnamed-row"]["pubhealthtab"] == {"claims": 3, "programs_held": 3, "claims_changed": 1,
                                                  "lost_when_off": 0, "gained_when_off": 0}
    assert out["ignored-category"]["pubhealthtab"]["programs_held"] == 0


def test_the_examples_measurement_counts_right_without_the_rule_as_worked_by_hand():
    from assistant.evals.rules_eval import markdown, summarise_examples

    records = [{"rule": "association", "example": 0, "expected": "SUPPORTS", "without_rule": "SUPPORTS"},
               {"rule": "association", "example": 1, "expected": "REFUTES", "without_rule": "NOT ENOUGH INFO"},
               {"rule": "record-field", "example": 0, "expected": "REFUTES", "without_rule": "ERROR"},
               {"rule": "tautology", "example": 0, "expected": "SUPPORTS", "with_rule": "SUPPORTS",
                "without_rule": "REFUTES"}]
    out = summarise_examples(records)
    assert out == {"association": {"examples": 2, "right_without_rule": 1},
                   "record-field": {"examples": 1, "right_without_rule": 0},
                   "tautology": {"examples": 1, "right_without_rule": 0, "right_with_rule": 1}}
    page = markdown({"commit": "x", "items": 0, "log": "l", "benchmarks": {}, "rules": {}, "examples": out})
    assert "| `association` | 2 | by its tests | 1 |" in page and "| `tautology` | 1 | 1 | 0 |" in page


def test_a_changed_examples_count_does_not_recompute(tmp_path):
    import json
    import shutil

    from assistant.evals.recompute import MISMATCH, recompute_report
    from tests.shared_data import EVAL_DATA, KB_DATA

    if not EVAL_DATA.exists():
        pytest.skip(f"benchmark data not found at {EVAL_DATA}")
    for name in ("rules-dev.jsonl", "rules-veto-dev.jsonl"):
        shutil.copy(ROOT / "docs" / "eval" / name, tmp_path / name)
    (tmp_path / "rules-examples.jsonl").write_text(json.dumps(
        {"rule": "association", "example": 0, "expected": "SUPPORTS", "without_rule": "SUPPORTS"}) + "\n")
    report = json.loads((ROOT / "docs" / "eval" / "rules.json").read_text())
    report["examples"] = {"association": {"examples": 1, "right_without_rule": 0}}  # the log says 1
    (tmp_path / "rules.json").write_text(json.dumps(report))
    assert recompute_report(tmp_path / "rules.json", EVAL_DATA, KB_DATA).status == MISMATCH


def test_a_rewritten_program_records_the_rewrite_rules_and_switching_one_off_leaves_it_as_written():
    # tools._stated_bound: "more than 400 beds" written as "Beds < 400" is read as the words say
    from kb.tables import Table
    from tools._cells import TypedTable
    from tools._program_readers import REWRITES
    from tools._table_program import run_sampled

    table = Table(name="h", title="", columns=["Hospital", "Beds"],
                  rows=[["A", "420"], ["B", "610"], ["C", "260"], ["D", "340"], ["E", "450"]])
    typed = TypedTable.build(table)
    raw = {"filters": [{"column": "beds", "op": "<", "value": "400"}], "fn": "count_distinct", "column": "hospital",
           "check": {"op": "<", "against": "value", "value": "3"}}
    text = "Fewer than three hospitals have more than 400 beds."
    on = run_sampled(raw, typed, "claim", text)
    assert "stated-bound" in on.rewritten_by and on.program.filters[0].op == ">"
    assert on.execution.truth is False  # three hospitals have over 400 beds
    off = run_sampled(raw, typed, "claim", text, parse_off("stated-bound"))
    assert "stated-bound" not in off.rewritten_by and off.program.filters[0].op == "<"
    assert "stated-bound" in REWRITES and "fraction-of-rows" not in REWRITES  # that name is the veto rule's


def test_the_rewrite_measurement_counts_changed_lost_and_gained_as_worked_by_hand():
    from assistant.evals.rules_eval import summarise_rewrites

    records = [
        {"benchmark": "pubhealthtab", "id": "1", "gold": "SUPPORTS", "replayed": "SUPPORTS",
         "off": {"stated-bound": "REFUTES"}, "held": {}, "rewritten": {"stated-bound": 3}},  # lost when off
        {"benchmark": "pubhealthtab", "id": "2", "gold": "REFUTES", "replayed": "REFUTES", "off": {},
         "held": {}, "rewritten": {"stated-bound": 1, "ordinal": 2}},  # changed programs, not the verdict
    ]
    out = summarise_rewrites(records)
    assert out["stated-bound"]["pubhealthtab"] == {"claims": 2, "programs_changed": 4, "claims_changed": 1,
                                                   "lost_when_off": 1, "gained_when_off": 0}
    assert out["ordinal"]["pubhealthtab"]["claims_changed"] == 0


def test_the_pruning_decision_follows_the_dev_splits_and_the_examples_as_worked_by_hand():
    from assistant.evals.rules_eval import pruning

    zero = {"fired": 0, "right": 0}
    payload = {
        "rules": {"a": {"tabfact": zero, "scitab": zero, "pubhealthtab": {"fired": 1, "right": 1}},
                  "b": {"tabfact": zero, "scitab": zero, "pubhealthtab": zero},
                  "c": {"tabfact": zero, "scitab": zero, "pubhealthtab": zero},
                  "d": {"tabfact": zero, "scitab": zero, "pubhealthtab": zero}},
        "vetoes": {"v": {"pubhealthtab": {"lost_when_off": 0, "gained_when_off": 2}},
                   "w": {b: {"lost_when_off": 0, "gained_when_off": 0} for b in ("tabfact", "scitab", "pubhealthtab")}},
        "examples": {"b": {"examples": 2, "right_without_rule": 1}, "c": {"examples": 2, "right_without_rule": 2},
                     "w": {"examples": 1, "right_without_rule": 1, "right_with_rule": 1}}}
    decided = {rule: decision.split(":")[0] for rule, _, decision in pruning(payload)}
    assert decided == {"a": "keeps", "b": "keeps", "c": "goes", "d": "undecided", "v": "undecided", "w": "goes"}
    assert "gained 2 there when off" in dict((r, d) for r, _, d in pruning(payload))["v"]


# -- withhold rules -----------------------------------------------------------------------------------------------
WITHHOLD_CASES = [(rule.name, ex) for rule in RULES if rule.stage == "withhold"
                  for ex in rule.examples + rule.counter_examples]


@pytest.mark.parametrize("name, example", WITHHOLD_CASES, ids=[f"{n}: {e.text}" for n, e in WITHHOLD_CASES])
def test_each_withhold_example_replayed_holds_its_programs_under_the_rule_s_name_and_none_when_it_is_off(name,
                                                                                                        example):
    """The whole path (the rewrite, veto and withhold rules of tools._table_program.decide, as a replay runs them):
    the programs the example says are held by its rule, named in ``withheld_by``, with the reason shown as before
    ("does not vote: …"); with the rule switched off, it holds none."""
    from tools.program_replay import replay_runs

    kind = REGISTRY[name].applies_to
    runs = [{"raw": p} for p in example.programs]
    on = replay_runs(example.table(), example.text, runs, kind)
    assert tuple(i for i, r in enumerate(on.runs) if r.withheld_by) == example.held
    assert all(r.withheld_by == [name] and not r.ran and r.error.startswith("does not vote: ")
               for i, r in enumerate(on.runs) if i in example.held)
    off = replay_runs(example.table(), example.text, runs, kind, rules_off=parse_off(name))
    assert not any(name in r.withheld_by for r in off.runs)
    if example.held:
        assert off.votes != on.votes  # the held programs vote again


def _holds(name: str, places: set[int], kind: str = "question"):
    def fn(runs, typed, text):
        return [f"{name} holds it" if i in places else "" for i in range(len(runs))]
    return Rule(name, "withhold", "a test", "a test", fn,
                (Example("x", ("a",), (("1",),), "withhold", programs=({},), held=(0,)),), applies_to=kind)


def test_withhold_rules_run_in_order_and_a_run_one_holds_is_not_held_again_by_the_next():
    from tools.rules import SampledRun, withhold

    ran = SampledRun(None, execution=object(), verdict="1")  # type: ignore[arg-type]
    runs = [ran, ran, SampledRun(None, None)]  # the third did not run: nothing holds it
    rules = [_holds("first", {0, 2}), _holds("second", {0, 1}), _holds("claims-only", {1}, kind="claim")]
    held = withhold(runs, None, "question", "x", rules=rules)
    assert [(w.rule, w.run) for w in held] == [("first", 0), ("second", 1)]
    assert [(w.rule, w.run) for w in withhold(runs, None, "question", "x", off=frozenset({"first"}), rules=rules)
            ] == [("second", 0), ("second", 1)]
    assert [(w.rule, w.run) for w in withhold(runs, None, "claim", "x", rules=rules)] == [("claims-only", 1)]


def test_the_registry_refuses_a_withhold_example_that_does_not_say_which_programs_it_holds():
    good = _holds("a", {0})
    _check_registry([good])
    with pytest.raises(ValueError, match="says which"):
        _check_registry([Rule("b", "withhold", "t", "t", good.fn,
                              (Example("x", ("a",), (("1",),), "withhold", programs=({},)),))])
    with pytest.raises(TypeError, match="takes"):
        _check_registry([Rule("c", "withhold", "t", "t", lambda runs, text: [], good.examples)])
    with pytest.raises(ValueError, match="only a withhold or an annotate rule reads questions"):
        _check_registry([Rule("d", "veto", "t", "t", lambda program, execution, typed, text: "",
                              (Example("x", ("a",), (("1",),), "veto", {}),), applies_to="question")])


def test_the_withhold_measurement_counts_held_changed_lost_and_gained_and_prunes_none_as_worked_by_hand():
    from assistant.evals.rules_eval import pruning, summarise_withholds

    records = [
        {"benchmark": "pubhealthtab", "id": "1", "gold": "SUPPORTS", "replayed": "SUPPORTS", "held": {},
         "off": {"leaves-out-stated-date": "REFUTES"}, "withheld": {"leaves-out-stated-date": 3}},  # lost when off
        {"benchmark": "pubhealthtab", "id": "2", "gold": "REFUTES", "replayed": "SUPPORTS", "held": {},
         "off": {"copied-beside-stated": "REFUTES"}, "withheld": {"copied-beside-stated": 1}},  # gained when off
        {"benchmark": "pubhealthtab", "id": "3", "gold": "REFUTES", "replayed": "REFUTES", "off": {}, "held": {}},
    ]  # (the third was logged before withhold rules were traced: no "withheld")
    out = summarise_withholds(records)
    assert set(out) == {"leaves-out-stated-date", "copied-beside-stated"}  # the question ones read no claim
    assert out["leaves-out-stated-date"]["pubhealthtab"] == {"claims": 3, "programs_held": 3, "claims_changed": 1,
                                                             "lost_when_off": 1, "gained_when_off": 0}
    assert out["copied-beside-stated"]["pubhealthtab"] == {"claims": 3, "programs_held": 1, "claims_changed": 1,
                                                           "lost_when_off": 0, "gained_when_off": 1}
    decided = {rule: decision for rule, stage, decision in pruning({"withholds": out}) if stage == "withhold"}
    assert decided["leaves-out-stated-date"].startswith("undecided: dev measured on pubhealthtab only")
    assert decided["leaves-out-stated-date"].endswith("; lost 1 there when off")
    assert decided["wrong-answer-kind"] == "undecided: no dev log of table questions with programs"
    every = {b: {"lost_when_off": 0, "gained_when_off": 0} for b in ("tabfact", "scitab", "pubhealthtab")}
    assert pruning({"withholds": {"copied-beside-stated": every}})[0][2].startswith("undecided: nothing lost")
    every["scitab"]["lost_when_off"] = 2
    assert pruning({"withholds": {"copied-beside-stated": every}})[0][2] == "keeps: 2 dev claim(s) lost when off"


async def test_the_live_path_names_the_withhold_rule_and_evidentia_rules_off_switches_it_off(tmp_settings,
                                                                                             fake_llm_server):
    """Sampled by the (fake) model, as a chat check samples them: the example of leaves-out-stated-date holds the
    programs that read every date, named in the trace; with EVIDENTIA_RULES_OFF naming it, they vote."""
    from tests.test_table_program import scripted
    from tools._table_program import solve

    example = REGISTRY["leaves-out-stated-date"].examples[0]
    columns = ["drug", "approved", "agency", "indication"]
    with fake_llm_server(scripted(columns, list(example.programs))) as srv:
        on = await solve(llm_for(tmp_settings, srv), example.table(), "claim", example.text, n=len(example.programs))
    assert [i for i, r in enumerate(on.runs) if r.withheld_by == ["leaves-out-stated-date"]] == list(example.held)
    assert on.winner == "SUPPORTS" and on.votes == {"SUPPORTS": 1}
    off = tmp_settings.model_copy(update={"rules_off": "leaves-out-stated-date"})
    with fake_llm_server(scripted(columns, list(example.programs))) as srv:
        without = await solve(llm_for(off, srv), example.table(), "claim", example.text, n=len(example.programs))
    assert not any(r.withheld_by for r in without.runs) and without.winner == "REFUTES"


# -- annotate rules -----------------------------------------------------------------------------------------------
ANNOTATE_CASES = [(rule.name, ex) for rule in RULES if rule.stage == "annotate" for ex in rule.examples
                  if ex.note]


@pytest.mark.parametrize("name, example", ANNOTATE_CASES, ids=[f"{n}: {e.text}" for n, e in ANNOTATE_CASES])
def test_each_annotate_example_run_as_sampled_adds_its_note_under_the_rule_s_name_and_changes_no_result(name, example):
    """The whole path (tools._table_program.run_sampled, as the live path and a replay run a sampled program): the
    run records the rule and carries its note; with the rule switched off it carries none, and what the program
    computed (result, truth, rows) is the same either way."""
    from tools._table_program import run_sampled

    rule, typed = REGISTRY[name], TypedTable.build(example.table())
    on = run_sampled(example.program, typed, rule.applies_to, example.text)
    off = run_sampled(example.program, typed, rule.applies_to, example.text, parse_off(name))
    assert on.annotated_by == [name] and off.annotated_by == []
    note, ex, plain = example.note, on.execution, off.execution
    assert ex.bounds == plain.bounds + list(note.reason) and ex.steps == plain.steps + list(note.steps)
    assert ex.cells == plain.cells + [c for c in note.cells if c not in plain.cells]
    for field in ("selected", "result", "result_text", "decisive_rows", "truth", "check_text"):
        assert getattr(ex, field) == getattr(plain, field), field


def _adds(name: str, note, kind: str = "claim"):
    def fn(program, execution, typed, text):
        return note
    return Rule(name, "annotate", "a test", "a test", fn,
                (Example("x", ("a",), (("1",),), "annotate", {}, note=note),), applies_to=kind)


def _ran(cells=((1, 1),), bounds=("its own",), steps=("a step",)):
    from tools._table_ops_model import Execution

    return Execution(selected=[1], result=3.0, result_text="3", decisive_rows=[1], cells=list(cells),
                     truth=True, check_text="> 2", steps=list(steps), bounds=list(bounds))


def test_annotate_rules_merge_their_notes_in_order_and_the_result_stays_the_program_s():
    from tools._table_ops_model import Note
    from tools.rules import annotate

    rules = [_adds("first", Note(reason=("why one",), cells=((1, 1), (2, 1)), steps=("step one",))),
             _adds("quiet", None), _adds("empty", Note()),
             _adds("second", Note(reason=("why two",), cells=((2, 1), (3, 1)))),
             _adds("for-questions", Note(reason=("asked",)), kind="question")]
    ran = _ran()
    out, names = annotate(None, ran, None, "claim", "x", rules=rules)
    assert names == ["first", "second"]  # those that added something, in order; none of the question's
    assert out.bounds == ["its own", "why one", "why two"] and out.steps == ["a step", "step one"]
    assert out.cells == [(1, 1), (2, 1), (3, 1)]  # each cell once, after the run's own
    assert (out.selected, out.result, out.result_text, out.decisive_rows, out.truth, out.check_text) == \
        (ran.selected, ran.result, ran.result_text, ran.decisive_rows, ran.truth, ran.check_text)
    assert ran.bounds == ["its own"] and ran.cells == [(1, 1)]  # the run as computed is left as it was
    assert annotate(None, ran, None, "claim", "x", off=frozenset({"first", "second"}), rules=rules) == (ran, [])
    assert annotate(None, ran, None, "question", "x", rules=rules)[1] == ["for-questions"]


def test_an_annotate_rule_that_returns_anything_but_a_note_is_refused():
    from tools.rules import annotate

    with pytest.raises(TypeError, match="'rewrites' returned a Execution, not a Note"):
        annotate(None, _ran(), None, "claim", "x", rules=[_adds("rewrites", _ran())])


def test_the_registry_refuses_an_annotate_rule_of_another_signature_or_an_example_that_does_not_say_what_it_adds():
    from tools._table_ops_model import Note

    good = _adds("a", Note(reason=("r",)))
    _check_registry([good])
    with pytest.raises(TypeError, match="takes"):
        _check_registry([Rule("b", "annotate", "t", "t", lambda program, execution, text: None, good.examples)])
    for example in (Example("x", ("a",), (("1",),), "annotate", {}),  # says it adds, but not what
                    Example("x", ("a",), (("1",),), "annotate", {}, note=Note()),  # a note of nothing
                    Example("x", ("a",), (("1",),), "annotate", note=Note(reason=("r",)))):  # no program
        with pytest.raises(ValueError, match="annotate example"):
            _check_registry([Rule("c", "annotate", "t", "t", good.fn, (example,))])


async def test_a_claim_decided_by_its_form_names_the_annotate_rule_and_evidentia_rules_off_drops_its_note(
        tmp_settings, fake_llm_server):
    """The live path: "… than ALPHA-1 and BETA-2" is decided by its form, with no model call; the note that ALPHA-1
    stands for both is the annotate rule's, named in the outcome; switched off, the verdict is the same, unnoted."""
    from tools._table_program import solve

    example = REGISTRY["most-demanding-row"].examples[0]
    with fake_llm_server(_no_model) as srv:
        on = await solve(llm_for(tmp_settings, srv), example.table(), "claim", example.text)
    assert on.by_form and on.winner == "SUPPORTS" and on.annotated_by == ["most-demanding-row"]
    assert example.note.reason[0] in on.reason and set(example.note.cells) <= set(on.cells)
    off_settings = tmp_settings.model_copy(update={"rules_off": "most-demanding-row"})
    with fake_llm_server(_no_model) as srv:
        off = await solve(llm_for(off_settings, srv), example.table(), "claim", example.text)
    assert off.by_form and off.winner == on.winner and off.annotated_by == [] and off.runs[0].annotated_by == []
    assert example.note.reason[0] not in off.reason and (2, 4) not in off.cells  # BETA-2's value, which it quoted
    assert on.reason.replace(f"; {example.note.reason[0]}", "") == off.reason  # the note is all that differs
