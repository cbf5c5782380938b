"""Structured intent (QUASAR's question understanding), contextualized with conversation memory.

The model fills a compact frame under a JSON schema; code settles what the message's form settles and
grounds the rest:

- the task: rules decide wherever the form decides (a command, a greeting or thanks, listed options, a
  claim opener, a question or request, any message beside an uploaded table); only what is left is the
  model's, from an enum that cannot say ``multiple_choice`` or ``command``. A message asking for facts
  or advice is never ``chit_chat``;
- options are read from the message only (lettered or numbered lists, "which is larger, X or Y?"):
  ``multiple_choice`` requires them, and the model is not asked for any;
- an entity survives only if it occurs in this message or in an earlier turn's frame, and is more than
  a discourse word ("Now", "Please"); an elliptical follow-up ("Which teams?") inherits the entities
  of the previous turns while a message that names new things of its own (a topic switch) does not.

Tokens (issue 15 §3): greetings, thanks and commands get no model call at all; the frame's keys are
short, the task key is asked only when rules leave the task open, the rewrite only when the turn may
lean on earlier ones, and the answer type and time cue are read by rules from the message's form.
"""

from __future__ import annotations

import logging
import re
from typing import Literal, Sequence, get_args

from pydantic import BaseModel, ConfigDict, Field

from kb.errors import LLMResponseError
from prompts import render
from tools._grounding import EXPLETIVE_IT, answer_subject, with_subject
from tools._cells import parse_date
from tools.registry import ToolContext, tool
from tools._question_rules import swapped_question
from tools.lang.lexicon import EARLIEST_YEAR, MONTHS, PRONOUNS, related, singular
from tools.lang.reading import is_superlative, read

log = logging.getLogger(__name__)

TaskKind = Literal["question", "claim_check", "table_question", "multiple_choice", "chit_chat", "command"]

# Where a follow-up does not name what it leans on, code appends it to the rewrite: "and its beds? (regarding
# ICU beds)".
REGARDING_NOTE = " (regarding {})"
_REGARDING = re.compile(r"\s*\(regarding [^()]*\)\s*$")


def without_regarding_note(rewrite: str) -> str:
    """The rewrite as the turn's own words put it, without the note code appends for carried entities."""
    return _REGARDING.sub("", rewrite)


class IntentFrame(BaseModel):
    """The frame the model fills (kept short: every token costs time on a CPU)."""

    task: TaskKind
    answer_type: list[str] = Field(default_factory=list, max_length=4)
    entities: list[str] = Field(default_factory=list, max_length=8)
    relation: str = ""
    time: str = ""
    location: str = ""
    options: list[str] = Field(default_factory=list, max_length=8)
    rewrite: str = Field(description="The turn as a self-contained request naming its entities.")


# What the model may still decide when rules leave the task open (never multiple_choice, command or a table).
ModelTask = Literal["question", "claim_check", "chit_chat"]
MODEL_TASKS = get_args(ModelTask)


class CompactFrame(BaseModel):
    """The frame as the model writes it: short keys, every generated token costs time on a CPU.

    Only what needs reading: the entities and the relation. The answer type and a time cue are read from the
    message's form by rules (``answer_type_of``, ``time_cue``): asked of the model, they cost a third of the
    frame's tokens, nearly always as ``"tm": "", "l": ""``. Field names are accepted too
    (``populate_by_name``), so a server that answers with the long names still fills the frame.
    """

    model_config = ConfigDict(populate_by_name=True)

    entities: list[str] = Field(default_factory=list, max_length=8, alias="e")
    relation: str = Field(default="", alias="r")

    def frame(self, task: str, message: str) -> IntentFrame:
        return IntentFrame(task=task, entities=self.entities, relation=self.relation,
                           rewrite=getattr(self, "rewrite", "") or message.strip())


class CompactFrameTask(CompactFrame):
    task: ModelTask = Field(alias="t")


class CompactFrameRewrite(CompactFrame):
    rewrite: str = Field(default="", alias="w")


class CompactFrameTaskRewrite(CompactFrameTask):
    rewrite: str = Field(default="", alias="w")


def compact_schema(ask_task: bool, ask_rewrite: bool) -> type[CompactFrame]:
    """The wire model for this turn: the task key only if rules left it open, the rewrite only for a
    turn that may be a follow-up."""
    return {(False, False): CompactFrame, (True, False): CompactFrameTask, (False, True): CompactFrameRewrite,
            (True, True): CompactFrameTaskRewrite}[(ask_task, ask_rewrite)]


