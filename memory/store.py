"""Conversation memory in SQLite (sqlite-utils): turns, intents, tool calls, evidence, citations.

The store is the source of truth for follow-ups: the intent step reads the recent frames of a
conversation from here, so context survives a restart of the app.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import threading
import uuid
from pathlib import Path
from typing import Any

import psutil
import sqlite_utils

from memory.errors import ConversationAccessError
from memory.migrations import UI_MIGRATIONS, migrate


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat()


def _process_started(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), or None if there is no such process."""
    try:
        return psutil.Process(pid).create_time()
    except psutil.NoSuchProcess:
        return None
    except psutil.AccessDenied:  # alive, someone else's
        return 0.0


def _process_alive(pid: int | None, started: float | None = None) -> bool:
    """Whether the process that began a turn still runs.

    The pid alone is not enough: after a container restart the new app often gets the very pid the old
    one had, and its dead turn would read as "running" for ever. The start time tells them apart.
    """
    if not pid:
        return False
    now_started = _process_started(pid)
    if now_started is None:
        return False
    if started and now_started and abs(now_started - started) > 1.0:
        return False  # the pid was reused by a later process
    return True


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


class Memory:
    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # One connection shared by the event loop and worker threads, guarded by a lock.
        conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA foreign_keys=ON")
        self.db = sqlite_utils.Database(conn)
        self._lock = threading.RLock()
        with self._lock:
            self.applied_migrations = migrate(self.db)

    def close(self) -> None:
        self.db.conn.close()

    @property
    def ui_db_path(self) -> Path:
        """The Chainlit thread store beside memory, migrated on first use."""
        path = self.path.with_name("threads.db")
        db = sqlite_utils.Database(path)
        migrate(db, UI_MIGRATIONS)
        db.conn.close()
        return path

    # -- conversations ----------------------------------------------------------------
    def ensure_conversation(self, conversation_id: str | None = None, *, user: str = "local",
                            title: str = "") -> str:
        """Create the conversation for ``user``, or check that ``user`` owns the existing one.

        Conversation ids come from the browser (Chainlit's thread id), so knowing another user's id
        must not be enough to read or continue their conversation.
        """
        cid = conversation_id or uuid.uuid4().hex
        with self._lock:
            owner = self.conversation_user(cid)
            if owner is None:
                self.db["conversations"].insert({"id": cid, "user": user, "title": title[:120],
                                                 "created_at": _now(), "updated_at": _now()})
            elif owner != user:
                raise ConversationAccessError("This conversation belongs to another user; start a new chat.")
        return cid

    def check_owner(self, conversation_id: str, user: str) -> None:
        """Raise :class:`ConversationAccessError` unless the conversation is new or ``user``'s."""
        owner = self.conversation_user(conversation_id)
        if owner is not None and owner != user:
            raise ConversationAccessError("This conversation belongs to another user; start a new chat.")

    def conversations(self, user: str | None = None) -> list[dict]:
        with self._lock:
            where, args = ("user = ?", [user]) if user else (None, None)
            return list(self.db["conversations"].rows_where(where, args, order_by="updated_at desc"))

    def conversation_user(self, conversation_id: str) -> str | None:
        with self._lock:
            rows = list(self.db["conversations"].rows_where("id = ?", [conversation_id]))
        return rows[0]["user"] if rows else None

    # -- turns ------------------------------------------------------------------------
    def begin_turn(self, conversation_id: str, user_text: str) -> str:
        """Store the user's message as a running turn before any work, so a crash cannot lose it."""
        turn_id = uuid.uuid4().hex
        with self._lock, self.db.conn:
            idx = self.db.execute("SELECT COALESCE(MAX(idx), -1) + 1 FROM turns WHERE conversation_id = ?",
                                  [conversation_id]).fetchone()[0]
            self.db["turns"].insert({
                "id": turn_id, "conversation_id": conversation_id, "idx": idx, "user_text": user_text,
                "rewrite": "", "answer": "", "status": "running", "created_at": _now(), "timings": "{}",
                "error": "", "pid": os.getpid(), "pid_started": _process_started(os.getpid())})
            self.db["conversations"].update(conversation_id, {"updated_at": _now()})
            if idx == 0:
                self.db["conversations"].update(conversation_id, {"title": user_text[:120]})
        return turn_id

    def finish_turn(self, turn_id: str, *, answer: str, status: str, intent: dict | None, evidence: list[dict],
                    cited: list[str], valid_ids: set[str], tool_calls: list[dict], timings: dict[str, float],
                    error: str = "") -> None:
        """Complete a turn with its outcome and everything it gathered, atomically."""
        with self._lock, self.db.conn:
            self.db["turns"].update(turn_id, {
                "rewrite": (intent or {}).get("rewrite", ""), "answer": answer, "status": status,
                "timings": _dumps(timings), "error": error, "finished_at": _now()})
            if intent:
                self.db["intents"].insert({
                    "turn_id": turn_id, "task": intent.get("task", ""),
                    "answer_type": _dumps(intent.get("answer_type", [])),
                    "entities": _dumps(intent.get("entities", [])), "relation": intent.get("relation", ""),
                    "time": intent.get("time", ""), "location": intent.get("location", ""),
                    "options": _dumps(intent.get("options", [])), "rewrite": intent.get("rewrite", ""),
                    "carried_over": _dumps(intent.get("carried_over", [])), "raw": _dumps(intent)})
            for i, call in enumerate(tool_calls):
                self.db["tool_calls"].insert({
                    "id": uuid.uuid4().hex, "turn_id": turn_id, "idx": i, "name": call["name"],
                    "arguments": _dumps(call.get("arguments")), "result": _dumps(call.get("result")),
                    "error": call.get("error") or "", "duration_s": call.get("duration_s", 0.0),
                    "origin": call.get("origin", "plan")})
            self.db["evidence"].insert_all(
                [{"turn_id": turn_id, "evidence_id": e["id"], "kind": e["kind"], "text": e["text"],
                  "source": e.get("source", ""), "score": e.get("score"), "meta": _dumps(e.get("meta", {}))}
                 for e in evidence], pk=("turn_id", "evidence_id"))
            self.db["citations"].insert_all(
                [{"turn_id": turn_id, "evidence_id": c, "valid": int(c in valid_ids)} for c in cited],
                pk=("turn_id", "evidence_id"))

    def record_turn(self, conversation_id: str, *, user_text: str, answer: str, status: str,
                    intent: dict | None, evidence: list[dict], cited: list[str], valid_ids: set[str],
                    tool_calls: list[dict], timings: dict[str, float], error: str = "") -> str:
        """Store one finished turn (begin and finish at once)."""
        turn_id = self.begin_turn(conversation_id, user_text)
        self.finish_turn(turn_id, answer=answer, status=status, intent=intent, evidence=evidence, cited=cited,
                         valid_ids=valid_ids, tool_calls=tool_calls, timings=timings, error=error)
        return turn_id

    def last_failed_turn(self, conversation_id: str) -> dict | None:
        """The most recent turn if it ended in an error or was interrupted (what a retry re-asks)."""
        last = self.turns(conversation_id, limit=1)
        return last[0] if last and last[0]["status"] in ("error", "interrupted") else None

    def turns(self, conversation_id: str, limit: int | None = None, *, finished: bool = False) -> list[dict]:
        """The conversation's turns, oldest first (the last ``limit`` if given; only ended ones if ``finished``)."""
        with self._lock:
            rows = list(self.db.query(
                "SELECT t.*, i.raw AS intent_raw FROM turns t LEFT JOIN intents i ON i.turn_id = t.id "
                "WHERE t.conversation_id = ?" + (" AND t.status != 'running'" if finished else "") +
                " ORDER BY t.idx DESC" + (f" LIMIT {int(limit)}" if limit else ""),
                [conversation_id]))
        for r in rows:
            r["intent"] = json.loads(r.pop("intent_raw")) if r.get("intent_raw") else None
            r["timings"] = json.loads(r["timings"]) if r.get("timings") else {}
            if r["status"] == "running" and not _process_alive(r.get("pid"), r.get("pid_started")):
                # Its process died mid-turn (a crash, a kill): the question stays, marked as cut off.
                r["status"] = "interrupted"
                r["error"] = r.get("error") or "The turn was cut off before it finished (the app stopped)."
        return list(reversed(rows))

    def turn_evidence(self, turn_id: str) -> list[dict]:
        with self._lock:
            rows = list(self.db["evidence"].rows_where("turn_id = ?", [turn_id]))
        for r in rows:
            r["meta"] = json.loads(r["meta"]) if r["meta"] else {}
        return rows

    def turn_tool_calls(self, turn_id: str) -> list[dict]:
        with self._lock:
            return list(self.db["tool_calls"].rows_where("turn_id = ?", [turn_id], order_by="idx"))

    def turn_citations(self, turn_id: str) -> list[dict]:
        with self._lock:
            return list(self.db["citations"].rows_where("turn_id = ?", [turn_id]))

    # -- uploaded tables ----------------------------------------------------------------
    def save_table(self, conversation_id: str, name: str, table_json: str) -> None:
        with self._lock:
            self.db["session_tables"].upsert({"conversation_id": conversation_id, "name": name,
                                              "table_json": table_json, "created_at": _now()},
                                             pk=("conversation_id", "name"))

    def forget_table(self, conversation_id: str, name: str) -> None:
        """Drop a kept table (one read from a document that was uploaded again without it)."""
        with self._lock:
            self.db["session_tables"].delete_where("conversation_id = ? AND name = ?", [conversation_id, name])

    def tables(self, conversation_id: str) -> list[tuple[str, str]]:
        with self._lock:
            return [(r["name"], r["table_json"]) for r in self.db["session_tables"].rows_where(
                "conversation_id = ?", [conversation_id], order_by="created_at")]

    # -- uploaded text ------------------------------------------------------------------
    def save_text(self, conversation_id: str, name: str, text: str) -> None:
        with self._lock:
            self.db["session_texts"].upsert({"conversation_id": conversation_id, "name": name, "text": text,
                                             "created_at": _now()}, pk=("conversation_id", "name"))

    def texts(self, conversation_id: str) -> list[tuple[str, str]]:
        with self._lock:
            return [(r["name"], r["text"]) for r in self.db["session_texts"].rows_where(
                "conversation_id = ?", [conversation_id], order_by="created_at")]

    def save_document(self, conversation_id: str, name: str, document_json: str, file_path: str) -> None:
        """Keep an uploaded document's reading and where its copy lies (the same name again replaces it)."""
        with self._lock:
            self.db["session_documents"].upsert({"conversation_id": conversation_id, "name": name,
                                                 "document_json": document_json, "file_path": file_path,
                                                 "created_at": _now()}, pk=("conversation_id", "name"))

    def documents(self, conversation_id: str) -> list[tuple[str, str, str]]:
        """(name, document_json, file_path) of the conversation's uploaded documents, oldest first."""
        with self._lock:
            return [(r["name"], r["document_json"], r["file_path"]) for r in self.db["session_documents"].rows_where(
                "conversation_id = ?", [conversation_id], order_by="created_at")]

    def document_dir(self, conversation_id: str) -> Path:
        """Where this conversation's uploaded documents are copied (beside the memory database)."""
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in conversation_id)[:80]
        return self.path.parent / "documents" / safe

    def save_table_answer(self, conversation_id: str, answer_json: str | None) -> None:
        """Keep (or, with None, forget) the conversation's last answer computed from a table."""
        with self._lock:
            if answer_json is None:
                self.db["session_table_answers"].delete_where("conversation_id = ?", [conversation_id])
            else:
                self.db["session_table_answers"].upsert({"conversation_id": conversation_id,
                                                         "answer_json": answer_json, "updated_at": _now()},
                                                        pk="conversation_id")

    def table_answer(self, conversation_id: str) -> str | None:
        with self._lock:
            rows = list(self.db["session_table_answers"].rows_where("conversation_id = ?", [conversation_id]))
            return rows[0]["answer_json"] if rows else None
