"""The pieces of a limb with a configuration-dependent ``H`` (general loops) on the SIMD path (issue 18).

:mod:`pkm.kernels.simd_pipeline` covers the limbs whose loop closure is affine (constant ``H``);
this module adds, over the same lane type and scratch (rows of ``VM`` after
:func:`pkm.kernels.simd_pipeline.vm_rows`, :func:`vg_rows`), what a general limb needs beyond it: the
pieces of :func:`pkm.kernels.ik._solve_general`, :func:`pkm.kernels.ik._build_H` and the general branch
of :func:`pkm.kernels.dynamics._limb_motion`, same equations:

* the loops' residuals ``g`` and rows ``G`` in world axes (eq. 12–13, 16, 33; :func:`vloop_rows`);
* ``H`` (eq. 48: ``H_q = I``, ``H_y = −G_y⁻¹G_q`` per loop), ``L_p = J_pH`` (eq. 80) and the 1-norm
  condition numbers of the ``G_y`` (:func:`vbuild_H`), then ``L_p⁺`` (eq. 94) as for an affine limb
  (:func:`vgeom_general`);
* the Newton step in ``q`` with the loops closed (eq. 83, 85; :func:`vnewton_step`);
* the rates ``θ̇ = Hq̇``, ``θ̈ = Hq̈ + Ḣq̇`` with ``Ḣq̇ = −G_y⁻¹Ġθ̇`` (eq. 46–47, 86–88, paper Sec. 4.2,
  eq. 90–93), the RNEA and ``Hᵀφ`` for ``W̄ = FᵀHᵀφ`` (eq. 144) (:func:`vmotion_general`).

The stage that drives them (IK acceptance, fallback) is :mod:`pkm.kernels.simd_general_limb`.

``G_y⁻¹`` in lanes (:func:`vgj_inverse`): Gauss–Jordan **with** partial pivoting, the row exchange
done by ``select`` per lane. Without pivoting, a lane whose leading pivot happened to be small (a
well-conditioned ``G_y`` need not have a large diagonal: a pivot of 1e-8 in a matrix of condition 10
loses 8 digits) would need a conditioning test of its own and a scalar fallback for the whole
geometry, a second code path for a rare case that the tests would hardly reach; with ``m ≤ 5`` (the
cut joints of :data:`pkm.algorithms.constraints.CUT_TYPES`) the exchanges cost at most ``m(m−1)``
compare-and-select passes per loop and sample (skipped when no lane needs one), and every lane gets
the pivots of :func:`pkm.lie.linalg.inverse_into` (the first row of largest magnitude). The
singularity check is the scalar kernel's: ``‖G_y‖₁‖G_y⁻¹‖₁ ≤ thresh``, else the lane stops
(``SINGULAR_GY`` when its segment is rerun on the scalar kernel).
"""
from __future__ import annotations

from pkm.algorithms.constraints import _bias_orient, _bias_rho
from pkm.kernels.model import (BF_A, BF_B, BF_SIZE, LAY_LOOPF, LAY_LOOPS, LAY_MARKS, LAY_QIDX, LAY_QP, LI_PLAT, LP_K,
                               LP_NN, LP_R, LP_ROWS, LP_SIZE, LP_Y, MI_PARENT, PF_C0, PF_DK, PF_DR, PF_EK, PF_ER, PF_N,
                               PF_SIZE)
from pkm.kernels.simd_dynamics import vrnea, vtwists
from pkm.kernels.simd_pipeline import (FK_ALL, s_dmax, s_lmax, s_m, s_n, s_nloop, s_nmax, s_ymask, vfk, vgeometry,
                                       vjacobian_lp, vloop_frame, vloop_residual, vm_rows, vnorm1, vpinv_times,
                                       vplatform_error, vpose, vset_twist, vtwist)
from pkm.kernels.simd_vec import any_lane, select, splat, vabs, vload, vmax, vstore, vzero
from pkm.kernels.work import BW_A, BW_K, BW_PHI, BW_SIZE, BW_V, _internal, _pose_at, _piece, _vec_at
from pkm.lie.small import Ad, add, cross, dot, mtm, mtv, mv, scale, sub

