"""How well the simulation's coordinates hold at a configuration: unit-free condition numbers of
the two Jacobians that degenerate at the two kinds of PKM singularity (Gosselin & Angeles 1990;
paper Sec. 3.4, 3.6, 8.1).

* **Type I** (a limb at an IK singularity, e.g. the Delta's arm stretched): a limb's compound
  platform Jacobian ``L_p = J_p H`` (eq. 80) loses column rank; ``F = L_p⁺P_p`` (eq. 94) and with it
  J_IK and ``M_t`` grow without bound: the **task** coordinates degenerate (paper 8.1.1).
  ``kappa_I`` = the largest condition number of the limbs' ``L_p``.
* **Type II** (forward kinematics): the actuator coordinates stop determining the mechanism —
  with the actuators held, the passive joints can move. In the actuator form (8.1.3) the limbs'
  generalized velocities ``z`` satisfy ``C z = 0`` (``L_l q̇_l = L_1 q̇_1``, :mod:`pkm.sim.actuator`)
  and the passive ones are solved from the actuated ones through ``C_free``: its column rank drops,
  and ``M_a`` grows without bound: the **actuator** coordinates degenerate. ``kappa_II`` = the
  condition number of ``C_free``.

Both are 2-norm condition numbers (σ_max/σ_min of the column space) of matrices made unit-free
with a characteristic length ``ℓ`` of the robot (Angeles' characteristic length): the linear
rows of a twist are divided by ``ℓ`` and the columns of prismatic joints multiplied by it, so a
robot written in millimetres, metres or kilometres has the same numbers (a condition number that
mixes m and rad would call a large robot singular at rest). ``ℓ``: the root-mean-square distance
of the bodies' frames in the reference configuration from their centroid
(:func:`characteristic_length`).
"""
from __future__ import annotations

import numpy as np

from pkm.algorithms.kinematics import body_jacobians, forward_kinematics
from pkm.sim.actuator import closure_matrix, layout


def characteristic_length(robot) -> float:
    """The robot's size ``ℓ`` [m]: RMS distance of the (real) bodies' reference frames of every
    limb from their centroid; 1 m if they coincide."""
    P = np.array([limb.tree.A[k][:3, 3] for limb in robot.limbs for k in range(len(limb.tree.A))
                  if not limb.tree.virtual[k]])
    ell = float(np.sqrt(np.mean(np.sum((P - P.mean(axis=0)) ** 2, axis=1)))) if len(P) else 0.0
    return ell if ell > 1e-12 and np.isfinite(ell) else 1.0


def condition2(A) -> float:
    """σ_max/σ_min over the columns of ``A`` (inf if it has dependent columns or is not finite;
    1 for no columns)."""
    if A.shape[1] == 0:
        return 1.0
    if not np.all(np.isfinite(A)):
        return np.inf
    s = np.linalg.svd(A, compute_uv=False)
    if len(s) < A.shape[1] or not s[-1] > 0.0:
        return np.inf
    return float(s[0] / s[-1])


class Conditioning:
    """``kappa(thetas) → (kappa_I, kappa_II)`` of one robot at the limbs' tree variables ``thetas``
    (see the module docstring)."""

    def __init__(self, robot):
        self.robot = robot
        self.ell = characteristic_length(robot)
        self.rows = np.concatenate([np.ones(3), np.full(3, 1.0 / self.ell)])
        self.cols = [np.array([self.ell if limb.tree.axis_kind[v] == "P" else 1.0 for v in limb.q_index])
                     for limb in robot.limbs]
        self.zoffs, _, self.free = layout(robot)

    def limb_jacobians(self, thetas) -> list:
        """Each limb's ``L_p = J_p H`` (6 × δ_l, eq. 80) at its tree variables (inf entries where a
        loop's ``G_y`` is singular)."""
        out = []
        for limb, th in zip(self.robot.limbs, thetas):
            C = forward_kinematics(limb.tree, th)
            J = body_jacobians(limb.tree, th)
            try:
                out.append(J[limb.platform] @ limb._H(C, J, np.inf))
            except np.linalg.LinAlgError:
                out.append(np.full((6, limb.dof), np.inf))
        return out

    def kappa(self, Ls) -> tuple[float, float]:
        """``(kappa_I, kappa_II)`` from the limbs' ``L_p`` (:meth:`limb_jacobians`)."""
        Ls = [self.rows[:, None] * L * c[None, :] for L, c in zip(Ls, self.cols)]
        kappa_I = max(condition2(L) for L in Ls)
        kappa_II = condition2(closure_matrix(Ls, self.zoffs)[:, self.free]) if len(Ls) > 1 else 1.0
        return kappa_I, kappa_II

    def jik_sign(self, Ls) -> float:
        """The sign of det J_IK (J_IK: the actuated rows of ``F = L_p⁺ P_p``, eq. 94, 97–98): it
        changes where the motion passes a type-II singularity (det J_IK through 0) or a type-I one
        (through ∞); 0 where it cannot be formed."""
        P = self.robot.P_p
        rows = []
        for limb, L in zip(self.robot.limbs, Ls):
            if not np.all(np.isfinite(L)):
                return 0.0
            F = np.linalg.pinv(L) @ P
            rows += [F[list(limb.q_index).index(a)] for a in limb.actuated]
        J = np.array(rows)
        return float(np.sign(np.linalg.det(J))) if J.shape[0] == J.shape[1] else 0.0

    def __call__(self, thetas) -> tuple[float, float]:
        return self.kappa(self.limb_jacobians(thetas))

    def many(self, Ls) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(kappa_I, kappa_II, sign det J_IK)`` (K,) of :meth:`kappa` and :meth:`jik_sign` at ``K`` states, the
        limbs' ``L_p`` given per limb stacked over the states (K, 6, δ_l): numpy's stacked SVDs, pseudo-inverses and
        determinants (the per-state values to rounding; the same rules for non-finite and dependent columns)."""
        P = self.robot.P_p
        K = Ls[0].shape[0]
        each = [np.all(np.isfinite(L), axis=(1, 2)) for L in Ls]   # (the scaling keeps an entry finite or not)
        finite = np.all(each, axis=0)
        scaled = [self.rows[None, :, None] * L * c[None, None, :] for L, c in zip(Ls, self.cols)]
        kappa_I = np.max([_condition2_many(L, f) for L, f in zip(scaled, each)], axis=0)
        kappa_II = np.ones(K)
        if len(Ls) > 1:
            C = closure_matrix(scaled, self.zoffs)[:, :, self.free]
            kappa_II = _condition2_many(C, np.all(np.isfinite(C), axis=(1, 2)))
        sign = np.zeros(K)
        if np.any(finite):
            rows = []
            for limb, L in zip(self.robot.limbs, Ls):
                F = np.linalg.pinv(L[finite]) @ P
                rows += [F[:, list(limb.q_index).index(a)] for a in limb.actuated]
            J = np.stack(rows, axis=1)
            if J.shape[1] == J.shape[2]:
                sign[finite] = np.sign(np.linalg.det(J))
        return kappa_I, kappa_II, sign


def _condition2_many(A, finite) -> np.ndarray:
    """:func:`condition2` of each ``A[k]`` (K, r, c); inf where ``finite`` is False."""
    K, r, c = A.shape
    out = np.full(K, np.inf)
    if c == 0:
        return np.ones(K)
    if r < c or not np.any(finite):
        return out
    s = np.linalg.svd(A[finite], compute_uv=False)
    good = s[:, -1] > 0.0
    out[np.flatnonzero(finite)[good]] = s[good, 0] / s[good, -1]
    return out
