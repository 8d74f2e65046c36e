"""The two passes of the reachability analysis (:func:`pkm.planning.reachability.reachability`) in numba.

The rows at each point are affine bounds of ``u = s̈`` in ``x = ṡ²``: lower ``u ≥ Lp x + Lr`` and upper
``u ≤ Up x + Ur`` (N, m) each, an invalid entry ``Lr = −inf`` / ``Ur = +inf`` (slope 0): what
:func:`pkm.planning.reachability._split` gives. In Python the passes looped over each point's valid bounds as
lists and took 80 % of a ``pkm.time_optimal`` call once the rows of the steps' ends, insides and turns came
(12–15 ms per pass at 1000 points); the arithmetic here is the same, operation for operation (the same
``max``/``min`` order, so the same bits).
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["controllable_sets", "greedy_forward"]


@njit(cache=True, inline="always")
def _min(a, b):
    """Python's ``min(a, b)``: ``a`` unless ``b < a`` (also for NaN)."""
    return b if b < a else a


@njit(cache=True, inline="always")
def _max(a, b):
    """Python's ``max(a, b)``: ``a`` unless ``b > a``."""
    return b if b > a else a


@njit(cache=True, inline="always")
def _cut(a, b, k, r):
    """``[a, b] ∩ {x : k x ≤ r}``."""
    if k > 0.0:
        b = _min(b, r / k)
    elif k < 0.0:
        a = _max(a, r / k)
    elif r < 0.0:
        a, b = np.inf, -np.inf
    return a, b


@njit(cache=True, nogil=True)
def controllable_sets(Lp, Lr, Up, Ur, X, inv, slack, K):
    """The backward pass: ``K`` (N, 2) the controllable sets from ``K_{N−1} = {0}``, within the static sets ``X``
    (N, 2); ``inv = 1/(2Δ)``. Returns −1, or the point at which no controllable speed is left."""
    N, m = Lp.shape
    K[N - 1, 0] = 0.0
    K[N - 1, 1] = 0.0
    for i in range(N - 2, -1, -1):
        klo, khi = K[i + 1, 0], K[i + 1, 1]
        a, b = X[i, 0], X[i, 1]
        for j in range(m):   # L_p(x) ≤ (khi − x)/(2Δ)
            if Lr[i, j] != -np.inf:
                a, b = _cut(a, b, Lp[i, j] + inv, khi * inv - Lr[i, j])
        for j in range(m):   # (klo − x)/(2Δ) ≤ U_q(x)
            if Ur[i, j] != np.inf:
                a, b = _cut(a, b, -inv - Up[i, j], Ur[i, j] - klo * inv)
        if not b >= a - slack * _max(1.0, abs(b)):
            return i
        K[i, 0] = _max(0.0, _min(a, b))
        K[i, 1] = _max(0.0, b)
    return -1


@njit(cache=True, nogil=True)
def greedy_forward(Lp, Lr, Up, Ur, K, ds, x, u):
    """The forward pass from rest: ``u_i`` the largest admissible ``s̈`` keeping ``x_{i+1}`` in ``K_{i+1}``, into
    ``x``, ``u`` (N,); the end point's ``u`` its fastest admissible deceleration at rest."""
    N, m = Lp.shape
    inv = 1.0 / (2.0 * ds)
    x[0] = 0.0
    for i in range(N - 1):
        xi = x[i]
        L, U = -np.inf, np.inf
        first_l, first_u = True, True
        for j in range(m):   # Python's max/min over the valid bounds: the first, then any strictly beyond it
            if Lr[i, j] != -np.inf:
                v = Lp[i, j] * xi + Lr[i, j]
                if first_l or v > L:
                    L, first_l = v, False
            if Ur[i, j] != np.inf:
                v = Up[i, j] * xi + Ur[i, j]
                if first_u or v < U:
                    U, first_u = v, False
        klo, khi = K[i + 1, 0], K[i + 1, 1]
        ui = _max(_max(_min(U, (khi - xi) * inv), L), (klo - xi) * inv)
        u[i] = ui
        x[i + 1] = _min(_max(xi + 2.0 * ds * ui, klo), khi)
    L, U = -np.inf, np.inf
    first_l, first_u = True, True
    for j in range(m):
        if Lr[N - 1, j] != -np.inf and (first_l or Lr[N - 1, j] > L):
            L, first_l = Lr[N - 1, j], False
        if Ur[N - 1, j] != np.inf and (first_u or Ur[N - 1, j] < U):
            U, first_u = Ur[N - 1, j], False
    u[N - 1] = L if np.isfinite(L) else _min(U, 0.0)
