"""Claims that state a multiple or a relative change of another value: "twice as many", "half as many", "about 20%
higher than February", read from the words and set on the program's check; and a risk lowered or raised by a
percentage ("reduced the risk by 26%"), settled by the row's hazard, risk or odds ratio.

Each section below opens with a comment that says what it reads and the case it came from.
"""

from __future__ import annotations

import re

from kb.table_model import Table
from tools._cells import TypedTable, cell_number, format_value
from tools._grounding import row_stated
from tools._settle_rules import NEGATED, TrendCheck
from tools._table_ops_model import MIRRORED_OPS, Program
from tools._values import BOUND_OPS
from tools.lang.lexicon import ROUGH_PATTERN, ROUGH_WORDS


# ======================================================================================================================
# Claims that state a multiple of another value: "South has twice as many general beds as East".
#
# The grammar's checks compare with a value or with another row's (or column's) value; a claim that states a
# multiple ("twice", "3 times more", "half as many", "five-fold fewer") compares with that multiple of it. Code reads
# the multiple from the claim's words and sets it on the check (:func:`read_multiplier`), with the comparison the
# words before it set ("more than twice": >; "twice": = within 5%; "nearly twice": = within 15%), and keeps a check
# against the multiple itself out of the vote (:func:`multiple_blocker`: "twice as many" checked as a count = 2).
# A stated difference in percent ("about 20% higher than February") scales the other value by 1.2, within the
# precision it is written with (half a point, or 2.5 points for "about"). All were found as a new user.
# ======================================================================================================================

_MULTIPLE_WORDS = {"twice": 2.0, "double": 2.0, "thrice": 3.0, "triple": 3.0, "quadruple": 4.0, "half": 0.5,
                   "two": 2.0, "three": 3.0, "four": 4.0, "five": 5.0, "six": 6.0, "seven": 7.0, "eight": 8.0,
                   "nine": 9.0, "ten": 10.0}
# The words before a multiple or a percentage that bound it ("more than twice", "about 20% higher").
_BOUND = (r"(?:\b(?P<bound>more than|over|above|at least|less than|under|below|at most|" + ROUGH_PATTERN
          + r")\s+)?")
# "twice as many", "double the", "3 times more", "three-fold higher", "half as many", "five times fewer": a multiple
# of the other value, with the bound the words before it set ("more than twice", "at least three times").
_MULTIPLIER = re.compile(
    _BOUND +
    r"\b(?:(?P<word>twice|double|thrice|triple|quadruple|half)|(?P<n>\d+(?:\.\d+)?|two|three|four|five|six|seven|"
    r"eight|nine|ten)[- ]?(?:times|fold|x))\b"
    r"(?=\s+(?:as|the|that|of|what|its|their|(?P<down>less|lower|smaller|fewer)|more|higher|larger|greater|"
    r"bigger)\b|\s+[^\W\d_][\w.-]*['’]s\b)", re.I)  # or a possessive: "three times Spain's"
# "the first half of 2020" is a period, not a multiple
_HALF_OF_A_PERIOD = re.compile(r"\b(?:first|second|last|the|latter|former|other|back)\s+$", re.I)
EXACT_MULTIPLE_TOLERANCE = 0.05  # "twice as many": within 5% of twice the other value
ROUGH_MULTIPLE_TOLERANCE = 0.15  # "nearly/about twice": within 15%


# "about 20% higher than", "15 percent fewer than": the other value scaled by 1 ± the percentage.
_PERCENT_DIFFERENCE = re.compile(
    _BOUND +
    r"(?P<pct>\d+(?:\.\d+)?)\s*(?:%|percent\b|per cent\b)\s*"
    r"(?:(?P<up>higher|more|larger|greater|bigger|above)|(?P<down>lower|less|smaller|fewer|below))\s+than\b", re.I)
ROUGH_PERCENT_POINTS = 2.5  # "about 20% higher": 17.5% to 22.5% higher


def _percent_difference(claim: str) -> tuple[float, str, float] | None:
    """(factor, op, relative tolerance) for "about 20% higher than", or None."""
    m = _PERCENT_DIFFERENCE.search(claim)
    if not m:
        return None
    pct = float(m.group("pct"))
    factor = 1 + pct / 100 if m.group("up") else 1 - pct / 100
    if factor <= 0:
        return None
    bound = (m.group("bound") or "").lower()
    op = BOUND_OPS.get(bound, "=")
    decimals = len(m.group("pct").partition(".")[2])
    points = ROUGH_PERCENT_POINTS if bound and op == "=" else 0.5 * 10 ** -decimals  # "20%" is 19.5% to 20.5%
    if m.group("up") is None and op in (">", ">=", "<", "<="):
        # "more than 20% lower than" is below 0.8 times the other value
        op = MIRRORED_OPS[op]
    return factor, op, (points / 100) / factor if op == "=" else 0.0


