"""The batch as one numba ``prange`` over the members (the alternative to :mod:`pkm.sim.batch`'s thread
pool, measured by ``bench_batch_sim.py --prange``): every member's whole RK4
(:func:`pkm.kernels.forward.rk4_run`) inside one parallel numba function, each numba thread on its
own copy of the kernel's scratch (indexed by ``numba.get_thread_id()``); only the final state is
kept (no health bookkeeping: this is the kernel's share of the batch alone)."""
from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from pkm.kernels.forward import rk4_run
from pkm.kernels.inverse_dynamics import PREDICT_LIMIT
from pkm.sim.forward import ForwardKernel
from pkm.sim.task import translational_axes


@njit(parallel=True, nogil=True)
def _batch(n, T, mi, MF, lay, MP, which, d_static, dp_static, R0, local0, axes, tb, uc, g0, P0, P1, P2, P3, P4, P5,
           P6, P7, P8, P9, TH, BW, MAT, VEC, general, tol, max_iter, thresh, jik, act_limb, act_var, limit, Y, THETA,
           RATES, SCR, U, ST, Y0, TH0, final, codes):
    for b in prange(Y0.shape[0]):
        k = numba.get_thread_id()
        TH[k, :, :] = TH0
        RATES[k, :, :, :] = 0.0
        SCR[k, :, :] = 0.0
        ST[k, 0] = -1.0
        Y[k, 0, :] = Y0[b]
        w = which[b]
        rk4_run(0, n + 1, n, T, mi, MF[w], lay, MP[w], d_static, dp_static, R0, local0, axes, tb, uc, g0, P0[k],
                P1[k], P2[k], P3[k], P4[k], P5[k], P6[k], P7[k], P8[k], P9[k], TH[k], BW[k], MAT[k], VEC[k], general,
                tol, max_iter, thresh, jik, act_limb, act_var, limit, Y[k], THETA[k], RATES[k], SCR[k], U[k], ST[k])
        final[b, :] = Y[k, n]
        codes[b] = ST[k, 0]


def run(robot, variants, which, pp, T, X0, XD0):
    """Final states (B, 2δ_p + 1) and kernel status codes (B,) of every member (a member's robot:
    ``variants[which[b]]``, robots of one structure)."""
    threads = numba.get_num_threads()
    k = ForwardKernel(robot, None, hold=False)
    km = robot._packed()
    stack = lambda a: np.ascontiguousarray(np.broadcast_to(a, (threads,) + a.shape))   # noqa: E731
    passes = [stack(a) for a in k.passes]
    work = [stack(a) for a in k.work]
    L, nmax = k.th.shape
    d = robot.task_dof
    n = len(T) - 1
    Y, THETA = np.empty((threads, n + 1, 2 * d + 1)), np.empty((threads, n + 1, L, nmax))
    RATES, SCR, U, ST = (np.zeros((threads, 2, L, nmax)), np.zeros((threads, 6, 2 * d + 1)),
                         np.zeros((threads, robot.n_act)), np.zeros((threads, 4)))
    MF = np.ascontiguousarray(np.stack([v._packed().mf for v in variants]))
    MP = np.ascontiguousarray(np.stack([v._packed().Mp for v in variants]))
    Y0 = np.ascontiguousarray(np.column_stack([X0, XD0, np.zeros(len(X0))]))
    TH0 = k.th.copy()
    final, codes = np.empty_like(Y0), np.empty(len(X0))
    tb, uc = pp
    _batch(n, np.ascontiguousarray(T), km.mi, MF, km.lay, MP, np.asarray(which, dtype=np.int64), km.d_static,
           km.dp_static, robot.R0, robot.R0.T @ robot.r0, translational_axes(robot), tb, uc, k.g0, *passes, *work,
           k.general, *k.args, k.jik, robot._act_limb.astype(np.int64), robot._act_var.astype(np.int64),
           PREDICT_LIMIT, Y, THETA, RATES, SCR, U, ST, Y0, TH0, final, codes)
    return final, codes
