"""Rules a table question's form settles, applied to each sampled program before and after it runs, with the readings
they call: a choice between two comparing words, a follow-up asked of another thing, a row sharing a named row's
value, a plain superlative, the top few rows, and the difference between two named rows.

Each section below opens with a comment that says what it reads and the case it came from.
"""

from __future__ import annotations

import re
from dataclasses import replace

from tools._cells import TypedTable, cell_number, format_value, norm_text, text_words, writes_whole
from tools._grounding import AnswerKind, alternatives, asks_for_the_other_row, column_named, expected_answer, \
    position_asked, question_numbers, row_stated, same_as_row, value_grounded, yes_no_asked
from tools._question_counts import FREQUENCY
from tools._table_ops import selected_rows
from tools._table_ops_model import MAX_FILTERS, VALUE_MAX_CHARS, Execution, Note, Program, RowFilter, RowGroups
from tools._table_shape import meets_filter, selects_only
from tools.lang.lexicon import CARDINALS, ORDINAL_WORDS, PRONOUNS, RANK_HEADER, content_words, related
from tools.lang.reading import best_is_largest, extreme_directions, is_superlative, ordinal_extreme


# ======================================================================================================================
# A choice between two comparing words, settled by comparing the computed value with the number the question
# states: "Was DORADO's efficacy more or less than 85%?" is "more" when the programs compute 88.1.
#
# The programs answer such a question with the value (88.1), which matches neither "more" nor "less", so the
# model's own reading used to choose; the comparison is code's. Only words whose direction the number settles
# are read ("more/less", "higher/lower", "above/below", …); "older or younger", "better or worse", "before or after"
# depend on what the column measures and are left to the model.
#
# Higher and above mean a smaller number for ranks and places: "in 1996/97 was the place above or below 10th?" is
# "below" for 12th. That is read from an ordinal number ("10th") or a rank column's header.
# ======================================================================================================================

_UP = frozenset({"more", "higher", "larger", "bigger", "greater", "longer", "taller", "heavier", "faster", "above",
                 "over"})
_DOWN = frozenset({"less", "fewer", "lower", "smaller", "shorter", "lighter", "slower", "below", "under"})
# On a rank or a place, these words mean the better place: the smaller number.
_RANKED = frozenset({"higher", "lower", "above", "below"})
_NUMBER = r"(-?\d[\d,]*(?:\.\d+)?)(\s*%|st|nd|rd|th)?"
_ORDINAL = ("st", "nd", "rd", "th")
_YEAR = re.compile(r"1[89]\d\d|20\d\d")


_PAIR = re.compile(r"\b([^\W\d_]+)\s+or\s+([^\W\d_]+)\b", re.I)


def compares_with_number(question: str) -> bool:
    """Whether the question offers two comparing words and states the number to compare with ("more or less than
    85%?"): then the value of the row it asks about is what decides, not a difference between rows."""
    for found in _PAIR.finditer(question):
        words = [found.group(1).casefold(), found.group(2).casefold()]
        if {words[0], words[1]} & _UP and {words[0], words[1]} & _DOWN and _stated(question, words) is not None:
            return True
    return False


def comparing_option(question: str, options: list[str], computed: str, header: str = "") -> tuple[int, str] | None:
    """The 1-based option the comparison settles and the sentence that says why, or None.

    ``computed``: the programs' answer (one number); ``header``: the column it was read from ("" if unknown).
    """
    if len(options) != 2:
        return None
    words = [o.casefold() for o in options]
    if not (({words[0], words[1]} & _UP) and ({words[0], words[1]} & _DOWN)):
        return None
    value = _number(computed)
    found = _stated(question, words)
    if value is None or found is None:
        return None
    stated, after = found
    bound = _number(stated.group(1))
    if bound is None or bound == value:
        return None
    ranked = (stated.group(2) or "").strip().casefold() in _ORDINAL or bool(RANK_HEADER.search(header))
    # The subject is the computed value when the number follows the words ("efficacy more or less than 85%"), the
    # stated number when it precedes them ("is 159 above or below the laps Bell completed?").
    subject, other = (value, bound) if after else (bound, value)
    stated_text = stated.group(1) + (stated.group(2) or "").strip()
    for i, word in enumerate(words):
        up = word in _UP
        if word in _RANKED and ranked:
            up = not up
        if (subject > other) == up:
            first, second = (computed.strip(), stated_text) if after else (stated_text, computed.strip())
            than = "" if word in ("above", "below", "over", "under") else " than"
            return i + 1, f"{first} is {options[i]}{than} {second}."
    return None


