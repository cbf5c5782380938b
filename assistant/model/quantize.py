"""Quantized copies of the packaged model: ``evidentia model install --format w8a8|w4a16``.

vLLM's CPU build serves compressed-tensors checkpoints: int8 weights and activations (W8A8, oneDNN) and
4-bit weight-only (W4A16). This module makes them offline, on CPU, from the installed bf16 folder with
llm-compressor's ``model_free_ptq`` (data-free: per-channel int8 / round-to-nearest int4, no calibration
set). ``lm_head`` and the embeddings stay unquantized.

- **Its own environment.** llm-compressor pins torch, transformers and compressed-tensors versions that
  fight the app's and vLLM's, so it runs in ``settings.quantizer_venv_dir``, installed on first use (not
  by ``make install``). The worker (``assistant/model/quantize_worker.py``) imports nothing from the app.
- **Idempotent.** The output carries ``QUANT_STAMP.json``: the sha256 of the source folder's weights and
  config, the scheme, what is ignored and the quantizer's version. A second run with the same stamp does
  nothing; a changed source (or scheme) is quantized again.
- **Atomic.** Work happens in ``<target>.partial``; the finished folder gets its stamp and, last, the
  ``INSTALL_COMPLETE`` marker, then is renamed into place. Any failure or interruption removes the partial
  folder; a run killed outright leaves one that the next run removes first.

Tests inject a fake :data:`QuantizeRunner` and a fake environment.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from assistant import lockfiles
from assistant.model.provision import INFO_NAME, ProvisionError, follow_child, run_step
from assistant.settings import Settings

MARKER_NAME = "INSTALL_COMPLETE"
STAMP_NAME = "QUANT_STAMP.json"
QUANTIZER_MARKER = "EVIDENTIA_QUANTIZER_READY"
# What assistant/locks/quantizer.in asks for; the lock pins them (torch's CPU build) and all they need.
QUANTIZER_REQUIREMENTS = ("torch==2.13.0", "llmcompressor==0.14.0.1")
# The scheme per format; the vLLM-CPU kernels: oneDNN int8 GEMM, cpu_gemm_wna16 (uint4 with zero points,
# any even group size). W8A8 is llm-compressor's preset. W4A16 is not the preset (symmetric, groups of 128) but
# asymmetric groups of 32, built by the worker: our bf16 weights were de-quantized from Q4_K_M, whose blocks of
# 32 hold at most 16 distinct values on an affine grid, and asymmetric groups of 32 follow that grid where the
# preset rounds it a second time. Measured (docs/bench/w4a16_gate.md, w4a16_g32_gate.md): relative weight error
# 0.08 against 0.12, and PubHealthTab dev closer to bf16.
SCHEMES = {"w8a8": "W8A8", "w4a16": "W4A16_ASYM_G32"}
# Kept in bf16: the tied embedding / output matrix (quantizing it costs the most quality per byte saved).
IGNORE = ("lm_head", "model.embed_tokens")
_MB = 1024 * 1024


class QuantizeError(ProvisionError):
    """The quantized model could not be made. The message says why and what to do."""


# (python of the quantizer's venv, source folder, output folder, scheme name, ignored modules, progress)
QuantizeRunner = Callable[[Path, Path, Path, str, tuple[str, ...], bool], None]
# (settings, echo) -> python of the quantizer's environment
EnvMaker = Callable[[Settings, Callable[[str], None]], Path]


@dataclass
class QuantizeResult:
    model_dir: Path
    already_installed: bool = False
    message: str = ""
    seconds: float = 0.0
    stamp: dict = field(default_factory=dict)


# --- the quantizer's environment ---------------------------------------------------------------

def detect_format(model_dir: Path) -> str | None:
    """The weight format of a model folder, read from its ``config.json``.

    No ``quantization_config``: bf16 (or another unquantized dtype). compressed-tensors with 8-bit integer
    weights and 8-bit activations: w8a8; 4-bit integer weights and no activation quantization: w4a16.
    None when the folder has no readable config or a quantization this project does not make.
    """
    try:
        cfg = json.loads((model_dir / "config.json").read_text())
    except (OSError, ValueError):
        return None
    q = cfg.get("quantization_config")
    if not q:
        return "bf16"
    if q.get("quant_method") != "compressed-tensors":
        return None
    groups = list((q.get("config_groups") or {}).values())
    if not groups:
        return None
    formats = set()
    for g in groups:
        w, a = g.get("weights") or {}, g.get("input_activations")
        if w.get("type", "int") != "int":
            return None
        if w.get("num_bits") == 8 and a and a.get("num_bits") == 8:
            formats.add("w8a8")
        elif w.get("num_bits") == 4 and not a:
            formats.add("w4a16")
        else:
            return None
    return formats.pop() if len(formats) == 1 else None


def ensure_quantizer_env(settings: Settings, echo: Callable[[str], None] | None = None) -> Path:
    """Create (once) the virtual environment with llm-compressor; return its python.

    It is installed from the committed lock (``assistant/locks/quantizer.txt``): every package at one version,
    hashes checked, nothing resolved. A venv built from another lock (or by hand) is made anew.
    """
    say = echo or (lambda m: print(m, file=sys.stderr))
    venv = settings.quantizer_venv_dir
    python = venv / "bin" / "python"
    marker = venv / QUANTIZER_MARKER
    wanted = lockfiles.lock_id(lockfiles.QUANTIZER)
    if marker.is_file() and marker.read_text().strip() == wanted and python.exists():
        return python
    say(f"Setting up the quantizer environment in {venv} ({' '.join(QUANTIZER_REQUIREMENTS)} from {wanted}; "
        "a few minutes, ~1.5 GB) …")
    try:
        if venv.exists():
            shutil.rmtree(venv)  # not this lock's packages (or a run that stopped half-way): made anew
        _run([sys.executable, "-m", "venv", str(venv)], "create the quantizer's virtual environment")
        _run(lockfiles.install_command(python, lockfiles.QUANTIZER), f"install {wanted}", stream=True)
        _run([str(python), "-c", "from llmcompressor import model_free_ptq"], "import llm-compressor")
    except QuantizeError:
        marker.unlink(missing_ok=True)
        raise
    marker.write_text(wanted + "\n")
    say(f"Quantizer environment ready: {python}")
    return python


def _run(cmd: list[str], what: str, stream: bool = False) -> None:
    run_step(cmd, what, QuantizeError, stream)


# --- the stamp ----------------------------------------------------------------------------------

def _source_files(source: Path) -> list[Path]:
    """What identifies the source: its ``config.json`` and weight files, in name order."""
    return sorted([source / "config.json", *source.glob("*.safetensors")], key=lambda p: p.name)


def source_sha256(source: Path, progress: bool = False) -> str:
    """sha256 over the source folder's ``config.json`` and weight files, in name order."""
    files = _source_files(source)
    missing = [p.name for p in files if not p.is_file()]
    if missing or len(files) < 2:
        raise QuantizeError(f"{source} has no config.json or no *.safetensors weights: the bf16 install is "
                            "incomplete. Run `evidentia model install` first.")
    from tqdm import tqdm

    digest = hashlib.sha256()
    total = sum(p.stat().st_size for p in files)
    with tqdm(total=total, desc="hash source", unit="B", unit_scale=True, unit_divisor=1024,
              disable=not progress) as bar:
        for p in files:
            digest.update(p.name.encode() + b"\0")
            with open(p, "rb") as fh:
                while chunk := fh.read(8 * _MB):
                    digest.update(chunk)
                    bar.update(len(chunk))
    return digest.hexdigest()


