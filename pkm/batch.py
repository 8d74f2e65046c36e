"""Batched inverse kinematics + inverse dynamics of a PKM in one numba kernel (spec §11.2–11.3).

:func:`pack` flattens a :class:`pkm.robot.Robot` into padded arrays (limb ``l`` in row ``l``);
:func:`inverse_dynamics_kernel` then runs, for every sample of a trajectory and every limb,

1. the geometric IK (eq. 95–96 with the loop constraints, spec §6): Gauss–Newton on all tree
   variables of the limb at once (:func:`_solve_ik`), or, for a limb whose loop closure is affine
   (constant ``H``, e.g. the Delta's parallelogram, spec §4.7), Gauss–Newton in ``q_(l)`` alone
   (:func:`_solve_ik_affine`); started from a Taylor prediction or from the previous sample;
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

from pkm._linalg import cholesky_solve_into, inverse_into, norm1
from pkm.constraints import cut_bias_into, cut_jacobian_into, cut_residual_into
from pkm.dynamics import rnea_into
from pkm.kinematics import accelerations_into, poses_into, relative_poses_into, twists_into
from pkm._small import Ad, Ad_inv, get6, get_pose, mtm, mtv, set6, set_pose, sub, unowned
from pkm.lie import Ad_inv_apply_into, coad_apply_into, log_se3_into

OK, IK_FAILED, LOOP_FAILED, SINGULAR_GY, SINGULAR_LP, SINGULAR_JIK = 0, 1, 2, 3, 4, 5

#: Loop residual (max |g|) at which the kernel's IK counts the loops as closed.
LOOP_TOL = 1e-13

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
    anc: np.ndarray
    njb: np.ndarray
    jbod: np.ndarray
    aff: np.ndarray
    Hc: np.ndarray
    cc: np.ndarray

    def args(self):
        return (self.n, self.dof, self.plat, self.parent, self.X, self.B, self.M, self.qidx, self.qpos,
                self.nact, self.act, self.actpos, self.actoff, self.nloop, self.ck, self.cr, self.dk, self.dr,
                self.nn, self.ndir, self.ne, self.ek, self.er, self.c0, self.m, self.rows, self.yidx, self.P, self.Mp,
                self.anc, self.njb, self.jbod, self.aff, self.Hc, self.cc)


def pack(robot, affine: bool = True) -> Packed:
    """Flatten a robot's limbs into padded arrays for :func:`inverse_dynamics_kernel`.

    ``affine``: use the constant-H path for limbs whose loop closure is affine
    (:meth:`pkm.limb.LimbModel.affine_closure`; ``aff[l]``, ``H = Hc[l]``, ``θ = H q + cc[l]``).
    ``False`` forces the general path everywhere (the tests compare the two).
    """
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
        anc=z((L, nmax, nmax), np.bool_), njb=z(L, np.int64), jbod=z((L, 1 + 2 * lmax), np.int64),
        aff=z(L, np.bool_), Hc=z((L, nmax, dmax)), cc=z((L, nmax)),
    )
    off = 0
    for l, limb in enumerate(limbs):
        n = limb.n
        out["parent"][l, :n] = limb.tree.parent
        out["X"][l, :n] = limb.tree.X
        out["B"][l, :n] = limb.tree.B
        out["M"][l, :n] = trees[l].M
        for i in range(n):  # anc[l, i, j]: joint j lies on the path from the ground to body i
            j = i
            while j >= 0:
                out["anc"][l, i, j] = True
                j = limb.tree.parent[j]
        needed = [limb.platform] + sorted({b for lp in limb.loops for b in (lp.cut.k, lp.cut.r) if b >= 0}
                                          - {limb.platform})
        out["njb"][l] = len(needed)
        out["jbod"][l, :len(needed)] = needed
        out["qidx"][l, :limb.dof] = limb.q_index
        closure = limb.affine_closure(LOOP_TOL) if affine else None
        if closure is not None:
            out["aff"][l] = True
            out["Hc"][l, :n, :limb.dof], out["cc"][l, :n] = closure
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
# Pieces take the packed arrays whole, with the limb index ``l``, and never slice inside a loop over
# bodies: an array view passed to a call costs an atomic reference-count pair (see pkm._small).
@njit(cache=True, inline="always")
def _fk(l, n, parent, B, X, th, T, C):
    """``T_i`` and ``C_i`` of limb ``l`` at ``θ = th`` (eq. 1–2, body-fixed form of spec §3.1)."""
    relative_poses_into(B[l, :n], X[l, :n], th[:n], T[:n], T[0])
    poses_into(parent[l, :n], T[:n], C[:n])


@njit(cache=True, inline="always")
def _jacobian_rows(l, n, X, C, anc, nb, jbod, S, J):
    """Body-fixed Jacobians of the bodies ``jbod[l, :nb]`` only (``jbod[l, 0]`` is the platform, then
    the cut bodies).

    ``S_j = Ad_{C_j} ^jX_j`` are the joint screws in the world frame (eq. 154), so that
    ``J_{i,j} = Ad_{C_i}^{-1} S_j`` for ``j ⪯ i`` and 0 otherwise (eq. 155–156 without the recursion
    over every body): n + Σ_i depth(i) screw transformations instead of n².
    """
    for j in range(n):
        R, r = get_pose(C, j)
        w, v = Ad(R, r, (X[l, j, 0], X[l, j, 1], X[l, j, 2]), (X[l, j, 3], X[l, j, 4], X[l, j, 5]))
        set6(S, j, w, v)
    for a in range(nb):
        i = jbod[l, a]
        R, r = get_pose(C, i)
        for j in range(n):
            if anc[l, i, j]:
                sw, sv = get6(S, j)
                w, v = Ad_inv(R, r, sw, sv)
                J[i, 0, j], J[i, 1, j], J[i, 2, j] = w
                J[i, 3, j], J[i, 4, j], J[i, 5, j] = v
            else:
                for c in range(6):
                    J[i, c, j] = 0.0


@njit(cache=True, inline="always")
def _loops_G(l, n, nloop, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, C, J, Gfull, Gs):
    """The loops' selected constraint rows ``G`` (eq. 13, 32, 41) stacked into ``Gs[:Σm, :n]``."""
    row = 0
    for k in range(nloop[l]):
        mf = nn[l, k] + ne[l, k]
        cut_jacobian_into(ck[l, k], cr[l, k], dk[l, k], dr[l, k], ndir[l, k, :nn[l, k]], ek[l, k, :ne[l, k]],
                          er[l, k, :ne[l, k]], c0[l, k, :ne[l, k]], C[:n], J[:n, :, :n], Gfull[:mf, :n])
        for a in range(m[l, k]):
            for j in range(n):
                Gs[row, j] = Gfull[rows[l, k, a], j]
            row += 1


