"""Batched inverse kinematics + inverse dynamics of a PKM in one numba kernel (spec §11.2–11.3).

:func:`pack` flattens a :class:`pkm.robot.Robot` into padded arrays (limb ``l`` in row ``l``);
:func:`inverse_dynamics_kernel` then runs, for every sample of a trajectory and every limb,

1. the geometric IK (eq. 95–96): Newton in ``q_(l)`` with the 6-D pose error and ``L_p⁺`` (eq. 94),
   each step followed by Newton on the loop constraints (spec §6), warm-started from the previous
   sample;
2. the velocity and acceleration IK (eq. 86–88, corrected as in spec §8.3, ``Ḣq̇`` from ``Ġθ̇``);
3. the limb's recursive Newton–Euler dynamics ``φ_(l)`` (App. B) with the platform massless, and
   ``W̄_(l) = Fᵀ Hᵀ φ_(l)`` (eq. 144);

adds the platform's Newton–Euler residual (eq. 104–106) and solves ``J_IKᵀ u = Σ W̄ + P_pᵀ φ_p −
W_t^EE`` (eq. 140). The per-sample path allocates nothing: every scratch array is created once per
call. Errors cannot be raised with messages from inside numba, so the kernel stops at the first
failing sample and reports a status code that the Python wrapper turns into :class:`pkm.IKError` or
:class:`pkm.SingularityError`. It computes exactly what :mod:`pkm.manipulator` computes (tests
compare both to 1e-12).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import get_num_threads, njit, prange

import os

import numba

from pkm._linalg import inverse_into, norm1
from pkm.constraints import cut_bias_into, cut_jacobian_into, cut_residual_into
from pkm.dynamics import rnea_into
from pkm.kinematics import accelerations_into, jacobians_into, poses_into, relative_poses_into, twists_into
from pkm.lie import Ad_inv_apply_into, coad_apply_into, inv_se3_into, log_se3_into, mul_se3_into

OK, IK_FAILED, LOOP_FAILED, SINGULAR_GY, SINGULAR_LP, SINGULAR_JIK = 0, 1, 2, 3, 4, 5

# The parallel kernel must not break programs that fork afterwards (multiprocessing's default on
# Linux, process-pool sweeps): GNU OpenMP aborts a forked child. Unless the user chose a layer,
# ask numba for a fork-safe one (TBB if installed, else its built-in workqueue).
if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "forksafe"


@dataclass(frozen=True)
class Packed:
    """Padded per-limb arrays of a robot (see :func:`pack`); all numpy, ready for numba."""

    n: np.ndarray
    dof: np.ndarray
    plat: np.ndarray
    parent: np.ndarray
    X: np.ndarray
    B: np.ndarray
    M: np.ndarray
    qidx: np.ndarray
    qpos: np.ndarray
    nact: np.ndarray
    act: np.ndarray
    actpos: np.ndarray
    actoff: np.ndarray
    nloop: np.ndarray
    ck: np.ndarray
    cr: np.ndarray
    dk: np.ndarray
    dr: np.ndarray
    nn: np.ndarray
    ndir: np.ndarray
    ne: np.ndarray
    ek: np.ndarray
    er: np.ndarray
    c0: np.ndarray
    m: np.ndarray
    rows: np.ndarray
    yidx: np.ndarray
    P: np.ndarray
    Mp: np.ndarray

    def args(self):
        return (self.n, self.dof, self.plat, self.parent, self.X, self.B, self.M, self.qidx, self.qpos,
                self.nact, self.act, self.actpos, self.actoff, self.nloop, self.ck, self.cr, self.dk, self.dr,
                self.nn, self.ndir, self.ne, self.ek, self.er, self.c0, self.m, self.rows, self.yidx, self.P, self.Mp)


def pack(robot) -> Packed:
    """Flatten a robot's limbs into padded arrays for :func:`inverse_dynamics_kernel`."""
    from pkm.manipulator import dynamics_trees, platform_inertia

    limbs = robot.limbs
    L = len(limbs)
    nmax = max(l.n for l in limbs)
    dmax = max(l.dof for l in limbs)
    amax = max(max(len(l.actuated) for l in limbs), 1)
    lmax = max(max(len(l.loops) for l in limbs), 1)
    trees = dynamics_trees(robot)
    z = np.zeros
    out = dict(
        n=np.array([l.n for l in limbs], np.int64), dof=np.array([l.dof for l in limbs], np.int64),
        plat=np.array([l.platform for l in limbs], np.int64), parent=np.full((L, nmax), -1, np.int64),
        X=z((L, nmax, 6)), B=np.tile(np.eye(4), (L, nmax, 1, 1)), M=z((L, nmax, 6, 6)),
        qidx=z((L, dmax), np.int64), qpos=np.full((L, nmax), -1, np.int64),
        nact=np.array([len(l.actuated) for l in limbs], np.int64), act=z((L, amax), np.int64),
        actpos=z((L, amax), np.int64), actoff=z(L, np.int64), nloop=np.array([len(l.loops) for l in limbs], np.int64),
        ck=z((L, lmax), np.int64), cr=z((L, lmax), np.int64), dk=z((L, lmax, 3)), dr=z((L, lmax, 3)),
        nn=z((L, lmax), np.int64), ndir=z((L, lmax, 3, 3)), ne=z((L, lmax), np.int64), ek=z((L, lmax, 3, 3)),
        er=z((L, lmax, 3, 3)), c0=z((L, lmax, 3)), m=z((L, lmax), np.int64), rows=z((L, lmax, 6), np.int64),
        yidx=z((L, lmax, 6), np.int64), P=np.ascontiguousarray(robot.P_p), Mp=platform_inertia(robot),
    )
    off = 0
    for l, limb in enumerate(limbs):
        n = limb.n
        out["parent"][l, :n] = limb.tree.parent
        out["X"][l, :n] = limb.tree.X
        out["B"][l, :n] = limb.tree.B
        out["M"][l, :n] = trees[l].M
        out["qidx"][l, :limb.dof] = limb.q_index
        out["qpos"][l, limb.q_index] = np.arange(limb.dof)
        na = len(limb.actuated)
        out["act"][l, :na] = limb.actuated
        out["actpos"][l, :na] = [list(limb.q_index).index(a) for a in limb.actuated]
        out["actoff"][l] = off
        off += na
        for k, lp in enumerate(limb.loops):
            cj = lp.cut
            if cj.is_distance:
                raise NotImplementedError("distance constraints are not supported by the batch kernel")
            out["ck"][l, k], out["cr"][l, k] = cj.k, cj.r
            out["dk"][l, k], out["dr"][l, k] = cj.d_k, cj.d_r
            out["nn"][l, k] = len(cj.n)
            out["ndir"][l, k, :len(cj.n)] = cj.n
            out["ne"][l, k] = len(cj.c0)
            out["ek"][l, k, :len(cj.c0)] = cj.e_k
            out["er"][l, k, :len(cj.c0)] = cj.e_r
            out["c0"][l, k, :len(cj.c0)] = cj.c0
            out["m"][l, k] = lp.m
            out["rows"][l, k, :lp.m] = lp.rows
            out["yidx"][l, k, :lp.m] = lp.y
    return Packed(**out)


