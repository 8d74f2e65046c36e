"""The task form's forward dynamics in SIMD lanes (issue 32.2): one right-hand side of ``W`` states
at once, one lane each. A limb with a constant ``H`` (paper Sec. 3.3, Ex. 7–9) runs the steps below; a
general limb (``H`` configuration-dependent: loops closed by a Newton IK, ``Ḣq̇``) their counterparts in
:mod:`pkm.kernels.simd_forward_general` (its IK, :func:`pkm.kernels.simd_general.vmotion_general`, the
dense ``H``) inside the same :func:`lanes_state`.

What :func:`pkm.kernels.forward._forward_state` does for one state (see :mod:`pkm.kernels.forward`:
paper eq. 127–130), on the vectors of :mod:`pkm.kernels.simd_vec` and the per-limb pieces of
:mod:`pkm.kernels.simd_pipeline`, with the same operations in the same order (a lane equals the
scalar kernel up to the rounding of an FMA or of a sine taken fresh instead of by the series):

1. per limb, the IK of :func:`pkm.kernels.ik._solve_affine` as the forward kernel calls it (a warm
   start: the chord step ``Δq = P e`` with the limb's ``L_p⁺`` of the previous evaluation, then
   Gauss–Newton ``L_pᵀL_p Δq = L_pᵀe`` (eq. 80, 96) by Cholesky), every lane until it is accepted
   by :func:`pkm.kernels.ik._converged`; the lanes iterate together, a lane that is done stays
   where it is (its values are recomputed unchanged);
2. the geometry (:func:`pkm.kernels.simd_pipeline.vgeometry`: ``L_p⁺``, eq. 94, and its condition
   number), pass 0 (``V̇_t = 0``: ``θ̇, θ̈_0``, eq. 86–88, the RNEA and ``W̄ = FᵀHᵀφ``, eq. 144) and
   the ``δ_p`` unit passes (``θ̈ = H L_p⁺ P_p e_i`` at rest without gravity, ``φ = M θ̈``);
3. the platform (eq. 104–106) per pass, the columns of ``M_t``, ``J_IKᵀu − b`` and ``V̇_t = M_t⁻¹(J_IKᵀu +
   W_t^EE − C_t V_t − W_t^grav)`` (eq. 129) by the Gauss–Jordan inverse of
   :func:`pkm.lie.linalg.inverse_into` (:func:`pkm.kernels.simd_platform._vinverse`), ``θ̈ = θ̈_0 +
   Σ_i V̇_t,i θ̈_i`` and the actuators' power ``u·q̇_act``.

:func:`lanes_state` returns the bits of the lanes it evaluated; **a lane it did not** (its pose
error outside the near-identity branch of the logarithm, a non-finite error, Newton not accepted
within ``max_iter`` or a Cholesky pivot ≤ 0, a loop residual above ``LOOP_TOL``, ``L_p`` above the
singularity threshold, a row of ``J_IK`` turned by more than 90°, ``M_t`` singular) is evaluated
again by the caller on the scalar kernel, which then succeeds or reports the failure as it does
alone. The end-effector wrench is zero (``simulate_batch``'s). Inertial data: the limbs' (``mf``)
shared by the lanes, the platform's ``M_p`` per lane (payloads).

Scratch (structure of arrays, rows of ``W`` lanes): ``TH``, ``VB``, ``VM`` and ``SMP`` as in
:mod:`pkm.kernels.simd_kernel` (``SMP``: ``C_d`` rows 0–11, ``V_p`` 12–17, ``V̇_p`` 18–23 zero), and
``FS`` with the rows of :func:`fs_rows`.
"""
from __future__ import annotations

import numpy as np

from pkm.kernels.ik import _dof
from pkm.kernels.model import LAY_ACTPOS, LAY_QIDX, LI_ACTOFF, LI_AFF, LI_NACT, LOOP_TOL, \
    MI_PARENT, BF_A, BF_B, BF_IN, BF_SIZE
from pkm.kernels.simd_linalg import vcholesky
from pkm.kernels.simd_dynamics import _vinertia_times, vbackward, vlimb_wrench, vmotion, vparams10
from pkm.kernels.simd_pipeline import (FK_ALL, s_dmax, s_lmax, s_n, s_nmax, vfk, vgeometry, vh_times, vjacobian_lp,
                                       vloop_residuals, vm_rows, vplatform_error, vpose, vset_twist, vtheta_affine,
                                       vtwist)