@njit(cache=True, inline="always")
def _build_H(l, n, d, qidx, nloop, m, yidx, Gs, Gy, Gyi, wsq, H):
    """H (n × d, eq. 48) from the stacked loop rows ``Gs``: ``H_q = I``, ``H_y = −G_y⁻¹ G_q`` per loop.

    ``Gyi[k]`` keeps ``G_y⁻¹`` of loop ``k`` for ``Ḣq̇``. Returns the largest 1-norm condition number
    of the ``G_y`` (inf if one is singular).
    """
    for i in range(n):
        for c in range(d):
            H[i, c] = 0.0
    for c in range(d):
        H[qidx[l, c], c] = 1.0
    worst = 0.0
    row = 0
    for k in range(nloop[l]):
        mm = m[l, k]
        for a in range(mm):
            for b in range(mm):
                Gy[a, b] = Gs[row + a, yidx[l, k, b]]
        if not inverse_into(Gy, mm, Gyi[k], wsq):
            return np.inf
        worst = max(worst, norm1(Gy, mm, mm) * norm1(Gyi[k], mm, mm))
        for c in range(d):  # y rows: −G_y⁻¹ G_q for every independent column the loop depends on
            v = qidx[l, c]
            for a in range(mm):
                s = 0.0
                for b in range(mm):
                    s += Gyi[k, a, b] * Gs[row + b, v]
                H[yidx[l, k, a], c] = -s
        row += mm
    return worst


