"""Design sweeps: peak and RMS actuator torques over a grid of design parameters × trajectories.

``pkm.sweep(robot, parameters, trajectories)`` (this module is callable: it is :func:`sweep`)
and ``pkm sweep ROBOT --param NAME=V1,V2,…`` (:func:`add_parser`). :func:`sweep` evaluates a
robot file at every point of the Cartesian grid

    parameter 1 values × parameter 2 values × … × trajectories

and returns a :class:`SweepResult` with, per point and actuator, the peak ``max_t |τ(t)|`` and the
RMS ``sqrt(mean_t τ(t)²)`` of the actuator torque (force, for a prismatic actuator) along the
trajectory. Each point is one task, :func:`evaluate_point`, a top-level function of plain,
picklable arguments (the robot file path as a string, dicts of numbers), so the grid runs on any
:class:`concurrent.futures.Executor`:

* default: a :class:`~concurrent.futures.ProcessPoolExecutor` on this machine (``workers``
  processes, default one per CPU, at most one per point), started with ``spawn`` (so a script
  that calls :func:`sweep` needs the ``if __name__ == "__main__":`` guard);
* ``executor="serial"``: one after the other in this process;
* ``scheduler="tcp://host:8786"``: a Dask cluster (``pip install 'pkm[dask]'``) through
  ``distributed.Client(scheduler).get_executor()``; the workers must have pkm installed and see the
  robot file (and any trajectory CSV) under the same absolute path;
* ``executor=...``: any other Executor (it is used, not shut down). A process pool must not
  ``fork`` a process that has run pkm's parallel numba kernels (GNU OpenMP aborts): pass
  ``mp_context=multiprocessing.get_context("spawn")``.

**Swept quantities.** ``parameters`` maps names to lists of values:

* any entry of the robot file's ``[parameters]`` table, with values in the file's units (the
  Delta's ``a``, ``c`` in mm), exactly as ``pkm.load(path, parameters={"a": 300})`` takes them —
  derived parameters (``d``, ``h``) follow;
* ``"mass:BODY"``: the mass of body ``BODY`` in kg (always kg), its inertia tensor scaled by the
  same factor (same shape, centre of mass and frame; a uniformly denser or lighter body).
  ``BODY`` is a written-out body or the platform (``mass:platform``), or a body of the
  representative limb (``mass:arm``: every mounted instance of it).

``trajectories`` is a list of trajectories, each ``None`` (the robot file's ``[trajectory]``) or
a dict like that table, in SI units (m, s) and world coordinates, as
:func:`pkm.trajectory.from_spec` takes it, plus an optional ``label``. Keys left out take the
defaults of ``pkm inverse-dynamics``, evaluated **per design point**: the centre (``sine``
``center``, ``line``/``pick-place`` ``start``) is the robot file's default trajectory's centre at
that point's parameters (the platform's reference position if it has none) — e.g. the Delta's
``[0, 0, -h]`` moves with ``a`` and ``c``; ``pick-place``: ``lift`` 0.025 m, ``travel`` 0.305 m along
x, ``cycle_time`` 0.5 s; ``line``: ``duration`` 1 s; ``sine``: ``period`` and ``duration`` default to
each other; ``dt``: the cycle time (duration) / 200. So
``{"type": "pick-place", "cycle_time": 0.4}`` is the standard 25 × 305 mm cycle in 0.4 s around
each design's own centre.

A point whose inverse kinematics fails (unreachable, singular) or whose parameters make the file
invalid (e.g. ``c`` too short for ``h = sqrt(c² − d²)``) is recorded with status ``error`` and
its message, and NaN torques; it does not stop the sweep. Rows are in grid order (parameters in
the order given, the last varying fastest, then the trajectory), whatever order the tasks finish
in; the results do not depend on the executor (each point loads its robot afresh and runs with
one numba thread: the parallelism is across points).

>>> import numpy as np
>>> res = SweepResult(robot="r.toml", robot_name="demo", parameter_names=["a"],
...                   parameter_values={"a": [1, 2]}, trajectory_labels=["default"],
...                   trajectories=[None], actuator_names=["m1"], actuator_units=["N·m"],
...                   rows=[{"a": 1, "trajectory": "default", "status": "ok", "peak_m1": 2.0,
...                          "rms_m1": 1.0, "message": ""},
...                         {"a": 2, "trajectory": "default", "status": "error", "peak_m1": np.nan,
...                          "rms_m1": np.nan, "message": "IKError: unreachable"}])
>>> res.as_array("peak").shape, res.n_ok, res.n_failed
((2, 1, 1), 1, 1)
>>> res.columns()
['a', 'trajectory', 'status', 'peak_m1', 'rms_m1', 'message']
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import csv
import itertools
import math
import os
import sys
import time
import types
from dataclasses import dataclass, field, replace
from pathlib import Path

from pkm.errors import PkmError

__all__ = ["sweep", "SweepResult", "evaluate_point", "add_parser", "MASS_PREFIX"]

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
    """``spec`` (a :class:`pkm.spec.RobotSpec`) with body masses set, inertias scaled alike.

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
    """Where a trajectory is centred by default: the default trajectory's centre/start (world, SI),
    else the platform's reference position."""
    import numpy as np

    spec = robot.spec.trajectory
    if spec and spec["type"] in ("sine", "line", "pick-place"):
        return np.asarray(spec["center" if spec["type"] == "sine" else "start"], dtype=float)
    return np.asarray(robot.r0, dtype=float)


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
    from pkm.robot import Robot
    from pkm.robotfile import load_spec

    spec = load_spec(Path(robot_path), parameters=dict(parameters) if parameters else None)
    return Robot(apply_masses(spec, masses or {}))


