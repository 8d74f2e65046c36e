"""The closed-loop check of a planned motion: simulate it under computed-torque control whose model
errs, and report the tracking error and how far the commanded forces go past the drives' limits.

A time-optimal trajectory (:mod:`pkm.planning`) runs at least one drive at its limit at every
instant, so on the real machine — whose parameters the planner never knows exactly — the feedback
has no torque left: :func:`closed_loop_check` shows what that costs. The simulated robot is the
given one; the controller (:class:`pkm.control.computed_torque.ComputedTorque`) believes in the same
robot with every body's mass and inertia scaled by ``1 + model_error``
(:meth:`pkm.description.spec.RobotSpec.with_inertia_scaled`; the drives' rotor inertia and friction
exact). Nothing is clipped: the commanded forces are reported against the limits (motor side through
the drives, :meth:`pkm.description.drives.Drives.motor_torque`), so the report says how much the
drives would have to exceed their peak torque to track, and where.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pkm.control.computed_torque import ComputedTorque
from pkm.errors import InputError

#: Default proportional gain [1/s²]: (2π · 10 Hz)², as ``pkm simulate --torques computed-torque``.
DEFAULT_KP = (2 * math.pi * 10) ** 2


@dataclass
class TrackingReport:
    """The closed-loop run of a desired trajectory: times ``t`` (N,), the desired ``x_desired`` and
    simulated ``x`` (N, δ_p), the tracking error ``error = x_desired − x`` with its per-coordinate
    ``max_error`` and ``rms_error`` (δ_p,); the commanded forces ``tau`` (N, n_act, joint side) and,
    with drives, ``tau_motor`` and ``speed_motor`` (N, n_act, motor side); ``torque_limit``,
    ``speed_limit`` (n_act,; NaN where unknown), ``peak_ratio``/``speed_ratio`` (n_act,) the largest
    ``|τ_m|/limit`` and ``|ω_m|/limit``, ``saturated`` (n_act,) the fraction of output times at which
    ``|τ_m|`` exceeds its limit; ``model_error``; and the ``simulation``
    (:class:`pkm.sim.simulate.SimulationResult`, with its health)."""

    t: np.ndarray
    x_desired: np.ndarray
    x: np.ndarray
    error: np.ndarray
    max_error: np.ndarray
    rms_error: np.ndarray
    tau: np.ndarray
    tau_motor: np.ndarray | None
    speed_motor: np.ndarray | None
    torque_limit: np.ndarray
    speed_limit: np.ndarray
    peak_ratio: np.ndarray
    speed_ratio: np.ndarray
    saturated: np.ndarray
    model_error: float
    actuator_names: list
    simulation: object

    def summary(self) -> str:
        """One line: the largest tracking error and, per actuator, its peak torque against its limit."""
        peaks = ", ".join(f"{n} {r:.3g}× ({100 * s:.0f} % of the time beyond)" if np.isfinite(r) else f"{n} no limit"
                          for n, r, s in zip(self.actuator_names, self.peak_ratio, self.saturated))
        return (f"with a {100 * self.model_error:+.3g} % model error: tracking error max "
                f"{np.abs(self.max_error).max():.3g}, RMS {np.sqrt(np.mean(self.rms_error ** 2)):.3g}; "
                f"peak torque against the limit: {peaks}")


def closed_loop_check(robot, trajectory, *, model_error: float = 0.1, kp=DEFAULT_KP, kd=None,
                      torque_limit=None, speed_limit=None, method: str = "DOP853", rtol: float = 1e-8,
                      dt: float | None = None) -> TrackingReport:
    """Simulate ``robot`` along ``trajectory`` (a :class:`pkm.trajectory.Trajectory`, e.g. the
    time-optimal one) under computed-torque control with a model whose bodies are ``1 + model_error``
    times as heavy (``model_error`` > −1; default +10 %), PD gains ``kp`` [1/s²] and ``kd`` [1/s]
    (default critical damping), from the trajectory's first state, output at its times.
    ``torque_limit``/``speed_limit``: the motor-side limits (one value or one per actuator; default
    the drives' ``peak_torque`` and ``max_speed``). ``method``/``rtol``/``dt`` as in
    :meth:`pkm.robot.Robot.simulate`. Returns a :class:`TrackingReport`."""
    if not all(hasattr(robot, k) for k in ("simulate", "inverse_dynamics", "spec", "n_act")):
        raise InputError(f"robot must be a pkm.Robot (robot = pkm.load(path)), got {type(robot).__name__}")
    if isinstance(model_error, (bool, np.bool_)) or not isinstance(model_error, (int, float, np.integer, np.floating)) \
            or not (np.isfinite(model_error) and model_error > -1.0):
        raise InputError(f"model_error must be a finite number > -1 (a relative error of the masses), got {model_error!r}")
    if not all(hasattr(trajectory, k) for k in ("t", "x", "xd", "xdd")):
        raise InputError(f"trajectory must be a pkm.trajectory.Trajectory (t, x, xd, xdd), got {type(trajectory).__name__}")
    if method != "RK4" and (isinstance(rtol, (bool, np.bool_)) or not isinstance(rtol, (int, float, np.integer, np.floating))
                            or not 0.0 < rtol < 1.0):
        raise InputError(f"rtol must be a number in (0, 1), got {rtol!r}")
    t = np.asarray(trajectory.t, dtype=float)
    if t.ndim != 1 or len(t) < 2:
        raise InputError("the trajectory needs at least 2 samples")
    n = robot.n_act
    limits = []
    for name, given, key in (("torque_limit", torque_limit, "peak_torque"), ("speed_limit", speed_limit, "max_speed")):
        if given is None:
            value = np.full(n, np.nan) if robot.drives is None else np.array(getattr(robot.drives, key), dtype=float)
        else:
            try:
                value = np.broadcast_to(np.asarray(given, dtype=float).reshape(-1), (n,)).copy() \
                    if np.size(given) in (1, n) and not isinstance(given, (bool, np.bool_)) else None
            except (TypeError, ValueError):
                value = None
            if value is None or not np.all(value > 0):   # inf: no limit
                raise InputError(f"{name} must be one positive number or {n} (one per actuator; inf: none), "
                                 f"got {given!r}")
        limits.append(value)
    model = type(robot)(robot.spec.with_inertia_scaled(1.0 + model_error))
    u = ComputedTorque(model, trajectory, kp, kd)
    options = dict(method=method, t_eval=t)
    options.update(dict(dt=dt) if method == "RK4" else dict(rtol=rtol, atol=rtol * 1e-3))
    sim = robot.simulate(u, (float(t[0]), float(t[-1])), np.asarray(trajectory.x[0], dtype=float),
                         np.asarray(trajectory.xd[0], dtype=float), **options)
    xd = np.asarray(trajectory.x, dtype=float)
    error = xd - sim.x
    tau_m = speed_m = None
    if robot.drives is not None:   # the actuator rates of the simulated motion, then the motor side
        res = robot.inverse_dynamics(sim.x, sim.xd, sim.xdd, start=[sim.joints[l.name][0] for l in robot.limbs])
        tau_m = robot.drives.motor_torque(sim.tau, res.qd_act, res.qdd_act)
        speed_m = robot.drives.motor_speed(res.qd_act)
    side = sim.tau if tau_m is None else tau_m
    rate = sim.qd_act if speed_m is None else speed_m
    with np.errstate(invalid="ignore", divide="ignore"):
        peak = np.abs(side).max(axis=0) / limits[0]
        speed = np.abs(rate).max(axis=0) / limits[1]
        saturated = np.mean(np.abs(side) > limits[0], axis=0)
    saturated[np.isnan(limits[0])] = np.nan
    return TrackingReport(t=sim.t, x_desired=xd, x=sim.x, error=error, max_error=np.abs(error).max(axis=0),
                          rms_error=np.sqrt(np.mean(error ** 2, axis=0)), tau=sim.tau, tau_motor=tau_m,
                          speed_motor=speed_m, torque_limit=limits[0], speed_limit=limits[1], peak_ratio=peak,
                          speed_ratio=speed, saturated=saturated, model_error=float(model_error),
                          actuator_names=list(robot.actuator_names), simulation=sim)