@njit(cache=True, inline="always")
def _pose_error(p, C, Cd, sd, w44, res):
    """``res[:6] = log(C_p⁻¹ C_d)`` (eq. 96) with ``C_d = Cd[sd]``; returns its norm. ``w44``: (1, 4, 4)."""
    Rp, rp = get_pose(C, p)
    Rd, rd = get_pose(Cd, sd)
    set_pose(w44, 0, mtm(Rp, Rd), mtv(Rp, sub(rd, rp)))
    log_se3_into(w44[0], res)
    perr = 0.0
    for r in range(6):
        perr += res[r] * res[r]
    return np.sqrt(perr)


@njit(cache=True, inline="always")
def _ik_residual(l, n, p, nloop, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, C, Cd, sd, w44, gfull, res):
    """Stacked IK residual ``res = (log(C_p⁻¹ C_d); −g_1; …)`` (eq. 96 and the loops' selected rows),
    ``C_d = Cd[sd]``; ``w44`` is a (1, 4, 4) scratch.

    Returns ``(|pose error|, max |g|)`` and the number of rows used.
    """
    perr = _pose_error(p, C, Cd, sd, w44, res)
    gerr, row = _loop_residuals(l, n, nloop, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, C, gfull, res, 6)
    return perr, gerr, row


@njit(cache=True, inline="always")
def _loop_residuals(l, n, nloop, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, C, gfull, res, row):
    """The loops' selected residuals ``−g`` into ``res[row:]`` (eq. 12); returns ``(max |g|, next row)``."""
    gerr = 0.0
    for k in range(nloop[l]):
        mf = nn[l, k] + ne[l, k]
        cut_residual_into(ck[l, k], cr[l, k], dk[l, k], dr[l, k], ndir[l, k, :nn[l, k]], ek[l, k, :ne[l, k]],
                          er[l, k, :ne[l, k]], c0[l, k, :ne[l, k]], C[:n], gfull[:mf])
        for a in range(m[l, k]):
            v = gfull[rows[l, k, a]]
            res[row] = -v
            gerr = max(gerr, abs(v))
            row += 1
    return gerr, row


@njit(cache=True, inline="always")
def _take_step(x, dx, k):
    """``x[:k] += dx[:k]``, scaled so that no component moves more than 0.5 (rad or m) at once
    (as :func:`pkm.limb._limit`)."""
    big = 0.0
    for j in range(k):
        big = max(big, abs(dx[j]))
    scale = 0.5 / big if big > 0.5 else 1.0
    for j in range(k):
        x[j] += scale * dx[j]


