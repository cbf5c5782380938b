"""A filter value the text only partly writes, when the part it writes names several cells: "the outbreaks linked
to onions" over the sources "Red onions" and "Onions".

Found as a new user: "Were any deaths reported in the outbreaks linked to onions?" was written "Source = 'Red
onions'", since the grammar makes an '=' filter take one of the column's cells, and the model picked one. The text
writes "onions" and not "red", and "onions" is a whole word of more than one cell of that column, so the text
names all of them: the filter becomes "contains" the written words. When the written words name one cell only,
the filter is left as the model wrote it (then that cell is the only one meant). The same holds for a value the
question writes whole: the model's next try was "Source = 'Onions'", which leaves out "Red onions".

The other way round (:func:`narrow_to_written_value`): a "contains" filter whose part names several cells, when
the text writes one of them whole. Found as a new user: "Which lower-middle-income country …" was written "Income
group contains 'middle'", which kept the "Upper middle" row in (and could answer with it).

Questions only. Replayed on claims too, it cost TabFact test 352 -> 348, dev 83 -> 80 and SciTab 81 -> 80 (the
lost statements were not examined one by one). On questions it gained WTQ test 119 -> 122 (0 lost) and dev
84 -> 86 of 160 (WTQ's training split, the tuning split).
"""

from __future__ import annotations

import re
from typing import Callable

from tools._cells import TypedTable, norm_text, words_match
from tools._table_ops_model import Program, RowFilter
from tools.lang.lexicon import WORD, content_words


def _written_part(value: str, text: str) -> str:
    """The longest run of the value's words that ``text`` writes as whole words ("onions" of "Red onions"), or ""."""
    words = WORD.findall(norm_text(value))
    best = ""
    for i in range(len(words)):
        for j in range(len(words), i, -1):
            run = " ".join(words[i:j])
            if len(run) > len(best) and content_words(run) and words_match(text, run):
                best = run
                break
    return best


def _holds(cell: str, part: str) -> bool:
    """Whether ``cell`` holds ``part`` as whole words, not inside a hyphenated compound: "Indian-American" is
    another nationality than "Indian" (WTQ's training split: "how many … were indian?" counted both)."""
    return len(part) >= 3 and re.search(rf"(?<![\w-]){re.escape(part)}(?![\w-])", cell) is not None


def rewrite_text_filters(program: Program, typed: TypedTable, op: str,
                          rewrite: Callable[[RowFilter, list[str]], RowFilter | None]) -> Program:
    """``program`` with each ``op`` filter on a column of text replaced by ``rewrite(filter, the column's cells)``,
    or kept as written where that is None."""
    filters, changed = [], False
    for f in program.filters:
        try:
            col = typed.column(f.column)
        except KeyError:
            col = None
        new = rewrite(f, typed.table.column_values(col.index)) if col is not None and not col.numeric \
            and f.op == op else None
        filters.append(new or f)
        changed = changed or new is not None
    return program.model_copy(update={"filters": filters}) if changed else program


def widen_partial_value(program: Program, typed: TypedTable, text: str) -> Program:
    """``program`` with each such filter read as "contains" its written words (module docstring)."""
    def widen(f: RowFilter, values: list[str]) -> RowFilter | None:
        part = norm_text(f.value) if words_match(text, f.value) else _written_part(f.value, text)
        named = [v for v in {norm_text(v) for v in values} if part and _holds(v, part)]
        return RowFilter(column=f.column, op="contains", value=part) if len(named) >= 2 else None

    return rewrite_text_filters(program, typed, "=", widen)


def _writes_words(text: str, cell: str) -> bool:
    """Whether ``text`` writes all of ``cell``'s words in a row, hyphens as spaces ("lower-middle-income" writes
    "Lower middle")."""
    have, want = WORD.findall(norm_text(text)), WORD.findall(norm_text(cell))
    return bool(want) and any(have[i:i + len(want)] == want for i in range(len(have) - len(want) + 1))


def narrow_to_written_value(program: Program, typed: TypedTable, text: str) -> Program:
    """``program`` with a "contains" filter that holds several cells read as "=" the one of them the text writes
    whole, with more words than the filter's (module docstring)."""
    def narrow(f: RowFilter, values: list[str]) -> RowFilter | None:
        part = norm_text(f.value)
        cells = {norm_text(v): v for v in values}
        holding = [v for v in cells if len(part) >= 3 and part in v]
        written = [v for v in holding if v != part and _writes_words(text, v)]
        if len(holding) >= 2 and len(written) == 1:
            return RowFilter(column=f.column, op="=", value=cells[written[0]].strip())
        return None

    return rewrite_text_filters(program, typed, "contains", narrow)
