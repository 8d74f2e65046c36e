"""``pkm identify``: the base parameters of a robot from measured motions and actuator forces, an
identified robot file, an excitation trajectory; ``pkm info --base-parameters`` (:func:`base_report`)."""
from __future__ import annotations

import argparse
import sys


def add_parser(sub) -> None:
    p = sub.add_parser(
        "identify", help="identify the base dynamic parameters from measured data (CSV); write a robot file",
        description="Weighted least squares of the base parameters (pkm info --base-parameters) from data "
                    "CSV files as pkm inverse-dynamics --out writes them (t, task coordinates [and rates "
                    "…d, accelerations …dd], q_<actuator>, tau_<actuator>); rates and accelerations absent "
                    "from a file come from a zero-phase Savitzky-Golay derivative. Prints each estimate with "
                    "its standard deviation. --out writes a robot file whose torques equal the identified "
                    "model (the standard parameters nearest the file's). --excite CSV writes an optimised "
                    "excitation trajectory instead (a finite Fourier series minimising cond(Y_base)).")
    p.add_argument("robot", help="path to the nominal robot file (TOML)")
    p.add_argument("--data", nargs="+", metavar="CSV", help="measured data files")
    p.add_argument("--out", metavar="TOML", help="write the identified robot file")
    p.add_argument("--consistent", action="store_true",
                   help="physically consistent parameters in --out (a projection onto positive mass and "
                        "positive definite pseudo-inertia, reported)")
    p.add_argument("--validate", nargs="+", metavar="CSV",
                   help="data files not used for the fit: the torque residual of the identified model (with --out: of the "
                        "parameters written there) against the noise")
    p.add_argument("--excite", metavar="CSV", help="write an optimised excitation trajectory (t, x, xd, xdd) and stop")
    p.add_argument("--period", type=float, default=2.0, help="excitation period [s] (default 2)")
    p.add_argument("--dt", type=float, default=0.005, help="excitation sample step [s] (default 0.005)")
    p.set_defaults(func=run)


def base_report(robot) -> list[str]:
    """Lines of ``pkm info --base-parameters``."""
    from pkm.identification.base import RANK_TOL, robot_base_parameters
    from pkm.lie.interpret import python_kernels

    with python_kernels(False):
        bp = robot_base_parameters(robot)
    out = ["", f"  base parameters: {bp.rank} of {len(bp.names)} standard parameters (pivoted QR of the regressor "
               f"over random reachable states, relative rank tolerance {RANK_TOL:g})"]
    out += [f"  b{k + 1:<4}= {e}" for k, e in enumerate(bp.expressions())]
    un = bp.unidentifiable
    out.append(f"  not identifiable (no effect on the torques): {', '.join(un) if un else 'none'}")
    return out


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from pkm.cli.output import outputs
    from pkm.errors import InputError, PkmError
    from pkm.identification.base import robot_base_parameters
    from pkm.identification.estimate import identify, read_data
    from pkm.robot import load

    if not args.data and not args.excite:
        raise InputError("give --data CSV [CSV …] (measured motions and forces) or --excite CSV")
    robot = load(args.robot)
    base = robot_base_parameters(robot)
    if args.excite:
        from pkm.identification.excitation import excitation, write_trajectory_csv

        if not (np.isfinite(args.period) and 0 < args.period <= 1e4):
            raise InputError(f"--period must be a number of seconds > 0 and at most 1e4, got {args.period}")
        if not (np.isfinite(args.dt) and 0 < args.dt <= args.period and args.period / args.dt <= 1e6):
            raise InputError(f"--dt must be > 0, at most --period and at least --period/1e6, got {args.dt}")
        exc = excitation(robot, base, period=args.period)
        with outputs(args.excite, None) as out:
            write_trajectory_csv(out[args.excite], robot.task.coordinate_names(), *exc.sample(args.dt))
        print(f"{robot.name}: excitation trajectory (Fourier series, 3 harmonics, period {args.period:g} s), "
              f"cond(Y_base) = {exc.cond:.4g} (column-scaled), written to {args.excite}")
        return 0
    datas = [read_data(robot, p) for p in args.data]
    checks = [(p, read_data(robot, p)) for p in args.validate or ()]   # (read first: a bad one writes nothing)
    est, _, _ = identify(robot, datas, base)
    names, pi0 = robot.dynamic_parameters()
    print(f"{robot.name}: {base.rank} base parameters from {est.samples} samples of {len(datas)} file(s); "
          f"{datas[0].derived}; weighted least squares (per-actuator noise from the residual, iterated once)")
    rows = robot.task.coordinate_names() if robot.redundancy else robot.actuator_names
    what = "task wrench component (redundant actuation: J_IK^T tau, free of internal forces)" if robot.redundancy \
        else "actuator"
    print(f"  noise estimate per {what}: " + ", ".join(f"{a} {s:.3g}" for a, s in zip(rows, est.sigma)))
    print(f"  fit: explains " + ", ".join(f"{a} {100 * e:.6g} %" for a, e in zip(rows, est.explained))
          + " of the measured variance; residual RMS " + ", ".join(f"{r:.3g}" for r in est.rms)
          + " (the data's own high-pass noise " + ", ".join(f"{n:.3g}" for n in est.noise) + ")")
    if np.any(est.filter):
        print("  ± : the noise's and the derivative filter's (the change with a wider filter window) together")
    nominal = base.values(pi0)
    for k, e in enumerate(base.expressions()):
        print(f"  b{k + 1:<4}{est.beta[k]: .8g} ± {est.uncertainty[k]:.3g}   (nominal {nominal[k]:.8g})   = {e}")
    judged, of = est.beta, "the estimate"   # what --validate checks: the parameters written to --out, if any
    if args.out:
        from pkm.identification.writer import consistent_standard, nearest_standard, problems, write_robot

        pi = nearest_standard(base, est.beta, pi0)
        bad = problems(pi, names)
        note = "standard parameters nearest the nominal ones with the identified base parameters"
        if bad and not args.consistent:
            groups = [n[:-2] for n in names if n.endswith(".m")]
            first = bad[0].split(":", 1)
            what = f"body {groups[int(first[0])]!r}" if first[0].isdigit() else f"parameter {first[0]!r}"
            raise PkmError(f"the identified parameters nearest the nominal ones are not physically consistent ({what}:"
                           f"{first[1]}); use --consistent for a projection")
        if bad:
            pi, dev = consistent_standard(base, est.beta, est.cov, pi0, start=pi)
            note = (f"physically consistent projection of the identified base parameters (change {dev:.3g} in "
                    f"the estimate's covariance metric, |L^-1 dbeta|/sqrt(r))")
            print(f"  --consistent: {note}")
        with outputs(args.out, None) as out:
            write_robot(args.robot, out[args.out], names, pi, note=f"pkm identify: {note}")
        judged, of = base.values(pi), f"the parameters written to {args.out}"
        print(f"  wrote the identified robot file {args.out} ({note})")
    if args.validate:
        from pkm.identification.estimate import validate

        for path, data in checks:
            rms, sigma = validate(robot, data, base, judged)
            print(f"  validation {path} ({of}): residual RMS " + ", ".join(f"{a} {r:.3g}" for a, r in zip(rows, rms))
                  + " (noise estimate " + ", ".join(f"{s:.3g}" for s in sigma) + ")")
    sys.stdout.flush()
    return 0
