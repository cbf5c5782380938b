"""A row named by its base name when the model picked a variant of it (tools/_claim_changes.py), and bold cells read as
numbers; both found as a new user on a results table pasted from a paper."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_changes import base_cell
from tools._table_program import run_sampled

RESULTS = Table(name="results", title="", columns=["Model", "Params (M)", "SST-2 Acc.", "MNLI-m Acc.", "Avg."], rows=[
    ["BERT", "110", "93.5", "84.6", "83.1"],
    ["BERT-large", "340", "94.9", "86.7", "84.6"],
    ["DistilBERT", "66", "91.3", "82.2", "81.4"],
    ["Ours (w/o distill.)", "66", "92.0 ± 0.3", "83.1 ± 0.2", "82.0"],
    ["Ours", "66", "**93.1 ± 0.2**", "**84.9 ± 0.3**", "**83.2**"]])
TYPED = TypedTable.build(RESULTS)
CLAIM = "Our model outperforms DistilBERT on MNLI-m."
NAMES = [row[0] for row in RESULTS.rows]


@pytest.mark.parametrize("value, text, base", [
    ("Ours (w/o distill.)", CLAIM, "Ours"),
    ("BERT (- attention)", "BERT beats DistilBERT on SST-2", "BERT"),
    # a variant that leaves nothing out is a system of its own (SciTab's test replay: "Dual2seq-Dep" is not
    # "Dual2seq" when the claim speaks of "the other systems")
    ("BERT-large", "BERT beats DistilBERT on SST-2", None),
    # the text writes the qualifier: the variant is meant
    ("Ours (w/o distill.)", "Without distillation our model loses 0.8 points on MNLI-m", None),
    ("BERT-large", "BERT-large beats DistilBERT on SST-2", None),
    # "DistilBERT" is not "Distil" plus a qualifier: the base must end at a word boundary
    ("DistilBERT", "Distil is worse", None),
    ("Ours", CLAIM, None),  # no shorter cell
])
def test_base_cell(value, text, base):
    assert base_cell(value, NAMES + ["Distil", "BERT (- attention)"], text) == base


def test_a_claim_about_our_model_reads_the_base_row_not_the_ablation():
    raw = {"filters": [{"column": "model", "op": "=", "value": "Ours (w/o distill.)"}], "fn": "value",
           "column": "mnli_m_acc", "check": {"op": ">", "against": "row", "value": "DistilBERT"}}
    ran = run_sampled(raw, TYPED, "claim", CLAIM)
    assert ran.error == "", ran.error
    assert ran.program.filters[0].value == "Ours"
    # the bold "**84.9 ± 0.3**" is 84.9, more than DistilBERT's 82.2 (before: compared as text, and refuted)
    assert ran.execution.truth is True and ran.execution.decisive_rows == [5]


def test_the_row_a_check_compares_with_is_read_as_the_base_too():
    raw = {"filters": [{"column": "model", "op": "=", "value": "DistilBERT"}], "fn": "value", "column": "sst_2_acc",
           "check": {"op": "<", "against": "row", "value": "Ours (w/o distill.)"}}
    ran = run_sampled(raw, TYPED, "claim", "DistilBERT is behind our model on SST-2")
    assert ran.program.check.value == "Ours"
    assert ran.execution.truth is True  # 91.3 < 93.1


def test_an_ablation_the_claim_names_is_kept():
    claim = "Without distillation, our model scores 82.0 on average"
    raw = {"filters": [{"column": "model", "op": "=", "value": "Ours (w/o distill.)"}], "fn": "value",
           "column": "avg", "check": {"op": "=", "against": "value", "value": "82.0"}}
    ran = run_sampled(raw, TYPED, "claim", claim)
    assert ran.program.filters[0].value == "Ours (w/o distill.)" and ran.execution.truth is True
