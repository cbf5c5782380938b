""""What percentage of wards passed the audit?": the share of the table's rows that meet the question's condition.

Found as a new user with a spreadsheet of wards (Beds, antibiotic use per quarter, Audit passed Yes/No): 6 of 10
programs filtered the wards that passed and averaged their Q1 antibiotic use (74.4); 4 of 6 wards passed, 66.7%.
No program could say it: a share (``fn="share"``) was of a column's total, and a count is not a percentage. The
question's form settles it: "what share / proportion / percentage of <the rows' noun> …", where the noun is the
header of the column that names the rows ("wards" for Ward) or a word for rows, asks the selected rows over all
of them. The condition stays the model's filters; without one, or with a filter naming a single row, the program
is left as written.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable
from tools._table_ops_model import Program
from tools.lang.lexicon import content_words, word_in

_SHARE_OF = re.compile(r"^\s*(?:what|which)\s+(?:share|proportion|fraction|percentage|percent)\s+of\s+"
                       r"(?:the\s+|all\s+(?:the\s+)?)?(?P<noun>[^\W\d_][\w-]*)\b", re.I)
_ROW_NOUNS = {"rows", "records", "entries", "items", "lines"}


def read_share_of_rows(program: Program, typed: TypedTable, question: str) -> Program:
    """The share of the rows the program's filters keep, when the question asks it (module docstring)."""
    m = _SHARE_OF.search(question)
    label = typed.label_col
    if m is None or not label or not program.filters:
        return program
    ident = typed.columns[label - 1].ident
    noun = m.group("noun").lower()
    header = content_words(typed.columns[label - 1].name)
    if noun not in _ROW_NOUNS and not (header and word_in(header[-1], [noun]) or word_in(noun, header[-1:])):
        return program  # "What percentage of beds …" is a share of the Beds total (read_share_of_all)
    if any(f.column == ident and f.op == "=" for f in program.filters):
        return program  # one named row is no share of the rows
    return Program(filters=program.filters, fn="share", column=ident, answer_column=ident)
