"""The SIMD path of the batch kernel (issue 18): ``W`` segments of a trajectory in the ``W`` lanes of
:mod:`pkm.kernels.simd_vec` vectors, the per-limb pipeline of :mod:`pkm.kernels.simd_pipeline`.

:func:`run_lanes` does for ``W`` segments at once what :func:`pkm.kernels.inverse_dynamics.run_range`
does for one, with the same results to rounding (tests: ≤ 1e-12 against the reference path):

1. each lane's first two samples on the scalar kernel (the cold start from the reference
   configuration or from a given start, with its continuation; the history for the prediction);
2. then, sample ``k`` of every lane at once, per limb: the predicted start (quintic Hermite or
   Taylor, :func:`pkm.kernels.inverse_dynamics._predict`), forward kinematics and the pose error; a lane
   whose start is within ``CHORD_REACH`` takes chord steps (the last two samples' ``L_p⁺``, kept in a ring of two
   slots with the history) while each contracts its error, and is accepted at the iterate that is converged
   (pose error ≤ ``CHORD_MARGIN · tol``, loops ≤ ``LOOP_TOL``), as the scalar kernel accepts it; **a lane that is
   not** is solved
   on the scalar path (Gauss–Newton from the same start, :func:`pkm.kernels.ik._solve_affine`, then
   from the previous sample's solution), alone, and rejoins the lanes; then the Jacobian,
   ``L_p``, the Gram matrix and ``L_p⁺`` with the singularity check, rates, the RNEA, ``W̄`` and the
   Newton correction of the accepted starts (:func:`pkm.kernels.inverse_dynamics._correct_start`);
3. the platform and ``J_IKᵀu`` in lanes (:mod:`pkm.kernels.simd_platform`), the actuator forces
   written per lane.

A lane that fails anywhere (IK, loops, a singularity) stops with status ``LANE_FAILED`` at that
sample; the driver (:mod:`pkm.kernels.batch`) runs its segment again on the scalar kernel, which
reports the failure (or recovers) exactly as without SIMD. Step 2 is for a limb with a constant H;
a limb whose H depends on the configuration (general loops) runs the stage of
:mod:`pkm.kernels.simd_general_limb` instead (every tree variable predicted, loop rows, ``H``,
``Ḣq̇`` in lanes). Every robot the scalar kernel runs takes this path (:func:`supports`).
"""
from __future__ import annotations

import numpy as np

from pkm.kernels.dynamics import OK, _pinv_slot
from pkm.kernels.ik import CHORD_CONTRACTION, CHORD_MARGIN, CHORD_REACH, CHORD_STEPS, _dof, _solve_affine
from pkm.kernels.inverse_dynamics import PREDICT_LIMIT, run_range
from pkm.kernels.model import (LAY_DMAX, LAY_LMAX, LAY_LOOPS, LAY_NMAX,
                               LAY_QIDX, LI_AFF, LI_NACT, LI_NLOOP, LOOP_TOL, LP_M, LP_SIZE, has_joint_terms)
from pkm.kernels.simd_general import GJ, SMP_H, SMP_H1, prev_rows, vg_rows_after
from pkm.kernels.simd_general_limb import general_limb
from pkm.kernels.simd_lane import lget, lset, prefetch_read
from pkm.kernels.simd_dynamics import vlimb_wrench, vmotion
from pkm.kernels.simd_pipeline import (FK_ALL, FK_PATH, s_dmax, s_n, s_nmax, vfk, vgeometry, vjacobian_lp,
                                       vloop_residuals, vm_rows, vplatform_error, vplatform_pose, vsmall_error,
                                       vtheta_affine)
from pkm.kernels.simd_predict import ring_hist, ring_pinv, vpredict_row, vstep_ratios
from pkm.kernels.simd_platform import pl_rows, platform_lanes, vstash_limb
from pkm.kernels.simd_vec import LANES, aligned_zeros, any_lane, lane_bits, select, vabs, vload, vstore, vzero
from pkm.kernels.work import BW_SIZE, BW_TRIG, _internal, _jit, _piece

__all__ = ["run_lanes", "make_lane_work", "pooled_lane_work", "supports", "LANE_FAILED", "SMP_ROWS"]

