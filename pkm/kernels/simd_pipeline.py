"""The per-limb pipeline of the batch kernel in SIMD lanes (issue 18): ``W`` samples of ``W``
independent trajectory chunks at once, one lane each, on :mod:`pkm.kernels.simd_vec` vectors.

The pieces are those of :mod:`pkm.kernels.ik` and :mod:`pkm.kernels.dynamics` (same equations,
same order of operations), written once over the lane type and driven by the robot's
:class:`pkm.kernels.model.KernelModel` (no robot-specific code): every branch is on model data
(joint type, parent, loop records), never on a lane's value; a lane-dependent decision is a mask.
The scratch is structure-of-arrays: 2-D float arrays ``(rows, W)`` (64-byte aligned,
:func:`pkm.kernels.simd_vec.aligned_zeros`), a quantity's lanes in one row:

* ``VB`` (n_max · BW_SIZE rows): body ``i``'s values at rows ``i · BW_SIZE + BW_*``, the layout of
  the scalar kernel's ``bw`` (:mod:`pkm.kernels.work`);
* ``VM`` (:func:`vm_rows`): ``J_p``, ``L_p``, the Gram matrix, its Cholesky factor and inverse,
  ``L_p⁺``, the pose error, ``q̇, q̈, θ̇, θ̈`` and scratch;
* ``SMP`` (24 rows): the lanes' target pose ``C_d`` (R row-major, p), ``V_p`` and ``V̇_p``.

Covered here: limbs with a constant ``H`` (affine loop closure, paper Sec. 3.3, Ex. 7–9; also limbs without
loops), and the pieces that a general limb shares with them (:mod:`pkm.kernels.simd_general` adds the rest).
"""
from __future__ import annotations

from pkm.kernels.model import (BF_A, BF_B, BF_P, BF_SIZE, LAY_CC, LAY_DMAX, LAY_HC, LAY_HCOL, LAY_HNZ, LAY_LMAX,
                               LAY_LOOPF, LAY_LOOPS, LAY_NMAX, LAY_QIDX, LAY_QP, LI_AFF, LI_DOF, LI_N, LI_NLOOP, LI_PLAT,
                               LP_K, LP_M, LP_NN, LP_R, LP_ROWS, LP_SIZE, LP_Y, MI_PARENT, PF_C0, PF_DK, PF_DR, PF_EK,
                               PF_ER, PF_N, PF_SIZE)
from pkm.kernels.ik import SERIES_STEP, _sincos_step
from pkm.kernels.simd_linalg import vcholesky
from pkm.kernels.simd_vec import any_lane, select, splat, vabs, vload, vmax, vmin, vsincos, vsqrt, vstore, vzero
from pkm.kernels.work import BW_K, BW_SIZE, BW_T, BW_TRIG, _internal, _pose_at, _vec_at
from pkm.lie.small import add, cross, dot, mm, mtm, mtv, mv, scale, sub

#: Pose errors below this rotation (``|ω|²`` below its square) use the near-identity logarithm
#: (:func:`pkm.lie.small.log_pose`'s first branch); a lane above it is never accepted as converged.
NEAR_IDENTITY = 1e-4
#: :func:`vsmall_error`'s lanes: rotation errors below this (its ``e`` is then the logarithm's to 1e-8 relative).
SMALL_ROTATION = 1e-8
#: :func:`vfk` parts: every body's ``K_i`` and ``T_i`` (the geometry and the dynamics read them), the ``K_i`` only,
#: the ``K_i`` of the platform's path only.
FK_ALL, FK_POSES, FK_PATH = 0, 1, 2
#: Below this step (2⁻²⁷) ``sin Δ`` rounds to Δ and ``cos Δ`` to 1
#: (:func:`pkm.kernels.ik._sincos_step`: ``Δ²/2 < 2⁻⁵⁴``).
TINY_STEP = 2.0 ** -27
_THIRD, _SEVENTH, _TWELFTH, _INV720 = 1.0 / 3.0, 1.0 / 7.0, 1.0 / 12.0, 1.0 / 720.0


#: The longest general limb whose ``y`` and path bits :func:`static_shape` makes compile-time constants (two
#: 5-bit digits).
STATIC_MASK_BITS = 10


