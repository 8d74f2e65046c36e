"""The batch kernel's model: every limb of a robot in **joint frames**, as flat padded arrays.

:func:`pack` turns a :class:`pkm.robot.Robot` into a :class:`KernelModel`, the immutable input of
:mod:`pkm.kernels.inverse_dynamics`. It is plain numpy, run once per robot (nothing here is compiled).

Joint frames (the revolute-joint sparsity of DESIGN §4)
-------------------------------------------------------
Tree joint ``i`` moves body ``i`` by ``exp(θ_i ^iX_i)`` with the body-fixed screw ``^iX_i``
(:mod:`pkm.algorithms.kinematics`). The kernel does not work in the body frames ``F_i`` but in a frame
``K_i`` fixed to body ``i`` whose z axis is the joint axis and whose origin lies on it: ``K_i = C_i
Q_i`` with the constant ``Q_i`` (the joint frame in body coordinates). In ``K_i`` every joint screw
is ``S = (0, 0, a; 0, 0, b)``: ``(a, b) = (1, 0)`` for R, ``(1, h)`` for H (pitch ``h``), ``(0, 1)``
for P, so that ``exp(θ ^iX_i) = Q_i Z(θ) Q_i⁻¹`` with ``Z(θ)`` a rotation ``aθ`` about z and a
translation ``bθ`` along z. The recursion of eq. (1–2), ``C_i = C_{parent} B_i exp(θ_i ^iX_i)``,
becomes

    ``K_i = K_{parent} P_i Z(θ_i)``,  ``P_i = Q_{parent}⁻¹ B_i Q_i``  (``Q_{ground} = I``),

a constant pose followed by a rotation about z: 12 multiplications instead of a general
exponential. Twists and wrenches of body ``i`` are resolved in ``K_i``; a Jacobian column is
``S`` itself, and ``φ_i = Sᵀ W_i`` picks one or two components (as Pinocchio's ``JointModelRZ``).
The body's mass matrix becomes ``Ad_{Q_i}ᵀ M_i Ad_{Q_i}``, stored as the 10 parameters
``(m, m c, I_o)`` about the ``K_i`` origin. Cut-joint points and directions (:mod:`pkm.algorithms.constraints`)
are moved into the ``K`` frames of their bodies; the constraint values are frame-independent.
The platform's own frame is ``C_p = K_p Q_p⁻¹``: pose errors, the platform Jacobian and the
platform twists stay in ``F_p``, as in :mod:`pkm.algorithms.inverse_kinematics`.

Every transformation is checked numerically here (the screws rebuilt from ``(Q, a, b)``, the
mass matrices from the 10 parameters); a mismatch raises instead of giving wrong torques.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pkm.algorithms.constraints import complete_triad
from pkm.description.model import _Ad, _Ad_inv, _inv_pose, _skew
from pkm.lie.interpret import python_kernels

#: Loop residual (max |g|) at which the kernel's IK counts the loops as closed.
LOOP_TOL = 1e-13


# Layout of the flat per-limb records (names used by pkm.kernels.inverse_dynamics).
# mi (L, NI) int64: header, then parent (n_max) at MI_PARENT, q_index (d_max) at lay[LAY_QIDX],
# actuated positions in q (a_max) at lay[LAY_ACTPOS], one 17-int record per loop at lay[LAY_LOOPS],
# per loop the n_max path marks at lay[LAY_MARKS] (1: joint on the path of cut body k only,
# 2: on r's only, 0: on neither or both — the joints of the loop, paper eq. 16, 22, 28, 32), then the sparse rows
# of a constant H: the number of nonzeros of each row (n_max) at lay[LAY_HNZ] and their columns
# (n_max × d_max, row-major, the first ones of each row used) at lay[LAY_HCOL].
LI_N, LI_DOF, LI_PLAT, LI_NACT, LI_ACTOFF, LI_NLOOP, LI_AFF, LI_NROWS = range(8)
MI_PARENT = 8
LP_K, LP_R, LP_NN, LP_NE, LP_M, LP_ROWS, LP_Y, LP_SIZE = 0, 1, 2, 3, 4, 5, 11, 17
# mf (L, NF) float64: one 28-float record per body from column 0 (joint placement P_i as row-major
# R and p, screw (a, b), inertia (m, mc, I_o), the joint variable's own terms (TreeModel.joint_terms)), then Q_p and Q_p⁻¹ (12 each) at lay[LAY_QP], one
# 36-float record per loop at lay[LAY_LOOPF] (d_k, d_r, c0, n (3×3), e_k (3×3), e_r (3×3), in K
# frames), the nonzeros of a constant H (n_max × d_max, row-major: row i's first ``nnz_i``) at
# lay[LAY_HC] and c (n_max) at lay[LAY_CC] (θ = H q + c, a parallelogram's H has one ±1 per row).
BF_P, BF_A, BF_B, BF_IN, BF_JT, BF_SIZE = 0, 12, 13, 14, 24, 28   # BF_JT: the joint terms (armature,
#                                    viscous, coulomb, coulomb speed) of the body's joint variable
PF_DK, PF_DR, PF_C0, PF_N, PF_EK, PF_ER, PF_SIZE = 0, 3, 6, 9, 18, 27, 36
# lay (LAY_SIZE,) int64: offsets and sizes.
LAY_QIDX, LAY_ACTPOS, LAY_LOOPS, LAY_QP, LAY_LOOPF, LAY_HC, LAY_CC, LAY_NMAX, LAY_DMAX, LAY_LMAX, LAY_DP, \
    LAY_MARKS, LAY_HNZ, LAY_HCOL, LAY_SIZE = range(15)


def has_joint_terms(km) -> bool:
    """Whether any tree variable of the packed model has joint terms (armature or friction: the
    scalar kernel's :func:`pkm.kernels.dynamics._rnea` adds them; the SIMD lanes do not)."""
    n = int(km.lay[LAY_NMAX])
    rec = km.mf[:, :BF_SIZE * n].reshape(km.mf.shape[0], n, BF_SIZE)
    return bool(np.any(rec[:, :, BF_JT:BF_JT + 3] != 0.0))


class KernelModel(NamedTuple):
    """A robot's limbs in joint frames, flattened for :mod:`pkm.kernels.inverse_dynamics` (see the module
    docstring and the layout constants above): ``mi`` (L, NI) integer and ``mf`` (L, NF) float
    records per limb (limb ``l`` in row ``l``), ``lay`` their offsets and sizes and ``Mp`` (1, 10)
    the platform's inertia in ``F_p`` as the 10 parameters of :func:`inertia10`.

    Header of ``mi`` (columns ``LI_*``): tree size ``n``, ``δ_l``, platform body, number of actuated
    joints and their first row in ``J_IK``, loops, 1 for a constant-H limb, ``Σ m`` selected loop
    rows. A loop record (``LP_*``): cut bodies ``k, r`` (−1 = ground), distance and orientation
    rows, independent rows ``m``, which rows (6), dependent tree variables ``y`` (6). The platform
    body is massless in the limb trees (paper Sec. 6.1, eq. 99). Few arrays on purpose: every array argument
    costs numba compile time and call overhead.

    ``d_static`` and ``dp_static`` carry sizes in their types, for numba to compile as constants
    (small loops with a known trip count are unrolled: −14 % for the Delta): ``(0,) * δ_l`` when
    every limb has the same ``δ_l`` (else ``()``: the kernel reads each limb's from ``mi``) and
    :func:`task_rows` (δ_p entries). Each distinct pair of lengths is compiled (and cached) once.
    """

    mi: np.ndarray
    mf: np.ndarray
    lay: np.ndarray
    Mp: np.ndarray
    d_static: tuple
    dp_static: tuple

    # named views for Python (tests, debugging)
    def parent(self, l: int) -> np.ndarray:
        return self.mi[l, MI_PARENT:MI_PARENT + self.mi[l, LI_N]]

    def body(self, l: int, i: int) -> np.ndarray:
        return self.mf[l, BF_SIZE * i:BF_SIZE * (i + 1)]

    def H_values(self, l: int) -> np.ndarray:
        """View of limb ``l``'s constant-H nonzeros, (n_max, d_max): row i's first ``nnz_i``."""
        nmax, dmax = self.lay[LAY_NMAX], self.lay[LAY_DMAX]
        return self.mf[l, self.lay[LAY_HC]:self.lay[LAY_HC] + nmax * dmax].reshape(nmax, dmax)

    def H(self, l: int) -> np.ndarray:
        """Limb ``l``'s constant H (n × δ_l) rebuilt from its sparse rows (zero if it has none)."""
        n, d, dmax = self.mi[l, LI_N], self.mi[l, LI_DOF], self.lay[LAY_DMAX]
        H = np.zeros((n, d))
        for i in range(n):
            for k in range(self.mi[l, self.lay[LAY_HNZ] + i]):
                H[i, self.mi[l, self.lay[LAY_HCOL] + dmax * i + k]] += self.mf[l, self.lay[LAY_HC] + dmax * i + k]
        return H


def _pose12(C: np.ndarray) -> np.ndarray:
    return np.concatenate([C[:3, :3].ravel(), C[:3, 3]])


def joint_frame(X: np.ndarray, kind: str, tol: float = 1e-12) -> tuple[np.ndarray, float, float]:
    """``(Q, a, b)`` for a body-fixed joint screw ``X = (e; v)``: ``X = Ad_Q (0, 0, a; 0, 0, b)``.

    R/H: ``|e| = 1``, z axis ``e``, origin ``e × v`` (the axis point nearest the body origin),
    ``a = 1``, ``b = e·v`` (the pitch, 0 for R). P: ``e = 0``, z axis ``v/|v|``, origin the body
    origin, ``a = 0``, ``b = |v|``. Raises ValueError when ``X`` is not of that form.
    """
    e, v = np.asarray(X[:3], float), np.asarray(X[3:], float)
    Q = np.eye(4)
    if kind == "P":
        b = float(np.linalg.norm(v))
        if np.linalg.norm(e) > tol or b == 0.0:
            raise ValueError(f"prismatic screw {X} is not (0; v) with v ≠ 0")
        z, a = v / b, 0.0
    else:
        if abs(np.linalg.norm(e) - 1.0) > tol:
            raise ValueError(f"{kind} screw {X} has |e| ≠ 1")
        z, a, b = e, 1.0, (float(e @ v) if kind == "H" else 0.0)  # an R joint has pitch 0 exactly
        Q[:3, 3] = np.cross(e, v)
    _, x, y = complete_triad(z)
    Q[:3, :3] = np.column_stack([x, y, z])
    S = np.array([0.0, 0.0, a, 0.0, 0.0, b])
    if not np.allclose(_Ad(Q) @ S, X, rtol=0, atol=tol * max(1.0, float(np.abs(X).max()))):
        raise ValueError(f"joint screw {X} could not be put into a joint frame")
    return Q, a, b


def inertia10(M: np.ndarray, tol: float = 1e-12) -> np.ndarray:
    """``(m, m c, I_o)`` of a rigid-body mass matrix ``M = [[I_o, m[c]×], [−m[c]×, m 1]]`` (ω; v order).

    Raises ValueError when ``M`` is not of that form (checked by rebuilding it).
    """
    m = M[3, 3]
    mc = np.array([M[2, 4], M[0, 5], M[1, 3]])
    I = M[:3, :3]
    out = np.array([m, *mc, I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2]])
    if not np.allclose(inertia6(out), M, rtol=0, atol=tol * max(1.0, float(np.abs(M).max()))):
        raise ValueError("mass matrix is not a rigid-body inertia [[I, m c×], [−m c×, m 1]]")
    return out


