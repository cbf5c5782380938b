"""Benchmark: one claim checked through ``evidentia ask --table``, as a CLI user runs it: one process per claim (#80).

    .venv/bin/python tests/bench/bench_ask_table.py [--claims 6] [--area ask_table] [--runs]

The first N PubHealthTab claims of the table-disjoint dev split (seed 0: the same claims as bench_claim_servers.py and
bench_tables.py), each table written to a CSV and checked by ``evidentia ask --quiet --table <csv> "<claim>"`` in a
process of its own, one at a time, against the model server already running (``evidentia model serve``: which engine,
and the CPU, are named in the report). The wall clock counts what a user waits for: the process start, the embedder's
load, the table's load and the whole turn (intent, columns, programs, the answer and its checks).

Beside the seconds, the verdict the reply states ("Supported", "Refuted", "Not enough information", read from its
text) against the gold label: a speed figure is reported with what it got right. The tuning split: not a result on
accuracy, and a few claims decide nothing about it. Nothing else may use the machine.

Writes docs/bench/ask_table.{json,md,png} (``--runs``: under docs/bench/runs/) and the per-claim rows in
``<area>_claims.json`` beside it.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from assistant.evals.report import DOCS_DIR, code_version, write_bench  # noqa: E402
from assistant.evals.tables_eval import load_split, select_items  # noqa: E402
from assistant.model.serving import served_model_entries  # noqa: E402
from assistant.settings import Settings  # noqa: E402

# The reply's verdict words (tools.verify_claim's labels in words), the longest first so that "Not enough
# information" is not read as something shorter.
VERDICT_WORDS = {"Not enough information": "NOT ENOUGH INFO", "Supported": "SUPPORTS", "Refuted": "REFUTES"}
_VERDICT = re.compile("|".join(re.escape(w) for w in VERDICT_WORDS))
TIMEOUT_S = 900


def stated_verdict(reply: str) -> str | None:
    """The first verdict the reply's text states, as a label; None when it states none."""
    m = _VERDICT.search(reply)
    return VERDICT_WORDS[m.group(0)] if m else None


def write_csv(table, folder: Path, index: int) -> Path:
    path = folder / f"claim{index}.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(table.columns)
        writer.writerows(table.rows)
    return path


def ask(csv_path: Path, claim: str) -> tuple[float, int, str]:
    """Seconds, exit code and stdout of one ``evidentia ask`` process."""
    exe = ROOT / ".venv" / "bin" / "evidentia"
    t0 = time.perf_counter()
    try:
        out = subprocess.run([str(exe), "ask", "--quiet", "--table", str(csv_path), claim], capture_output=True,
                             text=True, timeout=TIMEOUT_S, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - t0, 124, ""
    return time.perf_counter() - t0, out.returncode, out.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--claims", type=int, default=6)
    ap.add_argument("--area", default="ask_table")
    ap.add_argument("--runs", action="store_true", help="write under docs/bench/runs/")
    args = ap.parse_args()
    settings = Settings()
    if settings.eval_data_dir is None:
        sys.exit("Set EVIDENTIA_EVAL_DATA_DIR (../shared/eval-data): the claims come from PubHealthTab's dev split.")
    entries = served_model_entries(settings.effective_base_url)
    if entries is None:
        sys.exit(f"No model server answers at {settings.effective_base_url}: start `evidentia model serve` first, "
                 "so that each process times the claim, not the server's start.")
    engine = ", ".join(sorted({str(m.get("owned_by")) for m in entries}))
    items = select_items("pubhealthtab", load_split("pubhealthtab", Path(settings.eval_data_dir), "dev"), seed=0,
                         limit=args.claims, split="dev")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, item in enumerate(items):
            seconds, code, reply = ask(write_csv(item.table, Path(tmp), i), item.claim)
            label = stated_verdict(reply)
            rows.append({"id": item.id, "seconds": round(seconds, 2), "exit_code": code, "stated": label,
                         "gold": item.label, "right": label == item.label})
            print(f"  {item.id[:10]}: {seconds:.1f} s, exit {code}, {label} (gold {item.label})", flush=True)
    done = [r["seconds"] for r in rows if r["exit_code"] == 0]
    if not done:
        sys.exit("No claim was answered (every process failed or timed out); nothing to report.")
    results = {
        "ask_table_median_s": (statistics.median(done), "s"),
        "ask_table_min_s": (min(done), "s"),
        "ask_table_max_s": (max(done), "s"),
        "claims": (len(rows), "claims"),
        "answered": (len(done), "claims"),
        "right": (sum(r["right"] for r in rows), "claims"),
    }
    notes = (f"{len(rows)} PubHealthTab dev claims (the tuning split, seed 0), each checked by `evidentia ask --quiet "
             f"--table <csv> \"<claim>\"` in a process of its own, one at a time, against the running server "
             f"({engine} at {settings.effective_base_url}); the wall clock includes the process start, the "
             f"embedder's load and the table's load. Right: the verdict the reply states against the gold label "
             f"({results['right'][0]} of {len(rows)}; a few claims decide nothing about accuracy). Code: "
             f"{code_version()}. Per claim: `{args.area}_claims.json`.")
    write_bench(args.area, results, notes=notes, runs=args.runs)
    out = DOCS_DIR / "bench" / ("runs" if args.runs else "") / f"{args.area}_claims.json"
    out.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
