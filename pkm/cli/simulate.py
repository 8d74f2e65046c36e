"""``pkm simulate ROBOT --torques zero|hold|FILE.csv|computed-torque``: forward dynamics in time
(:meth:`pkm.robot.Robot.simulate`), with a CSV, a plot and a health summary."""
from __future__ import annotations

import argparse
import math
import sys

from pkm.errors import PkmError

TORQUES = ("zero", "hold", "computed-torque")
#: Default proportional gain of the computed-torque controller: (2π · 10 Hz)².
KP = (2 * math.pi * 10) ** 2


def add_parser(sub) -> argparse.ArgumentParser:
    from pkm.cli.options import add_trajectory_options

    p = sub.add_parser(
        "simulate", help="forward dynamics: the motion under given actuator torques (CSV, plot, energy)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Simulate the robot under actuator torques, in task, joint or actuator coordinates (paper 8.1).",
        epilog="""\
--torques zero      no actuator torque: the robot falls from rest at --x0 (default: home)
--torques hold      the constant torques that hold --x0 at rest (gravity compensation)
--torques FILE.csv  a torque table with a column t and tau_<actuator> per actuator (the CSV of
                    pkm inverse-dynamics --out), interpolated by cubic splines; --x0 and --xd0
                    default to the table's first task coordinates and their rates (columns
                    x…, xd…), else home and rest (a warning if the table's motion moves)
--torques computed-torque
                    computed-torque control with PD feedback (--kp, default (2π·10 Hz)²) along
                    the trajectory of the options below (default: the robot file's), from its
                    first sample

The default form (auto) passes the limbs' singularities (e.g. the Delta's arms stretched) and
forward-kinematics ones by changing coordinates there; the summary names which coordinates
carried the motion when. The task and joint forms stop with a one-line error naming the time at
a limb's singularity, the actuator form at a forward-kinematics one.
The --out CSV holds t, task coordinates, their rates (suffix d), actuator positions
q_<actuator> [rad or m], forces/torques tau_<actuator> [N·m or N], the energy E = T + V, the actuator work W, E − E(0) − W and the
largest loop-closure residual; the plot shows actuator angles, actuator torques/forces, platform
position (with computed-torque also the tracking error against the trajectory) and the energy
error against time.

example: pkm simulate robots/delta_3rr2rrr.toml --torques zero --duration 0.2 --plot fall.png""")
    p.add_argument("robot", help="path to a robot file (TOML)")
    p.add_argument("--torques", required=True, metavar="zero|hold|FILE.csv|computed-torque",
                   help="the actuator torques (see below)")
    p.add_argument("--x0", nargs="+", type=float, metavar="X", help="initial task coordinates [m, rad]")
    p.add_argument("--xd0", nargs="+", type=float, metavar="XD", help="initial task velocity (default 0)")
    p.add_argument("--form", default="auto", choices=("auto", "task", "joint", "actuator"),
                   help="state: auto (default: task coordinates, handed to actuator coordinates and back where "
                        "either set degenerates: passes type-I and type-II singularities), task coordinates "
                        "(fast; stops at a limb's singularity), joint coordinates and task velocity (paper 8.1.2, "
                        "with a closure projection after each step) or actuator coordinates (paper 8.1.3; "
                        "passes the limbs' singularities, stops at forward-kinematics ones)")
    p.add_argument("--method", default="DOP853", choices=("DOP853", "RK45", "Radau", "RK4"),
                   help="integrator (default DOP853; RK4 with a fixed --step)")
    p.add_argument("--rtol", type=float, default=1e-9, help="relative tolerance of the adaptive methods (1e-9)")
    p.add_argument("--step", type=float, metavar="H", help="RK4's fixed step [s]; the output interval otherwise")
    p.add_argument("--kp", type=float, default=KP, help="computed-torque: proportional gain [1/s²]")
    add_trajectory_options(p)
    p.add_argument("--out", metavar="CSV", help="write the simulated motion to CSV")
    p.add_argument("--plot", metavar="PNG", help="save a plot of the motion and the energy error")
    p.set_defaults(func=_cmd_simulate)
    return p


