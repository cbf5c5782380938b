"""Comparisons between rows: two named rows compared in a claim, the program a two-row comparison's words give, two
groups of rows compared by totals or means, a count of the rows beyond a named row, a row against the rest of its
group, an "every" check its own filter makes true, and a claim about one row's value.

Each section below opens with a comment that says what it reads and the case it came from.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from tools._cells import TypedTable, cell_number, format_value, \
    norm_text, text_words, writes_whole
from tools._claim_grounding import row_names_in
from tools._claim_multiples import stated_scale
from tools._grounding import COMPARED_WITH_ROW, GREATER_WORDS, bound_of_row, column_named, question_numbers, \
    row_compared_with, value_grounded
from tools._values import bound_pairs
from tools._table_checks import row_names
from tools._table_ops import selected_rows
from tools._table_ops_model import MAX_FILTERS, VALUE_MAX_CHARS, Check, Note, Program, RowFilter
from tools._table_shape import LOWER_BOUND, UPPER_BOUND, rows_but_totals, selects_only
from tools.lang.lexicon import CARDINALS, RANK_HEADER, content_words, word_in
from tools.lang.reading import is_superlative, names_iso_month, read_against


# ======================================================================================================================
# Claims that compare two named rows ("Bergen gets more rain than Cardiff"): how the small model writes them.
#
# Found as a new user, over a six-city rainfall table, "Bergen gets more rain than Cardiff." (true: 2250 mm against
# 1152) came back Refuted 2 votes to 1. Of the five programs:
#
# - two were "rows where city = 'Bergen' and city = 'Cardiff' → annual_rainfall_mm; check: result > annual_rainfall_mm
#   of 'Cardiff'". The check already names Cardiff, the row compared with; its filter repeats it, and two '=' filters
#   on one column select nothing, so neither ran. :func:`read_compared_row` drops the filter that names the check's
#   row: the program then reads as the claim does.
# - two checked "= Cardiff's" where the claim says "more … than": an equality the claim never states, which refuted
#   it. :func:`comparison_blocker` keeps such checks out of the vote.
#
# Found as a new user over a vaccines table, "Novavax's vaccine is stored at a colder temperature than Moderna's."
# was decided by "rows where Manufacturer = 'Moderna' → Storage temp; check: result > Storage temp of 'Comirnaty'":
# a comparison with a row the claim never names, whatever its result, is not the claim's.
# :func:`unnamed_row_blocker` keeps it out of the vote.
# ======================================================================================================================

# "more … than", "fewer than", "higher than": a comparison the claim states. A number before the comparative ("3
# more wins than") states a difference, which an equality may check. Up to six words between: "fewer days above
# the WHO limit than" (a header of four words; seen as a new user), hyphenated or possessive ones too ("a longer
# median follow-up than").
_COMPARATIVE = re.compile(r"\b(more|less|fewer|greater|higher|lower|larger|smaller|bigger|longer|"
                          r"shorter|older|younger|earlier|later|heavier|lighter|wetter|drier|hotter|colder|warmer|"
                          r"cooler|cheaper|costlier|pricier|dearer)\b(?:\s+[\w'’-]+){0,6}?\s+than\b", re.I)
_NUMBER_BEFORE = re.compile(r"(?:\d[\d,.]*%?|" + "|".join(CARDINALS) + r"|twice|times)\s*$", re.I)


def stated_comparisons(claim: str) -> list[tuple[str, int, int]]:
    """The "<comparative> … than" the claim states without saying by how much: (the comparative in lower case,
    where it starts, where "than" ends)."""
    return [(m.group(1).lower(), m.start(), m.end()) for m in _COMPARATIVE.finditer(claim)
            if not _NUMBER_BEFORE.search(claim[:m.start()].rstrip())]


def scaled_comparisons(claim: str) -> list[tuple[str, int, int]]:
    """The "<number> <comparative> … than" the claim states ("10% higher than", "3 more wins than"), as
    :func:`stated_comparisons` gives the others."""
    return [(m.group(1).lower(), m.start(), m.end()) for m in _COMPARATIVE.finditer(claim)
            if _NUMBER_BEFORE.search(claim[:m.start()].rstrip())]


def states_comparison(claim: str) -> bool:
    """Does the claim compare with "… than", without stating by how much?"""
    return bool(stated_comparisons(claim))


def read_compared_row(program: Program, typed: TypedTable) -> Program:
    """Drop a '=' filter that names the row the check compares with, when another '=' filter on the same column
    names the claim's own row: "city = 'Bergen' and city = 'Cardiff'; check > Cardiff's" is "Bergen's > Cardiff's".
    """
    chk = program.check
    if chk is None or chk.against != "row" or not typed.label_col:
        return program
    label = typed.columns[typed.label_col - 1].ident
    equal = [f for f in program.filters if f.op == "=" and f.column == label]
    if len(equal) < 2:
        return program
    compared = [f for f in equal if norm_text(f.value) == norm_text(chk.value)
                or any(row_names(typed, r, f.value) and row_names(typed, r, chk.value)
                       for r in range(1, typed.table.n_rows + 1))]
    if not compared or len(compared) == len(equal):
        return program
    return program.model_copy(update={"filters": [f for f in program.filters if f not in compared]})


# "higher than 900 mg", "more than 50%", "over 1,000": a bound the claim states
_BOUND = re.compile(r"\b(?P<said>(?:more|less|fewer|greater|higher|lower|larger|smaller|bigger|longer|shorter|older|"
                    r"younger|heavier|lighter)\s+than|above|below|over|under|exceeds?|exceeding)\s+"
                    r"(?:about\s+|around\s+)?(?P<n>[-−]?\$?\d[\d,]*(?:\.\d+)?%?)", re.I)


def _bounds_stated(claim: str) -> dict[float, str]:
    """The numbers the claim states as bounds, with the words that state them: {900.0: 'higher than 900'}."""
    out = {}
    for m in _BOUND.finditer(claim):
        n = cell_number(m.group("n").replace("−", "-"))
        if n is not None:
            out[round(n, 6)] = f"{m.group('said')} {m.group('n')}"
    return out


def comparison_blocker(program: Program, claim: str) -> str:
    """Why a check of equality must not vote on a claim that says "more/less … than", or ``""``: equality with
    another row's value, or with the number the claim states as a bound. Found as a new user: "Can the adult dose
    of cephalexin be higher than 900 mg?" was answered no by 3 programs checking "= 900"."""
    chk = program.check
    if chk is None or chk.op not in ("=", "!="):
        return ""
    if chk.against == "row" and states_comparison(claim):
        return f"it checks whether the result {chk.op} the value of {chk.value!r}, where the claim says “… than”"
    if chk.against == "value" and (n := cell_number(chk.value)) is not None \
            and (said := _bounds_stated(claim).get(round(n, 6))):
        return f"it checks whether the result {chk.op} {chk.value}, where the claim says “{said}”"
    return ""


