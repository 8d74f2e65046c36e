"""Forward dynamics of a PKM in task space: the numba kernel (paper eq. 127–130).

The task-space EOM (eq. 107) ``M_t V̇_t + C_t V_t + W_t^grav = W_t^EE + J_IKᵀ u`` is affine in
``V̇_t``, and so is the inverse dynamics that :mod:`pkm.kernels.inverse_dynamics` computes (eq. 137,
in the parallel form 140): ``u(V̇_t) = J_IK⁻ᵀ(M_t V̇_t + b)`` with ``b = C_t V_t + W_t^grav −
W_t^EE``. At one state this kernel solves every limb's IK once (from a warm start), computes the
limbs' geometry (``H``, ``L_p⁺``, ``F``, J_IK) once, and then runs ``δ_p + 1`` "passes" of the
dynamics, each giving the task-space wrench ``M_t V̇_t + C_t V_t + W_t^grav − W_t^EE`` (the bracket
of eq. 140: the limbs' ``W̄_(l) = F̄ᵀH̄ᵀφ_(l)``, eq. 144, and the platform's ``P_pᵀφ_p``). Pass 0 is
the state with ``V̇_t = 0``: ``b = C_t V_t + W_t^grav − W_t^EE``. Pass ``i`` is the velocity-free
part for ``V̇_t = e_i``, the platform accelerated by ``V̇_p = P_p e_i`` at rest and without gravity
(``θ̈ = H L_p⁺ P_p e_i``, eq. 88 with ``θ̇ = 0``; the trees' ``M θ̈``,
:func:`pkm.kernels.dynamics._limb_unit`; the platform's ``M_p P_p e_i``): the column ``M_t e_i``.
Then (eq. 129)

    ``V̇_t = M_t⁻¹(J_IKᵀ u + W_t^EE − C_t V_t − W_t^grav)``,

a δ_p × δ_p solve that never inverts J_IK: the task form is regular at a forward-kinematics
(type-II) singularity, where J_IK loses rank but ``M_t`` does not (``F = L_p⁺P_p`` is regular as
long as every limb's ``L_p`` is). ``J_IK⁻ᵀ`` is formed only for ``u_0 = J_IK⁻ᵀ b``, the forces that
hold the state at rest (``bias``): with ``jik_thresh`` finite a J_IK whose condition number
exceeds it fails the state (:data:`pkm.kernels.inverse_dynamics.SINGULAR_JIK`), with
``jik_thresh = inf`` the state is evaluated and its ``u_0`` is NaN where J_IK cannot be inverted
(the simulation's setting). ``C_t``, ``W_t^grav`` and ``J_IK`` are never formed as matrices. The
joint accelerations are affine in ``V̇_t`` (eq. 88): ``θ̈ = θ̈_0 + Σ_i V̇_t,i θ̈_i``.

Two entry points share :func:`_forward_state`: :func:`forward_range` (a batch of states, each
IK started from the solution of the one before) and :func:`rk4_run` (the classical fixed-step RK4
integration of eq. 129–130 entirely inside numba, for translational task spaces, ``V_t = ẋ``,
under forces given as a piecewise cubic in time). Both stop at the first failing state with a
status ``(code, index, limb, value)`` as :func:`pkm.kernels.inverse_dynamics.run_range` does, plus
:data:`SINGULAR_A` (``M_t`` not invertible) and :data:`CROSSED` (a row of J_IK turned
by more than 90° since the previous, neighbouring evaluation: the motion crossed a singularity —
e.g. a fixed RK4 step carried the Delta's arms past their stretched configuration, where the IK
then finds the other elbow branch; the rule of :func:`pkm.algorithms.inverse_kinematics.branch_suspect`).
"""
from __future__ import annotations

import numpy as np

from pkm.kernels.dynamics import (IK_FAILED, LOOP_FAILED, _jik_inverse, _least_norm, _limb_geometry, _limb_motion, _limb_unit,
                                  _pinv_slot, _platform_forces,
                                  _platform_wrench)
