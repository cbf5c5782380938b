"""The reading of a message: what it states, parsed once and shared by every rule that reads it.

Before, each rule re-tokenised the raw claim with its own pattern: the stated-bound rule found "more than 400",
the rough-value rule "roughly 30,000", the negation rule "did not", each over the whole string again, and two rules
could read the same number differently. :func:`read` parses a message once (cached by its text, so each rule
that asks gets the same :class:`Reading`) into typed parts:

- :class:`StatedNumber`: each number as written, its value, the bound the words before it set ("more than 400"
  -> ">"), whether those words make it rough ("about 5%"), and its value at a magnitude word ("30 thousand");
- :class:`Superlative`: each word that asks for an extreme, which way, and at which place ("second-highest");
- :class:`MainNegation`: a plain negation of the main verb, and the claim without it;
- the calendar it writes: :class:`StatedYear` ("2019"), :class:`StatedMonth` ("March", "Mar. 2024"),
  :class:`StatedQuarter` ("Q3 2019", "the first quarter of 2024") and :class:`StatedWeek` ("2025-W40"), each with
  its span, so a rule finds the years and months where the message writes them instead of matching its own
  pattern (four readers kept four year patterns, 1000, 1800 or 1900 to 2099, and three month patterns that
  disagreed on "Sept" and on the verb "may");
- :class:`Quantifier`: each word that says how many ("every", "no", "at least one", "most"), of which kind.

The words come from :mod:`tools.lang.lexicon`; this module holds how they combine with numbers and clauses.

A message read against one table (:func:`read_against`, cached by text and table) is a :class:`TableReading`:
the rows it names by their labels (:class:`RowMention`), the text cells it writes whole that name one row each
(:class:`CellMention`), and the columns it names by their headers' words (:class:`ColumnMention`), each with where
the message writes it. How a program's filters and checks are grounded in a message stays the grounding's
(``tools._grounding``).
"""

from __future__ import annotations

import re
import unicodedata
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from tools._cells import TypedTable, iso_month_names, norm_text, text_words
from tools.lang.lexicon import (BOUND_WORDS, CARDINALS, EARLIEST_YEAR, LATEST_YEAR, LOWER_IS_BETTER, MAX_WORDS,
                                MIN_WORDS, MONTH_NAMES, MONTHS, OLDEST_YEAR, ORDINAL_WORDS, QUANTIFIERS,
                                QUARTER_ORDINALS, ROUGH_NUMBER_PATTERN, SCALE_WORDS, SUPERLATIVES, WORD, content_words,
                                word_in)

_NUMBER = r"[−-]?\d[\d,]*(?:\.\d+)?"
_NUMBER_WORDS = {w: n for w, n in CARDINALS.items() if n >= 1}  # "one" to "twelve" (after a bound only)
# The longest phrase first, so "no more than" is not read as "more than"; a number (or a number word) right after,
# and not the start of a span: "over 2019 to 2022", "under 18-65" bound nothing.
_BOUNDED = re.compile(
    r"\b(?P<bound>" + "|".join(re.escape(b) for b in sorted(BOUND_WORDS, key=len, reverse=True)) + r")\s+"
    r"(?P<number>" + _NUMBER + "|" + "|".join(_NUMBER_WORDS) + r")\b"
    r"(?!\s*(?:to|through|until|till|and|[-–])\s*\d)", re.I)
_ROUGH = re.compile(r"\b(?:" + ROUGH_NUMBER_PATTERN + r")\s+(?P<number>" + _NUMBER + r")\s*(?P<scale>"
                    r"thousand|million|billion|k\b|bn\b)?", re.I)
# not inside a word or a name ("COVID-19", "v2.1", "H5N1"); a multiple's "x" may follow ("4.93x faster")
_PLAIN = re.compile(r"(?<![\w.])(?<![^\W\d_]-)(?P<number>" + _NUMBER + r")(?:[x×](?!\w)|(?!\w|\.\d))"
                    r"(?P<percent>\s*%)?")