def _stated(question: str, words: list[str]) -> tuple[re.Match, bool] | None:
    """The number the question compares with, and whether it follows the words (else it opens the question)."""
    pair = rf"\b{re.escape(words[0])}\s+or\s+{re.escape(words[1])}\b"
    after = re.search(pair + r"\s+(?:than\s+)?(?:the\s+)?" + _NUMBER + r"(?![\w.])", question, re.I)
    # Stated first, the number is the subject only where the question opens with it ("is 159 above or below …");
    # "the percentage in 1960 more or less than …" names a row by its number.
    before = re.search(r"^\s*(?:is|was|are|were)\s+" + _NUMBER + r"\s+" + pair, question, re.I)
    if (after is None) == (before is None):
        return None
    stated = after or before
    if _YEAR.fullmatch(stated.group(1)) and not stated.group(2):
        return None  # "was 2008's score above or below 2013?": a year names a row, it is not the bound
    return stated, after is not None


def _number(text: str) -> float | None:
    """A number, or an ordinal's ("12th")."""
    text = text.strip()
    if (ordinal := re.fullmatch(r"(\d+)(?:st|nd|rd|th)", text, re.I)) is not None:
        return float(ordinal.group(1))
    return cell_number(text)


# ======================================================================================================================
# Rules a table question's form settles, applied to each sampled program before and after it runs.
#
# The small model writes programs that run but answer a nearby question. Where the question's form says what was
# meant, code reads the program so (WikiTableQuestions' training split, the tuning split, showed each case):
#
# - :func:`read_as_asked`: "which team has the most points?" written as "max of points" is the team that has it;
# - :func:`read_position`: "the last design code on this chart" is a row's place in the table, not a maximum of
#   a column the question never names;
# - :func:`read_choice`: "which had more, A or B?" compares exactly the rows A and B;
# - :func:`read_neighbour`: "which circuit is listed below X?" written as the circuit of the row X is the row after it;
# - :func:`count_choice`: "which artist has more songs, A or B?" written as a count counts each one's rows;
# - :func:`read_distinct`: "how many different series are listed?" counts the different values of Series;
# - :func:`read_total_asked`: "how many losses did the team have in 1981?" over two rows is their sum, not the
#   smaller one;
# - :func:`read_rows_asked`: "which week(s) had under 75,000?" written as a count asks for the rows, not how many;
# - :func:`read_threshold_list`: "which regions have an occupancy above 85%?" written as the row with the largest
#   occupancy among those asks for every such row (no superlative asks for one);
# - :func:`read_rank_order`: "which track had the highest peak position?" is the smallest position number;
# - :func:`drop_named_row`: "which country has the most bronze medals?" filtered on one country is that country by
#   construction, so a filter on the answer column that the question does not state is dropped;
# - :func:`read_direction`: "which region has the second most ICU beds?" written as the second smallest takes the
#   second largest (not for rank columns, whose best is the smallest number: :func:`read_rank_order`);
# - :func:`read_ordinal`: "which film grossed the second highest?" takes the second largest value, not the largest
#   (claims too: "X had the second most cases");
# - :func:`one_of_several`: a first/last question answered by a list is its first or last row;
# - :func:`yes_or_no`: a yes/no question is answered by whether a row meets its filters.
#
# Questions of frequency ("who won the most times?") are read by ``tools._question_counts``, the dates a question
# states by ``tools._question_dates``, and its ratios and shares by ``tools._question_counts``.
# Which programs then vote is decided in ``tools._table_program`` (answer kind, ``tools._grounding``).
# ======================================================================================================================

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
    if len(years) != 1 or program.column == years[0].ident or program.options.derive is not None:
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
    own value with the number it states (tools._question_rules settles the word): the value is read instead."""
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
    if program.fn not in ("min", "max", "avg") or program.options.divides_by or not _HOW_MANY.search(question) \
            or is_superlative(question) or ordinal_extreme(question) != 1 or _MEAN_OR_LIMIT.search(question):
        return program
    try:
        if typed.column(program.column).holds_years:
            return program
    except KeyError:
        return program
    return program.model_copy(update={"fn": "sum", "options": program.options.replaced(nth=1)})


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
    if program.fn not in ("argmax", "argmin") or program.options.divides_by or m is None \
            or not _WHICH.match(question):
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
    return program.model_copy(update={"options": program.options.replaced(grouping=RowGroups(by="total"))})


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
    between two columns has its direction from the change's words (tools._claim_changes): "the largest drop" is
    the smallest change, not the largest.
    """
    if program.fn not in _FLIPPED or program.options.subtracts:
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
    if nth == 1 or program.fn not in ("max", "min", "argmax", "argmin") or program.options.nth != 1:
        return program
    return program.model_copy(update={"options": program.options.replaced(nth=nth)})


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


