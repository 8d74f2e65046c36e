"""Time-optimal path parametrisation by reachability analysis (TOPP-RA: H. Pham, Q.-C. Pham, "A New
Approach to Time-Optimal Path Parameterization Based on Reachability Analysis", IEEE T-RO 34(3), 2018),
implemented here for one path coordinate: every step's LP in ``(u, x)`` is solved in closed form.

Variables on a grid ``s_0 < … < s_{N−1}`` (uniform step ``Δ``): ``x_i = ṡ_i²`` and ``u_i = s̈`` on
``[s_i, s_{i+1}]``, with ``x_{i+1} = x_i + 2Δ u_i`` (constant ``s̈`` per step). Constraints at each point:
rows ``A_ij u_i + B_ij x_i + C_ij ≤ 0`` and ``0 ≤ x_i ≤ x̄_i`` (the point's own limits, the paper's
collocation, and those of its step's end, inside points and turns written in ``(u_i, x_i)``:
:mod:`pkm.planning.constraints`).

For fixed ``x`` each row bounds ``u`` above (``A > 0``) or below (``A < 0``) by an affine function of
``x``, or bounds ``x`` alone (``A = 0``); eliminating ``u`` (Fourier–Motzkin: every lower bound ≤ every
upper bound) leaves an interval of ``x`` — the LPs of TOPP-RA in closed form:

* static set ``X_i`` (the maximum velocity curve is its upper end, ``ṡ_max = √x̄``);
* backward pass (controllable sets): ``K_{N−1} = {0}`` (rest at the end),
  ``K_i = {x ∈ X_i : ∃u ∈ [L_i(x), U_i(x)] with x + 2Δu ∈ K_{i+1}}``;
* forward pass (greedy): ``x_0 = 0``, ``u_i`` the largest admissible ``u`` keeping ``x_{i+1} ∈ K_{i+1}``.

O(N m) for m rows per point; the result is time-optimal for the discretised problem (the paper's
Theorem). The static sets are numpy; the two passes run in numba (:mod:`pkm.kernels.reachability`). The end
point's ``u`` (no step follows it) is its fastest admissible deceleration at rest.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pkm.errors import PkmError
from pkm.kernels.reachability import controllable_sets, greedy_forward

__all__ = ["Profile", "reachability", "static_sets", "u_bounds"]

#: Relative tolerance of the interval tests (numerical slack of the closed-form bounds).
SLACK = 1e-9


@dataclass(frozen=True, eq=False)
class Profile:
    """``x = ṡ²`` (N,), ``u = s̈`` (N,), the controllable sets ``K`` (N, 2) and the static sets ``X`` (N, 2)."""

    x: np.ndarray
    u: np.ndarray
    K: np.ndarray
    X: np.ndarray


def _split(A, B, C):
    """Rows as lower/upper affine bounds ``u ≥ p x + r`` / ``u ≤ p x + r`` (invalid entries: slope 0 and
    ∓inf) and pure ``x`` rows ``B x + C ≤ 0`` (others: B = 0, C = −inf)."""
    scale = np.max(np.abs(A), axis=-1, keepdims=True)
    free = np.abs(A) <= 1e-12 * np.where(scale > 0, scale, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        p, r = -B / A, -C / A
    up, lo = (A > 0) & ~free, (A < 0) & ~free
    Lp, Lr = np.where(lo, p, 0.0), np.where(lo, r, -np.inf)
    Up, Ur = np.where(up, p, 0.0), np.where(up, r, np.inf)
    Xb, Xc = np.where(free, B, 0.0), np.where(free, C, -np.inf)
    return Lp, Lr, Up, Ur, Xb, Xc


def _interval(k, r, lo, hi):
    """Intersect ``[lo, hi]`` with ``{x : k x ≤ r}`` for arrays ``k``, ``r`` (last axis: the rows)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q = r / k
    hi = np.minimum(hi, np.min(np.where(k > 0, q, np.inf), axis=-1))
    lo = np.maximum(lo, np.max(np.where(k < 0, q, -np.inf), axis=-1))
    bad = np.any((k == 0) & (r < 0), axis=-1)
    return np.where(bad, np.inf, lo), np.where(bad, -np.inf, hi)


