"""The support check in code: a statement must share its key content with the evidence it cites.

Key content is what a reader would check first: numbers (doses, counts, percentages, years) and names
(capitalised words, acronyms, drug and gene names such as "IL-6"). A statement whose number or name appears
in none of its cited items asserts something its citations do not carry; a statement with neither must
share at least one content word with them. Matching is case-insensitive and tolerant of inflection
("Parkinson's" ~ "Parkinson", "treats" ~ "treatment" by a 5-letter stem), not of different facts.

A statement that negates ("is not", "never", "no") must cite evidence that negates something too: seen as a new
user, "A plastic spoon is not a kind of utensil" passed citing "wooden <-has property- spaghetti spoon", and a
negation turns what the evidence says into its opposite. The evidence side counts any negating word ("failed
to", "lack of", "nonrenewable"), so a paraphrase of a negative finding passes.

Likewise a statement that says one thing causes another ("causes", "leads to", "due to") must cite evidence that
states some cause or mechanism ("caused by", "transmitted by", "results from"): an association is not a cause.

Deliberately lexical: a paraphrase that keeps the entities and numbers passes, a new number never does, and
neither does a statement most of whose content words (at least four) its citations lack.
Known limit: without a lexicon, a lower-case name in mid-sentence ("... and amantadine") reads as a common
word; it then only has to share some content word with its citations.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

# A number not glued to a word before it ("S1" is an id, "500mg" a dose); a trailing unit may follow.
_NUMBER = re.compile(r"(?<![A-Za-z0-9.,])\d+(?:[.,]\d+)*")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'’\-]*")
# Capitalised words that name nothing: sentence openers, discourse words, and the assistant's own vocabulary.
_NOT_NAMES = frozenset(
    "a an the this that these those it its it's they their there here he she we you i yes no not none "
    "however although also according based both but because by for from in on of to with without within "
    "while when where which who whom whose what why how if then than thus therefore so overall in "
    "evidence table row column source sources study studies patients patient results result conclusion "
    "conclusions background methods objective objectives purpose aim aims answer question data one some many "
    "most few several all each every other another".split())
_STOP = frozenset(
    "a an the of to in on at for and or is are was were be been being it its this that these those with by from "
    "as which what who whom whose when where why how do does did not no can could would should will may might "
    "has have had they them their there than then so if but into about also more most less such only other "
    "some any all each both between after before during over under evidence".split())
STEM = 5
# A statement mostly made of words its evidence lacks adds facts of its own. Seen on the chat bench: "Plants make
# their food by converting sunlight, water, and carbon dioxide into glucose through photosynthesis [S1][S3]" passed
# citing "food is a source of energy for plants" and "plants store the food they produce": no name, no number,
# and "plants" and "food" shared. Over the 536 cited statements in this machine's chat memory, the model's own
# statements add at most 2 such words (a paraphrase: "produce energy"), those three plant statements 5 to 9; the
# statements code writes (table verdicts, fact lists) are not checked here.
MIN_ADDED_WORDS = 4
MAX_ADDED_SHARE = 0.5


def _normalise_number(raw: str) -> str:
    s = raw
    if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", s):
        s = s.replace(",", "")  # thousands separators
    s = s.replace(",", ".")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s or "0"


def numbers(text: str) -> set[str]:
    return {_normalise_number(m.group(0)) for m in _NUMBER.finditer(text or "")}


# Numbers written as words, by value: "A spider has 8 legs" cites "Spiders have eight legs" correctly.
SPELLED_NUMBERS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())} | {
    "thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90",
    "hundred": "100", "thousand": "1000", "million": "1000000", "billion": "1000000000", "dozen": "12"}
_SPELLED = re.compile(r"\b(?:" + "|".join(SPELLED_NUMBERS) + r")\b", re.I)


def spelled_numbers(text: str) -> set[str]:
    """The values of the numbers ``text`` writes in words ("eight legs" -> {"8"})."""
    return {SPELLED_NUMBERS[m.group(0).lower()] for m in _SPELLED.finditer(text or "")}


def _clean(word: str) -> str:
    word = word.replace("’", "'").lower()
    return re.sub(r"'s?$", "", word).strip("-'")


def names(text: str) -> set[str]:
    """Capitalised words, acronyms and words with digits or inner hyphens, lower-cased (``"IL-6"`` -> ``"il-6"``)."""
    out = set()
    for m in _WORD.finditer(text or ""):
        word = m.group(0)
        clean = _clean(word)
        acronym = word.isupper() and len(word) > 1  # "WHO" names an organisation, "Who" opens a question
        if not clean or (clean in _NOT_NAMES and not acronym):
            continue
        if word[0].isupper() or any(ch.isdigit() for ch in word):
            out.add(clean)
    return out


def _words(text: str) -> set[str]:
    return {_clean(w) for w in _WORD.findall(text or "")} - {""}


def content_words(text: str) -> set[str]:
    return {w for w in _words(text) if w not in _STOP and len(w) > 2}


def _stems(words: set[str]) -> set[str]:
    return {w[:STEM] for w in words}


@dataclass
class Support:
    """The outcome for one statement: ``missing`` lists key content found in none of the cited items."""

    ok: bool
    missing: list[str] = field(default_factory=list)
    reason: str = ""
    names_only: bool = False  # what is missing is names alone (no number, no other words)


# A statement's negation ("not only" does not negate), and the wider set that counts as one in the evidence.
_STATED_NEGATION = re.compile(r"\b(?:not(?!\s+only\b)|no|never|none|nothing|cannot|neither|nor)\b|n[’']t\b", re.I)
_EVIDENCE_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nothing|nobody|cannot|neither|nor|without|fail\w*|lack\w*|absen\w*|unable|"
    r"unlikely|insufficient|ineffective|non\w+|un\w+able)\b|n[’']t\b", re.I)


def said_unlike(statement: str, cited_texts: list[str], stated: re.Pattern, carried: re.Pattern) -> str:
    """The statement's words that ``stated`` finds when none of ``cited_texts`` has what ``carried`` finds, else "":
    a negation or a cause the statement says and its evidence does not."""
    m = stated.search(statement)
    if not m or any(carried.search(t) for t in cited_texts):
        return ""
    return m.group(0)


# A statement that says one thing causes another must cite evidence that states some cause or mechanism: found as
# a new user, "What causes malaria?" was answered "Falciparum malaria in endemic areas causes malaria", verified on
# the fragment "falciparum malaria in endemic areas." and graph facts on where malaria localizes. An association
# ("malaria associates with ICAM1") is not a cause. The evidence side is wider, so a paraphrase of a stated
# mechanism passes ("transmitted by", "results from", "induced").
_STATED_CAUSE = re.compile(r"\b(?:caus(?:e|es|ed|ing)|leads? to|led to|results? (?:in|from)|resulted (?:in|from)|"
                           r"responsible for|due to|because of|triggers?|triggered by)\b", re.I)
_EVIDENCE_CAUSE = re.compile(
    r"\b(?:caus\w*|lead(?:s|ing)? to|led to|result\w* (?:in|from|of)|responsib\w*|due to|because|owing to|trigger\w*|"
    r"induc\w*|produc\w*|transmit\w*|spread\w*|infect\w*|contribut\w*|etiolog\w*|aetiolog\w*|"
    r"attributab\w*|mediat\w*|by (?:a|an|the)?\s*(?:virus|bacteri\w*|parasite\w*|fung\w*|mutation\w*|deficien\w*))"
    r"\b", re.I)



def check_statement(statement: str, cited_texts: list[str], subjects: Sequence[str] = (),
                    asked_object: str = "") -> Support:
    """Does ``statement`` share its key content with ``cited_texts`` (the items it cites, verbalised)?

    ``subjects``: what the turn asks about. A statement that names a subject of two or more words in full must
    cite evidence that names it too, lower-case or not: seen as a new user, "An example of a fossil fuel is turning
    plant material into fuel" passed citing "An example of creating an alternative fuel is turning plant material
    into fuel". Over this machine's 171 stored model statements it fired on that one alone.

    ``asked_object``: what the question asks its relation of (:func:`relation_object`: "rickets" in "Which vitamin
    deficiency causes rickets?"). A statement that names it must cite evidence that names some word of it, even a
    one-word one: "Vitamin D deficiency causes rickets [S5]" was verified citing a sentence on vitamin D deficiency
    in the elderly that never mentions rickets (found as a new user).
    """
    evidence = " \n ".join(cited_texts)
    ev_numbers = numbers(evidence) | spelled_numbers(evidence)
    ev_words = _words(evidence)
    ev_stems = _stems(ev_words)
    missing_numbers = sorted(n for n in numbers(statement) if n not in ev_numbers)
    missing_names = []
    for name in sorted(names(statement)):
        parts = [p for p in re.split(r"[-']", name) if p] if name not in ev_words else []
        found = name in ev_words or name[:STEM] in ev_stems or (parts and all(
            p in ev_words or p[:STEM] in ev_stems or p.isdigit() and p in ev_numbers for p in parts))
        if not found:
            missing_names.append(name)
    stated_roots, ev_roots = _roots(_words(statement)), _roots(ev_words)
    for subject in subjects:
        words = _roots(content_words(subject))
        if len(words) >= 2 and words <= stated_roots and not words <= ev_roots:
            missing_names.append(subject.lower())
    asked = _roots(content_words(asked_object))
    if asked and asked <= stated_roots and not asked & ev_roots and asked_object.lower() not in missing_names:
        missing_names.append(asked_object.lower())
    if missing_numbers or missing_names:
        what = []
        if missing_numbers:
            what.append("numbers " + ", ".join(missing_numbers))
        if missing_names:
            what.append("names " + ", ".join(missing_names))
        return Support(ok=False, missing=missing_numbers + missing_names,
                       reason=f"{' and '.join(what)} not in the cited evidence", names_only=not missing_numbers)
    own = content_words(statement)
    ev_content = _stems(content_words(evidence))
    if own and not (_stems(own) & ev_content):
        return Support(ok=False, reason="it shares no content word with the cited evidence")
    added = sorted(w for w in own if w[:STEM] not in ev_content)
    if len(added) >= MIN_ADDED_WORDS and len(added) > len(own) * MAX_ADDED_SHARE:
        return Support(ok=False, missing=added,
                       reason=f"most of what it says ({', '.join(added)}) is in none of the cited evidence")
    for stated, carried, lacking in ((_STATED_NEGATION, _EVIDENCE_NEGATION, "negates anything"),
                                     (_STATED_CAUSE, _EVIDENCE_CAUSE, "states a cause")):
        said = said_unlike(statement, cited_texts, stated, carried)
        if said:
            return Support(ok=False, missing=[said],
                           reason=f"it says “{said}” and none of the cited evidence {lacking}")
    joined = joined_subject(statement, cited_texts, subjects)
    if joined:
        return Support(ok=False, missing=[joined],
                       reason=f"what it says of {joined} comes from cited evidence that does not mention {joined}")
    return Support(ok=True)


# A sentence that opens by pointing back ("The pathogen is spread by …", "It was approved in …", "In Apulia, it
# killed …": a pronoun among its first words) names its subject in a sentence before it.
POINTS_BACK = re.compile(r"^\W*(?:(?:the|this|these|those|such)\b|(?:[\w'-]+\W+){0,5}?(?:it|its|they|their|he|she|"
                         r"his|her)\b)", re.I)


def joined_subject(statement: str, cited_texts: list[str], subjects: Sequence[str]) -> str:
    """A subject the statement names whose cited items, those that name it, do not carry the statement; "" if none.

    Seen as a new user: "What are the side effects of metformin?" was answered, verified, "Metformin can cause
    nausea, vomiting, diarrhea, low blood pressure … [S5][P1][P6]": the symptoms came from S5, a list of the
    symptoms of Addison's disease, and "Metformin" from two KG paths through genes it binds. Each word was in some
    cited item, and no item said that metformin causes any of it. The items that name the subject must carry the
    statement on their own (names, numbers and content words, as above). An item that opens by pointing back ("The
    pathogen is spread by …", cited with the sentence before it that names Xylella fastidiosa) may be about the
    subject, and counts with them.
    """
    if len(cited_texts) < 2:
        return ""
    for subject in subjects:
        if not content_words(subject) or not mentions(subject, [statement]):
            continue
        naming = [t for t in cited_texts if mentions(subject, [t]) or POINTS_BACK.match(t)]
        if naming and len(naming) < len(cited_texts) and not check_statement(statement, naming).ok:
            return subject
    return ""


# -- the subject check ----------------------------------------------------------------------------------
# Support is not relevance: "Who is at risk?" (of glaucoma) came back verified with "something is at location of
# risk", a ConceptNet fact that supports its statement word for word and says nothing about glaucoma. An answer
# about a subject must cite evidence that names it.
def mentions(name: str, texts: list[str]) -> bool:
    """Do ``texts`` name ``name``: does one of its content words appear in them (5-letter stems)?

    Lenient on purpose ("lung cancer" is named by "damage to the lungs"): it only catches evidence that shares
    no word at all with the subject. A name without content words ("it") counts as named.
    """
    own = _roots(content_words(name))
    return not own or bool(own & _roots(content_words(" \n ".join(texts))))


def repeats(name: str, other: str) -> bool:
    """Does ``name`` say no more than ``other`` or the reverse ("cold" and "colds", "pressure" and "blood
    pressure"), word stems compared?"""
    a, b = _roots(content_words(name)), _roots(content_words(other))
    return bool(a) and bool(b) and (a <= b or b <= a)


def word_share(statement: str, text: str) -> float:
    """The share of the statement's content words (as 5-letter stems) that ``text`` has; 1.0 when it has none."""
    own = _roots(content_words(statement))
    return len(own & _roots(content_words(text))) / len(own) if own else 1.0


def _root(word: str) -> str:
    """The 5-letter stem after a plural "s" ("lungs" ~ "lung", which the plain stem keeps apart). A word ending
    in "us", "is" or "ss" is singular ("fetus", "sepsis", "stress"): cut to "fetu", "fetus" would not match the
    "fetuses" of the same abstract's title (seen: a PubMedQA verdict withheld for it)."""
    plural = len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))
    return (word[:-1] if plural else word)[:STEM]


def _roots(words: set[str]) -> set[str]:
    return {_root(w) for w in words}


def relation_object(question: str, relation: str) -> str:
    """What the question asks its relation of: the words after the relation's last word in the question
    ("Does pramipexole cause nausea?" with the relation "causes" -> "nausea"); "" when the question does not use
    the relation's words or nothing with content follows them.

    The intent model names the subject and the relation but may leave out the object (seen: entities
    ["pramipexole"], relation "causes"), and a verdict read from evidence that never mentions the object ("Yes:
    none of it negates the finding", from three facts about a receptor pramipexole binds) answers nothing.
    """
    rel = _roots(content_words(relation))
    tokens = _WORD.findall(question or "")
    last = max((i for i, t in enumerate(tokens) if any(_same_root(a, b) for a in _roots(content_words(t))
                                                       for b in rel)), default=None)
    if last is None:
        return ""
    rest = tokens[last + 1:]
    while rest and not content_words(rest[0]):  # "the risk of lung cancer": the object starts at "lung"
        rest = rest[1:]
    return " ".join(rest)


def _same_root(a: str, b: str) -> bool:
    """One 5-letter root the start of the other ("play" and "playe" from "played"), four letters at least."""
    return min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a))


