"""The README's measured figures are generated from the canonical results files, never typed (#75)."""

from __future__ import annotations

import json
import re
import shutil

from assistant.evals import readme_numbers
from assistant.evals.readme_numbers import BEGIN, END, README, current_block, render, rewrite

# What a typed result looks like: a speed, a duration of a step, an accuracy or a rate with its number.
TYPED_RESULT = re.compile(r"\d[\d.,]*\s*(?:tokens/s|s/claim|min \d+ s)\b|\b(?:accuracy|median|macro-F1)\s+\d\.\d+"
                          r"|\bverified\s+0\.\d+")


def test_the_readme_block_is_what_the_results_files_give():
    block = current_block(README.read_text(encoding="utf-8"))
    assert block is not None, "the README lost its generated block"
    assert block == render(), "the README's figures differ from docs/: run `make docs`"


def test_no_result_figure_is_typed_outside_the_block():
    text = README.read_text(encoding="utf-8")
    outside = text.replace(current_block(text), "")
    assert TYPED_RESULT.findall(outside) == []


def test_a_changed_results_file_changes_the_block(tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(readme_numbers.DOCS_DIR / "bench", docs / "bench", ignore=shutil.ignore_patterns("*.png", "runs"))
    shutil.copytree(readme_numbers.DOCS_DIR / "eval", docs / "eval", ignore=shutil.ignore_patterns("*.png", "runs"))
    chat = json.loads((docs / "bench" / "chat.json").read_text())
    chat["results"]["turn_latency_median_s"]["value"] = 99.94
    (docs / "bench" / "chat.json").write_text(json.dumps(chat))
    assert "| chat turn, median over the chat bench | 99.9 s |" in render(docs)
    chat["machine"] = "2 cores Test CPU (AVX2), 8 GiB RAM"
    (docs / "bench" / "chat.json").write_text(json.dumps(chat))
    block = render(docs)  # a machine of its own: a new letter in the rows, named once in the legend
    key = re.search(r"\| chat turn, median over the chat bench \| 99.9 s \| (\w+) \|", block).group(1)
    assert block.count("Test CPU") == 1 and f"**{key}** 2 cores Test CPU (AVX2), 8 GiB RAM" in block
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{BEGIN}\nold\n{END}\n\nafter\n")
    assert rewrite(readme, docs) and "99.9 s" in readme.read_text() and readme.read_text().endswith("after\n")
    assert not rewrite(readme, docs)  # a second run changes nothing


def test_a_sealed_run_is_named_with_its_commit(tmp_path):
    docs = tmp_path / "docs"
    (docs / "eval").mkdir(parents=True)
    (docs / "eval" / "tabfact.json").write_text(json.dumps({
        "benchmark": "tabfact", "items": 500, "majority_baseline": 0.5, "sealed": True, "commit": "abc1234",
        "date": "2026-12-06", "variants": {"program": {"accuracy": 0.71, "macro_f1": 0.7}}}))
    assert "| tabfact | program | 500 | 0.710 (macro-F1 0.700) | majority 0.500 | sealed, abc1234, 2026-12-06 |" \
        in render(docs)
