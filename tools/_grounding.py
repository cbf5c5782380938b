"""What a table question asks and whether a program reads it: the grounding of a program's filters in the question,
the kind of answer asked for (a number or a name), what "it" means in a follow-up, columns of formulas saved
without results, and a superlative over the whole table read by a program that narrowed the rows.

Each section below opens with a comment that says what it reads and the case it came from.
"""

from __future__ import annotations

import re
from typing import Literal

from kb.table_model import NOT_COMPUTED
from tools._cells import TypedColumn, TypedTable, cell_number, norm_text
from tools._table_ops_model import Execution, Program, RowFilter
from tools._table_shape import meets_filter, names_flag
from tools.lang.choice import table_choice
from tools.lang.lexicon import CARDINALS, WORD, content_words, singular, word_in
from tools.lang.reading import is_superlative, read


# ======================================================================================================================
# Whether a table question's program reads the question: a rule that keeps guessed filters out of the vote.
#
# The small model's programs for a question often run and agree while ignoring what the question states, and a
# minority reads it. Seen on WikiTableQuestions' training split (the tuning split):
#
# - "how many series had 8 episodes?": three programs counted all 17 rows, two counted the rows with 8 episodes;
# - "for each winning game, what was their score?": four listed every game's score, one the rows where
#   Result = 'Win';
# - "which choke has the least constriction?": three filtered "Constriction > 0", a value the question never
#   states, before taking the minimum; the one without a filter was right.
#
# A filter is **grounded** when its value is something the question says: a number it states ("8", "30th",
# "1958-1962"), or text whose words the question has (a word of the value may be the start of the question's word,
# so 'Win' is grounded by "winning"), or the bound a comparison with a named row states: "Total > 3" for "how
# many nations won more medals than Brazil?" when Brazil's total is 3 (four of five samples wrote it so, and lost the
# vote to one counting Brazil's own row), or the value a named row shares: "Gold = 3" for "which nation won the
# same number of gold medals as hungary?" when Hungary won 3. A program's grounding is (all its filters grounded,
# how many are, whether the column it reads is one the question names: "what is the last tops design code?" is not
# answered by the row with the most route availability). Programs below the best grounding among those that ran
# do not vote, so an invented filter loses to none, and a program that leaves out a value the question states loses
# to one that uses it. Nothing changes when every program that ran is grounded alike. The step says why a program
# did not vote.
# ======================================================================================================================

# Thousands separators only between groups of three: "in 1906, how many" states 1906, not "1906,".
_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")