# ----------------------------------------------------------------------------- kernel pieces
@njit(cache=True)
def _fk(l, n, parent, B, X, th, T, C, w44):
    relative_poses_into(B[l, :n], X[l, :n], th[:n], T[:n], w44)
    poses_into(parent[l, :n], T[:n], C[:n])


@njit(cache=True)
def _loop_G(l, k, n, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, C, J, Gfull, G):
    """Selected rows of the loop's constraint Jacobian into G[:m, :n]."""
    mf = nn[l, k] + ne[l, k]
    cut_jacobian_into(ck[l, k], cr[l, k], dk[l, k], dr[l, k], ndir[l, k, :nn[l, k]], ek[l, k, :ne[l, k]],
                      er[l, k, :ne[l, k]], c0[l, k, :ne[l, k]], C[:n], J[:n, :, :n], Gfull[:mf, :n])
    for a in range(m[l, k]):
        for j in range(n):
            G[a, j] = Gfull[rows[l, k, a], j]


@njit(cache=True)
def _loop_g(l, k, n, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, C, gfull, g):
    mf = nn[l, k] + ne[l, k]
    cut_residual_into(ck[l, k], cr[l, k], dk[l, k], dr[l, k], ndir[l, k, :nn[l, k]], ek[l, k, :ne[l, k]],
                      er[l, k, :ne[l, k]], c0[l, k, :ne[l, k]], C[:n], gfull[:mf])
    err = 0.0
    for a in range(m[l, k]):
        g[a] = gfull[rows[l, k, a]]
        err = max(err, abs(g[a]))
    return err


