"""`evidentia model install --format w8a8|w4a16`: sha-stamped, idempotent, atomic; a fake quantizer runner.

The last test runs llm-compressor for real on a tiny model the test builds itself; it is skipped unless the
quantizer's environment already exists (CI does not install llm-compressor).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import assistant.model.quantize as quantize
from assistant import lockfiles
from assistant.model.provision import INFO_NAME, MARKER_NAME
from assistant.model.quantize import (IGNORE, QUANTIZER_MARKER, QUANTIZER_REQUIREMENTS, STAMP_NAME, QuantizeError,
                                ensure_quantizer_env, install_quantized_model, read_stamp)
from assistant.model.quantize import detect_format
from assistant.model.serving import installed_formats
from assistant.settings import Settings

GROUPS = {"W8A8": {"weights": {"num_bits": 8, "type": "int", "strategy": "channel"},
                   "input_activations": {"num_bits": 8, "type": "int", "strategy": "token", "dynamic": True}},
          "W4A16": {"weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128},
                    "input_activations": None},
          "W4A16_ASYM_G32": {"weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 32,
                                         "symmetric": False},
                             "input_activations": None}}


@pytest.fixture
def settings(tmp_path) -> Settings:
    s = Settings(_env_file=None, data_dir=tmp_path / "data")
    src = s.default_model_dir
    src.mkdir(parents=True)
    (src / "config.json").write_text(json.dumps({"architectures": ["Qwen2ForCausalLM"]}))
    (src / "model.safetensors").write_bytes(b"bf16 weights v1")
    (src / "tokenizer.json").write_text("{}")
    (src / "chat_template.jinja").write_text("{{ messages }}")
    (src / INFO_NAME).write_text(json.dumps({"upstream_model": "Qwen/Qwen2.5-Coder-1.5B-Instruct",
                                             "format": "GGUF Q4_K_M, re-exported to bf16 safetensors"}))
    (src / MARKER_NAME).write_text("done\n")
    return s


class FakeRunner:
    """Writes what model_free_ptq writes: the source's non-weight files (its marker too), config, weights."""

    def __init__(self, fail: BaseException | None = None, fail_after_weights: bool = True,
                 scheme_in_config: str | None = None):
        self.calls: list[tuple] = []
        self.fail, self.fail_after_weights, self.scheme_in_config = fail, fail_after_weights, scheme_in_config

    def __call__(self, python, source, out, scheme, ignore, progress):
        self.calls.append((python, source, out, scheme, tuple(ignore)))
        for f in source.iterdir():
            if f.suffix != ".safetensors":
                (out / f.name).write_bytes(f.read_bytes())
        cfg = json.loads((source / "config.json").read_text())
        cfg["quantization_config"] = {"quant_method": "compressed-tensors", "ignore": list(ignore),
                                      "config_groups": {"group_0": {"targets": ["Linear"],
                                                                    **GROUPS[self.scheme_in_config or scheme]}}}
        (out / "config.json").write_text(json.dumps(cfg))
        if self.fail is not None and not self.fail_after_weights:
            raise self.fail
        (out / "model.safetensors").write_bytes(b"int weights of " + (source / "model.safetensors").read_bytes())
        if self.fail is not None:
            raise self.fail


def fake_env(settings, say) -> Path:
    return Path("/quantizer/bin/python")


def install(settings, fmt="w8a8", runner=None, **kw):
    return install_quantized_model(settings, fmt, progress=False, runner=runner or FakeRunner(),
                                   env_maker=kw.pop("env_maker", fake_env), required_free_bytes=0,
                                   echo=kw.pop("echo", lambda m: None), **kw)


def leftovers(settings) -> list[str]:
    return sorted(p.name for p in settings.models_dir.iterdir() if p.name.endswith((".partial", ".old")))


