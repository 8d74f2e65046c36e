"""Singularity maps: reachability and conditioning over a grid of task coordinates.

``pkm.workspace(robot, ranges, …)`` (this module is callable: it is :func:`workspace`) and
``pkm workspace ROBOT`` (:mod:`pkm.cli.workspace`). The task coordinates named in ``ranges`` run
over a grid (one coordinate: a line; two: a slice, e.g. a vertical x–z slice of a Delta at y = 0
or a horizontal one at z = −0.9; three: a volume); every other coordinate is fixed (``fixed``,
default its value at the reference configuration — for a robot that rotates, the reference
orientation).

The map shows the **reference configuration's branch** (assembly mode) continued over the grid,
computed by the batch kernel :func:`pkm.kernels.workspace.map_range` on all threads: first every
point on its own, as :meth:`pkm.Robot.inverse_kinematics` solves a single point (from the reference
configuration, directly or along the straight task-space line from ``x_ref``); then, from the
reached point nearest ``x_ref``, wave after wave from neighbour to neighbour (:func:`_flood`), so
that a map does not mix elbow-up and elbow-down solutions of neighbouring points, and parts that
neither attempt reaches (a lobe behind a boundary) are found. A point where a limb's IK does not
converge is **unreachable** (recorded, never raised). At a reachable point the map reports three
condition numbers (2-norm, ``σ_max/σ_min``, from the kernel's ``L_p`` and ``J_IK``):

* ``cond_IK`` — **type I** (inverse-kinematics, "serial") singularities: the largest condition
  number of the limbs' platform Jacobians ``L_p = J_p H`` (eq. 80). ``L_p`` loses rank where a
  limb has a motion that leaves the platform at rest (a Delta arm fully stretched or folded:
  the arm turns while the rods swing about the platform joints), and there ``F = L_p⁺ P_p``
  (eq. 94) and the limb's rows of ``J_IK`` (eq. 97–98) grow without bound. This is the quantity
  pkm's singularity checks compare with their threshold (1e6).
* ``cond_FK`` — **type II** (forward-kinematics, "parallel") singularities: the condition number
  of ``J_IK`` with every row scaled to unit length. A limb with one actuator contributes the row
  ``θ̇_a = w_aᵀ V_t / (w_aᵀ S_a)`` (``w_a`` the limb's actuation wrench, reciprocal to its passive
  joints; ``S_a`` the actuated joint's screw), so the row scaling removes the type-I factor
  ``w_aᵀ S_a`` and leaves the direct-kinematics matrix of the Gosselin–Angeles form
  ``A ẋ = B θ̇_a`` (with unit rows): singular where the platform can move with the actuators
  locked, i.e. where the forward-kinematics Jacobian ``J_FK = J_IK⁻¹`` does not exist. (For a
  limb with several actuators each row is scaled on its own, a proxy.)
* ``cond_JIK`` — the condition number of ``J_IK`` itself, equal to that of ``J_FK``: large at
  both kinds.

Condition numbers of matrices that mix rotational and translational rows or columns depend on
the length unit (SI, metres, as everywhere in pkm). A limb whose ``G_y`` or ``L_p`` cannot be
inverted at all gives ``inf``.
"""
from __future__ import annotations

import math
import sys
import types
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from pkm.errors import PkmError

__all__ = ["workspace", "WorkspaceMap", "default_ranges", "bytes_per_point", "MAX_POINTS", "MAX_BYTES"]

#: Most grid points one map takes, and most working memory [bytes] (:func:`bytes_per_point`: ~6 kB
#: per point for a Delta, ~11 kB for a hexapod; the result keeps ~0.2–0.5 kB per point).
MAX_POINTS = 4_000_000
MAX_BYTES = 2_000_000_000
#: Default extent of a translational axis around its reference value, as a multiple of the largest
#: distance of a joint point from the platform's reference position (a reach estimate), and of a
#: rotational axis (rad).
REACH_FACTOR, ROTATION_RANGE = 1.5, 1.0


