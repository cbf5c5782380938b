""""The high dose arm had the fewest events and the fewest dropouts": two superlatives of one row, checked apart.

Found as a new user over a JSON of a trial's arms: every program checked the first part only (the arm with the
fewest events is High dose) and the claim was Supported, though High dose had the most dropouts (47 of 22, 31,
47). A program checks one thing, so code splits the claim's form "<row> <verb> the <extreme> <measure> and/but
(also) the <extreme> <measure>" into two claims of the same row; the claim holds when both parts do
(:func:`tools.verify_claim.check_claim` checks each and combines them). Any other claim is left whole.
"""

from __future__ import annotations

import re

from tools._words import DOWNWARD, UPWARD

_EXTREME = r"(?:most|least|" + "|".join(sorted(UPWARD | DOWNWARD)) + r")"
_TWO_SUPERLATIVES = re.compile(
    r"^\s*(?P<row>[^,;]{1,60}?)\s+(?P<verb>has|had|have|is|was|are|were|got|recorded|reported|scored)\s+the\s+"
    r"(?P<first>" + _EXTREME + r"\s+[^,;.]{1,60}?)\s*,?\s+(?:and|but)\s+(?:also\s+)?(?:(?:has|had|have|is|was|are|"
    r"were|got|recorded|reported|scored)\s+)?the\s+(?P<second>" + _EXTREME + r"\s+[^,;.]{1,60}?)\s*[.!]?\s*$", re.I)


def conjuncts(claim: str) -> list[str]:
    """The two claims a claim of two superlatives of one row makes (module docstring), else []."""
    m = _TWO_SUPERLATIVES.match(claim)
    if m is None:
        return []
    row, verb = m.group("row").strip(), m.group("verb")
    return [f"{row} {verb} the {m.group('first').strip()}.", f"{row} {verb} the {m.group('second').strip()}."]
