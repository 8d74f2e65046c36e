"""Batched IK + inverse dynamics of a PKM: the numba kernel (paper Sec. 8.2, eq. 137–140, 144; Sec. 8.3).

It works on a :class:`pkm.kernels.model.KernelModel` (every limb in joint frames ``K_i``, see that
module) and runs, for every sample of a trajectory and every limb,

1. the geometric IK (eq. 95–96 with the loop constraints, paper Sec. 3.5–3.7, eq. 75–84) by Gauss–Newton, started from
   a prediction from the previous two samples (:func:`_predict`): in ``q_(l)`` alone for a limb
   with an affine loop closure ``θ = H q + c`` (constant ``H``, the Delta's parallelogram, spec
   §4.7; :func:`pkm.kernels.ik._solve_affine`; its first step is a chord step with the previous
   samples' ``L_p⁺``, :func:`_chord_matrix`), else on all tree variables with the loops' selected
   rows (:func:`pkm.kernels.ik._solve_general`). The first sample of a chunk is solved from the reference
   configuration, directly or, if that fails, by continuation along a straight line in task
   space (as :meth:`pkm.robot.Robot.inverse_kinematics`);
2. the velocity and acceleration IK (eq. 86–88, corrected as in paper Sec. 4.2, eq. 90–93; ``Ḣq̇`` from ``Ġθ̇``);
3. the limb's recursive Newton–Euler dynamics ``φ_(l)`` (App. B) with the platform massless, and
   ``W̄_(l) = Fᵀ Hᵀ φ_(l)`` (eq. 144);

then the platform's Newton–Euler residual (eq. 104–106) and ``J_IKᵀ u = Σ W̄ + P_pᵀ φ_p − W^EE``
(eq. 140). It computes what :mod:`pkm.algorithms.manipulator` computes (the tests compare both to 1e-12).

How it is made fast (DESIGN §4), and cheap to compile
-----------------------------------------------------
* Joint frames: a joint is a rotation about (or a translation along) z, so forward kinematics
  is ``K_i = K_{parent} P_i Z(θ_i)``, the world screw of joint ``j`` is the z column and origin
  of ``K_j`` (no adjoint to compute), and ``φ_i = Sᵀ W_i`` is one component.
* After a Newton step the sines and cosines are updated by the angle-addition formula with a
  short series for the small step (:func:`pkm.kernels.ik._fk`), not recomputed.
* 3-vectors and rotations are tuples (registers); arrays are read by index, never sliced in a
  loop; all scratch is allocated once per call (:func:`make_work`), so the per-sample path
  allocates nothing.
* No reference counting: every function of the kernel is compiled without numba's runtime
  (``_nrt=False``, :data:`pkm.kernels.work._jit`), so passing an array or taking a view of one emits
  no ``NRT_incref``/``NRT_decref`` call. Such a call was cheap in itself (the owner is known to be
  NULL at run time) but, as an opaque call, made LLVM spill every live register and reload every
  value it had read from an array. It also makes any allocation in these functions a compile error.
* ``nogil``: :mod:`pkm.kernels.batch` runs the chunks of a trajectory on Python threads, in parallel.
  (A ``prange`` kernel would do the same but cost ~9 s more compile: numba re-optimises the
  whole kernel inside it and adds its parallel machinery, for two or three chunks.)
* Only what the robot needs is compiled: for a robot whose limbs all have a constant H the
  general path (loop Jacobians, ``G_y⁻¹``, ``Ġθ̇``) is pruned (``general=None``, :func:`run_range`).
* Sizes as compile-time constants: ``δ_l`` and ``δ_p`` reach the kernel as the lengths of tuples
  (``KernelModel.d_static``, ``dp_static``), so the small loops over them unroll; a constant H is
  stored as sparse rows (a parallelogram's has one ±1 per row).
* The IK starts from a quintic extrapolation of the last two samples and, for a constant-H limb,
  takes its first step with their ``L_p⁺`` (no Jacobian or factorisation at the start): two
  forward kinematics and one Jacobian per limb and sample on a smooth trajectory.
* Few functions with few array arguments (the model is two flat records per limb, the scratch
  four arrays with named slots): numba's compile time and each call's cost grow with every array
  argument (an array is passed as ~9 machine words; a namedtuple of arrays is flattened), and a
  caller re-optimises the code of all its callees.
* Inlined pieces: the small functions, the limb dynamics and the RNEA are compiled with
  ``forceinline`` (:data:`pkm.kernels.work._internal`), so LLVM inlines them into their caller; only
  the IK solvers and ``_build_H`` remain calls (:data:`pkm.kernels.work._piece`).

Errors cannot be raised with messages from inside numba: the kernel stops at the first failing
sample and reports a status ``(code, sample, limb, value)`` that :mod:`pkm.kernels.batch` turns into
:class:`pkm.IKError` or :class:`pkm.SingularityError`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pkm.kernels.dynamics import (IK_FAILED, LOOP_FAILED, OK, SINGULAR_GY, SINGULAR_JIK, SINGULAR_LP,
                                  _actuator_forces, _limb_dynamics, _pinv_slot)
from pkm.kernels.ik import _dof, _h_times, _solve_affine, _solve_general
from pkm.kernels.model import LI_AFF, LI_N
from pkm.kernels.work import M_CHORD, V_DX, V_E, V_QD, Work, _internal, _jit, make_work

__all__ = ["OK", "IK_FAILED", "LOOP_FAILED", "SINGULAR_GY", "SINGULAR_LP", "SINGULAR_JIK", "Samples", "Results",
           "Work", "make_work", "run_range", "infer_steps_into", "scan_samples"]


#: Largest ratio between consecutive time steps for which a sample's IK start is extrapolated from
#: the two previous samples (:func:`_predict`, :func:`_chord_matrix`); beyond it, from one.
MAX_STEP_RATIO = 2.0
#: Largest change of a joint variable (rad or m) that a predicted IK start may make from the
#: previous sample's solution; a larger one (sample times in other units than the rates, coarse
#: sampling) is discarded and the IK starts from the previous solution instead.
PREDICT_LIMIT = 0.5


class Samples(NamedTuple):
    """Per-sample inputs: target platform poses ``Cd`` (N, 4, 4), body-fixed platform twists ``Vp``
    and their derivatives ``dVp`` (N, 6), end-effector wrenches ``Wee`` (N, 6), ``dts`` (N,) the
    time steps ``t_s − t_{s−1}`` (0 where unknown), ``g0`` (3,) gravity."""

    Cd: np.ndarray
    Vp: np.ndarray
    dVp: np.ndarray
    Wee: np.ndarray
    dts: np.ndarray
    g0: np.ndarray


class Results(NamedTuple):
    """Per-sample outputs: ``theta, thetad, thetadd`` (N, L, n_max), ``tau`` (N, n_act),
    ``JIK`` (N, n_act, δ_p), ``limbW`` (N, L, δ_p), ``platW`` (N, δ_p)."""

    theta: np.ndarray
    thetad: np.ndarray
    thetadd: np.ndarray
    tau: np.ndarray
    JIK: np.ndarray
    limbW: np.ndarray
    platW: np.ndarray


@_internal
def _predict(l, n, s, h, h1, tl, theta, thetad, thetadd):
    """The start of sample ``s``'s IK, ``tl`` (holding ``θ`` of sample ``s − 1`` on entry): with both
    time steps ``h = t_s − t_{s−1}`` and ``h1 = t_{s−1} − t_{s−2}`` known, the quintic through
    ``(θ, θ̇, θ̈)`` at ``s − 1`` and ``s − 2`` evaluated at ``t_s`` (Hermite extrapolation, error
    O(h⁶)); with ``h`` only, the Taylor polynomial ``θ + θ̇ h + θ̈ h²/2``; else unchanged.

    The quintic is ``p(τ) = θ + θ̇ τ + θ̈ τ²/2 + Σ_{k=3..5} c_k (τ/h1)^k`` with ``c_k`` from the
    three conditions at ``τ = −h1``. A prediction that moves a joint variable by more than
    ``PREDICT_LIMIT`` is discarded (``tl`` = ``θ`` of sample ``s − 1``): with sample times that do not
    fit the rates it would start Newton in another branch's or revolution's basin."""
    if h > 0.0 and h1 > 0.0:
        r = h / h1
        r3 = r * r * r
        for i in range(n):
            p0, v0, a0 = tl[i], thetad[s - 1, l, i], thetadd[s - 1, l, i]
            P = theta[s - 2, l, i] - p0 + h1 * (v0 - 0.5 * h1 * a0)  # residuals at −h1 of the Taylor part,
            V = h1 * (thetad[s - 2, l, i] - v0 + h1 * a0)  # scaled by h1^0, h1^1, h1^2
            A = h1 * h1 * (thetadd[s - 2, l, i] - a0)
            c3 = -0.5 * A - 10.0 * P - 4.0 * V
            c4 = -A - 15.0 * P - 7.0 * V
            c5 = -0.5 * A - 6.0 * P - 3.0 * V
            tl[i] = p0 + h * (v0 + 0.5 * h * a0) + r3 * (c3 + r * (c4 + r * c5))
    elif h > 0.0:
        for i in range(n):
            tl[i] += h * (thetad[s - 1, l, i] + 0.5 * h * thetadd[s - 1, l, i])
    else:
        return
    far = False
    for i in range(n):
        far = far or not abs(tl[i] - theta[s - 1, l, i]) <= PREDICT_LIMIT
    if far:  # not a neighbour of the previous solution: a start that may lead to another branch
        for i in range(n):
            tl[i] = theta[s - 1, l, i]


@_internal
def _chord_matrix(l, mi, d_static, lay, mat, s, r):
    """``mat[M_CHORD] = P₁ + r (P₁ − P₂)``: limb ``l``'s ``L_p⁺`` at samples ``s − 1`` (``P₁``) and
    ``s − 2`` (``P₂``) extrapolated linearly to sample ``s`` (``r = h/h1``; 0 uses ``P₁``), for the
    chord step of :func:`pkm.kernels.ik._solve_affine`."""
    P1, P2, P = mat[_pinv_slot(lay, l, s - 1)], mat[_pinv_slot(lay, l, s)], mat[M_CHORD]
    for a in range(_dof(l, mi, d_static)):
        for c in range(6):
            P[a, c] = P1[a, c] + r * (P1[a, c] - P2[a, c])


@_internal
def _correct_start(l, mi, mf, lay, d_static, Pinv, vec, tl, out):
    """The Newton correction of an IK start accepted at pose error ``e = vec[V_E][:6]`` ≤
    ``CHORD_MARGIN · tol`` (:func:`pkm.kernels.ik._solve_affine` with ``accept``): ``Δq = L_p⁺ e``
    (eq. 94, 96) with the ``L_p⁺`` that the rate IK computed at the start, ``θ += H Δq`` (constant
    ``H``, eq. 48) into ``tl`` and ``out``. The poses, rates and torques were evaluated at the start,
    ``O(|e|)`` ≤ 1e-14 away; the corrected ``θ`` is the Gauss–Newton step's to ``O(|e|²)``."""
    n, d = mi[l, LI_N], _dof(l, mi, d_static)
    e, dq, dth = vec[V_E], vec[V_QD], vec[V_DX]
    for a in range(d):
        acc = 0.0
        for r in range(6):
            acc += Pinv[a, r] * e[r]
        dq[a] = acc
    _h_times(l, mi, mf, lay, Pinv, True, n, d, dq, dth)  # H constant: its sparse rows (Pinv unused)
    for i in range(n):
        tl[i] += dth[i]
        out[i] = tl[i]