class Input(BaseModel):
    message: str = Field(description="The user's message, as typed.")


class Output(IntentFrame):
    carried_over: list[str] = Field(default_factory=list, description="Entities inherited from earlier turns.")
    follow_up: bool = False
    source: Literal["model", "rules"] = "model"
    note: str = ""

    def query(self) -> str:
        """The retrieval query: the rewrite plus slots it may not spell out (QUASAR concatenates the frame)."""
        extra = [e for e in self.entities if e.lower() not in self.rewrite.lower()]
        parts = [self.rewrite] + extra + ([self.relation] if self.relation and self.relation.lower()
                                         not in self.rewrite.lower() else [])
        return " ".join(p for p in parts if p).strip()


# --- deterministic pieces ----------------------------------------------------------------
# Openers that mark a follow-up even when the turn names something new ("and for Spain?").
_FOLLOW_UP_OPENERS = ("and ", "and?", "what about", "how about", "what of", "also", "same for", "then ")
# Openers of ordinary questions: a follow-up only when the turn names nothing of its own ("Which teams?").
_QUESTION_OPENERS = ("which", "why", "how many", "how much", "when", "where", "who", "what")
_GREETINGS = {"hi", "hello", "hey", "thanks", "thank you", "good morning", "good evening", "bye", "ok", "okay",
              "cheers", "great", "cool"}
# Words that open a turn or fill it without naming anything: never an entity ("Now tell me about X.").
_DISCOURSE = {"now", "please", "hi", "hello", "hey", "thanks", "thank", "ok", "okay", "well", "so", "also", "tell",
              "explain", "describe", "yes", "no", "sure", "great", "cool", "next", "and", "but", "then", "just",
              "again", "instead", "hmm", "oh", "right", "alright", "anyway"}
# Openers that say the topic changes: a turn opening so and naming its own subject inherits nothing.
_TOPIC_SWITCH = re.compile(r"^\s*(?:now|next|instead|ok(?:ay)?,?\s+now|new question|another question|"
                           r"different question|let'?s talk about|switching to|moving on)\b", re.I)
_ASKS_ABOUT = re.compile(r"^\s*(?:(?:now|next|ok(?:ay)?|and|so|then)[,\s]+)?(?:please\s+)?(?:tell\s+me\s+(?:more\s+)?"
                         r"about|describe|give\s+me\s+an\s+overview\s+of|what\s+do\s+you\s+know\s+about)\b", re.I)
_CLAIM_OPENERS = re.compile(r"^\s*(is it true|is it correct|true or false|verify|check (whether|if|that)|"
                            r"claim\s*:|fact[- ]check|does the table (support|show)|according to the table)", re.I)
# Requests for facts or advice, by form: a question word, an auxiliary opening a question, or an imperative.
_REQUEST = re.compile(r"^\s*(?:(?:now|ok(?:ay)?|so|and|also|then|next|hi|hello|hey|please|well)[,!.]?\s+)*"
                      r"(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|"
                      r"should|would|will|shall|may|might|has|have|had|tell|explain|describe|list|show|give|find|"
                      r"name|define|compare|summari[sz]e|calculate|count|recommend|i (?:want|need|would like|'d like)"
                      r" to know)\b", re.I)
_ADVICE = re.compile(r"\b(should i|can i|may i|is it safe|how (?:much|many|often|long)|dose|dosage|recommend|"
                     r"advice|advise|side effects?)\b", re.I)
_OPTION_RE = re.compile(r"(?:^|\s|\n)\(?([A-Ha-h])[\).:]\s+(.+?)(?=(?:\s|\n)\(?[A-Ha-h][\).:]\s+|$)", re.S)
_NUMBERED_RE = re.compile(r"(?:^|\s|\n)\(?([1-9])[\).]\s+(.+?)(?=(?:\s|\n)\(?[1-9][\).]\s+|$)", re.S)
# An inline choice "X, Y or Z" counts when the form marks it as the set to choose from: after a colon, after
# "which of / between / among / either / is it", or after the comma of a comparing which-clause ("Which is
# larger, the sun or the moon?"). "What drugs treat anxiety, depression or insomnia?" lists no options.
_CHOICE_INTRO = re.compile(r"(?::|\b(?:which of(?: these| the following)?|between|among|either|is it|was it|"
                           r"are they)\b)\s*(?P<list>[^:?]+?)\s*\??\s*$", re.I)
