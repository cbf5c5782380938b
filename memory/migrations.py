"""Schema migrations: named functions, applied once, in order, and recorded.

In the manner of simonw/llm's ``migrations.py``: each function takes a ``sqlite_utils.Database``;
``migrate(db)`` runs the ones whose names are not yet in ``_evidentia_migrations``. Never edit a
migration that has shipped; add a new one.
"""

from __future__ import annotations

import datetime as dt
from typing import Callable

import sqlite_utils

Migration = Callable[[sqlite_utils.Database], None]
# Conversation memory (memory.db) and the UI's thread store (threads.db) are separate files: the
# UI writes through an async driver, and sharing one file with the sync store would make them wait
# on each other's locks.
MIGRATIONS: list[Migration] = []
UI_MIGRATIONS: list[Migration] = []


def migration(fn: Migration, *, into: list[Migration] | None = None):
    target = MIGRATIONS if into is None else into
    if any(m.__name__ == fn.__name__ for m in MIGRATIONS + UI_MIGRATIONS):
        raise RuntimeError(f"duplicate migration name {fn.__name__}")
    target.append(fn)
    return fn


def ui_migration(fn: Migration):
    return migration(fn, into=UI_MIGRATIONS)


def migrate(db: sqlite_utils.Database, migrations: list[Migration] | None = None) -> list[str]:
    """Apply pending migrations (memory's by default); return the names applied now."""
    db["_evidentia_migrations"].create({"name": str, "applied_at": str}, pk="name", if_not_exists=True)
    done = {row["name"] for row in db["_evidentia_migrations"].rows}
    applied = []
    for fn in MIGRATIONS if migrations is None else migrations:
        if fn.__name__ in done:
            continue
        with db.conn:  # each migration is atomic with its record
            fn(db)
            db["_evidentia_migrations"].insert(
                {"name": fn.__name__, "applied_at": dt.datetime.now(dt.timezone.utc).isoformat()})
        applied.append(fn.__name__)
    return applied


@migration
def m001_conversations_and_turns(db):
    db["conversations"].create({"id": str, "user": str, "title": str, "created_at": str, "updated_at": str},
                               pk="id")
    db["turns"].create({
        "id": str, "conversation_id": str, "idx": int, "user_text": str, "rewrite": str, "answer": str,
        "status": str,  # verified | unverified | no_evidence | error | chit_chat
        "created_at": str, "timings": str,  # JSON {intent_s, retrieval_s, generation_s, total_s}
    }, pk="id", foreign_keys=[("conversation_id", "conversations", "id")])
    db["turns"].create_index(["conversation_id", "idx"], unique=True)


@migration
def m002_intents(db):
    db["intents"].create({
        "turn_id": str, "task": str, "answer_type": str, "entities": str, "relation": str, "time": str,
        "location": str, "options": str, "rewrite": str, "carried_over": str, "raw": str,
    }, pk="turn_id", foreign_keys=[("turn_id", "turns", "id")])


@migration
def m003_tool_calls(db):
    db["tool_calls"].create({
        "id": str, "turn_id": str, "idx": int, "name": str, "arguments": str, "result": str, "error": str,
        "duration_s": float, "origin": str,  # plan | model
    }, pk="id", foreign_keys=[("turn_id", "turns", "id")])
    db["tool_calls"].create_index(["turn_id"])


@migration
def m004_evidence_and_citations(db):
    db["evidence"].create({
        "turn_id": str, "evidence_id": str, "kind": str, "text": str, "source": str, "score": float,
        "meta": str,
    }, pk=("turn_id", "evidence_id"), foreign_keys=[("turn_id", "turns", "id")])
    db["citations"].create({"turn_id": str, "evidence_id": str, "valid": int},
                           pk=("turn_id", "evidence_id"), foreign_keys=[("turn_id", "turns", "id")])


@migration
def m005_session_tables(db):
    # Uploaded tables are kept per conversation so follow-ups work after a restart.
    db["session_tables"].create({"conversation_id": str, "name": str, "table_json": str, "created_at": str},
                                pk=("conversation_id", "name"))


@migration
def m006_turn_outcomes(db):
    # A turn is stored when it starts (status "running") and completed when it ends, so a question is
    # never lost when the model server dies mid-turn; "error" keeps why, "interrupted" a turn whose
    # process died. ``pid`` tells a turn running elsewhere from one whose process is gone.
    db["turns"].add_column("error", str)
    db["turns"].add_column("finished_at", str)
    db["turns"].add_column("pid", int)


