"""A stand-in for an AVX2-only machine on an AVX-512 one (#80): both engines restricted to their AVX2 kernels.

    .venv/bin/python tests/bench/avx2_stand_in.py [--claims 6] [--prompts 3]

No AVX2 machine is lent to this project, and the issue's question is what to serve there. On this machine:

- **vLLM as it runs on AVX2**: its AVX2 kernel build (``vllm._C_AVX2``, chosen by ``torch.cpu._is_avx512_supported``,
  patched to False by a ``sitecustomize`` on the server's ``PYTHONPATH``), torch's AVX2 code path
  (``ATEN_CPU_CAPABILITY=avx2``) and oneDNN's (``ONEDNN_MAX_CPU_ISA=AVX2``); the bf16 weights computed in float32, as
  :func:`assistant.model.serving.serving_dtype` chooses on a CPU without native bf16 (there is no 4-bit kernel).
- **llama.cpp as built on AVX2**: ``GGML_NATIVE=OFF`` with AVX, AVX2, FMA and F16C only.

Then ``bench_kernels.py`` (prefill, decode, grammar-bound programs) and ``bench_claim_servers.py`` (whole claim
checks, paired; gate: median paired ratio <= 0.67) run against the two, written under ``docs/bench/runs/`` as
``avx2-kernels`` and ``avx2-claim-servers``. Nothing else may use the machine. What it cannot stand in for: an AVX2
machine's own memory bandwidth, clock and cache; the result says which kernels are faster, not what a laptop gets.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from assistant.model.llamacpp import CMAKE_FLAGS, build_command as llamacpp_command, build_server  # noqa: E402
from assistant.model.provision import GGUF_NAME, install_gguf  # noqa: E402
from assistant.model.serving import LocalServer, build_command, build_env, ensure_vllm_env  # noqa: E402
from assistant.settings import Settings  # noqa: E402

VLLM_PORT, LLAMA_PORT = 8021, 8022
AVX2_FLAGS = tuple(f for f in CMAKE_FLAGS if not f.startswith("-DGGML_NATIVE")) + (
    "-DGGML_NATIVE=OFF", "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON", "-DGGML_AVX_VNNI=OFF",
    "-DGGML_AVX512=OFF", "-DGGML_AVX512_VBMI=OFF", "-DGGML_AVX512_VNNI=OFF", "-DGGML_AVX512_BF16=OFF")
SITECUSTOMIZE = ("import torch.cpu\n"
                 "torch.cpu._is_avx512_supported = lambda: False\n"
                 "torch.cpu._is_avx512_bf16_supported = lambda: False\n")
AVX2_ENV = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
PROBE = ("import json, torch; from vllm.platforms import current_platform; current_platform.import_kernels(); "
         "print(json.dumps([hasattr(torch.ops._C, 'cpu_gemm_wna16'), torch.backends.cpu.get_cpu_capability()]))")


def vllm_avx2(settings: Settings, site: Path) -> LocalServer:
    python = ensure_vllm_env(settings, cuda=False)
    env = build_env(settings, cuda=False) | AVX2_ENV | {"PYTHONPATH": str(site)}
    probe = subprocess.run([str(python), "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    has_4bit, capability = json.loads(probe.stdout.strip().splitlines()[-1])
    if has_4bit or capability != "AVX2":
        raise SystemExit(f"vLLM did not take its AVX2 path: {probe.stdout.strip()}")
    bf16 = settings.model_copy(update={"model_format": "bf16"})
    cmd = build_command(bf16, python, cuda=False, port=VLLM_PORT)
    cmd[cmd.index("--dtype") + 1] = "float32"  # what serving_dtype picks on a CPU without native bf16
    return LocalServer(bf16, port=VLLM_PORT, cuda=False, command=cmd, env=env,
                       log_path=settings.logs_dir / "vllm-avx2-stand-in.log")


def llama_avx2(settings: Settings) -> LocalServer:
    folder = settings.data_dir / "llama.cpp" / "avx2-stand-in"
    binary = folder / "llama-server"
    if not binary.exists():
        build_server(folder, AVX2_FLAGS, progress=False)
    gguf = install_gguf(settings, progress=False)
    assert gguf.name == GGUF_NAME
    return LocalServer(settings, port=LLAMA_PORT, cuda=False, env=dict(os.environ),
                       command=llamacpp_command(settings, binary, gguf, port=LLAMA_PORT),
                       log_path=settings.logs_dir / "llama-server-avx2-stand-in.log")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--claims", type=int, default=6)
    ap.add_argument("--prompts", type=int, default=3)
    args = ap.parse_args()
    settings = Settings()
    servers = [f"--server=vllm-avx2-f32=http://127.0.0.1:{VLLM_PORT}/v1",
               f"--server=llama-server-avx2=http://127.0.0.1:{LLAMA_PORT}/v1"]
    bench = ROOT / "tests" / "bench"
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "sitecustomize.py").write_text(SITECUSTOMIZE)
        with vllm_avx2(settings, Path(tmp)), llama_avx2(settings):  # each started and ready, stopped at the end
            for script, extra in (("bench_kernels.py", ["--samples", "5", "--prompts", str(args.prompts),
                                                        "--area", "avx2-kernels"]),
                                  ("bench_claim_servers.py", ["--claims", str(args.claims),
                                                              "--area", "avx2-claim-servers"])):
                subprocess.run([sys.executable, str(bench / script), *servers, *extra, "--runs"], check=True)


if __name__ == "__main__":
    main()
