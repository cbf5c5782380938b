"""Yes/no questions decided in code from the evidence, not by the model's verdict slot (#14).

Measured on PubMedQA with the default model: the grammar's ``"verdict"`` slot was "yes" on every answered
item (accuracy 0.25 on 20 answerable items against 0.55 for always-"yes"), and the model declined to answer
9 of 20 questions whose own abstract it was shown. Two rules replace those judgements; both were tuned on the
700 PubMedQA questions outside the evaluation's fixed 300 (never on them):

- **the verdict** is read from the closing sentences of the document the answer cites most (from the
  sentences it cites when they have no document, e.g. an upload): a finding stated with a negation ("did
  not differ", "no significant association", "failed to") answers "no", otherwise "yes". On the dev
  questions this scores 0.671 on each abstract's last two sentences (last one 0.637, last three 0.653, the
  labelled conclusion 0.696) against 0.539 for always-"yes"; on the three sentences closest to the question,
  what an answer tends to cite, 0.626, and on those three plus the last two 0.646. "maybe" is never the rule's answer: a
  hedging-word count for it lowered dev accuracy (0.687 vs 0.693). A question asking whether two things are
  the same ("Are polyps from pre- and post-menopausal women similar?") turns the reading round: a stated
  sameness ("comparable", "did not differ") answers "yes", any other finding "no". The negation rule answered
  1 of the 15 such dev questions right, this reading 10 (all 700: 0.671 -> 0.684). "The same" after a
  preposition ("optimized to the same preoperative hemoglobin level") places the question and does not ask
  it. Tried and not kept, on the same dev questions: a TF-IDF logistic regression on the conclusion (5-fold,
  best 0.617), and more negating words ("similar", "lacked", "insufficient", "should not": at most +0.009
  each, 0.673 together).
- **answering is required** when one evidence item carries enough of the question's content words (first
  40% in the sentence, now 60% in the sentence and its document's title): then the schema offers no "does
  not answer" branch. On 150 dev questions, the own abstract's top six sentences reach that for 88% of the
  questions, the KB's top six for a question whose abstract is not in the KB for 10% (thresholds 0.5 and
  0.6: 75% and 5%, 45% and 1%). 0.4 is the better trade on the dev
  estimate of refrain accuracy: about 0.90 against 0.885 for 0.5 (0.5 was the first choice), taking the
  model's own abstention rates where the gate is off (it declines about two in three answerable questions
  and nearly all unanswerable ones), and it leaves fewer answerable questions to the model's refusal.
  Since 2026-11-26 an item's document title counts with its text, at a threshold of 0.6: a paper titled with
  the question is about it. The KB's top six then reach it for 25 of the 26 dev questions whose abstract is in
  the KB (text alone at 0.4: 23) and for 1 of 120 dev questions whose abstract is not (text alone at 0.4: 11);
  titles at 0.4 would force 13 of those 120 (the top six of ``tools.text_search.rank_kb`` per question).

- **the model's reading** may turn the rule's "yes" into "no". Asked the question over the conclusion alone
  (``prompts/verdict_reading_*.j2``, one greedy token), the model's log-probabilities carry what the negation
  list misses ("was not superior", "offers little"): it answers "no" when log P(no) > log P(yes) - 1.5, i.e.
  P(no) above 0.22 x P(yes), because the code model leans "yes" on nearly everything (its plain argmax scores
  0.553 on the 700 dev questions, always-"yes" 0.539). On the same 700 questions, the last two sentences of each
  abstract: the rule alone 0.683, the reading alone 0.691, the rule's "no" or the reading's 0.716 (margins 1.0 /
  1.25 / 1.75 / 2.0: 0.707 / 0.713 / 0.711 / 0.699); chosen on one half of five random splits, the margin was 1.5
  four times (1.75 once), and on the other half the pair beat the rule alone each time (+2.0 to +3.7 points).
  A logistic regression on the rule and the three log-probabilities did 0.740 (5-fold), but its verdict could
  not be explained in one line. Re-checked on 2026-12-02 over the first 337 of the 700 (sorted ids): this rule
  0.697, the same regression 0.691 / 0.703 / 0.712 at C = 0.1 / 1 / 10 (5 x 5-fold; it never answers "maybe"),
  always-"yes" 0.522; and with no model at all, MiniLM embeddings of the conclusion (and of the question times
  the conclusion) in a logistic regression, all 700: 0.538-0.570 against 0.539 for always-"yes". So a better
  weighing of the same readings is worth a point or two, and the words of a conclusion alone say little. Sameness questions keep their own reading (the rule's), and so does a verdict
  read from cited sentences rather than a conclusion (not measured there).

- **the learned reader** (since 2026-12, #78; :mod:`assistant.answer.verdict_reader`) decides instead of the
  rule and the model's reading when the cited document has a conclusion and the question is known: a logistic
  regression over the rule's cues in each of the last three sentences, weighed by where they stand and by how
  much of the question each sentence repeats, fitted on the 700 dev questions. 5-fold cross-validation on them
  (docs/eval/pubmedqa-verdicts-dev.md): 0.717 against 0.684 for the rule alone (in-sample) and 0.539 for
  always-"yes"; paired with the rule 52 questions won, 29 lost (McNemar p = 0.014); the rule with the model's
  reading did 0.716 (above). No model call is made for it. A question about sameness keeps the rule's reading (14 dev questions: the
  reader and the rule both 10 right, the reader by answering "no" to nearly all). ``EVIDENTIA_VERDICT_READER=rule`` brings back the rule with the model's reading;
  without the fitted weights (``verdict_reader.npz``) the rule decides and a note is logged.

Applied to yes/no questions only: there a sentence that repeats the question's terms is about the question;
for a "which/what" question it need not contain the answer.
"""

