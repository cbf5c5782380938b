"""Rules a table question's form settles, applied to each sampled program before and after it runs.

The small model writes programs that run but answer a nearby question. Where the question's form says what was
meant, code reads the program so (WikiTableQuestions' training split, the tuning split, showed each case):

- :func:`read_as_asked`: "which team has the most points?" written as "max of points" is the team that has it;
- :func:`read_position`: "the last design code on this chart" is a row's place in the table, not a maximum of
  a column the question never names;
- :func:`read_choice`: "which had more, A or B?" compares exactly the rows A and B;
- :func:`read_neighbour`: "which circuit is listed below X?" written as the circuit of the row X is the row after it;
- :func:`count_choice`: "which artist has more songs, A or B?" written as a count counts each one's rows;
- :func:`read_distinct`: "how many different series are listed?" counts the different values of Series;
- :func:`read_total_asked`: "how many losses did the team have in 1981?" over two rows is their sum, not the
  smaller one;
- :func:`read_rows_asked`: "which week(s) had under 75,000?" written as a count asks for the rows, not how many;
- :func:`read_threshold_list`: "which regions have an occupancy above 85%?" written as the row with the largest
  occupancy among those asks for every such row (no superlative asks for one);
- :func:`read_rank_order`: "which track had the highest peak position?" is the smallest position number;
- :func:`drop_named_row`: "which country has the most bronze medals?" filtered on one country is that country by
  construction, so a filter on the answer column that the question does not state is dropped;
- :func:`read_direction`: "which region has the second most ICU beds?" written as the second smallest takes the
  second largest (not for rank columns, whose best is the smallest number: :func:`read_rank_order`);
- :func:`read_ordinal`: "which film grossed the second highest?" takes the second largest value, not the largest
  (claims too: "X had the second most cases");
- :func:`one_of_several`: a first/last question answered by a list is its first or last row;
- :func:`yes_or_no`: a yes/no question is answered by whether a row meets its filters.

Questions of frequency ("who won the most times?") are read by ``tools._frequency_rules``, the dates a question
states by ``tools._date_questions``, and its ratios and shares by ``tools._share_questions``.
Which programs then vote is decided in ``tools._table_program`` (answer kind, ``tools._grounding``).
"""

from __future__ import annotations

import re
from dataclasses import replace

from tools._cells import TypedTable, format_value, text_words
from tools._choice_compare import compares_with_number
from tools._frequency_rules import FREQUENCY
from tools._grounding import AnswerKind, alternatives, column_named, expected_answer, position_asked, value_grounded, \
    yes_no_asked
from tools._table_ops import selected_rows
from tools._table_ops_model import MAX_FILTERS, VALUE_MAX_CHARS, Execution, Program, RowFilter
from tools.lang.lexicon import RANK_HEADER, best_is_largest, content_words, extreme_directions, \
    is_superlative, ordinal_extreme


def read_as_asked(program: Program, typed: TypedTable, expected: AnswerKind | None) -> Program:
    """A which/who question's "max of points, answer column team" is the team of the row with the most points.

    The model names the answer column on every program; when the question asks for a name and that column holds
    names, a maximum or minimum of another column can only have been meant as the row that has it.
    """
    if expected != "name" or program.fn not in ("max", "min"):
        return program
    if typed.is_dated(program.column) and typed.label_col and program.answer_column in (None, "", program.column):
        # "Which was the first Alzheimer drug to be approved?" written as the earliest Approved, answered by
        # Approved: a date is text, so the answer-kind rule lets it through; the row's name was asked.
        label = typed.columns[typed.label_col - 1].ident
        if label != program.column:
            return program.model_copy(update={"fn": "argmax" if program.fn == "max" else "argmin",
                                              "answer_column": label})
    if not program.answer_column or program.answer_column == program.column:
        return program
    try:
        answer = typed.column(program.answer_column)
    except KeyError:
        return program
    if answer.numeric:
        return program
    return program.model_copy(update={"fn": "argmax" if program.fn == "max" else "argmin"})


_YEAR_ASKED = re.compile(r"^\s*(?:in\s+)?(?:which|what)\s+(?:year|season)\b", re.I)


