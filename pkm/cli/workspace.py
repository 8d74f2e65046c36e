"""``pkm workspace ROBOT``: singularity maps (:func:`pkm.workspace`) on the command line."""
from __future__ import annotations

import argparse
import math

from pkm.cli.options import check_outputs
from pkm.cli.output import outputs
from pkm.errors import PkmError

EPILOG = """\
The map runs over a grid of task coordinates: those given with --range (one: a line, two: a
slice, three: a volume); every other coordinate is fixed, at its --slice value or else at the
reference configuration's (so a 6-DOF robot keeps its reference orientation unless --slice rx=…
etc. set it). Without --range the free coordinates are the translational ones not fixed by
--slice (the first and last if there are three: x and z for a Delta, a vertical slice at the
reference y), each over the reference value ± 1.5 × the largest distance of a joint point from
the platform's reference position. Units: SI (m, rad).

The map follows the reference configuration's branch (assembly mode) over the grid: every point
is first solved on its own, as `pkm ik` solves it, then the branch is continued from the point
nearest the reference to its neighbours, wave after wave (so neighbouring points never mix
elbow-up and elbow-down solutions). A point where a limb has no IK solution is unreachable.
Reported per point:
  cond_IK   type I (IK) singularities: the largest condition number of the limbs' platform
            Jacobians L_p (a limb that can move with the platform at rest: an arm stretched or
            folded); what pkm's singularity checks compare with 1e6
  cond_FK   type II (FK) singularities: the condition number of J_IK with unit rows (the platform
            can move with the actuators locked; J_FK = J_IK^-1 does not exist)
  cond_JIK  the condition number of J_IK itself (= that of J_FK), large at both kinds

The --out CSV has one row per grid point: the task coordinates, reachable (0/1), cond_IK, cond_FK,
cond_JIK, cond_Lp_<limb> per limb, q_<actuator> per actuator, within_limits (0/1: reachable with
every joint within the robot file's limits) and a status text (nan where unreachable, inf where a
matrix cannot be inverted; "beyond limits (JOINT)" where a joint leaves its limits). The --plot
shows log10 of the three condition numbers over a 2-D slice, unreachable points grey with a ×,
points beyond the limits with a red dot. Without --range the map covers the reachable points
within the limits (found by a coarse map first).

A map needs a few kB of working memory per grid point (~6 kB for a Delta, ~11 kB for a hexapod:
pkm.workspace.bytes_per_point); a grid that would take more than 2 GB is refused up front, with
its size. Rotation vectors (rx, ry, rz) must stay within |ρ| <= 2π(1 - 1e-6), where they are
regular coordinates.

examples: pkm workspace robots/delta_3rr2rrr.toml --plot delta_xz.png
          pkm workspace robots/delta_3rr2rrr.toml --slice z=-0.9 --resolution 100 --out map.csv --plot map.png
          pkm workspace robots/delta_3r2us.toml --range x=-1.2:1.2 --range z=-1.5:-0.3 --slice y=0.1"""


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("workspace", help="singularity map: reachable points and type-I/II condition numbers over a "
                                         "grid or slice of task coordinates (CSV, heat maps)",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Reachability and singularities (condition numbers) over a grid of task coordinates.",
                       epilog=EPILOG)
    p.add_argument("robot", help="path to a robot file (TOML)")
    p.add_argument("--range", action="append", metavar="NAME=LO:HI", dest="ranges",
                   help="a task coordinate running over [LO, HI] (repeat for a slice or a volume), e.g. x=-1:1")
    p.add_argument("--slice", action="append", metavar="NAME=VALUE", dest="slices",
                   help="fix a task coordinate (repeatable), e.g. z=-0.9 or, for a robot that rotates, rx=0.1")
    p.add_argument("--resolution", default="41", metavar="N[,N…]",
                   help="grid points per coordinate: one number for all, or one per coordinate in task-coordinate "
                        "order (default 41)")
    p.add_argument("--out", metavar="CSV", help="write one row per grid point (see below)")
    p.add_argument("--plot", metavar="PNG", help="heat maps of the condition numbers over the slice")
    p.set_defaults(func=_cmd_workspace)
    return p


def _pairs(items, option: str, parse):
    out = {}
    for item in items or []:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name or not text.strip():
            raise PkmError(f"{option} {item!r}: expected {'NAME=LO:HI' if option == '--range' else 'NAME=VALUE'}")
        if name in out:
            raise PkmError(f"{option} {name}: given twice")
        out[name] = parse(text.strip(), f"{option} {name}")
    return out


def _number(text: str, what: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise PkmError(f"{what}: expected a number, got {text!r}") from None
    if not math.isfinite(v):
        raise PkmError(f"{what}: must be finite, got {text!r}")
    return v


def _interval(text: str, what: str) -> tuple[float, float]:
    parts = text.split(":")
    if len(parts) != 2:
        raise PkmError(f"{what}: expected LO:HI, got {text!r}")
    lo, hi = (_number(t, what) for t in parts)
    if not lo < hi:
        raise PkmError(f"{what}: needs LO < HI, got {text!r}")
    return lo, hi


def _resolution(text: str):
    try:
        vals = [int(v) for v in text.split(",")]
    except ValueError:
        raise PkmError(f"--resolution: expected whole numbers (N or N1,N2,…), got {text!r}") from None
    return vals[0] if len(vals) == 1 else vals


def _cmd_workspace(args: argparse.Namespace) -> int:
    import time

    from pkm.robot import load
    from pkm.workspace import default_ranges, workspace

    ranges = _pairs(args.ranges, "--range", _interval)
    fixed = _pairs(args.slices, "--slice", _number)
    resolution = _resolution(args.resolution)
    check_outputs(args)
    robot = load(args.robot)
    free = list(ranges) if ranges else list(default_ranges(robot, fixed))
    if args.plot is not None and len(free) != 2:
        raise PkmError(f"--plot needs a 2-D slice (two coordinates over ranges), got {len(free)} ({', '.join(free)})")
    t0 = time.perf_counter()
    wmap = workspace(robot, ranges or None, resolution=resolution, fixed=fixed)
    elapsed = time.perf_counter() - t0
    written = []
    with outputs(args.out, args.plot) as out:   # all or nothing
        if args.out is not None:
            wmap.write_csv(out[args.out])
            written.append(f"the map (one row per point) to {args.out}")
        if args.plot is not None:
            from pkm.workspace.plot import plot_map

            plot_map(wmap, path=out[args.plot])
            written.append(f"the heat maps to {args.plot}")
    files = ("Wrote " + " and ".join(written) + ".") if written else "No files written (use --out CSV and --plot PNG)."
    print(f"{wmap.summary()} Computed in {elapsed:.2f} s. {files}")
    return 0
