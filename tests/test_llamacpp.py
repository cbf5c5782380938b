"""llama.cpp as the serving engine (#80): the GGUF kept as published, llama-server built once per CPU from the
locked sources (a tiny CMake project stands in for llama.cpp here), its command, and `model serve` starting it."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import sys
import tarfile
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import assistant.model.llamacpp as llamacpp
import assistant.model.serving as serving
from assistant import lockfiles
from assistant.model.llamacpp import BINARY, EngineBuildError, build_command, ensure_llama_server, installed_server
from assistant.model.provision import GGUF_NAME, INFO_NAME, MARKER_NAME, PartSource, install_gguf
from assistant.model.serving import ServingError, ensure_server
from assistant.settings import Settings
from tests.test_serving import free_port

needs_cmake = pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")



@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path / "data", llm_base_url=None, vllm_port=free_port(),
                    serving_engine="llamacpp", vllm_max_model_len=2048, llamacpp_slots=6, llamacpp_threads=3)


def flag(cmd: list[str], name: str) -> str:
    return cmd[cmd.index(name) + 1]


# --- the command ---------------------------------------------------------------------------------

def test_the_command_serves_the_gguf_under_the_clients_model_name(settings, tmp_path):
    cmd = build_command(settings, Path("/x/llama-server"), tmp_path / "model.gguf")
    assert cmd[0] == "/x/llama-server" and flag(cmd, "--model") == str(tmp_path / "model.gguf")
    assert flag(cmd, "--alias") == settings.llm_model  # the client asks for the same name as from vLLM
    assert flag(cmd, "--port") == str(settings.vllm_port) and flag(cmd, "--host") == settings.vllm_host
    # every slot gets the client's whole context budget; n samples take n slots
    assert flag(cmd, "--ctx-size") == str(2048 * 6) and flag(cmd, "--parallel") == "6"
    assert flag(cmd, "--threads") == "3"
    assert {"--jinja", "--metrics"} <= set(cmd)  # tool calls parsed by the chat template; token counters


def test_threads_default_to_one_per_core(settings, tmp_path):
    s = settings.model_copy(update={"llamacpp_threads": None})
    assert flag(build_command(s, Path("b"), tmp_path / "m.gguf"), "--threads") == str(os.cpu_count())


# --- the locked source -----------------------------------------------------------------------------

def test_the_source_lock_pins_one_sdist_by_hash_as_make_lock_wrote_it():
    text = lockfiles.lock_file(lockfiles.LLAMACPP).read_text()
    assert text.splitlines()[1].strip() == "#    make lock"
    pins = lockfiles.locked_versions(lockfiles.LLAMACPP)
    assert pins == {"llama-cpp-python": llamacpp.source_version()}
    assert text.count("--hash=sha256:") == 1  # PyPI holds only the sdist: one archive, one hash
    wanted = [ln.strip() for ln in (lockfiles.LOCK_DIR / "llamacpp.in").read_text().splitlines()
              if ln.strip() and not ln.startswith("#")]
    assert wanted == [f"llama-cpp-python=={llamacpp.source_version()}"]


# --- building llama-server, with a tiny CMake project in place of llama.cpp ---------------------------

FAKE_CMAKE = textwrap.dedent("""
    cmake_minimum_required(VERSION 3.10)
    project(fake_llama NONE)
    add_custom_target(llama-server
        COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/bin
        COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_SOURCE_DIR}/server.sh ${CMAKE_BINARY_DIR}/bin/llama-server)
""")
FAILING_CMAKE = textwrap.dedent("""
    cmake_minimum_required(VERSION 3.10)
    project(fake_llama NONE)
    add_custom_target(llama-server COMMAND ${CMAKE_COMMAND} -E false)
