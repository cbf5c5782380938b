"""Yes/no columns a message names as a property: "How many countries are net importers?".

Found as a new user, over a table with a column "Net importer" holding Yes and No:

- "How many countries are net importers?" was counted over all 7 rows (every program);
- "Which net importer has the smallest total generation?" answered "No": the Net importer cell of the smallest
  row over all rows, neither a country nor a net importer.

The message's form settles both: a column whose cells are all yes or no, whose header the message writes as words
("net importers", "smokers" for "Smoker"), is a property of the rows asked about. :func:`add_stated_flag` keeps
the rows that have it ("are not net importers": the rows that do not), and a which-question answered from the
flag column itself is answered from the row names instead.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable, norm_text
from tools._table_ops_model import MAX_FILTERS, Program, RowFilter
from tools.lang.lexicon import content_words, word_in

YES = frozenset({"yes", "y", "true", "t", "✓", "✔"})
NO = frozenset({"no", "n", "false", "f", "✗", "✘", "-", "–"})
_NEGATIONS = frozenset({"not", "non", "no", "never", "neither", "nor", "without"})
# "are not net importers", "aren't currently net importers": a negation just before the header, or an adverb between
_ADVERBS = frozenset({"really", "currently", "yet", "also", "actually", "still", "ever", "always", "officially"})
# Fns that read the flag column itself ask about its values ("how many rows say yes?"), not a property.
_READS_THE_FLAG = ("value", "most_common", "count_distinct", "every", "only")


def flag_values(typed: TypedTable, c: int) -> tuple[str, str] | None:
    """(the yes cell, the no cell) as column ``c`` writes them, when its non-empty cells are all yes or no and
    both occur; else None."""
    yes = no = None
    for v in typed.table.column_values(c):
        key = norm_text(v).strip()
        if not key:
            continue
        if key in YES:
            yes = yes or v.strip()
        elif key in NO:
            no = no or v.strip()
        else:
            return None
    return (yes, no) if yes and no else None


def _stated_at(header: str, message: str) -> int | None:
    """The index in the message's words where the header's words start, when the message writes every word of
    the header (3 letters or more) close together, in any order ("met their primary endpoint" for "Primary
    endpoint met"); else None."""
    want = [w for w in content_words(header) if len(w) >= 3]
    have = content_words(message.replace("'s", " "))
    if not want:
        return None
    reach = len(want) + 2  # room for a word between: "met their primary endpoint"
    for i in range(len(have)):
        window = have[i:i + reach]
        if any(word_in(w, [have[i]]) for w in want) and all(word_in(w, window) for w in want):
            return i
    return None


def _negated(message: str, header: str) -> bool | None:
    """Whether the header is negated where the message writes it ("are not net importers"); None when a
    negation elsewhere leaves it unclear which property is denied."""
    message = re.sub(r"n['’]t\b", " not", message)
    start = _stated_at(header, message)
    if start is None:
        return None
    words = content_words(message.replace("'s", " "))
    before = words[max(0, start - 2):start]
    if before and (before[-1] in _NEGATIONS or (len(before) == 2 and before[0] in _NEGATIONS
                                                  and before[1] in _ADVERBS)):
        return True
    return None if any(w in _NEGATIONS for w in words) else False


def add_stated_flag(program: Program, typed: TypedTable, message: str, *, yes_no: bool = False) -> Program:
    """Keep the rows that have the yes/no property the message names (module docstring); the program as written
    when the message names no such column, the program already filters on it, or reads it as its value (unless
    the question is answered yes or no: "Is Germany a net importer?" is whether Germany's row has it)."""
    for col in typed.columns:
        # The header test first: it reads only words, the flag test every cell of the column (each sampled program
        # passes here).
        if _stated_at(col.name, message) is None:
            continue
        values = flag_values(typed, col.index)
        if values is None:
            continue
        if any(f.column == col.ident for f in program.filters) or \
                (program.column == col.ident and program.fn in _READS_THE_FLAG and not yes_no):
            return program
        negated = _negated(message, col.name)
        if negated is None or len(program.filters) >= MAX_FILTERS:
            return program
        update: dict = {"filters": [*program.filters,
                                    RowFilter(column=col.ident, op="=", value=values[1] if negated else values[0])]}
        if program.answer_column == col.ident and program.fn in ("argmax", "argmin", "max", "min") and typed.label_col \
                and typed.label_col != col.index:
            update["answer_column"] = typed.columns[typed.label_col - 1].ident  # "which net importer …": a row name
        return program.model_copy(update=update)
    return program


def names_flag(typed: TypedTable, f: RowFilter, message: str) -> bool:
    """Whether filter ``f`` keeps the rows with a yes/no property the message names ("which net importer …":
    Net importer = 'Yes'), so a reader of the question's grounding counts it as stated."""
    try:
        col = typed.column(f.column)
    except KeyError:
        return False
    if f.op != "=" or _stated_at(col.name, message) is None:
        return False
    values = flag_values(typed, col.index)
    if values is None:
        return False
    negated = _negated(message, col.name)
    return negated is not None and norm_text(f.value) == norm_text(values[1] if negated else values[0])