def evaluate_point(robot_path: str, parameters: dict, masses: dict, trajectory: dict | None) -> dict:
    """One grid point: load the robot, build the trajectory, run inverse dynamics.

    ``parameters``: robot-file parameter overrides (file units); ``masses``: body name → kg;
    ``trajectory``: ``None`` (the file's default) or a trajectory dict (see the module docstring).
    Returns a plain dict: ``status`` (``"ok"``/``"error"``), ``message``, ``actuators``, ``kinds``
    (``R``/``P``/``H`` per actuator), ``peak`` and ``rms`` (lists of floats, per actuator; empty on
    error), ``samples`` and ``seconds``. Errors of the point itself (IK, singularity, invalid
    parameters or trajectory) are returned as ``status = "error"``, never raised. Runs with one
    numba thread (restored afterwards): a sweep is parallel across points, and a point's result
    must not depend on how many threads its worker has.
    """
    import numba
    import numpy as np

    from pkm.trajectory import from_spec

    t0 = time.perf_counter()
    out = {"status": "ok", "message": "", "actuators": [], "kinds": [], "peak": [], "rms": [], "samples": 0}
    threads = numba.get_num_threads()
    numba.set_num_threads(1)   # parallel across points; and the result must not depend on the thread count
    try:
        robot = load_point(robot_path, parameters, masses)
        out["actuators"] = list(robot.actuator_names)
        out["kinds"] = [limb.tree.axis_kind[int(a)] for limb in robot.limbs for a in limb.actuated]
        traj = from_spec(complete_trajectory(robot, trajectory), robot.task.coordinate_names())
        out["samples"] = len(traj)
        tau = robot.inverse_dynamics(traj.x, traj.xd, traj.xdd, t=traj.t).tau
        out["peak"] = np.abs(tau).max(axis=0).tolist()
        out["rms"] = np.sqrt(np.mean(tau * tau, axis=0)).tolist()
    except POINT_ERRORS as exc:
        out.update(status="error", message=f"{type(exc).__name__}: {exc}".replace("\n", " "), peak=[], rms=[])
    finally:
        numba.set_num_threads(threads)
    out["seconds"] = time.perf_counter() - t0
    return out