""")


def fake_sdist(folder: Path, cmake: str = FAKE_CMAKE) -> Path:
    """An archive laid out as llama-cpp-python's sdist: llama.cpp's sources under vendor/llama.cpp."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "llama_cpp_python-0.0.0.tar.gz"
    files = {"vendor/llama.cpp/CMakeLists.txt": cmake, "vendor/llama.cpp/server.sh": "#!/bin/sh\necho serving\n"}
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"llama_cpp_python-0.0.0/{name}")
            info.size, info.mode = len(data), 0o755
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def downloads(monkeypatch, tmp_path):
    """Each build's download hands over the fake sdist (pip and its hash check are not under test here)."""
    calls: list[Path] = []
    cmake = {"text": FAKE_CMAKE}

    def download(work: Path) -> Path:
        calls.append(work)
        return fake_sdist(work, cmake["text"])

    monkeypatch.setattr(llamacpp, "_download_source", download)
    return calls, cmake


@needs_cmake
def test_the_server_is_built_once_per_cpu_and_lock(settings, downloads):
    calls, _ = downloads
    messages: list[str] = []
    binary = ensure_llama_server(settings, progress=False, echo=messages.append)
    assert binary == llamacpp.server_dir(settings) / BINARY and os.access(binary, os.X_OK)
    assert binary.read_text().startswith("#!/bin/sh")
    assert (binary.parent / llamacpp.READY).read_text().strip() == lockfiles.lock_id(lockfiles.LLAMACPP)
    assert any("built in" in m for m in messages)
    assert ensure_llama_server(settings, progress=False, echo=messages.append) == binary
    assert len(calls) == 1  # the second call found the build
    assert [p.name for p in binary.parent.parent.iterdir()] == [binary.parent.name]  # no build folder left


@needs_cmake
def test_a_build_for_another_lock_is_not_used(settings, downloads, monkeypatch):
    calls, _ = downloads
    ensure_llama_server(settings, progress=False)
    monkeypatch.setattr(lockfiles, "lock_id", lambda name: "llamacpp.txt sha256:another")
    assert installed_server(settings) is None
    ensure_llama_server(settings, progress=False)
    assert len(calls) == 2


@needs_cmake
def test_a_failed_build_says_why_and_keeps_nothing(settings, downloads):
    _, cmake = downloads
    cmake["text"] = FAILING_CMAKE
    with pytest.raises(EngineBuildError, match="Could not build llama-server"):
        ensure_llama_server(settings, progress=False)
    assert installed_server(settings) is None
    assert list(llamacpp.server_dir(settings).parent.iterdir()) == []


def test_missing_build_tools_are_named_with_the_way_out(settings, monkeypatch):
    monkeypatch.setattr(llamacpp.shutil, "which", lambda tool: None if tool == "cmake" else "/usr/bin/" + tool)
    with pytest.raises(EngineBuildError, match=r"needs cmake.*apt-get install cmake g\+\+.*SERVING_ENGINE=vllm"):
        ensure_llama_server(settings, progress=False)


def test_an_archive_without_llama_cpp_is_refused(tmp_path):
    path = tmp_path / "other.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("pkg/setup.py")
        info.size = 0
        tar.addfile(info, io.BytesIO(b""))
    with pytest.raises(EngineBuildError, match="not the expected sources"):
        llamacpp._unpack(path, tmp_path / "src")


# --- the GGUF, kept as published -------------------------------------------------------------------

def test_the_gguf_install_keeps_the_checked_gguf_and_converts_nothing(settings, tmp_path):
    payload = os.urandom(30_000)
    parts = [payload[:10_000], payload[10_000:25_000], payload[25_000:]]

    def fetch(index: int, into: Path) -> Path:
        path = into / f"part{index:02d}.bin"
        path.write_bytes(parts[index - 1])
        return path

    source = PartSource(package_template="fake-part{index}", version="1", count=3, expected_size=len(payload),
                        expected_sha256=hashlib.sha256(payload).hexdigest(), fetch=fetch)
    gguf = install_gguf(settings, progress=False, source=source, echo=lambda m: None)
    assert gguf == settings.gguf_model_dir / GGUF_NAME and gguf.read_bytes() == payload
    assert (settings.gguf_model_dir / MARKER_NAME).is_file()
    assert json.loads((settings.gguf_model_dir / INFO_NAME).read_text())["format"] == "GGUF Q4_K_M as published"
    assert not (settings.gguf_model_dir / "config.json").exists()  # no bf16 export
    assert not settings.default_model_dir.exists()  # vLLM's folder is not made