@njit(cache=True)
def _solve_ik(l, n, p, parent, B, X, nloop, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, anc, njb, jbod,
              Cd, sd, th, T, C, J, S, w44, Gfull, Gs, res, Nm, wsq, dth, gfull, tol, loop_tol, max_iter):
    """Geometric IK of limb ``l`` by Gauss–Newton on all its tree variables at once.

    The unknowns are the limb's tree variables ``θ``; the equations are the platform pose error
    (eq. 96, ``J_p Δθ = log(C_p⁻¹C_d)``) stacked on the loops' selected constraint rows
    (``G Δθ = −g``, eq. 12–13). At a regular configuration ``[J_p; G]`` has full column rank
    (``G`` has rank ``m``, ``L_p = J_p H`` rank ``δ_l``) and the system is consistent, so
    Gauss–Newton converges quadratically, as Newton in ``q`` with the loops closed after every step
    (spec §6, §7.2) does, to the same solution, but with one forward kinematics per step and the
    Jacobians of the platform and the cut bodies only. Steps are scaled to ``max |Δθ| ≤ 0.5``.
    Stops when the pose error is ≤ ``tol`` and every loop residual ≤ ``loop_tol``; ``T``, ``C``,
    the Jacobians ``J`` of the platform and cut bodies and the stacked loop rows ``Gs`` then hold
    the solution's values. Returns ``(converged, pose error, loop error)``.
    """
    perr = np.inf
    gerr = np.inf
    for it in range(max_iter + 1):
        _fk(l, n, parent, B, X, th, T, C)
        perr, gerr, nr = _ik_residual(l, n, p, nloop, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, C, Cd,
                                      sd, w44, gfull, res)
        if not (np.isfinite(perr) and np.isfinite(gerr)):
            break
        _jacobian_rows(l, n, X, C, anc, njb[l], jbod, S, J)
        _loops_G(l, n, nloop, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, C, J, Gfull, Gs)
        if perr <= tol and gerr <= loop_tol:
            return True, perr, gerr
        if it == max_iter:
            break
        # normal equations AᵀA Δθ = Aᵀ res with A = [J_p; Gs]
        for a in range(n):
            for b in range(a + 1):
                s = 0.0
                for r in range(6):
                    s += J[p, r, a] * J[p, r, b]
                for r in range(nr - 6):
                    s += Gs[r, a] * Gs[r, b]
                Nm[a, b] = s
                Nm[b, a] = s
            s = 0.0
            for r in range(6):
                s += J[p, r, a] * res[r]
            for r in range(nr - 6):
                s += Gs[r, a] * res[6 + r]
            res[nr + a] = s
        if not cholesky_solve_into(Nm, n, res[nr:nr + n], dth, wsq):
            break
        _take_step(th, dth, n)
    return False, perr, gerr


@njit(cache=True)
def _solve_ik_affine(l, n, d, p, parent, B, X, qidx, Hc, cc, nloop, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows,
                     anc, jbod, Cd, sd, th, T, C, J, S, w44, gfull, res, Lp, Nm, wsq, qv, dq, tol, loop_tol, max_iter):
    """Geometric IK of a limb whose loop closure is affine, ``θ = H q + c`` with constant ``H = Hc[l]``
    (:meth:`pkm.limb.LimbModel.affine_closure`, e.g. the Delta's parallelogram, spec §4.7).

    Gauss–Newton in the limb's generalized coordinates ``q`` only, on the platform pose error:
    ``L_p Δq = log(C_p⁻¹C_d)`` with ``L_p = J_p H`` (eq. 80, 96), started from ``q = θ[qidx]``
    of the given ``th``. No loop Jacobian, ``G_y⁻¹`` or loop Newton is needed: every iterate
    closes the loops. At the converged point the loops' selected residuals are still evaluated
    and must be ≤ ``loop_tol`` (the affine closure is checked, not assumed). On success ``th``,
    ``T``, ``C``, the platform Jacobian ``J[p]`` and ``Lp`` hold the solution's values. Returns
    ``(converged, pose error, loop error)`` like :func:`_solve_ik`.
    """
    for a in range(d):
        qv[a] = th[qidx[l, a]]
    perr = np.inf
    gerr = np.inf
    for it in range(max_iter + 1):
        for i in range(n):
            acc = cc[l, i]
            for a in range(d):
                acc += Hc[l, i, a] * qv[a]
            th[i] = acc
        _fk(l, n, parent, B, X, th, T, C)
        perr = _pose_error(p, C, Cd, sd, w44, res)
        if not np.isfinite(perr):
            break
        _jacobian_rows(l, n, X, C, anc, 1, jbod, S, J)
        _platform_L(p, n, d, J, Hc[l], Lp)
        if perr <= tol:  # the loops' residuals land in res[6:], unused from here on
            gerr, _ = _loop_residuals(l, n, nloop, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, C, gfull, res, 6)
            return gerr <= loop_tol, perr, gerr
        if it == max_iter:
            break
        for a in range(d):  # normal equations L_pᵀL_p Δq = L_pᵀ res
            for b in range(a + 1):
                acc = 0.0
                for r in range(6):
                    acc += Lp[r, a] * Lp[r, b]
                Nm[a, b] = acc
                Nm[b, a] = acc
            acc = 0.0
            for r in range(6):
                acc += Lp[r, a] * res[r]
            res[6 + a] = acc
        if not cholesky_solve_into(Nm, d, res[6:6 + d], dq, wsq):
            break
        _take_step(qv, dq, d)
    return False, perr, gerr