_COMPARING = re.compile(r"^\s*(?:which|who)\b[^,]*\b(?:larger|smaller|bigger|higher|lower|greater|longer|shorter|"
                        r"faster|slower|heavier|lighter|older|younger|better|worse|more|less|best|worst|most|least|"
                        r"one|\w+er than)\b[^,]*,\s*(?P<list>[^?]+?)\s*\??\s*$", re.I)
_ASKED_KIND = re.compile(r"^\s*(?:what|which)\s+([A-Za-z][\w-]*)\b", re.I)
_GOES_ON = re.compile(r"\s+(?:is|are|was|were|has|have|does|do|did|can|could|should|would|will)\b", re.I)
_WORD = re.compile(r"[A-Za-z0-9][\w'\-]*")
_STOP = {"the", "a", "an", "of", "in", "on", "for", "to", "and", "or", "is", "are", "was", "were", "did", "do",
         "does", "what", "which", "who", "whom", "when", "where", "why", "how", "with", "by", "at", "from", "as",
         "be", "been", "it", "that", "this", "there", "about", "than", "then", "me", "i", "you", "can", "could",
         "would", "should", "tell", "many", "much", "also", "any", "all", "some", "more", "most", "other",
         "so", "if", "not", "no", "yes", "true", "false", "table", "s"}


def _listed_options(message: str) -> list[re.Match]:
    """The matches of the lettered list (``A) x B) y``), else of the numbered one (``1) x 2) y``), when its labels
    run on from "A" or "1"; else [] (an "a) " in prose is no list). :func:`extract_options` reads their texts,
    :func:`question_stem` cuts the message before them."""
    for pattern, first in ((_OPTION_RE, "A"), (_NUMBERED_RE, "1")):
        found = list(pattern.finditer(message))
        if len(found) >= 2 and [m.group(1).upper() for m in found] == [chr(ord(first) + i) for i in range(len(found))]:
            return found
    return []


def _inline_choice(message: str) -> list[str]:
    text = " ".join(message.split())
    if not text.endswith("?") and not re.match(r"\s*(?:which|who|what|is|was|are|were|does|did|do)\b", text, re.I):
        # A statement is no choice: "Deaths in Ghana fell between 2020 and 2021." (found as a new user) had
        # 2020 and 2021 as options and went to table QA instead of the claim check.
        return []
    m = _CHOICE_INTRO.search(text) or _COMPARING.match(text)
    if not m:
        return []
    body = m.group("list")
    joiner = r"\s+and\s+" if re.search(r"\bbetween\b", text[:m.start("list")], re.I) else r"\s+or\s+"
    if "and" in joiner and _CONTRAST.search(text[:m.start("list")]):
        # "What is the difference in beds between Surgery and the ICU?" asks how they differ, not which one: found
        # as a new user, the options Surgery and ICU made it a choice, answered "Surgery" from invented figures
        return []
    if not re.search(joiner, body):
        return []
    items = [i.strip(" ,;.") for i in re.split(rf",\s*(?:or\s+|and\s+)?|{joiner}", body)]
    items = [i for i in items if i]
    if items:  # "Which of A, B or C is an NSAID?": the question goes on after the last option
        items[-1] = _GOES_ON.split(items[-1], maxsplit=1)[0].strip()
    if "and" in joiner and (all(re.fullmatch(r"[$€£]?[-−]?\d[\d,.]*%?", i) for i in items)
                            or all(_is_period(i) for i in items) and not _COMPARES.search(text)
                            or _AMOUNT.match(text)):
        # "between 2022 and 2023" spans two years (or values), it offers no choice: found as a new user, "How much did
        # coverage in Kenya change between 2022 and 2023?" got the options 2022 and 2023, and the answer "2023".
        # So do two periods, and an amount asked for over any span: "How many units were sold between March and
        # May?" got the options March and May, and the answer "May" (found as a new user).
        return []
    return items if len(items) >= 2 and all(len(i.split()) <= 6 for i in items) else []


_CONTRAST = re.compile(r"\b(?:differences?|differ|distinguish(?:es)?|compare|contrast)\b", re.I)
# "Which month sold more, between March and May?" still chooses between two periods.
_COMPARES = re.compile(r"\b(?:more|less|fewer|larger|smaller|bigger|higher|lower|greater|longer|shorter|faster|"
                       r"slower|heavier|lighter|older|younger|better|worse|earlier|later)\b", re.I)
# An amount asked over a span: not "What is the difference between a virus and a bacterium?" (a contrast).
_AMOUNT = re.compile(r"\s*(?:how\s+(?:many|much)|what\s+(?:is|was|were|are)\s+the\s+(?:total|sum|average|mean|"
                     r"number|amount)|what\s+(?:total|average))\b", re.I)