def static_shape(km):
    """The robot's sizes as compile-time constants for the SIMD path: ``S = (n_max, d_max, λ_max, n_l, λ_l,
    m, y, path)``, each a tuple of ``value + 1`` zeros (numba knows a tuple's length when it compiles, as
    ``d_static``), the last five ``()`` when the limbs (or loops) differ in them; ``y`` and ``path`` are the general
    limbs' dependent variables and platform path as bits, two such tuples each (:func:`_bits`, ``S[6:8]`` and
    ``S[8:10]``; ``()`` without general limbs, for trees longer than :data:`STATIC_MASK_BITS` or where ``q`` and ``y``
    are not a partition of the tree variables, :func:`_partitioned`), the structure of their
    ``H`` (``H_q = I``) and ``J_p`` (zero off the path) that :mod:`pkm.kernels.simd_general` then skips at compile
    time (:func:`s_ymask`). With them every
    offset into the scratch and every loop bound over joints and loop rows is a constant: LLVM
    unrolls and folds what it otherwise recomputed per sample from ``mi`` and ``lay`` (3R[2US] Delta
    1.11 → 0.82 µs per sample in one A/B), and compiles faster. The model stays data: ``S`` is
    derived from it, as the other static tuples."""
    mi, lay = km.mi, km.lay
    ls = range(mi.shape[0])

    def const(values):
        values = set(int(v) for v in values)
        return (0,) * (values.pop() + 1) if len(values) == 1 else ()
    general = [l for l in ls if mi[l, LI_AFF] == 0]
    if general and (max(mi[l, LI_N] for l in general) > STATIC_MASK_BITS
                    or not all(_partitioned(mi, lay, l) for l in general)):
        general = []  # (a longer tree, or q and y not a partition: H dense)
    return (const([lay[LAY_NMAX]]), const([lay[LAY_DMAX]]), const([lay[LAY_LMAX]]), const(mi[l, LI_N] for l in ls),
            const(mi[l, LI_NLOOP] for l in ls),
            const(mi[l, lay[LAY_LOOPS] + LP_SIZE * lp + LP_M] for l in ls for lp in range(mi[l, LI_NLOOP])),
            *_bits(_y_mask(mi, lay, l) for l in general), *_bits(_path_mask(mi, l) for l in general))


def _bits(values):
    """A bit mask shared by every value as compile-time constants of :func:`static_shape`: its two 5-bit digits
    ``b`` as tuples of ``b + 1`` zeros (short tuple types, that numba types and passes quickly), else ``((), ())``."""
    values = set(int(v) for v in values)
    if len(values) != 1:
        return (), ()
    v = values.pop()
    return (0,) * ((v & 31) + 1), (0,) * ((v >> 5) + 1)


def _ys(mi, lay, l):
    """Limb ``l``'s dependent tree variables ``y``, every loop's, in the loops' order."""
    return [int(mi[l, lay[LAY_LOOPS] + LP_SIZE * lp + LP_Y + a]) for lp in range(mi[l, LI_NLOOP])
            for a in range(mi[l, lay[LAY_LOOPS] + LP_SIZE * lp + LP_M])]


def _y_mask(mi, lay, l):
    """Limb ``l``'s dependent tree variables ``y`` as bits ``1 << i``."""
    return sum(1 << i for i in _ys(mi, lay, l))


def _partitioned(mi, lay, l):
    """Whether limb ``l``'s independent coordinates ``q`` and dependent variables ``y`` are its tree variables, each
    once (the paper's ``n_l = δ_l + Σ m``; then ``H``'s rows are ``H_q = I`` and ``H_y``, eq. 48)."""
    q = [int(v) for v in mi[l, lay[LAY_QIDX]:lay[LAY_QIDX] + mi[l, LI_DOF]]]
    return sorted(q + _ys(mi, lay, l)) == list(range(int(mi[l, LI_N])))


def _path_mask(mi, l):
    """The tree variables on limb ``l``'s platform path as bits ``1 << i`` (``J_p``'s nonzero columns)."""
    bits, j = 0, int(mi[l, LI_PLAT])
    while j >= 0:
        bits |= 1 << j
        j = int(mi[l, MI_PARENT + j])
    return bits


@_internal
def s_nmax(lay, S):
    """``n_max`` (constant when compiled with :func:`static_shape`)."""
    return len(S[0]) - 1 if len(S[0]) > 0 else lay[LAY_NMAX]


@_internal
def s_dmax(lay, S):
    """``d_max``."""
    return len(S[1]) - 1 if len(S[1]) > 0 else lay[LAY_DMAX]