from pkm.kernels.ik import _dof, _solve_affine, _solve_general
from pkm.kernels.model import LI_AFF, LI_N
from pkm.kernels.work import M_CHORD, M_JT, M_JTI, M_SQ, V_RHS, _internal, _jit
from pkm.lie.linalg import inverse_into

__all__ = ["SINGULAR_A", "CROSSED", "forward_range", "rk4_run", "pass_accelerations"]

SINGULAR_A, CROSSED = 6, 7


def pass_accelerations(dp_static, out):
    """Fill ``out`` (δ_p + 1, 6) with the platform accelerations of the passes: row 0 zero, row
    ``i`` the unit task acceleration ``e_i`` as ``V̇_p = P_p e_i`` (``dp_static[i − 1]`` is the
    twist component of task coordinate ``i − 1``, :func:`pkm.kernels.model.task_rows`)."""
    out[:] = 0.0
    for i, r in enumerate(dp_static):
        out[i + 1, r] = 1.0
    return out


@_internal
def _forward_state(mi, mf, lay, Mp, d_static, dp_static, Cd, Vp, dVp, Wee, g0, u, th, pthd, pthdd, ptau, pJIK,
                   plimbW, pplatW, bw, mat, vec, general, tol, max_iter, thresh, jik_thresh, status, xdd, thd, thdd, chord):
    """Forward dynamics at one state (see the module docstring). The pass arrays ``Cd`` (m, 4, 4),
    ``Vp``, ``Wee`` (m, 6) hold the state's platform pose, twist and end-effector wrench in every
    row, ``dVp`` (m, 6) the passes' accelerations (:func:`pass_accelerations`); ``th`` (L, n_max)
    holds the IK start and receives the solution; ``pthd, pthdd`` (m, L, n_max), ``ptau``
    (m, n_act), ``pJIK`` (m, n_act, δ_p), ``plimbW`` (m, L, δ_p), ``pplatW`` (m, δ_p) are the passes'
    scratch. Writes ``xdd`` (δ_p), ``thd`` and ``thdd`` (L, n_max); ``ptau[0]`` is ``u_0`` and
    ``pJIK[0]`` J_IK. Returns False after writing a failure into ``status`` (index left to the
    caller). ``chord``: a limb with a constant H takes its first IK step with its ``L_p⁺`` of the
    previous call (a neighbouring state: no Jacobian or factorisation at the start, as
    :func:`pkm.kernels.inverse_dynamics._chord_matrix`), and J_IK is compared with the previous
    call's (``pJIK[1]``, :data:`CROSSED`)."""
    L, m = mi.shape[0], len(dp_static) + 1
    for l in range(L):
        tl = th[l]
        if general is None or mi[l, LI_AFF] != 0:
            if chord:
                P, C = mat[_pinv_slot(lay, l, 0)], mat[M_CHORD]
                for a in range(_dof(l, mi, d_static)):
                    for c in range(6):
                        C[a, c] = P[a, c]
            ok, perr, gerr, _ = _solve_affine(l, mi, mf, lay, d_static, Cd, 0, tl, bw, mat, vec, tol, max_iter, chord,
                                              False)
        else:
            ok, perr, gerr = _solve_general(l, mi, mf, lay, Cd, 0, tl, bw, mat, vec, tol, max_iter)
        if not ok:
            status[0], status[2] = (LOOP_FAILED if perr <= tol else IK_FAILED), l
            status[3] = gerr if perr <= tol else perr
            return False
        if not _limb_geometry(l, mi, mf, lay, d_static, dp_static, 0, thresh, pJIK, mat, general, status):
            return False
        Pinv = mat[_pinv_slot(lay, l, 0)]
        _limb_motion(l, mi, mf, lay, d_static, dp_static, Pinv, Vp, dVp, g0, 0, pthd[0, l], pthdd[0, l], plimbW, bw,
                     mat, vec, general)
        for k in range(1, m):  # M_t e_i: at rest, without gravity (pass k's V_p, W^EE rows are zero)
            _limb_unit(l, mi, mf, lay, d_static, dp_static, Pinv, dp_static[k - 1], k, pthdd[k, l], plimbW, bw, mat,
                       vec, general)
    return _task_solve(mi, Mp, dp_static, Cd, Vp, dVp, Wee, g0, u, th, pthd, pthdd, ptau, pJIK, plimbW, pplatW, mat, vec,
                       jik_thresh, status, xdd, thd, thdd, chord)


