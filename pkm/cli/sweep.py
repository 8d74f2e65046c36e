"""``pkm sweep ROBOT --param NAME=V1,V2,…``: the command line of :func:`pkm.sweep`.
"""
from __future__ import annotations

import argparse
import math

from pkm.cli.options import check_outputs
from pkm.cli.output import outputs
from pkm.errors import PkmError

#: How to install the Dask extra, for the help text (:data:`pkm.sweep.points.DASK_HINT`, which is not
#: imported here: every command builds this parser, and pkm.sweep costs ~10 ms of a ~0.8 s cached run).
DASK_HINT = "pip install 'pkm[dask]'"


# ====================================================================== command line
def parse_values(text: str, what: str) -> list[float]:
    """``"1,2,3"`` or ``"START:STOP:COUNT"`` (COUNT evenly spaced values, both ends included).

    >>> parse_values("240,260", "a"), parse_values("200:300:3", "a")
    ([240.0, 260.0], [200.0, 250.0, 300.0])
    """
    import numpy as np

    from pkm.sweep import MAX_POINTS

    text = text.strip()
    try:
        if ":" in text:
            parts = text.split(":")
            if len(parts) != 3:
                raise ValueError
            start, stop, count = float(parts[0]), float(parts[1]), int(parts[2])
            if count < 1 or not (math.isfinite(start) and math.isfinite(stop)):   # linspace(1, inf) is NaN
                raise ValueError
            if count > MAX_POINTS:   # 1:2:1000000000000 tried to allocate 7 TiB
                raise PkmError(f"{what}: {count} values, more than a sweep's {MAX_POINTS} points")
            vals = np.linspace(start, stop, count).tolist() if count > 1 else [start]
        else:
            vals = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise PkmError(f"{what}: expected comma-separated numbers or START:STOP:COUNT, got {text!r}") from None
    if not vals:
        raise PkmError(f"{what}: no values in {text!r}")
    for v in vals:
        if not math.isfinite(v):
            raise PkmError(f"{what}: values must be finite, got {v!r}")
    return vals


def parse_params(items, expected: str = "NAME=V1,V2,… or NAME=START:STOP:COUNT") -> dict[str, list[float]]:
    """``--param NAME=VALUES`` options as ``{name: values}`` (:func:`parse_values`), each name once;
    one-line PkmErrors."""
    parameters: dict[str, list[float]] = {}
    for item in items or []:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise PkmError(f"--param {item!r}: expected {expected}")
        if name in parameters:
            raise PkmError(f"--param {name}: given twice")
        parameters[name] = parse_values(text, f"--param {name}")
    return parameters


def _cmd_sweep(args: argparse.Namespace) -> int:
    from pkm.sweep import sweep
    from pkm.sweep.points import PICK_PLACE_DEFAULTS

    parameters = parse_params(args.param)
    kind = args.trajectory or ("pick-place" if args.cycle_time is not None else "default")
    pp_opts = {"lift": args.lift, "travel": args.travel, "dt": args.dt}
    if kind == "default":
        if args.cycle_time is not None or any(v is not None for v in pp_opts.values()):
            raise PkmError("--cycle-time, --lift, --travel and --dt apply to --trajectory pick-place, "
                           "not to the robot file's default trajectory")
        trajectories = [None]
    else:
        cycle_times = parse_values(args.cycle_time, "--cycle-time") if args.cycle_time is not None else \
            [PICK_PLACE_DEFAULTS["cycle_time"]]
        base = {"type": "pick-place"}
        for key, value in pp_opts.items():
            if value is not None:
                if not math.isfinite(value):
                    raise PkmError(f"--{key}: must be finite, got {value!r}")
                if (key == "dt" and value <= 0) or (key == "lift" and value < 0):   # the same for every point
                    raise PkmError(f"--{key}: must be {'positive' if key == 'dt' else '>= 0'}, got {value!r}")
                base[key] = value
        for t in cycle_times:
            if t <= 0:
                raise PkmError(f"--cycle-time: must be positive, got {t:g}")
        trajectories = [dict(base, cycle_time=t, label=f"pick-place {t:g} s") for t in cycle_times]
    if args.scheduler is not None and args.workers is not None:
        raise PkmError("--workers sets the number of local processes; with --scheduler the Dask cluster decides")
    if args.workers is not None and args.workers < 1:
        raise PkmError(f"--workers: must be at least 1, got {args.workers}")
    check_outputs(args)

    res = sweep(args.robot, parameters, trajectories, scheduler=args.scheduler, workers=args.workers,
                progress=not args.no_progress, time_optimal=args.time_optimal)
    written = []
    with outputs(args.out, args.plot) as out:   # all or nothing, never a half-written file
        if args.out is not None:
            res.to_csv(out[args.out])
            written.append(f"the CSV to {args.out}")
        if args.plot is not None:
            res.plot(out[args.plot])
            written.append(f"the plot to {args.plot}")
    grid = " × ".join([f"{n} ({len(res.parameter_values[n])})" for n in res.parameter_names]
                      + [f"{len(res.trajectory_labels)} trajector{'ies' if len(res.trajectory_labels) > 1 else 'y'}"])
    print(f"{res.robot_name}: sweep of {grid} = {len(res.rows)} points on {res.runner} in {res.elapsed:.1f} s: "
          f"{res.n_ok} ok, {res.n_failed} failed. "
          + (("Wrote " + " and ".join(written) + ".") if written else "No files written (use --out CSV, --plot PNG)."))
    print(res.summary())
    return 0


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``pkm sweep`` on an argparse subparsers object (``set_defaults(func=…)``)."""
    p = subparsers.add_parser(
        "sweep", help="peak and RMS actuator torques over a grid of design parameters and cycle times",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Evaluate peak |tau| and RMS tau of every actuator over the grid of the --param values "
                    "× the trajectories, in parallel (local processes, or a Dask cluster with --scheduler).",
        epilog="""\
