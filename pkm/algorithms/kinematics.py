"""Forward kinematics, body-fixed Jacobians and their time derivatives on a tree (paper Sec. 3.2, App. A).

Kernels (numba, allocation-free, writing into preallocated arrays) and thin Python wrappers that
allocate the outputs. All work on a :class:`pkm.description.model.TreeModel`'s arrays; the numbering is
canonical (``parent[i] < i``), so one pass in index order is a pass from the ground outwards.

The recursions use the relative pose of body ``i`` in its predecessor,

    ``T_i(θ_i) = B_i exp(θ_i ^iX_i) = C_{parent(i)}^{-1} C_i``,  ``B_i = A_{parent(i)}^{-1} A_i``,

so that ``C_i = C_{parent(i)} T_i`` (eq. 1–2 in body-fixed form, paper eq. 1, 2, 146, 147) and
``Ad_{C_{i,parent(i)}} = Ad_{T_i}^{-1}``. Then, for ``j ⪯ parent(i)`` (paper eq. 3, 4, 153–156; eq. 162–165):

* ``J_{i,i} = ^iX_i`` and ``J_{i,j} = Ad_{T_i}^{-1} J_{parent(i),j}``           (eq. 155–156)
* ``V_i = Ad_{T_i}^{-1} V_{parent(i)} + ^iX_i θ̇_i``                            (eq. 3, 153)
* ``J̇_{i,i} = 0`` and ``J̇_{i,j} = Ad_{T_i}^{-1} J̇_{parent(i),j} − θ̇_i ad_{^iX_i} J_{i,j}``

The last line is the recursive form of eq. (163), ``J̇_{i,j} = −ad_{ΔV_{i,j}} J_{i,j}``, because
``d/dt Ad_{T_i}^{-1} = −θ̇_i ad_{^iX_i} Ad_{T_i}^{-1}``; the tests check both against finite differences.
Joint screws of a tree have ``|ω| = 1`` (R, H) or ``ω = 0`` (P), which :func:`exp_joint_into` uses.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pkm.lie.small import Ad_inv, ad, axpy, exp_joint, exp_screw, get6, get_pose, pose_mul, scale, set6, set_pose
from pkm.lie import Ad_inv_apply_into, ad_apply_into
from pkm.lie.interpret import kernel


@njit(cache=True, no_cfunc_wrapper=True)
def exp_joint_into(X, theta, out):
    """``exp(θ X)`` for a joint screw ``X = (e; v)`` with ``|e| = 1`` or ``e = 0``, into ``out`` (4×4).

    Closed form (paper App. A, eq. 146–147, :func:`pkm.lie.small.exp_screw`): ``R = I + sin θ K + (1 − cos θ) K²`` with
    ``K = skew(e)`` and ``p = (θ I + (1 − cos θ) K + (θ − sin θ) K²) v``; for ``e = 0`` (prismatic)
    ``R = I``, ``p = θ v``.
    """
    R, p = exp_screw((X[0], X[1], X[2]), (X[3], X[4], X[5]), theta)
    out[0, 0], out[0, 1], out[0, 2], out[0, 3] = R[0], R[1], R[2], p[0]
    out[1, 0], out[1, 1], out[1, 2], out[1, 3] = R[3], R[4], R[5], p[1]
    out[2, 0], out[2, 1], out[2, 2], out[2, 3] = R[6], R[7], R[8], p[2]
    out[3, 0], out[3, 1], out[3, 2], out[3, 3] = 0.0, 0.0, 0.0, 1.0


@njit(cache=True, no_cfunc_wrapper=True)
def relative_poses_into(B, X, q, T):
    """``T_i = B_i exp(θ_i X_i)`` for every body, into ``T`` (n×4×4)."""
    for i in range(X.shape[0]):
        Re, pe = exp_joint(X, i, q[i])
        Rb, pb = get_pose(B, i)
        R, p = pose_mul(Rb, pb, Re, pe)
        set_pose(T, i, R, p)


@njit(cache=True, no_cfunc_wrapper=True)
def poses_into(parent, T, C):
    """``C_i = C_{parent(i)} T_i`` (``C_{-1} = I``), the absolute poses, into ``C`` (n×4×4)."""
    for i in range(T.shape[0]):
        p = parent[i]
        Rt, pt = get_pose(T, i)
        if p < 0:
            set_pose(C, i, Rt, pt)
        else:
            Rp, pp = get_pose(C, p)
            R, r = pose_mul(Rp, pp, Rt, pt)
            set_pose(C, i, R, r)


@njit(cache=True, no_cfunc_wrapper=True)
def jacobians_into(parent, X, T, J):
    """Body-fixed Jacobians ``J[k, :, i] = J_{k,i}`` (eq. 155–156), into the zeroed ``J`` (n×6×n)."""
    n = X.shape[0]
    for k in range(n):
        p = parent[k]
        for i in range(n):
            for r in range(6):
                J[k, r, i] = 0.0
        if p >= 0:
            R, t = get_pose(T, k)
            for i in range(p + 1):  # columns of non-ancestors are zero and stay zero
                w, v = Ad_inv(R, t, (J[p, 0, i], J[p, 1, i], J[p, 2, i]), (J[p, 3, i], J[p, 4, i], J[p, 5, i]))
                J[k, 0, i], J[k, 1, i], J[k, 2, i] = w
                J[k, 3, i], J[k, 4, i], J[k, 5, i] = v
        for r in range(6):
            J[k, r, k] = X[k, r]


@njit(cache=True, no_cfunc_wrapper=True)
def twists_into(parent, X, T, qd, V):
    """Body-fixed twists ``V_k = Ad_{T_k}^{-1} V_{parent(k)} + X_k θ̇_k`` (eq. 3), into ``V`` (n×6)."""
    for k in range(X.shape[0]):
        p = parent[k]
        x, y = get6(X, k)
        if p < 0:
            set6(V, k, scale(qd[k], x), scale(qd[k], y))
        else:
            R, t = get_pose(T, k)
            wp, vp = get6(V, p)
            w, v = Ad_inv(R, t, wp, vp)
            set6(V, k, axpy(qd[k], x, w), axpy(qd[k], y, v))


@njit(cache=True, no_cfunc_wrapper=True)
def jacobian_dots_into(parent, X, T, J, qd, Jd, work):
    """Time derivatives ``Jd[k, :, i] = J̇_{k,i}`` (eq. 163, recursive form), into ``Jd`` (n×6×n).

    ``J`` must hold the Jacobians at the same configuration; ``work`` is a 6-vector scratch.
    """
    n = X.shape[0]
    for k in range(n):
        p = parent[k]
        for i in range(n):
            for r in range(6):
                Jd[k, r, i] = 0.0
        if p < 0:
            continue
        for i in range(p + 1):
            Ad_inv_apply_into(T[k], Jd[p, :, i], Jd[k, :, i])
            ad_apply_into(X[k], J[k, :, i], work)
            for r in range(6):
                Jd[k, r, i] -= qd[k] * work[r]


@njit(cache=True, no_cfunc_wrapper=True)
def accelerations_into(parent, X, T, V, qd, qdd, A):
    """Body-fixed accelerations ``A_k = V̇_k``, into ``A`` (n×6) (paper Sec. 6.2, eq. 100–101, App. B forward pass):

    ``V̇_k = Ad_{T_k}^{-1} V̇_{parent(k)} + ad_{V_k} X_k θ̇_k + X_k θ̈_k``, which equals
    ``J_k θ̈ + J̇_k θ̇``. ``V`` are the twists at the same state. With ``qdd = 0`` this gives the velocity-product terms ``J̇_k θ̇``.
    """
    for k in range(X.shape[0]):
        p = parent[k]
        x, y = get6(X, k)
        if p < 0:
            w, v = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
        else:
            R, t = get_pose(T, k)
            wp, vp = get6(A, p)
            w, v = Ad_inv(R, t, wp, vp)
        vw, vv = get6(V, k)
        aw, av = ad(vw, vv, x, y)
        set6(A, k, axpy(qdd[k], x, axpy(qd[k], aw, w)), axpy(qdd[k], y, axpy(qd[k], av, v)))


# ---------------------------------------------------------------------------- Python wrappers
def joint_vector(tree, q, name="q"):
    """``q`` as a contiguous float64 array of shape (n,); ValueError for a wrong shape or NaN/inf."""
    q = np.ascontiguousarray(q, dtype=np.float64)
    if q.shape != (tree.n,):
        raise ValueError(f"{name} must have shape ({tree.n},), got {q.shape}")
    if not np.all(np.isfinite(q)):
        raise ValueError(f"{name} contains NaN or inf")
    return q


def relative_poses(tree, q):
    """The relative poses ``T_i = B_i exp(θ_i X_i)`` (n, 4, 4) of a tree at ``q``."""
    T = np.empty((tree.n, 4, 4))
    kernel(relative_poses_into)(tree.B, tree.X, q, T)
    return T


def forward_kinematics(tree, q) -> np.ndarray:
    """Poses ``C_k(θ) = f_k(θ) A_k`` of all bodies (eq. 1–2), shape (n, 4, 4).

    >>> from pkm.description.robotfile import load_spec
    >>> from pkm.description.model import robot_tree
    >>> tree = robot_tree(load_spec("robots/serial_6r.toml"))
    >>> forward_kinematics(tree, np.zeros(6))[-1].round(3)[:3, 3]   # tool frame at the reference
    array([0.86 , 0.14 , 0.065])
    """
    q = joint_vector(tree, q)
    C = np.empty((tree.n, 4, 4))
    kernel(poses_into)(tree.parent, relative_poses(tree, q), C)
    return C


def body_jacobians(tree, q) -> np.ndarray:
    """Body-fixed Jacobians ``J_k`` of all bodies (eq. 4, 154–156): ``J[k] @ θ̇ = V_k``, (n, 6, n)."""
    q = joint_vector(tree, q)
    J = np.zeros((tree.n, 6, tree.n))
    kernel(jacobians_into)(tree.parent, tree.X, relative_poses(tree, q), J)
    return J


def body_twists(tree, q, qd) -> np.ndarray:
    """Body-fixed twists ``V_k = (ω; v)`` of all bodies (eq. 3), shape (n, 6)."""
    q, qd = joint_vector(tree, q), joint_vector(tree, qd, "qd")
    V = np.empty((tree.n, 6))
    kernel(twists_into)(tree.parent, tree.X, relative_poses(tree, q), qd, V)
    return V


def jacobian_derivatives(tree, q, qd) -> np.ndarray:
    """Time derivatives ``J̇_k`` of the body-fixed Jacobians (eq. 162–165), shape (n, 6, n)."""
    q, qd = joint_vector(tree, q), joint_vector(tree, qd, "qd")
    T = relative_poses(tree, q)
    J = np.zeros((tree.n, 6, tree.n))
    kernel(jacobians_into)(tree.parent, tree.X, T, J)
    Jd = np.zeros_like(J)
    kernel(jacobian_dots_into)(tree.parent, tree.X, T, J, qd, Jd, np.empty(6))
    return Jd


def body_accelerations(tree, q, qd, qdd) -> np.ndarray:
    """Body-fixed accelerations ``V̇_k = J_k θ̈ + J̇_k θ̇`` of all bodies, shape (n, 6)."""
    q, qd, qdd = joint_vector(tree, q), joint_vector(tree, qd, "qd"), joint_vector(tree, qdd, "qdd")
    T = relative_poses(tree, q)
    V = np.empty((tree.n, 6))
    kernel(twists_into)(tree.parent, tree.X, T, qd, V)
    A = np.empty((tree.n, 6))
    kernel(accelerations_into)(tree.parent, tree.X, T, V, qd, qdd, A)
    return A
