"""Filling prompts with entity pairs and reading pairs back out of generated lines."""

from __future__ import annotations

import re

from kb.kg_harvest import SLOTS

_ARTICLES = {"a", "an", "the"}
_EDGE_PUNCT = " \t\"'`“”‘’.,;:!?()[]{}*-"
MAX_ENTITY_CHARS = 40


def fill_spans(template: str, head: str, tail: str) -> tuple[str, list[tuple[int, int]]]:
    """The filled prompt and the character spans of head and tail in it: ``(text, [(a, b), (a, b)])``."""
    text = ""
    spans: dict[str, tuple[int, int]] = {}
    for part in re.split(r"(<ENT[01]>)", template):
        if part in SLOTS:
            value = head if part == SLOTS[0] else tail
            spans[part] = (len(text), len(text) + len(value))
            text += value
        else:
            text += part
    return text, [spans[SLOTS[0]], spans[SLOTS[1]]]


def line_pattern(template: str) -> re.Pattern:
    """A regex matching one line that fills ``template``; groups ``h`` and ``t`` are the entities.

    Whitespace between the template's words is flexible and case is ignored, so a line the model wrote
    with a different spacing or capital still counts.
    """
    regex = ""
    for part in re.split(r"(<ENT[01]>)", template):
        if part == SLOTS[0]:
            regex += r"(?P<h>[^\n]+?)"
        elif part == SLOTS[1]:
            regex += r"(?P<t>[^\n]+?)"
        elif part.split():
            regex += r"\s*" + r"\s*".join(re.escape(w) for w in part.split()) + r"\s*"
        else:
            regex += r"\s*"
    return re.compile(r"^\s*" + regex + r"\s*$", re.IGNORECASE)


# A list marker the model copied into an entity ("2. suitcase", "a. africa", "b,scuba gear"): seen in the
# 20-relation harvest, where such pairs took places in the selection and never matched CN-100K.
_LIST_MARKER = re.compile(r"^(?:\d{1,2}[.)]\s*|[a-d][.)]\s+|[a-d],(?=\S))", re.I)


def clean_entity(text: str) -> str | None:
    """A generated entity as stored: lower case, outer punctuation, a list marker and a leading article dropped;
    None if unusable."""
    text = _LIST_MARKER.sub("", text.strip(_EDGE_PUNCT))
    words = text.strip(_EDGE_PUNCT).lower().split()
    while words and words[0] in _ARTICLES:
        words = words[1:]
    value = " ".join(words).strip(_EDGE_PUNCT)
    if not value or len(value) > MAX_ENTITY_CHARS or not re.search(r"[a-z]", value) or "<" in value:
        return None
    return value


def pairs_in_lines(text: str, pattern: re.Pattern, complete_only: bool = True) -> list[tuple[tuple[str, str], int, int]]:
    """``(pair, line start, line end)`` for every line of ``text`` that fills the template.

    Without a final newline the last line may be cut mid-entity, so it is skipped (``complete_only``).
    """
    out = []
    start = 0
    lines = text.split("\n")
    for i, line in enumerate(lines):
        end = start + len(line)
        if not (complete_only and i == len(lines) - 1):
            m = pattern.match(line)
            h, t = (clean_entity(m.group("h")), clean_entity(m.group("t"))) if m else (None, None)
            if h and t and h != t:
                out.append(((h, t), start, end))
        start = end + 1
    return out


def seed_form(entity: str) -> str:
    """An entity as seeds are compared: lower case, underscores as spaces, each word without a plural 's'
    ("flotation_device" and "flotation devices" are the same seed)."""
    words = entity.lower().replace("_", " ").split()
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words)

