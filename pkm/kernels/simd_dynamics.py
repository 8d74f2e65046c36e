"""The rates and the inverse dynamics of a limb in SIMD lanes (issue 18): ``q̇, θ̇, q̈, θ̈`` (eq. 86–88), the
twists and the RNEA (App. B) and ``Hᵀφ`` (eq. 144) of :func:`pkm.kernels.dynamics._limb_motion` and
:func:`pkm.kernels.dynamics._rnea`, over the lane type and scratch of :mod:`pkm.kernels.simd_pipeline` (the
forward kinematics and the geometry there). Shared by the constant-``H`` limbs, the general ones
(:mod:`pkm.kernels.simd_general`), the platform stage (:mod:`pkm.kernels.simd_platform`) and the forward
dynamics in lanes (:mod:`pkm.kernels.simd_forward`)."""
from __future__ import annotations

from pkm.kernels.model import BF_A, BF_B, BF_IN, BF_SIZE, LAY_HC, LAY_HCOL, LAY_HNZ, LAY_QP, LI_PLAT, MI_PARENT
from pkm.kernels.simd_pipeline import (_zero3, s_dmax, s_n, s_nmax, vh_times, vm_rows, vpinv_times, vpose, vset_twist,
                                       vtwist)
from pkm.kernels.simd_vec import splat, vload, vstore, vzero
from pkm.kernels.work import BW_A, BW_PHI, BW_SIZE, BW_T, BW_V, BW_W, _internal, _pose_at
from pkm.lie.small import Ad, Ad_inv, add, coad, cross, mv, scale, sub

__all__ = ["vtwists", "vparams10", "vbackward", "vrnea", "vmotion", "vlimb_wrench"]


@_internal
def vtwists(l, mi, S, mf, VB, VM, othd, L):
    """:func:`pkm.kernels.dynamics._twists` in lanes (``θ̇`` in rows ``othd + i`` of ``VM``)."""
    for i in range(s_n(l, mi, S)):
        R, p = vpose(VB, i * BW_SIZE + BW_T, L)
        k = mi[l, MI_PARENT + i]
        if k >= 0:
            pw, pv = vtwist(VB, k * BW_SIZE + BW_V, L)
            qw, qv = vtwist(VB, k * BW_SIZE + BW_A, L)
            w, v = Ad_inv(R, p, pw, pv)
            aw, av = Ad_inv(R, p, qw, qv)
        else:
            w, v = _zero3(L), _zero3(L)
            aw, av = _zero3(L), _zero3(L)
        thd = vload(VM, othd + i, L)
        a, b = mf[l, BF_SIZE * i + BF_A] * thd, mf[l, BF_SIZE * i + BF_B] * thd
        w = (w[0], w[1], w[2] + a)
        v = (v[0], v[1], v[2] + b)
        vset_twist(VB, i * BW_SIZE + BW_V, w, v)
        vset_twist(VB, i * BW_SIZE + BW_A, (aw[0] + a * w[1], aw[1] - a * w[0], aw[2]),
                   (av[0] + a * v[1] + b * w[1], av[1] - a * v[0] - b * w[0], av[2]))


@_internal
def _vinertia_times(p, w, v):
    mc = (p[1], p[2], p[3])
    Iw = (p[4] * w[0] + p[5] * w[1] + p[6] * w[2], p[5] * w[0] + p[7] * w[1] + p[8] * w[2],
          p[6] * w[0] + p[8] * w[1] + p[9] * w[2])
    return add(Iw, cross(mc, v)), sub(scale(p[0], v), cross(mc, w))


@_internal
def vparams10(l, mf, i):
    """Body ``i``'s ten inertial parameters (the packed ``mf`` row at ``BF_IN``) as a tuple."""
    o = BF_SIZE * i + BF_IN
    return (mf[l, o], mf[l, o + 1], mf[l, o + 2], mf[l, o + 3], mf[l, o + 4], mf[l, o + 5], mf[l, o + 6],
            mf[l, o + 7], mf[l, o + 8], mf[l, o + 9])


