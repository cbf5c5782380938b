"""Errors shared by the layers: a leaf module, so that kb/ need not import tools/ to raise a tool's error."""

from __future__ import annotations


class ToolError(Exception):
    """A tool's own, user-presentable failure (bad argument, missing table…)."""


class TableError(ToolError):
    """A table that cannot be read; the message is for the user."""
