"""Inverse kinematics of the limb mechanisms and of the PKM (spec §8; paper §4–5, eq. 85–98).

For a target platform pose ``C_p^d`` each limb is solved separately by Newton's method in its
generalized coordinates (eq. 95–96): with the body-fixed pose error ``ΔX = log(C_p⁻¹ C_p^d)``,

    ``Δq = L_p⁺ ΔX``,  ``θ := θ + H Δq``,  then the loops are closed again (spec §6, §8.5),

where ``L_p = J_p H`` and ``L_p⁺ = (L_pᵀ L_p)⁻¹ L_pᵀ`` (eq. 94). Using the full 6-D error and the
left pseudo-inverse needs no row selection: it is exact whenever the target twist lies in the
limb's motion space, which holds for every admissible platform motion, and it keeps the constrained
directions (e.g. the Delta's ω₂) at their targets instead of letting them drift.

Velocities and accelerations (eq. 86–88, 91, with the correction of spec §8.3):

    ``q̇ = L_p⁺ V_p``,  ``θ̇ = H q̇``,  ``q̈ = L_p⁺ (V̇_p − J̇_p θ̇ − J_p Ḣ q̇)``,  ``θ̈ = H q̈ + Ḣ q̇``.

``F = L_p⁺ P_p`` maps the task velocity to ``q̇`` (eq. 86/91/94) and its actuated rows are the
limb's block of ``J_IK`` (eq. 97–98).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pkm.errors import IKError
from pkm.algorithms.kinematics import body_accelerations, body_jacobians, forward_kinematics
from pkm.lie import log_se3
from pkm.algorithms.limb import LimbModel, _check_condition, _limit


@dataclass
class LimbIK:
    """The IK solution of one limb at one sample (all arrays are the limb's own)."""

    theta: np.ndarray  # tree variables θ_(l) (n_l)
    iterations: int
    residual: float
    H: np.ndarray  # n_l × δ_l
    Lp: np.ndarray  # 6 × δ_l
    Lp_pinv: np.ndarray  # δ_l × 6


def solve_limb(limb: LimbModel, Cd: np.ndarray, theta0: np.ndarray, tol: float = 1e-12, max_iter: int = 50,
               singularity_threshold: float = 1e8) -> LimbIK:
    """Newton's method (eq. 96) for the limb's tree variables that put its platform at ``Cd``.

    Raises :class:`IKError` (naming the limb, the residual and the iterations) when it does not
    converge, and :class:`SingularityError` when the solution is at a configuration where ``G_y``
    or the limb's platform Jacobian ``L_p`` has a condition number above ``singularity_threshold``.
    """
    tree, p = limb.tree, limb.platform
    theta = limb.close_loops(theta0)
    err = np.inf
    for it in range(max_iter + 1):
        C = forward_kinematics(tree, theta)
        dX = log_se3(np.linalg.solve(C[p], Cd))
        err = float(np.linalg.norm(dX))
        if err <= tol or it == max_iter or not np.isfinite(err):
            break
        J = body_jacobians(tree, theta)
        H = limb._H(C, J, np.inf)
        dq = np.linalg.lstsq(J[p] @ H, dX, rcond=None)[0]
        theta = limb.close_loops(theta + H @ _limit(dq))
    if not err <= tol:
        raise IKError(f"limb {limb.name!r}: no inverse-kinematics solution: platform pose residual {err:.3e} "
                      f"after {it} Newton iterations (target unreachable?)", limb=limb.name, residual=err, iterations=it)
    J = body_jacobians(tree, theta)
    H = limb._H(C, J, singularity_threshold)
    Lp = J[p] @ H
    _check_condition(Lp, singularity_threshold, f"limb {limb.name!r}: the platform Jacobian L_p")
    return LimbIK(theta=theta, iterations=it, residual=err, H=H, Lp=Lp, Lp_pinv=np.linalg.pinv(Lp))


def limb_rates(limb: LimbModel, sol: LimbIK, Vp: np.ndarray, dVp: np.ndarray | None = None):
    """Joint velocities (and accelerations) of a solved limb from the platform twist ``V_p``
    and its derivative ``V̇_p`` (body-fixed): returns ``(θ̇, θ̈ or None)`` (eq. 86–88)."""
    qd = sol.Lp_pinv @ Vp
    thd = sol.H @ qd
    if dVp is None:
        return thd, None
    th = sol.theta
    Hdqd = limb.Hdot_qd(th, thd)
    bias = body_accelerations(limb.tree, th, thd, np.zeros(limb.n))[limb.platform]  # J̇_p θ̇
    J = body_jacobians(limb.tree, th)
    qdd = sol.Lp_pinv @ (dVp - bias - J[limb.platform] @ Hdqd)
    return thd, sol.H @ qdd + Hdqd

