"""Equations of motion of a tree-topology system in body-fixed Lie-group form (paper
Sec. 6.2, eq. 100–101, App. B eq. 167–175).

The EOM of the tree (eq. 100, paper Sec. 6.2, eq. 100–101, App. B) are

    ``M̄(θ) θ̈ + C̄(θ, θ̇) θ̇ + Q̄^grav(θ) + Q̄ = Q̄^act``,

and the inverse-dynamics residual (eq. 101) is ``φ(θ, θ̇, θ̈) = M̄θ̈ + C̄θ̇ + Q̄^grav`` (``Q̄`` =
external effects, here: wrenches applied to the bodies). Conventions (paper App. A–C, eq. 145–175): body-fixed twists
``V = (ω; v)``, wrenches ``W = (m; f)`` resolved in the body frame, ``Ad``/``ad`` of eq. 157/166,
gravity ``g0`` = acceleration of gravity in the world frame ``F_0`` (e.g. ``(0, 0, -9.81)``).
``Q̄^grav`` sits on the LEFT-hand side (eq. 100, 175): it is the joint force needed to hold the
tree still against gravity, ``Q̄^grav = +∂U/∂θ`` with the potential energy ``U``; the generalized
gravity force acting on the tree is ``−Q̄^grav``.

Kernels (numba ``@njit(cache=True)``; they allocate nothing and only write into the arrays they
are given; the outputs need not be initialised) work on a :class:`pkm.description.model.TreeModel`'s arrays and
the relative poses ``T_i = B_i exp(θ_i X_i) = C_{parent(i)}^{-1} C_i`` of
:func:`pkm.algorithms.kinematics.relative_poses_into`, so ``Ad_{C_{i,parent(i)}} = Ad_{T_i}^{-1}``:

* :func:`rnea_into` -- recursive Newton–Euler inverse dynamics, O(n) (paper Sec. 6.2, eq. 100–101, App. B recursion, App. B);
* :func:`mass_matrix_into` -- ``M̄ = 𝖩ᵀ𝖬𝖩`` (eq. 171) by the composite-rigid-body algorithm;
* :func:`coriolis_matrix_into` -- a ``C̄`` with ``C̄θ̇`` = the velocity terms of the RNEA and
  ``dM̄/dt − 2C̄`` skew-symmetric (see below for why this is not literally eq. 172);
* :func:`gravity_into` -- ``Q̄^grav = −𝖩ᵀ𝖬𝖴(0; g0)`` (eq. 175) = RNEA at ``θ̇ = θ̈ = 0``.

Python wrappers taking a TreeModel: :func:`inverse_dynamics`, :func:`mass_matrix`,
:func:`coriolis_matrix`, :func:`gravity_forces`, :func:`kinetic_energy`,
:func:`potential_energy`.

The Coriolis/centrifugal matrix
-------------------------------
With ``𝖩̇ = −𝖠𝖺𝖩`` (eq. 164–165), the closed form eq. (172) reads

    ``C̄_172 = −𝖩ᵀ(𝖬𝖠𝖺 + 𝖻ᵀ𝖬)𝖩 = Σ_i J_iᵀ (M_i J̇_i − ad_{V_i}ᵀ M_i J_i)``,  ``𝖻 = diag(ad_{V_i})``.

It gives the right velocity terms ``C̄_172 θ̇`` (RNEA's ``M_i J̇_iθ̇ − ad_{V_i}ᵀM_iV_i``), but
``dM̄/dt − 2C̄_172 = Σ_i (J̇_iᵀM_iJ_i − J_iᵀM_iJ̇_i) + 2 Σ_i J_iᵀ ad_{V_i}ᵀ M_i J_i`` is NOT
skew-symmetric in general: ``ad_Vᵀ M`` has the symmetric part ``½(ad_VᵀM + M ad_V)`` (e.g. its
rotational block ``½(Θ skew(ω) − skew(ω) Θ)`` for a COM frame), which does not vanish
(``tests/test_dynamics.py`` shows it numerically). Since ``M_i ad_{V_i} V_i = 0`` one may add
``𝖩ᵀ𝖬𝖻𝖩`` without changing ``C̄θ̇``; the result

    ``C̄ = 𝖩ᵀ(𝖬𝖩̇ + (𝖬𝖻 − 𝖻ᵀ𝖬)𝖩) = Σ_i J_iᵀ (M_i J̇_i + (M_i ad_{V_i} − ad_{V_i}ᵀ M_i) J_i)``

is what :func:`coriolis_matrix_into` computes. Because ``M_i ad_{V_i} − ad_{V_i}ᵀ M_i`` is skew,
``dM̄/dt − 2C̄ = Σ_i (J̇_iᵀM_iJ_i − J_iᵀM_iJ̇_i) − 2 Σ_i J_iᵀ(M_i ad_{V_i} − ad_{V_i}ᵀM_i)J_i``
is skew-symmetric (``M_i`` is constant in the body frame, so ``dM̄/dt = Σ J̇_iᵀM_iJ_i + J_iᵀM_iJ̇_i``).
In spatial (world-frame) coordinates the same matrix is exactly the form of eq. (172),
``C̄ = Σ_i J^sᵢᵀ(M^s_i J̇^s_i − ad_{V^s_i}ᵀ M^s_i J^s_i)``, because ``J̇^s_i = Ad_{C_i}(J̇_i + ad_{V_i}J_i)``;
eq. (172) is skew-consistent in the spatial representation, not in the body-fixed one.

Algorithm (O(n·depth)): with the composite quantities, in body frame k,
``Ic_k = Σ_{i ⪰ k} Ad_{C_{i,k}}ᵀ M_i Ad_{C_{i,k}}`` (CRBA) and
``Bc_k = Σ_{i ⪰ k} Ad_{C_{i,k}}ᵀ (−ad_{V_i}ᵀ M_i) Ad_{C_{i,k}}``, and ``Ż_k := ad_{V_k} X_k``
(the body-frame image of the rate of the instantaneous spatial screw of joint k):

* ``C̄_{jk} = J_{k,j}ᵀ (Ic_k Ż_k + Bc_k X_k)`` for ``j ⪯ k``,
* ``C̄_{jk} = (Ic_j X_j)^{(k)}·Ż_k + (Bc_jᵀ X_j)^{(k)}·X_k`` for ``k ≺ j``, where ``(·)^{(k)}``
  transports a wrench from frame j to frame k (``W ↦ Ad_{T}^{-T} W`` along the path).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numba import njit

from pkm.algorithms.kinematics import forward_kinematics, joint_vector, relative_poses, twists_into
from pkm.lie.small import Ad_inv, Ad_inv_T, ad, add, axpy, coad, dot, get6, get_pose, inertia_mul, set6, sub
from pkm.lie import Ad_inv_apply_into, Ad_inv_T_apply_into, Ad_inv_into, ad_apply_into, coad_apply_into
from pkm.lie.interpret import kernel

# Helpers called from numba code only: no Python entry point (no_cpython_wrapper: less compile in
# a first run). CALLING ONE FROM PYTHON CRASHES THE INTERPRETER; tests use conftest.numba_only.
_numba_only = njit(cache=True, nogil=True, no_cfunc_wrapper=True, no_cpython_wrapper=True)

DEFAULT_GRAVITY = (0.0, 0.0, -9.81)


# ---------------------------------------------------------------------------- small kernels
@_numba_only
def _matvec6(M, x, out):
    """``out = M @ x`` for a 6×6 ``M``; ``out`` must not alias ``x``."""
    for r in range(6):
        s = 0.0
        for c in range(6):
            s += M[r, c] * x[c]
        out[r] = s


@_numba_only
def _matTvec6(M, x, out):
    """``out = M.T @ x`` for a 6×6 ``M``; ``out`` must not alias ``x``."""
    for r in range(6):
        s = 0.0
        for c in range(6):
            s += M[c, r] * x[c]
        out[r] = s


@_numba_only
def _dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@_numba_only
def _add_congruence(T, S, out, Ad, tmp):
    """``out += Ad_T^{-T} S Ad_T^{-1}`` (6×6 ``S`` moved from a child frame to its parent frame).

    ``Ad`` and ``tmp`` are 6×6 scratch arrays.
    """
    Ad_inv_into(T, Ad)
    for r in range(6):
        for c in range(6):
            s = 0.0
            for k in range(6):
                s += S[r, k] * Ad[k, c]
            tmp[r, c] = s
    for r in range(6):
        for c in range(6):
            s = 0.0
            for k in range(6):
                s += Ad[k, r] * tmp[k, c]
            out[r, c] += s


# ---------------------------------------------------------------------------- dynamics kernels
@njit(cache=True, no_cfunc_wrapper=True)
def rnea_into(parent, X, T, M, qd, qdd, g0, Wext, V, A, W, tau):
    """Recursive Newton–Euler inverse dynamics ``τ = φ(θ, θ̇, θ̈)`` (eq. 100–101; paper Sec. 6.2, eq. 100–101, App. B; App. B).

    Inputs: ``parent`` (n,), ``X`` (n,6) body-fixed joint screws, ``T`` (n,4,4) relative poses
    ``T_i = C_{parent(i)}^{-1}C_i``, ``M`` (n,6,6) body mass matrices (eq. 167), ``qd``, ``qdd``
    (n,), ``g0`` (3,) gravity in the world frame, ``Wext`` (n,6) external wrenches ``(m; f)``
    acting ON body i, resolved in its body frame. Outputs (overwritten): ``V`` (n,6) twists,
    ``A`` (n,6) accelerations ``V̇_i`` (including the fictitious base acceleration ``(0; −g0)``),
    ``W`` (n,6) the wrench joint i exerts on body i (frame i), ``tau`` (n,).

    Forward (gravity as base acceleration ``V̇_0 = (0; −g0)``, ``V_0 = 0``):
    ``V_i = Ad_{T_i}^{-1}V_p + X_iθ̇_i``, ``V̇_i = Ad_{T_i}^{-1}V̇_p + ad_{V_i}X_iθ̇_i + X_iθ̈_i``.
    Backward (eq. 167: ``M V̇ − ad_Vᵀ M V``):
    ``W_i = M_iV̇_i − ad_{V_i}ᵀM_iV_i − Wext_i + Σ_{c: parent(c)=i} Ad_{T_c}^{-T}W_c``, ``τ_i = X_iᵀW_i``.
    Result ``τ = M̄θ̈ + C̄θ̇ + Q̄^grav − Σ_i J_iᵀ Wext_i``.
    """
    n = X.shape[0]
    for i in range(n):
        p = parent[i]
        R, t = get_pose(T, i)
        x, y = get6(X, i)
        if p < 0:
            w, v = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
            aw, av = Ad_inv(R, t, (0.0, 0.0, 0.0), (-g0[0], -g0[1], -g0[2]))
        else:
            pw, pv = get6(V, p)
            w, v = Ad_inv(R, t, pw, pv)
            pw, pv = get6(A, p)
            aw, av = Ad_inv(R, t, pw, pv)
        w, v = axpy(qd[i], x, w), axpy(qd[i], y, v)
        cw, cv = ad(w, v, x, y)
        aw = axpy(qdd[i], x, axpy(qd[i], cw, aw))
        av = axpy(qdd[i], y, axpy(qd[i], cv, av))
        set6(V, i, w, v)
        set6(A, i, aw, av)
        # local Newton–Euler wrench of body i: M V̇ − ad_Vᵀ M V − Wext
        hm, hf = inertia_mul(M, i, w, v)
        km, kf = coad(w, v, hm, hf)
        am, af = inertia_mul(M, i, aw, av)
        em, ef = get6(Wext, i)
        set6(W, i, sub(sub(am, km), em), sub(sub(af, kf), ef))
    for i in range(n - 1, -1, -1):
        m, f = get6(W, i)
        x, y = get6(X, i)
        tau[i] = dot(x, m) + dot(y, f)
        p = parent[i]
        if p >= 0:
            R, t = get_pose(T, i)
            m, f = Ad_inv_T(R, t, m, f)
            pm, pf = get6(W, p)
            set6(W, p, add(pm, m), add(pf, f))


@njit(cache=True, no_cfunc_wrapper=True)
def gravity_into(parent, X, T, M, g0, A, W, tau, work):
    """Generalized gravity forces ``Q̄^grav = −𝖩ᵀ𝖬𝖴(0; g0)`` (eq. 175) = RNEA at ``θ̇ = θ̈ = 0``.

    ``A`` (n,6) receives ``Ad_{C_i}^{-1}(0; −g0)``, ``W`` (n,6) the joint wrenches, ``tau`` (n,)
    ``Q̄^grav``; ``work``: (2,6) scratch.
    """
    n = X.shape[0]
    a0 = work[0]
    a0[0] = 0.0
    a0[1] = 0.0
    a0[2] = 0.0
    a0[3] = -g0[0]
    a0[4] = -g0[1]
    a0[5] = -g0[2]
    tmp = work[1]
    for i in range(n):
        p = parent[i]
        if p < 0:
            Ad_inv_apply_into(T[i], a0, A[i])
        else:
            Ad_inv_apply_into(T[i], A[p], A[i])
        _matvec6(M[i], A[i], W[i])
    for i in range(n - 1, -1, -1):
        tau[i] = _dot6(X[i], W[i])
        p = parent[i]
        if p >= 0:
            Ad_inv_T_apply_into(T[i], W[i], tmp)
            for r in range(6):
                W[p, r] += tmp[r]


@njit(cache=True, no_cfunc_wrapper=True)
def composite_inertias_into(parent, T, M, Ic, work66):
    """Composite mass matrices ``Ic_k = Σ_{i ⪰ k} Ad_{C_{i,k}}ᵀ M_i Ad_{C_{i,k}}`` in frame k (CRBA).

    ``Ic`` (n,6,6) output; ``work66`` (2,6,6) scratch.
    """
    n = M.shape[0]
    for i in range(n):
        for r in range(6):
            for c in range(6):
                Ic[i, r, c] = M[i, r, c]
    for i in range(n - 1, -1, -1):
        p = parent[i]
        if p >= 0:
            _add_congruence(T[i], Ic[i], Ic[p], work66[0], work66[1])


@njit(cache=True, no_cfunc_wrapper=True)
def mass_matrix_into(parent, X, T, M, Mbar, Ic, work66, work):
    """Generalized mass matrix ``M̄ = 𝖩ᵀ𝖬𝖩`` (eq. 171) by the composite-rigid-body algorithm.

    ``M̄_{jk} = J_{k,j}ᵀ Ic_k X_k`` for ``j ⪯ k`` (and symmetric), 0 for joints on different
    branches. Outputs: ``Mbar`` (n,n), ``Ic`` (n,6,6) composite inertias. Scratch: ``work66``
    (2,6,6), ``work`` (1,6).
    """
    n = X.shape[0]
    composite_inertias_into(parent, T, M, Ic, work66)
    for r in range(n):
        for c in range(n):
            Mbar[r, c] = 0.0
    F = work[0]
    for k in range(n):
        _matvec6(Ic[k], X[k], F)
        Mbar[k, k] = _dot6(X[k], F)
        j = k
        while parent[j] >= 0:
            Ad_inv_T_apply_into(T[j], F, F)
            j = parent[j]
            v = _dot6(X[j], F)
            Mbar[j, k] = v
            Mbar[k, j] = v


@njit(cache=True, no_cfunc_wrapper=True)
def coriolis_matrix_into(parent, X, T, M, qd, V, Ic, Bc, Cbar, work66, work):
    """Coriolis/centrifugal matrix ``C̄ = 𝖩ᵀ(𝖬𝖩̇ + (𝖬𝖻 − 𝖻ᵀ𝖬)𝖩)`` (eq. 172 made skew-consistent,
    see the module docstring): ``C̄θ̇`` = the velocity terms of the RNEA, ``dM̄/dt − 2C̄`` skew.

    Outputs: ``V`` (n,6) twists, ``Ic``/``Bc`` (n,6,6) composite quantities, ``Cbar`` (n,n).
    Scratch: ``work66`` (2,6,6), ``work`` (5,6).
    """
    n = X.shape[0]
    twists_into(parent, X, T, qd, V)
    tmp = work[0]
    for i in range(n):
        # Bc_i = −ad_{V_i}ᵀ M_i (column by column), Ic_i = M_i
        for c in range(6):
            for r in range(6):
                tmp[r] = M[i, r, c]
                Ic[i, r, c] = M[i, r, c]
            coad_apply_into(V[i], tmp, tmp)
            for r in range(6):
                Bc[i, r, c] = -tmp[r]
    for i in range(n - 1, -1, -1):
        p = parent[i]
        if p >= 0:
            _add_congruence(T[i], Ic[i], Ic[p], work66[0], work66[1])
            _add_congruence(T[i], Bc[i], Bc[p], work66[0], work66[1])
    for r in range(n):
        for c in range(n):
            Cbar[r, c] = 0.0
    F, P, Q, Z = work[1], work[2], work[3], work[4]
    for k in range(n):
        ad_apply_into(V[k], X[k], Z)  # Ż_k
        _matvec6(Ic[k], Z, F)
        _matvec6(Bc[k], X[k], tmp)
        for r in range(6):
            F[r] += tmp[r]
        _matvec6(Ic[k], X[k], P)
        _matTvec6(Bc[k], X[k], Q)
        Cbar[k, k] = _dot6(X[k], F)
        j = k
        while parent[j] >= 0:
            Ad_inv_T_apply_into(T[j], F, F)
            Ad_inv_T_apply_into(T[j], P, P)
            Ad_inv_T_apply_into(T[j], Q, Q)
            j = parent[j]
            Cbar[j, k] = _dot6(X[j], F)
            ad_apply_into(V[j], X[j], Z)
            Cbar[k, j] = _dot6(P, Z) + _dot6(Q, X[j])


@njit(cache=True, no_cfunc_wrapper=True)
def kinetic_energy_into(parent, X, T, M, arm, qd, V):
    """``T = Σ_i ½ V_iᵀ M_i V_i + ½ Σ_i armature_i θ̇_i²`` (eq. 3, 167) at the relative poses ``T``
    (n×4×4) and rates ``qd``, the twists into ``V`` (n×6); :func:`kinetic_energy`."""
    twists_into(parent, X, T, qd, V)
    s = 0.0
    for i in range(V.shape[0]):
        for r in range(6):
            a = 0.0
            for c in range(6):
                a += M[i, r, c] * V[i, c]
            s += V[i, r] * a
        s += arm[i] * qd[i] * qd[i]
    return 0.5 * s


@njit(cache=True, no_cfunc_wrapper=True)
def potential_energy_of(C, m, d, g0):
    """``U = Σ_i −m_i g0·(R_i d_i + r_i)`` at the absolute poses ``C`` (n×4×4), body masses ``m`` and
    centres of mass ``d`` (n×3, :func:`body_mass_properties`); :func:`potential_energy`."""
    U = 0.0
    for i in range(C.shape[0]):
        for r in range(3):
            com = C[i, r, 0] * d[i, 0] + C[i, r, 1] * d[i, 1] + C[i, r, 2] * d[i, 2] + C[i, r, 3]
            U -= m[i] * g0[r] * com
    return U


# ---------------------------------------------------------------------------- Python wrappers
def _gravity(gravity):
    g = np.ascontiguousarray(gravity, dtype=np.float64)
    if g.shape != (3,):
        raise ValueError(f"gravity must be a 3-vector in the world frame, got shape {g.shape}")
    if not np.all(np.isfinite(g)):
        raise ValueError("gravity contains NaN or inf")
    return g


def _wrenches(tree, wrenches):
    W = np.zeros((tree.n, 6))
    if wrenches is None:
        return W
    if isinstance(wrenches, Mapping):
        for name, w in wrenches.items():
            w = np.asarray(w, dtype=np.float64)
            if w.shape != (6,):
                raise ValueError(f"wrench on {name!r} must be a 6-vector (m; f), got shape {w.shape}")
            W[tree.body_index(name)] += w
    else:
        W = np.array(wrenches, dtype=np.float64)
        if W.shape != (tree.n, 6):
            raise ValueError(f"wrenches must have shape ({tree.n}, 6), got {W.shape}")
    if not np.all(np.isfinite(W)):
        raise ValueError("wrenches contain NaN or inf")
    return W


def inverse_dynamics(tree, q, qd, qdd, gravity=DEFAULT_GRAVITY, wrenches=None) -> np.ndarray:
    """Joint forces ``τ = M̄θ̈ + C̄θ̇ + Q̄^grav + Q − Σ_i J_iᵀ W_i^ext`` (eq. 100–101), by the RNEA, with
    ``Q`` the joint terms (:func:`joint_term_forces`: armature and friction).

    ``gravity``: gravity acceleration in the world frame. ``wrenches``: external wrenches
    ``(m; f)`` acting ON the bodies, resolved in the body frames -- an (n, 6) array or a mapping
    ``{body name: 6-vector}`` (e.g. an end-effector load). Returns ``τ`` of shape (n,), the drive
    forces/torques that produce ``θ̈`` (``Q̄^act`` in eq. 100).

    >>> from pkm.description.robotfile import load_spec
    >>> from pkm.description.model import robot_tree
    >>> tree = robot_tree(load_spec("robots/serial_6r.toml"))
    >>> tau = inverse_dynamics(tree, np.zeros(6), np.zeros(6), np.zeros(6))
    >>> bool(abs(tau[0]) < 1e-12)    # gravity exerts no torque about the vertical first axis
    True
    """
    q, qd, qdd = joint_vector(tree, q, "q"), joint_vector(tree, qd, "qd"), joint_vector(tree, qdd, "qdd")
    g0, Wext = _gravity(gravity), _wrenches(tree, wrenches)
    n = tree.n
    V, A, W, tau = np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6)), np.empty(n)
    kernel(rnea_into)(tree.parent, tree.X, relative_poses(tree, q), tree.M, qd, qdd, g0, Wext, V, A, W, tau)
    return tau + joint_term_forces(tree, qd, qdd)


def joint_term_forces(tree, qd, qdd) -> np.ndarray:
    """Each tree variable's own force (n,) from :attr:`pkm.description.model.TreeModel.joint_terms`:
    ``armature θ̈ + viscous θ̇ + coulomb tanh(θ̇ / coulomb_speed)`` (a drive's reflected rotor inertia
    and joint friction, the paper's ``Q`` of eq. 100); zeros without joint terms."""
    if tree.joint_terms is None:
        return np.zeros(tree.n)
    arm, fv, fc, vc = np.asarray(tree.joint_terms, float).T
    return arm * qdd + fv * qd + fc * np.tanh(qd / vc)


def dissipated_power(tree, qd) -> float:
    """The power the joints' friction dissipates, ``Σ θ̇_i (viscous_i θ̇_i + coulomb_i tanh(θ̇_i/v_i)) ≥ 0``."""
    if tree.joint_terms is None:
        return 0.0
    _, fv, fc, vc = np.asarray(tree.joint_terms, float).T
    qd = np.asarray(qd, float)
    return float(np.sum(qd * (fv * qd + fc * np.tanh(qd / vc))))


def mass_matrix(tree, q) -> np.ndarray:
    """Generalized mass matrix ``M̄(θ) = 𝖩ᵀ𝖬𝖩`` (eq. 171) plus the joint terms' armature on the
    diagonal, shape (n, n), by the CRBA.

    Symmetric; positive definite when every joint moves some mass (a massless virtual body at
    the end of a chain makes it singular).
    """
    q = joint_vector(tree, q, "q")
    n = tree.n
    Mbar = np.empty((n, n))
    kernel(mass_matrix_into)(tree.parent, tree.X, relative_poses(tree, q), tree.M, Mbar, np.empty((n, 6, 6)),
                             np.empty((2, 6, 6)), np.empty((1, 6)))
    if tree.joint_terms is not None:   # the armature (a drive's reflected rotor inertia n² J_m)
        Mbar[np.diag_indices(n)] += np.asarray(tree.joint_terms, float)[:, 0]
    return Mbar


def coriolis_matrix(tree, q, qd) -> np.ndarray:
    """Coriolis/centrifugal matrix ``C̄(θ, θ̇)`` (eq. 100; skew-consistent variant of eq. 172, see
    the module docstring), shape (n, n): ``C̄θ̇`` = the RNEA velocity terms and ``dM̄/dt − 2C̄`` is
    skew-symmetric.
    """
    q, qd = joint_vector(tree, q, "q"), joint_vector(tree, qd, "qd")
    n = tree.n
    Cbar = np.empty((n, n))
    kernel(coriolis_matrix_into)(tree.parent, tree.X, relative_poses(tree, q), tree.M, qd, np.empty((n, 6)),
                                 np.empty((n, 6, 6)), np.empty((n, 6, 6)), Cbar, np.empty((2, 6, 6)), np.empty((5, 6)))
    return Cbar


def gravity_forces(tree, q, gravity=DEFAULT_GRAVITY) -> np.ndarray:
    """``Q̄^grav(θ) = −𝖩ᵀ𝖬𝖴(0; g0)`` (eq. 175), shape (n,): the LEFT-hand-side gravity term of
    eq. (100), i.e. the joint forces that hold the tree at rest, ``= +∂U/∂θ`` with ``U`` =
    :func:`potential_energy`.
    """
    q, g0 = joint_vector(tree, q, "q"), _gravity(gravity)
    n = tree.n
    tau = np.empty(n)
    kernel(gravity_into)(tree.parent, tree.X, relative_poses(tree, q), tree.M, g0, np.empty((n, 6)), np.empty((n, 6)),
                         tau, np.empty((2, 6)))
    return tau


def kinetic_energy(tree, q, qd) -> float:
    """``T = Σ_i ½ V_iᵀ M_i V_i`` with the body-fixed twists (eq. 3, 167), plus the rotors'
    ``½ Σ armature_i θ̇_i²``; equals ``½θ̇ᵀM̄θ̇``."""
    q, qd = joint_vector(tree, q, "q"), joint_vector(tree, qd, "qd")
    return float(kernel(kinetic_energy_into)(tree.parent, tree.X, relative_poses(tree, q), tree.M, armature(tree), qd,
                                             np.empty((tree.n, 6))))


def armature(tree) -> np.ndarray:
    """The joints' armature (n,): a drive's reflected rotor inertia ``n² J_m`` (0 without joint terms)."""
    if tree.joint_terms is None:
        return np.zeros(tree.n)
    return np.ascontiguousarray(np.asarray(tree.joint_terms, float)[:, 0])


def body_mass_properties(tree) -> tuple[np.ndarray, np.ndarray]:
    """Masses ``m_i`` (n,) and centres of mass ``d_i`` (n,3) in body coordinates, recovered from
    ``M_i = [[Θ, m skew(d)], [−m skew(d), m I]]`` (eq. 167); ``d_i = 0`` for massless bodies."""
    m = np.trace(tree.M[:, 3:, 3:], axis1=1, axis2=2) / 3.0
    S = 0.5 * (tree.M[:, :3, 3:] + np.transpose(tree.M[:, 3:, :3], (0, 2, 1)))  # m skew(d)
    md = np.stack([S[:, 2, 1], S[:, 0, 2], S[:, 1, 0]], axis=1)
    d = np.zeros((tree.n, 3))
    nz = m > 0.0
    d[nz] = md[nz] / m[nz, None]
    return m, d


def potential_energy(tree, q, gravity=DEFAULT_GRAVITY) -> float:
    """Gravitational potential ``U = Σ_i −m_i g0·(R_i d_i + r_i)`` (world COM of body i), with
    ``U = 0`` for every COM at the world origin; ``∂U/∂θ = Q̄^grav`` (eq. 175)."""
    q, g0 = joint_vector(tree, q, "q"), _gravity(gravity)
    m, d = body_mass_properties(tree)
    return float(kernel(potential_energy_of)(forward_kinematics(tree, q), m, d, g0))