#: Status of a lane that stopped: its segment is run again on the scalar kernel.
LANE_FAILED = -1
#: Rows of the per-step sample scratch: C_d (12), V_p (6), V̇_p (6), h, h1 (then d_max rows of q).
SMP_ROWS = 26
#: How many samples ahead :func:`run_lanes` brings each lane's per-sample inputs into the cache.
PREFETCH = 2
#: Every this many samples a limb's first forward kinematics evaluates its sines and cosines afresh
#: (:func:`pkm.kernels.simd_vec.vsincos`); in between from the limb's last ones by the angle-addition series
#: (:func:`pkm.kernels.simd_pipeline.vfk`), so that their rounding never accumulates over more than this many samples.
TRIG_REFRESH = 8


def supports(km) -> bool:
    """Whether the SIMD path takes this :class:`pkm.kernels.model.KernelModel`: every limb, affine
    (constant ``H``) or general (:mod:`pkm.kernels.simd_general`), whose loops have at most
    ``GJ`` = 6 rows each (every cut joint has, :data:`pkm.algorithms.constraints.CUT_TYPES`), and as
    many actuators as task coordinates (the lanes invert a square ``J_IK``; redundant actuation runs
    the scalar kernel)."""
    lay = km.lay
    if int(km.mi[:, LI_NACT].sum()) != len(km.dp_static) or has_joint_terms(km):
        return False   # (joint terms: armature and friction, added by the scalar kernel's RNEA only)
    return all(km.mi[l, lay[LAY_LOOPS] + LP_SIZE * lp + LP_M] <= GJ
               for l in range(km.mi.shape[0]) for lp in range(km.mi[l, LI_NLOOP]))


def make_lane_work(km, width=LANES):
    """The SoA scratch of one :func:`run_lanes` call site: ``(TH, HIST, VB, VM, SMP, PH)``, 64-byte
    aligned (``PH``: each limb's ``L_p⁺`` of the last two samples; ``VM`` with the general limbs' rows of
    :func:`pkm.kernels.simd_general.vg_rows`), ``sj`` (W,) the lanes' samples, ``PL``, the platform
    stage's (:func:`pkm.kernels.simd_platform.pl_rows`), and ``TRIG``, each limb's sines, cosines and angles
    of its last forward kinematics (:func:`_limb_trig`)."""
    L, nmax, dmax, lmax = km.mi.shape[0], int(km.lay[LAY_NMAX]), int(km.lay[LAY_DMAX]), int(km.lay[LAY_LMAX])
    vm = vg_rows_after.py_func(vm_rows.py_func(nmax, dmax)[-1], nmax, dmax, lmax)[-1] \
        + L * prev_rows.py_func(nmax, dmax, lmax)[-1]
    return (aligned_zeros(L * nmax, width), aligned_zeros(ring_hist.py_func(2, L * nmax), width),
            aligned_zeros(nmax * BW_SIZE, width),
            aligned_zeros(vm, width), aligned_zeros(SMP_ROWS + dmax + 1, width),
            aligned_zeros(ring_pinv.py_func(2, 0, L, dmax), width), np.zeros(width, np.int64),
            aligned_zeros(pl_rows.py_func(L, len(km.dp_static))[-1], width), aligned_zeros(3 * L * nmax, width))


def pooled_lane_work(robot, km, width):
    """The SIMD path's scratch (:func:`make_lane_work`) from the robot's pool,
    zeroed as new, or a new one: allocating it cost ~0.1 ms a call (0.01 µs per sample of N = 10⁴).
    ``list.pop`` and ``append`` are atomic, so concurrent calls on one robot each get their own."""
    free = robot.__dict__.setdefault("_lane_work_pool", {}).setdefault((id(km), width), [])
    try:
        w = free.pop()
    except IndexError:
        return make_lane_work(km, width)
    for a in w:
        a.fill(0)
    return w