# ======================================================================================================================
# "And of X?" / "What about X?": the previous question, asked again of X.
#
# Seen on the chat bench: "What is the function of the mitochondria?" then "And of the ribosomes?" was searched
# as "And of the ribosomes? (regarding mitochondria, ribosomes)", which asks nothing, and came back with genes that
# "participate in" ribosomes; "What about coal?" after "Why is wind renewable?" became "(regarding coal, wind)".
# The short form means the last question with its one subject swapped: "What is the function of the ribosomes?",
# "Why is coal renewable?".
#
# Only when the swap is plain: the earlier question names exactly one of its entities, and the new thing is a short
# noun phrase with no pronoun ("What about it?" and "a plastic one" are other rules' business).
# ======================================================================================================================

_SWAP_FORMS = (
    re.compile(r"^\s*(?:(?:and|so|ok(?:ay)?|now)[\s,]+)?(?:what|how)\s+about\s+(?P<x>.+?)\s*[?.!]*\s*$", re.I),
    re.compile(r"^\s*and\s+(?:of|for|about)\s+(?P<x>.+?)\s*[?.!]*\s*$", re.I),
)
# "and in 2011?", "what about after 2015?", "what about in children?": a new condition, not a new subject.
_CONDITION = re.compile(r"^(?:in|on|at|after|before|during|since|until|with|without|among|under|over|by|from|to)\b"
                        r"|\d", re.I)
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.I)
_NOT_A_THING = PRONOUNS | {"one", "ones", "you", "me", "us", "there", "then", "now", "else", "more", "others",
                           "other", "rest"}
MAX_WORDS = 5


def swap_target(message: str) -> str | None:
    """The new thing an "And of X?" / "What about X?" turn names ("ribosomes"), or None."""
    for form in _SWAP_FORMS:
        m = form.match(message)
        if m:
            x = _ARTICLE.sub("", m.group("x").strip()).strip()
            if _CONDITION.search(x):
                return None
            words = re.findall(r"[A-Za-z0-9'\-]+", x.lower())
            if not words or len(words) > MAX_WORDS or set(words) & _NOT_A_THING:
                return None
            return x
    return None


def swapped_question(message: str, previous: str, previous_entities: list[str]) -> tuple[str, str] | None:
    """(the previous question with its one entity replaced by the new thing, the new thing), or None."""
    x = swap_target(message)
    if not x or not previous:
        return None
    spans = []
    for e in previous_entities:
        m = re.search(r"(?<![\w'])" + re.escape(e) + r"(?![\w'])", previous, re.I) if e.strip() else None
        if m:
            spans.append(m.span())
    if len(spans) != 1:
        return None  # none, or several things asked: which one the new thing replaces is a guess
    start, end = spans[0]
    if x.lower() == previous[start:end].lower():
        return None
    return previous[:start] + x + previous[end:], x


