"""assistant.llm against the scripted fake OpenAI server, over real HTTP."""

from __future__ import annotations

import json
import socket

import pytest
from pydantic import BaseModel, Field

from assistant.llm import ONE_LINE_JSON, WHITESPACE_RUNS, LLMClient, close_json_after_value
from assistant.settings import Settings
from kb.errors import LLMResponseError, LLMUnavailable
from tests.fake_openai import Reply, tool_reply

LOOKUP_TOOL = {"type": "function", "function": {
    "name": "lookup", "description": "Look something up.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}
MESSAGES = [{"role": "user", "content": "hi"}]


class Verdict(BaseModel):
    label: str = Field(pattern="^(supported|refuted|unknown)$")
    confidence: float = Field(ge=0, le=1)


def client_for(srv, tmp_settings: Settings, **overrides) -> LLMClient:
    settings = tmp_settings.model_copy(update=overrides) if overrides else tmp_settings
    return LLMClient(settings, base_url=srv.base_url, model="fake-model")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- chat ----------------------------------------------------------------------------------------

async def test_stream_yields_the_reply_in_pieces(fake_llm_server, tmp_settings):
    with fake_llm_server([Reply(content="Paris is the capital of France.")]) as srv:
        llm = client_for(srv, tmp_settings)
        pieces = [p async for p in llm.stream(MESSAGES, max_tokens=20)]
        await llm.aclose()
    assert len(pieces) > 1
    assert "".join(pieces) == "Paris is the capital of France."
    req = srv.requests[0]
    assert req["stream"] is True and req["model"] == "fake-model"
    assert req["max_tokens"] == 20 and req["temperature"] == 0.0  # greedy by default
    assert req["messages"] == MESSAGES


async def test_complete_returns_the_text(fake_llm_server, tmp_settings):
    with fake_llm_server([Reply(content="hello")]) as srv:
        llm = client_for(srv, tmp_settings)
        assert await llm.complete(MESSAGES) == "hello"
    assert srv.requests[0]["max_tokens"] == tmp_settings.llm_max_tokens
    assert not srv.requests[0].get("stream")


async def test_the_only_served_model_is_used_when_the_configured_one_is_absent(fake_llm_server, tmp_settings):
    with fake_llm_server([Reply(content="ok")], models=["qwen-on-ollama"]) as srv:
        llm = client_for(srv, tmp_settings)
        await llm.complete(MESSAGES)
    assert srv.requests[0]["model"] == "qwen-on-ollama"


# --- tool calls -----------------------------------------------------------------------------------

async def test_required_tool_call_is_parsed(fake_llm_server, tmp_settings):
    with fake_llm_server([tool_reply("lookup", {"query": "aspirin"})]) as srv:
        turn = await client_for(srv, tmp_settings).call_tools(MESSAGES, [LOOKUP_TOOL])
    assert srv.requests[0]["tool_choice"] == "required"
    assert srv.requests[0]["tools"] == [LOOKUP_TOOL]
    assert [(c.name, c.arguments, c.error) for c in turn.tool_calls] == [("lookup", {"query": "aspirin"}, None)]
    assert turn.finish_reason == "tool_calls"


async def test_named_tool_choice_is_sent_as_a_function(fake_llm_server, tmp_settings):
    with fake_llm_server([tool_reply("lookup", {"query": "x"})]) as srv:
        turn = await client_for(srv, tmp_settings).call_tools(MESSAGES, [LOOKUP_TOOL], tool_choice="lookup")
    assert srv.requests[0]["tool_choice"] == {"type": "function", "function": {"name": "lookup"}}
    assert turn.tool_calls[0].arguments == {"query": "x"}


async def test_auto_recovers_a_call_written_as_fenced_json(fake_llm_server, tmp_settings):
    """The 1.5B model with tool_choice=auto writes the call in the text instead of tool_calls."""
    content = 'I will look it up.\n```json\n{"name": "lookup", "arguments": {"query": "ibuprofen"}}\n```'
    with fake_llm_server([Reply(content=content)]) as srv:
        turn = await client_for(srv, tmp_settings).call_tools(MESSAGES, [LOOKUP_TOOL], tool_choice="auto")
    assert srv.requests[0]["tool_choice"] == "auto"
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [("lookup", {"query": "ibuprofen"})]
    assert turn.content == content


async def test_auto_leaves_plain_text_and_unknown_tools_alone(fake_llm_server, tmp_settings):
    replies = [Reply(content="Just an answer."),
               Reply(content='```json\n{"name": "delete_everything", "arguments": {}}\n```')]
    with fake_llm_server(replies) as srv:
        llm = client_for(srv, tmp_settings)
        plain = await llm.call_tools(MESSAGES, [LOOKUP_TOOL], tool_choice="auto")
        unknown = await llm.call_tools(MESSAGES, [LOOKUP_TOOL], tool_choice="auto")
    assert plain.tool_calls == [] and plain.content == "Just an answer."
    assert unknown.tool_calls == []


@pytest.mark.parametrize("raw, reason", [('{"query": ', "not valid JSON"), ("[1, 2]", "must be a JSON object")])
async def test_malformed_tool_arguments_are_reported_not_raised(fake_llm_server, tmp_settings, raw, reason):
    with fake_llm_server([Reply(tool_calls=[("lookup", raw)])]) as srv:
        turn = await client_for(srv, tmp_settings).call_tools(MESSAGES, [LOOKUP_TOOL])
    (call,) = turn.tool_calls
    assert call.name == "lookup" and call.arguments is None and call.arguments_raw == raw
    assert reason in call.error


# --- structured output ----------------------------------------------------------------------------

async def test_structured_output_is_schema_constrained_and_validated(fake_llm_server, tmp_settings):
    with fake_llm_server([Reply(content='{"label": "supported", "confidence": 0.8}')]) as srv:
        verdict = await client_for(srv, tmp_settings).structured(MESSAGES, Verdict, max_tokens=40)
    assert verdict == Verdict(label="supported", confidence=0.8)
    fmt = srv.requests[0]["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "Verdict"
    assert fmt["json_schema"]["schema"] == Verdict.model_json_schema()


async def test_one_line_layout_asks_every_schema_for_one_line(fake_llm_server, tmp_settings):
    """EVIDENTIA_VLLM_JSON_LAYOUT=one-line: the single, sampled and streamed schemas all carry the layout."""
    reply = '{"label": "supported", "confidence": 0.8}'
    replies = [Reply(content=reply), Reply(content=reply, more_choices=[reply]), Reply(content=reply)]
    with fake_llm_server(replies) as srv:
        llm = client_for(srv, tmp_settings, vllm_json_layout="one-line")
        await llm.structured(MESSAGES, Verdict)
        await llm.structured_samples(MESSAGES, Verdict, n=2)
        streamed = "".join([p async for p in llm.stream_structured(MESSAGES, {"type": "object"}, name="any")])
    assert json.loads(streamed)["label"] == "supported"
    schemas = [r["response_format"]["json_schema"]["schema"] for r in srv.requests]
    assert [s.get("x-guidance") for s in schemas] == [ONE_LINE_JSON] * 3
    assert {k: v for k, v in schemas[0].items() if k != "x-guidance"} == Verdict.model_json_schema()
    assert schemas[2] == {"type": "object", "x-guidance": ONE_LINE_JSON}


async def test_structured_output_in_a_fence_is_accepted(fake_llm_server, tmp_settings):
    with fake_llm_server([Reply(content='```json\n{"label": "refuted", "confidence": 1}\n```')]) as srv:
        verdict = await client_for(srv, tmp_settings).structured(MESSAGES, Verdict)
    assert verdict.label == "refuted"


@pytest.mark.parametrize("content", ['{"label": "maybe", "confidence": 0.5}', "not json at all", ""])
async def test_invalid_structured_output_raises_response_error(fake_llm_server, tmp_settings, content):
    with fake_llm_server([Reply(content=content)]) as srv:
        with pytest.raises(LLMResponseError, match="did not match Verdict"):
            await client_for(srv, tmp_settings).structured(MESSAGES, Verdict)


class Judged(BaseModel):
    label: str
    cells: list[str]


async def test_json_that_ran_out_in_whitespace_is_closed(fake_llm_server, tmp_settings):
    written = '{\n  "label": "REFUTES",\n  "cells": ["R2C3", "R4C3"]'
    with fake_llm_server([Reply(content=written + " \n" * 40, finish_reason="length"),
                          Reply(content=written, finish_reason="stop", stop_reason=" " * 16)]) as srv:
        llm = client_for(srv, tmp_settings)
        ran_out = await llm.structured(MESSAGES, Judged)
        stopped = await llm.structured(MESSAGES, Judged)
    assert ran_out == stopped == Judged(label="REFUTES", cells=["R2C3", "R4C3"])
    assert srv.requests[0]["stop"] == WHITESPACE_RUNS  # the run is stopped early rather than paid for


@pytest.mark.parametrize("content, finish, asked", [
    ('{"label": "REFUTES", "cells": ["R2C3"', "length", 1),          # cut mid-content, no whitespace run
    ('{"label": "REFUTES", "cells": ["R2C3", ' + " " * 9, "length", 2),  # a value is missing: asked again
    ('{"label": "REFUTES", "cells": ["R2C3"]' + " " * 9, "stop", 1),     # stopped, but not by a whitespace run
])
async def test_truncated_json_that_lost_content_is_still_an_error(fake_llm_server, tmp_settings, content, finish,
                                                                 asked):
    with fake_llm_server([Reply(content=content, finish_reason=finish)] * asked) as srv:
        with pytest.raises(LLMResponseError, match="did not match Judged"):
            await client_for(srv, tmp_settings).structured(MESSAGES, Judged)
    assert len(srv.requests) == asked


async def test_json_that_looped_before_any_value_is_asked_once_more_sampled(fake_llm_server, tmp_settings):
    # WTQ's test run: '{"answer":' and then only spaces, twice in 300 table answers, each ending in an error.
    # Greedy decoding would loop the same way again, so the second request samples.
    from assistant.llm import RESAMPLE_TEMPERATURE

    with fake_llm_server([Reply(content='{"label":', finish_reason="stop", stop_reason=" " * 16),
                          Reply(content='{"label": "SUPPORTS", "cells": ["R1C2"]}')]) as srv:
        judged = await client_for(srv, tmp_settings).structured(MESSAGES, Judged, temperature=0.0)
    assert judged == Judged(label="SUPPORTS", cells=["R1C2"])
    assert [r["temperature"] for r in srv.requests] == [0.0, RESAMPLE_TEMPERATURE]


@pytest.mark.parametrize("text, closed", [
    ('{"a": "x } ] \\" {"   ', '{"a": "x } ] \\" {"}'),   # brackets and an escaped quote inside a string
    ('{"a": [1, {"b": 2}]  \n', '{"a": [1, {"b": 2}]}'),
    ('{"a": "unfinished   ', None),                           # still inside the string
    ('[1, 2]  ', None),                                       # not an object
    ('{"a": 1}]  ', None),                                    # a closer that does not match
])
def test_close_json_after_value(text, closed):
    assert close_json_after_value(text) == closed


# --- failures ---------------------------------------------------------------------------------------

async def test_server_down_is_llm_unavailable(tmp_settings):
    url = f"http://127.0.0.1:{free_port()}/v1"
    llm = LLMClient(tmp_settings.model_copy(update={"llm_max_retries": 1}), base_url=url)
    with pytest.raises(LLMUnavailable, match="cannot be reached"):
        await llm.complete(MESSAGES)
    with pytest.raises(LLMUnavailable, match="cannot be reached"):
        async for _ in llm.stream(MESSAGES):
            pass
    with pytest.raises(LLMUnavailable):
        await llm.list_models()


async def test_slow_server_times_out_as_llm_unavailable(fake_llm_server, tmp_settings):
    with fake_llm_server([Reply(content="late", delay_s=1.5)]) as srv:
        llm = client_for(srv, tmp_settings, llm_timeout_s=0.3, llm_max_retries=2)
        with pytest.raises(LLMUnavailable, match="did not answer within"):
            await llm.complete(MESSAGES)
    assert len(srv.requests) == 1  # a timeout is not retried: the server is busy, not gone


async def test_5xx_is_retried_a_bounded_number_of_times(fake_llm_server, tmp_settings):
    with fake_llm_server(lambda req: Reply(status=503)) as srv:
        llm = client_for(srv, tmp_settings, llm_max_retries=2)
        with pytest.raises(LLMResponseError, match="HTTP 503"):
            await llm.complete(MESSAGES)
    assert len(srv.requests) == 3  # one try + two retries


async def test_5xx_then_success_recovers(fake_llm_server, tmp_settings):
    with fake_llm_server([Reply(status=502), Reply(content="fine")]) as srv:
        llm = client_for(srv, tmp_settings, llm_max_retries=2)
        assert await llm.complete(MESSAGES) == "fine"
    assert len(srv.requests) == 2


async def test_4xx_is_not_retried(fake_llm_server, tmp_settings):
    body = json.dumps({"error": {"message": "maximum context length is 4096 tokens"}})
    with fake_llm_server(lambda req: Reply(status=400, error_body=body)) as srv:
        llm = client_for(srv, tmp_settings, llm_max_retries=2)
        with pytest.raises(LLMResponseError, match="HTTP 400.*maximum context length"):
            await llm.complete(MESSAGES)
    assert len(srv.requests) == 1


# --- sampling seeds ------------------------------------------------------------------------------

SAMPLED = {"id": "c", "object": "text_completion", "created": 0, "model": "fake-model", "choices": [
    {"index": 0, "text": " wheel", "finish_reason": "stop",
     "logprobs": {"tokens": [" wheel"], "token_logprobs": [-0.5], "text_offset": [0], "top_logprobs": None}}]}


@pytest.mark.parametrize("where, cuda, setting, sent", [
    ("local", False, None, False),  # the local vLLM on CPU dies on a seeded request whose token it discards
    ("local", True, None, True),
    ("remote", False, None, True),  # another server: the seed goes as asked
    ("remote", False, False, False),  # the setting overrides either way
    ("local", False, True, True),
])
async def test_a_sampling_seed_goes_only_where_the_server_can_take_it(fake_llm_server, tmp_settings, monkeypatch,
                                                                      where, cuda, setting, sent):
    import assistant.model.serving

    monkeypatch.setattr(assistant.model.serving, "has_cuda", lambda: cuda)
    with fake_llm_server(lambda req: Reply(body=SAMPLED)) as srv:
        host, port = srv.base_url.split("//")[1].split("/")[0].split(":")
        local = tmp_settings.model_copy(update={"vllm_host": host, "vllm_port": int(port), "llm_base_url": None,
                                                "llm_request_seeds": setting})
        llm = LLMClient(local, base_url=None if where == "local" else srv.base_url.replace("127.0.0.1", "localhost"),
                        model="fake-model")
        out = await llm.sample_text("The <ENT0> is part of", n=1, max_tokens=4, temperature=1.0, seed=7)
        await llm.aclose()
    assert out[0].text == " wheel"
    assert ("seed" in srv.requests[-1]) is sent, srv.requests[-1]


# --- llama.cpp's server (#80): what it writes differently, and what it lacks -------------------------------

LLAMACPP_SAMPLED = {"id": "c", "object": "text_completion", "created": 0, "model": "fake-model", "choices": [
    {"index": 0, "text": " café au", "finish_reason": "length",
     # llama.cpp writes a text completion's log-probabilities in the chat endpoint's shape, with each token's bytes;
     # "é" is split across two tokens here, as byte-level BPE does
     "logprobs": {"content": [
         {"id": 1, "token": " caf", "bytes": list(b" caf"), "logprob": -1.5, "top_logprobs": []},
         {"id": 2, "token": "\\xc3", "bytes": [0xC3], "logprob": -0.25, "top_logprobs": []},
         {"id": 3, "token": "\\xa9", "bytes": [0xA9], "logprob": -0.01, "top_logprobs": []},
         {"id": 4, "token": " au", "bytes": list(b" au"), "logprob": -2.0, "top_logprobs": []}]}}]}


async def test_llama_cpp_text_completion_log_probabilities_are_read_with_their_offsets(fake_llm_server, tmp_settings):
    with fake_llm_server(lambda req: Reply(body=LLAMACPP_SAMPLED), owned_by="llamacpp") as srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        out = await llm.sample_text("Coffee:", n=1, max_tokens=4, temperature=1.0)
        await llm.aclose()
    assert out[0].text == " café au"
    assert out[0].logprobs == [-1.5, -0.25, -0.01, -2.0]
    # character offsets into the continuation: the half of "é" starts where the whole character does
    assert out[0].offsets == [0, 4, 4, 5]
    assert [out[0].text[o] for o in out[0].offsets] == [" ", "é", "é", " "]


async def test_a_grammar_request_to_llama_cpp_is_refused_with_the_way_out(fake_llm_server, tmp_settings):
    with fake_llm_server(lambda req: Reply(content="SELECT 1"), owned_by="llamacpp") as srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        with pytest.raises(LLMResponseError, match="no xgrammar grammar.*SERVING_ENGINE=vllm"):
            await llm.grammar_samples(MESSAGES, 'root ::= "SELECT 1"', n=2)
        await llm.aclose()
    assert not [r for r in srv.requests if "messages" in r]  # nothing was sampled free of the grammar


async def test_a_grammar_request_to_vllm_goes_out(fake_llm_server, tmp_settings):
    with fake_llm_server(lambda req: Reply(content="SELECT 1"), owned_by="vllm") as srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        out = await llm.grammar_samples(MESSAGES, 'root ::= "SELECT 1"', n=1)
        await llm.aclose()
    assert out == ["SELECT 1"] and srv.requests[-1]["structured_outputs"] == {"grammar": 'root ::= "SELECT 1"'}
