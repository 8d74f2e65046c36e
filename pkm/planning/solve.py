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
``s̈`` lies strictly between its bounds), a sample is added at the switching point ``s*``: the largest
admissible ``s̈`` from ``s_i`` up to ``s*``, found by regula falsi so that braking from ``s*`` to
``x_{i+1}`` needs exactly the least admissible ``s̈`` there (coefficients interpolated linearly between
the grid points for the search, then the switching sample's braking bound from its own coefficients, one
more inverse dynamics), or ``s*`` on the speed limit where the acceleration reaches it first. The bounds at
the switch are the exact ones (each gear side where it holds), at both ends of both of its steps.

**Between the samples** ``s̈`` is constant on each step (TOPP-RA's steps: ``ṡ²`` linear in ``s``). The rows hold
the limits at both ends of every step (:func:`pkm.planning.constraints.step_end_rows`, TOPP-RA's
"interpolation" discretisation), a quarter, half and three quarters into it (:func:`inner_points`,
:func:`pkm.planning.constraints.step_inside_rows`, from the coefficients there: one more batched inverse dynamics)
and where an actuator turns back inside a step (the
gear's side and Coulomb friction flip there: :func:`pkm.planning.constraints.crossing_rows`), so every step
meets a limit at one of its ends or at a turn: bang–bang. Elsewhere inside a step the torques differ from the
rows' by the discretisation's error, which :class:`CycleResult` measures (``between_ratio``; a RuntimeWarning
above 1 %): on the Delta and the IRSBot-2 with servos 0.01 % over the limit at 1000 points, 0.1–0.5 % at
400. (Checked at the samples alone, the torques at the steps' ends exceeded the limits by up to 33 % and past
a turn by 42 % at any grid size.)
The cycle time converges from above, as ``1/N``: 0.2442 s at 1000 points, 0.2430 s at 3000, 0.2422 s at 16000.

**Jerk limit** (``jerk=J``): bang–bang ``s̈`` has unbounded jerk, so a jerk-limited motion is solved instead by
the sequential linear programme of :mod:`pkm.planning.jerk` on the same coefficients and limits (its module
docstring defines the limit: every task coordinate's sample-to-sample jerk), and its output checked.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from pkm.errors import InputError, PkmError

from pkm.planning.jerk import MAX_POINTS as MAX_JERK_POINTS, check_jerk, check_jerk_value, jerk_piece
from pkm.planning.coefficients import motor_gains, path_dynamics, path_dynamics_at
from pkm.planning.constraints import (INSIDE, crossing_rows, exact_turns, exact_u_interval, gear_sides, inner_points,
                                     inside_coefficients, resolve_limits, speed_bound, step_end_rows, step_inside_rows,
                                     torque_rows)
from pkm.planning.paths import Path, Route
from pkm.planning.reachability import _split, reachability, u_bounds
from pkm.planning.result import CycleResult, PieceProfile, profile_times

__all__ = ["Route", "time_optimal"]

#: Outer iterations (friction and gear side frozen) before giving up.
MAX_ITERATIONS = 40
#: Convergence of the outer iteration: largest change of ṡ relative to max ṡ.
TOLERANCE = 1e-9
#: Smallest and largest number of grid points.
MIN_POINTS, MAX_POINTS = 16, 100_000


def check_robot(robot) -> None:
    """A one-line InputError unless ``robot`` is a loaded robot (``pkm.load(path)``), e.g. its file's path."""
    if not all(hasattr(robot, k) for k in ("inverse_dynamics", "actuator_names", "task", "drives")):
        raise InputError(f"robot must be a pkm.Robot (robot = pkm.load(path)), got {type(robot).__name__}"
                         + (f" {robot!r}" if isinstance(robot, str) else ""))


def _route(path) -> Route:
    if isinstance(path, Route):
        return path
    if isinstance(path, Path):
        return Route((path,))
    if isinstance(path, (list, tuple)) and path and all(isinstance(p, Path) for p in path):
        return Route(tuple(path))
    raise InputError(f"path must be a pkm.planning Path, Route or a sequence of Paths, got {type(path).__name__}")


#: A route's paths must join: each one's end within this distance (relative to the route's extent, at least 1e-12)
#: of the next one's start. Paths 0.2 m apart were run as one route, the platform jumping the gap in one sample.
JOIN_TOL = 1e-9


def _points(n, route: Route) -> list[int]:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not MIN_POINTS <= n <= MAX_POINTS:
        raise InputError(f"n must be an integer from {MIN_POINTS} to {MAX_POINTS}, got {n!r}")
    lengths = np.array([p.length for p in route.paths])
    if lengths.size == 0 or not np.all(np.isfinite(lengths) & (lengths > 0)):
        raise InputError(f"a route needs at least one path, each of a positive finite length, got lengths "
                         f"{' '.join(f'{v:g}' for v in lengths) or 'none'}")
    ends = [(p.evaluate([0.0])[0][0], p.evaluate([p.length])[0][0]) for p in route.paths]
    extent = max(float(np.max(np.abs(np.concatenate([np.r_[a, b] for a, b in ends])))), 1e-3)
    for k in range(len(ends) - 1):
        gap = float(np.max(np.abs(ends[k][1] - ends[k + 1][0])))
        if not gap <= JOIN_TOL * extent:
            raise InputError(f"path {k + 2} of the route does not start where path {k + 1} ends (a gap of {gap:.3g} "
                             f"in the task coordinates): a route's paths must join")
    rel = lengths / lengths.max()   # (n · length overflows for a path of 1e308 m)
    share = np.maximum(MIN_POINTS, np.round(n * (rel / rel.sum()))).astype(int)
    return [int(k) for k in share]


def _check_pieces(path, n: int, jerk: bool = False) -> None:
    """A one-line InputError where a corner blend of ``path`` (:meth:`pkm.planning.paths.Path.blends`) is too short.

    Without a jerk limit: shorter than one step of its ``n``-point grid. The turn falls between the samples and the
    points checked inside the steps: a 0.1 µm blend gave the Delta a cycle 29 % faster than with sharp corners, its
    torque in that step 2.8e5 times the peak, printed as 100.27 %.

    With one (``jerk``): shorter than a step of the finest jerk-limited grid (:data:`pkm.planning.jerk.MAX_POINTS`
    uniform points, whatever ``n``: the jerk grid has points on the blend's ends and at least ``PIECE_STEPS`` steps
    in it, :func:`pkm.planning.jerk.path_grid`, so coarse grids pass ordinary blends). The sequential LP stalls on
    sharper turns, its linearised jerk rows holding only in vanishing trust regions there, and reported the stall
    as optimal: the Delta's pick-and-place at 1e4 m/s³ took 6.1 s with a 0.1 µm blend at 200 points, 3.8 / 1.9 /
    0.90 s with a 1 µm blend at 200 / 60 / 1000 points, against 0.39 s with a stop at each corner and 0.42 s with
    10 or 100 µm blends at 60 points (measured; the bound here, 71 µm on that path, is the conservative side of it)."""
    step = path.length / ((MAX_JERK_POINTS if jerk else n) - 1)
    blends = np.asarray(path.blends(), dtype=float).reshape(-1, 2)
    short = np.flatnonzero(blends[:, 1] - blends[:, 0] < step)
    if not short.size:
        return
    a, b = blends[int(short[0])]
    what = f"a corner blend of the path (s = {a:.4g} to {b:.4g}, {b - a:.3g} long) is shorter than the"
    if jerk:
        raise InputError(f"{what} finest jerk-limited grid's step ({step:.3g}): the jerk-limited programme cannot "
                         f"pass so sharp a turn; use a blend of at least {step:.2g} or sharp corners (blend 0: a "
                         f"stop at each)")
    need = int(np.ceil(path.length / (b - a))) + 1 if b > a else None
    raise InputError(f"{what} grid's step ({step:.3g}): the turn would fall between the samples; use a larger blend"
                     + (f" or more points (at least {need} on this path)" if need and need <= MAX_POINTS else ""))


def _solve_piece(robot, path, n, limits, gains, solve=reachability):
    """The coefficients and :func:`profile`'s results."""
    pd = path_dynamics(robot, path, n)
    return (pd, *profile(pd, robot.drives, limits, gains, solve, inside_coefficients(robot, path, pd),
                         exact_turns(robot, path, pd)))


def profile(pd, drives, limits, gains, solve=reachability, inside=None, turn_coef=None):
    """The time-optimal profile on the coefficients ``pd`` (:class:`pkm.planning.coefficients.PathDynamics`):
    the outer iteration of the module docstring around ``solve`` (rows, speed bound, step → Profile); ``inside``:
    the coefficients inside the steps (:func:`inside_coefficients`; their rows: :func:`inner_points`), or None;
    ``turn_coef``: those at the actuators' turns (:func:`exact_turns`), or None (interpolated). Returns the
    Profile, its final rows, the speed bound, the number of iterations and the speed bounds inside the steps
    (N−1, len(INSIDE); None without ``inside``)."""
    n = pd.s.size
    ds = pd.s[1] - pd.s[0]
    xmax = speed_bound(pd, gains, limits)
    x = np.zeros(n)
    u = np.zeros(n)
    inner = inner_points(inside, gains, limits)
    sides = _sides(pd, drives, x, u, inner)
    nonlinear = drives is not None and bool(np.any(drives.viscous) or np.any(drives.coulomb)
                                            or np.any(drives.efficiency < 1))
    for it in range(1, MAX_ITERATIONS + 1):
        A, B, C = _rows(pd, gains, drives, limits, x, sides, ds, inner, turn_coef)
        prof = solve(A, B, C, xmax, ds)
        new_sides = _sides(pd, drives, prof.x, prof.u, inner)
        sd_old, sd_new = np.sqrt(x), np.sqrt(prof.x)
        change = float(np.max(np.abs(sd_new - sd_old))) / max(float(np.max(sd_new)), 1e-300)
        x, u = prof.x, prof.u
        same = all(np.array_equal(a, b) for a, b in zip(new_sides, sides))
        sides = new_sides
        if (change <= TOLERANCE or not nonlinear) and same:
            break   # (without friction and efficiency nothing depends on the profile: the first solve is exact)
    else:
        raise PkmError(f"the time-optimal profile did not settle in {MAX_ITERATIONS} iterations (friction "
                       f"and gear efficiency frozen at the previous profile; the gears' driving and braking sides "
                       f"{'still change' if not same else 'settled'}): use more points (a coarse grid's long steps "
                       f"can keep the iteration from settling)")
    xin = np.column_stack([xb for _, _, xb in inner]) if inner else None
    return prof, _rows(pd, gains, drives, limits, x, sides, ds, inner, turn_coef), xmax, it, xin


def _inside_x(x, f):
    """``ṡ²`` at the fraction ``f`` of each step (linear in ``s`` for a constant ``s̈``) (N−1,)."""
    return x[:-1] + f * (x[1:] - x[:-1])


def _sides(pd, drives, x, u, inner=()):
    """The gear's sides at each point (its own ``s̈``), at each point as the end of the step arriving there (the
    step's ``s̈``), then at the points inside the steps (:func:`inner_points`): the rows' sides in :func:`_rows`."""
    return (gear_sides(pd, drives, x, u), gear_sides(pd, drives, x, np.r_[u[:1], u[:-1]]),
            *(gear_sides(c, drives, _inside_x(x, f), u[:-1]) for f, c, _ in inner))


def _rows(pd, gains, drives, limits, x, sides, ds, inner=(), turn_coef=None):
    """The torque rows of the steps (:mod:`pkm.planning.constraints`): at each point, at its step's end, at the
    points inside it (:func:`inner_points`; their speed limits too, ``x_i + 2 f Δ u_i ≤ x̄``: 0.22 % over between
    the samples without) and where an actuator turns back inside it."""
    rows = [step_end_rows(torque_rows(pd, gains, drives, limits, x, sides[0]),
                          torque_rows(pd, gains, drives, limits, x, sides[1]), ds),
            crossing_rows(pd, gains, drives, limits, ds, sides, coef=turn_coef)]
    for (f, c, xb), sd in zip(inner, sides[2:]):
        rows.append(step_inside_rows(torque_rows(c, gains, drives, limits, _inside_x(x, f), sd), ds, f))
        rows.append(step_inside_rows((np.zeros((xb.size, 1)), np.ones((xb.size, 1)), -xb[:, None]), ds, f))
    return tuple(np.concatenate([r[k] for r in rows], axis=1) for k in range(3))


#: A switching sample closer than this fraction of its step to the step's start or end is left out (the step keeps
#: the profile's own s̈, within its rows): one 5e-10 m from a grid point (2000 points on a 0.2 m line) made a
#: sub-step of 5e-10 s, refused as "motions faster than 1e-9 s per grid step".
SWITCH_MARGIN = 1e-3


def _switches(pd, prof, rows, xmax, gains, drives, limits, xin=None):
    """Samples ``(s, x, u)`` of the piece with the switching points added (module docstring); the bounds
    there are the exact ones (each gear side where it holds: :func:`exact_u_interval`), at both ends of
    each of the two steps the switch makes of one (as the rows' step ends, :func:`step_end_rows`): the
    accelerating step's ``s̈`` within the bounds at ``s_i`` and at the switch ``s*`` (its state
    ``x_i + 2 (s* − s_i) s̈``), the braking step's within the bounds at ``s*`` and at ``s_{i+1}``.
    Also returns, per inserted sample, the braking step's bounds at its end ``(lo, hi)``. ``xin`` (N−1, k): the
    speed bounds inside the steps (:data:`INSIDE`); a step on the speed limit at its end or inside (its ``s̈`` held
    by the speed there) is no switch."""
    A, B, C = rows
    Lp, Lr, Up, Ur, _, _ = _split(A, B, C)
    s, x, u = pd.s, prof.x, prof.u
    n = s.size
    ds = s[1] - s[0]
    L, U = u_bounds(Lp, Lr, Up, Ur, x)
    coef = {k: getattr(pd, k) for k in ("a", "b", "c", "dq", "ddq")}
    out_s, out_x, out_u, inserted, on_speed, before, ends = [], [], [], [], [], {}, {}
    for i in range(n):
        out_s.append(s[i]), out_x.append(x[i]), out_u.append(u[i])
        if i == n - 1:
            break
        width = U[i] - L[i]
        if not ((U[i] - u[i] > 1e-6 * width) and (u[i] - L[i] > 1e-6 * width) and x[i] < xmax[i] * (1 - 1e-9)):
            continue
        near = 1.0 - 1e-4   # (a speed within 5e-5 of its limit: that limit is the step's active one)
        if x[i + 1] >= xmax[i + 1] * near or (xin is not None and np.any(
                x[i] + 2.0 * np.asarray(INSIDE) * ds * u[i] >= xin[i] * near)):
            continue   # on the speed limit in the step: no switch
        ua = exact_u_interval({k: v[i] for k, v in coef.items()}, gains, drives, limits, x[i], u[i])[1]
        if not (np.isfinite(ua) and ua > u[i]):
            continue
        end = exact_u_interval({k: v[i + 1] for k, v in coef.items()}, gains, drives, limits, x[i + 1], u[i])

        def at(sig):
            w = sig / ds
            return {k: (1 - w) * v[i] + w * v[i + 1] for k, v in coef.items()}

        def accel(sig):
            """The accelerating step's s̈ from s_i to s_i + sig: ``ua``, lowered to the bound at its end."""
            a = ua
            for _ in range(8):   # the end's state moves with a by 2 sig: a contraction on a fine grid
                hi = exact_u_interval(at(sig), gains, drives, limits, x[i] + 2.0 * sig * a, a)[1]
                if not np.isfinite(hi):
                    return np.nan   # nothing admissible there
                if hi >= a * (1 - 1e-12) - 1e-300:
                    break
                a = hi
            return a

        with np.errstate(invalid="ignore"):   # (no speed limit: inf − inf, and the limit is never reached)
            slope = (xmax[i + 1] - xmax[i]) / ds
        hit = (xmax[i] - x[i]) / (2.0 * ua - slope) if 2.0 * ua - slope > 0 else np.inf   # reaches the speed limit

        def gap(sig):
            """(needed − least admissible) deceleration from the switch at s_i + sig to x_{i+1}: admissible at
            the switch and at s_{i+1}."""
            a = accel(sig)
            if not np.isfinite(a):
                return -np.inf, np.nan, np.nan, a   # (the switch is earlier)
            xs = x[i] + 2.0 * sig * a
            need = (x[i + 1] - xs) / (2.0 * (ds - sig))
            lo = exact_u_interval(at(sig), gains, drives, limits, xs, need)[0]
            return need - max(lo, end[0]), xs, need, a

        lo_s, hi_s = 0.0, min(ds * (1 - 1e-9), hit)
        g_hi = gap(hi_s)
        if g_hi[0] > 0.0:
            if hit >= ds * (1 - 1e-9):
                continue
            sig, (_, xs, us, a) = hi_s, g_hi    # on the speed limit: the speed is the active limit
            on_speed.append(len(out_s))
        else:
            sig = _switch_point(lambda v: gap(v)[0], lo_s, hi_s, gap(lo_s)[0], g_hi[0], 1e-12 * ds)
            _, xs, us, a = gap(sig)
        if not SWITCH_MARGIN * ds < sig < (1 - SWITCH_MARGIN) * ds or not a > u[i]:
            continue   # the switch is at a grid point: its own s̈ is at a bound already
        before[len(out_s)] = out_u[-1]
        out_u[-1] = a
        out_s.append(s[i] + sig), out_x.append(xs), out_u.append(float(us))
        inserted.append(len(out_s) - 1)
        ends[len(out_s) - 1] = end
    return np.array(out_s), np.maximum(np.array(out_x), 0.0), np.array(out_u), inserted, on_speed, before, ends


def _switch_point(f, lo, hi, f_lo, f_hi, tol):
    """The switch: ``s`` in ``[lo, hi]`` within ``tol`` of where ``f`` (the braking gap) passes from ``> 0`` at ``lo``
    to ``≤ 0`` at ``hi``, the end where ``f ≤ 0`` (braking admissible). Regula falsi with the Illinois rule
    (bisection where a value is not finite): 10–20 evaluations of ``f`` where bisection to the same ``tol``
    took 40 (each one or two exact bounds, :func:`exact_u_interval`)."""
    side = 0
    for _ in range(200):
        if not hi - lo > tol:
            break
        m = 0.5 * (lo + hi)
        if np.isfinite(f_lo) and np.isfinite(f_hi) and f_lo != f_hi:
            m = hi - f_hi * (hi - lo) / (f_hi - f_lo)
            if not lo < m < hi:
                m = 0.5 * (lo + hi)
        fm = f(m)
        if fm > 0.0:
            lo, f_lo = m, fm
            f_hi, side = (0.5 * f_hi if side == -1 else f_hi), -1
        else:
            hi, f_hi = m, fm
            f_lo, side = (0.5 * f_lo if side == 1 else f_lo), 1
    return hi


def time_optimal(robot, path, *, torque_limit=None, speed_limit=None, n: int = 1000,
                 solver: str = "reachability", jerk=None) -> CycleResult:
    """The time-optimal motion of ``robot`` along ``path`` (a :class:`pkm.planning.paths.Path`, a
    :class:`Route` or a sequence of paths, each run from rest to rest) under the actuators' torque and
    speed limits: ``torque_limit`` and ``speed_limit`` (one value for all actuators or one per
    actuator; motor side [N·m, rad/s] where the robot file has drives, else the joint-side actuator
    force and rate), by default the drives' ``peak_torque`` and ``max_speed``; plus the robot file's
    actuator velocity limits. ``n``: grid points in all (shared by the paths by length, at least 16 each).
    ``solver``: ``"reachability"`` (pkm's closed-form TOPP-RA, :mod:`pkm.planning.reachability`) or
    ``"toppra"`` (the optional ``toppra`` package on the same rows, :mod:`pkm.planning.toppra_solve`).

    ``jerk``: a limit ``J`` > 0 [m/s³; rad/s³ for angles] of EVERY task coordinate's jerk, measured on the
    result's samples as ``|ẍ_i(t_{k+1}) − ẍ_i(t_k)| ≤ J (t_{k+1} − t_k)`` (→ ``|x⃛_i|`` as ``n`` grows), the motion
    leaving and reaching rest with zero acceleration: solved by pkm's sequential linear programme
    (:mod:`pkm.planning.jerk`, the convex–concave procedure on Verscheure et al.'s convex formulation; not
    TOPP-RA, which gives bang–bang ``s̈`` with unbounded jerk), then the jerk of the output trajectory checked
    (a one-line PkmError beyond ``1 + 1e-3`` of ``J``). ``None``: no jerk limit (bang–bang).

    The path is checked against the joint ranges first (:class:`pkm.LimitError`). Returns a
    :class:`pkm.planning.result.CycleResult` (trajectory, cycle time, picks per minute for a
    pick-and-place route, the active limit at each sample, the limit curve).

    Example (the Delta with 400 W servos, the standard cycle from the robot file's pick point)::

        import pkm
        from pkm.planning import pick_place_route
        robot = pkm.load("examples/delta_servo.toml")
        res = pkm.time_optimal(robot, pick_place_route(robot.spec.trajectory["start"]))
        res.cycle_time, res.picks_per_minute      # 0.244 s, 246 picks per minute
    """
    check_robot(robot)
    route = _route(path)
    counts = _points(n, route)
    jerk = check_jerk_value(jerk)
    if jerk is not None and n > MAX_JERK_POINTS:
        raise InputError(f"with a jerk limit n must be at most {MAX_JERK_POINTS} (each iteration solves a linear "
                         f"programme over all grid points; 4000 take about a minute), got {n}")
    if jerk is not None and solver != "reachability":
        raise InputError(f"a jerk limit is solved by pkm's own sequential LP: solver must be 'reachability' "
                         f"(the default), got {solver!r}")
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
        _check_pieces(p, m, jerk is not None)
        if jerk is not None:
            pieces.append(jerk_piece(robot, p, m, limits, gains, jerk, s0, t0))
            t0 = float(pieces[-1].t[-1])
            s0 += p.length
            continue
        pd, prof, rows, xmax, iters, xin = _solve_piece(robot, p, m, limits, gains, solve)
        s, x, u, inserted, on_speed, before, ends = _switches(pd, prof, rows, xmax, gains, robot.drives, limits, xin)
        if inserted:   # the switching samples' bounds again from their own coefficients (not interpolated)
            at = path_dynamics_at(robot, p, s[inserted], apart=True)
            drop = []
            for j, k in enumerate(inserted):
                point = {c: getattr(at, c)[j] for c in ("a", "b", "c", "dq", "ddq")}
                # the accelerating step's end: its s̈ within the switch's own bound
                u[k - 1] = min(u[k - 1], exact_u_interval(point, gains, robot.drives, limits, x[k], u[k - 1])[1])
                lo, hi = exact_u_interval(point, gains, robot.drives, limits, x[k], u[k])
                lo, hi = max(lo, ends[k][0]), min(hi, ends[k][1])   # and the braking step's end
                if lo <= hi and u[k - 1] > before[k]:   # braking from the switch at its limit (on the speed
                    # limit: kept within)
                    u[k] = min(max(u[k], lo), hi) if k in on_speed else lo
                else:          # beyond the true limit curve there (a coarse grid's interpolation): left out
                    drop.append(k)
                    u[k - 1] = before[k]
            keep = np.setdiff1d(np.arange(s.size), drop)
            s, x, u = s[keep], x[keep], u[keep]
            inserted = [k - sum(d < k for d in drop) for k in inserted if k not in drop]
        sd, t = profile_times(s, x, p.length, floor=1e-9)
        X, D1, D2 = p.evaluate(s)
        pieces.append(PieceProfile(path=p, s=s + s0, s_local=s, t=t + t0, sd=sd, sdd=u, x=X, xd=D1 * sd[:, None],
                                   xdd=D1 * u[:, None] + D2 * x[:, None], grid_s=pd.s + s0, mvc=np.sqrt(prof.X[:, 1]),
                                   controllable=np.sqrt(prof.K[:, 1]), iterations=iters, inserted=tuple(inserted)))
        t0 += float(t[-1])
        s0 += p.length
    res = CycleResult.assemble(robot, route, pieces, limits, gains)
    if jerk is None:
        return res
    return replace(res, jerk_limit=jerk, jerk_ratio=check_jerk(res, jerk))
