"""Claims that count the different values of a column: "there be a total of 4 country represent by the player".

TabFact's statements outside the test subset (the tuning split) showed it: every program counted the 12 rows
(players) and refuted the claim, while the players come from 4 countries. When the claim writes its number right
before a word that names a text column ("4 country", "3 different nationality", "two venue"), what is counted is
that column's different values among the rows the program selects. Over a column whose values differ in every
selected row this is the count of rows, so only repeated values change the result.
"""

from __future__ import annotations

import re

from tools._cells import TypedColumn, TypedTable, cell_number
from tools._table_ops_model import Program
from tools.lang.lexicon import CARDINALS

# "4 country", "3 different nationality", "two distinct venues": a number, then what it counts
_COUNTED = re.compile(r"(?<![\w.,])(?P<n>\d+|" + "|".join(CARDINALS) + r")\s+(?:different\s+|distinct\s+|"
                      r"unique\s+|separate\s+)?(?P<noun>[^\W\d_][\w-]*)", re.I)


def counted_nouns(claim: str) -> list[tuple[float, str]]:
    """(number, the word after it) for each number the claim writes before a word."""
    out = []
    for m in _COUNTED.finditer(claim):
        n = m.group("n").lower()
        out.append((CARDINALS[n] if n in CARDINALS else float(n), m.group("noun").casefold()))
    return out


def read_counted_column(program: Program, typed: TypedTable, claim: str) -> Program:
    """A count checked against a number the claim writes before a text column's name counts that column's
    different values (module docstring); any other program as written."""
    want = _checked_count(program)
    if want is None:
        return program
    for n, noun in counted_nouns(claim):
        if n != want:
            continue
        named = [col for col in typed.columns if not col.numeric and names_column(col.name, noun)]
        if len(named) == 1:
            return program.model_copy(update={"fn": "count_distinct", "column": named[0].ident})
    return program


def _checked_count(program: Program) -> float | None:
    """The number a count of rows is checked against, or None when the program is no such count."""
    chk = program.check
    if program.fn != "count" or chk is None or chk.against != "value":
        return None
    return cell_number(chk.value)


def _forms(word: str) -> set[str]:
    """The word and what it may be the plural of ("games": game; "countries": country; "matches": match)."""
    out = {word}
    if word.endswith("s") and len(word) > 3:
        out.add(word[:-1])
    if word.endswith("es") and len(word) > 4:
        out.add(word[:-2])
    if word.endswith("ies") and len(word) > 4:
        out.add(word[:-3] + "y")
    return out


def names_column(header: str, noun: str) -> bool:
    """Whether ``noun`` is the header's head word, singular or plural ("country" or "countries" for "Country",
    "nationality" for "Nationality"): its last word."""
    words = re.findall(r"[^\W\d_]+", header.casefold())
    return bool(words) and len(words[-1]) >= 3 and bool(_forms(noun) & _forms(words[-1]))


# A number as a claim writes it, with thousands separators: "1,000 participants", "2.5 goals".
_QUANTITY = re.compile(r"(?<![\w.,])(?P<n>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s+(?P<noun>[^\W\d_][\w-]*)")


def quantity_count_blocker(program: Program, typed: TypedTable, claim: str) -> str:
    """Why a count of rows does not vote when its number is a quantity of a numeric column, or "".

    Found as a new user: "Every study published after 2020 enrolled fewer than 1,000 participants" was read by
    one program as "the number of rows < 1000" (4 rows: SUPPORTS). The claim writes 1,000 before "participants",
    the head word of the numeric column Participants, so it states participants, not rows. Columns of labels
    are left out, since their noun is what a row is: years ("in 3 seasons") and columns that number the rows
    ("lose 6 game" over Game 1 to 82, "1 grid have 105 lap" over grid places; TabFact's statements).
    """
    want = _checked_count(program)
    if want is None:
        return ""
    for m in _QUANTITY.finditer(claim):
        if cell_number(m.group("n")) != want:
            continue
        noun = m.group("noun").casefold()
        named = [col for col in typed.columns if col.numeric and not col.holds_years and not _numbers_rows(col)
                 and names_column(col.name, noun)]
        if named:
            return (f"it counts rows, but the claim's {m.group(0)!r} is an amount of {named[0].name}, "
                    "not a number of rows")
    return ""


def _numbers_rows(col: TypedColumn) -> bool:
    """Whether the column numbers its rows: distinct whole numbers that run without a gap (1, 2, 3, …)."""
    xs = [x for x in col.numbers if x is not None]
    if not xs or not all(float(x).is_integer() for x in xs) or len(set(xs)) != len(xs):
        return False
    return max(xs) - min(xs) + 1 == len(xs)
