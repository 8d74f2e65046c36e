"""One grid point of a sweep, run on a worker: load the robot at the point's parameters and masses,
complete its trajectory with the per-design defaults, and return peak and RMS actuator torques.
"""
from __future__ import annotations

import math
import time
from dataclasses import replace
from pathlib import Path

from pkm.errors import LimitError, PkmError

#: Sweep keys starting with this prefix set a body's mass (kg): ``"mass:platform"``.
MASS_PREFIX = "mass:"
#: Defaults of a pick-and-place cycle (SI), as for ``pkm inverse-dynamics --trajectory pick-place``.
PICK_PLACE_DEFAULTS = {"lift": 0.025, "travel": 0.305, "cycle_time": 0.5}
#: A trajectory without ``dt`` is sampled with this many intervals.
DEFAULT_INTERVALS = 200
#: Keys a trajectory dict may have, per type (besides ``type`` and ``label``).
TRAJECTORY_KEYS = {
    "sine": ("center", "amplitude", "period", "duration", "dt"),
    "line": ("start", "end", "duration", "dt"),
    "pick-place": ("start", "lift", "travel", "cycle_time", "dt"),
    "file": ("path",),
}
#: Errors that make one grid point fail (recorded) rather than the sweep.
POINT_ERRORS = (PkmError, ValueError, ArithmeticError, NotImplementedError)
DASK_HINT = "pip install 'pkm[dask]'"
#: How long to try to reach a Dask scheduler.
CONNECT_TIMEOUT = "10s"


# ====================================================================== one grid point (worker side)
def apply_masses(spec, masses: dict):
    """``spec`` (a :class:`pkm.description.spec.RobotSpec`) with body masses set, inertias scaled alike.

    ``masses`` maps body names (written-out bodies, the platform, or bodies of the representative
    limb, which changes every mounted instance) to masses in kg.
    """
    if not masses:
        return spec

    def scaled(body):
        m = float(masses[body.name])
        return replace(body, mass=m, inertia=body.inertia * (m / body.mass))

    bodies = tuple(scaled(b) if b.name in masses else b for b in spec.bodies)
    limb = spec.limb
    if limb is not None:
        limb = replace(limb, bodies=tuple(scaled(b) if b.name in masses else b for b in limb.bodies))
    known = {b.name for b in bodies} | ({b.name for b in limb.bodies} if limb is not None else set())
    unknown = [n for n in masses if n not in known]
    if unknown:
        raise PkmError(f"{spec.source}: no body {unknown[0]!r} to set the mass of (bodies: {', '.join(sorted(known))})")
    return replace(spec, bodies=bodies, limb=limb)


def _centre(robot):
    """Where a trajectory is centred by default: the default trajectory's centre/start (task
    position coordinates, SI), else the platform's reference position in those coordinates (along
    the platform frame's reference axes, :attr:`pkm.Robot.position_ref`)."""
    import numpy as np

    spec = robot.spec.trajectory
    if spec and spec["type"] in ("sine", "line", "pick-place"):
        return np.asarray(spec["center" if spec["type"] == "sine" else "start"], dtype=float)
    return np.asarray(robot.position_ref, dtype=float)


def complete_trajectory(robot, trajectory: dict | None) -> dict:
    """The full trajectory dict for ``robot`` (see the module docstring for the defaults)."""
    if trajectory is None:
        if robot.spec.trajectory is None:
            raise PkmError(f"{robot.spec.source}: the robot file has no [trajectory] table; give trajectories")
        return dict(robot.spec.trajectory)
    traj = {k: v for k, v in trajectory.items() if k != "label"}
    kind = traj["type"]
    if kind == "file":
        return traj
    centre = _centre(robot)
    if kind == "pick-place":
        traj.setdefault("start", centre)
        for key, value in PICK_PLACE_DEFAULTS.items():
            traj.setdefault(key, value)
    elif kind == "line":
        traj.setdefault("start", centre)
        traj.setdefault("duration", 1.0)
    else:  # sine
        traj.setdefault("center", centre)
        traj.setdefault("period", traj.get("duration"))
        traj.setdefault("duration", traj["period"])
    span = traj["cycle_time" if kind == "pick-place" else "duration"]
    traj.setdefault("dt", span / DEFAULT_INTERVALS)
    return traj


def load_point(robot_path: str, parameters: dict | None = None, masses: dict | None = None):
    """The :class:`pkm.robot.Robot` of one design point (file parameters and body masses set)."""
    from pkm.formats import load_robot_spec
    from pkm.robot import Robot

    spec = load_robot_spec(Path(robot_path), dict(parameters) if parameters else None)[0]
    return Robot(apply_masses(spec, masses or {}))


