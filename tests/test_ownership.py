"""A conversation is its owner's: knowing its id is not enough to read or continue it (#17)."""

from __future__ import annotations

import click
import pytest

from assistant.cli.chat_cli import build, restore_session
from assistant.deps import Deps
from assistant.answer.loop import Assistant
from tools.contracts import Session
from kb.tables import Table
from memory.errors import ConversationAccessError
from memory.store import Memory


def test_memory_refuses_another_users_conversation(tmp_path):
    mem = Memory(tmp_path / "memory.db")
    cid = mem.ensure_conversation("thread-1", user="ann")
    assert mem.ensure_conversation(cid, user="ann") == cid  # the owner continues
    with pytest.raises(ConversationAccessError, match="another user"):
        mem.ensure_conversation(cid, user="bob")
    with pytest.raises(ConversationAccessError):
        mem.check_owner(cid, "bob")
    mem.check_owner(cid, "ann")
    mem.check_owner("new-thread", "bob")  # an unknown id is a new conversation, anyone's to start
    assert mem.conversation_user(cid) == "ann"


def test_bob_cannot_attach_to_anns_conversation_or_see_her_tables(tmp_settings):
    deps = Deps(tmp_settings)
    ann = Session("thread-ann", user="ann")
    Assistant(deps, ann)
    table = Table(name="secrets", title="secrets", columns=["patient", "dose"], rows=[["A. Smith", "5 mg"]])
    deps.memory.save_table(ann.conversation_id, table.name, table.model_dump_json())

    bob = Session("thread-ann", user="bob")
    with pytest.raises(ConversationAccessError):
        restore_session(deps, bob)
    assert bob.tables == {}
    with pytest.raises(ConversationAccessError):
        Assistant(deps, bob)

    again = Session("thread-ann", user="ann")
    restore_session(deps, again)
    assert list(again.tables) == ["secrets"]


def test_cli_says_whose_conversation_it_is_not(tmp_settings, monkeypatch):
    monkeypatch.setenv("USER", "ann")
    deps, bot = build(tmp_settings, "thread-x")
    assert bot.session.user == "ann"
    monkeypatch.setenv("USER", "bob")
    with pytest.raises(click.ClickException, match="belongs to another user"):
        build(tmp_settings, "thread-x")


def test_the_terminal_continues_a_local_mode_ui_chat_but_not_an_accounts_one(tmp_settings, monkeypatch):
    from memory.accounts import Accounts

    monkeypatch.setenv("USER", "root")
    deps = Deps(tmp_settings)
    deps.memory.ensure_conversation("ui-thread", user="local")  # made by the UI with no accounts
    _, bot = build(tmp_settings, "ui-thread")
    assert bot.session.user == "local"
    Accounts(deps.memory.ui_db_path).add("ann", "correct horse")  # accounts now: "local" is nobody's login
    with pytest.raises(click.ClickException, match="belongs to another user"):
        build(tmp_settings, "ui-thread")
