"""Claims of statistical significance, settled in code by the named row's p-value (tools._settle_rules)."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tests.test_table_program import BagOfWordsEmbedder, llm_for
from tools._settle_rules import significance_check
from tools.verify_claim import check_claim

TRIAL = Table(name="trial", title="trial", columns=["Treatment", "Patients", "Deaths", "Hazard ratio (95% CI)",
                                                     "p-value"], rows=[
    ["Placebo", "1,204", "187", "1.00 (reference)", "–"],
    ["Drug A", "1,198", "142", "0.74 (0.60–0.92)", "0.006"],
    ["Drug B", "1,211", "171", "0.91 (0.74–1.12)", "0.37"],
    ["Drug A + B", "603", "61", "0.63 (0.47–0.85)", "<0.001"],
    ["Drug C", "590", "80", "0.97 (0.70–1.30)", "NS"],
])


@pytest.mark.parametrize("claim,verdict,row", [
    ("Is it true that Drug B's effect was statistically significant?", "REFUTES", 3),
    ("Drug A's effect was statistically significant", "SUPPORTS", 2),
    ("Drug B was not significant", "SUPPORTS", 3),
    ("The effect of Drug B did not reach statistical significance", "SUPPORTS", 3),
    ("Drug A + B was significant", "SUPPORTS", 4),  # '<0.001', and not also the row 'Drug A'
    ("Drug A was significant at the 0.1% level", "REFUTES", 2),  # 0.006 is not below 0.001
    ("The difference for Drug A was significant (p < 0.01)", "SUPPORTS", 2),
    ("Drug C had a significant effect", "REFUTES", 5),  # 'NS'
    ("Drug C's result was non-significant", "SUPPORTS", 5),
])
def test_a_claim_of_significance_is_settled_by_the_named_rows_p_value(claim, verdict, row):
    check = significance_check(claim, TRIAL)
    assert check is not None and check.verdict == verdict and check.cells == [(row, 1), (row, 5)]
    assert TRIAL.cell(row, 5).lstrip("<") in check.reason or "NS" in check.reason


@pytest.mark.parametrize("claim", [
    "Drug A significantly reduced deaths",  # a direction too, which a p-value does not check
    "Drug A significantly increased deaths",
    "Placebo was significant",  # its p cell is empty
    "Drug A and Drug B were both significant",  # two rows
    "The treatment was significant",  # no row named
    "Drug A reduced deaths",  # no significance
])
def test_claims_a_p_value_does_not_settle_are_left_to_the_programs(claim):
    assert significance_check(claim, TRIAL) is None


def test_no_p_value_column_no_rule():
    no_p = Table(name="t", title="t", columns=TRIAL.columns[:4], rows=[r[:4] for r in TRIAL.rows])
    assert significance_check("Drug A's effect was statistically significant", no_p) is None


async def test_the_rule_decides_without_asking_the_model(tmp_settings, fake_llm_server):
    """Found as a new user: the claim came back NOT ENOUGH INFO from the coverage rule, the p-value unread."""
    def handler(req):
        raise AssertionError("the model was asked")

    with fake_llm_server(handler) as srv:
        check = await check_claim(llm_for(tmp_settings, srv), TRIAL,
                                  "Is it true that Drug B's effect was statistically significant?",
                                  embedder=BagOfWordsEmbedder())
    assert check.label == "REFUTES" and check.decided_by == "rule:significance" and check.cells == [(3, 1), (3, 5)]
    assert check.reason.startswith("P-value of Drug B is 0.37, not below 0.05")
    assert check.collapsed.count("| R") == 1 and "0.37" in check.collapsed  # the view shows the decisive row


SUBGROUPS = Table(name="subgroups", title="", columns=[
    "Subgroup", "Patients", "Events (treatment)", "Events (control)", "Hazard ratio (95% CI)", "P value"], rows=[
    ["Overall", "4744", "386", "502", "0.74 (0.65–0.85)", "<0.001"],
    ["Women", "1109", "79", "101", "0.77 (0.57–1.03)", "0.08"],
    ["Men", "3635", "307", "401", "0.73 (0.63–0.85)", "<0.001"]])


@pytest.mark.parametrize("claim, verdict, row", [
    ("The treatment effect was statistically significant in women.", "REFUTES", 2),
    ("The treatment effect was statistically significant in men.", "SUPPORTS", 3),
    ("The hazard ratio for women was not significant", "SUPPORTS", 2),
])
def test_the_tables_own_header_words_say_nothing_more(claim, verdict, row):
    """Found as a new user over a subgroup table: "The treatment effect was statistically significant in women." went
    to the programs ("treatment" was a word besides significance) and was supported by one that checked P value =
    0.08."""
    check = significance_check(claim, SUBGROUPS)
    assert check is not None and check.verdict == verdict and check.cells == [(row, 1), (row, 6)]


def test_header_words_do_not_excuse_a_direction():
    assert significance_check("Events were significantly lower in women", SUBGROUPS) is None


@pytest.mark.parametrize("question, answer", [
    ("Which subgroups had a statistically significant effect?", ["Overall", "Men"]),
    ("Which subgroups were not significant?", "Women"),
])
def test_a_which_question_about_significance_lists_the_rows(question, answer):
    """Found as a new user over a subgroup table: "Which subgroups had a statistically significant effect?" was
    answered "<0.001" by 4 of 5 programs (the P value that occurs in most rows)."""
    from tools._cells import TypedTable
    from tools._settle_rules import add_significance_filter
    from tools._table_ops import execute
    from tools._table_ops_model import Program

    typed = TypedTable.build(SUBGROUPS)
    most_common_p = Program(filters=[], fn="most_common", column="p_value", answer_column="p_value")
    read = add_significance_filter(most_common_p, typed, question)
    assert execute(read, typed, union_same_column=True).result == answer
    p_itself = Program(filters=[{"column": "subgroup", "op": "=", "value": "Women"}], fn="value", column="p_value")
    assert add_significance_filter(p_itself, typed, "What was the p value for the significant effect in women?") \
        == p_itself  # a p-value asked for stays
