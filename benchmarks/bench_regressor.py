"""The regressor's cost beside the inverse dynamics', same run, interleaved rounds.

    python benchmarks/bench_regressor.py [--samples 2000] [--rounds 5] [ROBOT …]

For each robot (default: the three Deltas and the IRSBot-2) along its own trajectory (``N`` samples):
``robot.inverse_dynamics(x, ẋ, ẍ, t=t, torques_only=True)`` and ``robot.regressor(x, ẋ, ẍ, t=t)``
(``τ = Y π``: one run of the batch kernel per standard parameter plus the nominal run,
:mod:`pkm.identification.regressor`), alternated round by round; reported: the best round of each
in µs per sample, their ratio and the number of parameters (columns); also the base regressor
(``columns=`` the independent ones of :func:`pkm.identification.base.robot_base_parameters`, what
``pkm identify`` computes). Prints the CPU; timings
are the machine's, never asserted.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ["delta_3rr2rrr.toml", "delta_3r2us.toml", "delta_4rr2rrr.toml", "irsbot2.toml"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("robots", nargs="*", default=[str(ROOT / "robots" / r) for r in DEFAULT])
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    import pkm
    from pkm.errors import BranchWarning
    from pkm.identification.base import robot_base_parameters
    from pkm.trajectory import from_spec

    cpu, vers = C.cpu_info(), C.versions()
    print(C.header("regressor vs inverse dynamics (µs per sample, best round, interleaved)", cpu, vers))
    rows = []
    for path in args.robots:
        robot = pkm.load(path)
        tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
        idx = np.linspace(0, len(tr.t) - 1, args.samples).astype(int)
        x, xd, xdd = tr.x[idx], tr.xd[idx], tr.xdd[idx]
        t = np.linspace(tr.t[0], tr.t[-1], args.samples)
        best = {"id": np.inf, "Y": np.inf, "Yb": np.inf}
        ind = robot_base_parameters(robot).independent
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BranchWarning)
            robot.inverse_dynamics(x, xd, xdd, t=t, torques_only=True)   # compile / warm
            Y = robot.regressor(x, xd, xdd, t=t)
            for _ in range(args.rounds):
                t0 = time.perf_counter()
                robot.inverse_dynamics(x, xd, xdd, t=t, torques_only=True)
                best["id"] = min(best["id"], time.perf_counter() - t0)
                t0 = time.perf_counter()
                robot.regressor(x, xd, xdd, t=t)
                best["Y"] = min(best["Y"], time.perf_counter() - t0)
                t0 = time.perf_counter()
                robot.regressor(x, xd, xdd, t=t, columns=ind)
                best["Yb"] = min(best["Yb"], time.perf_counter() - t0)
        n = args.samples
        rows.append([Path(path).stem, Y.shape[2], len(ind), C.fmt_us(best["id"] / n), C.fmt_us(best["Y"] / n),
                     f"{best['Y'] / best['id']:.1f}×", C.fmt_us(best["Yb"] / n), f"{best['Yb'] / best['id']:.1f}×"])
    print(C.table(rows, ["robot", "parameters", "base", "inverse dynamics µs/sample", "regressor µs/sample", "ratio",
                         "base regressor µs/sample", "ratio"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
