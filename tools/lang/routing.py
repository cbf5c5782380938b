"""Which uploaded table (if any) a message talks about, decided in code (issue 13, item 1).

The intent model's task label alone sent half the "Is it true that …?" claims about an uploaded table
to the text knowledge base. Here a message is scored against each table of the session: its headers,
its row labels and other cell values (lexical), the numbers it quotes (numeric), and, when an embedder
is given, the embedding similarity to a short summary of the table. A table named in the message wins
outright. A message that matches no table goes the text way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tools._grounding import EXPLETIVE_IT, row_stated
from tools._cells import TypedTable, cell_number, is_empty, iso_month_match
from tools._settle_rules import record_fields
from tools.lang.lexicon import OF_THEM, SUPERLATIVES, WORD, related, spelled_out
from tools.lang.reading import read
from tools.intent import without_regarding_note

# A score at or above this sends the message to the table: one header plus one value, a row label, or a
# header with a table-shaped question word ("which … most", "how many"). One header alone (a "year" in
# an unrelated history question) is not enough.
ROUTE_THRESHOLD = 1.5
HEADER_SCORE = 1.0
WHOLE_HEADER_BONUS = 0.25  # breaks ties between tables; a whole header alone stays under the threshold
LABEL_SCORE = 1.5
VALUE_SCORE = 1.0
NUMBER_SCORE = 1.0
NAME_SCORE = 3.0
TABLE_WORDS_SCORE = 0.5
EMBEDDING_FLOOR = 0.35  # cosine below this adds nothing; above it adds up to ~1.5
# A message naming a one-record table's subject routes when what it asks is this close to one of the record's other
# fields (MiniLM cosine, the subject written "it"). Set by hand on 20 questions over a drug label and a trial record
# (tools/lang/routing.py's tests): the fields asked for scored 0.40-0.69 ("Who makes it?" - Manufacturer 0.69, "How
# many people were in it?" - Participants 0.40), the questions no field answers at most 0.34 ("Is it a generic?").
FIELD_ASKED_FLOOR = 0.40
MAX_VALUE_CELLS = 5000  # cells scanned per table: enough for uploads, bounded for huge ones
_STOP = {"the", "a", "an", "of", "in", "on", "at", "to", "for", "and", "or", "is", "was", "were", "are", "be",
         "it", "its", "did", "does", "do", "had", "has", "have", "than", "that", "this", "with", "by", "from",
         "what", "which", "who", "whom", "how", "many", "much", "when", "where", "why", "true", "false", "not",
         "there", "their", "they", "them", "as", "any", "all", "each", "per", "more", "less", "most", "least",
         "row", "rows", "column", "columns", "table", "value", "values", "number", "total", "one", "two"}
# Words that make a question table-shaped once it also names a column.
_TABLE_QUESTION = re.compile(r"\b(which|how many|how much|total|average|mean|median|sum|most|least|highest|lowest|"
                             r"largest|smallest|more than|less than|fewer|greater|maximum|minimum|every|only|rank)"
                             r"\b", re.I)
# "How long did it last?" asks for a measure that a header names in other words ("Duration (weeks)"): found as a new
# user, that follow-up to a table answer shared no word with the table and went to the text knowledge base. Each
# "how <adjective>" maps to the header words that measure it; a header holding one counts as named.
_MEASURE_HEADERS = {
    "long": {"duration", "length", "long", "time", "period", "weeks", "week", "days", "day", "months", "month",
             "hours", "minutes", "min", "mins", "hrs", "wks"},
    "old": {"age", "aged", "born", "birth", "founded", "built", "established"},
    "far": {"distance", "km", "miles", "mi", "range", "length"},
    "tall": {"height", "tall", "feet", "ft", "metres", "meters", "floors", "storeys", "stories"},
    "high": {"height", "elevation", "altitude", "feet", "ft", "metres", "meters"},
    "heavy": {"weight", "mass", "kg", "lb", "lbs", "tonnes", "tons", "grams"},
    "big": {"size", "area", "capacity", "population", "volume", "km²", "km2", "acres", "hectares"},
    "large": {"size", "area", "capacity", "population", "volume", "km²", "km2", "acres", "hectares"},
    "often": {"frequency", "rate", "times", "per"},
    "fast": {"speed", "km/h", "mph", "pace", "time"},
    "expensive": {"price", "cost", "fee", "usd", "eur", "gbp"},
}
_HOW_MEASURE = re.compile(r"\bhow\s+(" + "|".join(_MEASURE_HEADERS) + r")\b", re.I)


def measured_header(message: str, columns: list[str]) -> str | None:
    """The header a "how long/old/far/…" question asks for in other words, or None (:data:`_MEASURE_HEADERS`)."""
    m = _HOW_MEASURE.search(message or "")
    if not m:
        return None
    wanted = _MEASURE_HEADERS[m.group(1).lower()]
    return next((h for h in columns if wanted & set(_words(h))), None)


PART_MAX_WORDS = 4  # cells this short may be named by part ("March 2010" of "3 March 2010"); long text may not
_WORD = re.compile(r"[^\W_][\w'\-]*", re.U)
_NUMBER = re.compile(r"[-−+]?\$?\d[\d,]*(?:\.\d+)?%?")


def _words(text: str) -> list[str]:
    return [w.lower().strip("'-") for w in _WORD.findall(text or "")]


def _content(text: str) -> set[str]:
    return {w for w in _words(text) if len(w) > 2 and w not in _STOP and not w[0].isdigit()}


def _stem(word: str) -> str:
    return word[:5] if len(word) > 5 else word


@dataclass
class TableMatch:
    name: str
    score: float
    by_name: bool = False
    matched: list[str] = field(default_factory=list)  # what matched, for the step shown to the user
    names_cells: bool = False  # a row, value, number or month of the table is in the message

    @property
    def routes(self) -> bool:
        return self.by_name or self.score >= ROUTE_THRESHOLD


def scorable(table: Any) -> bool:
    return isinstance(getattr(table, "columns", None), list) and isinstance(getattr(table, "rows", None), list)


def score_table(message: str, table: Any, embedder=None) -> TableMatch:
    """How strongly ``message`` talks about ``table``."""
    low = " ".join((message or "").lower().split())
    name = str(getattr(table, "name", ""))
    match = TableMatch(name=name, score=0.0)
    if not scorable(table):
        return match
    words = _content(message)
    names = {n.lower() for n in (name, str(getattr(table, "title", "") or "")) if n and len(n) > 2}
    for n in names:
        stem = re.sub(r"\.(csv|tsv|xlsx?|json|md|html?)$", "", n)
        if re.search(rf"(?<!\w){re.escape(stem)}(?!\w)", low):
            match.by_name = True
            match.score += NAME_SCORE
            match.matched.append(f"name {stem!r}")
            break
    header_hit = False
    for header in table.columns:
        # an abbreviation names the words it stands for: "Did its confidence interval include 1?" names "HR (95% CI)",
        # "At what temperature …?" names "Storage temp (°C)" (found as a new user: both went to the text knowledge base)
        hw = _content(header) | _content(" ".join(spelled_out(header)))
        named = {h for h in hw if any(related(h, w) for w in words)}
        if named:
            # A message that names the whole header is more about it than one that names a part: with two tables
            # loaded, "How many nurses work in Central?" is about "Nurses" rather than "Nurses per 1,000 pop."
            # (found as a new user: the tie went to the rate).
            match.score += HEADER_SCORE + (WHOLE_HEADER_BONUS if named == hw else 0.0)
            match.matched.append(f"header {header!r}")
            header_hit = True
    measured = None if header_hit else measured_header(message, table.columns)
    if measured is not None:
        match.score += HEADER_SCORE
        match.matched.append(f"header {measured!r} (asked as {_HOW_MEASURE.search(message).group(0)!r})")
        header_hit = True
    label_col = table.row_label_col if hasattr(table, "row_label_col") else None
    numbers = {cell_number(m.group(0).replace("−", "-")) for m in _NUMBER.finditer(message or "")} - {None}
    seen_values: set[str] = set()
    seen_numbers: set[float] = set()
    value_hit, part_hit = False, False
    label_parts: list[str] = []  # parts of row labels the message names, in order
    compares = _COMPARES_ROWS.search(message or "") is not None
    # A one-record table's row labels (or, in one row, its headers) are its field names, not things: a message that
    # names only fields is about the record only if little else is in it (below).
    fields = record_fields(table)
    record = fields is not None
    value_named = False
    subject_named: list[str] = []  # the message's words naming a value of a one-record table
    # Month names the message uses ("may" only before a year: otherwise it is the verb).
    asked_months = [(message or "")[m.start:m.phrase_end] for m in read(message or "").months
                    if m.text.lower() != "may" or m.year]
    scanned = 0
    for row in table.rows:
        for c, cell in enumerate(row, start=1):
            scanned += 1
            if scanned > MAX_VALUE_CELLS:
                break
            text = " ".join(str(cell).split())
            if is_empty(text):
                continue
            x = cell_number(text)
            if x is not None:
                if x in numbers and x not in seen_numbers:
                    seen_numbers.add(x)
                    value_named = True
                    match.score += NUMBER_SCORE
                    match.matched.append(f"number {text!r}")
                continue
            key = text.lower()
            if key in seen_values or len(key) < 3 or key in _STOP:
                continue
            if not part_hit and asked_months and any(iso_month_match(text, m) for m in asked_months):
                # "March revenue …" over a column of "2024-03" months (found as a new user: sent to the text KB)
                part_hit = value_named = True
                match.score += VALUE_SCORE
                match.matched.append(f"month of {text!r}")
                continue
            # a value named in the plural names it too: "both macrolides" names the class "Macrolide" (found as a
            # new user: that claim went to the text knowledge base)
            if re.search(rf"(?<!\w){re.escape(key)}(?:s|es)?(?!\w)", low):
                seen_values.add(key)
                value_hit = True
                is_label = c == label_col
                value_named = value_named or not is_label or not record
                if record and not is_label:
                    subject_named.append(text)
                match.score += LABEL_SCORE if is_label else VALUE_SCORE
                match.matched.append(f"{'row' if is_label else 'value'} {text!r}")
            elif c == label_col and (form := _label_in_other_form(text, words)):
                # A field named in another form of its words: "manufactured by Teva" names "Manufacturer" in a
                # record table of fields and values (found as a new user: that claim about an uploaded drug label
                # went to the text knowledge base)
                seen_values.add(key)
                value_hit = True
                match.score += LABEL_SCORE
                match.matched.append(f"row {text!r} (as {form!r})")
            elif not part_hit or (c == label_col and len(label_parts) == 1 and compares):
                part = _named_part(text, low, message or "")
                if part and part_hit and set(_words(part)) & set(_words(label_parts[0])):
                    part = ""  # a second row label counts only when named in other words of the message
                if part:
                    # Counted once per table, as a part names a group of rows rather than one row ("March 2010"),
                    # except for a second row label named in other words: "Dementia killed more people than heart
                    # disease" names two rows ("Dementia and Alzheimer's", "Ischaemic heart disease") by part and
                    # compares them (found as a new user: it went to the text knowledge base).
                    if c == label_col:
                        label_parts.append(part.lower())
                    part_hit = value_named = True
                    if record and c != label_col:
                        subject_named.append(part)
                    match.score += VALUE_SCORE
                    match.matched.append(f"part {part!r} of {text!r}")
    # A cell the message names, whole or in part ("March 2010" of "3 March 2010"), makes "which/how many"
    # table-shaped as a header does. A bare when/where/who does not: "Who won the 2010 election in Germany?"
    # names a cell of a tour table and is not about it.
    match.names_cells = value_hit or part_hit or bool(seen_numbers)
    if (header_hit or value_hit or part_hit) and _TABLE_QUESTION.search(message or ""):
        match.score += TABLE_WORDS_SCORE
        match.matched.append("a table-shaped question")
    if embedder is not None:
        summary = f"{getattr(table, 'title', '')}: " + ", ".join(table.columns)
        if label_col:
            summary += "; " + ", ".join(str(r[label_col - 1]) for r in table.rows[:20])
        cosines = _cosines(embedder, message, [summary])
        if cosines is not None and (cos := float(cosines[0])) > EMBEDDING_FLOOR:
            match.score += round((cos - EMBEDDING_FLOOR) * 2.5, 3)
            match.matched.append(f"embedding {cos:.2f}")
    if subject_named and embedder is not None and not match.by_name and match.score < ROUTE_THRESHOLD:
        # "Who makes Glucophage?" over a drug label whose Brand name is Glucophage asks for its Manufacturer in other
        # words (found as a new user: it went to the text knowledge base, as did "Who makes metformin?").
        asked = _field_asked(message or "", fields, subject_named, embedder)
        if asked is not None:
            match.score = ROUTE_THRESHOLD
            match.matched.append(f"field {asked[0]!r} asked of {', '.join(repr(t) for t in subject_named)} "
                                 f"(embedding {asked[1]:.2f})")
    if record and not value_named and not match.by_name and match.score >= ROUTE_THRESHOLD:
        # "Which route do migrating birds take?" named the drug label's field "Route" and nothing else of it (found
        # as a new user: the reply was the label's "Oral"); "What is the route?" or "When was this drug approved?"
        # are about the label. Fields alone route when the message is not mostly about other things.
        own = _content(" ".join([*table.columns, *(str(c) for r in table.rows[:50] for c in r)]))
        said = _content(without_regarding_note(message or ""))  # the turn's own words, not the carried entities
        other = {w for w in said if not any(related(w, o) for o in own)}
        if len(other) >= 2 and len(other) > len(said) - len(other):
            match.score = min(match.score, HEADER_SCORE)
            match.matched.append(f"only field names, in a message about other things ({', '.join(sorted(other))})")
    match.score = round(match.score, 3)
    return match


def _cosines(embedder, text: str, others: list[str]) -> np.ndarray | None:
    """The cosine of ``text`` with each of ``others`` (shape ``(len(others),)``), or None when an embedding is zero."""
    vecs = np.asarray(embedder.encode([text, *others]), dtype=float)
    norms = np.linalg.norm(vecs, axis=1)
    if not norms.all():
        return None
    return vecs[1:] @ vecs[0] / (norms[1:] * norms[0])


def _field_asked(message: str, fields: list, named: list[str], embedder) -> tuple[str, float] | None:
    """The field of a one-record table that ``message`` asks for about the record's subject, and its cosine, or
    None: the message with the subject written "it" ("Who makes it?") against each field whose value does not name
    the subject (Brand name "Glucophage" is the subject, not what is asked)."""
    asked = message
    for text in sorted(named, key=len, reverse=True):
        asked = re.sub(rf"(?<!\w){re.escape(text)}(?!\w)", "it", asked, flags=re.I)
    names = [f.name for f in fields if f.name and not any(t.lower() in f.value.lower() for t in named)]
    if not names:
        return None
    cosines = _cosines(embedder, asked, names)
    if cosines is None:
        return None
    best = int(np.argmax(cosines))
    return (names[best], float(cosines[best])) if cosines[best] >= FIELD_ASKED_FLOOR else None


LABEL_FORM_MAX_WORDS = 3


def _label_in_other_form(cell: str, words: set[str]) -> str:
    """The message's words that name a short row label in other forms of all its content words ("manufactured" for
    "Manufacturer", "packs" and "sizes" for "Pack sizes"), or ""."""
    label_words = _content(cell)
    if not label_words or len(_words(cell)) > LABEL_FORM_MAX_WORDS:
        return ""
    forms = [next((w for w in sorted(words) if related(lw, w)), None) for lw in sorted(label_words)]
    return " ".join(forms) if all(forms) else ""


def _named_part(cell: str, low: str, message: str = "") -> str:
    """The longest run of a short cell's words that the message holds as words, when that run carries a word of
    its own ("March 2010" of "3 March 2010", "April" of "2 April 2010"), or an acronym the message writes in
    capitals too ("HPV" of "HPV school"; found as a new user: "The HPV campaign lasted longer than 60 days" went to
    the text knowledge base); "" when none does."""
    words = _WORD.findall(cell)
    if not 2 <= len(words) <= PART_MAX_WORDS:
        return ""
    for n in range(len(words) - 1, 0, -1):
        for i in range(len(words) - n + 1):
            run = words[i:i + n]
            own = any(len(w) > 3 and w.isalpha() and w.lower() not in _STOP for w in run)
            acronym = [w for w in run if 2 <= len(w) <= 5 and w.isalpha() and w.isupper()]
            if not own and not acronym:
                continue
            phrase = " ".join(run).lower()
            if re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", low) and (
                    own or all(re.search(rf"(?<!\w){w}(?!\w)", message) for w in acronym)):
                return " ".join(run)
    return ""


# Words that set two named rows against each other: a second row label named in part then counts (score_table).
_COMPARES_ROWS = re.compile(r"\b(?:than|versus|vs|compared|both|between)\b", re.I)
_ANAPHORA = re.compile(r"\b(it|its|it's|they|their|them|that one|this one|that row|the same)\b", re.I)
FOLLOW_UP_SCORE = 1.0


def route(message: str, tables: dict[str, Any], *, embedder=None, previous: str | None = None) -> TableMatch | None:
    """The table ``message`` talks about, or None (the text path). A named table wins, then the best score.

    ``previous`` names the table the last answer came from: a follow-up that points back at it
    ("how many participants did it have?") leans on that table.
    """
    if not tables:
        return None
    matches = [score_table(message, t, embedder) for t in tables.values()]
    points_back = bool(previous) and _ANAPHORA.search(EXPLETIVE_IT.sub("", message or "")) is not None
    if points_back:
        # "Which of them can be stored warmest?" asks about the rows of the last table answer whatever words it
        # shares with the headers (found as a new user: it went to the text knowledge base); "it" alone leans.
        rows_asked = OF_THEM.search(message or "") is not None
        for m in matches:
            if m.name == previous:
                m.score = round(m.score + (ROUTE_THRESHOLD if rows_asked else FOLLOW_UP_SCORE), 3)
                m.matched.append("a follow-up to the last table answer's rows" if rows_asked
                                 else "a follow-up to the last table answer")
    named = [m for m in matches if m.by_name]
    last = next((m for m in matches if m.name == previous), None)
    if points_back and last is not None and not named and last.score > FOLLOW_UP_SCORE \
            and not any(m.names_cells for m in matches if m is not last):
        # "it" is the last answer's row, so the follow-up is about that row's table unless it names another table
        # or another table's cells. Found as a new user with two tables loaded: "And how much rain does it get in a
        # year?" after "Which city has the most rainy days?" (rainfall.json) went to a trial-sites table whose
        # header "Median age (years)" shares the word "year". The last table must still share something with the
        # message (a header word, or the embedding's floor), so "What causes it?" stays on the text path.
        return last
    pool = named or [m for m in matches if m.routes]
    if not pool:
        return None
    return max(pool, key=lambda m: m.score)


_IS_IT_TRUE = re.compile(r"^\s*(?:is it (?:true|correct|right|the case)|true or false|check (?:whether|if|that)|"
                         r"verify(?: that| whether| if)?|fact[- ]check(?: that)?|does the table (?:support|show) "
                         r"that|according to the table,?)\s*(?:that\b|:)?\s*", re.I)
_IMPERATIVE = re.compile(r"^\s*(list|show|give|find|name|tell|count|compute|calculate|sum|rank|sort|which|what|"
                         r"who|whom|whose|when|where|why|how)\b", re.I)
_LEADING_LINK = re.compile(r"^(?:and|but|so|also|then|now|ok(?:ay)?|well)\b[,\s]*", re.I)
_YES_NO = re.compile(r"^\s*(is|are|was|were|did|does|do|has|have|had|can|could)\b", re.I)


_SUPERLATIVE_WORD = "|".join(sorted((re.escape(w) for w in SUPERLATIVES), key=len, reverse=True))
# "and the longest?", "what about the fewest?", "and the second highest?": the last question asked the other way.
_ELLIPTICAL_EXTREME = re.compile(
    r"^\s*(?:(?:and|but|ok(?:ay)?|now)\s+)?(?:(?:what|how)\s+about\s+)?(?:the\s+)?"
    r"(?P<word>(?:(?:second|third|2nd|3rd)\s+)?(?:" + _SUPERLATIVE_WORD + r"))\s*(?:one)?\s*[?.!]*\s*$", re.I)
_ANY_EXTREME = re.compile(r"\b(?:(?:second|third|2nd|3rd)\s+)?(?:" + _SUPERLATIVE_WORD + r")\b", re.I)


def elliptical_extreme(message: str, previous_question: str | None) -> str | None:
    """The last question asked with another extreme, for an elliptical follow-up; None otherwise.

    Found as a new user: "and the longest?" after "Which clinic has the shortest wait?" shared no word with the
    table and went to the knowledge graph ("no tool returned evidence"). It asks the last question with "longest"
    in place of "shortest": "Which clinic has the longest wait?".
    """
    # The intent's rewrite may carry a note of what the turn is about: "and the second best? (regarding model,
    # average score)" (found as a new user: the note kept the follow-up from being read as elliptical).
    m = _ELLIPTICAL_EXTREME.match(without_regarding_note(message or ""))
    if m is None or not previous_question:
        return None
    asked = without_regarding_note(previous_question)
    # An earlier elliptical question ("and the second best?", stored as asked) has nothing to turn round.
    if len(_ANY_EXTREME.findall(asked)) != 1 or _ELLIPTICAL_EXTREME.match(asked):
        return None
    return _ANY_EXTREME.sub(m.group("word").lower(), asked, count=1)


# "And for myocardial infarction?", "What about Oslo?", "same for 2021?", "And in 2010?": the last claim, of another
# row or another value.
_FOR_ANOTHER = re.compile(r"^\s*(?:(?:and|but|ok(?:ay)?|now)\s+)?(?:(?:what|how)\s+about|(?:the\s+)?same\s+for|for)\s+"
                          r"(?P<other>[^?.!]+?)\s*[?.!]*\s*$|^\s*and\s+(?P<bare>[^?.!]+?)\s*[?.!]*\s*$", re.I)


def claim_of_another(message: str, claim: str, claim_rows: list[int], table: Any) -> str | None:
    """The last claim asked again of what an elliptical follow-up names, or None: of another row ("And for
    myocardial infarction?") or with another value of a slot the claim writes ("And in 2010?").

    A follow-up keeps the form of the turn it follows: after a claim, it is the same claim for the new slot.
    Found as a new user: after "Is it true that Drug A more than halved the rate of stroke compared with placebo?"
    (Supported), "And for myocardial infarction?" went to table QA as a question of its own and came back as the
    outcome with the most events; after a claim about one year, "And in <another year>?" was answered with one
    cell's value instead of a verdict.
    """
    m = _FOR_ANOTHER.match(without_regarding_note(message or ""))
    if m is None:
        return None
    other = (m.group("other") or m.group("bare")).strip()
    return _claim_of_another_row(other, claim, claim_rows, table) or _claim_with_another_value(other, claim,
                                                                                               claim_rows, table)


def _claim_of_another_row(other: str, claim: str, claim_rows: list[int], table: Any) -> str | None:
    """When the follow-up names one other row ("myocardial infarction") and the claim writes the name of the one row
    it was checked on ("stroke"), that name is replaced by the new one."""
    label = table.row_label_col
    row = row_stated(TypedTable.build(table), other)
    if row is None or row in claim_rows or not label:
        return None
    names = {table.cell(r, label).strip().lower() for r in claim_rows} - {""}
    written = [n for n in names if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", claim, re.I)]
    if len(written) != 1:
        return None
    return re.sub(rf"(?<!\w){re.escape(written[0])}(?!\w)", lambda _: other, claim, count=1, flags=re.I)


_SLOT_OPENER = re.compile(r"^(?:in|for|at|during|on|from)\s+(?:the\s+)?(?:year\s+)?", re.I)
_YEAR = re.compile(r"(?<!\d)(?:1[5-9]|20)\d\d(?!\d)")


def _claim_with_another_value(other: str, claim: str, claim_rows: list[int], table: Any) -> str | None:
    """"And in 2010?" after "Quebec had 678 cases in 2011.": the one year the claim writes, or the one value it writes
    of the column that holds the follow-up's value, replaced by the follow-up's (which the table must hold)."""
    value = _SLOT_OPENER.sub("", other).strip()
    if not value:
        return None
    cells = [[str(c).strip() for c in row] for row in table.rows]
    if _YEAR.fullmatch(value):
        years = set(_YEAR.findall(claim))
        if len(years) != 1 or value in years or not any(value in _YEAR.findall(c) for row in cells for c in row):
            return None
        return _YEAR.sub(value, claim, count=1)
    low = value.casefold()
    columns = {i for row in cells for i, c in enumerate(row) if c.casefold() == low}
    replaced = []
    for col in columns:
        written = {cells[r - 1][col] for r in claim_rows if 0 < r <= len(cells)} - {""}
        written = [w for w in written if w.casefold() != low
                   and re.search(rf"(?<!\w){re.escape(w)}(?!\w)", claim, re.I)]
        if len(written) == 1:
            replaced.append(written[0])
    if len(replaced) != 1:
        return None
    return re.sub(rf"(?<!\w){re.escape(replaced[0])}(?!\w)", lambda _: value, claim, count=1, flags=re.I)


def restated_claim(checked: str, message: str) -> bool:
    """Whether the claim a tool checked says more than the message's words: a follow-up's claim ("And for
    myocardial infarction?" checked as "Drug A more than halved the rate of myocardial infarction …") or a claim
    whose "it" was named ("It gets more rain than Cardiff" checked as "Bergen gets …"). The reply then says which
    claim it checked; found as a new user, a verdict came back on a claim the user never wrote out."""
    said = set(WORD.findall(message.casefold()))
    return bool(checked.strip()) and not set(WORD.findall(checked.casefold())) <= said


def as_claim(message: str) -> str | None:
    """The statement a message asks to check, or None when it is not a claim or a yes/no question.

    "Is it true that Quebec had 678 cases?" -> "Quebec had 678 cases."; a plain statement is itself;
    "Did Quebec have 678 cases?" is checked as written; wh-questions are not claims.
    """
    # A follow-up's form is its own words': "and how full are its beds? (regarding ICU beds)" asks a question
    # (found as a new user: it was checked as a claim and "Supported").
    text = _LEADING_LINK.sub("", " ".join(without_regarding_note(message or "").split()))
    if not text:
        return None
    m = _IS_IT_TRUE.match(text)
    if m and text[m.end():].strip():
        body = text[m.end():].strip().rstrip("?").strip()
        return body[0].upper() + body[1:] + ("" if body.endswith(".") else ".")
    if text.endswith("?"):
        return text if _YES_NO.match(text) else None
    return None if _IMPERATIVE.match(text) else text