# A plain negation of the main verb (tools.verify_claim reads the claim without it and turns the verdict round).
_AUX = r"did|does|do|is|was|are|were|has|have|had"
_NEGATION = re.compile(rf"\b(?P<aux>{_AUX})\s+not\b|\b(?P<short>{_AUX})n['’]t\b", re.I)
_OTHER_NEGATIVE = re.compile(r"\b(?:no|none|never|neither|nor|without|nothing|nobody|only|cannot|can['’]t|won['’]t|"
                             r"couldn['’]t|wouldn['’]t|shouldn['’]t|not)\b", re.I)
# ("than", "as" and "since" open no clause of their own here: "X did not have more cases than Y" is turned round
# whole, as is "resistance has not fallen since 2019")
_CLAUSE = re.compile(r"\b(?:that|which|who|whom|whose|because|but|while|although|though|if|unless|when|whereas|"
                     r"and|or)\b", re.I)
# a quotation (a title: "I Don't Like Mondays"): double quotes, or a single quote that opens a word
_QUOTES = re.compile(r"[\"“”]|(?:^|\s)['‘’]")
MAX_SUBJECT_WORDS = 8

# The calendar: a four-digit number at word edges (not "FY2019", "12019"; "2019-20" and "Q1-2019" give 2019); a month
# word (the longest first: "Sept" before "Sep"), a dot and the year written right after it ("Mar. 2024", "May, 2014");
# a quarter ("Q3", "third quarter") and its year ("Q3 2019", "the 2nd quarter of 2024"); an ISO week ("2025-W40",
# "2025W40") or "week 40" (of a year: "week 40 of 2025").
_YEAR = re.compile(r"\b\d{4}\b")
_MONTH = re.compile(r"\b(?P<word>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\b(?P<dot>\.)?"
                    r"(?:,?\s+(?P<year>\d{4})\b)?", re.I)
_QUARTER = re.compile(r"\b(?P<q>(?P<ord>" + "|".join(QUARTER_ORDINALS) + r")\s+quarter|q(?P<n>[1-4]))\b"
                      r"(?:\s+(?:of\s+)?(?P<year>\d{4})\b)?", re.I)
# A quantifier: the longest first ("at least one", "none" before "no"); "No." is the abbreviation of a number ("No. 5").
_QUANTIFIER = re.compile(r"\b(?P<q>" + "|".join(w.replace(" ", r"\s+") for w in sorted(QUANTIFIERS, key=len,
                                                                                        reverse=True))
                         + r")\b(?!(?<=\bno)\.)", re.I)
# Superlatives: a word of letters, maybe hyphenated ("second-highest", "lowest-calorie"), after an ordinal written in
# digits ("2nd-highest"; "top10" is "top"); an ordinal right before one ("the second highest", "3rd - largest");
# "most" and "least" make an extreme only after "the" ("the most", "the second least"), anywhere in the text.
_TOKEN = re.compile(r"(?:\d{1,2}(?:st|nd|rd|th)-)?[a-z][a-z-]*")
_ORDINALS = "|".join(ORDINAL_WORDS)
_ORDINAL_BEFORE = re.compile(r"\b(?P<ordinal>" + _ORDINALS + r")[\s-]+$")
_THE_EXTREME = {w: re.compile(rf"\bthe (?:(?:{_ORDINALS})[\s-]+)?{w}\b") for w in ("most", "least")}
_THE_BEFORE = re.compile(r"\bthe (?:(?:" + _ORDINALS + r")[\s-]+)?$", re.I)  # "the most" is no quantifier
_WEEK = re.compile(r"\b(?P<iso_year>\d{4})-?W(?P<iso_week>\d{2})\b|\bweek\s+(?P<week>\d{1,2})\b"
                   r"(?:\s+(?:of\s+)?(?P<year>\d{4})\b)?", re.I)


def _number_value(written: str) -> float | None:
    word = written.lower()
    if word in _NUMBER_WORDS:
        return _NUMBER_WORDS[word]
    try:
        return float(written.replace(",", "").replace("−", "-"))
    except ValueError:
        return None


@dataclass(frozen=True)
class StatedNumber:
    """A number the message writes, where (``start``, ``end``: the digits or number word), and how it is stated."""

    text: str
    value: float
    start: int
    end: int
    percent: bool = False
    bound: str | None = None  # the comparison the words before it set: ">", ">=", "<", "<="
    rough: bool = False  # "about", "roughly", "nearly", ... right before it
    scaled: float | None = None  # its value at a magnitude word after it ("30 thousand" -> 30000)


