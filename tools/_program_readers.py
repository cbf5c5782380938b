"""The rules that read a sampled program as its claim or question asks, in the order they apply.

The model writes a program that computes *something* over the table; these readers, each a rule in its own
module, rewrite it to compute what the text states or asks ("more than 700 pages" is a bound on the claim's own
value, "the second largest" an ordinal, "how many of them" a count over the previous answer's rows). Each is
``reader(program, typed, text) -> program`` and returns the program unchanged when its form is absent.

Order matters, and is kept as data here rather than as one nested expression, so a reader's place can be read
at a glance: the shared readers first (bounds, base rows, years and percents written in the text), then the
question's or the claim's own. A reader later in the list sees what the earlier ones made: e.g. a question's
``read_rank_order`` sees the value ``add_stated_value`` filled in, a claim's ``read_every_filter`` the quantifier
``read_quantifier`` found. Each reader is also a record in ``tools/rules.py`` (``REWRITE_RULES``: what it reads, the
case it came from, its examples), whose ``after`` names the readers it must follow; that module checks these lists
against them when it loads, so a reader moved before one whose output it reads is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from tools._cells import TypedTable
from tools._claim_changes import read_across_years, read_arm_comparison, read_base_row, read_change, \
    read_change_column, read_column_against, read_column_change
from tools._claim_compare import read_compared_row, read_count_than_row, read_named_value_row, read_others_combined, \
    read_self_filtered_every
from tools._claim_counts import add_numbered_kind, read_counted_column, read_each_as_extreme, read_fraction_of_rows, \
    read_share_of_total, read_stated_fraction
from tools._claim_grounding import read_combined, read_every_filter, read_named_row_every, read_negated_existence, \
    read_no_value, read_own_row, read_quantifier, read_ranked_claim, read_superlative, read_two_extremes
from tools._claim_multiples import read_multiplier, read_ratio_multiple
from tools._grounding import expected_answer, read_whole_table_extreme, yes_no_asked
from tools._question_counts import read_frequency, read_frequency_of_measure, read_group_mean, read_median, read_rate, \
    read_ratio, read_rows_per_value, read_share, read_share_of_all, read_share_of_rows
from tools._question_dates import add_stated_date, add_stated_quarter, read_duration, read_stated_part, read_stated_year
from tools._question_rules import count_choice, drop_named_row, read_as_asked, read_choice, read_compared_value, \
    read_direction, read_distinct, read_group_total, read_named_difference, read_neighbour, read_ordinal, \
    read_position, read_rank_order, read_rows_asked, read_same_as_row, read_threshold_list, read_top_rows, \
    read_total_asked, read_year_asked
from tools._settle_rules import add_significance_filter, read_range_question
from tools._table_ops_model import Program
from tools._table_shape import add_stated_flag, read_stated_percent
from tools._values import add_stated_value, narrow_to_written_value, read_inclusive_range, read_interval_inclusion, \
    read_interval_question, read_possible_bound, read_rough_value, read_stated_bound, widen_partial_value

Kind = Literal["claim", "question"]
Reader = Callable[[Program, TypedTable, str], Program]


def header_of(typed: TypedTable, ident: str) -> str:
    """The table's own header of the column ``ident`` ("" for an identifier the table lacks)."""
    try:
        return typed.column(ident).name
    except KeyError:
        return ""


# Readers whose rule needs less than (program, typed, text), or one more argument, in the common shape.
def _flag_in_claim(program: Program, typed: TypedTable, text: str) -> Program:
    return add_stated_flag(program, typed, text, yes_no=False)


def _flag_in_question(program: Program, typed: TypedTable, text: str) -> Program:
    return add_stated_flag(program, typed, text, yes_no=yes_no_asked(text))


def _answer_kind_asked(program: Program, typed: TypedTable, text: str) -> Program:
    return read_as_asked(program, typed, expected_answer(text))


def _compared_value(program: Program, typed: TypedTable, text: str) -> Program:
    return read_compared_value(program, text)


def _ordinal(program: Program, typed: TypedTable, text: str) -> Program:
    return read_ordinal(program, text)


def _rate_of_one_row(program: Program, typed: TypedTable, text: str) -> Program:
    return read_rate(program, typed, text, one_row=True)


