"""The SIMD path on samples with noise (issue 32 point 3: speed that holds), interleaved with the scalar kernel and
Pinocchio.

    python benchmarks/bench_simd_noise.py                 # ≈ 1–2 min on a 2-core machine (cached kernels)
    python benchmarks/bench_simd_noise.py --noise 0 1e-9 --robots delta

Measured or rounded trajectories are not smooth to the IK's tolerance: each lane starts a sample from a prediction
off by 10–100 times the noise. ``robot.inverse_dynamics(x + noise, xd, xdd, t=t)`` (the default call) on N = 10⁴
samples of each robot's default motion (``bench_inverse_dynamics.long_trajectory``) with Gaussian noise of each
``--noise`` level (m, rad) added to ``x``, beside the scalar kernel (``simd=False``) on the same samples and
``pin.rnea`` per call on the Delta's 18-joint tree; one thread, every candidate timed once per round, ``--rounds``
rounds, best of each (wall and process CPU time). Each row records how many limb samples the lanes handed to the
scalar IK (``pkm.kernels.batch.PATHS["lane_scalar_ik"]``) and the largest difference of the torques from the scalar
kernel's, relative to the largest torque.

Writes ``benchmarks/results/<machine>-simd-noise.json`` and prints a Markdown table.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
from bench_simd import NAMES, ROBOTS, _timed, log, pin_rnea, run_record  # noqa: E402

C.add_repo_to_path()


def bench(keys, levels, N, rounds, n_states=2000):
    import numba

    import pkm
    from bench_inverse_dynamics import long_trajectory
    from pkm.kernels import batch

    numba.set_num_threads(1)
    cands, info = {}, {}
    for key in keys:
        robot = pkm.load(C.ROOT / "robots" / ROBOTS[key])
        tr = long_trajectory(robot, N)
        for level in levels:
            x = tr.x + level * np.random.default_rng(0).standard_normal(tr.x.shape)
            for simd in (None, False):
                def run(robot=robot, x=x, tr=tr, simd=simd):
                    return robot.inverse_dynamics(x, tr.xd, tr.xdd, t=tr.t) if simd is None else \
                        robot.inverse_dynamics(x, tr.xd, tr.xdd, t=tr.t, threads=1, simd=False)
                batch.PATHS.clear()
                tau = run().tau  # compile / load
                cands[(key, level, "default" if simd is None else "scalar")] = (run, N)
                info[(key, level, simd)] = (tau, dict(batch.PATHS))
    cands[("pin", None, "rnea")] = (pin_rnea(n_states), n_states)
    best = {k: [np.inf, np.inf] for k in cands}
    for r in range(rounds):
        for k, (fn, count) in cands.items():
            w, c = _timed(fn)
            best[k] = [min(best[k][0], w / count), min(best[k][1], c / count)]
        log(f"  round {r + 1}/{rounds}")
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    pin_c = best[("pin", None, "rnea")][1]
    rows = []
    for (key, level, path), (w, c) in best.items():
        row = {"robot": key, "noise": level, "path": path, "s_per_item": w, "cpu_s_per_item": c,
               "ratio_to_pin_rnea_cpu": c / pin_c}
        if key != "pin":
            tau, paths = info[(key, level, None if path == "default" else False)]
            ref = info[(key, level, False)][0]
            row.update(paths=paths, lane_scalar_ik=paths.get("lane_scalar_ik", 0),
                       rel_dtau_vs_scalar=float(np.abs(tau - ref).max() / np.abs(ref).max()))
        rows.append(row)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--robots", nargs="+", default=list(ROBOTS), choices=list(ROBOTS))
    ap.add_argument("--noise", nargs="+", type=float, default=[0.0, 1e-12, 1e-9, 1e-6, 1e-5])
    ap.add_argument("--machine")
    a = ap.parse_args(argv)
    res = run_record(a)
    cpu = res["cpu"]
    log(f"interleaved, {a.rounds} rounds, N = {a.samples}, noise {a.noise}")
    res["interleaved"] = bench(a.robots, a.noise, a.samples, a.rounds)
    res["load_at_end"] = os.getloadavg()
    rows = []
    for r in res["interleaved"]:
        if r["robot"] == "pin":
            rows.append(["Pinocchio `rnea`, Delta tree (18 joints), per call", "", C.fmt_us(r["cpu_s_per_item"]), "1", "",
                         ""])
        else:
            rows.append([f"{NAMES[r['robot']]}, {r['path']}", f"{r['noise']:g}", C.fmt_us(r["cpu_s_per_item"]),
                         f"{r['ratio_to_pin_rnea_cpu']:.2f}", str(r["lane_scalar_ik"]), f"{r['rel_dtau_vs_scalar']:.1e}"])
    res["table"] = C.markdown_table(rows, ["IK+ID per sample", "noise", "CPU µs", "÷ pin.rnea", "scalar IKs",
                                           "Δτ vs scalar"])
    print(res["table"])
    C.write_json(C.ROOT / "benchmarks" / "results" / f"{a.machine or C.machine_slug(cpu)}-simd-noise.json", res)


if __name__ == "__main__":
    main()
