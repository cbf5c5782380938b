"""Smoke test against the real served model (vLLM with the default 1.5B model, or EVIDENTIA_LLM_BASE_URL).

One small case each: a chat completion, a forced (named) tool call whose arguments validate
against the tool's schema, and a JSON-schema structured output.
"""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field

from assistant.llm import LLMClient

pytestmark = pytest.mark.real_model


class LookupArgs(BaseModel):
    city: str = Field(min_length=1)
    unit: Literal["celsius", "fahrenheit"]


WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city.",
    "parameters": LookupArgs.model_json_schema()}}


class Capital(BaseModel):
    country: str
    capital: str


async def test_chat_completion(real_settings):
    llm = LLMClient(real_settings)
    text = await llm.complete([{"role": "user", "content": "What is the capital of France? Answer in one word."}],
                              max_tokens=8)
    await llm.aclose()
    assert "paris" in text.lower()


async def test_forced_tool_call_arguments_validate(real_settings):
    llm = LLMClient(real_settings)
    turn = await llm.call_tools(
        [{"role": "user", "content": "What's the weather in Berlin, in celsius?"}],
        [WEATHER_TOOL], tool_choice="get_weather", max_tokens=60)
    await llm.aclose()
    assert turn.tool_calls, f"no tool call; content was {turn.content!r}"
    call = turn.tool_calls[0]
    assert call.name == "get_weather" and call.error is None
    args = LookupArgs.model_validate(call.arguments)
    assert "berlin" in args.city.lower()


async def test_structured_output(real_settings):
    llm = LLMClient(real_settings)
    result = await llm.structured(
        [{"role": "user", "content": "Give the capital of Japan as JSON with fields country and capital."}],
        Capital, max_tokens=40)
    await llm.aclose()
    assert "tokyo" in result.capital.lower()