@_jit
def run_lanes(seg_a, seg_e, cold, TH0, Cs, mi, mf, lay, Mp, d_static, dp_static, Cd, Vp, dVp, Wee, dts, g0,
              theta, thetad, thetadd, tau, JIK, limbW, platW, th, bw, mat, vec, tol, max_iter, thresh, status,
              TH, HIST, VB, VM, SMP, PH, sj, PL, TRIG, general, lanes, S):
    """Segments ``seg_a[j] … seg_e[j] − 1`` in lane ``j`` (empty when equal); ``cold[j]``: start lane
    ``j`` from the reference configuration (continuation along ``Cs[j]``), else from ``TH0[j]``
    (L, n_max); ``lanes``: the width tuple (:func:`pkm.kernels.simd_vec.lanes`). Writes the outputs
    of every sample as :func:`pkm.kernels.inverse_dynamics.run_range` and ``status[j]`` (4,) per lane
    (``LANE_FAILED`` and the sample where lane ``j`` stopped); ``general``: None when every limb has a
    constant H (the general stage is then not compiled), else any array (as
    :func:`pkm.kernels.inverse_dynamics.run_range`); ``S``: the robot's sizes as compile-time constants
    (:func:`pkm.kernels.simd_pipeline.static_shape`)."""
    W = len(lanes)
    L, nmax, dmax = mi.shape[0], s_nmax(lay, S), s_dmax(lay, S)
    _, _, _, _, _, _, opi, oe, _, _, othd, othdd, _, _, _ = vm_rows(nmax, dmax)
    alive = 0
    longest = 0
    for j in range(W):
        status[j, 0] = OK
        status[j, 3] = 0.0
        if seg_e[j] <= seg_a[j]:
            continue
        for l in range(L):
            for i in range(nmax):
                th[l, i] = TH0[j, l, i]
        run_range(seg_a[j], min(seg_a[j] + 2, seg_e[j]), mi, mf, lay, Mp, d_static, dp_static, Cd, Vp, dVp, Wee,
                  dts, g0, theta, thetad, thetadd, tau, JIK, limbW, platW, th, bw, mat, vec, cold[j] != 0, Cs[j],
                  general, tol, max_iter, thresh, status[j])
        if status[j, 0] != OK:
            status[j, 0] = LANE_FAILED
            continue
        if seg_e[j] - seg_a[j] > 2:
            alive |= 1 << j
            longest = max(longest, seg_e[j] - seg_a[j])
            for l in range(L):  # L_p⁺ of the two samples (pkm.kernels.dynamics._pinv_slot), before the next lane's
                for slot in range(2):  # (slots: as the history's below)
                    P = mat[_pinv_slot(lay, l, seg_a[j] + 1 - slot)]
                    for a in range(_dof(l, mi, d_static)):
                        for r in range(6):
                            PH[ring_pinv(slot, l, L, dmax) + a * 6 + r, j] = P[a, r]
            # history (simd_predict.ring_hist): slot 0 = sample s − 1, slot 1 = s − 2 at k = 2
            for l in range(L):
                for i in range(nmax):
                    for slot in range(2):
                        s = seg_a[j] + 1 - slot
                        r = ring_hist(slot, L * nmax) + l * nmax + i
                        HIST[r, j] = theta[s, l, i]
                        HIST[r + L * nmax, j] = thetad[s, l, i]
                        HIST[r + 2 * L * nmax, j] = thetadd[s, l, i]
    for k in range(2, longest):
        p = k & 1  # the slot of HIST and PH that holds sample s − 1 (the other: s − 2, overwritten by this sample)
        active = 0
        for j in range(W):
            if alive >> j & 1 and seg_a[j] + k < seg_e[j]:
                active |= 1 << j
            sj[j] = min(seg_a[j] + k, max(seg_e[j] - 1, 0))
            _gather_lane(Cd[sj[j]], Vp[sj[j]], dVp[sj[j]], dts, sj[j], SMP, j, lanes)
            # the lane's inputs PREFETCH steps ahead on their way to the cache; only where every limb has a constant H:
            # the general limbs' larger scratch lost more to the hints than the copies gained (IRSBot-2, warm
            # caches: +8 % CPU time with them, A/B; the Delta: −5 to −17 % with cold caches, neutral warm). Not the
            # outputs (written, not read: their hints cost the Delta 2-3 % at N = 10⁴ on the AVX2 target, ABBA
            # paired, and nothing at N = 2·10⁵ or streamed 10⁶)
            if general is None and seg_a[j] + k + PREFETCH < seg_e[j]:
                s = seg_a[j] + k + PREFETCH
                _prefetch_sample(Cd, s)
                _prefetch_sample(Vp, s)
                _prefetch_sample(dVp, s)
                _prefetch_sample(Wee, s)
                _prefetch_sample(dts, s)
        if active == 0:
            break
        _predict_lanes(mi, S, mf, lay, d_static, SMP, TH, HIST, p, lanes)
        fresh = k == 2 or k % TRIG_REFRESH == 0
        for l in range(L):
            d = _dof(l, mi, d_static)
            tho = l * nmax
            _limb_trig(l, mi, S, VB, TRIG, nmax, False, lanes)
            if general is not None:
                if mi[l, LI_AFF] == 0:  # a general limb (simd_general): IK, geometry, rates, RNEA, Hᵀφ
                    ok = general_limb(l, mi, S, mf, lay, d_static, dp_static, Cd, SMP, TH, HIST, VB, VM, th, bw, mat,
                                      vec, g0, tol, max_iter, thresh, active, sj, status, k == 2, p, fresh, lanes)
                    for j in range(W):
                        if active >> j & 1 and not ok >> j & 1:
                            status[j, 0], status[j, 1], status[j, 2] = LANE_FAILED, sj[j], l
                    alive &= ~(active & ~ok)
                    active = ok
                    _store_limb(l, mi, S, lay, d, dp_static, TH, HIST, PH, VM, tho, nmax, L, opi, othd, othdd, p,
                                active, sj, theta, thetad, thetadd, JIK, limbW, lanes)
                    vstash_limb(l, mi, S, lay, d, dp_static, VM, PL, lanes)
                    _limb_trig(l, mi, S, VB, TRIG, nmax, True, lanes)
                    continue
            vfk(l, mi, S, mf, TH, tho, VB, fresh, FK_PATH, lanes)  # the start's pose error only
            perr, near, Rp, rp = _pose_error(l, mi, S, mf, lay, VB, SMP, VM, oe, active, lanes)
            # the start θ = H q + c closes the loops at every q: they are checked after the chord step only, at the
            # iterate the lane accepts (as ik._solve_affine checks them at its solution only)
            cand = near & (perr <= CHORD_REACH)
            if any_lane(cand):  # chord steps Δq = P e with the extrapolated L_p⁺ (inverse_dynamics._chord_matrix)
                step, conv = cand, cand & ~cand  # stepping, converged: a lane steps while its error contracts
                for _ in range(CHORD_STEPS):
                    _chord_lanes(l, mi, S, mf, lay, d, SMP, VM, PH, TH, oe, step, p, lanes)
                    vfk(l, mi, S, mf, TH, tho, VB, False, FK_ALL, lanes)
                    last = perr
                    perr, near, Rp, rp = _pose_error(l, mi, S, mf, lay, VB, SMP, VM, oe, lane_bits(step), lanes)
                    now = step & near & (perr <= CHORD_MARGIN * tol)
                    conv = conv | now
                    step = step & ~now & near & (perr <= CHORD_CONTRACTION * last)
                    if not any_lane(step):
                        break
                cand = conv & (vloop_residuals(l, mi, S, mf, lay, VB, lanes) <= LOOP_TOL)
            taken = lane_bits(cand) & active
            if taken != active:  # the lanes whose start is not converged: the scalar IK, one by one
                for j in range(W):
                    if active >> j & 1 and not taken >> j & 1:
                        status[j, 3] += 1.0  # scalar IK solves of this lane (a diagnostic while OK)
                        if not _scalar_ik(l, mi, S, mf, lay, d_static, Cd, sj[j], th[l], bw, mat, vec, tol, max_iter,
                                          TH, HIST, ring_hist(p, L * nmax) + tho, tho, nmax, j):
                            active &= ~(1 << j)
                            alive &= ~(1 << j)
                            status[j, 0], status[j, 1], status[j, 2] = LANE_FAILED, sj[j], l
                vfk(l, mi, S, mf, TH, tho, VB, True, FK_ALL, lanes)
                Rp, rp = vplatform_pose(l, mi, S, mf, lay, VB, lanes)
            vjacobian_lp(l, mi, S, mf, lay, d, VB, VM, Rp, rp, False, lanes)
            regular = lane_bits(vgeometry(l, mi, S, lay, d, dp_static, VM, thresh, lanes)) & active
            if regular != active:
                for j in range(W):
                    if active >> j & 1 and not regular >> j & 1:
                        status[j, 0], status[j, 1], status[j, 2] = LANE_FAILED, sj[j], l
                alive &= ~(active & ~regular)
                active &= regular
            vmotion(l, mi, S, mf, lay, d, VB, VM, SMP, g0, lanes)
            vlimb_wrench(l, mi, S, mf, lay, s_n(l, mi, S), d, dp_static, VB, VM, lanes)
            _store_limb(l, mi, S, lay, d, dp_static, TH, HIST, PH, VM, tho, nmax, L, opi, othd, othdd, p, active,
                        sj, theta, thetad, thetadd, JIK, limbW, lanes)
            vstash_limb(l, mi, S, lay, d, dp_static, VM, PL, lanes)
            _limb_trig(l, mi, S, VB, TRIG, nmax, True, lanes)
        if active:  # the platform and J_IKᵀu in lanes (pkm.kernels.simd_platform)
            alive &= ~(active & ~platform_lanes(L, Mp, dp_static, SMP, Wee, g0, thresh, PL, sj, active, JIK, limbW,
                                                tau, platW, status, LANE_FAILED, lanes))