@njit(cache=True)
def _solve_limb(l, n, d, p, parent, B, X, qidx, aff, Hc, cc, nloop, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows,
                anc, njb, jbod, Cd, sd, th, T, C, J, S, w44, Gfull, Gs, res, Nm, wsq, dth, gfull, Lp, qv, tol,
                loop_tol, max_iter):
    """The limb's IK by :func:`_solve_ik_affine` when ``aff[l]``, else by :func:`_solve_ik`."""
    if aff[l]:
        return _solve_ik_affine(l, n, d, p, parent, B, X, qidx, Hc, cc, nloop, ck, cr, dk, dr, nn, ndir, ne, ek, er,
                                c0, m, rows, anc, jbod, Cd, sd, th, T, C, J, S, w44, gfull, res, Lp, Nm, wsq, qv, dth,
                                tol, loop_tol, max_iter)
    return _solve_ik(l, n, p, parent, B, X, nloop, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, anc, njb, jbod,
                     Cd, sd, th, T, C, J, S, w44, Gfull, Gs, res, Nm, wsq, dth, gfull, tol, loop_tol, max_iter)


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
def _platform_L(p, n, d, J, H, Lp):
    for r in range(6):
        for c in range(d):
            s = 0.0
            for i in range(n):
                s += J[p, r, i] * H[i, c]
            Lp[r, c] = s


@njit(cache=True)
def _keep_alive(owners):
    """A use of ``owners`` that keeps them (and so the non-owning views of them) alive up to here."""
    return len(owners)


