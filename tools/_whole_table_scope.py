"""A superlative over the whole table, read by a program that narrowed the rows to ones the claim never names.

Found as a new user over a nutrition table (Food, Category, Calories, …): "Cod is the lowest-calorie food in the
table." was decided by "rows where Category = 'Fish' → min of Calories; check: result = Calories of 'Cod'", two
programs of five, shown as verified. The verdict happened to be right (Cod, 82 kcal, is the lowest of all eight
foods), but the program compared Cod with one other fish, so the cells it cited could not show it.

When a claim's superlative says its scope is the whole table ("in the table", "of all", "on the list",
"overall"), a program computing an extreme keeps only the filters whose value the claim states: the others
narrow the rows to a group the claim never names. Without such words the filter stays, as it was measured:
holding every filter value a claim does not state to the claim hurt on TabFact's tuning split, whose claims
paraphrase the cells rows are chosen by (tools._claim_grounding).
"""

from __future__ import annotations

import re

from tools._cells import TypedTable
from tools._question_grounding import value_grounded
from tools._table_ops_model import Program
from tools.lang.lexicon import is_superlative

_WHOLE_TABLE = re.compile(r"\b(?:in|of|on|across|among)\s+(?:the|this)\s+(?:whole\s+|entire\s+)?"
                          r"(?:table|list|dataset|data)\b|\b(?:of|among)\s+all\b|\boverall\b|\bon\s+the\s+list\b",
                          re.I)
_EXTREMES = ("max", "min", "argmax", "argmin")


def says_whole_table(claim: str) -> bool:
    """Does the claim's superlative range over the whole table ("the lowest-calorie food in the table")?"""
    return is_superlative(claim) and _WHOLE_TABLE.search(claim) is not None


def read_whole_table_extreme(program: Program, typed: TypedTable, claim: str) -> Program:
    """``program`` without the filters whose value the claim does not state, when it computes an extreme and the
    claim's superlative ranges over the whole table (module docstring); otherwise as it is."""
    if program.fn not in _EXTREMES or not program.filters or not says_whole_table(claim):
        return program
    kept = [f for f in program.filters if f.than_column or value_grounded(f.value, claim)]
    if len(kept) == len(program.filters):
        return program
    return program.model_copy(update={"filters": kept})
