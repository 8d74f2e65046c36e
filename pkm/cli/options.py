"""Command-line pieces shared by the commands: the trajectory options and their dict for
:func:`pkm.trajectory.from_spec`, and the checks of numbers and output paths.
"""
from __future__ import annotations

import argparse

from pkm.errors import PkmError

#: Options of `pkm inverse-dynamics` that define a trajectory, per trajectory type
#: (argparse destination -> key of the trajectory dict of pkm.trajectory.from_spec).
_TRAJ_OPTIONS = {
    "sine": {"center": "center", "amplitude": "amplitude", "period": "period", "duration": "duration", "dt": "dt",
             "rotation_center": "rotation_center", "rotation_amplitude": "rotation_amplitude"},
    "line": {"start": "start", "end": "end", "duration": "duration", "dt": "dt", "start_rotation": "start_rotation",
             "end_rotation": "end_rotation"},
    "pick-place": {"start": "start", "lift": "lift", "travel": "travel", "cycle_time": "cycle_time", "dt": "dt"},
    "file": {"file": "path"},
}
_ALL_TRAJ_OPTIONS = ("center", "amplitude", "period", "duration", "dt", "start", "end", "lift", "travel",
                     "cycle_time", "file", "rotation_center", "rotation_amplitude", "start_rotation", "end_rotation")
