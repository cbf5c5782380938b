"""The fixed-operation table program: what the model may write and what running it yields.

A program (Chain-of-Table style, issue 13) selects rows with up to three filters, computes one
thing over them, and, for a claim, checks the result against the value the claim states::

    {"filters": [{"column": "province", "op": "=", "value": "Quebec"}],
     "fn": "value", "column": "cases", "answer_column": "province",
     "check": {"op": "=", "against": "value", "value": "678"}}

The model writes it as JSON under a schema whose column names are an enum of the table's own
identifiers (:func:`program_schema`), so it cannot name a column the table lacks or write prose
around it. :mod:`tools._table_ops` runs it; :class:`Execution` is what a run gives, for the fixed
operations and for SQL alike. Kept apart from the executor so the rules that read or rewrite a program
(and the SQL form) need the model, not the interpreter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

MAX_FILTERS = 3
VALUE_MAX_CHARS = 60
MAX_ROWS = 100_000  # uploads are limited far below this; a program never scans more
TIME_LIMIT_S = 2.0
MAX_NTH = 10  # "the tenth largest" at most
MAX_CELLS = 12  # citations per program: the decisive cells, not the whole table
NOT_IN_TABLE = "not_in_table"

CmpOp = Literal["=", "!=", "<", "<=", ">", ">=", "contains"]
# The operator that holds with both sides swapped, or both negated: "a < b" is "b > a" and "-a > -b".
MIRRORED_OPS = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
# most_common, next_row, previous_row and difference are offered only by a question's grammar: which value occurs
# most, the row after or before the one the filters select (the table's order), the difference between two
# selected rows' numbers. count_distinct is offered by no grammar: code rewrites a program into it where the
# question's form says so (tools._question_rules.read_distinct: "how many different series …?" counts the
# distinct values of Series). share (no grammar either): the selected rows' sum as a percentage of the column's
# total (tools._question_counts.read_share_of_all: "what share of all beds does St Mary have?"). median (no grammar
# either): code rewrites a mean into it where the text says "median" (tools._question_rules.read_median).
# Each has one operator in tools._table_ops.OPERATORS (its stage and handler; a test checks that they match).
Fn = Literal["value", "count", "sum", "avg", "median", "min", "max", "argmax", "argmin", "every", "only",
             "most_common", "next_row", "previous_row", "difference", "count_distinct", "share"]


class ProgramError(ValueError):
    """A program that cannot run on this table; the message says why, for the retry and the user."""


class NoNumbersError(ProgramError):
    """The rows a program selects hold no number in the column it computes over: a finding about the table (the
    cell the question points at is text, empty or a formula), not a misread question."""


# -- the program, untyped (what the executor accepts) -----------------------------------------
class RowFilter(BaseModel):
    column: str
    op: CmpOp
    value: str = Field(max_length=VALUE_MAX_CHARS)
    # Compare with this column of the same row instead of ``value``: "Which sites missed their target?" keeps the
    # rows where Enrolled < Target. Set by code (tools._claim_changes); no grammar offers it.
    than_column: str | None = None
    # With ``than_column``: compare the percentages both cells write beside their counts ("41 (4.1%)" against
    # "16 (8.1%)"), since the columns are groups of different sizes. Set by code (tools._table_shape.by_share).
    by_share: bool = False
    # With ``than_column``: the row is also kept when it meets this comparison instead: "outside its reference
    # range" is Result < Low or Result > High (tools._settle_rules). Set by code; no grammar offers it.
    alternative: RowFilter | None = None


class Check(BaseModel):
    op: CmpOp
    # "column", "extreme", "rows" and "total" are set by code only (tools._claim_grounding.read_own_row,
    # read_two_extremes, read_combined; tools._claim_counts.read_share_of_total); no grammar offers them.
    against: Literal["value", "row", "column", "extreme", "rows", "total", "group"] = Field(
        "value", description="value: compare with the value written here; row: with the same column in the "
                             "row named here; column: with the column named here, in the same row; extreme: "
                             "with the row holding the largest or smallest value of the column named here; "
                             "rows: with the sum of the same column over the rows named in ``rows``; "
                             "total: with ``factor`` times the column's total over every row; "
                             "group: with the same sum or mean over the rows whose ``group_column`` is ``value``.")
    value: str = Field(max_length=VALUE_MAX_CHARS)
    # with against="group": the column whose value ``value`` selects the other group ("South's beds in total are more
    # than East's": Region). Set by code (tools._claim_compare); no grammar offers it.
    group_column: str | None = None
    # with against="rows": the rows whose values a claim adds up ("than Utrecht and Bergen combined")
    rows: list[str] = Field(default_factory=list, max_length=MAX_FILTERS + 2)
    # "twice as many as East": the other row's (or column's) value times this, within ``relative_tolerance`` of
    # it for "=". Set by code from the claim's words (tools._claim_grounding.read_multiplier); no grammar offers it.
    factor: float | None = None
    relative_tolerance: float = 0.0
    extreme: Literal["max", "min"] | None = None  # with against="extreme": which end of the column named in value
    # With against="column": compare the percentages both cells write beside their counts, as RowFilter.by_share.
    by_share: bool = False


# The functions a computed ratio column feeds: "the most dropouts relative to participants" is the row with the
# largest Dropouts / Participants. Code sets ``per_column`` (tools._question_counts.read_ratio), no grammar offers it.
RATIO_FNS = ("argmax", "argmin", "max", "min")


class Program(BaseModel):
    filters: list[RowFilter] = Field(default_factory=list, max_length=MAX_FILTERS)
    fn: Fn
    column: str
    answer_column: str | None = None
    check: Check | None = None
    per_column: str | None = None  # divide ``column`` by this column, row by row, before ``fn``
    # subtract this column, row by row, before ``fn``: "the change from 2022 to 2023" is 2023 minus 2022. Code sets it
    # (tools._claim_changes); no grammar offers it. Feeds RATIO_FNS as ``per_column`` does.
    minus_column: str | None = None
    # "the second highest": max, min, argmax and argmin take the nth distinct value from that end. Code sets it
    # from the question's or claim's ordinal (tools.lang.lexicon.ordinal_extreme); no grammar offers it.
    nth: int = Field(1, ge=1, le=MAX_NTH)
    # "which region has the fewest beds in total?": argmax/argmin over the sums ("total") of ``column`` per value of
    # ``answer_column``; "which category has the most calories on average?": over their means ("mean"). Code sets it
    # (tools._question_rules.read_group_total, read_group_mean); no grammar offers it.
    group: Literal["total", "mean"] | None = None
    # "What was Nigeria's average coverage over 2019 to 2022?": ``fn`` over the one selected row's cells in these
    # columns, not over rows (argmax/argmin name the column). Code sets it (tools._claim_changes); no grammar offers
    # it.
    across: list[str] = Field(default_factory=list)
    # "Which drugs were tested in more than one trial?": with most_common, every value of ``column`` held by more than
    # this many of the selected rows, not only the commonest. Code sets it (tools._question_counts); no grammar offers
    # it.
    more_rows_than: int | None = Field(None, ge=0)


class ColumnChoice(BaseModel):
    """The columns a claim or question needs; ``not_in_table`` when it needs something absent."""

    columns: list[str]


# -- schemas bound to one table --------------------------------------------------------------
@lru_cache(maxsize=32)
def program_schema(idents: tuple[str, ...], with_check: bool) -> type[BaseModel]:
    """The program schema with every column an enum of ``idents``; ``with_check`` for claims."""
    Col = Literal[idents]  # type: ignore[valid-type]
    value_field = (str, Field(json_schema_extra={"maxLength": VALUE_MAX_CHARS}))
    filt = create_model("Filter", column=(Col, ...), op=(CmpOp, ...), value=value_field)
    fields: dict[str, Any] = {
        "filters": (list[filt], Field(json_schema_extra={"maxItems": MAX_FILTERS})),  # type: ignore[valid-type]
        "fn": (Fn, ...),
        "column": (Col, ...),
        "answer_column": (Col, ...),
    }
    if with_check:
        check = create_model("Check", op=(CmpOp, ...), against=(Literal["value", "row"], ...), value=value_field)
        fields["check"] = (check, ...)
    return create_model("TableProgram", **fields)


@lru_cache(maxsize=32)
def column_choice_schema(idents: tuple[str, ...]) -> type[BaseModel]:
    """The column choice: one to four of ``idents`` or ``not_in_table``."""
    Choice = Literal[idents + (NOT_IN_TABLE,)]  # type: ignore[valid-type]
    return create_model("ColumnChoice", columns=(list[Choice], Field(  # type: ignore[valid-type]
        json_schema_extra={"minItems": 1, "maxItems": 4})))


# -- running ----------------------------------------------------------------------------------
@dataclass
class Execution:
    """What a program computed and which cells decided it."""

    selected: list[int]  # rows left after the filters
    result: Any  # a number, a text, a bool or a list of texts
    result_text: str
    decisive_rows: list[int]
    cells: list[tuple[int, int]]
    truth: bool | None = None  # the check's outcome (claims only)
    check_text: str = ""
    steps: list[str] = field(default_factory=list)
    # What the annotate rules (tools/rules.py) add to the reason after the computed value, as it states it: a
    # filter's bound read from a row the question names ("Beds > 310, Riverside General's Beds"), an interval and
    # whether it holds the claim's number. Only :class:`Note` puts anything here.
    bounds: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Note:
    """What an annotate rule adds to a run, and all it can add: the run's result, truth and rows stay the program's
    (the runner, tools.rules.annotate, merges a note into the run; a rule never returns an execution)."""

    reason: tuple[str, ...] = ()  # said in the reason after the computed value (:attr:`Execution.bounds`)
    cells: tuple[tuple[int, int], ...] = ()  # cited beside the program's own (those not cited yet)
    steps: tuple[str, ...] = ()  # shown after the program's steps

    def __bool__(self) -> bool:
        return bool(self.reason or self.cells or self.steps)
