"""``pkm cycle ROBOT``: the time-optimal motion along a path under the drives' limits (:func:`pkm.time_optimal`)."""
from __future__ import annotations

import argparse
import math

from pkm.errors import PkmError

EPILOG = """\
The fastest motion along a geometric path of the platform such that every actuator's torque and speed
stay within their limits (time-optimal path parametrisation by reachability analysis, TOPP-RA, with
pkm's torques along the path from one batched inverse dynamics).

Paths (task coordinates in SI units, m and rad): --path pick-place (default): from --start (the pick
point; default the robot file's pick-place or line start, else its reference position) --lift up
along +z, --travel across along x, --lift down, and the same way back; the top corners are cut by
blends reaching --blend along each side (0: sharp corners, a stop at each). --path line: from --start
to --end. --path FILE: a CSV of waypoints (header naming the task coordinates, e.g. x,y,z), splined
through by chord length. A path is run from rest to rest (a pick-and-place cycle stops at the pick and
place points, where it reverses). The joints' ranges in the robot file are checked along the path first.

Limits: by default the robot file's drives, MOTOR side: |motor torque| <= peak_torque and |motor
speed| <= max_speed (a drive without max_speed: speed unlimited), with the motor torque of the drive
model (gear ratio, rotor inertia, friction, efficiency: docs/robot-file-format.md, "Drives and
friction") and the motor speed = gear ratio x joint rate; plus the actuators' velocity limits of the
robot file. --torque-limit / --speed-limit override them: one value for all actuators or one per
actuator, motor side [N·m, rad/s] where the robot has drives, else joint side (actuator force and
rate [N·m or N, rad/s or m/s]; a robot without drives needs --torque-limit). These are peak limits: the
continuous (RMS, thermal) ratings are no constraint here, and a bang-bang cycle run back to back exceeds
them — check it with pkm size ROBOT --trajectory file --file TRAJ.csv.

Picks per minute = 60 / cycle time, one pick per full pick-and-place cycle (up, across, down, up,
back, down). --out writes the trajectory CSV (t, x…, xd…, xdd… and s, sd, sdd: non-uniform time steps,
what pkm inverse-dynamics --trajectory file --file reads as it is); --plot the phase plane (s, ṡ) with
the limit curve and the torques and speeds against their limits.

Between the samples the path acceleration s̈ is constant on each step (the CSV's sdd at the step's start):
the limits hold at both ends of every step and where an actuator turns back inside one; inside the steps
the torques differ by the grid's discretisation error, printed as "inside the steps up to" (a warning above
1 %: give more --points).

--jerk J limits the jerk of every task coordinate of the platform [m/s³; rad/s³ for angles], measured on
the trajectory's samples: |xdd_i(t_k+1) - xdd_i(t_k)| <= J (t_k+1 - t_k) for each coordinate i (the jerk a
controller interpolating the accelerations sees; it tends to |d³x_i/dt³| as --points grows), the motion leaving
and reaching rest with zero acceleration. It is solved by a sequential linear programme on the path grid (the
convex-concave procedure on Verscheure et al.'s convex time-optimal formulation, HiGHS; pkm.planning.jerk)
instead of the bang-bang reachability analysis (at most 5000 --points), and the result's jerk and torques
are checked afterwards.

--check [MODEL_ERROR] simulates the result under computed-torque control (kp = (2π·10 Hz)², critical
damping) whose model's masses and inertias are 1 + MODEL_ERROR times (MODEL_ERROR default 0.1) the simulated
robot's, and prints the tracking error and how far the commanded torques go past the limits
(nothing clipped): a time-optimal motion leaves the feedback no torque to spare.

examples: pkm cycle examples/delta_servo.toml --out cycle.csv --plot cycle.png
          pkm cycle examples/delta_servo.toml --check 0.1
          pkm cycle examples/delta_servo.toml --jerk 50000 --out cycle.csv
          pkm cycle examples/delta_servo.toml --blend 0 --torque-limit 3.0
          pkm inverse-dynamics examples/delta_servo.toml --trajectory file --file cycle.csv"""

PATHS = ("pick-place", "line")


