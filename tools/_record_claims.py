"""Claims about one record: a table of fields and their values (a book's Title, Author, Publisher, Length), laid
out as two columns (field, value) or as one row under the fields' names.

Found on PubHealthTab's tuning split (its eval split), where 13 of the 195 tables are book records: "The book A
History of Mental Health Nursing was written by Nelson Thornes and published by Peter Nolan." (Author: Peter Nolan;
Publisher: Nelson Thornes, 2000; the roles swapped) and "The Medical Marijuana Law book was published in 2006 with
200 pages." (Ronin Publishing, 2007; 240 pages) were both supported by the programs, which read back the title or
compared cells that do not decide the claim. A field the claim states with a value the record does not hold refutes
it, in code:

- a role, by its verb or its name: "written by X", "authored by X", "X wrote", "X is the author", "the author of …
  is X", "published by X", "X published", "X was the publisher" (likewise edited, manufactured, developed,
  sponsored, produced, directed) is the field named for the role (Author(s), Writer; Publisher; Editor …); it
  refutes when a name the claim gives for it is not in the field's cell;
- a year, by the verb: "published in 2006", "In 2005, … published" is the year the role's field (or a Year,
  Date or Published field) writes; "approved in 2001" the year of a field named by the verb (Approved);
- a number with the unit a field's cell writes: "200 pages", "over 700 pages" against "240 pages".

Only refutations are decided here. A record that agrees on these fields may still differ on what else the claim
says (its title, its subject), which the programs and the judge read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from kb.table_model import Table
from tools._cells import cell_number, norm_text, text_words
from tools._claim_trend import TrendCheck
from tools._table_shape import lists_items
from tools._values import ORDER_OPS, ROUGH_SHARE
from tools.lang.lexicon import related

# Verbs and the stems of the field names they fill ("published" -> "Publisher", "Published by").
_ROLE_STEMS = {"written": ("author", "writer", "written"), "wrote": ("author", "writer", "written"),
               "authored": ("author",), "published": ("publisher", "published"), "edited": ("editor", "edited"),
               "manufactured": ("manufacturer", "manufactured"), "developed": ("developer", "developed"),
               "sponsored": ("sponsor",), "produced": ("producer", "produced"), "directed": ("director",)}
_ROLE_NOUNS = {"author": "written", "writer": "written", "publisher": "published", "editor": "edited",
               "manufacturer": "manufactured", "developer": "developed", "sponsor": "sponsored",
               "producer": "produced", "director": "directed"}
_VERBS = "|".join(_ROLE_STEMS)
_NOUNS = "|".join(_ROLE_NOUNS)
# A name: capitalised words, initials ("D. A. Brading"), joined by "&", "of", "and" ("Johnson & Johnson",
# "Peter Smith and Nelson Johnson"). Lower-case words end it.
_WORD = r"(?:[A-Z][\w'’-]*\.?|[A-Z]\.)"
# Each repeat takes a word, or a joining word with the word after it, so no text splits two ways (no backtracking
# blow-up), and the patterns stay case-sensitive around it: under re.I every word would be a name's.
_NAME = rf"{_WORD}(?:\s+(?:&|of|and|de|van|von|la|le)\s+{_WORD}|\s+{_WORD})*"
_BY_VERB = re.compile(rf"\b(?P<verb>{_VERBS})\s+by\s+(?P<name>{_NAME})")
# "X wrote", "X published": every role verb but the passive "written"
_ACTIVE_VERBS = "|".join(v for v in _ROLE_STEMS if v != "written")
_NAME_VERB = re.compile(rf"(?P<name>{_NAME})\s+(?P<verb>{_ACTIVE_VERBS})\b")
_NAME_IS_ROLE = re.compile(rf"(?P<name>{_NAME})\s+(?:is|was)\s+(?i:the)\s+(?P<noun>(?i:{_NOUNS}))s?\b")
_ROLE_IS_NAME = re.compile(rf"\b(?i:the)\s+(?P<noun>(?i:{_NOUNS}))s?\s+(?:of\s+.{{1,120}}?\s+)?(?:is|was|are|were)\s+"
                           rf"(?P<name>{_NAME})")
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
# "published in 2006", "approved on 3 May 2004", "In 2005, … published": a verb and the year it happened
_YEAR_VERB = re.compile(r"\b(?P<verb>[a-z]{3,}ed)\s+(?:in|on)\s+(?:\w+\s+){0,2}?(?P<year>1[5-9]\d\d|20\d\d)\b"
                        rf"|\bin\s+(?P<year2>1[5-9]\d\d|20\d\d)\b[^.]{{0,80}}?\b(?P<verb2>{_VERBS})\b", re.I)
_YEAR_FIELDS = ("year", "date", "published", "publication")
_AMOUNT = re.compile(r"(?P<bound>\b(?:over|more than|at least|under|less than|fewer than|about|around|"
                     r"approximately|nearly|almost)\s+)?(?P<n>\d[\d,]*(?:\.\d+)?)[\s-]*(?P<unit>[a-z]+)\b", re.I)
_CELL_AMOUNT = re.compile(r"(?P<n>\d[\d,]*(?:\.\d+)?)\s*(?P<unit>[a-z]+)\b", re.I)
_NOT_A_NAME = {"the", "a", "an", "this", "that", "it", "he", "she", "they", "book", "in", "on", "and"}


@dataclass(frozen=True)
class Field:
    name: str
    value: str
    cells: tuple[tuple[int, int], tuple[int, int] | None]  # the value's cell, and the name's cell where it has one


def record_fields(table: Table) -> list[Field] | None:
    """The record's fields, or None when the table is not one record: two columns whose first holds distinct
    short field names (not items of one kind: "Stage I", "Stage II"; a calendar's days), or one row under the
    fields' names."""
    if table.n_cols == 2 and table.n_rows >= 3:
        names = [" ".join(str(r[0]).split()) for r in table.rows]
        if len({norm_text(n) for n in names}) == len(names) and all(
                n and len(n.split()) <= 4 and cell_number(n) is None for n in names) and not lists_items(names):
            return [Field(n, " ".join(str(r[1]).split()), ((i, 2), (i, 1)))
                    for i, (n, r) in enumerate(zip(names, table.rows), start=1)]
    if table.n_rows == 1 and table.n_cols >= 3:
        return [Field(" ".join(str(c).split()), " ".join(str(v).split()), ((1, j), None))
                for j, (c, v) in enumerate(zip(table.columns, table.rows[0]), start=1)]
    return None


def _role_field(fields: list[Field], verb: str) -> Field | None:
    """The field a verb fills: by the role's names ("written" -> Author), else a field named by a form of the verb
    itself ("approved" -> Approved or First approved, "released" -> Release date)."""
    stems = _ROLE_STEMS.get(verb.lower())
    if stems is not None:  # the role's own name first: "Publisher" before "Published" (a date)
        for stem in stems:
            found = [f for f in fields if (words := norm_text(f.name).split()) and words[0].startswith(stem)]
            if found:
                return found[0] if len(found) == 1 else None
        return None
    else:
        found = [f for f in fields if any(related(w, verb.lower()) for w in norm_text(f.name).split())]
    return found[0] if len(found) == 1 else None


def _names(phrase: str) -> list[str]:
    """The names in "Peter Smith and Nelson Johnson" (one name keeps "&": "Johnson & Johnson")."""
    out = []
    for part in re.split(r"\s+and\s+|,\s*", phrase):
        words = [w for w in part.split() if w.lower() not in _NOT_A_NAME]
        if words and len(words[-1]) > 2:  # the sentence's full stop, not an initial's
            words[-1] = words[-1].rstrip(".")
        if words:
            out.append(" ".join(words))
    return out


def _tokens(text: str) -> set[str]:
    return {t for t in text_words(text).split() if len(t) > 1}


def _holds_name(cell: str, name: str) -> bool:
    """Every word of the name (initials aside) is a word of the cell."""
    words = _tokens(name)
    return bool(words) and words <= _tokens(cell)


@dataclass(frozen=True)
class _Miss:
    field: Field
    reason: str


def _role_misses(claim: str, fields: list[Field]) -> list[_Miss]:
    stated: list[tuple[str, str]] = []  # (verb, name phrase)
    for m in _BY_VERB.finditer(claim):
        stated.append((m.group("verb"), m.group("name")))
    for m in _NAME_VERB.finditer(claim):
        stated.append((m.group("verb"), m.group("name")))
    for pattern in (_NAME_IS_ROLE, _ROLE_IS_NAME):
        for m in pattern.finditer(claim):
            stated.append((_ROLE_NOUNS[m.group("noun").lower()], m.group("name")))
    misses = []
    for verb, phrase in stated:
        field = _role_field(fields, verb)
        if field is None:
            continue
        for name in _names(phrase):
            if not _tokens(name) or _holds_name(field.value, name):
                continue
            elsewhere = [f for f in fields if f is not field and _holds_name(f.value, name)]
            if any(norm_text(f.name).startswith(("title", "name")) for f in elsewhere):
                continue  # "Sacred Work published in 2005 …": the record's own title, not who published it
            if elsewhere == [] and _holds_name(" ".join(f.value for f in fields), name):
                continue
            where = f" ({name} is its {elsewhere[0].name}: {elsewhere[0].value!r})" if elsewhere else ""
            misses.append(_Miss(field, f"its {field.name} is {field.value!r}, not {name}{where}"))
    return misses


def _year_misses(claim: str, fields: list[Field]) -> list[_Miss]:
    misses = []
    for m in _YEAR_VERB.finditer(claim):
        verb, year = m.group("verb") or m.group("verb2"), m.group("year") or m.group("year2")
        field = _role_field(fields, verb)
        if field is not None and _YEAR.search(field.value):
            candidates = [field]
        elif verb.lower() in _ROLE_STEMS:  # "published in 2006" over a record whose year has a field of its own
            candidates = [f for f in fields if norm_text(f.name).startswith(_YEAR_FIELDS) and _YEAR.search(f.value)]
        else:  # other verbs need a field of their own
            candidates = []
        if len(candidates) != 1:
            continue
        years = set(_YEAR.findall(candidates[0].value))
        if len(years) == 1 and year not in years:
            misses.append(_Miss(candidates[0], f"its {candidates[0].name} is {candidates[0].value!r}, not {year}"))
    return misses


def _holds(written: float, op: str, stated: float, decimals: int = 0) -> bool:
    if op in ORDER_OPS:
        return ORDER_OPS[op](written, stated)
    if op == "~":
        return abs(written - stated) <= ROUGH_SHARE * stated  # "about 250 pages": within 5%
    # "a population of 12 million" for "12.3 million": a number written to fewer places is the cell rounded
    return written == stated or round(written, decimals) == stated


_BOUND_OP = {"over": ">", "more than": ">", "at least": ">=", "under": "<", "less than": "<", "fewer than": "<",
             "about": "~", "around": "~", "approximately": "~", "nearly": "~", "almost": "~"}


def _amount_misses(claim: str, fields: list[Field]) -> list[_Miss]:
    misses = []
    amounts = [m for m in _AMOUNT.finditer(claim) if len(m.group("unit")) >= 2
               and m.group("unit").lower() not in ENGLISH_STOP_WORDS and not _YEAR.fullmatch(m.group("n"))]
    for m in amounts:
        unit = m.group("unit").lower().rstrip("s")
        if sum(o.group("unit").lower().rstrip("s") == unit for o in amounts) > 1:
            continue  # "500 mg three times a day, 1500 mg in all": which amount is the field's is not said
        holding = [(f, c) for f in fields for c in _CELL_AMOUNT.finditer(f.value)
                   if c.group("unit").lower().rstrip("s") == unit]
        if len(holding) != 1:
            continue
        field, cell = holding[0]
        stated, written = cell_number(m.group("n")), cell_number(cell.group("n"))
        if stated is None or written is None:
            continue
        bound = " ".join((m.group("bound") or "").lower().split())
        places = len(m.group("n").partition(".")[2])
        if not _holds(written, _BOUND_OP.get(bound, "="), stated, places):
            said = f"{bound} {m.group('n')} {m.group('unit')}".strip()
            misses.append(_Miss(field, f"its {field.name} is {field.value!r}, not {said}"))
    return misses


def record_check(claim: str, table: Table) -> TrendCheck | None:
    """REFUTES when the claim gives a field of a one-record table a value the record does not hold (module
    docstring); None otherwise (the claim is left to the programs)."""
    fields = record_fields(table)
    if fields is None:
        return None
    misses = _role_misses(claim, fields) + _year_misses(claim, fields) + _amount_misses(claim, fields)
    if not misses:
        return None
    cells: list[tuple[int, int]] = []
    for miss in misses:
        value_cell, name_cell = miss.field.cells
        cells += [c for c in (name_cell, value_cell) if c is not None and c not in cells]
    said = "; ".join(dict.fromkeys(m.reason for m in misses))
    return TrendCheck("REFUTES", cells, f"The table is one record: {said}, so the table refutes the claim.")
