"""The ``pkm`` command (also ``python -m pkm``)."""

from __future__ import annotations

import argparse
import sys

from pkm.errors import PkmError


def _cmd_info(args: argparse.Namespace) -> int:
    from pkm.info import robot_info

    print(robot_info(args.robot))
    return 0


def _cmd_ik(args: argparse.Namespace) -> int:
    import json

    import numpy as np

    import pkm

    robot = pkm.load(args.robot)
    if len(args.at) != robot.task_dof:
        raise pkm.PkmError(f"--at needs {robot.task_dof} task coordinates "
                           f"({', '.join(robot.task.coordinate_names())}) for {robot.name}, got {len(args.at)}")
    sol = robot.inverse_kinematics(np.array(args.at, dtype=float), singularity_threshold=args.singularity_threshold)
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
    coords = ", ".join(f"{n} = {v:.6g}" for n, v in zip(robot.task.coordinate_names(), sol.x[0]))
    print(f"{robot.name}: inverse kinematics at {coords} (SI units; angles in rad)")
    print("actuators:")
    for n, v in zip(sol.actuator_names, sol.q_act[0]):
        print(f"  {n:<20} {v: .12f}")
    for name, vals in sol.joints.items():
        print(f"{name}:")
        for n, v in zip(sol.variable_names[name], vals[0]):
            print(f"  {n:<20} {v: .12f}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pkm",
        description="Kinematics and dynamics of parallel kinematic machines (PKM) with hybrid complex limbs.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p_info = sub.add_parser("info", help="describe a robot file: bodies, joints, DOF, masses")
    p_info.add_argument("robot", help="path to a robot file (TOML), e.g. robots/delta_3rr2rrr.toml")
    p_info.set_defaults(func=_cmd_info)
    p_ik = sub.add_parser("ik", help="inverse kinematics: actuator and joint coordinates for a platform position")
    p_ik.add_argument("robot", help="path to a robot file (TOML)")
    p_ik.add_argument("--at", nargs="+", type=float, required=True, metavar="X",
                      help="task coordinates in SI units (m, rad), e.g. --at 0.1 0 -0.9 for a Delta")
    p_ik.add_argument("--json", action="store_true", help="print JSON: actuators (limb order) and joints per limb")
    p_ik.add_argument("--singularity-threshold", type=float, default=1e8,
                      help="largest condition number of G_y, L_p and J_IK accepted (default 1e8)")
    p_ik.set_defaults(func=_cmd_ik)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0
    try:
        return args.func(args)
    except PkmError as exc:
        print(f"pkm: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except OSError as exc:
        print(f"pkm: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
