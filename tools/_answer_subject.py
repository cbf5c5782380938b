"""What "it" means after a question that asked for one thing: the thing the answer named.

Seen on the chat bench: "What is an example of a renewable energy source?" was answered "Wind is a renewable
energy source [S5][S6].", and the follow-up "Why is it renewable?" was searched as "(regarding energy, source)",
so the pool held solar energy and oil, and the turn abstained although the KB says "wind is a renewable
resource". The question asked for one example, so "it" is the example the answer gave.

Deliberately narrow, since a wrong reading sends the turn after the wrong thing:
- the earlier question asks for one thing ("What is an example of …?", "Name a …", "Which planet is …?");
- its answer was verified, and its first statement opens "<subject> is/are/was …" with a short subject that the
  question did not name ("A renewable energy source is wind" names the question's own words);
- the follow-up says "it" or "its" and names no subject of its own (the caller checks that).
A list reply ("The first 24 of the 28 facts …") or an answer of several things never qualifies.
"""

from __future__ import annotations

import re

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
