"""The deterministic plan: where the intent makes the route clear, no model call picks tools.

The 1.5B default model never volunteers tool calls, so every clear intent has a route here.
``None`` means "unclear": the loop lets the model choose under ``tool_choice="required"``.

Whether a message goes to an uploaded table is decided by matching it against the tables
(``tools.lang.routing``), not by the intent's task label alone: claims, "Is it true that …?" and
yes/no questions about a table go to ``verify_claim``, wh-questions to ``table_qa`` (issue 13).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tools.lang.routing import as_claim, claim_of_another, elliptical_extreme, route, scorable
from tools.contracts import Session
from assistant.settings import Settings
from tools.lang.choice import table_choice
from tools.intent import asks_for_list


# A follow-up about the last answer rather than its subject: "Which of those are approved?", "Do they interact?"
_POINTS_BACK = re.compile(r"\b(?:those|these|them|they|ones|the (?:above|same|list))\b", re.I)
_ALSO = re.compile(r"\b(?:also|both|too|as well|in addition)\b", re.I)


@dataclass
class PlannedCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


def plan(frame, session: Session, available: set[str], settings: Settings, *,
         embedder=None) -> list[PlannedCall] | None:
    task = frame.task
    query = frame.query()
    if task == "chit_chat":
        return []
    if task == "command":
        return None
    calls: list[PlannedCall] = []
    table_call = plan_table_call(frame, session, available, embedder=embedder)
    if table_call is not None:
        return [table_call]
    if task == "multiple_choice" and frame.options and "mc_answer" in available:
        lettered = {chr(ord("A") + i): text for i, text in enumerate(frame.options)}
        calls.append(PlannedCall("mc_answer", {"question": frame.rewrite, "options": lettered}))
        if "kg_paths" in available:
            calls.append(PlannedCall("kg_paths", {"question": frame.rewrite, "options": frame.options,
                                                  "entities": frame.entities, "relation": frame.relation}))
        return calls
    if task in ("question", "claim_check", "multiple_choice", "table_question"):
        if "text_search" in available:
            calls.append(PlannedCall("text_search", {"query": query, "k": session.evidence_k or settings.evidence_k}))
        if "kg_paths" in available:
            # "What drugs treat X?" is answered by the graph's facts themselves (cited by construction), and so
            # is a follow-up that asks for a list about its subject ("And which genes are associated with it?").
            # One that points back at the last answer ("which of those…") or a why/how question still goes to
            # the model with the whole pool. Found as a new user: the model named six genes citing four facts,
            # failed the support check twice and abstained, while 24 facts answered the follow-up.
            list_reply = (task == "question" and not frame.options
                          and not (frame.follow_up and _POINTS_BACK.search(frame.rewrite))
                          and asks_for_list(frame.rewrite, frame.relation))
            # "Which of those also treat asthma?" after "What drugs treat COPD?": the names joined to both entities
            # (the intent carries COPD over), composed by code as well. Found as a new user: the model listed four
            # asthma drugs of which one was among the COPD drugs.
            joint_reply = (task == "question" and not frame.options and len(frame.entities) >= 2 and frame.follow_up
                           and bool(_POINTS_BACK.search(frame.rewrite)) and bool(_ALSO.search(frame.rewrite)))
            calls.append(PlannedCall("kg_paths", {"question": frame.rewrite, "entities": frame.entities,
                                                  "options": frame.options, "relation": frame.relation,
                                                  "list_reply": list_reply, "joint_reply": joint_reply}))
        # No evidence source at all: nothing for a model to choose either; the loop says why.
        return calls
    return None


def plan_table_call(frame, session: Session, available: set[str], *, embedder=None) -> PlannedCall | None:
    """The table tool call for this turn, or None when the message is not about an uploaded table."""
    if not session.tables or _names_other_source(frame):
        return None
    if frame.task not in ("question", "claim_check", "table_question", "multiple_choice"):
        return None
    message = frame.rewrite
    last = getattr(session, "last_table_answer", None)
    if last is not None and last.kind == "claim" and last.table in session.tables and "verify_claim" in available \
            and (claim := claim_of_another(message, last.question, last.rows, session.tables[last.table])):
        # "And for myocardial infarction?" after a claim about stroke: that claim, of the row it names
        return PlannedCall("verify_claim", {"claim": claim, "table": last.table})
    if last is not None and last.kind == "question" and last.table in session.tables and "table_qa" in available \
            and (asked := elliptical_extreme(message, last.question)
                 or elliptical_extreme(message, last.extreme_question)) is not None:
        # "and the longest?" after "Which clinic has the shortest wait?": that question, the other way, same table
        # (or the last such question of that table, when the turns since asked for no extreme: "When was it
        # founded?"; found as a new user, "And the smallest?" then went to the text KB and answered "electron")
        return PlannedCall("table_qa", {"question": asked, "options": frame.options, "table": last.table})
    match = route(message, session.tables, embedder=embedder, previous=last.table if last else None)
    if match is not None:
        table = session.tables[match.name]
    else:
        # No table matches. The intent's word still counts where the router cannot judge: the message says
        # "the table" (table_question), or the table cannot be scored (no headers to match).
        table = session.find_table(None)
        if table is None or not (frame.task == "table_question"
                                 or frame.task == "claim_check" and not scorable(table)):
            return None
    claim = None if frame.options else as_claim(message)
    if claim is not None and table_choice(message, table) is not None:
        # "Did St. Mary's or Riverside open first?" has a yes/no form but asks which: found as a new user, it was
        # checked as the claim "St. Mary's opened first" and answered "Refuted". (Only a claim's form needs the
        # table scanned for the choice; a wh-question goes to table QA anyway.)
        claim = None
    if frame.task == "claim_check" and claim is None and not frame.options:
        claim = message  # the intent read a claim into it; check it as written
    if claim is not None and "verify_claim" in available:
        return PlannedCall("verify_claim", {"claim": claim, "table": table.name})
    if "table_qa" in available:
        return PlannedCall("table_qa", {"question": message, "options": frame.options, "table": table.name})
    return None


def _names_other_source(frame) -> bool:
    """A question that clearly is not about the uploaded table (it says 'in the knowledge base')."""
    return "knowledge base" in frame.rewrite.lower()
