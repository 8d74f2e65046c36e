"""The SIMD path gives the same bits whether its kernels were compiled in the process or loaded from
numba's cache.

A numba function compiled in the process links its callees' LLVM IR into its own module and calls
them, while one loaded from the cache runs the object code compiled back then: where a piece of the
lanes was a call (``_piece``) that LLVM could treat differently in the two situations, the IRSBot-2's
torques differed by up to 8.7e-14 N·m (5e-15 relative) between the process that compiled the kernel and
every later one (each state deterministic on its own). The lanes' general-limb stage is inlined since
(:func:`pkm.kernels.simd_general_limb.general_limb`, ``forceinline``), so both processes run the same code.

Each test runs two fresh interpreters on one empty cache directory: the first compiles, the second
loads; both print a digest of the torques' bytes.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = """
import hashlib, sys
import numba, numpy as np
import pkm
from pkm.kernels import batch
from pkm.trajectory import from_spec
numba.set_num_threads(1)
robot = pkm.load(sys.argv[1])
tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
for t in (tr.t, None):
    res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=t, simd=8, threads=1)
    print(hashlib.sha256(np.ascontiguousarray(res.tau).tobytes()).hexdigest(), float(np.abs(res.tau).max()))
print("simd8" in batch.PATHS)
"""


def _run(robot: str, cache: Path) -> list:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT), PKM_COMPILE_MESSAGE="0")
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(ROOT / "robots" / f"{robot}.toml")], cwd=ROOT,
                         capture_output=True, text=True, env=env, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.split("\n")
    assert lines[2] == "True", "the calls did not take the SIMD path"
    return lines[:2]


@pytest.mark.parametrize("robot", ["irsbot2"])
def test_compiled_and_cached_lanes_give_the_same_torques(tmp_path, robot):
    """The IRSBot-2 (general limbs: the lanes' ``general_limb`` stage) with and without sample times, at
    W = 8: a process that compiles the kernels and one that loads them from the cache print the same
    digest of the torques (the second process compiled nothing: its cache files are unchanged)."""
    cache = tmp_path / "cache"
    compiled = _run(robot, cache)
    files = {p: p.stat().st_mtime_ns for p in cache.rglob("*.nbc")}
    assert files, "nothing was cached"
    cached = _run(robot, cache)
    assert {p: p.stat().st_mtime_ns for p in cache.rglob("*.nbc")} == files, "the second process compiled again"
    assert cached == compiled