def u_bounds(Lp, Lr, Up, Ur, x):
    """``[L(x), U(x)]`` of each point at ``x`` (arrays over the points, or one point's rows)."""
    x = np.asarray(x, dtype=float)[..., None]
    return np.max(Lp * x + Lr, axis=-1), np.min(Up * x + Ur, axis=-1)


def _packed(P, R, valid):
    """``P``, ``R`` (N, m) with each row's valid entries first, and their counts (N,)."""
    order = np.argsort(~valid, axis=1, kind="stable")
    return (np.take_along_axis(P, order, axis=1), np.take_along_axis(R, order, axis=1)), np.sum(valid, axis=1)


def static_sets(A, B, C, xmax) -> np.ndarray:
    """The static sets ``X_i`` (N, 2): the ``x`` at which some ``u`` meets every row, ``0 ≤ x ≤ xmax``; a point
    with none (or none at rest at the path's ends) is a one-line PkmError."""
    Lp, Lr, Up, Ur, Xb, Xc = _split(A, B, C)
    N = Lp.shape[0]
    lo, hi = np.zeros(N), np.array(np.broadcast_to(np.asarray(xmax, dtype=float), (N,)))
    # every pair of a lower and an upper bound, over each point's valid bounds only (packed first): the rows of
    # the steps' turns (pkm.planning.constraints.crossing_rows) are valid at a few points, empty elsewhere
    (Lp, Lr), nl = _packed(Lp, Lr, Lr != -np.inf)
    (Up, Ur), nu = _packed(Up, Ur, Ur != np.inf)
    for a, b in set(zip(nl.tolist(), nu.tolist())):
        if a == 0 or b == 0:
            continue   # no pair: no bound on x
        at = np.flatnonzero((nl == a) & (nu == b))
        k = (Lp[at, :a, None] - Up[at, None, :b]).reshape(at.size, -1)
        r = (Ur[at, None, :b] - Lr[at, :a, None]).reshape(at.size, -1)
        r = np.where(np.isnan(r), np.inf, r)
        lo[at], hi[at] = _interval(k, r, lo[at], hi[at])
    lo, hi = _interval(Xb, -Xc, lo, hi)
    bad = np.flatnonzero(~(hi >= lo - SLACK * np.maximum(1.0, np.abs(hi))))
    if bad.size:
        raise PkmError(f"the path cannot be run at point {int(bad[0])} of {N}: no admissible acceleration at "
                       f"any speed there (gravity and friction need more than the torque limits?)")
    if lo[0] > SLACK or lo[-1] > SLACK:
        raise PkmError("the path cannot start or end at rest within the limits (the robot cannot hold its end "
                       "points against gravity with the given torque limits)")
    return np.column_stack([lo, hi])


def reachability(A, B, C, xmax, ds: float) -> Profile:
    """The time-optimal ``(x, u)`` for rows ``A u + B x + C ≤ 0`` (N, m) and ``x ≤ xmax`` (N,) on a grid
    of step ``ds``, starting and ending at rest. A path that cannot be run (the robot cannot hold a point
    of it against gravity with the given limits, or not start or stop there) is a one-line PkmError."""
    A, B, C = (np.asarray(v, dtype=float) for v in (A, B, C))
    N = A.shape[0]
    Lp, Lr, Up, Ur, Xb, Xc = _split(A, B, C)
    X = static_sets(A, B, C, xmax)
    K, x, u = np.empty((N, 2)), np.empty(N), np.empty(N)
    # the two passes: pkm.kernels.reachability (numba; the arithmetic of the closed-form LPs above)
    i = controllable_sets(*(np.ascontiguousarray(v) for v in (Lp, Lr, Up, Ur, X)), 1.0 / (2.0 * ds), SLACK, K)
    if i >= 0:
        raise PkmError(f"the path cannot be run: no controllable speed at point {i} of {N} (the limits "
                       f"cannot stop the motion before the end)")
    if K[0][0] > SLACK:
        raise PkmError("the path cannot be run from rest within the limits")
    greedy_forward(*(np.ascontiguousarray(v) for v in (Lp, Lr, Up, Ur)), K, float(ds), x, u)
    return Profile(x=x, u=u, K=K, X=X)
