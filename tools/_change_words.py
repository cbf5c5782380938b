"""How a claim or question says a value changed ("rose", "fell", "did cases fall?"), and which columns of a table
hold a change ("Change since 2019 (pp)", "% change", "Δ"): shared by the rules that read a change between two year
columns (tools._claim_changes) and from a change column (tools._claim_change_column), and by the vote's check that
a comparison with zero is the claim's own (tools._claim_grounding). A leaf: it imports no rule module.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable
from tools.lang.lexicon import change_pattern

# The verb alone, where no "from … to" names the two things: past forms only, since "growth", "rise" or "increase"
# may be nouns ("glo mobile have 11000 growth 52", a TabFact statement); "rose by 5" or "to 27" also states an
# amount, which a comparison of the two columns does not check.
# A price's change in its own words: "Did any drug get cheaper?" (found as a new user: refuted by a program that
# compared one drug's 2024 price with another's, over a table with Price 2023 and Price 2024)
_BECAME = r"(?:get|gets|got|gotten|become|becomes|became|grew|grown)\s+"
_BARE_UP = (change_pattern("up", "past", "participle") + "|" + _BECAME
            + r"(?:more\s+expensive|dearer|costlier|pricier)")
_BARE_DOWN = change_pattern("down", "past", "participle") + "|" + _BECAME + r"cheaper"
BARE_CHANGE = re.compile(r"\b(?:(?P<up>" + _BARE_UP + r")|(?P<down>" + _BARE_DOWN + r"))\b(?!\s+(?:by|to)\s+\d)",
                         re.I)
# A yes/no question's verb after its auxiliary: "Did cases fall in Ashford?"
ASKED_CHANGE = re.compile(
    r"^\s*(?:is\s+it\s+true\s+that\s+)?(?:did|does|do|has|have)\b[^?]*?\b(?:(?P<up>"
    + change_pattern("up", "base", "participle") + r")|(?P<down>" + change_pattern("down", "base", "participle")
    + r"))\b(?!\s+(?:by|to)\s+\d)", re.I)
# "did not fall", "never rose": the verb negated, which these rules leave as written
NEGATED_BEFORE = re.compile(r"\b(?:not|never|no|n't)\s+(?:\w+\s+)?$", re.I)

# A header that holds a change rather than a level: "Change since 2019 (pp)", "% change", "Difference", "Δ 2019-23",
# "Net change", "Year-on-year growth (%)". Not "Exchange rate" (a word, not its tail).
_CHANGE_HEADER = re.compile(r"(?:\b(?:change|changes|difference|diff|delta|growth)\b|Δ)", re.I)
_YEAR = re.compile(r"\b(?:1[89]|20)\d\d\b")


def stated_direction(text: str) -> tuple[str, re.Match[str]] | None:
    """(">" for a rise, "<" for a fall, the verb's match) when ``text`` says, without negating it and without an
    amount, that something rose or fell ("MRSA resistance fell since 2019", "Did cases fall in Ashford?"); else
    None."""
    m = ASKED_CHANGE.search(text) or BARE_CHANGE.search(text)
    if m is None or NEGATED_BEFORE.search(text[:m.start()]):
        return None
    return (">" if m.group("up") else "<"), m


def change_columns(typed: TypedTable) -> list[str]:
    """The identifiers of the numeric columns whose header says it holds a change, in table order."""
    return [c.ident for c in typed.columns
            if c.numeric and c.index != typed.label_col and _CHANGE_HEADER.search(c.name)]


def years_agree(header: str, text: str) -> bool:
    """Whether the years ``text`` states are the change column's own: "fell since 2019" is not read from "Change
    since 2015"; a text or header with no year agrees with any."""
    said, held = set(_YEAR.findall(text)), set(_YEAR.findall(header))
    return not said or not held or said <= held