#: Stride of the ``m × m`` matrices (``G_y``, ``G_y⁻¹``) in the scratch: ``m ≤ 6`` per loop.
GJ = 6
#: Rows of the lanes' sample scratch ``SMP`` holding ``h = t_s − t_{s−1}`` and ``h1 = t_{s−1} − t_{s−2}``
#: (:data:`pkm.kernels.simd_kernel.SMP_ROWS`).
SMP_H, SMP_H1 = 24, 25


@_internal
def vg_rows(nmax, dmax, lmax):
    """Row offsets of the general limbs' scratch in ``VM``, after :func:`pkm.kernels.simd_pipeline.vm_rows`
    (:func:`vg_rows_after` from its end): ``(G 6λ_max × n_max, g, Ġθ̇ (6λ_max each), H n_max × d_max, G_y⁻¹ λ_max × GJ², the
    Gauss–Jordan work GJ², θ₀, Δθ, Δθ_y or Ḣq̇ (n_max each), total)``."""
    return vg_rows_after(vm_rows(nmax, dmax)[-1], nmax, dmax, lmax)


@_internal
def vg_rows_after(og, nmax, dmax, lmax):
    """:func:`vg_rows` with the ``G`` rows starting at ``og``."""
    rmax = GJ * lmax
    ogv = og + rmax * nmax
    ogb = ogv + rmax
    oh = ogb + rmax
    ogyi = oh + nmax * dmax
    owk = ogyi + lmax * GJ * GJ
    oth0 = owk + GJ * GJ
    odth = oth0 + nmax
    oy = odth + nmax
    return og, ogv, ogb, oh, ogyi, owk, oth0, odth, oy, oy + nmax


@_internal
def prev_rows(nmax, dmax, lmax):
    """Offsets within a limb's block of the last sample's geometry (for the chord step of
    :func:`general_limb`): ``(J_p 6 × n_max, L_p⁺ d_max × 6, H n_max × d_max, G_y⁻¹ λ_max × GJ², size)``,
    laid out as their rows in ``VM``; the blocks of the ``L`` limbs follow :func:`vg_rows`' total."""
    opi = 6 * nmax
    oh = opi + 6 * dmax
    ogyi = oh + nmax * dmax
    return 0, opi, oh, ogyi, ogyi + lmax * GJ * GJ