@_jit
def run_range(s_begin, s_end, mi, mf, lay, Mp, d_static, dp_static, Cd, Vp, dVp, Wee, dts, g0,
              theta, thetad, thetadd, tau, JIK, limbW, platW, th, bw, mat, vec,
              cold, Cs, general, tol, max_iter, thresh, status):
    """IK + inverse dynamics over samples ``s_begin … s_end − 1`` (see the module docstring).

    Arguments: the :class:`pkm.kernels.model.KernelModel` (its arrays and the compile-time sizes
    ``d_static``, ``dp_static``), :class:`Samples` and :class:`Results` arrays, one chunk's
    :class:`Work`; ``cold``: solve the first sample from the reference
    configuration, directly or, when that fails, through the intermediate poses ``Cs`` (K, 4, 4)
    (a straight line in task space from the reference, as
    :meth:`pkm.robot.Robot.inverse_kinematics` does), else start it from ``th``; ``general``:
    None when every limb has a constant H (numba then compiles the affine path only), else any
    array; the IK tolerance, iteration limit and singularity threshold; ``status`` (4,) receives
    ``(code, sample, limb, value)``: code 0 = success, else the first failure (IK or loop
    residual, or the condition number that exceeded ``thresh``).

    When ``dts[s] > 0`` the start of sample ``s`` is predicted from samples ``s − 1`` and ``s − 2``
    (:func:`_predict`: quintic Hermite extrapolation, or second-order Taylor when only ``s − 1``
    belongs to the chunk), and a limb with a constant H takes its first step with the
    extrapolated ``L_p⁺`` of those samples (:func:`_chord_matrix`), so that one step, two forward
    kinematics and one Jacobian per limb usually suffice; a prediction already converged is
    accepted without the step and corrected afterwards with the ``L_p⁺`` of the rate IK
    (:func:`_correct_start`): one forward kinematics. When that fails, or without time steps
    (:func:`pkm.kernels.batch.infer_steps` infers them), the start is the previous sample's solution.
    """
    L = mi.shape[0]
    for s in range(s_begin, s_end):
        h = dts[s] if s > s_begin else 0.0  # time steps to s and to s − 1 (0: unknown)
        h1 = dts[s - 1] if s - 1 > s_begin else 0.0
        if not (h1 * MAX_STEP_RATIO >= h and h * MAX_STEP_RATIO >= h1):
            h1 = 0.0  # irregular sampling: extrapolate from sample s − 1 alone (Taylor, its L_p⁺)
        start = s == s_begin and cold
        for l in range(L):
            tl = th[l]
            n = mi[l, LI_N]
            aff = True if general is None else mi[l, LI_AFF] != 0
            ok, perr, gerr, at_start = False, np.inf, np.inf, False
            for attempt in range(2):
                if start:  # from the reference configuration: directly, then along Cs
                    for i in range(n):
                        tl[i] = 0.0
                elif attempt == 0:  # extrapolated from samples s − 1 and s − 2
                    _predict(l, n, s, h, h1, tl, theta, thetad, thetadd)
                elif h > 0.0:  # the prediction failed: start again from sample s − 1
                    for i in range(n):
                        tl[i] = theta[s - 1, l, i]
                else:
                    break
                steps = Cs.shape[0] if start and attempt == 1 else 0
                for k in range(steps + 1):
                    target, sk = (Cs, k) if k < steps else (Cd, s)
                    if aff:
                        chord = attempt == 0 and s > s_begin and k == steps
                        if chord:
                            _chord_matrix(l, mi, d_static, lay, mat, s, h / h1 if h > 0.0 and h1 > 0.0 else 0.0)
                        ok, perr, gerr, at_start = _solve_affine(l, mi, mf, lay, d_static, target, sk, tl, bw, mat,
                                                                 vec, tol, max_iter, chord, True)
                    elif general is not None:
                        ok, perr, gerr = _solve_general(l, mi, mf, lay, target, sk, tl, bw, mat, vec, tol, max_iter)
                    if not ok:
                        break
                if ok:
                    break
            if not ok:
                status[0], status[1], status[2] = (LOOP_FAILED if perr <= tol else IK_FAILED), s, l
                status[3] = gerr if perr <= tol else perr
                return
            for i in range(n):
                theta[s, l, i] = tl[i]
            if not _limb_dynamics(l, mi, mf, lay, d_static, dp_static, Vp, dVp, g0, s, thresh, thetad[s, l],
                                  thetadd[s, l], JIK, limbW, bw, mat, vec, general, status):
                return
            if at_start:
                _correct_start(l, mi, mf, lay, d_static, mat[_pinv_slot(lay, l, s)], vec, tl, theta[s, l])
        if not _actuator_forces(Mp, dp_static, Cd, Vp, dVp, Wee, g0, s, limbW, platW, JIK, tau, mat, vec, thresh,
                                status):
            return
    status[0] = OK