@pytest.mark.parametrize("fmt, scheme", [("w8a8", "W8A8"), ("w4a16", "W4A16_ASYM_G32")])
def test_quantizes_once_into_a_stamped_folder(settings, fmt, scheme):
    runner = FakeRunner()
    result = install(settings, fmt, runner)
    target = settings.model_dir_for(fmt)
    assert result.model_dir == target and not result.already_installed
    assert runner.calls == [(Path("/quantizer/bin/python"), settings.default_model_dir,
                             target.with_name(target.name + ".partial"), scheme, IGNORE)]
    assert "lm_head" in IGNORE and "model.embed_tokens" in IGNORE  # kept unquantized
    stamp = read_stamp(target)
    assert stamp["format"] == fmt and stamp["scheme"] == scheme and stamp["method"] == "model_free_ptq"
    assert stamp["source_sha256"] == quantize.source_sha256(settings.default_model_dir)
    assert stamp["quantizer"] == list(QUANTIZER_REQUIREMENTS)
    assert (target / MARKER_NAME).is_file() and detect_format(target) == fmt
    assert (target / "chat_template.jinja").read_text() == "{{ messages }}"  # what vLLM needs beside weights
    assert scheme in json.loads((target / INFO_NAME).read_text())["format"]
    assert leftovers(settings) == []
    assert set(installed_formats(settings)) == {"bf16", fmt}


def test_second_run_with_the_same_source_does_nothing(settings):
    install(settings)
    runner, messages = FakeRunner(), []
    result = install(settings, runner=runner, echo=messages.append,
                     env_maker=lambda s, say: pytest.fail("no environment is needed for a no-op"))
    assert result.already_installed and runner.calls == []
    assert "already installed" in messages[-1]


def test_an_unchanged_source_is_not_hashed_again(settings, monkeypatch):
    install(settings)
    assert read_stamp(settings.model_dir_for("w8a8"))["source_fingerprint"]
    real_hash = quantize.source_sha256
    monkeypatch.setattr(quantize, "source_sha256", lambda *a, **k: pytest.fail("the source was hashed again"))
    assert install(settings, runner=FakeRunner()).already_installed
    # touched but not changed: hashed once more, not quantized again, and the new fingerprint is recorded
    weights = settings.default_model_dir / "model.safetensors"
    os.utime(weights, ns=(weights.stat().st_atime_ns, weights.stat().st_mtime_ns + 10**9))
    hashed: list[int] = []
    monkeypatch.setattr(quantize, "source_sha256", lambda *a, **k: hashed.append(1) or real_hash(*a, **k))
    runner = FakeRunner()
    assert install(settings, runner=runner).already_installed and runner.calls == [] and hashed == [1]
    assert install(settings, runner=runner).already_installed and hashed == [1]


def test_a_changed_source_is_quantized_again(settings):
    install(settings)
    first = read_stamp(settings.model_dir_for("w8a8"))["source_sha256"]
    (settings.default_model_dir / "model.safetensors").write_bytes(b"bf16 weights v2")
    runner = FakeRunner()
    install(settings, runner=runner)
    target = settings.model_dir_for("w8a8")
    assert len(runner.calls) == 1 and read_stamp(target)["source_sha256"] != first
    assert (target / "model.safetensors").read_bytes() == b"int weights of bf16 weights v2"
    assert leftovers(settings) == []


def test_a_stamp_for_another_scheme_or_quantizer_is_not_a_match(settings, monkeypatch):
    install(settings)
    monkeypatch.setattr(quantize, "QUANTIZER_REQUIREMENTS", ("torch==2.13.0", "llmcompressor==9.9"))
    runner = FakeRunner()
    install(settings, runner=runner)
    assert len(runner.calls) == 1


@pytest.mark.parametrize("fail_after_weights", [False, True])
def test_interrupted_quantization_leaves_nothing_and_the_next_run_succeeds(settings, fail_after_weights):
    with pytest.raises(KeyboardInterrupt):
        install(settings, runner=FakeRunner(fail=KeyboardInterrupt(), fail_after_weights=fail_after_weights))
    target = settings.model_dir_for("w8a8")
    assert not target.exists() and leftovers(settings) == []  # the source's copied marker went with it
    assert "w8a8" not in installed_formats(settings)
    install(settings)
    assert (target / MARKER_NAME).is_file()


