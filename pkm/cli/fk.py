"""``pkm fk``: forward kinematics on the command line — the platform pose and the task coordinates
for given actuator coordinates (:func:`pkm.algorithms.assembly.assemble`, all limbs solved together
with the platform free), and a check that they give back the actuator coordinates by IK.
"""
from __future__ import annotations

import argparse

from pkm.errors import PkmError

EPILOG = """\
--q takes one value per actuator, in the order pkm info and pkm ik list them (limb order):
angles in rad (or degrees with --degrees) for revolute actuators, positions in m for prismatic
ones. The mechanism is assembled by Newton's method from the reference configuration (every
joint variable 0), so the result is the assembly mode (branch) connected to it; the task
coordinates are those of pkm ik --at (positions along the task axes, rotations in rad or deg).

example: pkm fk robots/delta_3rr2rrr.toml --q 0.1 0.2 -0.1"""


def add_parser(sub) -> None:
    p = sub.add_parser("fk", help="forward kinematics: platform pose and task coordinates for actuator coordinates",
                       formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
                       description="Forward kinematics: the assembled mechanism for given actuator coordinates.")
    p.add_argument("robot", help="path to a robot file (TOML)")
    p.add_argument("--q", nargs="+", type=float, required=True, metavar="Q",
                   help="actuator coordinates (rad, or deg with --degrees; m for prismatic actuators)")
    p.add_argument("--degrees", action="store_true", help="revolute actuator angles and rotations in degrees")
    p.add_argument("--json", action="store_true", help="print JSON: task coordinates, platform pose, joints per limb")
    p.set_defaults(func=run)


def task_coordinates(robot, C):
    """The task coordinates of a platform pose ``C`` (the inverse of :meth:`pkm.Robot.platform_pose`):
    positions ``R0ᵀ p`` and the rotation vector of ``R0ᵀ R``, their task components."""
    import numpy as np

    from pkm.lie import log_so3
    from pkm.lie.interpret import kernel

    local = robot.R0.T @ C[:3, 3]
    rho = np.asarray(kernel(log_so3)(robot.R0.T @ C[:3, :3]), dtype=float)
    return np.array([(local if c.startswith("v") else rho)["xyz".index(c[1])] for c in robot.task.components])


def run(args: argparse.Namespace) -> int:
    import json

    import numpy as np

    from pkm.algorithms.assembly import assemble
    from pkm.cli.options import _finite
    from pkm.description.fileformat import MAX_LENGTH
    from pkm.robot import load

    robot = load(args.robot)
    if len(args.q) != robot.n_act:
        raise PkmError(f"--q needs {robot.n_act} actuator coordinates ({', '.join(robot.actuator_names)}) for "
                       f"{robot.name}, got {len(args.q)}")
    _finite(args.q, "--q")
    if max(abs(v) for v in args.q) > MAX_LENGTH:  # an angle of 1e308 rad has no digits left below 2π
        raise PkmError(f"--q: actuator coordinates beyond ±{MAX_LENGTH:g} (rad, deg or m) carry no useful "
                       f"precision, got {' '.join(f'{v:g}' for v in args.q)}")
    kinds = robot.actuator_kinds
    q = np.array([np.radians(v) if args.degrees and k != "P" else v for v, k in zip(args.q, kinds)])
    thetas, C = assemble(robot, q)
    x = task_coordinates(robot, C)
    # the check the module promises: the pose gives back q by IK, away from a singularity (else a
    # one-line SingularityError: there the assembly's answer is not to be trusted)
    back = robot.inverse_kinematics(x, start=thetas, limits=False).q_act[0]
    if not np.allclose(back, q, rtol=1e-6, atol=1e-9):
        raise PkmError(f"the assembled pose does not give back --q by inverse kinematics (q = {back} there): "
                       f"another assembly mode or a singular configuration")
    names = robot.task.coordinate_names()
    shown = [np.degrees(v) if args.degrees and n.startswith("r") else v for n, v in zip(names, x)]
    if args.json:
        doc = {"robot": robot.name, "q": dict(zip(robot.actuator_names, q.tolist())),
               "x": dict(zip(names, x.tolist())), "platform_pose": C.tolist(),
               "joints": {l.name: dict(zip(l.tree.variable_names, th.tolist())) for l, th in zip(robot.limbs, thetas)}}
        print(json.dumps(doc, indent=2))
        return 0
    unit = "deg" if args.degrees else "rad"
    coords = ", ".join(f"{n} = {v:.9g} {unit if n.startswith('r') else 'm'}" for n, v in zip(names, shown))
    print(f"{robot.name}: forward kinematics (the assembly mode of the reference configuration)")
    print(f"task coordinates: {coords}")
    with np.printoptions(precision=9, suppress=True, linewidth=120):
        print("platform pose C_p (world, m):")
        print("  " + str(C).replace("\n", "\n  "))
    return 0
