"""The drives' limits as rows ``A u + B x + C ≤ 0`` in ``u = s̈``, ``x = ṡ²`` at every path point.

* **Torque** (motor side where the robot has drives, else the joint-side actuator force):
  ``|τ_m| ≤ T`` per actuator, ``τ_m = k τ + m q̈`` (:class:`pkm.planning.coefficients.MotorGains`) with the
  gear's side (driving or braking, :meth:`pkm.description.drives.Drives.motor_torque`) and the actuated
  joints' friction ``f(q' ṡ)`` frozen at the previous profile (the solver iterates to a fixed point, at
  which the rows are exact): ``α u + β x + γ ∓ T ≤ 0`` with ``α = k a + m q'``, ``β = k b + m q''``,
  ``γ = k (c + f)``.
* **Between the samples** (the step from each point to the next run at the point's ``s̈``): the torque rows
  of the step's end (:func:`step_end_rows`), of points inside it (:func:`step_inside_rows`) and of the actuators'
  turns inside it (:func:`crossing_rows`).
* **Speed**: ``|n q' ṡ| ≤ W`` (motor speed; joint rate without drives) and the robot file's actuator
  velocity limits ``|q' ṡ| ≤ v``: ``x ≤ (W / |n q'|)²``.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from pkm.algorithms.limits import limit_table
from pkm.errors import InputError, PkmError
from pkm.planning.coefficients import path_dynamics, path_dynamics_at

#: The robot file's velocity limits are kept this fraction inside, so that inverse dynamics along the result
#: (which refuses any rate beyond them) replays it.
VELOCITY_MARGIN = 1e-9

__all__ = ["Limits", "resolve_limits", "torque_rows", "step_end_rows", "step_inside_rows", "turns", "turn_coefficients",
           "exact_turns", "crossing_rows", "speed_bound", "gear_sides"]


@dataclass(frozen=True, eq=False)
class Limits:
    """Per actuator (n_act,): ``torque`` (> 0), ``speed`` (> 0 or inf), ``side`` ("motor" or "joint"); the
    robot file's actuator ``velocity`` limits (joint side, inf where none) and their joint names."""

    torque: np.ndarray
    speed: np.ndarray
    side: str
    velocity: np.ndarray
    velocity_names: tuple


