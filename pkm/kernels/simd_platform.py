"""The platform stage of the SIMD path (issue 18): the platform's Newton–Euler equations and the
actuator forces ``u = J_IK⁻ᵀ(Σ_l W̄_(l) + P_pᵀφ_p)`` (paper eq. 104–106, 140) for ``W`` samples at
once, one lane each, on :mod:`pkm.kernels.simd_vec` vectors.

:func:`vstash_limb` keeps each limb's rows of ``J_IK`` (eq. 97–98) and its ``W̄_(l) = FᵀHᵀφ_(l)``
(eq. 144) in lanes as the per-limb pipeline produces them; :func:`platform_lanes` then does what
:func:`pkm.kernels.dynamics._actuator_forces` does per sample, with the same operations in the same
order: ``J_IKᵀ`` inverted by Gauss–Jordan elimination with partial pivoting
(:func:`pkm.lie.linalg.inverse_into`; a lane's row exchanges are selects), the 1-norm condition
number against the threshold, the platform's wrench ``φ_p`` and ``u``; then each lane's ``J_IK``,
``W̄``, ``P_pᵀφ_p`` and ``u`` into the outputs at its sample. A lane whose ``J_IK`` is
singular (a zero pivot or the condition above the threshold) is reported as failed; the kernel
runs its segment again on the scalar kernel, which names the sample.

The scratch ``PL`` is structure-of-arrays as the pipeline's (rows of ``W`` lanes, 64-byte
aligned), its rows given by :func:`pl_rows`.
"""
from __future__ import annotations

from pkm.kernels.dynamics import OK
from pkm.kernels.model import LAY_ACTPOS, LI_ACTOFF, LI_NACT
from pkm.kernels.simd_lane import lget, lset
from pkm.kernels.simd_dynamics import _vinertia_times
from pkm.kernels.simd_pipeline import s_dmax, s_nmax, vm_rows, vnorm1
from pkm.kernels.simd_vec import any_lane, lane_bits, select, splat, vabs, vload, vstore, vzero
from pkm.kernels.work import _internal
from pkm.lie.small import Ad_inv, coad, sub

__all__ = ["pl_rows", "vstash_limb", "platform_lanes"]


@_internal
def pl_rows(L, dp):
    """Row offsets of ``PL``: ``(J_IK dp×dp, W̄ L×dp, W^EE 6, J_IKᵀ dp², its elimination copy dp²,
    J_IK⁻ᵀ dp², φ_p 6, u dp, total)``; ``J_IK`` is square (as many actuators as task coordinates)."""
    ojik = 0
    ow = ojik + dp * dp
    oee = ow + L * dp
    ojt = oee + 6
    owk = ojt + dp * dp
    oji = owk + dp * dp
    ophi = oji + dp * dp
    ou = ophi + 6
    return ojik, ow, oee, ojt, owk, oji, ophi, ou, ou + dp


@_internal
def vstash_limb(l, mi, S, lay, d, dp_static, VM, PL, lanes):
    """Limb ``l``'s rows of ``J_IK`` (``F = L_p⁺P_p``, eq. 94, 97–98) and ``W̄_(l) = Fᵀq`` (``q = Hᵀφ``,
    eq. 144) from the pipeline's ``VM`` into ``PL``, in lanes; :func:`platform_lanes` writes them to
    the outputs with the sample's forces."""
    L, dp = mi.shape[0], len(dp_static)
    opi, oq = vm_rows(s_nmax(lay, S), s_dmax(lay, S))[6], vm_rows(s_nmax(lay, S), s_dmax(lay, S))[12]
    ojik, ow = pl_rows(L, dp)[:2]
    off, oa = mi[l, LI_ACTOFF], lay[LAY_ACTPOS]
    for a in range(mi[l, LI_NACT]):
        for c in range(dp):
            vstore(PL, ojik + (off + a) * dp + c, vload(VM, opi + 6 * mi[l, oa + a] + dp_static[c], lanes))
    for c in range(dp):
        acc = vzero(lanes)
        for a in range(d):
            acc = acc + vload(VM, opi + 6 * a + dp_static[c], lanes) * vload(VM, oq + a, lanes)
        vstore(PL, ow + l * dp + c, acc)


