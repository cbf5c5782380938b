"""Errors of the memory layer, a leaf module so that every layer above can catch them."""

from __future__ import annotations


class ConversationAccessError(PermissionError):
    """A user asked for a conversation that belongs to someone else; the message is for the user."""
