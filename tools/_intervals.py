"""Intervals and ranges a claim or question reads: whether an interval includes or excludes a value, what a range of
values allows, and how much of a claim a table talks about (the coverage that sends a claim to NOT ENOUGH INFO).

Each section below opens with a comment that says what it reads and the case it came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kb.tables import Table
from tools._cells import TypedTable, cell_number, format_value, iso_month_match
from tools._table_ops import selected_rows
from tools._table_ops_model import MAX_FILTERS, Check, Note, Program, RowFilter
from tools._table_shape import INTERVAL_HEADER, LOWER_BOUND, UPPER_BOUND
from tools.lang.lexicon import spelled_out
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
