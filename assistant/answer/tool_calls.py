"""Running the tool calls of a turn: arguments fitted and validated against each tool's Input, errors
that name the tool and the problem, and outputs as the model reads them back."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from pydantic import BaseModel, ValidationError

from kb.errors import LLMUnavailable
from tools.registry import REGISTRY, ToolContext, ToolError

log = logging.getLogger(__name__)

ANSWER_TOOL = "answer"
MAX_TOOL_MESSAGE_CHARS = 4000


class AnswerArgs(BaseModel):
    text: str


def answer_tool_schema() -> dict:
    params = AnswerArgs.model_json_schema()
    params.pop("title", None)
    return {"type": "function", "function": {
        "name": ANSWER_TOOL, "parameters": params,
        "description": "Finish the turn: the final answer to the user, citing evidence ids like [S1]."}}


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(x) for x in err.get("loc", ())) or "arguments"
        parts.append(f"{loc}: {err.get('msg')}")
    return "; ".join(parts)


def fit_arguments(tool_name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Keep the planner's arguments that the tool's Input declares (tools differ in their slots)."""
    fields = REGISTRY[tool_name].input_model.model_fields
    return {k: v for k, v in arguments.items() if k in fields}


async def execute_tool(ctx: ToolContext, name: str, arguments: dict[str, Any] | None, *,
                       parse_error: str | None = None) -> tuple[Any, str | None]:
    """Run one tool; return ``(output, error)``. Errors name the tool and the problem."""
    tool = REGISTRY.get(name)
    if tool is None:
        offered = ", ".join(sorted(t for t, v in REGISTRY.items() if v.offer_to_model))
        return None, f"unknown tool {name!r}; the tools are: {offered}, {ANSWER_TOOL}"
    if parse_error:
        return None, f"tool {name!r}: {parse_error}"
    try:
        args = tool.input_model.model_validate(arguments or {})
    except ValidationError as exc:
        return None, f"tool {name!r}: invalid arguments: {_validation_message(exc)}"
    try:
        if tool.is_async:
            out = await tool.fn(ctx, args)
        elif tool.cpu_bound:
            out = await asyncio.to_thread(tool.fn, ctx, args)
        else:
            out = tool.fn(ctx, args)
    except LLMUnavailable:
        raise
    except ToolError as exc:
        return None, f"tool {name!r} failed: {exc}"
    except Exception as exc:  # noqa: BLE001 - a broken tool must not break the chat
        log.exception("tool %s raised", name)
        return None, f"tool {name!r} failed unexpectedly: {type(exc).__name__}: {exc}"
    return out, None


def dump_output(output: Any) -> Any:
    if isinstance(output, BaseModel):
        return output.model_dump(mode="json")
    return output


def tool_message_content(output: Any, error: str | None) -> str:
    if error:
        return json.dumps({"error": error})
    text = json.dumps(dump_output(output), ensure_ascii=False, default=str)
    return text if len(text) <= MAX_TOOL_MESSAGE_CHARS else text[:MAX_TOOL_MESSAGE_CHARS] + "…(truncated)"


async def gather_all(calls: list) -> list:
    """Run calls concurrently and let every one finish before the first failure is raised.

    Plain ``gather`` would raise at once and leave the others running unobserved, adding evidence to a
    turn that was already stored as failed.
    """
    results = await asyncio.gather(*calls, return_exceptions=True)
    for outcome in results:
        if isinstance(outcome, BaseException):
            raise outcome
    return results