# ======================================================================================================================
# A row sharing a value with a named row: "which nation won the same number of gold medals as hungary?" asks for
# the other rows whose Gold equals Hungary's, not for Hungary.
#
# The row filters the model writes compare a column with a value written in the program, never with another row's
# value, so asked this, its programs select the named row itself ("Nation = 'Hungary'", then its Nation: the
# question's own words) or every other row. Found on WikiTableQuestions' training split (the tuning split): every
# sample of "which nation won the same number of gold medals as hungary?" answered Hungary, and of "matti yrjola had
# the same distance recorded as who?" his own distance.
#
# The question's form says what was meant: "the same <column> as <row>", one column named between "same" and "as"
# (:func:`tools._grounding.same_as_row`) and one row stated after "as" (or before "same", when "as who /
# which other …" asks for the rest). Code reads that row's value and selects the other rows holding it. Anything
# less certain leaves the program as written.
# ======================================================================================================================

# What a program may compute over the rows "the same … as" selects; sums, averages and extremes asked for stay.
SAME_AS_FNS = ("value", "count", "argmax", "argmin", "next_row", "previous_row")


def read_same_as_row(program: Program, typed: TypedTable, question: str) -> Program:
    """A value or count filtered on the row named after "the same … as" selects the other rows sharing its value;
    so does a largest or smallest over that row alone when the question asks for no extreme. A count, when the
    question asks which row, reads the rows' names instead, and so does the row after or before it when the
    question places nothing in the table's order.

    The filter that selects that row alone becomes its exclusion ("Nation != 'Hungary'", or kept, when written
    so), and the shared value is added ("Gold = 3"), in place of any value the program wrote for that column; with
    no filter naming the row, the row is left out by its name. A value of the shared column itself would only echo
    the shared value: its answer column is read instead, or the row's name.
    """
    if "same" not in question.casefold() or program.fn not in SAME_AS_FNS:
        return program
    found = same_as_row(typed, question)
    if found is None:
        return program
    row, col = found
    label = typed.columns[typed.label_col - 1].ident if typed.label_col else None
    read, fn = program.column, program.fn
    if fn in ("argmax", "argmin"):
        # "which team had the same points as latvia?" read as the team with the most points among Latvia's rows:
        # an extreme the question never asks for, over the named row alone, is that row's answer column (its
        # name when the answer column is the compared one: "VC of the row with the largest VC").
        if is_superlative(question):
            return program
        read, fn = _naming_column(program, program.column, label), "value"
    asks_which = expected_answer(question) == "name" or asks_for_the_other_row(question)
    if fn in ("next_row", "previous_row"):
        # "… the same city as which other orchestra?" read as the row listed after Manchester's: the question
        # places nothing in the table's order, so the neighbour was not asked (found as a new user); the column
        # it read from the neighbour says nothing of what was asked, so the rows' names are read
        if places_by_order(question) or not asks_which:
            return program
        read, fn = label, "value"
    if fn == "count" and asks_which:
        # "… the same city as which other orchestra?" counted: a count names no orchestra (found as a new user)
        read, fn = _naming_column(program, col.ident, label), "value"
    if fn == "value" and read == col.ident:
        # "matti yrjola had the same distance recorded as who?" read as Matti's Distance: the row's name was asked
        read = _naming_column(program, col.ident, label)
    if fn == "value" and read in (None, col.ident):
        return program
    written = typed.text(row, col.index).strip()
    naming = [f for f in program.filters if f.op in ("=", "!=", "contains") and f.column != col.ident
              and not typed.is_numeric(f.column) and selects_only(typed, f, row)]
    if len(written) > VALUE_MAX_CHARS or len(naming) > 1 or (program.fn in ("argmax", "argmin") and not naming):
        return program
    if naming:
        excluded = naming[0].model_copy(update={"op": "!="})
    elif label is not None and label != col.ident and len(name := typed.text(row, typed.label_col).strip()) <= \
            VALUE_MAX_CHARS:  # a name cut short would leave the row in
        excluded = RowFilter(column=label, op="!=", value=name)
    else:
        return program
    kept = [f for f in program.filters if f not in naming and f.column != col.ident]
    filters = kept + [RowFilter(column=col.ident, op="=", value=written), excluded]
    if len(filters) > MAX_FILTERS:
        return program
    return program.model_copy(update={"filters": filters, "column": read, "fn": fn})


