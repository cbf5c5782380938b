"""How many of the rows a claim or question speaks of: the different values of a column counted ("4 country"), a
fraction of a whole over a column of shares or of the rows ("more than half"), rows named by a number and a
column's word ("the two-dose vaccines"), several named rows at once ("A and B both met ..."), and the categories a
claim names, which restrict the rows a refutation may rest on (a claim that no row has something is read in
:mod:`tools._claim_grounding`, which imports this module: it sits there so that imports point one way).

Each section below opens with a comment that says what it reads and the case it came from.
"""

from __future__ import annotations

import re

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from tools._cells import TypedColumn, TypedTable, cell_number, format_value, is_empty, norm_text, writes_whole, \
    written_tolerance
from tools._claim_multiples import _BOUND
from tools._grounding import column_named
from tools._table_ops import selected_rows
from tools._table_ops_model import MAX_FILTERS, Check, Execution, Program, RowFilter
from tools._table_shape import total_rows
from tools._values import BOUND_OPS
from tools.lang.lexicon import CARDINALS, ROUGH_WORDS, content_words, word_in
from tools.lang.reading import read


# ======================================================================================================================
# Claims that count the different values of a column: "there be a total of 4 country represent by the player".
#
# TabFact's statements outside the test subset (the tuning split) showed it: every program counted the 12 rows
# (players) and refuted the claim, while the players come from 4 countries. When the claim writes its number right
# before a word that names a text column ("4 country", "3 different nationality", "two venue"), what is counted is
# that column's different values among the rows the program selects. Over a column whose values differ in every
# selected row this is the count of rows, so only repeated values change the result.
# ======================================================================================================================

# "4 country", "3 different nationality", "two distinct venues": a number, then what it counts
_COUNTED = re.compile(r"(?<![\w.,])(?P<n>\d+|" + "|".join(CARDINALS) + r")\s+(?:different\s+|distinct\s+|"
                      r"unique\s+|separate\s+)?(?P<noun>[^\W\d_][\w-]*)", re.I)


def counted_nouns(claim: str) -> list[tuple[float, str]]:
    """(number, the word after it) for each number the claim writes before a word."""
    out = []
    for m in _COUNTED.finditer(claim):
        n = m.group("n").lower()
        out.append((CARDINALS[n] if n in CARDINALS else float(n), m.group("noun").casefold()))
    return out


def read_counted_column(program: Program, typed: TypedTable, claim: str) -> Program:
    """A count checked against a number the claim writes before a text column's name counts that column's
    different values (section comment); any other program as written."""
    want = _checked_count(program)
    if want is None:
        return program
    for n, noun in counted_nouns(claim):
        if n != want:
            continue
        named = [col for col in typed.columns if not col.numeric and names_column(col.name, noun)]
        if len(named) == 1:
            return program.model_copy(update={"fn": "count_distinct", "column": named[0].ident})
    return program


def _checked_count(program: Program) -> float | None:
    """The number a count of rows is checked against, or None when the program is no such count."""
    chk = program.check
    if program.fn != "count" or chk is None or chk.against != "value":
        return None
    return cell_number(chk.value)


def _forms(word: str) -> set[str]:
    """The word and what it may be the plural of ("games": game; "countries": country; "matches": match)."""
    out = {word}
    if word.endswith("s") and len(word) > 3:
        out.add(word[:-1])
    if word.endswith("es") and len(word) > 4:
        out.add(word[:-2])
    if word.endswith("ies") and len(word) > 4:
        out.add(word[:-3] + "y")
    return out


def names_column(header: str, noun: str) -> bool:
    """Whether ``noun`` is the header's head word, singular or plural ("country" or "countries" for "Country",
    "nationality" for "Nationality"): its last word."""
    words = re.findall(r"[^\W\d_]+", header.casefold())
    return bool(words) and len(words[-1]) >= 3 and bool(_forms(noun) & _forms(words[-1]))


# A number as a claim writes it, with thousands separators: "1,000 participants", "2.5 goals".
_QUANTITY = re.compile(r"(?<![\w.,])(?P<n>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s+(?P<noun>[^\W\d_][\w-]*)")