@_internal
def s_lmax(lay, S):
    """``λ_max``, the most loops of a limb."""
    return len(S[2]) - 1 if len(S[2]) > 0 else lay[LAY_LMAX]


@_internal
def s_n(l, mi, S):
    """Limb ``l``'s ``n_l`` (tree variables)."""
    return len(S[3]) - 1 if len(S[3]) > 0 else mi[l, LI_N]


@_internal
def s_nloop(l, mi, S):
    """Limb ``l``'s number of loops ``λ_l``."""
    return len(S[4]) - 1 if len(S[4]) > 0 else mi[l, LI_NLOOP]


@_internal
def s_m(l, mi, oi, S):
    """The rows ``m`` of the loop whose record starts at ``mi[l, oi]``."""
    return len(S[5]) - 1 if len(S[5]) > 0 else mi[l, oi + LP_M]


@_internal
def s_ymask(S):
    """The general limbs' ``y`` bits and path bits ``(y, path)`` as compile-time constants, or ``(−1, −1)`` when the
    limbs differ in them (:func:`static_shape`)."""
    if len(S[6]) > 0 and len(S[8]) > 0:
        return len(S[6]) - 1 + 32 * (len(S[7]) - 1), len(S[8]) - 1 + 32 * (len(S[9]) - 1)
    return -1, -1


@_internal
def vm_rows(nmax, dmax):
    """Row offsets of the ``VM`` scratch: ``(J_p 6×n_max, L_p 6×d_max, Gram, Cholesky factor, its
    inverse, Gram⁻¹ (d_max² each), L_p⁺ d_max×6, e 6, q̇, q̈ (d_max), θ̇, θ̈ (n_max), q (d_max), total)``."""
    oj = 0
    olp = oj + 6 * nmax
    og = olp + 6 * dmax
    oc = og + dmax * dmax
    oci = oc + dmax * dmax
    ogi = oci + dmax * dmax
    opi = ogi + dmax * dmax
    oe = opi + 6 * dmax
    oqd = oe + 6
    oqdd = oqd + dmax
    othd = oqdd + dmax
    othdd = othd + nmax
    oq = othdd + nmax
    odth = oq + dmax
    return oj, olp, og, oc, oci, ogi, opi, oe, oqd, oqdd, othd, othdd, oq, odth, odth + nmax


@_internal
def vpinv_times(VM, opi, X, ox, oy, d, L):
    """Rows ``oy + a`` of ``VM`` = ``(L_p⁺ x)_a`` (``L_p⁺`` d × 6 in rows ``opi`` of ``VM``, ``x`` in rows
    ``ox …`` of ``X``), e.g. ``q̇ = L_p⁺V_p`` (eq. 86)."""
    for a in range(d):
        acc = vzero(L)
        for r in range(6):
            acc = acc + vload(VM, opi + a * 6 + r, L) * vload(X, ox + r, L)
        vstore(VM, oy + a, acc)


@_internal
def vnorm1(A, o, m, stride, L):
    """The 1-norm (largest column sum of magnitudes) of the m × m matrix in rows ``o + i · stride + j``."""
    best = vzero(L)
    for j in range(m):
        s = vzero(L)
        for i in range(m):
            s = s + vabs(vload(A, o + i * stride + j, L))
        best = vmax(best, s)
    return best


# ----------------------------------------------------------------------------- SoA rows as tuples
@_internal
def vpose(A, r, L):
    """Rows ``r … r + 11`` of ``A`` as a pose ``(R, p)`` of vectors."""
    return ((vload(A, r, L), vload(A, r + 1, L), vload(A, r + 2, L), vload(A, r + 3, L), vload(A, r + 4, L),
             vload(A, r + 5, L), vload(A, r + 6, L), vload(A, r + 7, L), vload(A, r + 8, L)),
            (vload(A, r + 9, L), vload(A, r + 10, L), vload(A, r + 11, L)))


@_internal
def vset_pose(A, r, R, p):
    for k in range(9):
        vstore(A, r + k, R[k])
    vstore(A, r + 9, p[0])
    vstore(A, r + 10, p[1])
    vstore(A, r + 11, p[2])


@_internal
def vtwist(A, r, L):
    """Rows ``r … r + 5`` as ``(ω, v)``."""
    return (vload(A, r, L), vload(A, r + 1, L), vload(A, r + 2, L)), \
        (vload(A, r + 3, L), vload(A, r + 4, L), vload(A, r + 5, L))


