"""Drives and joint friction in the inverse dynamics (issue 29; the model: :mod:`pkm.description.drives`).

The rigid-body actuator forces ``u_rigid`` solve ``J_IKᵀ u = φ_t`` (eq. 140). The drives and the friction
add, joint side,

    ``u = u_rigid + n² J_m q̈_act + τ_f,act(q̇_act) + u_f``,   ``J_IKᵀ u_f = Σ_l F_(l)ᵀ H_(l)ᵀ τ_f,(l)(θ̇_(l))``

— the actuated joints' own reflected rotor inertia and friction act on their own coordinate; the
passive joints' friction ``τ_f,(l)`` (the paper's ``Q̄_(l) = −τ_f,(l)`` of eq. 100) enters the task space
by virtual work like the limb dynamics (eq. 113, 144: ``W̄_(l) = F_(l)ᵀ H_(l)ᵀ φ_(l)``), and is shared
among the actuators as the rigid part is (``J_IK⁻ᵀ``, or the W-weighted pseudoinverse of a redundant
robot, :func:`pkm.algorithms.distribution.distribute`). Power check: ``u_fᵀ q̇_act = Σ_l τ_f,(l)ᵀ θ̇_(l)``.

Cost: the batched kernel does not return ``H_(l)`` and ``F_(l) = L_p⁺ P(x)``, so :func:`passive_task_wrench`
forms them here, per sample and limb, in Python (a forward-kinematics pass, the body Jacobians, the loops'
``G_y`` solve and a 6×δ_l pseudoinverse: ~0.1–0.3 ms per limb and sample, ~1 s for the Delta's 1001
samples), only when a passive joint has friction; the drives alone cost a few array operations.

The same terms in the task-space EOM (eq. 107; forward dynamics with η = 1): with ``R = diag(n² J_m)`` and
``q̇_act = J_IK V_t``, ``q̈_act = J_IK V̇_t + J̇_IK V_t``, the drives add ``J_IKᵀ R J_IK`` to ``M_t``,
``J_IKᵀ R J̇_IK V_t`` to ``C_t V_t`` and the friction ``J_IKᵀ τ_f,act(q̇_act) + Σ_l F_(l)ᵀ H_(l)ᵀ τ_f,(l)``
(:func:`passive_task_wrench`) to the generalized forces the actuators must overcome; the power they
dissipate is :func:`dissipated_power`, the rotors' kinetic energy ``robot.drives.kinetic_energy(q̇_act)``.
"""
from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np

from pkm.algorithms.kinematics import body_jacobians, forward_kinematics
from pkm.description.drives import DEFAULT_COULOMB_SPEED
from pkm.errors import PkmError

__all__ = ["passive_task_wrench", "add_drive_terms", "with_drives", "dissipated_power", "joint_terms"]


def passive_task_wrench(robot, x, joints, joints_d) -> np.ndarray:
    """``Σ_l F_(l)ᵀ H_(l)ᵀ τ_f,(l)`` (N, δ_p): the task wrench the actuators must add to overcome the passive
    joints' friction at task coordinates ``x`` (N, δ_p) with tree variables and rates ``joints[limb]``,
    ``joints_d[limb]`` (N, n_l) (eq. 100, 113, 144). Zero where the robot has no passive friction."""
    x = np.atleast_2d(np.asarray(x, dtype=float))
    out = np.zeros((x.shape[0], robot.task_dof))
    fr = robot.friction
    if fr is None:
        return out
    for k, limb in enumerate(robot.limbs):
        th = np.atleast_2d(joints[limb.name])
        tau = fr.force(k, np.atleast_2d(joints_d[limb.name]))
        for s in np.flatnonzero(np.any(tau != 0.0, axis=1)):
            C = forward_kinematics(limb.tree, th[s])
            J = body_jacobians(limb.tree, th[s])
            H = limb._H(C, J, np.inf)
            F = np.linalg.pinv(J[limb.platform] @ H) @ robot.velocity_distribution(x[s])
            out[s] += F.T @ (H.T @ tau[s])
    return out