@njit(cache=True)
def _gy_inverse(l, k, m, yidx, G, Gy, Gyi, wsq):
    mm = m[l, k]
    for a in range(mm):
        for b in range(mm):
            Gy[a, b] = G[a, yidx[l, k, b]]
    return inverse_into(Gy, mm, Gyi, wsq)


@njit(cache=True)
def _build_H(l, n, d, qidx, qpos, nloop, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, yidx, C, J,
             Gfull, G, Gy, Gyi, wsq, H, thresh):
    """H (n × d) at the current poses; returns the largest 1-norm condition number of the G_y (or inf)."""
    for i in range(n):
        for c in range(d):
            H[i, c] = 0.0
    for c in range(d):
        H[qidx[l, c], c] = 1.0
    worst = 0.0
    for k in range(nloop[l]):
        mm = m[l, k]
        _loop_G(l, k, n, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, C, J, Gfull, G)
        if not _gy_inverse(l, k, m, yidx, G, Gy, Gyi, wsq):
            return np.inf
        cond = norm1(Gy, mm, mm) * norm1(Gyi, mm, mm)
        worst = max(worst, cond)
        # y rows: −G_y⁻¹ G_q for every independent column the loop depends on
        for c in range(d):
            v = qidx[l, c]
            gq_any = False
            for a in range(mm):
                if G[a, v] != 0.0:
                    gq_any = True
            if not gq_any:
                continue
            for a in range(mm):
                s = 0.0
                for b in range(mm):
                    s += Gyi[a, b] * G[b, v]
                H[yidx[l, k, a], c] = -s
    return worst


@njit(cache=True)
def _close(l, n, parent, B, X, nloop, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, yidx, th, T, C, J,
           w44, Gfull, G, Gy, Gyi, wsq, gfull, g, tol, max_iter):
    """Newton on the dependent variables of every loop (q fixed) until max|g| ≤ tol."""
    for it in range(max_iter + 1):
        _fk(l, n, parent, B, X, th, T, C, w44)
        err = 0.0
        for k in range(nloop[l]):
            err = max(err, _loop_g(l, k, n, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, C, gfull, g))
        if err <= tol:
            return True
        if it == max_iter or not np.isfinite(err):
            return False
        jacobians_into(parent[l, :n], X[l, :n], T[:n], J[:n, :, :n])
        for k in range(nloop[l]):
            _loop_g(l, k, n, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, C, gfull, g)
            _loop_G(l, k, n, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, C, J, Gfull, G)
            if not _gy_inverse(l, k, m, yidx, G, Gy, Gyi, wsq):
                return False
            mm = m[l, k]
            big = 0.0
            for a in range(mm):
                s = 0.0
                for b in range(mm):
                    s -= Gyi[a, b] * g[b]
                gfull[a] = s
                big = max(big, abs(s))
            scale = 0.5 / big if big > 0.5 else 1.0
            for a in range(mm):
                th[yidx[l, k, a]] += scale * gfull[a]
    return False


@njit(cache=True)
def _gram_inverse(Lp, d, Gram, Grami, wsq):
    """(LᵀL)⁻¹ into Grami; returns sqrt of its 1-norm condition number (inf if singular)."""
    for a in range(d):
        for b in range(d):
            s = 0.0
            for r in range(6):
                s += Lp[r, a] * Lp[r, b]
            Gram[a, b] = s
    if not inverse_into(Gram, d, Grami, wsq):
        return np.inf
    return np.sqrt(norm1(Gram, d, d) * norm1(Grami, d, d))