from pkm.kernels.simd_forward_general import vconverged, vik_general
from pkm.kernels.simd_general import vdense_h, vg_rows, vht_phi, vmotion_general
from pkm.kernels.simd_platform import _vinverse
from pkm.kernels.simd_vec import lane_bits, select, splat, vabs, vload, vmax, vstore, vzero
from pkm.kernels.work import BW_A, BW_SIZE, BW_T, BW_W, _internal, _piece
from pkm.lie.small import Ad_inv, add, coad, sub

__all__ = ["fs_rows", "lanes_state", "FS_LEFT"]

#: Row of ``FS`` holding 1.0 in the lanes whose IK still iterates (a mask from lane bits).
FS_LEFT = 0


@_internal
def fs_rows(L, nmax, dmax, dp, na):
    """Row offsets of ``FS``: ``(left 1, q d_max, normal matrix d_max², its Cholesky factor d_max², right-hand
    side d_max, step d_max, chord matrices L·d_max·6 (in), θ̇ L·n_max, θ̈ of the passes (δ_p+1)·L·n_max,
    W̄ of the passes (δ_p+1)·L·δ_p, L_p⁺ L·d_max·6 (out), J_IK n_act·δ_p, the previous J_IK, M_p 10,
    u n_act, M_t, its elimination copy, M_t⁻¹ (δ_p² each), r δ_p, V̇_t δ_p, power 1, φ_p 6, total)``."""
    oq = 1
    onm = oq + dmax
    och = onm + dmax * dmax
    orh = och + dmax * dmax
    odx = orh + dmax
    oph = odx + dmax
    othd = oph + L * dmax * 6
    othdd = othd + L * nmax
    owb = othdd + (dp + 1) * L * nmax
    opn = owb + (dp + 1) * L * dp
    ojk = opn + L * dmax * 6
    ojkp = ojk + na * dp
    omp = ojkp + na * dp
    ou = omp + 10
    omt = ou + na
    owk = omt + dp * dp
    omi = owk + dp * dp
    orr = omi + dp * dp
    oxdd = orr + dp
    opow = oxdd + dp
    ophi = opow + 1
    return (oq, onm, och, orh, odx, oph, othd, othdd, owb, opn, ojk, ojkp, omp, ou, omt, owk, omi, orr, oxdd, opow, ophi,
            ophi + 6)


@_internal
def _unit(row, i, lanes):
    """Component ``i`` of the unit twist ``e_row`` in every lane."""
    return splat(1.0 if row == i else 0.0, lanes)


@_internal
def _vstep(FS, oq, odx, d, left, lanes):
    """:func:`pkm.kernels.ik._take_step` in the lanes ``left`` (a mask): ``q += s Δq``, ``s`` so that no
    component moves more than 0.5."""
    big = vzero(lanes)
    for j in range(d):
        big = vmax(big, vabs(vload(FS, odx + j, lanes)))
    sc = select(big > 0.5, 0.5 / big, 1.0)
    for j in range(d):
        x = vload(FS, oq + j, lanes)
        vstore(FS, oq + j, select(left, x + sc * vload(FS, odx + j, lanes), x))


@_internal
def _vnewton(FS, VM, olp, oe, onm, och, orh, odx, d, dmax, lanes):
    """The Gauss–Newton step ``L_pᵀL_p Δq = L_pᵀe`` (:func:`pkm.kernels.ik._normal_equations`, then
    :func:`pkm.lie.linalg.cholesky_solve_into` with its operations) into rows ``odx``. Returns the mask
    of lanes whose pivots are all > 0."""
    for a in range(d):
        for b in range(a + 1):
            acc = vzero(lanes)
            for r in range(6):
                acc = acc + vload(VM, olp + r * dmax + a, lanes) * vload(VM, olp + r * dmax + b, lanes)
            vstore(FS, onm + a * dmax + b, acc)
            vstore(FS, onm + b * dmax + a, acc)
        acc = vzero(lanes)
        for r in range(6):
            acc = acc + vload(VM, olp + r * dmax + a, lanes) * vload(VM, oe + r, lanes)
        vstore(FS, orh + a, acc)
    ok = vcholesky(FS, onm, och, d, dmax, -1, lanes)
    for i in range(d):  # L y = b
        s = vload(FS, orh + i, lanes)
        for k in range(i):
            s = s - vload(FS, och + i * dmax + k, lanes) * vload(FS, odx + k, lanes)
        vstore(FS, odx + i, s / vload(FS, och + i * dmax + i, lanes))
    for i in range(d - 1, -1, -1):  # Lᵀ x = y
        s = vload(FS, odx + i, lanes)
        for k in range(i + 1, d):
            s = s - vload(FS, och + k * dmax + i, lanes) * vload(FS, odx + k, lanes)
        vstore(FS, odx + i, s / vload(FS, och + i * dmax + i, lanes))
    return ok