#: Largest relative change of an inferred step by the rule's next term (:func:`infer_steps_into`).
STEP_CORRECTION = 1e-8


@_jit
def infer_steps_into(X, XD, XDD, out, fit):
    """``out[s − 1]``: the time step from sample ``s − 1`` to ``s`` that fits the corrected trapezoidal
    rule ``x_s − x_{s−1} = h v̄ + h² c`` (``v̄ = (ẋ_{s−1} + ẋ_s)/2``, ``c = (ẍ_{s−1} − ẍ_s)/12``) in the least-squares
    sense over the coordinates, or 0 when it is not positive and finite or leaves a residual above
    ``fit · |Δx|`` (see :func:`pkm.kernels.batch.infer_steps`). Where the neighbours exist the rule's
    next term ``h⁵ x⁽⁵⁾/720`` is added with ``h³ x⁽⁵⁾ ≈ Δ³ẍ = ẍ_{s+1} − 3ẍ_s + 3ẍ_{s−1} − ẍ_{s−2}`` (steps
    alike), ``c' = c + Δ³ẍ/720``, where it changes ``h`` by at most ``STEP_CORRECTION`` (relative; smooth
    motion): the IRSBot-2's sine steps are then 1e-13 relative off instead of 3.5e-11, and the IK's
    starts without ``t`` as close as with it. (The residuals cannot choose: both fits leave only rounding.)"""
    N, m = X.shape
    for s in range(1, N):  # one pass over the coordinates: the sums that h and the residual need
        vv, xv, cv, xx, xc, cc = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        cv3, xc3, cc3 = 0.0, 0.0, 0.0  # the same with c' (below)
        inner = 2 <= s <= N - 2
        for j in range(m):
            vb = 0.5 * (XD[s, j] + XD[s - 1, j])
            dx = X[s, j] - X[s - 1, j]
            c = (XDD[s - 1, j] - XDD[s, j]) * (1.0 / 12.0)
            vv += vb * vb
            xv += dx * vb
            cv += c * vb
            xx += dx * dx
            xc += dx * c
            cc += c * c
            if inner:
                c3 = c + (XDD[s + 1, j] - 3.0 * XDD[s, j] + 3.0 * XDD[s - 1, j] - XDD[s - 2, j]) * (1.0 / 720.0)
                cv3 += c3 * vb
                xc3 += dx * c3
                cc3 += c3 * c3
        h, rr = _step_fit(vv, xv, cv, xx, xc, cc)
        if inner:  # the next term as a small correction only (at a corner Δ³ẍ is no derivative)
            h3, rr3 = _step_fit(vv, xv, cv3, xx, xc3, cc3)
            if abs(h3 - h) <= STEP_CORRECTION * abs(h):
                h, rr = h3, rr3
        out[s - 1] = h if (h > 0.0 and np.isfinite(h) and rr <= fit * fit * xx) else 0.0