def unnamed_subjects(subjects: list[str], texts: list[str], shown: list[str] | None = None) -> list[str]:
    """``subjects`` when ``texts`` name none of them (the evidence is about something else), else [].

    With ``shown`` (all the items the answer could cite), ``texts`` also count as about a subject when they
    share a two-word phrase with a shown item that names it: the follow-up "Why is it renewable?" (it: energy)
    cited "A renewable resource can be replaced", which the shown "solar energy is a renewable resource" links
    to energy. One shared word is not enough: "risk" links any two sentences about risk.
    """
    real = [s for s in subjects if content_words(s)]
    if not real or any(mentions(s, texts) for s in real):
        return []
    naming = [t for t in shown or [] if any(mentions(s, [t]) for s in real)]
    if naming and _phrases(texts) & _phrases(naming):
        return []
    return real


def off_subject(statements: list[tuple[str, list[str]]], subjects: list[str], shown: list[str]) -> list[int]:
    """Indexes of the statements about none of ``subjects`` when some other statement is about one, else [].

    A statement is about a subject when its own words or its cited texts name it (as :func:`unnamed_subjects`
    reads them, ``shown`` linking by a shared phrase). Support is not relevance, statement by statement too:
    an answer on glaucoma risk padded with a true, well-cited sentence on cataract surgery. When no statement
    is about a subject, the answer as a whole is off the question, which the caller says instead.
    """
    off = [i for i, (text, cited) in enumerate(statements) if unnamed_subjects(subjects, [text, *cited], shown=shown)]
    return off if len(off) < len(statements) else []


def _phrases(texts: list[str]) -> set[tuple[str, str]]:
    """Adjacent pairs of content words (no stop word between them) in each text, as stems: "renewable resource"."""
    out: set[tuple[str, str]] = set()
    for text in texts:
        tokens = [_clean(w) for w in _WORD.findall(text or "")]
        stems = [None if (t in _STOP or len(t) < 3) else _root(t) for t in tokens]
        out |= {(a, b) for a, b in zip(stems, stems[1:]) if a and b}
    return out


# -- stated causes -----------------------------------------------------------------------------------
# What a question asks for, and whether a statement gives it, is assistant.answer.slots's.
def states_cause(text: str) -> bool:
    """Whether ``text`` states a cause or mechanism in any words ("caused by", "transmitted by", "results from")."""
    return bool(_EVIDENCE_CAUSE.search(text or ""))
