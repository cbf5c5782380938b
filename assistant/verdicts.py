"""Yes/no questions decided in code from the evidence, not by the model's verdict slot (#14).

Measured on PubMedQA with the default model: the grammar's ``"verdict"`` slot was "yes" on every answered
item (accuracy 0.25 on 20 answerable items against 0.55 for always-"yes"), and the model declined to answer
9 of 20 questions whose own abstract it was shown. Two rules replace those judgements; both were tuned on the
700 PubMedQA questions outside the evaluation's fixed 300 (never on them):

- **the verdict** is read from the sentences the answer cites: a finding stated with a negation ("did not
  differ", "no significant association", "failed to") answers "no", otherwise "yes". On the dev questions'
  own conclusions this scores 0.69 against 0.54 for always-"yes"; on the three sentences of each abstract
  closest to the question (what an answer tends to cite) 0.63. "maybe" is never the rule's answer: a
  hedging-word count for it lowered dev accuracy (0.687 vs 0.693).
- **answering is required** when one evidence sentence carries at least half of the question's content
  words: then the schema offers no "does not answer" branch. On 150 dev questions, the own abstract's top
  six sentences reach that for 75% of the questions, the KB's top six for a question whose abstract is not
  in the KB for 5% (thresholds 0.4 and 0.6: 88% and 10%, 45% and 1%).

Applied to yes/no questions only: there a sentence that repeats the question's terms is about the question;
for a "which/what" question it need not contain the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

FORCE_ANSWER_COVERAGE = 0.5

# A negated finding. Bare "no"/"not" anywhere is not enough ("not only … but also", "no-reflow").
_NEGATED_FINDING = re.compile(
    r"\b(did not|does not|do not|was not|were not|is not|are not|has not|have not|could not|cannot|"
    r"not (?:significantly|associated|related|correlated|improve|reduce|increase|affect|influence|predict|"
    r"differ|superior|effective|necessary|useful|justified|a reliable|an? (?:independent|significant|"
    r"reliable|useful|effective))|"
    r"no (?:significant|statistically|difference|differences|association|correlation|relationship|benefit|"
    r"effect|evidence|advantage|improvement|impact|increase|reduction|change|role)|"
    r"failed to|unable to|neither|nor|not support)\b", re.I)
_WORD = re.compile(r"[a-z0-9][a-z0-9\-]+")
# scikit-learn's list lacks the auxiliaries that open yes/no questions
_STOP = ENGLISH_STOP_WORDS | {"does", "did", "doing", "shall"}


def content_words(text: str) -> set[str]:
    """Lower-cased words of three or more characters, scikit-learn's English stop words removed."""
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in _STOP}


def question_coverage(question: str, texts: list[str]) -> float:
    """The largest share of the question's content words that one of ``texts`` contains (0 when none)."""
    asked = content_words(question)
    if not asked or not texts:
        return 0.0
    return max(len(asked & content_words(t)) / len(asked) for t in texts)


def must_answer(question: str, texts: list[str]) -> bool:
    """True when the evidence is plainly about the question, so "does not answer" is not offered."""
    return question_coverage(question, texts) >= FORCE_ANSWER_COVERAGE


@dataclass(frozen=True)
class CodeVerdict:
    """A verdict and what it was read from: the negating words and the id of the sentence holding them."""

    verdict: str  # "yes" | "no"
    cue: str = ""
    evidence_id: str = ""

    def explain(self) -> str:
        """One line for the reply, so a reader can check what decided the verdict."""
        if self.verdict == "no":
            return (f"**Verdict: No.** Read in code from the cited evidence: it says “{self.cue}” "
                    f"[{self.evidence_id}].")
        return "**Verdict: Yes.** Read in code from the cited evidence: none of it negates the finding."


def verdict_from_evidence(cited: dict[str, str]) -> CodeVerdict:
    """"no" when a cited sentence states a negated finding, else "yes" (``cited``: id -> text, in citation order)."""
    for evidence_id, text in cited.items():
        m = _NEGATED_FINDING.search(text)
        if m:
            return CodeVerdict("no", m.group(0), evidence_id)
    return CodeVerdict("yes")