def _is_period(text: str) -> bool:
    """A month ("March", "Mar 2024"), a quarter ("Q3", "third quarter of 2021") or a date: a point on a calendar."""
    words = text.casefold().replace(",", " ").split()
    if words and words[0].rstrip(".") in MONTHS and all(w.isdigit() for w in words[1:]):
        return True
    whole = text.strip()
    return any(q.start == 0 and q.phrase_end == len(whole) and (q.year is None or q.year.value >= EARLIEST_YEAR)
               for q in read(whole).quarters) or parse_date(text, year_alone=True) is not None


def extract_options(message: str) -> list[str]:
    """Answer options the message itself lists, in order: ``A) x B) y``, ``(A) x``, ``A. x`` lines,
    ``1) x 2) y`` or ``1. x`` lines, or an inline choice ("Which is larger, the sun or the moon?")."""
    return [m.group(2).strip().rstrip(",;") for m in _listed_options(message)] or _inline_choice(message)


def question_stem(message: str) -> str:
    """The message without the lettered or numbered option list it writes ("Which …? A) x B) y" -> "Which …?");
    unchanged when it lists none (an inline "X or Y" stays: it is part of the question's sentence)."""
    listed = _listed_options(message)
    return (message[:listed[0].start()].strip() if listed else "") or message.strip()


def content_words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if w.lower() not in _STOP | _DISCOURSE and len(w) > 1}


def names_something(entity: str) -> bool:
    """More than question, pronoun and discourse words ("Now", "Tell me" are not entities)."""
    return any(w.lower() not in _STOP | PRONOUNS | _DISCOURSE for w in _WORD.findall(entity))


def capitalized_phrases(text: str) -> list[str]:
    """Rough proper-noun phrases (rules fallback when the model is unavailable)."""
    phrases = re.findall(r"\b(?:[A-Z][\w'\-]*|[A-Z]{2,})(?:\s+(?:[A-Z][\w'\-]*|of|de|van|von))*", text)
    out = []
    for p in phrases:
        words = p.split()
        while words and not names_something(words[0]):
            words = words[1:]
        p = " ".join(words)
        if p and p not in out:
            out.append(p)
    return out


def leans_on_a_pronoun(message: str, own_entities: list[str]) -> bool:
    """A pronoun that can only point back to an earlier turn: not the "it" of "is it true/safe…", and not
    one after a thing the message names itself ("How do plants make their food?")."""
    text = EXPLETIVE_IT.sub(" ", message.lower())
    named_at = [i for i in (text.find(e.lower()) for e in own_entities if e) if i >= 0]
    first_named = min(named_at) if named_at else len(text)
    return any(m.group(0) in PRONOUNS and m.start() < first_named for m in _WORD.finditer(text))


def looks_elliptical(message: str, own_entities: list[str]) -> bool:
    """A turn that leans on earlier context: short, anaphoric, or opening like a follow-up."""
    low = message.strip().lower()
    anaphoric = leans_on_a_pronoun(message, own_entities)
    opener = low.startswith(_FOLLOW_UP_OPENERS)
    short = len(content_words(message)) <= 3
    if own_entities and not anaphoric:
        if _TOPIC_SWITCH.match(message):
            return False  # "Now tell me about epilepsy.": says it changes the topic, and names the new one
        if any(any(ch.isupper() for ch in e) for e in own_entities):
            # It names things of its own: a follow-up only if it is tiny and opens like one ("and for Spain?").
            return opener and short
        # Only common nouns ("Who is at risk?" with entity "risk"): a bare question still leans on context.
        return opener or len(content_words(message)) <= 2
    return anaphoric or opener or short or low.startswith(_QUESTION_OPENERS) and len(content_words(message)) <= 4


def asks_table_by_columns(message: str, table_columns: Sequence[Sequence[str]]) -> bool:
    """Does the message ask a loaded table something whole, in its own column words: two of one table's headers,
    or one with a superlative, and no pronoun or follow-up opener?

    Found as a new user: after a claim about dacomitinib and gefitinib, "Which trial enrolled the most patients?"
    was read as a short follow-up, searched "(regarding dacomitinib, gefitinib)", and the table program kept
    those two rows and named FLAURA-comp (277) instead of FLAURA (279).
    """
    if not table_columns or message.strip().lower().startswith(_FOLLOW_UP_OPENERS) \
            or leans_on_a_pronoun(message, []):
        return False
    words = content_words(message)
    superlative = is_superlative(message)
    for columns in table_columns:
        named = sum(1 for header in columns
                    if any(related(h, w) for h in content_words(str(header)) if len(h) > 2 for w in words))
        if named >= 2 or named == 1 and superlative:
            return True
    return False


