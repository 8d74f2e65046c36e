"""The ``pkm`` command (also ``python -m pkm``)."""

from __future__ import annotations

import argparse
import sys

from pkm.cli.options import (_ALL_TRAJ_OPTIONS, _finite, _opt, add_trajectory_options, check_outputs,
                             load_trajectory, trajectory_dict)
from pkm.cli.output import outputs
from pkm.cli.version import Version
from pkm.cli.redundancy import add_redundancy_options, check_redundancy_options, distribute_note
from pkm.errors import PkmError


def _cmd_info(args: argparse.Namespace) -> int:
    from pkm.cli.info import robot_info

    print(robot_info(args.robot))
    if args.base_parameters:
        from pkm.cli.identify import base_report
        from pkm.robot import load

        print("\n".join(base_report(load(args.robot))))
    return 0


def _cmd_ik(args: argparse.Namespace) -> int:
    import json

    import numpy as np

    from pkm.robot import load

    robot = load(args.robot)
    if len(args.at) != robot.task_dof:
        raise PkmError(f"--at needs {robot.task_dof} task coordinates "
                           f"({', '.join(robot.task.coordinate_names())}) for {robot.name}, got {len(args.at)}")
    _finite(args.at, "--at")
    names = robot.task.coordinate_names()
    deg = args.degrees
    x = np.array([np.radians(v) if deg and n.startswith("r") else v for n, v in zip(names, args.at)])
    threshold = {} if args.singularity_threshold is None else {"singularity_threshold": args.singularity_threshold}
    sol = robot.inverse_kinematics(x, **threshold)
    if args.json:
        doc = {
            "robot": robot.name,
            "x": dict(zip(robot.task.coordinate_names(), sol.x[0].tolist())),
            "actuators": sol.q_act[0].tolist(),
            "actuator_names": sol.actuator_names,
            "joints": {name: dict(zip(sol.variable_names[name], vals[0].tolist())) for name, vals in sol.joints.items()},
            "J_IK": sol.J_IK[0].tolist(),
        }
        print(json.dumps(doc, indent=2))
        return 0
    def angle(v, unit):  # joint values as shown: degrees for angles with --degrees
        return (np.degrees(v), "deg") if deg and unit == "rad" else (v, unit)

    coords = ", ".join(f"{n} = {args.at[k]:.6g}" for k, n in enumerate(names))
    print(f"{robot.name}: inverse kinematics at {coords} (SI units: m, {'deg' if deg else 'rad'})")
    print("actuators:")
    for n, v, u in zip(sol.actuator_names, sol.q_act[0], robot.actuator_units):
        print(f"  {n:<20} {'%.12f %s' % angle(v, u[1])}")
    kinds = {limb.name: limb.tree.axis_kind for limb in robot.limbs}
    for name, vals in sol.joints.items():
        print(f"{name}:")
        for n, v, kind in zip(sol.variable_names[name], vals[0], kinds[name]):
            print(f"  {n:<20} {'%.12f %s' % angle(v, 'm' if kind == 'P' else 'rad')}")
    return 0


# ---------------------------------------------------------------------- inverse-dynamics
#: Show a progress bar on stderr above this many samples.
PROGRESS_ABOVE = 200


def apply_load(robot, args: argparse.Namespace):
    """The robot with ``--payload KG`` added to its platform (a point mass at the platform frame's
    origin) and the platform wrench of ``--wrench`` (None without), for ``robot.inverse_dynamics``."""
    import numpy as np

    from pkm.robot import Robot

    wrench = None
    if getattr(args, "wrench", None) is not None:
        wrench = np.array(_finite(args.wrench, "--wrench"), dtype=float)
    if getattr(args, "payload", None) is not None:
        _finite(args.payload, "--payload")
        if args.payload < 0:
            raise PkmError(f"--payload must be a mass >= 0 kg, got {args.payload!r}")
        robot = Robot(robot.spec.with_payload(args.payload))
    return robot, wrench


def run_inverse_dynamics(robot, traj, progress: bool | None = None, wrench=None, weights=None, preload=None):
    """``robot.inverse_dynamics`` along a :class:`pkm.trajectory.Trajectory` in one call, so that the
    result is the API's, with a tqdm bar on stderr when ``progress`` (default: above
    :data:`PROGRESS_ABOVE` samples). Returns its :class:`pkm.algorithms.manipulator.DynamicsResult`.
    """
    from tqdm import tqdm

    N = len(traj)
    if progress is None:
        progress = N > PROGRESS_ABOVE
    with tqdm(total=N, unit="sample", desc="inverse dynamics", file=sys.stderr, disable=not progress,
              dynamic_ncols=True, leave=True) as bar:
        return robot.inverse_dynamics(traj.x, traj.xd, traj.xdd, wrench, t=traj.t, progress=bar.update,
                                      weights=weights, preload=preload)