def _naming_column(program: Program, besides: str, label: str | None) -> str | None:
    """What names the answer's rows: the program's answer column, unless it is ``besides`` (or unset), else the
    table's row names."""
    return program.answer_column if program.answer_column not in (None, "", besides) else label


def shared_row_note(program: Program, typed: TypedTable, question: str) -> Note | None:
    """The shared value ("Gold = 3" for "the same number of gold medals as hungary") was read from the named row:
    its cell is cited, and the reason says whose value it is. None when no filter holds that row's value."""
    if "same" not in question.casefold() or (found := same_as_row(typed, question)) is None:
        return None
    row, col = found
    shared = [f for f in program.filters if f.op == "=" and f.column == col.ident and meets_filter(typed, row, f)]
    if not shared:
        return None
    whose = typed.row_name(row)
    return Note(reason=(f"{col.name} = {shared[0].value}, as for {whose}",), cells=((row, col.index),),
                steps=(f"the value is the one {whose} has (R{row})",))


# ======================================================================================================================
# The program a plain superlative question's words alone give: "Which hospital has the second-highest occupancy?".
#
# Found as a new user over a six-hospital table: that question came back as the model's own answer, "Northgate
# General has the second-highest occupancy with 78.0%" (it has the second lowest), shown as verified because the one
# cell it cited exists. The sampled programs had not decided it; re-asked, they wrote filters the question never
# states ("City = 'Leeds'", "Occupancy > 90.0%") as often as the right reading. When no sampled program runs for a
# question that names one column of numbers, one direction and nothing else of the table (no row, no value, no
# number but its ordinal), the question is the extreme of that column over all rows: the row with the nth largest or
# smallest value, named by its row label. It is run as a program, with the same rules and citations. A vote that
# runs but splits still falls to the model's own answer: a second batch is sampled for that (more_on_split).
# ======================================================================================================================

# "Which hospital …", "What drug …": the noun must name the row label's column; "who" asks for a row too
_ASKED = re.compile(r"^\s*(?:(?:which|what)\s+(?P<noun>[^\W\d_]+)|(?P<who>who)\b)", re.I)


def _asks_for_a_row(typed: TypedTable, question: str) -> bool:
    m = _ASKED.match(question or "")
    if m is None:
        return False
    label_words = content_words(typed.columns[typed.label_col - 1].name)
    return bool(m.group("who")) or any(related(m.group("noun").lower(), w) for w in label_words)


def _names_a_cell(typed: TypedTable, question: str) -> bool:
    """Whether the question writes a text cell of the table as words ("Which Leeds hospital …")."""
    said = norm_text(question)
    return any(len(cell := norm_text(typed.text(r, col.index))) >= 3 and writes_whole(said, cell)
               for col in typed.columns if not col.numeric for r in range(1, typed.table.n_rows + 1))


def extreme_by_words(typed: TypedTable, question: str) -> dict | None:
    """The raw program (as the model would write it, with the ordinal in its options) of "which <row> has the (nth)
    <most> <column>?", or None when the question is not that plain (section comment)."""
    if not typed.label_col or not _asks_for_a_row(typed, question):
        return None
    ups, downs = extreme_directions(question.replace("-", " "))  # "second-highest"
    if bool(ups) == bool(downs):
        return None
    named = [col for col in typed.columns if col.numeric and col.index != typed.label_col
             and column_named(col.name, question)]
    if len(named) != 1 or _names_a_cell(typed, question):
        return None
    nth = ordinal_extreme(question)
    ordinals = {float(v) for w, v in ORDINAL_WORDS.items() if re.search(rf"\b{w}\b", question, re.I)}
    if question_numbers(question) - ordinals - question_numbers(named[0].name):  # "PM2.5" names its column
        return None
    label = typed.columns[typed.label_col - 1].ident
    return {"filters": [], "fn": "argmax" if ups else "argmin", "column": named[0].ident, "answer_column": label,
            "options": {"nth": nth}}


