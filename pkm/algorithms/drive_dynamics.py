"""Drives and joint friction in the dynamics (issue 29; the model: :mod:`pkm.description.drives`).

At load (:func:`joint_terms`) the drives and the joints' friction become each limb tree variable's
joint terms (:attr:`pkm.description.model.TreeModel.joint_terms`: armature ``n² J_m`` on an actuated
variable, viscous and smooth Coulomb friction), which the scalar kernel's RNEA and the Python reference
add to the joint forces (the paper's ``Q`` of eq. 100). So the inverse dynamics gives, joint side,

    ``u = u_rigid + n² J_m q̈_act + τ_f,act(q̇_act) + u_f``,   ``J_IKᵀ u_f = Σ_l F_(l)ᵀ H_(l)ᵀ τ_f,(l)(θ̇_(l))``

(for a square ``J_IK``; with redundant actuation the whole task wrench is distributed,
:mod:`pkm.algorithms.distribution`), and the task-space EOM (eq. 107) gain ``J_IKᵀ R J_IK`` in ``M_t``
(``R = diag(n² J_m)``), ``J_IKᵀ R J̇_IK V_t`` and the friction wrenches in ``C_t V_t``; forward dynamics
and simulation hold them alike (a lossless gear: η enters only the motor side).

Here: :func:`joint_terms`; :func:`with_drives`, :func:`add_drive_terms` (the result's drive force and
motor side); and, as references the tests check the kernel against, :func:`passive_task_wrench` (the
passive friction's task wrench by virtual work, eq. 113, 144: ``H_(l)`` and ``F_(l)`` formed in Python
per sample and limb, ~0.1–0.3 ms each) and :func:`dissipated_power` (from the drives' and the friction's
own data, not the joint terms).
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
