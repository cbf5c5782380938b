"""`evidentia model install | status` through click, on fake parts and a fake server."""

from __future__ import annotations

import json

from click.testing import CliRunner

import assistant.model.provision as provision
from assistant.cli.model_cli import model_group


def test_status_reports_nothing_installed_and_no_server(tmp_path, monkeypatch):
    monkeypatch.setenv("EVIDENTIA_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("EVIDENTIA_VLLM_PORT", "9")  # nothing listens on the discard port
    monkeypatch.delenv("EVIDENTIA_LLM_BASE_URL", raising=False)
    out = CliRunner().invoke(model_group, ["status", "--json"])
    assert out.exit_code == 0, out.output
    status = json.loads(out.output)
    assert status["model_installed"] is False and status["server_up"] is False
    assert status["log"] == str(tmp_path / "logs" / "vllm.log")


def test_install_then_status_then_install_again(tmp_path, monkeypatch, fake_llm_server):
    monkeypatch.setenv("EVIDENTIA_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("EVIDENTIA_MODEL_FORMAT", "bf16")  # the W4A16 copy has its own tests (test_quantize)
    payload = b"0123456789" * 100
    part = tmp_path / "p1.bin"
    part.write_bytes(payload)
    import hashlib

    fake_source = provision.PartSource(count=1, expected_size=len(payload),
                                       expected_sha256=hashlib.sha256(payload).hexdigest(),
                                       fetch=lambda i, into: part)

    real_install = provision.install_default_model

    def fake_install(settings, **kw):
        return real_install(settings, source=fake_source,
                            converter=lambda g, o, p: (o / "config.json").write_text("{}"),
                            required_free_bytes=0, **kw)

    monkeypatch.setattr(provision, "install_default_model", fake_install)
    runner = CliRunner()
    first = runner.invoke(model_group, ["install", "--quiet"])
    assert first.exit_code == 0, first.output
    assert "Installed Qwen/Qwen2.5-Coder-1.5B-Instruct" in first.output
    second = runner.invoke(model_group, ["install", "--quiet"])
    assert second.exit_code == 0 and "already installed" in second.output

    with fake_llm_server(models=["m"]) as srv:
        monkeypatch.setenv("EVIDENTIA_LLM_BASE_URL", srv.base_url)
        status = json.loads(runner.invoke(model_group, ["status", "--json"]).output)
    assert status["model_installed"] is True and status["license"] == "Apache-2.0"
    assert status["server_up"] is True and status["served_models"] == ["m"] and status["external_server"]


def test_install_failure_is_a_clean_error_message(tmp_path, monkeypatch):
    monkeypatch.setenv("EVIDENTIA_DATA_DIR", str(tmp_path))

    def failing(settings, **kw):
        raise provision.ProvisionError("The assembled model's sha256 is abc, expected def.")

    monkeypatch.setattr(provision, "install_default_model", failing)
    out = CliRunner().invoke(model_group, ["install"])
    assert out.exit_code == 1
    assert "Error: The assembled model's sha256 is abc" in out.output
    assert "Traceback" not in out.output


def test_status_names_the_format_and_the_installed_quantized_folders(tmp_path, monkeypatch):
    from tests.test_serving import quantized_folder
    from assistant.settings import Settings

    monkeypatch.setenv("EVIDENTIA_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("EVIDENTIA_VLLM_PORT", "9")
    monkeypatch.setenv("EVIDENTIA_MODEL_FORMAT", "w8a8")
    monkeypatch.delenv("EVIDENTIA_LLM_BASE_URL", raising=False)
    s = Settings(_env_file=None)
    quantized_folder(s, "bf16")
    status = json.loads(CliRunner().invoke(model_group, ["status", "--json"]).output)
    assert status["model_format"] == "w8a8" and status["installed_formats"] == ["bf16"]
    assert status["model_installed"] is False  # w8a8 was chosen but not made
    assert status["model_source"] == str(s.model_dir_for("w8a8"))
    quantized_folder(s, "w8a8")
    status = json.loads(CliRunner().invoke(model_group, ["status", "--json"]).output)
    assert status["installed_formats"] == ["bf16", "w8a8"] and status["model_installed"] is True


def test_status_names_bf16_where_the_probe_found_no_4bit_kernel_for_this_cpu(tmp_path, monkeypatch):
    import assistant.model.serving as serving
    from assistant.settings import Settings
    from tests.test_serving import fake_vllm_python, quantized_folder

    monkeypatch.setenv("EVIDENTIA_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("EVIDENTIA_VLLM_PORT", "9")
    monkeypatch.delenv("EVIDENTIA_MODEL_FORMAT", raising=False)
    monkeypatch.delenv("EVIDENTIA_LLM_BASE_URL", raising=False)
    monkeypatch.setattr(serving, "has_cuda", lambda: False)
    s = Settings(_env_file=None)
    quantized_folder(s, "bf16")
    quantized_folder(s, "w4a16")
    python, calls = fake_vllm_python(tmp_path / "probe", '{"cpu_gemm_wna16": false}')
    s.vllm_venv_dir.mkdir(parents=True)
    (s.vllm_venv_dir / "bin").symlink_to(python.parent)

    def status() -> dict:
        return json.loads(CliRunner().invoke(model_group, ["status", "--json"]).output)

    assert status()["model_format"] == "w4a16" and not calls.exists()  # status starts no probe: nothing known yet
    serving.cpu_kernels(serving.venv_python(s.vllm_venv_dir), ["cpu_gemm_wna16"])  # what `model serve` does
    assert status()["model_format"] == "bf16"
    monkeypatch.setenv("EVIDENTIA_MODEL_FORMAT", "w4a16")
    chosen = status()
    assert chosen["model_format"] == "w4a16" and "cannot be served on this machine" in chosen["model_format_problem"]


def test_install_skips_the_w4a16_copy_a_cpu_without_avx512_cannot_serve(tmp_path, monkeypatch):
    """`make model` on a fresh AVX2-only machine (no vLLM yet) used to spend minutes making a W4A16 copy that
    `model serve` then skipped for bf16. A chosen format is still made as asked."""
    import assistant.model.serving as serving

    monkeypatch.setenv("EVIDENTIA_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("EVIDENTIA_MODEL_FORMAT", raising=False)
    monkeypatch.setattr(provision, "install_default_model",
                        lambda settings, **kw: provision.InstallResult(model_dir=tmp_path / "bf16"))
    asked: list[str] = []

    def record(settings, **kw):
        asked.append(settings.model_format)
        return settings

    monkeypatch.setattr(serving, "resolve_model_format", record)
    runner = CliRunner()
    monkeypatch.setattr(serving, "cpu_flags", lambda: {"avx2", "fma"})
    out = runner.invoke(model_group, ["install", "--quiet"])
    assert out.exit_code == 0, out.output
    assert asked == ["bf16"] and "only for CPUs with AVX-512, and this CPU has none" in out.output
    chosen = runner.invoke(model_group, ["install", "--quiet", "--format", "w4a16"])
    assert chosen.exit_code == 0 and asked[-1] == "w4a16"
    monkeypatch.setattr(serving, "cpu_flags", lambda: {"avx2", "avx512f"})
    runner.invoke(model_group, ["install", "--quiet"])
    assert asked[-1] == "w4a16"
