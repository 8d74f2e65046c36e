"""The SIMD path's lane count ``W``, chosen by measurement once per machine (issue 32).

The widest vector numba's target compiles to one register (:func:`pkm.kernels.simd_vec.target_lanes`:
8 doubles with AVX-512, 4 with AVX2, else 2) is not always the fastest: where a 512-bit instruction
is executed as two 256-bit halves (AMD Zen 4, "double-pumped") or lowers the clock (some Intel
parts), ``W = 4`` runs as many samples per second as ``W = 8`` and fills its lanes with half the
trajectory segments; on an AVX2 target ``W = 8`` (two registers per vector) halves the per-step
overhead of the lanes but spills registers. The policy (:func:`simd_width`):

1. ``PKM_SIMD_LANES`` (or ``PKM_SIMD_WIDTH``) set to 2, 4 or 8: that width, nothing measured;
2. a target without 256-bit registers: 2;
3. else the two widths recorded for this machine in ``simd-width.json`` beside the numba cache
   (``NUMBA_CACHE_DIR`` if set, else ``pkm/__pycache__``, else — an install the user cannot write
   to — numba's user-wide cache directory, where numba then caches the kernels too), keyed by numba's target (triple, CPU
   name, a digest of its features: :func:`machine_key`) and the numba and llvmlite versions; else
   measured now (:func:`measure`: a small kernel of the batch kernel's kind, forward kinematics of a
   12-joint chain from sines and cosines, 3×3 products, loads and stores of a structure-of-arrays
   scratch and a backward wrench pass, run at ``W = 4`` and ``W = 8`` alternately, best of
   ``ROUNDS``; about 2 s of compiling and 0.1 s of timing, once per machine) and recorded: ``W = 8``
   when its time per sample is below ``PREFER_WIDE`` times ``W = 4``'s, else 4 (at equal speed the
   narrower width fills its lanes from shorter trajectories and starts fewer segments cold); for
   a robot with a general limb (configuration-dependent ``H``, :mod:`pkm.kernels.simd_general_limb`)
   ``W = 8`` unless it is slower than ``GENERAL_WIDE`` times ``W = 4``'s: its stage calls pieces with
   ~20 arrays and steps through its rows by indices per vector operation, overhead per step that
   ``W = 8`` spreads over twice the samples.

The batch kernel is compiled for the chosen width only (numba specialises on the ``lanes`` tuple,
:func:`pkm.kernels.simd_vec.lanes`); ``simd=4`` or ``simd=8`` in a call picks a width explicitly.
Measured on an AMD EPYC Zen 5 VM (benchmarks/README.md, "SIMD width and the default call"): the
probe gives ``W = 8`` twice ``W = 4``'s speed per sample with AVX-512 (the batch kernel: 1.3–1.5×),
equal speed on an AVX2 target (the batch kernel: the Delta 1.05–1.25× faster at ``W = 4``, the
IRSBot-2 1.15–1.2× faster at ``W = 8``).
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from pkm.kernels.simd_vec import lanes, splat, target_lanes, vload, vsincos, vstore, vzero
from pkm.kernels.work import _OPTIONS
from pkm.lie.small import add, cross, mm, mtv, mv

__all__ = ["simd_width", "target_lanes", "machine_key", "measure", "width_file", "ENV", "PREFER_WIDE", "GENERAL_WIDE",
           "WIDTHS"]

#: Environment variables that set the width (the first one set wins).
ENV = ("PKM_SIMD_LANES", "PKM_SIMD_WIDTH")
#: Lane counts the SIMD path compiles for.
WIDTHS = (2, 4, 8)
#: ``W = 8`` is chosen when its time per sample is below this fraction of ``W = 4``'s ...
PREFER_WIDE = 0.95
#: ... and for robots with general limbs when it is at most this multiple (at a tie: 8).
GENERAL_WIDE = 1.05
#: Alternating timing rounds of :func:`measure` (best of each width).
ROUNDS = 5
FILE = "simd-width.json"
#: The package's own cache directory (numba's default place for pkm's kernels).
PACKAGE_CACHE = Path(__file__).resolve().parents[1] / "__pycache__"

_chosen: list = []   # this process's choices (constant H, general; numba's target is fixed when it starts)


def _target():
    """numba's JIT target: ``(triple, CPU name, features)`` (its codegen's ``magic_tuple``)."""
    from numba.core.registry import cpu_target

    return cpu_target.target_context.codegen().magic_tuple()


def machine_key() -> str:
    """What a recorded width holds for: numba's target (triple, CPU name, a digest of its features),
    numba and llvmlite."""
    import llvmlite
    import numba

    triple, cpu, features = _target()
    digest = hashlib.sha256(features.encode()).hexdigest()[:16]
    return f"{triple}|{cpu}|features {digest}|numba {numba.__version__}|llvmlite {llvmlite.__version__}"


def user_cache() -> Path:
    """pkm's directory in numba's user-wide cache (numba's fallback where a package's ``__pycache__``
    cannot be written: ``numba.core.caching.UserWideCacheLocator``)."""
    from numba.misc.appdirs import AppDirs

    return Path(AppDirs(appname="numba", appauthor=False).user_cache_dir) / "pkm"


def width_files() -> list:
    """Where ``simd-width.json`` may be, in order: under ``NUMBA_CACHE_DIR`` if set, else
    ``pkm/__pycache__`` and then :func:`user_cache`."""
    user = os.environ.get("NUMBA_CACHE_DIR")
    return [Path(user) / FILE] if user else [PACKAGE_CACHE / FILE, user_cache() / FILE]


def width_file() -> Path:
    """The ``simd-width.json`` in use: the first of :func:`width_files` that exists, else the first."""
    files = width_files()
    return next((f for f in files if f.is_file()), files[0])


def _env_width():
    for name in ENV:
        v = os.environ.get(name, "").strip()
        if v:
            if v not in {str(w) for w in WIDTHS}:
                from pkm.errors import InputError

                raise InputError(f"{name}={v!r}: the SIMD width must be 2, 4 or 8")
            return int(v)
    return None


def simd_width(general=False) -> int:
    """The lanes of the SIMD path on this machine for a robot with constant-``H`` limbs only, or
    (``general``) with a limb whose ``H`` depends on the configuration (module docstring: the
    override, 2 without AVX, else the recorded or measured choice of 4 or 8); looked up once per process."""
    env = _env_width()
    if env is not None:
        return env
    if not _chosen:
        w = wg = target_lanes()
        if w >= 4:
            key = machine_key()
            with _exclusive():   # (processes starting together: one measures, the others read its record)
                w, wg = _recorded(key)
                if w is None or wg is None:
                    times = measure((4, 8))
                    w = 8 if times[8] < PREFER_WIDE * times[4] else 4
                    wg = 8 if times[8] <= GENERAL_WIDE * times[4] else 4
                    _record(key, w, wg, times)
                    MEASURED.append(key)
        _chosen.extend((w, wg))
    return _chosen[1 if general else 0]


#: The machine keys this process measured (a test reads it: processes that start together measure once).
MEASURED: list = []


@contextmanager
def _exclusive():
    """Hold an exclusive lock (``fcntl.flock``) on ``simd-width.json.lock`` beside the first writable of
    :func:`width_files` while the width is read or measured and recorded: two processes starting on one empty
    cache (pytest's workers, a user's parallel jobs) each measured, and on a noisy host chose different widths (an
    AVX2 host: the workers collected different tests and pytest-xdist stopped). Without ``fcntl`` or a writable
    place: no lock."""
    try:
        import fcntl
    except ImportError:   # (not POSIX)
        yield
        return
    for path in width_files():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            f = open(path.with_name(FILE + ".lock"), "a")
        except OSError:
            continue
        try:
            fcntl.flock(f, fcntl.LOCK_EX)
            yield
        finally:
            f.close()   # (releases the lock)
        return
    yield


def _recorded(key):
    for path in width_files():
        try:
            rec = json.loads(path.read_text()).get(key, {})
            w, wg = rec.get("lanes"), rec.get("lanes_general")
        except (OSError, ValueError, AttributeError):
            continue
        if all(type(v) is int and v in WIDTHS for v in (w, wg)):   # 8.0 or true: a record not written by pkm
            return w, wg
    return None, None


def _record(key, w, wg, times):
    """Add this machine's choice to the first of :func:`width_files` that can be written (atomically;
    where none can, the choice stays in the process)."""
    for path in width_files():
        try:
            data = json.loads(path.read_text())
            if not isinstance(data, dict):
                data = {}
        except (OSError, ValueError):
            data = {}
        data[key] = {"lanes": w, "lanes_general": wg, "us_per_sample": {str(k): v * 1e6 for k, v in times.items()},
                     "measured": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        tmp = path.with_name(f"{FILE}.{os.getpid()}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(data, indent=1) + "\n")
            os.replace(tmp, path)
            return
        except OSError:
            try:   # (e.g. a directory where the record should be): no temporary file left behind
                tmp.unlink()
            except OSError:
                pass
            continue


def measure(widths=(4, 8), joints=12, samples=4096, rounds=ROUNDS) -> dict:
    """Seconds per sample of :func:`_probe` at each width (``samples`` lane-samples a run, best of
    ``rounds`` alternating runs): the figure :func:`simd_width` compares."""
    from numba import njit

    probe = njit(**{k: v for k, v in _OPTIONS.items() if k != "cache"})(_probe)
    data = {}
    for w in widths:
        TH = np.ascontiguousarray(np.random.default_rng(0).uniform(-1, 1, (joints, w)))
        VB = np.zeros((12 * joints, w))
        reps = max(1, samples // w)
        probe(TH, VB, 1, lanes(w))  # compile
        data[w] = (TH, VB, reps)
    best = {w: np.inf for w in widths}
    for _ in range(rounds):
        for w in widths:
            TH, VB, reps = data[w]
            t0 = time.perf_counter()
            probe(TH, VB, reps, lanes(w))
            best[w] = min(best[w], (time.perf_counter() - t0) / (reps * w))
    return best


def _probe(TH, VB, reps, L):
    """A kernel of the batch kernel's kind in lanes: each joint's pose from ``sin θ, cos θ``, the chain
    ``K_i = K_{i−1} T_i`` stored row by row, then a backward wrench pass that nudges ``θ``."""
    n = TH.shape[0]
    for _ in range(reps):
        one, zero = splat(1.0, L), vzero(L)
        R0, p0 = (one, zero, zero, zero, one, zero, zero, zero, one), (zero, zero, zero)
        for i in range(n):
            x = vload(TH, i, L)
            s, c = vsincos(x)
            R = (c, -s, zero, s * 0.6, c * 0.6, splat(0.8, L), s * -0.8, c * -0.8, splat(0.6, L))
            R0, p0 = mm(R0, R), add(mv(R0, (x * 0.1, splat(0.2, L), c * 0.3)), p0)
            for k in range(9):
                vstore(VB, 12 * i + k, R0[k])
            for k in range(3):
                vstore(VB, 12 * i + 9 + k, p0[k])
        m, f = (zero, zero, zero), (zero, zero, splat(-9.81, L))
        for i in range(n - 1, -1, -1):
            o = 12 * i
            R = (vload(VB, o, L), vload(VB, o + 1, L), vload(VB, o + 2, L), vload(VB, o + 3, L), vload(VB, o + 4, L),
                 vload(VB, o + 5, L), vload(VB, o + 6, L), vload(VB, o + 7, L), vload(VB, o + 8, L))
            p = (vload(VB, 12 * i + 9, L), vload(VB, 12 * i + 10, L), vload(VB, 12 * i + 11, L))
            f = add(mtv(R, f), p)
            m = add(add(mtv(R, m), cross(p, f)), f)
            vstore(TH, i, vload(TH, i, L) + 1e-9 * m[0] / (1.0 + m[0] * m[0]))
