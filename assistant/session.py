"""Per-conversation state that tools can see: uploaded tables and uploaded text."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from tools.table_qa import TableAnswer


@dataclass
class Session:
    conversation_id: str
    user: str = "local"
    # Uploaded tables by name (``kb.tables.Table``); the most recent one is the default.
    tables: dict[str, Any] = field(default_factory=dict)
    active_table: str | None = None
    # Text a user uploaded in the chat: (name, text) pairs, searched alongside the KB.
    texts: list[tuple[str, str]] = field(default_factory=list)
    # This conversation's choice of evidence pieces per source (UI slider); None: the settings' default.
    evidence_k: int | None = None
    # The last answer computed from a table: a follow-up's "it" resolves to its row (tools.table_qa).
    last_table_answer: TableAnswer | None = None
    # KB documents the conversation's last answer cited, set by the loop for a follow-up turn (else empty):
    # text search looks in them first ("And how many clinics took part?" after questions about one trial).
    followed_documents: list[str] = field(default_factory=list)

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