def is_greeting(message: str) -> bool:
    low = message.strip().lower().strip("!.? ")
    if low in _GREETINGS:
        return True
    return (len(low.split()) <= 3 and any(low.startswith(g) for g in _GREETINGS)
            and not message.strip().endswith("?") and not _ADVICE.search(message))


def asks_for_information(message: str) -> bool:
    """A question or request for facts or advice, by its form (such a message is never chit-chat)."""
    text = message.strip()
    return text.endswith("?") or bool(_REQUEST.match(text)) or bool(_ADVICE.search(text))


def settled_task(message: str, options: list[str], has_table: bool) -> str | None:
    """The task where the message's form settles it; None where only the model can tell."""
    text = message.strip()
    if text.startswith("/"):
        return "command"
    if is_greeting(text):
        return "chit_chat"
    if options:
        return "table_question" if has_table else "multiple_choice"
    if _CLAIM_OPENERS.search(text):
        return "claim_check"
    if has_table:
        # Beside a table the planner routes by matching the message against it (tools.lang.routing); the
        # label only separates statements to check from requests.
        if not text.endswith("?") and not _REQUEST.match(text):
            return "claim_check"
        return "table_question" if "table" in text.lower() else "question"
    if asks_for_information(text):
        return "question"
    return None


def rule_task(message: str, options: list[str], has_table: bool) -> str:
    """The task by rules alone (the fallback when the model is unavailable)."""
    return settled_task(message, options, has_table) or "question"


def keeps_content(message: str, rewrite: str) -> bool:
    """Every content word of the message (or its 4-letter stem) survives in the rewrite."""
    have = {w[:4] for w in content_words(rewrite)}
    return all(w[:4] in have for w in content_words(message) if w not in PRONOUNS)


def asked_kind(message: str) -> str:
    """The noun a wh-question asks for ("What drugs treat X?" -> "drugs"): the answer's type, not an entity."""
    m = _ASKED_KIND.match(message)
    return m.group(1).lower() if m and m.group(1).lower() not in _STOP | _DISCOURSE else ""


_LIST_VERB = re.compile(r"^\s*(?:what|which)\s+[A-Za-z][\w-]*\s+(?:(?:also|commonly|usually|often)\s+)?"
                        r"([A-Za-z][\w-]*)", re.I)
_AUX = {"is", "are", "was", "were", "can", "could", "do", "does", "did", "may", "might", "should", "will", "would",
        "have", "has", "had"}


# "How is glaucoma treated?", "How do doctors treat COPD?": nothing after the verb (its object aside), since a
# qualifier ("… in children with kidney failure?") asks about more than what treats the disease.
_HOW_TREATED = re.compile(r"^\s*how\s+(?:(?:is|are|can|should)\s+[^?]{1,60}?\s+(?:treated|managed|cured)|"
                          r"do\s+(?:you|doctors|physicians)\s+(?:treat|manage|cure)\s+[\w'’ -]{1,60}?)\s*\??\s*"
                          r"(?:\(regarding[^)]*\))?\s*$", re.I)
_OPENING = re.compile(r"^\s*(?:and|so|then|also|now|ok(?:ay)?|well)\b[\s,]*", re.I)


def asks_for_list(message: str, relation: str) -> bool:
    """Whether the message asks for the things that stand in ``relation`` to its entity ("What drugs treat
    glaucoma?", "Which genes are associated with asthma?", a follow-up's "And which genes are associated with
    it?"): a what/which noun followed by an auxiliary or by the relation's verb. Not "What causes glaucoma?" (the
    word after "causes" is the entity), nor a follow-up's "Which of those drugs…" (no asked noun). With no
    relation phrase (the intent often leaves it empty on a follow-up), only the auxiliary form counts."""
    message = _OPENING.sub("", message, count=1)
    if _HOW_TREATED.match(message):  # "How is glaucoma treated?": by the things that treat it
        return True
    if not asked_kind(message):
        return False
    m = _LIST_VERB.match(message)
    if not m:
        return False
    word = m.group(1).lower()
    rel = [w.lower() for w in _WORD.findall(relation)]
    return word in _AUX or bool(rel and word[:4] == rel[0][:4])


def adds_only(message: str, rewrite: str, entities: list[str]) -> bool:
    """The rewrite adds no content word (by its 4-letter stem) beyond the message's and the entities'
    ("How is it treated?" must not become "What are the symptoms of glaucoma? How is it treated?")."""
    allowed = {w[:4] for w in content_words(" ".join([message, *entities]))}
    return all(w[:4] in allowed for w in content_words(rewrite))


