"""The program a two-row comparison's words alone give: "Novavax's vaccine is stored at a colder temperature than
Moderna's."

Found as a new user over a five-vaccine table: asked as a claim and as "Is … ?", that sentence was decided by
whatever the sampled programs happened to compare: "Vaccine = 'Jcovden' → Storage temp; check != 'Moderna'" (true of
any table), "Manufacturer = 'Pfizer-BioNTech' → Storage temp; check < Spikevax's" (a row the claim never names), or
two '=' filters on Manufacturer, which select nothing. Yet the sentence's form fixes the program: one row named
before the comparative, one after "than", one column of numbers named, and the comparative's direction. So it is
built in code, run with the same rules and citations as a sampled program, and decides (no model call).

It is built only when every part is unambiguous, else the model's programs decide as before:

- one "<comparative> … than" with no number before it ("3 more wins than" states a difference) and no negation;
  or one whose number is a multiple or a percentage ("more than 10% higher than", "twice as … than"): the rule
  that reads a claim's multiples (tools._claim_multiples.read_multiplier) then sets the check's factor;
- the words before it name exactly one row and the words after "than" one or more other rows ("than ALPHA-1 and
  BETA-2", compared with the most demanding of them; not "combined"), each by a text cell written whole ("Moderna"
  of Manufacturer names Spikevax's row), a cell no other row shares;
- exactly one column of numbers (not the row names) is named by its header's words; the two bound columns of one
  interval column ("Storage temp (°C) lower/upper bound") count as that column, and are compared only when the two
  rows' intervals do not overlap (then both bounds give the same answer; overlapping ranges are no fact either way);
- the comparative has a direction ("colder", "fewer": smaller; "hotter", "more": larger). "older" and "younger" have
  none, because a year column orders them the other way round ("founded earlier" is older);
- the claim writes no number other than those in the named cells and header.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tools._cells import TypedTable, iso_month_names, names_month, norm_text, writes_whole
from tools._claim_compare import scaled_comparisons, stated_comparisons
from tools._claim_multiples import stated_scale
from tools._grounding import column_named, question_numbers
from tools._interval_claims import bound_pairs
from tools._table_shape import LOWER_BOUND, UPPER_BOUND
from tools.lang.lexicon import content_words, word_in

# Which way each comparative orders the column's numbers: True, the subject's is larger
LARGER = frozenset("more greater higher larger bigger longer later heavier wetter hotter warmer costlier pricier "
                   "dearer".split())
SMALLER = frozenset("less fewer lower smaller shorter earlier lighter drier colder cooler cheaper".split())
NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|cannot)\b|n't\b", re.I)
# A price compared in its own words ("more expensive", "cheaper") names no header: the one column of prices does
_PRICE_WORDS = re.compile(r"\b(?:expensive|cheaper|costlier|pricier|dearer|costs?\s+(?:more|less))\b", re.I)
_PRICE_HEADER = re.compile(r"\b(?:cost|costs|price|prices|fee|fees|spend|spending|expenditure|usd|eur|gbp)\b|[$€£]",
                           re.I)
# "A compared with B is more expensive", "Compared to B, A is cheaper", "A is cheaper compared to B": the comparison
# "A is … than B" written another way (found as a new user: "Compared with metformin, sitagliptin is cheaper" was
# supported by programs that checked metformin's price below sitagliptin's)
_COMPARED = r"(?:compared\s+(?:to|with)|in\s+comparison\s+(?:to|with)|relative\s+to)"
_LEADING = re.compile(rf"^\s*{_COMPARED}\s+(?P<b>[^,]{{1,60}}?),\s*(?P<a>.+?)\s*[.?!]?\s*$", re.I)
_INNER = re.compile(rf"^\s*(?P<a>[^,]{{1,60}}?),?\s+{_COMPARED}\s+(?P<b>[^,]{{1,60}}?),?\s+(?P<rest>(?:is|was|are|were|"
                    rf"has|had|have|costs?|cost)\b.+?)\s*[.?!]?\s*$", re.I)
_TRAILING = re.compile(rf"^\s*(?P<a>.+?),?\s+{_COMPARED}\s+(?P<b>[^,;]{{1,60}}?)\s*[.?!]?\s*$", re.I)


def than_form(claim: str) -> str:
    """The claim with "compared to/with B" written as "… than B" (see above); any other claim as written."""
    if re.search(r"\bthan\b", claim, re.I):
        return claim
    if m := _LEADING.match(claim):
        return f"{m.group('a')} than {m.group('b')}"
    if m := _INNER.match(claim):
        return f"{m.group('a')} {m.group('rest')} than {m.group('b')}"
    if m := _TRAILING.match(claim):
        return f"{m.group('a')} than {m.group('b')}"
    return claim


def _rows_written(typed: TypedTable, text: str) -> set[int]:
    """The rows of which ``text`` writes a whole text cell that no other row holds in its column, or the month of
    an ISO month cell ("March" for "2024-03", in a column where no month comes twice)."""
    said = norm_text(text)
    rows: set[int] = set()
    for col in typed.columns:
        if col.numeric:
            continue
        cells = [norm_text(typed.text(r, col.index)) for r in range(1, typed.table.n_rows + 1)]
        months = iso_month_names(cells) or [""] * len(cells)
        for r, (cell, month) in enumerate(zip(cells, months), start=1):
            if len(cell) >= 3 and cells.count(cell) == 1 and any(ch.isalpha() for ch in cell) \
                    and writes_whole(said, cell) or month and names_month(text, month):
                rows.add(r)
    return rows


def _numbers_columns_named(typed: TypedTable, claim: str) -> list:
    """The columns of numbers (not the row names) the claim names by their header's words; without any, the
    price columns when it compares prices in their own words ("more expensive", "cheaper")."""
    named = [col for col in typed.columns if col.numeric and col.index != typed.label_col
             and column_named(col.name, claim)]
    if not named and _PRICE_WORDS.search(claim):
        named = [col for col in typed.columns if col.numeric and col.index != typed.label_col
                 and _PRICE_HEADER.search(col.name)]
    if len(named) > 1:
        # "beds" names both "Beds" and "ICU beds"; "ICU beds" names "ICU beds" alone: the headers the claim writes
        # whole, less those inside a longer one it writes (found as a new user over a hospital-capacity table)
        have = content_words(claim.replace("'s", " "))
        whole = [col for col in named if all(word_in(w, have) for w in content_words(col.name) if w.isalpha())]
        longest = [col for col in whole
                   if not any(set(content_words(col.name)) < set(content_words(o.name)) for o in whole)]
        named = longest if len(longest) == 1 else named
    return named


def numbers_column_named(typed: TypedTable, claim: str) -> str | None:
    """The identifier of the one column of numbers the claim names (:func:`_numbers_columns_named`), or None."""
    named = _numbers_columns_named(typed, claim)
    return named[0].ident if len(named) == 1 else None


def _column_compared(typed: TypedTable, claim: str, a: int, b: int) -> str | None:
    """The identifier of the one column of numbers the claim names (module docstring), or None."""
    named = _numbers_columns_named(typed, claim)
    plain = [col for col in named if not col.name.endswith((LOWER_BOUND, UPPER_BOUND))]
    if len(plain) == 1:
        return plain[0].ident
    if plain:
        return None
    pair_of = {ident: pair for pair in bound_pairs(typed) for ident in pair[1:]}
    pairs = {pair_of.get(col.ident) for col in named}
    if len(pairs) != 1 or (pair := pairs.pop()) is None or not column_named(pair[0], claim):
        return None
    lower, upper = typed.column(pair[1]), typed.column(pair[2])
    ends = [(typed.number(r, lower.index), typed.number(r, upper.index)) for r in (a, b)]
    if any(x is None for pair in ends for x in pair):
        return None
    (lo_a, hi_a), (lo_b, hi_b) = ends
    if not (hi_a < lo_b or hi_b < lo_a):  # overlapping (or equal) ranges: neither is colder
        return None
    return lower.ident


@dataclass(frozen=True)
class WordsProgram:
    """A program built from the claim's words, and a note for its reason ("" when none is needed)."""

    raw: dict
    note: str = ""
    # The cells the note quotes (each other row's name and value), cited beside the program's own
    cells: tuple[tuple[int, int], ...] = ()