# ====================================================================== result
@dataclass
class SweepResult:
    """Peak and RMS actuator torques over a sweep grid.

    ``rows``: one dict per grid point, in grid order, keyed like the CSV columns
    (:meth:`columns`): the swept parameters, ``trajectory`` (its label), ``status`` (``ok`` or
    ``error``), ``peak_<actuator>`` and ``rms_<actuator>`` (SI: N·m, or N for a prismatic
    actuator; NaN on error) and ``message`` (the error, else empty).
    """

    robot: str
    robot_name: str
    parameter_names: list[str]
    parameter_values: dict[str, list]
    trajectory_labels: list[str]
    trajectories: list
    actuator_names: list[str]
    actuator_units: list[str]
    rows: list[dict]
    elapsed: float = 0.0
    runner: str = ""
    units: str = "m"
    seconds: list[float] = field(default_factory=list)

    # ------------------------------------------------------------------ facts
    @property
    def shape(self) -> tuple[int, ...]:
        """Grid shape: one axis per swept parameter, then the trajectories."""
        return (*(len(self.parameter_values[n]) for n in self.parameter_names), len(self.trajectory_labels))

    @property
    def n_ok(self) -> int:
        return sum(r["status"] == "ok" for r in self.rows)

    @property
    def n_failed(self) -> int:
        return len(self.rows) - self.n_ok

    def columns(self) -> list[str]:
        """CSV header: parameters, ``trajectory``, ``status``, ``peak_<a>`` …, ``rms_<a>`` …, ``message``."""
        return [*self.parameter_names, "trajectory", "status", *(f"peak_{a}" for a in self.actuator_names),
                *(f"rms_{a}" for a in self.actuator_names), "message"]

    def as_array(self, kind: str = "peak"):
        """``peak`` or ``rms`` torques as an array of shape ``shape + (n_actuators,)`` (NaN where a
        point failed): ``res.as_array("peak")[i, j, k, a]`` is actuator ``a`` at parameter values
        ``i, j`` and trajectory ``k``."""
        import numpy as np

        if kind not in ("peak", "rms"):
            raise ValueError(f"kind must be 'peak' or 'rms', got {kind!r}")
        data = np.array([[r[f"{kind}_{a}"] for a in self.actuator_names] for r in self.rows], dtype=float)
        return data.reshape(*self.shape, len(self.actuator_names))

    # ------------------------------------------------------------------ output
    def to_csv(self, path) -> list[str]:
        """Write one row per grid point (floats as ``repr``: exact float64 round trip; ``nan`` where
        a point failed). Returns the header."""
        header = self.columns()

        def cell(v):
            if isinstance(v, float):
                return repr(v)
            return v

        with open(path, "w", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(header)
            for row in self.rows:
                w.writerow([cell(row[c]) for c in header])
        return header

    def plot(self, path=None, title: str | None = None):
        """Peak |τ| (top) and RMS τ (bottom) of the most loaded actuator against the first swept
        parameter (file units; kg for ``mass:…``), one line per combination of the other
        parameters and the trajectory. Without swept parameters the x axis is the trajectory (its
        cycle time when every trajectory has a distinct one). Failed points leave gaps. Saved to
        ``path`` when given (format from the suffix); returns the matplotlib Figure (Agg, no
        window).
        """
        import numpy as np
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        axes = [(n, list(self.parameter_values[n])) for n in self.parameter_names]
        axes.append(("trajectory", list(self.trajectory_labels)))
        cycle = [t.get("cycle_time") if isinstance(t, dict) else None for t in self.trajectories]
        traj_values = cycle if None not in cycle and len(set(cycle)) == len(cycle) else None
        shape = self.shape
        # the most loaded actuator (NaN where the point failed)
        peak = self.as_array("peak").max(axis=-1) if self.actuator_names else np.full(shape, np.nan)
        rms = self.as_array("rms").max(axis=-1) if self.actuator_names else np.full(shape, np.nan)
        xi = 0  # the first swept parameter, else the trajectory axis
        x_name, x_vals = axes[xi]
        ticks = None
        if x_name == "trajectory":
            if traj_values is not None:
                x, x_label = np.array(traj_values, dtype=float), "cycle time [s]"
            else:
                x, x_label, ticks = np.arange(len(x_vals), dtype=float), "trajectory", list(x_vals)
        else:
            x = np.array(x_vals, dtype=float)
            x_label = f"{x_name} [kg]" if x_name.startswith(MASS_PREFIX) else \
                f"{x_name} (robot file parameter; lengths in {self.units})"
        order = np.argsort(x, kind="stable")
        others = [k for k in range(len(axes)) if k != xi]
        units = sorted(set(self.actuator_units)) or ["N·m"]
        unit = " / ".join(units)

        fig = Figure(figsize=(8.0, 6.0), layout="constrained")
        FigureCanvasAgg(fig)
        ax_peak, ax_rms = fig.subplots(2, 1, sharex=True)
        for combo in itertools.product(*(range(shape[k]) for k in others)):
            index = [slice(None)] * len(shape)
            for k, j in zip(others, combo):
                index[k] = j
            parts = []
            for k, j in zip(others, combo):
                name, vals = axes[k]
                if len(vals) > 1:
                    parts.append(str(vals[j]) if name == "trajectory" else f"{name}={vals[j]:g}")
            label = ", ".join(parts) or None
            ax_peak.plot(x[order], peak[tuple(index)][order], marker="o", label=label)
            ax_rms.plot(x[order], rms[tuple(index)][order], marker="o", label=label)
        ax_peak.set_ylabel(f"peak |τ|, max over actuators [{unit}]")
        ax_rms.set_ylabel(f"RMS τ, max over actuators [{unit}]")
        ax_rms.set_xlabel(x_label)
        if ticks is not None:
            ax_rms.set_xticks(x, ticks, rotation=20, ha="right")
        for ax in (ax_peak, ax_rms):
            ax.grid(True, alpha=0.3)
        if any(line.get_label() and not line.get_label().startswith("_") for line in ax_peak.get_lines()):
            ax_peak.legend(fontsize="small", ncol=2 if len(ax_peak.get_lines()) > 6 else 1)
        fig.suptitle(title or f"{self.robot_name}: sweep of {len(self.rows)} points"
                     + (f" ({self.n_failed} failed)" if self.n_failed else ""))
        if path is not None:
            fig.savefig(path, dpi=150)
        return fig

    def summary(self, max_rows: int = 40) -> str:
        """A text table: one line per point with the largest peak and RMS over the actuators."""
        unit = " / ".join(sorted(set(self.actuator_units))) or "N·m"
        head = [*self.parameter_names, "trajectory", "status", f"peak|tau| [{unit}]", f"rms tau [{unit}]", ""]
        body = []
        for r in self.rows[:max_rows]:
            peaks = [r[f"peak_{a}"] for a in self.actuator_names]
            rmss = [r[f"rms_{a}"] for a in self.actuator_names]
            ok = r["status"] == "ok" and peaks
            message = r["message"] if len(r["message"]) <= 100 else r["message"][:99] + "…"
            body.append([*(f"{r[n]:g}" for n in self.parameter_names), r["trajectory"], r["status"],
                         f"{max(peaks):.4g}" if ok else "-", f"{max(rmss):.4g}" if ok else "-", message])
        widths = [max(len(str(row[k])) for row in [head, *body]) for k in range(len(head))]
        lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in [head, *body]]
        if len(self.rows) > max_rows:
            lines.append(f"… {len(self.rows) - max_rows} more rows")
        return "\n".join(lines)


