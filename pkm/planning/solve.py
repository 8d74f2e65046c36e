"""``pkm.time_optimal``: the fastest motion along a path (or a route of rest-to-rest paths) under the
drives' torque and speed limits.

Per path: the force coefficients from one batched inverse dynamics (:mod:`pkm.planning.coefficients`),
the limits as rows in ``(s̈, ṡ²)`` (:mod:`pkm.planning.constraints`) and the reachability analysis
(:mod:`pkm.planning.reachability`, TOPP-RA's method, implemented in closed form — the ``toppra``
package is not needed; ``benchmarks/bench_cycle_time.py`` runs it beside this one on pkm's coefficients).

What is not affine in ``ṡ²`` is kept exact by an **outer iteration**: the actuated joints' friction
(viscous ``F_v q' ṡ`` and the smooth Coulomb ``F_c tanh(q' ṡ/v_c)``) and the gear's side (driving or
braking: the efficiency η divides or multiplies) are frozen at the previous profile, the profile solved
again, until the speeds agree to ``1e-9`` and the sides no longer change: at that fixed point every row is
the exact motor torque. The motor torques of the result are then recomputed with the drives' own
``motor_torque`` and checked against the limits (a PkmError if they exceed them by more than 1e-6).

**Switches.** Where the greedy forward pass turns from accelerating to braking inside a step (the step's
``s̈`` lies strictly between its bounds), a sample is added at the switching point ``s*`` (acceleration
``U_i`` from ``s_i``, the braking bound from ``s*``, rows interpolated linearly between the grid points), so
that at every sample of the trajectory one limit is reached: bang–bang.
"""
from __future__ import annotations

import numpy as np

from pkm.errors import InputError, PkmError

from pkm.planning.coefficients import path_dynamics, motor_gains
from pkm.planning.constraints import exact_u_interval, gear_sides, resolve_limits, speed_bound, torque_rows
from pkm.planning.paths import Path, Route
from pkm.planning.reachability import _split, reachability, u_bounds
from pkm.planning.result import CycleResult, PieceProfile

__all__ = ["Route", "time_optimal"]

#: Outer iterations (friction and gear side frozen) before giving up.
MAX_ITERATIONS = 40
#: Convergence of the outer iteration: largest change of ṡ relative to max ṡ.
TOLERANCE = 1e-9
#: Smallest and largest number of grid points.
MIN_POINTS, MAX_POINTS = 16, 10**6


def _route(path) -> Route:
    if isinstance(path, Route):
        return path
    if isinstance(path, Path):
        return Route((path,))
    if isinstance(path, (list, tuple)) and path and all(isinstance(p, Path) for p in path):
        return Route(tuple(path))
    raise InputError(f"path must be a pkm.planning Path, Route or a sequence of Paths, got {type(path).__name__}")


def _points(n, route: Route) -> list[int]:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not MIN_POINTS <= n <= MAX_POINTS:
        raise InputError(f"n must be an integer from {MIN_POINTS} to {MAX_POINTS}, got {n!r}")
    lengths = np.array([p.length for p in route.paths])
    share = np.maximum(MIN_POINTS, np.round(n * lengths / lengths.sum())).astype(int)
    return [int(k) for k in share]


def _solve_piece(robot, path, n, limits, gains, solve=reachability):
    pd = path_dynamics(robot, path, n)
    drives = robot.drives
    ds = path.length / (n - 1)
    xmax = speed_bound(pd, gains, limits)
    x = np.zeros(n)
    u = np.zeros(n)
    sides = gear_sides(pd, drives, x, u)
    for it in range(1, MAX_ITERATIONS + 1):
        A, B, C = torque_rows(pd, gains, drives, limits, x, sides)
        prof = solve(A, B, C, xmax, ds)
        new_sides = gear_sides(pd, drives, prof.x, prof.u)
        sd_old, sd_new = np.sqrt(x), np.sqrt(prof.x)
        change = float(np.max(np.abs(sd_new - sd_old))) / max(float(np.max(sd_new)), 1e-300)
        x, u = prof.x, prof.u
        same = bool(np.all(new_sides == sides))
        sides = new_sides
        if change <= TOLERANCE and same:
            break
        if not (drives is not None and (np.any(drives.viscous) or np.any(drives.coulomb)
                                         or np.any(drives.efficiency < 1))) and same:
            break   # nothing depends on the profile: the first solve is exact
    else:
        raise PkmError(f"{robot.name}: the time-optimal profile did not settle in {MAX_ITERATIONS} iterations (friction "
                       f"and gear efficiency frozen at the previous profile)")
    A, B, C = torque_rows(pd, gains, drives, limits, x, sides)
    return pd, prof, (A, B, C), xmax, it


