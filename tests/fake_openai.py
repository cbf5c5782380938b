"""A scripted fake OpenAI-compatible HTTP server for tests.

It speaks enough of ``/v1/chat/completions`` (plain, streamed, tool calls, JSON schema) and
``/v1/models`` for ``assistant.llm`` to be exercised over real HTTP; other endpoints (``/v1/completions``)
answer with ``Reply.body`` as given. A test scripts it with a handler ``(request_json) -> Reply``;
every request is recorded in ``server.requests``.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Reply:
    content: str = ""
    tool_calls: list[tuple[str, str]] = field(default_factory=list)  # (name, raw JSON arguments)
    status: int = 200
    delay_s: float = 0.0
    error_body: str = '{"error": {"message": "scripted failure"}}'
    finish_reason: str | None = None  # default: "tool_calls" with tool calls, else "stop"
    stop_reason: str | None = None  # vLLM's extra field: the stop string that ended generation
    more_choices: list[str] = field(default_factory=list)  # contents of choices 2.. (requests with n > 1)
    body: dict | None = None  # sent verbatim instead of a chat completion (e.g. a text completion with logprobs)


Handler = Callable[[dict], Reply]


def first_token_reply(alternatives: dict[str, float]) -> Reply:
    """A one-token chat completion with ``logprobs``: ``alternatives`` are the first token's top log-probabilities
    (token -> logprob), the likeliest generated."""
    ranked = sorted(alternatives.items(), key=lambda kv: -kv[1])
    top = [{"token": t, "logprob": lp, "bytes": None} for t, lp in ranked]
    return Reply(body={"id": "r", "object": "chat.completion", "created": 0, "model": "fake-model",
                       "choices": [{"index": 0, "finish_reason": "length",
                                    "message": {"role": "assistant", "content": ranked[0][0]},
                                    "logprobs": {"content": [{**top[0], "top_logprobs": top}]}}],
                       "usage": {"prompt_tokens": 50, "completion_tokens": 1, "total_tokens": 51}})


def tool_reply(name: str, arguments: Any) -> Reply:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return Reply(tool_calls=[(name, raw)])


class FakeOpenAI:
    def __init__(self, handler: Handler | list[Reply] | None = None, models: list[str] | None = None,
                 owned_by: str = "fake"):
        self.requests: list[dict] = []
        self.models = models or ["fake-model"]
        self.owned_by = owned_by  # what /models says serves them: "vllm", "llamacpp" (llama.cpp's server) ...
        self._script: list[Reply] | None = None
        self.handler: Handler = self._next_scripted
        if isinstance(handler, list):
            self._script = list(handler)
        elif handler is not None:
            self.handler = handler
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._make_handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _next_scripted(self, req: dict) -> Reply:
        if not self._script:
            raise AssertionError(f"fake server: no scripted reply left for {req.get('messages', [])[-1:]}")
        return self._script.pop(0)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> "FakeOpenAI":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _make_handler(self):
        fake = self

        class H(BaseHTTPRequestHandler):
            # HTTP/1.1 keep-alive, as vLLM's server speaks: the client reuses pooled connections between requests,
            # which is what broke a terminal chat that ran each turn on a new event loop.
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output quiet
                pass

            def _send(self, status: int, body: str, ctype="application/json"):
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, json.dumps({"object": "list", "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": fake.owned_by} for m in fake.models]}))
                else:
                    self._send(404, "{}")

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                req = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append(req)
                try:
                    reply = fake.handler(req)
                except AssertionError as exc:
                    self._send(500, json.dumps({"error": {"message": str(exc)}}))
                    return
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.status != 200:
                    self._send(reply.status, reply.error_body)
                    return
                if reply.body is not None:
                    self._send(200, json.dumps(reply.body))
                elif req.get("stream"):
                    self._stream(req, reply)
                else:
                    self._send(200, json.dumps(_completion(req, reply)))

            def _chunk(self, data: bytes) -> None:
                """One piece of a chunked body (HTTP/1.1 streams keep the connection, as uvicorn's do)."""
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

            def _stream(self, req: dict, reply: Reply):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                words = reply.content.split(" ")
                for i, w in enumerate(words):
                    piece = w if i == 0 else " " + w
                    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": req.get("model"),
                             "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                    self._chunk(f"data: {json.dumps(chunk)}\n\n".encode())
                end = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": req.get("model"),
                       "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
                self._chunk(f"data: {json.dumps(end)}\n\n".encode())
                if (req.get("stream_options") or {}).get("include_usage"):  # as OpenAI and vLLM send it
                    usage = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": req.get("model"),
                             "choices": [], "usage": _usage(reply.content, req)}
                    self._chunk(f"data: {json.dumps(usage)}\n\n".encode())
                self._chunk(b"data: [DONE]\n\n")
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        return H


def _completion(req: dict, reply: Reply) -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": f"call_{uuid.uuid4().hex[:8]}", "type": "function", "function": {"name": n, "arguments": a}}
            for n, a in reply.tool_calls]
    return {"id": "cmpl", "object": "chat.completion", "created": 0, "model": req.get("model", "fake-model"),
            "choices": [{"index": 0, "message": message,
                         "finish_reason": reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop"),
                         **({"stop_reason": reply.stop_reason} if reply.stop_reason else {})}]
            + [{"index": i, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
               for i, text in enumerate(reply.more_choices, start=1)],
            "usage": _usage(" ".join([reply.content or ""] + [a for _, a in reply.tool_calls or []]
                                     + list(reply.more_choices)), req)}


def prompt_words(req: dict) -> int:
    """The fake's prompt token count: one token per whitespace-separated word of the request's messages."""
    return sum(len(str(m.get("content") or "").split()) for m in req.get("messages") or [])


def _usage(text: str, req: dict) -> dict:
    """A token count the tests can predict: one token per whitespace-separated word, prompt and reply."""
    n, prompt = len(text.split()), prompt_words(req)
    return {"prompt_tokens": prompt, "completion_tokens": n, "total_tokens": n + prompt}
