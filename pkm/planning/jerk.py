"""Jerk-limited time-optimal path parametrisation: a sequential linear programme on the path grid.

**The jerk limit.** ``J`` bounds the jerk of EVERY task coordinate of the result, measured on its samples:

    |ẍ_i(t_{k+1}) − ẍ_i(t_k)| ≤ J (t_{k+1} − t_k)      for every coordinate i and step k,

the finite-difference jerk of the trajectory's accelerations (what a controller that interpolates the samples'
accelerations linearly commands; as the grid is refined it tends to ``|x⃛_i| = |x'_i s⃛ + 3 x''_i ṡ s̈ + x'''_i ṡ³|``)
[m/s³ for positions, rad/s³ for angles]. The motion starts and ends at rest with zero acceleration (``s̈ = 0``
at both ends of each rest-to-rest path), so a route of such paths is jerk-limited across its stops too.

**Discretisation** (that of the convex time-optimal formulation of D. Verscheure, B. Demeulenaere, J. Swevers,
J. De Schutter, M. Diehl, "Time-optimal path tracking for robots: a convex optimization approach", IEEE TAC
54(10), 2009): on the grid ``s_0 < … < s_{N−1}`` (:func:`path_grid`: steps ``Δ_k`` uniform on each piece of
the path with a point on every join, halved towards the rest points) the variables ``x_k = ṡ_k²`` and ``u_k = s̈_k``
with ``x_{k+1} = x_k + Δ_k (u_k + u_{k+1})`` (``s̈`` linear in ``s`` on a step), the step's time
``Δt_k = 2Δ_k / (√x_k + √x_{k+1})`` (the step run at its mean ``s̈``) and the traversal time ``T(x) = Σ Δt_k``,
convex in ``x``. At each sample ``ẍ_k = x'_k u_k + x''_k x_k`` is linear in ``(x, u)``; the speed limits are
``x ≤ x̄`` (:func:`pkm.planning.constraints.speed_bound`), the torque limits rows ``A u + B x + C ≤ 0``
(:func:`motor_rows`: an inner approximation exact at the iterate, the gear's driving/braking sides as a max or
min of two affine torques; the actuated joints' friction frozen at the iterate) at the grid points, at every
eighth of each step (their own coefficients, :data:`pkm.planning.jerk_rows.JERK_INSIDE`;
the state ``x_k + Δ_k f ((2 − f) u_k + f u_{k+1})``, ``(1 − f) u_k + f u_{k+1}``; the speed limits there too) and
where an actuator turns back inside a step (:func:`pkm.planning.constraints.crossing_rows`), and the jerk rows read

    ± (ẍ_{k+1,i} − ẍ_{k,i}) ≤ g(x_k, x_{k+1}) = 2 J Δ_k / (√x_k + √x_{k+1}),

and the same rows between the points at every eighth of each step, the step's time shared in proportion
(:mod:`pkm.planning.jerk_rows`; their ``ẍ`` from the path's ``x'``, ``x''`` there and the state of the torque rows):
bounded at the samples alone, the jerk inside a corner blend's steps reached 7× the limit at 40 points (the
difference of the samples' accelerations averages its peak away, where the blend's ``x‴`` jumps) and the cycle came
out up to 15 % short of a fine grid's (the Delta with 400 W servos, 5e3 m/s³); with them it agrees from 40 to 1000
points to 0.5 % (with quarters, 2 %). On a line the rows inside are the step's own. ``g`` is CONVEX: replaced by its tangent plane at the previous iterate (which lies below ``g``), each linear
programme's feasible set is inside the true one — the convex–concave procedure (T. Lipp, S. Boyd,
"Variations and extension of the convex–concave procedure", Optim. Eng. 17, 2016), so every iterate meets
the jerk limit. The objective is ``T`` linearised at the previous iterate with a relative trust region on
``x``; a step is taken where it shortens the true ``T`` (else the region shrinks), until ``T`` settles.
Each linear programme is solved by HiGHS (``scipy.optimize.linprog``), sparse, ``2N`` variables.

The start: a third-order S-curve's ``s̈`` (rest to rest, zero acceleration at both ends), scaled down until
every limit holds. The result is checked afterwards on the output trajectory, independently of these variables:
the torques by :meth:`CycleResult.assemble` and the jerk by :func:`check_jerk` (a one-line PkmError beyond
``1 + 1e-3`` of a limit).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pkm.errors import InputError, PkmError

from pkm.planning.coefficients import path_dynamics
from pkm.planning.jerk_rows import JERK_INSIDE, jerk_ratio, jerk_rows
from pkm.planning.constraints import (crossing_rows, exact_turns, gear_sides, inner_points, inside_coefficients,
                                     motor_coefficients, speed_bound)
from pkm.planning.reachability import static_sets
from pkm.planning.result import PieceProfile, profile_times

__all__ = ["JerkProfile", "jerk_profile", "jerk_piece", "motor_rows", "graded_grid", "path_grid", "traversal_time", "check_jerk",
           "check_jerk_value"]

#: Stop when an accepted step shortens the traversal time by less than this fraction …
TOLERANCE = 1e-7
#: … or the trust region (a fraction of each x) has shrunk below this.
MIN_REGION = 1e-6
#: Most linear programmes per path.
MAX_ITERATIONS = 400
#: Most grid points (a linear programme over all of them per iteration; 4000 take about a minute).
MAX_POINTS = 5000
#: The result is refused where its measured jerk exceeds the limit by more than this.
OVERSHOOT = 1e-3


@dataclass(frozen=True, eq=False)
class JerkProfile:
    """``x = ṡ²``, ``u = s̈`` (N,) at the grid points; ``time`` the traversal time; ``iterations`` linear programmes."""

    x: np.ndarray
    u: np.ndarray
    time: float
    iterations: int


#: The fewest steps of the grid between two breakpoints: a corner blend crossed in one step had its torques
#: checked at its ends only (the centripetal load in its middle never seen), and the jerk-limited cycle of a
#: coarse grid came out faster than the torque-limited optimum (0.186 s at 32 points against 0.242 s).
PIECE_STEPS = 4


def graded_grid(length: float, n: int, breakpoints=()) -> np.ndarray:
    """``n`` grid points on ``[0, length]`` (more where the pieces need them): uniform on each piece between
    the ``breakpoints`` (the pieces' steps as equal as their lengths allow, at least ``PIECE_STEPS``, a point
    on every breakpoint), with the first and last step of the whole
    grid each cut into ``m`` geometric pieces (halving towards the end point, ``m = min(8, (n − 8) // 2)``). The
    motion leaves and reaches rest with ``s̈ = 0`` there, and the time of a step near rest shrinks only as
    ``√Δ``: the finer steps keep that discretisation error of the ends small (the interior is refined as ``Δ``)."""
    m = max(0, min(8, (n - 8) // 2))
    brk = np.asarray(breakpoints, dtype=float).reshape(-1)
    edges = np.concatenate([[0.0], np.sort(brk[(brk > 0.0) & (brk < length)]), [length]])
    steps = max(n - 1 - 2 * m, PIECE_STEPS * (edges.size - 1))
    ideal = steps * np.diff(edges) / length
    share = np.maximum(PIECE_STEPS, np.floor(ideal)).astype(int)
    for k in np.argsort(share - ideal)[: max(0, steps - int(share.sum()))]:   # largest remainders first
        share[k] += 1
    base = np.concatenate([np.linspace(a, b, k + 1)[:-1] for a, b, k in zip(edges[:-1], edges[1:], share)]
                          + [[length]])
    first, last = base[1], length - base[-2]
    head = first * 0.5 ** np.arange(m, 0, -1)
    tail = length - last * 0.5 ** np.arange(1, m + 1)
    return np.concatenate([[0.0], head, base[1:-1], tail, [length]])


def path_grid(path, n: int) -> np.ndarray:
    """The grid of a jerk-limited path: :func:`graded_grid` with a point on each of the path's breakpoints (where
    its pieces join and ``x‴`` may jump: a step across such a join would average the jerk's jump away and the
    cycle time would depend on where the join falls between grid points, an O(Δ) error); about ``n`` points."""
    return graded_grid(path.length, n, path.breakpoints())


def check_jerk_value(jerk):
    """``jerk`` as a positive finite float (None stays None); anything else a one-line InputError."""
    if jerk is None:
        return None
    try:
        j = float(jerk)
    except (TypeError, ValueError):
        raise InputError(f"jerk must be a positive number [m/s³], got {jerk!r}") from None
    if isinstance(jerk, bool) or not (math.isfinite(j) and j > 0.0):
        raise InputError(f"jerk must be a positive finite limit [m/s³], got {jerk!r}")
    return j


def traversal_time(x, ds) -> float:
    """``Σ 2Δ_k / (√x_k + √x_{k+1})`` (inf where a step has no speed at either end); ``ds`` the steps (N−1,)."""
    r = np.sqrt(np.maximum(x, 0.0))
    den = r[:-1] + r[1:]
    if np.any(den <= 0.0):
        return math.inf
    return float(np.sum(2.0 * ds / den))


def _time_gradient(x, ds):
    r = np.sqrt(np.maximum(x, 0.0))
    den = r[:-1] + r[1:]
    g = np.zeros_like(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = ds / den ** 2
        g[:-1] -= np.where(r[:-1] > 0, q / r[:-1], 0.0)
        g[1:] -= np.where(r[1:] > 0, q / r[1:], 0.0)
    return g


def _torque_ok(rows, x, u):
    A, B, C = rows(x, u)
    val = A * u[:, None] + B * x[:, None] + C
    scale = np.maximum(np.abs(C), 1e-300)
    return float(np.max(val / scale))


def _s_curve(s):
    """``s̈`` (up to scale) of the rest-to-rest motion over ``[s_0, s_end]`` with jerk ``+j, −j, +j`` for a time
    ``τ, 2τ, τ`` (its acceleration a triangle up then down: ``s̈ ∝ (s − s_0)^{1/3}`` near rest, as every
    jerk-limited start) at the points ``s``, its braking part scaled so that the trapezoid rule
    ``x_{k+1} = x_k + Δ_k (u_k + u_{k+1})`` ends at rest exactly on this grid."""
    t = np.linspace(0.0, 4.0, 40001)
    acc = np.where(t <= 1.0, t, np.where(t <= 3.0, 2.0 - t, t - 4.0))
    # closed-form integral of the piecewise-linear acceleration (jerk ±1)
    pos = np.where(t <= 1.0, t ** 3 / 6,
                   np.where(t <= 3.0, 1 / 6 + 0.5 * (t - 1) + (t - 1) ** 2 / 2 - (t - 1) ** 3 / 6,
                            2.0 - (4.0 - t) ** 3 / 6))
    u = np.interp((s - s[0]) / (s[-1] - s[0]) * pos[-1], pos, acc)
    u[0] = u[-1] = 0.0
    up, dn = np.maximum(u, 0.0), np.minimum(u, 0.0)
    ds = np.diff(s)
    gain = float(np.sum(ds * (up[:-1] + up[1:])))
    loss = float(np.sum(ds * (dn[:-1] + dn[1:])))
    return up - gain / loss * dn


def _start(rows, xmax, d1, d2, s, J, inside=()):
    """A feasible start: the S-curve's ``s̈`` (:func:`_s_curve`) and its ``x`` (trapezoid), scaled down until the
    limits hold."""
    ds = np.diff(s)
    u = _s_curve(s)
    x = np.concatenate([[0.0], np.cumsum(ds * (u[:-1] + u[1:]))])
    x[-1] = 0.0
    x = np.maximum(x, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        eps = float(np.min(np.where(x > 0, xmax / x, np.inf)))
    eps = min(eps, 1e12)
    jr = jerk_ratio(x, u, d1, d2, ds, J, inside)   # the jerk scales as eps^1.5
    if jr > 0:
        eps = min(eps, jr ** (-2.0 / 3.0))
    eps *= 0.5
    for _ in range(200):
        if _torque_ok(rows, eps * x, eps * u) <= -1e-9:
            return eps * x, eps * u
        eps *= 0.5
    raise PkmError("the path cannot be started jerk-limited within the limits (no slow motion along it holds "
                   "the torque limits: the robot cannot hold the path against gravity?)")


def _inside_state(x, u, ds, f):
    """``(ṡ², s̈)`` at the fraction ``f`` of each step with ``s̈`` linear in ``s`` on it: ``x_k + Δ_k f ((2 − f) u_k +
    f u_{k+1})``, ``(1 − f) u_k + f u_{k+1}`` (N−1,)."""
    return x[:-1] + ds * f * ((2.0 - f) * u[:-1] + f * u[1:]), (1.0 - f) * u[:-1] + f * u[1:]


def _mid_matrix(mid, xb, ub, ds, n):
    """The rows ``mid(x̄, ū)`` → ``(A, B, C, φ)`` (N−1, r) inside the steps, each at its fraction ``φ`` of its step
    (the state there ``((1 − φ) u_k + φ u_{k+1}, x_k + Δ_k φ ((2 − φ) u_k + φ u_{k+1}))``, ``s̈`` linear on the step), in
    ``(x_k, u_k, u_{k+1})``, each divided by its ``|C|``; the rows that bound nothing (no coefficient) left out.
    Without the midpoints' the programme's ``s̈`` zigzagged from sample to sample at a large jerk limit, holding the
    limits at the samples, and the torques between them reached 117 % (the Delta with 400 W servos, 1e5 m/s³ on
    400 points); with the turns' at the step's start state, 105 % at a turn."""
    from scipy.sparse import coo_matrix

    A, B, C, P = mid(xb, ub)
    live = (A != 0.0) | (B != 0.0)
    k, j = np.nonzero(live)
    a, b, c, f, d = A[k, j], B[k, j], C[k, j], P[k, j], ds[k]
    sc = 1.0 / np.maximum(np.abs(c), 1e-300)
    rr = np.repeat(np.arange(k.size), 3)
    cc = np.column_stack([k, n + k, n + k + 1]).ravel()
    vv = np.column_stack([b, (1.0 - f) * a + d * f * (2.0 - f) * b, f * a + d * f * f * b]).ravel() * np.repeat(sc, 3)
    return coo_matrix((vv, (rr, cc)), shape=(k.size, 2 * n)), -c * sc


def _lp(rows, xmax, d1, d2, ds, J, xb, ub, region, mid=None, inside=()):
    """One linear programme around ``(xb, ub)`` (``ds`` the grid's steps); ``(x, u)``, or None where HiGHS finds none.
    ``mid``: rows inside the steps (:func:`_mid_matrix`), or None; ``inside``: the jerk's points inside the steps
    (:func:`pkm.planning.jerk_rows.chain`)."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix, csr_matrix, diags, vstack

    n = d1.shape[0]
    A, B, C = rows(xb, ub)
    m = A.shape[1]
    # torque rows, each divided by its |C| (of the order of the limit)
    sc = 1.0 / np.maximum(np.abs(C), 1e-300)
    ii = np.repeat(np.arange(n * m), 2)
    kk = np.repeat(np.arange(n), m)
    cols = np.column_stack([kk, n + kk]).ravel()     # x_k, u_k
    vals = np.column_stack([(B * sc).ravel(), (A * sc).ravel()]).ravel()
    G1 = coo_matrix((vals, (ii, cols)), shape=(n * m, 2 * n))
    h1 = (-C * sc).ravel()
    if mid is not None:
        G2, h2 = _mid_matrix(mid, xb, ub, ds, n)
        G1, h1 = vstack([G1, G2]), np.concatenate([h1, h2])
    k = np.arange(n - 1)
    blocks, h = jerk_rows(d1, d2, ds, J, xb, ub, inside)
    G = vstack([G1, *blocks]).tocsr()
    hv = np.concatenate([h1, *h])
    # dynamics x_{k+1} − x_k − Δ(u_k + u_{k+1}) = 0 (divided by Δ)
    rr = np.repeat(k, 4)
    cc = np.column_stack([k + 1, k, n + k, n + k + 1]).ravel()
    vv = np.column_stack([1.0 / ds, -1.0 / ds, -np.ones(n - 1), -np.ones(n - 1)]).ravel()
    E = csr_matrix(coo_matrix((vv, (rr, cc)), shape=(n - 1, 2 * n)))
    grad = _time_gradient(xb, ds)
    cost = np.concatenate([grad / max(float(np.max(np.abs(grad))), 1e-300), np.zeros(n)])
    lo = np.maximum(0.0, (1.0 - min(region, 0.9)) * xb)
    hi = np.minimum(xmax, (1.0 + region) * xb)
    hi = np.maximum(hi, lo)
    bounds = np.column_stack([np.concatenate([lo, np.full(n, -np.inf)]), np.concatenate([hi, np.full(n, np.inf)])])
    for j in (0, n - 1):   # rest with zero acceleration at both ends
        bounds[j] = (0.0, 0.0)
        bounds[n + j] = (0.0, 0.0)
    # scaled to O(1): columns by the iterate's largest x and |u|, then every row by its largest coefficient (the
    # solver's tolerances are absolute: a slow motion, x ~ 1e-12, would otherwise be lost in them)
    X = float(np.max(xb))
    U = max(float(np.max(np.abs(ub))), X / max(float(np.sum(ds)), 1e-300))
    col = diags(np.concatenate([np.full(n, X), np.full(n, U)]))
    G, E = G @ col, E @ col
    with np.errstate(divide="ignore", invalid="ignore"):
        rg = 1.0 / np.asarray(abs(G).max(axis=1).todense()).ravel()
        re = 1.0 / np.asarray(abs(E).max(axis=1).todense()).ravel()
    ok = np.isfinite(rg) & (rg > 0)
    G, hv = diags(np.where(ok, rg, 1.0)) @ G, np.where(ok, rg, 1.0) * hv
    E = diags(np.where(np.isfinite(re), re, 1.0)) @ E
    cost = cost * np.concatenate([np.full(n, X), np.full(n, U)])
    cost = cost / max(float(np.max(np.abs(cost))), 1e-300)
    bounds = bounds / np.concatenate([np.full(n, X), np.full(n, U)])[:, None]
    if not (X > 0 and np.isfinite(X) and np.isfinite(U) and np.all(np.isfinite(G.data)) and np.all(np.isfinite(hv))
            and np.all(np.isfinite(E.data)) and np.all(np.isfinite(cost))):
        raise PkmError(f"the limits (jerk {J:g} m/s³, torques and speeds) put the motion out of floating-point "
                       f"range on this path: give realistic limits")
    res = linprog(cost, A_ub=G, b_ub=hv, A_eq=E, b_eq=np.zeros(n - 1), bounds=bounds, method="highs")
    if res.status != 0 or res.x is None:
        return None
    z = res.x * np.concatenate([np.full(n, X), np.full(n, U)])
    return np.clip(z[:n], 0.0, xmax), z[n:]


def jerk_profile(rows, xmax, d1, d2, s, jerk: float, mid=None, inside=()) -> JerkProfile:
    """The jerk-limited time-optimal ``(x, u)`` on the grid ``s`` (N,) (increasing; module docstring).

    ``rows(x, u)`` → ``(A, B, C)`` (N, m): the limits ``A u + B x + C ≤ 0`` at the profile ``(x, u)`` (the solver
    freezes them at each iterate); ``xmax`` (N,) the speed bound of ``x = ṡ²``; ``d1``, ``d2`` (N, d) the path's
    ``x'`` and ``x''`` at the grid points; ``jerk`` the limit ``J`` of every coordinate's jerk; ``mid(x, u)`` →
    ``(A, B, C, φ)`` (N−1, m'): limits inside the steps, each at its fraction ``φ`` of its step (:func:`_mid_matrix`),
    or None; ``inside``: ``(φ, x'(φ), x''(φ))`` (N−1, d each) at points inside the steps, increasing in ``φ``,
    where the jerk is bounded too, between each point and the next (:func:`pkm.planning.jerk_rows.chain`), or none."""
    d1, d2 = np.atleast_2d(np.asarray(d1, dtype=float)), np.atleast_2d(np.asarray(d2, dtype=float))
    xmax = np.asarray(xmax, dtype=float)
    s = np.asarray(s, dtype=float)
    ds = np.diff(s)
    J = check_jerk_value(jerk)
    x, u = _start(rows, xmax, d1, d2, s, J, inside)
    T = traversal_time(x, ds)
    region = 1.0
    it = 0
    while it < MAX_ITERATIONS:
        it += 1
        out = _lp(rows, xmax, d1, d2, ds, J, x, u, region, mid, inside)
        if out is None:
            region *= 0.25
            if region < MIN_REGION:
                break
            continue
        xn, un = out
        Tn = traversal_time(xn, ds)
        ok = (Tn < T and jerk_ratio(xn, un, d1, d2, ds, J, inside) <= 1.0 + 1e-6)
        if ok:
            gain = (T - Tn) / T
            x, u, T = xn, un, Tn
            region = min(4.0 * region, 4.0) if gain > 1e-3 else region
            if gain < TOLERANCE:
                break
        else:
            region *= 0.25
            if region < MIN_REGION:
                break
    else:
        raise PkmError(f"the jerk-limited profile did not settle in {MAX_ITERATIONS} linear programmes")
    return JerkProfile(x=x, u=u, time=T, iterations=it)


def check_jerk(result, jerk: float) -> float:
    """The largest jerk of ``result``'s trajectory samples against ``jerk``: its ratio, or a one-line PkmError
    beyond ``1 + OVERSHOOT``."""
    jr = np.abs(result.jerk()) / jerk
    k, i = np.unravel_index(int(np.argmax(jr)), jr.shape)
    ratio = float(jr[k, i])
    if not ratio <= 1.0 + OVERSHOOT:
        name = result.trajectory.names[i] if result.trajectory.names else str(i)
        raise PkmError(f"{result.robot_name}: the jerk-limited motion exceeds the jerk limit {jerk:g} by "
                       f"{100 * (ratio - 1):.2g} % in {name} at t = {result.trajectory.t[k]:.4g} s: use more points")
    return ratio


def motor_rows(pd, gains, drives, limits, x, u, rest: bool = True):
    """The torque limits as rows ``A u + B x + C ≤ 0`` (N, 3 n_act) for the linear programme at the iterate
    ``(x, u)``, each an INNER approximation of the exact limit (a convex–concave split, as the jerk rows).

    Per actuator the motor torque is ``τ_d = k_d τ + m_d q̈`` while the gear drives and ``τ_b`` while it brakes
    (:func:`pkm.planning.constraints.motor_coefficients`), ``τ_d − τ_b ∝ τ_load`` with ``k_d = 1/(nη) ≥ k_b = η/n``,
    and the gear drives where ``τ_load q̇ ≥ 0``: so for ``q̇ > 0`` the motor torque is ``max(τ_d, τ_b)`` (convex in
    ``(u, x)``: ``τ_m ≤ T`` is exactly the two rows ``τ_d ≤ T``, ``τ_b ≤ T``) and ``τ_m ≥ −T`` is taken on the side
    of the iterate (the max is at least that side: conservative, exact at the iterate); for ``q̇ < 0`` it is
    ``min(τ_d, τ_b)``, the other way round. Where ``q' = 0`` and at the rest points (``q̇ = 0``, the gear drives;
    the first and last point where ``rest``) ``|τ_d| ≤ T``. The actuated joints' friction is frozen at ``x``."""
    n = pd.s.size
    d = motor_coefficients(pd, gains, drives, x, np.ones_like(pd.a, dtype=bool))
    b = motor_coefficients(pd, gains, drives, x, np.zeros_like(pd.a, dtype=bool))
    s = motor_coefficients(pd, gains, drives, x, gear_sides(pd, drives, x, u))
    sign = np.sign(pd.dq)
    if rest:
        sign[[0, n - 1]] = 0.0
    pos = sign >= 0   # max structure (or the drive side alone where sign == 0)
    T = limits.torque
    # row 1: the drive side in the direction of the convex bound
    sg = np.where(pos, 1.0, -1.0)
    rows = [(sg * d[0], sg * d[1], sg * d[2] - T)]
    # row 2: the brake side in the same direction (where sign == 0: the drive side's other bound)
    zero = sign == 0
    rows.append((np.where(zero, -d[0], sg * b[0]), np.where(zero, -d[1], sg * b[1]),
                 np.where(zero, -d[2], sg * b[2]) - T))
    # row 3: the other bound on the iterate's side (where sign == 0: the drive side again)
    rows.append((np.where(zero, d[0], -sg * s[0]), np.where(zero, d[1], -sg * s[1]),
                 np.where(zero, d[2], -sg * s[2]) - T))
    return tuple(np.concatenate([r[k] for r in rows], axis=1) for k in range(3))


def jerk_piece(robot, path, n: int, limits, gains, jerk: float, s0: float, t0: float) -> PieceProfile:
    """One rest-to-rest path of :func:`pkm.time_optimal` with the jerk limit: the coefficients on the graded
    grid (:func:`path_grid`, one batched inverse dynamics), the torque rows with friction and gear side at
    each iterate (:mod:`pkm.planning.constraints`) and :func:`jerk_profile`; the samples as a PieceProfile
    (``s0``, ``t0``: where the path starts along the route)."""
    drives = robot.drives
    grid = path_grid(path, n)
    if grid.size > MAX_POINTS:
        raise InputError(f"the path has {path.breakpoints().size + 1} pieces: a jerk-limited grid with a point on "
                         f"each join needs {grid.size} points, more than {MAX_POINTS} (give fewer waypoints)")
    pd = path_dynamics(robot, path, n, grid=grid)
    xmax = speed_bound(pd, gains, limits)

    ds = np.diff(pd.s)
    on, off = np.ones_like(pd.a, dtype=bool), np.zeros_like(pd.a, dtype=bool)

    def rows(x, u):
        return motor_rows(pd, gains, drives, limits, x, u)

    # the coefficients inside the steps, computed there (one more batched inverse dynamics): interpolated from the
    # grid's, they missed the torque at the midpoints by 4 % of the limit where a corner blend's curvature changes
    # (b by 55 % in a step); with the midpoints' alone the torques between the samples reached 100.7 % (the Delta
    # with 400 W servos, 2e4 m/s³ on 400 points; 100.1 % with the quarters'; 100.6 % at 1e5 on 400 with the jerk
    # bounded at the eighths too, in the last step into a stop; with the eighths' (JERK_INSIDE), 100.0006 %)
    inner = inner_points(inside_coefficients(robot, path, pd, JERK_INSIDE), gains, limits, JERK_INSIDE)
    turn_coef = exact_turns(robot, path, pd)   # and at the actuators' turns
    zero_r, one_r = np.zeros((ds.size, 1)), np.ones((ds.size, 1))

    def mid_rows(x, u):
        """:func:`motor_rows` and the speed limits at the points inside the steps (:data:`pkm.planning.jerk_rows.
        JERK_INSIDE`), at the state there (:func:`_inside_state`), and where an actuator turns back inside a step, the
        motor torque at the turn with either gear side on either side of it (:func:`pkm.planning.constraints.
        crossing_rows` twice: an inner approximation, as the other rows): (A, B, C, φ)."""
        parts = []
        for f, c, xb in inner:
            A, B, C = motor_rows(c, gains, drives, limits, *_inside_state(x, u, ds, f), rest=False)
            bound = np.isfinite(xb)[:, None]
            parts += [(A, B, C, np.full(A.shape, f)),
                      (zero_r, np.where(bound, one_r, 0.0), np.where(bound, -xb[:, None], 0.0), np.full((ds.size, 1), f))]
        parts += [tuple(v[:-1] for v in crossing_rows(pd, gains, drives, limits, ds, sides, at_turn=True, coef=turn_coef))
                  for sides in ((on, off), (off, on))]
        return tuple(np.concatenate([r[k] for r in parts], axis=1) for k in range(4))

    zero = np.zeros(pd.s.size)
    static_sets(*rows(zero, zero), xmax)     # a point that cannot be run at any speed: the TOPP-RA message
    prof = jerk_profile(rows, xmax, pd.dx, pd.ddx, pd.s, jerk, mid=mid_rows,
                        inside=[(f, c.dx, c.ddx) for f, c, _ in inner])
    x, u, s = prof.x, prof.u, pd.s
    sd, t = profile_times(s, x, path.length, floor=1e-12, limits="torque, speed and jerk limits",
                          small="a speed, torque or jerk limit")
    mvc = np.sqrt(static_sets(*rows(x, u), xmax)[:, 1])
    return PieceProfile(path=path, s=s + s0, s_local=s, t=t + t0, sd=sd, sdd=u, x=pd.x, xd=pd.dx * sd[:, None],
                        xdd=pd.dx * u[:, None] + pd.ddx * x[:, None], grid_s=s + s0, mvc=mvc,
                        controllable=np.full(s.size, np.nan), iterations=prof.iterations, inserted=(),
                        between="linear")
