"""The contracts between the app and the tools: evidence and its ids, the conversation's state a tool may see,
and what a tool is handed for one turn.

They sit here, in one leaf module that imports nothing from the tools or the app, because both sides use them: the
tools add evidence and read the session, the app checks citations against the same ids and keeps the session.

Evidence ids are the contract between tools, the answer and the citation check:

- ``S<n>``           a sentence (document, offsets, source);
- ``T<t>:R<r>C<c>``  a table cell (table number, 1-based row and column of the data grid);
- ``T<t>``           a whole (collapsed) table;
- ``P<n>``           a knowledge-graph path with its triples.

Ids are stable within a turn: adding the same sentence or path twice returns the first id.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from kb.text_store import SentenceHit

EvidenceKind = Literal["sentence", "cell", "table", "path"]

# An id is a citation only inside brackets: "[S1]", "[S1, S2]" or "(S1; T1:R2C3)". Bare ids in prose are
# words ("the spike S1 subunit", "P53"), not citations. Whole-table ids (T1) are matched so that the check can
# refuse them by name; cells are what an answer cites. The order matters (cells before tables).
_ID = r"(?:T\d+:R\d+C\d+|S\d+|P\d+|T\d+)"
CITATION_RE = re.compile(rf"\b({_ID})\b")
CITATION_GROUP_RE = re.compile(rf"[\[(]\s*({_ID}(?:\s*[,;]\s*{_ID})*)\s*[\])]")
TABLE_ID_RE = re.compile(r"T\d+")


class Evidence(BaseModel):
    id: str
    kind: EvidenceKind
    text: str = Field(description="What a person reads: the sentence, cell, or verbalized path.")
    source: str = Field(default="", description="Document title, file name, KG name…")
    score: float | None = None
    meta: dict[str, Any] = Field(default_factory=dict)


class EvidenceLedger:
    """Collects the evidence gathered during one turn and assigns ids."""

    def __init__(self) -> None:
        self._items: dict[str, Evidence] = {}
        self._keys: dict[tuple, str] = {}
        self._counters = {"S": 0, "P": 0, "T": 0}
        self._table_numbers: dict[str, int] = {}

    # -- adding -----------------------------------------------------------------------
    def _put(self, key: tuple, prefix: str, make) -> Evidence:
        if key in self._keys:
            return self._items[self._keys[key]]
        self._counters[prefix] += 1
        ev = make(f"{prefix}{self._counters[prefix]}")
        self._items[ev.id] = ev
        self._keys[key] = ev.id
        return ev

    def add_sentence(self, text: str, *, source: str, doc_id: str = "", sent_key: str = "",
                     score: float | None = None, **meta: Any) -> Evidence:
        key = ("S", sent_key or doc_id, text)
        return self._put(key, "S", lambda i: Evidence(
            id=i, kind="sentence", text=text, source=source, score=score,
            meta={"doc_id": doc_id, "sent_key": sent_key, **meta}))

    def add_kb_sentence(self, hit: SentenceHit, **meta: Any) -> Evidence:
        """Register a sentence from the text KB: one mapping for every reader of the store, so the same sentence
        found by search, by the multiple-choice tool or as a cited document's conclusion gets one id."""
        return self.add_sentence(hit.text, source=hit.title or hit.source, doc_id=hit.doc_id, sent_key=hit.sent_id,
                                 offsets=[hit.start, hit.end], license=hit.license, url=hit.url, **meta)

    def add_path(self, text: str, *, triples: list[tuple[str, str, str]], source: str,
                 score: float | None = None, **meta: Any) -> Evidence:
        key = ("P", tuple(tuple(t) for t in triples))
        return self._put(key, "P", lambda i: Evidence(
            id=i, kind="path", text=text, source=source, score=score,
            meta={"triples": [list(t) for t in triples], **meta}))

    def table_number(self, table_key: str) -> int:
        """The turn-local number of a table (``T<n>``), allocated on first use."""
        if table_key not in self._table_numbers:
            self._counters["T"] += 1
            self._table_numbers[table_key] = self._counters["T"]
        return self._table_numbers[table_key]

    def add_table(self, table_key: str, text: str, *, source: str, **meta: Any) -> Evidence:
        n = self.table_number(table_key)
        ev = Evidence(id=f"T{n}", kind="table", text=text, source=source, meta=meta)
        self._items[ev.id] = ev
        return ev

    def add_cell(self, table_key: str, row: int, col: int, text: str, *, source: str,
                 header: str = "", row_label: str = "", **meta: Any) -> Evidence:
        """Register one cell; ``row``/``col`` are 1-based positions in the table's data grid."""
        n = self.table_number(table_key)
        cid = f"T{n}:R{row}C{col}"
        if cid not in self._items:
            self._items[cid] = Evidence(
                id=cid, kind="cell", text=text, source=source,
                meta={"table": table_key, "row": row, "col": col, "header": header,
                      "row_label": row_label, **meta})
        return self._items[cid]

    # -- reading ----------------------------------------------------------------------
    def __contains__(self, evidence_id: str) -> bool:
        return evidence_id in self._items

    def __len__(self) -> int:
        return len(self._items)

    def get(self, evidence_id: str) -> Evidence | None:
        return self._items.get(evidence_id)

    def items(self) -> list[Evidence]:
        return list(self._items.values())

    def citable(self) -> list[Evidence]:
        """Evidence that an answer may cite (whole tables are containers, cells are cited)."""
        return [e for e in self._items.values() if e.kind != "table"]


