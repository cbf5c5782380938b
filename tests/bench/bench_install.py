"""The install from a bare clone (#74): each step timed, the app venv's size, and its packages against the lock.

Run on demand (about 20 minutes; it installs everything a second time):
``.venv/bin/python tests/bench/bench_install.py [--keep]``. It clones this checkout's HEAD beside it, runs
``make install`` there (the app's venv from ``assistant/locks/app.txt``), then, with a new empty data folder, installs
the model and its 4-bit copy, vLLM's venv, the default knowledge base and the knowledge graphs, each as
``make run`` does. pip's download cache is the machine's own, so a first install on a new machine downloads more:
the notes say whether the cache was empty. It writes docs/bench/install.{json,md,png} and
docs/bench/install-freeze.txt, the app venv's packages, so that an install on another day can be compared with
this one (``--compare docs/bench/install-freeze.txt``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from assistant import lockfiles  # noqa: E402
from assistant.evals.report import write_bench  # noqa: E402

SHARED = ROOT.parent / "shared"
FREEZE = ROOT / "docs" / "bench" / "install-freeze.txt"


def timed(cmd: list[str], *, cwd: Path, env: dict[str, str], what: str) -> float:
    """Run one install step, its output to a log beside the clone; stop the bench if it fails."""
    log = cwd.parent / f"{cwd.name}-{what}.log"
    t0 = time.perf_counter()
    with log.open("w") as fh:
        done = subprocess.run(cmd, cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - t0
    print(f"{what}: {seconds:.0f} s (exit {done.returncode}; log {log})", flush=True)
    if done.returncode != 0:
        sys.exit(f"{what} failed: see {log}")
    return seconds


def dir_gb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink()) / 1e9


def freeze(python: Path) -> dict[str, str]:
    out = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"],
                         capture_output=True, text=True, check=True).stdout
    pins = {}
    for line in out.splitlines():
        if "==" in line:
            name, version = line.split("==", 1)
            pins[lockfiles.canonical(name)] = version
    return pins


def main(keep: bool, compare: Path | None) -> None:
    pip_cache = Path(os.path.expanduser("~/.cache/pip"))
    cache_was_empty = not pip_cache.exists() or not any(pip_cache.iterdir())
    clone = Path(tempfile.mkdtemp(prefix="evidentia-install-", dir=ROOT.parent))
    data = Path(tempfile.mkdtemp(prefix="evidentia-install-data-"))
    env = {**os.environ, "EVIDENTIA_DATA_DIR": str(data), "EVIDENTIA_KB_MIRROR_DIR": str(SHARED / "kb-data"),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("VIRTUAL_ENV", None)
    try:
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        commit = subprocess.run(["git", "-C", str(clone), "rev-parse", "--short=7", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        evidentia = str(clone / ".venv" / "bin" / "evidentia")
        python = clone / ".venv" / "bin" / "python"
        steps = {
            "app_install_s": timed(["make", "install"], cwd=clone, env=env, what="app"),
            "model_install_s": timed([evidentia, "model", "install"], cwd=clone, env=env, what="model"),
            "vllm_env_s": timed([str(python), "-c", "from assistant.model.serving import ensure_vllm_env; "
                                 "from assistant.settings import Settings; ensure_vllm_env(Settings())"],
                                cwd=clone, env=env, what="vllm"),
            "kb_build_s": timed([evidentia, "kb", "build", "--default"], cwd=clone, env=env, what="kb"),
            "kg_load_s": sum(timed([evidentia, "kb", "kg", "load", name], cwd=clone, env=env, what=f"kg-{name}")
                             for name in ("hetionet", "conceptnet")),
        }
        installed = freeze(python)
        installed.pop("evidentia", None)
        locked = lockfiles.locked_versions(lockfiles.APP)
        outside = {n: v for n, v in installed.items() if locked.get(n) != v and n != "pip"}
        missing = sorted(set(locked) - set(installed))
        FREEZE.write_text("".join(f"{n}=={v}\n" for n, v in sorted(installed.items())))
        differs = None
        if compare is not None:
            before = dict(line.strip().split("==", 1) for line in compare.read_text().splitlines() if "==" in line)
            differs = sorted(n for n in set(before) | set(installed) if before.get(n) != installed.get(n))
        results = {**{k: (v, "s") for k, v in steps.items()},
                   "app_venv_gb": (dir_gb(clone / ".venv"), "GB"),
                   "data_dir_gb": (dir_gb(data), "GB"),
                   "packages_outside_the_lock": (len(outside) + len(missing), "count"),
                   "packages_installed": (len(installed), "count")}
        if differs is not None:
            results["packages_differing_from_compared_install"] = (len(differs), "count")
        write_bench("install", results, notes=(
            f"A bare clone of {commit}, each step as `make run` does it, with a new empty data folder "
            f"(`tests/bench/bench_install.py`). pip's download cache was {'empty' if cache_was_empty else 'warm'}"
            + ("" if cache_was_empty else " (a first install on a new machine also downloads every wheel: not "
               "measured here)") + ". The app venv holds exactly the lock: "
            f"{len(outside)} packages at another version than locked ({outside or 'none'}), {len(missing)} locked but "
            f"absent ({missing or 'none'}); pip itself counts only where the lock pins it. Its packages are in "
            "docs/bench/install-freeze.txt"
            + (f"; against {compare}: {len(differs)} differ ({differs or 'none'})" if differs is not None else "")
            + "."))
    finally:
        if not keep:
            shutil.rmtree(clone, ignore_errors=True)
            shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", action="store_true", help="keep the clone and the data folder")
    ap.add_argument("--compare", type=Path, help="an earlier install-freeze.txt to compare the packages with")
    args = ap.parse_args()
    main(args.keep, args.compare)