@dataclass(frozen=True)
class Superlative:
    """A superlative word: ``sense`` "max" or "min" ("" for one whose sense depends on the column: "best", "oldest",
    "top"), at ``place`` (2 for "second-highest", "the 3rd largest"), in the ``token`` it is written in ("lowest"
    in "lowest-calorie"). A bare "most" or "least" asks for no extreme (``extreme`` False: "most trials lasted 30
    weeks", "at least 3"); "the most", "the second least" do."""

    word: str
    sense: str
    place: int = 1
    token: str = ""  # the whole word as written, in lower case: "second-highest", "lowest-calorie", "highest"
    start: int = 0  # of the superlative word itself
    end: int = 0
    extreme: bool = True


@dataclass(frozen=True)
class MainNegation:
    """A plain negation of the main verb ("did not", "wasn't") and the message without it."""

    text: str  # as written: "did not"
    start: int
    end: int
    positive: str  # the message without the negation: "Yemen did have the most deaths."


@dataclass(frozen=True)
class StatedYear:
    """A four-digit number from OLDEST_YEAR to LATEST_YEAR (lexicon) that may be a year, where it is. A count may
    look so too ("1500 patients"): most readers take only years from EARLIEST_YEAR (:meth:`Reading.year_list`)."""

    text: str
    value: int
    start: int
    end: int


@dataclass(frozen=True)
class StatedMonth:
    """A month the message names, in full or short ("March", "Sept", "mar"; "may" too, which is also the verb: a
    reader that cares checks ``text``), and the year written right after it ("March 2010", "Mar. 2024")."""

    text: str  # the month's word as written, without its dot
    month: int
    start: int
    end: int  # of the word
    dotted: bool = False  # a dot right after the word ("Mar.")
    year: StatedYear | None = None

    @property
    def full(self) -> bool:
        """Written in full ("March", "May"), not short ("Mar", "Sept")."""
        return self.text.lower() in MONTH_NAMES

    @property
    def phrase_end(self) -> int:
        """Where the month and its year, as written, end ("Mar. 2024": after the year; "Mar.": after the dot)."""
        return self.year.end if self.year else self.end + self.dotted


@dataclass(frozen=True)
class StatedQuarter:
    """A quarter of a year: "Q3" or "third quarter" (``text``, as written), with the year written after it ("Q3
    2019", "the 2nd quarter of 2024")."""

    text: str
    quarter: int
    start: int
    end: int  # of the quarter's words
    year: StatedYear | None = None

    @property
    def short(self) -> bool:
        """Written as "Q3", not in words."""
        return self.text[:1] in "qQ"

    @property
    def phrase_end(self) -> int:
        return self.year.end if self.year else self.end


@dataclass(frozen=True)
class StatedWeek:
    """A week of a year: an ISO week ("2025-W40", "2025W40", as surveillance tables write them) or "week 40" (with
    its year when one is written after it: "week 40 of 2025")."""

    text: str
    week: int
    start: int
    end: int
    year: int | None = None


