"""The bank of verified table programs (#77): worked examples mined from training and tuning splits.

Each entry is one program the model wrote under today's grammar that, run by today's executor, gave the gold answer
(a question) or the gold verdict while checking what the claim states (a claim), stored with its text, the text's
*skeleton* (numbers, row values and column names replaced by their kinds, ``tools.worked_examples.skeleton``), the
table's column sketch as the model saw it, its result and where it came from (source, item, licence).

Retrieval is by skeleton: a TF-IDF vector of the skeleton's word 1-3-grams (scikit-learn), cosine, with maximal
marginal relevance so the k examples are not k copies of one form. Why not the sentence encoder: once numbers,
values and columns are masked, what is left is the form ("how many [COL] were above [NUM]"), which word n-grams
match exactly and a semantic encoder blurs; it also needs no model in the prompt path (sub-millisecond per query).
Entries on the asking table itself (same fingerprint) are never returned, so a bank mined from a tuning split can be
measured on that split without showing an item its own answer.

The default bank ships beside this module (``program_bank.jsonl``); only sources whose licence allows redistribution
go into it (``evidentia kb programs build``), others stay in the data folder for measurements.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

DEFAULT_BANK = Path(__file__).with_name("program_bank.jsonl")
MMR_LAMBDA = 0.7  # relevance against diversity; 1.0 is plain nearest neighbours


class BankEntry(BaseModel):
    """One verified program, as a worked example."""

    id: str = Field(description="<source>:<item id>:<n>")
    kind: Literal["claim", "question"]
    text: str = Field(description="The claim or question as the source writes it.")
    skeleton: str = Field(description="The text with numbers, row values and column names masked by kind.")
    columns: list[str] = Field(description="The table's columns as the program names them, with their kinds.")
    program: dict = Field(description="The program as the model wrote it (grammar-valid JSON).")
    result: str = Field("", description="What the program computed on its table.")
    gold: str = Field("", description="The gold answer or verdict it matched.")
    source: str = Field(description="wtq-train, tabfact-dev, scitab-dev or pubhealthtab-dev.")
    license: str = ""
    table: str = Field("", description="Fingerprint of the source table: an item's own table is never shown to it.")


class BankError(ValueError):
    """A bank file that cannot be read: says which line and why."""


def read_entries(path: Path) -> list[BankEntry]:
    """The entries of a bank file (JSONL); a malformed line is an error naming it, never skipped silently."""
    entries = []
    with Path(path).open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                entries.append(BankEntry.model_validate_json(line))
            except ValueError as exc:
                raise BankError(f"{path}, line {n}: not a bank entry ({str(exc).splitlines()[0]})") from None
    return entries


def write_entries(path: Path, entries: list[BankEntry]) -> None:
    """Write a bank file whole (sorted by id, so a rebuild that keeps the same entries is the same file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for entry in sorted(entries, key=lambda e: e.id):
            fh.write(json.dumps(entry.model_dump(), ensure_ascii=False, sort_keys=True) + "\n")
    tmp.replace(path)


@dataclass
class ProgramBank:
    """The entries of one kind with their skeleton vectors, ready to retrieve from."""

    entries: list[BankEntry]
    _vectorizer: object
    _matrix: object  # sparse (n, features), rows L2-normalised

    @classmethod
    def build(cls, entries: list[BankEntry]) -> ProgramBank:
        from sklearn.feature_extraction.text import TfidfVectorizer

        vectorizer = TfidfVectorizer(ngram_range=(1, 3), token_pattern=r"\[[A-Z]+\]|[a-z]+", lowercase=False,
                                     sublinear_tf=True)
        matrix = vectorizer.fit_transform([e.skeleton for e in entries]) if entries else None
        return cls(entries, vectorizer, matrix)

    def nearest(self, skeleton: str, k: int, *, exclude_table: str = "") -> list[BankEntry]:
        """The ``k`` entries most like ``skeleton``, chosen by maximal marginal relevance (each next one the most
        similar to the query less its similarity to those already chosen), none from the table ``exclude_table``."""
        if k <= 0 or self._matrix is None:
            return []
        query = self._vectorizer.transform([skeleton])
        relevance = np.asarray((self._matrix @ query.T).todense()).ravel()
        allowed = [i for i, e in enumerate(self.entries) if not (exclude_table and e.table == exclude_table)]
        # the candidates worth weighing: the most relevant few dozen (MMR over the whole bank costs n*k)
        pool = sorted(allowed, key=lambda i: (-relevance[i], self.entries[i].id))[: max(4 * k, 32)]
        chosen: list[int] = []
        seen_programs: set[str] = set()
        while pool and len(chosen) < k:
            if chosen:
                sims = np.asarray((self._matrix[pool] @ self._matrix[chosen].T).todense()).max(axis=1).ravel()
            else:
                sims = np.zeros(len(pool))
            scores = MMR_LAMBDA * relevance[pool] - (1 - MMR_LAMBDA) * sims
            best = pool.pop(int(np.argmax(scores)))
            shape = _program_shape(self.entries[best].program)
            if shape in seen_programs and len(pool) >= k - len(chosen):
                continue  # the same program shape once is enough when others are left
            seen_programs.add(shape)
            chosen.append(best)
        return [self.entries[i] for i in chosen]


def _program_shape(program: dict) -> str:
    """A program with its columns and values left out: what two examples teach alike."""
    filters = program.get("filters") or []
    check = program.get("check") or {}
    return json.dumps([program.get("fn"), sorted(f.get("op", "") for f in filters if isinstance(f, dict)),
                       check.get("op") if isinstance(check, dict) else None,
                       check.get("against") if isinstance(check, dict) else None])


@lru_cache(maxsize=8)
def _load(path: str, mtime_ns: int, kind: str) -> ProgramBank:
    return ProgramBank.build([e for e in read_entries(Path(path)) if e.kind == kind])


def load_bank(path: Path, kind: str) -> ProgramBank:
    """The bank at ``path`` for ``kind`` (claim or question), read once per file version; an absent file is an
    error that says how to make one."""
    path = Path(path)
    if not path.exists():
        raise BankError(f"No program bank at {path}: build one with `evidentia kb programs mine` and "
                        "`evidentia kb programs build`, or set EVIDENTIA_TABLE_EXAMPLES=0.")
    return _load(str(path), path.stat().st_mtime_ns, kind)
