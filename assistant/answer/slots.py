"""The asked slot (#78): what a question asks for, typed in code, and whether a statement fills it.

The support check (:mod:`assistant.answer.support`) asks whether a statement's words are in what it cites, not
whether it answers. Seen as a new user: a question on a physical quantity the knowledge base does not hold was
answered, verified, with two definitions of the term and ConceptNet filler, and its follow-up "Where is it?" with
"<the place> is a kind of mountain [P1] … <the place> is a kind of ocean [P2]". The question's form names what it
asks for (``tools.intent.answer_type_of`` and the intent's relation), and code types the answer:

- a **quantity** ("What is the melting point of …?", "How tall …?"): a number with a unit of the asked kind (a
  temperature, a length, a mass …), or any number where the noun names no unit ("What dose …?", "How many …?");
- a **date** ("In what year …?"): a year, a month or a date; a **time** ("When …?"): a date, a season, a time of
  day, or a clause of time ("during the adult stage", "after it rains");
- a **place** ("Where …?"): a place phrase ("found in the leaves"), or a KG fact of a location relation (ConceptNet
  AtLocation, LocatedNear, PartOf; Hetionet "localizes to");
- a **cause** ("What causes …?"): a stated cause or mechanism, or a KG fact of a causal relation;
- a **kind of KG node** ("Which drugs …?", "Which genes …?"): a cited fact's end of that node kind (Hetionet's
  Compound, Gene …). An untyped end (a ConceptNet concept, a sentence) is not judged.

A statement fills the slot when it states a value of the type and its cited evidence holds the same value (the
number with a unit of the same kind, the year, the place's word), or when it cites a KG fact of a relation that
touches the slot and names both of that fact's ends. Other forms ("What is X?", "How does …?", "Why …?") have no
slot, and nothing here applies to them; a yes/no question's verdict is decided by code elsewhere
(:mod:`assistant.answer.verdicts`).

Typed facts: a statement that types its subject from the knowledge graph ("X is a kind of ocean") must cite a fact
that says so, subject and type both (:func:`mistyped`); a path that only passes through both names ("X is a kind of
place. the Pacific is a kind of ocean.") carries the words, not the claim.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from assistant.answer.answering import DOES_NOT_ANSWER_TEXT, MAX_CLOSEST, chips
from assistant.answer.support import SPELLED_NUMBERS, content_words, mentions, numbers, repeats, states_cause
from tools.contracts import Evidence

SlotKind = Literal["quantity", "date", "time", "place", "cause", "kind"]

# -- quantities --------------------------------------------------------------------------------------
# The words a value of each kind is written with after its number. Single letters that are also words or other
# units ("s", "h", "in", "k") are left out: "found 3 in every 10" is no length.
_UNITS = {
    "speed": r"(?:km|m|mi|miles?|met(?:er|re)s?|kilomet(?:er|re)s?|feet|ft)\s*(?:/|per\s+|an?\s+)(?:s|sec|second|h|hr|"
             r"hour|min|minute)|mph|kph|km/h|kmh|knots?|m/s",
    "density": r"(?:g|kg|grams?|kilograms?)\s*(?:/|per\s+)(?:cm3|cm³|m3|m³|ml|l|cubic\s+\w+)",
    "temperature": r"°\s*[cfk]?|º\s*[cfk]?|degrees?(?:\s+(?:celsius|centigrade|fahrenheit|kelvin|c|f))?|celsius|"
                   r"centigrade|fahrenheit|kelvins?",
    "length": r"(?:kilo|centi|milli|micro|nano)?met(?:er|re)s?|km|cm|mm|µm|μm|nm|m|feet|foot|ft|inch(?:es)?|miles?|"
              r"yards?|light[- ]years?|astronomical\s+units?|au",
    "mass": r"(?:kilo|milli|micro)?grams?|kg|g|mg|µg|μg|mcg|tonnes?|tons?|pounds?|lbs?|ounces?|oz|daltons?|amu|"
            r"atomic\s+mass\s+units?",
    "time": r"(?:nano|micro|milli)?seconds?|secs?|ms|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|yrs?|"
            r"decades?|centur(?:y|ies)|millenni(?:um|a)",
    "volume": r"(?:milli|centi|deci)?lit(?:er|re)s?|ml|cl|dl|cubic\s+\w+|cm3|cm³|m3|m³|gallons?|quarts?|pints?|cups?",
    "area": r"square\s+\w+|km2|km²|m2|m²|cm2|cm²|acres?|hectares?",
    "pressure": r"(?:kilo|mega|hecto)?pascals?|kpa|mpa|hpa|pa|atm|atmospheres?|bars?|mbar|mmhg|psi|torr",
    "energy": r"(?:kilo)?joules?|kj|(?:kilo)?calories?|kcal|cal|kwh|ev|electron\s*volts?",
    "percentage": r"%|percent|per\s+cent",
}
_NUMBER_WORD_VALUES = SPELLED_NUMBERS  # "eight" -> "8"
_NUMBER_WORDS = re.compile(
    r"\b(?:" + "|".join(_NUMBER_WORD_VALUES) + r"|half|twice|once|single|double|triple|daily|weekly|monthly|yearly|"
    r"annually|hourly)\b", re.I)
_NUM = r"(?<![A-Za-z0-9.,])(?P<num>\d+(?:[.,]\d+)*|" + "|".join(_NUMBER_WORD_VALUES) + r")"
_VALUE_WITH_UNIT = {family: re.compile(_NUM + r"\s*-?\s*(?:" + unit + r")(?![a-z])", re.I)
                    for family, unit in _UNITS.items()}
_DIGITS = re.compile(r"(?<![A-Za-z0-9.,])\d+(?:[.,]\d+)*")

# What a quantity noun is measured in; a noun with no family here is any number ("dose", "population", "age").
_QUANTITY_UNITS = {
    "temperature": ("temperature",), "melting point": ("temperature",), "boiling point": ("temperature",),
    "freezing point": ("temperature",), "melting temperature": ("temperature",),
    "boiling temperature": ("temperature",), "height": ("length",), "length": ("length",), "distance": ("length",),
    "depth": ("length",), "width": ("length",), "diameter": ("length",), "radius": ("length",),
    "wavelength": ("length",), "elevation": ("length",), "altitude": ("length",), "weight": ("mass",),
    "mass": ("mass",), "atomic mass": ("mass",), "atomic weight": ("mass",), "half-life": ("time",),
    "half life": ("time",), "duration": ("time",), "lifespan": ("time",), "life span": ("time",),
    "life expectancy": ("time",), "gestation period": ("time",), "incubation period": ("time",),
    "speed": ("speed",), "velocity": ("speed",), "volume": ("volume",), "area": ("area",), "surface area": ("area",),
    "density": ("density",), "pressure": ("pressure",), "percentage": ("percentage",), "percent": ("percentage",),
    "length or duration": ("length", "time"),
}
_QUANTITY_NOUNS = frozenset(_QUANTITY_UNITS) | frozenset(
    "number amount size dose dosage year duration rate count value frequency age population price cost".split())
_HOW = re.compile(r"^\s*(?:and\s+|so\s+)?how\s+(many|much|old|long|tall|far|high|big|large|heavy|deep|wide|often|fast|"
                  r"hot|cold)\b", re.I)
_HOW_NOUN = {"many": "number", "much": "amount", "old": "age", "long": "length or duration", "tall": "height",
             "far": "distance", "high": "height", "big": "size", "large": "size", "heavy": "weight", "deep": "depth",
             "wide": "width", "often": "frequency", "fast": "speed", "hot": "temperature", "cold": "temperature"}
_WHAT_PHRASE = re.compile(
    r"^\s*(?:and\s+|so\s+)?(?:at|in|to|by)?\s*(?:what|which)(?:'s|\s+is|\s+was|\s+are|\s+were)?\s+"
    r"(?:the\s+|its\s+|their\s+|his\s+|her\s+)?(?:approximate\s+|average\s+|typical\s+|normal\s+|exact\s+)?"
    r"(?P<phrase>[a-z][a-z-]*(?:\s+[a-z][a-z-]*){0,2})", re.I)


# A value the evidence says is not known answers the question as well as a number: "The prevalence of myofibrillar
# myopathy is unknown" (MedQuAD: 227 of its 1,117 "How many people are affected by …?" answers state no number). So
# does a word of rarity, for a question on how many people have something ("ADVIRC is considered a rare disease").
_UNKNOWN = re.compile(r"\bunknown\b|\bnot (?:yet )?(?:known|been (?:determined|established|measured))\b", re.I)
_RARITY = re.compile(r"\b(?:rare|rarely|uncommon|common|commonly|frequent|prevalent)\b", re.I)
_ASKS_PREVALENCE = re.compile(r"^\s*(?:and\s+|so\s+)?how\s+(?:many|common)\s+(?:people|persons|individuals|patients|"
                              r"children|adults|men|women|newborns|babies|infants|cases|americans)\b|"
                              r"^\s*(?:and\s+|so\s+)?how\s+common\b", re.I)


def asks_for_quantity(question: str) -> str | None:
    """What quantity the question asks for ("temperature", "melting point", "number" for "how many"), or None.

    Read from the question's opening words only: "how many/much/tall/…" or "what/which (is the) <quantity noun>",
    a noun of one or two words ("melting point", "half-life").
    """
    m = _HOW.match(question or "")
    if m:
        return _HOW_NOUN[m.group(1).lower()]
    m = _WHAT_PHRASE.match(question or "")
    if not m:
        return None
    words = m.group("phrase").lower().split()
    for n in (2, 1):
        phrase = " ".join(words[:n])
        if len(words) >= n and phrase in _QUANTITY_NOUNS:
            return phrase
    return None


def states_quantity(text: str) -> bool:
    """Whether ``text`` states a number, in digits or in words ("eight legs", "2.5 mg", "a dozen")."""
    return bool(_DIGITS.search(text or "") or _NUMBER_WORDS.search(text or ""))


def _number_value(raw: str) -> str:
    word = raw.lower()
    return _NUMBER_WORD_VALUES.get(word) or next(iter(numbers(raw)), raw)


def quantities(text: str, families: Sequence[str]) -> set[str]:
    """The numbers ``text`` writes with a unit of one of ``families`` ("1,064 °C" -> {"1064"} for temperature)."""
    return {_number_value(m.group("num")) for f in families for m in _VALUE_WITH_UNIT[f].finditer(text or "")}


def _plain_numbers(text: str) -> set[str]:
    """Every number ``text`` states, in digits or as a small number word ("eight" -> "8"), and words of frequency."""
    found = set(numbers(text or ""))
    for m in _NUMBER_WORDS.finditer(text or ""):
        word = m.group(0).lower()
        found.add(_NUMBER_WORD_VALUES.get(word, word))
    return found


# -- asking for a cause --------------------------------------------------------------------------------
_ASKS_CAUSE = re.compile(
    r"^\s*(?:and\s+|so\s+)?what\s+(?:(?:can|could|might|may|does|do|did|usually|commonly|typically)\s+)?"
    r"(?:causes?|caused|is causing|leads? to|triggers?)\b"
    r"|^\s*(?:and\s+|so\s+)?what\s+(?:is|are|was|were)\s+(?:the\s+)?(?:main\s+|usual\s+|common\s+|most common\s+|"
    r"known\s+)?(?:causes?|triggers?)\s+of\b", re.I)


def asks_for_cause(question: str) -> bool:
    """Does the question's form ask what causes something ("What causes X?", "What are the causes of X?")? "Why …?"
    is not read so: its answers are as often reasons or purposes in other words."""
    return bool(_ASKS_CAUSE.match(question or ""))


# -- dates and times -----------------------------------------------------------------------------------
_MONTHS = ("january february march april may june july august september october november december").split()
_YEAR = re.compile(r"\b(?:1\d{3}|20\d{2})s?\b|\b\d{1,4}\s*(?:bc|bce|ad|ce)\b", re.I)
_MONTH = re.compile(r"\b(?:" + "|".join(_MONTHS) + r")\b", re.I)
_CENTURY = re.compile(r"\b(?:\d{1,2}(?:st|nd|rd|th)|\w+(?:first|second|third|th))\s+century\b", re.I)
# "In what year …?", "What date …?", "When was it founded?": a calendar date is asked for.
_ASKS_DATE = re.compile(r"^\s*(?:and\s+|so\s+)?(?:(?:in|on|by)\s+)?(?:what|which)\s+(?:year|date|month|century|day)\b"
                        r"|^\s*(?:and\s+|so\s+)?when\s+(?:was|were|did|is|will)\s+[^?]*\b(?:born|founded|invented|"
                        r"discovered|built|published|approved|established|signed|released|launched|opened|died|"
                        r"elected|formed|created|introduced)\b", re.I)
_TIME_WORDS = re.compile(r"\b(?:spring|summer|autumn|fall|winter|monsoon|season|morning|afternoon|evening|night|"
                         r"midnight|noon|dawn|dusk|daytime|nighttime|sunrise|sunset|monday|tuesday|wednesday|thursday|"
                         r"friday|saturday|sunday|weekend|today|yesterday|tomorrow|ago|infancy|childhood|adolescence|"
                         r"adulthood|puberty|pregnancy|birth)\b", re.I)
_TIME_CLAUSE = re.compile(r"\b(?:during|after|before|until|while|when|whenever|once|since|at\s+the\s+(?:start|end|"
                          r"beginning|time)\s+of)\s+(?:(?:the|a|an|its|their|his|her|it|they)\s+)?"
                          r"(?P<w>[A-Za-z][\w'-]*)", re.I)


def dates(text: str) -> set[str]:
    """The years, months and centuries ``text`` names, lower-cased ("in 1989" -> {"1989"})."""
    return {m.group(0).lower().rstrip("s") if m.re is _YEAR else m.group(0).lower()
            for pattern in (_YEAR, _MONTH, _CENTURY) for m in pattern.finditer(text or "")}


def times(text: str) -> set[str]:
    """What ``text`` says of a time: its dates, its words of time ("winter", "night"), and the first word of a
    clause of time ("during the adult stage" -> "adult")."""
    found = dates(text) | {m.group(0).lower() for m in _TIME_WORDS.finditer(text or "")}
    found |= {_root(m.group("w")) for m in _TIME_CLAUSE.finditer(text or "") if content_words(m.group("w"))}
    return found


# -- places ----------------------------------------------------------------------------------------------
_PLACE = re.compile(r"\b(?:in|at|on|from|inside|within|near|under|beneath|below|above|throughout|around|along|across|"
                    r"into|onto|among|between|beside|behind|outside|underground|underwater)\s+"
                    r"(?:(?:the|a|an|its|their|his|her|most|some|many|all|every|each|both)\s+)?"
                    r"(?!(?:order|addition|general|particular|response|fact|turn|contrast|case|terms|favou?r|total|"
                    r"part|which|what|time|common|short|brief|location|place)\b)(?P<w>[A-Za-z][\w'-]*)", re.I)
# Relation templates of KG facts that say where something is (kb.kg_loaders: ConceptNet, Hetionet, the DDB).
PLACE_TEMPLATES = frozenset({"is at location of", "is located near", "is part of", "is the location of the action",
                             "localizes to"})
CAUSE_TEMPLATES = frozenset({"causes", "may cause", "is a risk factor for", "is a vector for"})
# Templates that type their head: what "X is a kind of T" may cite.
TYPE_TEMPLATES = frozenset({"is a kind of", "is an instance of", "is a subtype of", "belongs to the category of",
                            "inherits from"})


# Verbs after which "on" places nothing: "depends on water", "based on", "feeds on insects" is no place either.
_NOT_PLACING_ON = re.compile(r"(?:depend\w*|based|focus\w*|rel(?:y|ies|ied|ying)|effects?|impacts?|influences?|act\w*|"
                             r"works?|report\w*|feed\w*|prey\w*|agree\w*|comment\w*|insist\w*|rest\w*|turn\w*)\s+$",
                             re.I)


def places(text: str) -> set[str]:
    """The words a place phrase of ``text`` names, as roots ("found in the leaves" -> {"leave"})."""
    text = text or ""
    return {_root(m.group("w")) for m in _PLACE.finditer(text) if content_words(m.group("w"))
            and not (m.group(0)[:3].lower() == "on " and _NOT_PLACING_ON.search(text[:m.start()]))}


def _root(word: str) -> str:
    w = word.lower().strip("'’-")
    return (w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")) else w)[:5]


# -- the slot ----------------------------------------------------------------------------------------------
def with_article(word: str) -> str:
    """The word with its indefinite article: "a temperature", "an age"."""
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word


@dataclass(frozen=True)
class AskedSlot:
    """What a question asks for: its kind and, as the reply names it, what (``"melting point"``, ``"drug"``)."""

    kind: SlotKind
    what: str
    units: tuple[str, ...] = ()  # a quantity's unit families; empty: any number will do
    prevalence: bool = False  # "How many people are affected by X?": "rare", "common" answer it too

    @property
    def thing(self) -> str:
        """What a statement must state, as the retry asks for it: "number", "cause", "place", "date", …"""
        return {"quantity": "number", "date": "date", "time": "time", "place": "place", "cause": "cause"}.get(
            self.kind, self.what)

    # what the reply says is missing
    def missing(self, plural: bool = False) -> str:
        """What the evidence (or statements, ``plural``) does not give, after "it mentions X but …": "gives no
        melting point", "does not say where"."""
        verb = {"place": ("does not say where", "do not say where"), "time": ("does not say when", "do not say when"),
                "cause": ("states no cause", "state no cause"), "kind": (f"names no {self.what}",
                                                                         f"name no {self.what}")}
        return verb.get(self.kind, (f"gives no {self.what}", f"give no {self.what}"))[plural]

    def none_stated(self) -> str:
        """What no statement of an answer does: "gives a temperature", "says where"."""
        return {"place": "says where", "time": "says when", "cause": "states a cause",
                "kind": f"names {with_article(self.what)}"}.get(self.kind, f"gives {with_article(self.what)}")

    def none_given(self) -> str:
        """The same for evidence that mentions no subject: "none of it gives a temperature"."""
        return "none of it " + {"place": "says where", "time": "says when", "cause": "states a cause",
                                "kind": f"names {with_article(self.what)}"}.get(self.kind, f"gives {with_article(self.what)}")

    # values
    def values(self, text: str) -> set[str]:
        """The values of this slot's type that ``text`` states (numbers, dates, place words …)."""
        if self.kind == "quantity":
            found = quantities(text, self.units) if self.units else _plain_numbers(text)
            found |= {m.group(0).lower() for m in _UNKNOWN.finditer(text or "")}
            if self.prevalence:
                found |= {m.group(0).lower() for m in _RARITY.finditer(text or "")}
            return found
        if self.kind == "date":
            return dates(text)
        if self.kind == "time":
            return times(text)
        if self.kind == "place":
            return places(text)
        if self.kind == "cause":
            return {"cause"} if states_cause(text) else set()
        return set()

    def _fact_fills(self, ev: Evidence, statement: str | None, turn_kinds: set[str]) -> bool | None:
        """Whether a KG item fills the slot by its relation or its ends' kinds (and, with ``statement``, whether
        the statement names that fact's ends); None when its ends are untyped for a kind slot (not judged)."""
        triples = [t for t in ev.meta.get("triples") or [] if len(t) == 3]
        if self.kind == "kind":
            kinds = ev.meta.get("kinds") or []
            if len(kinds) != 2 or len(triples) != 1:
                return None
            asked = _node_kinds(self.what, turn_kinds)
            if not asked:
                return None
            ends = [end for end, kind in zip((triples[0][0], triples[0][2]), kinds) if kind in asked]
            return bool(ends) and (statement is None or any(mentions(end, [statement]) for end in ends))
        templates = PLACE_TEMPLATES if self.kind == "place" else CAUSE_TEMPLATES if self.kind == "cause" else set()
        return any(tpl.lower() in templates and (statement is None or (_names(statement, head) and
                                                                      _names(statement, tail)))
                   for head, tpl, tail in triples)

    def could_fill(self, ev: Evidence, text: str, subjects: Sequence[str] = (), turn_kinds: set[str] = frozenset()
                   ) -> bool:
        """Could this shown item answer the question: it states a value of the type and names a subject (when the
        turn has any), or it is a KG fact of a relation (or node kind) that touches the slot."""
        if self.kind == "kind":  # a sentence's names and an untyped fact's ends are not judged
            judged = self._fact_fills(ev, None, turn_kinds) if ev.kind == "path" else None
            return True if judged is None else judged
        if ev.kind == "path" and self._fact_fills(ev, None, turn_kinds):
            return True
        named = not [s for s in subjects if content_words(s)] or any(mentions(s, [text]) for s in subjects)
        return bool(self.values(text)) and named

    def fills(self, statement: str, cited: Sequence[Evidence], texts: dict[str, str],
              turn_kinds: set[str] = frozenset()) -> bool:
        """Does ``statement`` fill the slot with a value its ``cited`` evidence holds (``texts``: id -> the text it
        was shown as)?"""
        if self.kind == "kind":
            judged = [self._fact_fills(ev, statement, turn_kinds) for ev in cited if ev.kind == "path"]
            judged = [j for j in judged if j is not None]
            return not judged or any(judged)
        if any(ev.kind == "path" and self._fact_fills(ev, statement, turn_kinds) for ev in cited):
            return True
        said = self.values(statement)
        held = set().union(*(self.values(texts.get(ev.id, ev.text)) for ev in cited)) if cited else set()
        return bool(said & held)


