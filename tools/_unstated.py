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
# A comma only between digits: "in 2011, more than" is 2011 (read as "2011," it parsed as no number and was
# never checked).
_REASON_NUMBER = re.compile(r"(?<![\w.,−-])[−-]?\d(?:\d|,(?=\d))*(?:\.\d+)?(?!\w)")


def unstated_numbers(reason: str, table: Table, claim: str,
                     cited: list[tuple[int, int]] | None = None) -> list[str]:
    """Numbers a model-written reason gives that neither the cells it cites (every cell of ``table`` when
    ``cited`` is None), the table's title and headers, nor ``claim`` state.

    The judge's reason is the model's prose: seen as a new user, "the ratio of dropouts to participants is
    64/978, which is approximately 0.0667" (it is 0.0654) under a verdict the cells did decide. Code cannot
    vouch for such a number, so the reply says which numbers it could not find. Equal as numbers counts
    ("4,512" in a cell states 4512), and so does a number the table writes with a unit ("12%"). Also seen as a
    new user: "the Philippines' coverage was 72%, higher than the 60% coverage in 2021", citing the 72 only (its
    2021 cell holds 57; 60 is another country's), and 2021, a header, flagged as a number the table lacks.
    """
    stated = claim_numbers(claim)
    texts = [table.title, *table.columns]
    if cited is None:
        texts += [cell for row in table.rows for cell in row]
    else:
        texts += [table.cell(r, c) for r, c in cited if 1 <= r <= table.n_rows and 1 <= c <= table.n_cols]
    for text in texts:
        for m in _REASON_NUMBER.finditer(str(text)):
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
