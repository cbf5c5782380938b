"""A column the message asks about that holds only formulas the file saved without their results.

Found as a new user: an XLSX written by a script ("Coverage" = ``=D2/B2`` in every row, no saved values) was asked
"Which county has the highest coverage?". The column choice named Coverage, but no program can read a formula
(formulas are never run), so all five programs ordered by Fully vaccinated or Population instead and the reply,
"Birchwood", was shown as verified. The highest coverage is Dunmore's. Such a question has no answer in the
table as uploaded; saying so, and how to store the results, is the answer.
"""
from __future__ import annotations

from kb.table_model import NOT_COMPUTED
from tools._cells import TypedColumn, TypedTable
from tools._question_grounding import named_words


def _filled(typed: TypedTable, col: TypedColumn) -> list[str]:
    table = typed.table
    return [cell for r in range(1, table.n_rows + 1) if (cell := table.cell(r, col.index)).strip()]


def uncomputed_column_asked(typed: TypedTable, text: str) -> TypedColumn | None:
    """The column ``text`` names whose every filled cell is a formula without a saved value, when no column
    holding values shares the words that name it; None otherwise."""
    uncomputed, named_words_with_values = [], set()
    for col in typed.columns:
        named = named_words(col.name, text)
        if not named:
            continue
        filled = _filled(typed, col)
        if filled and all(cell.endswith(NOT_COMPUTED) for cell in filled):
            uncomputed.append((col, named))
        else:
            named_words_with_values |= named
    return next((col for col, named in uncomputed if not named & named_words_with_values), None)


def uncomputed_reason(col: TypedColumn, typed: TypedTable) -> str:
    """Why nothing was computed, and how to upload the table so that it can be: one sentence, which the citation
    check reads as "the evidence does not settle it" (advice in a sentence of its own read as an uncited claim)."""
    n = len(_filled(typed, col))
    return (f"The column {col.name} holds {n} formula{'s' * (n != 1)} that the file was saved without "
            f"{'their results' if n != 1 else 'its result'} (formulas are never run here), so there is not enough "
            "information to compute with: opening the file in Excel or LibreOffice and saving it stores the results, "
            "and the saved file can then be uploaded again.")
