"""Task-space maps: every limb's inverse kinematics and geometry at many independent points.

The kernel of :mod:`pkm.workspace` (singularity maps). Unlike :func:`pkm.kernels.inverse_dynamics.run_range`,
which follows a trajectory (each sample warm-started from the one before, stopping at the first
failure), :func:`map_range` treats every point on its own, as :meth:`pkm.robot.Robot.inverse_kinematics`
treats a single point: each limb is solved from the reference configuration (all joint variables
zero) directly or, for the limbs flagged in ``cont``, along the straight task-space line from the
reference (``Cs``, :func:`pkm.kernels.batch.continuation_starts`); a point where a limb does not
converge, or whose ``G_y`` or ``L_p`` cannot be inverted, is recorded in ``lstat`` and the kernel
goes on with the next point. No singularity threshold applies: the map reports the conditioning.

Per point and limb it writes the tree variables, the limb's platform Jacobian ``L_p = J_p H``
(eq. 80, 6 × δ_l, body-fixed at the platform) and the limb's rows of ``J_IK`` (``F = L_p⁺ P_p``,
eq. 94, 97–98) — the same pieces (:func:`pkm.kernels.ik._solve_affine`, ``_solve_general``,
:func:`pkm.kernels.dynamics._limb_geometry`) as the inverse-dynamics kernel, so the numbers are
the ones its singularity checks see. The condition numbers are computed from them in
:mod:`pkm.workspace` (vectorised singular values).
"""
from __future__ import annotations

import numpy as np

from pkm.kernels.dynamics import IK_FAILED, LOOP_FAILED, OK, SINGULAR_GY, _limb_geometry
from pkm.kernels.ik import _dof, _solve_affine, _solve_general
from pkm.kernels.model import LI_ACTOFF, LI_AFF, LI_N, LI_NACT
from pkm.kernels.work import M_LP, _jit

__all__ = ["map_range", "UNSOLVABLE"]

#: ``_limb_geometry``'s threshold in the map: only a matrix that cannot be inverted fails.
UNSOLVABLE = 1e300


@_jit
def map_range(s_begin, s_end, mi, mf, lay, d_static, dp_static, Cd, Cs, K, cont, theta, lstat, Lp, JIK, th, bw,
              mat, vec, general, tol, max_iter, status):
    """Points ``s_begin … s_end − 1`` (see the module docstring).

    ``Cd`` (N, 4, 4): target platform poses; ``Cs`` (N·K, 4, 4): the ``K`` intermediate poses of
    each point's continuation line (rows ``s·K … s·K + K − 1``; unused where ``cont`` is 0);
    ``cont`` (N, L) int: 1 = solve limb ``l`` of point ``s`` from the reference configuration along
    ``Cs``, 0 = directly from ``theta[s, l]`` (zeros: the reference configuration; a solution:
    refine it). Writes ``theta`` (N, L, n_max), ``lstat`` (N, L) (``OK``, ``IK_FAILED``,
    ``LOOP_FAILED``, ``SINGULAR_GY``, ``SINGULAR_LP``), ``Lp`` (N, L, 6, d_max) and the rows of
    ``JIK`` (N, n_act, δ_p) of every solved limb (NaN where a limb failed). ``th, bw, mat, vec``:
    one chunk's :class:`pkm.kernels.work.Work`; ``general``: None when every limb has a constant
    H (as in ``run_range``); ``status`` (4,): scratch for ``_limb_geometry``."""
    L = mi.shape[0]
    dp = len(dp_static)
    LpW = mat[M_LP]
    for s in range(s_begin, s_end):
        for l in range(L):
            n, d = mi[l, LI_N], _dof(l, mi, d_static)
            tl = th[l]
            aff = True if general is None else mi[l, LI_AFF] != 0
            steps = K if cont[s, l] != 0 else 0
            for i in range(n):
                tl[i] = 0.0 if steps > 0 else theta[s, l, i]
            ok, perr, gerr = False, np.inf, np.inf
            for k in range(steps + 1):
                target, sk = (Cs, s * K + k) if k < steps else (Cd, s)
                if aff:
                    ok, perr, gerr, _ = _solve_affine(l, mi, mf, lay, d_static, target, sk, tl, bw, mat, vec, tol,
                                                      max_iter, False, False)
                elif general is not None:
                    ok, perr, gerr = _solve_general(l, mi, mf, lay, target, sk, tl, bw, mat, vec, tol, max_iter)
                if not ok:
                    break
            for i in range(n):
                theta[s, l, i] = tl[i]
            for r in range(6):
                for c in range(Lp.shape[3]):
                    Lp[s, l, r, c] = np.nan
            if not ok:
                lstat[s, l] = LOOP_FAILED if perr <= tol else IK_FAILED
            elif _limb_geometry(l, mi, mf, lay, d_static, dp_static, s, UNSOLVABLE, JIK, mat, general, status):
                lstat[s, l] = OK
            else:
                lstat[s, l] = int(status[0])
            if ok and lstat[s, l] != SINGULAR_GY:
                for r in range(6):  # L_p of the solution (also where it is singular, SINGULAR_LP)
                    for c in range(d):
                        Lp[s, l, r, c] = LpW[r, c]
            if lstat[s, l] != OK:
                for a in range(mi[l, LI_NACT]):
                    for c in range(dp):
                        JIK[s, mi[l, LI_ACTOFF] + a, c] = np.nan