def asked_slot(question: str, answer_type: Sequence[str] = (), relation: str = "") -> AskedSlot | None:
    """The slot the question's form asks to fill, or None (module docstring). ``answer_type`` is the intent's
    (``tools.intent.answer_type_of``: "drug", "place", "date", "number", "person", "yes/no"); the relation, where the
    question asks for what causes something, makes it a cause."""
    quantity = asks_for_quantity(question)
    if quantity == "year" or _ASKS_DATE.match(question or ""):
        return AskedSlot("date", "year" if quantity == "year" else "date")
    if quantity:
        return AskedSlot("quantity", quantity, _QUANTITY_UNITS.get(quantity, ()),
                         prevalence=bool(_ASKS_PREVALENCE.match(question or "")))
    if asks_for_cause(question):
        return AskedSlot("cause", "cause")
    kinds = [t for t in answer_type if t]
    if "place" in kinds:
        return AskedSlot("place", "place")
    if "date" in kinds:
        return AskedSlot("time", "time")
    noun = next((t for t in kinds if t not in ("person", "number", "yes/no", "place", "date")), "")
    if noun and _KG_NOUN.match(noun):
        return AskedSlot("kind", noun)
    return None


# The nouns a which-question asks a KG node kind with (tools.kg_paths.kinds_asked maps them to the graph's kinds).
_KG_NOUN = re.compile(r"^(?:drug|medication|medicine|treatment|therapy|compound|gene|protein|disease|condition|"
                      r"disorder|illness|symptom|sign|side effect|anatomy|organ|tissue|pathway)s?$", re.I)