def actuator_columns(robot, names) -> tuple[list[str], list[str]]:
    """CSV headers of the actuators' positions and forces with their units, per column:
    ``q_limb1/1 [rad]``, ``tau_limb1/1 [N·m]``; ``q_leg1/leg [m]``, ``tau_leg1/leg [N]`` for a
    prismatic actuator (readers strip the `` [unit]`` suffix: :func:`pkm.sim.inputs.read_table`)."""
    units = robot.actuator_units
    return [f"q_{n} [{u[1]}]" for n, u in zip(names, units)], [f"tau_{n} [{u[0]}]" for n, u in zip(names, units)]


def force_word(robot) -> str:
    """"torque" (revolute actuators), "force" (prismatic) or "force/torque" (both)."""
    words = {"force" if k == "P" else "torque" for k in robot.actuator_kinds}
    return "/".join(sorted(words)) or "torque"


def write_dynamics_csv(path, robot, traj, result) -> list[str]:
    """Write ``t``, the task coordinates and their rates (suffix ``d``: the motion's state, so that
    ``pkm simulate --torques`` of this file starts where the motion does), ``q_<actuator> [unit]``
    and ``tau_<actuator> [unit]`` (floats as ``repr``: exact float64 round trip), one row per
    sample; with drives ``tau_motor_<actuator> [N·m]`` and ``speed_motor_<actuator> [rad/s]``, the
    motor side (``tau`` is the joint side, drive terms included). With redundant actuation also the null-space basis of ``J_IKᵀ`` (the internal forces:
    ``null<k>_<actuator> [1]``, k = 1 … r, unit vectors, :mod:`pkm.algorithms.distribution`). Returns
    the header."""
    import numpy as np

    q_cols, tau_cols = actuator_columns(robot, result.actuator_names)
    names = robot.task.coordinate_names()
    header = ["t", *names, *(f"{n}d" for n in names), *q_cols, *tau_cols]
    data = [traj.t, traj.x, traj.xd, result.q_act, result.tau]
    if getattr(result, "tau_motor", None) is not None:   # drives: the motor side (pkm.description.drives)
        header += [f"tau_motor_{n} [N·m]" for n in result.actuator_names]
        header += [f"speed_motor_{n} [rad/s]" for n in result.actuator_names]
        data += [result.tau_motor, result.speed_motor]
    if result.null_space is not None:
        for k in range(result.null_space.shape[2]):
            header += [f"null{k + 1}_{n} [1]" for n in result.actuator_names]
            data.append(result.null_space[:, :, k])
    data = np.column_stack(data)
    lines = [",".join(header)]
    lines.extend(",".join(map(repr, row)) for row in data.tolist())
    with open(path, "w", newline="") as fh:
        fh.write("\n".join(lines) + "\n")
    return header


def peak_and_rms(tau):
    """Peak |tau| and RMS tau per column, the RMS scaled by the peak so that tau² cannot overflow."""
    import numpy as np

    peak = np.abs(tau).max(axis=0)
    scale = np.where(peak > 0.0, peak, 1.0)
    return peak, scale * np.sqrt(np.mean((tau / scale) ** 2, axis=0))


