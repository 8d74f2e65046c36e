"""The task form's classical RK4 of ``W`` simulations in SIMD lanes (issue 32.2): :func:`rk4_lanes`.

:func:`pkm.kernels.forward.rk4_run` (paper eq. 129–130 with ``V_t = ẋ`` and the actuator work)
for ``W`` members at once on the same step ends ``T``, each with its own state, forces (a piecewise
cubic), platform inertia, platform frame and IK branch, the limbs' data shared (one robot's
kinematics and limb inertias: payload variations, or identical robots). Per stage, per lane on
its own scalar scratch (the stacked scratch of a :class:`pkm.sim.forward.ForwardKernel` per lane):
the stage state ``y + c·k``, the Taylor-predicted IK start (:func:`pkm.kernels.forward._predict_start`),
the platform pose and twist and the forces; then every lane's right-hand side at once
(:func:`pkm.kernels.simd_forward.lanes_state`), its results written back to the lane's scratch as
the scalar stage leaves them (``θ``, ``θ̇, θ̈``, each limb's ``L_p⁺`` for the next chord step, J_IK
for the next turn check). A lane the SIMD state does not evaluate — and every lane's first stage,
the cold IK from the branch's start — runs the scalar :func:`pkm.kernels.forward._stage` from the
same scratch, so the scalar kernel stays the reference: it recovers, or fails the lane with its
status ``(code, step, limb, value)`` exactly as the member alone; a failed lane is dead (its rows
after the failure are not written) and the others go on. A dead lane's SIMD lane computes a copy of
a live one (valid values, discarded).
"""
from __future__ import annotations

from pkm.kernels.dynamics import _pinv_slot
from pkm.kernels.forward import _input, _predict_start, _set_state, _stage, rk4_stage
from pkm.kernels.ik import _dof
from pkm.kernels.model import LAY_DMAX, LI_N
from pkm.kernels.simd_forward import fs_rows, lanes_state
from pkm.kernels.work import _internal, _jit

__all__ = ["rk4_lanes"]


@_internal
def _load(j, src, mi, lay, d_static, pCd, pVp, th, mat, pJIK, Mps, u, TH, SMP, FS, offs):
    """Lane ``j`` of the SIMD scratch from lane ``src``'s scalar scratch (``src ≠ j``: a dead lane)."""
    L, nmax, dmax = th.shape[1], th.shape[2], lay[LAY_DMAX]
    oph, ojkp, omp, ou = offs[5], offs[11], offs[12], offs[13]
    dp = pJIK.shape[3]
    for a in range(3):
        for b in range(3):
            SMP[3 * a + b, j] = pCd[src, 0, a, b]
        SMP[9 + a, j] = pCd[src, 0, a, 3]
    for r in range(6):
        SMP[12 + r, j] = pVp[src, 0, r]
        SMP[18 + r, j] = 0.0
    for l in range(L):
        for i in range(nmax):
            TH[l * nmax + i, j] = th[src, l, i]
        P = mat[src, _pinv_slot(lay, l, 0)]
        for a in range(_dof(l, mi, d_static)):
            for r in range(6):
                FS[oph + (l * dmax + a) * 6 + r, j] = P[a, r]
    for a in range(pJIK.shape[2]):
        for c in range(dp):
            FS[ojkp + a * dp + c, j] = pJIK[src, 1, a, c]
        FS[ou + a, j] = u[src, a]
    for k in range(10):
        FS[omp + k, j] = Mps[src, 0, k]


@_internal
def _unload(j, mi, lay, d_static, th, rates, mat, pJIK, ys, out, TH, FS, offs):
    """Lane ``j``'s results into its scalar scratch, as :func:`pkm.kernels.forward._stage` leaves it, and its
    slope ``out = (ẋ, ẍ, power)``."""
    L, nmax, dmax = th.shape[1], th.shape[2], lay[LAY_DMAX]
    othd, othdd, opn, ojk, oxdd, opow = offs[6], offs[7], offs[9], offs[10], offs[18], offs[19]
    dp = pJIK.shape[3]
    for l in range(L):
        n = mi[l, LI_N]
        for i in range(nmax):
            th[j, l, i] = TH[l * nmax + i, j]
            if i < n:
                rates[j, 0, l, i] = FS[othd + l * nmax + i, j]
                rates[j, 1, l, i] = FS[othdd + l * nmax + i, j]
            else:
                rates[j, 0, l, i] = rates[j, 1, l, i] = 0.0
        P = mat[j, _pinv_slot(lay, l, 0)]
        for a in range(_dof(l, mi, d_static)):
            for r in range(6):
                P[a, r] = FS[opn + (l * dmax + a) * 6 + r, j]
    for a in range(pJIK.shape[2]):
        for c in range(dp):
            pJIK[j, 0, a, c] = pJIK[j, 1, a, c] = FS[ojk + a * dp + c, j]
    for i in range(dp):
        out[i] = ys[dp + i]
        out[dp + i] = FS[oxdd + i, j]
    out[2 * dp] = FS[opow, j]