def _node_kinds(noun: str, turn_kinds: set[str]) -> set[str]:
    from tools.kg_paths import kinds_asked  # the tool's own mapping ("drug" -> Compound), loaded with the tools

    return kinds_asked(noun, turn_kinds)


def turn_kinds(items: Sequence[Evidence]) -> set[str]:
    """The node kinds the turn's KG facts join (Hetionet's "Compound", "Disease" …)."""
    return {k for ev in items if ev.kind == "path" for k in ev.meta.get("kinds") or [] if k}


def _names(statement: str, name: str) -> bool:
    """Does the statement name ``name`` (some content word of it, by stem; a name without one counts)?"""
    return mentions(name, [statement])


# -- template filler ----------------------------------------------------------------------------------------
def is_filler(ev: Evidence) -> bool:
    """A KG fact or path through a template's blank ("something is at location of gold. something is at location
    of mountain."): it joins any two names and says nothing of either, so it is never evidence for an answer.
    ``tools.kg_paths`` registers none; this keeps out any that reach a turn otherwise."""
    if ev.kind != "path":
        return False
    from tools.kg_paths import is_placeholder  # ConceptNet's blanks: "something", "someone", "this" …

    return any(is_placeholder(str(end)) for t in ev.meta.get("triples") or [] if len(t) == 3 for end in (t[0], t[2]))