#: Show a progress bar for a controller's simulation (computed-torque) longer than this [s of motion].
PROGRESS_SPAN = 0.25


def _interactive() -> bool:
    """Whether stderr is a terminal (a user watching, not a log or a pipe)."""
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


class _Progress:
    """The simulated time ``t`` (``progress`` of :func:`pkm.sim.simulate.simulate`) on a bar of 1000 steps
    over ``span`` (the furthest time reached: adaptive steps are retried at earlier times)."""

    def __init__(self, bar, span):
        self.bar, self.t0, self.length = bar, span[0], max(span[1] - span[0], 1e-300)

    def __call__(self, t):
        done = min(1000, int(1000 * (t - self.t0) / self.length))
        if done > self.bar.n:
            self.bar.update(done - self.bar.n)


def _cmd_simulate(args: argparse.Namespace) -> int:
    import time

    import numpy as np

    from pkm.cli.options import _ALL_TRAJ_OPTIONS, _finite, _opt, check_outputs, load_trajectory
    from pkm.cli.output import outputs
    from pkm.robot import load

    check_outputs(args)
    for name in ("x0", "xd0"):
        if getattr(args, name) is not None:
            _finite(getattr(args, name), f"--{name}")
    for name in ("rtol", "step", "kp", "duration"):
        value = getattr(args, name)
        if value is not None and not (math.isfinite(value) and value > 0):
            raise PkmError(f"--{name.replace('_', '-')} must be a positive number, got {value}")
    if not 1e-13 <= args.rtol < 1:   # below, scipy raises it to 100 machine epsilons with a warning
        raise PkmError(f"--rtol must be from 1e-13 to below 1, got {args.rtol}")
    robot = load(args.robot)
    robot.spec.check_actuation()
    d = robot.task_dof
    x0 = None if args.x0 is None else np.array(args.x0)
    xd0 = None if args.xd0 is None else np.array(args.xd0)
    for name, v in (("--x0", x0), ("--xd0", xd0)):
        if v is not None and v.shape != (d,):
            raise PkmError(f"{name} needs {d} task coordinates ({', '.join(robot.task.coordinate_names())})")
    kind = args.torques
    stray = [_opt(d) for d in ("trajectory", *_ALL_TRAJ_OPTIONS) if d != "duration" and getattr(args, d, None) is not None]
    if kind != "computed-torque" and stray:   # (they were ignored: --dt taken for the step, silently)
        raise PkmError(f"{stray[0]} sets the reference trajectory of --torques computed-torque, not a run of --torques "
                       f"{kind} (the integrator's step is --step, the run's length --duration)")
    if kind == "computed-torque":
        from pkm.control import ComputedTorque
        traj = load_trajectory(robot, args)
        u = ComputedTorque(load(args.robot), traj, args.kp)
        span = (float(traj.t[0]), float(traj.t[-1]))
        x0 = traj.x[0] if x0 is None else x0
        xd0 = traj.xd[0] if xd0 is None else xd0
        what = f"computed-torque control along the {traj.t[-1] - traj.t[0]:.6g} s trajectory (kp = {args.kp:.4g})"
    elif kind in ("zero", "hold"):
        u = kind
        span = (0.0, 1.0 if args.duration is None else args.duration)
        what = "zero torque" if kind == "zero" else "the torques that hold the initial state"
    else:
        from pkm.sim.inputs import read_table

        u = read_table(kind, robot.actuator_names)
        span = (float(u.t[0]), float(u.t[-1]) if args.duration is None else float(u.t[0]) + args.duration)
        table_x0, table_xd0, moving = _table_start(kind, robot)
        x0 = table_x0 if x0 is None else x0
        if xd0 is None and table_xd0 is not None and x0 is table_x0:
            xd0 = table_xd0
        elif xd0 is None and moving:
            print(f"pkm simulate: warning: the motion in {kind} starts moving, but the file has no task rates "
                  f"({', '.join(n + 'd' for n in robot.task.coordinate_names())}): the simulation starts at rest "
                  "(--xd0 sets the initial rates)", file=sys.stderr)
        what = f"the torque table {kind}"
    options = dict(method=args.method, form=args.form)
    if args.method == "RK4":
        if args.step is None:
            raise PkmError("--method RK4 needs --step H (the fixed time step)")
        options["dt"] = args.step
    else:
        options.update(rtol=args.rtol, atol=args.rtol * 1e-3, dt=args.step)
    t0 = time.perf_counter()
    from pkm.cli.progress import progress_bar

    length = span[1] - span[0]
    # the computed-torque controller (Python at every step, slow) always shows a bar; zero, hold or
    # tabulated torques (every method, the numba RK4 in chunks) only to someone at a terminal, since
    # such runs may end in a one-line error (a singularity) that bar lines in a log would precede
    shown = length > PROGRESS_SPAN and (kind == "computed-torque" or _interactive())
    with progress_bar(1000, "simulate", "‰", above=0 if shown else 1000) as bar:
        try:
            sim = robot.simulate(u, span, x0, xd0, progress=_Progress(bar, span) if shown else None, **options)
        except ValueError as exc:
            if isinstance(exc, PkmError):
                raise
            raise PkmError(str(exc)) from None
        bar.update(bar.total - bar.n)
    elapsed = time.perf_counter() - t0
    written = []
    with outputs(args.out, args.plot) as out:
        if args.out is not None:
            _write_csv(out[args.out], robot, sim)
            written.append(f"the CSV to {args.out}")
        if args.plot is not None:
            from pkm.plotting import plot_simulation
            from pkm.plotting.style import joint_labels

            plot_simulation(sim, robot.task.coordinate_names(), path=out[args.plot],
                            title=f"{robot.name}: simulated under {what}", kinds=robot.actuator_kinds,
                            reference=None if kind != "computed-torque" else   # the controller's own x_d(t)
                            (sim.t, np.array([u.desired(float(ti))[0] for ti in sim.t])),
                            labels=joint_labels(robot))
            written.append(f"the plot to {args.plot}")
    files = ("Wrote " + " and ".join(written) + ".") if written else "No files written (use --out CSV and --plot PNG)."
    xs = ", ".join(f"{n} = {v:.6g}" for n, v in zip(robot.task.coordinate_names(), sim.x[-1]))
    print(f"{robot.name}: simulated {span[1] - span[0]:.6g} s under {what} in {elapsed:.1f} s; final {xs}. "
          f"{sim.health()}. {files}")
    return 0


