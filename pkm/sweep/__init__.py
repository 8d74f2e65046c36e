"""Design sweeps: peak and RMS actuator torques over a grid of design parameters × trajectories.

``pkm.sweep(robot, parameters, trajectories)`` (this module is callable: it is :func:`sweep`)
and ``pkm sweep ROBOT --param NAME=V1,V2,…`` (:mod:`pkm.cli.sweep`). :func:`sweep` evaluates a
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
its message, and NaN torques; it does not stop the sweep. A point whose motion leaves a joint limit
of the robot file (``limits``) is recorded alike with status ``limit``, its message naming the
joint, value, range and sample. Rows are in grid order (parameters in
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
>>> res.csv_header()     # the CSV's: each torque column with its unit
['a', 'trajectory', 'status', 'peak_m1 [N·m]', 'rms_m1 [N·m]', 'message']
"""

from __future__ import annotations

import concurrent.futures as cf
import itertools
import math
import os
import re
import sys
import time
import types
import warnings
from pathlib import Path

from pkm.errors import PkmError
from pkm.sweep.points import (
    CONNECT_TIMEOUT,
    DASK_HINT,
    MASS_PREFIX,
    POINT_ERRORS,
    TRAJECTORY_KEYS,
    evaluate_point,
    load_point,
)
from pkm.sweep.result import SweepResult

__all__ = ["sweep", "SweepResult", "evaluate_point", "MASS_PREFIX", "MAX_POINTS"]

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


def _check_time_optimal(spec, trajs, cycle_points) -> None:
    """A sweep with cycle times needs drives with a peak torque and pick-place or line paths."""
    if not any(j.drive is not None and math.isfinite(j.drive.peak_torque or math.nan) for j in spec.expanded()[1]):
        raise PkmError(f"{spec.source}: time-optimal cycle times need the robot file's drives with peak_torque "
                       "(a drive = {{ …, peak_torque, max_speed }} per actuator; pkm cycle takes --torque-limit)")
    from pkm.planning import route_of_trajectory
    from pkm.sweep.points import PICK_PLACE_DEFAULTS

    for k, traj in enumerate(trajs):
        kind = (traj or spec.trajectory or {}).get("type")
        if kind not in ("pick-place", "line"):
            raise PkmError(f"trajectories[{k}]: a time-optimal cycle runs along a pick-place or line path, not "
                           f"{'the robot file default ' if traj is None else 'a '}{kind or 'missing'} trajectory")
        if kind == "pick-place":   # its lift and travel are every design's: refused here, not at every point
            table = traj or spec.trajectory
            probe = {"type": kind, "start": [0.0, 0.0, 0.0]}
            probe.update({key: table.get(key, PICK_PLACE_DEFAULTS[key]) for key in ("lift", "travel")})
            try:
                route_of_trajectory(probe, ["x", "y", "z"])
            except PkmError as exc:
                raise PkmError(f"trajectories[{k}]: {exc}") from None
    if isinstance(cycle_points, bool) or not isinstance(cycle_points, int) or not 16 <= cycle_points <= 100_000:
        raise PkmError(f"cycle_points must be an integer from 16 to 100000, got {cycle_points!r}")


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
#: A network Dask scheduler address: ``[tcp|tls|ws|wss|ucx://]host:port``, host a name, IPv4 or ``[IPv6]``.
#: Most grid points of one sweep (each one a full inverse-dynamics run, 0.1-1 s): a typo such as
#: a=1:2:100000000 ran for days instead of failing at once.
MAX_POINTS = 100_000
#: Grid points of each point's time-optimal parametrisation (``sweep(time_optimal=True)``): a coarser
#: grid gives a longer cycle; examples/delta_servo.toml's pick-and-place: 0.2500 s on 200 points, 0.2465
#: on 400, 0.2442 on 1000 (0.8 % above 16000 points' 0.2422 s; the torques inside the steps 0.01 % over the
#: limit at most, 0.5 % on 400), ~0.2 s per point.
CYCLE_POINTS = 1000
_ADDRESS = re.compile(r"(?:(?:tcp|tls|ws|wss|ucx)://)?(?:\[[0-9A-Fa-f:.%\w]+\]|[A-Za-z0-9_.-]+):(\d{1,5})")