@dataclass
class WorkspaceMap:
    """Result of :func:`workspace`: ``N`` grid points in C order over ``axes`` (``shape``).

    ``x`` (N, δ_p) the task coordinates of every point (all of them, free and fixed);
    ``reachable`` (N,) bool; ``limb_status`` (N, L): the kernel's code per limb (0 ok, 1 no IK
    solution, 2 loops not closed, 3 ``G_y`` singular, 4 ``L_p`` singular); ``cond_IK``,
    ``cond_FK``, ``cond_JIK`` (N,) and ``cond_Lp`` (N, L) as in the module docstring (NaN where
    unreachable); ``q_act`` (N, n_act) actuator coordinates and ``J_IK`` (N, n_act, δ_p) (NaN where
    unreachable). :meth:`grid` reshapes a per-point array to ``shape``. ``within_limits`` (N,) bool:
    reachable and every joint within the robot file's limits (:mod:`pkm.algorithms.limits`);
    ``limit_joint`` (N,): the joint whose limit a reachable point is beyond (None elsewhere).
    """

    robot_name: str
    names: list[str]
    free: list[str]
    axes: list[np.ndarray]
    fixed: dict[str, float]
    x: np.ndarray
    reachable: np.ndarray
    limb_status: np.ndarray
    cond_IK: np.ndarray
    cond_FK: np.ndarray
    cond_JIK: np.ndarray
    cond_Lp: np.ndarray
    q_act: np.ndarray
    J_IK: np.ndarray
    limb_names: list[str]
    actuator_names: list[str]
    within_limits: np.ndarray | None = None
    limit_joint: list | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(a) for a in self.axes)

    def grid(self, values) -> np.ndarray:
        """A per-point array (N, …) as the grid (shape + …), axis ``i`` along ``free[i]``."""
        values = np.asarray(values)
        return values.reshape(self.shape + values.shape[1:])

    def status_text(self, s: int) -> str:
        """``ok``, ``unreachable (limb2, limb3)`` or ``singular (limb1: L_p)`` for point ``s``."""
        codes = self.limb_status[s]
        bad = [(n, c) for n, c in zip(self.limb_names, codes) if c != 0]
        if self.reachable[s] and self.limit_joint is not None and self.limit_joint[s] is not None:
            return f"beyond limits ({self.limit_joint[s]})"
        if not bad:
            return "ok"
        if not self.reachable[s]:
            return "unreachable (" + " ".join(n for n, c in bad if c in (1, 2)) + ")"
        return "singular (" + " ".join(f"{n}:{'G_y' if c == 3 else 'L_p'}" for n, c in bad) + ")"

    def csv_header(self) -> list[str]:
        return [*self.names, "reachable", "cond_IK", "cond_FK", "cond_JIK",
                *(f"cond_Lp_{n}" for n in self.limb_names), *(f"q_{n}" for n in self.actuator_names), "within_limits",
                "status"]

    def write_csv(self, path) -> list[str]:
        """One row per grid point (C order): the task coordinates, ``reachable`` (0/1), ``cond_IK``
        (type I), ``cond_FK`` (type II), ``cond_JIK``, each limb's ``cond(L_p)``, the actuator
        coordinates, ``within_limits`` (0/1: reachable with every joint within the robot file's limits) and a
        status text; floats as ``repr`` (``nan`` where unreachable, ``inf`` where a
        matrix could not be inverted). Returns the header."""
        header = self.csv_header()
        data = np.column_stack([self.x, self.reachable.astype(float), self.cond_IK, self.cond_FK, self.cond_JIK,
                                self.cond_Lp, self.q_act])
        lines = [",".join(header)]
        for s, row in enumerate(data.tolist()):
            cells = [repr(v) for v in row]
            cells[len(self.names)] = "1" if self.reachable[s] else "0"
            lines.append(",".join(cells) + "," + ("1" if self.within[s] else "0") + "," + self.status_text(s))
        with open(path, "w", newline="") as fh:
            fh.write("\n".join(lines) + "\n")
        return header

    @property
    def within(self) -> np.ndarray:
        """``within_limits``, or ``reachable`` where the map has no limits."""
        return self.reachable if self.within_limits is None else self.within_limits

    def summary(self) -> str:
        """One paragraph: grid, reachable share, the worst conditioning and where it is."""
        n, r = len(self.reachable), int(self.reachable.sum())
        axes = ", ".join(f"{name} {a[0]:.6g}…{a[-1]:.6g} ({len(a)})" for name, a in zip(self.free, self.axes))
        fixed = ", ".join(f"{k} = {v:.6g}" for k, v in self.fixed.items())
        text = (f"{self.robot_name}: {n} points over {axes}" + (f" at {fixed}" if fixed else "") +
                f"; {r} reachable ({100.0 * r / n:.1f} %)")
        if r and self.within_limits is not None:
            w = int(self.within_limits.sum())
            text += f", {w} within the joint limits ({100.0 * w / n:.1f} %)"
        for key, what in (("cond_IK", "type I, limbs' L_p"), ("cond_FK", "type II, J_IK rows normalised")):
            vals = getattr(self, key)
            if r:
                k = int(np.nanargmax(np.where(self.reachable, vals, -np.inf)))
                at = ", ".join(f"{nm} = {v:.4g}" for nm, v in zip(self.names, self.x[k]))
                text += f"; largest {key} ({what}) {vals[k]:.3g} at {at}"
        return text + "."


