"""The per-limb stage of a limb with a configuration-dependent ``H`` on the SIMD path (issue 18, item 1).

:func:`general_limb` does for ``W`` lanes what :func:`pkm.kernels.inverse_dynamics.run_range` does for
one such limb and sample (the IK by :func:`pkm.kernels.ik._solve_general`, then
:func:`pkm.kernels.dynamics._limb_dynamics`), with the pieces of :mod:`pkm.kernels.simd_general`:

1. the predicted start of every tree variable (:func:`_vpredict_all`, as
   :func:`pkm.kernels.inverse_dynamics._predict`);
2. its forward kinematics, pose error ``e`` (eq. 96) and loop residuals ``g``. If every lane's start
   is converged (``|e| ≤ CHORD_MARGIN · tol``, ``|g| ≤ LOOP_TOL``) the geometry is evaluated there
   and only ``θ`` is corrected by the Newton step (as the affine path's
   :func:`pkm.kernels.inverse_dynamics._correct_start`: the result is the step's to ``O(|e|²)``).
   Otherwise a **chord step** (the Newton step of :func:`pkm.kernels.simd_general.vnewton_step` with
   the last sample's ``J_p, L_p⁺, H, G_y⁻¹``, kept per limb, as the affine path's chord step uses the
   last samples' ``L_p⁺``) — and, while some lane's start was beyond ``tol`` (with times inferred, IRSBot-2's
   starts are 1e-12…1e-10 and one chord step leaves 1e-14…1e-13; noisy or rounded samples miss by more), up to
   ``GENERAL_CHORD_STEPS − 1`` more chord steps, each from the last one's error (forward kinematics, pose error and loop
   residuals only), in the lanes whose error contracts (``CHORD_CONTRACTION``) — then the geometry there,
   accepted as :func:`pkm.kernels.ik._converged` accepts an iterate: ``|e| ≤ CHORD_MARGIN · tol``, or at the rounding floor (``|e| ≤ tol ·
   max(1, max|θ|)``) after a step from a start already within ``tol``; loops ≤ ``LOOP_TOL``. (On the
   3R[2US] Delta the floor is ~2e-14, above ``CHORD_MARGIN · tol`` = 1e-14: the scalar kernel accepts
   there after two steps by its stall rule.) A lane not accepted takes one Newton step with the
   fresh geometry (a start further off), and is evaluated again;
3. a lane still not accepted runs :func:`pkm.kernels.ik._solve_general` alone on the scalar path
   (from its prediction, then from the previous sample) and rejoins;
4. the rates, the RNEA and ``Hᵀφ`` (:func:`pkm.kernels.simd_general.vmotion_general`).

The scalar kernel steps by Gauss–Newton on the stacked ``[J_p; G]``, the lanes by Newton in ``q``
with the loops closed; both land ``O(|Δθ|²)`` from the same solution, and the torques agree to
~1e-13 relative (tests/test_simd.py). On the first sample in lanes (no kept geometry yet) the step
from the start uses the geometry evaluated there. The first sample of the very start of a lane's
segment and its successor are run by the scalar kernel (:func:`pkm.kernels.simd_kernel.run_lanes`).
"""
from __future__ import annotations

from pkm.kernels.ik import CHORD_CONTRACTION, CHORD_MARGIN, GENERAL_CHORD_STEPS, _dof, _solve_general
from pkm.kernels.inverse_dynamics import PREDICT_LIMIT
from pkm.kernels.model import LAY_LOOPS, LOOP_TOL, LP_SIZE
from pkm.kernels.simd_general import (GJ, SMP_H, SMP_H1, _on, _y_on_path, prev_rows, vg_rows, vgeom_general,
                                      vloop_values, vmotion_general, vnewton_step)
from pkm.kernels.simd_pipeline import (FK_POSES, s_dmax, s_lmax, s_m, s_n, s_nloop, s_nmax, s_ymask, vfk, vm_rows,
                                       vplatform_error)
from pkm.kernels.simd_predict import ring_hist, vpredict_row, vstep_ratios
from pkm.kernels.simd_vec import lane_bits, select, splat, vabs, vload, vmax, vstore, vzero
from pkm.kernels.work import _internal, _piece

__all__ = ["general_limb"]