# ----------------------------------------------------------------------------- loops
@_internal
def vloop_rows(l, mi, S, mf, lay, VB, VM, og, ogv, owk, L):
    """:func:`pkm.kernels.ik._loop_rows` in lanes: ``g`` into rows ``ogv + row``, ``G`` into rows
    ``og + row · n_max + j``. Returns ``max |g|``. Joint-major: each joint's ``z``, ``o`` and point
    velocity ``u(x) = a z × (x − o) + b z`` once per loop, each row's ``N`` and ``w = N × Δ`` (distance,
    ``a (z × N)·Δ = a z·w``) or ``w = E_k × E_r`` (orientation) once, in rows ``owk`` (6 per row)."""
    n, nmax = s_n(l, mi, S), s_nmax(lay, S)
    gmax = vzero(L)
    row = 0
    for lp in range(s_nloop(l, mi, S)):
        oi = lay[LAY_LOOPS] + LP_SIZE * lp
        of = lay[LAY_LOOPF] + PF_SIZE * lp
        Rk, ok = vpose(VB, mi[l, oi + LP_K] * BW_SIZE + BW_K, L)
        Rr, orr = vpose(VB, mi[l, oi + LP_R] * BW_SIZE + BW_K, L)
        xk = add(ok, mv(Rk, _vec_at(mf, l, of + PF_DK)))
        xr = add(orr, mv(Rr, _vec_at(mf, l, of + PF_DR)))
        D = sub(xr, xk)
        om = lay[LAY_MARKS] + nmax * lp
        nn, m = mi[l, oi + LP_NN], s_m(l, mi, oi, S)
        for ia in range(m):
            ri = mi[l, oi + LP_ROWS + ia]
            if ri < nn:
                N = mv(Rk, _vec_at(mf, l, of + PF_N + 3 * ri))
                val = dot(N, D)
                w = cross(N, D)
            else:
                jj = ri - nn
                N = mv(Rk, _vec_at(mf, l, of + PF_EK + 3 * jj))
                Er = mv(Rr, _vec_at(mf, l, of + PF_ER + 3 * jj))
                val = dot(N, Er) - mf[l, of + PF_C0 + jj]
                w = cross(N, Er)
            vstore(VM, ogv + row + ia, val)
            gmax = vmax(gmax, vabs(val))
            vset_twist(VM, owk + 6 * ia, N, w)
        for j in range(n):
            mk = mi[l, om + j]
            if mk == 0:
                z0 = vzero(L)
                for ia in range(m):
                    vstore(VM, og + (row + ia) * nmax + j, z0)
                continue
            Rj, o = vpose(VB, j * BW_SIZE + BW_K, L)
            a = mf[l, BF_SIZE * j + BF_A]
            z = (Rj[2], Rj[5], Rj[8])
            u = add(scale(a, cross(z, sub(xk if mk == 1 else xr, o))), scale(mf[l, BF_SIZE * j + BF_B], z))
            for ia in range(m):
                N, w = vtwist(VM, owk + 6 * ia, L)
                aw = a * dot(z, w)
                if mi[l, oi + LP_ROWS + ia] < nn:
                    col = aw - dot(N, u) if mk == 1 else dot(N, u)
                else:
                    col = aw if mk == 1 else -aw
                vstore(VM, og + (row + ia) * nmax + j, col)
        row += m
    return gmax


@_internal
def vloop_values(l, mi, S, mf, lay, VB, VM, ogv, L):
    """The loops' selected residuals ``g`` (eq. 12, 16, 33) into rows ``ogv + row``, without ``G``.
    Returns ``max |g|``."""
    gmax = vzero(L)
    row = 0
    for lp in range(s_nloop(l, mi, S)):
        oi, of, Rk, Rr, D = vloop_frame(l, mi, S, mf, lay, VB, lp, L)
        for ia in range(s_m(l, mi, oi, S)):
            val = vloop_residual(l, mi, S, mf, oi, of, Rk, Rr, D, ia)
            vstore(VM, ogv + row, val)
            gmax = vmax(gmax, vabs(val))
            row += 1
    return gmax


@_internal
def vloop_bias(l, mi, S, mf, lay, VB, VM, ogb, L):
    """:func:`pkm.kernels.dynamics._loop_bias` in lanes: ``Ġθ̇`` (eq. 14, 47) into rows ``ogb + row``."""
    row = 0
    for lp in range(s_nloop(l, mi, S)):
        oi = lay[LAY_LOOPS] + LP_SIZE * lp
        of = lay[LAY_LOOPF] + PF_SIZE * lp
        k, r = mi[l, oi + LP_K], mi[l, oi + LP_R]
        Rk, rk = vpose(VB, k * BW_SIZE + BW_K, L)
        Rr, rr = vpose(VB, r * BW_SIZE + BW_K, L)
        Rkr = mtm(Rk, Rr)
        dr = _vec_at(mf, l, of + PF_DR)
        sv = mtv(Rk, sub(add(rr, mv(Rr, dr)), rk))
        wk, vk = vtwist(VB, k * BW_SIZE + BW_V, L)
        wr, vr = vtwist(VB, r * BW_SIZE + BW_V, L)
        ak, bk = vtwist(VB, k * BW_SIZE + BW_A, L)
        ar, br = vtwist(VB, r * BW_SIZE + BW_A, L)
        acc, _ = _bias_rho(Rkr, sv, dr, wk, vk, wr, vr, ak, bk, ar, br)
        nn = mi[l, oi + LP_NN]
        for ia in range(s_m(l, mi, oi, S)):
            ri = mi[l, oi + LP_ROWS + ia]
            if ri < nn:
                x = dot(_vec_at(mf, l, of + PF_N + 3 * ri), acc)
            else:
                jj = ri - nn
                x = _bias_orient(Rkr, _vec_at(mf, l, of + PF_EK + 3 * jj), _vec_at(mf, l, of + PF_ER + 3 * jj), wk,
                                 wr, ak, ar)
            vstore(VM, ogb + row, x)
            row += 1