@_internal
def vset_twist(A, r, w, v):
    vstore(A, r, w[0])
    vstore(A, r + 1, w[1])
    vstore(A, r + 2, w[2])
    vstore(A, r + 3, v[0])
    vstore(A, r + 4, v[1])
    vstore(A, r + 5, v[2])


@_internal
def _zero3(L):
    z = vzero(L)
    return (z, z, z)


# ----------------------------------------------------------------------------- kinematics
@_internal
def vfk(l, mi, S, mf, TH, tho, VB, fresh, part, L):
    """:func:`pkm.kernels.ik._fk` in lanes: ``K_i`` and ``T_i`` of limb ``l`` from ``θ_i`` in rows
    ``tho + i`` of ``TH``. Unless ``fresh``, the sines and cosines are updated from the last
    evaluation's (rows ``BW_TRIG``) by the angle-addition formula with the series of
    :func:`pkm.kernels.ik._sincos_step` when every lane moved by at most ``SERIES_STEP``, and by
    ``c₀ − s₀Δ, s₀ + c₀Δ`` when every lane moved by at most ``TINY_STEP`` (where the series' ``cos Δ``
    rounds to 1 and ``sin Δ`` to Δ: a Newton step's correction). ``part``: ``FK_ALL`` every body's
    ``K_i`` and ``T_i``; ``FK_POSES`` only the ``K_i`` (what the pose error and the loop residuals read:
    an IK iterate's); ``FK_PATH`` only the ``K_i`` of the platform's path (the pose error's), unless
    ``fresh`` (then every body's, so that each angle is evaluated afresh every ``TRIG_REFRESH`` samples)."""
    path = -1
    if part == FK_PATH and not fresh:
        path = 0
        j = mi[l, LI_PLAT]
        while j >= 0:
            path |= 1 << j
            j = mi[l, MI_PARENT + j]
    for i in range(s_n(l, mi, S)):
        if not path >> i & 1:
            continue
        o = BF_SIZE * i
        a, b = mf[l, o + BF_A], mf[l, o + BF_B]
        x = vload(TH, tho + i, L)
        if a != 0.0:
            rt = i * BW_SIZE + BW_TRIG
            dx = x - vload(VB, rt + 2, L)
            if fresh or any_lane(~(vabs(dx) <= SERIES_STEP)):
                s, c = vsincos(x)
            else:
                c0, s0 = vload(VB, rt, L), vload(VB, rt + 1, L)
                if any_lane(~(vabs(dx) <= TINY_STEP)):
                    sd, cd = _sincos_step(dx)
                    c, s = c0 * cd - s0 * sd, s0 * cd + c0 * sd
                else:
                    c, s = c0 - s0 * dx, s0 + c0 * dx
            vstore(VB, rt, c)
            vstore(VB, rt + 1, s)
            vstore(VB, rt + 2, x)
        else:
            c, s = splat(1.0, L), vzero(L)
        P, p0 = _pose_at(mf, l, o + BF_P)
        R = (c * P[0] + s * P[1], c * P[1] - s * P[0], splat(P[2], L),
             c * P[3] + s * P[4], c * P[4] - s * P[3], splat(P[5], L),
             c * P[6] + s * P[7], c * P[7] - s * P[6], splat(P[8], L))
        bx = x * b
        p = (bx * P[2] + p0[0], bx * P[5] + p0[1], bx * P[8] + p0[2])
        if part == FK_ALL:
            vset_pose(VB, i * BW_SIZE + BW_T, R, p)
        k = mi[l, MI_PARENT + i]
        if k >= 0:
            Rk, pk = vpose(VB, k * BW_SIZE + BW_K, L)
            vset_pose(VB, i * BW_SIZE + BW_K, mm(Rk, R), add(mv(Rk, p), pk))
        else:
            vset_pose(VB, i * BW_SIZE + BW_K, R, p)


@_internal
def vplatform_pose(l, mi, S, mf, lay, VB, L):
    """``C_p = K_p Q_p⁻¹`` (``F_p``) in lanes."""
    Rk, pk = vpose(VB, mi[l, LI_PLAT] * BW_SIZE + BW_K, L)
    Rq, pq = _pose_at(mf, l, lay[LAY_QP] + 12)
    return mm(Rk, Rq), add(mv(Rk, pq), pk)


