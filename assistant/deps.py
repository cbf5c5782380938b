"""The dependencies holder, built once at start-up and passed to the loop and the tools.

Heavy things (embedding model, stores) load lazily on first use and then stay loaded, so a
chat that never touches the KG never pays for it. No module keeps a client of its own.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from functools import cached_property
from typing import Any

from assistant.llm import LLMClient
from assistant.settings import Settings

log = logging.getLogger(__name__)


def embedding_threads(settings: Settings, *, cpu_count: int | None = None,
                      cuda: Callable[[], bool] | None = None) -> int:
    """torch threads for the encoder and the GAT: the setting if given, else derived from where the LLM runs.

    A local vLLM on this CPU pins a thread per core; encoder threads beyond one then spin against it
    (measured ~7x slower encodes while it was busy). With the LLM elsewhere (another URL) or on a GPU,
    the cores are free: the column filter takes ~37 ms per SciTab table with 2 threads against ~60 ms with 1.
    """
    if settings.embedding_threads is not None:
        return settings.embedding_threads
    cores = cpu_count or os.cpu_count() or 1
    if settings.llm_base_url is None:  # the embedded local server
        if cuda is None:
            from assistant.model.serving import has_cuda as cuda
        if not cuda():
            return 1
    return cores


class Deps:
    def __init__(self, settings: Settings, llm: LLMClient | None = None, *,
                 text_kb: Callable[[Deps], Any] | None = None):
        """``text_kb``: builds the text store in place of the configured KB's (an evaluation's own corpus), from
        this holder, so it can share the encoder; called once, on first use."""
        self.settings = settings
        self.llm = llm or LLMClient(settings)
        self._lock = threading.Lock()
        self._text_kb_factory = text_kb

    @cached_property
    def embedder(self):
        from kb.embeddings import Embedder

        import torch

        with self._lock:
            torch.set_num_threads(embedding_threads(self.settings))
            return Embedder(self.settings.embedding_model)

    def warm_up(self) -> None:
        """Load the text KB and its encoder now, so the first question does not wait for them.

        Measured in the browser against the fake LLM server: the first turn after start-up spent ~8 s in
        its text search loading these; later turns ~0.1 s. Meant for a background thread at start-up; a
        failure here is only logged, since the tool that needs the store reports it in its own step.
        """
        try:
            store = self.text_kb
            if store.is_empty:
                return
            store.attach_embedder(self.embedder)
            self.embedder.encode(["warm up"])
        except Exception as exc:  # noqa: BLE001 - see above
            log.warning("warming up the text KB failed: %s", exc)

    @cached_property
    def memory(self):
        from memory.store import Memory

        return Memory(self.settings.memory_path)

    @cached_property
    def text_kb(self):
        if self._text_kb_factory is not None:
            return self._text_kb_factory(self)
        from kb.text_store import TextStore

        return TextStore(self.settings.kb_dir / "text", embedding_model=self.settings.embedding_model)

    @cached_property
    def kg(self):
        from kb.kg_store import KGStore

        return KGStore(self.settings.kb_dir / "kg.db")

    def empty_sources(self) -> set[str]:
        """Which evidence stores hold nothing yet ("text", "kg"), so the plan can skip them."""
        empty = set()
        try:
            if self.text_kb.is_empty:
                empty.add("text")
        except Exception:  # noqa: BLE001 - an unreadable store counts as empty; its tool would say why
            empty.add("text")
        try:
            if not self.kg.graph_names():
                empty.add("kg")
        except Exception:  # noqa: BLE001
            empty.add("kg")
        return empty

    async def aclose(self) -> None:
        await self.llm.aclose()