def _first_multiplier(claim: str) -> re.Match | None:
    return next((m for m in _MULTIPLIER.finditer(claim)
                 if (m.group("word") or "").lower() != "half" or not _HALF_OF_A_PERIOD.search(claim[:m.start()])),
                None)


def _multiple(m: re.Match) -> float:
    """The number the claim writes ("twice" and "2 times": 2)."""
    n = m.group("word") or m.group("n")
    return _MULTIPLE_WORDS.get(n.lower()) or float(n)


def _factor(m: re.Match) -> float:
    """The factor the other value is scaled by: the multiple, or its inverse for "five times fewer"."""
    n = _multiple(m)
    return 1.0 / n if m.group("down") and not m.group("word") else n


def read_multiplier(program: Program, claim: str) -> Program:
    """"South has twice as many general beds as East" compares South's value with twice East's.

    Found as a new user: the program checked South's beds against East's (6,034 = 2,118), a check the claim never
    states, and its reason said "the claim needs it = East's General beds". A check against another row or
    column of a claim that states a multiple takes that multiple, and the comparison the claim's words set ("more
    than twice": >; "twice": = within 5%; "nearly twice": = within 15%).
    """
    chk = program.check
    if chk is None or chk.against not in ("row", "column") or chk.factor:
        return program
    scale = stated_scale(claim)
    if scale is None:
        return program
    factor, op, tolerance = scale
    return program.model_copy(update={"check": chk.model_copy(update={
        "op": op, "factor": factor, "relative_tolerance": tolerance})})


def stated_scale(claim: str) -> tuple[float, str, float] | None:
    """(factor, op, relative tolerance) of the multiple the claim states, else of its difference in percent."""
    m = _first_multiplier(claim)
    if m is None:
        return _percent_difference(claim)
    factor = _factor(m)
    if factor <= 0 or factor == 1.0:
        return None
    bound = (m.group("bound") or "").lower()
    op = BOUND_OPS.get(bound, "=")
    tolerance = ROUGH_MULTIPLE_TOLERANCE if bound and op == "=" else EXACT_MULTIPLE_TOLERANCE
    return factor, op, tolerance if op == "=" else 0.0


# A column that holds multiples already: "Relative risk", "Odds ratio", "HR (95% CI)", "Fold change". Its
# value compared with the claim's multiple is the claim's own check ("seven times as common": RR > 7).
_RATIO_HEADER = re.compile(r"\b(?:ratio|relative risk|fold(?:[- ]change)?)\b", re.I)
_RATIO_ABBREVIATION = re.compile(r"\b(?:a?RR|a?OR|a?HR|IRR|FC)\b")  # as headers write them, in capitals
_MULTIPLE_READERS = ("value", "max", "min", "avg", "sum")  # what reads the column's values (not a count of rows)


def is_ratio_column(header: str) -> bool:
    """Whether ``header`` names a column of ratios or multiples."""
    return bool(_RATIO_HEADER.search(header) or _RATIO_ABBREVIATION.search(header))


def reads_ratio_column(program: Program, header: str) -> bool:
    """Whether ``program`` computes from the values of a ratio column as the table writes them."""
    return (program.fn in _MULTIPLE_READERS and program.options.derive is None
            and is_ratio_column(header))


def read_ratio_multiple(program: Program, header: str, claim: str) -> Program:
    """"Fever was more than seven times as common with the vaccine" checked as Relative risk > 7.

    Found as a new user over an adverse-events table with a "Relative risk" column: the one program that read it
    (7.3 > 7) was kept out of the vote as a check against the claim's multiple, and the model's fallback refuted
    the claim. A check of a ratio column against the multiple the claim states takes the comparison the claim's
    words set, as :func:`read_multiplier` does for another row ("seven times": = within 5%; "nearly": 15%).
    """
    chk = program.check
    m = _first_multiplier(claim)
    if chk is None or chk.against != "value" or m is None or not reads_ratio_column(program, header):
        return program
    said = cell_number(chk.value)
    if said is None or round(said, 6) != round(_factor(m), 6):
        return program
    bound = (m.group("bound") or "").lower()
    op = BOUND_OPS.get(bound, "=")
    tolerance = (ROUGH_MULTIPLE_TOLERANCE if bound else EXACT_MULTIPLE_TOLERANCE) if op == "=" else 0.0
    return program.model_copy(update={"check": chk.model_copy(update={"op": op, "relative_tolerance": tolerance})})