@_internal
def _vinverse(PL, ojt, owk, oji, dp, lanes):
    """``PL[oji] = PL[ojt]⁻¹`` (dp × dp, row-major rows) in lanes by Gauss–Jordan elimination with
    partial pivoting, the operations of :func:`pkm.lie.linalg.inverse_into` (a lane's pivot row is
    exchanged by selects). Returns the mask of lanes whose pivots are all nonzero."""
    for i in range(dp):
        for j in range(dp):
            vstore(PL, owk + i * dp + j, vload(PL, ojt + i * dp + j, lanes))
            vstore(PL, oji + i * dp + j, splat(1.0 if i == j else 0.0, lanes))
    ok = splat(1.0, lanes) > 0.0
    for c in range(dp):
        best = vabs(vload(PL, owk + c * dp + c, lanes))
        piv = splat(float(c), lanes)
        for r in range(c + 1, dp):  # the first row of largest magnitude, as inverse_into
            x = vabs(vload(PL, owk + r * dp + c, lanes))
            m = x > best
            best = select(m, x, best)
            piv = select(m, float(r), piv)
        ok = ok & (best > 0.0)
        for r in range(c + 1, dp):  # exchange rows c and piv in the lanes where piv = r (if any lane has it)
            m = (piv > r - 0.5) & (piv < r + 0.5)
            if any_lane(m):
                for o in (owk, oji):
                    for j in range(dp):
                        x, y = vload(PL, o + c * dp + j, lanes), vload(PL, o + r * dp + j, lanes)
                        vstore(PL, o + c * dp + j, select(m, y, x))
                        vstore(PL, o + r * dp + j, select(m, x, y))
        inv = 1.0 / select(ok, vload(PL, owk + c * dp + c, lanes), 1.0)
        for o in (owk, oji):
            for j in range(dp):
                vstore(PL, o + c * dp + j, vload(PL, o + c * dp + j, lanes) * inv)
        for r in range(dp):
            if r != c:
                f = vload(PL, owk + r * dp + c, lanes)
                for o in (owk, oji):
                    for j in range(dp):
                        vstore(PL, o + r * dp + j, vload(PL, o + r * dp + j, lanes) - f * vload(PL, o + c * dp + j,
                                                                                                    lanes))
    return ok


