"""The sealed test split (#75): tune on dev, run test once per result, publish that run as it came out.

A run on a test split is either *sealed* (the whole fixed selection, every check made by the code of this commit, the
report published in ``docs/eval/``) or *exploratory* (``--exploratory``: a replay or a partial ``--limit`` run, whose
report goes to the data folder and is never published). Every test-split run, of either kind, is appended to the
committed ledger ``docs/eval/test-runs.jsonl``, so a published result says how often its test split was looked at.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import click

from assistant.evals.report import DOCS_DIR, code_version

LEDGER_NAME = "test-runs.jsonl"
SEALED, EXPLORATORY, REPLAY = "sealed", "exploratory", "replay"


def refuse_unsealed(split: str, *, replay: bool, limit: int | None, exploratory: bool) -> None:
    """A replay or a partial run on the test split is a look at test: refused unless asked for as exploratory."""
    if split != "test" or exploratory or not (replay or limit):
        return
    what = "--replay" if replay else f"--limit {limit}"
    raise click.UsageError(
        f"The test split is sealed: {what} on it is a look at the test items that would steer the next rule. "
        "Tune with --split dev. To look anyway, add --exploratory: the run is counted in "
        f"docs/eval/{LEDGER_NAME} and nothing is published.")


def ledger_path(docs_dir: Path | None = None) -> Path:
    return (docs_dir or DOCS_DIR) / "eval" / LEDGER_NAME


def ledger(docs_dir: Path | None = None) -> list[dict]:
    path = ledger_path(docs_dir)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def record_test_run(benchmark: str, kind: str, *, items: int, checked: int, variants: list[str],
                    docs_dir: Path | None = None, commit: str | None = None) -> dict:
    """Append one test-split run to the ledger: which benchmark, how, when, at which commit (``commit``, else the
    checkout's now), how many items."""
    entry = {"benchmark": benchmark, "kind": kind, "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
             "commit": commit or code_version() or "unknown", "items": items, "checked": checked, "variants": variants}
    path = ledger_path(docs_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")
    return entry


def sealed_stamp(benchmark: str, tuning_split: str, docs_dir: Path | None = None, commit: str | None = None) -> dict:
    """What a published test result records of itself: commit (``commit``, else the checkout's now), date, tuning
    split, and how often test was run."""
    commit = commit or code_version() or "unknown"
    runs = [e for e in ledger(docs_dir) if e["benchmark"] == benchmark]
    here = [e for e in runs if e["commit"] == commit]
    return {"sealed": True, "commit": commit, "date": time.strftime("%Y-%m-%d", time.gmtime()),
            "tuning_split": tuning_split,
            "test_runs": {"sealed_at_this_commit": sum(e["kind"] == SEALED for e in here),
                          "exploratory_at_this_commit": sum(e["kind"] != SEALED for e in here),
                          "all_commits": len(runs)}}


def sealed_note(stamp: dict) -> str:
    runs = stamp["test_runs"]
    return (f"Sealed test run at {stamp['commit']} on {stamp['date']}; tuned on {stamp['tuning_split']}. "
            f"Test-split runs at this commit: {runs['sealed_at_this_commit']} sealed, "
            f"{runs['exploratory_at_this_commit']} exploratory; {runs['all_commits']} in the ledger for this "
            f"benchmark (docs/eval/{LEDGER_NAME}). Published as it came out.\n\n")


def exploratory_docs_dir(settings) -> Path:
    """Where an exploratory run's report goes: the data folder, never docs/."""
    return Path(settings.data_dir) / "eval" / "exploratory"


@dataclass
class SealedRun:
    """One evaluation run's place in the sealing, shared by every benchmark's runner: whether it is sealed, whose
    logged results count, where its report goes, and what it writes to the ledger and the report."""

    benchmark: str
    split: str
    exploratory: bool
    settings: object
    docs_dir: Path | None = None  # where published reports and the ledger go (None: the repository's docs/)
    code: str | None = field(init=False)

    def __post_init__(self) -> None:
        self.code = code_version() if self.sealed else None

    @property
    def sealed(self) -> bool:
        return self.split == "test" and not self.exploratory

    @property
    def report_dir(self) -> Path | None:
        """Where this run's report goes: the data folder for an exploratory run, else the published docs."""
        return exploratory_docs_dir(self.settings) if self.exploratory else self.docs_dir

    def made_here(self, rec: dict) -> bool:
        """Whether a logged result may count: any in a dev or exploratory run, only this commit's in a sealed one."""
        return not self.sealed or rec.get("commit") == self.code

    def counts(self, rec: dict | None) -> bool:
        return rec is not None and self.made_here(rec)

    def record(self, *, items: int, checked: int, variants: list[str]) -> None:
        """A run on the test split goes into the ledger, sealed or exploratory; a dev run does not."""
        if self.split == "test":
            # The commit whose code made the checks, not the checkout's at the end: a commit made while a run
            # was going (a PubHealthTab run, 2026-12-06) had stamped its report with a commit that made none of them.
            record_test_run(self.benchmark, SEALED if self.sealed else EXPLORATORY, items=items, checked=checked,
                            variants=variants, docs_dir=self.docs_dir, commit=self.code)

    def stamp(self, tuning_split: str) -> dict:
        """What a sealed report records of itself ({} for any other run)."""
        return sealed_stamp(self.benchmark, tuning_split, self.docs_dir, commit=self.code) if self.sealed else {}

    def note(self, stamp: dict) -> str:
        """The report's opening lines: the sealed run's stamp, or the warning that an exploratory run is no result."""
        return ((sealed_note(stamp) if stamp else "")
                + ("EXPLORATORY run on the test split: not a published result.\n\n" if self.exploratory else ""))