# ====================================================================== validation
def _number(value, what: str) -> float | int:
    import numpy as np

    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise PkmError(f"{what}: expected a number, got {value!r}")
    if not math.isfinite(value):
        raise PkmError(f"{what}: must be finite, got {value!r}")
    return value.item() if isinstance(value, np.generic) else value


def _check_parameters(spec, parameters) -> tuple[list[str], dict[str, list]]:
    import numpy as np

    if parameters is None:
        return [], {}
    if not isinstance(parameters, dict):
        raise PkmError(f"parameters must be a dict of name -> list of values, got {type(parameters).__name__}")
    file_params = list(spec.parameters)
    bodies = [b.name for b in spec.bodies] + ([b.name for b in spec.limb.bodies] if spec.limb is not None else [])
    names, values = [], {}
    for name, vals in parameters.items():
        if not isinstance(name, str):
            raise PkmError(f"parameter names must be strings, got {name!r}")
        if name.startswith(MASS_PREFIX):
            body = name[len(MASS_PREFIX):]
            if body not in bodies:
                raise PkmError(f"{spec.source}: {name}: no body {body!r} (bodies: {', '.join(bodies) or 'none'})")
        elif name not in file_params:
            raise PkmError(f"{spec.source}: unknown parameter {name!r} (the file's [parameters] are "
                           f"{', '.join(file_params) or 'none'}; or mass:BODY)")
        if np.ndim(vals) == 0 and not isinstance(vals, (list, tuple)):
            vals = [vals]
        vals = [_number(v, name) for v in vals]
        if not vals:
            raise PkmError(f"{name}: no values to sweep")
        if name.startswith(MASS_PREFIX) and min(vals) <= 0:
            raise PkmError(f"{name}: masses must be positive (kg), got {min(vals)!r}")
        names.append(name)
        values[name] = vals
    return names, values