--param NAME=V1,V2,… (or NAME=START:STOP:COUNT) sweeps an entry of the robot file's [parameters]
table, in the file's units (mm for the Delta: --param a=200,250,300), or with NAME = mass:BODY the
mass of a body in kg, its inertia scaled alike (mass:platform; a limb body such as mass:arm
changes every limb). Several --param options make a grid.

Trajectory: the robot file's default (--trajectory default, the default), or pick-and-place
cycles (--trajectory pick-place, implied by --cycle-time): --lift 0.025 m up, --travel 0.305 m
along x, down, and back, starting at each design's default trajectory centre (the Delta's
[0, 0, -h]; the platform's reference position if the file has no trajectory), one cycle per
--cycle-time value (default 0.5 s), sampled with --dt (default cycle time / 200).

A point whose inverse kinematics fails (or whose parameters are invalid) is reported with status
"error" (or "limit": beyond a joint limit of the robot file) and does not stop the sweep. The --out CSV has one row per point: the parameters,
trajectory, status, peak_<actuator> [unit] …, rms_<actuator> [unit] … (SI, as the header says per
column: N·m for revolute, N for prismatic actuators; empty where the point failed), message. The --plot shows the
largest peak and RMS over the actuators against the first --param (or the cycle time).

--time-optimal adds each design's time-optimal cycle time along the trajectory's path (pick-place
or line; the cycle time of the option is replaced by the fastest motion) under the robot file's
drives (peak_torque, max_speed, motor side; pkm cycle): columns cycle_time [s], picks_per_minute,
cycle_limit (the limit active most of the time), and a third panel in the plot — cycle time against
arm length (--param a=…), motor (a [parameters] entry used by the drives) or payload (mass:platform).

examples: pkm sweep robots/delta_3rr2rrr.toml --param a=200:300:5 --param c=900,1000 --out sweep.csv
          pkm sweep examples/delta_servo.toml --param a=200:300:5 --time-optimal --plot cycle.png
          pkm sweep robots/delta_3rr2rrr.toml --param mass:platform=0.5,1,2 --cycle-time 0.3,0.4,0.5 \\
              --scheduler tcp://10.0.0.5:8786 --plot sweep.png""")
    p.add_argument("robot", help="path to a robot file (TOML)")
    p.add_argument("--param", action="append", metavar="NAME=VALUES",
                   help="a swept parameter: NAME=V1,V2,… or NAME=START:STOP:COUNT (repeatable)")
    p.add_argument("--trajectory", choices=("default", "pick-place"),
                   help="the robot file's default trajectory, or pick-and-place cycles (default: pick-place "
                        "if --cycle-time is given, else default)")
    p.add_argument("--cycle-time", metavar="T1,T2,…", help="pick-place cycle times [s], swept (default 0.5)")
    p.add_argument("--lift", type=float, metavar="L", help="pick-place lift [m] (default 0.025)")
    p.add_argument("--travel", type=float, metavar="T", help="pick-place travel along x [m] (default 0.305)")
    p.add_argument("--dt", type=float, metavar="DT", help="pick-place sample interval [s] (default cycle time / 200)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help=f"run on a Dask cluster, e.g. tcp://host:8786 (needs {DASK_HINT})")
    p.add_argument("--workers", type=int, metavar="N",
                   help="local worker processes (default: one per CPU; 1: run in this process)")
    p.add_argument("--out", metavar="CSV", help="write one row per grid point (parameters, status, peak/RMS torques)")
    p.add_argument("--plot", metavar="PNG", help="save peak and RMS torque against the first parameter")
    p.add_argument("--time-optimal", action="store_true",
                   help="also each design's time-optimal cycle time under its drives' limits (pkm cycle)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=_cmd_sweep)
    return p
