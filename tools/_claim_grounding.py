"""Whether a claim's refutation checks what the claim states: rules that keep misread programs out of the vote.

The small model writes programs that run and compute the right thing often enough, but on PubHealthTab its
REFUTES votes were almost all wrong (first 30 claims of the eval split: 1 right of 13). The wrong ones have
a recognisable form: the check compares with a value the claim never states (a count checked against "2"
for "more UK authors than Taiwan ones", a percentage the model copied from another row), or counts rows
against a number the rows could never reach. A failing check of a value the claim does not state tests the
model's guess, not the claim. So a *refutation* must rest on the claim's own values; a check that holds is
left to vote (the model wrote it while seeing the table, and a matching value is evidence of a reading).

Each rule returns why a refuting program does not vote (the step shows it) or ``""`` when it may vote.

- **stated**: a check against a value must compare with a number the claim states (as a number, so
  "45%" meets "45" and "56 million" meets "56000000"), or with text whose words the claim has;
- **reachable count**: a count checked against more rows than the table has counts the wrong thing (the
  claim's number is a cell, not a number of rows);
- **empty count**: a count over no selected rows, checked against anything but 0, means the filters
  missed, not that the claim is false.

Decided on the tuning split only: on the first 53 claims of PubHealthTab's eval split (docs/eval/
pubhealthtab-dev.md, programs sampled without these rules), replaying the logged programs with them blocks
31 refuting votes, 24 of them on claims labelled SUPPORTS and 1 on NOT ENOUGH INFO; accuracy 33 -> 35 of 53
with 4 claims left to the CCoE fallback (not replayed); always-SUPPORTS scores 34. A first version that
also held *supporting* checks to the claim's values blocked 12 right votes for 11 wrong ones (first 21
claims) and was dropped.
"""

from __future__ import annotations

import re

from tools._cells import cell_number
from tools._table_ops import Execution, Program

_NUMBER = re.compile(r"[−-]?\d[\d,]*(?:\.\d+)?")
_WORD = re.compile(r"[a-z0-9]+")


_NUMBER_WORDS = {w: float(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())} | {
    "single": 1.0, "twice": 2.0, "double": 2.0, "half": 0.5, "dozen": 12.0, "none": 0.0, "no": 0.0}


def claim_numbers(claim: str) -> set[float]:
    """The numbers a claim states ("1,200", "45%", "3.5", "three"), as numbers."""
    out = {n for w, n in _NUMBER_WORDS.items() if re.search(rf"\b{w}\b", claim.lower())}
    for m in _NUMBER.finditer(claim):
        n = cell_number(m.group(0))
        if n is not None:
            out.add(round(n, 6))
    return out


def _stated(value: str, claim: str, numbers: set[float]) -> bool:
    n = cell_number(value)
    if n is not None:
        # "56 million" is stated as 56; a check value the model scaled ("56000000") is 56 * 10^6.
        return any(abs(n - x) <= 1e-6 * max(1.0, abs(x)) or any(abs(n - x * s) <= 1e-6 * abs(x * s)
                                                                   for s in (1e3, 1e6, 1e9)) for x in numbers)
    words = [w for w in _WORD.findall(value.lower()) if len(w) > 1]
    have = set(_WORD.findall(claim.lower()))
    return not words or all(w in have for w in words)


def vote_blocker(program: Program, ex: Execution, claim: str, n_rows: int) -> str:
    """Why this claim program must not vote, or ``""``."""
    chk = program.check
    if chk is None or chk.against != "value" or ex.truth:
        return ""  # only a refutation is held to the claim's own values (see the module's docstring)
    if not _stated(chk.value, claim, claim_numbers(claim)):
        return f"the check compares with {chk.value!r}, which the claim does not state"
    if program.fn == "count":
        target = cell_number(chk.value)
        if target is not None and target > n_rows and chk.op in ("=", ">", ">="):
            return f"the claim's {chk.value!r} cannot be a number of rows (the table has {n_rows})"
        if not ex.selected and target != 0:
            return "the filters select no row, so the count says nothing about the claim"
    return ""
