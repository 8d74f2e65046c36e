"""Cut-joint loop-closure constraints, cut-joint formulation (paper Sec. 3.3, eq. 12–42).

A fundamental cycle (FC) is closed by a *cut joint* between two bodies of the spanning tree:
body ``k`` (the joint's ``parent``) and body ``r`` (its ``child``); index ``-1`` is the ground
(pose ``I``, zero twist and Jacobian). The cut joint imposes ``m`` geometric constraints
``g(θ) = 0`` (eq. 12) on the tree variables, hence ``G θ̇ = 0`` (eq. 13) and
``G θ̈ + Ġθ̇ = 0`` (eq. 14). This module evaluates ``g``, ``G`` and the convective vector
``Ġθ̇`` from the tree's poses ``C`` (n,4,4), body Jacobians ``J`` (n,6,n), twists ``V`` (n,6)
and "bias accelerations" ``Ab = J̇θ̇`` (n,6) (:mod:`pkm.algorithms.kinematics`).

Representation (one data layout for every joint type)
-----------------------------------------------------
* ``d_k``, ``d_r`` (3,): the joint point in body-k and in body-r coordinates (the translations
  ``^kd_{k,λ}``, ``^rd_{r,λ}`` of the joint frames, eq. 15).
* Distance rows (eq. 16): ``g_i = n_i · ρ`` for the ``p`` rows of ``n`` (p,3), directions fixed
  in body k, where ``ρ = R_kᵀ(r_r + R_r d_r − r_k) − d_k`` is the vector from the joint point on
  k to the joint point on r, resolved in ``F_k``. (The paper resolves it in the joint frame,
  ``Δr = R_{k,λ}ᵀ ρ``; taking ``n_i`` = the rows of ``R_{k,λ}ᵀ`` gives exactly eq. 16.)
* Orientation rows (eq. 33): ``g_j = (R_k e_{k,j})·(R_r e_{r,j}) − c0_j`` for the ``q`` rows of
  ``e_k`` (q,3) (fixed in body k) and ``e_r`` (q,3) (fixed in body r). With
  ``e_k = R_{k,λ} ^{k,λ}e_k`` and ``e_r = R_{r,λ} ^{r,λ}e_r`` this is eq. (33),
  ``^{k,λ}e_kᵀ ΔR_λ ^{r,λ}e_r``; ``c0`` is its value at the reference (0 except for a skew U).
* Distance constraint (seed 000, B2: a binary link with two ball joints): one row
  ``g = ½(|ρ|² − L²)``.

Joint types (``a`` = joint axis, ``b, c`` complete it to an orthonormal triad; see
:func:`cut_joint`): S: 3 distance rows (m = 3). U (axes ``a1`` in k, ``a2`` in r): 3 distance
rows + ``(a1, a2)`` (m = 4). R: 3 distance rows + ``(b, a)``, ``(c, a)`` (m = 5). C: distance
rows along ``b, c`` + the two R rows (m = 4). P: distance rows along ``b, c`` +
``(a, b)``, ``(a, c)``, ``(b, c)`` (m = 5). H: not supported.

Formulas (derived and checked numerically in ``tests/test_constraints.py``)
-------------------------------------------------------------------------
Body-fixed twists ``V = (ω; v)``, ``R_{k,r} = R_kᵀR_r``, ``s = ρ + d_k = ^kr_{k,r} + ^kd_{r,λ}``,
``u_r = v_r + ω_r × d_r`` (velocity of the joint point on r, in ``F_r``):

* ``ρ̇ = s × ω_k − v_k + R_{k,r} u_r``, i.e. ``ρ̇ = B_dist (ω_k; v_k; ω_r; v_r)`` with
  ``B_dist = [skew(s), −I, −R_{k,r} skew(d_r), R_{k,r}]`` — eq. (22) with the EXACT first block
  ``skew(^kr_{k,r} + ^kd_{r,λ})``; eq. (28)'s "Δr + d̃_{r,λ}" (paper eq. 28, exact form eq. 22) is only right at
  closure. Distance rows: ``ġ = N ρ̇`` (eq. 32: ``G = B [J_k; J_r]``).
* Orientation rows (eq. 37/41, with the corrected ``ΔṘ`` of paper eq. 37, corrected):
  ``ġ = (e_k × ^ke_r)·ω_k + (e_r × ^re_k)·ω_r``, ``^ke_r = R_{k,r} e_r``, ``^re_k = R_{k,r}ᵀ e_k``.
* ``Ġθ̇`` (not given in the paper, paper eq. 14 and 47, Ġ not printed; eq. 14): ``B (Ab_k; Ab_r) + κ`` with
  ``κ_d = −ω_k × (ρ̇ + R_{k,r}u_r) + R_{k,r}(ω_r × u_r)`` for the distance rows (``N κ_d``) and
  ``κ_o = (ω_k×(ω_k×e_k))·^ke_r + 2(ω_k×e_k)·R_{k,r}(ω_r×e_r) + ^re_k·(ω_r×(ω_r×e_r))`` for the
  orientation rows (paper eq. 16, 22, 28, 32; eq. 33, 37, 41). For the distance constraint ``ġ = ρ·ρ̇`` and
  ``Ġθ̇ = ρ·(B Ab + κ_d) + |ρ̇|²``.

The row counts follow the corrected "3 − δ^rot" orientation rows (paper Sec. 3.3, 3 − δ^rot rows). The R rows
are ``ΔR_{13}, ΔR_{23}`` in the paper's joint-frame convention (axis = 3-axis of both frames, item
16). The U row: with the paper's convention (first U axis = 1-axis of ``J_k``, second = 2-axis of
``J_r``) the invariant element is ``ΔR_{12} = u_1ᵀ ΔR u_2``, so ``e_k`` = first axis and ``e_r`` =
second axis (what :func:`cut_joint` uses). The paper's "(1,2)-element" is right; its VECTORS
``^{r,λ}e_r = u_1``, ``^{k,λ}e_k = u_2`` are swapped (they give ``ΔR_{21} = sin α sin β`` under the
U motion ``ΔR = Rot(u_1, α) Rot(u_2, β)``). Spec §14.2 item 15, which keeps the vectors and
changes the element to ``ΔR_{21}``, is therefore wrong (``tests/test_constraints.py`` checks
this). For planar/spherical loops some rows vanish identically (e.g. the Delta parallelogram:
rank 2 of 5 rows, paper Sec. 3.3, eq. 42 ff.); removing them is left to the caller (Remark 2).

Kernels are ``numba.njit(cache=True)`` and allocation-free (3-vectors live in tuples); they take
the :class:`CutJoint` arrays explicitly. The wrappers :func:`residual`, :func:`jacobian` and
:func:`bias` validate shapes and allocate the outputs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from pkm.lie.small import add as _add
from pkm.lie.small import cross as _cross
from pkm.lie.small import dot as _dot
from pkm.lie.small import get3 as _vec
from pkm.lie.small import mtv as _mtv
from pkm.lie.small import mv as _mv
from pkm.lie.small import sub as _sub
from pkm.errors import TopologyError
from pkm.lie import KERNEL_FASTMATH
from pkm.lie.interpret import kernel

# Helpers called from numba code only: no Python entry point (no_cpython_wrapper: less compile in
# a first run). CALLING ONE FROM PYTHON CRASHES THE INTERPRETER; tests use conftest.numba_only.
# No numba runtime (_nrt=False): the batch kernel calls them (see pkm.kernels.work._OPTIONS).
_numba_only = njit(cache=True, nogil=True, no_cfunc_wrapper=True, no_cpython_wrapper=True, _nrt=False,
                   fastmath=KERNEL_FASTMATH)

#: Joint types that can be cut joints, with their number of constraints m = 6 − DOF (paper Sec. 3.3, eq. 42 ff.).
CUT_TYPES = {"S": 3, "U": 4, "C": 4, "R": 5, "P": 5}

_EMPTY = np.zeros((0, 3))


# ------------------------------------------------------------------------------ data
@dataclass(frozen=True, eq=False)
class CutJoint:
    """The constraint data of one cut joint (see the module docstring for the meaning).

    ``k``/``r`` index the tree bodies (``-1`` = ground); ``body_k``/``body_r`` are their names.
    ``n`` (p,3) are distance directions, ``e_k``/``e_r`` (q,3) and ``c0`` (q,) the orientation
    rows, all in body coordinates; ``length`` is ``L`` of a ``"distance"`` constraint (else NaN).
    """

    name: str
    type: str
    k: int
    r: int
    d_k: np.ndarray
    d_r: np.ndarray
    n: np.ndarray
    e_k: np.ndarray
    e_r: np.ndarray
    c0: np.ndarray
    length: float = float("nan")
    body_k: str = ""
    body_r: str = ""

    @property
    def is_distance(self) -> bool:
        return self.type == "distance"

    @property
    def m(self) -> int:
        """Number of constraint rows."""
        if self.is_distance:
            return 1
        return self.n.shape[0] + self.e_k.shape[0]

    def loop_variables(self, tree) -> np.ndarray:
        """Indices of the tree variables of the FC (on exactly one of the paths k→0, r→0).

        Only these columns of ``G`` can be non-zero: the joints shared by both paths cancel
        (paper eq. 16, 22, 28, 32, eq. 32).
        """
        on_k = tree.ancestor[self.k] if self.k >= 0 else np.zeros(tree.n, bool)
        on_r = tree.ancestor[self.r] if self.r >= 0 else np.zeros(tree.n, bool)
        return np.flatnonzero(on_k ^ on_r)


def _unit(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    nrm = np.linalg.norm(x)
    if not np.isfinite(nrm) or nrm < 1e-12:
        raise ValueError(f"axis {x} has zero length")
    return x / nrm


def complete_triad(a) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit vectors ``(a, b, c)``, right-handed orthonormal, ``b, c ⊥ a`` (deterministic).

    >>> a, b, c = complete_triad([0, 0, 2.0]); np.allclose(np.cross(a, b), c)
    True
    """
    a = _unit(a)
    u = np.zeros(3)
    u[int(np.argmin(np.abs(a)))] = 1.0
    b = _unit(np.cross(a, u))
    c = np.cross(a, b)
    return a, b, c