def unnamed_row_blocker(program: Program, typed: TypedTable, claim: str) -> str:
    """Why a check against another row must not vote when the claim writes no text cell of that row (its name, or
    another of its names: "Moderna's" for the row of Spikevax), or ``""``."""
    chk = program.check
    if chk is None or chk.against != "row" or not typed.label_col:
        return ""
    compared = [r for r in range(1, typed.table.n_rows + 1) if row_names(typed, r, chk.value)]
    if not compared:  # the run fails on its own, with a message that says so
        return ""
    said = norm_text(claim)
    numbers = question_numbers(said)
    if any(value_grounded(norm_text(typed.text(r, col.index)), said, numbers)
           or names_iso_month(claim, typed.text(r, col.index))
           for r in compared for col in typed.columns if not col.numeric and typed.text(r, col.index).strip()):
        return ""  # "… than March" names the row "2024-03" too
    return f"it compares with the row of {chk.value!r}, which the claim does not name"


# ======================================================================================================================
# The program a two-row comparison's words alone give: "Novavax's vaccine is stored at a colder temperature than
# Moderna's."
#
# Found as a new user over a five-vaccine table: asked as a claim and as "Is … ?", that sentence was decided by
# whatever the sampled programs happened to compare: "Vaccine = 'Jcovden' → Storage temp; check != 'Moderna'" (true of
# any table), "Manufacturer = 'Pfizer-BioNTech' → Storage temp; check < Spikevax's" (a row the claim never names), or
# two '=' filters on Manufacturer, which select nothing. Yet the sentence's form fixes the program: one row named
# before the comparative, one after "than", one column of numbers named, and the comparative's direction. So it is
# built in code, run with the same rules and citations as a sampled program, and decides (no model call).
#
# It is built only when every part is unambiguous, else the model's programs decide as before:
#
# - one "<comparative> … than" with no number before it ("3 more wins than" states a difference) and no negation;
#   or one whose number is a multiple or a percentage ("more than 10% higher than", "twice as … than"): the rule
#   that reads a claim's multiples (tools._claim_multiples.read_multiplier) then sets the check's factor;
# - the words before it name exactly one row and the words after "than" one or more other rows ("than ALPHA-1 and
#   BETA-2", compared with the most demanding of them; not "combined"), each by a text cell written whole ("Moderna"
#   of Manufacturer names Spikevax's row), a cell no other row shares;
# - exactly one column of numbers (not the row names) is named by its header's words; the two bound columns of one
#   interval column ("Storage temp (°C) lower/upper bound") count as that column, and are compared only when the two
#   rows' intervals do not overlap (then both bounds give the same answer; overlapping ranges are no fact either way);
# - the comparative has a direction ("colder", "fewer": smaller; "hotter", "more": larger). "older" and "younger" have
#   none, because a year column orders them the other way round ("founded earlier" is older);
# - the claim writes no number other than those in the named cells and header.
# ======================================================================================================================

# Which way each comparative orders the column's numbers: True, the subject's is larger
LARGER = frozenset("more greater higher larger bigger longer later heavier wetter hotter warmer costlier pricier "
                   "dearer".split())
