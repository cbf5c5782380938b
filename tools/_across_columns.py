"""One row's values across a measure's year columns: "What was Nigeria's average coverage over 2019 to 2022?" over a
wide table ("Country | 2019 | 2020 | 2021 | 2022") is the mean of Nigeria's four cells; "In which year was India's
coverage highest?" names the column of its largest cell.

Found as a new user over a WHO-style coverage table: the grammar aggregates a column over rows, so the five programs
took the mean of one year's column over Nigeria's one row and answered 62 (2022) by 2 votes of 5 against 57, 56 and
57. The question's form settles it:

- it asks for an average or mean, a total, the highest or the lowest value (or in which year that was);
- it asks for no row ("which country …"), count ("how many …", "the number of …") or threshold ("at least 20%");
- it names one row (all the words of its label) and the table has one measure whose columns are years
  (tools._claim_changes's year groups: "2019" … "2022", or "Cases 2019" … "Cases 2022");
- the years it names bound the columns ("from 2019 to 2021", "between 2020 and 2022"); none: every year of the
  measure; years the table lacks: no reading.

:func:`read_across_years` turns the model's program into that reading (``Program.across``, set by code only);
:func:`tools._row_across.execute_across` computes it over the one selected row, citing the cells it read.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable
from tools._claim_changes import one_group, year_groups
from tools._grounding import row_stated
from tools._table_ops_model import VALUE_MAX_CHARS, Program, RowFilter
from tools.lang.lexicon import content_words

_AVERAGE = re.compile(r"\b(?:average|mean)\b", re.I)
_MEDIAN = re.compile(r"\bmedian\b", re.I)
_TOTAL = re.compile(r"\b(?:total|sum|combined|altogether|in\s+all)\b", re.I)
_HIGHEST = re.compile(r"\b(?:highest|maximum|peak|largest|greatest|most|best)\b", re.I)
_LOWEST = re.compile(r"\b(?:lowest|minimum|smallest|(?<!at )least|fewest|worst)\b", re.I)
# Not an aggregate of one row's cells: a row asked for ("which country …", "who …"), rows or years counted ("how many
# years …", "the total number of …"), or a threshold ("at least 20%", "below 2500"). Each seen on WTQ's training split.
_NOT_ACROSS = re.compile(r"\b(?:which|who|whom|whose)\b(?!\s+years?\b)|\bhow\s+many\b|\bnumber\s+of\b|"
                         r"\b(?:at\s+least|at\s+most|below|above|under|over|more\s+than|less\s+than|fewer\s+than|"
                         r"greater\s+than|exceed\w*)\s+\d", re.I)
_WHICH_YEAR = re.compile(r"\b(?:(?:in\s+)?(?:which|what)\s+years?|when)\b", re.I)
_YEARS = re.compile(r"\b(1[89]\d\d|20\d\d)\b")
_SPAN = re.compile(r"\b(?:from|between|over|during|in)?\s*(1[89]\d\d|20\d\d)\s*(?:to|and|through|until|–|-|—)\s*"
                   r"(1[89]\d\d|20\d\d)\b", re.I)


def _fn_asked(question: str) -> str | None:
    which_year = bool(_WHICH_YEAR.search(question))
    high, low = bool(_HIGHEST.search(question)), bool(_LOWEST.search(question))
    if high != low:
        return ("argmax" if high else "argmin") if which_year else ("max" if high else "min")
    if which_year or high:
        return None
    if _MEDIAN.search(question):
        return "median"
    if _AVERAGE.search(question):
        return "avg"
    if _TOTAL.search(question):
        return "sum"
    return None


def _columns_asked(group: dict[tuple[int, int], str], question: str) -> list[str] | None:
    """The group's columns in year order, within the span the question names; None when it names years the group
    lacks or one year alone (a single cell: no aggregate)."""
    years = sorted(group)
    span = _SPAN.search(question)
    named = {int(y) for y in _YEARS.findall(question)}
    if span is not None:
        first, last = sorted((int(span.group(1)), int(span.group(2))))
        chosen = [p for p in years if first <= p[0] <= last]
        if {first, last} - {p[0] for p in chosen}:
            return None
    elif named:
        return None
    else:
        chosen = years
    return [group[p] for p in chosen] if len(chosen) >= 2 else None


def read_across_years(program: Program, typed: TypedTable, question: str) -> Program:
    """``program`` as one row's aggregate across a measure's year columns, when the question asks for one (module
    docstring); else unchanged."""
    fn = _fn_asked(question) if not _NOT_ACROSS.search(_SPAN.sub(" ", question)) else None  # "over 2019 to 2022"
    label = typed.label_col
    if fn is None or not label or program.check is not None:
        return program
    groups = {stem: cols for stem, cols in year_groups(typed).items()
              if all(year > 0 and quarter == 0 for year, quarter in cols)}
    group = one_group(groups, question)
    if group is None or len(group) < 2:
        return program
    across = _columns_asked(group, question)
    row = row_stated(typed, _YEARS.sub(" ", question)) if across else None
    if row is None:
        return program
    name = typed.text(row, label).strip()
    if not name or len(name) > VALUE_MAX_CHARS or not set(content_words(name)) \
            or not set(content_words(name)) <= set(content_words(question)):
        return program  # the row named by all its words: "religious" does not name "Without religion"
    ident = typed.columns[label - 1].ident
    return Program(filters=[RowFilter(column=ident, op="=", value=name)], fn=fn, column=across[0],
                   answer_column=ident, across=across)