@migration
def m007_turn_process_start(db):
    # The start time of the process running a turn: with the pid it tells a live turn from one whose
    # process died and whose pid a later process (e.g. the app after a container restart) now has.
    db["turns"].add_column("pid_started", float)


@migration
def m008_session_table_answers(db):
    # The last answer computed from a table, per conversation: a follow-up's "it" ("how many participants did
    # it have?") resolves to its row after a restart too, and from the terminal's `ask -c` (a new process).
    db["session_table_answers"].create({"conversation_id": str, "answer_json": str, "updated_at": str},
                                       pk="conversation_id")


@migration
def m009_session_texts(db):
    # Text uploaded into a chat is part of it like its tables: kept per conversation, so a reopened chat or
    # `ask -c` still searches it (found as a new user: after a restart the upload's answers cited nothing).
    db["session_texts"].create({"conversation_id": str, "name": str, "text": str, "created_at": str},
                               pk=("conversation_id", "name"))


@migration
def m010_session_documents(db):
    # A PDF or DOCX upload is kept as its reading (text with pages and word boxes, tables, notes) and the path of
    # its stored copy, so a reopened chat cites the same pages and can still show them (#81).
    db["session_documents"].create({"conversation_id": str, "name": str, "document_json": str, "file_path": str,
                                    "created_at": str}, pk=("conversation_id", "name"))


@ui_migration
def ui001_chainlit_data_layer(db):
    """Tables of Chainlit's SQLAlchemy data layer, so UI threads persist and can be reopened."""
    db.executescript("""
    CREATE TABLE IF NOT EXISTS users (
        "id" TEXT PRIMARY KEY, "identifier" TEXT NOT NULL UNIQUE, "metadata" TEXT NOT NULL, "createdAt" TEXT);
    CREATE TABLE IF NOT EXISTS threads (
        "id" TEXT PRIMARY KEY, "createdAt" TEXT, "name" TEXT, "userId" TEXT, "userIdentifier" TEXT,
        "tags" TEXT, "metadata" TEXT,
        FOREIGN KEY ("userId") REFERENCES users("id") ON DELETE CASCADE);
    CREATE TABLE IF NOT EXISTS steps (
        "id" TEXT PRIMARY KEY, "name" TEXT NOT NULL, "type" TEXT NOT NULL, "threadId" TEXT NOT NULL,
        "parentId" TEXT, "streaming" BOOLEAN NOT NULL, "waitForAnswer" BOOLEAN, "isError" BOOLEAN,
        "metadata" TEXT, "tags" TEXT, "input" TEXT, "output" TEXT, "createdAt" TEXT, "command" TEXT,
        "start" TEXT, "end" TEXT, "generation" TEXT, "showInput" TEXT, "language" TEXT, "indent" INT,
        "defaultOpen" BOOLEAN, "autoCollapse" BOOLEAN, "modes" TEXT,
        FOREIGN KEY ("threadId") REFERENCES threads("id") ON DELETE CASCADE);
    CREATE TABLE IF NOT EXISTS elements (
        "id" TEXT PRIMARY KEY, "threadId" TEXT, "type" TEXT, "url" TEXT, "chainlitKey" TEXT,
        "name" TEXT NOT NULL, "display" TEXT, "objectKey" TEXT, "size" TEXT, "page" INT, "language" TEXT,
        "forId" TEXT, "mime" TEXT, "props" TEXT, "autoPlay" BOOLEAN, "playerConfig" TEXT,
        FOREIGN KEY ("threadId") REFERENCES threads("id") ON DELETE CASCADE);
    CREATE TABLE IF NOT EXISTS feedbacks (
        "id" TEXT PRIMARY KEY, "forId" TEXT NOT NULL, "threadId" TEXT NOT NULL, "value" INT NOT NULL,
        "comment" TEXT,
        FOREIGN KEY ("threadId") REFERENCES threads("id") ON DELETE CASCADE);
    """)


@ui_migration
def ui002_accounts(db):
    """Login accounts of the web UI: one argon2 hash per user name (see memory/accounts.py)."""
    db["evidentia_accounts"].create({"name": str, "password_hash": str, "created_at": str, "updated_at": str},
                                    pk="name")


@ui_migration
def ui003_revoked_logins(db):
    """Login tokens ended by logging out, until they would have expired anyway (see memory/accounts.py)."""
    db["evidentia_revoked_logins"].create({"token_id": str, "name": str, "expires_at": float}, pk="token_id")
