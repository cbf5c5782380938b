"""What this CPU offers the model: its name, its vector instruction set and the number formats it computes natively.

Speed on a CPU is decided by these (#80): vLLM's 4-bit kernel needs AVX-512; bfloat16 is fast only with AVX512-BF16
or AMX, else float32 is faster; AVX2-only and ARM (NEON) machines are what most people run. Every benchmark and
``evidentia model status`` name them, so a number is never read as if it came from another kind of machine.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
from pathlib import Path

_ARM_MACHINES = ("arm64", "aarch64")


@functools.lru_cache(maxsize=1)  # read once: benchmarks and the status ask often
def _cpuinfo() -> str:
    try:
        return Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""


def cpu_flags() -> frozenset[str]:
    """The CPU's instruction-set flags (/proc/cpuinfo; ARM's "Features"); empty where they cannot be read."""
    return frozenset(f for ln in _cpuinfo().splitlines() if ln.startswith(("flags", "Features"))
                     for f in ln.split(":", 1)[-1].split())


def cpu_has_bf16() -> bool:
    """Whether the CPU computes bfloat16 natively (emulated bf16 would be slower than float32)."""
    return not cpu_flags().isdisjoint({"avx512_bf16", "amx_bf16"})


def cpu_name() -> str:
    for line in _cpuinfo().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown CPU"


def instruction_set(flags: frozenset[str] | set[str], machine: str | None = None) -> str:
    """The widest vector instruction set the model's kernels can use: "AVX-512", "AVX2", "NEON" or "none known"."""
    machine = (machine if machine is not None else platform.machine()).lower()
    if "avx512f" in flags:
        return "AVX-512"
    if "avx2" in flags:
        return "AVX2"
    if machine in _ARM_MACHINES or "asimd" in flags:
        return "NEON"
    return "none known"


def instruction_set_summary(flags: frozenset[str] | set[str], machine: str | None = None) -> str:
    """The instruction set and the extensions that change which kernels are fastest, in a few words:
    "AVX-512 with bf16, VNNI; no AMX", "AVX2; no bf16", "NEON with bf16"."""
    isa = instruction_set(flags, machine)
    has = []
    if not flags.isdisjoint({"avx512_bf16", "amx_bf16", "bf16"}):
        has.append("bf16")
    if not flags.isdisjoint({"avx512_vnni", "avx_vnni"}):
        has.append("VNNI")
    if "amx_tile" in flags:
        has.append("AMX")
    missing = [] if "bf16" in has else ["bf16"]
    if isa == "AVX-512" and "AMX" not in has:
        missing.append("AMX")
    text = isa + (f" with {', '.join(has)}" if has else "")
    return text + (f"; no {', no '.join(missing)}" if missing else "")


def describe_cpu() -> str:
    """One line naming this machine's CPU for a benchmark or a status line:
    "2 cores AMD EPYC 9R14 (AVX-512 with bf16, VNNI; no AMX)"."""
    return f"{os.cpu_count()} cores {cpu_name()} ({instruction_set_summary(cpu_flags())})"


def cpu_signature() -> str:
    """This CPU's model name and instruction-set flags, hashed: what decides which vLLM kernels load and which
    llama.cpp build runs here."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown"
    lines = [ln for ln in info.splitlines() if ln.startswith(("model name", "flags"))][:2]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]