def default_ranges(robot, fixed: dict | None = None) -> dict[str, tuple[float, float]]:
    """The coordinates a map runs over when none are given: the translational task coordinates
    that are not ``fixed`` (the first and the last if more than two; rotational ones if there
    are no translational ones), each over its reference value ± :data:`REACH_FACTOR` × the largest
    distance of a joint point from the platform's reference position (± :data:`ROTATION_RANGE`
    rad for a rotation)."""
    fixed = fixed or {}
    names = robot.task.coordinate_names()
    trans = [n for n, c in zip(names, robot.task.components) if c.startswith("v") and n not in fixed]
    free = trans or [n for n in names if n not in fixed]
    if len(free) > 2:
        free = [free[0], free[-1]]
    _, joints = robot.spec.expanded()
    reach = REACH_FACTOR * max(float(np.linalg.norm(j.point - robot.r0)) for j in joints)
    out = {}
    for n in free:
        i = names.index(n)
        half = reach if robot.task.components[i].startswith("v") else ROTATION_RANGE
        out[n] = (float(robot.x_ref[i] - half), float(robot.x_ref[i] + half))
    return out


#: Points per coordinate of the coarse map that fits the default ranges (:func:`fitted_ranges`).
COARSE = 25


def fitted_ranges(robot, fixed=None, *, tol=1e-12, max_iter=50, threads=None) -> dict[str, tuple[float, float]]:
    """The default ranges of a map: :func:`default_ranges` (a reach estimate) shrunk to the box
    around the points a coarse map (:data:`COARSE` points per coordinate) finds reachable and
    within the joint limits, one coarse cell of margin on each side; the reach estimate itself
    where no point is."""
    rough = default_ranges(robot, fixed)
    coarse = workspace(robot, rough, resolution=COARSE, fixed=fixed, tol=tol, max_iter=max_iter, threads=threads)
    ok = coarse.within
    if not ok.any():
        return rough
    out = {}
    for i, (n, axis) in enumerate(zip(coarse.free, coarse.axes)):
        idx = np.nonzero(coarse.grid(ok).any(axis=tuple(k for k in range(len(coarse.free)) if k != i)))[0]
        lo, hi = max(int(idx[0]) - 1, 0), min(int(idx[-1]) + 1, len(axis) - 1)
        if lo == hi:   # a single coarse point: one cell on either side
            lo, hi = max(lo - 1, 0), min(hi + 1, len(axis) - 1)
        out[n] = (float(axis[lo]), float(axis[hi]))
    return out