@dataclass(frozen=True)
class Quantifier:
    """A word that says how many: ``word`` in lower case with single spaces ("at least one"), its ``kind`` (the
    lexicon's QUANTIFIERS: "every", "both", "some", "none", "only", "unique", "whole", "always", "never", "most")."""

    word: str
    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class Reading:
    """What a message states, parsed once (:func:`read`)."""

    text: str
    numbers: tuple[StatedNumber, ...]
    superlatives: tuple[Superlative, ...]
    negation: MainNegation | None
    years: tuple[StatedYear, ...] = ()
    months: tuple[StatedMonth, ...] = ()
    quarters: tuple[StatedQuarter, ...] = ()
    weeks: tuple[StatedWeek, ...] = ()
    quantifiers: tuple[Quantifier, ...] = ()

    def extremes(self) -> list[Superlative]:
        """The superlatives that ask for an extreme: not a bare "most" or "least" ("most trials", "at least 3")."""
        return [s for s in self.superlatives if s.extreme]

    def quantified(self, *kinds: str) -> list[Quantifier]:
        """The quantifiers of the given kinds, in order (all of them when none is given)."""
        return [q for q in self.quantifiers if not kinds or q.kind in kinds]

    def year_list(self, since: int = EARLIEST_YEAR) -> list[StatedYear]:
        """The years written, in order, from ``since`` on (EARLIEST_YEAR unless a reader takes older ones)."""
        return [y for y in self.years if y.value >= since]

    def without(self, parts: Iterable[StatedYear | StatedMonth | StatedQuarter | StatedWeek]) -> str:
        """The text with each of ``parts`` (its own ``start`` to ``end``) blanked to one space: "cases in 2019 rose"
        without its years is "cases in   rose", for a reader of the other numbers or words."""
        out, at = [], 0
        for part in sorted(parts, key=lambda p: p.start):
            if part.start >= at:
                out += [self.text[at:part.start], " "]
                at = part.end
        return "".join(out) + self.text[at:]

    def bounds(self) -> dict[float, str]:
        """number -> the comparison the words before it set, for each number the message bounds one way only."""
        seen: dict[float, set[str]] = {}
        for n in self.numbers:
            if n.bound:
                seen.setdefault(round(n.value, 6), set()).add(n.bound)
        return {value: next(iter(ops)) for value, ops in seen.items() if len(ops) == 1}

    def rough_values(self) -> set[float]:
        """The numbers written as rough, as written and at their magnitude word ("about 30 thousand": 30, 30000)."""
        out = set()
        for n in self.numbers:
            if n.rough:
                out.add(round(n.value, 6))
                if n.scaled is not None:
                    out.add(round(n.scaled, 6))
        return out


def _numbers(text: str) -> tuple[StatedNumber, ...]:
    found: dict[int, dict] = {}
    for m in _PLAIN.finditer(text):
        value = _number_value(m.group("number"))
        if value is not None:
            found[m.start("number")] = {"text": m.group("number"), "value": value, "start": m.start("number"),
                                        "end": m.end("number"), "percent": bool(m.group("percent"))}
    for m in _BOUNDED.finditer(text):
        value = _number_value(m.group("number"))
        if value is not None:
            entry = found.setdefault(m.start("number"), {"text": m.group("number"), "value": value,
                                                         "start": m.start("number"), "end": m.end("number")})
            entry["bound"] = BOUND_WORDS[" ".join(m.group("bound").lower().split())]
    for m in _ROUGH.finditer(text):
        entry = found.get(m.start("number"))
        if entry is None:
            continue
        entry["rough"] = True
        if m.group("scale"):
            entry["scaled"] = entry["value"] * SCALE_WORDS[m.group("scale").lower()]
    return tuple(StatedNumber(**found[k]) for k in sorted(found))


def _superlatives(text: str) -> tuple[Superlative, ...]:
    low = text.lower()
    if len(low) != len(text):  # a letter whose lower case is longer ("İ"): keep the spans the text's own
        low = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    kept = {w for w, pattern in _THE_EXTREME.items() if pattern.search(low)}  # "the most", "the second least"
    out = []
    for m in _TOKEN.finditer(low):
        token = m.group(0)
        first, _, rest = token.partition("-")
        place, lead = 1, 0
        if first in ORDINAL_WORDS and rest and (rest in SUPERLATIVES or rest.partition("-")[0] in SUPERLATIVES):
            place, lead = ORDINAL_WORDS[first], len(first) + 1  # "second-highest", "2nd-lowest-calorie"
            first, _, rest = rest.partition("-")
        word = first if first in SUPERLATIVES else token[lead:]  # "lowest-calorie", "best-selling": the first part
        if word not in SUPERLATIVES:
            continue
        if place == 1 and (ordinal := _ORDINAL_BEFORE.search(low, 0, m.start())):  # "the second highest"
            place = ORDINAL_WORDS[ordinal.group("ordinal")]
        sense = "max" if word in MAX_WORDS else "min" if word in MIN_WORDS else ""
        start = m.start() + lead
        out.append(Superlative(word, sense, place, token, start, start + len(word),
                               extreme=word not in ("most", "least") or word in kept))
    return tuple(out)


