"""The words a yes/no verdict is read from (#14, #78): a negated finding, a question about sameness and a finding that
states it, and a text's content words. Shared by the negation rule (:mod:`assistant.answer.verdicts`) and the
learned reader (:mod:`assistant.answer.verdict_reader`); why each phrase is there is said in verdicts.py."""

from __future__ import annotations

import re

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

# A negated finding. Bare "no"/"not" anywhere is not enough ("not only … but also", "no-reflow").
_NEGATED_FINDING = re.compile(
    r"\b(did not|does not|do not|was not|were not|is not|are not|has not|have not|could not|cannot|"
    r"not (?:significantly|associated|related|correlated|improve|reduce|increase|affect|influence|predict|"
    r"differ|superior|effective|necessary|useful|justified|a reliable|an? (?:independent|significant|"
    r"reliable|useful|effective))|"
    r"no (?:significant|statistically|difference|differences|association|correlation|relationship|benefit|"
    r"effect|evidence|advantage|improvement|impact|increase|reduction|change|role|cure|known cure|vaccine)|"
    r"failed to|unable to|neither|nor|not support)\b", re.I)
# A question about sameness, and a finding that states it.
_ASKS_SAMENESS = re.compile(r"\b(similar|same|equal|equivalent|comparable|identical)\b", re.I)
# "at the same centre", "to the same level": after a preposition, "the same" places the question, it does not ask it.
_PREPOSITIONS = {"at", "in", "on", "to", "from", "within", "by", "of", "into", "under", "for", "with", "during"}
_SAMENESS_FINDING = re.compile(
    r"\b(similar(?:ly)?|comparable|equally|equivalent|the same|identical|"
    r"no (?:statistically )?(?:significant )?differences?|did not differ|not (?:significantly )?differ\w*)\b", re.I)
_WORD = re.compile(r"[a-z0-9][a-z0-9\-]+")
# scikit-learn's list lacks the auxiliaries that open yes/no questions
_STOP = ENGLISH_STOP_WORDS | {"does", "did", "doing", "shall"}


def content_words(text: str) -> set[str]:
    """Lower-cased words of three or more characters, scikit-learn's English stop words removed."""
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in _STOP}


def asks_sameness(question: str) -> bool:
    """Does the yes/no question ask whether things are alike ("Are A and B similar?", "Is it the same disease
    as …?"), rather than use the word in passing ("Does management at the same centre improve results?")?"""
    for m in _ASKS_SAMENESS.finditer(question):
        before = question[:m.start()].split()
        if m.group(0).lower() == "same" and len(before) >= 2 and before[-1].lower() == "the" \
                and before[-2].lower().strip(",;:") in _PREPOSITIONS:
            continue
        return True
    return False
