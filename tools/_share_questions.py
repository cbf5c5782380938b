"""Ratios and shares a table question asks for, read into its program (split from tools._question_rules).

- :func:`read_ratio`: "which trial had the most dropouts relative to participants?" is the largest ratio of the two
  columns (found as a new user: it named the trial with the most dropouts);
- :func:`read_share`: "what share of Drug A patients died?" is Drug A's Deaths over its Patients (found as a new
  user: it answered 142);
- :func:`read_share_of_all`: "what share of all beds does St Mary have?" is St Mary's beds over every row's beds.

They run in the order tools._program_readers gives them, beside the other readers of a question's form.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable
from tools._grounding import column_named, named_words
from tools._values import stated_cells
from tools._table_ops_model import RATIO_FNS, Program, RowFilter
from tools.lang.lexicon import RANK_HEADER, content_words, word_in
from tools._table_shape import writes_shares

# "relative to the participants", "per game", "as a share of the votes cast": the measure over another column.
_RATIO = re.compile(r"\b(?:relative to|per|for (?:each|every)|divided by|in proportion to|as an? (?:share|proportion|"
                    r"fraction|percentage) of)\s+(?:the\s+|its\s+|their\s+)?(?:number\s+of\s+|total\s+)?"
                    r"([^\W\d_][\w\s()%-]{0,40}?)\s*(?=[?.,;]|\b(?:in|of|among|across|at|on|during|than|and|or)\b|$)",
                    re.I)


def read_ratio(program: Program, typed: TypedTable, question: str) -> Program:
    """"Which trial had the most dropouts relative to participants?" is the largest Dropouts / Participants.

    The phrase after "relative to", "per", "for each", "as a share of" must name another numeric column; the
    program's max, min, argmax or argmin then runs over the ratio. Not when the measure already is a ratio (a
    header with "per", "/" or "%", e.g. "Points per game"), nor for a phrase no column is named by ("per capita").
    """
    m = _RATIO.search(question)
    if not m or program.fn not in RATIO_FNS or program.per_column:
        return program
    named = _denominators(typed, program.column, m.group(1), already_a_ratio=r"\bper\b|/|%")
    if not named:
        return program
    return program.model_copy(update={"per_column": named[0].ident})


def _denominators(typed: TypedTable, ident: str, phrase: str, *, already_a_ratio: str) -> list:
    """The numeric columns ``phrase`` names that column ``ident`` may be divided by; none when ``ident`` is no
    column of numbers or already a ratio (its header matches ``already_a_ratio``: "Points per game")."""
    try:
        measure = typed.column(ident)
    except KeyError:
        return []
    if not measure.numeric or re.search(already_a_ratio, measure.name, re.I):
        return []
    # A year or a rank is no denominator: "the most wins per season" over a Season column of years groups by
    # season, it does not divide by 1998.
    return [col for col in typed.columns
            if col.numeric and col.ident != measure.ident and not col.holds_years
            and not RANK_HEADER.search(col.name) and column_named(col.name, phrase)]


_SHARE = re.compile(r"\b(?:what|which)\s+(?:share|proportion|fraction|percentage|percent|rate)\s+of\s+(?:the\s+)?"
                    r"((?:(?:1[89]|20)\d{2}\s+)?[^\W\d_][\w\s()%+'’-]{0,60}?)\s*"
                    r"(?=\b(?:who|that|which|were|was|had|have|did|died|are|is)\b|[?.,;]|$)",
                    re.I)


def read_share(program: Program, typed: TypedTable, question: str) -> Program:
    """"What share of Drug A patients died?" is Drug A's Deaths over its Patients, not its Deaths.

    Found as a new user: the answer was 142, Drug A's deaths. When the phrase after "what share / proportion /
    percentage of" names another numeric column (Patients) and the program reads one named row's number (a filter
    on the row names), that row's ratio of the two columns answers. Over several rows a share is a ratio of sums,
    which no program computes, so only one named row is read so.
    """
    m = _SHARE.search(question)
    if not m or program.fn not in ("value", "sum", "avg", "max", "min") or program.per_column or not typed.label_col:
        return program
    label = typed.columns[typed.label_col - 1].ident
    if not any(f.column == label and f.op == "=" for f in program.filters):
        # "What share of Elm Ridge's population is fully vaccinated?": the share's own words name the row. Found
        # as a new user: no program filtered Elm Ridge, and the answer was the average of every row's Fully
        # vaccinated (41,244.2).
        rows = stated_cells(typed, m.group(1)).get(label, set())
        if len(rows) != 1 or program.fn == "avg" and program.filters:
            return program
        program = program.model_copy(update={"filters": [*program.filters,
                                                         RowFilter(column=label, op="=", value=rows.pop())]})
    named = _denominators(typed, program.column, m.group(1), already_a_ratio=r"\bper\b|/|%|\brate\b")
    if len(named) != 1 or len(named_words(typed.column(program.column).name, m.group(1), short_numbers=True)) \
            >= len(named_words(named[0].name, m.group(1), short_numbers=True)):
        # "What percentage of 2023 revenue came from Europe?" names the measure itself (Revenue 2023), not Revenue
        # 2022: a share of its column's total (read_share_of_all). Found as a new user: 310.4 / 298.1 = 1.041.
        return program
    return program.model_copy(update={"fn": "max", "per_column": named[0].ident, "nth": 1})



def asks_share(question: str) -> bool:
    """Whether the question asks for a share: "what share / proportion / percentage of …"."""
    return bool(_SHARE.search(question))


def read_share_of_all(program: Program, typed: TypedTable, question: str) -> Program:
    """"What share of all beds does St Mary have?" is St Mary's beds as a percentage of every row's beds.

    Found as a new user: the answer was 310, St Mary's beds (4 of 5 programs). When the phrase after "what share /
    percentage of" names the column the program reads (its last word the header's), and the program reads some of
    the rows, the answer is their share of the column's total. A share of another column is :func:`read_share`'s.
    """
    m = _SHARE.search(question)
    if not m or program.fn not in ("value", "sum", "avg", "max", "min") or program.per_column or not program.filters:
        return program  # (seen as a new user: 3 of 5 programs read St Mary's beds as their average)
    try:
        col = typed.column(program.column)
    except KeyError:
        return program
    phrase = content_words(re.sub(r"^(?:all|total|the\s+total|combined)\s+(?:the\s+)?", "", m.group(1).strip(),
                                  flags=re.I))
    head = content_words(re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", col.name))
    if not col.numeric or col.holds_years or not phrase or not head or not word_in(head[-1], phrase[:3]) \
            or re.search(r"%|\bper\b|\brate\b|\bshare\b|\bpercent", col.name, re.I) \
            or writes_shares(typed, col.ident):  # "265 (22.0%)" writes the share itself (tools._table_shape)
        return program
    return program.model_copy(update={"fn": "share", "nth": 1, "check": None})