def _main_negation(text: str) -> MainNegation | None:
    found = list(_NEGATION.finditer(text))
    if len(found) != 1:
        return None
    m = found[0]
    before, after = text[:m.start()], text[m.end():]
    if _OTHER_NEGATIVE.search(before) or _OTHER_NEGATIVE.search(after) or _CLAUSE.search(before) \
            or _CLAUSE.search(after) or len(before.split()) > MAX_SUBJECT_WORDS or not before.strip():
        return None
    if _QUOTES.search(text):
        return None
    aux = m.group("aux") or m.group("short")
    return MainNegation(m.group(0), m.start(), m.end(), " ".join((before + aux + after).split()))


def _years(text: str) -> tuple[StatedYear, ...]:
    return tuple(StatedYear(m.group(0), int(m.group(0)), m.start(), m.end()) for m in _YEAR.finditer(text)
                 if OLDEST_YEAR <= int(m.group(0)) <= LATEST_YEAR)


def _calendar(text: str) -> tuple[tuple[StatedYear, ...], tuple[StatedMonth, ...], tuple[StatedQuarter, ...],
                                  tuple[StatedWeek, ...]]:
    years = _years(text)
    at = {y.start: y for y in years}
    months = tuple(StatedMonth(m.group("word"), MONTHS[m.group("word").lower()], m.start("word"), m.end("word"),
                               bool(m.group("dot")), at.get(m.start("year")) if m.group("year") else None)
                   for m in _MONTH.finditer(text))
    quarters = tuple(StatedQuarter(m.group("q"), QUARTER_ORDINALS[m.group("ord").lower()] if m.group("ord")
                                   else int(m.group("n")), m.start("q"), m.end("q"),
                                   at.get(m.start("year")) if m.group("year") else None)
                     for m in _QUARTER.finditer(text))
    weeks = tuple(StatedWeek(m.group(0), int(m.group("iso_week") or m.group("week")), m.start(), m.end(),
                             int(m.group("iso_year") or m.group("year")) if (m.group("iso_year") or m.group("year"))
                             else None)
                  for m in _WEEK.finditer(text))
    return years, months, quarters, weeks


def _quantifiers(text: str) -> tuple[Quantifier, ...]:
    out = []
    for m in _QUANTIFIER.finditer(text):
        word = " ".join(m.group("q").lower().split())
        if word == "most" and _THE_BEFORE.search(text, 0, m.start()):
            continue  # "the most", "the second most" ask for an extreme (a superlative), not for most of the rows
        out.append(Quantifier(word, QUANTIFIERS[word], m.start(), m.end()))
    return tuple(out)


@lru_cache(maxsize=4096)
def read(text: str) -> Reading:
    """The reading of ``text`` (module docstring); parsed once per text, the same object for every reader."""
    years, months, quarters, weeks = _calendar(text)
    return Reading(text=text, numbers=_numbers(text), superlatives=_superlatives(text),
                   negation=_main_negation(text), years=years, months=months, quarters=quarters, weeks=weeks,
                   quantifiers=_quantifiers(text))


# -- superlatives as the rules ask about them (each reads the text's Reading; before, each ran over the raw text) -----

def is_superlative(text: str) -> bool:
    """Does the text use a superlative ("the most", "largest", "top"), also as the first part of a compound
    ("the lowest-calorie food", "the best-selling drug"; found as a new user) or after an ordinal
    ("second-highest")? "right-most" is no superlative; a bare "most" or "least" counts ("at least", "most
    trials": the rules that ask read those as a superlative's word)."""
    return bool(read(text).superlatives)


def extreme_directions(text: str) -> tuple[set[str], set[str]]:
    """The words of ``text`` that ask for the largest, and those that ask for the smallest: each written as a word of
    its own ("highest"; not "second-highest" or "lowest-calorie", which a reader that wants them splits first),
    "most" and "least" only as "the most", "the least" (also "the second-most")."""
    words = {s.word for s in read(text).extremes() if s.token == s.word or s.word in ("most", "least")}
    return words & MAX_WORDS, words & MIN_WORDS