_RANKING = ("argmax", "argmin", "max", "min")


def other_column_ranked(programs: list[Program], typed: TypedTable, question: str) -> list[str]:
    """Why each program does not answer a plain superlative question ('' for one that may): it ranks rows by
    another column than the one the question names ("the second-highest occupancy" read on Avg. stay, seen as a
    new user: right by chance, Royal Infirmary being second on both), or it ranks nothing: "Which city has the
    third-highest PM2.5 level?" was answered with every city by the one program that ran, "PM2.5 > 0 → City"
    (seen as a new user over an air-quality table)."""
    raw = extreme_by_words(typed, question)
    if raw is None:
        return [""] * len(programs)
    asked = typed.column(raw["column"]).name
    return [f"it ranks by {typed.column(p.column).name}, where the question asks for {asked}"
            if p.fn in _RANKING and p.column != raw["column"] and p.column in typed.idents
            else f"it ranks no rows by {asked}, where the question asks for the row with the most or least"
            if p.fn not in _RANKING else "" for p in programs]


# ======================================================================================================================
# The top few rows: "Which three trials had the most participants?", "the top 5 countries by cases".
#
# Found as a new user over a JSON of trials: the question was answered with ALPHA alone (one program of five ran,
# the row with the most participants). The grammar's extremes take one row (or the nth); "three … the most" asks for
# the three rows with the largest values. The question's form settles it: the extreme the model wrote over some
# column becomes the rows whose value is at least the third largest (ties kept), their answer column listed.
# ======================================================================================================================

_TOP = re.compile(r"^\s*(?:which|what|name|list|show|give\s+me)\s+(?:are\s+)?(?:the\s+)?(?:top\s+)?"
                  r"(?P<n>\d+|two|three|four|five|six|seven|eight|nine|ten)\s+[^\W\d_][\w-]*\b[^?]*?"
                  r"\b(?P<word>most|largest|highest|biggest|greatest|fewest|least|lowest|smallest)\b|"
                  r"^\s*(?:which|what|name|list|show|give\s+me)\s+(?:are\s+|were\s+)?(?:the\s+)?top\s+"
                  r"(?P<n2>\d+|two|three|four|five|six|seven|eight|nine|ten)\b", re.I)
# (at the start only: "which album was the first to peak in the top ten positions?" asks for a chart position)
_LOW = {"fewest", "least", "lowest", "smallest"}
MAX_TOP = 20


def top_asked(question: str) -> tuple[int, bool] | None:
    """(n, largest): how many rows the question asks for and from which end, or None."""
    m = _TOP.search(question)
    if m is None:
        return None
    text = (m.group("n") or m.group("n2")).lower()
    n = int(text) if text.isdigit() else int(CARDINALS[text])
    return (n, not (m.group("word") and m.group("word").lower() in _LOW)) if 2 <= n <= MAX_TOP else None


def _measure(program: Program, typed: TypedTable) -> str | None:
    """The column of numbers the program ranks by: an extreme's (or a most-common's) column, or the column a
    threshold filter of a listing bounds ("rows where participants >= 800 -> trial", the model's guess at the
    cut-off); None when it ranks by none."""
    if program.fn in ("argmax", "argmin", "max", "min", "most_common") and typed.is_numeric(program.column) \
            and program.options.derive is None:
        return program.column
    bounded = {f.column for f in program.filters if f.op in ("<", "<=", ">", ">=", "=") and typed.is_numeric(f.column)}
    listing = program.fn == "value" or (program.fn == "most_common" and not typed.is_numeric(program.column))
    return bounded.pop() if listing and len(bounded) == 1 else None


