"""Calendar dates in cells: "2019-03-14", "March 14, 2019", "14 Mar 2019", "march 14 , 2019", "June 2021".

A column of dates was text to the table programs, so it had no order: "Which study was published most recently?"
could not be an argmax over Published, and the model took the largest Follow-up instead (found as a new user).
Dated cells are read into day numbers here, so programs can take the latest or earliest row and filter on
"published after 2020". Only unambiguous forms are read: a four-digit year with a month name or in ISO order.
"03/04/2019" is left as text, since it is the 3rd of April in one country and the 4th of March in another.
"""

from __future__ import annotations

import datetime as dt
import re

from tools.lang.lexicon import MONTH_NAMES, MONTHS

_ORD = r"(?:st|nd|rd|th)?"
_ISO = re.compile(r"^(?P<y>\d{4})[-/.](?P<m>\d{1,2})(?:[-/.](?P<d>\d{1,2}))?$")
_MONTH_FIRST = re.compile(rf"^(?P<mon>[a-z]{{3,9}})\.?\s+(?:(?P<d>\d{{1,2}}){_ORD}\s*,?\s+)?(?P<y>\d{{4}})$")
_DAY_FIRST = re.compile(rf"^(?P<d>\d{{1,2}}){_ORD}\s+(?:of\s+)?(?P<mon>[a-z]{{3,9}})\.?,?\s+(?P<y>\d{{4}})$")
_YEAR = re.compile(r"^(?P<y>\d{4})$")
# A quarter as a message writes it: "first quarter", "Q3 2019", "the 2nd quarter of 2024" (tools._question_rules
# reads its months, tools.intent counts it as a period).
QUARTER = re.compile(r"\b(?:(?P<ord>first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter|q(?P<n>[1-4]))\b"
                     r"(?:\s+(?:of\s+)?(?P<year>(?:1[89]|20)\d{2})\b)?", re.I)
# How finely a value names a time: a year, a month or a day.
YEAR, MONTH, DAY = 1, 2, 3


def parse_date(text: object, *, year_alone: bool = False) -> tuple[dt.date, int] | None:
    """The date a cell writes and how finely (``YEAR``, ``MONTH`` or ``DAY``), or None.

    ``year_alone``: a bare "2020" is a date too (a filter value: "published after 2020"); a cell of "2020" is a
    number, not a date, so cells leave it out.
    """
    s = " ".join(str(text or "").casefold().split())
    if not s:
        return None
    try:
        m = _ISO.match(s)
        if m:
            day = m.group("d")
            return dt.date(int(m.group("y")), int(m.group("m")), int(day or 1)), DAY if day else MONTH
        m = _MONTH_FIRST.match(s) or _DAY_FIRST.match(s)
        if m:
            month = MONTHS.get(m.group("mon"))
            if month is None:
                return None
            day = m.group("d")
            return dt.date(int(m.group("y")), month, int(day or 1)), DAY if day else MONTH
        m = _YEAR.match(s)
        if m and year_alone:
            return dt.date(int(m.group("y")), 1, 1), YEAR
    except ValueError:  # "2019-02-30": the shape of a date, but no day of the calendar
        return None
    return None


def cell_date(text: object) -> float | None:
    """The day number of the date a cell writes (as ``datetime.date.toordinal``), or None."""
    parsed = parse_date(text)
    return float(parsed[0].toordinal()) if parsed else None


def _key(day: dt.date, grain: int) -> tuple[int, ...]:
    return (day.year, day.month, day.day)[:grain]


def compare_dates(cell: object, op: str, value: object) -> bool | None:
    """``cell op value`` in time, at the grain the value is written in: "2021-06-30" > "2020" (a later year),
    but not > "June 2021" (the same month). None when either side is no date."""
    left, right = parse_date(cell), parse_date(value, year_alone=True)
    if left is None or right is None:
        return None
    grain = min(right[1], left[1])
    a, b = _key(left[0], grain), _key(right[0], grain)
    return {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


# "2024-03" or "2024-03-15": a year and a month (groups 1 and 2), maybe a day
ISO_MONTH = re.compile(r"^\s*(\d{4})-(\d{2})(?:-\d{2})?\s*$")


def iso_month_names(cells: list[str]) -> list[str] | None:
    """The month name of each ISO date cell ("2024-02" -> "february"), when every cell is one and no month comes
    twice (else "February" names no one of them); None otherwise."""
    months = [int(m.group(2)) if (m := ISO_MONTH.match(c)) else 0 for c in cells]
    if not cells or not all(1 <= n <= 12 for n in months) or len(set(months)) < len(months):
        return None
    return [MONTH_NAMES[n - 1] for n in months]


def names_month(text: str, month: str) -> re.Match | None:
    """Where ``text`` writes the month ``month`` ("february") in full or as its three letters, in any case but
    May's: only "May" names it, since "may" is also the verb ("Referrals may be higher in March …")."""
    if month == "may":
        return re.search(r"\bMay\b", text)
    return re.search(rf"\b(?:{month}|{month[:3]})\b", text, re.I)


def names_iso_month(text: str, cell: str) -> bool:
    """Whether ``text`` writes the month of the ISO date ``cell`` ("March" for "2024-03"; :func:`names_month`)."""
    month = iso_month_names([cell.strip()])
    return bool(month) and names_month(text, month[0]) is not None