def read_year_asked(program: Program, typed: TypedTable, question: str) -> Program:
    """"In which year was Uganda's TB incidence lowest?" asks for the year of the row with the smallest value.

    Found as a new user over a long table (a row per country and year): all five programs answered the smallest
    value (196), not its year (2020). When the question asks "(in) which/what year" and the program takes a
    maximum or minimum of another column, the table's one column of years answers, as the row's."""
    if not _YEAR_ASKED.search(question) or program.fn not in ("max", "min", "argmax", "argmin"):
        return program
    years = [c for c in typed.columns if c.numeric and c.holds_years]
    if len(years) != 1 or program.column == years[0].ident or program.per_column or program.minus_column:
        return program
    return program.model_copy(update={"fn": "argmax" if program.fn in ("max", "argmax") else "argmin",
                                      "answer_column": years[0].ident})


def read_position(program: Program, typed: TypedTable, question: str) -> Program:
    """"What is the last design code on this chart?" asks for a row by its place in the table, not by a measure.

    A largest or smallest value of a column the question does not name, or the most frequent value, answers some
    other question; the
    program's answer column, listed in table order, is what was asked (:func:`one_of_several` then takes the
    first or the last row).
    """
    if position_asked(question) is None:
        return program
    if program.fn == "most_common" and not FREQUENCY.search(question):
        # "what is the last competition listed on the table?" is the last row's, not the most frequent one
        # (WTQ's training split: 'UEFA Cup', in 5 rows, outvoted the last row's 'UEFA Europa League').
        return program.model_copy(update={"fn": "value"})
    if program.fn not in ("max", "min", "argmax", "argmin"):
        return program
    try:
        measured = typed.column(program.column).name
    except KeyError:
        return program
    if column_named(measured, question):
        return program
    answer = program.answer_column if program.fn in ("argmax", "argmin") and program.answer_column else program.column
    return program.model_copy(update={"fn": "value", "column": answer})


def read_choice(program: Program, typed: TypedTable, question: str) -> Program:
    """"Which had a higher share in 1900, Jewish or Roman Catholic?" compares the two rows the question names.

    The model often filters on one of them only, so its largest value is that row's by construction (seen on
    WTQ's training split). A largest or smallest value, asked with two cells of one column on either side of
    "or", is taken over exactly those two rows, and names the one that has it.
    """
    if program.fn not in ("max", "min", "argmax", "argmin"):
        return program
    choice = _choice_filters(program, typed, question)
    if choice is None:
        return program
    column, filters = choice
    return program.model_copy(update={"filters": filters, "answer_column": column,
                                      "fn": "argmin" if program.fn in ("min", "argmin") else "argmax"})


def _choice_filters(program: Program, typed: TypedTable, question: str) -> tuple[str, list[RowFilter]] | None:
    """The column of a choice question's two values and the program's filters selecting exactly those rows."""
    choice = alternatives(question, typed)
    if choice is None:
        return None
    column, values = choice
    others = [f for f in program.filters if f.column != column][:MAX_FILTERS - 2]
    return column, others + [RowFilter(column=column, op="=", value=v[:VALUE_MAX_CHARS]) for v in values]


def read_compared_value(program: Program, question: str) -> Program:
    """"Was DORADO's efficacy more or less than 85%?" was written by all five samples as the difference between two
    rows' efficacies over DORADO's one row, which cannot run (found as a new user). The question compares the row's
    own value with the number it states (tools._choice_compare settles the word): the value is read instead."""
    if program.fn != "difference" or not compares_with_number(question):
        return program
    return program.model_copy(update={"fn": "value"})


_MORE_OF = re.compile(r"\bmore\s+([^\W\d_]+)", re.I)
_NOT_NOUNS = {"than", "of", "the", "a", "an", "in", "on", "at", "to", "for", "and", "or", "often", "frequently"}


def count_choice(program: Program, typed: TypedTable, question: str) -> Program:
    """"Which country had more shows, Germany or France?" counts each one's rows.

    "More <noun>", asked with two cells of one column on either side of "or", where the noun names no column of
    numbers, asks which of the two is found in more rows; a count, or a largest value of a column the question
    does not name (seen as a new user: "largest Chart position" for "more shows"), is read so. A noun that names a
    column of measures ("more capacity") leaves the comparison to :func:`read_choice`.
    """
    if program.fn not in ("count", "max", "min", "argmax", "argmin", "sum") or expected_answer(question) == "number":
        return program
    m = _MORE_OF.search(question)
    if not m or m.group(1).casefold() in _NOT_NOUNS:
        return program
    noun = m.group(1)
    if any(col.numeric and column_named(col.name, noun) and not _numbers_rows(typed, col.index)
           for col in typed.columns):
        return program
    choice = _choice_filters(program, typed, question)
    if choice is None:
        return program
    column, filters = choice
    return program.model_copy(update={"filters": filters, "fn": "most_common", "column": column,
                                      "answer_column": column})