@_internal
def _task_solve(mi, Mp, dp_static, Cd, Vp, dVp, Wee, g0, u, th, pthd, pthdd, ptau, pJIK, plimbW, pplatW, mat, vec,
                jik_thresh, status, xdd, thd, thdd, chord):
    """The rest of :func:`_forward_state` once every limb's passes are in the scratch (also the joint
    form's, :mod:`pkm.kernels.joint_form`): ``u_0``, the platform's share, ``M_t`` column by column and
    ``V̇_t = M_t⁻¹(J_IKᵀu + W_t^EE − C_t V_t − W_t^grav)`` (eq. 129), ``θ̇`` and ``θ̈``; with ``chord``
    J_IK is compared with the previous call's (:data:`CROSSED`)."""
    L, m = mi.shape[0], len(dp_static) + 1
    dp = len(dp_static)
    # J_IK⁻ᵀ only for u_0 (the forces that hold the state): the accelerations below never invert J_IK,
    # so with jik_thresh = inf a state at (or near) a type-II singularity evaluates, its u_0 NaN
    # (redundant actuation, J_IK not square: u_0 is the distribution's, pkm.algorithms.distribution)
    square = pJIK.shape[1] == dp
    jik_ok = square and _jik_inverse(dp_static, 0, pJIK, mat, jik_thresh, status)
    if not jik_ok:
        if square and jik_thresh < np.inf:
            return False
        status[0] = -1
    for a in range(pJIK.shape[1]):  # pJIK[1]: J_IK of the previous evaluation (the passes write row 0 only)
        turn = 0.0
        for c in range(dp):
            turn += pJIK[0, a, c] * pJIK[1, a, c]
        if chord and not turn > 0.0:  # a row turned by more than 90°: a singularity was crossed
            status[0], status[2], status[3] = CROSSED, -1, a
            return False
    for a in range(pJIK.shape[1]):
        for c in range(dp):
            pJIK[1, a, c] = pJIK[0, a, c]
    zero3 = dVp[0, 0:3]  # pass 0's acceleration is zero: no gravity in the unit passes
    M, Mi, r = mat[M_JT], mat[M_JTI], vec[V_RHS]
    for k in range(m - 1, -1, -1):  # pass k's task-space wrench (eq. 140's bracket) into vec[V_RHS]
        if k == 0 and jik_ok:  # and u_0 = J_IK⁻ᵀ(C_t V_t + W_t^grav − W_t^EE) into ptau[0]
            _platform_forces(Mp, dp_static, Cd, Vp, dVp, Wee, g0, 0, plimbW, pplatW, ptau, mat, vec)
        else:
            _platform_wrench(Mp, dp_static, Cd, Vp, dVp, Wee, g0 if k == 0 else zero3, k, plimbW, pplatW, mat, vec)
        if k > 0:  # column k − 1 of M_t (at rest, no gravity: the wrench of V̇_t = e_k)
            for a in range(dp):
                M[a, k - 1] = r[a]
    if not square:  # the least-norm holding forces
        _least_norm(pJIK, 0, dp, r, ptau, mat)
    elif not jik_ok:
        for a in range(ptau.shape[1]):
            ptau[0, a] = np.nan
    for c in range(dp):  # r = J_IKᵀu − (C_t V_t + W_t^grav − W_t^EE) (pass 0's wrench is in r)
        acc = -r[c]
        for a in range(pJIK.shape[1]):
            acc += pJIK[0, a, c] * u[a]
        r[c] = acc
    if not inverse_into(M, dp, Mi, mat[M_SQ]):
        status[0], status[2], status[3] = SINGULAR_A, -1, np.inf
        return False
    for i in range(dp):  # V̇_t = M_t⁻¹(J_IKᵀu + W_t^EE − C_t V_t − W_t^grav) (eq. 129)
        acc = 0.0
        for a in range(dp):
            acc += Mi[i, a] * r[a]
        xdd[i] = acc
    for l in range(L):
        n = mi[l, LI_N]
        for j in range(th.shape[1]):
            if j < n:
                acc = pthdd[0, l, j]
                for i in range(dp):
                    acc += xdd[i] * pthdd[i + 1, l, j]
                thd[l, j], thdd[l, j] = pthd[0, l, j], acc
            else:
                thd[l, j] = thdd[l, j] = 0.0
    return True


