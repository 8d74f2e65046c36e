"""Forward dynamics of a robot file in absolute coordinates under actuator efforts (issue 16,
deliverable 5): the second formulation's answer to pkm's :meth:`~pkm.robot.Robot.simulate`.

Actuator efforts as generalized forces. An actuated R joint's torque ``τ`` about its axis ``a``
(the parent marker's z in the world) acts as the moment ``τ a`` on the child and ``−τ a`` on the
parent; an actuated P joint's force ``F`` as ``F a`` at the child's marker and ``−F a`` at the
parent's. On a director-form body (seed 002 eq. 27: ``q̇ = P_int (ω; v_φ)``, ``φ̇ = v_φ``,
``ḋ_I = ω × d_I``) a moment ``m`` and a force ``F`` at the body point ``p = φ + ϱ_I d_I`` have the
virtual power ``m·ω + F·ṗ``; the generalized force

    f_φ = F,    f_{d_I} = ϱ_I F + ½ m × d_I

has the same power for every admissible ``q̇`` (``Σ_I d_I × (½ m × d_I)`` … ``P_intᵀ f = (m; F)``
because ``Σ_I d̂_Iᵀ d̂_I = 2 I`` on the manifold). The sign convention is pkm's and the loader's: a
positive effort turns (moves) the child relative to the parent in the positive sense of the joint
axis, the drives of :meth:`~pkm.absolute.loader.AbsoluteModel.driven` report the same efforts.

Integration. The index-1 equations ``[[M, Φ_qᵀ], [Φ_q, 0]] [q̈; λ] = [f; γ]`` (seed 001 eq. 27)
are solved by a sparse LU (:func:`pkm.absolute.system.kkt_solve`); :func:`simulate` integrates
them with :func:`~pkm.absolute.standard.projected_ode` (scipy's ``DOP853`` by default, coordinates and velocities projected back onto the constraints at every
output step) under gravity (as a potential, so the energy in the result counts it) and the
actuator efforts ``u(t)``.
"""
from __future__ import annotations

import numpy as np

from pkm.absolute.model_checks import check_efforts, check_model


def actuator_forces(model, q, u) -> np.ndarray:
    """The generalized force (n,) of the actuator efforts ``u`` (n_act,) in ``model.actuators``
    order (torques of R, forces of P joints) at ``q`` (see the module doc)."""
    system = check_model(model).system
    q = system._q(q)
    u = check_efforts(model, u)
    f = np.zeros(system.n)
    for effort, a in zip(u, model.actuators):
        parent = a.parent.body
        axis = a.parent.world_pose(None if parent is None else q[system.body_slice(parent)])[:3, 2]
        for marker, sign in ((a.child, 1.0), (a.parent, -1.0)):
            if marker.body is None:
                continue
            sl = system.body_slice(marker.body)
            Q = q[sl].reshape(4, 3)
            F = np.zeros((4, 3))
            if a.type == "R":
                F[1:] = 0.5 * np.cross(sign * effort * axis, Q[1:])
            else:
                F[:] = np.outer(marker.point_coefficients(), sign * effort * axis)
            f[sl] += F.reshape(12)
    return f


def consistent_state(model, theta, theta_d, q_guess, tol: float = 1e-12):
    """``(q, q̇)`` on the constraints with the actuators at ``theta`` moving at ``theta_d``
    (:meth:`~pkm.absolute.loader.AbsoluteModel.driven_state` from ``q_guess``): a consistent start
    for :func:`simulate`."""
    _, q, qd = check_model(model).driven_state(theta, theta_d, np.zeros(len(model.actuators)), q_guess, tol)
    return q, qd


def _efforts(u):
    """``u`` as a function of time: a callable ``u(t)`` (a pkm input such as
    :class:`~pkm.sim.inputs.Table` is called with ``t`` alone) or a constant (n_act,)."""
    if callable(u):
        return u
    const = np.asarray(u, dtype=float)
    return lambda t: const


def simulate(model, u, q0, v0, dt: float, steps: int, *, method: str = "DOP853", rtol: float = 1e-10,
             atol: float = 1e-12, t0: float = 0.0):
    """The robot's motion in absolute coordinates under gravity and actuator efforts ``u`` (a
    callable ``u(t)`` → (n_act,), or constants) from the consistent ``(q0, v0)``
    (:func:`consistent_state`), output every ``dt`` for ``steps`` steps: a
    :class:`~pkm.absolute.results.Trajectory` (energy with the gravity potential, constraint
    residual at every node)."""
    from pkm.absolute.potentials import Gravity
    from pkm.absolute.standard import projected_ode

    u_of_t = _efforts(u if callable(u) else check_efforts(check_model(model), u))

    def force(t, q, v):
        return actuator_forces(model, q, u_of_t(t))

    return projected_ode(model.system, q0, v0, dt, steps, Gravity(model.system, model.gravity), force=force,
                         method=method, rtol=rtol, atol=atol, t0=t0)