def _values(value, n_act: int, what: str, names) -> np.ndarray:
    try:
        v = np.array(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be numbers, got {value!r}") from None
    if v.size == 1:
        v = np.full(n_act, v[0])
    if v.size != n_act:
        raise InputError(f"{what} takes one value for all actuators or one per actuator ({n_act}: "
                         f"{', '.join(names)}), got {v.size}")
    if not np.all(np.isfinite(v)) or not np.all(v > 0):
        raise InputError(f"{what} must be positive and finite, got {' '.join(f'{a:g}' for a in v)}")
    return v


def resolve_limits(robot, torque_limit=None, speed_limit=None) -> Limits:
    """The limits of the parametrisation: ``torque_limit`` / ``speed_limit`` (one value or one per
    actuator; motor side where the robot has drives) or else the drives' ``peak_torque`` and
    ``max_speed``. A robot without drives needs ``torque_limit``; a drive without ``peak_torque``
    too (one-line PkmError); a missing ``max_speed`` leaves that speed unlimited."""
    names = list(robot.actuator_names)
    n = robot.n_act
    drives = robot.drives
    side = "motor" if drives is not None and bool(np.any(drives.has_drive)) else "joint"
    if torque_limit is not None:
        T = _values(torque_limit, n, "torque_limit", names)
    elif drives is None or not np.any(drives.has_drive):
        raise PkmError(f"{robot.name}: the robot file has no drives: give the actuators' torque limits "
                       f"(torque_limit, --torque-limit)")
    else:
        T = np.array(drives.peak_torque, dtype=float)
        missing = [names[k] for k in np.flatnonzero(~np.isfinite(T))]
        if missing:
            raise PkmError(f"{robot.name}: actuator {missing[0]} has no drive peak_torque: give the torque limits "
                           f"(torque_limit, --torque-limit)")
    if speed_limit is not None:
        W = _values(speed_limit, n, "speed_limit", names)
    elif drives is not None:
        W = np.where(np.isfinite(drives.max_speed), drives.max_speed, np.inf)
    else:
        W = np.full(n, np.inf)
    vel = np.full(n, np.inf)
    vnames = [""] * n
    for sp in limit_table(robot).speeds:   # 1e-9 inside: pkm's own check (check_limits) finds no rounding beyond
        if sp.vmax * (1 - VELOCITY_MARGIN) < vel[sp.column]:
            vel[sp.column], vnames[sp.column] = sp.vmax * (1 - VELOCITY_MARGIN), sp.joint
    return Limits(torque=T, speed=W, side=side, velocity=vel, velocity_names=tuple(vnames))


def gear_sides(pd, drives, x, u) -> np.ndarray:
    """True where the gear drives (``τ_load q̇ ≥ 0``, as :meth:`Drives.motor_torque` decides) at the profile
    ``x = ṡ²``, ``u = s̈`` (N,); (N, n_act). All True without drives."""
    if drives is None:
        return np.ones_like(pd.a, dtype=bool)
    sd = np.sqrt(np.maximum(x, 0.0))
    tau = pd.tau(drives, sd, u)
    load = tau - drives.reflected_inertia * (pd.dq * u[:, None] + pd.ddq * x[:, None])
    return load * (pd.dq * sd[:, None]) >= 0.0


def motor_coefficients(pd, gains, drives, x, sides):
    """``(α, β, γ)`` (N, n_act) of ``τ_m = α s̈ + β ṡ² + γ`` with the sides and friction frozen at ``x``."""
    k = np.where(sides, gains.k_drive, gains.k_brake)
    m = np.where(sides, gains.m_drive, gains.m_brake)
    f = pd.friction(drives, np.sqrt(np.maximum(x, 0.0)))
    return k * pd.a + m * pd.dq, k * pd.b + m * pd.ddq, k * (pd.c + f)


def torque_rows(pd, gains, drives, limits: Limits, x, sides):
    """Rows ``A u + B x + C ≤ 0`` (N, 2 n_act): ``τ_m ≤ T`` then ``−τ_m ≤ T`` per actuator."""
    al, be, ga = motor_coefficients(pd, gains, drives, x, sides)
    T = limits.torque
    return (np.concatenate([al, -al], axis=1), np.concatenate([be, -be], axis=1),
            np.concatenate([ga - T, -ga - T], axis=1))


def step_end_rows(rows, end, ds):
    """Each point's ``rows`` (A, B, C) with its step's end point's rows ``end`` added, for the step's ``s̈ = u_i``
    (TOPP-RA's "interpolation" discretisation, Pham & Pham 2018, Sec. III-D): at ``s_{i+1}`` the state is
    ``(u_i, x_i + 2Δ u_i)``, so ``A_{i+1} u_i + B_{i+1} x_{i+1} + C_{i+1} ≤ 0`` is the row ``(A_{i+1} + 2Δ B_{i+1},
    B_{i+1}, C_{i+1})`` at point ``i`` (the last point keeps its own rows twice); ``end``: the rows of every point
    with the gear's sides of the step arriving there (:func:`gear_sides` at ``(x_{i+1}, u_i)``). Checked at its
    start alone (collocation), the step's ``s̈`` let the motor torque at its end exceed the limit by 25–33 % at
    1000 points (the Delta with 400 W servos, pick-and-place: where ``ṡ²`` grows by a tenth in one step)."""
    A, B, C = (np.asarray(v, dtype=float) for v in rows)
    Ae, Be, Ce = (np.array(v, dtype=float) for v in end)
    ds = np.broadcast_to(np.asarray(ds, dtype=float), (A.shape[0] - 1,))[:, None]
    A2, B2, C2 = A.copy(), B.copy(), C.copy()
    A2[:-1], B2[:-1], C2[:-1] = Ae[1:] + 2.0 * ds * Be[1:], Be[1:], Ce[1:]
    return np.concatenate([A, A2], axis=1), np.concatenate([B, B2], axis=1), np.concatenate([C, C2], axis=1)


def step_inside_rows(rows, ds, frac: float):
    """The rows ``rows`` (A, B, C) (N−1, r) of a point inside each step, at ``frac`` of it, evaluated there (its own
    coefficients, in ``(s̈, ṡ²)`` there), as rows at each step's start point for its ``s̈ = u_i``: the state there
    is ``(u_i, x_i + 2 frac Δ u_i)``, so the row is ``(A + 2 frac Δ B, B, C)``; the last point (no step) gets
    ``0 ≤ −C`` rows that always hold. Between the step's ends the torques bend with the path's coefficients (a
    corner blend's curvature changes ``b`` by half in a step of 1000 points); held at the steps' ends alone they
    exceeded the limits by 0.14–0.16 % at 1000 points and 1.4 % at 400 (the Delta and the IRSBot-2 with servos),
    and with the midpoints too by 0.18 % where the torque leaves its limit rising (the Delta with a 50 N·m
    limit on the joints, 1000 points: the quarter points' rows)."""
    A, B, C = (np.asarray(v, dtype=float) for v in rows)
    ds = np.broadcast_to(np.asarray(ds, dtype=float), (A.shape[0],))[:, None]
    last = np.zeros((1, A.shape[1]))
    return (np.concatenate([A + 2.0 * frac * ds * B, last]), np.concatenate([B, last]),
            np.concatenate([C, -np.abs(C[-1:]) - 1.0]))


def _next(v):
    """Each point's next point's row of ``v`` (N, ...), the last point's own for the last."""
    return np.concatenate([v[1:], v[-1:]])


def turns(pd):
    """``(turn, φ)`` (N, n_act): where actuator ``j``'s ``q'`` changes sign inside the step from point ``i`` (it turns
    back there) and at which fraction of the step, ``φ = q'_i / (q'_i − q'_{i+1})`` (linear in ``q'``)."""
    n, m = pd.dq.shape
    turn = np.zeros((n, m), dtype=bool)
    if n >= 2:
        turn[:-1] = pd.dq[:-1] * pd.dq[1:] < 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        return turn, np.where(turn, pd.dq / (pd.dq - _next(pd.dq)), 0.0)


def turn_coefficients(pd, at=None):
    """The coefficients ``a, b, c, ddq`` (N, n_act) at the turns of :func:`turns` (elsewhere: anything) and the
    turns' fractions ``phi``: linear between the step's points, or where ``at`` is given (``(points, PathDynamics at
    the turns' path points, fractions)`` with ``points`` (T,) the row of each turn ``(i, j)`` in ``np.nonzero(turn)``
    order and ``fractions`` (T,) where in its step it is) computed there."""
    turn, phi = turns(pd)
    out = {k: (1.0 - phi) * getattr(pd, k) + phi * _next(getattr(pd, k)) for k in ("a", "b", "c", "ddq")}
    out["phi"] = phi
    if at is not None:
        rows, exact, fractions = at
        i, j = np.nonzero(turn)
        for k in ("a", "b", "c", "ddq"):
            out[k][i, j] = getattr(exact, k)[rows, j]
        out["phi"][i, j] = fractions
    return out


#: Where an actuator turns back: ``q'`` at the turn within this fraction of its values at the step's ends, in at
#: most :data:`TURN_STEPS` evaluations (Newton's steps with ``q''`` from the root of ``q'``'s cubic Hermite
#: interpolant over the step, kept inside the step's bracket of the root). ``q'`` is curved over a step: the linear root was 1.7 % of a step
#: late on the Delta with 400 W servos at 400 points (15 % at 200), where its motor torque falls by 6 % of the
#: limit per 1 % of the step just past the turn: the rows there held, and the torque at the true turn was 0.9 %
#: over (the jerk-limited programme at 1e6 m/s³). From the linear root Newton's steps took |q'| from 1e-2 to 1e-13
#: of its ends' in three evaluations; from the Hermite root one or two do. (1e-7: a turn within ~1e-7 of a step of
#: its place, where the torque moves by ~6 limits per step: 1e-6 of the limit.)
TURN_TOL, TURN_STEPS = 1e-7, 6


def _hermite_root(g0, g1, m0, m1, f):
    """The root in (0, 1) of the cubic Hermite interpolant of ``q'`` over each step (values ``g0, g1``, slopes
    ``m0, m1`` per unit fraction: ``q''`` at the step's ends), by Newton's method from ``f`` (the linear root), kept
    inside the bracket (0, 1): no inverse dynamics, ``O(Δs⁴)`` where the linear root is ``O(Δs²)``."""
    lo, hi = np.zeros_like(f), np.ones_like(f)
    for _ in range(8):
        t2, t3 = f * f, f * f * f
        h = (2 * t3 - 3 * t2 + 1) * g0 + (t3 - 2 * t2 + f) * m0 + (-2 * t3 + 3 * t2) * g1 + (t3 - t2) * m1
        dh = (6 * t2 - 6 * f) * (g0 - g1) + (3 * t2 - 4 * f + 1) * m0 + (3 * t2 - 2 * f) * m1
        f, lo, hi = _newton_in_bracket(f, h, dh, lo, hi, g0 < 0.0)
    return f


def _newton_in_bracket(f, g, dg, lo, hi, rising):
    """One Newton step ``f − g/g'`` per entry for a root of a function that ``rising`` (bool) through it, after
    ``[lo, hi]`` is narrowed to the side of ``f`` that holds the root; a step that leaves the bracket is a
    bisection. Returns ``(f, lo, hi)``."""
    below = (g < 0.0) == rising          # the root lies above f
    lo, hi = np.where(below, f, lo), np.where(below, hi, f)
    with np.errstate(divide="ignore", invalid="ignore"):
        step = f - g / dg
    return np.where((step > lo) & (step < hi), step, 0.5 * (lo + hi)), lo, hi


def exact_turns(robot, path, pd):
    """The actuators' turns inside the steps of ``pd`` on ``path`` (:func:`turns`) where ``q'`` is zero (Newton's
    method from :func:`_hermite_root`, safeguarded by bisection, to :data:`TURN_TOL`; each step a small batched
    inverse dynamics) and the coefficients computed there (:func:`turn_coefficients`; None where nothing turns)."""
    turn, phi = turns(pd)
    i, j = np.nonzero(turn)
    if i.size == 0 or robot.drives is None:
        return None
    ds = pd.s[i + 1] - pd.s[i]
    lo, hi, up = np.zeros(i.size), np.ones(i.size), pd.dq[i, j] < 0.0   # q' rises through the turn
    f = _hermite_root(pd.dq[i, j], pd.dq[i + 1, j], pd.ddq[i, j] * ds, pd.ddq[i + 1, j] * ds, phi[i, j])
    scale = np.maximum(np.abs(pd.dq[i, j]), np.abs(pd.dq[i + 1, j]))
    for k in range(TURN_STEPS):
        where, rows = np.unique(pd.s[i] + f * ds, return_inverse=True)
        exact = path_dynamics_at(robot, path, where, apart=True)
        g, dg = exact.dq[rows, j], exact.ddq[rows, j] * ds
        done = np.abs(g) <= TURN_TOL * scale
        if k == TURN_STEPS - 1 or np.all(done):
            break
        step, lo, hi = _newton_in_bracket(f, g, dg, lo, hi, up)
        f = np.where(done, f, step)
    return turn_coefficients(pd, (rows, exact, f))


#: The points inside each step (fractions of it) whose torque rows the profile keeps, besides its two ends.
INSIDE = (0.25, 0.5, 0.75)


def inside_coefficients(robot, path, pd, fractions=INSIDE):
    """The coefficients at the points ``fractions`` (:data:`INSIDE`) of every step of ``pd`` on ``path``, computed there (one
    batched inverse dynamics over them, step by step): interpolated from the step's ends and midpoint, the
    quarter points' ``b`` missed by 0.08 of 80 where the torque left its limit rising (the Delta with a 50 N·m
    joint limit, 1000 points), 0.15 % of the limit."""
    f = np.asarray(fractions)
    grid = (pd.s[:-1, None] + np.diff(pd.s)[:, None] * f).ravel()
    return path_dynamics(robot, path, grid.size, grid=grid)


def inner_points(inside, gains, limits, fractions=INSIDE):
    """The points inside the steps whose rows :func:`_rows` adds: ``(fraction, coefficients, speed bound)`` (N−1
    each) for each of ``fractions`` (:data:`INSIDE`), from :func:`inside_coefficients`; none without them."""
    if inside is None:
        return ()
    k = len(fractions)
    keys = ("s", "x", "dx", "ddx", "q", "dq", "ddq", "a", "b", "c")
    parts = [replace(inside, **{c: getattr(inside, c)[j::k] for c in keys}) for j in range(k)]
    return tuple((f, c, speed_bound(c, gains, limits)) for f, c in zip(fractions, parts))


def crossing_rows(pd, gains, drives, limits: Limits, ds, sides, at_turn: bool = False, coef=None):
    """Rows (N, 12 w) at each point for the step that starts there: where actuator ``j``'s ``q'`` changes sign
    inside the step (the actuator turns back: ``q̇ = q' ṡ`` passes zero whatever ``ṡ > 0``), its motor torque at
    the turn, just before it (Coulomb friction of the motion's sign there) and just after it (of the other sign):
    ``τ_m = k (a u + b x + c + f) + m q'' x`` with ``f`` either 0 or the full Coulomb force (the smooth Coulomb
    term ramps between them within ``coulomb_speed`` of the turn; viscous friction is 0 there), the coefficients
    at the turn ``φ = q'_i / (q'_i − q'_{i+1})`` of the step (``coef``; by default linear between its points),
    whose state is ``x_i + 2 φ Δ u_i``. The gear's side: for ``q̇ > 0`` the motor torque is the larger of the driving and the
    braking one (the smaller for ``q̇ < 0``), so its bound on that side is both rows (exact); the bound on the
    other side takes the side of the step's start (``sides[0]``, before the turn) or end (``sides[1]``, after
    it). ``w``: the most actuators turning in one step (0 where none turns on the path; the rows of a step with
    fewer read ``0 ≤ T``). ``at_turn``: the rows in ``(s̈, ṡ²)`` at the turn instead, and ``φ`` per row
    (A, B, C, φ), for a motion whose ``s̈`` varies in the step. Checked at the points alone, the motor torque
    just past a turn exceeded the limit by 42 % at every grid size (the Delta with 400 W servos, pick-and-place);
    with coefficients interpolated to the turn, by 0.12 % (IRSBot-2, 1000 points): ``coef``, those computed at
    the turns (:func:`exact_turns`)."""
    n, m = pd.dq.shape
    turn = turns(pd)[0]
    w = int(np.max(np.sum(turn, axis=1), initial=0)) if drives is not None else 0
    if w == 0:
        return (np.zeros((n, 0)),) * (4 if at_turn else 3)
    at = turn_coefficients(pd) if coef is None else coef
    phi = at["phi"]
    ds = np.append(np.broadcast_to(np.asarray(ds, dtype=float), (n - 1,)), 0.0)[:, None]
    T = np.broadcast_to(limits.torque, (n, m))
    A, B, C = (np.zeros((n, 12, m)) for _ in range(3))
    o = 0
    for side, q in ((sides[0], pd.dq), (_next(sides[1]), _next(pd.dq))):
        sg = np.sign(q)   # the convex side of the motor torque: +1 its upper bound, −1 its lower
        ks, ms = np.where(side, gains.k_drive, gains.k_brake), np.where(side, gains.m_drive, gains.m_brake)
        for f in (0.0, sg * drives.coulomb):
            for k, mm, sign in ((gains.k_drive, gains.m_drive, sg), (gains.k_brake, gains.m_brake, sg), (ks, ms, -sg)):
                al, be, ga = k * at["a"], k * at["b"] + mm * at["ddq"], k * (at["c"] + f)
                A[:, o] = np.where(turn, sign * (al + (0.0 if at_turn else 2.0 * phi * ds * be)), 0.0)
                B[:, o] = np.where(turn, sign * be, 0.0)
                C[:, o] = np.where(turn, sign * ga - T, -T)
                o += 1
    pick = np.argsort(~turn, axis=1, kind="stable")[:, None, :w]   # the turning actuators first
    out = (A, B, C, np.broadcast_to(phi[:, None, :], A.shape)) if at_turn else (A, B, C)
    return tuple(np.take_along_axis(v, pick, axis=2).reshape(n, 12 * w) for v in out)


def speed_bound(pd, gains, limits: Limits) -> np.ndarray:
    """``x̄`` (N,): the largest ``ṡ²`` the speed and velocity limits allow at each point (inf: none)."""
    with np.errstate(divide="ignore"):
        w = np.abs(pd.dq * gains.ratio)
        a = np.where(np.isfinite(limits.speed), (limits.speed / w) ** 2, np.inf)
        v = np.where(np.isfinite(limits.velocity), (limits.velocity / np.abs(pd.dq)) ** 2, np.inf)
    out = np.min(np.minimum(a, v), axis=1)
    if np.any(np.isnan(out)):
        raise PkmError("the speed limits are not defined along the path (NaN)")
    return out


def exact_u_interval(point, gains, drives, limits: Limits, x: float, u_ref: float):
    """The exact admissible ``s̈`` at one point and ``x = ṡ²`` with each gear side where it holds (not frozen):
    the interval around ``u_ref`` (or the lowest one if ``u_ref`` is None) of ``{u : |τ_m(u)| ≤ T}`` for all
    actuators, ``point`` a dict of the coefficients ``a, b, c, dq, ddq`` (n_act,). Per actuator and side
    the motor torque is affine in u and the side a half-line of u, so the set is a union of intervals."""
    a, b, c, dq, ddq = (np.asarray(point[k], dtype=float) for k in ("a", "b", "c", "dq", "ddq"))
    sd = np.sqrt(max(x, 0.0))
    f = np.zeros_like(a) if drives is None else drives.friction(dq * sd)
    beta0 = b * x + c + f
    R = np.zeros_like(a) if drives is None else drives.reflected_inertia
    lam, mu = a - R * dq, beta0 - R * ddq * x       # load = lam u + mu
    qd = dq * sd
    T = limits.torque
    pieces = []   # per actuator: list of (lo, hi)
    for j in range(a.size):
        ivs = []
        for side, (k, m) in (("drive", (gains.k_drive[j], gains.m_drive[j])), ("brake", (gains.k_brake[j], gains.m_brake[j]))):
            al, ga = k * a[j] + m * dq[j], k * beta0[j] + m * ddq[j] * x
            lo, hi = _affine_band(al, ga, T[j])
            # side condition: load·q̇ ≥ 0 (drive) or < 0 (brake), load·q̇ = (lam q̇) u + mu q̇
            p, r = lam[j] * qd[j], mu[j] * qd[j]
            if side == "brake":
                p, r = -p, -r
            if p > 0:
                lo = max(lo, -r / p)
            elif p < 0:
                hi = min(hi, -r / p)
            elif r < 0 or (side == "brake" and r == 0):
                lo, hi = np.inf, -np.inf
            if lo <= hi:
                ivs.append((lo, hi))
        pieces.append(_merge(ivs))
    cur = [(-np.inf, np.inf)]
    for ivs in pieces:
        cur = _merge([(max(l1, l2), min(h1, h2)) for l1, h1 in cur for l2, h2 in ivs if max(l1, l2) <= min(h1, h2)])
    if not cur:
        return np.inf, -np.inf
    if u_ref is None:
        return cur[0]
    return min(cur, key=lambda iv: 0.0 if iv[0] <= u_ref <= iv[1] else min(abs(iv[0] - u_ref), abs(iv[1] - u_ref)))


def _affine_band(al, ga, T):
    """``{u : |al u + ga| ≤ T}`` as (lo, hi)."""
    if al > 0:
        return (-T - ga) / al, (T - ga) / al
    if al < 0:
        return (T - ga) / al, (-T - ga) / al
    return (-np.inf, np.inf) if abs(ga) <= T else (np.inf, -np.inf)


def _merge(ivs):
    ivs = sorted(ivs)
    out = []
    for lo, hi in ivs:
        if out and lo <= out[-1][1] + 1e-12 * max(1.0, abs(lo)):
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out