_NUMBER_WORDS = CARDINALS | {
    w: float(i) for i, w in enumerate(
        "zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split())}


# "How many townships have no water area?" states a zero ("Water area = 0"): the Reading's quantifier "no" or "none"
# ("No. 5" is a number's label), or "without". Not the rest of the "none" kind: "neither team scored" states no zero
# here (taking the kind whole would change 12 dev texts).
_WITHOUT = re.compile(r"\bwithout\b")


def question_numbers(question: str) -> set[float]:
    """The numbers a question writes ("8", "30th", "1,200", both ends of "1958-1962", "second", "three", the
    zero of "no …"), unsigned."""
    low = question.casefold()
    out = {n for w, n in _NUMBER_WORDS.items() if re.search(rf"\b{w}\b", low)}
    if any(q.word in ("no", "none") for q in read(question).quantifiers) or _WITHOUT.search(low):
        out.add(0.0)
    for m in _NUMBER.finditer(question):
        n = cell_number(m.group(0))
        if n is not None:
            out.add(round(abs(n), 6))
    return out


def value_grounded(value: str, question: str, numbers: set[float] | None = None) -> bool:
    """Whether a filter's ``value`` is something ``question`` states (section comment)."""
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


def less_grounded(ran: list[tuple[Program, Execution]], found_no_number: list[Program], typed: TypedTable,
                  question: str) -> list[str]:
    """For each question program that ran (with what it computed), why it does not vote (or ""): it reads less of
    the question than the best one, where ``found_no_number`` (programs that failed for finding no number where
    they point) count among the best too.

    A program that failed for finding no number read the question all the same: "How many nurses work in
    Central?" failed four times on Central's formula cell, and the one sum over every row, which ignores
    "Central", answered alone (found as a new user).
    """
    if len(ran) + len(found_no_number) < 2 or not ran:
        return [""] * len(ran)
    levels = [grounding(program, question, typed) for program, _ in ran]
    best = max(levels + [grounding(program, question, typed) for program in found_no_number])
    best_rows = [set(ex.selected) for (_, ex), level in zip(ran, levels) if level == best]
    return [describe_grounding(program, question, best, typed)
            if level < best and not _same_rows_fewer_filters(level, best, ex, best_rows) else ""
            for (program, ex), level in zip(ran, levels)]


def _same_rows_fewer_filters(level: tuple[bool, int, bool], best: tuple[bool, int, bool], execution: Execution,
                             best_rows: list[set[int]]) -> bool:
    """Does this program read the question as well as the best one but for a stated filter that changes nothing,
    selecting the very rows a best one selects? Found as a new user: "How many infections did it have?" about
    Mercy General, noted "(Region: South)": 4 of 5 programs selecting its row by name alone were held because the
    fifth also filtered on the region, and the right answer came with 20% confidence."""
    if level[0] != best[0] or level[2] != best[2]:
        return False
    return set(execution.selected) in best_rows


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


# ======================================================================================================================
# What kind of answer a table question asks for, read from its form: a number, a name, or either; and
# whether it asks for the first or the last of several rows.
#
# "How many …?" asks for a number and "Which team …?" / "Who …?" for a name: the question's opening words
# settle it, so code decides and the model is not asked. The table programs use it two ways
# (``tools._table_program``): a program whose result is of the wrong kind does not vote while one of the right
# kind ran, and "max of points" written with the answer column "team" for a which-question is read as the team
# of the row with the most points (what the answer column says the model meant).
#
# "What is the last design code on this chart?" asks for one row, in the table's order: a program that lists the
# codes of several rows answers with the last of them (:func:`position_asked`).
#
# Questions whose form does not settle it ("What was the score …?", "Which year …?") get ``None``: every
# program votes as before.
# ======================================================================================================================

AnswerKind = Literal["number", "name"]

_LEAD = r"^\s*(?:(?:in|on|at|for|from|of|during|to|by|with|after|before|other than [^,]+,)\s+)?"
_ASKS_NUMBER = re.compile(
    _LEAD + r"(?:how (?:many|much|long|old|tall|far|high|big|large|often|heavy|wide|deep)\b"
    r"|(?:what|which)(?:'s| is| was| were| are)? the (?:total|number|sum|average|mean|difference|amount|count)\b"
    r"|(?:the )?total (?:number|amount|count)\b|number of\b)", re.I)
# Nouns after which/what that ask for a number, a date or a rank rather than a name.
_NOT_NAMES = ("year", "years", "season", "seasons", "date", "dates", "day", "days", "month", "months", "week", "weeks",
              "time", "times", "number", "numbers", "amount", "total", "score", "scores", "rank", "ranking", "round",
              "rounds", "age", "place", "position", "percentage", "percent", "count", "decade", "century", "is",
              "was", "were", "are", "did", "does", "do", "has", "had", "of", "the", "a", "an", "kind", "type")
_NOT_NAME = r"(?!(?:" + "|".join(_NOT_NAMES) + r")\b)[a-z]+"
# "Which of them …?", "Which of the studies …?" ask for rows by name too (found as a new user: "Which of the studies
# was published most recently?" voted for the date over the study's name).
_WHICH_OF = r"which\s+(?:one\s+)?of\s+(?:them|(?:the|these|those)\s+" + _NOT_NAME + ")"
# "Which was the first Alzheimer drug to be approved?": a row picked by its place in an order, by name.
_WHICH_WAS_FIRST = (r"which\s+(?:is|was|are|were)\s+the\s+(?:first|last|earliest|latest|oldest|newest)\s+"
                    + _NOT_NAME)
_NAME = re.compile(_LEAD + r"(?:who|whom|whose|" + _WHICH_OF + "|" + _WHICH_WAS_FIRST
                   + r"|(?:which|what|name (?:a|an|the|one|all|each))\s+" + _NOT_NAME + ")", re.I)


def expected_answer(question: str) -> AnswerKind | None:
    """``number`` for "how many/how much/what is the total …", ``name`` for "who/which <noun>", else None."""
    if _ASKS_NUMBER.match(question):
        return "number"
    if _NAME.match(question):
        return "name"
    return None


def is_number(answer: str) -> bool:
    """Every part of a (comma-joined) answer reads as a number: '12', '4,512', '3.5%'."""
    parts = [p for p in re.split(r",\s+", answer.strip()) if p]
    return bool(parts) and all(cell_number(p) is not None for p in parts)


def fits(answer: str, expected: AnswerKind | None) -> bool:
    """Whether ``answer`` is the kind the question asks for (anything fits when the form does not say)."""
    if expected is None or not answer.strip():
        return True
    if expected == "number":
        return cell_number(answer.strip()) is not None or re.match(r"^\s*[-−]?\d", answer) is not None
    return not is_number(answer)


def wrong_answer_kind(answers: list[tuple[str, str]], question: str) -> list[str]:
    """For each question program that ran, given as (its answer, what it computed in words), why it does not vote
    (or ""): its answer is not the kind the question asks for (a number, or a name), while another one's is. When
    none is of the kind asked, or all are, every one votes."""
    expected = expected_answer(question)
    fitting = [fits(answer, expected) for answer, _ in answers]
    if all(fitting) or not any(fitting):
        return [""] * len(answers)
    what = "a number" if expected == "number" else "a name, not a number"
    return ["" if ok else f"the question asks for {what}, and it computed {result}"
            for ok, (_, result) in zip(fitting, answers)]


_FIRST, _LAST = re.compile(r"\bfirst\b", re.I), re.compile(r"\blast\b", re.I)
# "the first three games", "the last 2 seasons": several rows are asked for, so no one row is the answer.
_SEVERAL = re.compile(r"\b(?:first|last)\s+(?:\d+|two|three|four|five|six|seven|eight|nine|ten|few|several)\b",
                      re.I)


def position_asked(question: str) -> Literal["first", "last"] | None:
    """``first`` or ``last`` when the question asks for exactly one of them ("the last album released …")."""
    first, last = bool(_FIRST.search(question)), bool(_LAST.search(question))
    if first == last or _SEVERAL.search(question):
        return None
    return "first" if first else "last"


_YES_NO = re.compile(r"^\s*(?:is|was|are|were|did|does|do|has|have|had|can|could|will|would)\b", re.I)
_ALTERNATIVE = re.compile(r"\bor\b", re.I)


def yes_no_asked(question: str) -> bool:
    """A question answered yes or no ("Was X nominated in 2008?"), not a choice ("Did Sweden or Spain win?")."""
    return bool(_YES_NO.match(question)) and not _ALTERNATIVE.search(question.replace("yes or no", ""))


# ======================================================================================================================
# What "it" means after a question that asked for one thing: the thing the answer named.
#
# Seen on the chat bench: "What is an example of a renewable energy source?" was answered "Wind is a renewable
# energy source [S5][S6].", and the follow-up "Why is it renewable?" was searched as "(regarding energy, source)",
# so the pool held solar energy and oil, and the turn abstained although the KB says "wind is a renewable
# resource". The question asked for one example, so "it" is the example the answer gave.
#
# Deliberately narrow, since a wrong reading sends the turn after the wrong thing:
# - the earlier question asks for one thing ("What is an example of …?", "Name a …", "Which planet is …?");
# - its answer was verified, and its first statement opens "<subject> is/are/was …" with a short subject that the
#   question did not name ("A renewable energy source is wind" names the question's own words);
# - the follow-up says "it" or "its" and names no subject of its own (the caller checks that).
# A list reply ("The first 24 of the 28 facts …") or an answer of several things never qualifies.
# ======================================================================================================================

# The forms of a question that asks for a single thing.
_ASKS_FOR_ONE = re.compile(
    r"^\s*(?:(?:what|which)(?:'s| is| was) (?:an?|one) (?:\w+ )?(?:example|instance|kind|type|form) of\b"
    r"|(?:can you |please )?(?:name|give(?: me)?) (?:an?|one) (?:\w+ )?(?:example|\w+)\b"
    r"|which \w+(?: \w+)? (?:is|was|has)\b)", re.I)
_CHIP = re.compile(r"\s*\[[^\]]*\]")
_OPENS_WITH_SUBJECT = re.compile(r"^\s*(?:(?:the|an?)\s+)?([A-Za-z][\w\-']*(?:\s+[A-Za-z][\w\-']*){0,3}?)\s+"
                                 r"(?:is|are|was|were)\b", re.I)
# Subjects that are the reply's own words, not a thing the question asked for.
_NOT_SUBJECTS = {"it", "this", "that", "there", "the evidence", "evidence", "answer", "verdict", "they", "these",
                 "one example", "an example", "example"}
_PRONOUN = re.compile(r"\b(it's|its|it)\b", re.I)
# "It" that points at nothing: "is it true that…", "is it safe to…", "it is raining". One pattern for every reader of
# "it" (the intent's follow-ups, table routing, a follow-up claim's referent).
EXPLETIVE_IT = re.compile(r"\b(?:is it|was it|it is|it's|it was)\s+(?:true|false|correct|right|the case|safe|ok|okay|"
                          r"possible|normal|bad|good|dangerous|necessary|better|worse|likely|common|raining)"
                          r"(?:\s+(?:that|to))?\b", re.I)
_WORD = re.compile(r"[a-z0-9]+")
MAX_SUBJECT_WORDS = 4


def asks_for_one(question: str) -> bool:
    """Does the question ask for a single thing ("What is an example of …?", "Name a …", "Which X is …?")?"""
    return bool(_ASKS_FOR_ONE.match(question or ""))


def answer_subject(question: str, answer: str, status: str) -> str | None:
    """The thing a verified answer to a one-thing question named, when "it" can only mean that; else None."""
    if status != "verified" or not asks_for_one(question) or not answer:
        return None
    first = _CHIP.sub("", answer.strip().split("\n", 1)[0])
    m = _OPENS_WITH_SUBJECT.match(first)
    if not m:
        return None
    subject = m.group(1).strip()
    words = _WORD.findall(subject.lower())
    if not words or len(words) > MAX_SUBJECT_WORDS or subject.lower() in _NOT_SUBJECTS:
        return None
    if set(words) <= set(_WORD.findall(question.lower())):
        return None  # the answer restates the question's own thing ("A renewable energy source is …")
    # A sentence's first capital says nothing about a name ("Wind is …"); search ignores case, an acronym keeps it.
    return subject if subject[:2].isupper() else subject[0].lower() + subject[1:]


def with_subject(message: str, subject: str, expletive: re.Pattern | None = None, *,
                 every: bool = False) -> str | None:
    """The message with its first "it"/"its"/"it's" replaced by ``subject`` ("Why is it renewable?" -> "Why is
    wind renewable?"; "its" -> "wind's", "it's" -> "wind is"), or each of them when ``every``; None when it says
    none. ``expletive`` marks spans whose "it" points at nothing ("is it true that …"), which are skipped."""
    skip = [x.span() for x in expletive.finditer(message.lower())] if expletive else []
    found = [x for x in _PRONOUN.finditer(message) if not any(a <= x.start() < b for a, b in skip)]
    if not found:
        return None
    out, end = [], 0
    for m in found if every else found[:1]:
        word = m.group(1).lower()
        out += [message[end:m.start()], subject + ("'s" if word == "its" else " is" if word == "it's" else "")]
        end = m.end()
    return "".join(out) + message[end:]


# ======================================================================================================================
# A column the message asks about that holds only formulas the file saved without their results.
#
# Found as a new user: an XLSX written by a script ("Coverage" = ``=D2/B2`` in every row, no saved values) was asked
# "Which county has the highest coverage?". The column choice named Coverage, but no program can read a formula
# (formulas are never run), so all five programs ordered by Fully vaccinated or Population instead and the reply,
# "Birchwood", was shown as verified. The highest coverage is Dunmore's. Such a question has no answer in the
# table as uploaded; saying so, and how to store the results, is the answer.
# ======================================================================================================================

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


# ======================================================================================================================
# A superlative over the whole table, read by a program that narrowed the rows to ones the claim never names.
#
# Found as a new user over a nutrition table (Food, Category, Calories, …): "Cod is the lowest-calorie food in the
# table." was decided by "rows where Category = 'Fish' → min of Calories; check: result = Calories of 'Cod'", two
# programs of five, shown as verified. The verdict happened to be right (Cod, 82 kcal, is the lowest of all eight
# foods), but the program compared Cod with one other fish, so the cells it cited could not show it.
#
# When a claim's superlative says its scope is the whole table ("in the table", "of all", "on the list",
# "overall"), a program computing an extreme keeps only the filters whose value the claim states: the others
# narrow the rows to a group the claim never names. Without such words the filter stays, as it was measured:
# holding every filter value a claim does not state to the claim hurt on TabFact's tuning split, whose claims
# paraphrase the cells rows are chosen by (tools._claim_grounding).
# ======================================================================================================================

_WHOLE_TABLE = re.compile(r"\b(?:in|of|on|across|among)\s+(?:the|this)\s+(?:whole\s+|entire\s+)?"
                          r"(?:table|list|dataset|data)\b|\b(?:of|among)\s+all\b|\boverall\b|\bon\s+the\s+list\b",
                          re.I)
_EXTREMES = ("max", "min", "argmax", "argmin")


def says_whole_table(claim: str) -> bool:
    """Does the claim's superlative range over the whole table ("the lowest-calorie food in the table")?"""
    return is_superlative(claim) and _WHOLE_TABLE.search(claim) is not None


def read_whole_table_extreme(program: Program, typed: TypedTable, claim: str) -> Program:
    """``program`` without the filters whose value the claim does not state, when it computes an extreme and the
    claim's superlative ranges over the whole table (section comment); otherwise as it is."""
    if program.fn not in _EXTREMES or not program.filters or not says_whole_table(claim):
        return program
    kept = [f for f in program.filters if f.than_column or value_grounded(f.value, claim)]
    if len(kept) == len(program.filters):
        return program
    return program.model_copy(update={"filters": kept})