def _switches(pd, prof, rows, xmax, gains, drives, limits):
    """Samples ``(s, x, u)`` of the piece with the switching points added (module docstring); the bounds
    there are the exact ones (each gear side where it holds: :func:`exact_u_interval`)."""
    A, B, C = rows
    Lp, Lr, Up, Ur, _, _ = _split(A, B, C)
    s, x, u = pd.s, prof.x, prof.u
    n = s.size
    ds = s[1] - s[0]
    L, U = u_bounds(Lp, Lr, Up, Ur, x)
    coef = {k: getattr(pd, k) for k in ("a", "b", "c", "dq", "ddq")}
    out_s, out_x, out_u, inserted = [], [], [], []
    for i in range(n):
        out_s.append(s[i]), out_x.append(x[i]), out_u.append(u[i])
        if i == n - 1:
            break
        width = U[i] - L[i]
        if not ((U[i] - u[i] > 1e-6 * width) and (u[i] - L[i] > 1e-6 * width) and x[i] < xmax[i] * (1 - 1e-9)):
            continue
        ua = exact_u_interval({k: v[i] for k, v in coef.items()}, gains, drives, limits, x[i], u[i])[1]
        ud = exact_u_interval({k: v[i + 1] for k, v in coef.items()}, gains, drives, limits, x[i + 1], u[i + 1])[0]
        if not (np.isfinite(ua) and np.isfinite(ud) and ud < u[i] < ua):
            continue
        sig = (x[i + 1] - 2.0 * ds * ud - x[i]) / (2.0 * (ua - ud))
        if not 0.0 < sig < ds:
            continue
        w = sig / ds
        xs = x[i] + 2.0 * sig * ua
        us = None
        if xs > ((1 - w) * xmax[i] + w * xmax[i + 1]) * (1 + 1e-9):
            # the accelerating line reaches the speed limit first: the switch sample is on it
            slope = (xmax[i + 1] - xmax[i]) / ds
            sig = (xmax[i] - x[i]) / (2.0 * ua - slope) if 2.0 * ua - slope > 0 else -1.0
            if not 0.0 < sig < ds:
                continue
            w = sig / ds
            xs = min(x[i] + 2.0 * sig * ua, (1 - w) * xmax[i] + w * xmax[i + 1])
            us = (x[i + 1] - xs) / (2.0 * (ds - sig))
        lo, hi = exact_u_interval({k: (1 - w) * v[i] + w * v[i + 1] for k, v in coef.items()}, gains, drives, limits,
                                  xs, ud if us is None else us)
        if not lo <= hi or (us is not None and not lo <= us <= hi):
            continue
        out_u[-1] = ua
        out_s.append(s[i] + sig), out_x.append(xs), out_u.append(float(lo if us is None else us))
        inserted.append(len(out_s) - 1)
    return np.array(out_s), np.maximum(np.array(out_x), 0.0), np.array(out_u), inserted


def time_optimal(robot, path, *, torque_limit=None, speed_limit=None, n: int = 1000,
                 solver: str = "reachability") -> CycleResult:
    """The time-optimal motion of ``robot`` along ``path`` (a :class:`pkm.planning.paths.Path`, a
    :class:`Route` or a sequence of paths, each run from rest to rest) under the actuators' torque and
    speed limits: ``torque_limit`` and ``speed_limit`` (one value for all actuators or one per
    actuator; motor side [N·m, rad/s] where the robot file has drives, else the joint-side actuator
    force and rate), by default the drives' ``peak_torque`` and ``max_speed``; plus the robot file's
    actuator velocity limits. ``n``: grid points in all (shared by the paths by length, at least 16 each).
    ``solver``: ``"reachability"`` (pkm's closed-form TOPP-RA, :mod:`pkm.planning.reachability`) or
    ``"toppra"`` (the optional ``toppra`` package on the same rows, :mod:`pkm.planning.toppra_solve`).

    The path is checked against the joint ranges first (:class:`pkm.LimitError`). Returns a
    :class:`pkm.planning.result.CycleResult` (trajectory, cycle time, picks per minute for a
    pick-and-place route, the active limit at each sample, the limit curve).

    >>> import pkm                                                     # doctest: +SKIP
    >>> from pkm.planning import pick_place_route
    >>> robot = pkm.load("examples/delta_servo.toml")
    >>> res = pkm.time_optimal(robot, pick_place_route(robot.spec.trajectory["start"]))
    >>> res.cycle_time, res.picks_per_minute
    """
    route = _route(path)
    counts = _points(n, route)
    if solver == "reachability":
        solve = reachability
    elif solver == "toppra":
        from pkm.planning.toppra_solve import toppra_reachability as solve
    else:
        raise InputError(f"solver must be 'reachability' or 'toppra', got {solver!r}")
    limits = resolve_limits(robot, torque_limit, speed_limit)
    gains = motor_gains(robot.drives, robot.n_act)
    pieces = []
    t0, s0 = 0.0, 0.0
    for k, (p, m) in enumerate(zip(route.paths, counts)):
        pd, prof, rows, xmax, iters = _solve_piece(robot, p, m, limits, gains, solve)
        s, x, u, inserted = _switches(pd, prof, rows, xmax, gains, robot.drives, limits)
        sd = np.sqrt(x)
        step = np.diff(s)
        denom = sd[:-1] + sd[1:]
        if np.any(denom <= 0):
            raise PkmError("the profile stands still between two samples: use more points (n)")
        t = np.concatenate([[0.0], np.cumsum(2.0 * step / denom)])
        X, D1, D2 = p.evaluate(s)
        pieces.append(PieceProfile(path=p, s=s + s0, s_local=s, t=t + t0, sd=sd, sdd=u, x=X, xd=D1 * sd[:, None],
                                   xdd=D1 * u[:, None] + D2 * x[:, None], grid_s=pd.s + s0, mvc=np.sqrt(prof.X[:, 1]),
                                   controllable=np.sqrt(prof.K[:, 1]), iterations=iters, inserted=tuple(inserted)))
        t0 += float(t[-1])
        s0 += p.length
    return CycleResult.assemble(robot, route, pieces, limits, gains)
