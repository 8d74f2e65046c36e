"""Per-sample loops around the batch kernel in numba (issue 18): the target platform states of a
translational task space and the gathers of the actuated joints' values.

Both were numpy passes around the kernel (strided copies and fancy indexing, ~0.03 µs per sample
of the Delta in all, 5 % of a SIMD call); here each is one pass over the samples.
"""
from __future__ import annotations

import numpy as np

from pkm.kernels.work import _jit

__all__ = ["translational_states_into", "gather_actuated", "gather_actuated_into"]


@_jit
def translational_states_into(X, XD, XDD, axis, R0, lin0, Cd, Vp, dVp):
    """Target platform states of a task space without rotations (paper Sec. 8.1): the platform keeps
    the reference orientation ``R_0`` and moves its origin, ``C_p = (R_0, R_0 l)`` with ``l = R_0ᵀr_0``
    but for the task coordinates, ``l[axis[i]] = x_i``; the body-fixed twist is
    ``V_p = (0; R_0ᵀ R_0 l̇) = (0; l̇)`` and ``V̇_p = (0; l̈)`` (``ω = 0``: no ``ω × v`` term). ``axis`` (δ_p,):
    the platform axis (0, 1, 2) of each task coordinate; ``R0`` (3, 3); ``lin0`` (3,) = ``R_0ᵀr_0``;
    into ``Cd`` (N, 4, 4), ``Vp`` and ``dVp`` (N, 6)."""
    N, m = X.shape
    for s in range(N):
        l0, l1, l2 = lin0[0], lin0[1], lin0[2]
        for r in range(6):
            Vp[s, r] = 0.0
            dVp[s, r] = 0.0
        for i in range(m):
            a = axis[i]
            if a == 0:
                l0 = X[s, i]
            elif a == 1:
                l1 = X[s, i]
            else:
                l2 = X[s, i]
            Vp[s, 3 + a] = XD[s, i]
            dVp[s, 3 + a] = XDD[s, i]
        for r in range(3):
            Cd[s, r, 0] = R0[r, 0]
            Cd[s, r, 1] = R0[r, 1]
            Cd[s, r, 2] = R0[r, 2]
            Cd[s, r, 3] = l0 * R0[r, 0] + l1 * R0[r, 1] + l2 * R0[r, 2]
            Cd[s, 3, r] = 0.0
        Cd[s, 3, 3] = 1.0


@_jit
def gather_actuated_into(a, b, c, limb, var, out):
    """``out[0, s, k] = a[s, limb[k], var[k]]`` and likewise ``b``, ``c`` into ``out[1]``, ``out[2]``: the
    actuated joints' values in actuator order, from (N, L, n_max) arrays of tree variables, rates
    and accelerations, in one pass."""
    for s in range(a.shape[0]):
        for k in range(len(limb)):
            out[0, s, k] = a[s, limb[k], var[k]]
            out[1, s, k] = b[s, limb[k], var[k]]
            out[2, s, k] = c[s, limb[k], var[k]]


def gather_actuated(a, b, c, limb, var):
    """Three new (N, n_act) arrays of :func:`gather_actuated_into` (``limb``, ``var``: intp arrays)."""
    out = np.empty((3, a.shape[0], len(limb)))
    gather_actuated_into(a, b, c, limb, var, out)
    return out[0], out[1], out[2]