def _numbers_rows(typed: TypedTable, c: int) -> bool:
    """Column ``c`` numbers the rows (1, 2, 3, …): "more trials" names it but counts rows, not its numbers."""
    xs = [typed.number(r, c) for r in range(1, typed.table.n_rows + 1)]
    return len(xs) > 1 and None not in xs and all(b - a == 1 for a, b in zip(xs, xs[1:]))


_DISTINCT = re.compile(r"\bhow many (?:different|distinct|unique|separate|individual|various)\s+([^\W\d_]+)", re.I)


def read_distinct(program: Program, typed: TypedTable, question: str) -> Program:
    """"How many different series are listed?" counts the different values of the column it names, not rows."""
    m = _DISTINCT.search(question)
    if program.fn != "count" or not m:
        return program
    named = [col for col in typed.columns if column_named(col.name, m.group(1))]
    if not named:
        return program
    pick = next((col for col in named if col.ident == program.column), named[0])
    return program.model_copy(update={"fn": "count_distinct", "column": pick.ident})


_HOW_MANY = re.compile(r"\bhow (?:many|much)\b", re.I)
_MEAN_OR_LIMIT = re.compile(r"\b(?:average|mean|median|typical|per|each|at (?:most|least)|up to)\b", re.I)


def read_total_asked(program: Program, typed: TypedTable, question: str) -> Program:
    """"How many losses did the team have in 1981?" over the two rows of a split season is their sum.

    WTQ's dev split: two of three programs took the smaller half-season (22) rather than the season's 47. A
    how-many question with no superlative, ordinal, average or "at most" asks for no smallest, largest or mean of
    the rows it selects; over one row the sum is that row's value, so only a several-row reading changes. Years
    and other labels are not summed.
    """
    if program.fn not in ("min", "max", "avg") or program.per_column or not _HOW_MANY.search(question) \
            or is_superlative(question) or ordinal_extreme(question) != 1 or _MEAN_OR_LIMIT.search(question):
        return program
    try:
        if typed.column(program.column).holds_years:
            return program
    except KeyError:
        return program
    return program.model_copy(update={"fn": "sum", "nth": 1})


_WHICH = re.compile(r"^\s*(?:(?:in|on|at|for|from|during|of|between|after|before)\b[^,?]{0,40},\s*)?"
                    r"(?:which|who|whom|whose)\b", re.I)


# Not "overall": "which province had the fewest cases overall?" after a follow-up over 2011's rows means over the
# whole table, not each province's sum over the years (tests/test_table_program.py).
_IN_TOTAL = re.compile(r"\b(?:in\s+total|total|combined|altogether|all\s+together|put\s+together|"
                       r"between\s+them|summed)\b", re.I)


def read_group_total(program: Program, typed: TypedTable, question: str) -> Program:
    """"Which region has the fewest beds in total?" over a table of clinics is the region whose clinics' beds add
    up to the least, not the region of the clinic with the fewest beds.

    Found as a new user: North (its Lakeside has 60 beds) for East (95 in all; North has 370), 5 of 5 programs. A
    which-question whose words ask for a total ("in total", "combined", "altogether", …, not "overall", nor a
    word of the measured column's header such as "Total"), written as an argmax or argmin whose answer column
    repeats among the rows it ranks, ranks the answer column's values by their rows' sum.
    """
    m = _IN_TOTAL.search(question)
    if program.fn not in ("argmax", "argmin") or program.per_column or m is None or not _WHICH.match(question):
        return program
    try:
        measure = typed.column(program.column)
        answer = typed.column(program.answer_column or "")
    except KeyError:
        return program
    selected = selected_rows(program, typed)
    if selected is None or not measure.numeric or measure.holds_years or answer.ident == measure.ident \
            or re.search(r"%|\bper\b|\brate\b|\bshare\b|\bpercent|\baverage\b|\bmean\b", measure.name, re.I) \
            or any(w in content_words(measure.name) for w in content_words(m.group(0))):
        return program
    values = [text_words(typed.text(r, answer.index)) for r in selected]
    if len(set(values)) == len(values):
        return program  # every row its own group: the row's number is the total
    return program.model_copy(update={"group": "total"})


