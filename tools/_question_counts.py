"""Questions of how often and how much over rows: frequency ("who won the most times?"), values that recur over rows,
a question about some of the rows, ratios and shares, rates over a column of counts, medians and averages per
group, and the share of the table's rows that meet a condition.

Each section below opens with a comment that says what it reads and the case it came from.
"""

from __future__ import annotations

import re

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from kb.tables import Table
from tools._cells import TypedTable, cell_number, norm_text, text_words, writes_whole
from tools._grounding import column_named, named_words, question_numbers
from tools._table_ops import selected_rows
from tools._table_ops_model import RATIO_FNS, MoreRowsThan, Options, Program, Ratio, RowFilter, RowGroups
from tools._table_shape import writes_shares
from tools._values import stated_cells
from tools.lang.lexicon import CARDINALS, DOWNWARD, RANK_HEADER, UPWARD, content_words, related, singular, word_in
from tools.lang.reading import extreme_directions, is_superlative


# ======================================================================================================================
# Questions of frequency: "Who won the most times?", "Which adverse event was most frequent on placebo?".
#
# "Most frequent" means two things, and the table's form says which:
#
# - :func:`read_frequency`: over rows that repeat a name (one row per race), the name in most rows. A largest
#   value of a column the question does not name becomes the most common value of the answer column;
# - :func:`read_frequency_of_measure`: over rows that each name a different thing (one row per adverse event, a
#   count per arm), the row whose count in the column the question names is the largest. A most common value is
#   no answer there: every name occurs once, so all of them tie.
# ======================================================================================================================

FREQUENCY = re.compile(r"\bmost (?:times|often|frequent(?:ly)?|common(?:ly)?)\b|\b(?:appears?|occurs?|listed) "
                       r"(?:the )?most\b", re.I)
_MOST_NOUN = re.compile(r"\b(?:the\s+)?most\s+([^\W\d_]{3,})\b", re.I)


def most_rows_asked(question: str, typed: TypedTable) -> bool:
    """"Which drug was tested in the most trials?" over a table whose rows are trials (its row-label column is
    "Trial", or it is named "trials"): the most of the rows themselves, a count of rows per drug."""
    found = _MOST_NOUN.search(question)
    if found is None:
        return False
    return singular(found.group(1).casefold()) in row_kinds(typed.table)


def row_kinds(table: Table) -> set[str]:
    """What one row of the table is, in the singular: the last word of the table's name ("trials") and of its
    row-label header ("Trial")."""
    label = table.row_label_col
    kinds = {singular(w) for w in re.findall(r"[^\W\d_]+", table.name.casefold())[-1:]}
    if label is not None:
        kinds |= {singular(w) for w in re.findall(r"[^\W\d_]+", table.columns[label - 1].casefold())[-1:]}
    return kinds


def read_frequency(program: Program, typed: TypedTable, question: str) -> Program:
    """"Who won the most times?" asks which name occurs in most rows (found as a new user: the programs took the
    winner of the row with the most finishers, right by chance). A largest value of a column the question does
    not name becomes the most common value of the program's answer column. So does "the most <rows>" ("Which drug
    was tested in the most trials?" over a table of trials, found as a new user: the drug of the largest trial won,
    3 of 5 programs)."""
    if program.fn not in ("max", "argmax") or not (FREQUENCY.search(question) or most_rows_asked(question, typed)):
        return program
    try:
        measured = typed.column(program.column).name
    except KeyError:
        return program
    if column_named(measured, question):
        return program
    answer = program.answer_column if program.fn == "argmax" and program.answer_column else program.column
    return program.model_copy(update={"fn": "most_common", "column": answer, "filters": program.filters})


def _all_distinct(typed: TypedTable, index: int) -> bool:
    """Whether the column's non-empty cells all differ (so no value occurs more often than another)."""
    cells = [typed.text(r, index).strip().casefold() for r in range(1, typed.table.n_rows + 1)]
    cells = [c for c in cells if c]
    return len(cells) > 1 and len(set(cells)) == len(cells)