def test_an_interrupted_redo_keeps_the_previous_good_copy(settings):
    install(settings)
    target = settings.model_dir_for("w8a8")
    before = (target / "model.safetensors").read_bytes()
    (settings.default_model_dir / "model.safetensors").write_bytes(b"bf16 weights v2")
    with pytest.raises(KeyboardInterrupt):
        install(settings, runner=FakeRunner(fail=KeyboardInterrupt()))
    assert (target / "model.safetensors").read_bytes() == before and (target / MARKER_NAME).is_file()
    assert leftovers(settings) == []


def test_a_failing_quantizer_is_a_clear_error_and_keeps_nothing(settings):
    with pytest.raises(QuantizeError, match="boom"):
        install(settings, runner=FakeRunner(fail=QuantizeError("model_free_ptq failed: boom")))
    assert not settings.model_dir_for("w8a8").exists() and leftovers(settings) == []


def test_output_in_the_wrong_format_is_refused(settings):
    with pytest.raises(QuantizeError, match="says w4a16, not w8a8"):
        install(settings, runner=FakeRunner(scheme_in_config="W4A16"))
    assert not settings.model_dir_for("w8a8").exists() and leftovers(settings) == []


def test_leftovers_of_a_killed_run_are_cleared(settings):
    target = settings.model_dir_for("w8a8")
    for name in (".partial", ".old"):
        junk = target.with_name(target.name + name)
        junk.mkdir(parents=True)
        (junk / "model.safetensors").write_bytes(b"half")
    target.mkdir()
    (target / "config.json").write_text("{}")  # no marker: never finished
    install(settings)
    assert leftovers(settings) == [] and (target / MARKER_NAME).is_file()


def test_needs_the_bf16_install_first(settings):
    (settings.default_model_dir / MARKER_NAME).unlink()
    with pytest.raises(QuantizeError, match="bf16 model is not installed.*evidentia model install"):
        install(settings, runner=FakeRunner(), env_maker=lambda s, say: pytest.fail("nothing must be set up"))


def test_unknown_format_is_refused(settings):
    with pytest.raises(QuantizeError, match="Unknown quantized format"):
        install(settings, "fp8")


def test_not_enough_disk_is_refused_before_any_work(settings):
    runner = FakeRunner()
    with pytest.raises(QuantizeError, match="Not enough free disk space"):
        install_quantized_model(settings, "w8a8", progress=False, runner=runner, env_maker=fake_env,
                                required_free_bytes=10 ** 18, echo=lambda m: None)
    assert runner.calls == [] and leftovers(settings) == []


# --- the quantizer's own environment ----------------------------------------------------------------

@pytest.fixture
def pip_commands(monkeypatch) -> list[list[str]]:
    commands: list[list[str]] = []

    def fake_run(cmd, what, stream=False):
        commands.append(cmd)
        if cmd[1:3] == ["-m", "venv"]:
            py = Path(cmd[3]) / "bin" / "python"
            py.parent.mkdir(parents=True)
            py.write_text("")

    monkeypatch.setattr(quantize, "_run", fake_run)
    return commands


def test_quantizer_env_is_its_own_venv_from_its_lock_and_made_once(settings, pip_commands):
    python = ensure_quantizer_env(settings, echo=lambda m: None)
    assert python == settings.quantizer_venv_dir / "bin" / "python" != settings.vllm_venv_dir / "bin" / "python"
    installs = [c for c in pip_commands if "install" in c]
    assert installs == [lockfiles.install_command(python, lockfiles.QUANTIZER)]  # hashes checked, nothing resolved
    assert (settings.quantizer_venv_dir / QUANTIZER_MARKER).read_text().strip() == lockfiles.lock_id(
        lockfiles.QUANTIZER)
    pip_commands.clear()
    assert ensure_quantizer_env(settings, echo=lambda m: None) == python and pip_commands == []


