"""How much of a claim a table talks about: the share of the claim's content words the table mentions.

A claim about something a table does not mention cannot be settled by it (NOT ENOUGH INFO), whatever a
program computes over the rows it *does* have. The small model almost never says "not in the table" in its
column choice, but the form of the input settles it well: on PubHealthTab's eval split the claims labelled
NOT ENOUGH INFO have a median coverage of 0.27, the others 0.75 (SUPPORTS) and 0.78 (REFUTES).

Words are compared by their first :data:`PREFIX` letters, so "metastatic" meets "metastasis" and "survivors"
meets "survival"; numbers are left out (a claim may state a number the table lacks and still be refuted). A final
"s" is dropped first, so a short word meets its plural ("dose" and "Doses", whose five letters differ), and a
header's abbreviation mentions the words it stands for ("95% CI" mentions "confidence interval" and its bounds).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kb.tables import Table
from tools._cells import iso_month_match
from tools._table_shape import INTERVAL_HEADER
from tools.lang.lexicon import MONTHS, spelled_out

PREFIX = 5
_BOUND_WORDS = ["lower", "upper", "bound", "limit"]
# Tuned on the tuning splits only (PubHealthTab's eval split; SciTab claims outside the fixed test subset):
# below 0.30, 87% of PubHealthTab's and 45% of SciTab's flagged claims are NOT ENOUGH INFO (base rates
# 22% and 29%), catching 60% and 57% of them.
NEI_COVERAGE = 0.30
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("""a an the of in on at to for by with from and or is are was were be been has have had that this
these those it its as than more less most least not no yes which who what when where how did does do over under
per between during after before into about there their his her they he she we you i also only all any each many
much some such very can could will would may might should one two three our other""".split())


@dataclass
class Coverage:
    share: float  # of the claim's content words, how many the table mentions (1.0 when it has none)
    words: list[str]
    missing: list[str]


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP and not w.isdigit() and len(w) > 1]


def _key(word: str) -> str:
    """What two words must share to meet: "doses" and "dose" both give "dose", "survivors" and "survival" "survi"."""
    return (word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)[:PREFIX]


def claim_coverage(claim: str, table: Table) -> Coverage:
    """The share of ``claim``'s content words found (by prefix) in ``table``'s title, headers and cells."""
    spelled = [w for header in table.columns for w in spelled_out(header)]
    if any(INTERVAL_HEADER.search(header) for header in table.columns):  # "the lower bound of the CI"
        spelled += _BOUND_WORDS
    vocabulary = {_key(w) for w in _words(" ".join([table.title, *table.columns, *spelled,
                                                    *(cell for row in table.rows for cell in row)]))}
    words = list(dict.fromkeys(_words(claim)))
    # A month the claim names is mentioned by a cell that writes a date in it as numbers ("March" by "2024-03"):
    # found as a new user, "March revenue was about 20% higher than February revenue" was NOT ENOUGH INFO.
    months = [w for w in words if w in MONTHS and _key(w) not in vocabulary]
    if months:
        cells = [cell for row in table.rows for cell in row]
        vocabulary |= {_key(w) for w in months if any(iso_month_match(cell, w) for cell in cells)}
    missing = [w for w in words if _key(w) not in vocabulary]
    share = 1.0 - len(missing) / len(words) if words else 1.0
    return Coverage(share=share, words=words, missing=missing)