@_internal
def vgy_times(l, mi, S, lay, VM, ogyi, ox, oy, L):
    """Rows ``oy + Y_a`` = ``−(G_y⁻¹ x)_a`` per loop for ``x`` in rows ``ox + row`` (``Δθ_y = −G_y⁻¹g``,
    ``Ḣq̇ = −G_y⁻¹Ġθ̇``, eq. 46–47); the other rows ``oy + i`` zero."""
    z = vzero(L)
    for i in range(s_n(l, mi, S)):
        vstore(VM, oy + i, z)
    row = 0
    for lp in range(s_nloop(l, mi, S)):
        oi = lay[LAY_LOOPS] + LP_SIZE * lp
        m = s_m(l, mi, oi, S)
        ox_ = ogyi + GJ * GJ * lp
        for a in range(m):
            acc = vzero(L)
            for b in range(m):
                acc = acc - vload(VM, ox_ + a * GJ + b, L) * vload(VM, ox + row + b, L)
            vstore(VM, oy + mi[l, oi + LP_Y + a], acc)
        row += m


# ----------------------------------------------------------------------------- H and L_p
@_internal
def vgj_inverse(A, oa, ox, m, L):
    """``X = A⁻¹`` for the ``m × m`` matrices in rows ``oa + a · GJ + b`` (destroyed) into rows
    ``ox + a · GJ + b``, by Gauss–Jordan with partial pivoting as :func:`pkm.lie.linalg.inverse_into`,
    each lane with its own pivot rows (exchanged by ``select``). Returns the mask of lanes whose
    every pivot is nonzero."""
    z, one = vzero(L), splat(1.0, L)
    ok = one > 0.0
    for a in range(m):
        for b in range(m):
            vstore(A, ox + a * GJ + b, one if a == b else z)
    for c in range(m):
        best = vabs(vload(A, oa + c * GJ + c, L))
        for r in range(c + 1, m):
            cand = vabs(vload(A, oa + r * GJ + c, L))
            take = cand > best  # the first row of largest magnitude, as inverse_into
            if any_lane(take):
                for j in range(m):
                    for o in (oa, ox):
                        u, w = vload(A, o + c * GJ + j, L), vload(A, o + r * GJ + j, L)
                        vstore(A, o + c * GJ + j, select(take, w, u))
                        vstore(A, o + r * GJ + j, select(take, u, w))
                best = select(take, cand, best)
        nz = best > 0.0
        ok = ok & nz
        inv = 1.0 / select(nz, vload(A, oa + c * GJ + c, L), 1.0)
        for j in range(m):
            vstore(A, oa + c * GJ + j, vload(A, oa + c * GJ + j, L) * inv)
            vstore(A, ox + c * GJ + j, vload(A, ox + c * GJ + j, L) * inv)
        for r in range(m):
            if r != c:
                f = vload(A, oa + r * GJ + c, L)
                for j in range(m):
                    vstore(A, oa + r * GJ + j, vload(A, oa + r * GJ + j, L) - f * vload(A, oa + c * GJ + j, L))
                    vstore(A, ox + r * GJ + j, vload(A, ox + r * GJ + j, L) - f * vload(A, ox + c * GJ + j, L))
    return ok


@_internal
def _on(bits, i):
    """Whether variable ``i`` is among ``bits`` (a constant of :func:`pkm.kernels.simd_pipeline.s_ymask`), or every
    variable when the bits are not known (``−1``: the dense code)."""
    return bits < 0 or bits >> i & 1 == 1