def test_failed_quantizer_install_is_not_marked_done(settings, monkeypatch):
    def fake_run(cmd, what, stream=False):
        if cmd[1:3] == ["-m", "venv"]:
            (Path(cmd[3]) / "bin").mkdir(parents=True)
            (Path(cmd[3]) / "bin" / "python").write_text("")
        if "--require-hashes" in cmd:
            raise QuantizeError(f"Could not {what} (exit 1).")

    monkeypatch.setattr(quantize, "_run", fake_run)
    with pytest.raises(QuantizeError, match="Could not install quantizer.txt sha256:"):
        ensure_quantizer_env(settings, echo=lambda m: None)
    assert not (settings.quantizer_venv_dir / QUANTIZER_MARKER).exists()


def test_the_worker_imports_nothing_from_the_app():
    text = quantize.WORKER.read_text()
    assert "assistant" not in text.split('"""', 2)[2] and "from llmcompressor import model_free_ptq" in text


# --- through the command line and the server ------------------------------------------------------------

def test_cli_install_format_quantizes_after_the_bf16_install(settings, monkeypatch):
    from click.testing import CliRunner

    import assistant.model.provision as provision
    from assistant.cli.model_cli import model_group
    from assistant.model.provision import InstallResult

    monkeypatch.setenv("EVIDENTIA_DATA_DIR", str(settings.data_dir))
    monkeypatch.setattr(provision, "install_default_model",
                        lambda s, **kw: InstallResult(model_dir=s.default_model_dir, already_installed=True))
    # a CPU whose vLLM build serves W4A16 (on an AVX2-only one the default copy is skipped: test_model_cli)
    monkeypatch.setattr("assistant.model.serving.cpu_flags", lambda: {"avx2", "avx512f"})
    calls = []
    monkeypatch.setattr(quantize, "install_quantized_model",
                        lambda s, fmt, **kw: calls.append(fmt) or quantize.QuantizeResult(model_dir=s.model_dir_for(fmt)))
    runner = CliRunner()
    assert runner.invoke(model_group, ["install", "--quiet", "--format", "bf16"]).exit_code == 0 and calls == []
    out = runner.invoke(model_group, ["install", "--quiet"])  # the default format is made after bf16
    assert out.exit_code == 0, out.output
    assert calls == ["w4a16"]
    out = runner.invoke(model_group, ["install", "--quiet", "--format", "w8a8"])
    assert out.exit_code == 0, out.output
    assert calls == ["w4a16", "w8a8"] and "w8a8" in out.output
    monkeypatch.setattr(quantize, "install_quantized_model",
                        lambda s, fmt, **kw: (_ for _ in ()).throw(QuantizeError(f"no space for {fmt}")))
    out = runner.invoke(model_group, ["install", "--quiet", "--format", "w8a8"])
    assert out.exit_code == 1 and "no space for w8a8" in out.output
    # the default format is a speed-up: bf16 is installed and will be served, so the install succeeds
    out = runner.invoke(model_group, ["install", "--quiet"])
    assert out.exit_code == 0, out.output
    assert "Warning" in out.output and "no space for w4a16" in out.output and "bf16" in out.output
    monkeypatch.setenv("EVIDENTIA_MODEL_FORMAT", "w4a16")  # chosen: required
    out = runner.invoke(model_group, ["install", "--quiet"])
    assert out.exit_code == 1 and "no space for w4a16" in out.output


def test_serving_a_quantized_format_makes_it_first(settings, monkeypatch):
    import assistant.model.provision as provision
    import assistant.model.serving as serving

    s = settings.model_copy(update={"model_format": "w8a8", "vllm_port": 9})
    monkeypatch.setattr(provision, "install_default_model", lambda *a, **k: None)
    made = []

    def fake_quantize(st, fmt, **kw):
        made.append(fmt)
        return install(st, fmt)

    monkeypatch.setattr(quantize, "install_quantized_model", fake_quantize)

    class Stop(Exception):
        pass

    def stop_here(*a, **k):
        raise Stop

    monkeypatch.setattr(serving, "ensure_vllm_env", stop_here)
    with pytest.raises(Stop):
        serving.ensure_server(s, echo=lambda m: None)
    assert made == ["w8a8"] and "w8a8" in installed_formats(s)


# --- for real, on a tiny model, when llm-compressor's environment exists ----------------------------------

