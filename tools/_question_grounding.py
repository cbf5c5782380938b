"""Whether a table question's program reads the question: a rule that keeps guessed filters out of the vote.

The small model's programs for a question often run and agree while ignoring what the question states, and a
minority reads it. Seen on WikiTableQuestions' training split (the tuning split):

- "how many series had 8 episodes?": three programs counted all 17 rows, two counted the rows with 8 episodes;
- "for each winning game, what was their score?": four listed every game's score, one the rows where
  Result = 'Win';
- "which choke has the least constriction?": three filtered "Constriction > 0", a value the question never
  states, before taking the minimum; the one without a filter was right.

A filter is **grounded** when its value is something the question says: a number it states ("8", "30th",
"1958-1962"), or text whose words the question has (a word of the value may be the start of the question's word,
so 'Win' is grounded by "winning"), or the bound a comparison with a named row states: "Total > 3" for "how
many nations won more medals than Brazil?" when Brazil's total is 3 (four of five samples wrote it so, and lost the
vote to one counting Brazil's own row), or the value a named row shares: "Gold = 3" for "which nation won the
same number of gold medals as hungary?" when Hungary won 3. A program's grounding is (all its filters grounded,
how many are, whether the column it reads is one the question names: "what is the last tops design code?" is not
answered by the row with the most route availability). Programs below the best grounding among those that ran
do not vote, so an invented filter loses to none, and a program that leaves out a value the question states loses
to one that uses it. Nothing changes when every program that ran is grounded alike. The step says why a program
did not vote.
"""

from __future__ import annotations

import re

from tools._cells import TypedColumn, TypedTable, cell_number, norm_text
from tools._table_shape import meets_filter, names_flag
from tools.lang.choice import table_choice
from tools._table_ops_model import Program, RowFilter
from tools.lang.lexicon import CARDINALS, WORD, content_words, singular, word_in

# Thousands separators only between groups of three: "in 1906, how many" states 1906, not "1906,".
_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")