# "than ALPHA-1 and BETA-2 combined" compares with a sum, which one row's value is not
_TOGETHER = re.compile(r"\b(?:combined|together|total|sum|average|mean|put together)\b", re.I)


def compared_rows(typed: TypedTable, claim: str) -> WordsProgram | None:
    """The program of "<row A> … <comparative> … than <row B> [and <row C> …]", or None when the claim is not that
    plain (module docstring). Against several rows the claim holds when it holds against the most demanding one (the
    largest for "more", the smallest for "fewer"), so that row is the one compared, and the note says why."""
    label = typed.label_col
    claim = than_form(claim)
    scaled = stated_scale(claim) is not None
    comparisons = scaled_comparisons(claim) if scaled else stated_comparisons(claim)
    if not label or len(comparisons) != 1 or NEGATION.search(claim):
        return None
    word, start, end = comparisons[0]
    if word not in LARGER and word not in SMALLER:
        return None
    subject, others = _rows_written(typed, claim[:start]), _rows_written(typed, claim[end:])
    if len(subject) != 1 or not others or subject & others or (len(others) > 1 and _TOGETHER.search(claim[end:])):
        return None
    a = subject.pop()
    columns = {_column_compared(typed, claim, a, b) for b in others}
    if len(columns) != 1 or (column := columns.pop()) is None \
            or (len(others) > 1 and typed.column(column).name.endswith(LOWER_BOUND)):
        return None
    written = " ".join([typed.column(column).name] + [typed.text(r, c.index) for r in (a, *others)
                                                      for c in typed.columns if not c.numeric])
    # the multiple or percentage a scaled comparison states is read by tools._claim_multiples.read_multiplier
    stated_scale_numbers = question_numbers(claim[:start][-40:]) if scaled else set()
    if question_numbers(claim) - question_numbers(written) - stated_scale_numbers:
        return None
    col = typed.column(column).index
    values = {b: typed.number(b, col) for b in sorted(others)}
    if any(v is None for v in values.values()):
        return None
    larger = word in LARGER
    b = (max if larger else min)(values, key=lambda r: values[r])
    note = ""
    if len(others) > 1:
        items = [f"{typed.row_name(r)}'s {typed.text(r, col)}" for r in values]
        listed = ", ".join(items[:-1]) + " and " + items[-1]
        note = (f"{typed.row_name(b)}'s is the {'largest' if larger else 'smallest'} of {listed}, so the claim holds "
                "against all of them exactly when it holds against it")
    label_ident = typed.columns[label - 1].ident
    return WordsProgram({"filters": [{"column": label_ident, "op": "=", "value": typed.text(a, label)}],
                         "fn": "value", "column": column, "answer_column": label_ident,
                         "check": {"op": ">" if larger else "<", "against": "row", "value": typed.text(b, label)}},
                        note, tuple((r, c) for r in values for c in (label, col)) if note else ())


def compared_rows_by_words(typed: TypedTable, claim: str) -> dict | None:
    """The raw program (as the model would write it) of :func:`compared_rows`, or None."""
    words = compared_rows(typed, claim)
    return words.raw if words is not None else None