def _check_trajectories(trajectories) -> tuple[list, list[str]]:
    if trajectories is None:
        trajectories = [None]
    if isinstance(trajectories, dict):
        trajectories = [trajectories]
    trajectories = list(trajectories)
    if not trajectories:
        raise PkmError("trajectories: empty list (use None for the robot file's default)")
    out, labels = [], []
    for k, traj in enumerate(trajectories):
        if traj is None:
            out.append(None)
            labels.append("default")
            continue
        if not isinstance(traj, dict):
            raise PkmError(f"trajectories[{k}]: expected None or a dict, got {type(traj).__name__}")
        kind = traj.get("type")
        if kind not in TRAJECTORY_KEYS:
            raise PkmError(f"trajectories[{k}]: unknown type {kind!r} (expected one of {', '.join(TRAJECTORY_KEYS)})")
        extra = [key for key in traj if key not in ("type", "label", *TRAJECTORY_KEYS[kind])]
        if extra:
            raise PkmError(f"trajectories[{k}]: a {kind} trajectory has no key {extra[0]!r} "
                           f"(keys: {', '.join(TRAJECTORY_KEYS[kind])}, label)")
        need = {"sine": ["amplitude"], "line": ["end"], "file": ["path"]}.get(kind, [])
        if kind == "sine" and "period" not in traj and "duration" not in traj:
            need.append("period")
        missing = [key for key in need if key not in traj]
        if missing:
            raise PkmError(f"trajectories[{k}]: a {kind} trajectory needs {missing[0]!r}")
        traj = dict(traj)
        if kind == "file":
            traj["path"] = str(Path(traj["path"]).resolve())   # workers may run elsewhere
        out.append(traj)
        labels.append(str(traj["label"]) if "label" in traj else _label(traj))
    seen: dict[str, int] = {}
    for k, label in enumerate(labels):   # unique labels
        if labels.count(label) > 1:
            seen[label] = seen.get(label, 0) + 1
            labels[k] = f"{label} #{seen[label]}"
    return out, labels


def _label(traj: dict) -> str:
    import numpy as np

    parts = [traj["type"]]
    for key in ("cycle_time", "period", "duration", "lift", "travel"):
        if key in traj and np.ndim(traj[key]) == 0:
            parts.append(f"{key}={float(traj[key]):g}")
    if traj["type"] == "file":
        parts.append(Path(traj["path"]).name)
    return " ".join(parts)


# ====================================================================== running
def _make_executor(executor, scheduler, workers, n_tasks):
    """(executor or "serial", cleanup callable, description)."""
    if scheduler is not None:
        if executor is not None:
            raise PkmError("give either executor or scheduler, not both")
        try:
            from distributed import Client
        except ImportError:
            raise PkmError(f"a Dask scheduler needs dask.distributed: {DASK_HINT}") from None
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise PkmError(f"cannot connect to the Dask scheduler at {scheduler}: {exc}".replace("\n", " ")) from None
        n = len(client.scheduler_info().get("workers", {}))
        return client.get_executor(), client.close, f"the Dask cluster at {scheduler} ({n} workers)"
    if workers is not None and executor is not None:
        raise PkmError("workers sets the size of the default process pool; not with an executor")
    if executor is None:
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            raise PkmError(f"workers must be a positive integer, got {workers!r}")
        n = max(1, min(workers or os.cpu_count() or 1, n_tasks))
        if n == 1 and workers == 1:
            return "serial", None, "this process"
        import multiprocessing

        # spawn, not fork: numba's OpenMP thread pool (parallel kernels) does not survive a fork
        pool = cf.ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn"))
        return pool, lambda: pool.shutdown(wait=True, cancel_futures=True), \
            f"{n} local process{'es' if n > 1 else ''}"
    if executor == "serial":
        return "serial", None, "this process"
    if not isinstance(executor, cf.Executor) and not hasattr(executor, "submit"):
        raise PkmError(f"executor must be a concurrent.futures.Executor or 'serial', got {executor!r}")
    return executor, None, type(executor).__name__