@njit(cache=True)
def _run_range(s_begin, s_end, n, dof, plat, parent, X, B, M, qidx, qpos, nact, act, actpos, actoff, nloop, ck, cr,
               dk, dr, nn, ndir, ne, ek, er, c0, m, rows, yidx, P, Mp, anc, njb, jbod, aff, Hc, cc,
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
    # non-owning views of the caller's arrays: no reference counting in the loops (pkm._small.unowned)
    n, dof, plat, parent, X, B, M = unowned(n), unowned(dof), unowned(plat), unowned(parent), unowned(X), unowned(B), \
        unowned(M)
    qidx, nact, actpos, actoff, nloop = unowned(qidx), unowned(nact), unowned(actpos), unowned(actoff), unowned(nloop)
    ck, cr, dk, dr, nn, ndir, ne = unowned(ck), unowned(cr), unowned(dk), unowned(dr), unowned(nn), unowned(ndir), \
        unowned(ne)
    ek, er, c0, m, rows, yidx, P, Mp = unowned(ek), unowned(er), unowned(c0), unowned(m), unowned(rows), \
        unowned(yidx), unowned(P), unowned(Mp)
    aff, Hc, cc = unowned(aff), unowned(Hc), unowned(cc)
    anc, njb, jbod, g0, Cd, Vp, dVp, Wee = unowned(anc), unowned(njb), unowned(jbod), unowned(g0), unowned(Cd), \
        unowned(Vp), unowned(dVp), unowned(Wee)
    dts, theta0, theta, thetad, thetadd = unowned(dts), unowned(theta0), unowned(theta), unowned(thetad), \
        unowned(thetadd)
    tau, JIK, limbW, platW, status = unowned(tau), unowned(JIK), unowned(limbW), unowned(platW), unowned(status)
    L = n.shape[0]
    nmax = parent.shape[1]
    dmax = qidx.shape[1]
    dp = P.shape[1]
    # scratch, allocated once per call; the loops use non-owning views (the owners X_ stay
    # referenced until _keep_alive below)
    T_ = np.empty((nmax, 4, 4))
    T = unowned(T_)
    C_ = np.empty((nmax, 4, 4))
    C = unowned(C_)
    J_ = np.zeros((nmax, 6, nmax))
    J = unowned(J_)
    V_ = np.empty((nmax, 6))
    V = unowned(V_)
    A_ = np.empty((nmax, 6))
    A = unowned(A_)
    W_ = np.empty((nmax, 6))
    W = unowned(W_)
    Wext_ = np.zeros((nmax, 6))
    Wext = unowned(Wext_)
    phi_ = np.empty(nmax)
    phi = unowned(phi_)
    zero_ = np.zeros(nmax)
    zero = unowned(zero_)
    w44_ = np.empty((1, 4, 4))
    w44 = unowned(w44_)
    w6_ = np.empty(6)
    w6 = unowned(w6_)
    w6b_ = np.empty(6)
    w6b = unowned(w6b_)
    w26_ = np.empty((2, 6))
    w26 = unowned(w26_)
    err6_ = np.empty(6)
    err6 = unowned(err6_)
    Gfull_ = np.empty((6, nmax))
    Gfull = unowned(Gfull_)
    Gs_ = np.empty((6 * ck.shape[1], nmax))
    Gs = unowned(Gs_)
    Gy_ = np.empty((6, 6))
    Gy = unowned(Gy_)
    Gyi_ = np.empty((ck.shape[1], 6, 6))
    Gyi = unowned(Gyi_)
    wsq_ = np.empty((max(12, nmax), max(12, nmax)))
    wsq = unowned(wsq_)
    gfull_ = np.empty(6)
    gfull = unowned(gfull_)
    S_ = np.empty((nmax, 6))
    S = unowned(S_)
    res_ = np.empty(6 + 6 * ck.shape[1] + nmax)
    res = unowned(res_)
    Nm_ = np.empty((nmax, nmax))
    Nm = unowned(Nm_)
    dth_ = np.empty(nmax)
    dth = unowned(dth_)
    g_ = np.empty(6)
    g = unowned(g_)
    H_ = np.empty((nmax, dmax))
    H = unowned(H_)
    Lp_ = np.empty((6, dmax))
    Lp = unowned(Lp_)
    Gram_ = np.empty((dmax, dmax))
    Gram = unowned(Gram_)
    Grami_ = np.empty((dmax, dmax))
    Grami = unowned(Grami_)
    qd_ = np.empty(dmax)
    qd = unowned(qd_)
    qv_ = np.empty(dmax)
    qv = unowned(qv_)
    qdd_ = np.empty(dmax)
    qdd = unowned(qdd_)
    Hdqd_ = np.empty(nmax)
    Hdqd = unowned(Hdqd_)
    F_ = np.empty((dmax, dp))
    F = unowned(F_)
    th_ = np.empty((L, nmax))
    th = unowned(th_)
    rhs_ = np.empty(dp)
    rhs = unowned(rhs_)
    Jt_ = np.empty((dp, dp))
    Jt = unowned(Jt_)
    Jti_ = np.empty((dp, dp))
    Jti = unowned(Jti_)
    for l in range(L):
        for i in range(nmax):
            th[l, i] = theta0[l, i]
    for s in range(s_begin, s_end):
        for l in range(L):
            nl, d, p = n[l], dof[l], plat[l]
            t = th[l]
            # ---- geometric IK (eq. 96 with the loops, see _solve_ik), started from the second-order
            # Taylor prediction when the sample times are known, else from the previous sample
            h = dts[s] if s > s_begin else 0.0
            if h > 0.0:
                for i in range(nl):
                    t[i] += h * (thetad[s - 1, l, i] + 0.5 * h * thetadd[s - 1, l, i])
            ok, perr, gerr = _solve_limb(l, nl, d, p, parent, B, X, qidx, aff, Hc, cc, nloop, ck, cr, dk, dr, nn, ndir,
                                         ne, ek, er, c0, m, rows, anc, njb, jbod, Cd, s, t, T, C, J, S, w44, Gfull, Gs,
                                         res, Nm, wsq, dth, gfull, Lp, qv, tol, LOOP_TOL, max_iter)
            if not ok and h > 0.0:  # the prediction failed: start again from the previous sample
                for i in range(nl):
                    t[i] = theta[s - 1, l, i]
                ok, perr, gerr = _solve_limb(l, nl, d, p, parent, B, X, qidx, aff, Hc, cc, nloop, ck, cr, dk, dr, nn,
                                             ndir, ne, ek, er, c0, m, rows, anc, njb, jbod, Cd, s, t, T, C, J, S, w44,
                                             Gfull, Gs, res, Nm, wsq, dth, gfull, Lp, qv, tol, LOOP_TOL, max_iter)
            if not ok:
                if perr <= tol:
                    status[0], status[1], status[2], status[3] = LOOP_FAILED, s, l, gerr
                else:
                    status[0], status[1], status[2], status[3] = IK_FAILED, s, l, perr
                return
            # ---- H, L_p, F at the solution (J and Gs from the IK's last step), with the singularity checks
            if aff[l]:  # constant H; the affine IK left L_p = J_p H in Lp
                for i in range(nl):
                    for c in range(d):
                        H[i, c] = Hc[l, i, c]
            else:
                cg = _build_H(l, nl, d, qidx, nloop, m, yidx, Gs, Gy, Gyi, wsq, H)
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
            for k in range(0 if aff[l] else nloop[l]):  # Ḣq̇ = 0 for a constant H
                mm = m[l, k]
                mf = nn[l, k] + ne[l, k]
                cut_bias_into(ck[l, k], cr[l, k], dk[l, k], dr[l, k], ndir[l, k, :nn[l, k]], ek[l, k, :ne[l, k]],
                              er[l, k, :ne[l, k]], c0[l, k, :ne[l, k]], C[:nl], V[:nl], A[:nl], gfull[:mf])
                for a in range(mm):
                    g[a] = gfull[rows[l, k, a]]
                for a in range(mm):
                    acc = 0.0
                    for b in range(mm):
                        acc -= Gyi[k, a, b] * g[b]
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
    _keep_alive((T_, C_, J_, V_, A_, W_, Wext_, phi_, zero_, w44_, w6_, w6b_, w26_, err6_, Gfull_, Gs_, Gy_, Gyi_,
                     wsq_, gfull_, S_, res_, Nm_, dth_, g_, H_, Lp_, Gram_, Grami_, qd_, qv_, qdd_, Hdqd_, F_, th_,
                     rhs_, Jt_, Jti_))
    status[0] = OK


@njit(cache=True, parallel=True)
def inverse_dynamics_kernel(bounds, n, dof, plat, parent, X, B, M, qidx, qpos, nact, act, actpos, actoff, nloop, ck,
                            cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, yidx, P, Mp, anc, njb, jbod, aff, Hc, cc,
                            g0, Cd, Vp, dVp, Wee, dts, theta0, tol, max_iter, thresh,
                            theta, thetad, thetadd, tau, JIK, limbW, platW, status):
    """The samples split into chunks ``bounds[c] … bounds[c+1] − 1``, run in parallel (``prange``).

    Chunk ``c`` starts from ``theta0[c]`` (L, nmax) and reports into ``status[c]`` (4,):
    ``(code, sample, limb, value)``, code 0 = success. Scratch arrays are allocated once per chunk.
    """
    for c in prange(bounds.shape[0] - 1):
        _run_range(bounds[c], bounds[c + 1], n, dof, plat, parent, X, B, M, qidx, qpos, nact, act, actpos, actoff,
                   nloop, ck, cr, dk, dr, nn, ndir, ne, ek, er, c0, m, rows, yidx, P, Mp, anc, njb, jbod, aff, Hc, cc, g0,
                   Cd, Vp, dVp, Wee,
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