_NUMBER_WORDS = CARDINALS | {
    w: float(i) for i, w in enumerate(
        "zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split())}


# "How many townships have no water area?" states a zero ("Water area = 0"); "No. 5" is a number's label.
_NONE = re.compile(r"\b(?:no(?!\.)|none|without)\b")


def question_numbers(question: str) -> set[float]:
    """The numbers a question writes ("8", "30th", "1,200", both ends of "1958-1962", "second", "three", the
    zero of "no …"), unsigned."""
    low = question.casefold()
    out = {n for w, n in _NUMBER_WORDS.items() if re.search(rf"\b{w}\b", low)}
    if _NONE.search(low):
        out.add(0.0)
    for m in _NUMBER.finditer(question):
        n = cell_number(m.group(0))
        if n is not None:
            out.add(round(abs(n), 6))
    return out


def value_grounded(value: str, question: str, numbers: set[float] | None = None) -> bool:
    """Whether a filter's ``value`` is something ``question`` states (module docstring)."""
    numbers = question_numbers(question) if numbers is None else numbers
    n = cell_number(value)
    if n is not None:
        return round(abs(n), 6) in numbers
    words = content_words(value)
    if not words:
        return False
    have = content_words(question.replace("'s", " "))
    found = sum(1 for w in words if word_in(w, have))
    return found * 2 >= len(words) and found >= 1


def named_words(name: str, question: str, *, short_numbers: bool = False) -> set[str]:
    """The words of the header ``name`` (3 letters or more; ``short_numbers``: numbers of any length too) that
    the question writes."""
    have = content_words(question.replace("'s", " "))
    return {w for w in content_words(name) if (len(w) >= 3 or short_numbers and w.isdigit()) and word_in(w, have)}


def column_named(name: str, question: str) -> bool:
    """Whether the question names the column: one of its header's words (3 letters or more) is in the question."""
    return bool(named_words(name, question))


def reads_named_column(program: Program, question: str, typed: TypedTable | None) -> bool:
    """Whether what the program reads is a column the question names. A count reads no column: when another
    program reads a column the question names ("how many people attended …?" and Attendance), that one wins."""
    if typed is None:
        return True
    if program.fn == "count":
        return False
    read = [program.column] + ([program.answer_column] if program.fn in ("argmax", "argmin") else [])
    names = []
    for ident in read:
        try:
            names.append(typed.column(ident or "").name)
        except KeyError:
            continue
    return any(column_named(n, question) for n in names)


def grounding(program: Program, question: str, typed: TypedTable | None = None) -> tuple[bool, int, bool]:
    """(every filter grounded, the number of grounded filters, it reads a column the question names):
    higher reads more of the question."""
    numbers = question_numbers(question)
    stated = [_filter_grounded(f, question, numbers, typed) for f in program.filters]
    # a filter every row meets is no invention, and no reading of the question either: it counts for neither
    vacuous = [not s and typed is not None and _keeps_every_row(typed, f) for f, s in zip(program.filters, stated)]
    return all(s or v for s, v in zip(stated, vacuous)), sum(stated), reads_named_column(program, question, typed)


def _filter_grounded(f: RowFilter, question: str, numbers: set[float], typed: TypedTable | None) -> bool:
    """A value the question states, the yes (no) of a yes/no column it names ("net importers"), or the value of
    the row it compares with ("more medals than Brazil")."""
    return _value_stated(f, question, numbers, typed) or (typed is not None and (
        names_flag(typed, f, question) or bound_of_named_row(typed, f, question)
        or shares_named_row_value(typed, f, question)))


def _keeps_every_row(typed: TypedTable, f: RowFilter) -> bool:
    """A filter every row meets ("Placebo > 0" over counts) selects what no filter does: it invents nothing, so it
    does not cost its program the vote. Found as a new user: four of five programs for "Which adverse event was most
    frequent on placebo?" wrote it, and the fifth won alone (same answer, confidence 0.2)."""
    rows = list(typed.scope) or list(range(1, typed.table.n_rows + 1))
    return bool(rows) and all(meets_filter(typed, r, f) for r in rows)


def _value_stated(f: RowFilter, question: str, numbers: set[float], typed: TypedTable | None) -> bool:
    """Whether the question states the filter's value by the value's own words: the words it shares with its
    column's header ground nothing, since a question that names the column writes them anyway. Found as a new
    user: "Which adverse event was most frequent on placebo?" grounded "Adverse event = 'Any serious adverse
    event'", and that program alone outvoted the ones reading Headache."""
    if typed is None or cell_number(f.value) is not None:
        return value_grounded(f.value, question, numbers)
    try:
        header = {singular(w) for w in content_words(typed.column(f.column).name)}
    except KeyError:
        return value_grounded(f.value, question, numbers)
    words = content_words(f.value)
    own = [w for w in words if singular(w) not in header]
    if not own or len(own) == len(words):
        return value_grounded(f.value, question, numbers)
    return value_grounded(" ".join(own), question, numbers)


# Comparing words whose direction does not depend on what the column measures ("faster", "older" do).
GREATER_WORDS = ("more", "greater", "larger", "bigger", "higher")
SMALLER_WORDS = ("fewer", "less", "lower", "smaller")
# "more total medals than Brazil", "a larger intake than sacred heart": a comparison with a row, not a number.
# A number after "than" ("more than 3", "more than one competitor") is a bound the program writes itself.
COMPARED_WITH_ROW = re.compile(r"\b(?P<word>" + "|".join(GREATER_WORDS + SMALLER_WORDS) + r")\b"
                               r"(?P<noun>[^?]*?)\bthan\s+(?P<row>(?!\d|(?:" + "|".join(CARDINALS)
                               + r"|a|an)\b)[^?]*)", re.I)


def row_compared_with(typed: TypedTable, question: str) -> int | None:
    """The row a question compares with after "more … than": the one row a text cell of which the words after
    "than" state, accents as text compares them ("silex" names "Sílex"); None when no row or several."""
    m = COMPARED_WITH_ROW.search(question)
    return row_stated(typed, m.group("row")) if m else None


def row_stated(typed: TypedTable, words: str) -> int | None:
    """The one row a text cell of which ``words`` state, accents as text compares them; None when none or several.

    When several rows have a cell stated, the row whose cell is stated most fully wins: all its words first, then
    the most of them ("david moller" names David Möller, not David Mair; "goi" names Goi, not "son of Goi").
    A tie is no row.
    """
    said = norm_text(words)
    numbers = question_numbers(said)
    have = content_words(said.replace("'s", " "))
    stated: dict[str, tuple[bool, int, int] | None] = {}  # per distinct cell text: towns repeat a few names many times
    best: dict[int, tuple[bool, int, int]] = {}
    for r in range(1, typed.table.n_rows + 1):
        for col in typed.columns:
            if col.numeric:
                continue
            text = typed.text(r, col.index)
            if text not in stated:
                stated[text] = _how_fully_stated(norm_text(text), said, numbers, have)
            if stated[text] is not None:
                best[r] = max(best.get(r, stated[text]), stated[text])
    if not best:
        return None
    top = max(best.values())
    rows = [r for r, score in best.items() if score == top]
    return rows[0] if len(rows) == 1 else None


def _how_fully_stated(text: str, said: str, numbers: set[float], have: list[str]) -> tuple[bool, int, int] | None:
    """(all of the cell's words said, how many are, how many word for word) for a cell ``said`` states; None for one
    it does not. Word for word breaks a tie: "Southfields" states the clinic Southfields and, by its first letters,
    the district South that another clinic is in too (found as a new user: no row was named)."""
    if not value_grounded(text, said, numbers):
        return None
    words = content_words(text)
    found = sum(1 for w in words if word_in(w, have))
    return found == len(words), found, sum(1 for w in words if w in have)


# "the same number of gold medals as hungary", "from the same country as schroder": a value shared with a row.
# "the same as X" names no column: not read.
SAME_AS_ROW = re.compile(r"\bsame\s+(?P<noun>(?:(?!\bas\b)[^?.])+?)\s+as\s+(?P<row>[^?]+)", re.I)
# "almost the same diameter as leopardus" asks for the nearest value, which no equality selects.
_APPROXIMATELY = re.compile(r"\b(?:almost|nearly|roughly|about|approximately|around|close to|similar)\s+the\s+same\b",
                            re.I)
# "matti yrjola had the same distance recorded as who?": the row is stated before "same".
_ASKED_AFTER_AS = re.compile(r"^\s*(?:who|whom|which|what)\b", re.I)


def asks_for_the_other_row(question: str) -> bool:
    """"… the same round as which other player?": the answer names a row, however the question starts."""
    m = SAME_AS_ROW.search(question)
    return bool(m and _ASKED_AFTER_AS.match(m.group("row")))


def same_as_row(typed: TypedTable, question: str) -> tuple[int, TypedColumn] | None:
    """(the row, the column) of "the same <column> as <row>": the one column the words between "same" and "as"
    name, and the one row the words after "as" state (before "same" when "as who/which …" asks for the others),
    whose cell in that column is not empty; None otherwise."""
    m = SAME_AS_ROW.search(question)
    if not m or _APPROXIMATELY.search(question):
        return None
    named = [col for col in typed.columns if column_named(col.name, m.group("noun"))]
    if len(named) != 1:
        return None
    asked_after = _ASKED_AFTER_AS.match(m.group("row"))
    row = row_stated(typed, question[:m.start()] if asked_after else m.group("row"))
    if row is None or not typed.text(row, named[0].index).strip():
        return None
    return row, named[0]


def shares_named_row_value(typed: TypedTable, f: RowFilter, question: str) -> bool:
    """Whether ``f`` selects the rows that hold, in the column "the same … as <row>" names, that row's value."""
    if f.op != "=" or "same" not in question.casefold():  # before the scan for the row, the costly part
        return False
    found = same_as_row(typed, question)
    if found is None or found[1].ident != f.column:
        return False
    row, col = found
    if col.numeric:
        held, stated = typed.number(row, col.index), cell_number(f.value)
        return held is not None and stated is not None and abs(held - stated) < 1e-9
    return norm_text(typed.text(row, col.index)) == norm_text(f.value)


def bound_of_named_row(typed: TypedTable, f: RowFilter, question: str) -> bool:
    """Whether ``f`` compares its column with the value that column holds in the row the question compares with."""
    if not _compares_number(typed, f):  # before the scan for the row, the costly part
        return False
    r = row_compared_with(typed, question)
    return r is not None and bound_of_row(typed, f, r)


def bound_of_row(typed: TypedTable, f: RowFilter, row: int) -> bool:
    """Whether ``f`` compares its column with the value that column holds in ``row``."""
    if not _compares_number(typed, f):
        return False
    held = typed.number(row, typed.column(f.column).index)
    return held is not None and abs(held - cell_number(f.value)) < 1e-9  # type: ignore[operator]


def _compares_number(typed: TypedTable, f: RowFilter) -> bool:
    return f.op in ("<", "<=", ">", ">=") and cell_number(f.value) is not None and typed.is_numeric(f.column)


def describe_grounding(program: Program, question: str, best: tuple[bool, int, bool],
                       typed: TypedTable | None = None) -> str:
    """Why this program reads less of the question than the best one (for the step)."""
    numbers = question_numbers(question)
    invented = [f.value for f in program.filters if not _filter_grounded(f, question, numbers, typed)
                and not (typed is not None and _keeps_every_row(typed, f))]
    if invented:
        return "its filter value " + ", ".join(repr(v) for v in invented) + " is not in the question"
    if sum(_filter_grounded(f, question, numbers, typed) for f in program.filters) < best[1]:
        return "another program also filters on a value the question states"
    return "it reads a column the question does not name, and another program reads one it names"


def alternatives(question: str, typed: TypedTable) -> tuple[str, list[str]] | None:
    """The column and the two values a choice question names ("which had more, Jewish or Roman Catholic?").

    Both values must be cells of one text column, written in the question as whole words, on either side of
    its "or"; or, as :func:`tools.lang.choice.table_choice` reads them, parts of two rows' cells in one text
    column ("Harbour View or Northgate?" for "Harbour View Clinic" and "Northgate Family Practice": found as a
    new user, three of five programs kept Harbour View's row only). None when the question names no such pair.
    """
    low = " ".join(question.casefold().split())
    ors = [m.start() for m in re.finditer(r"\bor\b", low)]
    if not ors:
        return None
    for col in typed.columns:
        if col.numeric:
            continue
        found: dict[str, tuple[int, str]] = {}
        for value in typed.table.column_values(col.index):
            key = " ".join(WORD.findall(str(value).casefold()))
            if len(key) < 3 or key in found:
                continue
            m = re.search(rf"(?<!\w){re.escape(key)}(?!\w)", low)
            if m:
                found[key] = (m.start(), " ".join(str(value).split()))
        spots = sorted(found.values())
        for o in ors:
            left = [v for pos, v in spots if pos < o]
            right = [v for pos, v in spots if pos > o]
            if left and right:
                return col.ident, [left[-1], right[0]]
    return _named_pair(question, typed)


def _named_pair(question: str, typed: TypedTable) -> tuple[str, list[str]] | None:
    choice = table_choice(question, typed.table)
    if choice is None or not choice.option_rows or choice.column is None or typed.columns[choice.column - 1].numeric:
        return None
    return typed.columns[choice.column - 1].ident, [" ".join(typed.text(r, choice.column).split())
                                                     for r in choice.option_rows]
