"""Claims that a treatment lowered or raised a risk by a percentage, settled by the row's hazard, risk or odds
ratio: "The treatment reduced the risk of events by 26% overall" over "Hazard ratio (95% CI)" = "0.74 (0.65–0.85)".

Found as a new user over a trial's subgroup table: that claim was supported (rightly) by three programs that checked
nothing it says ("Events (treatment) >= 20", an average of event counts against one row), since no program can turn
a ratio into a percentage change. The claim's form settles it:

- the claim states a change by a percentage: "reduced/lowered/cut/decreased the risk (of X) by 26%", "a 26%
  reduction in risk", "26% lower risk", "increased the odds by 30%", "30% higher hazard", with an optional bound
  ("by more than 20%", "by about 25%");
- the table has one ratio column (a header naming a hazard, risk, odds or rate ratio, relative risk, or the
  abbreviations HR, RR, OR, IRR);
- the claim names one row ("without diabetes" names "No diabetes"; "aged 65 or older" does not name "Age < 65"), or
  none while the rest of the claim names nothing but the treatment and the headers' words and the table has one
  overall row ("Overall", "All patients", "Total").

A ratio r is a change of (r − 1) × 100%: 0.74 is 26% lower, 1.30 is 30% higher. The claim holds when its direction
agrees and its percentage matches within the precision both were written with (a ratio of two decimals is
±0.5 points; "26%" ±0.5), or within 15% of it when the claim says "about", "nearly" and the like; a bound compares.
"""

from __future__ import annotations

import re

from kb.table_model import Table
from tools._cells import TypedTable, cell_number, format_value
from tools._claim_multiples import ROUGH_MULTIPLE_TOLERANCE
from tools._grounding import row_stated
from tools._settle_rules import NEGATED, TrendCheck
from tools.lang.lexicon import ROUGH_PATTERN, ROUGH_WORDS

_RATIO_HEADER = re.compile(r"\b(?P<kind>hazard|risk|odds|rate)\s+ratios?\b|\brelative\s+(?P<rel>risk)\b", re.I)
_RATIO_ABBREVIATION = re.compile(r"(?<![\w])(?:a?HR|RR|a?OR|IRR)(?![\w])")  # case matters: "OR", not "or"
_KIND = {"HR": "hazard", "AHR": "hazard", "RR": "risk", "OR": "odds", "AOR": "odds", "IRR": "rate"}
_MEASURE = r"(?:risk|hazard|odds|rate|likelihood|chance|incidence)"
_PERCENT = r"(?P<pct>\d+(?:\.\d+)?)\s*(?:%|percent\b|per\s+cent\b)"
_BOUND = (r"(?:(?P<bound>more than|over|above|at least|less than|under|below|at most|up to|" + ROUGH_PATTERN
          + r"|some)\s+)?")
_DOWN = r"(?:reduced|reduces|reduce|reducing|lowered|lowers|lower|cut|cuts|decreased|decreases|decrease)"
_UP = r"(?:increased|increases|increase|raised|raises|raise|higher|elevated)"
# "reduced the risk of death by 26%"; "a 26% reduction in risk"; "26% lower risk"; "risk was 26% lower";
# "26% less likely"
_STATED = [
    re.compile(rf"\b(?:(?P<down>{_DOWN})|(?P<up>{_UP}))\s+(?:the\s+|its\s+|their\s+)?(?:relative\s+)?{_MEASURE}\b"
               rf"[^.;%]{{0,60}}?\bby\s+{_BOUND}{_PERCENT}", re.I),
    re.compile(rf"\b{_BOUND}{_PERCENT}\s+(?:(?P<down>reduction|decrease|lower|less|fewer|drop|decline)|"
               rf"(?P<up>increase|rise|higher|more|greater|excess))\s+(?:in\s+(?:the\s+)?)?"
               rf"(?:relative\s+)?(?:{_MEASURE}|likely)\b", re.I),
    re.compile(rf"\b{_MEASURE}\s+(?:of\s+[\w\s-]{{1,40}}?\s+)?(?:was|is|were|are)\s+{_BOUND}{_PERCENT}\s+"
               rf"(?:(?P<down>lower|less|smaller|reduced)|(?P<up>higher|greater|more|increased))\b", re.I),
]
_OVERALL = re.compile(r"^\s*(?:overall|all(?:\s+(?:patients|participants|subjects))?|total|whole\s+population)\s*$",
                      re.I)
_ROUGH = {*ROUGH_WORDS, "some"}
_AT_LEAST = {"more than", "over", "above", "at least"}
_AT_MOST = {"less than", "under", "below", "at most", "up to"}
_LEADING = re.compile(r"^\s*(\d+(?:\.\d*)?)")


def _ratio_column(table: Table) -> tuple[int, str] | None:
    """(the one ratio column, what it is a ratio of: "hazard", "risk", "odds", "rate"), or None."""
    found = []
    for c, name in enumerate(table.columns, 1):
        m = _RATIO_HEADER.search(name)
        if m:
            found.append((c, (m.group("kind") or m.group("rel")).lower()))
        elif (a := _RATIO_ABBREVIATION.search(name)) is not None:
            found.append((c, _KIND[a.group(0).upper()]))
    return found[0] if len(found) == 1 else None


