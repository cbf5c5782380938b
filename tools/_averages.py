"""Medians and averages per group: what the text asks that the grammar does not offer.

Found as a new user over a table of foods: "What is the median sugar content?" has no function of its own in the
grammar (the model writes a mean, or nothing), and "Which category has the most calories on average?" was answered
with the mean of every row, 236.7, where it asks for the category whose foods average the most. Both are read from
the text's words, as the other rules of :mod:`tools._question_rules` are.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable, text_words
from tools._grounding import column_named
from tools._table_ops import selected_rows
from tools._table_ops_model import Program
from tools.lang.lexicon import extreme_directions, is_superlative

_MEDIAN = re.compile(r"\bmedian\b", re.I)
# the reads a median replaces: a mean, or a sum or one value the model took for the middle one; an extreme too, where
# the text asks for none (found as a new user: "What is the median sugar content?" was written as the largest or the
# smallest Sugar by 10 of 10 programs, and the split vote left the model to answer one food's 1.7)
_MEAN_LIKE = ("avg", "sum", "value")
_EXTREMES = ("max", "min", "argmax", "argmin")


def read_median(program: Program, typed: TypedTable, text: str) -> Program:
    """"What is the median sugar content?" takes the middle value of the selected rows' numbers, not their mean.

    The text must say "median" and not name a column that already holds medians ("Median age (years)": there
    the cell is the median, and the model's read of it stands)."""
    if not _MEDIAN.search(text) or program.per_column or program.minus_column or program.check is not None \
            and program.check.against != "value":
        return program
    if program.fn not in _MEAN_LIKE and (program.fn not in _EXTREMES or is_superlative(text)):
        return program
    try:
        col = typed.column(program.column)
    except KeyError:
        return program
    if not col.numeric or col.holds_years or _MEDIAN.search(col.name):
        return program
    if program.fn == "value" and len(selected_rows(program, typed) or []) < 2:
        return program  # one row's value is its own median; a claim about one row reads that row
    return program.model_copy(update={"fn": "median", "nth": 1})


_AVERAGE = re.compile(r"\b(?:on average|average|mean|typically)\b", re.I)
_WHICH_NOUN = re.compile(r"^\s*(?:which|what)\s+([^\W\d_]+)", re.I)


def read_group_mean(program: Program, typed: TypedTable, question: str) -> Program:
    """"Which category has the most calories on average?" is the category whose rows' mean Calories is the largest.

    The question starts "which <noun>", the noun names a column whose values repeat among the selected rows (each
    row its own group would make the mean the row's value, which an argmax already reads), it asks for an average
    and for one extreme. The program may have read the mean of every row ("avg") or the row with the extreme
    ("argmax"); either is turned into the extreme over the groups' means.
    """
    m = _WHICH_NOUN.match(question or "")
    ups, downs = extreme_directions(question or "")
    if m is None or not _AVERAGE.search(question) or bool(ups) == bool(downs) or program.per_column \
            or program.minus_column or program.fn not in ("avg", "argmax", "argmin", "max", "min"):
        return program
    try:
        measure = typed.column(program.column)
    except KeyError:
        return program
    groups = [col for col in typed.columns
              if not col.numeric and col.ident != measure.ident and column_named(col.name, m.group(1))]
    selected = selected_rows(program, typed)
    if not measure.numeric or measure.holds_years or len(groups) != 1 or not selected:
        return program
    group = groups[0]
    values = [text_words(typed.text(r, group.index)) for r in selected]
    if len(set(values)) == len(values):
        return program
    return program.model_copy(update={"fn": "argmax" if ups else "argmin", "answer_column": group.ident,
                                      "group": "mean", "check": None, "nth": program.nth})