def read_rows_asked(program: Program, typed: TypedTable, question: str) -> Program:
    """"Which week(s) did not have more than 75,000 in attendance?" asks for the weeks, not how many there are.

    A which/who question written as a count lists the program's answer column over the rows it selects (the
    row labels when that column is one the filters fix to one value).
    """
    if program.fn != "count" or not _WHICH.match(question) or yes_no_asked(question) \
            or expected_answer(question) == "number":
        return program
    ident = program.answer_column or program.column
    fixed = {f.column for f in program.filters if f.op == "="}
    if ident in fixed and typed.label_col:
        ident = typed.columns[typed.label_col - 1].ident
    return program.model_copy(update={"fn": "value", "column": ident})


def read_threshold_list(program: Program, typed: TypedTable, question: str) -> Program:
    """"Which regions have an occupancy above 85%?" asks for every region over the threshold.

    Found as a new user: four of five programs took the row with the largest occupancy among those above 85% and
    answered "East" (South is above 85% too). A largest or smallest value of the very column a threshold filter
    bounds, asked with no superlative and no first/last, lists the answer column over the rows the filters select.
    """
    if program.fn not in ("argmax", "argmin") or not program.answer_column or is_superlative(question) \
            or position_asked(question) is not None:
        return program
    if not any(f.column == program.column and f.op in ("<", "<=", ">", ">=") for f in program.filters) \
            and not (program.filters and _WHICH_PLURAL.match(question)):
        return program
    return program.model_copy(update={"fn": "value", "column": program.answer_column})


# "Which hospitals have a stroke unit?": a plural asked with no superlative wants every row the filters keep.
# Found as a new user: four of five programs answered the one with the most beds among them.
_WHICH_PLURAL = re.compile(r"^\s*(?:which|what)\s+(?:[a-z-]+\s+)?[a-z-]+[^s\W]s\s+(?:have|has|are|were|had|do|did|"
                           r"got|get|offer|use|used|show|showed|meet|met|received?|reported|include|included)\b",
                           re.I)


_BEST = re.compile(r"\b(?:highest|best|top)\b", re.I)
_WORST = re.compile(r"\b(?:lowest|worst|bottom)\b", re.I)


def read_rank_order(program: Program, typed: TypedTable, question: str) -> Program:
    """"Which track had the highest peak position?" asks for position 1, the smallest number of a rank column.

    For a column of ranks (position, rank, place, seed, pick), "highest/best/top" is the smallest number and
    "lowest/worst" the largest; the model reads "highest" as the largest number (WTQ's training split).
    """
    if program.fn not in ("max", "min", "argmax", "argmin"):
        return program
    try:
        header = typed.column(program.column).name
    except KeyError:
        return program
    best, worst = _BEST.search(question), _WORST.search(question)
    if not RANK_HEADER.search(header) or bool(best) == bool(worst):
        return program
    smallest = bool(best)
    fn = {("max", True): "min", ("argmax", True): "argmin", ("min", False): "max", ("argmin", False): "argmax"}
    return program.model_copy(update={"fn": fn.get((program.fn, smallest), program.fn)})


def drop_named_row(program: Program, typed: TypedTable, question: str) -> Program:
    """"Which country has the most bronze medals?" filtered on "Nation = Belgium" names Belgium by construction.

    The largest value over the rows a filter fixes on the answer column is one of those rows, whatever they hold.
    A filter on the answer column whose value the question does not state cannot be what was asked: dropped.
    """
    if program.fn not in ("argmax", "argmin") or not program.answer_column:
        return program
    kept = [f for f in program.filters
            if not (f.op == "=" and f.column == program.answer_column and not value_grounded(f.value, question))]
    return program if len(kept) == len(program.filters) else program.model_copy(update={"filters": kept})


# "listed below X", "right after X", "the one above X": the question asks for a neighbouring row in the table's order.
_AFTER = re.compile(r"\b(?:after|below|beneath|underneath|following|next to|behind)\b", re.I)
_BEFORE = re.compile(r"\b(?:before|above|preceding|prior to|previous to|ahead of)\b", re.I)


def places_by_order(question: str) -> bool:
    """Whether the question places its answer after/below or before/above something in the table's order."""
    return bool(_AFTER.search(question) or _BEFORE.search(question))


