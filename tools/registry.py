"""The tool registry: one module per tool, schemas derived from pydantic models.

A tool module defines ``Input`` and ``Output`` (pydantic models) and one plain function
decorated with :func:`tool`::

    @tool("text_search", cpu_bound=True)
    def text_search(ctx: ToolContext, args: Input) -> Output:
        \"\"\"Search the knowledge base's sentences for evidence.\"\"\"

The first docstring line is the description the LLM sees. The OpenAI tool schema is
``Input.model_json_schema()``; nobody writes JSON schemas by hand. Registering a name twice
raises :class:`DuplicateToolError` at import time.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Callable

from pydantic import BaseModel

from kb.errors import ToolError  # noqa: F401  (re-exported: tools raise it)
from tools.contracts import ToolContext


class DuplicateToolError(RuntimeError):
    pass


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    fn: Callable[[ToolContext, BaseModel], Any]
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    cpu_bound: bool = False
    is_async: bool = False
    # Hidden tools run only from the deterministic planner, never offered to the model.
    offer_to_model: bool = True

    def openai_schema(self) -> dict[str, Any]:
        params = self.input_model.model_json_schema()
        params.pop("title", None)
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": params},
        }


REGISTRY: dict[str, Tool] = {}


def tool(name: str, *, cpu_bound: bool = False, offer_to_model: bool = True):
    """Register a tool function; ``Input``/``Output`` come from its annotations."""

    def decorate(fn):
        if name in REGISTRY:
            raise DuplicateToolError(
                f"tool name {name!r} registered twice ({REGISTRY[name].fn.__module__} and {fn.__module__})"
            )
        hints = inspect.get_annotations(fn, eval_str=True)
        params = list(inspect.signature(fn).parameters)
        if len(params) != 2:
            raise TypeError(f"tool {name}: signature must be (ctx, args)")
        input_model = hints.get(params[1])
        output_model = hints.get("return")
        for label, model in (("input", input_model), ("output", output_model)):
            if not (inspect.isclass(model) and issubclass(model, BaseModel)):
                raise TypeError(f"tool {name}: {label} annotation must be a pydantic model")
        doc = inspect.getdoc(fn) or ""
        description = doc.strip().splitlines()[0] if doc.strip() else ""
        if not description:
            raise TypeError(f"tool {name}: the docstring's first line is the LLM's description")
        REGISTRY[name] = Tool(
            name=name, description=description, fn=fn, input_model=input_model,
            output_model=output_model, cpu_bound=cpu_bound,
            is_async=inspect.iscoroutinefunction(fn), offer_to_model=offer_to_model,
        )
        return fn

    return decorate


def load_all() -> dict[str, Tool]:
    """Import every public module in ``tools/`` so their tools register."""
    # The package's folder, not ``import tools``: the package imports this module, and the loop would be a cycle.
    for mod in pkgutil.iter_modules([str(Path(__file__).resolve().parent)]):
        if not mod.name.startswith("_"):
            importlib.import_module(f"tools.{mod.name}")
    return REGISTRY


def openai_schemas(names: list[str] | None = None) -> list[dict[str, Any]]:
    load_all()
    chosen = [REGISTRY[n] for n in names] if names else [t for t in REGISTRY.values() if t.offer_to_model]
    return [t.openai_schema() for t in chosen]