#: Defaults of a pick-and-place cycle that is not the robot file's own trajectory.
PICK_PLACE_DEFAULTS = {"lift": 0.025, "travel": 0.305, "cycle_time": 0.5}
#: A trajectory that is not the robot file's own is sampled with this many intervals unless --dt is given.
DEFAULT_INTERVALS = 200
def _opt(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def _finite(values, what: str):
    import math

    for v in (values if isinstance(values, (list, tuple)) else [values]):
        if not math.isfinite(v):
            raise PkmError(f"{what} must be finite, got {v!r}")
    return values


def trajectory_dict(robot, args: argparse.Namespace) -> dict:
    """The trajectory dict (as :func:`pkm.trajectory.from_spec` takes it) for the CLI options.

    Starts from the robot file's default trajectory when ``--trajectory`` is not given or names
    the same type, and overrides the values given as options; otherwise builds the trajectory
    from the options and the defaults documented in ``pkm inverse-dynamics --help``.
    """
    import numpy as np

    spec = robot.spec.trajectory
    kind = args.trajectory or (spec["type"] if spec else None)
    if kind is None:
        raise PkmError(f"{robot.spec.source}: the robot file has no [trajectory] table; choose one with --trajectory")
    given = {d: getattr(args, d) for d in _ALL_TRAJ_OPTIONS if getattr(args, d) is not None}
    for dest, value in given.items():
        if dest != "file":
            _finite(value, _opt(dest))
        if dest not in _TRAJ_OPTIONS[kind]:
            takes = " ".join(_opt(d) for d in _TRAJ_OPTIONS[kind])
            raise PkmError(f"{_opt(dest)} does not apply to a {kind} trajectory (it takes {takes})")
    if "travel" in given and len(given["travel"]) not in (1, 3):
        raise PkmError(f"--travel takes 1 value (along the task axis x) or 3 (a vector with z = 0), "
                       f"got {len(given['travel'])}")

    # the default trajectory's centre: where the motion is centred or starts
    if spec and spec["type"] in ("sine", "line", "pick-place"):
        centre = np.asarray(spec["center" if spec["type"] == "sine" else "start"], dtype=float)
    else:
        centre = np.asarray(robot.position_ref, dtype=float)   # the reference position in task axes (x_ref)

    own = spec is not None and spec["type"] == kind
    traj = dict(spec) if own else {"type": kind}
    for dest, value in given.items():
        if dest == "travel":
            value = value[0] if len(value) == 1 else np.asarray(value, dtype=float)
        elif isinstance(value, list):
            value = np.asarray(value, dtype=float)
        traj[_TRAJ_OPTIONS[kind][dest]] = value
    if own:
        return traj

    def need(key):
        if key not in traj:
            option = next(d for d, k in _TRAJ_OPTIONS[kind].items() if k == key)   # file: "path" <- --file
            raise PkmError(f"a {kind} trajectory needs {_opt(option)} (the robot file's default trajectory is "
                           f"{spec['type'] if spec else 'not given'})")

    if kind == "sine":
        traj.setdefault("center", centre)
        if "rotation_amplitude" in traj:  # an orientation sine: the position may stay
            traj.setdefault("amplitude", np.zeros(3))
        need("amplitude")
        if "period" not in traj and "duration" not in traj:
            raise PkmError("a sine trajectory needs --period or --duration (each defaults to the other)")
        traj.setdefault("period", traj.get("duration"))
        traj.setdefault("duration", traj["period"])
    elif kind == "line":
        traj.setdefault("start", centre)
        if "end_rotation" in traj:  # an orientation move: the position may stay
            traj.setdefault("end", traj["start"])
        need("end")
        traj.setdefault("duration", 1.0)
    elif kind == "pick-place":
        traj.setdefault("start", centre)
        for key, value in PICK_PLACE_DEFAULTS.items():
            traj.setdefault(key, value)
    else:
        need("path")
        return traj
    span = traj["cycle_time" if kind == "pick-place" else "duration"]
    traj.setdefault("dt", span / DEFAULT_INTERVALS)
    return traj


def _check_output(path: str, what: str, kind=None) -> None:
    """A one-line :class:`PkmError` unless ``path`` can be written: not a directory, in an existing
    directory and, for ``kind`` ``"image"`` or ``"animation"``, in a format this machine can write
    (:func:`pkm.plotting.style.format_problem`: probed, so that a ``.pgf`` without LaTeX or an
    ``.mp4`` without ffmpeg is refused before any work is done)."""
    from pathlib import Path

    p = Path(path)
    if p.is_dir():
        raise PkmError(f"{what} {path}: is a directory")
    if not p.resolve().parent.is_dir():
        raise PkmError(f"{what} {path}: directory {p.parent} does not exist")
    if kind is not None:
        from pkm.plotting.style import format_problem

        problem = format_problem(p, animation=kind == "animation")
        if problem is not None:
            raise PkmError(f"{what} {path}: {problem}")


def check_outputs(args: argparse.Namespace) -> None:
    """:func:`_check_output` on the ``--out`` CSV and the ``--plot`` image of a command, if given."""
    if args.out is not None:
        _check_output(args.out, "--out")
    if args.plot is not None:
        _check_output(args.plot, "--plot", "image")


def load_trajectory(robot, args: argparse.Namespace):
    """The trajectory of the command's options (:func:`trajectory_dict`), its errors as one line."""
    from pkm.trajectory import from_spec

    try:
        return from_spec(trajectory_dict(robot, args), robot.task.coordinate_names())
    except ValueError as exc:
        raise PkmError(str(exc).replace("\n", " ")) from None


def add_trajectory_options(p: argparse.ArgumentParser) -> None:
    """The --trajectory type and its options (shared by inverse-dynamics and simulate)."""
    p.add_argument("--trajectory", choices=tuple(_TRAJ_OPTIONS),
                   help="trajectory type (default: the robot file's)")
    g = p.add_argument_group("trajectory options (SI units; vectors along the task axes X Y Z: the world's, or "
                             "the platform frame's reference axes where the robot file rotates it)")
    g.add_argument("--center", nargs=3, type=float, metavar=("X", "Y", "Z"), help="sine: centre point [m]")
    g.add_argument("--amplitude", nargs=3, type=float, metavar=("AX", "AY", "AZ"), help="sine: amplitude [m]")
    g.add_argument("--period", type=float, metavar="T", help="sine: period [s]")
    g.add_argument("--duration", type=float, metavar="D", help="sine, line: duration [s]")
    g.add_argument("--dt", type=float, metavar="DT", help="sample interval [s]; the duration must be a multiple")
    g.add_argument("--start", nargs=3, type=float, metavar=("X", "Y", "Z"), help="line, pick-place: start point [m]")
    g.add_argument("--end", nargs=3, type=float, metavar=("X", "Y", "Z"), help="line: end point [m]")
    g.add_argument("--rotation-center", nargs=3, type=float, metavar=("RX", "RY", "RZ"),
                   help="sine: centre of the orientation, a rotation vector about the platform's reference "
                        "orientation [rad] (task coordinates rx, ry, rz)")
    g.add_argument("--rotation-amplitude", nargs=3, type=float, metavar=("RX", "RY", "RZ"),
                   help="sine: amplitude of the rotation vector [rad]")
    g.add_argument("--start-rotation", nargs=3, type=float, metavar=("RX", "RY", "RZ"),
                   help="line: start orientation, a rotation vector [rad] (default 0)")
    g.add_argument("--end-rotation", nargs=3, type=float, metavar=("RX", "RY", "RZ"),
                   help="line: end orientation [rad]; rest-to-rest with the position's quintic law")
    g.add_argument("--lift", type=float, metavar="L", help="pick-place: lift height along +z [m] (default 0.025)")
    g.add_argument("--travel", nargs="+", type=float, metavar="T",
                   help="pick-place: travel [m], a distance along x or a horizontal vector TX TY 0 (default 0.305)")
    g.add_argument("--cycle-time", type=float, metavar="T", help="pick-place: cycle time [s] (default 0.5)")
    g.add_argument("--file", metavar="CSV", help="file: trajectory CSV (t, coordinates, rates …d, accelerations …dd; or t and "
                        "coordinates only, differentiated by a cubic spline)")


#: Options naming files a command reads, and files it writes (``pkm …``'s argparse destinations).
READS = ("robot", "robots", "file", "path", "torques", "data", "validate", "motion")
WRITES = ("out", "plot", "html", "excite")


def check_not_inputs(args: argparse.Namespace) -> None:
    """A one-line :class:`PkmError` where an output option names a file the command reads (``--out`` the
    robot file, ``--out`` the ``--path`` CSV): it was overwritten (the robot file by a CSV) at the end of
    a run that succeeded."""
    from pathlib import Path

    reads = []
    for name in READS:
        value = getattr(args, name, None)
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str) and v and Path(v).is_file():
                reads.append((name, v, Path(v).resolve()))
    for name in WRITES:
        v = getattr(args, name, None)
        if not (isinstance(v, str) and v):
            continue
        target = Path(v).resolve()
        for rname, given, source in reads:
            if target == source:
                what = "robot file" if rname in ("robot", "robots") else f"{_opt(rname)} file"
                flag = "OUT" if name == "out" and args.command == "convert" else _opt(name)
                raise PkmError(f"{flag} {v!r} would overwrite the {what} {given!r} it reads; choose another name")

