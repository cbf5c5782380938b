"""Structured intent (QUASAR's question understanding), contextualized with conversation memory.

The model fills an :class:`IntentFrame` under a JSON schema. Code then grounds it: an entity
survives only if it occurs in this message or in an earlier turn's frame, options are also read
deterministically, and an elliptical follow-up ("Which teams?") inherits the entities of the
previous turns while a message that names new things of its own (a topic switch) does not.
"""

from __future__ import annotations

import logging
import re
from typing import Literal

from pydantic import BaseModel, Field

from assistant.llm import LLMResponseError
from assistant.prompts import render
from tools._registry import ToolContext, tool

log = logging.getLogger(__name__)

TaskKind = Literal["question", "claim_check", "table_question", "multiple_choice", "chit_chat", "command"]


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
_ANAPHORA = {"he", "she", "it", "they", "them", "those", "these", "that", "this", "his", "her", "its",
             "their", "him"}
# Openers that mark a follow-up even when the turn names something new ("and for Spain?").
_FOLLOW_UP_OPENERS = ("and ", "and?", "what about", "how about", "what of", "also", "same for", "then ")
# Openers of ordinary questions: a follow-up only when the turn names nothing of its own ("Which teams?").
_QUESTION_OPENERS = ("which", "why", "how many", "how much", "when", "where", "who", "what")
_GREETINGS = {"hi", "hello", "hey", "thanks", "thank you", "good morning", "good evening", "bye", "ok", "okay",
              "cheers", "great", "cool"}
_CLAIM_OPENERS = re.compile(r"^\s*(is it true|is it correct|true or false|verify|check (whether|if|that)|"
                            r"claim\s*:|fact[- ]check|does the table (support|show)|according to the table)", re.I)
_OPTION_RE = re.compile(r"(?:^|\s|\n)\(?([A-Ha-h])[\).:]\s+(.+?)(?=(?:\s|\n)\(?[A-Ha-h][\).:]\s+|$)", re.S)
_WORD = re.compile(r"[A-Za-z0-9][\w'\-]*")
_STOP = {"the", "a", "an", "of", "in", "on", "for", "to", "and", "or", "is", "are", "was", "were", "did", "do",
         "does", "what", "which", "who", "whom", "when", "where", "why", "how", "with", "by", "at", "from", "as",
         "be", "been", "it", "that", "this", "there", "about", "than", "then", "me", "i", "you", "can", "could",
         "would", "should", "tell", "many", "much", "also", "any", "all", "some", "more", "most", "other",
         "so", "if", "not", "no", "yes", "true", "false", "table", "s"}


def extract_options(message: str) -> list[str]:
    """Answer options written as ``A) x B) y``, ``(A) x (B) y`` or ``A. x`` lines, in order."""
    found = _OPTION_RE.findall(message)
    letters = [f[0].upper() for f in found]
    # Only a run starting at A with consecutive letters counts (avoids "a) " inside prose).
    if len(found) >= 2 and letters == [chr(ord("A") + i) for i in range(len(found))]:
        return [text.strip().rstrip(",;") for _, text in found]
    return []


def content_words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if w.lower() not in _STOP and len(w) > 1}


def capitalized_phrases(text: str) -> list[str]:
    """Rough proper-noun phrases (rules fallback when the model is unavailable)."""
    phrases = re.findall(r"\b(?:[A-Z][\w'\-]*|[A-Z]{2,})(?:\s+(?:[A-Z][\w'\-]*|of|de|van|von))*", text)
    out = []
    for p in phrases:
        words = p.split()
        if len(words) == 1 and words[0].lower() in _STOP | _ANAPHORA:
            continue
        if words[0].lower() in _STOP | _ANAPHORA:
            p = " ".join(words[1:])
        if p and p not in out:
            out.append(p)
    return out


def looks_elliptical(message: str, own_entities: list[str]) -> bool:
    """A turn that leans on earlier context: short, anaphoric, or opening like a follow-up."""
    low = message.strip().lower()
    words = [w.lower() for w in _WORD.findall(message)]
    anaphoric = any(w in _ANAPHORA for w in words)
    opener = low.startswith(_FOLLOW_UP_OPENERS)
    short = len(content_words(message)) <= 3
    if own_entities and not anaphoric:
        if any(any(ch.isupper() for ch in e) for e in own_entities):
            # It names things of its own: a follow-up only if it is tiny and opens like one ("and for Spain?").
            return opener and short
        # Only common nouns ("Who is at risk?" with entity "risk"): a bare question still leans on context.
        return opener or len(content_words(message)) <= 2
    return anaphoric or opener or short or low.startswith(_QUESTION_OPENERS) and len(content_words(message)) <= 4


def rule_task(message: str, options: list[str], has_table: bool) -> str:
    low = message.strip().lower().strip("!.? ")
    if message.strip().startswith("/"):
        return "command"
    if low in _GREETINGS or (len(low.split()) <= 3 and any(low.startswith(g) for g in _GREETINGS)):
        return "chit_chat"
    if options:
        return "table_question" if has_table else "multiple_choice"
    if _CLAIM_OPENERS.search(message) or (has_table and not message.strip().endswith("?")):
        return "claim_check"
    return "table_question" if has_table and "table" in low else "question"