def source_fingerprint(source: Path) -> list[list]:
    """Name, size and mtime of each file :func:`source_sha256` reads.

    Hashing the 3.5 GB source took ~19 s on every start; when the fingerprint equals the stamp's, the files
    were not rewritten since that hash, so it is reused.
    """
    out = []
    for p in _source_files(source):
        try:
            st = p.stat()
        except OSError:
            continue
        out.append([p.name, st.st_size, st.st_mtime_ns])
    return out


def wanted_stamp(fmt: str, source_sha: str, source: Path) -> dict:
    return {"format": fmt, "scheme": SCHEMES[fmt], "ignore": list(IGNORE), "method": "model_free_ptq",
            "quantizer": list(QUANTIZER_REQUIREMENTS), "source_dir": str(source), "source_sha256": source_sha}


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def read_stamp(model_dir: Path) -> dict | None:
    try:
        return json.loads((model_dir / STAMP_NAME).read_text())
    except (OSError, ValueError):
        return None


def _stamp_matches(model_dir: Path, wanted: dict) -> bool:
    if not (model_dir / MARKER_NAME).is_file():
        return False
    stamp = read_stamp(model_dir) or {}
    keys = ("format", "scheme", "ignore", "method", "quantizer", "source_sha256")
    return all(stamp.get(k) == wanted[k] for k in keys)