@_internal
def _prefetch_sample(a, s):
    """Hint the cache lines of ``a[s]`` in (:func:`pkm.kernels.simd_vec.prefetch_read`): the lanes read and write
    W samples far apart in ~12 per-sample arrays each, more streams than the hardware prefetchers follow, so
    each step's gathers and the outputs' stores waited on misses (perf: the gather's stores)."""
    nb = a.strides[0]
    for off in range(0, nb, 64):
        prefetch_read(a, s, off)
    prefetch_read(a, s, nb - 1)


@_internal
def _limb_trig(l, mi, S, VB, TRIG, nmax, save, lanes):
    """Limb ``l``'s ``cos θ_i, sin θ_i, θ_i`` of its last forward kinematics (rows ``BW_TRIG`` of ``VB``, which the
    limbs share) saved into its rows of ``TRIG``, or (``save`` false) restored from them: the next sample's first
    forward kinematics starts from them (:data:`TRIG_REFRESH`)."""
    for i in range(s_n(l, mi, S)):
        for c in range(3):
            r, t = i * BW_SIZE + BW_TRIG + c, (l * nmax + i) * 3 + c
            if save:
                vstore(TRIG, t, vload(VB, r, lanes))
            else:
                vstore(VB, r, vload(TRIG, t, lanes))