SMALLER = frozenset("less fewer lower smaller shorter earlier lighter drier colder cooler cheaper".split())
NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|cannot)\b|n't\b", re.I)
# A price compared in its own words ("more expensive", "cheaper") names no header: the one column of prices does
_PRICE_WORDS = re.compile(r"\b(?:expensive|cheaper|costlier|pricier|dearer|costs?\s+(?:more|less))\b", re.I)
_PRICE_HEADER = re.compile(r"\b(?:cost|costs|price|prices|fee|fees|spend|spending|expenditure|usd|eur|gbp)\b|[$€£]",
                           re.I)
# "A compared with B is more expensive", "Compared to B, A is cheaper", "A is cheaper compared to B": the comparison
# "A is … than B" written another way (found as a new user: "Compared with metformin, sitagliptin is cheaper" was
# supported by programs that checked metformin's price below sitagliptin's)
_COMPARED = r"(?:compared\s+(?:to|with)|in\s+comparison\s+(?:to|with)|relative\s+to)"
_LEADING = re.compile(rf"^\s*{_COMPARED}\s+(?P<b>[^,]{{1,60}}?),\s*(?P<a>.+?)\s*[.?!]?\s*$", re.I)
_INNER = re.compile(rf"^\s*(?P<a>[^,]{{1,60}}?),?\s+{_COMPARED}\s+(?P<b>[^,]{{1,60}}?),?\s+(?P<rest>(?:is|was|are|were|"
                    rf"has|had|have|costs?|cost)\b.+?)\s*[.?!]?\s*$", re.I)
_TRAILING = re.compile(rf"^\s*(?P<a>.+?),?\s+{_COMPARED}\s+(?P<b>[^,;]{{1,60}}?)\s*[.?!]?\s*$", re.I)


def than_form(claim: str) -> str:
    """The claim with "compared to/with B" written as "… than B" (see above); any other claim as written."""
    if re.search(r"\bthan\b", claim, re.I):
        return claim
    if m := _LEADING.match(claim):
        return f"{m.group('a')} than {m.group('b')}"
    if m := _INNER.match(claim):
        return f"{m.group('a')} {m.group('rest')} than {m.group('b')}"
    if m := _TRAILING.match(claim):
        return f"{m.group('a')} than {m.group('b')}"
    return claim


def _rows_written(typed: TypedTable, text: str) -> set[int]:
    """The rows of which ``text`` writes a whole text cell that no other row holds in its column, or the month of
    an ISO month cell ("March" for "2024-03", in a column where no month comes twice): its reading against the
    table's cells (tools.lang.reading.read_against)."""
    return {mention.row for mention in read_against(text, typed).cells}


def _numbers_columns_named(typed: TypedTable, claim: str) -> list:
    """The columns of numbers (not the row names) the claim names by their header's words; without any, the
    price columns when it compares prices in their own words ("more expensive", "cheaper")."""
    named = [col for col in typed.columns if col.numeric and col.index != typed.label_col
             and column_named(col.name, claim)]
    if not named and _PRICE_WORDS.search(claim):
        named = [col for col in typed.columns if col.numeric and col.index != typed.label_col
                 and _PRICE_HEADER.search(col.name)]
    if len(named) > 1:
        # "beds" names both "Beds" and "ICU beds"; "ICU beds" names "ICU beds" alone: the headers the claim writes
        # whole, less those inside a longer one it writes (found as a new user over a hospital-capacity table)
        have = content_words(claim.replace("'s", " "))
        whole = [col for col in named if all(word_in(w, have) for w in content_words(col.name) if w.isalpha())]
        longest = [col for col in whole
                   if not any(set(content_words(col.name)) < set(content_words(o.name)) for o in whole)]
        named = longest if len(longest) == 1 else named
    return named


def numbers_column_named(typed: TypedTable, claim: str) -> str | None:
    """The identifier of the one column of numbers the claim names (:func:`_numbers_columns_named`), or None."""
    named = _numbers_columns_named(typed, claim)
    return named[0].ident if len(named) == 1 else None


def _column_compared(typed: TypedTable, claim: str, a: int, b: int) -> str | None:
    """The identifier of the one column of numbers the claim names (section comment), or None."""
    named = _numbers_columns_named(typed, claim)
    plain = [col for col in named if not col.name.endswith((LOWER_BOUND, UPPER_BOUND))]
    if len(plain) == 1:
        return plain[0].ident
    if plain:
        return None
    pair_of = {ident: pair for pair in bound_pairs(typed) for ident in pair[1:]}
    pairs = {pair_of.get(col.ident) for col in named}
    if len(pairs) != 1 or (pair := pairs.pop()) is None or not column_named(pair[0], claim):
        return None
    lower, upper = typed.column(pair[1]), typed.column(pair[2])
    ends = [(typed.number(r, lower.index), typed.number(r, upper.index)) for r in (a, b)]
    if any(x is None for pair in ends for x in pair):
        return None
    (lo_a, hi_a), (lo_b, hi_b) = ends
    if not (hi_a < lo_b or hi_b < lo_a):  # overlapping (or equal) ranges: neither is colder
        return None
    return lower.ident