from __future__ import annotations

import logging
import math
import os
from dataclasses import dataclass, replace

# The cues live in verdict_cues so that the learned reader can share them without importing this module back.
from assistant.answer.verdict_cues import (_NEGATED_FINDING, _SAMENESS_FINDING, asks_sameness,  # noqa: F401
                                           content_words)

FORCE_ANSWER_COVERAGE = 0.6  # of the question's content words, in one item's text and title
# The closing sentences a caller reads from the cited document: the learned reader sees three, the rule reads the
# last two of them (rule on dev: last 1 / 2 / 3 sentences 0.637 / 0.671 / 0.653).
CONCLUSION_SENTENCES = 3
RULE_SENTENCES = 2
# Who reads a conclusion: "learned" (the reader, the rule when its weights are missing) or "rule" (the negation
# rule, which the model's one-token reading may turn from yes to no: the path before #78).
VERDICT_READER_ENV = "EVIDENTIA_VERDICT_READER"
VERDICT_READERS = ("learned", "rule")
log = logging.getLogger(__name__)

# Documents whose closing sentences state their finding: research abstracts (the default KB's PubMed and SciFact
# collections). A MedQuAD page ends with treatment notes and an OpenBookQA or WorldTree fact is one sentence, so
# their last sentences decide nothing. Seen: "Does smoking increase the risk of lung cancer?" got its verdict
# from the end of an alpha-1 antitrypsin deficiency page ("AAT deficiency has no cure, but treatments are ...").
ABSTRACT_DOC_PREFIXES = ("pubmed:", "scifact:")


# How far below "yes" the model's "no" may be and still win (natural log; dev 700: see the module docstring).
LEANS_NO_NATS = 1.5


def has_conclusion(doc_id: str) -> bool:
    """Does this KB document end with a conclusion (an abstract), so its closing sentences may decide?"""
    return doc_id.startswith(ABSTRACT_DOC_PREFIXES)


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
class Reading:
    """The model's leaning, asked the question over a conclusion: log-probabilities of "yes" and "no" as the
    reply's first word."""

    yes: float
    no: float

    @property
    def leans_no(self) -> bool:
        return self.no > self.yes - LEANS_NO_NATS

    def describe(self) -> str:
        return f"P(no) {math.exp(self.no):.2f} against P(yes) {math.exp(self.yes):.2f}"


