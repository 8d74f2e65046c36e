"""Settings of the ``pkm`` command's own process (issue 32, point 4: a cached run of the README's
main job in about 0.8 s), made by :func:`pkm.cli.main.run` before numpy is imported. A program that
imports pkm keeps its own settings: nothing here runs on ``import pkm`` or in
:func:`pkm.cli.main.main`.

* **One OpenBLAS thread** (``OPENBLAS_NUM_THREADS=1`` unless the environment sets it). OpenBLAS
  starts a thread pool when it loads, twice here (numpy's copy, and scipy's, which numba loads on
  its first kernel), and each idle pool thread spins (``sched_yield``) for up to 2²⁸ clock cycles,
  ~0.1 s, after it starts and after every threaded call — with no BLAS call at all, 0.05–0.07 s of
  CPU per pool in the cached main job, ~0.1 s of its ~1 s, taken from the main thread on a busy
  2-core machine. pkm's command-line work runs in its numba kernels (their own
  threads: ``prange``, numba's threading layer, not OpenBLAS) and in many small dense systems
  (the Python-level simulation forms, :mod:`pkm.absolute`), where a second BLAS thread gains
  nothing and, on a loaded machine, turned a 156 × 156 SVD from 6 ms into 1.3 s (the reason the
  test suite runs BLAS on one thread, ``tests/conftest.py``).
* **Fewer full garbage collections**: CPython's cyclic collector runs a full collection after every
  10 collections of its middle generation; at start-up that was 3 full passes over the ~170 000
  objects numba, numpy and matplotlib create at import (~0.09 s of the cached main job), freeing
  85 objects; in a first run, whose compiling makes many objects, ~0.8 s of ~8.4 s of CPU. Here it
  waits for :data:`FULL_EVERY` middle-generation collections; the young generations, where
  short-lived reference cycles are freed, are collected as often as before.
"""
from __future__ import annotations

import gc
import os

#: Middle-generation collections between two full ones in the ``pkm`` process (CPython's default: 10).
FULL_EVERY = 100


def tune() -> None:
    """Apply the process settings of the module docstring (call before numpy is imported)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    young, middle, full = gc.get_threshold()
    gc.set_threshold(young, middle, max(full, FULL_EVERY))