def read_neighbour(program: Program, typed: TypedTable, question: str) -> Program:
    """"What circuit is listed below Autodromo di Pergusa?" written as the Circuit of the row "Circuit = Autodromo di
    Pergusa" answers with the question's own words; the row below it was asked (WTQ's dev split, all 5 samples).

    A program that reads the very column it fixes to a value the question states can only echo that value. When the
    question places the answer after/below or before/above that value (one direction only), the neighbouring row's
    value in that column is read instead; its filters must still select one row.
    """
    if program.fn != "value" or not program.column:
        return program
    after, before = bool(_AFTER.search(question)), bool(_BEFORE.search(question))
    if after == before:
        return program
    if not any(f.op == "=" and f.column == program.column and value_grounded(f.value, question)
               for f in program.filters):
        return program
    return program.model_copy(update={"fn": "next_row" if after else "previous_row"})


_FLIPPED = {"max": "min", "min": "max", "argmax": "argmin", "argmin": "argmax"}


def read_direction(program: Program, typed: TypedTable, question: str) -> Program:
    """"Which region has the second most ICU beds?" written as the second smallest is read as the second largest.
    "The second best average score" is the second largest and "the best time" the smallest (found as a new user:
    "and the second best?" was written as the second smallest by 4 of 5 programs).

    Found as a new user: the votes split between West (second largest) and North (second smallest), and the
    model's fallback named South. A question that says only "most/highest/…" or only "fewest/lowest/…" sets the
    direction of an extreme over a column of measures; rank columns are left to :func:`read_rank_order`. A change
    between two columns has its direction from the change's words (tools._column_change): "the largest drop" is
    the smallest change, not the largest.
    """
    if program.fn not in _FLIPPED or program.minus_column:
        return program
    try:
        header = typed.column(program.column).name
    except KeyError:
        return program
    ups, downs = extreme_directions(question)
    up, down = bool(ups), bool(downs)
    if not up and not down and (largest := best_is_largest(question, header)) is not None:
        up, down = largest, not largest  # "the second best average score": the column says which end is best
    if up == down:
        return program
    if _asks_for_a_loss(question, header, typed, program.column):
        up = not up  # "the largest loss" over Net income is its most negative value
    if RANK_HEADER.search(header) or (program.fn in ("max", "argmax")) == up:
        return program
    return program.model_copy(update={"fn": _FLIPPED[program.fn]})


_LOSS_WORDS = re.compile(r"\b(?:loss(?:es)?|lost|lose|loses|deficits?|declines?|drops?|decreases?|falls?|"
                         r"shortfalls?)\b", re.I)


def _asks_for_a_loss(question: str, header: str, typed: TypedTable, ident: str) -> bool:
    """Whether the question's extreme is of a loss measured on a signed column that is not itself one of losses.

    Found as a new user: "Which quarter had the largest loss?" over Net income ($k) with "(60)" and "(25)" was
    answered Q4, the largest profit (5 of 5 programs took the largest Net income)."""
    if not _LOSS_WORDS.search(question) or _LOSS_WORDS.search(header):
        return False
    numbers = typed.column(ident).numbers
    return any(n is not None and n < 0 for n in numbers)


def read_ordinal(program: Program, text: str) -> Program:
    """"Which country won the second-highest number of silver medals?" is the second largest value, not the
    largest: the grammar has no place for the ordinal, so code sets it on an extreme (a question's or a claim's)."""
    nth = ordinal_extreme(text)
    if nth == 1 or program.fn not in ("max", "min", "argmax", "argmin") or program.nth != 1:
        return program
    return program.model_copy(update={"nth": nth})


def yes_or_no(ex: Execution) -> Execution:
    """A yes/no question's count read as its answer: yes when a row meets the filters, else no."""
    answer, n = ("yes" if ex.selected else "no"), len(ex.selected)
    return replace(ex, result=answer, result_text=answer,
                   steps=ex.steps + [f"{n} row{' meets' if n == 1 else 's meet'} the question's conditions: {answer}"])


def one_of_several(ex: Execution, position: str | None) -> Execution:
    """A first/last question's answer listed over several rows: the first or last of them, in table order."""
    if position is None or not isinstance(ex.result, list) or len(ex.result) < 2 or ex.truth is not None:
        return ex
    i = 0 if position == "first" else -1
    row = ex.decisive_rows[i]
    cols = list(dict.fromkeys(c for _, c in ex.cells))  # the cells of every listed row may exceed the cap
    return replace(ex, result=ex.result[i], result_text=format_value(ex.result[i]), decisive_rows=[row],
                   cells=[(row, c) for c in cols],
                   steps=ex.steps + [f"the {position} of the {len(ex.result)} rows, in the table's order: R{row}"])
