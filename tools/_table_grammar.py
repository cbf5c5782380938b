"""The typed program grammar: a JSON schema under which a nonsensical table program cannot be written.

The plain schema (``tools._table_ops_model.program_schema``) binds column names to the table, but the 1.5B model
still wrote, on PubHealthTab's tuning split, programs such as "the number of rows = 'North America'",
"min of Deaths = 'Flagler'", "Deaths <= 'new_cases'" and filters on values no cell holds. Each such program
ran, came out false and voted REFUTES. This schema is a union of typed program shapes, so the server's
grammar only admits programs whose parts fit together:

- sum, avg, min, max, argmax and argmin read a *numeric* column (an enum of the numeric columns only); argmax,
  argmin, min and max (questions) also read a column of dates, which ``<``/``>`` filters compare in time;
- a number (a count, a sum, a numeric cell) is checked against a number (a numeric pattern) or another row's
  value (an enum of the row names), never against text;
- a text cell is checked with ``=``, ``!=`` or ``contains`` against text, never ordered;
- argmax/argmin name a row, so their check is ``=``/``!=`` against text;
- a question may also ask which value occurs most, the row after or before a named one, or the difference
  between two rows' numbers (``difference`` on numeric columns only);
- an ``=``/``!=`` filter on a text column takes one of that column's own values (an enum), so it always
  selects the rows it names; ``contains`` stays free for a partial name.

Values are strings throughout (the executor parses numbers as it parses cells), so a sample validates
against :class:`tools._table_ops_model.Program` unchanged. The executor repeats the type checks in code, for a
server that does not enforce the schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, Union

from pydantic import BaseModel, Field, RootModel, create_model

from tools._cells import TypedTable, display_cell, is_empty
from tools._table_ops_model import MAX_FILTERS, VALUE_MAX_CHARS

# A number as a claim states it: "678", "-2", "4,512", "0.215", "12%". Words ("7 million") are written out. A dot is
# written "[.]", not "\.": llama.cpp's JSON-schema converter (llama-cpp-python 0.3.36) copies "\." into its grammar,
# whose parser refuses the escape ("unknown escape"), so the whole program grammar failed to load there.
NUMBER_PATTERN = r"^-?[0-9][0-9,]*([.][0-9]+)?%?$"
ORDER_OPS = ("=", "!=", "<", "<=", ">", ">=")
# A date or a year as a filter writes it: "2020", "2021-06-30", "June 2021", "March 14, 2019".
DATE_PATTERN = (r"^([0-9]{4}(-[0-9]{1,2}(-[0-9]{1,2})?)?|[A-Za-z]{3,9}[.]? ([0-9]{1,2},? )?[0-9]{4}"
                r"|[0-9]{1,2} [A-Za-z]{3,9} [0-9]{4})$")
TEXT_OPS = ("=", "!=")
# Enums of cell values keep filters on real values; a column with more distinct values (or longer ones)
# than this takes free text, so the grammar stays small.
ENUM_MAX_VALUES = 60
ENUM_MAX_TOTAL_CHARS = 3000


@dataclass(frozen=True)
class GrammarSpec:
    """What the typed schema depends on, hashable so schemas are cached per table shape."""

    numeric: tuple[str, ...]  # identifiers of numeric columns
    text: tuple[tuple[str, tuple[str, ...] | None], ...]  # text identifiers with their values (None: too many)
    row_names: tuple[str, ...]  # the label column's names, for checks against another row
    dated: tuple[str, ...] = ()  # the text columns that hold dates: ordered, so argmax and "after 2020" apply

    @classmethod
    def of(cls, typed: TypedTable) -> GrammarSpec:
        numeric, text = [], []
        for col in typed.columns:
            if col.numeric:
                numeric.append(col.ident)
            else:
                text.append((col.ident, _enum_values(typed.table.column_values(col.index))))
        label = typed.label_col
        names = _enum_values(typed.table.column_values(label)) if label else None
        dated = tuple(col.ident for col in typed.columns if col.holds_dates)
        return cls(tuple(numeric), tuple(text), names or (), dated)

    @property
    def idents(self) -> tuple[str, ...]:
        return self.numeric + tuple(ident for ident, _ in self.text)


def _enum_values(values: list[str]) -> tuple[str, ...] | None:
    """The column's values as the prompt shows them (long ones clipped), or None when there are too many."""
    out = list(dict.fromkeys(display_cell(v) for v in values if not is_empty(v)))
    if not out or len(out) > ENUM_MAX_VALUES or sum(map(len, out)) > ENUM_MAX_TOTAL_CHARS:
        return None
    return tuple(out)


