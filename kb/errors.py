"""Errors shared by the layers: a leaf module, so that kb/ need not import tools/ to raise a tool's error, and tools/
catch the LLM client's errors without importing the client."""

from __future__ import annotations


class ToolError(Exception):
    """A tool's own, user-presentable failure (bad argument, missing table…)."""


class TableError(ToolError):
    """A table that cannot be read; the message is for the user."""


class LLMUnavailable(RuntimeError):
    """The LLM server cannot be reached or did not answer in time. The message is for users."""


class LLMTimeout(LLMUnavailable):
    """The server accepted the request but did not finish it in time (busy rather than gone)."""


class LLMResponseError(RuntimeError):
    """The server answered, but not with something usable (HTTP error, bad structured output)."""
