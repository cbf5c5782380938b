""""The high dose arm had the fewest events and the fewest dropouts": two superlatives of one row, checked apart.

Found as a new user over a JSON of a trial's arms: every program checked the first part only (the arm with the
fewest events is High dose) and the claim was Supported, though High dose had the most dropouts (47 of 22, 31,
47). A program checks one thing, so code splits the claim's form "<row> <verb> the <extreme> <measure> and/but
(also) the <extreme> <measure>" into two claims of the same row; the claim holds when both parts do
(:func:`tools.verify_claim.check_claim` checks each and combines them). Any other claim is left whole.
"""

from __future__ import annotations

import re

from tools.lang.lexicon import DOWNWARD, UPWARD

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
    """The two claims a claim of two superlatives, or of two comparisons, of one row makes (module docstring),
    else []."""
    m = _TWO_SUPERLATIVES.match(claim)
    if m is not None:
        row, verb = m.group("row").strip(), m.group("verb")
        # "… the most cases but not the most deaths": the second part negated, which its check turns round
        # (tools._claim_negation; found as a new user: the programs checked the cases alone)
        second = f"{row} {verb} {'not ' if m.group('neg') else ''}the {m.group('second').strip()}."
        return [f"{row} {verb} the {m.group('first').strip()}.", second]
    m = _TWO_COMPARISONS.match(claim)
    if m is None:
        return []
    row, verb = m.group("row").strip(), m.group("verb")
    other = m.group("other").strip()
    return [f"{row} {verb} {m.group('first').strip()} than {other}.",
            f"{row} {verb} {m.group('second').strip()} than {(m.group('other2') or other).strip()}."]