@_internal
def _vlp_static(l, mi, S, lay, d, VM, oh, olp, ym, pm, L):
    """``L_p = J_pH`` (eq. 80) with ``H``'s structure constant (:func:`pkm.kernels.simd_pipeline.s_ymask`): per
    column of ``L_p``, from the platform towards the base, a row ``y`` of ``H`` on the path adds its product, the
    row of ``q_c`` (``H_q = I``) its column of ``J_p``; the terms skipped are exact zeros, so every entry sums the
    dense product's other terms in its order."""
    n, nmax, dmax, oq = s_n(l, mi, S), s_nmax(lay, S), s_dmax(lay, S), lay[LAY_QIDX]
    for c in range(d):
        v = mi[l, oq + c]
        a0, a1, a2, a3, a4, a5 = vzero(L), vzero(L), vzero(L), vzero(L), vzero(L), vzero(L)
        for j in range(n - 1, -1, -1):
            if pm >> j & 1 == 0:
                continue
            if ym >> j & 1:
                h = vload(VM, oh + j * dmax + c, L)
            elif j == v:
                h = splat(1.0, L)
            else:
                continue
            a0 = a0 + vload(VM, j, L) * h
            a1 = a1 + vload(VM, nmax + j, L) * h
            a2 = a2 + vload(VM, 2 * nmax + j, L) * h
            a3 = a3 + vload(VM, 3 * nmax + j, L) * h
            a4 = a4 + vload(VM, 4 * nmax + j, L) * h
            a5 = a5 + vload(VM, 5 * nmax + j, L) * h
        vstore(VM, olp + c, a0)
        vstore(VM, olp + dmax + c, a1)
        vstore(VM, olp + 2 * dmax + c, a2)
        vstore(VM, olp + 3 * dmax + c, a3)
        vstore(VM, olp + 4 * dmax + c, a4)
        vstore(VM, olp + 5 * dmax + c, a5)


@_internal
def vbuild_H(l, mi, S, lay, d, VM, thresh, L):
    """:func:`pkm.kernels.ik._build_H` in lanes: ``H`` (eq. 48) into its rows of :func:`vg_rows`,
    each loop's ``G_y⁻¹`` (Gauss–Jordan with partial pivoting by ``select``, see the module
    docstring) kept for ``Ḣq̇``, and ``L_p = J_pH`` (eq. 80) into ``VM``. Returns the mask of lanes
    whose every ``G_y`` is regular (a nonzero pivot, ``‖G_y‖₁‖G_y⁻¹‖₁ ≤ thresh``)."""
    n, nmax, dmax = s_n(l, mi, S), s_nmax(lay, S), s_dmax(lay, S)
    oq = lay[LAY_QIDX]
    olp = 6 * nmax
    og, _, _, oh, ogyi, owk, _, _, _, _ = vg_rows(nmax, dmax, s_lmax(lay, S))
    z, one = vzero(L), splat(1.0, L)
    ym, pm = s_ymask(S)
    if ym < 0:  # the rows q of H (H_q = I), unless the structure is known when compiling (they are not read then)
        for i in range(n):
            for c in range(d):
                vstore(VM, oh + i * dmax + c, z)
        for c in range(d):
            vstore(VM, oh + mi[l, oq + c] * dmax + c, one)
    ok = one > 0.0
    row = 0
    for lp in range(s_nloop(l, mi, S)):
        oi = lay[LAY_LOOPS] + LP_SIZE * lp
        m = s_m(l, mi, oi, S)
        ox = ogyi + GJ * GJ * lp
        n1 = vzero(L)
        for b in range(m):  # A = G_y; ‖G_y‖₁
            s1 = vzero(L)
            for a in range(m):
                x = vload(VM, og + (row + a) * nmax + mi[l, oi + LP_Y + b], L)
                vstore(VM, owk + a * GJ + b, x)
                s1 = s1 + vabs(x)
            n1 = vmax(n1, s1)
        ok = ok & vgj_inverse(VM, owk, ox, m, L)
        ok = ok & (n1 * vnorm1(VM, ox, m, GJ, L) <= thresh)
        for c in range(d):  # H_y = −G_y⁻¹ G_q
            v = mi[l, oq + c]
            for a in range(m):
                acc = vzero(L)
                for b in range(m):
                    acc = acc + vload(VM, ox + a * GJ + b, L) * vload(VM, og + (row + b) * nmax + v, L)
                vstore(VM, oh + mi[l, oi + LP_Y + a] * dmax + c, -acc)
        row += m
    if ym >= 0:
        _vlp_static(l, mi, S, lay, d, VM, oh, olp, ym, pm, L)
        return ok
    # L_p = J_p H over the platform's path (the other columns of J_p are zero), the path walked once: every
    # entry sums the same terms in the same order as a walk per entry, which chained a dependent load of the
    # parent index per term (perf: ~15 % of this piece on the 3R[2US] Delta)
    for r in range(6):
        for c in range(d):
            vstore(VM, olp + r * dmax + c, z)
    j = mi[l, LI_PLAT]
    while j >= 0:
        for c in range(d):
            hjc = vload(VM, oh + j * dmax + c, L)
            for r in range(6):
                o = olp + r * dmax + c
                vstore(VM, o, vload(VM, o, L) + vload(VM, r * nmax + j, L) * hjc)
        j = mi[l, MI_PARENT + j]
    return ok