def inertia6(p: np.ndarray) -> np.ndarray:
    """The 6×6 mass matrix of the 10 parameters of :func:`inertia10`."""
    m, cx = p[0], _skew(p[1:4])
    M = np.zeros((6, 6))
    M[:3, :3] = [[p[4], p[5], p[6]], [p[5], p[7], p[8]], [p[6], p[8], p[9]]]
    M[:3, 3:] = cx
    M[3:, :3] = -cx
    M[3:, 3:] = m * np.eye(3)
    return M


def pack(robot, affine: bool = True) -> KernelModel:
    """The robot's limbs in joint frames for :mod:`pkm.kernels.inverse_dynamics` (see the module docstring).

    ``affine``: use the constant-H path for limbs whose loop closure is affine
    (:meth:`pkm.algorithms.limb.LimbModel.affine_closure`; ``θ = Hc q + cc``). ``False`` forces the general
    path everywhere (the tests compare the two). Raises NotImplementedError for a distance
    constraint, which the kernel does not evaluate.
    """
    from pkm.algorithms.manipulator import platform_inertia

    limbs = robot.limbs
    L = len(limbs)
    nmax = max(l.n for l in limbs)
    dmax = max(l.dof for l in limbs)
    amax = max(max(len(l.actuated) for l in limbs), 1)
    lmax = max(max(len(l.loops) for l in limbs), 1)
    lay = np.zeros(LAY_SIZE, np.int64)
    lay[LAY_QIDX] = MI_PARENT + nmax
    lay[LAY_ACTPOS] = lay[LAY_QIDX] + dmax
    lay[LAY_LOOPS] = lay[LAY_ACTPOS] + amax
    lay[LAY_QP] = BF_SIZE * nmax
    lay[LAY_LOOPF] = lay[LAY_QP] + 24
    lay[LAY_HC] = lay[LAY_LOOPF] + PF_SIZE * lmax
    lay[LAY_CC] = lay[LAY_HC] + nmax * dmax
    lay[LAY_NMAX], lay[LAY_DMAX], lay[LAY_LMAX], lay[LAY_DP] = nmax, dmax, lmax, robot.P_p.shape[1]
    lay[LAY_MARKS] = lay[LAY_LOOPS] + LP_SIZE * lmax
    lay[LAY_HNZ] = lay[LAY_MARKS] + lmax * nmax
    lay[LAY_HCOL] = lay[LAY_HNZ] + nmax
    mi = np.zeros((L, lay[LAY_HCOL] + nmax * dmax), np.int64)
    mf = np.zeros((L, lay[LAY_CC] + nmax))
    off = 0
    for l, limb in enumerate(limbs):
        tree, n = limb.tree, limb.n
        na = len(limb.actuated)
        mi[l, :LI_NROWS + 1] = (n, limb.dof, limb.platform, na, off, len(limb.loops), 0, sum(lp.m for lp in limb.loops))
        off += na
        Q = np.empty((n, 4, 4))
        for i in range(n):
            b = mf[l, BF_SIZE * i:BF_SIZE * (i + 1)]
            Q[i], b[BF_A], b[BF_B] = joint_frame(tree.X[i], tree.axis_kind[i])
            k = tree.parent[i]
            Qk_inv = np.eye(4) if k < 0 else _inv_pose(Q[k])
            b[BF_P:BF_P + 12] = _pose12(Qk_inv @ tree.B[i] @ Q[i])
            if i != limb.platform:  # the limb trees carry a massless platform (paper Sec. 6.1, eq. 99)
                AdQ = _Ad(Q[i])
                b[BF_IN:BF_IN + 10] = inertia10(AdQ.T @ tree.M[i] @ AdQ)
            if tree.joint_terms is not None:
                b[BF_JT:BF_JT + 4] = tree.joint_terms[i]
        mi[l, MI_PARENT:MI_PARENT + nmax] = -1
        mi[l, MI_PARENT:MI_PARENT + n] = tree.parent
        p = limb.platform
        mf[l, lay[LAY_QP]:lay[LAY_QP] + 24] = np.concatenate([_pose12(Q[p]), _pose12(_inv_pose(Q[p]))])
        mi[l, lay[LAY_QIDX]:lay[LAY_QIDX] + limb.dof] = limb.q_index
        mi[l, lay[LAY_ACTPOS]:lay[LAY_ACTPOS] + na] = [list(limb.q_index).index(x) for x in limb.actuated]
        with python_kernels():  # a few evaluations once per limb: run as Python, nothing to compile
            closure = limb.affine_closure(LOOP_TOL) if affine else None
        if closure is not None:
            mi[l, LI_AFF] = 1
            for i in range(n):  # sparse rows: the kernels touch only the nonzeros
                cols = np.flatnonzero(closure[0][i])
                mi[l, lay[LAY_HNZ] + i] = len(cols)
                mi[l, lay[LAY_HCOL] + dmax * i:lay[LAY_HCOL] + dmax * i + len(cols)] = cols
                mf[l, lay[LAY_HC] + dmax * i:lay[LAY_HC] + dmax * i + len(cols)] = closure[0][i, cols]
            mf[l, lay[LAY_CC]:lay[LAY_CC] + n] = closure[1]
        for k, lp in enumerate(limb.loops):
            cj = lp.cut
            if cj.is_distance:
                raise NotImplementedError("distance constraints are not supported by the batch kernel")
            Qk = np.eye(4) if cj.k < 0 else Q[cj.k]
            Qr = np.eye(4) if cj.r < 0 else Q[cj.r]
            Rk, Rr = Qk[:3, :3], Qr[:3, :3]
            nd, ne = len(cj.n), len(cj.c0)
            ri = mi[l, lay[LAY_LOOPS] + LP_SIZE * k:lay[LAY_LOOPS] + LP_SIZE * (k + 1)]
            ri[:LP_ROWS] = (cj.k, cj.r, nd, ne, lp.m)
            ri[LP_ROWS:LP_ROWS + lp.m] = lp.rows
            ri[LP_Y:LP_Y + lp.m] = lp.y
            on_k = tree.ancestor[cj.k] if cj.k >= 0 else np.zeros(n, bool)
            on_r = tree.ancestor[cj.r] if cj.r >= 0 else np.zeros(n, bool)
            marks = mi[l, lay[LAY_MARKS] + nmax * k:lay[LAY_MARKS] + nmax * k + n]
            marks[on_k & ~on_r] = 1
            marks[on_r & ~on_k] = 2
            f = mf[l, lay[LAY_LOOPF] + PF_SIZE * k:lay[LAY_LOOPF] + PF_SIZE * (k + 1)]
            f[PF_DK:PF_DK + 3] = Rk.T @ (cj.d_k - Qk[:3, 3])
            f[PF_DR:PF_DR + 3] = Rr.T @ (cj.d_r - Qr[:3, 3])
            f[PF_C0:PF_C0 + ne] = cj.c0
            f[PF_N:PF_N + 3 * nd] = (cj.n @ Rk).ravel()
            f[PF_EK:PF_EK + 3 * ne] = (cj.e_k @ Rk).ravel()
            f[PF_ER:PF_ER + 3 * ne] = (cj.e_r @ Rr).ravel()
    dofs = {limb.dof for limb in limbs}
    return KernelModel(mi=mi, mf=mf, lay=lay, Mp=inertia10(np.asarray(platform_inertia(robot), dtype=float))[None, :],
                       d_static=(0,) * dmax if len(dofs) == 1 else (), dp_static=task_rows(robot.P_p))


