"""A claim's wording read before it is checked: two superlatives of one row joined by "and", checked apart, and a
negated main verb, checked as its positive form with the verdict turned round.

Each section below opens with a comment that says what it reads and the case it came from.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tools._cells import norm_text
from tools.lang.lexicon import DOWNWARD, UPWARD
from tools.lang.reading import read


# ======================================================================================================================
# "The high dose arm had the fewest events and the fewest dropouts": two superlatives of one row, checked apart.
#
# Found as a new user over a JSON of a trial's arms: every program checked the first part only (the arm with the
# fewest events is High dose) and the claim was Supported, though High dose had the most dropouts (47 of 22, 31,
# 47). A program checks one thing, so code splits the claim's form "<row> <verb> the <extreme> <measure> and/but
# (also) the <extreme> <measure>" into two claims of the same row; the claim holds when both parts do
# (:func:`tools.verify_claim.check_claim` checks each and combines them). Any other claim is left whole.
# ======================================================================================================================

_EXTREME = r"(?:most|least|" + "|".join(sorted(UPWARD | DOWNWARD)) + r")"
_TWO_SUPERLATIVES = re.compile(
    r"^\s*(?P<row>[^,;]{1,60}?)\s+(?P<verb>has|had|have|is|was|are|were|got|recorded|reported|scored)\s+the\s+"
    r"(?P<first>" + _EXTREME + r"\s+[^,;.]{1,60}?)\s*,?\s+(?:and|but)\s+(?P<neg>not\s+)?(?:also\s+)?"
    r"(?:(?:has|had|have|is|was|are|were|got|recorded|reported|scored)\s+)?the\s+(?P<second>" + _EXTREME
    + r"\s+[^,;.]{1,60}?)\s*[.!]?\s*$", re.I)


# "Mpox had more cases than Ebola but fewer deaths": two comparisons of one row with another, the second's "than"
# left out (found as a new user over a CSV of outbreaks: the programs checked the cases alone).
_COMPARATIVE = r"(?:more|fewer|less|higher|lower|greater|smaller|larger|bigger)"
_TWO_COMPARISONS = re.compile(
    r"^\s*(?P<row>[^,;]{1,60}?)\s+(?P<verb>has|had|have|is|was|are|were|got|recorded|reported|scored|saw|caused)\s+"
    r"(?P<first>" + _COMPARATIVE + r"\s+[^,;.]{1,60}?)\s+than\s+(?P<other>[^,;.]{1,60}?)\s*,?\s+(?:and|but)\s+"
    r"(?:also\s+)?(?:(?:has|had|have|is|was|are|were|got|recorded|reported|scored|saw|caused)\s+)?"
    r"(?P<second>" + _COMPARATIVE + r"\s+(?!than\b)[^,;.]{1,60}?)(?:\s+than\s+(?P<other2>[^,;.]{1,60}?))?"
    r"\s*[.!]?\s*$", re.I)


def conjuncts(claim: str) -> list[str]:
    """The two claims a claim of two superlatives, or of two comparisons, of one row makes (section comment),
    else []."""
    m = _TWO_SUPERLATIVES.match(claim)
    if m is not None:
        row, verb = m.group("row").strip(), m.group("verb")
        # "… the most cases but not the most deaths": the second part negated, which its check turns round
        # (the negation below; found as a new user: the programs checked the cases alone)
        second = f"{row} {verb} {'not ' if m.group('neg') else ''}the {m.group('second').strip()}."
        return [f"{row} {verb} the {m.group('first').strip()}.", second]
    m = _TWO_COMPARISONS.match(claim)
    if m is None:
        return []
    row, verb = m.group("row").strip(), m.group("verb")
    other = m.group("other").strip()
    return [f"{row} {verb} {m.group('first').strip()} than {other}.",
            f"{row} {verb} {m.group('second').strip()} than {(m.group('other2') or other).strip()}."]


# ======================================================================================================================
# A claim whose main verb is negated, checked as its positive form with the verdict turned round: "Yemen did not
# have the most deaths" is refuted exactly when "Yemen did have the most deaths" is supported.
#
# Found as a new user over a JSON of outbreaks: "Yemen did not have the most deaths." got five programs that either
# took the smallest number of deaths (held out: the claim says "most") or checked that Yemen *had* the most, and
# the fallback judge refuted the true claim, quoting 112 deaths as "higher than" Nigeria's 596. Programs and the
# rules that read a claim's form (superlatives, changes, comparisons) are written for positive claims, and most of
# them leave a negated one as written; the negation itself is code's to apply.
#
# Only a plain negation of the main verb is read this way, so the flip cannot land on the wrong clause:
# - exactly one "<auxiliary> not" or "<auxiliary>n't" (did, does, do, is, was, are, were, has, have, had), and no
#   other negative word (no, none, never, neither, nor, without, nothing, only);
# - at most eight words before it (the subject), with no clause opener among them or after it (that, which, who,
#   because, but, while, although, if, when, and …: "the only country that do not receive a medal" negates a
#   relative clause, "… but their time on the team do not overlap" a second clause);
# - no quotation marks (a title: "I Don't Like Mondays"), and the negated words are no cell of the table.
# A verdict of NOT ENOUGH INFO stays as it is.
# ======================================================================================================================

def positive_form(claim: str, cells: Iterable[str] = ()) -> str | None:
    """The claim without the negation of its main verb (section comment; the plain negation is the message's
    reading, tools.lang.reading), or None when it has no such negation. ``cells``: the table's text cells, which a
    negated phrase must not be one of."""
    negation = read(claim).negation
    if negation is None:
        return None
    said = norm_text(negation.text)
    if any(said in norm_text(cell) for cell in cells):
        return None
    return negation.positive


def turned_round(label: str) -> str:
    """The verdict of a negated claim, from its positive form's."""
    return {"SUPPORTS": "REFUTES", "REFUTES": "SUPPORTS"}.get(label, label)