def bytes_per_point(robot) -> int:
    """An upper bound of the working memory one grid point of :func:`workspace` takes on ``robot``
    [bytes]: three copies of a point's IK state (tree variables, status, ``L_p``, ``J_IK``: the cold
    passes, the flood's copy and the sub-arrays it solves), the continuation starts of a point that
    fails directly (``CONTINUATION_STEPS − 1`` poses, thrice: the poses, their contiguous copy and
    the task coordinates behind them), its pose, coordinates and grid bookkeeping."""
    from pkm.algorithms.inverse_kinematics import CONTINUATION_STEPS
    from pkm.kernels.model import LAY_DMAX, LAY_NMAX

    km = robot._packed()
    L, nmax, dmax, dp = km.mi.shape[0], int(km.lay[LAY_NMAX]), int(km.lay[LAY_DMAX]), robot.task_dof
    state = L * nmax + L + L * 6 * dmax + robot.n_act * dp
    return 8 * (3 * state + 3 * 16 * (CONTINUATION_STEPS - 1) + 16 + 4 * dp + 8)


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:.3g} {unit}"
        n /= 1000
    return f"{n:.3g} PB"


def _real_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _check(robot, ranges, resolution, fixed):
    """The free names, their axes and the fixed values, checked (one-line PkmErrors)."""
    names = robot.task.coordinate_names()
    known = ", ".join(names)
    if fixed is not None and not isinstance(fixed, dict):
        raise PkmError(f"fixed must be a dict {{name: value}}, got {type(fixed).__name__}")
    if ranges is not None and not isinstance(ranges, dict):
        raise PkmError(f"ranges must be a dict {{name: (lo, hi)}}, got {type(ranges).__name__}")
    fixed = dict(fixed or {})
    for n, v in fixed.items():
        if n not in names:
            raise PkmError(f"slice: {robot.name} has no task coordinate {n!r} (its coordinates: {known})")
        if not _real_number(v) or not math.isfinite(v):
            raise PkmError(f"slice {n}: the value must be a finite number, got {v!r}")
    ranges = dict(ranges)
    for n, rng in ranges.items():
        if n not in names:
            raise PkmError(f"range: {robot.name} has no task coordinate {n!r} (its coordinates: {known})")
        if n in fixed:
            raise PkmError(f"{n}: given both a range and a fixed (slice) value")
        if isinstance(rng, (str, bytes, dict)) or not hasattr(rng, "__len__") or len(rng) != 2 \
                or not all(_real_number(v) for v in rng):
            raise PkmError(f"range {n}: expected two numbers (lo, hi), got {rng!r}")
        lo, hi = (float(v) for v in rng)
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise PkmError(f"range {n}: needs finite LO < HI, got {lo!r}:{hi!r}")
        if not math.isfinite(hi - lo):
            raise PkmError(f"range {n}: the span {lo!r}:{hi!r} overflows (|HI − LO| > {np.finfo(float).max:.3g})")
    free = [n for n in names if n in ranges]  # in task-coordinate order
    if not free:
        raise PkmError(f"no task coordinate left to map: every coordinate of {robot.name} ({known}) is fixed by "
                       f"a slice; leave one or more free or give them a --range")
    res = list(resolution) if isinstance(resolution, (list, tuple)) else [resolution] * len(free)
    if len(res) != len(free):
        raise PkmError(f"resolution: {len(res)} values for {len(free)} coordinates ({', '.join(free)})")
    for r in res:
        if not isinstance(r, (int, np.integer)) or isinstance(r, (bool, np.bool_)) or r < 2:
            raise PkmError(f"resolution: at least 2 points per coordinate, got {r!r}")
    count = math.prod(int(r) for r in res)
    per_point = bytes_per_point(robot)
    if count > MAX_POINTS or count * per_point > MAX_BYTES:
        raise PkmError(f"resolution: {' × '.join(map(str, res))} = {count} points would take ~"
                       f"{_fmt_bytes(count * per_point)} of memory ({_fmt_bytes(per_point)} per point for "
                       f"{robot.name}), more than a map's {_fmt_bytes(MAX_BYTES)}: at most "
                       f"{min(MAX_POINTS, MAX_BYTES // per_point)} points; map coarser or in parts")
    axes = []
    for n, r in zip(free, res):
        axis = np.linspace(*map(float, ranges[n]), int(r))
        if not np.all(np.diff(axis) > 0):
            raise PkmError(f"range {n}: {ranges[n][0]!r}:{ranges[n][1]!r} is too narrow for {int(r)} distinct "
                           f"points")
        axes.append(axis)
    values = {n: float(fixed.get(n, robot.x_ref[i])) for i, n in enumerate(names) if n not in ranges}
    # the corner of the box farthest from ρ = 0: the largest rotation vector of the map
    far = np.array([max(abs(float(ranges[n][0])), abs(float(ranges[n][1]))) if n in ranges else abs(values[n])
                    for n in names])
    robot._check_rotation(far, "range/slice: the map's farthest corner")
    return free, axes, values


