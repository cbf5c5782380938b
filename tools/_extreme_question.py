"""The program a plain superlative question's words alone give: "Which hospital has the second-highest occupancy?".

Found as a new user over a six-hospital table: that question came back as the model's own answer, "Northgate
General has the second-highest occupancy with 78.0%" (it has the second lowest), shown as verified because the one
cell it cited exists. The sampled programs had not decided it; re-asked, they wrote filters the question never
states ("City = 'Leeds'", "Occupancy > 90.0%") as often as the right reading. When no sampled program runs for a
question that names one column of numbers, one direction and nothing else of the table (no row, no value, no
number but its ordinal), the question is the extreme of that column over all rows: the row with the nth largest or
smallest value, named by its row label. It is run as a program, with the same rules and citations. A vote that
runs but splits still falls to the model's own answer: a second batch is sampled for that (more_on_split).
"""

from __future__ import annotations

import re

from tools._cells import TypedTable, norm_text, writes_whole
from tools._grounding import column_named, question_numbers
from tools._table_ops_model import Program
from tools.lang.lexicon import ORDINAL_WORDS, content_words, extreme_directions, ordinal_extreme, related

# "Which hospital …", "What drug …": the noun must name the row label's column; "who" asks for a row too
_ASKED = re.compile(r"^\s*(?:(?:which|what)\s+(?P<noun>[^\W\d_]+)|(?P<who>who)\b)", re.I)


def _asks_for_a_row(typed: TypedTable, question: str) -> bool:
    m = _ASKED.match(question or "")
    if m is None:
        return False
    label_words = content_words(typed.columns[typed.label_col - 1].name)
    return bool(m.group("who")) or any(related(m.group("noun").lower(), w) for w in label_words)


def _names_a_cell(typed: TypedTable, question: str) -> bool:
    """Whether the question writes a text cell of the table as words ("Which Leeds hospital …")."""
    said = norm_text(question)
    return any(len(cell := norm_text(typed.text(r, col.index))) >= 3 and writes_whole(said, cell)
               for col in typed.columns if not col.numeric for r in range(1, typed.table.n_rows + 1))


def extreme_by_words(typed: TypedTable, question: str) -> dict | None:
    """The raw program (as the model would write it) of "which <row> has the (nth) <most> <column>?", or None
    when the question is not that plain (module docstring)."""
    if not typed.label_col or not _asks_for_a_row(typed, question):
        return None
    ups, downs = extreme_directions(question.replace("-", " "))  # "second-highest"
    if bool(ups) == bool(downs):
        return None
    named = [col for col in typed.columns if col.numeric and col.index != typed.label_col
             and column_named(col.name, question)]
    if len(named) != 1 or _names_a_cell(typed, question):
        return None
    nth = ordinal_extreme(question)
    ordinals = {float(v) for w, v in ORDINAL_WORDS.items() if re.search(rf"\b{w}\b", question, re.I)}
    if question_numbers(question) - ordinals - question_numbers(named[0].name):  # "PM2.5" names its column
        return None
    label = typed.columns[typed.label_col - 1].ident
    return {"filters": [], "fn": "argmax" if ups else "argmin", "column": named[0].ident, "answer_column": label,
            "nth": nth}


_RANKING = ("argmax", "argmin", "max", "min")


def other_column_ranked(programs: list[Program], typed: TypedTable, question: str) -> list[str]:
    """Why each program does not answer a plain superlative question ('' for one that may): it ranks rows by
    another column than the one the question names ("the second-highest occupancy" read on Avg. stay, seen as a
    new user: right by chance, Royal Infirmary being second on both), or it ranks nothing: "Which city has the
    third-highest PM2.5 level?" was answered with every city by the one program that ran, "PM2.5 > 0 → City"
    (seen as a new user over an air-quality table)."""
    raw = extreme_by_words(typed, question)
    if raw is None:
        return [""] * len(programs)
    asked = typed.column(raw["column"]).name
    return [f"it ranks by {typed.column(p.column).name}, where the question asks for {asked}"
            if p.fn in _RANKING and p.column != raw["column"] and p.column in typed.idents
            else f"it ranks no rows by {asked}, where the question asks for the row with the most or least"
            if p.fn not in _RANKING else "" for p in programs]
