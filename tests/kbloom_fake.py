"""A scripted language model with known log-probabilities, for K-Bloom's tests.

Text is cut into word tokens (each with its leading whitespace). A token's log-probability is looked up
by its lower-cased word in ``word_logprobs`` (default ``default``), optionally per prompt: a word listed
in ``prompt_bias[marker]`` gets that extra amount whenever the text contains ``marker``. The first token
of a text has none (as from a real server). So every pair's score under every prompt is known in advance.

``ScriptedLM`` offers the methods the harvest calls on ``assistant.llm.LLMClient``; ``handler`` serves the
same model through ``tests.fake_openai.FakeOpenAI`` (text completions with ``echo``/``logprobs``, sampled
completions, and JSON paraphrases on the chat endpoint).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from assistant.llm import TokenLogprobs
from tests.fake_openai import Reply

_TOKEN = re.compile(r"\s*\S+|\s+$")


def tokens(text: str) -> list[tuple[str, int]]:
    return [(m.group(0), m.start()) for m in _TOKEN.finditer(text) if m.group(0)]


@dataclass
class ScriptedLM:
    word_logprobs: dict[str, float] = field(default_factory=dict)
    default: float = -5.0
    prompt_bias: dict[str, dict[str, float]] = field(default_factory=dict)
    samples: list[str] = field(default_factory=list)  # continuations returned by sampling, in turn
    paraphrases: list[str] = field(default_factory=list)
    scored_texts: list[str] = field(default_factory=list)  # every text whose log-probs were asked for
    sample_calls: int = 0
    fail_after_scoring_calls: int | None = None  # raise once this many prompt_logprobs calls were made
    _score_calls: int = 0

    def logprob(self, text: str, token: str) -> float:
        word = token.strip().lower()
        lp = self.word_logprobs.get(word, self.default)
        for marker, bias in self.prompt_bias.items():
            if marker in text:
                lp += bias.get(word, 0.0)
        return lp

    def token_logprobs(self, text: str, top_k: int = 0) -> TokenLogprobs:
        toks = tokens(text)
        lps = [None] + [self.logprob(text, t) for t, _ in toks[1:]]
        top = [{} if lp is None else {t: lp, " <other>": lp - 1.0} for (t, _), lp in zip(toks, lps)] if top_k else []
        return TokenLogprobs(text=text, tokens=[t for t, _ in toks], logprobs=lps, offsets=[o for _, o in toks],
                             top=top)

    # -- the LLMClient surface the harvest uses --------------------------------------------------
    async def prompt_logprobs(self, prompts: list[str], *, top_k: int = 0) -> list[TokenLogprobs]:
        if self.fail_after_scoring_calls is not None and self._score_calls >= self.fail_after_scoring_calls:
            from kb.errors import LLMUnavailable

            raise LLMUnavailable("scripted interruption")
        self._score_calls += 1
        self.scored_texts.extend(prompts)
        return [self.token_logprobs(p, top_k) for p in prompts]

    async def sample_text(self, prompt: str, *, n: int, max_tokens: int, temperature: float,
                          stop=None, seed=None) -> list[TokenLogprobs]:
        out = []
        for _ in range(n):
            text = self.samples[self.sample_calls % len(self.samples)] if self.samples else ""
            self.sample_calls += 1
            lp = self.token_logprobs(text)
            lp.logprobs = [self.logprob(text, t) for t in lp.tokens]  # generated tokens all have one
            out.append(lp)
        return out

    async def structured_samples(self, messages, schema, *, n: int, **kw):
        return [schema.model_validate({"sentence": s}) for s in (self.paraphrases * n)[:n]]

    async def resolved_model(self) -> str:
        return "scripted-lm"

    # -- the same model over HTTP (tests.fake_openai) ---------------------------------------------
    def handler(self, req: dict) -> Reply:
        if "messages" in req:  # a paraphrase request (JSON schema on the chat endpoint)
            n = req.get("n") or 1
            texts = [json.dumps({"sentence": s}) for s in (self.paraphrases * n)[:n]] or ['{"sentence": ""}']
            return Reply(content=texts[0], more_choices=texts[1:])
        if req.get("echo"):
            prompts = req["prompt"] if isinstance(req["prompt"], list) else [req["prompt"]]
            if self.fail_after_scoring_calls is not None and self._score_calls >= self.fail_after_scoring_calls:
                return Reply(status=400, error_body='{"error": {"message": "scripted interruption"}}')
            self._score_calls += 1
            self.scored_texts.extend(prompts)
            choices = []
            for i, p in enumerate(prompts):
                lp = self.token_logprobs(p + " x", top_k=1)  # echo: the prompt plus one generated token
                choices.append({"index": i, "text": p + " x", "finish_reason": "length",
                                "logprobs": {"tokens": lp.tokens, "token_logprobs": lp.logprobs,
                                             "text_offset": lp.offsets, "top_logprobs": lp.top}})
            return Reply(body=_text_completion(req, choices))
        n = req.get("n") or 1
        choices = []
        for i in range(n):
            text = self.samples[self.sample_calls % len(self.samples)] if self.samples else ""
            self.sample_calls += 1
            lp = self.token_logprobs(text)
            choices.append({"index": i, "text": text, "finish_reason": "length",
                            "logprobs": {"tokens": lp.tokens, "token_logprobs": [self.default] + lp.logprobs[1:],
                                         "text_offset": lp.offsets,  # vLLM: from 0, the continuation's own
                                         "top_logprobs": None}})
        return Reply(body=_text_completion(req, choices))


def _text_completion(req: dict, choices: list[dict]) -> dict:
    return {"id": "cmpl", "object": "text_completion", "created": 0, "model": req.get("model", "fake-model"),
            "choices": choices, "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
