"""The ``pkm`` command's process settings (:mod:`pkm.cli.process`, issue 32 point 4): made by the
console-script entry point :func:`pkm.cli.main.run` before numpy loads, so that OpenBLAS starts one
thread (no pool spinning beside the main thread), never by ``import pkm`` or
:func:`pkm.cli.main.main` (a program that imports pkm keeps its own settings)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Runs pkm.cli.main.run() with main() replaced by a report of the process's settings once numpy is loaded.
_SCRIPT = r"""
import gc, json, os, sys
import pkm.cli.main as m

before = "numpy" in sys.modules


def report(argv=None):
    import numpy  # noqa: F401  (loads OpenBLAS with the environment run() left)
    from threadpoolctl import threadpool_info

    blas = [i["num_threads"] for i in threadpool_info() if i.get("internal_api") == "openblas"]
    print(json.dumps({"numpy_before_run": before, "env": os.environ.get("OPENBLAS_NUM_THREADS"),
                      "blas_threads": blas, "threshold": list(gc.get_threshold())}))
    return 0


m.main = report
m.run()
"""


def _settings(**env):
    child = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    child.update(env)
    p = subprocess.run([sys.executable, "-c", _SCRIPT], cwd=ROOT, env=child, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout)


def test_the_command_runs_openblas_on_one_thread_and_fewer_full_collections():
    from pkm.cli.process import FULL_EVERY

    got = _settings()
    assert got["numpy_before_run"] is False   # importing the CLI loads no numpy: run() comes first
    assert got["env"] == "1"
    assert got["blas_threads"] and set(got["blas_threads"]) == {1}, got
    assert got["threshold"][2] == FULL_EVERY >= 100


def test_a_users_blas_setting_wins():
    got = _settings(OPENBLAS_NUM_THREADS="2")
    assert got["env"] == "2"


def test_importing_pkm_or_calling_main_changes_nothing():
    code = ("import gc, os, sys; t = gc.get_threshold(); import pkm, pkm.cli.main as m; "
            "m.main([]); "
            "print(os.environ.get('OPENBLAS_NUM_THREADS'), gc.get_threshold() == t)")
    child = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=child, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.splitlines()[-1].split() == ["None", "True"]