def check_scheduler_address(address: str) -> None:
    """PkmError unless ``address`` looks like ``tcp://host:port`` (or ``host:port``) with a port in
    1…65535; catches typos before distributed's longer and less clear errors. Other schemes
    (``inproc://…``) are left to distributed."""
    scheme, sep, _ = address.strip().partition("://")
    if sep and scheme not in ("tcp", "tls", "ws", "wss", "ucx"):
        return
    m = _ADDRESS.fullmatch(address.strip())
    if m is None or not 0 < int(m[1]) < 65536:
        raise PkmError(f"invalid Dask scheduler address {address!r}: expected tcp://HOST:PORT, e.g. "
                       f"tcp://10.0.0.5:8786 (an IPv6 host in brackets: tcp://[::1]:8786)")


def _make_executor(executor, scheduler, workers, n_tasks):
    """(executor or "serial", cleanup callable, description)."""
    if scheduler is not None:
        if executor is not None:
            raise PkmError("give either executor or scheduler, not both")
        if isinstance(scheduler, str):
            check_scheduler_address(scheduler)
        try:
            from distributed import Client
        except ImportError:
            raise PkmError(f"a Dask scheduler needs dask.distributed: {DASK_HINT}") from None
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError, TypeError) as exc:
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
          scheduler: str | None = None, workers: int | None = None, progress: bool = True,
          time_optimal: bool = False, cycle_points: int = CYCLE_POINTS) -> SweepResult:
    """Peak and RMS actuator torques over ``parameters`` × ``trajectories`` (see the module docstring).

    ``robot``: path to a robot file. ``parameters``: ``{name: [values…]}`` (file parameters in file
    units, ``"mass:BODY"`` in kg). ``trajectories``: list of ``None`` / trajectory dicts (SI), default
    ``[None]`` (the file's). ``executor``: a :class:`concurrent.futures.Executor`, or ``"serial"``;
    default a process pool of ``workers`` processes (default one per CPU; ``workers=1`` runs in
    this process). ``scheduler``: a Dask scheduler address (``tcp://host:port``) instead.
    ``progress``: a tqdm bar on stderr (shown when stderr is a terminal). ``time_optimal``: also each
    point's time-optimal cycle time along its trajectory's path (pick-place or line) under the robot
    file's drives (:func:`pkm.planning.time_optimal` on ``cycle_points`` grid points; the rows' columns
    ``cycle_time``, ``picks_per_minute`` and ``cycle_limit``): cycle time against arm length, motor or payload.

    The peaks are the samples' (a trajectory sampled too coarsely for its motion is a failed point,
    :func:`pkm.trajectory.base.require_resolved`): where a point's peak torque may lie more than 1 % above its
    largest sample (:func:`pkm.sweep.sizing.peak_gaps`, as ``pkm size`` checks) a RuntimeWarning names the worst
    point and the estimate; a smaller ``dt`` removes it.

    Raises :class:`pkm.PkmError` for an unreadable robot file, unknown parameter names, bad values
    or trajectory dicts; a point that fails is recorded in the result instead.

    Example::

        res = pkm.sweep("robots/delta_3rr2rrr.toml", {"a": [240, 260], "mass:platform": [1, 2]},
                        [{"type": "pick-place", "cycle_time": t} for t in (0.4, 0.5)])
        res.to_csv("sweep.csv"); res.plot("sweep.png"); res.as_array("peak").shape   # (2, 2, 2, 3)
    """
    from concurrent.futures.process import BrokenProcessPool

    from tqdm import tqdm

    from pkm.formats import load_robot_spec

    if not isinstance(robot, (str, os.PathLike)):   # each point loads the file with its own parameters
        source = getattr(getattr(robot, "spec", None), "source", None)
        raise PkmError(f"robot must be the path of a robot file (each point loads it with its parameters), got "
                       f"{type(robot).__name__}" + (f": give its file, {str(source)!r}" if source else ""))
    spec = load_robot_spec(Path(robot))[0]   # errors name the file as the caller did
    spec.check_actuation()               # else every point would fail alike
    path = Path(robot).resolve()         # workers may run in another directory
    names, values = _check_parameters(spec, parameters)
    plain = {n: spec.parameters[n] for n in names if not n.startswith(MASS_PREFIX)}
    if plain and path.suffix.lower() == ".toml":   # a derived parameter refused once, not at every point: the
        from pkm.description.robotfile import load_spec   # file's own values, so nothing else can fail

        load_spec(path, parameters=plain)
    trajs, labels = _check_trajectories(trajectories)
    if time_optimal is None:
        time_optimal = False
    if not (isinstance(time_optimal, bool) or type(time_optimal).__name__ == "bool_"):   # (numpy's bool too)
        raise PkmError(f"time_optimal must be True or False, got {time_optimal!r}")
    if time_optimal:
        _check_time_optimal(spec, trajs, cycle_points)
    elif cycle_points != CYCLE_POINTS:
        raise PkmError(f"cycle_points ({cycle_points!r}) sets the grid of the time-optimal cycle times: it needs "
                       f"time_optimal=True")
    grid = math.prod(len(values[n]) for n in names) * len(trajs)
    if grid > MAX_POINTS:
        raise PkmError(f"the sweep has {grid} points ({' × '.join(str(len(values[n])) for n in names)} × "
                       f"{len(trajs)} trajectories), more than {MAX_POINTS}: sweep coarser or in parts")

    points = list(itertools.product(*(values[n] for n in names)))
    tasks = []
    for combo in points:
        file_params = {n: v for n, v in zip(names, combo) if not n.startswith(MASS_PREFIX)}
        masses = {n[len(MASS_PREFIX):]: v for n, v in zip(names, combo) if n.startswith(MASS_PREFIX)}
        for traj in trajs:
            tasks.append((str(path), file_params, masses, traj, cycle_points if time_optimal else 0))

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
        if time_optimal:
            row.update(cycle_time=float(res["cycle_time"]), picks_per_minute=float(res["picks_per_minute"]),
                       cycle_limit=res["cycle_limit"])
        row["message"] = res["message"].replace(str(path), str(robot))
        rows.append(row)
    _warn_peak_gaps(spec.name, names, rows, results)
    return SweepResult(robot=str(robot), robot_name=spec.name, parameter_names=names, parameter_values=values,
                       trajectory_labels=labels, trajectories=trajs, actuator_names=list(actuators),
                       actuator_units=["N" if k == "P" else "N·m" for k in kinds], rows=rows, elapsed=elapsed,
                       runner=how, units=spec.units, seconds=[r["seconds"] for r in results], cycle=bool(time_optimal))



