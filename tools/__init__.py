"""Evidentia's tools: one public module per tool; private modules (``_ot.py``…) hold kernels."""

from tools.registry import REGISTRY, Tool, ToolContext, ToolError, load_all, openai_schemas, tool

__all__ = ["REGISTRY", "Tool", "ToolContext", "ToolError", "load_all", "openai_schemas", "tool"]