def sweep(robot, parameters: dict | None = None, trajectories: list | None = None, *, executor=None,
          scheduler: str | None = None, workers: int | None = None, progress: bool = True) -> SweepResult:
    """Peak and RMS actuator torques over ``parameters`` × ``trajectories`` (see the module docstring).

    ``robot``: path to a robot file. ``parameters``: ``{name: [values…]}`` (file parameters in file
    units, ``"mass:BODY"`` in kg). ``trajectories``: list of ``None`` / trajectory dicts (SI), default
    ``[None]`` (the file's). ``executor``: a :class:`concurrent.futures.Executor`, or ``"serial"``;
    default a process pool of ``workers`` processes (default one per CPU; ``workers=1`` runs in
    this process). ``scheduler``: a Dask scheduler address (``tcp://host:port``) instead.
    ``progress``: a tqdm bar on stderr (shown when stderr is a terminal).

    Raises :class:`pkm.PkmError` for an unreadable robot file, unknown parameter names, bad values
    or trajectory dicts; a point that fails is recorded in the result instead.

    Example::

        res = pkm.sweep("robots/delta_3rr2rrr.toml", {"a": [240, 260], "mass:platform": [1, 2]},
                        [{"type": "pick-place", "cycle_time": t} for t in (0.4, 0.5)])
        res.to_csv("sweep.csv"); res.plot("sweep.png"); res.as_array("peak").shape   # (2, 2, 2, 3)
    """
    from concurrent.futures.process import BrokenProcessPool

    from tqdm import tqdm

    from pkm.robotfile import load_spec

    spec = load_spec(Path(robot))        # errors name the file as the caller did
    path = Path(robot).resolve()         # workers may run in another directory
    names, values = _check_parameters(spec, parameters)
    trajs, labels = _check_trajectories(trajectories)

    points = list(itertools.product(*(values[n] for n in names)))
    tasks = []
    for combo in points:
        file_params = {n: v for n, v in zip(names, combo) if not n.startswith(MASS_PREFIX)}
        masses = {n[len(MASS_PREFIX):]: v for n, v in zip(names, combo) if n.startswith(MASS_PREFIX)}
        for traj in trajs:
            tasks.append((str(path), file_params, masses, traj))

    t0 = time.perf_counter()
    runner, cleanup, how = _make_executor(executor, scheduler, workers, len(tasks))
    results: list[dict | None] = [None] * len(tasks)
    failed = 0
    try:
        with tqdm(total=len(tasks), desc="sweep", unit="point", file=sys.stderr, dynamic_ncols=True,
                  disable=None if progress else True) as bar:
            def done(i, res):
                nonlocal failed
                results[i] = res
                if res["status"] != "ok":
                    failed += 1
                    bar.set_postfix(failed=failed)
                bar.update(1)

            if runner == "serial":
                for i, args in enumerate(tasks):
                    done(i, evaluate_point(*args))
            else:
                futures = {runner.submit(evaluate_point, *args): i for i, args in enumerate(tasks)}
                try:
                    for fut in cf.as_completed(futures):
                        done(futures[fut], fut.result())
                except BrokenProcessPool as exc:
                    raise PkmError(f"a sweep worker process died ({exc})") from None
                finally:
                    for fut in futures:
                        fut.cancel()
    finally:
        if cleanup is not None:
            cleanup()
    elapsed = time.perf_counter() - t0

    actuators = next((r["actuators"] for r in results if r["actuators"]), None)
    kinds = next((r["kinds"] for r in results if r["kinds"]), None)
    if actuators is None:   # every point failed before the robot was built: ask the base robot
        try:
            base = load_point(str(path))
            actuators = list(base.actuator_names)
            kinds = [limb.tree.axis_kind[int(a)] for limb in base.limbs for a in limb.actuated]
        except POINT_ERRORS:
            actuators, kinds = [], []
    rows = []
    for (combo, traj_index), res in zip(itertools.product(points, range(len(trajs))), results):
        row = dict(zip(names, combo))
        row["trajectory"] = labels[traj_index]
        row["status"] = res["status"]
        ok = res["status"] == "ok"
        for kind in ("peak", "rms"):
            for k, a in enumerate(actuators):
                row[f"{kind}_{a}"] = float(res[kind][k]) if ok else math.nan
        row["message"] = res["message"].replace(str(path), str(robot))
        rows.append(row)
    return SweepResult(robot=str(robot), robot_name=spec.name, parameter_names=names, parameter_values=values,
                       trajectory_labels=labels, trajectories=trajs, actuator_names=list(actuators),
                       actuator_units=["N" if k == "P" else "N·m" for k in kinds], rows=rows, elapsed=elapsed,
                       runner=how, units=spec.units, seconds=[r["seconds"] for r in results])