@_internal
def platform_lanes(L, Mp, dp_static, SMP, Wee, g0, thresh, PL, sj, active, JIK, limbW, tau, platW, status,
                   lane_failed, lanes):
    """:func:`pkm.kernels.dynamics._actuator_forces` for the lanes ``active`` (bits) of a robot with
    ``L`` limbs, sample ``sj[j]`` in lane ``j``: ``C_d, V_p, V̇_p`` from the pipeline's ``SMP`` rows
    (R row-major and p, 12–17, 18–23), ``J_IK`` and ``W̄`` from :func:`vstash_limb`. Writes ``JIK[s]``, ``limbW[s]``, ``platW[s]``
    and ``tau[s]`` of every active lane whose ``J_IK`` is regular; the others get
    ``status[j] = (lane_failed, s, −1, …)``.
    Returns the bits of the lanes that succeeded."""
    dp = len(dp_static)
    ojik, ow, oee, ojt, owk, oji, ophi, ou, _ = pl_rows(L, dp)
    for j in range(len(lanes)):  # W^EE of each lane's sample
        we = Wee[sj[j]]
        for r in range(6):
            lset(PL, oee + r, j, we[r], lanes)
    for a in range(dp):  # J_IKᵀ
        for b in range(dp):
            vstore(PL, ojt + a * dp + b, vload(PL, ojik + b * dp + a, lanes))
    ok = _vinverse(PL, ojt, owk, oji, dp, lanes)
    ok = ok & (vnorm1(PL, ojt, dp, dp, lanes) * vnorm1(PL, oji, dp, dp, lanes) <= thresh)
    z = vzero(lanes)  # the platform (eq. 104–106): M_p (V̇_p − Ad_{C_p}⁻¹(0; g)) − ad_{V_p}ᵀ M_p V_p − W^EE
    R = (vload(SMP, 0, lanes), vload(SMP, 1, lanes), vload(SMP, 2, lanes), vload(SMP, 3, lanes), vload(SMP, 4, lanes),
         vload(SMP, 5, lanes), vload(SMP, 6, lanes), vload(SMP, 7, lanes), vload(SMP, 8, lanes))
    p = (vload(SMP, 9, lanes), vload(SMP, 10, lanes), vload(SMP, 11, lanes))
    gw, gv = Ad_inv(R, p, (z, z, z), (splat(g0[0], lanes), splat(g0[1], lanes), splat(g0[2], lanes)))
    p10 = (Mp[0, 0], Mp[0, 1], Mp[0, 2], Mp[0, 3], Mp[0, 4], Mp[0, 5], Mp[0, 6], Mp[0, 7], Mp[0, 8], Mp[0, 9])
    aw = (vload(SMP, 18, lanes), vload(SMP, 19, lanes), vload(SMP, 20, lanes))
    av = (vload(SMP, 21, lanes), vload(SMP, 22, lanes), vload(SMP, 23, lanes))
    fw, fv = _vinertia_times(p10, sub(aw, gw), sub(av, gv))
    w = (vload(SMP, 12, lanes), vload(SMP, 13, lanes), vload(SMP, 14, lanes))
    v = (vload(SMP, 15, lanes), vload(SMP, 16, lanes), vload(SMP, 17, lanes))
    hw, hv = _vinertia_times(p10, w, v)
    cw, cv = coad(w, v, hw, hv)
    vstore(PL, ophi, fw[0] - cw[0] - vload(PL, oee, lanes))
    vstore(PL, ophi + 1, fw[1] - cw[1] - vload(PL, oee + 1, lanes))
    vstore(PL, ophi + 2, fw[2] - cw[2] - vload(PL, oee + 2, lanes))
    vstore(PL, ophi + 3, fv[0] - cv[0] - vload(PL, oee + 3, lanes))
    vstore(PL, ophi + 4, fv[1] - cv[1] - vload(PL, oee + 4, lanes))
    vstore(PL, ophi + 5, fv[2] - cv[2] - vload(PL, oee + 5, lanes))
    for c in range(dp):  # rhs = P_pᵀφ_p + Σ_l W̄_(l), in the scalar kernel's order, into the rows of u
        acc = vload(PL, ophi + dp_static[c], lanes)
        for l in range(L):
            acc = acc + vload(PL, ow + l * dp + c, lanes)
        vstore(PL, owk + c, acc)  # the elimination copy is free again
    for a in range(dp):  # u = J_IK⁻ᵀ rhs
        acc = vzero(lanes)
        for b in range(dp):
            acc = acc + vload(PL, oji + a * dp + b, lanes) * vload(PL, owk + b, lanes)
        vstore(PL, ou + a, acc)
    good = lane_bits(ok) & active
    for j in range(len(lanes)):
        if active >> j & 1:
            s = sj[j]
            if good >> j & 1:
                jik, lw, pw, ts = JIK[s], limbW[s], platW[s], tau[s]
                for a in range(dp):
                    for c in range(dp):
                        jik[a, c] = lget(PL, ojik + a * dp + c, j, lanes)
                for l in range(L):
                    for c in range(dp):
                        lw[l, c] = lget(PL, ow + l * dp + c, j, lanes)
                for c in range(dp):
                    pw[c] = lget(PL, ophi + dp_static[c], j, lanes)
                for a in range(dp):
                    ts[a] = lget(PL, ou + a, j, lanes)
                status[j, 0] = OK
            else:
                status[j, 0], status[j, 1], status[j, 2] = lane_failed, s, -1
    return good

