"""A table program in words, with the table's real column names: the step the user reads.

Apart from the executor (:mod:`tools._table_ops`) because saying a program is not running it: the wording can
change without touching what a program computes, and the checks quote values the same way (:func:`quoted`).
"""

from __future__ import annotations

import re

from tools._cells import TypedTable
from tools._table_ops_model import Program
from tools._table_rows import filter_groups
from tools.lang.lexicon import ORDINAL_WORDS

_BY_SHARE = " (by the percentages the cells write)"
_PLAIN_NUMBER = re.compile(r"[−-]?\d[\d,]*(?:\.\d+)?%?")

# "second", "third", …: the words of tools.lang.lexicon' ordinals, by place
ORDINALS = {i: w for w, i in ORDINAL_WORDS.items() if w.isalpha()}


def quoted(value: str) -> str:
    """A program's value as the user reads it: a number as written ("Efficacy (%) > 94"), text in quotes
    ("Platform = 'mRNA'"). Seen as a new user: "whether every one has Efficacy (%) > '94'" read as a text match."""
    return value if _PLAIN_NUMBER.fullmatch(value.strip()) else repr(value)


def describe(program: Program, typed: TypedTable, *, any_of: bool = True) -> str:
    """The program in words with the real column names (shown to the user). ``any_of``: several '=' filters on one
    column are said as "is one of" (a question's reading); False for a claim's, which the executor refuses, so its
    step does not say "drug is one of 'A', 'B'" beside "two filters ask one column for two different values"."""
    def name(ident: str | None) -> str:
        try:
            return typed.column(ident or "").name
        except KeyError:
            return str(ident)

    # Several '=' on one column are a question's "any of": the executor's groups, said as such.
    where = " and ".join(f"{name(g[0].column)} is one of {', '.join(repr(f.value) for f in g)}" if len(g) > 1
                         else f"{name(g[0].column)} {g[0].op} {name(g[0].than_column)}{_BY_SHARE * g[0].by_share}"
                         + (f" or {name(g[0].alternative.column)} {g[0].alternative.op} "
                            f"{name(g[0].alternative.than_column)}" if g[0].alternative is not None else "")
                         if g[0].than_column
                         else f"{name(g[0].column)} {g[0].op} {quoted(g[0].value)}"
                         + (f" or {name(g[0].alternative.column)} {g[0].alternative.op} "
                            f"{quoted(g[0].alternative.value)}" if g[0].alternative is not None else "")
                         for g in (filter_groups(program, union_same_column=True) if any_of
                                   else [[f] for f in program.filters]))
    rows = f"rows where {where}" if where else "all rows"
    if typed.scope:
        previous = f"the rows asked about ({rows_in_words(typed, list(typed.scope))})"  # a follow-up's, a choice's
        rows = f"of {previous}, those where {where}" if where else previous
    fn = program.fn
    measure = name(program.column) + (f" per {name(program.per_column)}" if program.per_column else "") \
        + (f" minus {name(program.minus_column)}" if program.minus_column else "")
    if program.per_column and program.per_column == program.minus_column:
        measure = f"relative change from {name(program.minus_column)} to {name(program.column)}"
    nth = f"{ORDINALS[program.nth]} " if program.nth > 1 else ""
    dated = typed.is_dated(program.column)
    duration = dated and bool(program.minus_column)  # in days: the most of them, not the latest
    if duration:
        measure, dated = f"days from {name(program.minus_column)} to {name(program.column)}", False
    larger, smaller = ("latest", "earliest") if dated else ("most", "fewest") if duration else ("largest", "smallest")
    if program.across:  # one row's cells across columns (tools._across_columns)
        span = f"{name(program.across[0])} to {name(program.across[-1])}"
        what = (f"the column ({span}) with the {'largest' if fn == 'argmax' else 'smallest'} value"
                if fn in ("argmax", "argmin") else
                f"the {({'avg': 'mean', 'sum': 'total'}).get(fn, fn)} of its cells from {span}")
    elif fn in ("argmax", "argmin") and program.group == "mean":
        what = f"the {name(program.answer_column)} whose rows have the {nth}" \
               f"{'largest' if fn == 'argmax' else 'smallest'} average {measure}"
    elif fn in ("argmax", "argmin") and program.group:
        what = f"the {name(program.answer_column)} whose rows add up to the {nth}" \
               f"{'largest' if fn == 'argmax' else 'smallest'} total {measure}"
    elif fn in ("argmax", "argmin"):
        what = f"{name(program.answer_column)} of the row with the {nth}" \
               f"{larger if fn == 'argmax' else smaller} {measure}"
    elif (nth or dated) and fn in ("max", "min"):
        what = f"the {nth}{larger if fn == 'max' else smaller} {measure}"
    elif program.per_column or program.minus_column:
        what = f"{fn} of {measure}"
    elif fn == "value":
        what = f"{name(program.column)}"
    elif fn == "share" and program.column in typed.idents \
            and not typed.is_numeric(program.column):
        what = "the share of the table's rows"
    elif fn == "share":
        what = f"the share of the total {name(program.column)}"
    elif fn == "most_common" and program.more_rows_than is not None:
        n = program.more_rows_than
        what = f"each {name(program.column)} found in more than {n} row{'s' * (n != 1)}"
    elif fn == "most_common":
        what = f"the {name(program.column)} that occurs in most rows"
    elif fn in ("next_row", "previous_row"):
        what = f"{name(program.column)} of the row {'after' if fn == 'next_row' else 'before'} it"
    elif fn == "difference":
        what = f"the difference between the two rows' {name(program.column)}"
    elif fn == "count":
        what = "the number of rows"
    elif fn == "count_distinct":
        what = f"the number of different {name(program.column)}"
    elif fn in ("every", "only") and program.check is not None:
        rhs = name(program.check.value) if program.check.against == "column" else quoted(program.check.value)
        cond = f"{name(program.column)} {program.check.op} {rhs}"
        what = (f"whether every one has {cond}" if fn == "every"
                else f"whether they are the only rows with {cond}")
    else:
        what = f"{fn} of {name(program.column)}"
    text = f"{rows} → {what}"
    if program.check is not None and fn not in ("every", "only"):
        chk = program.check
        rhs = (f"{name(program.column)} of {chk.value!r}" if chk.against == "row"
               else f"{name(chk.value)} of the same row{_BY_SHARE * chk.by_share}" if chk.against == "column"
               else f"the row with the {'largest' if chk.extreme == 'max' else 'smallest'} {name(chk.value)}"
               if chk.against == "extreme"
               else f"{name(program.column)} of {' and '.join(repr(r) for r in chk.rows)} combined"
               if chk.against == "rows"
               else f"{'the total' if fn == 'sum' else 'the mean'} of {name(program.column)} where "
                    f"{name(chk.group_column or '')} = {quoted(chk.value)}" if chk.against == "group"
               else f"the total of {name(program.column)}"
               if chk.against == "total" else quoted(chk.value))
        if chk.factor:
            rhs = f"{chk.factor:g} × {rhs}"
        text += f"; check: result {program.check.op} {rhs}"
    return text


def rows_in_words(typed: TypedTable, rows: list[int], shown: int = 5) -> str:
    """"Ontario, Alberta and 3 more": the rows' names, the first few."""
    more = f" and {len(rows) - shown} more" if len(rows) > shown else ""
    return ", ".join(typed.row_name(r) for r in rows[:shown]) + more