@_piece
def _vik(l, mi, S, mf, lay, d_static, TH, VB, VM, SMP, FS, tol, max_iter, todo, lanes):
    """Limb ``l``'s IK in the lanes ``todo`` (bits), as :func:`pkm.kernels.ik._solve_affine` with ``chord``
    (``P`` in ``FS``'s chord rows) and without ``accept``; ``J_p``, ``L_p`` of the solution stay in
    ``VM``, ``θ`` in ``TH``. Returns the bits of the lanes it solved."""
    L, nmax, dmax = mi.shape[0], s_nmax(lay, S), s_dmax(lay, S)
    d, n, tho = _dof(l, mi, d_static), s_n(l, mi, S), l * nmax
    oq, onm, och, orh, odx, oph = fs_rows(L, nmax, dmax, len(d_static), 0)[:6]
    olp, oe = vm_rows(nmax, dmax)[1], vm_rows(nmax, dmax)[7]
    W = len(lanes)
    for c in range(d):  # q = θ[q_index] of the start
        vstore(FS, oq + c, vload(TH, tho + mi[l, lay[LAY_QIDX] + c], lanes))
    left, bad = todo, 0
    prev = splat(np.inf, lanes)
    for it in range(max_iter + 1):
        for j in range(W):
            FS[FS_LEFT, j] = 1.0 if left >> j & 1 else 0.0
        vtheta_affine(l, mi, S, mf, lay, FS, oq, TH, tho, lanes)
        vfk(l, mi, S, mf, TH, tho, VB, it == 0, FK_ALL, lanes)
        perr, near, Rp, rp = vplatform_error(l, mi, S, mf, lay, VB, SMP, VM, oe, lanes)
        lost = left & ~lane_bits(near & (perr < np.inf))  # outside the near-identity logarithm, or not finite
        bad |= lost
        left &= ~lost
        if left == 0:
            break
        lm = vload(FS, FS_LEFT, lanes) > 0.5
        if it == 0:  # the chord step Δq = P e (P: the limb's L_p⁺ of the previous evaluation)
            for c in range(d):
                acc = vzero(lanes)
                for r in range(6):
                    acc = acc + vload(FS, oph + (l * dmax + c) * 6 + r, lanes) * vload(VM, oe + r, lanes)
                vstore(FS, odx + c, acc)
            _vstep(FS, oq, odx, d, lm, lanes)
            prev = perr
            continue
        vjacobian_lp(l, mi, S, mf, lay, d, VB, VM, Rp, rp, False, lanes)   # L_p only (the Newton step reads it)
        left &= ~lane_bits(vconverged(perr, prev, it, tol, TH, tho, n, lanes))  # pkm.kernels.ik._converged
        if left == 0:
            break
        if it == max_iter:
            bad |= left
            left = 0
            break
        for j in range(W):
            FS[FS_LEFT, j] = 1.0 if left >> j & 1 else 0.0
        lm = vload(FS, FS_LEFT, lanes) > 0.5
        ok = _vnewton(FS, VM, olp, oe, onm, och, orh, odx, d, dmax, lanes)
        lost = left & ~lane_bits(ok)
        bad |= lost
        left &= ~lost
        _vstep(FS, oq, odx, d, lm & ok, lanes)
        prev = perr
    solved = todo & ~bad & ~lane_bits(~(vloop_residuals(l, mi, S, mf, lay, VB, lanes) <= LOOP_TOL))
    return solved