# The answer's type where the question's form names it (QUASAR's expected answer type).
_TYPE_BY_OPENER = (
    (re.compile(r"^\s*(?:who|whom|whose)\b", re.I), "person"),
    (re.compile(r"^\s*(?:when|what year|in what year|which year)\b", re.I), "date"),
    (re.compile(r"^\s*where\b", re.I), "place"),
    (re.compile(r"^\s*how (?:many|much)\b", re.I), "number"),
    (re.compile(r"^\s*(?:is|are|was|were|do|does|did|can|could|should|has|have|had|will|would)\b", re.I), "yes/no"),
)
_TIME_CUE = re.compile(r"\b(?:(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
                       r"sep(?:tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?\s+(?:\d{1,2},?\s+)?)?"
                       r"(?:1[5-9]\d\d|20\d\d)s?\b", re.I)


def answer_type_of(message: str) -> list[str]:
    """The expected answer type by the question's form: the noun a what/which question asks for
    ("What drugs treat X?" -> drug), else its opener (who -> person, when -> date, where -> place,
    how many -> number, an auxiliary -> yes/no); [] when the form does not say."""
    kind = asked_kind(message)
    if kind:
        return [singular(kind)]
    return [label for pattern, label in _TYPE_BY_OPENER if pattern.match(message)][:1]


def time_cue(message: str) -> str:
    """Years and dates the message writes ("in 2011", "March 2020", "the 1990s"), joined; "" when none."""
    return ", ".join(m.group(0) for m in _TIME_CUE.finditer(message))


def ground_entities(entities: list[str], message: str, history_entities: list[str]) -> list[str]:
    """Keep an entity only if the message or an earlier frame contains it (no invented entities) and it
    names something (not "Now" or "Tell me", nor the kind of thing asked for: "drugs" in "What drugs…?")."""
    low = message.lower()
    hist = {h.lower(): h for h in history_entities}
    kind = asked_kind(message)
    out: list[str] = []
    for e in entities:
        e = e.strip()
        if not e or e.lower() == kind:
            continue
        if (e.lower() in low or e.lower() in hist) and names_something(e):
            if e not in out:
                out.append(e)
    return out


# "a plastic one", "the red ones": a modifier and the pronoun "one" standing for a noun said earlier.
_MODIFIED_ONE = re.compile(r"\b(?:a|an|the)\s+([a-z][a-z\-]+(?:\s+[a-z][a-z\-]+)?)\s+ones?\b", re.I)
_NOT_MODIFIERS = {"other", "first", "second", "third", "last", "next", "previous", "same", "only", "right", "wrong",
                  "best", "worst", "former", "latter", "each", "every", "which", "this", "that", "any", "no"}


def noun_for_one(message: str, earlier: list[str]) -> tuple[str, str] | None:
    """("plastic spoon", the message saying it) when "a plastic one" stands for the noun the earlier entities
    share ("metal spoon", "wooden spoon"), else None.

    Seen on the chat bench: "And what about a plastic one?" after a question about metal and wooden spoons kept
    only the spoons it did not ask about, and retrieval found plastic knives.
    """
    m = _MODIFIED_ONE.search(message)
    if not m or not earlier:
        return None
    modifier = m.group(1)
    if modifier.split()[0].lower() in _NOT_MODIFIERS:
        return None
    heads = {e.split()[-1].lower() for e in earlier if e.split()}
    if len(heads) != 1:
        return None  # the earlier entities share no one noun for "one" to stand for
    noun = next(e.split()[-1] for e in earlier if e.split())
    if m.group(0).lower().endswith("ones") and not noun.lower().endswith("s"):
        noun += "s"
    entity = f"{modifier} {noun}"
    return entity, message[:m.start(1)] + entity + message[m.end():]


def previous_question(turn: dict) -> str:
    """The earlier turn's question as it was searched: its rewrite, unless that only appended a "regarding" note."""
    rewrite = (turn.get("rewrite") or "").strip()
    return rewrite if rewrite and REGARDING_NOTE.format("").rstrip(")") not in rewrite else turn.get("user_text") or ""