def cited_ids(text: str) -> list[str]:
    """Ids cited in brackets in ``text``, in order of first appearance, without duplicates."""
    seen: dict[str, None] = {}
    for group in CITATION_GROUP_RE.finditer(text):
        for m in CITATION_RE.finditer(group.group(1)):
            seen.setdefault(m.group(1), None)
    return list(seen)


# The answer prompt must fit the model's window (4,096 tokens by default) with room to answer: a 100 KB
# uploaded cell once made a 102,540-character prompt.
EVIDENCE_ITEM_CHARS = 400
EVIDENCE_TOTAL_CHARS = 8000
EVIDENCE_MAX_ITEMS = 40


def clip(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def evidence_for_prompt(citable: list[Evidence], texts: dict[str, str] | None = None) -> list[dict]:
    """The evidence the answer prompt shows: each item clipped, in order, within a total budget.

    ``texts`` replaces an item's text by its verbalised form (a KG path as a sentence, a cell with its row).
    """
    shown, size = [], 0
    for e in citable[:EVIDENCE_MAX_ITEMS]:
        item = {"id": e.id, "text": clip((texts or {}).get(e.id, e.text), EVIDENCE_ITEM_CHARS),
                "source": clip(e.source, 80)}
        size += len(item["text"]) + len(item["source"]) + 12
        if shown and size > EVIDENCE_TOTAL_CHARS:
            break
        shown.append(item)
    return shown


# -- the conversation a tool may see -------------------------------------------------------
class TableAnswer(BaseModel):
    """The last answer computed from a table, kept on the session so a follow-up's "it" finds its row."""

    table: str
    question: str  # a claim's text when kind is "claim"
    answer: str  # a claim's verdict when kind is "claim"
    rows: list[int] = Field(default_factory=list, description="The rows the answer came from (1-based).")
    row_names: list[str] = Field(default_factory=list)
    # "claim": the last table turn checked a claim, so "And for stroke?" asks that claim of another row
    # (tools.lang.routing.claim_of_another); only a question's answer is what "it" refers to.
    kind: Literal["question", "claim"] = "question"
    # The rows the question ranged over when it pointed back to several ("Which of them reported last?"): the
    # group a next "of them" means when this answer is one row.
    scope: list[int] = Field(default_factory=list)
    # The last question of this table that asked for an extreme ("Which hospital has the most beds?"), kept
    # through questions that do not ("When was it founded?"), so a later "And the smallest?" can turn it round.
    extreme_question: str = ""


@dataclass
class Session:
    """Per-conversation state that tools can see: uploaded tables and text, and what the last turns found."""

    conversation_id: str
    user: str = "local"
    # Uploaded tables by name (``kb.tables.Table``); the most recent one is the default.
    tables: dict[str, Any] = field(default_factory=dict)
    active_table: str | None = None
    # Text a user uploaded in the chat: (name, text) pairs, searched alongside the KB.
    texts: list[tuple[str, str]] = field(default_factory=list)
    # PDF and DOCX uploads by name (``kb.document_model.StoredDocument``): their text is also in ``texts``; this
    # keeps where each stretch of it lies (page, section, word boxes) and which loaded tables came from them.
    documents: dict[str, Any] = field(default_factory=dict)
    # This conversation's choice of evidence pieces per source (UI slider); None: the settings' default.
    evidence_k: int | None = None
    # The last answer computed from a table: a follow-up's "it" resolves to its row (tools.table_qa).
    last_table_answer: TableAnswer | None = None
    # KB documents the conversation's last answer cited, set by the loop for a follow-up turn (else empty):
    # text search looks in them first ("And how many clinics took part?" after questions about one trial).
    followed_documents: list[str] = field(default_factory=list)
    # The concepts each graph linked in the last KG turn, by graph name: a follow-up with nothing of its own to
    # link ("which of those…") reuses them (tools.kg_paths).
    kg_linked: dict[str, list[Any]] = field(default_factory=dict)

    def add_table(self, table: Any) -> None:
        self.tables[table.name] = table
        self.active_table = table.name

    def find_table(self, name: str | None) -> Any | None:
        """A table by exact or case-insensitive partial name; the active one if no name."""
        if not self.tables:
            return None
        if not name:
            return self.tables.get(self.active_table) if self.active_table else None
        if name in self.tables:
            return self.tables[name]
        low = name.lower()
        hits = [t for n, t in self.tables.items() if low in n.lower() or n.lower() in low]
        return hits[0] if len(hits) == 1 else None


# -- what a tool is handed -------------------------------------------------------------------
class ToolDeps(Protocol):
    """What tools use of the app's dependencies holder (``assistant.deps.Deps``): one settings object, one LLM
    client, and the stores and encoder, loaded on first use."""

    settings: Any
    llm: Any

    @property
    def embedder(self) -> Any: ...

    @property
    def text_kb(self) -> Any: ...

    @property
    def kg(self) -> Any: ...

    @property
    def memory(self) -> Any: ...


@dataclass
class ToolContext:
    """What a tool may use during one turn."""

    deps: ToolDeps
    evidence: EvidenceLedger
    session: Session
    # Progress callback for long work: ``report(message)``; the UI shows it in the step.
    report: Callable[[str], None] = field(default=lambda message: None)