@_internal
def _vrnea_acc(l, mi, S, mf, VB, VM, othdd, lanes):
    """:func:`pkm.kernels.dynamics._rnea_acc` in lanes (at rest, no gravity, no joint terms): ``φ = M θ̈``."""
    n = s_n(l, mi, S)
    z = vzero(lanes)
    for i in range(n):
        k = mi[l, MI_PARENT + i]
        o = BF_SIZE * i
        qdd = vload(VM, othdd + i, lanes)
        a, b = mf[l, o + BF_A] * qdd, mf[l, o + BF_B] * qdd
        if k >= 0:
            R, p = vpose(VB, i * BW_SIZE + BW_T, lanes)
            pw, pv = vtwist(VB, k * BW_SIZE + BW_A, lanes)
            aw, av = Ad_inv(R, p, pw, pv)
            vset_twist(VB, i * BW_SIZE + BW_A, (aw[0], aw[1], aw[2] + a), (av[0], av[1], av[2] + b))
        else:
            vset_twist(VB, i * BW_SIZE + BW_A, (z, z, a), (z, z, b))
        vset_twist(VB, i * BW_SIZE + BW_W, (z, z, z), (z, z, z))
    for i in range(n - 1, -1, -1):
        fw, fv = vtwist(VB, i * BW_SIZE + BW_W, lanes)
        if mf[l, BF_SIZE * i + BF_IN] != 0.0:
            aw, av = vtwist(VB, i * BW_SIZE + BW_A, lanes)
            mw, mv_ = _vinertia_times(vparams10(l, mf, i), aw, av)
            fw, fv = add(mw, fw), add(mv_, fv)
        vbackward(l, mi, mf, VB, i, fw, fv, lanes)


@_internal
def _vstore_wrench(l, mi, S, lay, d, dp_static, VM, FS, opi, oqv, ow, lanes):
    """``W̄_c = Σ_a L_p⁺[a, task_c] (Hᵀφ)_a`` (eq. 144, ``F = L_p⁺P_p``) into rows ``ow + c``."""
    for c in range(len(dp_static)):
        acc = vzero(lanes)
        for a in range(d):
            acc = acc + vload(VM, opi + 6 * a + dp_static[c], lanes) * vload(VM, oqv + a, lanes)
        vstore(FS, ow + c, acc)


@_piece
def _vlimb_passes(l, mi, S, mf, lay, d_static, dp_static, VB, VM, SMP, FS, g0, na, general, lanes):
    """Limb ``l`` at its solution and geometry: pass 0 (``vmotion``: ``θ̇, θ̈_0``, RNEA, ``W̄``) and the unit
    passes (``θ̈_i = H L_p⁺[:, task_i]``, ``φ = M θ̈_i``, ``W̄``) into ``FS``; its ``L_p⁺`` and rows of ``J_IK`` too.
    ``general`` not None: the limb is general, with its dense ``H`` and ``Ḣq̇``
    (:mod:`pkm.kernels.simd_forward_general`; None: not compiled)."""
    L, nmax, dmax, dp = mi.shape[0], s_nmax(lay, S), s_dmax(lay, S), len(dp_static)
    d, n = _dof(l, mi, d_static), s_n(l, mi, S)
    _, _, _, _, _, _, othd, othdd, owb, opn, ojk = fs_rows(L, nmax, dmax, dp, na)[:11]
    vo = vm_rows(nmax, dmax)
    opi, oqdd, vthd, vthdd, oqv = vo[6], vo[9], vo[10], vo[11], vo[12]
    for a in range(d):
        for r in range(6):
            vstore(FS, opn + (l * dmax + a) * 6 + r, vload(VM, opi + a * 6 + r, lanes))
    off, oa = mi[l, LI_ACTOFF], lay[LAY_ACTPOS]
    for a in range(mi[l, LI_NACT]):  # F = L_p⁺P_p: the limb's rows of J_IK (eq. 94, 97–98)
        for c in range(dp):
            vstore(FS, ojk + (off + a) * dp + c, vload(VM, opi + 6 * mi[l, oa + a] + dp_static[c], lanes))
    if general is not None:  # θ̈_0 with Ḣq̇ (eq. 90–93), q = Hᵀφ
        vmotion_general(l, mi, S, mf, lay, d, VB, VM, SMP, g0, lanes)
    else:
        vmotion(l, mi, S, mf, lay, d, VB, VM, SMP, g0, lanes)
        vlimb_wrench(l, mi, S, mf, lay, n, d, dp_static, VB, VM, lanes)
    _vstore_wrench(l, mi, S, lay, d, dp_static, VM, FS, opi, oqv, owb + l * dp, lanes)
    for i in range(n):
        vstore(FS, othd + l * nmax + i, vload(VM, vthd + i, lanes))
        vstore(FS, othdd + l * nmax + i, vload(VM, vthdd + i, lanes))
    for k in range(1, dp + 1):  # M_t e_k: θ̈ = H L_p⁺ e_row (eq. 88 at rest), φ = M θ̈ (App. B)
        for a in range(d):
            vstore(VM, oqdd + a, vload(VM, opi + a * 6 + dp_static[k - 1], lanes))
        if general is not None:
            vdense_h(l, mi, S, lay, d, VM, vg_rows(nmax, dmax, s_lmax(lay, S))[3], oqdd, vthdd, lanes)
        else:
            vh_times(l, mi, S, mf, lay, n, VM, oqdd, vthdd, lanes)
        _vrnea_acc(l, mi, S, mf, VB, VM, vthdd, lanes)
        if general is not None:
            vht_phi(l, mi, S, lay, d, VB, VM, lanes)
        else:
            vlimb_wrench(l, mi, S, mf, lay, n, d, dp_static, VB, VM, lanes)
        _vstore_wrench(l, mi, S, lay, d, dp_static, VM, FS, opi, oqv, owb + (k * L + l) * dp, lanes)
        for i in range(n):
            vstore(FS, othdd + (k * L + l) * nmax + i, vload(VM, vthdd + i, lanes))