@_internal
def _gather_lane(C, v, dv, dts, s, SMP, j, lanes):
    """Lane ``j``'s sample ``s`` into the step's scratch: ``C_d`` (``C``, its rows R and p), ``V_p``, ``V̇_p``
    (rows of the per-sample arrays) and the steps ``h, h1`` (:func:`pkm.kernels.simd_vec.lset`: addresses
    that are constants from the lane's row, without numba's run-time row lengths of ``SMP``)."""
    for a in range(3):
        for b in range(3):
            lset(SMP, 3 * a + b, j, C[a, b], lanes)
        lset(SMP, 9 + a, j, C[a, 3], lanes)
    for r in range(6):
        lset(SMP, 12 + r, j, v[r], lanes)
        lset(SMP, 18 + r, j, dv[r], lanes)
    lset(SMP, SMP_H, j, dts[s], lanes)
    lset(SMP, SMP_H1, j, dts[s - 1] if s >= 1 else 0.0, lanes)


@_internal
def _predict_lanes(mi, S, mf, lay, d_static, SMP, TH, HIST, p, lanes):
    """:func:`pkm.kernels.inverse_dynamics._predict` in lanes, for every limb, into ``TH``: the
    independent coordinates ``q`` extrapolated, ``θ = H q + c`` (constant ``H``, as
    :func:`pkm.kernels.ik._solve_affine` starts), so that the start closes the loops exactly. A
    prediction that moves some ``q`` by more than ``PREDICT_LIMIT`` is replaced by the previous
    sample's solution (the scalar kernel checks every ``θ_i``; the dependent ones follow ``q``). ``p``: the
    history's slot of the previous sample (:func:`run_lanes`)."""
    L, nmax, dmax, oq = mi.shape[0], s_nmax(lay, S), s_dmax(lay, S), lay[LAY_QIDX]
    h = vload(SMP, SMP_H, lanes)
    h1, both, moved, r, r3 = vstep_ratios(h, vload(SMP, SMP_H1, lanes))
    vstore(SMP, SMP_ROWS + dmax, select(both, r, 0.0))  # the chord matrix's extrapolation ratio
    nn = L * nmax
    o1, o2 = ring_hist(p, nn), ring_hist(1 - p, nn)  # the slots of s − 1 and s − 2
    for l in range(L):
        if mi[l, LI_AFF] == 0:  # a general limb predicts every θ_i (simd_general.general_limb)
            continue
        far = vzero(lanes) > 0.0  # no lane
        d = _dof(l, mi, d_static)
        for c in range(d):  # the predicted q in SMP rows SMP_ROWS + c
            o = l * nmax + mi[l, oq + c]
            x, p0 = vpredict_row(HIST, o1 + o, o2 + o, nn, h, h1, both, moved, r, r3, lanes)
            far = far | ~(vabs(x - p0) <= PREDICT_LIMIT)
            vstore(SMP, SMP_ROWS + c, x)
        for c in range(d):
            o = l * nmax + mi[l, oq + c]
            vstore(SMP, SMP_ROWS + c, select(far, vload(HIST, o1 + o, lanes), vload(SMP, SMP_ROWS + c, lanes)))
        vtheta_affine(l, mi, S, mf, lay, SMP, SMP_ROWS, TH, l * nmax, lanes)


