"""A question about some of the table's rows ("the European cities"), which the programs answered over all of them.

Found as a new user over an air-quality table of seven cities (City, Country, PM2.5, …): "What is the average
PM2.5 across the European cities?" was answered 39.36, the mean of all seven, by five programs of five, and shown
as verified. Nothing in the table says which cities are European, so no program could pick them out, and the
reply did not say so: it answered another question.

A capitalised word written just before the rows' own noun ("European" in "the European cities", "NFL" in "the NFL
teams"; the noun from the table's name or row-label header) restricts the rows the question is about, when the
table does not write it (then it may name a row or a column: "Orange County", "Home Team"). When every program
that gave the answer kept all the rows (no filter), the answer is over all of them and the reply must say that,
with low confidence and not as verified, rather than be shown as the answer asked for. So must it when every such
program chose its rows by a value the question does not state: "Which Asian city has the lowest NO2?" was then
answered by "Country = 'China'" (seen as a new user), the model's own judgement of which cities are Asian.

Lower-case words are left alone: on 4,000 WikiTableQuestions training questions (all lower case) the same test
without that condition fired on 39, and about three in four were words that pick nothing out ("the professional
wrestler", "the first place driver", "track and field events").
"""

from __future__ import annotations

import re

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from kb.tables import Table
from tools._cells import norm_text, writes_whole
from tools._frequency_rules import row_kinds
from tools.lang.lexicon import CARDINALS, DOWNWARD, UPWARD, singular, word_in

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