def quantity_count_blocker(program: Program, typed: TypedTable, claim: str) -> str:
    """Why a count of rows does not vote when its number is a quantity of a numeric column, or "".

    Found as a new user: "Every study published after 2020 enrolled fewer than 1,000 participants" was read by
    one program as "the number of rows < 1000" (4 rows: SUPPORTS). The claim writes 1,000 before "participants",
    the head word of the numeric column Participants, so it states participants, not rows. Columns of labels
    are left out, since their noun is what a row is: years ("in 3 seasons") and columns that number the rows
    ("lose 6 game" over Game 1 to 82, "1 grid have 105 lap" over grid places; TabFact's statements).
    """
    want = _checked_count(program)
    if want is None:
        return ""
    for m in _QUANTITY.finditer(claim):
        if cell_number(m.group("n")) != want:
            continue
        noun = m.group("noun").casefold()
        named = [col for col in typed.columns if col.numeric and not col.holds_years and not _numbers_rows(col)
                 and names_column(col.name, noun)]
        if named:
            return (f"it counts rows, but the claim's {m.group(0)!r} is an amount of {named[0].name}, "
                    "not a number of rows")
    return ""


def _numbers_rows(col: TypedColumn) -> bool:
    """Whether the column numbers its rows: distinct whole numbers that run without a gap (1, 2, 3, …)."""
    xs = [x for x in col.numbers if x is not None]
    if not xs or not all(float(x).is_integer() for x in xs) or len(set(xs)) != len(xs):
        return False
    return max(xs) - min(xs) + 1 == len(xs)


# ======================================================================================================================
# Claims that state a fraction of a whole over a column of shares: "Poland generated more than half of its
# electricity from coal" over a Coal share column of "61.0%".
#
# Found as a new user: every program checked Poland's "61.0%" against 0.5, the fraction as a number, and the
# claim went to the judge (168 s), whose reason quoted a 50 the table never states. On a column of percentages the
# fraction is that many percent (half: 50), on a column of proportions (all between 0 and 1) the fraction itself.
# :func:`read_stated_fraction` sets the check's value so, with the comparison the words before it set ("more than
# half": >; "about half": = within a tenth of it; "the majority": >).
#
# A fraction of another value ("half as many beds as East", "more than half of East's beds") is a multiple, read by
# ``tools._claim_multiples``; "of its / their / all / the / Poland's" marks a share of a whole, and only a check
# against a value on a column of shares is read so (a check against another row is a multiple).
# ======================================================================================================================

_FRACTIONS = {"half": 0.5, "a half": 0.5, "one half": 0.5, "a third": 1 / 3, "one third": 1 / 3,
              "two thirds": 2 / 3, "a quarter": 0.25, "one quarter": 0.25, "three quarters": 0.75,
              "a fifth": 0.2, "one fifth": 0.2, "a tenth": 0.1, "one tenth": 0.1,
              "the majority": 0.5, "a majority": 0.5}
STATED_FRACTION = re.compile(
    _BOUND + r"\b(?P<fraction>" + "|".join(sorted((re.escape(k) for k in _FRACTIONS), key=len, reverse=True))
    + r")\s+of\s+(?:its|their|his|her|the|all|[^\W\d_][\w.-]*['’]s)(?!\w)", re.I)
ROUGH_FRACTION_TOLERANCE = 0.1  # "about half": 45% to 55%
_PERCENT_HEADER = re.compile(r"%|\b(?:percent|percentage|per cent|share|proportion|fraction|rate|pct)\b", re.I)


def stated_fraction(claim: str) -> tuple[float, str, float] | None:
    """(fraction, op, relative tolerance) of a share of a whole the claim states, or None."""
    m = STATED_FRACTION.search(claim)
    if not m:
        return None
    phrase = m.group("fraction").lower()
    bound = (m.group("bound") or "").lower()
    if "majority" in phrase:
        return _FRACTIONS[phrase], ">", 0.0  # a majority is more than half
    op = BOUND_OPS.get(bound, "=")
    return _FRACTIONS[phrase], op, (ROUGH_FRACTION_TOLERANCE if op == "=" else 0.0)


def _scale(typed: TypedTable, ident: str) -> float | None:
    """100 for a column of percentages ("61.0%", or a header that says share or %), 1 for proportions (every
    number between 0 and 1), None for a column of anything else (counts, amounts: no fraction of a whole)."""
    try:
        col = typed.column(ident)
    except KeyError:
        return None
    xs = [x for x in col.numbers if x is not None]
    if not xs:
        return None
    cells = [v for v in typed.table.column_values(col.index) if cell_number(v) is not None]
    if sum(v.strip().endswith("%") for v in cells) * 2 > len(cells) or _PERCENT_HEADER.search(col.name):
        return 1.0 if all(0 <= x <= 1 for x in xs) and not any(v.strip().endswith("%") for v in cells) else 100.0
    return None