@_internal
def vdense_h(l, mi, S, lay, d, VM, oh, ox, oy, L):
    """Rows ``oy + i`` = ``(H x)_i`` with the ``H`` of :func:`vbuild_H`, ``x`` in rows ``ox + c``: dense, or with its
    structure constant (:func:`pkm.kernels.simd_pipeline.s_ymask`) the rows ``y`` only and ``x_c`` in row ``q_c``
    (the same values: the dense rows' other terms are exact zeros)."""
    dmax = s_dmax(lay, S)
    ym = s_ymask(S)[0]
    if ym >= 0:
        for c in range(d):
            vstore(VM, oy + mi[l, lay[LAY_QIDX] + c], vload(VM, ox + c, L))
    for i in range(s_n(l, mi, S)):
        if not _on(ym, i):
            continue
        acc = vzero(L)
        for c in range(d):
            acc = acc + vload(VM, oh + i * dmax + c, L) * vload(VM, ox + c, L)
        vstore(VM, oy + i, acc)


@_piece
def vgeom_general(l, mi, S, mf, lay, d, dp_static, TH, VB, VM, SMP, thresh, fresh, L):
    """Limb ``l`` at ``θ`` in rows ``l · n_max + i`` of ``TH``, in lanes: forward kinematics, pose error
    ``e`` (eq. 96), loop rows, ``J_p``, ``H``, ``L_p``, ``L_p⁺`` (eq. 94). Returns ``(|e|, max|g|,
    near, regular)`` (``near``: ``e`` is the logarithm, :func:`pkm.kernels.simd_pipeline.vplatform_error`)."""
    nmax, dmax = s_nmax(lay, S), s_dmax(lay, S)
    oe = vm_rows(nmax, dmax)[7]
    og, ogv, _, _, _, owk, _, _, _, _ = vg_rows(nmax, dmax, s_lmax(lay, S))
    vfk(l, mi, S, mf, TH, l * nmax, VB, fresh, FK_ALL, L)
    perr, near, Rp, rp = vplatform_error(l, mi, S, mf, lay, VB, SMP, VM, oe, L)
    gmax = vloop_rows(l, mi, S, mf, lay, VB, VM, og, ogv, owk, L)
    vjacobian_lp(l, mi, S, mf, lay, d, VB, VM, Rp, rp, True, L)  # J_p (L_p: vbuild_H)
    reg = vbuild_H(l, mi, S, lay, d, VM, thresh, L)
    reg = reg & vgeometry(l, mi, S, lay, d, dp_static, VM, thresh, L)
    return perr, gmax, near, reg


