"""Claims that two measures go together across the rows: "Hospitals with more beds had lower compliance", "The more
beds a hospital has, the lower its hand hygiene compliance", settled by the rank correlation of the two columns.

Found as a new user over a JSON table of four hospitals (Beds; Hand hygiene compliance): "Is it true that hospitals
with more beds had lower compliance?" came back NOT ENOUGH INFO from the judge, whose reason said the table gives no
compliance, and was cut off mid-sentence. No program can say "tends to": the grammar compares a row with a value or
another row. The claim's form settles the computation:

- "<things> with more/higher/fewer/lower <A> had/have/showed higher/lower/more/fewer <B>", or "the more/higher <A>
  …, the lower/higher <B>";
- A and B each name exactly one number column (by its header's words), two different ones;
- at least three rows hold both numbers (a totals row left out).

Spearman's rank correlation (scipy) of A and B over those rows decides: the claim holds when its sign is the one
the claim says (more with more, or more with less) and it is at least 0.5 in size; else the table refutes it. The
reason gives rho and the number of rows, and says when every pair of rows is ordered so (or which pair is not), so a
reader can weigh a tendency over few rows. A negated claim is left to the programs.
"""

from __future__ import annotations

import re
from itertools import combinations

from scipy.stats import spearmanr

from kb.table_model import Table
from tools._cells import TypedTable
from tools._claim_trend import NEGATED, TrendCheck
from tools._grounding import named_words
from tools._table_ops_model import MAX_CELLS
from tools._table_shape import total_rows

MIN_RHO = 0.5  # the size of a rank correlation that counts as the tendency the claim states
MIN_ROWS = 3
_UP = r"more|higher|larger|greater|bigger|better|longer|older"
_DOWN = r"fewer|lower|smaller|less|worse|shorter|younger"
_THING = r"[\w%'’ -]{1,40}?"
_WITH = re.compile(
    rf"\b(?:with|having|that\s+have|that\s+had|which\s+have|which\s+had)\s+(?P<a_dir>{_UP}|{_DOWN})\s+"
    rf"(?P<a>{_THING})\s+(?:also\s+)?(?:had|have|has|showed|show|shows|reported|report|tended\s+to\s+have|"
    rf"tend\s+to\s+have|were|was|are|is)\s+(?:a\s+|an\s+)?(?P<b_dir>{_UP}|{_DOWN})\s+(?P<b>{_THING})\s*(?:[.?!]|$)",
    re.I)
_THE_MORE = re.compile(
    rf"\bthe\s+(?P<a_dir>{_UP}|{_DOWN})\s+(?P<a>{_THING})\b[^,;]*,\s*the\s+(?P<b_dir>{_UP}|{_DOWN})\s+"
    rf"(?P<b>{_THING})\s*(?:[.?!]|$)", re.I)
_DOWN_WORDS = set(_DOWN.split("|"))
# words of a phrase that name no column: "its", "their", "the", a subject's possessive
_FILLER = {"its", "their", "the", "a", "an", "of", "rate", "rates", "level", "levels"}


def _stated(claim: str) -> tuple[str, str, bool] | None:
    """(A's words, B's words, whether the claim says they go the same way) or None."""
    for pattern in (_WITH, _THE_MORE):
        m = pattern.search(claim)
        if m:
            same = (m.group("a_dir").lower() in _DOWN_WORDS) == (m.group("b_dir").lower() in _DOWN_WORDS)
            return m.group("a"), m.group("b"), same
    return None


def _column(typed: TypedTable, phrase: str, skip: set[int]) -> int | None:
    """The one number column (not the label, not in ``skip``) whose header the phrase names."""
    words = " ".join(w for w in re.findall(r"[\w%]+", phrase.lower()) if w not in _FILLER)
    hits = [c.index for c in typed.columns if c.numeric and c.index != typed.label_col and c.index not in skip
            and not c.holds_years and named_words(c.name, words)]
    return hits[0] if len(hits) == 1 else None


def association_check(claim: str, table: Table) -> TrendCheck | None:
    """The verdict on a claim that two measures go together across the rows, or None (module docstring)."""
    stated = _stated(claim)
    if stated is None or NEGATED.search(claim):
        return None
    a_words, b_words, same = stated
    typed = TypedTable.build(table)
    a = _column(typed, a_words, set())
    b = _column(typed, b_words, {a}) if a is not None else None
    if a is None or b is None:
        return None
    totals = set(total_rows(typed))
    rows = [r for r in range(1, table.n_rows + 1) if r not in totals
            and typed.number(r, a) is not None and typed.number(r, b) is not None]
    if len(rows) < MIN_ROWS:
        return None
    xs, ys = [typed.number(r, a) for r in rows], [typed.number(r, b) for r in rows]
    rho = float(spearmanr(xs, ys).statistic)
    if rho != rho:  # NaN: one of the columns is constant over these rows
        return None
    holds = abs(rho) >= MIN_RHO and (rho > 0) == same
    a_name, b_name = table.columns[a - 1], table.columns[b - 1]
    against = [(p, q) for p, q in combinations(range(len(rows)), 2)
               if xs[p] != xs[q] and ((xs[p] - xs[q]) * (ys[p] - ys[q]) > 0) != same]
    if not against:
        pairs = f"every pair of rows is ordered so ({b_name} {'rises' if same else 'falls'} with {a_name})"
    else:
        p, q = against[0]

        def both(i: int) -> str:  # the two cells as the table writes them: "(420; 87%)"
            return f"{typed.row_name(rows[i])} ({typed.text(rows[i], a).strip()}; {typed.text(rows[i], b).strip()})"

        pairs = f"not every pair is ordered so: {both(p)} against {both(q)}"
    says = f"{'higher' if same else 'lower'} {b_name} with higher {a_name}"
    reason = (f"Over the {len(rows)} rows with both numbers, the rank correlation (Spearman's rho) of {a_name} and "
              f"{b_name} is {rho:+.2f}; {pairs}. The claim says {says}, which needs rho "
              f"{'at least +' if same else 'at most -'}{MIN_RHO:g}, so the table {'supports' if holds else 'refutes'} "
              "the claim.")
    # the cells cited: each row's name, A and B, for the rows of lowest and highest A when there are more
    by_a = sorted(rows, key=lambda r: typed.number(r, a))
    per_row = (typed.label_col, a, b) if typed.label_col else (a, b)
    most = MAX_CELLS // len(per_row)
    shown = by_a if len(by_a) <= most else by_a[:most // 2] + by_a[-(most // 2):]
    cells = [(r, c) for r in shown for c in per_row]
    return TrendCheck("SUPPORTS" if holds else "REFUTES", cells, reason)