@dataclass(frozen=True)
class WordsProgram:
    """A program built from the claim's words, and a note for its reason ("" when none is needed)."""

    raw: dict
    note: str = ""
    # The cells the note quotes (each other row's name and value), cited beside the program's own
    cells: tuple[tuple[int, int], ...] = ()


# "than ALPHA-1 and BETA-2 combined" compares with a sum, which one row's value is not
_TOGETHER = re.compile(r"\b(?:combined|together|total|sum|average|mean|put together)\b", re.I)


def compared_rows(typed: TypedTable, claim: str) -> WordsProgram | None:
    """The program of "<row A> … <comparative> … than <row B> [and <row C> …]", or None when the claim is not that
    plain (section comment). Against several rows the claim holds when it holds against the most demanding one (the
    largest for "more", the smallest for "fewer"), so that row is the one compared, and the note says why."""
    label = typed.label_col
    claim = than_form(claim)
    scaled = stated_scale(claim) is not None
    comparisons = scaled_comparisons(claim) if scaled else stated_comparisons(claim)
    if not label or len(comparisons) != 1 or NEGATION.search(claim):
        return None
    word, start, end = comparisons[0]
    if word not in LARGER and word not in SMALLER:
        return None
    subject, others = _rows_written(typed, claim[:start]), _rows_written(typed, claim[end:])
    if len(subject) != 1 or not others or subject & others or (len(others) > 1 and _TOGETHER.search(claim[end:])):
        return None
    a = subject.pop()
    columns = {_column_compared(typed, claim, a, b) for b in others}
    if len(columns) != 1 or (column := columns.pop()) is None \
            or (len(others) > 1 and typed.column(column).name.endswith(LOWER_BOUND)):
        return None
    written = " ".join([typed.column(column).name] + [typed.text(r, c.index) for r in (a, *others)
                                                      for c in typed.columns if not c.numeric])
    # the multiple or percentage a scaled comparison states is read by tools._claim_multiples.read_multiplier
    stated_scale_numbers = question_numbers(claim[:start][-40:]) if scaled else set()
    if question_numbers(claim) - question_numbers(written) - stated_scale_numbers:
        return None
    col = typed.column(column).index
    values = {b: typed.number(b, col) for b in sorted(others)}
    if any(v is None for v in values.values()):
        return None
    larger = word in LARGER
    b = (max if larger else min)(values, key=lambda r: values[r])
    note = ""
    if len(others) > 1:
        items = [f"{typed.row_name(r)}'s {typed.text(r, col)}" for r in values]
        listed = ", ".join(items[:-1]) + " and " + items[-1]
        note = (f"{typed.row_name(b)}'s is the {'largest' if larger else 'smallest'} of {listed}, so the claim holds "
                "against all of them exactly when it holds against it")
    label_ident = typed.columns[label - 1].ident
    return WordsProgram({"filters": [{"column": label_ident, "op": "=", "value": typed.text(a, label)}],
                         "fn": "value", "column": column, "answer_column": label_ident,
                         "check": {"op": ">" if larger else "<", "against": "row", "value": typed.text(b, label)}},
                        note, tuple((r, c) for r in values for c in (label, col)) if note else ())


def compared_rows_by_words(typed: TypedTable, claim: str) -> dict | None:
    """The raw program (as the model would write it) of :func:`compared_rows`, or None."""
    words = compared_rows(typed, claim)
    return words.raw if words is not None else None


def most_demanding_note(program: Program, typed: TypedTable, claim: str) -> Note | None:
    """Against several rows ("more … than ALPHA-1 and BETA-2"), the program :func:`compared_rows` writes compares
    the most demanding one: the note says why that row stands for all of them, and cites each listed row's name and
    value. None for any other program (another comparison, or another row compared, is not what the note says)."""
    check = program.check
    if check is None or check.against != "row" or program.fn != "value":
        return None  # before reading the claim: most programs compare no row
    words = compared_rows(typed, claim)
    if words is None or not words.note:
        return None
    written = Program.model_validate(words.raw)
    if (program.filters, program.column, check.op, check.value) != (written.filters, written.column,
                                                                     written.check.op, written.check.value):
        return None
    return Note(reason=(words.note,), cells=words.cells)


# ======================================================================================================================
# Two groups of rows compared by their totals or means: "Hospitals in the South have more beds in total than
# hospitals in the East".
#
# Found as a new user over a hospital-capacity table (Hospital, Region, Beds, …): of five programs, three asked for
# rows in both regions at once (no row is), and two compared the South's total with one southern hospital's beds,
# a comparison nobody made; an earlier run fell back to the judge, which refuted the true claim with bed counts the
# table does not hold. The grammar has no "the same sum over other rows", and the sentence's form fixes the
# program, so it is built in code (as tools._claim_compare builds a two-row comparison) and decides, no model call:
#
# - one "<comparative> … than" (or "compared to/with"), not negated, with a direction ("more", "fewer", "cheaper");
# - "in total", "combined", "altogether" (a sum), or "on average", "average", "mean" (a mean): without one, "the
#   South has more beds than the East" could be each hospital's, or the largest, and is left to the programs;
# - the words before the comparative write one value of a text column (not the row names) held by some rows but not
#   all, and the words after "than" another value of the same column: the two groups;
# - exactly one column of numbers is named by its header's words (price words name the one price column);
# - the claim writes no number other than those in the header and the two values.
# ======================================================================================================================