def _body(tree, name: str) -> tuple[int, np.ndarray]:
    if name == tree.root:
        return -1, np.eye(4)
    i = tree.body_index(name)
    return i, np.asarray(tree.A[i], dtype=np.float64)


def _rows(vectors) -> np.ndarray:
    if len(vectors) == 0:
        return _EMPTY.copy()
    return np.ascontiguousarray(np.array(vectors, dtype=np.float64).reshape(-1, 3))


def cut_joint(joint, tree) -> CutJoint:
    """Constraint data of cut joint ``joint`` (a :class:`pkm.description.spec.JointSpec`) on ``tree``.

    ``k`` = ``joint.parent``, ``r`` = ``joint.child`` (found with ``tree.body_index``; the tree's
    root is ``-1``). World vectors of the reference configuration are converted to body
    coordinates with the reference poses ``A_k``, ``A_r``: points ``d = A⁻¹ p``, directions
    ``R_Aᵀ x``. Raises :class:`pkm.errors.TopologyError` (a ``ValueError``) for H joints and
    unknown types.
    """
    jt = joint.type
    if jt == "H":
        raise TopologyError(
            f"joint {joint.name!r}: H (helical) cut joints are not supported; cut another joint of the loop"
        )
    if jt not in CUT_TYPES:
        raise TopologyError(f"joint {joint.name!r}: unknown joint type {jt!r} for a cut joint")
    if joint.parent == joint.child:
        raise TopologyError(f"cut joint {joint.name!r} connects body {joint.parent!r} to itself")
    k, Ak = _body(tree, joint.parent)
    r, Ar = _body(tree, joint.child)
    Rk, Rr = Ak[:3, :3], Ar[:3, :3]
    p = np.asarray(joint.point, dtype=np.float64)
    d_k = Rk.T @ (p - Ak[:3, 3])
    d_r = Rr.T @ (p - Ar[:3, 3])
    axes = np.atleast_2d(np.asarray(joint.axes, dtype=np.float64))
    if axes.shape[0] < 1 or axes.shape[1] != 3:
        raise ValueError(f"joint {joint.name!r}: axes must have shape (dof, 3), got {axes.shape}")

    def in_k(x):
        return Rk.T @ x

    def in_r(x):
        return Rr.T @ x

    world = np.eye(3)
    if jt == "S":
        n, ek, er, c0 = [in_k(x) for x in world], [], [], []
    elif jt == "U":
        if axes.shape[0] != 2:
            raise ValueError(f"joint {joint.name!r}: a U joint needs 2 axes, got {axes.shape[0]}")
        a1, a2 = _unit(axes[0]), _unit(axes[1])
        n, ek, er, c0 = [in_k(x) for x in world], [in_k(a1)], [in_r(a2)], [float(a1 @ a2)]
    else:  # R, C, P: one axis
        a, b, c = complete_triad(axes[0])
        if jt == "R":
            n = [in_k(x) for x in world]
        else:
            n = [in_k(b), in_k(c)]
        if jt in ("R", "C"):
            ek, er = [in_k(b), in_k(c)], [in_r(a), in_r(a)]
        else:  # P: no relative rotation
            ek, er = [in_k(a), in_k(a), in_k(b)], [in_r(b), in_r(c), in_r(c)]
        c0 = [0.0] * len(ek)
    return CutJoint(
        name=joint.name,
        type=jt,
        k=int(k),
        r=int(r),
        d_k=np.ascontiguousarray(d_k),
        d_r=np.ascontiguousarray(d_r),
        n=_rows(n),
        e_k=_rows(ek),
        e_r=_rows(er),
        c0=np.array(c0, dtype=np.float64),
        body_k=joint.parent,
        body_r=joint.child,
    )


