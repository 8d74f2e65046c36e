"""``pkm show ROBOT [--at X…] --out PNG``: the mechanism drawn at a pose (:func:`pkm.plotting.show_robot`)."""
from __future__ import annotations

import argparse

from pkm.errors import PkmError


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "show", help="draw the mechanism at a pose (stick figure: joints, cut joints, base and platform) to an image",
        description="Draw the robot at its reference pose or at --at: every tree joint on its axis, the bodies as "
                    "sticks between their joints, each cut joint from both of its bodies (open circles: they coincide "
                    "where the loops close), the base and platform polygons and the platform frame's origin (star).",
        epilog="example: pkm show robots/delta_3rr2rrr.toml --at 0.1 0 -0.9 --out delta.png")
    p.add_argument("robot", help="path to a robot file (TOML)")
    p.add_argument("--at", nargs="+", type=float, metavar="X",
                   help="task coordinates in SI units (m, rad); default: the reference pose")
    p.add_argument("--axes", action="store_true", help="draw each joint's axis as a short arrow")
    p.add_argument("--out", required=True, metavar="PNG", help="the image file (PNG, PDF, SVG, … by its suffix)")
    p.set_defaults(func=_cmd_show)
    return p


def _cmd_show(args: argparse.Namespace) -> int:
    import numpy as np
    from matplotlib.backend_bases import FigureCanvasBase

    from pkm.cli.options import _check_output, _finite
    from pkm.cli.output import outputs
    from pkm.plotting import show_robot
    from pkm.robot import load

    _check_output(args.out, "--out", set(FigureCanvasBase.get_supported_filetypes()))
    robot = load(args.robot)
    x = None
    if args.at is not None:
        if len(args.at) != robot.task_dof:
            raise PkmError(f"--at needs {robot.task_dof} task coordinates ({', '.join(robot.task.coordinate_names())}) "
                           f"for {robot.name}, got {len(args.at)}")
        _finite(args.at, "--at")
        x = np.array(args.at, dtype=float)
    with outputs(args.out) as out:
        show_robot(robot, x, axes=args.axes, path=out[args.out])
    print(f"{robot.name}: wrote the drawing to {args.out}.")
    return 0