@_jit
def forward_range(s_begin, s_end, given, chord, mi, mf, lay, Mp, d_static, dp_static, Cd, Vp, Wee, g0, U, theta, thetad,
                  thetadd, xdd, bias, JIK, pCd, pVp, pdVp, pWee, pthd, pthdd, ptau, pJIK, plimbW, pplatW, th, bw,
                  mat, vec, general, tol, max_iter, thresh, jik_thresh, status):
    """Forward dynamics at states ``s_begin … s_end − 1``: platform poses ``Cd`` (N, 4, 4), twists
    ``Vp`` and wrenches ``Wee`` (N, 6), actuator forces ``U`` (N, n_act). With ``given`` the IK of
    state ``s`` starts from ``theta[s]`` (on entry), else the first from ``th`` and each later one
    from the solution before, with a chord step (see :func:`_forward_state`; for the first state
    only if ``chord``: the scratch holds ``L_p⁺`` of a neighbouring state). Writes ``theta, thetad, thetadd``
    (N, L, n_max), ``xdd`` (N, δ_p), ``bias`` = ``u_0`` (N, n_act) and ``JIK`` (N, n_act, δ_p).
    ``status`` receives ``(code, state, limb, value)``, code 0 = success."""
    for s in range(s_begin, s_end):
        if given:
            for l in range(th.shape[0]):
                for j in range(th.shape[1]):
                    th[l, j] = theta[s, l, j]
        for a in range(4):
            for b in range(4):
                pCd[0, a, b] = Cd[s, a, b]
        for r in range(6):
            pVp[0, r] = Vp[s, r]
            pWee[0, r] = Wee[s, r]
        warm = not given and (chord or s > s_begin)
        if not _forward_state(mi, mf, lay, Mp, d_static, dp_static, pCd, pVp, pdVp, pWee, g0, U[s], th, pthd,
                              pthdd, ptau, pJIK, plimbW, pplatW, bw, mat, vec, general, tol, max_iter, thresh,
                              jik_thresh, status, xdd[s], thetad[s], thetadd[s], warm):
            status[1] = s
            return
        for l in range(th.shape[0]):
            for j in range(th.shape[1]):
                theta[s, l, j] = th[l, j]
        for a in range(ptau.shape[1]):
            bias[s, a] = ptau[0, a]
            for c in range(pJIK.shape[2]):
                JIK[s, a, c] = pJIK[0, a, c]
    status[0] = 0


@_internal
def _input(tb, uc, t, out):
    """The actuator forces at time ``t`` from a piecewise cubic: breakpoints ``tb`` (K + 1,), the
    coefficients ``uc`` (4, K, n_act) of ``Σ_k uc[k, j] (t − tb[j])^(3−k)`` on piece ``j`` (scipy's
    ``PPoly``/``CubicSpline`` layout); outside ``[tb[0], tb[K]]`` the end pieces extend."""
    K = tb.shape[0] - 1
    lo, hi = 0, K - 1
    while lo < hi:  # the last piece whose start is <= t
        mid = (lo + hi + 1) // 2
        if tb[mid] <= t:
            lo = mid
        else:
            hi = mid - 1
    h = t - tb[lo]
    for a in range(out.shape[0]):
        out[a] = ((uc[0, lo, a] * h + uc[1, lo, a]) * h + uc[2, lo, a]) * h + uc[3, lo, a]