def distance_constraint(name: str, tree, body_k: str, point_k, body_r: str, point_r, length=None) -> CutJoint:
    """A distance constraint ``½(|p_r − p_k|² − L²) = 0`` between two body points (seed 000, B2).

    ``point_k``/``point_r`` are world points at the reference configuration, on ``body_k`` and
    ``body_r``; ``length`` defaults to their distance there (so ``g = 0`` at the reference).
    """
    if body_k == body_r:
        raise TopologyError(f"distance constraint {name!r} connects body {body_k!r} to itself")
    k, Ak = _body(tree, body_k)
    r, Ar = _body(tree, body_r)
    pk = np.asarray(point_k, dtype=np.float64)
    pr = np.asarray(point_r, dtype=np.float64)
    L = float(np.linalg.norm(pr - pk)) if length is None else float(length)
    if not np.isfinite(L) or L < 0:
        raise ValueError(f"distance constraint {name!r}: bad length {length!r}")
    return CutJoint(
        name=name,
        type="distance",
        k=int(k),
        r=int(r),
        d_k=np.ascontiguousarray(Ak[:3, :3].T @ (pk - Ak[:3, 3])),
        d_r=np.ascontiguousarray(Ar[:3, :3].T @ (pr - Ar[:3, 3])),
        n=_EMPTY.copy(),
        e_k=_EMPTY.copy(),
        e_r=_EMPTY.copy(),
        c0=np.zeros(0),
        length=L,
        body_k=body_k,
        body_r=body_r,
    )


