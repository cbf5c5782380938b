"""Claims of statistical significance, settled by the p-value the table gives for the row the claim names; and
questions about the rows that were significant (:func:`add_significance_filter`).

Found as a new user: over a trial table with a "p-value" column, "Is it true that Drug B's effect was
statistically significant?" came back NOT ENOUGH INFO ("the table mentions only 1 of the claim's 4 content
words"), although the table answers it (p = 0.37). The small model does not turn "significant" into a
comparison with 0.05, and the claim's form settles the check, so code does:

- the claim says (statistically) significant, or negates it ("not significant", "non-significant", "failed to
  reach significance");
- the table has one p-value column (a header such as "p", "P value", "p-value (two-sided)");
- the claim names exactly one row (its label, as whole words; a longer name wins over one it contains, so
  "Drug A + B" is not also "Drug A");
- and says nothing else (words of the table's headers name what was measured, and may be said): "Drug A
  significantly reduced deaths" also states a direction, which a p-value does not check (it would support
  "significantly increased" alike), so such a claim is left to the programs.

The threshold is the one the claim states ("at the 1% level", "p < 0.01"), else 0.05. A cell "<0.001" is below
0.001; "NS" or "n.s." is not significant. Anything else (no such column, no or several named rows, an unreadable
cell) leaves the claim to the programs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kb.table_model import Table
from tools._cells import TypedTable, cell_number, format_value, is_empty, norm_text
from tools._table_ops_model import MAX_FILTERS, Program, RowFilter

DEFAULT_ALPHA = 0.05
_SIGNIFICANT = re.compile(r"\b(?:statistically\s+)?(?:significant(?:ly)?|significance)\b", re.I)
_NEGATED = re.compile(
    r"\b(?:not|no|non|never|nor|failed\s+to\s+(?:reach|achieve|show)|did\s+not\s+(?:reach|achieve|show))"
    r"[\s-]+(?:\w+[\s-]+){0,2}?(?:statistically\s+)?significan|\b(?:insignificant|nonsignificant)\b", re.I)
_P_HEADER = re.compile(r"^\s*p(?:[\s-]*values?|[\s-]*val\.?)?\s*(?:\([^)]*\))?\s*$|\bp[\s-]?values?\b", re.I)
_STATED_ALPHA = re.compile(
    r"\bp\s*(?:<|≤|<=)\s*(0?\.\d+)|\bat\s+the\s+(\d+(?:\.\d+)?)\s*%\s+level|\balpha\s*(?:=|of)\s*(0?\.\d+)", re.I)
_BELOW = re.compile(r"^\s*[<≤]\s*=?\s*(0?\.\d+|\d(?:\.\d+)?(?:e-?\d+)?)\s*$", re.I)
_NOT_SIGNIFICANT_CELL = re.compile(r"^\s*(?:n\.?\s?s\.?|not\s+significant)\s*$", re.I)
# Words a claim of bare (non-)significance may use besides the row's name; any other word states something more.
_ONLY_SIGNIFICANCE = frozenset("""is it true that the a an was were be been is are its their of for in on at to s
effect effects result results difference differences association finding findings outcome outcomes
statistically statistical significant significantly significance insignificant nonsignificant non not no did
does do had has have reach reached achieve achieved show showed shown failed fail level alpha p value""".split())


@dataclass(frozen=True)
class SignificanceCheck:
    verdict: str  # "SUPPORTS" | "REFUTES"
    row: int  # 1-based data row
    label_col: int  # 1-based
    p_col: int  # 1-based
    reason: str

    @property
    def cells(self) -> list[tuple[int, int]]:
        return [(self.row, self.label_col), (self.row, self.p_col)]


def _mentions_significance(text: str) -> bool:
    return bool(_SIGNIFICANT.search(text) or re.search(r"\b(?:in|non)significant\b", text, re.I))


def _alpha(claim: str) -> float:
    m = _STATED_ALPHA.search(claim)
    if not m:
        return DEFAULT_ALPHA
    if m.group(2):
        return float(m.group(2)) / 100
    return float(m.group(1) or m.group(3))


def _p_column(table: Table) -> int | None:
    hits = [c for c, name in enumerate(table.columns, 1) if _P_HEADER.search(name)]
    return hits[0] if len(hits) == 1 else None


def _says_only_significance(claim: str, name: str, headers: list[str] = ()) -> bool:
    """Whether the claim says nothing but (non-)significance of the named row. The table's own header words name
    what was measured, not a further finding: "The treatment effect was statistically significant in women" over
    "Events (treatment)" (found as a new user: "treatment" left it to the programs, which compared the p-value
    with itself and supported it at p = 0.08)."""
    rest = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", " ", norm_text(claim), count=1)
    allowed = _ONLY_SIGNIFICANCE | {w for h in headers for w in re.findall(r"[^\W\d_]+", norm_text(h))}
    return all(w in allowed for w in re.findall(r"[^\W\d_]+", rest))


def _named_row(table: Table, claim: str) -> int | None:
    label = table.row_label_col
    if not label:
        return None
    said = norm_text(claim)
    named = {}
    for r in range(1, table.n_rows + 1):
        name = norm_text(table.cell(r, label))
        if len(name) >= 2 and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", said):
            named[r] = name
    longest = [r for r, n in named.items() if not any(n != m and n in m for m in named.values())]
    return longest[0] if len(longest) == 1 else None


def _significant(cell: str, alpha: float) -> tuple[bool, str] | None:
    """(below alpha, the p as the reason writes it), or None when the cell says neither."""
    if _NOT_SIGNIFICANT_CELL.match(cell):
        return False, "not significant (NS)"
    m = _BELOW.match(cell)
    if m:
        bound = float(m.group(1))
        return (True, f"below {format_value(bound)}") if bound <= alpha else None
    p = cell_number(cell)
    if p is None or not 0 <= p <= 1:
        return None
    return p < alpha, format_value(p)


def significance_check(claim: str, table: Table) -> SignificanceCheck | None:
    """The verdict on a claim of (non-)significance from the named row's p-value, or None (module docstring)."""
    if not _mentions_significance(claim):
        return None
    p_col = _p_column(table)
    row = _named_row(table, claim) if p_col else None
    if p_col is None or row is None:
        return None
    if not _says_only_significance(claim, norm_text(table.cell(row, table.row_label_col)), table.columns):
        return None
    cell = table.cell(row, p_col)
    if is_empty(cell):
        return None
    alpha = _alpha(claim)
    read = _significant(cell, alpha)
    if read is None:
        return None
    below, shown = read
    negated = bool(_NEGATED.search(claim))
    holds = below != negated
    name, header = table.cell(row, table.row_label_col), table.columns[p_col - 1]
    finding = (f"{header} of {name} is {shown}, below {format_value(alpha)}: statistically significant" if below
               else f"{header} of {name} is {shown}, not below {format_value(alpha)}: not statistically significant")
    says = "not significant" if negated else "significant"
    verdict = "SUPPORTS" if holds else "REFUTES"
    reason = (f"{finding[0].upper()}{finding[1:]} at the {format_value(alpha)} level; the claim says it is {says}, "
              f"so the table {'supports' if holds else 'refutes'} the claim.")
    return SignificanceCheck(verdict, row, table.row_label_col, p_col, reason)