def _warn_peak_gaps(name, names, rows, results):
    """A RuntimeWarning where an ``ok`` point's peak torque may lie more than :data:`pkm.sweep.sizing.PEAK_GAP`
    above its largest sample (the point's ``peak_gap``, as ``pkm size`` warns): the sweep's peaks are the samples'."""
    from pkm.sweep.sizing import PEAK_GAP

    gaps = [(res["peak_gap"], i) for i, res in enumerate(results) if res["status"] == "ok"]
    gap, i = max(gaps, default=(0.0, -1))
    if gap > PEAK_GAP:
        where = ", ".join([*(f"{n} = {rows[i][n]:g}" for n in names), f"trajectory {rows[i]['trajectory']}"])
        n, k = len(gaps), sum(g > PEAK_GAP for g, _ in gaps)
        warnings.warn(f"{name}: at {k} of {n} point{'s' * (n != 1)} a peak torque falls "
                      f"between the samples, up to ~{100 * gap:.2g} % above the largest sample ({where}; a parabola "
                      f"through it and its neighbours): the peaks are the samples': use a smaller dt", RuntimeWarning,
                      stacklevel=3)


class _SweepModule(types.ModuleType):
    """``pkm.sweep`` is this module and, called, :func:`sweep`: ``pkm.sweep(robot, parameters, …)``.

    (A package attribute named like a submodule is replaced by the submodule when it is imported,
    so the function cannot simply be re-exported as ``pkm.sweep``.)
    """

    def __call__(self, *args, **kwargs) -> SweepResult:
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _SweepModule
