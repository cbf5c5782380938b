"""Grammar-bound answers: statements that cite by construction, or an explicit "the evidence does not answer this".

The answer is generated under a JSON schema built for this turn (QUASAR's faithful answering, methods.md §1):

- ``{"statements": [{"text": ..., "cite": [ids]}, ...]}``, each statement citing one to four ids, the ids an
  enum of exactly the evidence shown in the prompt, so an id that does not exist cannot be written; a yes/no
  question (decided by its form, in code) also gets ``"verdict": "yes" | "no" | "maybe"`` first;
- or ``{"does_not_answer": true, "closest": [ids]}``.

The reply is rendered as prose with citation chips (``Levodopa treats it [S1].``) while the JSON streams in:
:class:`ProseStream` parses the partial JSON with ``jiter`` and emits only text that will not change, so the
user sees the answer grow and never sees a half-written id.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import jiter
from pydantic import BaseModel, Field, TypeAdapter, ValidationError, create_model

from assistant.llm import close_json_after_value
from assistant.answer.support import POINTS_BACK, Support, check_statement, mentions, word_share

MAX_STATEMENTS = 4
MAX_CITES = 4
MAX_CLOSEST = 3
MAX_CARRIERS = 2  # items named in the retry hint as carrying a mis-cited statement
CARRIER_WORD_SHARE = 0.75  # of a statement's content words, in an item that carries it alone
STATEMENT_CHARS = 300
ANSWER_MAX_TOKENS = 320
VERDICTS = ("yes", "no", "maybe")
DOES_NOT_ANSWER_TEXT = "The evidence I found does not answer this."
_YES_NO = re.compile(r"^\s*(is|are|was|were|did|does|do|has|have|had|can|could|should|would|will|may|might|must)\b",
                     re.I)
_ID = re.compile(r"(?:T\d+:R\d+C\d+|S\d+|P\d+)")


_WH = re.compile(r"\b(what|which|who|whom|whose|when|where|why|how)\b", re.I)
# Where a titled question's own clause starts: "Necrotizing fasciitis: an indication for …?",
# "Autoerotic asphyxiation: secret pleasure--lethal outcome?", "… in 2012. Is it emerging …?"
_CLAUSE_BREAK = re.compile(r"[:;]\s|\.\s|--|\s[–—-]\s|,\s(?=(?:is|are|was|were|did|does|do|has|have|can|could|"
                           r"should|would|will|may|might|must)\s+(?:it|they|this|these|there|he|she)\b)", re.I)
_PARENTHESES = re.compile(r"\([^)]*\)")
# A choice between the last words ("Is the patient male or female?") is no yes/no question; an "or" inside it
# ("Does surgery or radiation therapy improve survival in ...?") leaves it one.
CHOICE_TAIL_WORDS = 3


def is_yes_no_question(question: str) -> bool:
    """A question whose form asks for yes or no ("Does X reduce Y?"), read from its words, not by the model.

    Besides a question that opens with an auxiliary, a titled one counts: after its last colon, semicolon, full
    stop or dash, the clause opens with an auxiliary ("Colorectal metastases: does global management improve
    results?") or, with no question word anywhere, names what it asks about ("c-Kit in uveal melanoma: a
    therapeutic target?"). Of the 960 PubMedQA questions (all yes/no) outside the evaluation's first 40, the
    opening-auxiliary rule alone recognised 616, this one 920. Then, on the 700 outside the fixed 300: a spaced
    hyphen and ", is it …?" as clause breaks, and an "or" that only rules a question out when at most three
    words follow it (parentheses ignored), took it from 675 to 688; on the 1,680 CompMix dev questions and the
    CRAG sample it changes nothing (57 of 1,680 recognised before and after).
    """
    text = " ".join((question or "").split())
    if not text.endswith("?"):
        return False
    low = _PARENTHESES.sub("", text).lower()
    if " or " in low and len(low.rsplit(" or ", 1)[1].split()) <= CHOICE_TAIL_WORDS:
        return False
    if _YES_NO.match(text):
        return True
    parts = _CLAUSE_BREAK.split(text)
    if len(parts) < 2:
        return False
    return bool(_YES_NO.match(parts[-1])) or not _WH.search(text)


# -- the schema ---------------------------------------------------------------------------------------
class Statement(BaseModel):
    text: str
    cite: list[str]


class GroundedAnswer(BaseModel):
    """A parsed answer; every id in it is one the schema allowed."""

    statements: list[Statement] = Field(default_factory=list)
    verdict: Literal["yes", "no", "maybe"] | None = None
    does_not_answer: bool = False
    closest: list[str] = Field(default_factory=list)

    @property
    def cited(self) -> list[str]:
        ids = self.closest if self.does_not_answer else [c for s in self.statements for c in s.cite]
        return list(dict.fromkeys(ids))


def answer_adapter(ids: list[str], yes_no: bool, allow_abstain: bool = True) -> TypeAdapter:
    """The turn's answer type: the ids an enum of ``ids``; a verdict first for yes/no questions.

    ``allow_abstain=False`` leaves out the "does not answer" branch (code found the evidence plainly about
    the question: :func:`assistant.answer.verdicts.must_answer`).
    """
    if not ids:
        raise ValueError("a grounded answer needs at least one evidence id")
    evidence_id = Literal[tuple(ids)]  # type: ignore[valid-type]
    statement = create_model("Statement", text=(str, Field(min_length=1, max_length=STATEMENT_CHARS)),
                             cite=(list[evidence_id], Field(min_length=1, max_length=MAX_CITES)))
    fields: dict[str, Any] = {}
    if yes_no:
        fields["verdict"] = (Literal[VERDICTS], ...)
    fields["statements"] = (list[statement], Field(min_length=1, max_length=MAX_STATEMENTS))
    answered = create_model("Answer", **fields)
    if not allow_abstain:
        return TypeAdapter(answered)
    not_answered = create_model("DoesNotAnswer", does_not_answer=(Literal[True], ...),
                                closest=(list[evidence_id], Field(min_length=1, max_length=MAX_CLOSEST)))
    return TypeAdapter(answered | not_answered)


def answer_schema(ids: list[str], yes_no: bool) -> dict:
    return answer_adapter(ids, yes_no).json_schema()


def parse_answer(raw: str, adapter: TypeAdapter) -> GroundedAnswer | None:
    """The validated answer, or the complete statements of one cut off mid-way, or None."""
    for text in (raw.strip(), close_json_after_value(raw) or ""):
        if not text:
            continue
        try:
            value = adapter.validate_json(text)
        except ValidationError:
            continue
        return GroundedAnswer.model_validate(value.model_dump())
    # Cut off (max_tokens): keep the statements that were finished, each validated on its own.
    try:
        partial = jiter.from_json(raw.encode(), partial_mode="on")
    except ValueError:
        return None
    if not isinstance(partial, dict) or not isinstance(partial.get("statements"), list):
        return None
    done = partial["statements"][:-1] if not raw.rstrip().endswith(("]", "}")) else partial["statements"]
    keep = []
    for s in done:
        candidate = {**({"verdict": partial["verdict"]} if "verdict" in partial else {}), "statements": [s]}
        try:
            keep.append(adapter.validate_python(candidate).statements[0].model_dump())
        except (ValidationError, AttributeError):
            continue
    if not keep:
        return None
    return GroundedAnswer(statements=keep, verdict=partial.get("verdict") if partial.get("verdict") in VERDICTS
                          else None)


# -- rendering ----------------------------------------------------------------------------------------
def chips(ids: list[Any]) -> str:
    """``[S1][P2]``, each id once ("[P2][P5][P5][P5]" was seen), in the order written."""
    return "".join(f"[{c}]" for c in dict.fromkeys(c for c in ids if isinstance(c, str) and _ID.fullmatch(c)))


def render_statement(text: str, cite: list[Any], complete: bool) -> str:
    """One statement as prose; chips go before its final full stop once the statement is complete.

    While it streams, trailing punctuation is held back, so what is shown only ever grows.
    """
    body = " ".join(str(text).split())
    if not complete:
        return body.rstrip(" .!?;:,")
    end = ""
    m = re.search(r"[.!?]+$", body)
    if m:
        end, body = m.group(0), body[:m.start()]
    body = body.rstrip(" ,;:")
    marks = chips(cite)
    return f"{body} {marks}{end or '.'}" if marks else f"{body}{end or '.'}"


def render_prose(obj: dict, complete: bool, show_verdict: bool = True) -> str:
    """The answer (a parsed or partially parsed JSON object) as Markdown prose with citation chips.

    ``show_verdict=False`` leaves the model's verdict out: code decides it after the answer is complete.
    """
    if obj.get("does_not_answer") is True:
        closest = obj.get("closest") or []
        if complete and chips(closest):
            return f"{DOES_NOT_ANSWER_TEXT} The closest evidence: {chips(closest)}."
        return DOES_NOT_ANSWER_TEXT
    parts = []
    if show_verdict and obj.get("verdict") in VERDICTS:
        parts.append(f"**{obj['verdict'].capitalize()}.**")
    statements = [s for s in obj.get("statements") or [] if isinstance(s, dict)]
    said: list[str] = []
    for i, s in enumerate(statements):
        done = complete or i < len(statements) - 1
        key = _same_text(str(s.get("text", "")))
        # A statement said before is said once (as merge_repeats does for the kept answer); one still streaming
        # that could become such a repeat is held back, so the shown text still only grows. Seen on "What
        # diseases is ibuprofen used to treat?": the same statement streamed three times.
        if key in said or (not done and key and any(k.startswith(key) for k in said)):
            continue
        said.append(key)
        parts.append(render_statement(s.get("text", ""), s.get("cite") or [], done))
    return " ".join(p for p in parts if p)


class ProseStream:
    """Turns streamed JSON pieces into the prose to show, emitting only text that will not change."""

    def __init__(self, show_verdict: bool = True) -> None:
        self.raw = ""
        self.shown = ""
        self.show_verdict = show_verdict

    def feed(self, piece: str) -> str:
        self.raw += piece
        try:
            obj = jiter.from_json(self.raw.encode(), partial_mode="trailing-strings")
        except ValueError:
            return ""
        if not isinstance(obj, dict):
            return ""
        return self.advance(render_prose(obj, complete=False, show_verdict=self.show_verdict))

    def advance(self, text: str) -> str:
        """The part of ``text`` not shown yet, when ``text`` continues what was shown; else nothing."""
        if len(text) > len(self.shown) and text.startswith(self.shown):
            delta, self.shown = text[len(self.shown):], text
            return delta
        return ""


# -- echoed apparatus ----------------------------------------------------------------------------------
# The prompt shows each item as "[S1] text (source)". The 1.5B model sometimes copies such a line whole into a
# statement: "S1: solar energy is a renewable resource (OpenBookQA fact 1058)". Measured on "What is an example
# of a renewable energy source?": all four statements were echoes, the support check flagged each for the
# source's number and name, and the turn ended in an abstention although S1 answered it.
_ECHOED_LABEL = re.compile(r"^\s*\[?(T\d+:R\d+C\d+|S\d+|P\d+)\]?\s*[:\-\u2013\u2014]\s*")


# A parenthesised group with no parentheses inside, and the space before it.
_PARENTHESES = re.compile(r"\s*\(([^()]*)\)")


def strip_echo(text: str, sources: dict[str, str]) -> str:
    """``text`` without a leading evidence label, or parentheses holding only ids or sources shown in the prompt.

    ``sources`` maps the ids shown to their sources as shown. Only ids and sources of this turn's evidence
    are removed, so a statement's own parentheses ("(HbA1c)") and ids in prose stay. Seen on the chat bench:
    "Wind is a renewable resource (S1) [S1]." and "… into glucose (OpenBookQA fact 660, WorldTree ACTION
    9f6b-7d55-4edf-3f0b) [S1][S3]." were withdrawn for the names "s1" and "openbookqa", which no evidence says.
    """
    out = text
    m = _ECHOED_LABEL.match(out)
    if m and m.group(1) in sources:
        out = out[m.end():]
    shown = {s.strip().lower() for s in sources.values() if s and s.strip()} | {i.lower() for i in sources}

    def labels_only(m: re.Match) -> str:
        # "(S1)", "(OpenBookQA fact 660, WorldTree ACTION 9f6b-…)": every part is an id or a source shown.
        parts = [p.strip().strip("[]").strip().lower() for p in re.split(r"[,;]|\band\b", m.group(1))]
        return "" if all(p in shown for p in parts if p) and any(parts) else m.group(0)

    out = _PARENTHESES.sub(labels_only, out)
    out = out.strip()
    return out if out else text


def strip_echoes(answer: GroundedAnswer, sources: dict[str, str]) -> GroundedAnswer:
    """The answer with :func:`strip_echo` applied to every statement (the check and the display see the same)."""
    if answer.does_not_answer:
        return answer
    return answer.model_copy(update={"statements": [
        Statement(text=strip_echo(s.text, sources), cite=s.cite) for s in answer.statements]})


def _same_text(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(" .!?;:,")


def merge_repeats(answer: GroundedAnswer) -> GroundedAnswer:
    """The answer with each repeated statement said once, citing what its copies cited, in order.

    Seen: "A renewable resource can be replaced [S4][S5]" written three times in one answer. Called after the
    support check, so every copy left is carried by its own citations and their union is too.
    """
    merged: dict[str, Statement] = {}
    for s in answer.statements:
        key = _same_text(s.text)
        if key in merged:
            merged[key].cite = list(dict.fromkeys(merged[key].cite + s.cite))
        else:
            merged[key] = Statement(text=s.text, cite=list(s.cite))
    if len(merged) == len(answer.statements):
        return answer
    return answer.model_copy(update={"statements": list(merged.values())})


# -- support ----------------------------------------------------------------------------------------
@dataclass
class StatementSupport:
    statement: str
    cite: list[str]
    support: Support


@dataclass
class SupportReport:
    checked: list[StatementSupport] = field(default_factory=list)

    @property
    def flagged(self) -> list[StatementSupport]:
        return [c for c in self.checked if not c.support.ok]

    def problem(self, texts: dict[str, str] | None = None) -> str:
        """What the flagged statements lack; with ``texts`` (the items shown), which other items carry it.

        The hint is for the retry: seen with "Does smoking increase the risk of lung cancer?", the model wrote
        S2's own words ("Smoking causes direct damage to the lungs") citing two KG facts about tobacco, twice.
        The model still chooses the ids, and the check still applies to what it chooses.
        """
        parts = []
        for c in self.flagged:
            part = f"“{c.statement}” cites {', '.join(dict.fromkeys(c.cite))}, but {c.support.reason}"
            carriers = carriers_of(c, texts or {})
            if carriers:
                part += f"; {' and '.join(carriers)} {'says' if len(carriers) == 1 else 'say'} it"
            parts.append(part)
        return "; ".join(parts)


def carriers_of(checked: StatementSupport, texts: dict[str, str]) -> list[str]:
    """The shown items (``texts``: id -> text), other than those cited, that each carry the statement on their own.

    Carrying takes more than the support check's names and numbers: code then cites the item in the model's
    place. Found as a new user: "Regular exercise increases a body's strength", which names nothing, was cited by
    code to a sentence on outpatient visits and one on arterial compliance. A carrier also holds most of the
    statement's content words.
    """
    return [i for i, t in texts.items()
            if i not in checked.cite and check_statement(checked.statement, [t]).ok
            and word_share(checked.statement, t) >= CARRIER_WORD_SHARE][:MAX_CARRIERS]


@dataclass
class ContextCitation:
    """A sentence code cited beside the model's, because the model's points back to it for a name."""

    statement: str
    cited: str  # the model's sentence, which points back
    context: str  # the sentence before it in its document
    names: list[str]

    def note(self, context_text: str) -> str:
        """What the reply says about it: the names (the longest of those that overlap) as ``context_text``, the
        added sentence, writes them ("Xylella fastidiosa", not the check's "xylella fastidiosa")."""
        names = [n for n in self.names if not any(n != m and n in m.split() + [m] for m in self.names)]
        written = [m.group(0) if (m := re.search(re.escape(n), context_text, re.I)) else n for n in names]
        said = " and ".join(f"“{n}”" for n in written)
        return (f"(Cited by code: [{self.context}], shortly before [{self.cited}] in the same document, names {said}, "
                f"which [{self.cited}] refers back to.)")


def with_context(answer: GroundedAnswer, support: SupportReport, texts: dict[str, str],
                 before: Callable[[str], list[Any]], register: Callable[[Any], str], subjects: Sequence[str] = (),
                 asked_object: str = "") -> tuple[GroundedAnswer, SupportReport, dict[str, str], list[ContextCitation]]:
    """Statements flagged only for names that a cited sentence refers back to, cited with the sentence before it.

    Found as a new user with an ingested briefing: "Xylella fastidiosa is spread by spittlebugs [S4]" cited "The
    pathogen is spread by spittlebugs, mainly Philaenus spumarius, …", whose previous sentence names Xylella
    fastidiosa (two sentences up: the one between says "it killed …"); the check dropped the statement and kept a
    ConceptNet fact about spittlebugs. ``before(id)`` gives the few sentences before a cited one, nearest first
    (anything with a ``text``); ``register`` makes one used evidence of the turn and returns its id. A statement is
    repaired only when it lacks names (never a number), the cited sentence opens by pointing back
    (:data:`assistant.answer.support.POINTS_BACK`), and with the nearest sentence before it that will do, it passes the
    whole check.
    Returns the answer, the report, the texts of the sentences added (id -> text) and what was added, for the
    reply to say.
    """
    if answer.does_not_answer or not support.flagged:
        return answer, support, {}, []
    statements, checked = list(answer.statements), list(support.checked)
    added: dict[str, str] = {}
    notes: list[ContextCitation] = []
    for i, c in enumerate(checked):
        if c.support.ok or not c.support.names_only:
            continue
        for cid in dict.fromkeys(c.cite):
            if not POINTS_BACK.match(texts.get(cid, "")):
                continue
            for prev in before(cid):
                again = check_statement(c.statement, [texts.get(x, "") for x in c.cite] + [prev.text], subjects,
                                        asked_object)
                if again.ok:
                    break
            else:
                continue
            context_id = register(prev)
            if context_id in c.cite:
                continue
            cite = [*c.cite, context_id]
            statements[i] = Statement(text=c.statement, cite=cite)
            checked[i] = StatementSupport(c.statement, cite, again)
            added[context_id] = prev.text
            notes.append(ContextCitation(c.statement, cid, context_id, list(c.support.missing)))
            break
    if not notes:
        return answer, support, {}, []
    return answer.model_copy(update={"statements": statements}), SupportReport(checked), added, notes


def without_idle_citations(answer: GroundedAnswer, texts: dict[str, str],
                           fact_ends: dict[str, tuple[str, str]]) -> tuple[GroundedAnswer, list[str]]:
    """The answer without the citations that do not say what their statement says, and those ids, in order.

    Seen: "Metformin treats type 2 diabetes mellitus [P12][P11][P17]", where P11 is "Metformin treats metabolic
    syndrome X" and P17 "Metformin treats polycystic ovary syndrome": the check passed on P12, and two chips
    backed nothing. A cited KG fact (``fact_ends``: id -> its head and tail names) is idle when the statement's
    other citations still carry it (the support check) and the fact does not on its own: it fails the check
    alone, or the statement does not name one of its ends. A statement's last citation stays. Sentences stay
    cited: a yes/no verdict is read from the conclusion of the documents cited, whichever statement cites them.
    """
    if answer.does_not_answer:
        return answer, []
    idle: list[str] = []
    statements = []
    for s in answer.statements:
        cite = list(dict.fromkeys(s.cite))
        for c in [x for x in cite if x in fact_ends]:
            rest = [x for x in cite if x != c]
            if not rest or not check_statement(s.text, [texts.get(x, "") for x in rest]).ok:
                continue
            alone = check_statement(s.text, [texts.get(c, "")]).ok
            ends_named = all(mentions(end, [s.text]) for end in fact_ends.get(c, ()))
            if not (alone and ends_named):
                cite = rest
                idle.append(c)
        statements.append(Statement(text=s.text, cite=cite))
    if not idle:
        return answer, []
    return answer.model_copy(update={"statements": statements}), list(dict.fromkeys(idle))


def check_support(answer: GroundedAnswer, texts: dict[str, str], subjects: Sequence[str] = (),
                  asked_object: str = "") -> SupportReport:
    """Each statement against the verbalised items it cites (``texts``: id -> text); ``subjects`` and
    ``asked_object`` as in :func:`assistant.answer.support.check_statement`."""
    report = SupportReport()
    if answer.does_not_answer:
        return report
    for s in answer.statements:
        report.checked.append(StatementSupport(s.text, s.cite, check_statement(
            s.text, [texts.get(c, "") for c in s.cite], subjects, asked_object)))
    return report
