"""The SIMD path's lane count (issue 32): the override, numba's target width, and the width measured
once per machine and recorded beside the numba cache (pkm.kernels.simd_width). No timing is asserted."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import llvmlite.binding as llvm
import pytest

import pkm
from pkm.kernels import batch, simd_width as sw
from pkm.kernels.simd_vec import host_lanes, target_lanes

from test_batch_start import FILES, _load


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """No override, no choice made in this process, the record in a temporary cache directory."""
    for name in sw.ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(sw, "_chosen", [])
    return tmp_path


def test_the_override_is_honoured(fresh, monkeypatch):
    monkeypatch.setattr(sw, "measure", lambda *a, **k: pytest.fail("measured despite the override"))
    km = _load(FILES[[p.stem for p in FILES].index("delta_3rr2rrr")])._packed()
    for name, w in (("PKM_SIMD_LANES", 4), ("PKM_SIMD_WIDTH", 2), ("PKM_SIMD_LANES", 8)):
        monkeypatch.setenv(name, str(w))
        assert sw.simd_width() == w
        assert batch._lane_count(km, batch.SIMD_MIN_SAMPLES, None) == w  # the default call
        assert batch._lane_count(km, 10, True) == w
        assert batch._lane_count(km, 10, 4) == 4  # an explicit width wins
        monkeypatch.delenv(name)
    assert not (fresh / sw.FILE).exists()
    monkeypatch.setenv("PKM_SIMD_LANES", "16")
    with pytest.raises(pkm.InputError, match="PKM_SIMD_LANES='16': the SIMD width must be 2, 4 or 8"):
        sw.simd_width()


@pytest.mark.parametrize("target", [8, 4])
def test_the_width_is_measured_once_and_recorded(fresh, monkeypatch, target):
    """On an AVX-512 or AVX2 target: measured (W = 8 only when clearly faster; for general limbs unless clearly
    slower), written to simd-width.json under the machine's key, and read back by the next process instead of
    measuring again."""
    monkeypatch.setattr(sw, "target_lanes", lambda: target)
    calls = []
    monkeypatch.setattr(sw, "measure", lambda widths: calls.append(widths) or {4: 1e-7, 8: 0.5e-7})
    assert sw.simd_width() == 8 and sw.simd_width(True) == 8 and calls == [(4, 8)]
    assert sw.simd_width() == 8 and len(calls) == 1  # once per process
    rec = json.loads((fresh / sw.FILE).read_text())[sw.machine_key()]
    assert rec["lanes"] == rec["lanes_general"] == 8 and set(rec["us_per_sample"]) == {"4", "8"}
    monkeypatch.setattr(sw, "_chosen", [])  # a new process: the record, nothing measured
    monkeypatch.setattr(sw, "measure", lambda widths: pytest.fail("measured again"))
    assert sw.simd_width() == 8 and sw.simd_width(True) == 8
    # another machine's record (or one without the general width) is not used; at (nearly) equal speed the
    # narrower width for constant-H limbs, the wider for general ones; clearly slower: 4 for both
    for t8, want in ((0.97e-7, (4, 8)), (1.03e-7, (4, 8)), (1.2e-7, (4, 4))):
        (fresh / sw.FILE).write_text(json.dumps({"other|cpu": {"lanes": 8}, sw.machine_key(): {"lanes": 8}}))
        monkeypatch.setattr(sw, "_chosen", [])
        monkeypatch.setattr(sw, "measure", lambda widths, t8=t8: {4: 1e-7, 8: t8})
        assert (sw.simd_width(), sw.simd_width(True)) == want
        rec = json.loads((fresh / sw.FILE).read_text())
        assert rec["other|cpu"] == {"lanes": 8} and (rec[sw.machine_key()]["lanes"],
                                                     rec[sw.machine_key()]["lanes_general"]) == want
    # a damaged record is measured again and rewritten
    (fresh / sw.FILE).write_text("{not json")
    monkeypatch.setattr(sw, "_chosen", [])
    assert sw.simd_width() == 4 and json.loads((fresh / sw.FILE).read_text())[sw.machine_key()]["lanes"] == 4


def test_the_dispatcher_takes_the_width_of_the_robots_kind(fresh, monkeypatch):
    """A robot whose limbs all have a constant H runs the first width, one with a general limb the second."""
    monkeypatch.setattr(sw, "_chosen", [4, 8])
    for name, w in (("delta_3rr2rrr", 4), ("irsbot2", 8), ("delta_3r2us", 8)):
        km = _load(FILES[[p.stem for p in FILES].index(name)])._packed()
        assert batch._lane_count(km, batch.SIMD_MIN_SAMPLES, None) == w == batch._lane_count(km, 5, True)
        assert batch._lane_count(km, batch.SIMD_MIN_SAMPLES - 1, None) == 0


def test_a_target_without_256_bit_registers_is_not_measured(fresh, monkeypatch):
    monkeypatch.setattr(sw, "measure", lambda *a, **k: pytest.fail("measured"))
    monkeypatch.setattr(sw, "target_lanes", lambda: 2)
    assert sw.simd_width() == 2
    assert not (fresh / sw.FILE).exists()


def test_measure_times_both_widths():
    t = sw.measure((4, 8), joints=4, samples=64, rounds=2)
    assert set(t) == {4, 8} and all(0.0 < v < 1e-3 for v in t.values())


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86 targets")
def test_target_lanes_follow_numbas_target():
    """The widest width is numba's compile target's, not the host's: an AVX2 target
    (``NUMBA_CPU_NAME=haswell`` with its own features) gives 4 on any x86 host."""
    if not (os.environ.get("NUMBA_CPU_NAME") or os.environ.get("NUMBA_CPU_FEATURES")):
        assert target_lanes() == host_lanes(llvm.get_host_cpu_features())
    env = dict(os.environ, NUMBA_CPU_NAME="haswell", NUMBA_CPU_FEATURES="")
    out = subprocess.run([sys.executable, "-c", "from pkm.kernels.simd_vec import LANES; print(LANES)"], env=env,
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "4"


def test_a_read_only_install_records_the_width_in_the_user_cache(monkeypatch, tmp_path):
    """pkm installed where the user cannot write (a system site-packages) and no NUMBA_CACHE_DIR: the
    width goes to numba's own user-wide cache directory (where numba then caches the kernels), and the
    next process reads it there instead of measuring again (≈ 2 s of compiling per process before)."""
    for name in sw.ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    blocker = tmp_path / "site-packages-pkm"
    blocker.write_text("a file: no directory can be made below it, even by root")
    monkeypatch.setattr(sw, "PACKAGE_CACHE", blocker / "__pycache__")
    monkeypatch.setattr(sw, "user_cache", lambda: tmp_path / "home-cache" / "pkm")
    monkeypatch.setattr(sw, "target_lanes", lambda: 8)
    monkeypatch.setattr(sw, "_chosen", [])
    calls = []
    monkeypatch.setattr(sw, "measure", lambda widths: calls.append(widths) or {4: 1e-7, 8: 0.5e-7})
    assert sw.simd_width() == 8 and calls == [(4, 8)]
    rec = json.loads((tmp_path / "home-cache" / "pkm" / sw.FILE).read_text())
    assert rec[sw.machine_key()]["lanes"] == 8 and sw.width_file() == tmp_path / "home-cache" / "pkm" / sw.FILE
    monkeypatch.setattr(sw, "_chosen", [])  # the next process
    monkeypatch.setattr(sw, "measure", lambda widths: pytest.fail("measured again"))
    assert sw.simd_width() == 8


def test_processes_starting_together_measure_once_and_agree(tmp_path):
    """Two processes on one empty cache (pytest's two workers on a fresh clone): each had measured, and on a noisy
    AVX2 host they chose different widths, so the workers collected different tests and pytest-xdist stopped. The
    measurement is now taken under a lock: one process measures, the other waits and reads its record. Here the
    probe is replaced by one that takes a second and prefers W = 8 in one process, W = 4 in the other."""
    code = (
        "import sys, time\n"
        "from pkm.kernels import simd_width as sw\n"
        "sw.target_lanes = lambda: 8\n"
        "def probe(*a, **k):\n"
        "    time.sleep(1.0)\n"
        "    return {4: 1.0, 8: 0.5} if sys.argv[1] == 'a' else {4: 0.5, 8: 1.0}\n"
        "sw.measure = probe\n"
        "print(sw.simd_width(), sw.simd_width(True), len(sw.MEASURED))\n")
    env = {k: v for k, v in os.environ.items() if k not in sw.ENV}
    env["NUMBA_CACHE_DIR"] = str(tmp_path)
    procs = [subprocess.Popen([sys.executable, "-c", code, tag], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for tag in ("a", "b")]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-2000:] for o in outs]
    got = [tuple(int(v) for v in o[0].split()) for o in outs]
    assert got[0][:2] == got[1][:2], got
    assert got[0][2] + got[1][2] == 1, got   # one measurement
    assert json.loads((tmp_path / sw.FILE).read_text())