@njit(cache=True)
def _pinv_apply(Lp, Grami, d, v, out):
    """out[:d] = (LᵀL)⁻¹ Lᵀ v."""
    for a in range(d):
        s = 0.0
        for b in range(d):
            t = 0.0
            for r in range(6):
                t += Lp[r, b] * v[r]
            s += Grami[a, b] * t
        out[a] = s


@njit(cache=True)
def _platform_L(p, n, d, J, H, Lp):
    for r in range(6):
        for c in range(d):
            s = 0.0
            for i in range(n):
                s += J[p, r, i] * H[i, c]
            Lp[r, c] = s


@njit(cache=True)
def _run_range(s_begin, s_end, n, dof, plat, parent, X, B, M, qidx, qpos, nact, act, actpos, actoff, nloop, ck, cr,
               dk, dr, nn, ndir, ne, ek, er, c0, m, rows, yidx, P, Mp,
               g0, Cd, Vp, dVp, Wee, dts, theta0, tol, max_iter, thresh,
               theta, thetad, thetadd, tau, JIK, limbW, platW, status):
    """IK + inverse dynamics over samples ``s_begin … s_end − 1`` (see the module docstring).

    ``dts[s] = t_s − t_{s−1}`` (0 where unknown): when positive, the start of sample ``s`` is the
    second-order Taylor prediction ``θ + θ̇ h + θ̈ h²/2`` from sample ``s − 1``, so that Newton's
    method usually needs one step instead of three.

    Inputs per sample: target platform pose ``Cd`` (N,4,4), platform twist ``Vp`` and its derivative
    ``dVp`` (N,6, body-fixed), end-effector wrench ``Wee`` (N,6). ``theta0`` (L, nmax) is the start
    of the first sample. Outputs: ``theta``, ``thetad``, ``thetadd`` (N, L, nmax), ``tau`` (N, n_act),
    ``JIK`` (N, n_act, δ_p), ``limbW`` (N, L, δ_p), ``platW`` (N, δ_p). ``status`` (4,) receives
    ``(code, sample, limb, value)``: code 0 = success; otherwise the first failure (IK/loop
    residual, or the condition number that exceeded ``thresh``).
    """
    L = n.shape[0]
    nmax = parent.shape[1]
    dmax = qidx.shape[1]
    dp = P.shape[1]
    T = np.empty((nmax, 4, 4))
    C = np.empty((nmax, 4, 4))
    J = np.zeros((nmax, 6, nmax))
    V = np.empty((nmax, 6))
    A = np.empty((nmax, 6))
    W = np.empty((nmax, 6))
    Wext = np.zeros((nmax, 6))
    phi = np.empty(nmax)
    zero = np.zeros(nmax)
    w44 = np.empty((4, 4))
    w44b = np.empty((4, 4))
    w6 = np.empty(6)
    w6b = np.empty(6)
    w26 = np.empty((2, 6))
    err6 = np.empty(6)
    Gfull = np.empty((6, nmax))
    G = np.empty((6, nmax))
    Gy = np.empty((6, 6))
    Gyi = np.empty((6, 6))
    wsq = np.empty((12, 12))
    gfull = np.empty(6)
    g = np.empty(6)
    H = np.empty((nmax, dmax))
    Lp = np.empty((6, dmax))
    Gram = np.empty((dmax, dmax))
    Grami = np.empty((dmax, dmax))
    dq = np.empty(dmax)
    qd = np.empty(dmax)
    qdd = np.empty(dmax)
    Hdqd = np.empty(nmax)
    F = np.empty((dmax, dp))
    th = np.empty((L, nmax))
    rhs = np.empty(dp)
    Jt = np.empty((dp, dp))
    Jti = np.empty((dp, dp))
    for l in range(L):
        for i in range(nmax):
            th[l, i] = theta0[l, i]
    for s in range(s_begin, s_end):
        for l in range(L):
            nl, d, p = n[l], dof[l], plat[l]
            t = th[l]
            if s == s_begin:  # later samples start from the previous, closed, solution
                if not _close(l, nl, parent, B, X, nloop, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, yidx, t,
                              T, C, J, w44, Gfull, G, Gy, Gyi, wsq, gfull, g, 1e-13, 30):
                    status[0], status[1], status[2], status[3] = LOOP_FAILED, s, l, np.nan
                    return
            else:
                h = dts[s]
                if h > 0.0:
                    for i in range(nl):
                        t[i] += h * (thetad[s - 1, l, i] + 0.5 * h * thetadd[s - 1, l, i])
                    if not _close(l, nl, parent, B, X, nloop, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, yidx,
                                  t, T, C, J, w44, Gfull, G, Gy, Gyi, wsq, gfull, g, 1e-13, 30):
                        for i in range(nl):  # the prediction failed: start from the previous sample
                            t[i] = theta[s - 1, l, i]
                        _fk(l, nl, parent, B, X, t, T, C, w44)
                else:
                    _fk(l, nl, parent, B, X, t, T, C, w44)
            # ---- geometric IK: Newton in q with the 6-D pose error (eq. 96)
            converged = False
            err = np.inf
            for it in range(max_iter + 1):
                inv_se3_into(C[p], w44)
                mul_se3_into(w44, Cd[s], w44b)
                log_se3_into(w44b, err6)
                err = np.sqrt(err6[0] * err6[0] + err6[1] * err6[1] + err6[2] * err6[2] + err6[3] * err6[3]
                              + err6[4] * err6[4] + err6[5] * err6[5])
                if err <= tol:
                    converged = True
                    break
                if it == max_iter or not np.isfinite(err):
                    break
                jacobians_into(parent[l, :nl], X[l, :nl], T[:nl], J[:nl, :, :nl])
                _build_H(l, nl, d, qidx, qpos, nloop, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, yidx, C, J,
                         Gfull, G, Gy, Gyi, wsq, H, thresh)
                _platform_L(p, nl, d, J, H, Lp)
                if not np.isfinite(_gram_inverse(Lp, d, Gram, Grami, wsq)):
                    break
                _pinv_apply(Lp, Grami, d, err6, dq)
                big = 0.0
                for c in range(d):
                    big = max(big, abs(dq[c]))
                scale = 0.5 / big if big > 0.5 else 1.0
                for i in range(nl):
                    s_ = 0.0
                    for c in range(d):
                        s_ += H[i, c] * dq[c]
                    t[i] += scale * s_
                if not _close(l, nl, parent, B, X, nloop, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, yidx,
                              t, T, C, J, w44, Gfull, G, Gy, Gyi, wsq, gfull, g, 1e-13, 30):
                    break
            if not converged:
                status[0], status[1], status[2], status[3] = IK_FAILED, s, l, err
                return
            # ---- H, L_p, F at the solution, with the singularity checks
            jacobians_into(parent[l, :nl], X[l, :nl], T[:nl], J[:nl, :, :nl])
            cg = _build_H(l, nl, d, qidx, qpos, nloop, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, yidx, C, J,
                          Gfull, G, Gy, Gyi, wsq, H, thresh)
            if not cg <= thresh:
                status[0], status[1], status[2], status[3] = SINGULAR_GY, s, l, cg
                return
            _platform_L(p, nl, d, J, H, Lp)
            cl = _gram_inverse(Lp, d, Gram, Grami, wsq)
            if not cl <= thresh:
                status[0], status[1], status[2], status[3] = SINGULAR_LP, s, l, cl
                return
            for c in range(dp):
                for r in range(6):
                    w6[r] = P[r, c]
                _pinv_apply(Lp, Grami, d, w6, w6b)
                for a in range(d):
                    F[a, c] = w6b[a]
            for a in range(nact[l]):
                for c in range(dp):
                    JIK[s, actoff[l] + a, c] = F[actpos[l, a], c]
            # ---- velocities (eq. 86–87) and accelerations (eq. 88, corrected)
            _pinv_apply(Lp, Grami, d, Vp[s], qd)
            td = thetad[s, l]
            for i in range(nl):
                acc = 0.0
                for c in range(d):
                    acc += H[i, c] * qd[c]
                td[i] = acc
            twists_into(parent[l, :nl], X[l, :nl], T[:nl], td[:nl], V[:nl])
            accelerations_into(parent[l, :nl], X[l, :nl], T[:nl], V[:nl], td[:nl], zero[:nl], A[:nl], w6)
            for i in range(nl):
                Hdqd[i] = 0.0
            for k in range(nloop[l]):
                mm = m[l, k]
                mf = nn[l, k] + ne[l, k]
                _loop_G(l, k, nl, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, C, J, Gfull, G)
                _gy_inverse(l, k, m, yidx, G, Gy, Gyi, wsq)
                cut_bias_into(ck[l, k], cr[l, k], dk[l, k], dr[l, k], ndir[l, k, :nn[l, k]], ek[l, k, :ne[l, k]],
                              er[l, k, :ne[l, k]], c0[l, k, :ne[l, k]], C[:nl], V[:nl], A[:nl], gfull[:mf])
                for a in range(mm):
                    g[a] = gfull[rows[l, k, a]]
                for a in range(mm):
                    acc = 0.0
                    for b in range(mm):
                        acc -= Gyi[a, b] * g[b]
                    Hdqd[yidx[l, k, a]] = acc
            for r in range(6):
                acc = dVp[s, r] - A[p, r]
                for i in range(nl):
                    acc -= J[p, r, i] * Hdqd[i]
                w6[r] = acc
            _pinv_apply(Lp, Grami, d, w6, qdd)
            tdd = thetadd[s, l]
            for i in range(nl):
                acc = Hdqd[i]
                for c in range(d):
                    acc += H[i, c] * qdd[c]
                tdd[i] = acc
            # ---- limb dynamics φ (App. B) and W̄ = Fᵀ Hᵀ φ (eq. 144)
            rnea_into(parent[l, :nl], X[l, :nl], T[:nl], M[l, :nl], td[:nl], tdd[:nl], g0, Wext[:nl], V[:nl],
                      A[:nl], W[:nl], phi[:nl], w26)
            for c in range(d):
                acc = 0.0
                for i in range(nl):
                    acc += H[i, c] * phi[i]
                qd[c] = acc  # reuse: Hᵀ φ
            for c in range(dp):
                acc = 0.0
                for a in range(d):
                    acc += F[a, c] * qd[a]
                limbW[s, l, c] = acc
            for i in range(nl):
                theta[s, l, i] = t[i]
        # ---- platform (eq. 104–106) and the actuator forces (eq. 140)
        for r in range(3):
            w6[r] = 0.0
            w6[3 + r] = g0[r]
        Ad_inv_apply_into(Cd[s], w6, w6b)  # gravity acceleration in F_p
        for r in range(6):
            acc = 0.0
            for c in range(6):
                acc += Mp[r, c] * (dVp[s, c] - w6b[c])
            err6[r] = acc  # M_p (V̇_p − Ad⁻¹(0; g))
        for r in range(6):
            acc = 0.0
            for c in range(6):
                acc += Mp[r, c] * Vp[s, c]
            w6[r] = acc
        coad_apply_into(Vp[s], w6, w6b)
        for r in range(6):
            err6[r] -= w6b[r] + Wee[s, r]
        for c in range(dp):
            acc = 0.0
            for r in range(6):
                acc += P[r, c] * err6[r]
            platW[s, c] = acc
            for l in range(L):
                acc += limbW[s, l, c]
            rhs[c] = acc
        for a in range(dp):
            for c in range(dp):
                Jt[a, c] = JIK[s, c, a]
        if not inverse_into(Jt, dp, Jti, wsq):
            status[0], status[1], status[2], status[3] = SINGULAR_JIK, s, -1, np.inf
            return
        cj = norm1(Jt, dp, dp) * norm1(Jti, dp, dp)
        if not cj <= thresh:
            status[0], status[1], status[2], status[3] = SINGULAR_JIK, s, -1, cj
            return
        for a in range(dp):
            acc = 0.0
            for c in range(dp):
                acc += Jti[a, c] * rhs[c]
            tau[s, a] = acc
    status[0] = OK