def read_frequency_of_measure(program: Program, typed: TypedTable, question: str) -> Program:
    """"Which adverse event was most frequent on placebo?" over one row per adverse event: the row with the most
    cases in the one number column the question names ("Placebo (n=412)"), not the most common event name.

    Found as a new user over an adverse-event table (counts per arm): three of five programs took the most common
    name, which ties all six rows, and the answer was "Any serious adverse event" (Headache has the most cases).
    Read so only when the answer column names each row once and exactly one number column is named (a dose's
    number names its arm: "on 20 mg" is "Drug 20 mg (n=415)").
    """
    if program.fn != "most_common" or not FREQUENCY.search(question):
        return program
    try:
        answer = typed.column(program.column)
    except KeyError:
        return program
    if answer.numeric or not _all_distinct(typed, answer.index):
        return program
    named = [col for col in typed.columns
             if col.numeric and col.index != answer.index and named_words(col.name, question, short_numbers=True)]
    if len(named) != 1:
        return program
    return program.model_copy(update={"fn": "argmax", "column": named[0].ident, "answer_column": answer.ident})


# ======================================================================================================================
# Values that recur over rows: "Which drugs were tested in more than one trial?" over a table of one row per trial.
#
# Found as a new user over a trials XLSX: 3 of 5 programs read "more than one" as "Participants > 1" and listed every
# drug, shown as computed. The number bounds how many rows (trials) hold the value, not a cell. When a "which/what
# <noun>" question bounds a count of the table's own rows ("in more than one trial", "in at least 2 trials", "in
# multiple trials") and the noun names one text column (Drug), the answer is every value of that column held by more
# rows than that, among the rows the program's other filters keep; a filter that put the bound's number on a column
# of numbers goes.
# ======================================================================================================================

_ASKED = re.compile(r"^\s*(?:which|what)\s+(?P<noun>[^\W\d_]+)", re.I)
_NEGATION = re.compile(r"\b(?:not|never|no)\b|n't\b", re.I)  # "did not have more than one song …": the others
_NUMBER = r"\d+|" + "|".join(CARDINALS)
# the rows' noun may follow a word or two that qualify them: "in at least 2 phase III trials"
_OVER_ROWS = re.compile(rf"\b(?:(?P<more>more than|over)\s+(?P<n>{_NUMBER})|at least\s+(?P<least>{_NUMBER})|"
                        rf"(?P<several>multiple|several|two or more))\s+(?P<rows>[\w-]+(?:\s+[\w-]+){{0,2}})", re.I)


def _count(word: str) -> int | None:
    n = CARDINALS.get(word.casefold())
    if n is None:
        n = cell_number(word)
    return int(n) if n is not None and float(n).is_integer() else None


def rows_bound(typed: TypedTable, question: str) -> tuple[str, int, str] | None:
    """(the identifier of the column asked for, the count of rows a value must exceed, the bound's number as
    written) of "which <noun> … in more than N <rows>?", or None."""
    asked = _ASKED.match(question or "")
    found = _OVER_ROWS.search(question or "")
    kinds = row_kinds(typed.table)
    if asked is None or found is None or _NEGATION.search(question) \
            or not any(singular(w.casefold()) in kinds for w in found.group("rows").split()):
        return None
    if found.group("several"):
        more_than, written = 1, "1"  # "in multiple trials": the model writes its "> 1" on a column of numbers
    else:
        written = found.group("n") or found.group("least")
        n = _count(written)
        if n is None:
            return None
        more_than = n if found.group("n") else n - 1
    noun = singular(asked.group("noun").casefold())
    columns = [col for col in typed.columns if not col.numeric and col.index != typed.label_col
               and any(related(noun, w) for w in content_words(col.name))]
    if len(columns) != 1 or more_than < 0:
        return None
    return columns[0].ident, more_than, written


def read_rows_per_value(program: Program, typed: TypedTable, question: str) -> Program:
    """The values of the asked column held by more rows than the question's bound (section comment); any other
    program as written."""
    bound = rows_bound(typed, question)
    if bound is None:
        return program
    column, more_than, written = bound
    # a filter on a column of numbers with the bound's number, or with one the question does not state, is the
    # bound misread as a cell's ("Participants > 1")
    n, stated = _count(written), question_numbers(question)
    kept = [f for f in program.filters if f.column != column and not (typed.is_numeric(f.column) and (
        (x := cell_number(f.value)) is None or x == n or round(abs(x), 6) not in stated))]
    return program.model_copy(update={"filters": kept, "fn": "most_common", "column": column,
                                      "answer_column": column, "check": None,
                                      "options": Options(row_count=MoreRowsThan(rows=more_than))})


