"""With no network and no mirror, the default knowledge base is not built half-way: `evidentia run` and
`evidentia kb build --default` stop with one message that says what to set (#74)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import assistant.cli.chat_cli as chat_cli
import kb.default_corpus as default_corpus
from assistant.cli import main
from assistant.settings import Settings
from kb.default_corpus import (SourceUnavailable, build_default, missing_default_sources,
                               missing_sources_message)
from tests.shared_data import KB_DATA


@pytest.fixture
def offline(monkeypatch) -> list[str]:
    """No network: every download fails as _download fails without one. Returns the URLs it was asked for."""
    asked: list[str] = []

    def no_network(url, dest):
        asked.append(url)
        raise SourceUnavailable(f"Could not download {url} ([Errno -2] Name or service not known)")

    monkeypatch.setattr(default_corpus, "_download", no_network)
    return asked


def bare_settings(tmp_path, mirror=None) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path / "data", kb_mirror_dir=mirror,
                    llm_base_url="http://127.0.0.1:9/v1")


def test_no_mirror_and_no_network_misses_every_source(tmp_path, offline):
    missing = missing_default_sources(bare_settings(tmp_path), kgs=True)
    assert set(missing) == set(default_corpus.SOURCE_FILES) | {"hetionet", "conceptnet"}
    assert len(offline) == 5  # each text source tried once
    message = missing_sources_message(missing)
    assert "EVIDENTIA_KB_MIRROR_DIR" in message and "Nothing was built" in message
    assert "pubmedqa: no local copy, and https://" in message


def test_an_earlier_download_counts_as_had(tmp_path, offline):
    settings = bare_settings(tmp_path)
    cache = settings.data_dir / "kb-sources"
    cache.mkdir(parents=True)
    (cache / "ori_pqal.json").write_text("{}")
    assert "pubmedqa" not in missing_default_sources(settings)
    assert len(offline) == 4


@pytest.mark.skipif(not KB_DATA.is_dir(), reason="needs the shared kb-data mirror")
def test_the_mirror_holds_every_source_and_nothing_is_downloaded(tmp_path, offline):
    assert missing_default_sources(bare_settings(tmp_path, KB_DATA), kgs=True) == {}
    assert offline == []


def test_the_build_adds_nothing_when_a_source_is_missing(tmp_path, offline):
    class Store:  # build_default must refuse before it touches the store
        def add_documents(self, *a, **k):
            raise AssertionError("nothing may be built")

    with pytest.raises(SourceUnavailable, match="Nothing was built"):
        build_default(Store(), bare_settings(tmp_path), echo=lambda m: None)


def test_run_stops_with_one_message_before_building_or_serving(tmp_path, offline, monkeypatch):
    for name in ("EVIDENTIA_KB_MIRROR_DIR", "EVIDENTIA_LLM_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("EVIDENTIA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)  # no .env
    started: list = []
    monkeypatch.setattr(chat_cli.subprocess, "run", lambda *a, **k: started.append(a))
    monkeypatch.setattr("assistant.model.serving.ensure_server", lambda *a, **k: started.append("server"))
    result = CliRunner().invoke(main, ["run"])
    assert result.exit_code == 1
    assert "EVIDENTIA_KB_MIRROR_DIR" in result.output and "Nothing was built" in result.output
    assert result.output.count("Error:") == 1 and "Traceback" not in result.output
    assert started == []  # no KB build, no graph load, no model server
    assert not (tmp_path / "data" / "kb" / "text" / "text.db").exists()


def test_kb_build_default_says_the_same(tmp_path, offline, monkeypatch):
    monkeypatch.delenv("EVIDENTIA_KB_MIRROR_DIR", raising=False)
    monkeypatch.setenv("EVIDENTIA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["kb", "build", "--default"])
    assert result.exit_code == 1 and "EVIDENTIA_KB_MIRROR_DIR" in result.output
    assert "KB: 0 sentences" not in result.output