def _cmd_inverse_dynamics(args: argparse.Namespace) -> int:
    import time

    from pkm.robot import load

    check_outputs(args)
    robot = load(args.robot)
    robot.spec.check_actuation()
    robot, wrench = apply_load(robot, args)
    traj_dict = trajectory_dict(robot, args)
    traj = load_trajectory(robot, args)
    check_redundancy_options(robot, args, len(traj))
    t0 = time.perf_counter()
    result = run_inverse_dynamics(robot, traj, wrench=wrench, weights=args.weights, preload=args.preload)
    redundant = distribute_note(robot, result, args)
    elapsed = time.perf_counter() - t0

    written = []
    with outputs(args.out, args.plot) as out:   # all or nothing, never a half-written file
        if args.out is not None:
            write_dynamics_csv(out[args.out], robot, traj, result)
            written.append(f"the CSV (t, task coordinates and rates, actuator positions q_…, forces/torques tau_…) to "
                           f"{args.out}")
        if args.plot is not None:
            from pkm.plotting import plot_actuators
            from pkm.plotting.style import joint_labels

            plot_actuators(result, traj.t, path=out[args.plot], title=f"{robot.name}: {traj_dict['type']} trajectory",
                           kinds=robot.actuator_kinds, degrees=getattr(args, "degrees", False),
                           labels=joint_labels(robot))
            written.append(f"the torque/angle plot to {args.plot}")

    peak, rms = peak_and_rms(result.tau)
    units = [u[0] for u in robot.actuator_units]
    word = force_word(robot)
    source = "the robot file's default" if args.trajectory is None else "a"
    changed = [_opt(d) for d in _ALL_TRAJ_OPTIONS if getattr(args, d) is not None]
    how = f" ({', '.join(changed)} from the command line)" if changed else ""
    if args.payload is not None:
        how += f" with a {args.payload:g} kg payload"
    if args.wrench is not None:
        how += f" with the platform wrench ({', '.join(f'{v:g}' for v in args.wrench)}) N·m, N"
    N = len(traj)
    span = float(traj.t[-1] - traj.t[0])
    dt = f", dt = {span / (N - 1):.6g} s" if N > 1 else ""
    per_act = "; ".join(f"{n} {p:.4g} / {r:.4g} {u}" for n, p, r, u in zip(result.actuator_names, peak, rms, units))
    files = ("Wrote " + " and ".join(written) + ".") if written else \
        "No files written (use --out CSV and --plot PNG)."
    print(f"{robot.name}: inverse dynamics along {source} {traj_dict['type']} trajectory{how}, "
          f"{N} samples over {span:.6g} s{dt}, computed in {elapsed:.1f} s.{redundant} "
          f"Peak |{word}| / RMS {word} per actuator: {per_act}. {files}")
    return 0


# ---------------------------------------------------------------------- eom
def _cmd_eom(args: argparse.Namespace) -> int:
    import json

    import numpy as np

    from pkm.robot import load

    robot = load(args.robot)
    robot.spec.check_actuation()
    names = robot.task.coordinate_names()
    for opt, vals in (("--at", args.at), ("--velocity", args.velocity)):
        if vals is None:
            continue
        if len(vals) != robot.task_dof:
            raise PkmError(f"{opt} needs {robot.task_dof} task coordinates ({', '.join(names)}) for "
                           f"{robot.name}, got {len(vals)}")
        _finite(vals, opt)
    rot = np.array([n.startswith("r") for n in names])
    scale = np.where(rot & args.degrees, np.pi / 180.0, 1.0)   # --degrees: rotations in deg, rates in deg/s
    x = np.array(args.at, dtype=float) * scale
    xd = np.zeros(robot.task_dof) if args.velocity is None else np.array(args.velocity, dtype=float) * scale
    e = robot.eom(x, xd)
    terms = {"M_t": e.M_t, "C_t_V_t": e.C_t_V_t, "W_t_grav": e.W_t_grav, "J_IK": e.J_IK, "M_a": e.M_a}
    if robot.redundancy:   # J_FK = J_IK⁺; only P_a u does work (pkm.algorithms.manipulator.EOM)
        terms["P_a"] = e.P_a
    if args.json:
        doc = {"robot": robot.name, "coordinates": list(names), "actuator_names": list(robot.actuator_names),
               "x": x.tolist(), "velocity": xd.tolist()}
        doc.update({k: np.asarray(v, dtype=float).tolist() for k, v in terms.items()})
        print(json.dumps(doc, indent=2))
        return 0
    coords = ", ".join(f"{n} = {v:.6g}" for n, v in zip(names, x / scale))
    vel = ", ".join(f"{n}d = {v:.6g}" for n, v in zip(names, xd / scale))
    given = "SI units, rotations in deg" if args.degrees and rot.any() else "SI units"
    print(f"{robot.name}: equations of motion at {coords}; {vel} ({given}; the terms below in SI units)")
    print(f"task coordinates: {', '.join(names)}; actuators: {', '.join(robot.actuator_names)}")
    print("task-space equations of motion (eq. 107): M_t V̇_t + C_t V_t + W_t^grav = J_IKᵀ u + W^EE "
          "(left side: the terms below marked so; right side: the actuator forces/torques u through J_IKᵀ and "
          "an external platform wrench W^EE; at rest without W^EE, J_IKᵀ u = W_t^grav holds the robot)")
    labels = {
        "M_t": "M_t      task-space mass matrix (eq. 108; left side, times V̇_t)",
        "C_t_V_t": "C_t·V_t  Coriolis/centrifugal wrench (left side)",
        "W_t_grav": "W_t^grav gravity wrench (left side, with this sign)",
        "J_IK": "J_IK     IK Jacobian, θ̇_act = J_IK V_t (right side: J_IKᵀ u)",
        "M_a": "M_a      actuator-space mass matrix J_FKᵀ M_t J_FK" + (", J_FK = J_IK⁺ (redundant actuation)"
                                                                        if robot.redundancy else ""),
        "P_a": "P_a      projector onto the forces that do work (M_a θ̈ + C_a θ̇ + Q_a^grav = P_a u)",
    }
    with np.printoptions(precision=8, suppress=False, linewidth=120, floatmode="maxprec"):
        for key, value in terms.items():
            print(f"{labels[key]}:")
            print("  " + str(np.asarray(value)).replace("\n", "\n  "))
    return 0