@njit(cache=True, parallel=True)
def inverse_dynamics_kernel(bounds, n, dof, plat, parent, X, B, M, qidx, qpos, nact, act, actpos, actoff, nloop, ck,
                            cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, yidx, P, Mp,
                            g0, Cd, Vp, dVp, Wee, dts, theta0, tol, max_iter, thresh,
                            theta, thetad, thetadd, tau, JIK, limbW, platW, status):
    """The samples split into chunks ``bounds[c] … bounds[c+1] − 1``, run in parallel (``prange``).

    Chunk ``c`` starts from ``theta0[c]`` (L, nmax) and reports into ``status[c]`` (4,):
    ``(code, sample, limb, value)``, code 0 = success. Scratch arrays are allocated once per chunk.
    """
    for c in prange(bounds.shape[0] - 1):
        _run_range(bounds[c], bounds[c + 1], n, dof, plat, parent, X, B, M, qidx, qpos, nact, act, actpos, actoff,
                   nloop, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, yidx, P, Mp, g0, Cd, Vp, dVp, Wee,
                   dts, theta0[c], tol, max_iter, thresh, theta, thetad, thetadd, tau, JIK, limbW, platW, status[c])


# ----------------------------------------------------------------------------- Python wrapper
def platform_states(robot, X, XD, XDD):
    """Target platform poses ``C_p`` (N,4,4), twists ``V_p`` and ``V̇_p`` (N,6) for task samples.

    Vectorised when the task space has no rotational component (the platform keeps ``R_0``):
    ``V_p = (0; R_0ᵀ R_0 ṗ) = (0; ṗ)`` in the platform's reference axes.
    """
    N = X.shape[0]
    if not robot._rot:
        local = np.tile(robot.R0.T @ robot.r0, (N, 1))
        vel = np.zeros((N, 3))
        acc = np.zeros((N, 3))
        for i, c in enumerate(robot.task.components):
            axis = "xyz".index(c[1])
            local[:, axis] = X[:, i]
            vel[:, axis] = XD[:, i]
            acc[:, axis] = XDD[:, i]
        Cd = np.tile(np.eye(4), (N, 1, 1))
        Cd[:, :3, :3] = robot.R0
        Cd[:, :3, 3] = local @ robot.R0.T
        zero = np.zeros((N, 3))
        return Cd, np.hstack([zero, vel]), np.hstack([zero, acc])
    Cd = np.array([robot.platform_pose(x) for x in X])
    pairs = [robot.platform_twist(x, xd, xdd) for x, xd, xdd in zip(X, XD, XDD)]
    return Cd, np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])