def contextualize(frame: IntentFrame, message: str, history: list[dict], *, has_table: bool,
                  source: str, table_columns: Sequence[Sequence[str]] = ()) -> Output:
    """Ground the frame and carry entities over for elliptical follow-ups. ``table_columns``: the headers of each
    table loaded in the conversation (a question in their words is whole: :func:`asks_table_by_columns`)."""
    history_entities: list[str] = []
    for turn in history:
        for e in (turn.get("intent") or {}).get("entities", []):
            if e not in history_entities:
                history_entities.append(e)
    entities = ground_entities(frame.entities, message, history_entities)
    # Entities the message itself names (the model may have copied old ones in).
    own = [e for e in entities if e.lower() in message.lower()]
    if not own:
        own = [p for p in capitalized_phrases(message) if p.lower() not in {h.lower() for h in history_entities}]
    # Options are the message's own (a model once invented five for "Now tell me about X.").
    options = extract_options(message)
    # Rules settle the task where the form does; the model's label decides only what is left, and never
    # as multiple choice (no options), a command (no "/") or a table question (no table).
    task = settled_task(message, options, has_table) or (frame.task if frame.task in MODEL_TASKS else "question")

    carried: list[str] = []
    follow_up = False
    last = history[-1] if history else {}
    last_entities = (last.get("intent") or {}).get("entities", [])
    if history and task not in ("chit_chat", "command") and looks_elliptical(message, own) \
            and not asks_table_by_columns(message, table_columns):
        follow_up = True
        # Memory's entities are the most recent frame that has any (a frame carries its own earlier ones). The
        # model copies older ones in: after "What drugs treat multiple sclerosis?", "What are its symptoms?" and
        # "Now tell me about asthma.", it wrote "Which drugs treat it?" as "… treat multiple sclerosis and
        # asthma?", and the reply listed drugs joined to both (seen as a new user).
        recent = recent_entities(history)
        recent_low = {e.lower() for e in recent}
        entities = [e for e in entities if e.lower() in message.lower() or e.lower() in recent_low]
        for e in recent:
            if e.lower() not in {x.lower() for x in entities}:
                entities.append(e)
        # Whatever the turn does not name itself came from memory, whether the model or the rule put it there.
        carried = [e for e in entities if e.lower() not in message.lower()]
    else:
        # A self-contained turn keeps only what it names itself.
        entities = [e for e in entities if e.lower() in message.lower()] or own

    # A self-contained turn is its own rewrite (a model once rewrote "Now tell me about epilepsy." into
    # "What drugs treat epilepsy? What are its symptoms?"); a follow-up's may add only the entities it leans on.
    rewrite = (frame.rewrite or "").strip() if follow_up else ""
    rewrite = rewrite if rewrite and adds_only(message, rewrite, entities) else message.strip()
    if not keeps_content(message, rewrite):
        # Small models sometimes "rewrite" a follow-up into the previous question ("when did he leave?"
        # became "when did he join?"): a rewrite must keep what this turn asks.
        rewrite = message.strip()
    # "And what about a plastic one?": the new thing is named by the noun the earlier entities share.
    one = noun_for_one(message, last_entities) if follow_up else None
    said = message.strip()
    if one:
        entities = [one[0]] + [e for e in entities if e.lower() != one[0].lower()]
        said = one[1].strip()
        rewrite = said if rewrite == message.strip() else rewrite
    # "Why is it renewable?" after "What is an example of a renewable energy source?" / "Wind is …": "it" is wind.
    # The earlier question as searched: a swapped "What about a fossil fuel?" asked "What is an example of a fossil
    # fuel?", which asks for one thing though its words do not.
    named = follow_up and not one and answer_subject(
        previous_question(last), last.get("answer") or "", last.get("status") or "")
    resolved = None
    if named and leans_on_a_pronoun(message, own):
        resolved = with_subject(message, named, EXPLETIVE_IT)
        if resolved:
            entities = [named] + [e for e in own if e.lower() != named.lower()]
            carried, rewrite = [named], resolved
    # "And of the ribosomes?" after "What is the function of the mitochondria?": that question, of the ribosomes.
    swap = follow_up and not one and not resolved and swapped_question(message, previous_question(last), last_entities)
    if swap:
        rewrite, entities, carried = swap[0], [swap[1]], []
    if carried and not all(e.lower() in rewrite.lower() for e in carried):
        rewrite = f"{said}{REGARDING_NOTE.format(', '.join(entities))}"
    # A follow-up's relation must be its own words: the model carried "treats" from "What drugs treat Parkinson's
    # disease?" into "What are its symptoms?", and relation-aware retrieval then filled the pool with drug facts.
    relation = frame.relation
    if swap:
        # The previous question asked again: its relation too ("And for epilepsy?" after "What drugs treat asthma?"
        # came back with none, so no list of facts was made and the model wrote one from ConceptNet noise).
        relation = (last.get("intent") or {}).get("relation", "") or relation
    elif follow_up and relation and not ({w[:4] for w in content_words(relation)}
                                         & {w[:4] for w in content_words(message)}):
        relation = ""
    elif _ASKS_ABOUT.match(message):
        # "Now tell me about asthma." asks for no one relation: the model gave it "treats" (seen as a new user), and
        # the reply listed drugs where a description was asked for.
        relation = ""
    # The answer type and time are read from the turn's form, never invented ("2003" for "when did…?"). No
    # rule reads a place reliably ("in Parkinson's disease"), so location stays empty unless a frame brings
    # one that the message writes (a caller's own frame; nothing downstream reads it yet).
    place_cue = frame.location if frame.location and frame.location.lower() in message.lower() else ""
    return Output(task=task, answer_type=answer_type_of(message), entities=entities, relation=relation,
                  time=time_cue(message), location=place_cue, options=options, rewrite=rewrite,
                  carried_over=carried, follow_up=follow_up, source=source)