def _quantizer_python() -> Path | None:
    given = os.environ.get("EVIDENTIA_TEST_QUANTIZER_VENV")
    venv = Path(given) if given else Settings(_env_file=None).quantizer_venv_dir
    python = venv / "bin" / "python"
    return python if python.exists() else None


@pytest.mark.skipif(_quantizer_python() is None,
                    reason="llm-compressor's environment is absent (made by `evidentia model install --format`)")
@pytest.mark.parametrize("fmt", ["w8a8", "w4a16"])
def test_real_model_free_ptq_on_a_tiny_model(tmp_path, fmt):
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file, save_file

    s = Settings(_env_file=None, data_dir=tmp_path / "data")
    src = s.default_model_dir
    src.mkdir(parents=True)
    hidden, inter, layers, vocab = 128, 256, 2, 256
    cfg = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": hidden,
           "intermediate_size": inter, "num_hidden_layers": layers, "num_attention_heads": 4,
           "num_key_value_heads": 2, "vocab_size": vocab, "max_position_embeddings": 256,
           "tie_word_embeddings": True, "torch_dtype": "bfloat16", "rms_norm_eps": 1e-6}
    (src / "config.json").write_text(json.dumps(cfg))
    g = torch.Generator().manual_seed(0)

    def w(*shape):
        return (torch.randn(*shape, generator=g) * 0.05).to(torch.bfloat16)

    tensors = {"model.embed_tokens.weight": w(vocab, hidden), "model.norm.weight": torch.ones(hidden,
                                                                                              dtype=torch.bfloat16)}
    kv = hidden // 4 * 2
    for i in range(layers):
        p = f"model.layers.{i}."
        tensors.update({p + "self_attn.q_proj.weight": w(hidden, hidden), p + "self_attn.q_proj.bias": w(hidden),
                        p + "self_attn.k_proj.weight": w(kv, hidden), p + "self_attn.k_proj.bias": w(kv),
                        p + "self_attn.v_proj.weight": w(kv, hidden), p + "self_attn.v_proj.bias": w(kv),
                        p + "self_attn.o_proj.weight": w(hidden, hidden),
                        p + "mlp.gate_proj.weight": w(inter, hidden), p + "mlp.up_proj.weight": w(inter, hidden),
                        p + "mlp.down_proj.weight": w(hidden, inter),
                        p + "input_layernorm.weight": torch.ones(hidden, dtype=torch.bfloat16),
                        p + "post_attention_layernorm.weight": torch.ones(hidden, dtype=torch.bfloat16)})
    save_file(tensors, str(src / "model.safetensors"), metadata={"format": "pt"})
    (src / MARKER_NAME).write_text("done\n")

    python = _quantizer_python()
    result = install_quantized_model(s, fmt, progress=False, env_maker=lambda st, say: python,
                                     required_free_bytes=0, echo=lambda m: None)
    out = result.model_dir
    assert detect_format(out) == fmt and read_stamp(out)["format"] == fmt
    q = load_file(str(out / "model.safetensors"))
    assert q["model.embed_tokens.weight"].dtype == torch.bfloat16  # kept unquantized
    assert torch.equal(q["model.embed_tokens.weight"], tensors["model.embed_tokens.weight"])
    names = [k for k in q if k.startswith("model.layers.0.mlp.down_proj.")]
    if fmt == "w8a8":
        assert q["model.layers.0.mlp.down_proj.weight"].dtype == torch.int8, names
    else:
        assert any(k.endswith("weight_packed") for k in names), names
        # asymmetric groups of 32: a zero point and a scale per 32 inputs of each output row
        weights = next(iter(json.loads((out / "config.json").read_text())["quantization_config"]["config_groups"]
                            .values()))["weights"]
        assert (weights["group_size"], weights["symmetric"]) == (32, False)
        assert tuple(q["model.layers.0.mlp.down_proj.weight_scale"].shape) == (hidden, inter // 32)
        assert "model.layers.0.mlp.down_proj.weight_zero_point" in q, names
    assert install_quantized_model(s, fmt, progress=False, env_maker=lambda st, say: python,
                                   required_free_bytes=0, echo=lambda m: None).already_installed