def evaluate_point(robot_path: str, parameters: dict, masses: dict, trajectory: dict | None,
                   cycle_points: int = 0) -> dict:
    """One grid point: load the robot, build the trajectory, run inverse dynamics; with
    ``cycle_points`` > 0 also the time-optimal motion along the trajectory's path under the drives'
    limits on that many grid points (:func:`pkm.planning.time_optimal`, the path of
    :func:`pkm.planning.route_of_trajectory`): ``cycle_time`` [s], ``picks_per_minute`` (pick-place) and
    ``cycle_limit`` (the limit active at the most samples) in the returned dict.

    ``parameters``: robot-file parameter overrides (file units); ``masses``: body name → kg;
    ``trajectory``: ``None`` (the file's default) or a trajectory dict (see the module docstring).
    Returns a plain dict: ``status`` (``"ok"``, ``"limit"``: beyond a joint limit of the robot file
    (:class:`pkm.LimitError`, its message naming joint, value, range and sample), or ``"error"``), ``message``, ``actuators``, ``kinds``
    (``R``/``P``/``H`` per actuator), ``peak`` and ``rms`` (lists of floats, per actuator; empty on
    error), ``peak_gap`` (how far a peak may lie above its largest sample, relative, the largest over the
    actuators: :func:`pkm.sweep.sizing.peak_gaps`; NaN on error), ``samples`` and ``seconds``. Errors of the
    point itself (IK, singularity, invalid parameters or trajectory) are returned as ``status = "error"``, never raised. Runs with one
    numba thread (restored afterwards): a sweep is parallel across points, and a point's result
    must not depend on how many threads its worker has.
    """
    import numba
    import numpy as np

    from pkm.sweep.sizing import peak_gaps
    from pkm.trajectory import from_spec
    from pkm.trajectory.base import require_resolved

    t0 = time.perf_counter()
    out = {"status": "ok", "message": "", "actuators": [], "kinds": [], "peak": [], "rms": [], "samples": 0,
           "peak_gap": math.nan, "cycle_time": math.nan, "picks_per_minute": math.nan, "cycle_limit": ""}
    threads = numba.get_num_threads()
    numba.set_num_threads(1)   # parallel across points; and the result must not depend on the thread count
    try:
        robot = load_point(robot_path, parameters, masses)
        out["actuators"] = list(robot.actuator_names)
        out["kinds"] = [limb.tree.axis_kind[int(a)] for limb in robot.limbs for a in limb.actuated]
        spec = complete_trajectory(robot, trajectory)
        traj = from_spec(spec, robot.task.coordinate_names())
        out["samples"] = len(traj)
        require_resolved(traj, "peak and RMS torques")   # a coarse dt: peaks missed, or no motion seen at all
        # finite, or a PkmError naming the sample: never an "ok" point with an inf or NaN peak
        tau = robot.inverse_dynamics(traj.x, traj.xd, traj.xdd, t=traj.t).tau
        peak = np.abs(tau).max(axis=0)
        scale = np.where(peak > 0.0, peak, 1.0)   # RMS scaled by the peak: tau² cannot overflow
        out["peak"] = peak.tolist()
        out["rms"] = (scale * np.sqrt(np.mean((tau / scale) ** 2, axis=0))).tolist()
        out["peak_gap"] = float(peak_gaps(tau).max(initial=0.0))   # a peak between the samples (sweep() warns)
        if cycle_points:
            from pkm.planning import route_of_trajectory, time_optimal

            cyc = time_optimal(robot, route_of_trajectory(spec, robot.task.coordinate_names()), n=cycle_points)
            out.update(cycle_time=cyc.cycle_time, cycle_limit=next(iter(cyc.active_counts())),
                       picks_per_minute=math.nan if cyc.picks_per_minute is None else cyc.picks_per_minute)
    except LimitError as exc:   # the design reaches the trajectory, but not within its joint limits
        out.update(status="limit", message=f"LimitError: {exc}".replace("\n", " "), peak=[], rms=[],
                   peak_gap=math.nan, cycle_time=math.nan, picks_per_minute=math.nan, cycle_limit="")
    except POINT_ERRORS as exc:
        out.update(status="error", message=f"{type(exc).__name__}: {exc}".replace("\n", " "), peak=[], rms=[],
                   peak_gap=math.nan, cycle_time=math.nan, picks_per_minute=math.nan, cycle_limit="")
    finally:
        numba.set_num_threads(threads)
    out["seconds"] = time.perf_counter() - t0
    return out