def read_stated_fraction(program: Program, typed: TypedTable, claim: str) -> Program:
    """A check of a share column against the fraction the claim states is against that fraction in the column's
    own scale (section comment); any other program as written."""
    chk = program.check
    if chk is None or chk.against != "value" or program.fn not in ("value", "min", "max", "avg") or chk.factor:
        return program
    stated = stated_fraction(claim)
    scale = _scale(typed, program.column) if stated else None
    if stated is None or scale is None:
        return program
    written = cell_number(chk.value)
    fraction, op, tolerance = stated
    if written is not None and round(written, 6) not in {round(fraction, 6), round(fraction * 100, 6)}:
        return program  # the check compares with some other number the claim states
    return program.model_copy(update={"check": chk.model_copy(update={
        "op": op, "value": format_value(round(fraction * scale, 4)), "relative_tolerance": tolerance})})


# "St Mary has more than a third of all beds", "Kenya had 12% of the total deaths": a share of a column's total
_OF_TOTAL = re.compile(
    _BOUND + r"\b(?:(?P<fraction>" + "|".join(sorted((re.escape(k) for k in _FRACTIONS), key=len, reverse=True))
    + r")|(?P<percent>\d+(?:\.\d+)?)\s*(?:%|percent\b|per\s+cent\b))\s+of\s+(?:all\s+(?:the\s+)?|the\s+(?:total|"
    r"combined|overall)\s+(?:number\s+of\s+)?|the\s+)(?P<rest>[^.;,]{1,80})", re.I)


# Where the noun after "of all …" ends: "a majority of the people who score over par" is a share of the rows
_CLAUSE = re.compile(r"\b(?:who|that|which|whose|where|with|in|from|for|at|on|by|have|has|had|be|is|are|was|were|"
                     r"do|does|did|score|scored|get|got|make|made)\b", re.I)