def workspace(robot, ranges: dict | None = None, *, resolution=41, fixed: dict | None = None, tol: float = 1e-12,
              max_iter: int = 50, threads: int | None = None) -> WorkspaceMap:
    """Map reachability and singularities over a grid of task coordinates (see the module docstring).

    ``robot``: a :class:`pkm.Robot` or a robot file path. ``ranges``: ``{name: (lo, hi)}`` for the
    coordinates that run over the grid (SI units: m, rad; default :func:`fitted_ranges`: the
    reachable points within the joint limits);
    ``resolution``: points per coordinate (an int, or one per coordinate in task-coordinate
    order); ``fixed``: ``{name: value}`` for the others (default: their reference values).
    ``tol``, ``max_iter``: the IK's; ``threads``: chunks in parallel (default numba's thread count).

    >>> import pkm
    >>> m = pkm.workspace("robots/delta_3rr2rrr.toml", {"x": (-1.5, 1.5), "z": (-1.6, -0.2)},
    ...                   resolution=101, fixed={"y": 0.0})          # doctest: +SKIP
    >>> m.grid(m.cond_IK).shape                                      # doctest: +SKIP
    (101, 101)
    """
    from numba import get_num_threads

    from pkm.algorithms.inverse_kinematics import check_parallel, check_solver
    from pkm.kernels.batch import continuation_starts, platform_states
    from pkm.kernels.dynamics import IK_FAILED, LOOP_FAILED
    from pkm.kernels.model import LAY_DMAX, LAY_NMAX, LI_AFF, LI_DOF
    from pkm.kernels.work import make_work
    from pkm.kernels.workspace import map_range
    from pkm.robot import Robot, load

    if not isinstance(robot, Robot):
        robot = load(robot)
    robot.spec.check_actuation()
    check_solver(tol, max_iter, 1e6)
    check_parallel(threads, None)
    if not ranges:
        _check(robot, default_ranges(robot, fixed if isinstance(fixed, dict) else None), 2, fixed)  # a bad slice first
        ranges = fitted_ranges(robot, fixed, tol=tol, max_iter=max_iter, threads=threads)
    free, axes, values = _check(robot, ranges, resolution, fixed)
    names = robot.task.coordinate_names()
    mesh = np.meshgrid(*axes, indexing="ij")
    N = mesh[0].size
    X = np.empty((N, robot.task_dof))
    for i, n in enumerate(names):
        X[:, i] = mesh[free.index(n)].ravel() if n in free else values[n]
    km = robot._packed()
    L, nmax, dmax, dp = km.mi.shape[0], int(km.lay[LAY_NMAX]), int(km.lay[LAY_DMAX]), robot.task_dof
    general = None if km.mi[:, LI_AFF].all() else km.lay
    Z = np.zeros_like(X)
    Cd = np.ascontiguousarray(platform_states(robot, X, Z, Z)[0])
    theta, Lp = np.zeros((N, L, nmax)), np.full((N, L, 6, dmax), np.nan)
    JIK, lstat = np.full((N, robot.n_act, dp), np.nan), np.zeros((N, L), dtype=np.int64)
    most = get_num_threads() if threads is None else int(threads)

    def run(Cd_, Cs_, K, cont, th_, ls_, Lp_, J_, iters):
        n = Cd_.shape[0]
        workers = max(1, min(most, -(-n // 256)))
        work = make_work(km, workers)
        bounds = [n * w // workers for w in range(workers + 1)]

        def chunk(w):
            map_range(bounds[w], bounds[w + 1], km.mi, km.mf, km.lay, km.d_static, km.dp_static, Cd_, Cs_, K, cont,
                      th_, ls_, Lp_, J_, *(a[w] for a in work), general, float(tol), int(iters), np.zeros(4))

        if workers == 1:
            chunk(0)
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                list(pool.map(chunk, range(workers)))

    # pass 1: every limb directly from the reference configuration
    run(Cd, np.zeros((1, 4, 4)), 0, np.zeros((N, L), dtype=np.int64), theta, lstat, Lp, JIK, max_iter)
    failed = (lstat == IK_FAILED) | (lstat == LOOP_FAILED)
    idx = np.flatnonzero(failed.any(axis=1))
    if len(idx):  # pass 2: the limbs that failed, along the straight line from x_ref (the others refined)
        Cs = continuation_starts(robot, X[idx])
        K = Cs.shape[1]
        sub = [theta[idx], lstat[idx], Lp[idx], JIK[idx]]
        run(np.ascontiguousarray(Cd[idx]), np.ascontiguousarray(Cs.reshape(-1, 4, 4)), K,
            failed[idx].astype(np.int64), *sub, max_iter)
        theta[idx], lstat[idx], Lp[idx], JIK[idx] = sub
    theta, lstat, Lp, JIK = _flood(run, robot, X, free, axes, Cd, theta, lstat, Lp, JIK, max_iter)
    reachable = ~((lstat == IK_FAILED) | (lstat == LOOP_FAILED)).any(axis=1)

    cond_Lp = np.full((N, L), np.nan)
    for l in range(L):
        d = int(km.mi[l, LI_DOF])
        ok = reachable & (lstat[:, l] != 3)   # SINGULAR_GY: no L_p
        cond_Lp[ok, l] = _cond(Lp[ok, l, :, :d])
        cond_Lp[reachable & ~ok, l] = np.inf
    cond_IK = np.where(reachable, np.max(np.where(np.isnan(cond_Lp), -np.inf, cond_Lp), axis=1), np.nan)
    cond_JIK = np.full(N, np.nan)
    cond_FK = np.full(N, np.nan)
    singular = reachable & (lstat != 0).any(axis=1)
    good = reachable & ~singular
    J = JIK[good]
    cond_JIK[good] = _cond(J)
    norms = np.linalg.norm(J, axis=2, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        cond_FK[good] = _cond(J / norms)   # a zero row (an actuator that cannot move the platform): inf
    cond_JIK[singular] = cond_FK[singular] = np.inf
    within, limit_joint = _limits(robot, theta, reachable)
    q_act = theta[:, robot._act_limb, robot._act_var]
    q_act[~reachable] = np.nan
    JIK[~reachable] = np.nan
    return WorkspaceMap(robot_name=robot.name, names=list(names), free=free, axes=axes, fixed=values, x=X,
                        reachable=reachable, limb_status=lstat, cond_IK=cond_IK, cond_FK=cond_FK, cond_JIK=cond_JIK,
                        cond_Lp=cond_Lp, q_act=q_act, J_IK=JIK, limb_names=[l.name for l in robot.limbs],
                        actuator_names=list(robot.actuator_names), within_limits=within, limit_joint=limit_joint)


def _limits(robot, theta, reachable):
    """``within_limits`` (N,) and the joint named per point beyond a limit (None elsewhere)."""
    from pkm.algorithms.limits import evaluate, limit_table

    table = limit_table(robot)
    names = [None] * len(reachable)
    if table.empty:
        return reachable.copy(), names
    _, over = evaluate(robot, theta)
    over &= reachable[:, None]
    for s in np.flatnonzero(over.any(axis=1)):
        names[s] = table.checks[int(np.argmax(over[s]))].joint
    return reachable & ~over.any(axis=1), names


def _neighbours(shape):
    """Index arrays (N,) of each grid point's neighbour along each axis and direction (−1: none)."""
    flat = np.arange(math.prod(shape)).reshape(shape)
    out = []
    for ax in range(len(shape)):
        for sh in (1, -1):
            nb = np.roll(flat, sh, axis=ax)
            edge = [slice(None)] * len(shape)
            edge[ax] = 0 if sh == 1 else -1
            nb[tuple(edge)] = -1  # no wrap-around
            out.append(nb.ravel())
    return out


def _flood(run, robot, X, free, axes, Cd, theta, lstat, Lp, JIK, max_iter):
    """The reference branch continued over the grid, from neighbour to neighbour.

    ``theta, lstat, Lp, JIK`` hold every point's solution on its own (the cold passes). The seed
    is the point nearest ``x_ref`` (in grid cells) that the cold passes reached; wave after wave,
    the points next to the ones reached last are solved from a reached neighbour's solution and
    kept if no row of ``J_IK`` turned by more than 90° on the way (the branch check of
    :func:`pkm.algorithms.inverse_kinematics.branch_suspect`: a row flips where a limb passes a
    type-I singularity onto its other branch). Reached points get the flood's solution; reached
    cold points that the flood did not reach seed floods of their own (parts of the workspace not
    connected within the slice), nearest to ``x_ref`` first; unreached points keep their cold,
    failed status. Returns the arrays of the result."""
    from pkm.kernels.dynamics import IK_FAILED, LOOP_FAILED

    N = X.shape[0]
    shape = tuple(len(a) for a in axes)
    nbs = _neighbours(shape)
    cold_ok = ~((lstat == IK_FAILED) | (lstat == LOOP_FAILED)).any(axis=1)
    out = [theta.copy(), lstat.copy(), Lp.copy(), JIK.copy()]
    done = np.zeros(N, bool)
    span = np.array([(a[-1] - a[0]) / (len(a) - 1) for a in axes])
    cells = np.stack(np.meshgrid(*[np.arange(len(a)) for a in axes], indexing="ij"), -1).reshape(N, len(axes))
    ref = (np.array([robot.x_ref[robot.task.coordinate_names().index(n)] for n in free])
           - np.array([a[0] for a in axes])) / span
    dist = np.linalg.norm(cells - ref, axis=1)
    while True:
        avail = np.flatnonzero(cold_ok & ~done)
        if not len(avail):
            return out
        seed = int(avail[np.argmin(dist[avail])])
        done[seed] = True
        frontier = np.zeros(N, bool)
        frontier[seed] = True
        while frontier.any():
            src = np.full(N, -1)
            for nb in nbs:
                take = (src < 0) & ~done & (nb >= 0) & frontier[np.maximum(nb, 0)]
                src[take] = nb[take]
            idx = np.flatnonzero(src >= 0)
            if not len(idx):
                break
            sub = [out[0][src[idx]].copy(), np.zeros((len(idx), lstat.shape[1]), dtype=np.int64),
                   np.full((len(idx),) + Lp.shape[1:], np.nan), np.full((len(idx),) + JIK.shape[1:], np.nan)]
            run(np.ascontiguousarray(Cd[idx]), np.zeros((1, 4, 4)), 0, np.zeros(sub[1].shape, dtype=np.int64), *sub,
                max_iter)
            reached = ~((sub[1] == IK_FAILED) | (sub[1] == LOOP_FAILED)).any(axis=1)
            turn = np.einsum("sad,sad->sa", sub[3], out[3][src[idx]])
            keep = reached & ~(turn <= 0.0).any(axis=1)   # NaN rows (a singular limb) do not count as turned
            acc = idx[keep]
            for a, b in zip(out, sub):
                a[acc] = b[keep]
            done[acc] = True
            frontier = np.zeros(N, bool)
            frontier[acc] = True


def _cond(A) -> np.ndarray:
    """2-norm condition numbers ``σ_max/σ_min`` of a stack of matrices (inf where ``σ_min`` is 0)."""
    out = np.full(A.shape[0], np.inf)
    fin = np.isfinite(A).all(axis=(1, 2))
    if fin.any():
        s = np.linalg.svd(A[fin], compute_uv=False)
        with np.errstate(divide="ignore", invalid="ignore"):
            c = s[:, 0] / s[:, -1]
        out[fin] = np.where(np.isfinite(c), c, np.inf)
    return out


class _WorkspaceModule(types.ModuleType):
    """``pkm.workspace`` is this module and, called, :func:`workspace` (as :mod:`pkm.sweep`)."""

    def __call__(self, *args, **kwargs) -> WorkspaceMap:
        return workspace(*args, **kwargs)


sys.modules[__name__].__class__ = _WorkspaceModule