def _stated_change(claim: str) -> tuple[bool, float, str, str, str] | None:
    """(lower?, the percentage, its digits as written, the bound word or "", the claim without the phrase) the claim
    states, or None."""
    for pattern in _STATED:
        m = pattern.search(claim)
        if m:
            rest = claim[:m.start()] + " " + claim[m.end():]
            return (m.group("down") is not None, float(m.group("pct")), m.group("pct"),
                    (m.group("bound") or "").lower(), rest)
    return None


# Words that name no subgroup: a claim saying only these (and the table's header words) is about the overall row.
_GENERIC = frozenset("""the a an of in on for with by was were is are had has have it its their overall treatment
treated therapy drug intervention patients participants subjects people events event risk hazard odds rate trial
study compared than versus vs""".split())


_UNDER = re.compile(r"<|≤|\b(?:under|below|younger|less than|fewer than|up to)\b", re.I)
_OVER = re.compile(r">|≥|\b(?:over|above|older|at least|or more|more than|and over)\b", re.I)


def _side(text: str) -> str | None:
    """Which way a subgroup is bounded ("Age < 65": "<"; "aged 65 or older": ">"), None when neither or both."""
    under, over = bool(_UNDER.search(text)), bool(_OVER.search(text))
    return None if under == over else "<" if under else ">"


def _row(typed: TypedTable, claim: str, rest: str) -> int | None:
    """The row the claim names; with none named, the table's one overall row when the rest of the claim (``rest``,
    without its change phrase) names nothing but the treatment and what the headers measure ("The treatment
    reduced the risk of events by 26%"), not when it names a subgroup the labels write otherwise ("in patients
    under 65" over "Age < 65")."""
    # "patients without diabetes" is the row "No diabetes", not "Diabetes"
    row = row_stated(typed, re.sub(r"\bwithout\b", "no", claim, flags=re.I))
    if row is not None and typed.label_col:
        # "aged 65 or older" states the words of "Age < 65" too: a row bounded one way is not named by the other
        bounded = _side(typed.text(row, typed.label_col))
        return row if bounded is None or _side(rest) in (None, bounded) else None
    if row is not None or not typed.label_col:
        return row
    headers = {w for name in typed.table.columns for w in re.findall(r"[^\W\d_]+", name.lower())}
    words = re.findall(r"[^\W_]+", rest.lower())
    if any(w.isdigit() or (w not in _GENERIC and w not in headers) for w in words):
        return None
    overall = [r for r in range(1, typed.table.n_rows + 1) if _OVERALL.match(typed.text(r, typed.label_col))]
    return overall[0] if len(overall) == 1 else None


def _decimals(digits: str) -> int:
    return len(digits.split(".")[1]) if "." in digits else 0


def ratio_change_check(claim: str, table: Table) -> TrendCheck | None:
    """The verdict on a claim that a risk fell or rose by a percentage, from the row's ratio, or None (module
    docstring)."""
    stated = _stated_change(claim)
    column = _ratio_column(table) if stated and not NEGATED.search(claim) else None
    if stated is None or column is None:
        return None
    lower, pct, digits, bound, rest = stated
    ratio_col, kind = column
    typed = TypedTable.build(table)
    row = _row(typed, claim, rest)
    if row is None:
        return None
    cell = typed.text(row, ratio_col).strip()
    m = _LEADING.match(cell)
    ratio = cell_number(m.group(1)) if m else None
    if ratio is None or ratio <= 0:
        return None
    change = (ratio - 1.0) * 100.0  # negative: lower
    size = abs(change)
    precision = 100 * 0.5 * 10 ** -_decimals(m.group(1)) + 0.5 * 10 ** -_decimals(digits)
    shown_change = f"{format_value(round(size, 1))}%"
    if ratio == 1.0:
        found = f"a ratio of {format_value(ratio)} is no change in the {kind}"
    else:
        found = (f"a ratio of {format_value(ratio)} is a {shown_change} {'lower' if change < 0 else 'higher'} "
                 f"{kind} ({'1 − ' + format_value(ratio) if change < 0 else format_value(ratio) + ' − 1'})")
    why = f"the claim says {bound + ' ' if bound else ''}{digits}% {'lower' if lower else 'higher'}"
    if (change < 0) != lower or ratio == 1.0:
        holds = False
    elif bound in _AT_LEAST:
        holds = size > pct if bound != "at least" else size >= pct - precision
    elif bound in _AT_MOST:
        holds = size < pct if bound not in ("at most", "up to") else size <= pct + precision
    elif bound in _ROUGH:
        holds = abs(size - pct) <= max(precision, ROUGH_MULTIPLE_TOLERANCE * pct)
    else:
        holds = abs(size - pct) <= precision
    name = typed.row_name(row)
    reason = (f"{name}'s {table.columns[ratio_col - 1]} is {cell}: {found}; {why}, so the table "
              f"{'supports' if holds else 'refutes'} the claim.")
    cells = [(row, typed.label_col or 1), (row, ratio_col)]
    return TrendCheck("SUPPORTS" if holds else "REFUTES", list(dict.fromkeys(cells)), reason)