@_internal
def _vrelative(l, mi, S, mf, lay, VB, SMP, L):
    """The platform pose ``C_p`` and ``C_p⁻¹C_d = (R, p)`` in lanes, with ``vee(R − Rᵀ)/2 = (w0, w1, w2)`` and its
    squared norm ``ss``: what :func:`vplatform_error` and :func:`vsmall_error` start from."""
    Rp, rp = vplatform_pose(l, mi, S, mf, lay, VB, L)
    Rd, rd = vpose(SMP, 0, L)
    R, p = mtm(Rp, Rd), mtv(Rp, sub(rd, rp))
    w0 = 0.5 * (R[7] - R[5])
    w1 = 0.5 * (R[2] - R[6])
    w2 = 0.5 * (R[3] - R[1])
    return Rp, rp, R, p, w0, w1, w2, w0 * w0 + w1 * w1 + w2 * w2


@_internal
def vplatform_error(l, mi, S, mf, lay, VB, SMP, VM, oe, L):
    """``e = log(C_p⁻¹ C_d)`` (eq. 96) into rows ``oe … oe + 5`` of ``VM`` by the near-identity branch
    of :func:`pkm.lie.small.log_pose`. Returns ``(|e|, near, R_p, r_p)``: ``near`` masks the lanes for
    which that branch is the logarithm; the others' ``e`` is not used (they go to the scalar IK)."""
    Rp, rp, R, p, w0, w1, w2, ss = _vrelative(l, mi, S, mf, lay, VB, SMP, L)
    c = vmin(1.0, vmax(-1.0, 0.5 * (R[0] + R[4] + R[8] - 1.0)))
    near = (c > 0.0) & (ss < NEAR_IDENTITY * NEAR_IDENTITY)
    c = select(near, c, 1.0)
    ic = 1.0 / c
    t = ss * ic * ic
    f = ic * (1.0 - t * (_THIRD - t * (0.2 - t * _SEVENTH)))
    w = (f * w0, f * w1, f * w2)
    al = _TWELFTH + t * _INV720
    k = cross(w, p)
    kk = cross(w, k)
    v = (p[0] - 0.5 * k[0] + al * kk[0], p[1] - 0.5 * k[1] + al * kk[1], p[2] - 0.5 * k[2] + al * kk[2])
    vset_twist(VM, oe, w, v)
    return vsqrt(dot(w, w) + dot(v, v)), near, Rp, rp


@_internal
def vsmall_error(l, mi, S, mf, lay, VB, SMP, VM, oe, L):
    """:func:`vplatform_error` for the lanes whose error is small, to first order: ``e ≈ (ω̃, p)``, ``ω̃ = vee(R −
    Rᵀ)/2`` and ``p = R_pᵀ(r_d − r_p)`` (``R = R_pᵀR_d``). The logarithm's terms dropped, ``f − 1 = O(|ω|²)`` and
    ``−½ω × p + α ω × (ω × p)``, are ``O(|ω|)`` relative to ``|e|``; ``near`` (the lanes it returns ``e`` for) is
    ``|ω̃| < SMALL_ROTATION``, so ``e`` and ``|e|`` are within 1e-8 relative of the logarithm's. The constant-H
    limbs use it where only such lanes read ``e``: the chord step from a start within ``tol`` (its result moves by
    1e-8 of the step, far below the step's own error) and the acceptance of its iterate at ``CHORD_MARGIN · tol``;
    a lane not ``near`` goes to the scalar IK, as with :func:`vplatform_error`."""
    Rp, rp, R, p, w0, w1, w2, ss = _vrelative(l, mi, S, mf, lay, VB, SMP, L)
    near = (R[0] + R[4] + R[8] > 1.0) & (ss < SMALL_ROTATION * SMALL_ROTATION)
    vset_twist(VM, oe, (w0, w1, w2), p)
    return vsqrt(ss + dot(p, p)), near, Rp, rp


