"""The PDF reading evaluation (#81): its scoring on hand-worked cases, and a small run end to end whose report
recomputes from its log."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from assistant.evals.pdf_eval import summarise, table_fidelity
from kb.table_model import Table


def _table(columns, rows):
    return Table(name="t", title="t", columns=columns, rows=rows)


def test_fidelity_counts_cells_at_their_position():
    original = _table(["Model", "F1"], [["A", "0.91"], ["B", "0.88"]])
    assert table_fidelity(original, original) | {"shape": None} == {
        "found": True, "headers_right": 2, "headers": 2, "cells_right": 4, "cells": 4, "exact": True,
        "shape": None, "drawn_changed": 0}
    shifted = _table(["Model", "F1"], [["A", "0.91"], ["", ""], ["B", "0.88"]])  # a wrapped cell's extra row
    got = table_fidelity(original, shifted)
    assert (got["cells_right"], got["exact"]) == (2, False)
    assert table_fidelity(original, None)["cells_right"] == 0
    # What the standard fonts cannot draw is scored as drawn ("?"), and counted.
    greek = _table(["Model", "Δ"], [["α-net", "1.0"]])
    drawn = _table(["Model", "?"], [["?-net", "1.0"]])
    got = table_fidelity(greek, drawn)
    assert got["exact"] and got["drawn_changed"] == 1


def test_the_summary_is_computed_from_the_records_by_hand():
    recs = [{"part": "table", "benchmark": "scitab", "style": "ruled", "error": "", "found": True, "exact": True,
             "cells_right": 10, "cells": 10, "headers_right": 2, "headers": 2},
            {"part": "table", "benchmark": "scitab", "style": "ruled", "error": "", "found": True, "exact": False,
             "cells_right": 5, "cells": 10, "headers_right": 1, "headers": 2},
            {"part": "table", "benchmark": "scitab", "style": "ruled", "error": "not drawn: too big",
             "found": False, "exact": False, "cells_right": 0, "cells": 99, "headers_right": 0, "headers": 9},
            # two claims: one on an exactly read table (not run), one run on both where the PDF's verdict is wrong
            {"part": "claim", "id": "c1", "gold": "SUPPORTS", "ruled": "same table", "original": None},
            {"part": "claim", "id": "c2", "gold": "SUPPORTS", "ruled": "REFUTES", "original": "SUPPORTS"},
            {"part": "text", "sentences": 10, "pages_right": 10, "queries": 4, "same_top5": 3}]
    got = summarise(recs, ("ruled",))
    assert got["scitab tables, ruled"] == {"tables": 2, "found": 1.0, "cell_accuracy": 0.75, "header_accuracy": 0.75,
                                           "exact_tables": 0.5, "not_drawn": 1}
    assert got["scitab claims, ruled"]["accuracy_loss_points"] == 50.0  # 1 claim of 2 lost
    assert got["text"] == {"papers": 1, "sentences": 10, "page_accuracy": 1.0, "same_top5": 0.75}


@pytest.mark.skipif(not os.environ.get("EVIDENTIA_EVAL_DATA_DIR") or not os.environ.get("EVIDENTIA_KB_MIRROR_DIR"),
                    reason="needs the benchmark data (make test sets EVIDENTIA_EVAL_DATA_DIR)")
def test_a_small_run_writes_a_report_that_recomputes(tmp_path, monkeypatch):
    from assistant.cli import main
    from assistant.evals.recompute import recompute_report

    monkeypatch.setenv("EVIDENTIA_DATA_DIR", str(tmp_path / "data"))
    r = CliRunner().invoke(main, ["eval", "pdf", "--tables", "2", "--claims", "0", "--papers", "1",
                                  "--docs-dir", str(tmp_path / "docs")], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "docs" / "eval" / "pdf.json").read_text())
    assert {"scitab tables, ruled", "wikitablequestions tables, plain", "text"} <= set(report["variants"])
    assert report["variants"]["text"]["page_accuracy"] == 1.0
    log = (tmp_path / "docs" / "eval" / "pdf-items.jsonl").read_text().splitlines()
    assert len(log) == report["items"] == 2 * 2 * 3 + 1
    assert not any("claim" in line and "table_content" in line for line in log)  # no benchmark text in the log
    result = recompute_report(tmp_path / "docs" / "eval" / "pdf.json", Path("."), Path("."))
    assert result.status == "ok", result