@_piece
def _scalar_ik(l, mi, S, mf, lay, d_static, Cd, s, tl, bw, mat, vec, tol, max_iter, TH, HIST, prev, tho, nmax, j):
    """Lane ``j``'s IK of limb ``l`` on the scalar path (:func:`pkm.kernels.ik._solve_affine`): from its
    predicted start in ``TH`` (rows ``tho``), else from its previous sample's solution (``HIST`` rows ``prev``,
    the limb's in the slot of ``s − 1``); the solution into ``TH``."""
    for i in range(nmax):
        tl[i] = TH[tho + i, j]
    ok = _solve_affine(l, mi, mf, lay, d_static, Cd, s, tl, bw, mat, vec, tol, max_iter, False, False)[0]
    if not ok:
        for i in range(nmax):
            tl[i] = HIST[prev + i, j]
        ok = _solve_affine(l, mi, mf, lay, d_static, Cd, s, tl, bw, mat, vec, tol, max_iter, False, False)[0]
    if ok:
        for i in range(nmax):
            TH[tho + i, j] = tl[i]
    return ok


@_internal
def _store_limb(l, mi, S, lay, d, dp_static, TH, HIST, PH, VM, tho, nmax, L, opi, othd, othdd, p, active, sj,
                theta, thetad, thetadd, JIK, limbW, lanes):
    """Limb ``l``'s ``θ, θ̇, θ̈`` and ``L_p⁺`` into the history's slot ``1 − p`` (that of sample ``s − 2``: a ring,
    it is the slot of ``s − 1`` at the next sample, :func:`run_lanes`; nothing copied), and every active
    lane's ``θ, θ̇, θ̈`` into the outputs at its sample (its rows of ``J_IK`` and ``W̄``: the platform
    stage, :func:`pkm.kernels.simd_platform.platform_lanes`). A constant-``H`` limb keeps only what its readers
    read: ``θ̇, θ̈`` of the independent coordinates (:func:`_predict_lanes`) and ``L_p⁺`` (:func:`_chord_lanes`);
    every ``θ_i`` (the scalar IK's fallback start, :func:`_scalar_ik`). A general limb keeps every ``θ, θ̇, θ̈``
    (:func:`pkm.kernels.simd_general_limb.general_limb` predicts them all) and no ``L_p⁺``."""
    n, nn = s_n(l, mi, S), L * nmax
    dmax = s_dmax(lay, S)
    oh = tho + ring_hist(1 - p, nn)
    for i in range(n):
        vstore(HIST, oh + i, vload(TH, tho + i, lanes))
    if mi[l, LI_AFF] != 0:
        oph = ring_pinv(1 - p, l, L, dmax)
        for a in range(d):  # this sample's L_p⁺ (the chord steps of the next two samples)
            for r in range(6):
                vstore(PH, oph + a * 6 + r, vload(VM, opi + a * 6 + r, lanes))
        for c in range(d):
            i = mi[l, lay[LAY_QIDX] + c]
            vstore(HIST, oh + nn + i, vload(VM, othd + i, lanes))
            vstore(HIST, oh + 2 * nn + i, vload(VM, othdd + i, lanes))
    else:
        for i in range(n):
            vstore(HIST, oh + nn + i, vload(VM, othd + i, lanes))
            vstore(HIST, oh + 2 * nn + i, vload(VM, othdd + i, lanes))
    for j in range(len(lanes)):
        if active >> j & 1:
            th, thd, thdd = theta[sj[j], l], thetad[sj[j], l], thetadd[sj[j], l]
            for i in range(n):
                th[i] = lget(TH, tho + i, j, lanes)
                thd[i] = lget(VM, othd + i, j, lanes)
                thdd[i] = lget(VM, othdd + i, j, lanes)