@_internal
def vbackward(l, mi, mf, VB, i, fw, fv, L):
    """The backward pass's step at body ``i`` with its wrench ``W_i = (fw, fv)``: the joint force
    ``φ_i = Xᵀ W_i`` into row ``i · BW_SIZE + BW_PHI`` and ``Ad_{T_i}⁻ᵀ W_i`` added to the parent's wrench
    (:func:`pkm.kernels.dynamics._to_parent`)."""
    vstore(VB, i * BW_SIZE + BW_PHI, mf[l, BF_SIZE * i + BF_A] * fw[2] + mf[l, BF_SIZE * i + BF_B] * fv[2])
    k = mi[l, MI_PARENT + i]
    if k >= 0:
        _vsend(VB, i, k, fw, fv, True, L)


@_internal
def _vsend(VB, i, k, fw, fv, accumulate, L):
    """``Ad_{T_i}⁻ᵀ W_i`` of body ``i``'s wrench ``(fw, fv)`` into its parent ``k``'s wrench row: added to it if
    ``accumulate``, else written (the parent's first contribution)."""
    R, p = vpose(VB, i * BW_SIZE + BW_T, L)
    Rf = mv(R, fv)
    mw = add(mv(R, fw), cross(p, Rf))
    r = k * BW_SIZE + BW_W
    if accumulate:
        pw, pv = vtwist(VB, r, L)
        vset_twist(VB, r, add(pw, mw), add(pv, Rf))
    else:
        vset_twist(VB, r, mw, Rf)


@_internal
def vrnea(l, mi, S, mf, VB, VM, othd, othdd, g0, L):
    """:func:`pkm.kernels.dynamics._rnea` in lanes: ``φ_i`` into rows ``i · BW_SIZE + BW_PHI``. A body whose
    subtree has no mass (the massless ends of a limb's tree, e.g. a Delta limb's platform link) has ``φ_i = 0``
    and sends nothing to its parent: neither its acceleration nor its wrench is evaluated (the sums are those of
    the scalar kernel without its exact zeros). A body's wrench starts from its first child's contribution
    (no zeroed rows)."""
    n = s_n(l, mi, S)
    carry = 0  # the bodies whose subtree has mass (parents come before their children, as the passes below rely on)
    for i in range(n - 1, -1, -1):
        if mf[l, BF_SIZE * i + BF_IN] != 0.0 or carry >> i & 1:
            carry |= 1 << i
            k = mi[l, MI_PARENT + i]
            if k >= 0:
                carry |= 1 << k
    for i in range(n):
        if not carry >> i & 1:
            continue
        R, p = vpose(VB, i * BW_SIZE + BW_T, L)
        k = mi[l, MI_PARENT + i]
        if k >= 0:
            pw, pv = vtwist(VB, k * BW_SIZE + BW_A, L)
        else:
            pw, pv = _zero3(L), (splat(-g0[0], L), splat(-g0[1], L), splat(-g0[2], L))
        aw, av = Ad_inv(R, p, pw, pv)
        w, v = vtwist(VB, i * BW_SIZE + BW_V, L)
        o = BF_SIZE * i
        a, b = mf[l, o + BF_A], mf[l, o + BF_B]
        qd, qdd = vload(VM, othd + i, L), vload(VM, othdd + i, L)
        vset_twist(VB, i * BW_SIZE + BW_A, (aw[0] + a * qd * w[1], aw[1] - a * qd * w[0], aw[2] + a * qdd),
                   (av[0] + qd * (a * v[1] + b * w[1]), av[1] - qd * (a * v[0] + b * w[0]), av[2] + b * qdd))
    got = 0  # the bodies whose wrench row holds a child's contribution
    for i in range(n - 1, -1, -1):
        if not carry >> i & 1:
            vstore(VB, i * BW_SIZE + BW_PHI, vzero(L))
            continue
        if mf[l, BF_SIZE * i + BF_IN] != 0.0:
            p10 = vparams10(l, mf, i)
            w, v = vtwist(VB, i * BW_SIZE + BW_V, L)
            aw, av = vtwist(VB, i * BW_SIZE + BW_A, L)
            hw, hv = _vinertia_times(p10, w, v)
            cw, cv = coad(w, v, hw, hv)
            mw, mv_ = _vinertia_times(p10, aw, av)
            fw, fv = sub(mw, cw), sub(mv_, cv)
            if got >> i & 1:
                cw, cv = vtwist(VB, i * BW_SIZE + BW_W, L)
                fw, fv = add(fw, cw), add(fv, cv)
        else:  # massless with a massive subtree: its children's sum
            fw, fv = vtwist(VB, i * BW_SIZE + BW_W, L)
        vstore(VB, i * BW_SIZE + BW_PHI, mf[l, BF_SIZE * i + BF_A] * fw[2] + mf[l, BF_SIZE * i + BF_B] * fv[2])
        k = mi[l, MI_PARENT + i]
        if k >= 0:
            _vsend(VB, i, k, fw, fv, got >> k & 1 != 0, L)
            got |= 1 << k


