"""The deterministic plan: where the intent makes the route clear, no model call picks tools.

The 1.5B default model never volunteers tool calls, so every clear intent has a route here.
``None`` means "unclear": the loop lets the model choose under ``tool_choice="required"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assistant.session import Session
from assistant.settings import Settings


@dataclass
class PlannedCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


def plan(frame, session: Session, available: set[str], settings: Settings) -> list[PlannedCall] | None:
    task = frame.task
    query = frame.query()
    table = session.find_table(None)
    if task == "chit_chat":
        return []
    if task == "command":
        return None
    calls: list[PlannedCall] = []
    if table is not None and task in ("claim_check", "table_question") and not _names_other_source(frame):
        if task == "claim_check" and "verify_claim" in available:
            calls.append(PlannedCall("verify_claim", {"claim": frame.rewrite, "table": table.name}))
        elif "table_qa" in available:
            calls.append(PlannedCall("table_qa", {"question": frame.rewrite, "options": frame.options,
                                                  "table": table.name}))
        if calls:
            return calls
    if task == "multiple_choice" and frame.options and "mc_answer" in available:
        lettered = {chr(ord("A") + i): text for i, text in enumerate(frame.options)}
        calls.append(PlannedCall("mc_answer", {"question": frame.rewrite, "options": lettered}))
        if "kg_paths" in available:
            calls.append(PlannedCall("kg_paths", {"question": frame.rewrite, "options": frame.options,
                                                  "entities": frame.entities}))
        return calls
    if task in ("question", "claim_check", "multiple_choice", "table_question"):
        if "text_search" in available:
            calls.append(PlannedCall("text_search", {"query": query, "k": session.evidence_k or settings.evidence_k}))
        if "kg_paths" in available:
            calls.append(PlannedCall("kg_paths", {"question": frame.rewrite, "entities": frame.entities,
                                                  "options": frame.options}))
        # No evidence source at all: nothing for a model to choose either; the loop says why.
        return calls
    return None


def _names_other_source(frame) -> bool:
    """A question that clearly is not about the uploaded table (it says 'in the knowledge base')."""
    return "knowledge base" in frame.rewrite.lower()