# ------------------------------------------------------------------------------ tuple algebra
# 3-vectors and row-major 3×3 products come from pkm.lie.small; these add the ground (index −1).
@njit(cache=True, no_cfunc_wrapper=True)
def _pose(C, k):
    """(R as row-major 9-tuple, r) of body k; the identity for the ground (k < 0)."""
    if k < 0:
        return (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), (0.0, 0.0, 0.0)
    R = (C[k, 0, 0], C[k, 0, 1], C[k, 0, 2], C[k, 1, 0], C[k, 1, 1], C[k, 1, 2], C[k, 2, 0], C[k, 2, 1], C[k, 2, 2])
    return R, (C[k, 0, 3], C[k, 1, 3], C[k, 2, 3])


@_numba_only
def _twist(V, k):
    """(ω, v) of row k of an (n,6) array; zero for the ground."""
    if k < 0:
        return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    return (V[k, 0], V[k, 1], V[k, 2]), (V[k, 3], V[k, 4], V[k, 5])


@_numba_only
def _jcol(J, k, i):
    """(ω, v) of column i of J_k; zero for the ground."""
    if k < 0:
        return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    return (J[k, 0, i], J[k, 1, i], J[k, 2, i]), (J[k, 3, i], J[k, 4, i], J[k, 5, i])