def reading_from(first_token: dict[str, float]) -> Reading | None:
    """A :class:`Reading` from the first token's alternatives (:meth:`assistant.llm.LLMClient.first_token_logprobs`);
    None when neither word is among them. A word missing from them counts as impossible, as it did when the
    margin was tuned (with ten alternatives it is far behind: "no" missing, "yes" ahead, the rule stands)."""
    if "yes" not in first_token and "no" not in first_token:
        return None
    return Reading(yes=first_token.get("yes", -math.inf), no=first_token.get("no", -math.inf))


@dataclass(frozen=True)
class CodeVerdict:
    """A verdict and what it was read from: the negating words, the id of the sentence holding them, and
    (when the cited document's conclusion decided) the ids of that conclusion."""

    verdict: str  # "yes" | "no"; "maybe" only from the learned reader
    cue: str = ""
    evidence_id: str = ""
    conclusion_ids: tuple[str, ...] = ()
    asks_sameness: bool = False
    reading: Reading | None = None  # set when the model's reading turned the rule's "yes" into "no"
    by: str = "rule"  # "rule" | "reader" (assistant/answer/verdict_reader.py)
    probabilities: tuple[tuple[str, float], ...] = ()  # the reader's, label by label
    rule: str = ""  # when the reader decided: what the negation rule said over the same conclusion

    @property
    def rule_verdict(self) -> str:
        """The negation rule's verdict, before the model's reading could turn it or the reader decided."""
        if self.rule:
            return self.rule
        return "yes" if self.reading is not None else self.verdict

    @property
    def wants_reading(self) -> bool:
        """Could the model's reading change this verdict? Only a "yes" the rule read from a conclusion (the learned
        reader was measured without it, so its verdict stands)."""
        return (self.by == "rule" and self.verdict == "yes" and bool(self.conclusion_ids)
                and not self.asks_sameness)

    def read_as(self, reading: Reading) -> CodeVerdict:
        """This verdict after the model's reading of the conclusion: "no" when the reading leans no."""
        if not self.wants_reading or not reading.leans_no:
            return self
        return replace(self, verdict="no", reading=reading)

    @property
    def cited(self) -> tuple[str, ...]:
        """The ids the explanation cites."""
        return tuple(dict.fromkeys(self.conclusion_ids + ((self.evidence_id,) if self.evidence_id else ())))

    def explain(self) -> str:
        """One line for the reply, so a reader can check what decided the verdict."""
        if self.conclusion_ids:
            source = "the conclusion of the cited document [" + ", ".join(self.conclusion_ids) + "]"
        else:
            source = "the cited evidence"
        if self.by == "reader":
            return self._explain_reader(source)
        if self.asks_sameness:
            if self.verdict == "yes":
                return (f"**Verdict: Yes.** Read in code from {source}: the question asks whether they are alike, "
                        f"and it says “{self.cue}” [{self.evidence_id}].")
            return (f"**Verdict: No.** Read in code from {source}: the question asks whether they are alike, and "
                    "none of it says they are similar or do not differ.")
        if self.reading is not None:
            return (f"**Verdict: No.** Read from {source}: none of it negates the finding in so many words, but "
                    f"the model, asked the question over it, leans no ({self.reading.describe()}; no wins above "
                    f"{math.exp(-LEANS_NO_NATS):.2f} × P(yes), the level tuned on PubMedQA dev questions).")
        if self.verdict == "no":
            return (f"**Verdict: No.** Read in code from {source}: it says “{self.cue}” "
                    f"[{self.evidence_id}].")
        return f"**Verdict: Yes.** Read in code from {source}: none of it negates the finding."

    def _explain_reader(self, source: str) -> str:
        probs = dict(self.probabilities)
        odds = ", ".join(f"{lab} {p:.2f}" for lab, p in sorted(probs.items(), key=lambda kv: -kv[1]))
        line = (f"**Verdict: {self.verdict.capitalize()}.** Read in code from {source} by a reader fitted on 700 "
                f"PubMedQA questions, which weighs negated findings by where they stand and how much of the "
                f"question they repeat ({odds})")
        if self.cue and self.evidence_id:
            what = "it states sameness" if self.asks_sameness else "the negation it weighed most"
            return line + f"; {what}: “{self.cue}” [{self.evidence_id}]."
        if self.verdict == "yes":
            return line + ("; none of it negates the finding." if not self.asks_sameness else ".")
        return line + "."