def _yes_no_counts(program: Program, typed: TypedTable, text: str) -> Program:
    """A yes/no question is answered yes when a row meets its filters: a count of them."""
    return program.model_copy(update={"fn": "count"}) if yes_no_asked(text) else program


def _compared_row(program: Program, typed: TypedTable, text: str) -> Program:
    return read_compared_row(program, typed)


def _quantifier(program: Program, typed: TypedTable, text: str) -> Program:
    return read_quantifier(program, text)


def _self_filtered_every(program: Program, typed: TypedTable, text: str) -> Program:
    return read_self_filtered_every(program, typed)


def _multiplier(program: Program, typed: TypedTable, text: str) -> Program:
    return read_multiplier(program, text)


def _ratio_multiple(program: Program, typed: TypedTable, text: str) -> Program:
    return read_ratio_multiple(program, header_of(typed, program.column), text)


_SHARED_FIRST: tuple[Reader, ...] = (read_possible_bound, read_stated_bound, read_base_row)
_SHARED_AFTER_FLAG: tuple[Reader, ...] = (read_stated_year, read_stated_percent, add_numbered_kind)

QUESTION_READERS: tuple[Reader, ...] = (
    *_SHARED_FIRST, _flag_in_question, *_SHARED_AFTER_FLAG,
    read_stated_part, widen_partial_value, narrow_to_written_value,
    add_stated_date, read_inclusive_range, add_stated_quarter, add_significance_filter, add_stated_value,
    _answer_kind_asked, read_year_asked, read_rank_order, drop_named_row, read_position,
    read_choice, _compared_value, read_neighbour, count_choice, read_count_than_row, read_same_as_row,
    read_named_difference, read_frequency, read_frequency_of_measure, read_distinct,
    read_total_asked, read_group_total, read_group_mean, read_median, read_rows_asked,
    read_threshold_list, read_top_rows, read_ratio, _rate_of_one_row,
    read_share_of_rows, read_share, read_share_of_all, read_column_change, read_duration,
    read_direction, _ordinal, read_column_against, read_interval_question, read_range_question, read_across_years,
    read_rows_per_value, _yes_no_counts,
)

CLAIM_READERS: tuple[Reader, ...] = (
    *_SHARED_FIRST, _flag_in_claim, *_SHARED_AFTER_FLAG,
    read_arm_comparison, _compared_row, read_change, read_change_column, read_counted_column,
    read_two_extremes, read_ranked_claim, read_whole_table_extreme, read_superlative, read_ratio, read_rate,
    read_duration,
    read_combined, read_own_row, _quantifier, read_every_filter, _self_filtered_every, read_named_row_every,
    read_stated_fraction, read_fraction_of_rows, read_share_of_total,
    _multiplier, _ordinal, _ratio_multiple, read_others_combined, read_negated_existence,
    read_no_value, read_median, read_interval_inclusion, read_each_as_extreme, read_named_value_row,
    read_rough_value,
)


def readers_for(kind: Kind) -> tuple[Reader, ...]:
    """The readers a ``kind`` of text applies, in order."""
    return QUESTION_READERS if kind == "question" else CLAIM_READERS


# Where a function's name would repeat a veto rule's (tools/rules.py), the reader's rule is named apart.
_RENAMED = {"read_fraction_of_rows": "stated-fraction-of-rows"}


def reader_name(reader: Reader) -> str:
    """A reader's rule name, from its function: ``read_stated_bound`` -> "stated-bound", ``_ordinal`` -> "ordinal".
    The name the trace records (``rewritten_by``) and ``EVIDENTIA_RULES_OFF`` switches off."""
    if reader.__name__ in _RENAMED:
        return _RENAMED[reader.__name__]
    name = reader.__name__.lstrip("_")
    for prefix in ("read_", "add_"):
        name = name.removeprefix(prefix)
    return name.replace("_", "-")


def _names(readers: tuple[Reader, ...]) -> dict[str, Reader]:
    named: dict[str, Reader] = {}
    for reader in readers:
        other = named.setdefault(reader_name(reader), reader)
        if other is not reader:
            raise ValueError(f"two program readers are named {reader_name(reader)!r}: {other} and {reader}")
    return named


# Every rewrite rule by name (the questions' and the claims' share some), checked for clashes when this loads.
REWRITES: dict[str, Reader] = _names(tuple(dict.fromkeys(QUESTION_READERS + CLAIM_READERS)))