def dissipated_power(robot, qd_act, joints_d) -> np.ndarray:
    """Power dissipated by all the robot's friction [W] (N,): the actuated joints' (``robot.drives``) at
    actuator rates ``qd_act`` (N, n_act) plus the passive joints' at tree rates ``joints_d`` (a dict limb →
    (N, n_l)); ≥ 0. The energy balance of a simulation: input work = ΔE + ∫ this dt, with the rotors'
    ``robot.drives.kinetic_energy(qd_act)`` in E."""
    qd_act = np.atleast_2d(np.asarray(qd_act, dtype=float))
    p = np.zeros(qd_act.shape[0])
    if robot.drives is not None:
        p = p + robot.drives.dissipated_power(qd_act)
    if robot.friction is not None:
        p = p + robot.friction.dissipated_power({k: np.atleast_2d(v) for k, v in joints_d.items()})
    return p


def joint_terms(limbs, drives, friction, act_limb, act_var) -> list:
    """The limbs with their trees' joint terms (:attr:`pkm.description.model.TreeModel.joint_terms`:
    armature, viscous, coulomb, coulomb speed per tree variable) from the drives (actuator order:
    ``act_limb``, ``act_var`` name each actuator's limb and tree variable; armature ``n² J_m``) and the
    passive joints' friction: the kernels and the Python reference add them to each joint's
    generalized force (the paper's ``Q`` of eq. 100), so that inverse dynamics, EOM, forward
    dynamics and simulation all hold them. ``limbs`` unchanged without drives and friction."""
    if drives is None and friction is None:
        return list(limbs)
    T = []
    for k, limb in enumerate(limbs):
        t = np.zeros((limb.n, 4))
        t[:, 3] = DEFAULT_COULOMB_SPEED
        if friction is not None:
            t[:, 1], t[:, 2], t[:, 3] = friction.viscous[k], friction.coulomb[k], friction.coulomb_speed[k]
        T.append(t)
    if drives is not None:
        for a, (k, v) in enumerate(zip(act_limb, act_var)):
            T[k][v] = (drives.reflected_inertia[a], drives.viscous[a], drives.coulomb[a], drives.coulomb_speed[a])
    return [replace(limb, tree=replace(limb.tree, joint_terms=t)) for limb, t in zip(limbs, T)]


def add_drive_terms(robot, res, weights=None) -> None:
    """Report the drives in a :class:`pkm.algorithms.manipulator.DynamicsResult` (in place): ``res.tau``
    already holds the joint-side actuator forces with the reflected rotor inertia and all friction (the
    kernel's joint terms, :func:`joint_terms`); ``res.tau_drive`` the actuated joints' own drive force
    ``n² J_m q̈ + τ_f(q̇)``; ``res.tau_motor`` and ``res.speed_motor`` the motor side (where the robot has
    drives)."""
    if robot.drives is None:
        return
    extra = robot.drives.joint_force(res.qdd_act, res.qd_act)
    if not np.all(np.isfinite(extra)):
        s = int(np.flatnonzero(~np.all(np.isfinite(extra), axis=1))[0])
        raise PkmError(f"the drive and friction forces are not finite at sample {s} (rates or drive values too large)")
    res.tau_drive = extra
    res.tau_motor = robot.drives.motor_torque(res.tau, res.qd_act, res.qdd_act)
    res.speed_motor = robot.drives.motor_speed(res.qd_act)


def with_drives(fn):
    """Decorate :meth:`pkm.robot.Robot.inverse_dynamics` so that its result reports the drives
    (:func:`add_drive_terms`: the drive's own force, the motor side); the forces themselves hold the
    drives and friction through the kernel's joint terms (:func:`joint_terms`)."""

    @functools.wraps(fn)
    def inverse_dynamics(robot, x, xd, xdd, wrench=None, **kw):
        res = fn(robot, x, xd, xdd, wrench, **kw)
        if robot.drives is not None and kw.get("torques_only") is not True:
            add_drive_terms(robot, res)
        return res

    return inverse_dynamics