def add_parser(sub) -> None:
    p = sub.add_parser("cycle", help="time-optimal motion along a path under the drives' limits: cycle time, "
                                     "picks per minute, trajectory CSV",
                       formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
                       description="Cycle time: the time-optimal parametrisation of a path under the actuators' "
                                   "torque and speed limits.")
    p.add_argument("robot", help="path to a robot file")
    p.add_argument("--path", default="pick-place", metavar="pick-place|line|FILE",
                   help="the path: pick-place (default), line, or a CSV of waypoints")
    p.add_argument("--start", nargs="+", type=float, metavar="X",
                   help="pick point or line start: the task coordinates, or X Y Z in the world [m]")
    p.add_argument("--end", nargs="+", type=float, metavar="X", help="line: end point (as --start)")
    p.add_argument("--lift", type=float, metavar="L", help="pick-place: lift along +z [m] (default 0.025)")
    p.add_argument("--travel", type=float, metavar="T", help="pick-place: travel along x [m] (default 0.305)")
    p.add_argument("--blend", type=float, metavar="B",
                   help="pick-place: corner blend length [m] (default lift/2; 0: sharp corners, a stop at each)")
    p.add_argument("--torque-limit", nargs="+", type=float, metavar="N",
                   help="torque limits: one for all actuators or one per actuator (default: the drives' peak_torque)")
    p.add_argument("--speed-limit", nargs="+", type=float, metavar="W",
                   help="speed limits: one for all actuators or one per actuator (default: the drives' max_speed)")
    p.add_argument("--jerk", type=float, metavar="J",
                   help="limit every task coordinate's jerk to J [m/s³] (measured on the samples: see below); "
                        "default: none (bang-bang accelerations)")
    p.add_argument("--points", type=int, default=1000, metavar="N", help="grid points along the path (default 1000)")
    p.add_argument("--check", type=float, nargs="?", const=0.1, metavar="MODEL_ERROR",
                   help="simulate the result under computed-torque control with a model whose masses err by "
                        "the fraction MODEL_ERROR (default 0.1: 10 %% heavier): tracking error and torque saturation")
    p.add_argument("--out", metavar="CSV", help="write the trajectory CSV")
    p.add_argument("--plot", metavar="PNG", help="save the phase plane and the torques and speeds against their limits")
    p.set_defaults(func=run)


def _task_point(robot, values, what: str):
    """Task coordinates from ``values``: ``task_dof`` numbers, or X Y Z world numbers (rotations held at 0)."""
    import numpy as np

    from pkm.cli.options import _finite

    names = list(robot.task.coordinate_names())
    _finite(values, what)
    if len(values) == len(names):
        return np.array(values, dtype=float)
    if len(values) == 3 and any(n in "xyz" for n in names):
        return np.array([values["xyz".index(n)] if n in ("x", "y", "z") else 0.0 for n in names])
    other = "" if len(names) == 3 or not any(n in "xyz" for n in names) else " or 3 (X Y Z in the world)"
    raise PkmError(f"{what} takes {len(names)} values (the task coordinates {' '.join(names)}){other}, "
                   f"got {len(values)}")


def _same_offset(robot, start, end) -> None:
    """A line given by world points (X Y Z) must not move along a world axis the task does not control (as
    :func:`pkm.trajectory.from_spec` requires of a line's end − start): that part of the motion would be dropped."""
    names = list(robot.task.coordinate_names())
    if len(names) == 3 or len(start) != 3 or len(end) != 3:
        return
    for k, axis in enumerate("xyz"):
        if axis not in names and start[k] != end[k]:
            raise PkmError(f"--end moves along world {axis.upper()} ({start[k]:g} to {end[k]:g}), which the task "
                           f"coordinates {' '.join(names)} do not control: give the same {axis.upper()} as the start")


def _default_world(robot):
    """The default start as the robot file gives it: world X Y Z (or the task coordinates)."""
    spec = robot.spec.trajectory
    if spec and spec.get("type") in ("pick-place", "line"):
        return [float(v) for v in spec["start"]]
    if spec and spec.get("type") == "sine":
        return [float(v) for v in spec["center"]]
    return [float(v) for v in robot.position_ref]


def _default_start(robot):
    import numpy as np

    spec = robot.spec.trajectory
    if spec and spec.get("type") in ("pick-place", "line"):
        world = np.asarray(spec["start"], dtype=float)
    elif spec and spec.get("type") == "sine":
        world = np.asarray(spec["center"], dtype=float)
    else:
        world = np.asarray(robot.position_ref, dtype=float)
    return _task_point(robot, list(world), "the default start")


def _length(value, what: str, positive: bool):
    if value is None:
        return None
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        raise PkmError(f"{what} must be a {'positive' if positive else 'non-negative'} finite length [m], got {value!r}")
    return value