def multiple_blocker(program: Program, claim: str, header: str = "") -> str:
    """Why a check against the claim's multiple itself must not vote, or ``""``.

    Seen with the real model: "South has twice as many general beds as East" written as "the number of rows where
    Region = South = 2". The "2" is a multiple of another value, not a value of the table; such a check decides
    nothing, whichever way it comes out. Unless the program reads a column of ratios (``header``, the computed
    column's), whose values are multiples themselves.
    """
    chk = program.check
    if chk is None or chk.against != "value" or reads_ratio_column(program, header):
        return ""
    m = _first_multiplier(claim)
    if m is None:
        percent = _PERCENT_DIFFERENCE.search(claim)
        said = cell_number(chk.value)
        if percent and said is not None and round(said, 6) == round(float(percent.group("pct")), 6):
            return (f"the check compares with {chk.value!r}, the claim's difference in percent "
                    f"(“{percent.group(0).strip()}”), not a table value")
        return ""
    said = cell_number(chk.value)
    if said is None or round(said, 6) not in {round(_factor(m), 6), round(_multiple(m), 6)}:
        return ""
    return f"the check compares with {chk.value!r}, the claim's multiple (“{m.group(0).strip()}”), not a table value"


# ======================================================================================================================
# Claims that a treatment lowered or raised a risk by a percentage, settled by the row's hazard, risk or odds
# ratio: "The treatment reduced the risk of events by 26% overall" over "Hazard ratio (95% CI)" = "0.74 (0.65–0.85)".
#
# Found as a new user over a trial's subgroup table: that claim was supported (rightly) by three programs that checked
# nothing it says ("Events (treatment) >= 20", an average of event counts against one row), since no program can turn
# a ratio into a percentage change. The claim's form settles it:
#
# - the claim states a change by a percentage: "reduced/lowered/cut/decreased the risk (of X) by 26%", "a 26%
#   reduction in risk", "26% lower risk", "increased the odds by 30%", "30% higher hazard", with an optional bound
#   ("by more than 20%", "by about 25%");
# - the table has one ratio column (a header naming a hazard, risk, odds or rate ratio, relative risk, or the
#   abbreviations HR, RR, OR, IRR);
# - the claim names one row ("without diabetes" names "No diabetes"; "aged 65 or older" does not name "Age < 65"), or
#   none while the rest of the claim names nothing but the treatment and the headers' words and the table has one
#   overall row ("Overall", "All patients", "Total").
#
# A ratio r is a change of (r − 1) × 100%: 0.74 is 26% lower, 1.30 is 30% higher. The claim holds when its direction
# agrees and its percentage matches within the precision both were written with (a ratio of two decimals is
# ±0.5 points; "26%" ±0.5), or within 15% of it when the claim says "about", "nearly" and the like; a bound compares.
# ======================================================================================================================

_RISK_RATIO_HEADER = re.compile(r"\b(?P<kind>hazard|risk|odds|rate)\s+ratios?\b|\brelative\s+(?P<rel>risk)\b", re.I)
_RISK_RATIO_ABBREVIATION = re.compile(r"(?<![\w])(?:a?HR|RR|a?OR|IRR)(?![\w])")  # case matters: "OR", not "or"
_KIND = {"HR": "hazard", "AHR": "hazard", "RR": "risk", "OR": "odds", "AOR": "odds", "IRR": "rate"}
_MEASURE = r"(?:risk|hazard|odds|rate|likelihood|chance|incidence)"
_PERCENT = r"(?P<pct>\d+(?:\.\d+)?)\s*(?:%|percent\b|per\s+cent\b)"
_CHANGE_BOUND = (r"(?:(?P<bound>more than|over|above|at least|less than|under|below|at most|up to|" + ROUGH_PATTERN
          + r"|some)\s+)?")
_DOWN = r"(?:reduced|reduces|reduce|reducing|lowered|lowers|lower|cut|cuts|decreased|decreases|decrease)"
_UP = r"(?:increased|increases|increase|raised|raises|raise|higher|elevated)"
# "reduced the risk of death by 26%"; "a 26% reduction in risk"; "26% lower risk"; "risk was 26% lower";
# "26% less likely"
_STATED = [
    re.compile(rf"\b(?:(?P<down>{_DOWN})|(?P<up>{_UP}))\s+(?:the\s+|its\s+|their\s+)?(?:relative\s+)?{_MEASURE}\b"
               rf"[^.;%]{{0,60}}?\bby\s+{_CHANGE_BOUND}{_PERCENT}", re.I),
    re.compile(rf"\b{_CHANGE_BOUND}{_PERCENT}\s+(?:(?P<down>reduction|decrease|lower|less|fewer|drop|decline)|"
               rf"(?P<up>increase|rise|higher|more|greater|excess))\s+(?:in\s+(?:the\s+)?)?"
               rf"(?:relative\s+)?(?:{_MEASURE}|likely)\b", re.I),
    re.compile(rf"\b{_MEASURE}\s+(?:of\s+[\w\s-]{{1,40}}?\s+)?(?:was|is|were|are)\s+{_CHANGE_BOUND}{_PERCENT}\s+"
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
        m = _RISK_RATIO_HEADER.search(name)
        if m:
            found.append((c, (m.group("kind") or m.group("rel")).lower()))
        elif (a := _RISK_RATIO_ABBREVIATION.search(name)) is not None:
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
    """The verdict on a claim that a risk fell or rose by a percentage, from the row's ratio, or None (section
    comment)."""
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