def ordinal_extreme(text: str) -> int:
    """The place the first ordinal superlative asks for ("the second highest" -> 2, "3rd-largest" -> 3), else 1."""
    return next((s.place for s in read(text).superlatives if s.place != 1), 1)


def best_is_largest(text: str, header: str) -> bool | None:
    """Whether "best" (or "worst") in ``text`` asks for the largest value of the column ``header``: True for
    "the best average score", False for "the best time" or "the worst accuracy", None when the text says neither
    or both."""
    words = {s.word for s in read(text).superlatives}
    best, worst = "best" in words, "worst" in words
    if best == worst:
        return None
    return best != bool(LOWER_IS_BETTER.search(header))


# -- where a message writes a month a table's cells write as ISO dates ------------------------------------------------

def names_month(text: str, month: str) -> StatedMonth | None:
    """Where ``text`` first writes the month ``month`` ("february") in full or as its three letters, in any case but
    May's: only "May" names it, since "may" is also the verb ("Referrals may be higher in March …"). Read from the
    text's Reading, which also holds "Sept" (not read here)."""
    number = MONTHS[month]
    return next((m for m in read(text).months if m.month == number and m.text.lower() in (month, month[:3])
                 and (month != "may" or m.text == "May")), None)


def names_iso_month(text: str, cell: str) -> bool:
    """Whether ``text`` writes the month of the ISO date ``cell`` ("March" for "2024-03"; :func:`names_month`)."""
    month = iso_month_names([cell.strip()])
    return bool(month) and names_month(text, month[0]) is not None


# -- a message read against a table ------------------------------------------------------------------------------------
# The rows it names by their labels, as tools._claim_grounding.row_names_in read them: each label's words (as
# tools._cells.text_words gives them: case, accents and punctuation do not matter) as consecutive words of the
# message, the longest label first, so "Trinidad and Tobago" is one row even when "Tobago" is another. The text cells
# it writes whole that no other row holds in their column, as tools._claim_compare read them ("Moderna" names its
# row), or the month of an ISO month cell ("March" for "2024-03", where no month comes twice). The columns it names
# by their headers' words, as tools._grounding.named_words reads them (3 letters or more, in any of their forms).

@dataclass(frozen=True)
class RowMention:
    """A row the message names by its label (the label column's cell), where it writes it."""

    row: int
    label: str  # the cell as the table writes it
    start: int
    end: int


@dataclass(frozen=True)
class CellMention:
    """A row the message names by a text cell no other row holds in its column (or by the month of its ISO month
    cell: ``month`` True), where it writes it."""

    row: int
    column: int
    cell: str
    start: int
    end: int
    month: bool = False


@dataclass(frozen=True)
class ColumnMention:
    """A column the message names by its header's words (``words``, 3 letters or more), where it writes them."""

    column: int
    ident: str
    header: str
    words: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class TableReading:
    """What a message names of one table (:func:`read_against`)."""

    text: str
    rows: tuple[RowMention, ...]  # in the message's order
    other_words: tuple[str, ...]  # the message's words outside the row labels (tools._cells.text_words)
    cells: tuple[CellMention, ...]
    columns: tuple[ColumnMention, ...]

    def row_labels(self) -> list[str]:
        return [m.label for m in self.rows]


_MARKUP = re.compile(r"\[(?:BOLD|ITALIC|EMPTY|UNDERLINE|SMALL)\]")
_TEXT_WORD = re.compile(r"[^\W_]+|<=|>=|<|>")


def _normal_with_places(text: str) -> tuple[str, list[int]]:
    """``text`` as tools._cells.norm_text compares it (markup, accents and case dropped), spacing kept, with the
    place in ``text`` of each of its characters."""
    markup = {i for m in _MARKUP.finditer(text) for i in range(m.start(), m.end())}
    out, places = [], []
    for i, ch in enumerate(text):
        if i in markup:
            continue
        plain = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c)).casefold()
        plain = plain.replace("≤", "<=").replace("≥", ">=")  # signs of order are words (tools._cells.text_words)
        out.append(plain)
        places += [i] * len(plain)
    return "".join(out), places


