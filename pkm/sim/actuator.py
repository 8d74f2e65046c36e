"""Forward dynamics in actuator coordinates (paper eq. 135–136).

The state is ``(θ_act, θ̇_act)``. The assembled mechanism (:func:`pkm.algorithms.assembly.assemble`:
every limb's tree variables and the platform pose for given actuator values) is regular at the
limbs' IK (serial) singularities, where the task-space form breaks down, so this form passes
through them — e.g. the Delta's arms swinging through the stretched position.

Velocities: each limb's loops are resolved locally, ``θ̇_l = H_l q̇_l`` (eq. 76), and every limb
moves the one platform, ``L_l q̇_l = V_p`` with ``L_l = J_p H_l`` (eq. 80); eliminating ``V_p``
with the first limb, ``L_l q̇_l − L_1 q̇_1 = 0`` (l ≥ 2), a consistent system ``C z = 0`` in all
limbs' generalized velocities ``z``, of which the actuated ones are given: ``z = Z θ̇_act`` with
``Z_free = −C_free⁺ C_act`` (regular wherever the forward kinematics is, also where a single
``L_l`` loses rank). So ``θ̇_l = Θ_l θ̇_act``, ``Θ_l = H_l Z_l`` — the Jacobian of ψ_FK that spec
§9.6 puts in place of ``H F J_FK``. Accelerations, exactly (no differences): ``L_l q̈_l + β_l =
V̇_p`` with ``β_l = J_p Ḣ_l q̇_l + J̇_p θ̇_l`` (:meth:`pkm.algorithms.limb.LimbModel.Hdot_qd`, body
accelerations), so at ``θ̈_act = 0``: ``z̈⁰_free = −C_free⁺ Δβ`` and ``θ̈⁰_l = H_l z̈⁰_l + Ḣ_l q̇_l``.
By Jourdain's principle the EOM (eq. 116/135) are

    ``M_a θ̈_act = u − b``,  ``M_a = Σ_l Θ_lᵀ M̄_l Θ_l``,  ``b = Σ_l Θ_lᵀ τ_l(θ_l, θ̇_l, θ̈⁰_l)``,

with each limb's tree mass matrix ``M̄_l`` (CRBA) and inverse dynamics ``τ_l`` (RNEA with
gravity, :mod:`pkm.algorithms.dynamics`); the platform's inertia is carried by the first limb's
tree, the other limbs see it massless. This form runs in Python on the per-sample reference
algorithms (about a millisecond per evaluation): the one to use through IK singularities, the
task form (:mod:`pkm.sim.forward`) the fast one elsewhere. It stops where ``M_a`` degenerates: a
forward-kinematics (type-2) singularity of the mechanism.
"""
from __future__ import annotations

import numpy as np

from pkm.algorithms.assembly import _system, assemble
from pkm.algorithms.dynamics import inverse_dynamics, mass_matrix
from pkm.algorithms.kinematics import body_accelerations, body_jacobians, forward_kinematics
from pkm.algorithms.manipulator import dynamics_trees

class ActuatorModel:
    """The actuator-coordinate EOM of one robot (see the module docstring)."""

    def __init__(self, robot):
        self.robot = robot
        limbs = robot.limbs
        self.offs = np.cumsum([0] + [l.n for l in limbs])
        self.zoffs = np.cumsum([0] + [l.dof for l in limbs])
        self.act = np.concatenate([self.zoffs[k] + np.array([list(l.q_index).index(a) for a in l.actuated], int)
                                   for k, l in enumerate(limbs)])
        self.free = np.setdiff1d(np.arange(self.zoffs[-1]), self.act)
        trees = dynamics_trees(robot)
        trees[0] = limbs[0].tree  # the platform's inertia, once
        self.trees = trees
        self.thetas = None  # the last assembled configuration (the next assembly's start: the branch)

    def state(self, q, qd, gravity):
        """Assemble at ``q`` and return ``(thetas, θ̇, Θ, θ̈⁰, M_a, b, closure residual)`` (``θ̇``, ``Θ``,
        ``θ̈⁰`` over all limbs' tree variables, limb after limb)."""
        robot, limbs = self.robot, self.robot.limbs
        thetas, _ = assemble(robot, q, start=self.thetas, tol=1e-13)
        self.thetas = thetas
        nz, na = self.zoffs[-1], len(self.act)
        Hs, Ls = [], []
        for limb, th in zip(limbs, thetas):
            C = forward_kinematics(limb.tree, th)
            J = body_jacobians(limb.tree, th)
            H = limb._H(C, J, np.inf)
            Hs.append(H)
            Ls.append(J[limb.platform] @ H)
        C = np.zeros((6 * (len(limbs) - 1), nz))
        zo = self.zoffs
        for k in range(1, len(limbs)):
            C[6 * (k - 1):6 * k, zo[k]:zo[k + 1]] = Ls[k]
            C[6 * (k - 1):6 * k, zo[0]:zo[1]] -= Ls[0]
        Cf_pinv = np.linalg.pinv(C[:, self.free])
        Z = np.zeros((nz, na))
        Z[self.act, np.arange(na)] = 1.0
        Z[self.free] = -Cf_pinv @ C[:, self.act]
        z = Z @ qd
        thd, Theta, beta, Hdq = [], [], [], []
        for k, (limb, th) in enumerate(zip(limbs, thetas)):
            zk = z[zo[k]:zo[k + 1]]
            thd.append(Hs[k] @ zk)
            Theta.append(Hs[k] @ Z[zo[k]:zo[k + 1]])
            Hdq.append(limb.Hdot_qd(th, thd[k]))
            beta.append(body_accelerations(limb.tree, th, thd[k], Hdq[k])[limb.platform])
        dbeta = np.concatenate([beta[k] - beta[0] for k in range(1, len(limbs))]) if len(limbs) > 1 else np.zeros(0)
        zdd0 = np.zeros(nz)
        zdd0[self.free] = -Cf_pinv @ dbeta
        thdd0 = [Hs[k] @ zdd0[zo[k]:zo[k + 1]] + Hdq[k] for k in range(len(limbs))]
        Ma = np.zeros((na, na))
        b = np.zeros(na)
        for k, tree in enumerate(self.trees):
            Ma += Theta[k].T @ mass_matrix(tree, thetas[k]) @ Theta[k]
            b += Theta[k].T @ inverse_dynamics(tree, thetas[k], thd[k], thdd0[k], gravity)
        r = _system(robot, thetas)[0]
        return (thetas, np.concatenate(thd), np.vstack(Theta), np.concatenate(thdd0), Ma, b,
                float(np.max(np.abs(r), initial=0.0)))

    def task_state(self, thetas, thd, thdd=None):
        """Task coordinates, velocity (and acceleration) of an assembled state, from the first limb's
        platform (translational task spaces: the platform keeps ``R_0``)."""
        robot, limb, s = self.robot, self.robot.limbs[0], slice(self.offs[0], self.offs[1])
        Cp = forward_kinematics(limb.tree, thetas[0])[limb.platform]
        Vp = body_jacobians(limb.tree, thetas[0])[limb.platform] @ thd[s]
        axes = ["xyz".index(c[1]) for c in robot.task.components]
        x, xd = (robot.R0.T @ Cp[:3, 3])[axes], Vp[[3 + a for a in axes]]
        if thdd is None:
            return x, xd
        dVp = body_accelerations(limb.tree, thetas[0], thd[s], thdd[s])[limb.platform]
        return x, xd, dVp[[3 + a for a in axes]]