# ======================================================================================================================
# A question about some of the table's rows ("the European cities"), which the programs answered over all of them.
#
# Found as a new user over an air-quality table of seven cities (City, Country, PM2.5, …): "What is the average
# PM2.5 across the European cities?" was answered 39.36, the mean of all seven, by five programs of five, and shown
# as verified. Nothing in the table says which cities are European, so no program could pick them out, and the
# reply did not say so: it answered another question.
#
# A capitalised word written just before the rows' own noun ("European" in "the European cities", "NFL" in "the NFL
# teams"; the noun from the table's name or row-label header) restricts the rows the question is about, when the
# table does not write it (then it may name a row or a column: "Orange County", "Home Team"). When every program
# that gave the answer kept all the rows (no filter), the answer is over all of them and the reply must say that,
# with low confidence and not as verified, rather than be shown as the answer asked for. So must it when every such
# program chose its rows by a value the question does not state: "Which Asian city has the lowest NO2?" was then
# answered by "Country = 'China'" (seen as a new user), the model's own judgement of which cities are Asian.
#
# Lower-case words are left alone: on 4,000 WikiTableQuestions training questions (all lower case) the same test
# without that condition fired on 39, and about three in four were words that pick nothing out ("the professional
# wrestler", "the first place driver", "track and field events").
# ======================================================================================================================

_CLAUSE = re.compile(r"[,;:.!?()]\s")
_WORD = re.compile(r"[^\W\d_][\w'’-]*|\d[\d,.]*")
# Words before the rows' noun that point at the table's own rows rather than pick some out.
_TABLE_ITSELF = frozenset("""listed selected above below following shown given named remaining respective individual
various different same table's data sample surveyed studied reported included mentioned total overall whole entire
previous next prior preceding subsequent consecutive single only best worst better worse th st nd rd""".split())
# Words that make the phrase a superlative or a comparison ("the most polluted cities"): another rule's business.
_ORDERING = frozenset("most least more less fewer larger smaller bigger higher lower greater top bottom".split())
MAX_QUALIFIER_WORDS = 2


def _plural(noun: str) -> str:
    """The rows' noun in the plural, as "all 7 <noun>" needs it ("city" -> "cities"; "cities" stays)."""
    low = noun.casefold()
    if singular(low) != low:
        return noun
    if low.endswith("y") and low[-2:-1] not in ("a", "e", "i", "o", "u"):
        return noun[:-1] + "ies"
    return noun + ("es" if low.endswith(("s", "x", "ch", "sh")) else "s")


def row_qualifier(table: Table, question: str) -> tuple[str, str] | None:
    """(qualifier, the rows' noun as written) when the question restricts the table's rows by words before their
    noun that the table does not write ("European", "cities"); None when it does not."""
    kinds = row_kinds(table)
    for part in _CLAUSE.split(question):  # "other than Costa, name a swimmer": no qualifier across a comma
        words = _WORD.findall(part)
        for i, word in enumerate(words):
            if i == 0 or singular(word.casefold()) not in kinds:
                continue
            qualifier: list[str] = []
            j = i - 1
            while j >= 0 and len(qualifier) <= MAX_QUALIFIER_WORDS:
                w = words[j].casefold()
                if w in ENGLISH_STOP_WORDS or w in _ORDERING or w in CARDINALS or w[0].isdigit():
                    break
                qualifier.insert(0, words[j])
                j -= 1
            if not qualifier or len(qualifier) > MAX_QUALIFIER_WORDS or j >= 0 and words[j].casefold() in _ORDERING:
                continue  # "the most polluted cities": a superlative
            if not all(w[0].isupper() for w in qualifier) or any(
                    w.casefold() in _TABLE_ITSELF or w.casefold() in UPWARD | DOWNWARD for w in qualifier):
                continue  # a proper adjective or name picks rows out; "the winning team" may be vacuous
            phrase = " ".join(qualifier)
            if _written_in(table, phrase):  # a name the table writes ("Orange County", "Home Team"): filterable
                continue
            return phrase, word
    return None


