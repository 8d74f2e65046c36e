"""The jerk rows of the jerk-limited linear programme (:mod:`pkm.planning.jerk`) and the jerk they bound.

On the grid's step ``k`` (``s̈`` linear in ``s``, :func:`pkm.planning.jerk._inside_state`) the accelerations
``ẍ = x'(s) s̈ + x''(s) ṡ²`` at a chain of points — the step's start, the points ``inside`` it, its end
(:func:`chain`) — are linear in ``(x_k, x_{k+1}, u_k, u_{k+1})`` (``x = ṡ²``, ``u = s̈``). Between two points ``a``,
``b`` of the chain the jerk row reads

    ± (ẍ_b − ẍ_a) ≤ J (φ_b − φ_a) Δt_k,      Δt_k = 2 Δ_k / (√x_k + √x_{k+1}),

the step's time (the programme's, :func:`pkm.planning.jerk.traversal_time`) shared in proportion to ``φ``; with the
whole step (``a, b = k, k + 1``: the samples' own jerk, what :func:`pkm.planning.jerk.check_jerk` measures on the
output) a row too. Where ``ẍ`` is linear in ``φ`` (a line: ``ẍ = x' s̈``) the rows inside are the step's own, so the
optimum there is unchanged (the S-curve's); where the path's curvature changes inside a step they see what the
samples average away. (Each part timed at its own mean speed instead, the rows near a rest point — where the motion
with ``s̈`` linear in ``s`` is not the one the step's time assumes — bound the start: the line's S-curve came out 4 %
slow.) ``Δt_k`` is convex in ``(x_k, x_{k+1})`` and is replaced by its tangent plane at the iterate (below it: each
linear programme's rows are inside the true ones).
"""
from __future__ import annotations

import numpy as np

__all__ = ["JERK_INSIDE", "chain", "chain_pairs", "chain_states", "chain_values", "jerk_ratio", "jerk_rows"]

#: The points inside each step where the jerk-limited programme bounds the jerk and the torques too: every eighth.
#: The jerk bounded there, the Delta's jerk-limited pick-and-place at 5e3 m/s³ agrees from 40 to 1000 points to
#: 0.5 % (at the quarters, 2 %; at the samples alone, 15 %); the torques bounded at the quarters alone, the
#: motion's torque between them reached 100.6 % in the last step into a stop (1e5 m/s³, 400 points).
JERK_INSIDE = tuple(k / 8 for k in range(1, 8))


def chain(d1, d2, inside):
    """The chain of points of every step whose accelerations the jerk rows difference: its start, the points
    ``inside`` (``(φ, x'(φ), x''(φ))``, (N−1, d) each, in increasing ``φ``) and its end. Returns ``(fr, D1, D2)``:
    their fractions (P,) and the path's ``x'``, ``x''`` there (N−1, P, d); the state there is
    :func:`chain_states`'."""
    fr = np.array([0.0] + [float(f) for f, _, _ in inside] + [1.0])
    D1 = np.stack([d1[:-1]] + [np.asarray(a, dtype=float) for _, a, _ in inside] + [d1[1:]], axis=1)
    D2 = np.stack([d2[:-1]] + [np.asarray(b, dtype=float) for _, _, b in inside] + [d2[1:]], axis=1)
    return fr, D1, D2


def chain_states(fr, ds):
    """``(xc, uc)`` (N−1, P, 4): the state ``(ṡ², s̈)`` at the chain's fractions ``fr`` as combinations of ``(x_k,
    x_{k+1}, u_k, u_{k+1})``: ``ṡ² = x_k + Δ_k φ ((2 − φ) u_k + φ u_{k+1})`` (the end ``x_{k+1}`` itself), ``s̈ = (1 − φ)
    u_k + φ u_{k+1}`` (:func:`pkm.planning.jerk._inside_state`)."""
    n1, P = ds.size, fr.size
    xc, uc = np.zeros((n1, P, 4)), np.zeros((n1, P, 4))
    for p, f in enumerate(fr):
        if f == 1.0:
            xc[:, p, 1] = 1.0
        else:
            xc[:, p, 0] = 1.0
            xc[:, p, 2] = ds * f * (2.0 - f)
            xc[:, p, 3] = ds * f * f
        uc[:, p, 2], uc[:, p, 3] = 1.0 - f, f
    return xc, uc


