"""A claim comparing two groups of columns in one row: "Drug A more than halved the rate of stroke compared with
placebo", over a table whose header groups each arm's columns ("Drug A (n=412) Events", "Drug A (n=412) %",
"Placebo (n=405) Events", "Placebo (n=405) %").

Found as a new user, on a trial's outcome table uploaded as HTML with a two-row header: the grammar's checks
compare a row with a value or with another row, so no program could compare the two arms in the stroke row; the
one that ran compared stroke with cardiovascular death and refuted the claim (2.9% against 6.2%: it holds).

The claim's form settles the program when:

- two numeric columns share a sub-header (the words after the group's name: "Events", "%") and differ in a group
  name the claim writes whole ("Drug A", "placebo"; a parenthesised sample size is not part of the name), and
  exactly two such groups are written;
- the measure is the sub-header the claim's words ask for: a rate, risk or percentage reads "%" (or "rate"), a
  number of events or cases the count; otherwise the one the program read, or the only one;
- the row is the one the claim names, else the one the program selects.

Without such groups, two whole number columns are the arms when the claim names each by words of its header that
no other number column has ("20 mg" of "Drug 20 mg (n=415)"), the second right after "than" or "compared with"
(:func:`_whole_column_arms`).

Where both arms' cells write a count with its percentage ("41 (4.1%)") the percentages are compared, unless the claim
asks for the counts ("more patients", "the number of"): arms differ in size (tools._table_shape.by_share).

The check compares the group the claim names first with the one it names second, by the multiple or direction
the claim states: "more than halved" is below half, "halved" and "nearly halved" within 15% of half, "doubled"
likewise, "twice as high" and "20% lower than" as :mod:`tools._claim_multiples` reads them, "reduced" or "lower"
below, "increased" or "higher" above. A claim that states none of these is left to the programs.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable, norm_text
from tools._claim_multiples import _BOUND, ROUGH_MULTIPLE_TOLERANCE, stated_scale
from tools._grounding import row_stated
from tools._table_ops import selected_rows
from tools._table_ops_model import VALUE_MAX_CHARS, Check, Program, RowFilter
from tools._table_shape import by_share
from tools.lang.lexicon import ROUGH_WORDS

_TOKEN = re.compile(r"[^\W_]+|%")
_PARENTHESISED = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_RATE_ASKED = re.compile(r"\b(?:rates?|risks?|percentages?|per ?cent|proportions?|shares?|incidence|prevalence)\b|%",
                         re.I)
_COUNT_ASKED = re.compile(r"\b(?:events?|cases?|number|counts?|patients|people|participants)\b", re.I)
_RATE_SUFFIX = {"%", "percent", "pct", "rate", "risk"}
_COUNT_SUFFIX = {"events", "n", "no", "number", "cases", "count", "patients"}
_VERB_FACTOR = {"halved": 0.5, "doubled": 2.0, "tripled": 3.0, "trebled": 3.0, "quadrupled": 4.0}
_SCALED = re.compile(_BOUND + r"\b(?P<verb>halved|doubled|tripled|trebled|quadrupled)\b", re.I)
_LOWER = re.compile(r"\b(?:reduced|reduces|reduce|reducing|lowered|lowers|lower|less|fewer|decreased|decreases|"
                    r"cut|cuts|smaller|below)\b", re.I)
# "bigger" found on PubHealthTab's tuning split: "Liberia has a bigger population than guinea", a table with a column
# per country, was supported by programs that compared Guinea with Liberia
_HIGHER = re.compile(r"\b(?:increased|increases|increase|raised|raises|higher|more|greater|larger|bigger|above)\b",
                     re.I)
_OVER = {"more than", "over", "above", "at least"}
_ROUGH = set(ROUGH_WORDS)


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(norm_text(_PARENTHESISED.sub(" ", text)))


def _written_at(phrase: list[str], words: list[str]) -> int | None:
    """Where ``words`` (the claim's) holds ``phrase`` whole and in order, or None."""
    n = len(phrase)
    return next((i for i in range(len(words) - n + 1) if words[i:i + n] == phrase), None)


def arm_columns(typed: TypedTable, claim: str, read: str = "") -> tuple[str, str] | None:
    """(the first-named group's column, the second's), identifiers of two numeric columns the claim compares
    within one row, or None (module docstring). ``read``: the column the program read, which picks the measure
    when the claim's words do not."""
    words = _tokens(claim)
    label = typed.label_col
    by_suffix: dict[tuple[str, ...], dict[tuple[str, ...], str]] = {}
    for col in typed.columns:
        if not col.numeric or col.index == label:
            continue
        tokens = _tokens(col.name)
        for k in range(1, len(tokens)):
            by_suffix.setdefault(tuple(tokens[-k:]), {})[tuple(tokens[:-k])] = col.ident
    # per sub-header, the groups the claim writes, in the order it writes them
    named: dict[tuple[str, ...], list[tuple[int, str]]] = {}
    for suffix, groups in by_suffix.items():
        if len(groups) < 2:
            continue
        at = sorted((pos, ident) for prefix, ident in groups.items()
                    if (pos := _written_at(list(prefix), words)) is not None)
        if len(at) == 2 and at[0][0] != at[1][0]:
            named[suffix] = at
    if not named:
        return _whole_column_arms(typed, words)
    measures = list(named)
    if _RATE_ASKED.search(claim):
        measures = [s for s in measures if s[-1] in _RATE_SUFFIX]
    elif _COUNT_ASKED.search(claim):
        measures = [s for s in measures if s[-1] in _COUNT_SUFFIX]
    if len(measures) > 1 and read:
        measures = [s for s in measures if read in (ident for _, ident in named[s])]
    if len(measures) != 1:
        return None
    (_, first), (_, second) = named[measures[0]]
    return first, second


_BETWEEN = re.compile(r"\b(?:than|versus|vs|compared)\b")
_LINKING = {"on", "in", "the", "for", "with", "to", "at", "among", "of", "those", "that", "a", "an"}


def _whole_column_arms(typed: TypedTable, words: list[str]) -> tuple[str, str] | None:
    """Two number columns that are arms by themselves ("Drug 20 mg (n=415)", "Drug 10 mg (n=409)"), each named by
    words of its header that no other number column's header has ("20 mg", "10 mg"), with "than", "versus" or
    "compared" between the two: "Dizziness was more common on 20 mg than on 10 mg" (found as a new user: three
    programs counted the Dizziness row and supported the claim by chance)."""
    label = typed.label_col
    numeric = [col for col in typed.columns if col.numeric and col.index != label]
    headers = {col.ident: _tokens(col.name) for col in numeric}
    at = []
    for col in numeric:
        tokens = headers[col.ident]
        others = {t for ident, ts in headers.items() if ident != col.ident for t in ts}
        spans = [(i, j) for i in range(len(tokens)) for j in range(i + 1, len(tokens) + 1)
                 if any(t not in others for t in tokens[i:j])]
        found = sorted((pos, i - j) for i, j in spans if (pos := _written_at(tokens[i:j], words)) is not None)
        if found:
            at.append((found[0][0], -found[0][1], col.ident))
    if len(at) != 2:
        return None
    (first, first_len, first_col), (second, second_len, second_col) = sorted(at)
    between = words[first + first_len:second]
    if first + first_len > second or not _BETWEEN.search(" ".join(between)) or "not" in words[:second]:
        return None
    # the second arm follows the comparing word: "than on 10 mg", "compared with placebo", not "lower Sim than M0
    # … under similar Acc" (SciTab)
    last = max(i for i, w in enumerate(between) if _BETWEEN.fullmatch(w))
    if len(between) - last - 1 > 2 or any(w not in _LINKING for w in between[last + 1:]):
        return None
    # Not arms: a number after "than" is a bound ("more than 1 bronze"), and a phrase a row label writes names
    # that row ("minimizing DCE" over a DCE column)
    if any(w == "than" and nxt[:1].isdigit() for w, nxt in zip(words[first:], words[first + 1:])):
        return None
    labels = {t for r in range(1, typed.table.n_rows + 1) for t in _tokens(typed.text(r, label))} if label else set()
    if any(set(words[p:p + n]) <= labels for p, n in ((first, first_len), (second, second_len))):
        return None
    return first_col, second_col


def arms_compared(typed: TypedTable, text: str) -> tuple[str, str, str] | None:
    """(the first-named arm's column, the second's, "<" or ">") for two whole columns the text compares by
    direction alone ("more common on placebo than on the active drug"), or None: no such pair, or a multiple
    ("twice as common"), which a row filter cannot say."""
    arms = _whole_column_arms(typed, _tokens(text))
    compared = _stated_comparison(text) if arms is not None else None
    if arms is None or compared is None or compared[1] is not None:
        return None
    return arms[0], arms[1], compared[0]


def _stated_comparison(claim: str) -> tuple[str, float | None, float] | None:
    """(op, factor, relative tolerance) of the first group against the second, or None (module docstring)."""
    m = _SCALED.search(claim)
    if m:
        factor = _VERB_FACTOR[m.group("verb").lower()]
        bound = (m.group("bound") or "").lower()
        if bound in _OVER:  # "more than halved": below half; "more than doubled": above twice
            return ("<" if factor < 1 else ">"), factor, 0.0
        if bound and bound not in _ROUGH:
            return None
        return "=", factor, ROUGH_MULTIPLE_TOLERANCE
    scale = stated_scale(claim)
    if scale is not None:
        factor, op, tolerance = scale
        return op, factor, tolerance
    lower, higher = bool(_LOWER.search(claim)), bool(_HIGHER.search(claim))
    if lower == higher:
        return None
    return ("<" if lower else ">"), None, 0.0


def read_arm_comparison(program: Program, typed: TypedTable, claim: str) -> Program:
    """``program`` read as the claim's comparison of two column groups within one row (module docstring)."""
    label = typed.label_col
    if not label:
        return program
    arms = arm_columns(typed, claim, program.column)
    if arms is None:
        return program
    compared = _stated_comparison(claim)
    if compared is None:
        return program
    row = row_stated(typed, claim)
    if row is None:  # the claim names no one row: the one the program selects, if it selects one
        rows = selected_rows(program, typed) if program.filters else None
        row = rows[0] if rows is not None and len(rows) == 1 else None
    if row is None:
        return program
    name = typed.text(row, label).strip()
    if not name or len(name) > VALUE_MAX_CHARS:
        return program
    op, factor, tolerance = compared
    ident = typed.columns[label - 1].ident
    return Program(filters=[RowFilter(column=ident, op="=", value=name)], fn="value", column=arms[0],
                   check=Check(op=op, against="column", value=arms[1], factor=factor, relative_tolerance=tolerance,
                               by_share=by_share(typed, arms[0], arms[1], claim)))
