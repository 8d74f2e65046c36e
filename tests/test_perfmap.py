"""benchmarks/_perfmap.py: the symbol map that lets `perf` name numba's compiled functions
(benchmarks/profile_kernel.py). Run in a fresh interpreter: the module must be imported before
numba compiles or loads anything."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

SCRIPT = r"""
import sys
sys.path.insert(0, sys.argv[1])
import _perfmap
import numpy as np
import pkm
from pkm.kernels.inverse_dynamics import run_range

assert _perfmap.demangle("_ZN3pkm7kernels16inverse_dynamics9run_rangeB3v38B66c8tJTIeFIjxE") == "pkm.kernels.inverse_dynamics.run_range"
assert _perfmap.demangle("NRT_incref") == "NRT_incref"
robot = pkm.load(sys.argv[2])
x = np.tile([0.0, 0.0, -0.9], (3, 1))
robot.inverse_dynamics(x, 0 * x, 0 * x)
path = _perfmap.write()
table = {}
for line in open(path):
    address, size, name = line.split()
    table[name] = (int(address, 16), int(size, 16))
(cres,) = run_range.overloads.values()
name = cres.fndesc.mangled_name
assert name in table, "run_range missing"
assert table[name][0] == cres.library.get_pointer_to_function(name) and table[name][1] > 0
# the pieces that are calls (not inlined, pkm.kernels.work._piece) are there too, and other modules'
# helpers, each inside the map once per library that holds a copy
pieces = {_perfmap.demangle(n) for n in table}
# (the kernel's own callees: pkm.load and pack no longer compile the reference kernels, pkm.lie.interpret)
assert {"pkm.kernels.ik._solve_affine", "pkm.lie.linalg.cholesky_solve_into"} <= pieces, sorted(pieces)
print("ok", len(table))
"""


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils' nm")
def test_perf_map_names_the_kernel(tmp_path):
    """The map names the kernel and the callees it calls. Which helpers are separate symbols depends
    on which process compiled them first (a cache filled by two test workers at once can hold a
    helper inlined into another library), so the script compiles afresh in a cache of its own."""
    import os

    robot = ROOT / "robots" / "delta_3rr2rrr.toml"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(ROOT / "benchmarks"), str(robot)], capture_output=True,
                         text=True, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("ok")