@_internal
def _vpredict_all(l, mi, S, lay, SMP, TH, HIST, VM, oth0, p, L):
    """:func:`pkm.kernels.inverse_dynamics._predict` of every tree variable of limb ``l`` in lanes into
    ``TH`` and rows ``oth0 + i`` (quintic Hermite, Taylor with ``h`` only, else the previous sample;
    a move above ``PREDICT_LIMIT`` falls back to the previous sample's solution); ``p``: the history's
    slot of the previous sample (:func:`pkm.kernels.simd_kernel.run_lanes`)."""
    nmax, nn = s_nmax(lay, S), mi.shape[0] * s_nmax(lay, S)
    o1, o2 = ring_hist(p, nn), ring_hist(1 - p, nn)
    h = vload(SMP, SMP_H, L)
    h1, both, moved, r, r3 = vstep_ratios(h, vload(SMP, SMP_H1, L))
    far = vzero(L) > 0.0
    n = s_n(l, mi, S)
    for i in range(n):
        o = l * nmax + i
        x, p0 = vpredict_row(HIST, o1 + o, o2 + o, nn, h, h1, both, moved, r, r3, L)
        far = far | ~(vabs(x - p0) <= PREDICT_LIMIT)
        vstore(TH, o, x)
    for i in range(n):
        o = l * nmax + i
        x = select(far, vload(HIST, o1 + o, L), vload(TH, o, L))
        vstore(TH, o, x)
        vstore(VM, oth0 + i, x)


@_piece
def _scalar_general(l, mi, S, mf, lay, Cd, s, tl, bw, mat, vec, tol, max_iter, TH, HIST, VM, oth0, p, j):
    """Lane ``j``'s IK of limb ``l`` on the scalar path (:func:`pkm.kernels.ik._solve_general`): from its
    predicted start (rows ``oth0``), else from its previous sample's solution (the history's slot ``p``);
    the solution into ``TH``."""
    n, tho = s_n(l, mi, S), l * s_nmax(lay, S)
    prev = tho + ring_hist(p, mi.shape[0] * s_nmax(lay, S))
    for i in range(n):
        tl[i] = VM[oth0 + i, j]
    ok = _solve_general(l, mi, mf, lay, Cd, s, tl, bw, mat, vec, tol, max_iter)[0]
    if not ok:
        for i in range(n):
            tl[i] = HIST[prev + i, j]
        ok = _solve_general(l, mi, mf, lay, Cd, s, tl, bw, mat, vec, tol, max_iter)[0]
    if ok:
        for i in range(n):
            TH[tho + i, j] = tl[i]
    return ok


@_internal
def _keep_geometry(l, mi, S, lay, d, VM, L):
    """Limb ``l``'s ``J_p``, ``L_p⁺``, ``H`` and ``G_y⁻¹`` into its block of :func:`prev_rows` (the next
    sample's chord step)."""
    n, nmax, dmax, lmax = s_n(l, mi, S), s_nmax(lay, S), s_dmax(lay, S), s_lmax(lay, S)
    _, _, _, _, _, _, opi, _, _, _, _, _, _, _, _ = vm_rows(nmax, dmax)
    _, _, _, oh, ogyi, _, _, _, _, end = vg_rows(nmax, dmax, lmax)
    _, ppi, ph, pgyi, size = prev_rows(nmax, dmax, lmax)
    ob = end + l * size
    ym, yp = s_ymask(S)[0], _y_on_path(S)  # (the chord step reads J_p's columns y on the path and H's rows y only)
    for r in range(6):
        for j in range(n):
            if _on(yp, j):
                vstore(VM, ob + r * nmax + j, vload(VM, r * nmax + j, L))
        for a in range(d):
            vstore(VM, ob + ppi + a * 6 + r, vload(VM, opi + a * 6 + r, L))
    for i in range(n):
        if not _on(ym, i):
            continue
        for c in range(d):
            vstore(VM, ob + ph + i * dmax + c, vload(VM, oh + i * dmax + c, L))
    for lp in range(s_nloop(l, mi, S)):
        m = s_m(l, mi, lay[LAY_LOOPS] + LP_SIZE * lp, S)
        for a in range(m):
            for b in range(m):
                o = GJ * GJ * lp + a * GJ + b
                vstore(VM, ob + pgyi + o, vload(VM, ogyi + o, L))


