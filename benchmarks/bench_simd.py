"""The SIMD path of the batch kernel beside the scalar one (issue 18), interleaved with Pinocchio.

    python benchmarks/bench_simd.py                      # ≈ 3–4 min on a 2-core machine
    python benchmarks/bench_simd.py --no-big --no-startup

1. ``robot.inverse_dynamics(x, xd, xdd[, t=t])`` on N = 10⁴ samples of each robot's default motion
   (as ``bench_inverse_dynamics.py``), one thread, for the scalar kernel (``simd=False``), the
   SIMD path (``simd=True``; every robot, general loops included, :func:`pkm.kernels.simd_kernel.supports`)
   and the default call (no ``simd`` nor ``threads`` argument, numba's pool set to one thread; the
   path it took is read from ``pkm.kernels.batch.PATHS``), each with and without the sample times,
   at the machine's width (:func:`pkm.kernels.simd_width.simd_width`), and ``pin.rnea`` per call on the Delta's
   18-joint tree: every candidate timed once per round, ``--rounds`` rounds, best of each (wall
   and process CPU time), so that all figures see the same machine load.
2. ``torques_only=True`` on N = 10⁷ samples of the Delta (SIMD, with times) in a fresh process:
   µs per sample (wall and process CPU time: one long run against the best of five short ones, so
   on a loaded machine the CPU times are the ones to compare) and peak resident memory, beside the
   same call on N = 10⁴ in that process.
3. First and second run of ``pkm inverse-dynamics robots/delta_3rr2rrr.toml --out …`` after
   ``python -m pkm.lie.numba_cache`` cleared the caches.

Writes ``benchmarks/results/<machine>-simd.json`` and prints a Markdown table. An AVX2 target on an
AVX-512 host: ``NUMBA_CPU_NAME=haswell NUMBA_CPU_FEATURES= NUMBA_CACHE_DIR=/tmp/avx2-cache``
(``--machine`` names the file; numba's target is recorded in the JSON).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

C.add_repo_to_path()
ROBOTS = {"delta": "delta_3rr2rrr.toml", "irsbot2": "irsbot2.toml", "delta_us": "delta_3r2us.toml"}
NAMES = {"delta": "3RR[2RR]R Delta", "irsbot2": "IRSBot-2", "delta_us": "3R[2US] Delta"}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def _timed(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w0, time.process_time() - c0


def pin_rnea(n_states=2000):
    """The peer: a function that calls ``pin.rnea`` on ``n_states`` random states of the Delta's 18-joint tree
    (``peers.delta_tree_model``), one call each."""
    import pinocchio as pin

    import peers
    import pkm

    model = peers.delta_tree_model(pkm.load(C.ROOT / "robots" / ROBOTS["delta"])).model
    data, rng, n = model.createData(), np.random.default_rng(1), model.nq
    pargs = [(model, data, rng.uniform(-np.pi, np.pi, n), rng.normal(size=n), rng.normal(size=n))
             for _ in range(n_states)]

    def rnea():
        for a in pargs:
            pin.rnea(*a)
    return rnea


def run_record(a, **extra) -> dict:
    """What a SIMD benchmark's JSON records of its run: machine, versions, the lanes' widths, numba's target and
    the environment that set them, one thread, ``a.samples``, ``a.rounds`` and the load at the start."""
    from numba.core.registry import cpu_target

    from pkm.kernels.simd_width import simd_width

    return {"cpu": C.cpu_info(), "versions": C.versions(),
            "lanes": {"constant H": simd_width(), "general limbs": simd_width(True)},
            "numba_target_cpu": cpu_target.target_context.codegen().magic_tuple()[1],
            "numba_env": {k: os.environ[k] for k in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", "PKM_SIMD_LANES")
                          if k in os.environ},
            **extra, "threads": 1, "N": a.samples, "rounds": a.rounds, "load_at_start": os.getloadavg()}


def bench_interleaved(keys, N, rounds, n_states=2000):
    import numba

    import pkm
    from bench_inverse_dynamics import long_trajectory
    from pkm.kernels import batch
    from pkm.kernels.simd_kernel import supports

    numba.set_num_threads(1)
    cands = {}
    for key in keys:
        robot = pkm.load(C.ROOT / "robots" / ROBOTS[key])
        tr = long_trajectory(robot, N)
        simd_ok = supports(robot._packed())
        for simd in (False, True, None):
            for with_t in (True, False):
                t = tr.t if with_t else None

                def run(robot=robot, tr=tr, t=t, simd=simd):
                    if simd is None:  # the default call, as a user writes it
                        robot.inverse_dynamics(tr.x, tr.xd, tr.xdd) if t is None else \
                            robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=t)
                    else:
                        robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=t, threads=1, simd=simd)
                before = batch.PATHS.copy()
                run()  # compile / load, and the allocator's blocks
                took = "SIMD" if (batch.PATHS - before)["simd"] else "scalar"
                path = {False: "scalar", True: "SIMD", None: f"default ({took})"}[simd]
                w = batch._lane_count(robot._packed(), N, True) if simd is not False and took == "SIMD" else 1
                cands[(key, path, with_t)] = (run, N, simd_ok or simd is False, w)
    cands[("pin", "rnea", None)] = (pin_rnea(n_states), n_states, True, 1)
    best = {k: [np.inf, np.inf] for k in cands}
    for r in range(rounds):
        for k, (fn, count, *_) in cands.items():
            w, c = _timed(fn)
            best[k][0] = min(best[k][0], w / count)
            best[k][1] = min(best[k][1], c / count)
        log(f"  round {r + 1}/{rounds}")
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    pin_w, pin_c = best[("pin", "rnea", None)]
    rows = []
    for k, (fn, count, real, lanes) in cands.items():
        w, c = best[k]
        rows.append({"robot": k[0], "path": k[1], "times": k[2], "simd_supported": real, "lanes": lanes, "s_per_item": w,
                     "cpu_s_per_item": c, "ratio_to_pin_rnea_wall": w / pin_w, "ratio_to_pin_rnea_cpu": c / pin_c})
    return rows


BIG = r"""
import resource, sys, time, numpy as np, pkm
from pkm.trajectory import from_spec
N = int(sys.argv[1])
r = pkm.load(sys.argv[2])
tr = from_spec(r.spec.trajectory, r.task.coordinate_names())
dt, period = tr.t[1] - tr.t[0], r.spec.trajectory["period"]
c, A = tr.x[0], tr.x[int(round(period / 4 / dt))] - tr.x[0]  # the file's sine: x = c + A sin(2πt/T)
def motion(n):  # the file's sine at its dt, n samples, evaluated at the (rounded) sample times
    t = np.arange(n) * dt
    X, XD, XDD = np.empty((n, 3)), np.empty((n, 3)), np.empty((n, 3))
    w = 2 * np.pi / period
    ph = np.fmod(t, period) * w  # the phase from t mod T (exact): w·t itself has an ulp of ~1e-11 at t ~ 1e5 s
    s = np.sin(ph)
    for k in range(3):
        np.multiply(s, A[k], out=X[:, k]); X[:, k] += c[k]
        np.multiply(s, -w * w * A[k], out=XDD[:, k])
    np.cos(ph, out=s)
    del ph
    for k in range(3):
        np.multiply(s, w * A[k], out=XD[:, k])
    return X, XD, XDD, t
