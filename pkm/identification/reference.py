"""The regressor on the Python reference path, for task spaces that are not twist-closed
(``V_p = P(x) V_t``, :mod:`pkm.robot`; the batched kernel does not run them).

Per sample (:func:`pkm.algorithms.manipulator.task_residual`, eq. 137–140, 144): each limb's tree
RNEA (App. B) with one body's mass matrix set to the unit parameter ``inertia6(D e_k)`` (its body
frame; ``D`` the mirror's sign flip) and every other zero gives that parameter's ``φ_(l)``, then
``W̄_(l) = Fᵀ Hᵀ φ_(l)`` with ``F = L_p⁺ P(x)``; the platform's columns are ``P(x)ᵀ φ_p`` of
eq. (104–106) with ``M_p = inertia6(e_k)``. The forces follow as in
:func:`pkm.algorithms.manipulator.inverse_dynamics` (``J_IK⁻ᵀ``, or the weighted pseudoinverse with
redundant actuation). Python, one sample at a time: for the reference path's users, not for speed.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from pkm.algorithms.distribution import distribute
from pkm.algorithms.dynamics import inverse_dynamics as tree_inverse_dynamics
from pkm.algorithms.manipulator import platform_residual
from pkm.kernels.model import inertia6


def reference_columns(robot, std, X, XD, XDD, weights=None, cols=None):
    """Standard-parameter columns ``cols`` (default all) of the regressor at ``X, XD, XDD`` (N, δ_p) on the
    reference path: ``(Y (N, n_act, len(cols)), IK solution)``."""
    S = len(std.names)
    cols = list(range(S)) if cols is None else list(cols)
    sols = robot.inverse_kinematics(X, XD, XDD)
    g0 = robot.spec.gravity
    N, dp = X.shape[0], robot.task_dof
    Wt = np.zeros((N, dp, S))   # the task wrench of each standard parameter
    zero = [replace(limb.tree, M=np.zeros_like(limb.tree.M)) for limb in robot.limbs]
    for s in range(N):
        P = robot.velocity_distribution(X[s])
        for k, limb in enumerate(robot.limbs):
            th = sols.joints[limb.name][s]
            thd, thdd = sols.joints_d[limb.name][s], sols.joints_dd[limb.name][s]
            HF = limb.H(th) @ (np.linalg.pinv(limb.platform_jacobian(th)) @ P)
            for l, i, g, _, D in std.slots:
                if l != k:
                    continue
                for c in range(10):
                    j = 10 * g + c
                    if j not in cols:
                        continue
                    M = zero[k].M
                    M[i] = inertia6(D * np.eye(10)[c])
                    phi = tree_inverse_dynamics(zero[k], th, thd, thdd, gravity=g0)
                    M[i] = 0.0
                    Wt[s, :, j] += HF.T @ phi
        Cp = robot.platform_pose(X[s])
        Vp, dVp = robot.platform_twist(X[s], XD[s], XDD[s])
        for c in range(10):
            j = 10 * std.platform + c
            if j in cols:
                Wt[s, :, j] += P.T @ platform_residual(inertia6(np.eye(10)[c]), Cp, Vp, dVp, g0)
    Y = np.empty((N, robot.n_act, len(cols)))
    for n, j in enumerate(cols):
        if robot.n_act == dp:
            Y[:, :, n] = np.linalg.solve(np.transpose(sols.J_IK, (0, 2, 1)), Wt[:, :, j][:, :, None])[:, :, 0]
        else:
            Y[:, :, n] = distribute(sols.J_IK, Wt[:, :, j], weights, None)[0]
    return Y, sols