@_piece
def _vtask_solve(mi, lay, S, d_static, dp_static, act_limb, act_var, SMP, FS, g0, lanes):
    """:func:`pkm.kernels.forward._task_solve` in lanes (J_IK⁻ᵀ and ``u_0`` left out: a simulation does
    not use them): the turn of J_IK's rows (:data:`pkm.kernels.forward.CROSSED`), the platform per pass
    (eq. 104–106), ``M_t`` and ``V̇_t`` (eq. 129), ``θ̈`` and the power. Returns the mask of good lanes."""
    L, nmax, dmax, dp, na = mi.shape[0], s_nmax(lay, S), s_dmax(lay, S), len(dp_static), act_limb.shape[0]
    _, _, _, _, _, _, othd, othdd, owb, _, ojk, ojkp, omp, ou, omt, owk, omi, orr, oxdd, opow, ophi, _ = \
        fs_rows(L, nmax, dmax, dp, na)
    ok = splat(1.0, lanes) > 0.0
    for a in range(na):  # a row of J_IK turned by more than 90° since the previous evaluation: crossed
        turn = vzero(lanes)
        for c in range(dp):
            turn = turn + vload(FS, ojk + a * dp + c, lanes) * vload(FS, ojkp + a * dp + c, lanes)
        ok = ok & (turn > 0.0)
    z = vzero(lanes)
    p10 = (vload(FS, omp, lanes), vload(FS, omp + 1, lanes), vload(FS, omp + 2, lanes), vload(FS, omp + 3, lanes),
           vload(FS, omp + 4, lanes), vload(FS, omp + 5, lanes), vload(FS, omp + 6, lanes), vload(FS, omp + 7, lanes),
           vload(FS, omp + 8, lanes), vload(FS, omp + 9, lanes))
    R, p = vpose(SMP, 0, lanes)
    gw, gv = Ad_inv(R, p, (z, z, z), (splat(g0[0], lanes), splat(g0[1], lanes), splat(g0[2], lanes)))
    fw, fv = _vinertia_times(p10, sub((z, z, z), gw), sub((z, z, z), gv))
    w, v = vtwist(SMP, 12, lanes)
    hw, hv = _vinertia_times(p10, w, v)
    cw, cv = coad(w, v, hw, hv)
    vset_twist(FS, ophi, sub(fw, cw), sub(fv, cv))
    for c in range(dp):  # r = J_IKᵀu − (C_t V_t + W_t^grav − W_t^EE), pass 0's wrench (eq. 140's bracket)
        acc = vload(FS, ophi + dp_static[c], lanes)
        for l in range(L):
            acc = acc + vload(FS, owb + l * dp + c, lanes)
        acc = -acc
        for a in range(na):
            acc = acc + vload(FS, ojk + a * dp + c, lanes) * vload(FS, ou + a, lanes)
        vstore(FS, orr + c, acc)
    for k in range(1, dp + 1):  # column k − 1 of M_t: the platform's M_p P_p e_k and the limbs' W̄
        row = dp_static[k - 1]
        fw, fv = _vinertia_times(p10, (_unit(row, 0, lanes), _unit(row, 1, lanes), _unit(row, 2, lanes)),
                                 (_unit(row, 3, lanes), _unit(row, 4, lanes), _unit(row, 5, lanes)))
        vset_twist(FS, ophi, fw, fv)
        for c in range(dp):
            acc = vload(FS, ophi + dp_static[c], lanes)
            for l in range(L):
                acc = acc + vload(FS, owb + (k * L + l) * dp + c, lanes)
            vstore(FS, omt + c * dp + k - 1, acc)
    ok = ok & _vinverse(FS, omt, owk, omi, dp, lanes)
    for i in range(dp):  # V̇_t = M_t⁻¹ r (eq. 129)
        acc = vzero(lanes)
        for a in range(dp):
            acc = acc + vload(FS, omi + i * dp + a, lanes) * vload(FS, orr + a, lanes)
        vstore(FS, oxdd + i, acc)
    for l in range(L):  # θ̈ = θ̈_0 + Σ_i V̇_t,i θ̈_i (eq. 88, affine in V̇_t)
        for j in range(nmax):
            acc = vload(FS, othdd + l * nmax + j, lanes)
            for i in range(dp):
                acc = acc + vload(FS, oxdd + i, lanes) * vload(FS, othdd + ((i + 1) * L + l) * nmax + j, lanes)
            vstore(FS, othdd + l * nmax + j, acc)
    power = vzero(lanes)
    for a in range(na):
        power = power + vload(FS, ou + a, lanes) * vload(FS, othd + act_limb[a] * nmax + act_var[a], lanes)
    vstore(FS, opow, power)
    return ok