small = motion(10_000)
r.inverse_dynamics(*small[:3], t=small[3], torques_only=True, threads=1, simd=True)
small_us, small_cpu = np.inf, np.inf
for _ in range(5):
    t0, c0 = time.perf_counter(), time.process_time()
    r.inverse_dynamics(*small[:3], t=small[3], torques_only=True, threads=1, simd=True)
    small_us = min(small_us, (time.perf_counter() - t0) / 10_000 * 1e6)
    small_cpu = min(small_cpu, (time.process_time() - c0) / 10_000 * 1e6)
X, XD, XDD, t = motion(N)
del small
rss_inputs = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t0, c0 = time.perf_counter(), time.process_time()
tau = r.inverse_dynamics(X, XD, XDD, t=t, torques_only=True, threads=1, simd=True)
big_us, big_cpu = (time.perf_counter() - t0) / N * 1e6, (time.process_time() - c0) / N * 1e6
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # before the runs below add their arrays
# The same call into the caller's array (`out=`, the one just filled): without the first touch of 240 MB
# of memory that this process never used; on a KVM guest the host backs such pages on first touch
# (measured alone below: a numpy write of a fresh array of the same size).
t0 = time.perf_counter()
r.inverse_dynamics(X, XD, XDD, t=t, torques_only=True, threads=1, simd=True, out=tau)
out_us = (time.perf_counter() - t0) / N * 1e6
t0 = time.perf_counter()
fresh = np.empty_like(tau)
fresh[:] = 1.0
touch_us = (time.perf_counter() - t0) / N * 1e6
del fresh
print({"N": N, "us_per_sample": big_us, "us_per_sample_N1e4": small_us, "cpu_us_per_sample": big_cpu,
    "us_per_sample_into_out": out_us, "first_touch_us_per_sample": touch_us,
    "cpu_us_per_sample_N1e4": small_cpu, "peak_rss_MB": peak, "rss_after_inputs_MB": rss_inputs, "inputs_MB": (X.nbytes * 3 + t.nbytes) / 1e6,
    "tau_MB": tau.nbytes / 1e6, "finite": bool(np.isfinite(tau).all())})
