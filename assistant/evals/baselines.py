"""``evidentia eval baselines``: add model-free baselines to already published reports (#18).

A report written before the baselines existed is patched in place, its measured numbers untouched:
the gold labels of exactly the items it evaluated are re-read from the dataset files with the same
selection code the evaluation uses (seeded subset, first N, or the recorded ``item_ids``), and
``majority_baseline`` (plus ``first_option_baseline`` for multiple choice) is added to the JSON and
stated in the .md.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from assistant.evals.report import baseline_notes, label_baselines

# Reports whose per-item logs are not kept: their accuracy cannot be split into the model's answers and
# the judge's word-overlap fallbacks until they are re-run.
FALLBACKS_UNKNOWN = ("Not separated: this run's per-item log is not kept, so its accuracy mixes the model's answers "
                     "with word-overlap fallbacks (judge output unusable) in unknown shares. A re-run reports "
                     "judge_failed_rate, accuracy (fallbacks wrong) and accuracy_with_fallback.")


def _mc_baselines(items: list[dict]) -> dict[str, Any]:
    return label_baselines([it["answer"] for it in items], [next(iter(it["options"])) for it in items])


def published_baselines(benchmark: str, payload: dict, eval_dir: Path) -> dict[str, Any]:
    """Baselines for one published report, from the gold labels of the items it evaluated.

    Raises ``KeyError`` for a benchmark it does not know and ``OSError`` when a dataset file is missing.
    """
    from assistant.settings import Settings

    if benchmark in ("medqa", "medmcqa"):
        from assistant.evals.kg_eval import fixed_subset, load_items

        settings = Settings(_env_file=None, eval_data_dir=eval_dir)
        subset = fixed_subset(load_items(settings, benchmark), payload["items"])
        # accuracy covers the first llm_items of the subset (the LLM answers items in subset order)
        return _mc_baselines(subset[:payload.get("llm_items") or len(subset)])
    if benchmark in ("obqa", "csqa"):
        from assistant.evals.retrieval_eval import load_mc

        name = "openbookqa/test.jsonl" if benchmark == "obqa" else "commonsenseqa/dev_rand_split.jsonl"
        return _mc_baselines(load_mc(eval_dir / name, payload["items"]))
    if benchmark == "obqa-retrieval":
        from assistant.evals.retrieval_eval import constant_fact_baseline, load_mc

        questions = load_mc(eval_dir / "openbookqa" / "test_complete.jsonl", payload["items"])
        return constant_fact_baseline([q["fact"] for q in questions])
    from assistant.evals.tables_eval import BENCHMARKS

    loader = BENCHMARKS[benchmark][0]
    labels = {it.id: it.label for it in loader(eval_dir)}
    golds = [labels[i] for i in payload["item_ids"]]
    # The report's own per-label supports must match these gold labels, or the selection is not the same.
    counts = Counter(golds)
    for name, row in payload["variants"].items():
        supports = {lab: x["support"] for lab, x in row.get("per_label", {}).items() if x["support"]}
        if supports and supports != dict(counts):
            raise ValueError(f"{benchmark} {name}: gold labels {dict(counts)} differ from the report's {supports}")
    return label_baselines(golds)


def _insert_after_table(md: str, line: str) -> str:
    """Put ``line`` after the first Markdown table (or replace an earlier baselines line)."""
    lines = md.split("\n")
    lines = [x for x in lines if not x.startswith("Baselines without any model")]
    start = next(i for i, x in enumerate(lines) if x.startswith("|"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return "\n".join(lines[:end] + ["", line] + lines[end:]).replace("\n\n\n", "\n\n")


def patch_report(json_path: Path, eval_dir: Path, *, fallbacks_unknown: bool = False) -> dict[str, Any]:
    """Add the baselines (and, for old MC runs, the fallback caveat) to one report; returns what was added."""
    payload = json.loads(json_path.read_text())
    added = published_baselines(payload["benchmark"], payload, eval_dir)
    if payload["benchmark"] == "obqa-retrieval":  # its "accuracy" column was recall@1: say so
        for row in payload["variants"].values():
            if "accuracy" in row:
                row["recall_at_1"] = row.pop("accuracy")
        from assistant.evals.report import _bar_chart

        _bar_chart(json_path.with_suffix(".png"), payload["benchmark"],
                   {n: v["recall_at_1"] for n, v in payload["variants"].items()}, ylabel="recall_at_1")
    multiple_choice = payload["benchmark"] in ("medqa", "medmcqa", "obqa", "csqa")
    if fallbacks_unknown and multiple_choice and not any("judge_failed_rate" in v for v in payload["variants"].values()):
        added["judge_failed_rate"] = None
        added["fallbacks"] = FALLBACKS_UNKNOWN
    payload.update(added)  # measured numbers untouched
    json_path.write_text(json.dumps(payload, indent=2, default=float) + "\n")
    md_path = json_path.with_suffix(".md")
    if md_path.exists():
        line = baseline_notes(payload)
        if "fallbacks" in added:
            line += f"\n\n**Judge fallbacks:** {FALLBACKS_UNKNOWN}"
        md = md_path.read_text()
        if FALLBACKS_UNKNOWN in md:
            md = md.replace(f"\n\n**Judge fallbacks:** {FALLBACKS_UNKNOWN}", "")
        md_path.write_text(_insert_after_table(md, line))
    return added