class Parser(argparse.ArgumentParser):
    """argparse's parser (and its sub-commands', which take the parent's class) reading ``-9e-1``,
    ``-1E+3`` and ``-inf`` as negative numbers: argparse itself knows only ``-1`` and ``-0.5``, so
    ``--at 0 0 -9e-1`` failed with "unrecognized arguments: -9e-1"."""

    def __init__(self, *args, **kwargs):
        import re

        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$|^-(inf|infinity|nan)$", re.I)

    def error(self, message):
        """A usage error as one line (argparse prints the usage first), exit 2 as argparse does."""
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="pkm",
        description="Kinematics and dynamics of parallel kinematic machines (PKM) with hybrid complex limbs.",
    )
    parser.add_argument("--version", action=Version, nargs=0, help="show pkm's version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p_info = sub.add_parser("info", help="describe a robot file: bodies, joints, DOF, masses")
    p_info.add_argument("robot", help="path to a robot file (TOML), e.g. robots/delta_3rr2rrr.toml")
    p_info.add_argument("--base-parameters", action="store_true",
                        help="also the base dynamic parameters in the standard ones (pkm identify)")
    p_info.set_defaults(func=_cmd_info)
    p_ik = sub.add_parser("ik", help="inverse kinematics: actuator and joint coordinates for a platform position")
    p_ik.add_argument("robot", help="path to a robot file (TOML)")
    p_ik.add_argument("--at", nargs="+", type=float, required=True, metavar="X",
                      help="task coordinates in SI units (m, rad), e.g. --at 0.1 0 -0.9 for a Delta")
    p_ik.add_argument("--json", action="store_true", help="print JSON: actuators (limb order) and joints per limb")
    p_ik.add_argument("--degrees", action="store_true",
                      help="rotations in --at and the printed joint angles in degrees (JSON stays SI)")
    p_ik.add_argument("--singularity-threshold", type=float, default=None,
                      help="largest condition number of G_y, L_p and J_IK accepted (default: pkm's, 1e6)")
    p_ik.set_defaults(func=_cmd_ik)

    p_id = sub.add_parser(
        "inverse-dynamics", help="actuator torques along a trajectory (CSV, plot, peak/RMS summary)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Inverse dynamics along a task-space trajectory: actuator angles and torques per sample.",
        epilog="""\
Without trajectory options the robot file's default trajectory ([trajectory] table) is run;
options override its values. Choosing another --trajectory type builds that trajectory from the
options, with these defaults: the centre (sine --center, line/pick-place --start) is the
default trajectory's centre (or the platform's reference position, pkm info prints it); sine: --period and
--duration default to each other; line: --duration 1 s; pick-place: --lift 0.025 m,
--travel 0.305 m along x, --cycle-time 0.5 s; --dt: the span divided by 200.

Vectors (--center, --amplitude, --start, --end, 3-value --travel) are in SI metres along the
task axes X Y Z, always three numbers: the world's axes, or, where the robot file rotates the
platform frame, that frame's axes at the reference configuration (task coordinates are the
platform origin's position along them; see docs/robot-file-format.md, "Task coordinates").
The robot's task coordinates select their components, as in the robot file: x, y, z for a
Delta; x and z for the IRSBot-2 (the y value of a position is ignored there; displacements
must have y = 0). A pick-and-place cycle lifts along the task axis +z.
A --file CSV holds the columns t, the task coordinates, their rates (suffix d) and
accelerations (suffix dd), e.g. t,x,z,xd,zd,xdd,zdd for the IRSBot-2 -- or t and the
coordinates only (t,x,z), whose rates and accelerations are then those of a cubic spline
through the samples (sample the motion finely).

The --out CSV has a header and one row per sample: t, the task coordinates, their rates
(suffix d: pkm simulate --torques starts from this state), one actuator
position q_<actuator> [unit] per actuator, one force or torque tau_<actuator> [unit] per
actuator (actuators in limb order; SI units: a revolute actuator's angle [rad] and torque
[N·m], a prismatic actuator's position [m] and force [N], as the header says per column; full
float64 precision). --degrees plots angles in degrees (the CSV stays SI).

example: pkm inverse-dynamics robots/delta_3rr2rrr.toml --out torques.csv --plot torques.png
         pkm inverse-dynamics robots/irsbot2.toml --trajectory pick-place --cycle-time 0.5""")
    p_id.add_argument("robot", help="path to a robot file (TOML)")
    add_trajectory_options(p_id)
    p_id.add_argument("--out", metavar="CSV", help="write t, task coordinates, actuator angles and torques to CSV")
    p_id.add_argument("--plot", metavar="PNG", help="save a plot of actuator torques and angles against time")
    p_id.add_argument("--payload", type=float, metavar="KG",
                      help="a payload mass [kg] fixed at the platform frame's origin (its weight and inertia)")
    p_id.add_argument("--wrench", nargs=6, type=float, metavar=("MX", "MY", "MZ", "FX", "FY", "FZ"),
                      help="a constant external wrench on the platform, moment [N·m] then force [N], along the "
                           "platform frame's axes (process forces, a tool's reaction)")
    p_id.add_argument("--degrees", action="store_true", help="plot angles in degrees (the CSV stays SI)")
    add_redundancy_options(p_id)
    p_id.set_defaults(func=_cmd_inverse_dynamics)

    p_eom = sub.add_parser("eom", help="terms of the task-space and actuator-space equations of motion at a state")
    p_eom.add_argument("robot", help="path to a robot file (TOML)")
    p_eom.add_argument("--at", nargs="+", type=float, required=True, metavar="X",
                       help="task coordinates in SI units (m, rad), e.g. --at 0.1 0 -0.9 for a Delta")
    p_eom.add_argument("--velocity", nargs="+", type=float, metavar="V",
                       help="task velocity V_t in SI units (m/s, rad/s); default zero")
    p_eom.add_argument("--json", action="store_true",
                       help="print JSON: M_t, C_t_V_t, W_t_grav, J_IK, M_a (nested lists), x, velocity")
    p_eom.add_argument("--degrees", action="store_true",
                       help="rotations in --at in degrees and rotational --velocity components in deg/s (the "
                            "printed terms and the JSON stay SI)")
    p_eom.set_defaults(func=_cmd_eom)
    from pkm.cli.compile import add_parser as add_compile_parser
    from pkm.cli.cycle import add_parser as add_cycle_parser
    from pkm.cli.convert import add_parser as add_convert_parser
    from pkm.cli.fk import add_parser as add_fk_parser
    from pkm.cli.identify import add_parser as add_identify_parser
    from pkm.cli.reactions import add_parser as add_reactions_parser
    from pkm.cli.show import add_animate_parser, add_parser as add_show_parser
    from pkm.cli.simulate import add_parser as add_simulate_parser
    from pkm.cli.size import add_parser as add_size_parser
    from pkm.cli.sweep import add_parser as add_sweep_parser
    from pkm.cli.view import add_parser as add_view_parser
    from pkm.cli.workspace import add_parser as add_workspace_parser
    add_simulate_parser(sub)
    add_sweep_parser(sub)
    add_show_parser(sub)
    add_animate_parser(sub)
    add_reactions_parser(sub)
    add_workspace_parser(sub)
    add_fk_parser(sub)
    add_compile_parser(sub)
    add_size_parser(sub)
    add_cycle_parser(sub)
    add_identify_parser(sub)
    add_convert_parser(sub)
    add_view_parser(sub)
    return parser


def _announcer(args, write):
    """Says "compiling kernels (first run only, ~N s)" on stderr before numba compiles, always (one
    line, before any other; not an error: an error still ends stderr with its one ``pkm: error:``
    line), unless ``PKM_COMPILE_MESSAGE=0``. N is estimated from the robot and the command
    (:func:`pkm.lie.numba_cache.compile_estimate`: this machine's last measurement of the same
    command and robot file, else of the same kind of command, else a figure measured on 2 cores).
    Only commands that load a robot compile."""
    import contextlib
    import os
    from pathlib import Path

    if getattr(args, "robot", None) is None and getattr(args, "command", None) != "compile":
        return contextlib.nullcontext()
    from pkm.lie.numba_cache import CompileAnnouncer

    loud = os.environ.get("PKM_COMPILE_MESSAGE") != "0"
    if args.command == "compile":
        from pkm.cli.compile import ROBOTS

        robots = list(getattr(args, "robots", None) or [])
        kind, names = "compile", robots or [ROBOTS]
        count = len(robots) if robots else max(1, len(list(ROBOTS.glob("*.toml"))))
    else:
        kind, names, count = ("one-point" if args.command in ONE_POINT else "trajectory"), [args.robot], 1

    def where(p):
        try:
            return str(Path(p).resolve())
        except (OSError, ValueError, RuntimeError):
            return str(p)

    key = f"{kind}|{args.command}|{','.join(where(p) for p in names)}"
    return CompileAnnouncer(write if loud else (lambda message: None), key=key, kind=kind, robots=count)


#: Commands that evaluate the reference algorithms at one point (or a few): they run the numba
#: kernels as plain Python (:mod:`pkm.lie.interpret`), ~0.1 s instead of ~4 s of compiling on a
#: first run (``pkm.load`` still compiles its few kernels); the others (trajectories, simulations,
#: sweeps, maps) run the compiled kernels.
ONE_POINT = frozenset({"info", "ik", "eom", "fk", "show"})


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0
    import warnings

    from pkm.errors import BranchWarning

    def show(message, category, *rest, **kw):  # one line, no source location
        print(f"pkm: warning: {message}", file=sys.stderr)

    def announce(message):   # on a terminal after a blank line (a bar or a prompt may precede it)
        print(f"{chr(10) if sys.stderr.isatty() else ''}pkm: {message} …", file=sys.stderr, flush=True)

    from pkm.cli.options import check_not_inputs
    from pkm.lie.interpret import python_kernels

    try:
        with warnings.catch_warnings(), _announcer(args, announce), python_kernels(args.command in ONE_POINT):
            warnings.simplefilter("always", BranchWarning)
            # numpy's notes ("overflow encountered in …") on absurd input: every result is checked for finiteness
            warnings.filterwarnings("ignore", message=r".*encountered in", category=RuntimeWarning)
            warnings.showwarning = show
            return check_not_inputs(args) or args.func(args)
    except PkmError as exc:
        print(f"pkm: error: {' '.join(str(exc).split())}", file=sys.stderr)   # one line, whatever the message
        return 2
    except BrokenPipeError:
        return 0
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"pkm: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except Exception as exc:   # a bug: one line, exit 1; PKM_TRACEBACK=1 shows where
        import os

        if os.environ.get("PKM_TRACEBACK"):
            raise
        text = " ".join(str(exc).split())
        print(f"pkm: internal error: {type(exc).__name__}: {text} (a bug in pkm: please report it with the "
              f"command; PKM_TRACEBACK=1 shows the traceback)", file=sys.stderr)
        return 1


def run() -> None:
    """Console-script entry point: :func:`main`, then a fast exit.

    After a successful or reported-error run, every file is closed and the streams are flushed
    here, so the process ends with ``os._exit`` instead of the interpreter's teardown, which takes
    0.3–0.5 s once numba's registries and LLVM modules are loaded (a third of a cached main-job
    run). Uncaught exceptions and ``SystemExit`` (``--help``, usage errors) take the normal path.
    Set ``PKM_NORMAL_EXIT=1`` to keep the teardown (e.g. for ``atexit`` hooks such as coverage).
    First the process's own settings (:func:`pkm.cli.process.tune`: one OpenBLAS thread, fewer full
    garbage collections), before numpy is imported.
    """
    import os

    from pkm.cli.process import tune

    tune()
    code = int(main() or 0)
    if os.environ.get("PKM_NORMAL_EXIT"):
        raise SystemExit(code)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
