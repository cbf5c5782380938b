"""The fixed-operation table program: what the model may write and what running it yields.

A program (Chain-of-Table style, issue 13) selects rows with up to three filters, computes one
thing over them, and, for a claim, checks the result against the value the claim states::

    {"filters": [{"column": "province", "op": "=", "value": "Quebec"}],
     "fn": "value", "column": "cases", "answer_column": "province",
     "check": {"op": "=", "against": "value", "value": "678"}}

The model writes it as JSON under a schema whose column names are an enum of the table's own
identifiers (:func:`program_schema`), so it cannot name a column the table lacks or write prose
around it. What code reads from the text beyond that (a ratio or change of two columns, "the second highest", a
total per group, ...) goes in the program's :class:`Options`, one slot per operator stage; no grammar offers it.
:mod:`tools._table_ops` runs it; :class:`Execution` is what a run gives, for the fixed operations and for SQL alike.
Kept apart from the executor so the rules that read or rewrite a program (and the SQL form) need the model, not the
interpreter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, create_model, model_validator

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


# The functions a derived column feeds: "the most dropouts relative to participants" is the row with the largest
# Dropouts / Participants (tools._question_counts.read_ratio).
RATIO_FNS = ("argmax", "argmin", "max", "min")


# -- the options code sets ---------------------------------------------------------------------------------------
# No grammar offers these: rules read them from the text's words ("the second highest", "relative to", "in total")
# and set them on the model's program. They are one record, :class:`Options`, with one slot per operator stage they
# feed (tools._table_ops): the derived column, what ``fn`` ranges over, the rank position and a row-count
# condition. A new reading adds a variant to its stage's union, not a field on Program. Each variant carries a
# ``kind`` so that logged programs name it.
class _DerivedColumn(BaseModel):
    """A variant of the derive stage: the columns it divides by and subtracts, row by row (None: it does not)."""

    @property
    def divides_by(self) -> str | None:
        return None

    @property
    def subtracts(self) -> str | None:
        return None


class Ratio(_DerivedColumn):
    """``column`` divided by ``per_column``, row by row: "the most dropouts relative to participants"
    (tools._question_counts.read_ratio, read_rate, read_share)."""

    kind: Literal["ratio"] = "ratio"
    per_column: str

    @property
    def divides_by(self) -> str | None:
        return self.per_column


class Change(_DerivedColumn):
    """``column`` minus ``minus_column``, row by row: "the change from 2022 to 2023" is 2023 minus 2022; two columns
    of dates give days (tools._claim_changes, tools._question_dates.read_duration)."""

    kind: Literal["change"] = "change"
    minus_column: str

    @property
    def subtracts(self) -> str | None:
        return self.minus_column


class RelativeChange(_DerivedColumn):
    """(``column`` - ``from_column``) / ``from_column``, row by row: "grew fastest", "rose by 10%"
    (tools._claim_changes)."""

    kind: Literal["relative_change"] = "relative_change"
    from_column: str

    @property
    def divides_by(self) -> str | None:
        return self.from_column

    @property
    def subtracts(self) -> str | None:
        return self.from_column


# The derive stage: the column ``fn`` computes over, when it is not ``column`` as the table writes it.
Derived = Annotated[Ratio | Change | RelativeChange, Field(discriminator="kind")]


class RowGroups(BaseModel):
    """argmax/argmin over the sums ("total") or means ("mean") of ``column`` per value of ``answer_column``: "which
    region has the fewest beds in total?", "which category has the most calories on average?"
    (tools._question_counts.read_group_mean, tools._question_rules.read_group_total)."""

    kind: Literal["groups"] = "groups"
    by: Literal["total", "mean"]


class AcrossColumns(BaseModel):
    """``fn`` over the one selected row's cells in ``columns``, not over rows (argmax/argmin name the column): "What
    was Nigeria's average coverage over 2019 to 2022?" (tools._claim_changes.read_across_years; run by
    tools._table_ops.execute_across)."""

    kind: Literal["across"] = "across"
    columns: list[str] = Field(min_length=1)


# What ``fn`` ranges over, when it is not the selected rows one by one.
Grouping = Annotated[RowGroups | AcrossColumns, Field(discriminator="kind")]


class MoreRowsThan(BaseModel):
    """With most_common, every value of ``column`` held by more than ``rows`` of the selected rows, not only the
    commonest: "Which drugs were tested in more than one trial?" (tools._question_counts.read_rows_per_value)."""

    kind: Literal["more_than"] = "more_than"
    rows: int = Field(ge=0)


class Options(BaseModel):
    """What code set on a program beyond what the model wrote, by the stage it feeds (section comment)."""

    derive: Derived | None = None
    grouping: Grouping | None = None
    # the rank position: "the second highest" makes max, min, argmax and argmin take the nth distinct value from
    # that end (tools.lang.lexicon.ordinal_extreme)
    nth: int = Field(1, ge=1, le=MAX_NTH)
    row_count: MoreRowsThan | None = None  # a condition on how many rows hold a value

    @property
    def divides_by(self) -> str | None:
        """The column the derived column divides by (a ratio or a relative change), or None."""
        return self.derive.divides_by if self.derive is not None else None

    @property
    def subtracts(self) -> str | None:
        """The column the derived column subtracts (a change or a relative change), or None."""
        return self.derive.subtracts if self.derive is not None else None

    @property
    def across(self) -> list[str]:
        """The columns of one row ``fn`` ranges over, or none."""
        return self.grouping.columns if isinstance(self.grouping, AcrossColumns) else []

    def undivided(self) -> Options:
        """These options with the derived column no longer divided: a ratio dropped, a relative change left as the
        change it divides."""
        if isinstance(self.derive, Ratio):
            return self.replaced(derive=None)
        if isinstance(self.derive, RelativeChange):
            return self.replaced(derive=Change(minus_column=self.derive.from_column))
        return self

    def replaced(self, **changes: Any) -> Options:
        """These options with ``changes`` (stage names) set. Checked, unlike ``model_copy(update=...)``, which
        takes any name silently: a misspelt stage would leave the option as it was."""
        unknown = set(changes) - set(type(self).model_fields)
        if unknown:
            raise TypeError(f"no option {', '.join(sorted(unknown))}; "
                            f"the stages are {', '.join(type(self).model_fields)}")
        return self.model_copy(update=changes)


# The fields each option had on Program before :class:`Options` (programs logged then, and raw programs code wrote).
FLAT_OPTION_FIELDS = ("per_column", "minus_column", "nth", "group", "across", "more_rows_than")


def options_from_flat(flat: dict[str, Any]) -> dict[str, Any]:
    """The :class:`Options` (as data, to validate) that the old flat fields in ``flat`` set.

    ``per_column`` and ``minus_column`` on the same column were the relative change; on different columns no program
    could run ("divides by another column or subtracts one, not both"), and none loads. ``across`` ran before
    ``group`` was read, so a program with both is read as its ``across``."""
    per, minus = flat.get("per_column") or None, flat.get("minus_column") or None
    options: dict[str, Any] = {}
    if per and minus and per != minus:
        raise ValueError("a program divides by another column or subtracts one, not both")
    if per and minus:
        options["derive"] = {"kind": "relative_change", "from_column": per}
    elif per:
        options["derive"] = {"kind": "ratio", "per_column": per}
    elif minus:
        options["derive"] = {"kind": "change", "minus_column": minus}
    if flat.get("across"):
        options["grouping"] = {"kind": "across", "columns": flat["across"]}
    elif flat.get("group") is not None:
        options["grouping"] = {"kind": "groups", "by": flat["group"]}
    if "nth" in flat:
        options["nth"] = flat["nth"]
    if flat.get("more_rows_than") is not None:
        options["row_count"] = {"kind": "more_than", "rows": flat["more_rows_than"]}
    return options


class Program(BaseModel):
    filters: list[RowFilter] = Field(default_factory=list, max_length=MAX_FILTERS)
    fn: Fn
    column: str
    answer_column: str | None = None
    check: Check | None = None
    options: Options = Field(default_factory=Options)  # set by code only (section comment above)

    @model_validator(mode="before")
    @classmethod
    def _read_flat_options(cls, data: Any) -> Any:
        """A program written with the options as fields of their own (logged before :class:`Options`, or a raw
        program code wrote then) loads with them in ``options``."""
        if not isinstance(data, dict) or not any(name in data for name in FLAT_OPTION_FIELDS):
            return data
        if "options" in data:
            raise ValueError(f"a program gives its options once: in options or as {', '.join(FLAT_OPTION_FIELDS)}")
        data = dict(data)
        flat = {name: data.pop(name) for name in FLAT_OPTION_FIELDS if name in data}
        return {**data, "options": options_from_flat(flat)}


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