@_internal
def _step_fit(vv, xv, cv, xx, xc, cc):
    """``h`` of ``Δx = h v̄ + h² c`` from the sums of :func:`infer_steps_into`, and the squared residual."""
    h = 0.0
    if vv > 0.0:  # the root of cv h² + vv h − xv = 0 near xv/vv (h = Σ(Δx − h²c)·v̄ / Σv̄²; fixed-point steps
        h = 2.0 * xv / (vv + np.sqrt(vv * vv + 4.0 * cv * xv))  # from the linear fit left ~1e-12), stable form
    h2 = h * h  # Σ(Δx − h v̄ − h²c)², expanded (its rounding, ~1e-16 Σ Δx², is far below the fit)
    return h, xx + h2 * vv + h2 * h2 * cc - 2.0 * h * xv - 2.0 * h2 * xc + 2.0 * h * h2 * cv


@_jit
def scan_samples(theta, JIK, tau, thetad, thetadd, a, e, step, out):
    """One pass over the outputs of samples ``a … e − 1`` (a ≥ 1) into ``out[s − a]``: bit 1 when the
    sample may not continue its predecessor's branch (a joint step above ``step`` or a row of
    ``J_IK`` turned by more than 90°, :func:`pkm.algorithms.inverse_kinematics.branch_suspect`), bit
    2 when a torque is not finite, bit 4 when a joint rate or acceleration is not finite (what
    :mod:`pkm.kernels.batch` checks after the kernel; numpy's passes cost ~0.1 µs per sample)."""
    L, nmax = theta.shape[1], theta.shape[2]
    na, dp = JIK.shape[1], JIK.shape[2]
    for s in range(a, e):  # branch-free accumulations (they vectorise): the largest step, a NaN for
        big, nan, turn = 0.0, 0.0, 0  # any non-finite value (x·0 is NaN for x = ±inf or NaN)
        for l in range(L):
            for i in range(nmax):
                d = abs(theta[s, l, i] - theta[s - 1, l, i])
                big = d if d > big else big  # a NaN step is no step, as before
                nan += thetad[s, l, i] * 0.0 + thetadd[s, l, i] * 0.0
        tnan = 0.0
        for r in range(na):
            acc = 0.0
            for c in range(dp):
                acc += JIK[s, r, c] * JIK[s - 1, r, c]
            turn |= acc <= 0.0
            tnan += tau[s, r] * 0.0
        out[s - a] = (1 if big > step or turn else 0) | (0 if tnan == 0.0 else 2) | (0 if nan == 0.0 else 4)