@_internal
def general_limb(l, mi, S, mf, lay, d_static, dp_static, Cd, SMP, TH, HIST, VB, VM, th, bw, mat, vec, g0, tol, max_iter,
                 thresh, active, sj, status, first, p, fresh, lanes):
    """Sample ``sj[j]`` of limb ``l`` (a general limb) in every lane of ``active`` (bits): the IK (see the
    module docstring), then the geometry, rates, RNEA and ``Hᵀφ`` at the solution, left in ``TH``,
    ``VB`` and ``VM`` as :func:`pkm.kernels.simd_kernel._store_limb` reads them; the geometry also kept
    for the next sample's chord step. ``first``: the first sample in lanes (no kept geometry yet); ``p``: the
    history's slot of the previous sample (:func:`pkm.kernels.simd_kernel.run_lanes`); ``fresh``: the start's
    forward kinematics evaluates sines and cosines afresh (else from the last ones, the series of
    :func:`pkm.kernels.simd_pipeline.vfk`).
    ``status[j, 3]`` counts lane ``j``'s scalar solves. Returns the lanes of ``active`` that succeeded
    (the others failed the IK or are singular)."""
    d = _dof(l, mi, d_static)
    n, nmax, dmax, lmax = s_n(l, mi, S), s_nmax(lay, S), s_dmax(lay, S), s_lmax(lay, S)
    opi = vm_rows(nmax, dmax)[6]
    _, ogv, _, oh, ogyi, _, oth0, _, _, end = vg_rows(nmax, dmax, lmax)
    _, ppi, ph, pgyi, size = prev_rows(nmax, dmax, lmax)
    ob = end + l * size
    cm = CHORD_MARGIN * tol
    _vpredict_all(l, mi, S, lay, SMP, TH, HIST, VM, oth0, p, lanes)
    if first:  # the geometry at the start, a Newton step
        perr, gmax, near, reg = vgeom_general(l, mi, S, mf, lay, d, dp_static, TH, VB, VM, SMP, thresh, True, lanes)
        step = near & reg
        good = step & (perr <= cm) & (gmax <= LOOP_TOL)
        quadratic = step & (perr * perr <= cm)
        vnewton_step(l, mi, S, lay, d, TH, VM, step, 0, opi, oh, ogyi, lanes)
        redo = lane_bits(good) & active != active
    else:  # the start's error; converged everywhere: the geometry there and a Newton correction, else a chord step
        vfk(l, mi, S, mf, TH, l * nmax, VB, fresh, FK_POSES, lanes)
        perr, near, _, _ = vplatform_error(l, mi, S, mf, lay, VB, SMP, VM, vm_rows(nmax, dmax)[7], lanes)
        gmax = vloop_values(l, mi, S, mf, lay, VB, VM, ogv, lanes)
        good = near & (perr <= cm) & (gmax <= LOOP_TOL)
        redo = lane_bits(good) & active != active
        if redo:
            quadratic = near & (perr <= tol)
            step = near
            vnewton_step(l, mi, S, lay, d, TH, VM, step, ob, ob + ppi, ob + ph, ob + pgyi, lanes)
            for _ in range(GENERAL_CHORD_STEPS - 1):  # starts beyond tol (inferred times, noisy or rounded samples): more
                if lane_bits(quadratic | ~step) & active == active:  # chord steps, each from the last one's error,
                    break  # while it contracts
                last = perr
                vfk(l, mi, S, mf, TH, l * nmax, VB, False, FK_POSES, lanes)
                perr, near, _, _ = vplatform_error(l, mi, S, mf, lay, VB, SMP, VM, vm_rows(nmax, dmax)[7], lanes)
                vloop_values(l, mi, S, mf, lay, VB, VM, ogv, lanes)
                step = step & near & ((perr <= tol) | (perr <= CHORD_CONTRACTION * last))
                quadratic = step & (perr <= tol)
                vnewton_step(l, mi, S, lay, d, TH, VM, step, ob, ob + ppi, ob + ph, ob + pgyi, lanes)
        else:
            quadratic = good
            perr, gmax, near, reg = vgeom_general(l, mi, S, mf, lay, d, dp_static, TH, VB, VM, SMP, thresh, False, lanes)
            good = good & reg
            vnewton_step(l, mi, S, lay, d, TH, VM, good, 0, opi, oh, ogyi, lanes)
    if redo:  # the geometry after the step: accepted as ik._converged does after a step (pose error ≤
        for it in range(2):  # CHORD_MARGIN·tol, or at the rounding floor after a step from a start close enough
            perr, gmax, near, reg = vgeom_general(l, mi, S, mf, lay, d, dp_static, TH, VB, VM, SMP, thresh, False,
                                                  lanes)  # for the step to have converged), else a Newton step
            big = splat(1.0, lanes)
            for i in range(n):
                big = vmax(big, vabs(vload(TH, l * nmax + i, lanes)))
            good = near & reg & ((perr <= cm) | (quadratic & (perr <= tol * big))) & (gmax <= LOOP_TOL)
            if it == 1 or lane_bits(good) & active == active:
                break
            step = near & reg & ~good
            quadratic = good | (step & (perr * perr <= cm))
            vnewton_step(l, mi, S, lay, d, TH, VM, step, 0, opi, oh, ogyi, lanes)
    taken = lane_bits(good) & active
    if taken != active:  # the lanes not converged: the scalar IK, one by one, then all lanes again
        for j in range(len(lanes)):
            if active >> j & 1 and not taken >> j & 1:
                status[j, 3] += 1.0
                if not _scalar_general(l, mi, S, mf, lay, Cd, sj[j], th[l], bw, mat, vec, tol, max_iter, TH, HIST, VM,
                                       oth0, p, j):
                    active &= ~(1 << j)
        perr, gmax, near, reg = vgeom_general(l, mi, S, mf, lay, d, dp_static, TH, VB, VM, SMP, thresh, True, lanes)
    active &= lane_bits(reg)
    vmotion_general(l, mi, S, mf, lay, d, VB, VM, SMP, g0, lanes)
    _keep_geometry(l, mi, S, lay, d, VM, lanes)
    return active
