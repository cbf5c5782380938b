"""Questions that compare two columns of each row: "Which sites missed their enrolment target?" keeps the rows where
Enrolled < Target.

Found as a new user, on a JSON export of trial sites: no program could say it (the grammar compares a column with
a value), so two programs guessed a bound ("target < 35": no row), two took a difference of all five rows, and the
one that ran named the site with the fewest enrolled (Graz; Lyon missed its target too). The question's form
settles it:

- a verb against "their/its/the" and a column the question names after it: "missed", "fell short of", "did not
  meet/reach" keep the rows below it; "exceeded", "beat", "surpassed" above; "met", "reached", "hit" at or above;
  "more/fewer … than their/its …" the comparison;
- the other side is the one other numeric column the question names ("enrolment" names Enrolled), else the one
  column on the same scale as the compared one while every other is far from it (a target of 55-80 patients is
  met by Enrolled, 45-84, not by Dropouts, 3-11).

Two columns that are arms of a trial ("Placebo (n=198)", "Active drug (n=1012)") are compared where the question
names both with "than" between ("more common on placebo than on the active drug", tools._claim_arms), by the
percentages their cells write when they write them (groups of different sizes, tools._table_shape.by_share).

"Which …" lists the rows' names; "How many …" counts them; a yes/no question asks whether any row does. A program
that reads neither column is replaced; anything less certain leaves the program as written.
"""

from __future__ import annotations

import math
import re
from statistics import median_high

from tools._cells import TypedTable
from tools._claim_arms import arms_compared
from tools._claim_changes import than_years
from tools._grounding import column_named
from tools._table_ops_model import Program, RowFilter
from tools._table_shape import by_share

_OWN = r"\s+(?P<own>their|its|his|her|the)\s+(?P<b>[^?,.;]+)"
_BELOW = re.compile(r"\b(?:missed|miss|misses|fell\s+short\s+of|falls?\s+short\s+of|failed\s+to\s+(?:meet|reach|hit)|"
                    r"(?:did|do|does)\s+not\s+(?:meet|reach|hit)|didn't\s+(?:meet|reach|hit)|stayed\s+below|"
                    r"stayed\s+under)" + _OWN, re.I)
_ABOVE = re.compile(r"\b(?:exceeded|exceed|exceeds|beat|beats|surpassed|surpass|surpasses|overshot|went\s+over)"
                    + _OWN, re.I)
_AT_LEAST = re.compile(r"\b(?:met|meet|meets|reached|reach|reaches|hit|hits|achieved|achieve|achieves)" + _OWN, re.I)
_THAN_OWN = re.compile(r"\b(?P<word>more|fewer|less|higher|lower|greater|smaller|larger)\b[^?]*?\bthan\s+"
                       r"(?:their|its|his|her)\s+(?P<b>[^?,.;]+)", re.I)
_GREATER = {"more", "higher", "greater", "larger"}
_HOW_MANY = re.compile(r"^\s*how\s+many\b", re.I)


def _asked(question: str) -> tuple[str, str, bool] | None:
    """(op, the words naming the column compared with, whether a possessive makes it the row's own: "their
    target", not "the top 10") of the question, or None."""
    for pattern, op in ((_BELOW, "<"), (_ABOVE, ">"), (_AT_LEAST, ">=")):
        m = pattern.search(question)
        if m:
            return op, m.group("b"), m.group("own").lower() != "the"
    m = _THAN_OWN.search(question)
    if m:
        return (">" if m.group("word").lower() in _GREATER else "<"), m.group("b"), True
    return None


# "How many more Hungarians than Romanians …?", "how many positions above …": a difference, not rows counted
_DIFFERENCE = re.compile(r"^\s*how\s+(?:many|much)\s+(?:more|fewer|less|higher|lower|greater|larger|bigger|"
                         r"positions|places|points|spots|ranks)\b", re.I)


SAME_SCALE = 0.5  # |ln(median ratio)|: within a factor of about 1.6 of the target's median ...
OTHER_SCALE = 1.5  # ... while every other column is beyond a factor of about 4.5


def _same_scale(columns: list, against) -> list:
    """The one column whose values are on the scale of ``against``'s while the others' are far from it (a target
    of 55-80 patients is met by the enrolled 45-84, not the dropouts 3-11), or []."""
    base = [x for x in against.numbers if x is not None and x > 0]
    if not base:
        return []
    scale = {}
    for c in columns:
        xs = [x for x in c.numbers if x is not None and x > 0]
        if c is not against and xs:
            scale[c.ident] = abs(math.log(median_high(xs) / median_high(base)))
    near = [c for c in columns if scale.get(c.ident, math.inf) <= SAME_SCALE]
    if len(near) != 1:
        return []
    others_far = all(v >= OTHER_SCALE for ident, v in scale.items() if ident != near[0].ident)
    return near if others_far else []


def read_column_against(program: Program, typed: TypedTable, question: str) -> Program:
    """``program`` as the rows whose one named column stands to another as the question asks (module docstring)."""
    label = typed.label_col
    if not label:
        return program
    name = typed.columns[label - 1].ident
    fn = "count" if program.fn == "count" or _HOW_MANY.match(question) else "value"
    years = than_years(typed, question)
    if years is not None:  # "more measles cases in 2024 than in 2023" (tools._claim_changes.than_years)
        pair, op = years
        # a condition of the question's own ("with coverage below 90%") stays; the model's others go
        keep = [f for f in program.filters if f.column not in pair and f.column != name
                and f.column in typed.idents and column_named(typed.column(f.column).name, question)]
        return Program(filters=keep + [RowFilter(column=pair[0], op=op, value="", than_column=pair[1])],
                       fn=fn, column=name, answer_column=name)
    asked = _asked(question)
    if asked is None:
        # "Which adverse event was more common on placebo than on the active drug?": two arms, one column each
        arms = arms_compared(typed, question) if not _DIFFERENCE.match(question) else None
        if arms is None:
            return program
        first, second, op = arms
        return Program(filters=[RowFilter(column=first, op=op, value="", than_column=second,
                                          by_share=by_share(typed, first, second, question))],
                       fn=fn, column=name, answer_column=name)
    op, words, own = asked
    numeric = [c for c in typed.columns if c.numeric and c.index != label and not c.holds_years]
    against = [c for c in numeric if column_named(c.name, words)]
    if len(against) > 1:  # "their enrolment target": the head noun names it, "enrolment" the other side
        head = words.split()[-1] if words.split() else ""
        against = [c for c in against if column_named(c.name, head)]
    if len(against) != 1:
        return program
    measured = [c for c in numeric if c is not against[0] and column_named(c.name, question)]
    if not measured and own:  # "Which sites exceeded their target?": the one other column on the target's scale
        # (not for "the": "who was the first coach to reach the NCAA tournament?" named no measure, and the guess
        # compared Years with NCAA Tournament; WTQ's training split)
        measured = _same_scale(numeric, against[0])
    if len(measured) != 1:
        return program
    return Program(filters=[RowFilter(column=measured[0].ident, op=op, value="", than_column=against[0].ident)],
                   fn=fn, column=name, answer_column=name)