def _table_start(path, robot):
    """``(x0, xd0, moving)`` of a torque CSV: the task coordinates of its first data row and their
    rates (None where the file has no such columns; ``pkm inverse-dynamics --out`` writes both), and
    whether its task coordinates change between the first two rows (a motion that starts moving);
    checked numbers."""
    import numpy as np

    from pkm.sim.inputs import table_columns

    names = list(robot.task.coordinate_names())
    x0 = table_columns(path, names)
    if x0 is None:
        return None, None, False
    return x0, table_columns(path, [n + "d" for n in names]), bool(np.any(table_columns(path, names, 1) != x0))


def _write_csv(path, robot, sim):
    import numpy as np

    names = list(robot.task.coordinate_names())
    units = robot.actuator_units
    cols = (["t"] + names + [f"{n}d" for n in names] + [f"q_{a} [{u[1]}]" for a, u in zip(sim.actuator_names, units)]
            + [f"tau_{a} [{u[0]}]" for a, u in zip(sim.actuator_names, units)]
            + ["energy", "work", "energy_error", "closure"])
    data = np.column_stack([sim.t, sim.x, sim.xd, sim.q_act, sim.tau, sim.energy, sim.work, sim.energy_error,
                            sim.closure.max(axis=1)])
    with open(path, "w") as fh:
        fh.write(",".join(cols) + "\n")
        for row in data:
            fh.write(",".join(repr(float(v)) for v in row) + "\n")