def read_top_rows(program: Program, typed: TypedTable, question: str) -> Program:
    """The rows among the ``n`` largest (smallest) of the column the program ranks by (section comment), the
    model's own filters on that column dropped (its guesses at the cut-off); any other program as written."""
    asked = top_asked(question)
    if asked is None or not typed.label_col:
        return program
    measure = _measure(program, typed)
    if measure is None:
        return program
    n, largest = asked
    keep = [f for f in program.filters if f.column != measure]
    rows = selected_rows(Program(filters=keep, fn="count", column=measure), typed)
    if rows is None:
        return program
    c = typed.column(measure).index
    values = sorted((x for r in rows if (x := typed.number(r, c)) is not None), reverse=largest)
    if not values:
        return program
    label = typed.columns[typed.label_col - 1].ident
    named = program.column if program.fn in ("value", "most_common") else program.answer_column
    answer = named if named and named != measure else label
    # n rows or fewer to choose from: every one of them is among the top n
    cut = [] if len(values) <= n else [RowFilter(column=measure, op=">=" if largest else "<=",
                                                 value=format_value(values[n - 1]))]
    return Program(filters=[*keep, *cut], fn="value", column=answer, answer_column=answer)


# ======================================================================================================================
# "How many more patients per week does Riverbend see than Elm Park?" and "What is the difference in beds between
# Surgery and the ICU?": the difference between the two rows the question names, in the column it names.
#
# Found as a new user, after a question whose answer was the North district: four of five programs selected one
# row (Riverbend, or the East district) for a difference that needs two, and the fifth took the two North clinics,
# answering 340 (Northgate − Elm Park); Riverbend sees 400 more than Elm Park. The question's form settles it: the
# row stated before "than" and the row stated after it, both named by their cells (:func:`row_stated`), and the
# program's column when the question names it. Anything less certain leaves the program as written.
# ======================================================================================================================

_HOW_MANY_MORE = re.compile(
    r"^\s*how\s+(?:many|much)\s+(?:more|fewer|less|higher|lower|larger|smaller|bigger|greater)\b"
    r"(?P<first>.+?)\bthan\s+(?P<second>[^?]+?)\s*\??\s*$", re.I)
# "What is the difference in beds between Surgery and the ICU?" (found as a new user: no program ran, and the
# fallback answered from figures the table does not hold, "100 - 80 = 20 beds"; Surgery has 40, the ICU 16)
_DIFFERENCE_BETWEEN = re.compile(
    r"^\s*what\s+(?:is|was|'s)\s+the\s+difference\b(?P<measure>[^?]*?)\bbetween\s+(?P<first>.+?)\s+and\s+"
    r"(?P<second>[^?]+?)(?:\s+(?:in|for)\s+(?P<after>[^?]+?))?\s*\??\s*$", re.I)
_TOKEN = re.compile(r"[a-z0-9]+")
_READS_ONE_NUMBER = ("difference", "value", "sum", "max", "min")


def read_named_difference(program: Program, typed: TypedTable, question: str) -> Program:
    """The difference between the row stated before "than" and the row stated after it (section comment)."""
    m = _HOW_MANY_MORE.search(question)
    measure = m.group("first") if m else ""
    if m is None and (m := _DIFFERENCE_BETWEEN.search(question)) is not None:
        measure = f"{m.group('measure')} {m.group('after') or ''}"
    label = typed.label_col
    if m is None or label is None or program.fn not in _READS_ONE_NUMBER or program.options.derive is not None:
        return program
    # the column the measure names with the most of its header's words ("DDD Q2" over "DDD Q1"); the program's
    # own when it is among the best
    said = set(_TOKEN.findall(measure.lower()))
    scores = {c.ident: len(set(_TOKEN.findall(c.name.lower())) & said) for c in typed.columns
              if c.numeric and c.index != label and column_named(c.name, measure)}
    top = max(scores.values(), default=None)
    best = [ident for ident, n in scores.items() if n == top]
    if program.column not in best:
        if len(best) != 1:
            return program
        program = program.model_copy(update={"column": best[0]})
    first, second = row_stated(typed, m.group("first")), row_stated(typed, m.group("second"))
    if first is None or second is None or first == second:
        return program
    names = [typed.text(r, label).strip() for r in (first, second)]
    if any(not name or len(name) > VALUE_MAX_CHARS for name in names) or names[0] == names[1]:
        return program
    ident = typed.columns[label - 1].ident
    return Program(filters=[RowFilter(column=ident, op="=", value=name) for name in names], fn="difference",
                   column=program.column)