@_internal
def _set_state(R0, local0, axes, x, xd, pCd, pVp):
    """Platform pose and body-fixed twist of a translational task space (as
    :func:`pkm.kernels.batch.platform_states`): ``p = R_0 ℓ`` with ``ℓ = R_0ᵀ r_0`` whose
    components ``axes[i]`` are ``x[i]``, ``V_p = (0; ℓ̇)``; into pass row 0."""
    l0, l1, l2 = local0[0], local0[1], local0[2]
    v0 = v1 = v2 = 0.0
    for i in range(axes.shape[0]):
        a = axes[i]
        if a == 0:
            l0, v0 = x[i], xd[i]
        elif a == 1:
            l1, v1 = x[i], xd[i]
        else:
            l2, v2 = x[i], xd[i]
    for r in range(3):
        for c in range(3):
            pCd[0, r, c] = R0[r, c]
        pCd[0, r, 3] = R0[r, 0] * l0 + R0[r, 1] * l1 + R0[r, 2] * l2
        pCd[0, 3, r] = 0.0
    pCd[0, 3, 3] = 1.0
    pVp[0, 0] = pVp[0, 1] = pVp[0, 2] = 0.0
    pVp[0, 3], pVp[0, 4], pVp[0, 5] = v0, v1, v2


@_internal
def _stage(mi, mf, lay, Mp, d_static, dp_static, R0, local0, axes, tb, uc, g0, t, y, pCd, pVp, pdVp, pWee, u, th,
           pthd, pthdd, ptau, pJIK, plimbW, pplatW, bw, mat, vec, general, tol, max_iter, thresh, jik_thresh,
           status, thd, thdd, act_limb, act_var, dy, chord):
    """The right-hand side ``dy = (ẋ, ẍ, u·q̇_act + W^EE·V_p)`` of ``y = (x, ẋ, w)`` at time ``t`` (the
    work of the actuators and of the end-effector wrench in ``pWee[0]``)."""
    dp = axes.shape[0]
    _set_state(R0, local0, axes, y[:dp], y[dp:2 * dp], pCd, pVp)
    _input(tb, uc, t, u)
    if not _forward_state(mi, mf, lay, Mp, d_static, dp_static, pCd, pVp, pdVp, pWee, g0, u, th, pthd, pthdd, ptau,
                          pJIK, plimbW, pplatW, bw, mat, vec, general, tol, max_iter, thresh, jik_thresh, status,
                          dy[dp:2 * dp], thd, thdd, chord):
        return False
    power = 0.0  # the actuators' and the end-effector wrench's (W^EE · V_p, both body-fixed)
    for a in range(act_limb.shape[0]):
        power += u[a] * thd[act_limb[a], act_var[a]]
    for r in range(6):
        power += pWee[0, r] * pVp[0, r]
    for i in range(dp):
        dy[i] = y[dp + i]
    dy[2 * dp] = power
    return True


@_internal
def rk4_stage(stage, t, h, k1, k2, k3, k4):
    """Classical RK4's stage ``stage`` (0–3) of the step from ``t`` of length ``h``: the stage's time,
    the factor ``c`` of the slope ``kin`` it starts from (``y + c·kin``) and the slope ``out`` it fills
    (``k1 … k4``; ``y_{n+1} = y_n + h/6 (k1 + 2k2 + 2k3 + k4)``). Every form's RK4 kernel steps by it."""
    if stage == 0:
        return t, 0.0, k1, k1
    if stage == 1:
        return t + 0.5 * h, 0.5 * h, k1, k2
    if stage == 2:
        return t + 0.5 * h, 0.5 * h, k2, k3
    return t + h, h, k3, k4


