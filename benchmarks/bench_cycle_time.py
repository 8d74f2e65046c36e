"""Time-optimal profile of one pick-and-place cycle (issue 31): coefficients and solve timed apart, beside toppra.

    python benchmarks/bench_cycle_time.py [--points 1000] [--rounds 7] [ROBOT …]

For each robot (default: examples/delta_servo.toml and examples/irsbot2_servo.toml) and the standard cycle
from its file's pick point (25 mm up, 305 mm across, 25 mm down and back, 12.5 mm corner blends: two
rest-to-rest paths, ``--points`` grid points in all), best of ``--rounds``, in ms:

* ``coefficients``: :func:`pkm.planning.coefficients.path_dynamics` of both paths at the grid points, at the
  points a quarter, half and three quarters into each step and at the actuators' turns (three batched inverse
  dynamics per path: 3N, 9N samples and a few);
* ``solve``: :func:`pkm.planning.solve.profile` of both paths (pkm's closed-form reachability inside the
  outer iteration that keeps friction and gear efficiency exact; iterations reported);
* ``one pass pkm`` / ``one pass toppra``: one reachability solve of the final rows (the same LP data) by pkm
  (:func:`pkm.planning.reachability.reachability`) and by the ``toppra`` package (seidel solver,
  :func:`pkm.planning.toppra_solve.toppra_reachability`; skipped without it), and their cycle times;
* ``time_optimal``: the whole :func:`pkm.time_optimal` (coefficients, solve, switching samples, the
  trajectory and its verifying inverse dynamics).

Prints the CPU (``/proc/cpuinfo``); timings are the machine's, never asserted.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ["examples/delta_servo.toml", "examples/irsbot2_servo.toml"]


def _coefficients(robot, path, n):
    """The coefficients at the grid points, at the steps' midpoints and at the actuators' turns, as
    :func:`pkm.time_optimal` computes them."""
    from pkm.planning.coefficients import path_dynamics
    from pkm.planning.constraints import exact_turns
    from pkm.planning.constraints import inside_coefficients

    pd = path_dynamics(robot, path, n)
    return pd, inside_coefficients(robot, path, pd), exact_turns(robot, path, pd)


def _best(fn, rounds):
    best, out = np.inf, None
    for _ in range(rounds):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return 1e3 * best, out


def _cycle(paths_profiles):
    total = 0.0
    for pd, prof in paths_profiles:
        sd = np.sqrt(prof.x)
        total += float(np.sum(2 * (pd.s[1] - pd.s[0]) / (sd[:-1] + sd[1:])))
    return total


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("robots", nargs="*", default=[str(ROOT / r) for r in DEFAULT])
    ap.add_argument("--points", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)
    import pkm
    from pkm.planning import pick_place_route
    from pkm.planning.coefficients import motor_gains
    from pkm.planning.constraints import resolve_limits
    from pkm.planning.reachability import reachability
    from pkm.planning.solve import _points, profile

    try:
        from pkm.planning.toppra_solve import toppra_reachability
        import toppra  # noqa: F401
    except ImportError:
        toppra_reachability = None

    cpu, vers = C.cpu_info(), C.versions()
    print(C.header(f"time-optimal pick-and-place cycle, N = {args.points} (ms, best of {args.rounds})", cpu, vers))
    rows = []
    for path in args.robots:
        robot = pkm.load(path)
        w = np.asarray(robot.spec.trajectory["start"], dtype=float)
        start = np.array([w["xyz".index(n)] for n in robot.task.coordinate_names()])
        route = pick_place_route(start)
        counts = _points(args.points, route)
        limits, gains = resolve_limits(robot), motor_gains(robot.drives, robot.n_act)
        pkm.time_optimal(robot, route, n=args.points)   # warm: kernels loaded, caches filled
        t_coef, pds = _best(lambda: [_coefficients(robot, p, m) for p, m in zip(route.paths, counts)], args.rounds)
        t_solve, profs = _best(lambda: [profile(pd, robot.drives, limits, gains, inside=ins, turn_coef=tc)
                                        for pd, ins, tc in pds], args.rounds)
        pds = [pd for pd, _, _ in pds]
        iters = [pr[3] for pr in profs]
        final = [(pd, pr[1], pr[2]) for pd, pr in zip(pds, profs)]

        def one(solver):
            return [(pd, solver(*rws, xmax, pd.s[1] - pd.s[0])) for pd, rws, xmax in final]

        t_own, own = _best(lambda: one(reachability), args.rounds)
        if toppra_reachability is not None:
            t_tp, tp = _best(lambda: one(toppra_reachability), args.rounds)
            T_tp = _cycle(tp)
        else:
            t_tp, T_tp = float("nan"), float("nan")
        t_all, res = _best(lambda: pkm.time_optimal(robot, route, n=args.points), args.rounds)
        rows.append([robot.name[:40], f"{t_coef:.1f}", f"{t_solve:.1f} ({'+'.join(map(str, iters))} it.)",
                     f"{t_own:.1f}", f"{t_tp:.1f}", f"{_cycle(own):.5f} / {T_tp:.5f}", f"{t_all:.1f}",
                     f"{res.cycle_time:.4f}"])
    head = ["robot", "coefficients", "solve (outer it.)", "one pass pkm", "one pass toppra",
            "cycle s: pkm / toppra (grid)", "time_optimal", "cycle time s"]
    print(C.markdown_table(rows, head))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
