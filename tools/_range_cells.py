"""How long a span lasts when one cell writes both its ends: "Monday 5 October - Wednesday 16 December".

Found on PubHealthTab's tuning split (its eval split): "The Fixture Window time frame is over 3 months." over a
sports calendar whose row "Fixture window" holds that range (72 days) was decided by the judge after the programs
split (no program can read two dates out of one cell). The durations of tools._question_dates cover a start column
and an end column; here the claim's form settles it in code when:

- the claim states a span with a bound or a number ("over 3 months", "less than 10 weeks", "74 days"; as
  tools._question_dates.stated_days reads it) and speaks of a span ("time frame", "period", "window", "lasted", "long");
- exactly one row holds one cell that is a range of two dates and another cell sharing a word with the claim
  (its name: "Fixture window").

An end without a year takes the other end's; with neither, a common year, and an end before its start falls in the
next year ("5 December - 10 January").
"""

from __future__ import annotations

import datetime as dt
import re

from kb.table_model import Table
from tools._cells import format_value, parse_date, text_words
from tools._claim_trend import TrendCheck
from tools._question_dates import stated_days
from tools._values import ORDER_OPS

_SPAN_WORDS = re.compile(r"\b(?:time\s*frames?|periods?|windows?|spans?|lasts?|lasted|lasting|long|duration|runs?|"
                         r"ran|open\s+for)\b", re.I)
_SEPARATORS = (" - ", " – ", " — ", "–", "—", " to ", " until ", " through ", " till ")
_WEEKDAY = re.compile(r"^(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+", re.I)
_HAS_YEAR = re.compile(r"\b(?:1[89]|20)\d{2}\b")
_COMMON_YEAR = 2001  # not a leap year: "28 February - 1 March" is one day
_COMMON_WORDS = {"the", "and", "for", "was", "were", "are", "than", "that", "this", "with", "time", "frame", "over",
                 "under", "more", "less", "period", "window", "days", "weeks", "months", "years", "long", "lasted"}
_OP_WORDS = {">": "more than", ">=": "at least", "<": "less than", "<=": "at most", "=": "exactly"}


def _end(text: str, year: str | None) -> dt.date | None:
    text = _WEEKDAY.sub("", " ".join(text.split()).strip(" ,.")).strip()
    read = parse_date(text) or (parse_date(f"{text} {year}") if year else None)
    return read[0] if read is not None else None


def range_days(cell: str) -> float | None:
    """The days from the first date a cell writes to the second ("Monday 5 October - Wednesday 16 December" -> 72),
    or None when the cell is no range of two dates."""
    text = " ".join(str(cell).split())
    for sep in _SEPARATORS:
        if sep.strip() and sep in text:
            first, _, second = text.partition(sep)
            years = _HAS_YEAR.findall(first), _HAS_YEAR.findall(second)
            year = (years[0] or years[1] or [str(_COMMON_YEAR)])[-1]
            start = _end(first, (years[1] or [year])[-1] if not years[0] else None)
            end = _end(second, year if not years[1] else None)
            if start is None or end is None:
                continue
            if end < start and not (years[0] and years[1]):
                end = end.replace(year=end.year + 1)
            if end < start:
                return None
            return float((end - start).days)
    return None


def _holds(days: float, op: str, stated: float) -> bool:
    if op in ORDER_OPS:
        return ORDER_OPS[op](days, stated)
    return abs(days - stated) <= 1  # whether both ends count is not said


def range_duration_check(claim: str, table: Table) -> TrendCheck | None:
    """The claim's stated span against the one named row's range of dates (module docstring), or None."""
    stated = stated_days(claim)
    if stated is None or not _SPAN_WORDS.search(claim):
        return None
    asked = {w for w in text_words(claim).split() if len(w) >= 3 and w not in _COMMON_WORDS}
    found = []
    for r, row in enumerate(table.rows, start=1):
        ranges = [(c, d) for c, cell in enumerate(row, start=1) if (d := range_days(cell)) is not None]
        if len(ranges) != 1:
            continue
        naming = [c for c, cell in enumerate(row, start=1) if c != ranges[0][0]
                  and asked & set(text_words(str(cell)).split())]
        if naming:
            found.append((r, ranges[0], naming[0]))
    if len(found) != 1:
        return None
    r, (c, days), name_c = found[0]
    op, stated_d = stated
    holds = _holds(days, op, stated_d)
    name = " ".join(str(table.rows[r - 1][name_c - 1]).split())
    span = " ".join(str(table.rows[r - 1][c - 1]).split())
    reason = (f"{name} runs {span}: {format_value(days)} days; the claim needs {_OP_WORDS[op]} "
              f"{format_value(round(stated_d, 1))} days, so the table {'supports' if holds else 'refutes'} the "
              "claim.")
    return TrendCheck("SUPPORTS" if holds else "REFUTES", [(r, name_c), (r, c)], reason)