@_internal
def vmotion(l, mi, S, mf, lay, d, VB, VM, SMP, g0, L):
    """:func:`pkm.kernels.dynamics._limb_motion` (constant ``H``) in lanes: ``q̇ = L_p⁺V_p``, ``θ̇ = Hq̇``,
    twists, ``q̈ = L_p⁺(V̇_p − J̇_pθ̇)``, ``θ̈ = Hq̈`` (eq. 86–88) and the RNEA; ``θ̇, θ̈`` stay in ``VM``."""
    n, plat = s_n(l, mi, S), mi[l, LI_PLAT]
    nmax, dmax = s_nmax(lay, S), s_dmax(lay, S)
    _, _, _, _, _, _, opi, _, oqd, oqdd, othd, othdd, _, _, _ = vm_rows(nmax, dmax)
    vpinv_times(VM, opi, SMP, 12, oqd, d, L)  # q̇ = L_p⁺V_p
    vh_times(l, mi, S, mf, lay, n, VM, oqd, othd, L)
    vtwists(l, mi, S, mf, VB, VM, othd, L)
    RQ, pQ = _pose_at(mf, l, lay[LAY_QP])
    pw, pv = vtwist(VB, plat * BW_SIZE + BW_A, L)
    aw, av = Ad(RQ, pQ, pw, pv)
    rr = (vload(SMP, 18, L) - aw[0], vload(SMP, 19, L) - aw[1], vload(SMP, 20, L) - aw[2],
          vload(SMP, 21, L) - av[0], vload(SMP, 22, L) - av[1], vload(SMP, 23, L) - av[2])
    for a in range(d):
        o = opi + a * 6
        vstore(VM, oqdd + a, vload(VM, o, L) * rr[0] + vload(VM, o + 1, L) * rr[1] + vload(VM, o + 2, L) * rr[2]
               + vload(VM, o + 3, L) * rr[3] + vload(VM, o + 4, L) * rr[4] + vload(VM, o + 5, L) * rr[5])
    vh_times(l, mi, S, mf, lay, n, VM, oqdd, othdd, L)
    vrnea(l, mi, S, mf, VB, VM, othd, othdd, g0, L)


@_internal
def vlimb_wrench(l, mi, S, mf, lay, n, d, dp_static, VB, VM, L):
    """``q = Hᵀφ`` (rows ``oq``) for ``W̄ = FᵀHᵀφ`` (eq. 144); returns nothing, the caller forms
    ``W̄_c = Σ_a L_p⁺[a, task_c] q_a`` per lane (``F = L_p⁺P_p``)."""
    oh, onz, ocol, dmax = lay[LAY_HC], lay[LAY_HNZ], lay[LAY_HCOL], s_dmax(lay, S)
    oq = vm_rows(s_nmax(lay, S), dmax)[12]
    z = vzero(L)
    for c in range(d):
        vstore(VM, oq + c, z)
    for i in range(n):
        phi = vload(VB, i * BW_SIZE + BW_PHI, L)
        for k in range(mi[l, onz + i]):
            r = oq + mi[l, ocol + dmax * i + k]
            vstore(VM, r, vload(VM, r, L) + mf[l, oh + dmax * i + k] * phi)