# --- the install --------------------------------------------------------------------------------

def install_quantized_model(settings: Settings, fmt: str, *, progress: bool = True,
                            runner: QuantizeRunner | None = None, env_maker: EnvMaker | None = None,
                            required_free_bytes: int | None = None,
                            echo: Callable[[str], None] | None = None) -> QuantizeResult:
    """Quantize the installed bf16 folder into ``settings.model_dir_for(fmt)`` (once per source).

    The bf16 model must be installed. Raises :class:`QuantizeError` with a user-facing message, and
    re-raises ``KeyboardInterrupt`` after removing the unfinished folder.
    """
    from assistant.model.provision import _install_lock, _remove, is_installed

    if fmt not in SCHEMES:
        raise QuantizeError(f"Unknown quantized format {fmt!r}; choose one of {', '.join(SCHEMES)}.")
    say = echo or (lambda m: print(m, file=sys.stderr))
    started = time.monotonic()
    source = settings.default_model_dir
    target = settings.model_dir_for(fmt)
    if not is_installed(source):
        raise QuantizeError(f"The bf16 model is not installed in {source}; the {fmt} copy is made from it. "
                            "Run `evidentia model install` first.")
    runner = runner or run_model_free_ptq
    env_maker = env_maker or ensure_quantizer_env

    target.parent.mkdir(parents=True, exist_ok=True)
    with _install_lock(target):
        fingerprint = source_fingerprint(source)
        old_stamp = read_stamp(target) or {}
        if (old_stamp.get("source_fingerprint") == fingerprint
                and _stamp_matches(target, wanted_stamp(fmt, old_stamp.get("source_sha256"), source))):
            msg = f"The {fmt} model is already installed in {target} (its source is unchanged); nothing to do."
            say(msg)
            return QuantizeResult(model_dir=target, already_installed=True, message=msg, stamp=old_stamp)
        say(f"Checking the bf16 source ({source}) …")
        stamp = wanted_stamp(fmt, source_sha256(source, progress), source)
        stamp["source_fingerprint"] = fingerprint
        if _stamp_matches(target, stamp):
            _write_atomic(target / STAMP_NAME, json.dumps({**old_stamp, "source_fingerprint": fingerprint},
                                                          indent=2) + "\n")  # the next check skips the hash
            msg = f"The {fmt} model is already installed in {target} and matches its source; nothing to do."
            say(msg)
            return QuantizeResult(model_dir=target, already_installed=True, message=msg,
                                  stamp=read_stamp(target) or {})
        partial = target.with_name(target.name + ".partial")
        old = target.with_name(target.name + ".old")
        _remove(partial)  # left over from a run that was killed outright
        _remove(old)
        if target.exists():
            say(f"{target} is unfinished or was made from another source or scheme; making it again.")
        _check_free_space(target.parent, required_free_bytes if required_free_bytes is not None
                          else _space_needed(source))
        python = env_maker(settings, say)
        completed = False
        try:
            partial.mkdir(parents=True)
            say(f"Quantizing to {SCHEMES[fmt]} with llm-compressor's model_free_ptq (data-free, on CPU; "
                f"{', '.join(IGNORE)} kept in bf16) …")
            runner(python, source, partial, SCHEMES[fmt], IGNORE, progress)
            # model_free_ptq copies every non-weight file, the source's marker too: it must come last
            (partial / MARKER_NAME).unlink(missing_ok=True)
            _copy_side_files(source, partial)
            _describe(partial, fmt)
            got = detect_format(partial)
            if got != fmt:
                raise QuantizeError(f"The quantizer wrote a model whose config.json says {got or 'an unknown format'}"
                                    f", not {fmt}. Nothing was kept.")
            stamp["created_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
            stamp["size_bytes"] = sum(p.stat().st_size for p in partial.glob("*.safetensors"))
            (partial / STAMP_NAME).write_text(json.dumps(stamp, indent=2) + "\n")
            (partial / MARKER_NAME).write_text(stamp["created_at"] + "\n")  # written last
            if target.exists():  # swap: the old copy is removed only once the new one is in place
                os.replace(target, old)
            os.replace(partial, target)
            completed = True
            _remove(old)
        except OSError as exc:
            raise QuantizeError(f"Quantizing the model failed: {exc}. Nothing was kept.") from exc
        except KeyboardInterrupt:
            say("Interrupted: removing the unfinished quantized model.")
            raise
        finally:
            if not completed:
                _remove(partial)
                if old.exists() and not target.exists():
                    os.replace(old, target)  # the swap failed half-way: put the previous copy back
    secs = time.monotonic() - started
    msg = (f"Installed the {fmt} model into {target} in {secs:.0f} s "
           f"({stamp['size_bytes'] / 1e9:.2f} GB of weights).")
    say(msg)
    return QuantizeResult(model_dir=target, message=msg, seconds=secs, stamp=stamp)


# Files vLLM needs beside the weights; the quantizer may or may not copy them.
_SIDE_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "generation_config.json",
               "special_tokens_map.json", "vocab.json", "merges.txt", "added_tokens.json", "MODEL_INFO.json")


