""""And of X?" / "What about X?": the previous question, asked again of X.

Seen on the chat bench: "What is the function of the mitochondria?" then "And of the ribosomes?" was searched
as "And of the ribosomes? (regarding mitochondria, ribosomes)", which asks nothing, and came back with genes that
"participate in" ribosomes; "What about coal?" after "Why is wind renewable?" became "(regarding coal, wind)".
The short form means the last question with its one subject swapped: "What is the function of the ribosomes?",
"Why is coal renewable?".

Only when the swap is plain: the earlier question names exactly one of its entities, and the new thing is a short
noun phrase with no pronoun ("What about it?" and "a plastic one" are other rules' business).
"""

from __future__ import annotations

import re

from tools.lang.lexicon import PRONOUNS

_SWAP_FORMS = (
    re.compile(r"^\s*(?:(?:and|so|ok(?:ay)?|now)[\s,]+)?(?:what|how)\s+about\s+(?P<x>.+?)\s*[?.!]*\s*$", re.I),
    re.compile(r"^\s*and\s+(?:of|for|about)\s+(?P<x>.+?)\s*[?.!]*\s*$", re.I),
)
# "and in 2011?", "what about after 2015?", "what about in children?": a new condition, not a new subject.
_CONDITION = re.compile(r"^(?:in|on|at|after|before|during|since|until|with|without|among|under|over|by|from|to)\b"
                        r"|\d", re.I)
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.I)
_NOT_A_THING = PRONOUNS | {"one", "ones", "you", "me", "us", "there", "then", "now", "else", "more", "others",
                           "other", "rest"}
MAX_WORDS = 5


def swap_target(message: str) -> str | None:
    """The new thing an "And of X?" / "What about X?" turn names ("ribosomes"), or None."""
    for form in _SWAP_FORMS:
        m = form.match(message)
        if m:
            x = _ARTICLE.sub("", m.group("x").strip()).strip()
            if _CONDITION.search(x):
                return None
            words = re.findall(r"[A-Za-z0-9'\-]+", x.lower())
            if not words or len(words) > MAX_WORDS or set(words) & _NOT_A_THING:
                return None
            return x
    return None


def swapped_question(message: str, previous: str, previous_entities: list[str]) -> tuple[str, str] | None:
    """(the previous question with its one entity replaced by the new thing, the new thing), or None."""
    x = swap_target(message)
    if not x or not previous:
        return None
    spans = []
    for e in previous_entities:
        m = re.search(r"(?<![\w'])" + re.escape(e) + r"(?![\w'])", previous, re.I) if e.strip() else None
        if m:
            spans.append(m.span())
    if len(spans) != 1:
        return None  # none, or several things asked: which one the new thing replaces is a guess
    start, end = spans[0]
    if x.lower() == previous[start:end].lower():
        return None
    return previous[:start] + x + previous[end:], x