# "Which subgroups …", "List the trials …": rows asked for, not "which p-value"
_WHICH_ROWS = re.compile(r"^\s*(?:which|list|name|show)\b(?!\s+(?:p[\s-]?values?|p)\b)", re.I)


def add_significance_filter(program: Program, typed: TypedTable, question: str) -> Program:
    """"How many studies reported a statistically significant result?" keeps the rows whose p-value is below 0.05.

    Found as a new user: over a table of studies with a "P value" column, the model counted all 6 studies. The
    question's word settles the filter, as for claims above: p below the stated level (else 0.05), or not below
    it for "not significant". Only when the table has one p-value column and the program reads it nowhere: a
    program that already filters on it, or asks for the p-value itself, is left as written.
    """
    if not _mentions_significance(question):
        return program
    if program.fn in ("every", "only") or len(program.filters) >= MAX_FILTERS:
        return program
    p_col = _p_column(typed.table)
    if p_col is None:
        return program
    ident = typed.columns[p_col - 1].ident
    op = ">=" if _NEGATED.search(question) else "<"
    added = RowFilter(column=ident, op=op, value=format_value(_alpha(question)))
    label = typed.label_col
    if _WHICH_ROWS.match(question) and label and program.column == ident \
            and program.fn in ("most_common", "value", "min", "max", "argmin", "argmax"):
        # "Which subgroups had a statistically significant effect?" asks for rows, not a p-value: found as a new
        # user, 4 of 5 programs answered "<0.001", the p-value that occurs most
        name = typed.columns[label - 1].ident
        kept = [f for f in program.filters if f.column != ident]
        return Program(filters=[*kept, added], fn="value", column=name, answer_column=name)
    if any(f.column == ident for f in program.filters) or (program.fn != "count" and program.column == ident):
        return program
    return program.model_copy(update={"filters": [*program.filters, added]})