# -- typed facts ------------------------------------------------------------------------------------------
_KIND_OF = re.compile(r"^\s*(?:an?\s+|the\s+)?(?P<s>.+?)\s+(?:is|are|was|were)\s+(?:also\s+)?(?:an?\s+|one\s+)?"
                      r"(?:kind|type|sort|form|instance|example|subtype|category)s?\s+of\s+(?:an?\s+|the\s+)?"
                      r"(?P<t>.+?)[\s.!]*$", re.I)
_IS_AN = re.compile(r"^\s*(?:an?\s+|the\s+)?(?P<s>[^,;:]+?)\s+(?:is|are|was|were)\s+(?:also\s+)?an?\s+"
                    r"(?P<t>[^,;:]+?)[\s.!]*$", re.I)


def type_claim(statement: str) -> tuple[str, str] | None:
    """(subject, type) when the statement types its subject ("Everest is a kind of mountain"), else None."""
    m = _KIND_OF.match(statement) or _IS_AN.match(statement)
    return (m.group("s"), m.group("t")) if m else None


def _same(a: str, b: str) -> bool:
    return repeats(a, b) or " ".join(a.lower().split()) == " ".join(b.lower().split())


def kg_types(subject: str, items: Sequence[Evidence]) -> list[str]:
    """The types ``items`` (KG facts and paths) give ``subject`` directly: the tails of its is-a triples."""
    return list(dict.fromkeys(t[2] for ev in items if ev.kind == "path" for t in ev.meta.get("triples") or []
                              if len(t) == 3 and t[1].lower() in TYPE_TEMPLATES and _same(t[0], subject)))


