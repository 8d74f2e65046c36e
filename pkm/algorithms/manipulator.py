"""Task-space and actuator-space equations of motion of the PKM; inverse dynamics (paper Sec. 6.3, eq. 102–103; Sec. 6.6, eq. 114–120; Sec. 8.2, eq. 137–140, 144).

Each limb contributes through Jourdain's principle: with ``θ̇_(l) = H_(l) F_(l) V_t`` (eq. 87) the
limb's tree dynamics ``φ_(l) = M̄θ̈ + C̄θ̇ + Q̄grav`` (eq. 101) enter the task space as
``W̄_(l) = F_(l)ᵀ H_(l)ᵀ φ_(l)`` (eq. 144). The platform is a free rigid body,
``φ_p = M_p V̇_p − ad_{V_p}ᵀ M_p V_p − M_p Ad_{C_p}⁻¹ (0; g)`` (eq. 104–106), entering as ``P_pᵀ φ_p``.
The actuator forces solve (eq. 140, second line; paper eq. 140, second line)

    ``J_IKᵀ u = Σ_l W̄_(l) + P_pᵀ φ_p − W_t^EE``.

The limb trees are evaluated with the platform body massless, so ``φ_(l)`` is the dynamics of the
limb alone (paper Sec. 6.1, eq. 99) while bodies hanging from the platform in the tree (the 3R[2US]'s second
rod) stay in their limb. ``F_(l) = L_p⁺ P_p`` (eq. 94) as in :mod:`pkm.algorithms.inverse_kinematics`.

The equations of motion in task space (eq. 107) and actuator space (eq. 116) follow from the same
residual: ``C_t V_t + W_t^grav`` is the residual at ``V̇_t = 0``, ``W_t^grav`` at rest, and
``M_t = Σ F̄ᵀH̄ᵀ M̄ H̄F̄ + P_pᵀ M_p P_p`` (eq. 108).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from pkm.algorithms.distribution import distribute
from pkm.algorithms.dynamics import inverse_dynamics as tree_inverse_dynamics
from pkm.algorithms.dynamics import mass_matrix as tree_mass_matrix
from pkm.errors import PkmError, fmt_array
from pkm.lie import Ad_inv, coad
from pkm.lie.interpret import kernel


@dataclass
class DynamicsResult:
    """Inverse dynamics along ``N`` samples (:meth:`pkm.robot.Robot.inverse_dynamics`).

    ``tau`` (N, n_act): actuator forces/torques, columns ``actuator_names``; ``q_act``, ``qd_act``,
    ``qdd_act`` (N, n_act); ``joints``/``joints_d``/``joints_dd``: per-limb tree variables (N, n_l);
    ``limb_wrenches`` (N, L, δ_p): each limb's ``W̄_(l)`` (eq. 144); ``platform_wrench`` (N, δ_p):
    ``P_pᵀ φ_p``; ``J_IK`` (N, n_act, δ_p). With redundant actuation (``n_act > δ_p``, Sec. 8.2):
    ``null_space`` (N, n_act, n_act − δ_p), an orthonormal basis of the internal forces (the null
    space of ``J_IKᵀ``, continuous along the samples), ``tau = u_W + null_space @ z``
    (:mod:`pkm.algorithms.distribution`); None for a non-redundant robot. With drives or joint friction
    (:mod:`pkm.algorithms.drive_dynamics`): ``tau`` includes them (joint side), ``tau_drive`` (N, n_act) is
    what they add; with drives ``tau_motor`` [N·m] and ``speed_motor`` [rad/s] (N, n_act) are the motor side.
    """

    x: np.ndarray
    tau: np.ndarray
    q_act: np.ndarray
    qd_act: np.ndarray
    qdd_act: np.ndarray
    joints: dict
    joints_d: dict
    joints_dd: dict
    limb_wrenches: np.ndarray
    platform_wrench: np.ndarray
    J_IK: np.ndarray
    actuator_names: list
    null_space: np.ndarray | None = None
    tau_drive: np.ndarray | None = None
    tau_motor: np.ndarray | None = None
    speed_motor: np.ndarray | None = None

    @property
    def task_wrench(self) -> np.ndarray:
        """``J_IKᵀ u`` (N, δ_p): the task-space wrench the actuators exert (eq. 138's ``φ_t − W_t^EE``)."""
        return np.einsum("sad,sa->sd", self.J_IK, self.tau)


def dynamics_trees(robot):
    """Each limb's tree with the platform body made massless (paper Sec. 6.1, eq. 99)."""
    trees = []
    for limb in robot.limbs:
        M = limb.tree.M.copy()
        M[limb.platform] = 0.0
        trees.append(replace(limb.tree, M=M))
    return trees


def platform_inertia(robot) -> np.ndarray:
    """The platform's body-fixed 6×6 mass matrix ``M_p`` (eq. 167) in ``F_p``."""
    return robot.spec.body(robot.spec.platform).spatial_inertia()


def platform_residual(M_p, C_p, V_p, dV_p, g0) -> np.ndarray:
    """``φ_p = M_p V̇_p − ad_{V_p}ᵀ M_p V_p − M_p Ad_{C_p}⁻¹ (0; g)`` (eq. 104–106)."""
    grav = np.concatenate([np.zeros(3), g0])
    return M_p @ dV_p - kernel(coad)(V_p) @ (M_p @ V_p) - M_p @ (kernel(Ad_inv)(C_p) @ grav)


def task_residual(robot, x, xd, xdd, gravity=None, wrench=None, trees=None, sol=None):
    """Per-sample terms of eq. (140): ``(W̄_(l) for every limb, P_pᵀ φ_p, J_IK, IK solution)``.

    ``wrench`` is the end-effector wrench ``W_p^EE`` (6, body-fixed in ``F_p``, (m; f)) acting on
    the platform; it is returned folded into the platform term as ``P_pᵀ(φ_p − W_p^EE)``.
    """
    g0 = robot.spec.gravity if gravity is None else np.asarray(gravity, float)
    trees = dynamics_trees(robot) if trees is None else trees
    if sol is None:
        sol = robot.inverse_kinematics(x, xd, xdd, warm_start=False, limits=False)
    Wl = np.empty((len(robot.limbs), robot.task_dof))
    P = robot.velocity_distribution(x)  # P_p, or P(x) for a task space that is not twist-closed
    for k, limb in enumerate(robot.limbs):
        th, thd, thdd = sol.joints[limb.name][0], sol.joints_d[limb.name][0], sol.joints_dd[limb.name][0]
        phi = tree_inverse_dynamics(trees[k], th, thd, thdd, gravity=g0)
        H = limb.H(th)
        Lp = limb.platform_jacobian(th)
        F = np.linalg.pinv(Lp) @ P
        Wl[k] = F.T @ (H.T @ phi)
    Cp = robot.platform_pose(x)
    Vp, dVp = robot.platform_twist(x, xd, xdd)
    phip = platform_residual(platform_inertia(robot), Cp, Vp, dVp, g0)
    if wrench is not None:
        phip = phip - np.asarray(wrench, float)
    return Wl, P.T @ phip, sol.J_IK[0], sol


def inverse_dynamics(robot, x, xd, xdd, wrench=None, gravity=None, *, tol: float = 1e-12, weights=None,
                     preload=None) -> DynamicsResult:
    """Actuator forces along samples ``x, ẋ, ẍ`` (N, δ_p): ``u = J_IK⁻ᵀ(Σ W̄_(l) + P_pᵀφ_p − W_t^EE)``
    (eq. 137–140), with redundant actuation the weighted pseudoinverse's (Sec. 8.2,
    :func:`pkm.algorithms.distribution.distribute`: ``weights`` as checked there, ``preload`` (N, r)).
    Reference implementation, one sample at a time, in Python; ``tol`` is the IK's pose residual
    (:meth:`pkm.robot.Robot.inverse_kinematics`)."""
    X = np.atleast_2d(np.asarray(x, float))
    XD = np.atleast_2d(np.asarray(xd, float))
    XDD = np.atleast_2d(np.asarray(xdd, float))
    N = X.shape[0]
    WR = None if wrench is None else np.broadcast_to(np.asarray(wrench, float), (N, 6))
    trees = dynamics_trees(robot)
    sols = robot.inverse_kinematics(X, XD, XDD, tol=tol, limits=False)
    tau = np.empty((N, robot.n_act))
    limb_w = np.empty((N, len(robot.limbs), robot.task_dof))
    plat_w = np.empty((N, robot.task_dof))
    for s in range(N):
        one = _slice(sols, s)
        Wl, Wp, J_IK, _ = task_residual(robot, X[s], XD[s], XDD[s], gravity, None if WR is None else WR[s], trees, one)
        limb_w[s], plat_w[s] = Wl, Wp
        if robot.n_act == robot.task_dof:
            tau[s] = np.linalg.solve(J_IK.T, Wl.sum(axis=0) + Wp)
    null = None
    if robot.n_act > robot.task_dof:
        tau, null = distribute(sols.J_IK, limb_w.sum(axis=1) + plat_w, weights, preload)
    return DynamicsResult(x=X, tau=tau, q_act=sols.q_act, qd_act=sols.qd_act, qdd_act=sols.qdd_act,
                          joints=sols.joints, joints_d=sols.joints_d, joints_dd=sols.joints_dd,
                          limb_wrenches=limb_w, platform_wrench=plat_w, J_IK=sols.J_IK,
                          actuator_names=sols.actuator_names, null_space=null)


def _slice(sol, s):
    """Sample ``s`` of an IKSolution as a one-sample IKSolution."""
    return replace(sol, x=sol.x[s:s + 1], q_act=sol.q_act[s:s + 1], J_IK=sol.J_IK[s:s + 1],
                   joints={k: v[s:s + 1] for k, v in sol.joints.items()},
                   joints_d={k: v[s:s + 1] for k, v in sol.joints_d.items()},
                   joints_dd={k: v[s:s + 1] for k, v in sol.joints_dd.items()})


@dataclass
class EOM:
    """Task-space (eq. 107) and actuator-space (eq. 116) EOM terms at one state.

    ``M_t V̇_t + C_t V_t + W_t^grav = W_t^EE + J_IKᵀ u`` and
    ``M_a θ̈_a + C_a θ̇_a + Q_a^grav = Q_a^EE + u`` with ``M_a = J_FKᵀ M_t J_FK``,
    ``C_a θ̇_a = J_FKᵀ C_t V_t − M_a J̇_IK V_t`` (eq. 117–118), ``Q_a^grav = J_FKᵀ W_t^grav`` (eq. 119).

    Redundant actuation (``n_act > δ_p``): the actuator coordinates are not independent, ``J_FK`` is
    the left inverse ``J_IK⁺ = (J_IKᵀJ_IK)⁻¹J_IKᵀ`` (``V_t = J_IK⁺ θ̇_act`` on every consistent rate
    ``θ̇_act = J_IK V_t``), ``M_a`` (n_act × n_act) has rank ``δ_p``, and the actuator-space EOM read
    ``M_a θ̈_a + C_a θ̇_a + Q_a^grav = Q_a^EE + P_a u`` with ``P_a = J_FKᵀ J_IKᵀ`` the orthogonal
    projector onto the forces that do work; ``(I − P_a) u`` is internal (it moves nothing). ``P_a``
    is the identity for a non-redundant robot.
    """

    M_t: np.ndarray
    C_t_V_t: np.ndarray
    W_t_grav: np.ndarray
    J_IK: np.ndarray
    M_a: np.ndarray
    C_a_qd_a: np.ndarray
    Q_a_grav: np.ndarray
    P_a: np.ndarray = None


def mass_matrix(robot, x, trees=None) -> np.ndarray:
    """Task-space mass matrix ``M_t = Σ_l Fᵀ Hᵀ M̄ H F + P_pᵀ M_p P_p`` (eq. 108)."""
    trees = dynamics_trees(robot) if trees is None else trees
    sol = robot.inverse_kinematics(x, warm_start=False, limits=False)
    P = robot.velocity_distribution(np.asarray(x, float).reshape(-1))
    M_t = P.T @ platform_inertia(robot) @ P
    for k, limb in enumerate(robot.limbs):
        th = sol.joints[limb.name][0]
        H = limb.H(th)
        F = np.linalg.pinv(limb.platform_jacobian(th)) @ P
        HF = H @ F
        M_t = M_t + HF.T @ tree_mass_matrix(trees[k], th) @ HF
    return M_t


def eom(robot, x, xd, gravity=None) -> EOM:
    """All terms of eq. (107) and (116) at task coordinates ``x`` and task velocity ``V_t = xd`` (the
    selected components of the body-fixed platform twist, :mod:`pkm.robot`; ``V_t = ẋ`` for a
    translational task space). With rotations the sample is evaluated at the coordinate rates
    ``ẋ = robot.coordinate_rates(x, V_t)`` and, for ``C_t V_t`` (the residual at ``V̇_t = 0``),
    ``ẍ = robot.coordinate_accelerations(x, ẋ, 0)``."""
    x = np.asarray(x, float)
    xd = np.asarray(xd, float)
    zero = np.zeros_like(x)
    trees = dynamics_trees(robot)
    M_t = mass_matrix(robot, x, trees)
    xdd0 = zero
    if robot._rot:  # V_t → ẋ, and the ẍ of V̇_t = 0
        with np.errstate(all="ignore"):
            rates = robot.coordinate_rates(x, xd)
            xdd0 = robot.coordinate_accelerations(x, rates, zero)
        if not (np.all(np.isfinite(rates)) and np.all(np.isfinite(xdd0))):
            raise PkmError(f"{robot.name}: the velocity {fmt_array(xd)} is too large: the "
                           f"coordinates' rates or accelerations overflow")
        xd = rates
    with np.errstate(all="ignore"):   # |V_t| ~ 1e308: rates overflow, reported below
        try:
            Wl, Wp, J_IK, sol = task_residual(robot, x, xd, xdd0, gravity, trees=trees)
        except ValueError as exc:   # the joint rates' own check: "qd contains NaN or inf"
            if isinstance(exc, PkmError):
                raise
            raise PkmError(f"{robot.name}: the velocity {fmt_array(xd)} is too large: the joint "
                           f"rates overflow ({exc})") from None
        Wl0, Wp0, _, _ = task_residual(robot, x, zero, zero, gravity, trees=trees)
        W_grav = Wl0.sum(axis=0) + Wp0
        CV = Wl.sum(axis=0) + Wp - W_grav
        J_FK = np.linalg.inv(J_IK) if J_IK.shape[0] == J_IK.shape[1] else np.linalg.pinv(J_IK)  # eq. 114
        M_a = J_FK.T @ M_t @ J_FK
        b = sol.qdd_act[0]  # θ̈_act at V̇_t = 0, i.e. J̇_IK V_t
        e = EOM(M_t=M_t, C_t_V_t=CV, W_t_grav=W_grav, J_IK=J_IK, M_a=M_a,
                C_a_qd_a=J_FK.T @ CV - M_a @ b, Q_a_grav=J_FK.T @ W_grav, P_a=J_FK.T @ J_IK.T)
    bad = [k for k, v in vars(e).items() if not np.all(np.isfinite(v))]
    if bad:
        raise PkmError(f"{robot.name}: non-finite EOM terms ({', '.join(bad)}) at x = {fmt_array(x)}: "
                       f"velocity, gravity or masses too large")
    return e
