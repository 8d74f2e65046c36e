"""What a first run compiles (issue 32 point 4, issue 30): the main job, ``pkm inverse-dynamics`` of
the Delta, in a fresh process with an empty numba cache, lists every function numba compiles
(its ``numba:compile`` events) — no timing, so the test does not depend on the machine's load.

* Each function is compiled once. Numba compiles a function once per distinct argument types, and
  a constant argument (a slot offset, ``len`` of a tuple) is a literal type of its own, a read-only
  array another type than a writable one: the Delta's job compiled 92 specialisations of 79
  functions, ``_twist_at`` four times, ``_pose_at`` three. The only functions allowed twice are
  :data:`SIZE_GENERIC`, the linear-algebra helpers of :mod:`pkm.lie.linalg` whose size is a
  compile-time constant on purpose (:func:`pkm.lie.linalg.size`): the Delta's ``δ_l`` (a tuple,
  ``KernelModel.d_static``) and its ``δ_p`` (an int) are two sizes, so two versions; making them
  generic made the compile longer, not shorter (unrolled loops of known trip count are less code
  for LLVM than vectorised loops of unknown one).
* A robot of the same structure with other numbers (``examples/delta_servo.toml``) then compiles
  nothing: its kernels are the Delta's. Nor does one with a fourth limb (``robots/delta_4rr2rrr.toml``):
  the kernels' types depend on the limbs' ``δ_l``, the task's ``δ_p`` and whether every limb has a
  constant H, not on the number of limbs or bodies (array sizes are not part of numba's types).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DELTA = ROOT / "robots" / "delta_3rr2rrr.toml"
SERVO = ROOT / "examples" / "delta_servo.toml"
FOUR = ROOT / "robots" / "delta_4rr2rrr.toml"
#: Functions compiled once per size kind: for a tuple size and for an int size (see the docstring).
SIZE_GENERIC = {"pkm.lie.linalg._cholesky_into", "pkm.lie.linalg.norm1", "pkm.lie.linalg._size_ol.<locals>.<lambda>"}

_SCRIPT = r"""
import json, sys
from numba.core import event
from pkm.cli.main import main

runs = []


class Listener(event.Listener):
    def on_start(self, ev):
        pass

    def on_end(self, ev):
        f = ev.data["dispatcher"].py_func
        runs[-1].append([f"{f.__module__}.{f.__qualname__}", [str(a) for a in ev.data["args"]]])


event.register("numba:compile", Listener())
report, robots = sys.argv[1], sys.argv[2:]
modules = None
for k, robot in enumerate(robots):
    runs.append([])
    plot = ["--plot", f"{report}.{k}.png"] if k == 0 else []   # the README's main job first
    if main(["inverse-dynamics", robot, "--out", f"{report}.{k}.csv", *plot]) != 0:
        raise SystemExit(f"pkm inverse-dynamics {robot} failed")
    modules = sorted(sys.modules) if modules is None else modules
with open(report, "w") as f:
    json.dump({"runs": runs, "modules": modules}, f)
"""


@pytest.fixture(scope="module")
def compiles(tmp_path_factory):
    """The functions compiled (name, argument types) by the Delta's job in an empty cache, then by
    the same job on the servo Delta and on the four-limb Delta (``compiles[k]``); ``compiles.modules``:
    the modules loaded once the main job (the first, with ``--plot``) had run."""
    tmp = tmp_path_factory.mktemp("startup")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp / "cache"), PKM_COMPILE_MESSAGE="0")
    report = tmp / "compiles.json"
    p = subprocess.run([sys.executable, "-c", _SCRIPT, str(report), str(DELTA), str(SERVO), str(FOUR)], env=env,
                       cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(report.read_text())
    return _Runs(doc["runs"], modules=doc["modules"])


class _Runs(list):
    """The compile events of each job, with the ``modules`` loaded after the first."""

    def __init__(self, runs, modules):
        super().__init__(runs)
        self.modules = modules


def test_the_main_job_compiles_each_function_once(compiles):
    delta = compiles[0]
    sigs = defaultdict(list)
    for name, args in delta:
        sigs[name].append(args)
    assert "pkm.kernels.inverse_dynamics.run_range" in sigs
    twice = {name: s for name, s in sigs.items() if len(s) > 1}
    assert set(twice) <= SIZE_GENERIC, {name: s for name, s in twice.items() if name not in SIZE_GENERIC}
    assert all(len(s) == 2 for s in twice.values()), twice
    assert len(delta) <= len(sigs) + len(SIZE_GENERIC)


def test_the_main_job_does_not_import_what_it_does_not_run(compiles):
    """Every command builds the whole parser, but the main job imports no sweep, simulation,
    workspace map or identification (each a few ms of the ~0.8 s cached run)."""
    unused = ("pkm.sweep", "pkm.sim", "pkm.workspace", "pkm.identification", "pkm.planning", "pkm.absolute",
              "pkm.export", "pkm.viewer")
    loaded = [m for m in compiles.modules if any(m == u or m.startswith(u + ".") for u in unused)]
    assert loaded == [], loaded
    assert "matplotlib.figure" in compiles.modules   # the plot was drawn (so the check saw the whole job)


def test_a_robot_of_the_same_structure_reuses_the_kernels(compiles):
    assert compiles[1] == []
    assert compiles[2] == []


def test_pkm_compile_runs_the_scalar_and_the_simd_kernels(monkeypatch):
    """``pkm compile`` (:func:`pkm.cli.compile.warm`) runs inverse dynamics on the scalar kernel and
    in SIMD lanes: a trajectory of :data:`pkm.kernels.batch.SIMD_MIN_SAMPLES` samples or more runs
    the lanes, which an installer's ``pkm compile`` left to compile (about a minute on a busy
    2-core machine) at the user's first long run."""
    import pkm
    from pkm.cli.compile import warm

    robot = pkm.load(SERVO)
    calls = []
    monkeypatch.setattr(type(robot), "inverse_dynamics", lambda self, *a, **k: calls.append(k.get("simd")))
    monkeypatch.setattr(type(robot), "eom", lambda self, *a, **k: None)
    monkeypatch.setattr(type(robot), "simulate", lambda self, *a, **k: None)
    batches = []
    monkeypatch.setattr(type(robot), "simulate_batch", lambda self, u, span, x0, **k: batches.append(len(x0)))
    import pkm.planning.reachability as reach

    passes = []   # pkm cycle's passes (numba, pkm.kernels.reachability)
    monkeypatch.setattr(reach, "reachability", lambda *a: passes.append(len(a)))
    warm(robot)
    assert sorted(calls, key=str) == [False, True] and passes == [5]
    # robot.simulate_batch's SIMD lanes too, a full call of them, where the batch runs any
    from pkm.cli.compile import batch_lanes
    from pkm.sim.batch_lanes import min_members

    assert batches == ([batch_lanes(robot)] if batch_lanes(robot) else [])
    delta, us = pkm.load(ROOT / "robots" / "delta_3rr2rrr.toml"), pkm.load(ROOT / "robots" / "delta_3r2us.toml")
    assert batch_lanes(delta) >= min_members(batch_lanes(delta)) and batch_lanes(us) == batch_lanes(delta)
    assert batch_lanes(robot) == 0   # the servo Delta's drive friction: robot.simulate only, no batch
