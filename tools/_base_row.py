"""A row named by its base name, when the model picked a variant of it: "our model" over the rows "Ours" and
"Ours (w/o distill.)".

Found as a new user, on a results table pasted from a paper: "Is it true that our model outperforms DistilBERT on
every task …?" was written "Model = 'Ours (w/o distill.)'" by 3 of 5 programs, the ablation row, though the claim
never mentions leaving anything out. When a row filter's value is another cell of its column plus a qualifier
("Ours" + " (w/o distill.)"), and the text writes none of the qualifier's words, the text names
the base row: the filter becomes '=' that cell. Only a qualifier that leaves something out ("w/o", "without",
"- attention", "(-RC)") is read so: "BERT-large" or "Dual2seq-Dep" is a system of its own. A qualifier the text
writes ("the model without distillation") keeps the variant. The same holds for the row a check compares with.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable, norm_text
from tools._table_ops_model import Program, RowFilter
from tools._values import rewrite_text_filters
from tools.lang.lexicon import WORD

# A qualifier that leaves something out marks an ablation of the base row ("(w/o distill.)", "- attention",
# "without CRF"). Other variants are systems of their own: on SciTab's test replay, "Dual2seq-Dep" read as
# "Dual2seq" (the claim spoke of "the other systems") turned a right verdict wrong.
_ABLATION = re.compile(r"\bw/o\b|\bwithout\b|\bno\s|\bminus\b|\bablat|(?:\s|\()[-−–]\s*\w", re.I)
_SHORTEST_CHECKED = 2  # a one-letter part of a qualifier ("w/o" -> "w", "o") is read as punctuation


def _qualifier_written(extra: str, words: set[str]) -> bool:
    """Whether the text (``words``) writes a word of the qualifier ``extra``: the word itself, a longer form of it
    ("distill." -> "distillation"), or a shorter one of four letters or more. Not a word that only shares a
    stem: "distilbert" does not write "distill"."""
    for part in WORD.findall(extra):
        if len(part) < _SHORTEST_CHECKED:
            continue
        if part in words or any(w.startswith(part) or (len(w) >= 4 and part.startswith(w)) for w in words):
            return True
    return False


def base_cell(value: str, cells: list[str], text: str) -> str | None:
    """The cell of ``cells`` that ``value`` extends with a qualifier the text does not write, or None.

    The longest such cell wins ("Ours" over "O" for "Ours (w/o distill.)"); the value must go on past it at a
    word boundary ("BERT" for "BERT-large", not "Distil" for "DistilBERT").
    """
    want = norm_text(value)
    words = set(WORD.findall(norm_text(text)))
    best: str | None = None
    for cell in dict.fromkeys(c.strip() for c in cells):
        base = norm_text(cell)
        if not base or len(base) >= len(want) or not want.startswith(base) or want[len(base)].isalnum() \
                or not base[-1].isalnum():
            continue
        extra = want[len(base):]
        if not _ABLATION.search(extra) or _qualifier_written(extra, words):
            continue
        if best is None or len(base) > len(norm_text(best)):
            best = cell
    return best


def read_base_row(program: Program, typed: TypedTable, text: str) -> Program:
    """``program`` with each '=' filter on a text column, and a check against a named row, read as the base row
    when the text does not write the variant's qualifier (module docstring)."""
    def to_base(f: RowFilter, values: list[str]) -> RowFilter | None:
        base = base_cell(f.value, values, text)
        return RowFilter(column=f.column, op="=", value=base) if base else None

    program = rewrite_text_filters(program, typed, "=", to_base)
    label = typed.label_col
    check = program.check
    if check is not None and check.against == "row" and label:
        base = base_cell(check.value, typed.table.column_values(label), text)
        if base:
            return program.model_copy(update={"check": check.model_copy(update={"value": base})})
    return program