@_numba_only
def _geometry(k, r, d_k, d_r, C):
    """``R_{k,r} = R_kᵀR_r`` (9-tuple), ``s = R_kᵀ(r_r + R_r d_r − r_k)`` and ``ρ = s − d_k``."""
    Rk, rk = _pose(C, k)
    Rr, rr = _pose(C, r)
    Rkr = (
        Rk[0] * Rr[0] + Rk[3] * Rr[3] + Rk[6] * Rr[6],
        Rk[0] * Rr[1] + Rk[3] * Rr[4] + Rk[6] * Rr[7],
        Rk[0] * Rr[2] + Rk[3] * Rr[5] + Rk[6] * Rr[8],
        Rk[1] * Rr[0] + Rk[4] * Rr[3] + Rk[7] * Rr[6],
        Rk[1] * Rr[1] + Rk[4] * Rr[4] + Rk[7] * Rr[7],
        Rk[1] * Rr[2] + Rk[4] * Rr[5] + Rk[7] * Rr[8],
        Rk[2] * Rr[0] + Rk[5] * Rr[3] + Rk[8] * Rr[6],
        Rk[2] * Rr[1] + Rk[5] * Rr[4] + Rk[8] * Rr[7],
        Rk[2] * Rr[2] + Rk[5] * Rr[5] + Rk[8] * Rr[8],
    )
    dr = (d_r[0], d_r[1], d_r[2])
    s = _mtv(Rk, _sub(_add(rr, _mv(Rr, dr)), rk))
    rho = (s[0] - d_k[0], s[1] - d_k[1], s[2] - d_k[2])
    return Rkr, s, rho, dr


@_numba_only
def _rhodot(Rkr, s, dr, wk, vk, wr, vr):
    """``B_dist (ω_k; v_k; ω_r; v_r) = s × ω_k − v_k + R_{k,r}(v_r + ω_r × d_r)`` (eq. 22, exact)."""
    return _add(_sub(_cross(s, wk), vk), _mv(Rkr, _add(vr, _cross(wr, dr))))


@_numba_only
def _orient_rate(Rkr, ek, er, wk, wr):
    """``(e_k × ^ke_r)·ω_k + (e_r × ^re_k)·ω_r`` (eq. 37/41, corrected)."""
    return _dot(_cross(ek, _mv(Rkr, er)), wk) + _dot(_cross(er, _mtv(Rkr, ek)), wr)


# ------------------------------------------------------------------------------ kernels
@njit(cache=True, no_cfunc_wrapper=True)
def cut_residual_into(k, r, d_k, d_r, n, e_k, e_r, c0, C, out):
    """Residual ``g`` (m,) of a cut joint (eq. 12; distance rows eq. 16, orientation rows eq. 33).

    ``g_i = n_i·ρ`` (i < p) and ``g_{p+j} = e_{k,j}·(R_{k,r} e_{r,j}) − c0_j``.
    """
    Rkr, s, rho, dr = _geometry(k, r, d_k, d_r, C)
    p = n.shape[0]
    for i in range(p):
        out[i] = _dot(_vec(n, i), rho)
    for j in range(e_k.shape[0]):
        out[p + j] = _dot(_vec(e_k, j), _mv(Rkr, _vec(e_r, j))) - c0[j]


@njit(cache=True, no_cfunc_wrapper=True)
def cut_jacobian_into(k, r, d_k, d_r, n, e_k, e_r, c0, C, J, out):
    """Constraint Jacobian ``G = B [J_k; J_r]`` (m × ntree), ``G θ̇ = ġ`` (eq. 13, 32, 37, 41).

    Uses the exact first block ``skew(^kr_{k,r} + ^kd_{r,λ})`` of eq. (22), valid away from
    closure (not the closure-only form printed in eq. 28, paper eq. 28, exact form eq. 22).
    """
    Rkr, s, rho, dr = _geometry(k, r, d_k, d_r, C)
    p = n.shape[0]
    q = e_k.shape[0]
    for i in range(J.shape[2]):
        wk, vk = _jcol(J, k, i)
        wr, vr = _jcol(J, r, i)
        rd = _rhodot(Rkr, s, dr, wk, vk, wr, vr)
        for a in range(p):
            out[a, i] = _dot(_vec(n, a), rd)
        for j in range(q):
            out[p + j, i] = _orient_rate(Rkr, _vec(e_k, j), _vec(e_r, j), wk, wr)