@_internal
def _predict_start(th, thd, thdd, h, limit):
    """``θ + θ̇ h + θ̈ h²/2`` as the next IK start, unless it moves a variable by more than
    ``limit`` (then ``θ``, which stays on the branch)."""
    far = False
    for l in range(th.shape[0]):
        for j in range(th.shape[1]):
            far = far or not abs(h * (thd[l, j] + 0.5 * h * thdd[l, j])) <= limit
    if far:
        return
    for l in range(th.shape[0]):
        for j in range(th.shape[1]):
            th[l, j] += h * (thd[l, j] + 0.5 * h * thdd[l, j])


@_jit
def rk4_run(s_begin, s_end, n_steps, T, mi, mf, lay, Mp, d_static, dp_static, R0, local0, axes, tb, uc, g0, pCd, pVp,
            pdVp, pWee, pthd, pthdd, ptau, pJIK, plimbW, pplatW, th, bw, mat, vec, general, tol, max_iter, thresh,
            jik_thresh, act_limb, act_var, limit, Y, theta, rates, scratch, u, status):
    """Classical RK4 on ``y = (x, ẋ, w)`` (eq. 129–130 with ``V_t = ẋ``, and the actuator work
    ``ẇ = u·q̇_act``) over the step ends ``T`` (n_steps + 1): the passes ``s = s_begin … s_end − 1`` of
    the run's loop over ``s = 0 … n_steps`` (pass ``s < n_steps`` steps from ``T[s]`` to ``T[s + 1]``,
    pass ``n_steps`` only solves the end state), so that a run can be cut into chunks (a progress
    bar, bounded memory) with the bits of one call. Rows are relative to ``s_begin``: ``Y[0]`` holds
    the state at ``T[s_begin]`` on entry, ``Y[s − s_begin + 1]`` (2δ_p + 1) receives the state at
    ``T[s + 1]``, ``theta[s − s_begin]`` (L, n_max) the joint coordinates at ``T[s]`` (solved at the
    step's first stage). ``rates`` (2, L, n_max): the last stage's ``θ̇, θ̈``; ``scratch`` (6, 2δ_p + 1):
    the stages, the stage state and (``scratch[5, 0]``) the last stage's time; ``u`` (n_act): the
    forces. ``th`` holds the first IK start (a configuration of the branch); each later one is a
    Taylor prediction from the stage before (:func:`_predict_start`, at most ``limit`` per
    variable). ``th``, ``rates``, ``scratch`` and the pass arrays carry the run from one chunk to
    the next. On failure ``status[1]`` is the step whose stage failed (the state at ``T[status[1]]``
    is the last good)."""
    ny = Y.shape[1]
    k1, k2, k3, k4, ys = scratch[0], scratch[1], scratch[2], scratch[3], scratch[4]
    L, nmax = th.shape[0], th.shape[1]
    thd, thdd = rates[0], rates[1]
    last = T[0] if s_begin == 0 else scratch[5, 0]
    for s in range(s_begin, s_end):
        r = s - s_begin
        t = T[s]
        h = T[s + 1] - t if s < n_steps else 0.0
        y = Y[r]
        for stage in range(4 if s < n_steps else 1):
            ts, c, kin, out = rk4_stage(stage, t, h, k1, k2, k3, k4)
            for i in range(ny):
                ys[i] = y[i] + c * kin[i]
            if ts != last:
                _predict_start(th, thd, thdd, ts - last, limit)
            warm = s > 0 or stage > 0
            if not _stage(mi, mf, lay, Mp, d_static, dp_static, R0, local0, axes, tb, uc, g0, ts, ys, pCd, pVp,
                          pdVp, pWee, u, th, pthd, pthdd, ptau, pJIK, plimbW, pplatW, bw, mat, vec, general, tol,
                          max_iter, thresh, jik_thresh, status, thd, thdd, act_limb, act_var, out, warm):
                status[1] = s
                return
            last = ts
            if stage == 0:
                for l in range(L):
                    for j in range(nmax):
                        theta[r, l, j] = th[l, j]
        if s < n_steps:
            for i in range(ny):
                Y[r + 1, i] = y[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])
    scratch[5, 0] = last
    status[0] = 0
