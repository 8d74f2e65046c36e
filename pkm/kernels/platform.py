"""The loops around the batch kernel (issue 18): the target platform states of a task space (in
numba when it is translational, vectorised numpy with rotations) and the gathers of the actuated
joints' values (numba).

The translational states and the gathers were numpy passes (strided copies and fancy indexing,
~0.03 µs per sample of the Delta in all, 5 % of a SIMD call); here each is one pass over the samples.
"""
from __future__ import annotations

import numpy as np

from pkm.kernels.work import _jit
from pkm.lie import rotvec_motions_into

__all__ = ["rotational_states", "translational_states_into", "gather_actuated", "gather_actuated_into"]


def rotational_states(robot, X, XD, XDD, Cd, Vp, dVp):
    """:func:`pkm.kernels.batch.platform_states` of a task space with rotations: ``C_p = (R_0 exp(ρ), R_0 l)``,
    ``V_p = (ω; exp(ρ)ᵀ l̇)``, ``V̇_p = (ω̇; exp(ρ)ᵀ l̈ − ω × v)`` with ``ω, ω̇`` from
    :func:`pkm.lie.rotvec_motions_into` (paper eq. 7 and App. A; Sec. 8.1)."""
    N = X.shape[0]
    rho, rhod, rhodd, lin, lind, lindd = (np.zeros((N, 3)) for _ in range(6))
    lin[:] = robot.R0.T @ robot.r0
    for i, c in enumerate(robot.task.components):
        axis = "xyz".index(c[1])
        for dst, src in zip((rho, rhod, rhodd) if c.startswith("w") else (lin, lind, lindd), (X, XD, XDD)):
            dst[:, axis] = src[:, i]
    R = np.empty((N, 3, 3))
    rotvec_motions_into(rho, rhod, rhodd, R, Vp[:, :3], dVp[:, :3])
    Cd[:] = 0.0
    Cd[:, 3, 3] = 1.0
    np.matmul(robot.R0, R, out=Cd[:, :3, :3])
    Cd[:, :3, 3] = lin @ robot.R0.T
    v = np.einsum("sji,sj->si", R, lind)
    Vp[:, 3:] = v
    dVp[:, 3:] = np.einsum("sji,sj->si", R, lindd) - np.cross(Vp[:, :3], v)


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