@_jit
def rk4_lanes(s_begin, s_end, n_steps, T, mi, mf, lay, Mps, d_static, dp_static, R0s, local0s, axes, TB, UC, NK, g0,
              pCd, pVp, pdVp, pWee, pthd, pthdd, ptau, pJIK, plimbW, pplatW, th, bw, mat, vec, general, tol, max_iter,
              thresh, jik_thresh, act_limb, act_var, limit, Y, theta, rates, scratch, u, status, dead, counts, TH, VB, VM, SMP, FS,
              S, lanes):
    """:func:`pkm.kernels.forward.rk4_run` for the ``W = len(lanes)`` lanes (module docstring), passes
    ``s_begin … s_end − 1``; every per-lane array has a leading lane axis (``Y`` (W, rows, 2δ_p + 1),
    ``theta``, ``rates``, ``scratch``, ``u``, ``status`` (W, 4), the scalar scratch ``pCd … vec``, the
    lane's ``M_p`` (W, 1, 10), ``R_0`` (W, 3, 3), ``ℓ_0`` (W, 3), its piecewise cubic ``TB[j, :NK[j] + 1]``,
    ``UC[j, :, :NK[j]]``). ``dead[j]`` ≠ 0: lane ``j`` is not run (failed, or padding); a lane that fails
    here gets ``dead[j] = 1`` and its status (``status[j, 1]``: the step). ``counts[j]`` (2,) adds the lane's
    stages evaluated in the lanes and on the scalar kernel. ``TH … FS``: the SIMD scratch
    (:mod:`pkm.kernels.simd_forward`), ``S`` :func:`pkm.kernels.simd_pipeline.static_shape`; ``general``: None when
    every limb has a constant ``H``, else any array (as :func:`pkm.kernels.forward.rk4_run`)."""
    W = len(lanes)
    ny = Y.shape[2]
    dp = axes.shape[0]
    L, nmax = th.shape[1], th.shape[2]
    offs = fs_rows(L, nmax, lay[LAY_DMAX], dp, act_limb.shape[0])
    ref = -1
    for j in range(W):
        if dead[j] == 0:
            ref = j
            break
    if ref < 0:
        return
    last = T[0] if s_begin == 0 else scratch[ref, 5, 0]
    for s in range(s_begin, s_end):
        r = s - s_begin
        t = T[s]
        h = T[s + 1] - t if s < n_steps else 0.0
        for stage in range(4 if s < n_steps else 1):
            live = 0
            ts = t
            for j in range(W):
                if dead[j] != 0:
                    continue
                live |= 1 << j
                ref = j
                ts, c, kin, out = rk4_stage(stage, t, h, scratch[j, 0], scratch[j, 1], scratch[j, 2], scratch[j, 3])
                ys = scratch[j, 4]
                for i in range(ny):
                    ys[i] = Y[j, r, i] + c * kin[i]
                if ts != last:
                    _predict_start(th[j], rates[j, 0], rates[j, 1], ts - last, limit)
                _set_state(R0s[j], local0s[j], axes, ys[:dp], ys[dp:2 * dp], pCd[j], pVp[j])
                _input(TB[j, :NK[j] + 1], UC[j, :, :NK[j]], ts, u[j])
            if live == 0:
                return
            warm = s > 0 or stage > 0
            good = 0
            if warm and max_iter > 0:
                for j in range(W):
                    _load(j, j if live >> j & 1 else ref, mi, lay, d_static, pCd, pVp, th, mat, pJIK, Mps, u, TH, SMP,
                          FS, offs)
                good = lanes_state(mi, mf, lay, d_static, dp_static, S, g0, tol, max_iter, thresh, act_limb, act_var,
                                   live, TH, VB, VM, SMP, FS, general, lanes)
            for j in range(W):
                if not live >> j & 1:
                    continue
                ts, c, kin, out = rk4_stage(stage, t, h, scratch[j, 0], scratch[j, 1], scratch[j, 2], scratch[j, 3])
                counts[j, 0 if good >> j & 1 else 1] += 1
                if good >> j & 1:
                    _unload(j, mi, lay, d_static, th, rates, mat, pJIK, scratch[j, 4], out, TH, FS, offs)
                elif not _stage(mi, mf, lay, Mps[j], d_static, dp_static, R0s[j], local0s[j], axes, TB[j, :NK[j] + 1],
                                UC[j, :, :NK[j]], g0, ts, scratch[j, 4], pCd[j], pVp[j], pdVp[j], pWee[j], u[j], th[j],
                                pthd[j], pthdd[j], ptau[j], pJIK[j], plimbW[j], pplatW[j], bw[j], mat[j], vec[j], general,
                                tol, max_iter, thresh, jik_thresh, status[j], rates[j, 0], rates[j, 1], act_limb,
                                act_var, out, warm):
                    status[j, 1] = s
                    dead[j] = 1
                    continue
                if stage == 0:
                    for l in range(L):
                        for i in range(nmax):
                            theta[j, r, l, i] = th[j, l, i]
            last = ts
        if s < n_steps:
            for j in range(W):
                if dead[j] == 0:
                    for i in range(ny):
                        Y[j, r + 1, i] = Y[j, r, i] + h / 6.0 * (scratch[j, 0, i] + 2.0 * scratch[j, 1, i]
                                                                 + 2.0 * scratch[j, 2, i] + scratch[j, 3, i])
    for j in range(W):
        if dead[j] == 0:
            scratch[j, 5, 0] = last
            status[j, 0] = 0