def _written_in(table: Table, phrase: str) -> bool:
    """Whether the table's title, a header or a cell writes the phrase as whole words."""
    said = norm_text(phrase)
    return any(writes_whole(norm_text(text), said)
               for text in [table.title, *table.columns, *(cell for row in table.rows for cell in row)])


def _stem_written(table: Table, qualifier: str) -> bool:
    """Whether the table writes each word of the qualifier or a word of its stem ("North" for "Northern")."""
    words = list({w.casefold() for text in [table.title, *table.columns, *(c for row in table.rows for c in row)]
                  for w in _WORD.findall(str(text))})
    return all(word_in(q.casefold(), words) for q in _WORD.findall(qualifier))


def qualifier_note(table: Table, found: tuple[str, str], rows_kept: int, chosen_by: list[str] | None = None) -> str:
    """What the reply says when the answer is over all ``rows_kept`` rows although the question restricts them by
    ``found`` (:func:`row_qualifier`), or over rows the programs chose by values the question does not state
    (``chosen_by``)."""
    qualifier, noun = found[0], _plural(found[1])
    if _stem_written(table, qualifier):  # "Northern" over Region = "North": the programs could have
        head = f"The question asks about the {qualifier} {noun}, but no program picked those out by the table"
    else:
        head = f"The question asks about the {qualifier} {noun}, but nothing in the table reads “{qualifier}”"
    if chosen_by:
        values = ", ".join(f"“{v}”" for v in chosen_by[:3])
        return (f"{head}: the programs chose the rows by {values}, which the question does not state, so which "
                f"{noun} count as {qualifier} was the model's judgement, not computed from the table.")
    if head.endswith("by the table"):
        return f"{head}: this is over all {rows_kept} {noun}, not an answer for the {qualifier} ones."
    return (f"{head}, so no program could pick those out: this is over all {rows_kept} {noun}, not an answer for the "
            f"{qualifier} ones.")


# ======================================================================================================================
# Ratios and shares a table question asks for, read into its program (split from tools._question_rules).
#
# - :func:`read_ratio`: "which trial had the most dropouts relative to participants?" is the largest ratio of the two
#   columns (found as a new user: it named the trial with the most dropouts);
# - :func:`read_share`: "what share of Drug A patients died?" is Drug A's Deaths over its Patients (found as a new
#   user: it answered 142);
# - :func:`read_share_of_all`: "what share of all beds does St Mary have?" is St Mary's beds over every row's beds.
#
# They run in the order tools._program_readers gives them, beside the other readers of a question's form.
# ======================================================================================================================

# "relative to the participants", "per game", "as a share of the votes cast": the measure over another column.
_RATIO = re.compile(r"\b(?:relative to|per|for (?:each|every)|divided by|in proportion to|as an? (?:share|proportion|"
                    r"fraction|percentage) of)\s+(?:the\s+|its\s+|their\s+)?(?:number\s+of\s+|total\s+)?"
                    r"([^\W\d_][\w\s()%-]{0,40}?)\s*(?=[?.,;]|\b(?:in|of|among|across|at|on|during|than|and|or)\b|$)",
                    re.I)


def read_ratio(program: Program, typed: TypedTable, question: str) -> Program:
    """"Which trial had the most dropouts relative to participants?" is the largest Dropouts / Participants.

    The phrase after "relative to", "per", "for each", "as a share of" must name another numeric column; the
    program's max, min, argmax or argmin then runs over the ratio. Not when the measure already is a ratio (a
    header with "per", "/" or "%", e.g. "Points per game"), nor for a phrase no column is named by ("per capita").
    """
    m = _RATIO.search(question)
    if not m or program.fn not in RATIO_FNS or program.options.derive is not None:
        return program
    named = _denominators(typed, program.column, m.group(1), already_a_ratio=r"\bper\b|/|%")
    if not named:
        return program
    return program.model_copy(update={"options": program.options.replaced(derive=Ratio(per_column=named[0].ident))})