@_piece
def lanes_state(mi, mf, lay, d_static, dp_static, S, g0, tol, max_iter, thresh, act_limb, act_var, todo, TH, VB,
                VM, SMP, FS, general, lanes):
    """The forward dynamics of the lanes ``todo`` (bits) at the states in ``SMP`` (pose, twist), the IK
    starts in ``TH``, the chord matrices, previous J_IK, ``M_p`` and ``u`` in ``FS`` (module docstring).
    Returns the bits of the lanes evaluated: their ``θ`` in ``TH``, ``θ̇, θ̈, L_p⁺, J_IK, V̇_t`` and the
    power in ``FS``. ``general``: None when every limb has a constant ``H`` (the general limbs' pieces are
    then not compiled), else any array (``VM`` then with the rows of :func:`pkm.kernels.simd_general.vg_rows`)."""
    L = mi.shape[0]
    good = todo
    for l in range(L):
        if good == 0:
            return 0
        d = _dof(l, mi, d_static)
        if general is not None:
            if mi[l, LI_AFF] == 0:  # a general limb: IK and geometry (H, L_p⁺) of simd_forward_general
                good = vik_general(l, mi, S, mf, lay, d, dp_static, TH, VB, VM, SMP, FS, FS_LEFT, tol, max_iter,
                                   thresh, good, lanes)
                _vlimb_passes(l, mi, S, mf, lay, d_static, dp_static, VB, VM, SMP, FS, g0, act_limb.shape[0], general,
                              lanes)
                continue
        solved = _vik(l, mi, S, mf, lay, d_static, TH, VB, VM, SMP, FS, tol, max_iter, good, lanes)
        # J_p and L_p of the solution are in VM (the IK's last iterate)
        good = solved & lane_bits(vgeometry(l, mi, S, lay, d, dp_static, VM, thresh, lanes))
        _vlimb_passes(l, mi, S, mf, lay, d_static, dp_static, VB, VM, SMP, FS, g0, act_limb.shape[0], None, lanes)
    if good == 0:
        return 0
    return good & lane_bits(_vtask_solve(mi, lay, S, d_static, dp_static, act_limb, act_var, SMP, FS, g0, lanes))
