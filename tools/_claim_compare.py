"""Claims that compare two named rows ("Bergen gets more rain than Cardiff"): how the small model writes them.

Found as a new user, over a six-city rainfall table, "Bergen gets more rain than Cardiff." (true: 2250 mm against
1152) came back Refuted 2 votes to 1. Of the five programs:

- two were "rows where city = 'Bergen' and city = 'Cardiff' → annual_rainfall_mm; check: result > annual_rainfall_mm
  of 'Cardiff'". The check already names Cardiff, the row compared with; its filter repeats it, and two '=' filters
  on one column select nothing, so neither ran. :func:`read_compared_row` drops the filter that names the check's
  row: the program then reads as the claim does.
- two checked "= Cardiff's" where the claim says "more … than": an equality the claim never states, which refuted
  it. :func:`comparison_blocker` keeps such checks out of the vote.

Found as a new user over a vaccines table, "Novavax's vaccine is stored at a colder temperature than Moderna's."
was decided by "rows where Manufacturer = 'Moderna' → Storage temp; check: result > Storage temp of 'Comirnaty'":
a comparison with a row the claim never names, whatever its result, is not the claim's.
:func:`unnamed_row_blocker` keeps it out of the vote.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable, cell_number, names_iso_month, norm_text
from tools._grounding import question_numbers, value_grounded
from tools._table_checks import row_names
from tools._table_ops_model import Program
from tools.lang.lexicon import CARDINALS

# "more … than", "fewer than", "higher than": a comparison the claim states. A number before the comparative ("3
# more wins than") states a difference, which an equality may check. Up to six words between: "fewer days above
# the WHO limit than" (a header of four words; seen as a new user), hyphenated or possessive ones too ("a longer
# median follow-up than").
_COMPARATIVE = re.compile(r"\b(more|less|fewer|greater|higher|lower|larger|smaller|bigger|longer|"
                          r"shorter|older|younger|earlier|later|heavier|lighter|wetter|drier|hotter|colder|warmer|"
                          r"cooler|cheaper|costlier|pricier|dearer)\b(?:\s+[\w'’-]+){0,6}?\s+than\b", re.I)
_NUMBER_BEFORE = re.compile(r"(?:\d[\d,.]*%?|" + "|".join(CARDINALS) + r"|twice|times)\s*$", re.I)


def stated_comparisons(claim: str) -> list[tuple[str, int, int]]:
    """The "<comparative> … than" the claim states without saying by how much: (the comparative in lower case,
    where it starts, where "than" ends)."""
    return [(m.group(1).lower(), m.start(), m.end()) for m in _COMPARATIVE.finditer(claim)
            if not _NUMBER_BEFORE.search(claim[:m.start()].rstrip())]


def scaled_comparisons(claim: str) -> list[tuple[str, int, int]]:
    """The "<number> <comparative> … than" the claim states ("10% higher than", "3 more wins than"), as
    :func:`stated_comparisons` gives the others."""
    return [(m.group(1).lower(), m.start(), m.end()) for m in _COMPARATIVE.finditer(claim)
            if _NUMBER_BEFORE.search(claim[:m.start()].rstrip())]


def states_comparison(claim: str) -> bool:
    """Does the claim compare with "… than", without stating by how much?"""
    return bool(stated_comparisons(claim))


def read_compared_row(program: Program, typed: TypedTable) -> Program:
    """Drop a '=' filter that names the row the check compares with, when another '=' filter on the same column
    names the claim's own row: "city = 'Bergen' and city = 'Cardiff'; check > Cardiff's" is "Bergen's > Cardiff's".
    """
    chk = program.check
    if chk is None or chk.against != "row" or not typed.label_col:
        return program
    label = typed.columns[typed.label_col - 1].ident
    equal = [f for f in program.filters if f.op == "=" and f.column == label]
    if len(equal) < 2:
        return program
    compared = [f for f in equal if norm_text(f.value) == norm_text(chk.value)
                or any(row_names(typed, r, f.value) and row_names(typed, r, chk.value)
                       for r in range(1, typed.table.n_rows + 1))]
    if not compared or len(compared) == len(equal):
        return program
    return program.model_copy(update={"filters": [f for f in program.filters if f not in compared]})


# "higher than 900 mg", "more than 50%", "over 1,000": a bound the claim states
_BOUND = re.compile(r"\b(?P<said>(?:more|less|fewer|greater|higher|lower|larger|smaller|bigger|longer|shorter|older|"
                    r"younger|heavier|lighter)\s+than|above|below|over|under|exceeds?|exceeding)\s+"
                    r"(?:about\s+|around\s+)?(?P<n>[-−]?\$?\d[\d,]*(?:\.\d+)?%?)", re.I)


def _bounds_stated(claim: str) -> dict[float, str]:
    """The numbers the claim states as bounds, with the words that state them: {900.0: 'higher than 900'}."""
    out = {}
    for m in _BOUND.finditer(claim):
        n = cell_number(m.group("n").replace("−", "-"))
        if n is not None:
            out[round(n, 6)] = f"{m.group('said')} {m.group('n')}"
    return out


def comparison_blocker(program: Program, claim: str) -> str:
    """Why a check of equality must not vote on a claim that says "more/less … than", or ``""``: equality with
    another row's value, or with the number the claim states as a bound. Found as a new user: "Can the adult dose
    of cephalexin be higher than 900 mg?" was answered no by 3 programs checking "= 900"."""
    chk = program.check
    if chk is None or chk.op not in ("=", "!="):
        return ""
    if chk.against == "row" and states_comparison(claim):
        return f"it checks whether the result {chk.op} the value of {chk.value!r}, where the claim says “… than”"
    if chk.against == "value" and (n := cell_number(chk.value)) is not None \
            and (said := _bounds_stated(claim).get(round(n, 6))):
        return f"it checks whether the result {chk.op} {chk.value}, where the claim says “{said}”"
    return ""


def unnamed_row_blocker(program: Program, typed: TypedTable, claim: str) -> str:
    """Why a check against another row must not vote when the claim writes no text cell of that row (its name, or
    another of its names: "Moderna's" for the row of Spikevax), or ``""``."""
    chk = program.check
    if chk is None or chk.against != "row" or not typed.label_col:
        return ""
    compared = [r for r in range(1, typed.table.n_rows + 1) if row_names(typed, r, chk.value)]
    if not compared:  # the run fails on its own, with a message that says so
        return ""
    said = norm_text(claim)
    numbers = question_numbers(said)
    if any(value_grounded(norm_text(typed.text(r, col.index)), said, numbers)
           or names_iso_month(claim, typed.text(r, col.index))
           for r in compared for col in typed.columns if not col.numeric and typed.text(r, col.index).strip()):
        return ""  # "… than March" names the row "2024-03" too
    return f"it compares with the row of {chk.value!r}, which the claim does not name"