def _names_the_amount(header: str, rest: str) -> bool:
    """Whether the noun phrase starting ``rest`` is the column ``header``'s amount: its last word is the header's
    (units in brackets aside). TabFact's "more than half of the away team have a score greater than 10" is about
    rows, though "away team" are words of the header "away team score"."""
    phrase = content_words(_CLAUSE.split(rest, maxsplit=1)[0])
    head = content_words(re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", header))
    return bool(phrase and head) and word_in(phrase[-1], [head[-1]]) and column_named(header, rest)


def read_share_of_total(program: Program, typed: TypedTable, claim: str) -> Program:
    """A value (or sum) of some rows of a column of amounts, checked against a number or another row, for a claim
    that states a fraction or percentage of all of that column: checked against that share of the column's total.

    Found as a new user: "St Mary accounts for more than a third of all beds" was supported by St Mary's 310 beds
    > 0.333, whatever the other clinics have; "Oakwood has more than a quarter of the total annual visits" by
    Oakwood's visits > Riverside's (5 of 5 programs). A column of shares (percentages, proportions) is
    :func:`read_stated_fraction`'s."""
    chk = program.check
    if chk is None or chk.against not in ("value", "row") or chk.factor \
            or program.fn not in ("value", "sum", "avg", "min", "max") or _scale(typed, program.column) is not None:
        return program
    try:
        col = typed.column(program.column)
    except KeyError:
        return program
    selected = selected_rows(program, typed)
    if selected is None or not col.numeric or (program.fn not in ("value", "sum") and len(selected) != 1):
        return program
    for m in _OF_TOTAL.finditer(claim):
        if not _names_the_amount(col.name, m.group("rest")):
            continue
        bound = (m.group("bound") or "").lower()
        op = BOUND_OPS.get(bound, "=")
        if m.group("percent"):
            fraction = float(m.group("percent")) / 100
            tolerance = written_tolerance(m.group("percent")) / float(m.group("percent") or 1) if op == "=" else 0.0
        else:
            phrase = m.group("fraction").lower()
            fraction = _FRACTIONS[phrase]
            op = ">" if "majority" in phrase else op
            tolerance = ROUGH_FRACTION_TOLERANCE if op == "=" else 0.0
        if bound in ROUGH_WORDS:
            tolerance = max(tolerance, ROUGH_FRACTION_TOLERANCE)
        # the model's own comparison (with another row, or a number of its choosing) is replaced, as the claim's
        # form settles it; over one row an average or an extreme is its value
        return program.model_copy(update={"fn": "sum", "check": Check(
            op=op, against="total", value=program.column, factor=fraction, relative_tolerance=tolerance)})
    return program


# "more than half of the hospitals are teaching hospitals": a share of the table's rows, named by their kind
_OF_THE_ROWS = re.compile(
    _BOUND + r"\b(?P<fraction>" + "|".join(sorted((re.escape(k) for k in _FRACTIONS), key=len, reverse=True))
    + r")\s+of\s+(?:all\s+)?(?:the\s+)?(?P<noun>[^\W\d_][\w-]*)", re.I)


# "most vaccines had an efficacy above 80%", "most of the hospitals …": more than half of the rows ("the most" is a
# superlative, and "most" after a verb or an article is not about rows)
_CLAUSE_OPENS = re.compile(r"(?:^|[,;:]\s*)(?:but\s+|and\s+)?$", re.I)
_MOST_OF = re.compile(r"\s+(?:of\s+(?:the\s+)?)?(?P<noun>[^\W\d_][\w-]*)", re.I)


def _most_of_the_rows(claim: str) -> list[str]:
    """The noun after each "most" (the Reading's quantifier, not "the most") that opens a clause: "vaccines" for
    "Most vaccines had …" and "… , but most of the hospitals …"."""
    return [m.group("noun") for q in read(claim).quantified("most")
            if _CLAUSE_OPENS.search(claim, 0, q.start) and (m := _MOST_OF.match(claim, q.end))]


def fraction_of_rows(claim: str, typed: TypedTable) -> tuple[float, str, float] | None:
    """(the number of rows the claim's fraction is, op, tolerance) when it states a fraction of the table's rows,
    named by the header of the column of row names ("half of the hospitals" over a Hospital column); else None.

    Found as a new user: "More than half of the hospitals are teaching hospitals" (3 of 6: false) was supported
    by a program comparing mean beds with half of another hospital's beds; "Most vaccines had an efficacy above
    80%" (3 of 6: false) was refuted by "the vaccine with the largest efficacy = 80", 1 of 5 programs."""
    label = typed.label_col
    if not label:
        return None
    n = typed.table.n_rows - len(total_rows(typed))
    for noun in _most_of_the_rows(claim):
        if names_column(typed.columns[label - 1].name, noun.casefold()):
            return 0.5 * n, ">", 0.0
    for m in _OF_THE_ROWS.finditer(claim):
        if not names_column(typed.columns[label - 1].name, m.group("noun").casefold()):
            continue
        phrase, bound = m.group("fraction").lower(), (m.group("bound") or "").lower()
        op = ">" if "majority" in phrase else BOUND_OPS.get(bound, "=")
        return _FRACTIONS[phrase] * n, op, (ROUGH_FRACTION_TOLERANCE if op == "=" else 0.0)
    return None


def read_fraction_of_rows(program: Program, typed: TypedTable, claim: str) -> Program:
    """A count checked against the claim's share of the rows is checked against that many rows. An "every" whose
    condition is a number's bound is read as a count of the rows meeting it: "most vaccines had an efficacy above
    80%" written as "every one has Efficacy > 80" counts the vaccines with Efficacy > 80."""
    chk = program.check
    if chk is not None and program.fn == "every" and chk.against == "value" and chk.op in (">", ">=", "<", "<=") \
            and not chk.factor and not program.filters and fraction_of_rows(claim, typed) is not None:
        # (over every row only: a share of some rows is of those rows, not of the table's)
        condition = RowFilter(column=program.column, op=chk.op, value=chk.value)
        program = program.model_copy(update={"fn": "count", "filters": [condition],
                                             "check": Check(op="=", value="0")})
        chk = program.check
    stated = fraction_of_rows(claim, typed) if chk is not None and program.fn == "count" else None
    if stated is None or chk.against != "value":
        return program
    n, op, tolerance = stated
    return program.model_copy(update={"check": chk.model_copy(update={
        "op": op, "value": format_value(round(n, 4)), "relative_tolerance": tolerance, "factor": None})})


def fraction_of_rows_blocker(program: Program, typed: TypedTable, claim: str) -> str:
    """Why a program other than a count of some rows must not vote on a claim about a share of the rows, or
    ``""``. A count of every row checks none of the claim's condition: found as a new user, "more than half of
    the counties have coverage above 75%" was supported by "the number of rows > 2.5" (5 of 5 counties)."""
    if fraction_of_rows(claim, typed) is None:
        return ""
    if program.fn != "count":
        return "the claim states a share of the table's rows, which only a count of them checks"
    if not program.filters:
        return "it counts every row, so it checks nothing of the claim's condition on them"
    return ""


# ======================================================================================================================
# Rows named by a number and a column's word: "the two-dose vaccines" are the rows whose Doses is 2.
#
# Found as a new user over a table of vaccine trials: "What is the average efficacy of the two-dose vaccines?" was
# answered with the mean of all six vaccines (77.8) by 5 of 5 programs; none filtered on Doses. A number written
# before a hyphen and the singular of a numeric column's header word ("two-dose", "3-star", "single-dose",
# "four-bed") names the rows holding that number in that column, when some rows hold it and some do not. The filter
# is added to a program that reads over rows and does not filter on that column yet.
# ======================================================================================================================

_COUNTS = {**CARDINALS, "single": 1.0, "double": 2.0, "triple": 3.0}
_NUMBERED = re.compile(r"\b(?P<n>\d+|" + "|".join(_COUNTS) + r")-(?P<noun>[^\W\d_]+)\b", re.I)
_OVER_ROWS = ("count", "sum", "avg", "median", "min", "max", "argmax", "argmin", "every", "value")


def add_numbered_kind(program: Program, typed: TypedTable, text: str) -> Program:
    """The program with a filter for each "<number>-<header word>" the text writes (section comment)."""
    if program.fn not in _OVER_ROWS:
        return program
    filters = list(program.filters)
    for m in _NUMBERED.finditer(text or ""):
        raw = m.group("n").lower()
        number = float(raw) if raw.isdigit() else _COUNTS[raw]
        noun = m.group("noun").casefold()
        columns = [col for col in typed.columns if col.numeric and names_column(col.name, noun)]
        if len(columns) != 1 or len(filters) >= MAX_FILTERS or any(f.column == columns[0].ident for f in filters) \
                or program.column == columns[0].ident:
            continue  # (a program reading Doses checks the number: "Ad26.COV2.S is a two-dose vaccine")
        col = columns[0]
        rows = typed.scope or range(1, typed.table.n_rows + 1)
        hits = [r for r in rows if typed.number(r, col.index) == number]
        if not hits or len(hits) == len(rows):
            continue
        filters.append(RowFilter(column=col.ident, op="=", value=f"{number:g}"))
    return program if filters == program.filters else program.model_copy(update={"filters": filters})


# ======================================================================================================================
# A claim about several named rows at once: "Semaglutide and Tirzepatide both met their primary endpoint."
#
# Seen as a new user with a table of six weight-loss trials: the model wrote that claim, 4 times of 5, as "rows where
# Drug = 'Semaglutide' and Drug = 'Tirzepatide' → whether every one has Primary endpoint met = 'Yes'". Read as AND,
# two values of one column select no row, so none of those ran, and the one program that did ("all rows → every one
# has Primary endpoint met = 'Yes'") refuted the claim with the sixth trial, which the claim never named.
#
# The rows named are the union of those values. That reading is taken only where the claim itself says so:
# - each of the values is written in the claim;
# - the claim says they hold jointly: "both", "all", "each", "neither … nor", or the values joined by "and"
#   ("A and B met …", "A, B and C …");
# - the check holds row by row: "every", or a value check ("A and B both have 3 golds", read as every one has), or
#   a comparison with a third row ("A and B had more cases than C": their smallest above C's, their largest for
#   "fewer than").
#
# Reading every such program as the union was measured on TabFact's test replay and dropped (351 -> 344 of 500,
# seven statements left without a vote): there the two values are often the claim's two sides ("the game on
# november 1 and november 3 …" compares them), not rows that share a property. Counts and extremes over the two
# values are left as written for the same reason.
# ======================================================================================================================

_JOINT_WORDS = ("neither", "nor")  # of the "none" kind: "neither A nor B" names them jointly; "no" does not


def _says_jointly(claim: str) -> bool:
    """Whether the claim says "both", "all", "each", "every", "neither" or "nor" (its Reading's quantifiers)."""
    return any(q.kind in ("every", "both") or q.word in _JOINT_WORDS for q in read(claim).quantifiers)


_JOINER = re.compile(r"^(?:,|&|and|,\s*and)?$", re.I)
# Every named row above another row is their smallest above it; every one below it, their largest.
_ORDER_EXTREME = {">": "min", ">=": "min", "<": "max", "<=": "max"}


def joined_by_and(values: list[str], claim: str) -> bool:
    """Whether the claim writes ``values`` next to each other, joined by "and", "&" or commas ("A, B and C")."""
    low = norm_text(claim)
    spans = []
    for v in values:
        at = low.find(norm_text(v))
        if at < 0:
            return False
        spans.append((at, at + len(norm_text(v))))
    spans.sort()
    return all(_JOINER.match(low[end:start].strip()) for (_, end), (start, _) in zip(spans, spans[1:]))


def read_joint_rows(program: Program, claim: str, typed: TypedTable) -> Program | None:
    """The program to run over the union of the rows the claim names jointly (section comment), or None when the
    program does not ask one column for several values, or the claim does not name them jointly."""
    values: dict[str, list[str]] = {}
    for f in program.filters:
        if f.op == "=":
            values.setdefault(f.column, [])
            if norm_text(f.value) not in {norm_text(v) for v in values[f.column]}:
                values[f.column].append(f.value)
    repeated = [(col, vals) for col, vals in values.items() if len(vals) > 1]
    if len(repeated) != 1 or repeated[0][0] == program.column:
        # The check reads the named column back ("captain = A or B or C → every one has captain = A"): false of
        # any two rows, so it says nothing about the claim (TabFact's tuning split).
        return None
    chk = program.check
    named = repeated[0][1]
    # "Oman and Kuwait saw more cases per 100,000 than Seychelles" (PubHealthTab's tuning split; 3 of 5 programs
    # wrote "Column 1 = 'Oman' and Column 1 = 'Kuwait' → Per 100,000; check > Per 100,000 of 'Seychelles'"): each of
    # the rows named beats a third row, so their smallest does ("fewer than": their largest).
    # (also as their max or min: 1 of those 5 took Oman and Kuwait's max, which one high row would carry)
    against_third_row = program.fn in ("value", "min", "max") and chk is not None and chk.against == "row" \
        and chk.op in _ORDER_EXTREME and norm_text(chk.value) not in {norm_text(v) for v in named}
    if not against_third_row:
        if program.fn == "value" and (chk is None or chk.against != "value" or chk.op not in ("=", "!=")):
            return None
        if program.fn not in ("value", "every"):
            return None
    low = norm_text(claim)
    if not all(norm_text(v) and norm_text(v) in low for v in named):
        return None
    if not (_says_jointly(claim) or joined_by_and(named, claim)):
        return None
    if against_third_row:
        if _one_row_writes_all(typed, named):
            # "the match between south melbourne and richmond drew a bigger crowd than …" (TabFact): the names are
            # one row's two sides, not two rows
            return None
        return program.model_copy(update={"fn": _ORDER_EXTREME[chk.op]})
    # A value check over several rows asks each of them: "A and B both have 3 golds" is every one has gold = 3.
    return program.model_copy(update={"fn": "every"}) if program.fn == "value" else program


def _one_row_writes_all(typed: TypedTable, values: list[str]) -> bool:
    """Does some row hold a cell equal to each of ``values`` (in any of its columns)?"""
    wanted = {norm_text(v) for v in values}
    for r in range(1, typed.table.n_rows + 1):
        cells = {norm_text(typed.text(r, col.index)) for col in typed.columns}
        if wanted <= cells:
            return True
    return False


_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")


def named_rows_blocker(program: Program, typed: TypedTable, claim: str) -> str:
    """Why an every/only check over every row must not vote on a claim that names its rows, or ``""``.

    Seen in the browser after the union reading above: "Semaglutide and Tirzepatide both met their primary
    endpoint" was still refuted by 2 of 5 programs reading "all rows → whether every one has Primary endpoint met
    = 'Yes'", the sixth trial deciding. A claim names its rows when it writes a text cell of a column other than the
    one checked (a name, not a number, and not the checked column's own value: "the zakspeed engine be use on all
    chassis" checks the engine column for the value it names).
    """
    if program.fn not in ("every", "only") or program.filters:
        return ""
    # "VaxC's interval excludes 75%" names VaxC (found as a new user: "all rows → whether every one has 95% CI
    # contains 75" voted on it)
    low = f" {_POSSESSIVE.sub('', norm_text(claim))} "
    try:
        checked = typed.column(program.column).index
    except KeyError:
        return ""
    for col in typed.columns:
        if col.index == checked or col.numeric:
            continue
        for r in range(1, typed.table.n_rows + 1):
            cell = norm_text(typed.text(r, col.index))
            if len(cell) >= 3 and cell_number(cell) is None and f" {cell} " in low:
                return f"it checks every row, but the claim names its rows ({typed.text(r, col.index)!r})"
    return ""


# "combined", "in total", "on average": the claim is about the rows' sum or mean, whatever "all" it also says
_AS_ONE = re.compile(r"\b(?:combined|together|total|totals|altogether|sum|average|averages|mean|overall|"
                     r"collectively|between them|cumulative(?:ly)?)\b", re.I)
# not "of all": "more than half of all the beds" is a share of the total
_OF_BEFORE = re.compile(r"\bof $", re.I)


def _says_each(claim: str) -> bool:
    """Whether the claim says "both", "each", "every" or "all" (not "of all") of the rows it names."""
    return any(q.kind == "both" or q.word in ("each", "every")
               or (q.word == "all" and not _OF_BEFORE.search(claim, 0, q.start)) for q in read(claim).quantifiers)




def read_each_as_extreme(program: Program, typed: TypedTable, claim: str) -> Program:
    """"Both legumes have more fibre than oats" over a sum or mean of the legumes' rows: each row must be above, so
    their smallest is compared ("fewer": their largest). Seen as a new user over a nutrition CSV: "sum of Fibre over
    the legumes (15.5) > Oats's 10.6" supported the claim, 2 votes to 1, though each legume has less fibre (7.9,
    7.6). A claim that adds them up or averages them ("combined", "in total", "on average") keeps its program."""
    chk = program.check
    if program.fn not in ("sum", "avg") or chk is None or chk.op not in _ORDER_EXTREME \
            or not _says_each(claim) or _AS_ONE.search(claim):
        return program
    return program.model_copy(update={"fn": _ORDER_EXTREME[chk.op]})


# ======================================================================================================================
# A refutation must rest on the rows the claim is about: the categories a claim names restrict it.
#
# Found as a new user, with an uploaded HTML table of vaccine trials (columns Vaccine, Developer, Platform, …,
# Efficacy (%)): "Is it true that every mRNA vaccine had an efficacy above 94%?" came back **Refuted** 3 votes to
# 2, by "all rows → whether every one has Efficacy (%) > 94", refuted by the viral-vector and protein vaccines.
# The two mRNA rows (95.0 and 94.1) support the claim; the programs that kept them were outvoted by programs that
# checked a claim about every vaccine.
#
# "mRNA" is a *category* of the table: a cell value several rows share, but not every row. A claim that names a
# category speaks of those rows, so a refuting program that neither filters that column nor checks the value has
# refuted another claim. As with the claim's own values (:func:`tools._claim_grounding.vote_blocker`), only a
# refutation is held to this: a check over more rows than the claim's that still holds ("every vaccine is above
# 60%" is true of the mRNA ones too) is left to vote, and so is one that names the category anywhere.
#
# Only a program over *every* row, computing something of the whole set (every, only, a count, a sum, an
# extreme), is held to this. Where the claim names one category and the program checks a stated value, it is not
# only held: it is run again over that category's rows (:func:`restricted_to_category`), since its check is the
# claim's and only its rows were wrong. On TabFact's tuning split, a first version that also held programs with
# filters blocked refutations where the category was a reference, not a restriction ("… attendance equal to that of
# arsenal", "… more episodes than amy sherman-palladino", whose name is also in another column the program
# filtered): 2 of 32 claims lost, 1 gained.
#
# Tried and not kept: listing a named category's column among "the columns that matter most" in the program prompt
# (the column choice left it out for 19 of the first 40 tuning claims that name a category). Paired on those claims
# (TabFact's tuning split, same seed, interleaved), 15 pairs: 9 right with the column added, 10 without (1 and 2 right
# only one way). The losses were a category named as a reference ("… than amy sherman-palladino did", filtered as
# writer = her) and a row's name that is also a category of another column ("Datia", a constituency and a district).
#
# A value that every row holds restricts nothing, and a value held by one row is a row's name or a measurement,
# which a program may rightly check rather than filter ("Moderna's vaccine had the highest efficacy": argmax,
# check 'Moderna').
# ======================================================================================================================

_LETTER = re.compile(r"[^\W\d_]")
# What a program computes over a set of rows, which a restriction the claim states changes.
_OVER_A_SET = ("every", "only", "count", "count_distinct", "sum", "avg", "min", "max")


def named_categories(typed: TypedTable, claim: str) -> dict[str, str]:
    """The categories the claim names: normalised cell value -> identifier of its (text) column.

    A category is a value of a non-numeric column held by at least two rows and not by all of them, with a letter
    in it and not a stop word, named in the claim as whole words ("mRNA vaccine" names 'mRNA'; "mRNAs" does not).
    """
    said = norm_text(claim)
    n_rows = typed.table.n_rows
    out: dict[str, str] = {}
    for col in typed.columns:
        if col.numeric or col.holds_dates:
            continue
        counts: dict[str, int] = {}
        for value in typed.table.column_values(col.index):
            v = norm_text(value)
            # "a" (a variant's name) is also the article: a word the claim says in passing restricts nothing
            if len(v) > 1 and not is_empty(v) and _LETTER.search(v) and v not in ENGLISH_STOP_WORDS:
                counts[v] = counts.get(v, 0) + 1
        for v, k in counts.items():
            if 2 <= k < n_rows and writes_whole(said, v):
                out.setdefault(v, col.ident)
    return out


# What a check over the category's rows alone still means: "every synthetic statin …", "3 synthetic statins", "the
# synthetic statins' average …". Not "only" (its filter names the rows it sets apart) nor distinct counts.
_NARROWABLE = ("every", "count", "sum", "avg", "min", "max")


def restricted_to_category(program: Program, typed: TypedTable, claim: str) -> Program | None:
    """The program with a filter to the one category the claim names, for a program over every row that ignores
    it and checks a stated value; None otherwise. Used on programs :func:`ignored_category_blocker` holds.

    Found as a new user: "Is it true that all synthetic statins lower LDL by more than 45%?" came back Refuted, 2
    votes of 5 (confidence 40%); the other 3 were "all rows → whether every one has LDL reduction (%) > 45", held
    from voting. Their check is the claim's; only the rows are wrong, so they are run over the category's rows.
    A check against another row ("above Arsenal's") may name a reference, not a restriction: left held.
    """
    chk = program.check
    named = named_categories(typed, claim)
    if chk is None or chk.against != "value" or program.filters or program.fn not in _NARROWABLE or len(named) != 1:
        return None
    [(value, column)] = named.items()
    if _mentions(program, value, column):
        return None
    col = typed.column(column)
    written = next((v for v in typed.table.column_values(col.index) if norm_text(v) == value), value)
    return program.model_copy(update={"filters": [RowFilter(column=column, op="=", value=written)]})


def _mentions(program: Program, value: str, column: str) -> bool:
    """Does the program restrict ``column`` or name ``value`` anywhere (a filter, the check, the rows it lists)?"""
    if any(f.column == column or value in norm_text(f.value) for f in program.filters):
        return True
    chk = program.check
    if chk is not None and (value in norm_text(chk.value) or any(value in norm_text(r) for r in chk.rows)):
        return True
    return column in (program.column, program.answer_column, program.options.divides_by)


def ignored_category_blocker(program: Program, ex: Execution, typed: TypedTable, claim: str) -> str:
    """Why a refuting program that ignores a category the claim names must not vote, or ``""``."""
    if program.check is None or ex.truth is not False or program.filters or program.fn not in _OVER_A_SET:
        return ""
    for value, column in named_categories(typed, claim).items():
        if not _mentions(program, value, column):
            name = typed.column(column).name
            return (f"the claim is about the rows whose {name} is {value!r}, and the program refutes it over "
                    "rows it did not restrict to them")
    return ""