# --- `model serve` through llama.cpp ----------------------------------------------------------------

FAKE_LLAMA_SERVER = textwrap.dedent("""\
    #!{python}
    import json, sys
    from http.server import BaseHTTPRequestHandler, HTTPServer
    args = sys.argv[1:]
    port, alias = int(args[args.index("--port") + 1]), args[args.index("--alias") + 1]
    open({argv_file!r}, "w").write(json.dumps(args))
    class H(BaseHTTPRequestHandler):
        def log_message(self, *a): pass
        def do_GET(self):
            body = json.dumps({{"data": [{{"id": alias, "owned_by": "llamacpp"}}]}}).encode()
            self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
            self.wfile.write(body)
    HTTPServer(("127.0.0.1", port), H).serve_forever()
""")


def installed_fakes(settings: Settings, tmp_path: Path) -> Path:
    """A built 'llama-server' (a Python stand-in) and an installed GGUF, as the install leaves them."""
    folder = llamacpp.server_dir(settings)
    folder.mkdir(parents=True)
    argv_file = tmp_path / "argv.json"
    (folder / BINARY).write_text(FAKE_LLAMA_SERVER.format(python=sys.executable, argv_file=str(argv_file)))
    (folder / BINARY).chmod(0o755)
    (folder / llamacpp.READY).write_text(lockfiles.lock_id(lockfiles.LLAMACPP) + "\n")
    settings.gguf_model_dir.mkdir(parents=True)
    (settings.gguf_model_dir / GGUF_NAME).write_bytes(b"GGUF")
    (settings.gguf_model_dir / MARKER_NAME).write_text("now\n")
    return argv_file


def test_serve_starts_llama_server_on_the_gguf_without_vllm(settings, tmp_path, monkeypatch):
    argv_file = installed_fakes(settings, tmp_path)
    monkeypatch.setattr(serving, "ensure_vllm_env", lambda *a, **k: pytest.fail("vLLM must not be set up"))
    messages: list[str] = []
    handle = ensure_server(settings, echo=messages.append, progress=False)
    try:
        assert handle.base_url == settings.local_base_url and handle.model == settings.llm_model
        assert serving.served_models(handle.base_url) == [settings.llm_model]
        args = json.loads(argv_file.read_text())
        assert flag(args, "--model") == str(settings.gguf_model_dir / GGUF_NAME)
        assert any("through llama.cpp: Q4_K_M weights" in m for m in messages)
        assert handle.server.log_path.name == "llama-server.log"
    finally:
        handle.stop()
    assert serving.served_models(settings.local_base_url, timeout=1.0) is None


def test_serve_without_install_names_the_install_command(settings):
    with pytest.raises(ServingError, match="evidentia model install"):
        ensure_server(settings, install=False, progress=False, echo=lambda m: None)


def test_a_hub_model_cannot_go_through_llama_cpp(settings):
    s = settings.model_copy(update={"hf_model_id": "Qwen/Qwen2.5-7B-Instruct"})
    with pytest.raises(ServingError, match="packaged GGUF only"):
        ensure_server(s, progress=False, echo=lambda m: None)


def test_model_status_says_which_engine_and_build(settings, tmp_path, monkeypatch):
    from assistant.cli import model_cli

    installed_fakes(settings, tmp_path)
    monkeypatch.setattr(model_cli, "_settings", lambda: settings)
    out = CliRunner().invoke(model_cli.model_group, ["status", "--json"])
    assert out.exit_code == 0, out.output
    status = json.loads(out.output)
    assert status["serving_engine"] == "llamacpp" and status["model_installed"] is True
    assert status["llama_server"] == str(llamacpp.server_dir(settings) / BINARY)
    assert status["computes_with"].startswith("Q4_K_M weights as published")


