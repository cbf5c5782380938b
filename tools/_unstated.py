"""Numbers a model-written reason gives that the table (and the question or claim) does not state.

The judge's and the free-form answer's reasons are the model's prose. Code cannot vouch for their numbers, so
the reply says which ones it could not find (tools.verify_claim, tools.table_qa).
"""

from __future__ import annotations

import re

from kb.tables import Table
from tools._cells import cell_number
from tools._claim_grounding import claim_numbers

# A number in running text, not part of a cell id ("R3C6") or a word ("COVID-19").
_REASON_NUMBER = re.compile(r"(?<![\w.,−-])[−-]?\d[\d,]*(?:\.\d+)?(?!\w)")


def unstated_numbers(reason: str, table: Table, claim: str) -> list[str]:
    """Numbers a model-written reason gives that neither a cell of ``table`` nor ``claim`` states.

    The judge's reason is the model's prose: seen as a new user, "the ratio of dropouts to participants is
    64/978, which is approximately 0.0667" (it is 0.0654) under a verdict the cells did decide. Code cannot
    vouch for such a number, so the reply says which numbers it could not find. Equal as numbers counts
    ("4,512" in a cell states 4512), and so does a number the table writes with a unit ("12%").
    """
    stated = claim_numbers(claim)
    for row in table.rows:
        for cell in row:
            for m in _REASON_NUMBER.finditer(str(cell)):
                n = cell_number(m.group(0))
                if n is not None:
                    stated.add(round(n, 6))
    out = []
    # "row 5", "rows 2 and 3", "column 4" point at the table; they state no figure.
    prose = re.sub(r"\b(?:rows?|columns?|cols?)\s+\d+(?:\s*(?:,|and|-|–|to)\s*\d+)*", " ", reason or "", flags=re.I)
    for m in _REASON_NUMBER.finditer(prose):
        n = cell_number(m.group(0))
        if n is not None and round(n, 6) not in stated and abs(round(-n, 6)) not in stated \
                and m.group(0) not in out:
            out.append(m.group(0))
    return out