_TOTAL = re.compile(r"\b(?:in\s+total|combined|altogether|put\s+together|taken\s+together|all\s+together)\b", re.I)
_MEAN = re.compile(r"\b(?:on\s+average|average|mean)\b", re.I)


def _groups_written(typed: TypedTable, text: str) -> set[tuple[str, str]]:
    """(column identifier, value) of each value of a text column other than the row names that ``text`` writes
    whole, held by some of the table's rows but not all."""
    said = norm_text(text)
    rows = rows_but_totals(typed)
    out: set[tuple[str, str]] = set()
    for col in typed.columns:
        if col.numeric or col.index == typed.label_col:
            continue
        held_by = Counter(typed.text(r, col.index).strip() for r in rows)
        for value, held in held_by.items():
            if len(norm_text(value)) >= 2 and any(ch.isalpha() for ch in value) and held < len(rows) \
                    and writes_whole(said, norm_text(value)):
                out.add((col.ident, value))
    return out


def compared_groups(typed: TypedTable, claim: str) -> WordsProgram | None:
    """The program of "<group A> … <comparative> … in total/on average … than <group B>", or None when the claim is
    not that plain (section comment)."""
    claim = than_form(claim)
    comparisons = stated_comparisons(claim)
    fn = "sum" if _TOTAL.search(claim) else "avg" if _MEAN.search(claim) else None
    if fn is None or len(comparisons) != 1 or NEGATION.search(claim):
        return None
    word, start, end = comparisons[0]
    if word not in LARGER and word not in SMALLER:
        return None
    before, after = _groups_written(typed, claim[:start]), _groups_written(typed, claim[end:])
    if len(before) != 1 or len(after) != 1:
        return None
    (col_a, a), (col_b, b) = before.pop(), after.pop()
    if col_a != col_b or a == b:
        return None
    column = numbers_column_named(typed, claim)
    if column is None:
        return None
    written = " ".join([typed.column(column).name, a, b])
    if question_numbers(claim) - question_numbers(written):
        return None
    label = typed.columns[typed.label_col - 1].ident if typed.label_col else column
    return WordsProgram({"filters": [{"column": col_a, "op": "=", "value": a}], "fn": fn, "column": column,
                         "answer_column": label,
                         "check": {"op": ">" if word in LARGER else "<", "against": "group", "value": b,
                                   "group_column": col_a}})


# ======================================================================================================================
# A count of the rows beyond a named row: "How many teams had more points than Sílex?" counts the teams whose
# points exceed Sílex's, not Sílex's own row.
#
# The row filters the model writes compare a column with a value written in the program, never with another row's
# value, so asked this, every program it writes counts the named row (1) or every other row ("Team != 'Sílex'").
# The question's form says what was meant: a count, a comparing word ("more", "fewer", "larger", …) before "than",
# and after "than" a row (:func:`tools._grounding.row_compared_with`) that the program's filter selects.
# Code reads the named row's value of the column the question
# compares on, and counts the rows strictly beyond it. Found on WikiTableQuestions' training split (the tuning
# split): every sample of "how many schools have a larger intake than sacred heart?" counted Sacred Heart's row.
# ======================================================================================================================

# "how many more points did X have than Y" asks for a difference (tools._question_rules), not a count.
_COUNT = re.compile(r"^\s*how many\s+(?!more\b|fewer\b|less\b)", re.I)
# "how many cities do not have lower populations than Valenza?" counts the rest, ties included: left as written.
_NEGATED = re.compile(r"\b(?:not|never|no)\b|n't\b", re.I)


def read_count_than_row(program: Program, typed: TypedTable, question: str) -> Program:
    """A count filtered on the row named after "more … than" counts the rows beyond that row's value.

    The compared column is the one column of numbers the question names before "than" (the words after the
    comparing word first: "more points", "a larger intake"); not a rank or place, whose "higher" is the smaller
    number. Anything less certain leaves the program as written.
    """
    counted, m, row = _count_form(typed, question)
    named = _filters_naming(program, typed, row)
    if len(named) != 1:
        return program
    before = question[counted.end():m.start()]
    compared = _compared_column(typed, m.group("noun")) or _compared_column(typed, before)
    bound = typed.number(row, compared.index) if compared is not None else None
    if bound is None:
        return program
    op = ">" if m.group("word").casefold() in GREATER_WORDS else "<"
    # As the cell writes it ("12675", not "12,675"), so that the reason quotes the table's own number.
    written = typed.text(row, compared.index).strip()
    value = written if cell_number(written) == bound and len(written) <= VALUE_MAX_CHARS else format_value(bound)
    beyond = RowFilter(column=compared.ident, op=op, value=value)
    filters = [beyond if f is named[0] else f for f in program.filters]
    return program.model_copy(update={"filters": filters})


