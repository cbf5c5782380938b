"""Start-up warm-up: the encoder and the text KB load before the first question, and only when there is a KB."""

from __future__ import annotations

import logging

from assistant.deps import Deps
from kb.ingest import Document


def test_an_empty_kb_loads_no_encoder(tmp_settings):
    deps = Deps(tmp_settings)
    deps.warm_up()
    assert "embedder" not in deps.__dict__  # nothing to search: the model is not loaded for nothing


def test_a_kb_gets_its_encoder_loaded_and_attached(tmp_settings):
    deps = Deps(tmp_settings)
    deps.text_kb.attach_embedder(deps.embedder)
    deps.text_kb.add_documents([Document(doc_id="d1", title="t", source="fixture", text="Bees pollinate flowers.")],
                               collection="fixture", show_progress=False)
    fresh = Deps(tmp_settings)  # a new process's holder: nothing loaded yet
    fresh.warm_up()
    assert "embedder" in fresh.__dict__ and fresh.text_kb.embedder is fresh.__dict__["embedder"]


class BrokenKBDeps(Deps):
    @property
    def text_kb(self):
        raise OSError("disk unreadable")


def test_a_broken_kb_is_only_logged(tmp_settings, caplog):
    with caplog.at_level(logging.WARNING):
        BrokenKBDeps(tmp_settings).warm_up()  # must not raise: the text search step reports it in its turn
    assert "warming up the text KB failed: disk unreadable" in caplog.text