def _denominators(typed: TypedTable, ident: str, phrase: str, *, already_a_ratio: str) -> list:
    """The numeric columns ``phrase`` names that column ``ident`` may be divided by; none when ``ident`` is no
    column of numbers or already a ratio (its header matches ``already_a_ratio``: "Points per game")."""
    try:
        measure = typed.column(ident)
    except KeyError:
        return []
    if not measure.numeric or re.search(already_a_ratio, measure.name, re.I):
        return []
    # A year or a rank is no denominator: "the most wins per season" over a Season column of years groups by
    # season, it does not divide by 1998.
    return [col for col in typed.columns
            if col.numeric and col.ident != measure.ident and not col.holds_years
            and not RANK_HEADER.search(col.name) and column_named(col.name, phrase)]


_SHARE = re.compile(r"\b(?:what|which)\s+(?:share|proportion|fraction|percentage|percent|rate)\s+of\s+(?:the\s+)?"
                    r"((?:(?:1[89]|20)\d{2}\s+)?[^\W\d_][\w\s()%+'’-]{0,60}?)\s*"
                    r"(?=\b(?:who|that|which|were|was|had|have|did|died|are|is)\b|[?.,;]|$)",
                    re.I)


def read_share(program: Program, typed: TypedTable, question: str) -> Program:
    """"What share of Drug A patients died?" is Drug A's Deaths over its Patients, not its Deaths.

    Found as a new user: the answer was 142, Drug A's deaths. When the phrase after "what share / proportion /
    percentage of" names another numeric column (Patients) and the program reads one named row's number (a filter
    on the row names), that row's ratio of the two columns answers. Over several rows a share is a ratio of sums,
    which no program computes, so only one named row is read so.
    """
    m = _SHARE.search(question)
    if not m or program.fn not in ("value", "sum", "avg", "max", "min") or program.options.derive is not None \
            or not typed.label_col:
        return program
    label = typed.columns[typed.label_col - 1].ident
    if not any(f.column == label and f.op == "=" for f in program.filters):
        # "What share of Elm Ridge's population is fully vaccinated?": the share's own words name the row. Found
        # as a new user: no program filtered Elm Ridge, and the answer was the average of every row's Fully
        # vaccinated (41,244.2).
        rows = stated_cells(typed, m.group(1)).get(label, set())
        if len(rows) != 1 or program.fn == "avg" and program.filters:
            return program
        program = program.model_copy(update={"filters": [*program.filters,
                                                         RowFilter(column=label, op="=", value=rows.pop())]})
    named = _denominators(typed, program.column, m.group(1), already_a_ratio=r"\bper\b|/|%|\brate\b")
    if len(named) != 1 or len(named_words(typed.column(program.column).name, m.group(1), short_numbers=True)) \
            >= len(named_words(named[0].name, m.group(1), short_numbers=True)):
        # "What percentage of 2023 revenue came from Europe?" names the measure itself (Revenue 2023), not Revenue
        # 2022: a share of its column's total (read_share_of_all). Found as a new user: 310.4 / 298.1 = 1.041.
        return program
    return program.model_copy(update={"fn": "max", "options": program.options.replaced(
        derive=Ratio(per_column=named[0].ident), nth=1)})


def asks_share(question: str) -> bool:
    """Whether the question asks for a share: "what share / proportion / percentage of …"."""
    return bool(_SHARE.search(question))