def verdict_reader_choice() -> str:
    """Who reads a conclusion, from ``EVIDENTIA_VERDICT_READER`` ("learned" when unset); an unknown value is an
    error, so a typo does not silently change the verdicts."""
    choice = os.environ.get(VERDICT_READER_ENV, "").strip().lower() or "learned"
    if choice not in VERDICT_READERS:
        raise ValueError(f"{VERDICT_READER_ENV} must be one of {', '.join(VERDICT_READERS)}, not {choice!r}.")
    return choice


def verdict_from_evidence(cited: dict[str, str], conclusion: dict[str, str] | None = None,
                          question: str = "", by: str | None = None) -> CodeVerdict:
    """The verdict of a yes/no question from the evidence.

    With a conclusion and the question, the learned reader decides (:mod:`assistant.answer.verdict_reader`), unless
    ``by`` (default: :func:`verdict_reader_choice`) is "rule" or its weights are missing. Otherwise the negation
    rule: "no" when a sentence states a negated finding, else "yes"; for a question about sameness, "yes" when a
    sentence states sameness ("did not differ"), else "no".

    ``cited``: id -> text of the sentences the answer cites, in citation order. ``conclusion``: id -> text of
    the closing sentences (up to :data:`CONCLUSION_SENTENCES`, in reading order) of the document the answer
    cites most; when given, they alone decide, because an abstract's conclusion states its finding while the
    results the model tends to cite need not. The rule reads the last :data:`RULE_SENTENCES` of them.
    """
    ruled = negation_rule(cited, dict(list(conclusion.items())[-RULE_SENTENCES:]) if conclusion else None, question)
    # A sameness question keeps the rule's reading: 14 of the 700 dev questions, on which the reader learned little
    # more than "no" (10 right, as the rule) and would answer "no" over "Outcomes were comparable".
    if not conclusion or not question.strip() or asks_sameness(question) \
            or (by or verdict_reader_choice()) != "learned":
        return ruled
    from assistant.answer.verdict_reader import load_reader

    reader = load_reader()
    if reader is None:
        return ruled
    ids = tuple(conclusion)
    reading = reader.read(question, list(conclusion.values()))
    return CodeVerdict(reading.verdict, reading.cue, ids[reading.cue_index] if reading.cue_index is not None else "",
                       ids, by="reader",
                       probabilities=tuple(reading.probabilities.items()), rule=ruled.verdict)


def negation_rule(cited: dict[str, str], conclusion: dict[str, str] | None, question: str) -> CodeVerdict:
    """The negation rule (see :func:`verdict_from_evidence`)."""
    read = conclusion if conclusion else cited
    ids = tuple(conclusion or ())
    if asks_sameness(question):
        for evidence_id, text in read.items():
            m = _SAMENESS_FINDING.search(text)
            if m:
                return CodeVerdict("yes", m.group(0), evidence_id, ids, asks_sameness=True)
        return CodeVerdict("no", conclusion_ids=ids, asks_sameness=True)
    for evidence_id, text in read.items():
        m = _NEGATED_FINDING.search(text)
        if m:
            return CodeVerdict("no", m.group(0), evidence_id, tuple(conclusion or ()))
    return CodeVerdict("yes", conclusion_ids=tuple(conclusion or ()))