@_internal
def _pose_error(l, mi, S, mf, lay, VB, SMP, VM, oe, active, lanes):
    """A constant-H limb's pose error ``e`` into rows ``oe`` of ``VM``, ``(|e|, near, R_p, r_p)``: to first order
    (:func:`pkm.kernels.simd_pipeline.vsmall_error`) in each lane whose rotation error is below ``SMALL_ROTATION``,
    the logarithm (:func:`pkm.kernels.simd_pipeline.vplatform_error`) in the others, evaluated only when one of the
    ``active`` lanes needs it (a start off by more than ~1e-8, as noisy or rounded samples give). Each lane's ``e``
    depends on its own pose only, so a lane's result does not depend on the segments beside it."""
    perr, near, Rp, rp = vsmall_error(l, mi, S, mf, lay, VB, SMP, VM, oe, lanes)
    if lane_bits(near) & active == active:
        return perr, near, Rp, rp
    e = (vload(VM, oe, lanes), vload(VM, oe + 1, lanes), vload(VM, oe + 2, lanes), vload(VM, oe + 3, lanes),
         vload(VM, oe + 4, lanes), vload(VM, oe + 5, lanes))
    plog, nlog, _, _ = vplatform_error(l, mi, S, mf, lay, VB, SMP, VM, oe, lanes)
    for r in range(6):
        vstore(VM, oe + r, select(near, e[r], vload(VM, oe + r, lanes)))
    return select(near, perr, plog), near | nlog, Rp, rp


@_internal
def _chord_lanes(l, mi, S, mf, lay, d, SMP, VM, PH, TH, oe, cand, p, lanes):
    """The chord step of :func:`pkm.kernels.ik._solve_affine` in the lanes ``cand``: ``q += P e`` with
    ``P = P₁ + r (P₁ − P₂)`` the extrapolated ``L_p⁺`` of the last two samples (``P₁`` in ``PH``'s slot ``p``,
    :func:`run_lanes`; :func:`pkm.kernels.inverse_dynamics._chord_matrix`), then ``θ = H q + c`` into ``TH``."""
    L, nmax, dmax = mi.shape[0], s_nmax(lay, S), s_dmax(lay, S)
    rch = vload(SMP, SMP_ROWS + dmax, lanes)
    e = (select(cand, vload(VM, oe, lanes), 0.0), select(cand, vload(VM, oe + 1, lanes), 0.0),
         select(cand, vload(VM, oe + 2, lanes), 0.0), select(cand, vload(VM, oe + 3, lanes), 0.0),
         select(cand, vload(VM, oe + 4, lanes), 0.0), select(cand, vload(VM, oe + 5, lanes), 0.0))
    o1, o2 = ring_pinv(p, l, L, dmax), ring_pinv(1 - p, l, L, dmax)  # L_p⁺ at s − 1 and s − 2
    for a in range(d):
        acc = vzero(lanes)
        for r in range(6):
            p1 = vload(PH, o1 + a * 6 + r, lanes)
            acc = acc + (p1 + rch * (p1 - vload(PH, o2 + a * 6 + r, lanes))) * e[r]
        vstore(SMP, SMP_ROWS + a, vload(TH, l * nmax + mi[l, lay[LAY_QIDX] + a], lanes) + acc)  # q = θ[q_index]
    vtheta_affine(l, mi, S, mf, lay, SMP, SMP_ROWS, TH, l * nmax, lanes)