def keeps_content(message: str, rewrite: str) -> bool:
    """Every content word of the message (or its 4-letter stem) survives in the rewrite."""
    have = {w[:4] for w in content_words(rewrite)}
    return all(w[:4] in have for w in content_words(message) if w not in _ANAPHORA)


def ground_entities(entities: list[str], message: str, history_entities: list[str]) -> list[str]:
    """Keep an entity only if the message or an earlier frame contains it (no invented entities)."""
    low = message.lower()
    hist = {h.lower(): h for h in history_entities}
    out: list[str] = []
    for e in entities:
        e = e.strip()
        if not e:
            continue
        if e.lower() in low or e.lower() in hist:
            if e not in out:
                out.append(e)
    return out


def contextualize(frame: IntentFrame, message: str, history: list[dict], *, has_table: bool,
                  source: str) -> Output:
    """Ground the frame and carry entities over for elliptical follow-ups."""
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
    options = frame.options or extract_options(message)
    options = [o for o in options if o.strip()]
    task = frame.task
    det_task = rule_task(message, options, has_table)
    if det_task in ("chit_chat", "command", "multiple_choice") or (options and task not in ("multiple_choice", "table_question")):
        task = det_task
    if task == "claim_check" and not has_table and det_task == "question":
        task = "question"

    carried: list[str] = []
    follow_up = False
    if history and task not in ("chit_chat", "command") and looks_elliptical(message, own):
        follow_up = True
        # Inherit the most recent frame's entities (which themselves carry earlier ones).
        for e in (history[-1].get("intent") or {}).get("entities", []):
            if e.lower() not in {x.lower() for x in entities}:
                entities.append(e)
        # Whatever the turn does not name itself came from memory, whether the model or the rule put it there.
        carried = [e for e in entities if e.lower() not in message.lower()]
    else:
        # A self-contained turn keeps only what it names itself.
        entities = [e for e in entities if e.lower() in message.lower()] or own

    rewrite = (frame.rewrite or "").strip() or message.strip()
    if not keeps_content(message, rewrite):
        # Small models sometimes "rewrite" a follow-up into the previous question ("when did he leave?"
        # became "when did he join?"): a rewrite must keep what this turn asks.
        rewrite = message.strip()
    if carried and not all(e.lower() in rewrite.lower() for e in carried):
        rewrite = f"{message.strip()} (regarding {', '.join(entities)})"
    if not follow_up and history and rewrite != message.strip():
        # A self-contained turn: the model must not smuggle old entities into the rewrite.
        stale = [e for e in history_entities if e.lower() in rewrite.lower() and e.lower() not in message.lower()]
        if stale:
            rewrite = message.strip()
    # Time and place cues must be read from the turn, not invented ("2003" for "when did…?").
    time_cue = frame.time if frame.time and frame.time.lower() in message.lower() else ""
    place_cue = frame.location if frame.location and frame.location.lower() in message.lower() else ""
    return Output(task=task, answer_type=frame.answer_type, entities=entities, relation=frame.relation,
                  time=time_cue, location=place_cue, options=options, rewrite=rewrite,
                  carried_over=carried, follow_up=follow_up, source=source)


def rules_frame(message: str, has_table: bool) -> IntentFrame:
    options = extract_options(message)
    return IntentFrame(task=rule_task(message, options, has_table), entities=capitalized_phrases(message),
                       options=options, rewrite=message.strip(),
                       time=" ".join(re.findall(r"\b(1[5-9]\d\d|20\d\d)\b", message)))


def history_for_prompt(history: list[dict]) -> list[dict]:
    return [{"user": t["user_text"], "rewrite": t.get("rewrite") or t["user_text"],
             "entities": (t.get("intent") or {}).get("entities", [])} for t in history]


@tool("intent", offer_to_model=False)
async def intent(ctx: ToolContext, args: Input) -> Output:
    """Parse the user's turn into a structured intent frame, using the conversation so far."""
    # Ended turns only: the turn being answered is already stored as running.
    history = ctx.deps.memory.turns(ctx.session.conversation_id, limit=3, finished=True)
    has_table = bool(ctx.session.tables)
    messages = [
        {"role": "system", "content": render("intent_system")},
        {"role": "user", "content": render("intent_user", message=args.message,
                                           history=history_for_prompt(history), has_table=has_table,
                                           tables=list(ctx.session.tables))},
    ]
    try:
        frame = await ctx.deps.llm.structured(messages, IntentFrame, max_tokens=160)
        source = "model"
        note = ""
    except LLMResponseError as exc:
        # A malformed frame must not stop the turn: fall back to rules and say so in the step.
        log.warning("intent frame rejected: %s", exc)
        frame, source, note = rules_frame(args.message, has_table), "rules", f"model frame rejected: {exc}"
    out = contextualize(frame, args.message, history, has_table=has_table, source=source)
    out.note = note
    return out