def mistyped(statement: str, cited: Sequence[Evidence], shown: Sequence[Evidence]) -> str:
    """Why a statement that types its subject from the knowledge graph is not carried by what it cites, or "".

    Judged only when every cited item is a KG fact or path (a sentence's definition is the support check's). The
    claim "S is a kind of T" needs a cited triple (S, is a kind of, T); the reason names the types the turn's facts
    do give S ("mountain, place"), which the claim contradicts.
    """
    claim = type_claim(statement)
    if claim is None or not cited or any(ev.kind != "path" for ev in cited):
        return ""
    subject, kind = claim
    if any(_same(t, kind) for t in kg_types(subject, cited)):
        return ""
    known = [t for t in kg_types(subject, shown) if not _same(t, kind)]
    # The wrong type is not repeated: the reply must not show it, even as what was left out.
    reason = f"no fact it cites gives {subject} the type it states"
    return reason + (f"; the knowledge graph types {subject} as {', '.join(known)}" if known else "")


# -- what the evidence does say ---------------------------------------------------------------------------
_DEFINING_TEMPLATES = TYPE_TEMPLATES | {"is defined as"}
_SENTENCE_DEFINES = re.compile(r"^\s*(?:an?\s+|the\s+)?(?P<s>[^,;:]{1,60}?)\s+(?:is|are|was|were)\s+(?:an?|the|one|any|"
                               r"defined\s+as|called|when)\b|^\s*(?:an?\s+|the\s+)?(?P<s2>[^,;:]{1,60}?)\s+(?:means|"
                               r"refers?\s+to)\b", re.I)