@_internal
def vloop_frame(l, mi, S, mf, lay, VB, lp, L):
    """Loop ``lp``'s offsets ``(oi, of)``, its cut frames' rotations ``R_k, R_r`` and the distance
    ``Δ = x_r − x_k`` of its two points, in lanes (what every residual and row of the loop uses)."""
    oi = lay[LAY_LOOPS] + LP_SIZE * lp
    of = lay[LAY_LOOPF] + PF_SIZE * lp
    Rk, ok = vpose(VB, mi[l, oi + LP_K] * BW_SIZE + BW_K, L)
    Rr, orr = vpose(VB, mi[l, oi + LP_R] * BW_SIZE + BW_K, L)
    D = sub(add(orr, mv(Rr, _vec_at(mf, l, of + PF_DR))), add(ok, mv(Rk, _vec_at(mf, l, of + PF_DK))))
    return oi, of, Rk, Rr, D


@_internal
def vloop_residual(l, mi, S, mf, oi, of, Rk, Rr, D, ia):
    """The ``ia``-th selected residual of the loop at ``oi, of`` (:func:`vloop_frame`), in lanes:
    a distance ``N·Δ`` or an orientation ``E_k·E_r − c₀`` (eq. 12, 16, 33)."""
    nn = mi[l, oi + LP_NN]
    ri = mi[l, oi + LP_ROWS + ia]
    if ri < nn:
        return dot(mv(Rk, _vec_at(mf, l, of + PF_N + 3 * ri)), D)
    jj = ri - nn
    return dot(mv(Rk, _vec_at(mf, l, of + PF_EK + 3 * jj)), mv(Rr, _vec_at(mf, l, of + PF_ER + 3 * jj))) \
        - mf[l, of + PF_C0 + jj]


@_internal
def vloop_residuals(l, mi, S, mf, lay, VB, L):
    """``max |g|`` over the loops' selected residuals in lanes (:func:`pkm.kernels.ik._loop_residuals`)."""
    gmax = vzero(L)
    for lp in range(s_nloop(l, mi, S)):
        oi, of, Rk, Rr, D = vloop_frame(l, mi, S, mf, lay, VB, lp, L)
        for ia in range(s_m(l, mi, oi, S)):
            gmax = vmax(gmax, vabs(vloop_residual(l, mi, S, mf, oi, of, Rk, Rr, D, ia)))
    return gmax


@_internal
def vjacobian_lp(l, mi, S, mf, lay, d, VB, VM, Rp, rp, jp, L):
    """``J_p`` (eq. 154–156, :func:`pkm.kernels.ik._platform_jacobian`) into ``VM`` if ``jp`` (a general
    limb's, for :func:`pkm.kernels.simd_general.vbuild_H` and the Newton steps), else ``L_p = J_p H``
    (eq. 80, constant ``H``, summed in the scalar kernel's order) from its columns, without storing
    ``J_p`` (nothing after reads it there)."""
    nmax, dmax = s_nmax(lay, S), s_dmax(lay, S)
    oj, olp = 0, 6 * nmax
    z = vzero(L)
    for r in range(6):
        if jp:
            if s_ymask(S)[0] < 0:  # (with the structure constant, J_p is read on the path only)
                for j in range(s_n(l, mi, S)):
                    vstore(VM, oj + r * nmax + j, z)
        else:
            for c in range(d):
                vstore(VM, olp + r * dmax + c, z)
    j = mi[l, LI_PLAT]
    while j >= 0:
        R, o = vpose(VB, j * BW_SIZE + BW_K, L)
        zz = (R[2], R[5], R[8])
        az = scale(mf[l, BF_SIZE * j + BF_A], zz)
        w = mtv(Rp, az)
        v = mtv(Rp, add(cross(sub(o, rp), az), scale(mf[l, BF_SIZE * j + BF_B], zz)))
        col = (w[0], w[1], w[2], v[0], v[1], v[2])
        if jp:
            for r in range(6):
                vstore(VM, oj + r * nmax + j, col[r])
        else:
            for k in range(mi[l, lay[LAY_HNZ] + j]):
                c, hv = mi[l, lay[LAY_HCOL] + dmax * j + k], mf[l, lay[LAY_HC] + dmax * j + k]
                for r in range(6):
                    rr = olp + r * dmax + c
                    vstore(VM, rr, vload(VM, rr, L) + hv * col[r])
        j = mi[l, MI_PARENT + j]