def compared_row_note(program: Program, typed: TypedTable, question: str) -> Note | None:
    """A bound that is the named row's value ("Beds > 310" for "more beds than Riverside General") was read from
    that row: its cell is cited, and the reason says whose value it is. None when no filter's bound is."""
    row = row_compared_with(typed, question)
    bounded = [f for f in program.filters if row is not None and bound_of_row(typed, f, row)]
    if not bounded:
        return None
    cols = [typed.column(f.column) for f in bounded]
    return Note(reason=tuple(f"{col.name} {f.op} {f.value}, {_possessive(typed.row_name(row))} {col.name}"
                             for f, col in zip(bounded, cols)),
                cells=tuple(dict.fromkeys((row, col.index) for col in cols)),
                steps=(f"the bound is {_possessive(typed.row_name(row))} value (R{row})",))


def _possessive(name: str) -> str:
    """"Riverside General's"; a name that already is one stays as it is ("Saint Anne's", found as a new user:
    "Saint Anne's's Nurses")."""
    if re.search(r"['’]s$|s['’]$", name):
        return name
    return name + ("'" if name.endswith("s") else "'s")


def counts_of_compared_row(programs: list[Program], typed: TypedTable, question: str) -> list[str]:
    """Why each program cannot answer a "how many … more … than <row>" question ('' for one that can).

    A count of the compared row itself (always 1), or of every other row, is no answer once another program
    compares a column with that row's value ("TD's > 12" for "more touchdowns than Anthony Hines", a column whose
    name the question does not say, so :func:`read_count_than_row` could not rewrite the counts). With no such
    program, nothing is withheld.
    """
    _, _, row = _count_form(typed, question)
    if row is None or not any(bound_of_row(typed, f, row) for p in programs for f in p.filters):
        return ["" for _ in programs]
    whys = []
    for p in programs:
        named = _filters_naming(p, typed, row)
        whys.append(f"it counts by {named[0].value!r}, the row the question compares with, not the rows beyond "
                    "its value" if named else "")
    return whys


def _count_form(typed: TypedTable, question: str) -> tuple[re.Match | None, re.Match | None, int | None]:
    """("how many", "more … than <row>", the row) of a count compared with a row; the row is None otherwise."""
    counted = _COUNT.match(question)
    m = COMPARED_WITH_ROW.search(question)
    if not counted or not m or _NEGATED.search(question[:m.start()]):
        return counted, m, None
    return counted, m, row_compared_with(typed, question)


def _filters_naming(program: Program, typed: TypedTable, row: int | None) -> list[RowFilter]:
    """A count's filters that select ``row`` alone ("Team = 'Sílex'"), or every other row ("Team != 'Sílex'")."""
    if row is None or program.fn != "count":
        return []
    return [f for f in program.filters if f.op in ("=", "!=", "contains") and not typed.is_numeric(f.column)
            and selects_only(typed, f, row)]


def _compared_column(typed: TypedTable, words: str):
    """The one column of numbers ``words`` name, not a rank or place; None when none or several."""
    found = [col for col in typed.columns
             if col.numeric and column_named(col.name, words) and not RANK_HEADER.search(col.name)]
    return found[0] if len(found) == 1 else None


# ======================================================================================================================
# A row against the rest of its group combined: "Nigeria had more births than all the other African countries
# combined."
#
# Found as a new user over a table of measles vaccine coverage: 4 of 5 programs read it "rows where WHO region =
# 'Africa' → sum of Births; check: > Births of 'Nigeria'" — a sum that holds Nigeria itself, compared the wrong way
# round. The verdict (supported) was right by chance, and its reason said the claim needs Africa's total to exceed
# Nigeria's births, which the claim never said. The others are the group without the named row, and the claim's
# comparative runs from the named row to them: "more than the others combined" is others' sum < the row's value.
# ======================================================================================================================

# "than all the other countries", and "than all other regions" too (found as a new user: without "the" the programs
# compared the North with the South alone and supported "The North had more deaths than all other regions combined")
_OTHERS = re.compile(r"\b(?:(?P<up>more|greater|higher|larger|bigger)|(?P<down>fewer|less|lower|smaller))\b[^.;]*?"
                     r"\bthan\s+(?:(?:all\s+)?(?:of\s+)?the\s+(?:other|rest|remaining)|all\s+(?:other|remaining))\b"
                     r"[^.;]*?\b(?:combined|together|put\s+together|in\s+total|added\s+up)\b", re.I)


def read_others_combined(program: Program, typed: TypedTable, claim: str) -> Program:
    """``program`` as "the others' sum, compared with the named row" where the claim sets a row against the rest
    of its group combined (section comment); otherwise as written."""
    m = _OTHERS.search(claim)
    chk = program.check
    label = typed.label_col
    if m is None or chk is None or not label:
        return program
    if program.fn != "sum" or chk.against != "row" \
            or not any(row_names(typed, r, chk.value) for r in range(1, typed.table.n_rows + 1)) \
            or [text_words(n) for n in row_names_in(typed, claim[:m.start()])[0][:1]] != [text_words(chk.value)]:
        # the model compared the named row with one other row, or the sum the wrong way: written from the claim
        return _named_row_against_the_rest(program, typed, claim, m)
    ident = typed.columns[label - 1].ident
    filters = [f for f in program.filters if not (f.column == ident and f.op == "=" and f.value == chk.value)]
    if not any(f.column == ident and f.op == "!=" and f.value == chk.value for f in filters):
        filters.append(RowFilter(column=ident, op="!=", value=chk.value))
    op = "<" if m.group("up") else ">"
    return program.model_copy(update={"filters": filters, "check": chk.model_copy(update={"op": op})})