def test_model_install_for_llama_cpp_keeps_the_gguf_and_builds_the_server(settings, tmp_path, monkeypatch):
    from assistant.cli import model_cli
    import assistant.model.provision as provision

    made: list[str] = []
    monkeypatch.setattr(model_cli, "_settings", lambda: settings.model_copy(update={"serving_engine": "vllm"}))
    monkeypatch.setattr(provision, "install_gguf",
                        lambda s, **k: made.append("gguf") or s.gguf_model_dir / GGUF_NAME)
    monkeypatch.setattr(llamacpp, "ensure_llama_server", lambda s, **k: made.append("server") or Path("/b/srv"))
    monkeypatch.setattr(provision, "install_default_model", lambda *a, **k: pytest.fail("no bf16 export"))
    out = CliRunner().invoke(model_cli.model_group, ["install", "--engine", "llamacpp", "--quiet"])
    assert out.exit_code == 0, out.output
    assert made == ["gguf", "server"]
    assert "llama.cpp's server: /b/srv" in out.output and str(settings.gguf_model_dir) in out.output


def test_a_failed_server_build_is_one_clear_message(settings, monkeypatch):
    from assistant.cli import model_cli
    import assistant.model.provision as provision

    monkeypatch.setattr(model_cli, "_settings", lambda: settings)
    monkeypatch.setattr(provision, "install_gguf", lambda s, **k: s.gguf_model_dir / GGUF_NAME)

    def fail(s, **k):
        raise EngineBuildError("Could not build llama-server (exit 2).\nerror: out of memory")

    monkeypatch.setattr(llamacpp, "ensure_llama_server", fail)
    out = CliRunner().invoke(model_cli.model_group, ["install", "--quiet"])
    assert out.exit_code == 1 and "Error: Could not build llama-server (exit 2)" in out.output
    assert "Traceback" not in out.output


def test_a_server_of_the_other_engine_on_the_port_is_reused_with_a_note(settings, fake_llm_server):
    with fake_llm_server(models=[settings.llm_model], owned_by="vllm") as srv:
        port = int(srv.base_url.rsplit(":", 1)[1].split("/")[0])
        messages: list[str] = []
        handle = ensure_server(settings.model_copy(update={"vllm_port": port}), echo=messages.append)
    assert handle.reused and handle.server is None
    assert any("that server is vllm, not the llamacpp engine" in m for m in messages)


# --- auto: the engine chosen from the CPU's flags --------------------------------------------------

AVX512 = frozenset({"avx2", "avx512f", "avx512_bf16"})
AVX2 = frozenset({"sse4_2", "avx", "avx2", "fma"})


@pytest.mark.parametrize(("engine", "cuda", "flags", "machine", "chosen"), [
    ("vllm", False, AVX2, "x86_64", "vllm"),          # named: never second-guessed
    ("llamacpp", True, AVX512, "x86_64", "llamacpp"),
    ("auto", True, AVX2, "x86_64", "vllm"),           # a GPU: vLLM's CUDA build
    ("auto", False, AVX512, "x86_64", "vllm"),        # vLLM's 4-bit kernel; claim check ratio 1.08 (no gain)
    ("auto", False, AVX2, "x86_64", "llamacpp"),      # vLLM computes float32; llama.cpp measured ratio 0.52
    ("auto", False, frozenset({"fp", "asimd"}), "aarch64", "llamacpp"),
    ("auto", False, frozenset(), "x86_64", "llamacpp"),
])
def test_auto_serves_vllm_on_a_gpu_or_avx512_and_llama_cpp_elsewhere(settings, engine, cuda, flags, machine, chosen):
    choice = serving.choose_engine(settings.model_copy(update={"serving_engine": engine}), cuda=cuda, flags=flags,
                                   machine=machine)
    assert choice.engine == chosen
    assert choice.why.startswith("auto") == (engine == "auto")


