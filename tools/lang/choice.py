"""A table question that names its own answers: "Did Sweden or Spain win first?", "more or less than China?".

The form of the question settles the answer set, so code reads it (the brief's rule: grammars and rules where
the form decides). Two forms:

- **two of the table's things** joined by "or", each found in the table's cells ("Sweden" in "Sweden (SWE)").
  The options are the cells as the table writes them, and where each names one row, those rows are the scope
  the programs range over: "which is deeper, Lake Tuz or Lake Palas Tuzla?" is an argmax over two rows, not the
  table. On WikiTableQuestions' training split, answers outside the two named things were most of the misses
  on such questions ("Did Sweden or Spain win first?" was answered with a venue).
- **a pair of opposite words** ("more or less", "older or younger", "above or below"): the options are the
  two words.

Anything else ("how many received a gold or silver medal?", "1,000 or more") names no choice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kb.tables import Table
from tools._cells import text_words

# Opposite words a question offers as its two answers (either order). Checking "more or less than China?" as the
# claim "… more … than China" was tried on WTQ's training split: 1 of 5 right, as with the model's choice.
_OPPOSITES = [frozenset(p) for p in (
    ("more", "less"), ("more", "fewer"), ("older", "younger"), ("above", "below"), ("before", "after"),
    ("higher", "lower"), ("increase", "decrease"), ("increased", "decreased"), ("earlier", "later"),
    ("home", "away"), ("better", "worse"), ("larger", "smaller"), ("bigger", "smaller"), ("longer", "shorter"),
    ("inside", "outside"), ("faster", "slower"), ("taller", "shorter"), ("heavier", "lighter"),
    ("up", "down"), ("won", "lost"), ("win", "lose"), ("male", "female"), ("men", "women"), ("older", "newer"),
    ("first", "last"))]

# A count or an amount is asked for: its answer is a number, never one of the things joined by "or".
_ASKS_AMOUNT = re.compile(r"^\s*(how (many|much|long|often)|what (is|was|were|are) the (total|number|amount|sum|"
                          r"average|difference|count)\b|(the )?(total|number|count)\b)", re.I)
# Where a choice's left side starts: after a comma, a dash or a colon ("which is deeper, A or B").
_LEFT_STOP = re.compile(r"[,:;]|\s-+\s|--|—|–")
# "Which ruler is not king or marquis?", "besides Cosworth or BRM": right before the two things, these words
# exclude them rather than offer them ("Which was not released in 2004, A or B?" still offers A and B).
_EXCLUDING = frozenset({"not", "neither", "nor", "no", "never", "nothing", "besides", "except", "than", "any",
                        "without"})
_ARTICLES = ("the", "a", "an")
MAX_WORDS = 6


@dataclass(frozen=True)
class TableChoice:
    """The answers a question offers, as the table writes them, and the rows they name (empty: every row)."""

    options: tuple[str, ...]
    # The row each option names, in order, when each names exactly one (else empty): the programs range over
    # them, and a program that picks one of them by a number ("1,928,962") picks that option.
    option_rows: tuple[int, ...] = ()
    # The column (1-based) where every option's cell is, when they share one: "Harbour View" and "Northgate"
    # are both Clinic cells.
    column: int | None = None

    @property
    def rows(self) -> tuple[int, ...]:
        return tuple(sorted(self.option_rows))


def table_choice(question: str, table: Table) -> TableChoice | None:
    """The two answers ``question`` offers by its form, or None when it offers none (module docstring)."""
    text = question.strip().rstrip("?.! ").strip()
    joints = list(re.finditer(r"\s+or\s+", text, re.I))
    if len(joints) != 1 or _ASKS_AMOUNT.match(text):
        return None
    joint = joints[0]
    left_text = _LEFT_STOP.split(text[:joint.start()])[-1]
    left, right = left_text.split(), text[joint.end():].split()
    if not left or not right:
        return None
    a, b = left[-1].strip("\"'"), right[0].strip("\"'")
    if frozenset((a.casefold(), b.casefold())) in _OPPOSITES:
        return TableChoice(options=(a, b))
    cells = _cell_words(table)
    found_left = _longest_match([left[i:] for i in range(max(0, len(left) - MAX_WORDS), len(left))], cells)
    found_right = _longest_match([right[:j] for j in range(min(len(right), MAX_WORDS), 0, -1)], cells)
    if found_left is None or found_right is None:
        return None
    (phrase_a, cells_a), (phrase_b, cells_b) = found_left, found_right
    before = [w.casefold() for w in left[:len(left) - len(phrase_a.split())]]
    # "not last elected in either 2005 or 2009": "either" carries an earlier negation to the pair.
    negated_either = before[-1:] == ["either"] and bool(_EXCLUDING.intersection(before))
    if cells_a == cells_b or _EXCLUDING.intersection(before[-2:]) or negated_either:
        return None
    options = (_option(phrase_a, cells_a, table), _option(phrase_b, cells_b, table))
    shared = sorted({c for _, c in cells_a} & {c for _, c in cells_b})
    return TableChoice(options=options, option_rows=_named_rows([cells_a, cells_b]),
                       column=shared[0] if shared else None)


def option_rows(options: list[str], table: Table) -> tuple[int, ...]:
    """The row each of ``options`` names, in order, when each names one row of the table ("Lake Tuz", "Lake Palas
    Tuzla"); empty when any names none or several, or two name the same."""
    cells = _cell_words(table)
    found = [_longest_match([option.split()], cells) for option in options]
    if len(options) < 2 or any(f is None for f in found):
        return ()
    return _named_rows([cells for _, cells in found])


def _named_rows(cell_sets: list[frozenset[tuple[int, int]]]) -> tuple[int, ...]:
    rows = [{r for r, _ in cells} for cells in cell_sets]
    if all(len(r) == 1 for r in rows) and len(set().union(*rows)) == len(rows):
        return tuple(next(iter(r)) for r in rows)
    return ()


def _cell_words(table: Table) -> list[tuple[int, int, str]]:
    """Every cell as (row, column, its words), read once per question (an upload may have many rows)."""
    return [(r, c, f" {text_words(cell)} ") for r, row in enumerate(table.rows, start=1)
            for c, cell in enumerate(row, start=1)]


def _longest_match(phrases: list[list[str]], cells: list[tuple[int, int, str]]
                   ) -> tuple[str, frozenset[tuple[int, int]]] | None:
    """The first (longest) of ``phrases`` whose words occur, in order and as whole words ("spain" in "spain esp",
    not "pain"), in some cell; with those cells."""
    for words in phrases:
        while words and words[0].casefold() in _ARTICLES:
            words = words[1:]
        phrase = " ".join(words).strip("\"'")
        key = text_words(phrase)
        if not key or key in _ARTICLES or len(key) < 2:
            continue
        held = frozenset((r, c) for r, c, words in cells if f" {key} " in words)
        if held:
            return phrase, held
    return None


def _option(phrase: str, cells: frozenset[tuple[int, int]], table: Table) -> str:
    """The option as the table writes it when the phrase names one cell's text; else as the question writes it."""
    texts = {table.cell(r, c) for r, c in cells}
    return texts.pop() if len(texts) == 1 else phrase