def build_route(robot, args):
    """The route of the options (:mod:`pkm.planning.paths`)."""
    from pathlib import Path

    from pkm.planning.paths import LinePath, Route, read_path_csv, task_pick_place_route

    names = list(robot.task.coordinate_names())
    kind = args.path
    if kind not in PATHS:
        if not Path(kind).is_file():
            what = "is a directory" if Path(kind).is_dir() else "no such file"
            raise PkmError(f"--path {kind}: {what} (expected pick-place, line or a CSV of waypoints)")
        for opt in ("start", "end", "lift", "travel", "blend"):
            if getattr(args, opt) is not None:
                raise PkmError(f"--{opt} does not apply to a path file (its points are the path)")
        return Route((read_path_csv(kind, names),), kind="file")
    start = _default_start(robot) if args.start is None else _task_point(robot, args.start, "--start")
    if kind == "line":
        for opt in ("lift", "travel", "blend"):
            if getattr(args, opt) is not None:
                raise PkmError(f"--{opt} does not apply to a line (it takes --start and --end)")
        if args.end is None:
            raise PkmError("a line needs --end")
        _same_offset(robot, _default_world(robot) if args.start is None else args.start, args.end)
        return Route((LinePath(start, _task_point(robot, args.end, "--end")),), kind="line")
    if args.end is not None:
        raise PkmError("--end does not apply to a pick-place path (it takes --start, --lift, --travel, --blend)")
    lift = _length(args.lift, "--lift", True) or 0.025
    travel = _length(args.travel, "--travel", True) or 0.305
    return task_pick_place_route(names, start, lift, travel, _length(args.blend, "--blend", False))


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from pkm.cli.options import _check_output, _finite
    from pkm.cli.output import outputs
    from pkm.planning import time_optimal
    from pkm.robot import load

    if args.out is not None:
        _check_output(args.out, "--out")
    if args.plot is not None:
        _check_output(args.plot, "--plot", "image")
    for opt in ("torque_limit", "speed_limit"):
        v = getattr(args, opt)
        if v is not None:
            _finite(v, f"--{opt.replace('_', '-')}")
            if any(not x > 0 for x in v):
                raise PkmError(f"--{opt.replace('_', '-')} must be positive, got {' '.join(f'{x:g}' for x in v)}")
    if args.check is not None and not (math.isfinite(args.check) and args.check > -1):
        raise PkmError(f"--check MODEL_ERROR must be a number > -1 (0.1: the controller's model 10 % heavier "
                       f"than the robot), got {args.check!r}")
    if args.jerk is not None and not (math.isfinite(args.jerk) and args.jerk > 0):
        raise PkmError(f"--jerk must be a positive finite jerk limit [m/s³], got {args.jerk!r}")
    if not 16 <= args.points <= 100_000:
        raise PkmError(f"--points must be from 16 to 100000, got {args.points}")
    if args.jerk is not None and args.points > 5000:
        raise PkmError(f"--points must be at most 5000 with --jerk (a linear programme over all points per "
                       f"iteration), got {args.points}")
    robot = load(args.robot)
    route = build_route(robot, args)
    res = time_optimal(robot, route, torque_limit=args.torque_limit, speed_limit=args.speed_limit, n=args.points,
                       jerk=args.jerk)
    side = "motor side" if res.side == "motor" else "joint side"
    print(f"{robot.name}: time-optimal {route.kind} path, {len(res.t)} samples ({side} limits: torque "
          f"{' '.join(f'{v:.4g}' for v in res.torque_limit)}, speed "
          f"{' '.join(f'{v:.4g}' if math.isfinite(v) else 'none' for v in res.speed_limit)})")
    print(f"  cycle time {res.cycle_time:.4g} s" + (f", {res.picks_per_minute:.4g} picks per minute (one pick per "
                                                    f"full cycle)" if res.picks_per_minute is not None else ""))
    if res.jerk_limit is not None:
        unit = "m/s³" if all(n in ("x", "y", "z") for n in robot.task.coordinate_names()) else "m/s³, rad/s³ for angles"
        print(f"  jerk limit {res.jerk_limit:.4g} ({unit}) on every task coordinate (sample to sample), largest jerk "
              f"{100 * res.jerk_ratio:.2f} % of it")
    print(f"  largest use of a limit {100 * float(np.max(res.ratio)):.2f} %, least {100 * float(np.min(res.ratio)):.2f} % "
          f"(samples); at the steps' ends {100 * float(np.max(res.end_ratio)):.2f} %, least of either end "
          f"{100 * float(np.min(np.maximum(res.ratio[:-1], res.end_ratio))):.2f} %; inside the steps up to "
          f"{100 * res.between_ratio:.2f} %")
    print("  active limits (samples): " + ", ".join(f"{k} {n}" for k, n in res.active_counts().items()))
    if args.check is not None:
        _check(robot, res, args.check)
    paths = [p for p in (args.out, args.plot) if p is not None]
    if paths:
        with outputs(*paths) as out:
            if args.out is not None:
                res.write_csv(out[args.out])
            if args.plot is not None:
                from pkm.plotting.cycle import plot_cycle

                plot_cycle(res, path=out[args.plot], title=f"{robot.name}: {route.kind}")
        for what, p in (("trajectory CSV", args.out), ("plot", args.plot)):
            if p is not None:
                print(f"Wrote the {what} to {p}.")
    return 0


def _check(robot, res, model_error) -> None:
    """``--check``: the result under computed-torque control with a wrong model (:mod:`pkm.control.tracking`)."""
    import numpy as np

    from pkm.control.tracking import DEFAULT_KP, closed_loop_check

    rep = closed_loop_check(robot, res.trajectory, model_error=model_error, torque_limit=res.torque_limit,
                            speed_limit=res.speed_limit)
    k = int(np.nanargmax(rep.peak_ratio))
    beyond = np.nanmax(rep.saturated)
    print(f"  closed loop (computed torque, kp = {DEFAULT_KP:.4g}/s², the model's masses "
          f"{100 * model_error:+.3g} %): tracking error max {np.abs(rep.max_error).max():.3g}, RMS "
          f"{np.sqrt(np.mean(rep.rms_error ** 2)):.3g} [m, rad]; commanded torque up to {rep.peak_ratio[k]:.3g}× "
          f"the limit ({rep.actuator_names[k]}), beyond a limit {100 * beyond:.3g} % of the time; "
          f"{rep.simulation.health()}")