def _copy_side_files(source: Path, out: Path) -> None:
    for name in _SIDE_FILES:
        if (source / name).is_file() and not (out / name).exists():
            shutil.copy2(source / name, out / name)


def _describe(out: Path, fmt: str) -> None:
    """MODEL_INFO.json (copied from the source) says what these weights are."""
    try:
        info = json.loads((out / INFO_NAME).read_text())
    except (OSError, ValueError):
        info = {}
    info["format"] = (f"{SCHEMES[fmt]} compressed-tensors (llm-compressor model_free_ptq, data-free), made from: "
                      f"{info.get('format', 'bf16 safetensors')}")
    info["quantized_format"] = fmt
    (out / INFO_NAME).write_text(json.dumps(info, indent=2) + "\n")


def _space_needed(source: Path) -> int:
    weights = sum(p.stat().st_size for p in source.glob("*.safetensors"))
    return int(weights * 0.8) + 256 * _MB  # int8 weights + bf16 embeddings < 0.6x of bf16; headroom


def _check_free_space(folder: Path, needed: int) -> None:
    if needed <= 0:
        return
    free = shutil.disk_usage(folder).free
    if free < needed:
        raise QuantizeError(f"Not enough free disk space in {folder}: {free / 1e9:.1f} GB free, about "
                            f"{needed / 1e9:.1f} GB needed for the quantized model.")


# --- the real runner ------------------------------------------------------------------------------

WORKER = Path(__file__).with_name("quantize_worker.py")


def run_model_free_ptq(python: Path, source: Path, out: Path, scheme: str, ignore: tuple[str, ...],
                       progress: bool = True) -> None:
    """Run ``quantize_worker.py`` in the quantizer's environment, passing its progress through."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    cmd = [str(python), str(WORKER), str(source), str(out), scheme, json.dumps(list(ignore))]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    tail = follow_child(proc, proc.stdout, progress)
    if proc.returncode != 0:
        raise QuantizeError(f"llm-compressor's model_free_ptq failed (exit {proc.returncode}):\n" + "\n".join(tail))
