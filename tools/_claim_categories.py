"""A refutation must rest on the rows the claim is about: the categories a claim names restrict it.

Found as a new user, with an uploaded HTML table of vaccine trials (columns Vaccine, Developer, Platform, …,
Efficacy (%)): "Is it true that every mRNA vaccine had an efficacy above 94%?" came back **Refuted** 3 votes to
2, by "all rows → whether every one has Efficacy (%) > 94", refuted by the viral-vector and protein vaccines.
The two mRNA rows (95.0 and 94.1) support the claim; the programs that kept them were outvoted by programs that
checked a claim about every vaccine.

"mRNA" is a *category* of the table: a cell value several rows share, but not every row. A claim that names a
category speaks of those rows, so a refuting program that neither filters that column nor checks the value has
refuted another claim. As with the claim's own values (:func:`tools._claim_grounding.vote_blocker`), only a
refutation is held to this: a check over more rows than the claim's that still holds ("every vaccine is above
60%" is true of the mRNA ones too) is left to vote, and so is one that names the category anywhere.

Only a program over *every* row, computing something of the whole set (every, only, a count, a sum, an
extreme), is held to this. Where the claim names one category and the program checks a stated value, it is not
only held: it is run again over that category's rows (:func:`restricted_to_category`), since its check is the
claim's and only its rows were wrong. On TabFact's tuning split, a first version that also held programs with
filters blocked refutations where the category was a reference, not a restriction ("… attendance equal to that of
arsenal", "… more episodes than amy sherman-palladino", whose name is also in another column the program
filtered): 2 of 32 claims lost, 1 gained.

Tried and not kept: listing a named category's column among "the columns that matter most" in the program prompt
(the column choice left it out for 19 of the first 40 tuning claims that name a category). Paired on those claims
(TabFact's tuning split, same seed, interleaved), 15 pairs: 9 right with the column added, 10 without (1 and 2 right
only one way). The losses were a category named as a reference ("… than amy sherman-palladino did", filtered as
writer = her) and a row's name that is also a category of another column ("Datia", a constituency and a district).

A value that every row holds restricts nothing, and a value held by one row is a row's name or a measurement,
which a program may rightly check rather than filter ("Moderna's vaccine had the highest efficacy": argmax,
check 'Moderna').
"""

from __future__ import annotations

import re

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from tools._cells import TypedTable, is_empty, norm_text, writes_whole
from tools._table_ops_model import Execution, Program, RowFilter

_LETTER = re.compile(r"[^\W\d_]")
# What a program computes over a set of rows, which a restriction the claim states changes.
_OVER_A_SET = ("every", "only", "count", "count_distinct", "sum", "avg", "min", "max")


def named_categories(typed: TypedTable, claim: str) -> dict[str, str]:
    """The categories the claim names: normalised cell value -> identifier of its (text) column.

    A category is a value of a non-numeric column held by at least two rows and not by all of them, with a letter
    in it and not a stop word, named in the claim as whole words ("mRNA vaccine" names 'mRNA'; "mRNAs" does not).
    """
    said = norm_text(claim)
    n_rows = typed.table.n_rows
    out: dict[str, str] = {}
    for col in typed.columns:
        if col.numeric or col.holds_dates:
            continue
        counts: dict[str, int] = {}
        for value in typed.table.column_values(col.index):
            v = norm_text(value)
            # "a" (a variant's name) is also the article: a word the claim says in passing restricts nothing
            if len(v) > 1 and not is_empty(v) and _LETTER.search(v) and v not in ENGLISH_STOP_WORDS:
                counts[v] = counts.get(v, 0) + 1
        for v, k in counts.items():
            if 2 <= k < n_rows and writes_whole(said, v):
                out.setdefault(v, col.ident)
    return out


# What a check over the category's rows alone still means: "every synthetic statin …", "3 synthetic statins", "the
# synthetic statins' average …". Not "only" (its filter names the rows it sets apart) nor distinct counts.
_NARROWABLE = ("every", "count", "sum", "avg", "min", "max")


def restricted_to_category(program: Program, typed: TypedTable, claim: str) -> Program | None:
    """The program with a filter to the one category the claim names, for a program over every row that ignores
    it and checks a stated value; None otherwise. Used on programs :func:`ignored_category_blocker` holds.

    Found as a new user: "Is it true that all synthetic statins lower LDL by more than 45%?" came back Refuted, 2
    votes of 5 (confidence 40%); the other 3 were "all rows → whether every one has LDL reduction (%) > 45", held
    from voting. Their check is the claim's; only the rows are wrong, so they are run over the category's rows.
    A check against another row ("above Arsenal's") may name a reference, not a restriction: left held.
    """
    chk = program.check
    named = named_categories(typed, claim)
    if chk is None or chk.against != "value" or program.filters or program.fn not in _NARROWABLE or len(named) != 1:
        return None
    [(value, column)] = named.items()
    if _mentions(program, value, column):
        return None
    col = typed.column(column)
    written = next((v for v in typed.table.column_values(col.index) if norm_text(v) == value), value)
    return program.model_copy(update={"filters": [RowFilter(column=column, op="=", value=written)]})


def _mentions(program: Program, value: str, column: str) -> bool:
    """Does the program restrict ``column`` or name ``value`` anywhere (a filter, the check, the rows it lists)?"""
    if any(f.column == column or value in norm_text(f.value) for f in program.filters):
        return True
    chk = program.check
    if chk is not None and (value in norm_text(chk.value) or any(value in norm_text(r) for r in chk.rows)):
        return True
    return column in (program.column, program.answer_column, program.per_column)


def ignored_category_blocker(program: Program, ex: Execution, typed: TypedTable, claim: str) -> str:
    """Why a refuting program that ignores a category the claim names must not vote, or ``""``."""
    if program.check is None or ex.truth is not False or program.filters or program.fn not in _OVER_A_SET:
        return ""
    for value, column in named_categories(typed, claim).items():
        if not _mentions(program, value, column):
            name = typed.column(column).name
            return (f"the claim is about the rows whose {name} is {value!r}, and the program refutes it over "
                    "rows it did not restrict to them")
    return ""