# ----------------------------------------------------------------------------- the Newton step and the rates
@_internal
def _y_on_path(S):
    """The bits of the tree variables ``y`` on the platform's path (where ``J_p`` and a vector nonzero only at ``y``
    can both be nonzero) when the structure is constant, else −1."""
    ym, pm = s_ymask(S)
    return ym & pm if ym >= 0 else -1


@_internal
def _e_minus_jy(VM, oe, oy, oj, nmax, n, yp, r, L):
    """``e_r − (J_p y)_r`` (``J_p`` in rows ``oj + r · n_max + j`` of ``VM``, ``y`` in rows ``oy + j``); ``yp ≥ 0``: the
    bits of the ``j`` where both can be nonzero (the other terms, exact zeros, skipped)."""
    acc = vload(VM, oe + r, L)
    for j in range(n):
        if _on(yp, j):
            acc = acc - vload(VM, oj + r * nmax + j, L) * vload(VM, oy + j, L)
    return acc


@_internal
def vnewton_step(l, mi, S, lay, d, TH, VM, mask, oj, opi, oh, ogyi, L):
    """``θ += Δθ`` in the lanes ``mask``: the Newton step in ``q`` with the loops closed (eq. 83, 85),
    ``Δθ_y = −G_y⁻¹g``, ``Δq = L_p⁺(e − J_pΔθ_y)``, ``Δθ = HΔq + Δθ_y``, with ``e`` and ``g`` in their rows
    of ``VM`` and ``J_p``, ``L_p⁺``, ``H``, ``G_y⁻¹`` at rows ``oj, opi, oh, ogyi`` (this point's geometry, or
    the last sample's: a chord step). Returns ``max |Δθ_i|`` per lane."""
    nmax, dmax = s_nmax(lay, S), s_dmax(lay, S)
    _, _, _, _, _, _, _, oe, oqd, _, _, _, _, _, _ = vm_rows(nmax, dmax)
    _, ogv, _, _, _, _, _, odth, oy, _ = vg_rows(nmax, dmax, s_lmax(lay, S))
    n = s_n(l, mi, S)
    vgy_times(l, mi, S, lay, VM, ogyi, ogv, oy, L)
    yp = _y_on_path(S)
    ee = (_e_minus_jy(VM, oe, oy, oj, nmax, n, yp, 0, L), _e_minus_jy(VM, oe, oy, oj, nmax, n, yp, 1, L),
          _e_minus_jy(VM, oe, oy, oj, nmax, n, yp, 2, L), _e_minus_jy(VM, oe, oy, oj, nmax, n, yp, 3, L),
          _e_minus_jy(VM, oe, oy, oj, nmax, n, yp, 4, L), _e_minus_jy(VM, oe, oy, oj, nmax, n, yp, 5, L))
    for a in range(d):
        acc = vzero(L)
        for r in range(6):
            acc = acc + vload(VM, opi + a * 6 + r, L) * ee[r]
        vstore(VM, oqd + a, acc)
    vdense_h(l, mi, S, lay, d, VM, oh, oqd, odth, L)
    big = vzero(L)
    for i in range(n):
        o = l * nmax + i
        dx = select(mask, vload(VM, odth + i, L) + vload(VM, oy + i, L), 0.0)
        big = vmax(big, vabs(dx))
        vstore(TH, o, vload(TH, o, L) + dx)
    return big


