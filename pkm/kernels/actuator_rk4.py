"""The fixed-step RK4 of the actuator-coordinate form (paper 8.1.3) entirely in numba, under forces
given as a piecewise cubic in time (:func:`pkm.kernels.forward._input`: constants and tables), on the
state kernel :func:`pkm.kernels.actuator_form._state` — as :func:`pkm.kernels.forward.rk4_run` for
the task form.
"""
from __future__ import annotations

import numpy as np

from pkm.kernels.actuator_form import _keep, _predict, _state
from pkm.kernels.forward import _input, rk4_stage
from pkm.kernels.model import BF_JT, BF_SIZE, LI_N
from pkm.kernels.work import _internal, _jit

__all__ = ["actuator_rk4"]


@_internal
def _friction_power(mi, mf, thd):
    """The power the joints' friction dissipates (:func:`pkm.algorithms.dynamics.dissipated_power`)."""
    out = 0.0
    for l in range(mi.shape[0]):
        for i in range(mi[l, LI_N]):
            o = BF_SIZE * i + BF_JT
            qd = thd[l, i]
            f = mf[l, o + 1] * qd
            if mf[l, o + 2] != 0.0:
                f += mf[l, o + 2] * np.tanh(qd / mf[l, o + 3])
            out += qd * f
    return out


@_jit
def actuator_rk4(n_steps, T, y0, tb, uc, limit, mi, mf, lay, Mp, ix, K, Kv, R, g0, Wee, th, bwL, matL, vecL, Cd, A,
                 N, Lf, res, dx, Z, Theta, thd, thdd, Ma, sv, general, tol, max_iter, Y, theta, scratch, u, status):
    """Classical RK4 on ``y = (θ_act, θ̇_act, w, w_f)`` (the actuators' and the wrench's work ``w``, the
    friction's dissipated energy ``w_f``) from ``y0`` over the step ends ``T`` (n_steps + 1), forces
    from the piecewise cubic ``(tb, uc)``. Writes ``Y`` (n_steps + 1, 2 n_act + 2) and the tree
    variables ``theta`` (n_steps + 1, L, n_max) at the step ends; ``scratch`` (5, 2 n_act + 2). Each
    assembly starts from a prediction from the last one (at most ``limit`` per variable,
    :func:`pkm.kernels.actuator_form._predict`). On failure ``status[1]`` is the failing step."""
    ny, na = y0.shape[0], u.shape[0]
    sv[4, 1] = 0.0
    k1, k2, k3, k4, ys = scratch[0], scratch[1], scratch[2], scratch[3], scratch[4]
    for i in range(ny):
        Y[0, i] = y0[i]
    last = T[0]
    for s in range(n_steps + 1):
        t = T[s]
        h = T[s + 1] - t if s < n_steps else 0.0
        y = Y[s]
        for stage in range(4 if s < n_steps else 1):
            ts, c, kin, out = rk4_stage(stage, t, h, k1, k2, k3, k4)
            for i in range(ny):
                ys[i] = y[i] + c * kin[i]
            if s > 0 or stage > 0:
                _predict(mi, th, thd, thdd, Theta, sv, ys[:na], ts - last, limit)
            _input(tb, uc, ts, u)
            if not _state(mi, mf, lay, Mp, ix, K, Kv, R, ys[:na], ys[na:2 * na], u, g0, Wee, th, bwL, matL, vecL, Cd,
                          A, N, Lf, res, dx, Z, Theta, thd, thdd, Ma, sv, general, tol, max_iter, status):
                status[1] = s
                sv[4, 2] = 0.0
                return
            last = ts
            _keep(sv, ys[:na], ys[na:2 * na])
            sv[4, 1] += res[R]   # the assembly's Newton iterations, summed over the run
            power = 0.0
            for a in range(na):
                out[a] = ys[na + a]
                out[na + a] = sv[0, a]
                power += u[a] * ys[na + a]
            for r in range(6):
                power += Wee[r] * sv[2, r]
            out[2 * na] = power
            out[2 * na + 1] = _friction_power(mi, mf, thd)
            if stage == 0:
                for l in range(th.shape[0]):
                    for j in range(th.shape[1]):
                        theta[s, l, j] = th[l, j]
        if s < n_steps:
            for i in range(ny):
                Y[s + 1, i] = y[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])
    status[0] = 0