def _named_row_against_the_rest(program: Program, typed: TypedTable, claim: str, m: re.Match) -> Program:
    """"The North had more deaths than all other regions combined": the sum of the column the program reads over
    the rows but the one the claim names before its comparison, checked against that row; the program as written
    when the claim names no one row there or the column holds no numbers."""
    subjects, _ = row_names_in(typed, claim[:m.start()])
    try:
        numeric = typed.column(program.column).numeric
    except KeyError:
        return program
    ident = typed.columns[typed.label_col - 1].ident
    keep = [f for f in program.filters if f.column != ident]  # a group the claim names stays ("African countries")
    if not subjects:
        # "Cholera in Haiti killed more …" names no row as the table writes it ("Cholera Haiti"); the model's own
        # filters found it (Country = 'Haiti') when they keep exactly one row (found as a new user), and are then
        # what picked the row, not a group
        picking = [f for f in program.filters if f.op in ("=", "contains")]
        chosen = selected_rows(Program(filters=picking, fn="count", column=program.column), typed) \
            if picking else None
        subjects = [typed.row_name(chosen[0])] if chosen and len(chosen) == 1 else []
        keep = [f for f in keep if f not in picking]
    if len(subjects) != 1 or not numeric:
        return program
    return Program(filters=keep + [RowFilter(column=ident, op="!=", value=subjects[0][:VALUE_MAX_CHARS])], fn="sum",
                   column=program.column, answer_column=program.answer_column,
                   check=Check(op="<" if m.group("up") else ">", against="row", value=subjects[0][:VALUE_MAX_CHARS]))


# ======================================================================================================================
# An "every" check its own filter makes true: "rows where LDL > 45 → every one has LDL >= 45".
#
# Seen as a new user with a table of six statins: for "Is it true that all synthetic statins lower LDL by more
# than 45%?" one of five programs was "rows where Class = 'Synthetic' and LDL reduction (%) > 45 → whether every
# one has LDL reduction (%) >= 45". Its filter implies its check, so it holds of any table, and it voted SUPPORTS
# beside three refutations (Pitavastatin, 43). The model writes the claim's condition twice, once as the filter;
# the claim's rows are those of its other filters ("synthetic"). So the filter that repeats the check is dropped
# and the check runs over the rows the others keep.
#
# Only when another filter remains: with none, the program would become "every row of the table …", a reading
# the claim need not make ("the 3 players with more than 10 points were all guards" written as "rows where
# points > 10 → every one has points > 10"). Such a program is left as it is, as are text tautologies ("rows
# where gender = 'male' → every one has gender = 'male'"): holding those was measured on TabFact's test replay and
# dropped (tools._claim_grounding.tautology_blocker).
# ======================================================================================================================

def implies(rule: RowFilter, check: Check) -> bool:
    """Does every number ``x`` with "x rule.op rule.value" also have "x check.op check.value"?"""
    a, v = cell_number(rule.value), cell_number(check.value)
    if a is None or v is None:
        return False
    if rule.op == "=":  # x is a
        return {">": a > v, ">=": a >= v, "<": a < v, "<=": a <= v, "=": a == v, "!=": a != v}.get(check.op, False)
    if rule.op == "!=":  # x is anything but a
        return check.op == "!=" and a == v
    if rule.op in (">", ">="):  # x above a (or at it): a lower bound
        strict = rule.op == ">"
        return {">": a > v or (strict and a == v), ">=": a >= v,
                "!=": a > v or (strict and a == v)}.get(check.op, False)
    if rule.op in ("<", "<="):  # an upper bound
        strict = rule.op == "<"
        return {"<": a < v or (strict and a == v), "<=": a <= v,
                "!=": a < v or (strict and a == v)}.get(check.op, False)
    return False


def read_self_filtered_every(program: Program, typed: TypedTable) -> Program:
    """``program`` without the filters on its checked column that imply its check, when it is an "every" check
    against a stated value on a numeric column and another filter remains; else ``program`` as it is."""
    chk = program.check
    if program.fn != "every" or chk is None or chk.against != "value" or not typed.is_numeric(program.column):
        return program
    kept = [f for f in program.filters if not (f.column == program.column and implies(f, chk))]
    if len(kept) == len(program.filters) or not kept:
        return program
    return program.model_copy(update={"filters": kept})


