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

    from pkm.cli.options import _check_output, _finite
    from pkm.cli.output import outputs
    from pkm.plotting import show_robot
    from pkm.robot import load

    _check_output(args.out, "--out", "image")
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


def add_animate_parser(sub) -> argparse.ArgumentParser:
    from pkm.cli.options import add_trajectory_options

    p = sub.add_parser(
        "animate", help="animate the mechanism along a trajectory, beside its actuator torques (GIF)",
        description="Animate the robot along the robot file's default trajectory (or the one set by the options, as "
                    "for inverse-dynamics): the mechanism as pkm show draws it, and the actuator torques of the "
                    "inverse dynamics with a cursor at each frame's time.",
        epilog="example: pkm animate robots/irsbot2.toml --trajectory pick-place --out cycle.gif")
    p.add_argument("robot", help="path to a robot file (TOML)")
    add_trajectory_options(p)
    p.add_argument("--frames", type=int, default=60, help="number of frames (evenly spaced samples; default 60)")
    p.add_argument("--fps", type=float, default=20.0, help="frames per second of the file (default 20)")
    p.add_argument("--out", required=True, metavar="GIF", help="the animation (GIF; MP4 if ffmpeg is installed)")
    p.set_defaults(func=_cmd_animate)
    return p


#: Show a progress bar above this many frames (a frame takes 0.5–1 s to draw and write).
ANIMATE_PROGRESS_ABOVE = 10


def _cmd_animate(args: argparse.Namespace) -> int:
    import math

    from pkm.cli.options import _check_output, load_trajectory
    from pkm.cli.output import outputs
    from pkm.plotting import animate
    from pkm.robot import load

    _check_output(args.out, "--out", "animation")
    if not (1 <= args.frames <= 2000):
        raise PkmError(f"--frames must be between 1 and 2000, got {args.frames}")
    if not (math.isfinite(args.fps) and 0.01 <= args.fps <= 100):   # 1e-320 fps: an inf frame interval
        raise PkmError(f"--fps must be from 0.01 to 100, got {args.fps}")
    robot = load(args.robot)
    traj = load_trajectory(robot, args)
    from pkm.cli.progress import progress_bar

    res = robot.inverse_dynamics(traj.x, traj.xd, traj.xdd, t=traj.t)   # fast: drawing the frames takes the time
    n = min(args.frames, len(traj.t))
    with outputs(args.out) as out, progress_bar(n, "animation", "frame", above=ANIMATE_PROGRESS_ABOVE) as bar:
        animate(robot, traj.x, traj.t, tau=res.tau, path=out[args.out], fps=args.fps, frames=args.frames,
                start=[res.joints[l.name][0] for l in robot.limbs], progress=lambda k, total: bar.update(1))
    print(f"{robot.name}: wrote {min(args.frames, len(traj.t))} frames of {traj.t[-1] - traj.t[0]:.6g} s to {args.out}.")
    return 0