def read_share_of_all(program: Program, typed: TypedTable, question: str) -> Program:
    """"What share of all beds does St Mary have?" is St Mary's beds as a percentage of every row's beds.

    Found as a new user: the answer was 310, St Mary's beds (4 of 5 programs). When the phrase after "what share /
    percentage of" names the column the program reads (its last word the header's), and the program reads some of
    the rows, the answer is their share of the column's total. A share of another column is :func:`read_share`'s.
    """
    m = _SHARE.search(question)
    if not m or program.fn not in ("value", "sum", "avg", "max", "min") or program.options.divides_by \
            or not program.filters:
        return program  # (seen as a new user: 3 of 5 programs read St Mary's beds as their average)
    try:
        col = typed.column(program.column)
    except KeyError:
        return program
    phrase = content_words(re.sub(r"^(?:all|total|the\s+total|combined)\s+(?:the\s+)?", "", m.group(1).strip(),
                                  flags=re.I))
    head = content_words(re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", col.name))
    if not col.numeric or col.holds_years or not phrase or not head or not word_in(head[-1], phrase[:3]) \
            or re.search(r"%|\bper\b|\brate\b|\bshare\b|\bpercent", col.name, re.I) \
            or writes_shares(typed, col.ident):  # "265 (22.0%)" writes the share itself (tools._table_shape)
        return program
    return program.model_copy(update={"fn": "share", "options": program.options.replaced(nth=1), "check": None})


# ======================================================================================================================
# A rate the message names over a column of counts: "Which trial had the highest completion rate?".
#
# Found as a new user, over a trials table with Enrolled and Completed counts: all five programs took the trial
# with the most completed participants (EPS-5, 2,480 of 3,050: 81%), not the highest rate (DELTA-4, 95%). A rate of
# a count is that count over the population it is part of. When the word before "rate" names the column the
# program reads ("completion" and Completed), and that column holds counts, :func:`read_rate` divides it by the
# column that holds its population: the numeric column at least as large in every row, and at least as large as
# every other such column (Enrolled, not Completed, for serious adverse events). No such column: no rate is read.
#
# A share written out is read the same way: "Which outbreak had the highest share of cases hospitalized?" took the
# most hospitalized (260 of 1,040), not the highest share (31 of 36; found as a new user). The phrase after "share /
# proportion / percentage of" must name one count column that is at least the measure in every row.
# ======================================================================================================================

_RATE = re.compile(r"\b([^\W\d_][\w-]*)\s+(?:rate|rates|ratio)\b", re.I)
# "the highest share of cases hospitalized", "the lowest proportion of its participants": the population follows.
_SHARE_OF = re.compile(r"\b(?:share|proportion|fraction|percentage|percent)\s+of\s+(?:the\s+|its\s+|their\s+|all\s+)?"
                       r"([^\W\d_][\w\s-]{0,40}?)\s*(?=[?.,;]|\b(?:in|among|across|at|on|during|than|and|or|was|were|"
                       r"is|are|who|that|with)\b|$)", re.I)
# A rate named by what it counts in other words: "the case fatality rate" is deaths per case, "mortality" deaths
# (found as a new user: "What was the case fatality rate of diphtheria in Nigeria?" answered 596, the deaths)
_RATE_OF = {"fatality": "deaths", "mortality": "deaths", "hospitalization": "hospitalized",
            "hospitalisation": "hospitalised", "admission": "admitted", "admissions": "admitted"}
_ALREADY_A_RATE = re.compile(r"%|\b(?:rate|ratio|per|percent|percentage|share|proportion|fraction)\b|/", re.I)


def _holds_counts(typed: TypedTable, c: int) -> bool:
    col = typed.columns[c - 1]
    xs = [x for x in col.numbers if x is not None]
    return bool(xs) and not col.holds_years and not RANK_HEADER.search(col.name) \
        and not _ALREADY_A_RATE.search(col.name) and all(x >= 0 for x in xs) \
        and not any(v.strip().endswith("%") for v in typed.table.column_values(c))


def _at_least(typed: TypedTable, big: int, small: int) -> bool:
    """Whether column ``big`` is at least column ``small`` in every row that has both (most rows do)."""
    pairs = [(typed.columns[big - 1].numbers[r], typed.columns[small - 1].numbers[r])
             for r in range(typed.table.n_rows)]
    pairs = [(b, s) for b, s in pairs if b is not None and s is not None]
    return bool(pairs) and len(pairs) * 2 > typed.table.n_rows and all(b >= s for b, s in pairs)


def population(typed: TypedTable, c: int) -> int | None:
    """The column that holds column ``c``'s population (section comment), or None."""
    bigger = [col.index for col in typed.columns
              if col.index != c and col.numeric and _holds_counts(typed, col.index) and _at_least(typed, col.index, c)]
    whole = [b for b in bigger if all(b == o or _at_least(typed, b, o) for o in bigger)]
    return whole[0] if len(whole) == 1 else None


def _share_of(typed: TypedTable, c: int, message: str) -> int | None:
    """The population a "share of <population>" phrase names for the counts in column ``c``, or None."""
    for m in _SHARE_OF.finditer(message):
        named = [col.index for col in typed.columns
                 if col.index != c and col.numeric and _holds_counts(typed, col.index)
                 and column_named(col.name, m.group(1)) and _at_least(typed, col.index, c)]
        if len(named) == 1:
            return named[0]
    return None


_CASE_FATALITY = re.compile(r"\bcase[- ]fatality\b", re.I)


def _cases_of(typed: TypedTable, c: int, message: str) -> int | None:
    """For "the case fatality rate", the column of cases that bounds column ``c``: deaths per case, not per head
    of a population column beside it; None for any other message."""
    if not _CASE_FATALITY.search(message):
        return None
    cases = [col.index for col in typed.columns if col.index != c and col.numeric and _holds_counts(typed, col.index)
             and column_named(col.name, "cases") and _at_least(typed, col.index, c)]
    return cases[0] if len(cases) == 1 else None


_ONE_ROW_READS = ("value", "avg", "sum", "min", "max")


def read_rate(program: Program, typed: TypedTable, message: str, *, one_row: bool = False) -> Program:
    """The program's extreme over a count the message calls a rate runs over that count per its population
    (section comment); any other program as written.

    ``one_row`` (questions): a value read from the one row a filter names is that row's rate, as the largest over
    that row ("What was the event rate in the placebo arm?" answered 61, the events; found as a new user over a
    trial's arms). Not for claims: a claim's check states the rate in its own form ("14.8%")."""
    label = typed.columns[typed.label_col - 1].ident if typed.label_col else None
    # "rows where Region = 'North' -> avg of Deaths" is the same one cell as its value (found as a new user: "What
    # was the death rate in the North?" answered 3, the deaths)
    if one_row and program.fn in _ONE_ROW_READS and program.options.derive is None and label is not None \
            and any(f.column == label and f.op == "=" for f in program.filters):
        rated = read_rate(program.model_copy(update={"fn": "max", "options": program.options.replaced(nth=1)}), typed,
                          message)
        return rated if rated.options.divides_by else program
    if program.fn not in RATIO_FNS or program.options.derive is not None:
        return program
    try:
        measure = typed.column(program.column)
    except KeyError:
        return program
    if not measure.numeric or not _holds_counts(typed, measure.index):
        return program
    if any(column_named(measure.name, m.group(1))
           or (m.group(1).lower() in _RATE_OF and column_named(measure.name, _RATE_OF[m.group(1).lower()]))
           for m in _RATE.finditer(message)):
        whole = _cases_of(typed, measure.index, message) or population(typed, measure.index)
    else:
        whole = _share_of(typed, measure.index, message)
    if whole is None:
        return program
    return program.model_copy(update={"options": program.options.replaced(
        derive=Ratio(per_column=typed.columns[whole - 1].ident))})


# ======================================================================================================================
# Medians and averages per group: what the text asks that the grammar does not offer.
#
# Found as a new user over a table of foods: "What is the median sugar content?" has no function of its own in the
# grammar (the model writes a mean, or nothing), and "Which category has the most calories on average?" was answered
# with the mean of every row, 236.7, where it asks for the category whose foods average the most. Both are read from
# the text's words, as the other rules of :mod:`tools._question_rules` are.
# ======================================================================================================================

_MEDIAN = re.compile(r"\bmedian\b", re.I)
# the reads a median replaces: a mean, or a sum or one value the model took for the middle one; an extreme too, where
# the text asks for none (found as a new user: "What is the median sugar content?" was written as the largest or the
# smallest Sugar by 10 of 10 programs, and the split vote left the model to answer one food's 1.7)
_MEAN_LIKE = ("avg", "sum", "value")
_EXTREMES = ("max", "min", "argmax", "argmin")


def read_median(program: Program, typed: TypedTable, text: str) -> Program:
    """"What is the median sugar content?" takes the middle value of the selected rows' numbers, not their mean.

    The text must say "median" and not name a column that already holds medians ("Median age (years)": there
    the cell is the median, and the model's read of it stands)."""
    if not _MEDIAN.search(text) or program.options.derive is not None or program.check is not None \
            and program.check.against != "value":
        return program
    if program.fn not in _MEAN_LIKE and (program.fn not in _EXTREMES or is_superlative(text)):
        return program
    try:
        col = typed.column(program.column)
    except KeyError:
        return program
    if not col.numeric or col.holds_years or _MEDIAN.search(col.name):
        return program
    if program.fn == "value" and len(selected_rows(program, typed) or []) < 2:
        return program  # one row's value is its own median; a claim about one row reads that row
    return program.model_copy(update={"fn": "median", "options": program.options.replaced(nth=1)})


_AVERAGE = re.compile(r"\b(?:on average|average|mean|typically)\b", re.I)
_WHICH_NOUN = re.compile(r"^\s*(?:which|what)\s+([^\W\d_]+)", re.I)


def read_group_mean(program: Program, typed: TypedTable, question: str) -> Program:
    """"Which category has the most calories on average?" is the category whose rows' mean Calories is the largest.

    The question starts "which <noun>", the noun names a column whose values repeat among the selected rows (each
    row its own group would make the mean the row's value, which an argmax already reads), it asks for an average
    and for one extreme. The program may have read the mean of every row ("avg") or the row with the extreme
    ("argmax"); either is turned into the extreme over the groups' means.
    """
    m = _WHICH_NOUN.match(question or "")
    ups, downs = extreme_directions(question or "")
    if m is None or not _AVERAGE.search(question) or bool(ups) == bool(downs) or program.options.derive is not None \
            or program.fn not in ("avg", "argmax", "argmin", "max", "min"):
        return program
    try:
        measure = typed.column(program.column)
    except KeyError:
        return program
    groups = [col for col in typed.columns
              if not col.numeric and col.ident != measure.ident and column_named(col.name, m.group(1))]
    selected = selected_rows(program, typed)
    if not measure.numeric or measure.holds_years or len(groups) != 1 or not selected:
        return program
    group = groups[0]
    values = [text_words(typed.text(r, group.index)) for r in selected]
    if len(set(values)) == len(values):
        return program
    return program.model_copy(update={"fn": "argmax" if ups else "argmin", "answer_column": group.ident,
                                      "options": program.options.replaced(grouping=RowGroups(by="mean")),
                                      "check": None})


# ======================================================================================================================
# "What percentage of wards passed the audit?": the share of the table's rows that meet the question's condition.
#
# Found as a new user with a spreadsheet of wards (Beds, antibiotic use per quarter, Audit passed Yes/No): 6 of 10
# programs filtered the wards that passed and averaged their Q1 antibiotic use (74.4); 4 of 6 wards passed, 66.7%.
# No program could say it: a share (``fn="share"``) was of a column's total, and a count is not a percentage. The
# question's form settles it: "what share / proportion / percentage of <the rows' noun> …", where the noun is the
# header of the column that names the rows ("wards" for Ward) or a word for rows, asks the selected rows over all
# of them. The condition stays the model's filters; without one, or with a filter naming a single row, the program
# is left as written.
# ======================================================================================================================

_WHAT_SHARE_OF = re.compile(r"^\s*(?:what|which)\s+(?:share|proportion|fraction|percentage|percent)\s+of\s+"
                       r"(?:the\s+|all\s+(?:the\s+)?)?(?P<noun>[^\W\d_][\w-]*)\b", re.I)
_ROW_NOUNS = {"rows", "records", "entries", "items", "lines"}


def read_share_of_rows(program: Program, typed: TypedTable, question: str) -> Program:
    """The share of the rows the program's filters keep, when the question asks it (section comment)."""
    m = _WHAT_SHARE_OF.search(question)
    label = typed.label_col
    if m is None or not label or not program.filters:
        return program
    ident = typed.columns[label - 1].ident
    noun = m.group("noun").lower()
    header = content_words(typed.columns[label - 1].name)
    if noun not in _ROW_NOUNS and not (header and word_in(header[-1], [noun]) or word_in(noun, header[-1:])):
        return program  # "What percentage of beds …" is a share of the Beds total (read_share_of_all)
    if any(f.column == ident and f.op == "=" for f in program.filters):
        return program  # one named row is no share of the rows
    return Program(filters=program.filters, fn="share", column=ident, answer_column=ident)