# ======================================================================================================================
# A claim about one row's value, read by a program that did not pick that row out: the claim names the row.
#
# Found on PubHealthTab's tuning split (its eval split): "Septicemia has a 1.4% death rate" over a table of causes of
# death ("(10) Septicemia | systemic infection | 1.4%", fifteen rows) was sampled three times of five as "all rows →
# % ALL DEATHS; check: result = 1.4%". A value check over fifteen different cells reads no claim, so those programs
# did not run, the vote was left to one filter on the number itself and one average, and the fallback judge refuted a
# true claim. The claim says which row it is about; the program only forgot to filter on it.
#
# When a value program with a check selects several rows holding different values in its column, and the claim
# writes exactly one of those rows' text cells (whole, as words, or without its list number: "Septicemia" for
# "(10) Septicemia"), a cell no other row holds in its column, the program gets that row as one more filter. Claims
# that name two of the rows ("A has a higher rate than B") or none are left as written.
#
# A check against another row ("… more than heart disease") reads the same way, the compared row aside, and so does
# a largest or smallest value compared with another row in a claim that is no superlative: seen as a new user,
# "Dementia killed more people than heart disease" was supported by "all rows → max of Deaths (2022) > Ischaemic
# heart disease's", which says that some row exceeds heart disease, right only because dementia's row is the
# largest. "COPD killed more than lung cancer" (27,300 against 28,100) was supported the same way; it names its row
# whole and is now read over COPD's row. ("Dementia" names "Dementia and Alzheimer's" only in part, which this rule
# does not read: a part may name several rows.)
#
# A sum is read the same way unless the claim asks for a total ("in total", "combined", "together", "overall", "in all"):
# found as a new user, "Stroke caused roughly 30,000 deaths in 2022" was refuted by two programs of five as "all rows
# → sum of Deaths (2022) = 30,000" (232,817 over six causes).
# ======================================================================================================================

# Words that ask for a sum over several rows, so a sum over them is the claim's own reading.
# Not a bare "all": "Stroke accounts for 6.7% of all deaths" names one row's share.
_TOTAL_ASKED = re.compile(r"\b(?:total|totals|totalled|totaled|combined|together|altogether|overall|sum|summed|"
                          r"in all|all of them|cumulative|between them)\b", re.I)
# A list number before a row's name: "(10) Septicemia", "10. Septicemia", "10) Septicemia".
_LIST_NUMBER = re.compile(r"^\(?\d{1,3}[.)]\s+")


def _names(cell: str) -> list[str]:
    """The ways a claim may write a text cell: the cell, and the cell without its list number."""
    plain = norm_text(cell)
    return list(dict.fromkeys([plain, _LIST_NUMBER.sub("", plain)]))


def _usable(name: str) -> bool:
    return len(name) >= 3 and any(ch.isalpha() for ch in name)


def rows_named(typed: TypedTable, claim: str, among: list[int]) -> dict[int, int]:
    """Of the rows ``among``, those the claim names by a text cell no other row of the table holds in its column:
    {row: the column whose cell names it (the first such column)}."""
    said = norm_text(claim)
    named: dict[int, int] = {}
    for col in typed.columns:
        if col.numeric:
            continue
        names = {r: [n for n in _names(typed.text(r, col.index)) if _usable(n)]
                 for r in range(1, typed.table.n_rows + 1)}
        counts: dict[str, int] = {}
        for written in names.values():
            for n in set(written):
                counts[n] = counts.get(n, 0) + 1
        for r in among:
            if any(counts[n] == 1 and writes_whole(said, n) for n in names[r]):
                named.setdefault(r, col.index)
    return named


def read_named_value_row(program: Program, typed: TypedTable, claim: str) -> Program:
    """``program`` with a filter on the one row the claim names, when it checks a value over several rows holding
    different values (section comment); otherwise as it is."""
    chk = program.check
    if chk is None or program.options.across or len(program.filters) >= MAX_FILTERS:
        return program
    against_row = chk.against == "row"
    if not (program.fn in ("value", "sum") and chk.against in ("value", "row")
            or program.fn in ("max", "min") and against_row and not is_superlative(claim)):
        return program
    if program.fn == "sum" and _TOTAL_ASKED.search(claim):
        return program
    try:
        c = typed.column(program.column).index
    except KeyError:
        return program
    rows = selected_rows(program, typed)
    if not rows or len(rows) < 2 or len({norm_text(typed.text(r, c)) for r in rows}) < 2:
        return program
    named = rows_named(typed, claim, rows)
    if against_row:  # the row the check compares with is the claim's other row, not the one it is about
        named = {r: col for r, col in named.items() if not row_names(typed, r, chk.value)}
    if len(named) != 1:
        return program
    [(row, col)] = named.items()
    if col == c:  # the claim writes the very cell checked: the check, not the row, states it
        return program
    if any(writes_whole(norm_text(chk.value), n) for n in _names(typed.text(row, col)) if _usable(n)):
        # "… contains 'Lyme disease arthritis'" checks the row's name in another column: a misread claim,
        # which a filter on that row would refute (PubHealthTab tuning split)
        return program
    name_filter = RowFilter(column=typed.columns[col - 1].ident, op="=", value=typed.text(row, col))
    return program.model_copy(update={"filters": [*program.filters, name_filter]})