def chain_values(x, u, xc, uc):
    """The states ``(ṡ², s̈)`` (N−1, P) at the chain's points."""
    v = np.stack([x[:-1], x[1:], u[:-1], u[1:]], axis=1)[:, None, :]
    return np.sum(xc * v, axis=2), np.sum(uc * v, axis=2)


def chain_pairs(fr):
    """The pairs ``(a, b)`` of the chain's points (fractions ``fr``) with a jerk row: the whole step, then each
    point and the next (none more without points inside)."""
    return [(0, fr.size - 1)] + ([(p, p + 1) for p in range(fr.size - 1)] if fr.size > 2 else [])


def jerk_ratio(x, u, d1, d2, ds, J, inside=()) -> float:
    """The jerk at ``(x, u)`` over ``J``: the largest ``|Δẍ| / (J Δt)`` over each step and between the points of its
    chain (:func:`chain`, the step's time ``Δt_k`` shared in proportion to ``φ``)."""
    r = np.sqrt(np.maximum(x, 0.0))
    dt = 2.0 * ds / (r[:-1] + r[1:])
    fr, D1, D2 = chain(d1, d2, inside)
    xs, us = chain_values(x, u, *chain_states(fr, ds))
    acc = D1 * us[:, :, None] + D2 * xs[:, :, None]                   # (N−1, P, d)
    return max(float(np.max(np.abs(acc[:, b] - acc[:, a]) / (J * (fr[b] - fr[a]) * dt[:, None])))
               for a, b in chain_pairs(fr))


def jerk_rows(d1, d2, ds, J, xb, ub, inside=()):
    """The jerk rows linearised at ``(xb, ub)`` over the ``2N`` variables ``(x, u)``: ``(blocks, rhs)``, lists of
    sparse (N−1, 2N) matrices and their right-hand sides, each row divided by ``JΔ_k(φ_b − φ_a)`` (module
    docstring); ``d1``, ``d2`` (N, d) the path's ``x'``, ``x''`` at the grid points."""
    from scipy.sparse import coo_matrix

    n, d = d1.shape
    k = np.arange(n - 1)
    cols = np.column_stack([k, k + 1, n + k, n + k + 1]).ravel()     # x_k, x_{k+1}, u_k, u_{k+1}
    fr, D1, D2 = chain(d1, d2, inside)
    xc, uc = chain_states(fr, ds)
    r = np.sqrt(np.maximum(xb, 0.0))
    den = r[:-1] + r[1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        g = 2.0 / den                                                # Δt_k / Δ_k
        ga = np.where(r[:-1] > 0, -1.0 / (den ** 2 * r[:-1]), 0.0)   # its derivatives in x_k and x_{k+1}
        gb = np.where(r[1:] > 0, -1.0 / (den ** 2 * r[1:]), 0.0)
    live = np.isfinite(g)
    rhs = np.where(live, g - ga * xb[:-1] - gb * xb[1:], 0.0)
    dg = np.column_stack([ga, gb, np.zeros_like(ga), np.zeros_like(ga)])
    blocks, h = [], []
    for a, b in chain_pairs(fr):
        w = 1.0 / (J * ds * (fr[b] - fr[a]))
        for i in range(d):
            acc = (D2[:, b, i, None] * xc[:, b] + D1[:, b, i, None] * uc[:, b]
                   - D2[:, a, i, None] * xc[:, a] - D1[:, a, i, None] * uc[:, a]) * w[:, None]   # Δẍ_i / (JΔ_kΔφ)
            for sign in (1.0, -1.0):
                vv = np.where(live[:, None], sign * acc - dg, 0.0)
                blocks.append(coo_matrix((vv.ravel(), (np.repeat(k, 4), cols)), shape=(n - 1, 2 * n)))
                h.append(rhs)
    return blocks, h