# ====================================================================== command line
def parse_values(text: str, what: str) -> list[float]:
    """``"1,2,3"`` or ``"START:STOP:COUNT"`` (COUNT evenly spaced values, both ends included).

    >>> parse_values("240,260", "a"), parse_values("200:300:3", "a")
    ([240.0, 260.0], [200.0, 250.0, 300.0])
    """
    import numpy as np

    text = text.strip()
    try:
        if ":" in text:
            parts = text.split(":")
            if len(parts) != 3:
                raise ValueError
            start, stop, count = float(parts[0]), float(parts[1]), int(parts[2])
            if count < 1:
                raise ValueError
            vals = np.linspace(start, stop, count).tolist() if count > 1 else [start]
        else:
            vals = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise PkmError(f"{what}: expected comma-separated numbers or START:STOP:COUNT, got {text!r}") from None
    if not vals:
        raise PkmError(f"{what}: no values in {text!r}")
    for v in vals:
        if not math.isfinite(v):
            raise PkmError(f"{what}: values must be finite, got {v!r}")
    return vals


def _check_output(path: str, what: str, image: bool = False) -> None:
    p = Path(path)
    if p.is_dir():
        raise PkmError(f"{what} {path}: is a directory")
    if not p.resolve().parent.is_dir():
        raise PkmError(f"{what} {path}: directory {p.parent} does not exist")
    if image:
        from matplotlib.backend_bases import FigureCanvasBase

        formats = set(FigureCanvasBase.get_supported_filetypes())
        if p.suffix.lower().lstrip(".") not in formats:
            raise PkmError(f"{what} {path}: unsupported image format {p.suffix or '(none)'!r} "
                           f"(use one of {', '.join('.' + s for s in sorted(formats))})")


def _cmd_sweep(args: argparse.Namespace) -> int:
    parameters: dict[str, list[float]] = {}
    for item in args.param or []:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise PkmError(f"--param {item!r}: expected NAME=V1,V2,… or NAME=START:STOP:COUNT")
        if name in parameters:
            raise PkmError(f"--param {name}: given twice")
        parameters[name] = parse_values(text, f"--param {name}")
    kind = args.trajectory or ("pick-place" if args.cycle_time is not None else "default")
    pp_opts = {"lift": args.lift, "travel": args.travel, "dt": args.dt}
    if kind == "default":
        if args.cycle_time is not None or any(v is not None for v in pp_opts.values()):
            raise PkmError("--cycle-time, --lift, --travel and --dt apply to --trajectory pick-place, "
                           "not to the robot file's default trajectory")
        trajectories = [None]
    else:
        cycle_times = parse_values(args.cycle_time, "--cycle-time") if args.cycle_time is not None else \
            [PICK_PLACE_DEFAULTS["cycle_time"]]
        base = {"type": "pick-place"}
        for key, value in pp_opts.items():
            if value is not None:
                if not math.isfinite(value):
                    raise PkmError(f"--{key}: must be finite, got {value!r}")
                base[key] = value
        for t in cycle_times:
            if t <= 0:
                raise PkmError(f"--cycle-time: must be positive, got {t:g}")
        trajectories = [dict(base, cycle_time=t, label=f"pick-place {t:g} s") for t in cycle_times]
    if args.scheduler is not None and args.workers is not None:
        raise PkmError("--workers sets the number of local processes; with --scheduler the Dask cluster decides")
    if args.workers is not None and args.workers < 1:
        raise PkmError(f"--workers: must be at least 1, got {args.workers}")
    if args.out is not None:
        _check_output(args.out, "--out")
    if args.plot is not None:
        _check_output(args.plot, "--plot", image=True)

    res = sweep(args.robot, parameters, trajectories, scheduler=args.scheduler, workers=args.workers,
                progress=not args.no_progress)
    written = []
    if args.out is not None:
        res.to_csv(args.out)
        written.append(f"the CSV to {args.out}")
    if args.plot is not None:
        res.plot(args.plot)
        written.append(f"the plot to {args.plot}")
    grid = " × ".join([f"{n} ({len(res.parameter_values[n])})" for n in res.parameter_names]
                      + [f"{len(res.trajectory_labels)} trajector{'ies' if len(res.trajectory_labels) > 1 else 'y'}"])
    print(f"{res.robot_name}: sweep of {grid} = {len(res.rows)} points on {res.runner} in {res.elapsed:.1f} s: "
          f"{res.n_ok} ok, {res.n_failed} failed. "
          + (("Wrote " + " and ".join(written) + ".") if written else "No files written (use --out CSV, --plot PNG)."))
    print(res.summary())
    return 0


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``pkm sweep`` on an argparse subparsers object (``set_defaults(func=…)``)."""
    p = subparsers.add_parser(
        "sweep", help="peak and RMS actuator torques over a grid of design parameters and cycle times",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Evaluate peak |tau| and RMS tau of every actuator over the grid of the --param values "
                    "× the trajectories, in parallel (local processes, or a Dask cluster with --scheduler).",
        epilog="""\
