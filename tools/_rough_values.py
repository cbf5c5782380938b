"""A claim's number written as rough ("roughly 30,000 deaths", "about 5% of all deaths") is checked within 5%.

Found as a new user, over a table of causes of death: "Stroke caused roughly 30,000 deaths in 2022." was refuted
by 3 of 4 programs, "Deaths (2022) = 30000" against the cell 29,800, because an equality holds only within the
precision the value is written with (half a unit of its last digit: "30000" is exact to 0.5). "roughly" says the
writer rounded. So an equality (or inequality) check against a number the claim writes right after "about",
"around", "roughly", "approximately", "nearly", "almost", "close to" or "some" holds within 5% of it, the share
"about 250 pages" already gets (tools._record_claims), or within its written precision when that is wider ("about
5%" still holds of 4.6, as "5" does). Checks that code already gives a tolerance (shares, multiples) keep theirs.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable, cell_number, written_tolerance
from tools._table_ops_model import Program
from tools.lang.lexicon import ROUGH_PATTERN

ROUGH_SHARE = 0.05  # "roughly 30,000" holds of 28,500 to 31,500; "about 250 pages" too (tools._record_claims)
# Not a bare "m" after the number: metres as often as millions.
_ROUGH_NUMBER = re.compile(r"\b(?:" + ROUGH_PATTERN + r"|approx\.?|some|circa|ca\.|an\s+estimated|estimated)\s+"
                           r"(?P<number>[−-]?\d[\d,]*(?:\.\d+)?)\s*(?P<scale>"
                           r"thousand|million|billion|k\b|bn\b)?", re.I)


def rough_numbers(claim: str) -> set[float]:
    """The numbers ``claim`` writes as rough, as numbers (each also at its written scale: "30 thousand" gives 30
    and 30000)."""
    out = set()
    for m in _ROUGH_NUMBER.finditer(claim):
        n = cell_number(m.group("number"))
        if n is None:
            continue
        out.add(round(n, 6))
        if m.group("scale"):  # read by the cells' own magnitude words: "30 thousand" is 30000
            out.add(round(cell_number(f"{m.group('number')} {m.group('scale')}"), 6))
    return out


def read_rough_value(program: Program, typed: TypedTable, claim: str) -> Program:
    """``program`` with its equality check against a number the claim writes as rough held within
    :data:`ROUGH_SHARE` of it (module docstring); other programs as written."""
    chk = program.check
    if chk is None or chk.against != "value" or chk.op not in ("=", "!=") or chk.relative_tolerance \
            or chk.factor is not None:
        return program
    value = cell_number(chk.value)
    if value is None or value == 0:
        return program
    rough = rough_numbers(claim)
    # the check may write the claim's percentage as a fraction ("about 5%" as 0.05)
    if not any(abs(value - x) <= 1e-9 * max(1.0, abs(x)) or abs(value * 100 - x) <= 1e-9 * max(1.0, abs(x))
               for x in rough):
        return program
    relative = max(ROUGH_SHARE, written_tolerance(chk.value) / abs(value))
    return program.model_copy(update={"check": chk.model_copy(update={"relative_tolerance": relative})})
