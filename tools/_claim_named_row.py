"""A claim about one named row, written as "every" or "only": read as that row meeting the program's filters.

Found on PubHealthTab's tuning split (its eval split): "Panthera leo atrox is found in North America." over a table
of species and locations came back as "rows where Location = 'North America' -> whether every one (or only they)
has Species = 'Panthera leo atrox'" (3 of 5 programs): another claim, and false of that table, where the row
"Panthera leo atrox (American lion)" is in North America. A claim that says no "every", "all", "only", "none" and
the like is about the row it names: when an every/only program with a filter checks its row-name column against
a value that is exactly one row's name (or a bracketed part of it), it becomes a count of the rows that meet its
filters and have that name, and the claim holds when there is one. Finding none refutes it (the votes' blockers
let this count vote both ways: :func:`counts_named_row`).
"""

from __future__ import annotations

import re

from tools._cells import TypedTable, text_words
from tools._grounding import value_grounded
from tools._table_ops_model import MAX_FILTERS, Check, Program, RowFilter

# A word that makes a claim about several rows or about the rows it excludes.
_QUANTIFIED = re.compile(r"\b(?:every|all|each|only|alone|sole|solely|exclusively|none|no|neither|nor|always|never|"
                         r"any|both|whole|entire|unique|uniquely|single)\b", re.I)


def read_named_row_every(program: Program, typed: TypedTable, claim: str) -> Program:
    """``program`` as a count of the named row meeting its filters (module docstring), or as it is."""
    chk = program.check
    label = typed.label_col
    if program.fn not in ("every", "only") or chk is None or chk.against != "value" or chk.op not in ("=", "contains") \
            or not label or _QUANTIFIED.search(claim or "") or not 1 <= len(program.filters) < MAX_FILTERS:
        return program
    name_col = typed.columns[label - 1]
    if program.column != name_col.ident or not value_grounded(chk.value, claim):
        return program
    rows = [r for r in range(1, typed.table.n_rows + 1) if _is_name(typed.text(r, label), chk.value)]
    if len(rows) != 1:
        return program
    named = RowFilter(column=name_col.ident, op="=", value=typed.text(rows[0], label))
    return program.model_copy(update={"fn": "count", "filters": [*program.filters, named],
                                      "check": Check(op=">=", against="value", value="1")})


def _parts(cell: str) -> list[str]:
    """A row name's words outside its brackets, then each bracketed part's: "Smilodon fatalis", "sabre-tooth cat"."""
    return [text_words(part) for part in (re.sub(r"\([^)]*\)", " ", cell), *re.findall(r"\(([^)]*)\)", cell))]


def _is_name(cell: str, value: str) -> bool:
    """Whether ``value`` is the row's name, whole or one of its parts: "Smilodon fatalis" is the name of "Smilodon
    fatalis (sabre-tooth cat)"; "Stage 4 breast cancer" is not the name of "Breast cancer" (it says more)."""
    said = text_words(value)
    return bool(said) and (said == text_words(cell) or said in _parts(cell))


def _names(cell: str, claim: str) -> bool:
    """Whether the claim writes a row's name: all the words of the cell outside its brackets, or of a bracketed part
    ("Smilodon fatalis" or "sabre-tooth cat" of "Smilodon fatalis (sabre-tooth cat)")."""
    said = f" {text_words(claim)} "
    return any(words and f" {words} " in said for words in _parts(cell))


def counts_named_row(program: Program, typed: TypedTable | None, claim: str) -> bool:
    """Whether ``program`` is :func:`read_named_row_every`'s count: the claim's own row meeting the filters, checked
    against one, which a count of none refutes."""
    chk = program.check
    label = typed.label_col if typed is not None else None
    if program.fn != "count" or chk is None or (chk.op, chk.against, chk.value) != (">=", "value", "1") \
            or not label or len(program.filters) < 2 or _QUANTIFIED.search(claim or ""):
        return False
    last = program.filters[-1]
    return last.column == typed.columns[label - 1].ident and last.op == "=" and _names(last.value, claim)
