"""How a cell is compared with a value a program (or a claim) states: one meaning for every program form.

Text compares case-, accent-, markup- and spacing-insensitively; numbers compare within the precision the
value was written with. The fixed operations (:mod:`tools._table_ops`) and the SQL form
(:mod:`tools._table_sql`) both compare through here, so "Québec" = "quebec" and "3.5" = 3.46 in either.
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any

import numpy as np

from tools._cells import cell_number, written_unit
from tools._dates import ISO_MONTH, parse_date
from tools.lang.lexicon import MONTHS

def norm_text(text: object) -> str:
    """Text as compared: markup, accents, case and spacing do not matter ("Québec" = "quebec")."""
    plain = re.sub(r"\[(?:BOLD|ITALIC|EMPTY|UNDERLINE|SMALL)\]", "", str(text))
    plain = "".join(ch for ch in unicodedata.normalize("NFKD", plain) if not unicodedata.combining(ch))
    return " ".join(plain.split()).casefold()


def writes_whole(said: str, value: str) -> bool:
    """Whether normalised text ``said`` writes normalised ``value`` as whole words ("leeds" in "which leeds
    hospital", not in "leedsford")."""
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", said) is not None


def written_tolerance(text: str) -> float:
    """Half a unit in the last digit the value was written with: "3.5" matches 3.46, "12" matches 12.4."""
    m = re.search(r"\d+(?:\.(\d+))?", text.replace(",", ""))
    decimals = len(m.group(1) or "") if m else 0
    body = cell_number(m.group(0)) if m else None
    whole = cell_number(text)
    scale = abs(whole / body) if whole is not None and body not in (None, 0) else 1.0
    return 0.5 * 10 ** -decimals * scale


def compare(left_text: str, left_number: float | None, op: str, right_text: str,
            right_number: float | None = None, tolerance: float | None = None) -> bool:
    """``left op right``, as numbers when both sides are numbers, else as case-folded text."""
    if op == "contains":
        return norm_text(right_text) in norm_text(left_text) or _squeezed_in(right_text, left_text)
    if right_number is None:
        right_number = cell_number(right_text)
    if left_number is not None and right_number is not None:
        tol = written_tolerance(right_text) if tolerance is None else tolerance
        diff = left_number - right_number
        # Equality within the precision the value was written with; strict order stays strict.
        return {"=": abs(diff) <= tol, "!=": abs(diff) > tol, "<": diff < 0, "<=": diff <= tol,
                ">": diff > 0, ">=": diff >= -tol}[op]
    if left_number is None and right_number is not None:
        bounded = _bounded(left_text, op, right_number)
        if bounded is not None:
            return bounded
    a, b = text_words(left_text), text_words(right_text)  # "Johnson & Johnson., 1898" = "Johnson & Johnson. , 1898"
    if op == "=":
        return a == b
    if op == "!=":
        return a != b
    return False  # ordering between texts is not something a claim over a table means


# Fewer letters and digits than this and punctuation may matter: "1-2" is not in "12 patients".
_MIN_SQUEEZED = 6


def _squeezed_in(part: str, whole: str) -> bool:
    """``part`` in ``whole`` with punctuation and spacing dropped from both: the claim's "1863-1875" is in the cell
    "FOURTH CHOLERA PANDEMIC 18631875", whose dash the extraction lost (PubHealthTab's eval split)."""
    a = re.sub(r"[\W_]+", "", norm_text(part))
    return len(a) >= _MIN_SQUEEZED and a in re.sub(r"[\W_]+", "", norm_text(whole))


_BOUND_CELL = re.compile(r"^\s*(<=|>=|<|>|≤|≥)\s*(\S+)\s*$")


def cell_bounds(cell: str, nonnegative: bool = True) -> tuple[float, float] | None:
    """The range a cell that gives a bound stands for ("<5" -> (0, 5) in a column of counts, ">100" -> (100,
    inf)), or None when the cell is no bound. Public-health tables suppress small counts that way."""
    m = _BOUND_CELL.match(str(cell))
    bound = cell_number(m.group(2)) if m else None
    if bound is None:
        return None
    if m.group(1) in ("<", "<=", "≤"):
        return (0.0 if nonnegative else -math.inf), bound
    return bound, math.inf


def _bounded(cell: str, op: str, right: float) -> bool | None:
    """``cell op right`` for a cell that gives a bound ("<0.001", "> 100"), where the bound settles it: a p-value
    of "<0.001" is below 0.05 and not above it. None when it does not ("<0.01" against 0.005)."""
    m = _BOUND_CELL.match(str(cell))
    bound = cell_number(m.group(2)) if m else None
    if bound is None:
        return None
    below = m.group(1) in ("<", "<=", "≤")
    inclusive = m.group(1) in ("<=", ">=", "≤", "≥")
    # below: the value is under the bound (or at it); above: over it. "beyond" holds when every such value
    # lies on the far side of ``right``.
    if below:
        under = bound < right or (bound == right and not inclusive)
        over = False
    else:
        over = bound > right or (bound == right and not inclusive)
        under = False
    if under:
        return {"<": True, "<=": True, ">": False, ">=": False, "=": False, "!=": True}.get(op)
    if over:
        return {"<": False, "<=": False, ">": True, ">=": True, "=": False, "!=": True}.get(op)
    return None


def text_words(text: object) -> str:
    """Text as its words: punctuation and spacing do not make two texts different. A text of symbols only is
    itself: "✓" and "✗" are different cells (found as a new user: "Approved in EU = '✓'" kept the ✗ rows too). Signs
    of order are words: "Age < 65" and "Age ≥ 65" are different rows (found as a new user: a filter on the first kept
    both)."""
    normal = norm_text(text).replace("≤", "<=").replace("≥", ">=")
    words = re.findall(r"[^\W_]+|<=|>=|<|>", normal)
    return " ".join(words) if words else " ".join(normal.split())


def clipped(value: str) -> bool:
    """A value copied from a clipped cell of the prompt (it ends in an ellipsis)."""
    return value.rstrip().endswith(("…", "...")) and len(value.rstrip("…. ")) >= 8


_LEADING_NUMBER = re.compile(r"^\s*([-−]?[\d][\d,]*(?:\.\d+)?)\s*%?\s*[^\W\d_]")


def leading_number(text: str) -> float | None:
    """The number a text cell opens with before its unit words: '464 pages' -> 464, '12 m2' -> 12."""
    m = _LEADING_NUMBER.match(str(text))
    return cell_number(m.group(1)) if m else None


# "n mcmillan (7)", "kobe bryant , pau gasol (11)": names, then the one number they share in parentheses
_NAMED_NUMBER = re.compile(r"^[^\d()]*[^\W\d_][^\d()]*\((\d+(?:\.\d+)?)\)\s*$")


def named_number(text: str) -> float | None:
    """The number a cell of names gives in closing parentheses: 'n mcmillan (7)' -> 7 (TabFact's "high
    assists" cells); None for any other cell."""
    m = _NAMED_NUMBER.match(str(text))
    return float(m.group(1)) if m else None


def words_match(cell: str, value: str) -> bool:
    """Whether ``value`` occurs in ``cell`` as whole words (case, accents and markup ignored)."""
    needle = norm_text(value)
    if len(needle) < 3:
        return False
    return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", norm_text(cell)) is not None


def format_value(x: Any) -> str:
    """A computed value as the user reads it (1012.0 -> '1012', 527.46 -> '527.46', 1/3 -> '0.3333')."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, float):
        if not math.isfinite(x):
            return str(x)
        if x.is_integer() and abs(x) < 1e15:
            return f"{int(x):,}" if abs(x) >= 10000 else str(int(x))
        short = round(x, 6)
        if abs(short - x) <= 1e-12 * max(1.0, abs(x)):
            # A value with few decimals (a cell's, a sum or difference of cells') is shown exactly: rounding
            # 527.46 to 527.5 would quote a number the table does not hold.
            text = f"{short:,.6f}" if abs(short) >= 10000 else f"{short:.6f}"
            return text.rstrip("0").rstrip(".")
        if abs(x) < 1e-3:  # a rate per person: "0.000002492", not "2.492e-06"
            return np.format_float_positional(x, precision=4, unique=False, fractional=False, trim="-")
        return f"{x:.4g}" if abs(x) < 1e6 else f"{x:,.0f}"  # a ratio or a mean: 4 significant digits
    if isinstance(x, list):
        return join_listed([str(v) for v in x])
    return str(x)


_GROUPED = re.compile(r"\d,\d{3}(?!\d)")


def with_written_unit(texts: list[str], number: float) -> str:
    """``number`` shown with the unit every one of ``texts`` (the cells it was computed from) writes: "18.36%" over
    "27.0%", "10.2%", …; "$4,000" over "$1,500" and "$2,500"; "5600 mg" over "4000 mg" and "1600 mg"; the number
    plain when the cells differ."""
    texts = [t.strip() for t in texts]
    shown = format_value(number)
    if texts and all(_GROUPED.search(t) for t in texts):
        # "1,120" summed alone is shown "1,120", not "1120" (found as a new user: the total of one row's "1,120"
        # isolates answered "1120" beside a cited cell that reads "1,120"); below 10,000 format_value groups no
        # digits, since a year is a number too
        shown = re.sub(r"^(-?)(\d{4,})", lambda m: m.group(1) + f"{int(m.group(2)):,}", shown)
    if texts and all(t.endswith("%") for t in texts):
        return shown + "%"
    for sign in ("$", "€", "£"):
        if texts and all(t.startswith(sign) for t in texts):
            return ("-" + sign + shown[1:]) if shown.startswith("-") else sign + shown
    unit = written_unit(texts)
    return f"{shown} {unit}" if unit else shown


def join_listed(values: list[str]) -> str:
    """Values as one list: by commas, or by semicolons when one holds a comma itself ("Bangkok, Thailand"), since
    "Bangkok, Thailand, Macau" does not say whether it lists two places or three."""
    return ("; " if any("," in v for v in values) else ", ").join(values)


def split_listed(answer: str) -> list[str]:
    """The values of a list :func:`join_listed` wrote: at semicolons when it holds any, else at commas."""
    parts = answer.split("; ") if "; " in answer else answer.split(", ")
    return [p.strip() for p in parts if p.strip()]


# Months as words, for cells that write dates as ISO numbers ("2024-03", "2019-05-01").
_SHORT_MONTH = re.compile(r"\b(?:jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\b\.?", re.I)
_NAMED_MONTH = re.compile(r"^\s*(?:(?P<m1>[a-z]+)\.?,?\s*(?P<y1>\d{4})?|(?P<y2>\d{4})\s+(?P<m2>[a-z]+)\.?)\s*$", re.I)


def iso_month_match(cell: str, value: str) -> bool | None:
    """Whether an ISO date cell ("2024-03", "2024-03-15") falls in the month a value names ("March", "Mar 2024",
    "2024 March"); None when the cell is no ISO date or the value names no month (then texts compare as usual).

    Found as a new user: "March revenue was about 20% higher than February revenue" over a column of "2024-03"
    months matched no row, since "March" is no word of "2024-03".
    """
    value_m = _NAMED_MONTH.match(str(value))
    if not value_m:
        return None
    cell_m = ISO_MONTH.match(str(cell))
    if cell_m:
        cell_year, cell_month = int(cell_m.group(1)), int(cell_m.group(2))
    else:
        # A date written with a short month name: "how many release dates were in april?" over "27 Apr 2014"
        # (WTQ's training split), where "April" is no word of the cell.
        parsed = parse_date(cell)
        if parsed is None or not _SHORT_MONTH.search(str(cell)):
            return None
        cell_year, cell_month = parsed[0].year, parsed[0].month
    month = MONTHS.get((value_m.group("m1") or value_m.group("m2") or "").casefold())
    if month is None:
        return None
    year = value_m.group("y1") or value_m.group("y2")
    return cell_month == month and (year is None or cell_year == int(year))
