"""Worked examples for the table-program prompt (#77): verified programs from the bank (kb.program_bank) whose text
has the same form as the one asked, shown to the model before it writes its own.

The form is the text's *skeleton*: what is left once the message's stated numbers, years, the rows and cells it names
and the columns it names (all read once, by tools.lang.reading) are replaced by their kinds. "Norway won 39 medals in
2018" and "Quebec had 678 cases in 2011" share the skeleton "[VAL] won [NUM] [COL] in [YEAR]" up to the verb.
"""

from __future__ import annotations

import json
from pathlib import Path

from kb.program_bank import BankEntry, load_bank
from tools._cells import TypedTable
from tools.lang.reading import read, read_against

# Span kinds, the stronger first where two overlap: a row named by a label that is a year is a row (its value
# is what a program filters on), a stated number inside a column's header words is the column.
_STRENGTH = {"[VAL]": 0, "[COL]": 1, "[YEAR]": 2, "[NUM]": 3}


def skeleton(text: str, typed: TypedTable | None = None) -> str:
    """``text`` with its numbers, years and (given the table) named rows, cells and columns masked, in lower case."""
    spans: list[tuple[int, int, str]] = []
    reading = read(text)
    spans += [(n.start, n.end, "[NUM]") for n in reading.numbers]
    spans += [(y.start, y.end, "[YEAR]") for y in reading.years]
    if typed is not None:
        against = read_against(text, typed)
        spans += [(m.start, m.end, "[VAL]") for m in against.rows]
        spans += [(m.start, m.end, "[VAL]") for m in against.cells]
        spans += [(s, e, "[COL]") for m in against.columns for s, e in m.spans]
    taken: list[tuple[int, int, str]] = []
    for start, end, tag in sorted(spans, key=lambda s: (_STRENGTH[s[2]], -(s[1] - s[0]), s[0])):
        if end > start and all(end <= s or start >= e for s, e, _ in taken):
            taken.append((start, end, tag))
    out, at = [], 0
    for start, end, tag in sorted(taken):
        out += [text[at:start].lower(), f" {tag} "]
        at = end
    out.append(text[at:].lower())
    masked = "".join(out)
    # a run of one tag ("[COL] [COL]" from a header's two words) is one mention
    words: list[str] = []
    for word in masked.split():
        if not (word.startswith("[") and words and words[-1] == word):
            words.append(word)
    return " ".join(words)


def column_sketch(typed: TypedTable) -> list[str]:
    """The table's columns as a program names them, with their kinds: what a worked example shows of its table."""
    return [f"{c.ident} ({'number' if c.numeric else 'date' if c.holds_dates else 'text'})" for c in typed.columns]


def worked_examples(bank_path: Path | None, k: int, typed: TypedTable, kind: str, text: str) -> list[dict]:
    """Up to ``k`` bank entries of ``kind`` most like ``text`` in form, from tables other than this one, as the
    program prompt shows them (columns, text, program); none when ``k`` is 0."""
    if k <= 0 or bank_path is None:
        return []
    bank = load_bank(bank_path, kind)
    chosen = bank.nearest(skeleton(text, typed), k, exclude_table=typed.table.fingerprint())
    return [shown(entry) for entry in chosen]


def shown(entry: BankEntry) -> dict:
    return {"columns": ", ".join(entry.columns), "text": entry.text,
            "program": json.dumps(entry.program, ensure_ascii=False)}