_TOKEN = re.compile(r"[a-z0-9][a-z0-9'’\-]*")


def _whole_words(text: str) -> list[str]:
    """Lower-case words, a possessive or plural "s" off ("Addison's" and "Addisons" -> "addison"); digits kept, so
    "carbon-14" is not "carbon"."""
    out = []
    for w in _TOKEN.findall((text or "").lower()):
        w = re.sub(r"['’]s?$", "", w)
        out.append(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")) else w)
    return out


def names_in_full(subject: str, text: str) -> bool:
    """Does ``text`` write every word of ``subject`` whole? Stricter than the subject checks' stems
    (:func:`assistant.answer.support.mentions`), which take "Mountains" for Mount Everest and "carbon dioxide" for
    carbon-14: what an abstention says the evidence mentions must be so."""
    own = set(_whole_words(subject)) - {"the", "a", "an", "of"}
    return bool(own) and own <= set(_whole_words(text))


def _is_term(phrase: str, subject: str) -> bool:
    """Is ``phrase`` (a definition's subject, a fact's head) the subject itself, give or take a word?"""
    words = [w for w in _whole_words(phrase) if w not in ("the", "a", "an")]
    return names_in_full(subject, phrase) and len(words) <= len(_whole_words(subject)) + 1


def defines(ev: Evidence, text: str, subject: str) -> bool:
    """Does the item define or type ``subject``: a KG is-a or defined-as fact of it, or a sentence opening
    "<subject> is a …"?"""
    if ev.kind == "path":
        return any(len(t) == 3 and t[1].lower() in _DEFINING_TEMPLATES and _is_term(t[0], subject)
                   for t in ev.meta.get("triples") or [])
    m = _SENTENCE_DEFINES.match(text or "")
    return bool(m) and _is_term(m.group("s") or m.group("s2"), subject)


def unfilled_reply(slot: AskedSlot | None, items: dict[str, Evidence], texts: dict[str, str],
                   subjects: Sequence[str], first: Sequence[str] = (), stating: Sequence[str] = ()) -> str:
    """The abstention when no statement fills the slot: what the evidence does say of the subject, cited, and what
    it does not ("… it defines gold [P1] but gives no melting point."). ``items``/``texts``: the evidence shown (id ->
    Evidence, id -> its text as shown); ``first``: ids to name first (what the model's answer cited). With no
    subject the evidence names, the closest items are cited instead.

    ``stating``: shown items that could fill the slot, which the answer's statements did not use (the model missed
    them twice): then the evidence is not said to lack it, and those items are cited for the reader."""
    if slot is not None and stating:
        return (f"I could not answer this from the evidence: no statement I could check {slot.none_stated()}. "
                f"The evidence that may: {chips(list(stating)[:MAX_CLOSEST])}.")
    order = [i for i in dict.fromkeys([*first, *items]) if i in items]
    def names(subject: str, i: str) -> bool:
        return names_in_full(subject, texts.get(i, ""))

    subject = next((s for s in subjects if content_words(s) and any(names(s, i) for i in order)), None)
    if subject is None:
        lack = slot.none_given() if slot else "none of it answers the question"
        return f"{DOES_NOT_ANSWER_TEXT[:-1]}: {lack}. The closest evidence: {chips(order[:MAX_CLOSEST])}."
    defining = [i for i in order if defines(items[i], texts.get(i, ""), subject)][:2]
    mentioning = [i for i in order if i not in defining and names(subject, i)]
    mentioning = mentioning[:MAX_CLOSEST + 1 - len(defining)]
    parts = ([f"defines {subject} {chips(defining)}"] if defining else []) + (
        [f"mentions {'it in' if defining else subject} {chips(mentioning)}"] if mentioning else [])
    lack = slot.missing() if slot else "does not answer the question"
    return f"{DOES_NOT_ANSWER_TEXT[:-1]}: it {' and '.join(parts)}{',' if len(parts) > 1 else ''} but {lack}."