"""


def bench_big(N):
    r = subprocess.run([sys.executable, "-c", BIG, str(N), str(C.ROOT / "robots" / ROBOTS["delta"])],
                       capture_output=True, text=True, cwd=C.ROOT)
    if r.returncode != 0:
        return {"error": r.stderr[-800:]}
    import ast
    return ast.literal_eval(r.stdout.strip().splitlines()[-1])


def bench_startup():
    tmp = Path(tempfile.mkdtemp(prefix="pkm-simd-"))
    clear = subprocess.run([sys.executable, "-m", "pkm.lie.numba_cache"], capture_output=True, text=True, cwd=C.ROOT)
    out = {"command": "pkm inverse-dynamics robots/delta_3rr2rrr.toml --out /tmp/t.csv",
           "cleared": clear.stdout.strip()[-200:]}
    for label in ("first_run_s", "second_run_s"):
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "pkm", "inverse-dynamics", str(C.ROOT / "robots" / ROBOTS["delta"]),
                            "--out", str(tmp / "t.csv")], capture_output=True, text=True, cwd=C.ROOT)
        out[label] = time.perf_counter() - t0
        if r.returncode != 0:
            out["error"] = r.stderr[-500:]
            break
        log(f"  start-up {label}: {out[label]:.1f} s")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--robots", nargs="+", default=list(ROBOTS), choices=list(ROBOTS))
    ap.add_argument("--big", type=float, default=1e7, help="samples of the torques-only stream (default 1e7)")
    ap.add_argument("--no-big", action="store_true")
    ap.add_argument("--no-startup", action="store_true")
    ap.add_argument("--machine")
    a = ap.parse_args(argv)
    from pkm.kernels.simd_vec import LANES as target
    from pkm.kernels.simd_width import width_file

    try:
        record = json.loads(width_file().read_text())
    except (OSError, ValueError):
        record = {}
    res = run_record(a, target_lanes=target, width_record=record)
    cpu, width, cpu_name = res["cpu"], res["lanes"], res["numba_target_cpu"]
    log(f"interleaved, {a.rounds} rounds, N = {a.samples}, W = {width} (target {cpu_name}: up to {target})")
    res["interleaved"] = bench_interleaved(a.robots, a.samples, a.rounds)
    if not a.no_big:
        log(f"torques only, N = {int(a.big):.0e}")
        res["big"] = bench_big(int(a.big))
    if not a.no_startup:
        res["startup"] = bench_startup()
    res["load_at_end"] = os.getloadavg()
    rows = []
    for r in res["interleaved"]:
        if r["robot"] == "pin":
            rows.append(["Pinocchio `rnea`, Delta tree (18 joints)", "call", "", C.fmt_us(r["s_per_item"]),
                         C.fmt_us(r["cpu_s_per_item"]), "1", "1"])
        else:
            path = r["path"] if r["simd_supported"] else "SIMD → scalar (not supported)"
            rows.append([f"{NAMES[r['robot']]} IK+ID, {path}, {'with' if r['times'] else 'without'} t", "sample",
                         r["lanes"], C.fmt_us(r["s_per_item"]),
                         C.fmt_us(r["cpu_s_per_item"]), f"{r['ratio_to_pin_rnea_wall']:.2f}",
                         f"{r['ratio_to_pin_rnea_cpu']:.2f}"])
    table = C.markdown_table(rows, ["what", "per", "W", "time", "CPU time", "÷ pin.rnea", "÷ pin.rnea (CPU)"])
    res["table"] = table
    print(table)
    if "big" in res:
        print("\nbig:", json.dumps(res["big"]))
    if "startup" in res:
        print("start-up:", json.dumps(res["startup"]))
    slug = a.machine or C.machine_slug(cpu)
    C.write_json(C.ROOT / "benchmarks" / "results" / f"{slug}-simd.json", res)


if __name__ == "__main__":
    main()
