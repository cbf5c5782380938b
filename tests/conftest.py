"""Shared fixtures.

Real-model tests are marked ``real_model``. They use ``EVIDENTIA_LLM_BASE_URL`` (or the local
vLLM port). Without a server they skip — unless ``EVIDENTIA_REQUIRE_REAL_MODEL=1`` (set by
``.ci/run``), where a missing server is a failure, so CI can never pass by skipping them.
"""

from __future__ import annotations

import asyncio
import os

import pytest

from assistant.settings import Settings
from tests.fake_openai import FakeOpenAI
from tests.shared_data import EVAL_DATA, KB_DATA, SHARED  # noqa: F401 - re-exported to the tests


@pytest.fixture
def tmp_settings(tmp_path) -> Settings:
    """Settings isolated in a temporary data dir, never reading the developer's .env."""
    return Settings(_env_file=None, data_dir=tmp_path / "data", llm_base_url="http://127.0.0.1:9/v1",
                    llm_timeout_s=10, llm_connect_timeout_s=1, llm_max_retries=0,
                    kb_mirror_dir=KB_DATA, eval_data_dir=EVAL_DATA)


@pytest.fixture
def fake_llm_server():
    """Start a FakeOpenAI with a handler or a list of replies: ``with fake_llm_server(h) as srv``."""
    servers = []

    def make(handler=None, **kw):
        srv = FakeOpenAI(handler, **kw)
        servers.append(srv)
        return srv

    yield make
    for s in servers:
        try:
            s.__exit__(None, None, None)
        except Exception:
            pass


def _real_base_url() -> str:
    s = Settings()
    return s.effective_base_url


@pytest.fixture(scope="session")
def real_settings() -> Settings:
    """Settings pointing at the real served model; skip (or fail in CI) if it is down."""
    import httpx

    base = _real_base_url()
    try:
        r = httpx.get(base.rstrip("/") + "/models", timeout=5)
        r.raise_for_status()
        served = [m["id"] for m in r.json()["data"]]
    except Exception as exc:  # noqa: BLE001 - any failure means "no server"
        if os.environ.get("EVIDENTIA_REQUIRE_REAL_MODEL") == "1":
            pytest.fail(f"real model required but {base} is not serving: {exc}")
        pytest.skip(f"no served model at {base} ({exc})")
    return Settings(llm_base_url=base, llm_model=served[0], llm_timeout_s=600)


@pytest.fixture
def run_async():
    def run(coro):
        return asyncio.run(coro)

    return run


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Expose each phase's report on the test item (``item.rep_call``) for failure artefacts."""
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)