@_internal
def vmotion_general(l, mi, S, mf, lay, d, VB, VM, SMP, g0, L):
    """:func:`pkm.kernels.dynamics._limb_motion` (general branch) in lanes: ``q̇ = L_p⁺V_p``, ``θ̇ = Hq̇``,
    twists, ``Ḣq̇ = −G_y⁻¹Ġθ̇`` (eq. 46–47), ``q̈ = L_p⁺(V̇_p − J̇_pθ̇ − J_pḢq̇)``, ``θ̈ = Hq̈ + Ḣq̇``
    (eq. 86–88, 90–93), the RNEA (App. B) and ``Hᵀφ`` (eq. 144) into the rows ``q`` of ``VM``."""
    n, plat, nmax, dmax = s_n(l, mi, S), mi[l, LI_PLAT], s_nmax(lay, S), s_dmax(lay, S)
    _, _, _, _, _, _, opi, _, oqd, oqdd, othd, othdd, oq, _, _ = vm_rows(nmax, dmax)
    _, _, ogb, oh, ogyi, _, _, _, oy, _ = vg_rows(nmax, dmax, s_lmax(lay, S))
    vpinv_times(VM, opi, SMP, 12, oqd, d, L)  # q̇ = L_p⁺V_p
    vdense_h(l, mi, S, lay, d, VM, oh, oqd, othd, L)
    vtwists(l, mi, S, mf, VB, VM, othd, L)
    vloop_bias(l, mi, S, mf, lay, VB, VM, ogb, L)
    vgy_times(l, mi, S, lay, VM, ogyi, ogb, oy, L)  # Ḣq̇ in rows oy
    RQ, pQ = _pose_at(mf, l, lay[LAY_QP])
    pw, pv = vtwist(VB, plat * BW_SIZE + BW_A, L)
    aw, av = Ad(RQ, pQ, pw, pv)
    r0, r1, r2 = vload(SMP, 18, L) - aw[0], vload(SMP, 19, L) - aw[1], vload(SMP, 20, L) - aw[2]
    r3, r4, r5 = vload(SMP, 21, L) - av[0], vload(SMP, 22, L) - av[1], vload(SMP, 23, L) - av[2]
    yp = _y_on_path(S)  # Ḣq̇ is zero off y, J_p off the path
    for i in range(n):
        if not _on(yp, i):
            continue
        hd = vload(VM, oy + i, L)
        r0 = r0 - vload(VM, i, L) * hd
        r1 = r1 - vload(VM, nmax + i, L) * hd
        r2 = r2 - vload(VM, 2 * nmax + i, L) * hd
        r3 = r3 - vload(VM, 3 * nmax + i, L) * hd
        r4 = r4 - vload(VM, 4 * nmax + i, L) * hd
        r5 = r5 - vload(VM, 5 * nmax + i, L) * hd
    for a in range(d):
        o = opi + a * 6
        vstore(VM, oqdd + a, vload(VM, o, L) * r0 + vload(VM, o + 1, L) * r1 + vload(VM, o + 2, L) * r2
               + vload(VM, o + 3, L) * r3 + vload(VM, o + 4, L) * r4 + vload(VM, o + 5, L) * r5)
    vdense_h(l, mi, S, lay, d, VM, oh, oqdd, othdd, L)
    for i in range(n):
        vstore(VM, othdd + i, vload(VM, othdd + i, L) + vload(VM, oy + i, L))
    vrnea(l, mi, S, mf, VB, VM, othd, othdd, g0, L)
    vht_phi(l, mi, S, lay, d, VB, VM, L)


@_internal
def vht_phi(l, mi, S, lay, d, VB, VM, L):
    """``q = Hᵀφ`` (eq. 144; rows ``q`` of :func:`pkm.kernels.simd_pipeline.vm_rows`) with the ``H`` of
    :func:`vbuild_H` and the joint forces ``φ`` in ``VB``: dense, or with ``H``'s structure constant ``q_c = φ_{q_c} +
    Σ_y H_{y,c} φ_y``."""
    nmax, dmax = s_nmax(lay, S), s_dmax(lay, S)
    oq, oh = vm_rows(nmax, dmax)[12], vg_rows(nmax, dmax, s_lmax(lay, S))[3]
    ym = s_ymask(S)[0]
    for c in range(d):
        acc = vzero(L) if ym < 0 else vload(VB, mi[l, lay[LAY_QIDX] + c] * BW_SIZE + BW_PHI, L)
        for i in range(s_n(l, mi, S)):
            if _on(ym, i):
                acc = acc + vload(VM, oh + i * dmax + c, L) * vload(VB, i * BW_SIZE + BW_PHI, L)
        vstore(VM, oq + c, acc)