# ----------------------------------------------------------------------------- geometry at the solution
@_internal
def vgeometry(l, mi, S, lay, d, dp_static, VM, thresh, L):
    """:func:`pkm.kernels.dynamics._limb_geometry` (constant ``H``) in lanes: the Gram matrix
    ``L_pᵀL_p``, its inverse by Cholesky as :func:`pkm.lie.linalg.spd_inverse_into`, the condition
    number ``√(‖G‖₁‖G⁻¹‖₁)`` and ``L_p⁺ = G⁻¹L_pᵀ`` (eq. 94) into ``VM``. Returns the mask of lanes
    that are regular (every pivot > 0, condition ≤ ``thresh``)."""
    nmax, dmax = s_nmax(lay, S), s_dmax(lay, S)
    _, olp, og, oc, oci, ogi, opi, _, _, _, _, _, _, _, _ = vm_rows(nmax, dmax)
    for a in range(d):  # the Gram matrix is symmetric: each entry once (the same products and sums), stored twice
        for b in range(a + 1):
            acc = vzero(L)
            for r in range(6):
                acc = acc + vload(VM, olp + r * dmax + a, L) * vload(VM, olp + r * dmax + b, L)
            vstore(VM, og + a * dmax + b, acc)
            if b != a:
                vstore(VM, og + b * dmax + a, acc)
    ok = vcholesky(VM, og, oc, d, dmax, oci, L)   # G = CCᵀ; M = C⁻¹: its diagonal, the pivots' reciprocals
    for j in range(d):
        for i in range(j + 1, d):
            s = vzero(L)
            for k in range(j, i):
                s = s - vload(VM, oc + i * dmax + k, L) * vload(VM, oci + k * dmax + j, L)
            vstore(VM, oci + i * dmax + j, s * vload(VM, oci + i * dmax + i, L))
    for i in range(d):  # G⁻¹ = MᵀM
        for j in range(i, d):
            s = vzero(L)
            for k in range(j, d):
                s = s + vload(VM, oci + k * dmax + i, L) * vload(VM, oci + k * dmax + j, L)
            vstore(VM, ogi + i * dmax + j, s)
            vstore(VM, ogi + j * dmax + i, s)
    n1, n2 = vzero(L), vzero(L)
    for j in range(d):
        s1, s2 = vzero(L), vzero(L)
        for i in range(d):
            s1 = s1 + vabs(vload(VM, og + i * dmax + j, L))
            s2 = s2 + vabs(vload(VM, ogi + i * dmax + j, L))
        n1, n2 = vmax(n1, s1), vmax(n2, s2)
    ok = ok & (vsqrt(n1 * n2) <= thresh)
    for a in range(d):  # L_p⁺ = G⁻¹ L_pᵀ
        for r in range(6):
            acc = vzero(L)
            for b in range(d):
                acc = acc + vload(VM, ogi + a * dmax + b, L) * vload(VM, olp + r * dmax + b, L)
            vstore(VM, opi + a * 6 + r, acc)
    return ok


@_internal
def vtheta_affine(l, mi, S, mf, lay, A, oq, TH, tho, L):
    """``θ = H q + c`` into rows ``tho + i`` of ``TH`` for ``q`` in rows ``oq + c`` of ``A`` (constant ``H`` over its
    sparse rows, then ``+ c``, as :func:`pkm.kernels.ik._solve_affine`): a constant-``H`` limb's start and chord
    step (:mod:`pkm.kernels.simd_kernel`) and the lanes' forward-dynamics IK (:mod:`pkm.kernels.simd_forward`)."""
    oh, onz, ocol, occ, dmax = lay[LAY_HC], lay[LAY_HNZ], lay[LAY_HCOL], lay[LAY_CC], s_dmax(lay, S)
    for i in range(s_n(l, mi, S)):
        acc = vzero(L)
        for k in range(mi[l, onz + i]):
            acc = acc + mf[l, oh + dmax * i + k] * vload(A, oq + mi[l, ocol + dmax * i + k], L)
        vstore(TH, tho + i, acc + mf[l, occ + i])


@_internal
def vh_times(l, mi, S, mf, lay, n, VM, ox, oy, L):
    """Rows ``oy + i`` = ``(H x)_i`` for ``x`` in rows ``ox + c`` (constant ``H``, its sparse rows)."""
    oh, onz, ocol, dmax = lay[LAY_HC], lay[LAY_HNZ], lay[LAY_HCOL], s_dmax(lay, S)
    for i in range(n):
        acc = vzero(L)
        for k in range(mi[l, onz + i]):
            acc = acc + mf[l, oh + dmax * i + k] * vload(VM, ox + mi[l, ocol + dmax * i + k], L)
        vstore(VM, oy + i, acc)