def test_auto_leaves_a_hub_model_to_vllm_which_alone_serves_it(settings):
    s = settings.model_copy(update={"serving_engine": "auto", "hf_model_id": "Qwen/Qwen2.5-7B-Instruct"})
    assert serving.choose_engine(s, cuda=False, flags=AVX2).engine == "vllm"


def test_auto_on_an_avx2_cpu_starts_llama_server_and_says_why(settings, tmp_path, monkeypatch):
    installed_fakes(settings, tmp_path)
    monkeypatch.setattr(serving, "cpu_flags", lambda: AVX2)
    monkeypatch.setattr(serving, "has_cuda", lambda: False)
    monkeypatch.setattr(serving, "ensure_vllm_env", lambda *a, **k: pytest.fail("vLLM must not be set up"))
    messages: list[str] = []
    handle = ensure_server(settings.model_copy(update={"serving_engine": "auto"}), echo=messages.append,
                           progress=False)
    try:
        assert serving.served_models(handle.base_url) == [settings.llm_model]
        assert handle.server.log_path.name == "llama-server.log"
        assert any(m.startswith("Serving engine: llamacpp (auto: AVX2 (no AVX-512)") for m in messages)
    finally:
        handle.stop()


def test_auto_on_an_avx512_cpu_takes_the_vllm_path(settings, monkeypatch):
    monkeypatch.setattr(serving, "cpu_flags", lambda: AVX512)
    monkeypatch.setattr(serving, "has_cuda", lambda: False)
    monkeypatch.setattr(serving, "start_llamacpp", lambda *a, **k: pytest.fail("llama.cpp must not start"))

    class Reached(Exception):
        pass

    def vllm_path(*a, **k):
        raise Reached

    monkeypatch.setattr(serving, "fit_default_format_before_copy", vllm_path)
    with pytest.raises(Reached):
        ensure_server(settings.model_copy(update={"serving_engine": "auto"}), install=False, progress=False,
                      echo=lambda m: None)


def test_model_install_auto_on_an_avx2_cpu_builds_llama_server(settings, monkeypatch):
    from assistant.cli import model_cli
    import assistant.model.provision as provision

    made: list[str] = []
    monkeypatch.setattr(serving, "cpu_flags", lambda: AVX2)
    monkeypatch.setattr(serving, "has_cuda", lambda: False)
    monkeypatch.setattr(model_cli, "_settings", lambda: settings.model_copy(update={"serving_engine": "auto"}))
    monkeypatch.setattr(provision, "install_gguf", lambda s, **k: made.append("gguf") or s.gguf_model_dir / GGUF_NAME)
    monkeypatch.setattr(llamacpp, "ensure_llama_server", lambda s, **k: made.append("server") or Path("/b/srv"))
    monkeypatch.setattr(provision, "install_default_model", lambda *a, **k: pytest.fail("no bf16 export"))
    out = CliRunner().invoke(model_cli.model_group, ["install", "--quiet"])
    assert out.exit_code == 0, out.output
    assert made == ["gguf", "server"] and "Serving engine: llamacpp (auto: AVX2" in out.output


def test_model_status_names_the_auto_choice(settings, tmp_path, monkeypatch):
    from assistant.cli import model_cli
    import kb.cpu

    installed_fakes(settings, tmp_path)
    monkeypatch.setattr(kb.cpu, "cpu_flags", lambda: AVX2)
    monkeypatch.setattr(serving, "has_cuda", lambda: False)
    monkeypatch.setattr(model_cli, "_settings", lambda: settings.model_copy(update={"serving_engine": "auto"}))
    out = CliRunner().invoke(model_cli.model_group, ["status", "--json"])
    assert out.exit_code == 0, out.output
    status = json.loads(out.output)
    assert status["serving_engine"] == "llamacpp" and status["engine_chosen_by"].startswith("auto: AVX2")
    assert status["llama_server"] == str(llamacpp.server_dir(settings) / BINARY)