--param NAME=V1,V2,… (or NAME=START:STOP:COUNT) sweeps an entry of the robot file's [parameters]
table, in the file's units (mm for the Delta: --param a=200,250,300), or with NAME = mass:BODY the
mass of a body in kg, its inertia scaled alike (mass:platform; a limb body such as mass:arm
changes every limb). Several --param options make a grid.

Trajectory: the robot file's default (--trajectory default, the default), or pick-and-place
cycles (--trajectory pick-place, implied by --cycle-time): --lift 0.025 m up, --travel 0.305 m
along x, down, and back, starting at each design's default trajectory centre (the Delta's
[0, 0, -h]; the platform's reference position if the file has no trajectory), one cycle per
--cycle-time value (default 0.5 s), sampled with --dt (default cycle time / 200).

A point whose inverse kinematics fails (or whose parameters are invalid) is reported with status
"error" and does not stop the sweep. The --out CSV has one row per point: the parameters,
trajectory, status, peak_<actuator> …, rms_<actuator> … (SI: N·m), message. The --plot shows the
largest peak and RMS over the actuators against the first --param (or the cycle time).

examples: pkm sweep robots/delta_3rr2rrr.toml --param a=200:300:5 --param c=900,1000 --out sweep.csv
          pkm sweep robots/delta_3rr2rrr.toml --param mass:platform=0.5,1,2 --cycle-time 0.3,0.4,0.5 \\
              --scheduler tcp://10.0.0.5:8786 --plot sweep.png""")
    p.add_argument("robot", help="path to a robot file (TOML)")
    p.add_argument("--param", action="append", metavar="NAME=VALUES",
                   help="a swept parameter: NAME=V1,V2,… or NAME=START:STOP:COUNT (repeatable)")
    p.add_argument("--trajectory", choices=("default", "pick-place"),
                   help="the robot file's default trajectory, or pick-and-place cycles (default: pick-place "
                        "if --cycle-time is given, else default)")
    p.add_argument("--cycle-time", metavar="T1,T2,…", help="pick-place cycle times [s], swept (default 0.5)")
    p.add_argument("--lift", type=float, metavar="L", help="pick-place lift [m] (default 0.025)")
    p.add_argument("--travel", type=float, metavar="T", help="pick-place travel along x [m] (default 0.305)")
    p.add_argument("--dt", type=float, metavar="DT", help="pick-place sample interval [s] (default cycle time / 200)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help=f"run on a Dask cluster, e.g. tcp://host:8786 (needs {DASK_HINT})")
    p.add_argument("--workers", type=int, metavar="N",
                   help="local worker processes (default: one per CPU; 1: run in this process)")
    p.add_argument("--out", metavar="CSV", help="write one row per grid point (parameters, status, peak/RMS torques)")
    p.add_argument("--plot", metavar="PNG", help="save peak and RMS torque against the first parameter")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=_cmd_sweep)
    return p


class _SweepModule(types.ModuleType):
    """``pkm.sweep`` is this module and, called, :func:`sweep`: ``pkm.sweep(robot, parameters, …)``.

    (A package attribute named like a submodule is replaced by the submodule when it is imported,
    so the function cannot simply be re-exported as ``pkm.sweep``.)
    """

    def __call__(self, *args, **kwargs) -> SweepResult:
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _SweepModule