def task_rows(P_p) -> tuple:
    """The twist component (row of ``P_p``, 0–5 for ``ω_x … v_z``) that each task coordinate selects.

    ``P_p`` (6 × δ_p, eq. 82) is a selection matrix: a task space is spanned by components of the
    platform twist (:meth:`pkm.description.spec.TaskSpec.selection_matrix`), so the kernel applies ``P_p`` and
    ``P_pᵀ`` as index maps, ``(L_p⁺P_p)_{ac} = (L_p⁺)_{a,row_c}`` and ``(P_pᵀφ)_c = φ_{row_c}``,
    instead of 6 × δ_p products. Raises ValueError for any other matrix."""
    P = np.asarray(P_p, dtype=float)
    rows = tuple(int(r) for r in np.argmax(P, axis=0)) if P.ndim == 2 and P.shape[0] == 6 else None
    if rows is None or not np.array_equal(P, np.eye(6)[:, list(rows)]) or len(set(rows)) != len(rows):
        raise ValueError(f"P_p must select distinct rows of the 6-vector twist (a 0/1 matrix, one 1 per column), got {P!r}")
    return rows


def reference_inertia(km: KernelModel, robot, l: int) -> np.ndarray:
    """Limb ``l``'s body mass matrices rebuilt from the packed data, back in the body frames
    (for tests: equals the limb tree's ``M`` with the platform massless)."""
    limb = robot.limbs[l]
    out = np.zeros((limb.n, 6, 6))
    for i in range(limb.n):
        Q, _, _ = joint_frame(limb.tree.X[i], limb.tree.axis_kind[i])
        AdQi = _Ad_inv(Q)
        out[i] = AdQi.T @ inertia6(km.body(l, i)[BF_IN:BF_IN + 10]) @ AdQi
    return out