def typed_program_schema(typed: TypedTable, with_check: bool) -> type[BaseModel]:
    """The typed program schema for ``typed``; ``with_check`` for claims (see the module docstring)."""
    return _schema(GrammarSpec.of(typed), with_check)


def _lit(values: tuple[str, ...]) -> Any:
    return Literal[values]  # type: ignore[valid-type]


def _text() -> Any:
    return (str, Field(max_length=VALUE_MAX_CHARS))


@lru_cache(maxsize=64)
def _schema(spec: GrammarSpec, with_check: bool) -> type[BaseModel]:
    number = (str, Field(pattern=NUMBER_PATTERN))  # xgrammar ignores a length beside a pattern
    every = _lit(spec.idents)
    filters: list[Any] = []
    if spec.numeric:
        filters.append(create_model("NumberFilter", column=(_lit(spec.numeric), ...), op=(_lit(ORDER_OPS), ...),
                                    value=number))
    enumerated = [(ident, values) for ident, values in spec.text if values]
    free = tuple(ident for ident, values in spec.text if not values)
    for i, (ident, values) in enumerate(enumerated):
        filters.append(create_model(f"TextFilter{i}", column=(_lit((ident,)), ...), op=(_lit(TEXT_OPS), ...),
                                    value=(_lit(values), ...)))
    if free:
        filters.append(create_model("FreeTextFilter", column=(_lit(free), ...), op=(_lit(TEXT_OPS), ...),
                                    value=_text()))
    if spec.dated:  # "published after 2020", "before 2021-06-30": a date or a year, compared in time
        filters.append(create_model("DateFilter", column=(_lit(spec.dated), ...), op=(_lit(ORDER_OPS[2:]), ...),
                                    value=(str, Field(pattern=DATE_PATTERN))))
    if spec.text:
        filters.append(create_model("ContainsFilter", column=(_lit(tuple(i for i, _ in spec.text)), ...),
                                    op=(Literal["contains"], ...), value=_text()))
    filter_list = (list[Union[tuple(filters)]],  # type: ignore[misc]
                   Field(json_schema_extra={"maxItems": MAX_FILTERS}))

    checks: dict[str, Any] = {}
    if with_check:
        number_check = create_model("NumberCheck", op=(_lit(ORDER_OPS), ...), against=(Literal["value"], ...),
                                    value=number)
        row_check = (create_model("RowCheck", op=(_lit(ORDER_OPS), ...), against=(Literal["row"], ...),
                                  value=(_lit(spec.row_names), ...)) if spec.row_names else None)
        checks = {
            "number": number_check if row_check is None else Union[number_check, row_check],
            "count": number_check,
            "text": create_model("TextCheck", op=(Literal["=", "!=", "contains"], ...),
                                 against=(Literal["value"], ...), value=_text()),
            "name": create_model("NameCheck", op=(_lit(TEXT_OPS), ...), against=(Literal["value"], ...),
                                 value=_text()),
        }

    shapes: list[type[BaseModel]] = []

    def shape(name: str, fns: tuple[str, ...], columns: tuple[str, ...], check: str) -> None:
        fields: dict[str, Any] = {"filters": filter_list, "fn": (_lit(fns), ...), "column": (_lit(columns), ...),
                                  "answer_column": (every, ...)}
        if with_check:
            fields["check"] = (checks[check], ...)
        shapes.append(create_model(name, **fields))

    if spec.numeric:
        shape("Aggregate", ("sum", "avg", "min", "max"), spec.numeric, "number")
    if spec.numeric or spec.dated:
        shape("Extreme", ("argmax", "argmin"), spec.numeric + spec.dated, "name")
    if spec.dated and not with_check:  # "when was the latest study published?": the date as a cell writes it
        shape("DateExtreme", ("min", "max"), spec.dated, "text")
    shape("Count", ("count",), spec.idents, "count")
    if with_check:
        if spec.numeric:
            shape("NumberValue", ("value",), spec.numeric, "number")
            shape("NumberEvery", ("every", "only"), spec.numeric, "count")  # a condition on each row's number
        if spec.text:
            shape("TextValue", ("value", "every", "only"), tuple(i for i, _ in spec.text), "text")
    else:
        shape("Value", ("value",), spec.idents, "text")
        shape("Sequence", ("most_common", "next_row", "previous_row"), spec.idents, "text")
        if spec.numeric:
            shape("Difference", ("difference",), spec.numeric, "number")
    return create_model("TableProgram", __base__=RootModel[Union[tuple(shapes)]])  # type: ignore[misc]