_ASKING_TASKS = ("question", "table_question", "claim_check", "multiple_choice")


def recent_entities(history: list[dict]) -> list[str]:
    """What a follow-up may lean on: the entities of the latest turn that named any or that asked or claimed
    something (a "Thanks!" between is passed over), which may be none.

    A turn that named nothing moved the conversation on: after "VaxB's efficacy is higher than VaxE's.", then
    "Which vaccine had the lowest rate of fever?" and a claim about every vaccine, "How many participants were
    there in total?" carried VaxB and VaxE from three turns back, and the table program summed their two rows
    (1,830 of 5,070; found as a new user). The latest frame with entities was taken before."""
    for turn in reversed(history):
        frame = turn.get("intent") or {}
        entities = list(frame.get("entities", []))
        task = frame.get("task")
        asked = task in _ASKING_TASKS if task else asks_for_information(turn.get("user_text") or "")
        if entities or asked:
            return entities
    return []


def rules_frame(message: str, has_table: bool) -> IntentFrame:
    options = extract_options(message)
    return IntentFrame(task=rule_task(message, options, has_table), entities=capitalized_phrases(message),
                       options=options, rewrite=message.strip())


def history_for_prompt(history: list[dict]) -> list[dict]:
    return [{"user": t["user_text"], "rewrite": t.get("rewrite") or t["user_text"],
             "entities": (t.get("intent") or {}).get("entities", [])} for t in history]


@tool("intent", offer_to_model=False)
async def intent(ctx: ToolContext, args: Input) -> Output:
    """Parse the user's turn into a structured intent frame, using the conversation so far."""
    # Ended turns only: the turn being answered is already stored as running.
    history = ctx.deps.memory.turns(ctx.session.conversation_id, limit=3, finished=True)
    has_table = bool(ctx.session.tables)
    table_columns = [list(t.columns) for t in ctx.session.tables.values()]
    settled = settled_task(args.message, extract_options(args.message), has_table)
    if settled in ("chit_chat", "command"):
        # A greeting, thanks or a command: nothing for a model to add (issue 15: skip what a rule settles).
        out = contextualize(rules_frame(args.message, has_table), args.message, history, has_table=has_table,
                            source="rules", table_columns=table_columns)
        out.note = "settled by rules; no model call"
        return out
    ask_task = settled is None
    ask_rewrite = bool(history) and looks_elliptical(args.message, capitalized_phrases(args.message)) \
        and not asks_table_by_columns(args.message, table_columns)
    messages = [
        {"role": "system", "content": render("intent_system", ask_task=ask_task, ask_rewrite=ask_rewrite)},
        {"role": "user", "content": render("intent_user", message=args.message,
                                           history=history_for_prompt(history) if ask_rewrite else [],
                                           has_table=has_table, tables=list(ctx.session.tables))},
    ]
    try:
        wire = await ctx.deps.llm.structured(messages, compact_schema(ask_task, ask_rewrite), max_tokens=120,
                                             name="intent")
        frame = wire.frame(getattr(wire, "task", None) or settled or "question", args.message)
        source = "model"
        note = ""
    except LLMResponseError as exc:
        # A malformed frame must not stop the turn: fall back to rules and say so in the step.
        log.warning("intent frame rejected: %s", exc)
        frame, source, note = rules_frame(args.message, has_table), "rules", f"model frame rejected: {exc}"
    out = contextualize(frame, args.message, history, has_table=has_table, source=source,
                        table_columns=table_columns)
    out.note = note
    return out