#: Fewest samples per parallel chunk.
MIN_CHUNK = 256


def inverse_dynamics_batch(robot, X, XD, XDD, wrench=None, gravity=None, *, tol=1e-12, max_iter=50,
                           singularity_threshold=1e8, start=None, threads=None, t=None):
    """Run :func:`inverse_dynamics_kernel` on samples ``X, XD, XDD`` (N, δ_p); see Robot.inverse_dynamics.

    ``start``: per-limb tree variables to warm-start the first sample (default: an IK solve of the
    first sample with continuation from the reference configuration). ``threads``: number of
    chunks run in parallel (default: numba's thread count; chunks have at least ``MIN_CHUNK``
    samples, each warm-started by a separate IK solve of its first sample). ``t``: sample times
    (N,), optional; with them each sample starts from a Taylor prediction. Returns the raw arrays
    ``(theta, thetad, thetadd, tau, JIK, limbW, platW)``.
    """
    from pkm.errors import IKError, SingularityError

    if robot.n_act != robot.task_dof:
        raise NotImplementedError(f"{robot.name}: {robot.n_act} actuators for {robot.task_dof} task coordinates; "
                                  "redundant or deficient actuation is not supported")
    pk = robot._packed()
    N = X.shape[0]
    L, nmax = pk.parent.shape
    g0 = np.asarray(robot.spec.gravity if gravity is None else gravity, dtype=float)
    Wee = np.zeros((N, 6)) if wrench is None else np.ascontiguousarray(np.broadcast_to(np.asarray(wrench, float), (N, 6)))
    Cd, Vp, dVp = platform_states(robot, X, XD, XDD)
    dts = np.zeros(N)
    if t is not None:
        t = np.asarray(t, dtype=float)
        if t.shape != (N,) or not np.all(np.isfinite(t)):
            raise ValueError(f"t must be {N} finite sample times, got shape {t.shape}")
        dts[1:] = np.maximum(np.diff(t), 0.0)
    chunks = max(1, min(get_num_threads() if threads is None else int(threads), N // MIN_CHUNK))
    bounds = np.linspace(0, N, chunks + 1).round().astype(np.int64)
    theta0 = np.zeros((chunks, L, nmax))
    if start is None:
        first = robot.inverse_kinematics(X[bounds[:-1]], tol=tol, max_iter=max_iter,
                                         singularity_threshold=singularity_threshold)
        starts = [[first.joints[l.name][c] for l in robot.limbs] for c in range(chunks)]
    else:
        starts = [start] + ([] if chunks == 1 else
                            [[robot.inverse_kinematics(X[b], tol=tol).joints[l.name][0] for l in robot.limbs]
                             for b in bounds[1:-1]])
    for c in range(chunks):
        for l, limb in enumerate(robot.limbs):
            theta0[c, l, :limb.n] = starts[c][l]
    dp = robot.task_dof
    theta = np.zeros((N, L, nmax))
    thetad = np.zeros((N, L, nmax))
    thetadd = np.zeros((N, L, nmax))
    tau = np.empty((N, robot.n_act))
    JIK = np.empty((N, robot.n_act, dp))
    limbW = np.empty((N, L, dp))
    platW = np.empty((N, dp))
    statuses = np.zeros((chunks, 4))
    if chunks == 1:  # no threading layer involved: safe from any thread or forked process
        _run_range(0, N, *pk.args(), g0, Cd, Vp, dVp, Wee, dts, theta0[0], float(tol), int(max_iter),
                   float(singularity_threshold), theta, thetad, thetadd, tau, JIK, limbW, platW, statuses[0])
    else:
        inverse_dynamics_kernel(bounds, *pk.args(), g0, Cd, Vp, dVp, Wee, dts, theta0, float(tol), int(max_iter),
                                float(singularity_threshold), theta, thetad, thetadd, tau, JIK, limbW, platW, statuses)
    failed = [c for c in range(chunks) if statuses[c, 0] != OK]
    status = statuses[failed[0]] if failed else statuses[0]
    code, s, l, value = int(status[0]), int(status[1]), int(status[2]), status[3]
    if code != OK:
        where = f"sample {s} (x = {np.array2string(X[s], precision=6)})"
        limb = robot.limbs[l].name if l >= 0 else None
        if code in (IK_FAILED, LOOP_FAILED):
            what = "no inverse-kinematics solution" if code == IK_FAILED else "the loops cannot be closed"
            raise IKError(f"limb {limb!r}: {what} at {where}: residual {value:.3e} after {max_iter} Newton iterations "
                          "(target unreachable?)", limb=limb, residual=float(value), iterations=max_iter)
        what = {SINGULAR_GY: f"limb {limb!r}: G_y", SINGULAR_LP: f"limb {limb!r}: the platform Jacobian L_p",
                SINGULAR_JIK: "the IK Jacobian J_IK"}[code]
        raise SingularityError(f"{what} is ill conditioned at {where} (condition number {value:.3e} > "
                               f"{singularity_threshold:.1e})", condition=float(value), threshold=singularity_threshold)
    return theta, thetad, thetadd, tau, JIK, limbW, platW