def _words_with_spans(text: str) -> list[tuple[str, int, int]]:
    """The message's words as tools._cells.text_words gives them, each with its span in ``text``."""
    normal, places = _normal_with_places(text)
    found = [(m.group(0), places[m.start()], places[m.end() - 1] + 1) for m in _TEXT_WORD.finditer(normal)]
    if not found:  # a text of symbols only is its own word (tools._cells.text_words)
        return [(w, 0, len(text)) for w in text_words(text).split()]
    return found


def _row_mentions(text: str, typed: TypedTable) -> tuple[tuple[RowMention, ...], tuple[str, ...]]:
    words = _words_with_spans(text)
    label = typed.label_col
    if not label:
        return (), tuple(w for w, _, _ in words)
    tokens = [w for w, _, _ in words]
    taken = [False] * len(tokens)
    found: list[tuple[int, int, str]] = []
    names: dict[str, int] = {}
    for r in range(1, typed.table.n_rows + 1):
        names.setdefault(typed.text(r, label), r)
    for name in sorted(names, key=lambda n: (-len(n), n)):  # the longest first
        want = text_words(name).split()
        k = len(want)
        at = next((i for i in range(len(tokens) - k + 1) if k and tokens[i:i + k] == want
                   and not any(taken[i:i + k])), None)
        if at is not None:
            found.append((at, names[name], name))
            taken[at:at + k] = [True] * k
    rows = tuple(RowMention(row, name, words[at][1], words[at + len(text_words(name).split()) - 1][2])
                 for at, row, name in sorted(found, key=lambda f: (f[0], f[2])))
    return rows, tuple(t for t, used in zip(tokens, taken) if not used)


def _cell_mentions(text: str, typed: TypedTable) -> tuple[CellMention, ...]:
    normal, places = _normal_with_places(text)
    out = []
    for col in typed.columns:
        if col.numeric:
            continue
        cells = [norm_text(typed.text(r, col.index)) for r in range(1, typed.table.n_rows + 1)]
        months = iso_month_names(cells) or [""] * len(cells)
        for r, (cell, month) in enumerate(zip(cells, months), start=1):
            if len(cell) >= 3 and cells.count(cell) == 1 and any(ch.isalpha() for ch in cell):
                written = re.search(r"(?<!\w)" + r"\s+".join(map(re.escape, cell.split(" "))) + r"(?!\w)", normal)
                if written:
                    out.append(CellMention(r, col.index, typed.text(r, col.index), places[written.start()],
                                           places[written.end() - 1] + 1))
                    continue
            if month and (named := names_month(text, month)):
                out.append(CellMention(r, col.index, typed.text(r, col.index), named.start, named.end, month=True))
    return tuple(out)


def _column_mentions(text: str, typed: TypedTable) -> tuple[ColumnMention, ...]:
    have = content_words(text.replace("'s", " "))
    spans = [(m.group(0).casefold(), m.start(), m.end()) for m in WORD.finditer(text)]
    out = []
    for col in typed.columns:
        words = tuple(dict.fromkeys(w for w in content_words(col.name) if len(w) >= 3 and word_in(w, have)))
        if words:
            out.append(ColumnMention(col.index, col.ident, col.name, words, tuple(
                (start, end) for said, start, end in spans if any(word_in(w, [said]) for w in words))))
    return tuple(out)


_AGAINST: dict[int, tuple[weakref.ref, dict[str, TableReading]]] = {}
MAX_READINGS_PER_TABLE = 256


def read_against(text: str, typed: TypedTable) -> TableReading:
    """The reading of ``text`` against the table ``typed`` (section comment), parsed once per text and table."""
    entry = _AGAINST.get(id(typed))
    if entry is None or entry[0]() is not typed:
        key = id(typed)
        entry = _AGAINST[key] = (weakref.ref(typed, lambda _ref: _AGAINST.pop(key, None)), {})
    readings = entry[1]
    if text not in readings:
        if len(readings) >= MAX_READINGS_PER_TABLE:
            readings.pop(next(iter(readings)))
        rows, other_words = _row_mentions(text, typed)
        readings[text] = TableReading(text, rows, other_words, _cell_mentions(text, typed),
                                      _column_mentions(text, typed))
    return readings[text]