@_numba_only
def _bias_rho(Rkr, s, dr, wk, vk, wr, vr, ak, bk, ar, br):
    """``(ρ̈ at θ̈ = 0, ρ̇)``: ``B (Ab_k; Ab_r) + κ_d`` with ``κ_d = −ω_k × (ρ̇ + R_{k,r}u_r) +
    R_{k,r}(ω_r × u_r)``, ``u_r = v_r + ω_r × d_r`` (paper eq. 16, 22, 28, 32), from the twists ``(ω, v)`` and bias
    accelerations ``(a, b) = J̇θ̇`` of bodies k and r (body-fixed, any consistent body frames)."""
    ur = _add(vr, _cross(wr, dr))
    Rur = _mv(Rkr, ur)
    rd = _add(_sub(_cross(s, wk), vk), Rur)
    kd = _add(_cross(_add(rd, Rur), wk), _mv(Rkr, _cross(wr, ur)))
    return _add(_rhodot(Rkr, s, dr, ak, bk, ar, br), kd), rd


@_numba_only
def _bias_orient(Rkr, ek, er, wk, wr, ak, ar):
    """``Ġθ̇`` of an orientation row: ``(e_k × ^ke_r)·a_k + (e_r × ^re_k)·a_r + κ_o`` with
    ``κ_o = (ω_k×(ω_k×e_k))·^ke_r + 2(ω_k×e_k)·R_{k,r}(ω_r×e_r) + ^re_k·(ω_r×(ω_r×e_r))`` (paper eq. 33, 37, 41)."""
    wek = _cross(wk, ek)
    wer = _cross(wr, er)
    kappa = _dot(_cross(wk, wek), _mv(Rkr, er)) + 2.0 * _dot(wek, _mv(Rkr, wer)) + _dot(_mtv(Rkr, ek), _cross(wr, wer))
    return _orient_rate(Rkr, ek, er, ak, ar) + kappa


@njit(cache=True, no_cfunc_wrapper=True)
def cut_bias_into(k, r, d_k, d_r, n, e_k, e_r, c0, C, V, Ab, out):
    """Convective vector ``Ġθ̇`` (m,), so that ``g̈ = G θ̈ + Ġθ̇`` (eq. 14, 47).

    ``V`` (n,6) are the body twists, ``Ab`` (n,6) = ``J̇θ̇`` per body. Result:
    ``B (Ab_k; Ab_r) + κ`` with the convective terms ``κ_d``, ``κ_o`` of paper eq. 16, 22, 28, 32; eq. 33, 37, 41 (the paper
    gives no formula for Ġ, paper eq. 14 and 47, Ġ not printed; :func:`_bias_rho`, :func:`_bias_orient`).
    """
    Rkr, s, rho, dr = _geometry(k, r, d_k, d_r, C)
    wk, vk = _twist(V, k)
    wr, vr = _twist(V, r)
    ak, bk = _twist(Ab, k)
    ar, br = _twist(Ab, r)
    acc, _ = _bias_rho(Rkr, s, dr, wk, vk, wr, vr, ak, bk, ar, br)
    p = n.shape[0]
    for i in range(p):
        out[i] = _dot(_vec(n, i), acc)
    for j in range(e_k.shape[0]):
        out[p + j] = _bias_orient(Rkr, _vec(e_k, j), _vec(e_r, j), wk, wr, ak, ar)


@njit(cache=True, no_cfunc_wrapper=True)
def distance_residual_into(k, r, d_k, d_r, L, C, out):
    """Distance constraint ``g = ½(|ρ|² − L²)`` (seed 000, B2), into ``out`` (1,)."""
    Rkr, s, rho, dr = _geometry(k, r, d_k, d_r, C)
    out[0] = 0.5 * (_dot(rho, rho) - L * L)


@njit(cache=True, no_cfunc_wrapper=True)
def distance_jacobian_into(k, r, d_k, d_r, L, C, J, out):
    """``G = ρᵀ B_dist [J_k; J_r]`` (1 × ntree): ``ġ = ρ·ρ̇``."""
    Rkr, s, rho, dr = _geometry(k, r, d_k, d_r, C)
    for i in range(J.shape[2]):
        wk, vk = _jcol(J, k, i)
        wr, vr = _jcol(J, r, i)
        out[0, i] = _dot(rho, _rhodot(Rkr, s, dr, wk, vk, wr, vr))


