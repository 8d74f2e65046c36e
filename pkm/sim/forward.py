"""Forward dynamics in task space (spec §11.1, 8.1.1; paper eq. 127–130): the task acceleration
``V̇_t`` under actuator forces ``u``.

The task-space EOM (eq. 107) ``M_t V̇_t + C_t V_t + W_t^grav = W_t^EE + J_IKᵀ u`` is affine in
``V̇_t``, and so is the inverse dynamics it gives (eq. 137): ``u(V̇_t) = J_IK⁻ᵀ(M_t V̇_t + b)``
with ``b = C_t V_t + W_t^grav − W_t^EE``. One call of the batched inverse-dynamics kernel
(:mod:`pkm.kernels.inverse_dynamics`) on ``δ_p + 1`` copies of each state, with the accelerations
``0, e_1, …, e_δp``, gives ``u_0 = J_IK⁻ᵀ b`` and the columns ``A e_i = u(e_i) − u_0`` of
``A = J_IK⁻ᵀ M_t`` (the actuator-space image of the mass matrix); then (eq. 129)

    ``V̇_t = M_t⁻¹(J_IKᵀ u + W_t^EE − C_t V_t − W_t^grav) = A⁻¹ (u − u_0)``,

a δ_p × δ_p solve per state. Nothing is formed in Python but that solve: ``M_t``, ``C_t V_t``,
``W_t^grav`` and ``J_IK`` are the kernel's, every loop is closed by its IK. For a translational
task space ``V_t = ẋ`` (eq. 128 with ``H_t = I``), so ``V̇_t = ẍ``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pkm.kernels.batch import inverse_dynamics_batch


@dataclass
class ForwardDynamics:
    """Task accelerations ``xdd`` (N, δ_p) under actuator forces ``u`` (N, n_act), with the
    actuator coordinates, rates and accelerations ``q_act``, ``qd_act``, ``qdd_act`` (N, n_act),
    ``J_IK`` (N, n_act, δ_p), each limb's tree variables and their rates ``theta``, ``thetad``
    (N, L, n_max; the kernel's padding beyond ``n_l`` is zero), and ``bias`` = ``u_0`` (N, n_act),
    the actuator forces that hold the state with zero acceleration."""

    xdd: np.ndarray
    q_act: np.ndarray
    qd_act: np.ndarray
    qdd_act: np.ndarray
    J_IK: np.ndarray
    theta: np.ndarray
    thetad: np.ndarray
    bias: np.ndarray


def forward_dynamics(robot, x, xd, u, wrench=None, gravity=None, *, start=None, **solver) -> ForwardDynamics:
    """Task accelerations at states ``(x, xd)`` (N, δ_p) under actuator forces ``u`` (N, n_act) in
    ``robot.actuator_names`` order (eq. 129; see the module docstring). ``wrench``: end-effector
    wrench on the platform, body-fixed ``(m; f)`` in ``F_p``, (6,) or (N, 6). ``start``: each
    limb's tree variables to start the first state's IK from (a configuration on the branch to
    follow); ``solver``: ``tol``, ``max_iter``, ``singularity_threshold``, ``threads``,
    ``on_branch_change`` as for :meth:`pkm.robot.Robot.inverse_dynamics`. Raises
    :class:`pkm.SingularityError` where J_IK (or a limb) is singular, naming the state."""
    X = np.atleast_2d(np.asarray(x, dtype=float))
    XD = np.atleast_2d(np.asarray(xd, dtype=float))
    U = np.atleast_2d(np.asarray(u, dtype=float))
    N, d = X.shape
    if XD.shape != X.shape or U.shape != (N, robot.n_act):
        raise ValueError(f"x and xd must be (N, {d}) and u (N, {robot.n_act}), got {X.shape}, {XD.shape}, {U.shape}")
    m = d + 1
    Xs, XDs = np.repeat(X, m, axis=0), np.repeat(XD, m, axis=0)
    XDDs = np.zeros_like(Xs)
    for i in range(d):
        XDDs[i + 1::m, i] = 1.0
    W = None
    if wrench is not None:
        W = np.broadcast_to(np.asarray(wrench, dtype=float), (N, 6))
        W = np.repeat(W, m, axis=0)
    theta, thetad, thetadd, tau, JIK, _, _ = inverse_dynamics_batch(robot, Xs, XDs, XDDs, W, gravity, start=start,
                                                                    **solver)
    tau = tau.reshape(N, m, robot.n_act)
    u0 = tau[:, 0]
    A = np.swapaxes(tau[:, 1:] - u0[:, None, :], 1, 2)  # A[s] e_i = u(e_i) − u_0
    xdd = np.linalg.solve(A, (U - u0)[..., None])[..., 0]
    J = JIK[::m]
    qd = np.einsum("sad,sd->sa", J, XD)
    # q̈_act = J_IK ẍ + J̇_IK ẋ; the kernel's q̈_act at zero acceleration is J̇_IK ẋ
    act = robot._act_limb, robot._act_var
    qdd = np.einsum("sad,sd->sa", J, xdd) + thetadd[::m][:, act[0], act[1]]
    th = theta[::m]
    return ForwardDynamics(xdd=xdd, q_act=th[:, act[0], act[1]], qd_act=qd, qdd_act=qdd, J_IK=J, theta=th.copy(),
                           thetad=thetad[::m].copy(), bias=u0)
