"""IK + inverse dynamics of the 6-UPS hexapod (robots/hexapod_6ups.toml, SE(3) task space) in µs per
sample, beside one Pinocchio ``rnea`` call on its spanning tree (6 legs × 6 joints = 36 joints).

    python benchmarks/bench_hexapod.py [--samples 10000] [--repeats 5] [--rounds 7]

* ``robot.inverse_dynamics(x, ẋ, ẍ)`` on N samples of the file's 6-DOF sine (every coordinate moves,
  period 1 s, dt = 0.01 s, the duration extended to N samples), 1 thread, after a warm-up call,
  best of ``--repeats``; with all threads too.
* Pinocchio (optional, ``pip install pin``): ``pin.rnea`` per call from Python on
  :func:`peers.hexapod_tree_model` (random states), checked against pkm's tree RNEA
  (``pkm.algorithms.dynamics.inverse_dynamics`` on the same six trees).
* The interleaved pair (pkm 1 thread, Pinocchio), ``--rounds`` times alternately, best of each:
  the ratio to quote on a VM whose speed drifts (benchmarks/README.md).

Writes ``benchmarks/results/<machine>-hexapod.json`` and prints a table.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
import peers  # noqa: E402

ROBOT = Path(__file__).resolve().parents[1] / "robots" / "hexapod_6ups.toml"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--machine", default=None)
    args = ap.parse_args(argv)
    C.add_repo_to_path()
    import numba

    import pkm
    from pkm.algorithms.dynamics import inverse_dynamics as tree_rnea
    from pkm.algorithms.manipulator import dynamics_trees
    from pkm.trajectory import from_spec

    cpu, vers = C.cpu_info(), C.versions()
    robot = pkm.load(ROBOT)
    traj = dict(robot.spec.trajectory)
    traj["duration"] = (args.samples - 1) * traj["dt"]
    tr = from_spec(traj, robot.task.coordinate_names())
    X, XD, XDD, t = tr.x, tr.xd, tr.xdd, tr.t
    N = len(X)
    out = {"robot": robot.name, "N": N, "cpu": cpu, "versions": vers}
    numba.set_num_threads(1)
    robot.inverse_dynamics(X[:20], XD[:20], XDD[:20], threads=1, t=t[:20])  # compile / cache load
    w, c = C.best_of(lambda: robot.inverse_dynamics(X, XD, XDD, threads=1, t=t), args.repeats)
    out["pkm_1thread_s_per_sample"], out["pkm_1thread_cpu_s_per_sample"] = w / N, c / N
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    threads = numba.config.NUMBA_NUM_THREADS
    w, _ = C.best_of(lambda: robot.inverse_dynamics(X, XD, XDD, threads=threads, t=t), args.repeats)
    out["pkm_all_threads"], out["pkm_all_threads_s_per_sample"] = threads, w / N
    rows = [[f"pkm IK+ID hexapod 6-UPS, 1 thread (N = {N})", C.fmt_us(out["pkm_1thread_s_per_sample"]),
             C.fmt_us(out["pkm_1thread_cpu_s_per_sample"]), "sample"],
            [f"pkm IK+ID hexapod 6-UPS, {threads} threads", C.fmt_us(out["pkm_all_threads_s_per_sample"]), "",
             "sample"]]
    if peers.have_pinocchio():
        import pinocchio as pin

        pt = peers.hexapod_tree_model(robot)
        model, data = pt.model, pt.model.createData()
        trees = dynamics_trees(robot)
        rng = np.random.default_rng(1)
        n = model.nq
        states = [(rng.uniform(-0.5, 0.5, n), rng.normal(size=n), rng.normal(size=n)) for _ in range(2000)]
        q, qd, qdd = states[0]
        splits = np.cumsum([0] + [tr_.n for tr_ in trees])
        ref = np.concatenate([tree_rnea(tr_, q[a:b], qd[a:b], qdd[a:b], robot.spec.gravity)
                              for tr_, a, b in zip(trees, splits[:-1], splits[1:])])
        got = pin.rnea(model, data, q, qd, qdd)
        out["pin_joints"] = int(n)
        out["pin_vs_pkm_max_abs_diff"] = float(np.max(np.abs(got - ref)))
        out["pin_vs_pkm_scale"] = float(np.max(np.abs(ref)))
        pargs = [(model, data, *s) for s in states]
        numba.set_num_threads(1)
        pk_w = pk_c = pin_w = pin_c = np.inf
        for _ in range(args.rounds):
            w, c = C.best_of(lambda: robot.inverse_dynamics(X, XD, XDD, threads=1, t=t), 1)
            pk_w, pk_c = min(pk_w, w / N), min(pk_c, c / N)
            w, c = C.per_call_loop(pin.rnea, pargs, 1)
            pin_w, pin_c = min(pin_w, w), min(pin_c, c)
        out["interleaved"] = {"rounds": args.rounds, "pkm_s_per_sample": pk_w, "pkm_cpu_s_per_sample": pk_c,
                              "pin_rnea_s_per_call": pin_w, "pin_rnea_cpu_s_per_call": pin_c,
                              "ratio_wall": pk_w / pin_w, "ratio_cpu": pk_c / pin_c}
        rows += [[f"Pinocchio rnea, hexapod tree ({n} joints), per call", C.fmt_us(pin_w), C.fmt_us(pin_c), "call"],
                 [f"interleaved ×{args.rounds}: pkm IK+ID hexapod, 1 thread", C.fmt_us(pk_w), C.fmt_us(pk_c), "sample"],
                 [f"ratio pkm IK+ID / Pinocchio rnea (wall, CPU)", f"{pk_w / pin_w:.2f}", f"{pk_c / pin_c:.2f}", ""]]
    print(C.header("hexapod 6-UPS IK+ID", cpu, vers))
    table = C.table(rows, ["what", "µs wall", "µs CPU", "per"])
    print(table)
    out["table"] = C.markdown_table(rows, ["what", "µs wall", "µs CPU", "per"])
    slug = args.machine or C.machine_slug(cpu)
    path = C.write_json(Path(__file__).resolve().parent / "results" / f"{slug}-hexapod.json", out)
    print(f"written {path}")


if __name__ == "__main__":
    main()
