"""The `ask --table` benchmark's reading (tests/bench/bench_ask_table.py): the verdict a reply states, and the table
written as the CSV a CLI user would upload, read back by the product's own loader."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from kb.tables import Table, load_table

_PATH = Path(__file__).resolve().parent / "bench" / "bench_ask_table.py"
_spec = importlib.util.spec_from_file_location("bench_ask_table", _PATH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


@pytest.mark.parametrize(("reply", "label"), [
    ("Refuted. The table gives 4,512 participants for BETA-2 [T1:R2C3].", "REFUTES"),
    ("Not enough information: the table has no column for satisfaction.", "NOT ENOUGH INFO"),
    ("Supported: 187 deaths in ALPHA-1 [T1:R1C5]. Refuted would need more.", "SUPPORTS"),  # the first one stated
    ("The model server did not answer.", None),
])
def test_the_reply_states_its_verdict_in_words(reply, label):
    assert bench.stated_verdict(reply) == label


def test_the_claims_table_goes_to_a_csv_the_product_reads_back_unchanged(tmp_path):
    table = Table(name="t", title="t", columns=["Trial", "Country, region", "Deaths"],
                  rows=[["ALPHA-1", "UK, London", "1,204"], ["BETA \"2\"", "France", "142"]])
    back = load_table(bench.write_csv(table, tmp_path, 0))
    assert back.columns == table.columns and back.rows == table.rows