@njit(cache=True, no_cfunc_wrapper=True)
def distance_bias_into(k, r, d_k, d_r, L, C, V, Ab, out):
    """``Ġθ̇ = ρ·(B_dist (Ab_k; Ab_r) + κ_d) + |ρ̇|²`` (1,) for the distance constraint."""
    Rkr, s, rho, dr = _geometry(k, r, d_k, d_r, C)
    wk, vk = _twist(V, k)
    wr, vr = _twist(V, r)
    ak, bk = _twist(Ab, k)
    ar, br = _twist(Ab, r)
    acc, rd = _bias_rho(Rkr, s, dr, wk, vk, wr, vr, ak, bk, ar, br)
    out[0] = _dot(rho, acc) + _dot(rd, rd)


# ------------------------------------------------------------------------------ wrappers
def _check_index(cj: CutJoint, N: int):
    for name, i in (("k", cj.k), ("r", cj.r)):
        if not -1 <= i < N:
            raise ValueError(f"cut joint {cj.name!r}: body index {name} = {i} out of range for {N} bodies")


def _array(x, shape, what):
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.ndim != len(shape) or any(s is not None and s != t for s, t in zip(shape, x.shape)):
        want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
        raise ValueError(f"{what} must have shape {want}, got {x.shape}")
    return x


def _poses(cj, C):
    C = _array(C, (None, 4, 4), "C")
    _check_index(cj, C.shape[0])
    return C


def residual(cj: CutJoint, C) -> np.ndarray:
    """Residual ``g`` (m,) of cut joint ``cj`` at the tree poses ``C`` (n,4,4) (eq. 12, 16, 33)."""
    C = _poses(cj, C)
    out = np.empty(cj.m)
    if cj.is_distance:
        kernel(distance_residual_into)(cj.k, cj.r, cj.d_k, cj.d_r, cj.length, C, out)
    else:
        kernel(cut_residual_into)(cj.k, cj.r, cj.d_k, cj.d_r, cj.n, cj.e_k, cj.e_r, cj.c0, C, out)
    return out


def jacobian(cj: CutJoint, C, J) -> np.ndarray:
    """Constraint Jacobian ``G`` (m × ncol) from the body Jacobians ``J`` (n,6,ncol) (eq. 13, 32, 41)."""
    C = _poses(cj, C)
    J = _array(J, (C.shape[0], 6, None), "J")
    out = np.empty((cj.m, J.shape[2]))
    if cj.is_distance:
        kernel(distance_jacobian_into)(cj.k, cj.r, cj.d_k, cj.d_r, cj.length, C, J, out)
    else:
        kernel(cut_jacobian_into)(cj.k, cj.r, cj.d_k, cj.d_r, cj.n, cj.e_k, cj.e_r, cj.c0, C, J, out)
    return out


def bias(cj: CutJoint, C, V, Ab) -> np.ndarray:
    """Convective vector ``Ġθ̇`` (m,) from twists ``V`` (n,6) and ``Ab = J̇θ̇`` (n,6) (eq. 14)."""
    C = _poses(cj, C)
    V = _array(V, (C.shape[0], 6), "V")
    Ab = _array(Ab, (C.shape[0], 6), "Ab")
    out = np.empty(cj.m)
    if cj.is_distance:
        kernel(distance_bias_into)(cj.k, cj.r, cj.d_k, cj.d_r, cj.length, C, V, Ab, out)
    else:
        kernel(cut_bias_into)(cj.k, cj.r, cj.d_k, cj.d_r, cj.n, cj.e_k, cj.e_r, cj.c0, C, V, Ab, out)
    return out


def evaluate(cj: CutJoint, tree, q, qd=None):
    """Convenience: ``(g, G)`` at ``q``, or ``(g, G, Ġθ̇)`` if ``qd`` is given, on ``tree``."""
    from pkm.algorithms.kinematics import body_jacobians, forward_kinematics, jacobian_derivatives

    C = forward_kinematics(tree, q)
    J = body_jacobians(tree, q)
    g, G = residual(cj, C), jacobian(cj, C, J)
    if qd is None:
        return g, G
    qd = np.asarray(qd, dtype=np.float64)
    V = J @ qd
    Ab = jacobian_derivatives(tree, q, qd) @ qd
    return g, G, bias(cj, C, V, Ab)
