"""The actuator forces along a path, affine in ``s̈`` and ``ṡ²``: one batched inverse dynamics per path.

Along ``x(s)`` with ``ẋ = x' ṡ`` and ``ẍ = x' s̈ + x'' ṡ²``, the task-space EOM (eq. 107–112) give the
joint-side actuator forces (eq. 116, ``u = J_IK⁻ᵀ (M_t V̇_t + C_t V_t + W_grav)``, ``V_t`` linear in ``ẋ``,
``V̇_t`` linear in ``ẍ`` plus quadratic in ``ẋ``) as

    ``τ(s) = a(s) s̈ + b(s) ṡ² + c(s) + f(q'(s) ṡ)``,

with the drives' reflected rotor inertia ``n² J_m q̈`` inside ``a`` and ``b`` (``q̈ = q' s̈ + q'' ṡ²``) and
``f`` the actuated joints' friction ``F_v q̇ + F_c tanh(q̇/v_c)`` (:mod:`pkm.description.drives`), which is
not affine in ``ṡ²`` (viscous: ``∝ ṡ``; Coulomb: ``≈ sign(q') F_c`` for ``ṡ > 0``, the smooth tanh
exactly). The solver (:mod:`pkm.planning.solve`) keeps ``f`` exact by an outer iteration.

:func:`path_dynamics` runs ONE ``robot.inverse_dynamics`` over ``3N`` samples interleaved per path
point — ``(x, 0, 0)``, ``(x, 0, x')``, ``(x, x', x'')`` — so that each sample's IK starts from the same
configuration (the warm start converges at once): ``c = τ₁`` (gravity; friction vanishes at rest),
``a = τ₂ − τ₁`` (``ṡ = 0``, ``s̈ = 1``), ``b = τ₃ − τ₁ − f(q')`` (``ṡ = 1``, ``s̈ = 0``), and ``q' = q̈₂``,
``q'' = q̈₃``. Friction on passive joints (``robot.friction``) enters the kernel's forces through
the joint rates of every limb; it is not separated here, and such robots are refused.

Motor side (:class:`MotorGains`): for each actuator the drives' own :meth:`Drives.motor_torque`
is linear in ``(τ, q̈)`` on each side of the gear's power flow (driving ``τ_load q̇ ≥ 0``: ``τ_load/(nη)``;
braking: ``τ_load η/n``); its two slopes are read off that function at unit arguments.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

import numpy as np

from pkm.algorithms.limits import check_limits
from pkm.errors import BranchWarning, IKError, PkmError, SingularityError

__all__ = ["PathDynamics", "path_dynamics", "path_dynamics_at", "MotorGains", "motor_gains"]


@dataclass(frozen=True, eq=False)
class PathDynamics:
    """Samples of a path and its force coefficients (arrays (N, n_act) unless said):
    ``s`` (N,), ``x``, ``dx``, ``ddx`` (N, d): the path; ``q``, ``dq``, ``ddq``: actuator coordinates and their
    s-derivatives; ``a``, ``b``, ``c``: joint-side coefficients (module docstring)."""

    s: np.ndarray
    x: np.ndarray
    dx: np.ndarray
    ddx: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    ddq: np.ndarray
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray

    def friction(self, drives, sd) -> np.ndarray:
        """The actuated joints' friction ``f(q' ṡ)`` (N, n_act) at path speeds ``sd`` (N,) (0 without drives)."""
        if drives is None:
            return np.zeros_like(self.a)
        return drives.friction(self.dq * np.asarray(sd, dtype=float)[:, None])

    def tau(self, drives, sd, sdd) -> np.ndarray:
        """Joint-side actuator forces (N, n_act) at ``ṡ = sd``, ``s̈ = sdd`` (N,)."""
        sd, sdd = np.asarray(sd, dtype=float)[:, None], np.asarray(sdd, dtype=float)[:, None]
        return self.a * sdd + self.b * sd * sd + self.c + self.friction(drives, sd[:, 0])


def path_dynamics(robot, path, n: int, grid=None) -> PathDynamics:
    """The coefficients at ``n`` points ``s = linspace(0, path.length, n)`` (or at the points ``grid``) of ``path``
    (:class:`pkm.planning.paths.Path`): one ``robot.inverse_dynamics`` over the 3n samples of the
    module docstring. The path is checked against the robot file's joint ranges first (a one-line
    :class:`pkm.LimitError` naming the joint and sample); IK failures and branch changes along the
    path are one-line errors too (a path through a singularity cannot be parametrised)."""
    if robot.friction is not None:
        raise PkmError(f"{robot.name}: friction on passive joints is not modelled by the time-optimal "
                       f"parametrisation (only the drives' friction): remove the joints' 'friction' keys")
    if path.dim != robot.task_dof:
        raise PkmError(f"the path has {path.dim} coordinates, the robot's task space {robot.task_dof} "
                       f"({', '.join(robot.task.coordinate_names())})")
    return path_dynamics_at(robot, path, np.linspace(0.0, path.length, n) if grid is None else grid)


def path_dynamics_at(robot, path, s, apart: bool = False) -> PathDynamics:
    """:func:`path_dynamics` at the path parameters ``s`` (increasing), one inverse dynamics over 3 len(s) samples.
    ``apart``: the points are not a walk along the path (the actuators' turns, switching samples) — the IK's
    continuation from one to the next keeps its branch and is not reported (a BranchWarning naming internal samples,
    e.g. "the trajectory jumps at sample 3", on a line beside a limb singularity); a branch change is still an error."""
    s = np.asarray(s, dtype=float)
    n = s.size
    x, dx, ddx = path.evaluate(s)
    d = x.shape[1]
    X = np.repeat(x, 3, axis=0)
    XD = np.zeros((3 * n, d))
    XDD = np.zeros((3 * n, d))
    XDD[1::3] = dx
    XD[2::3], XDD[2::3] = dx, ddx
    try:
        with warnings.catch_warnings():
            if apart:
                warnings.simplefilter("ignore", BranchWarning)
            res = robot.inverse_dynamics(X, XD, XDD, limits=False, on_branch_change="raise")
    except (IKError, SingularityError) as exc:   # its sample is one of 3n: name the path's point instead
        sample = getattr(exc, "sample", None)
        if sample is None or not 0 <= sample < 3 * n:
            raise
        k = int(sample) // 3
        where = f"the path's point s = {s[k]:.4g} of {float(path.length):.4g}"   # (not this batch's sample numbers)
        text = str(exc)
        if re.search(rf"\bsample {sample}\b", text):
            text = re.sub(rf"\bsample {sample}\b", where, text)
            text = re.sub(rf"\bsample {sample - 1}\b", f"the point before it (s = {s[max(sample - 1, 0) // 3]:.4g})", text)
        else:
            text = f"at {where}: {text}"
        exc.args = (text,)
        raise
    check_limits(robot, [res.joints[l.name][0::3] for l in robot.limbs], x)   # ranges and cones, not speeds
    tau = np.asarray(res.tau)
    t1, t2, t3 = tau[0::3], tau[1::3], tau[2::3]
    dq, ddq = res.qdd_act[1::3], res.qdd_act[2::3]
    f1 = np.zeros_like(t1) if robot.drives is None else robot.drives.friction(res.qd_act[2::3])
    out = PathDynamics(s=s, x=x, dx=dx, ddx=ddx, q=res.q_act[0::3], dq=dq, ddq=ddq, a=t2 - t1, b=t3 - t1 - f1, c=t1)
    for name in ("a", "b", "c", "dq", "ddq"):
        if not np.all(np.isfinite(getattr(out, name))):
            raise PkmError(f"{robot.name}: the path's force coefficients are not finite (a singular configuration "
                           f"on the path?)")
    return out


@dataclass(frozen=True, eq=False)
class MotorGains:
    """``τ_m = k τ + m q̈`` per actuator (n_act,) while the gear drives (``k_drive``, ``m_drive``) and
    while it brakes (``k_brake``, ``m_brake``); motor speed ``= ratio · q̇``."""

    k_drive: np.ndarray
    m_drive: np.ndarray
    k_brake: np.ndarray
    m_brake: np.ndarray
    ratio: np.ndarray


def motor_gains(drives, n_act: int) -> MotorGains:
    """The slopes of ``drives.motor_torque`` (the drives' own conversion, not a copy) on its two
    sides, read at unit arguments: ``τ = R + 1, q̈ = 1`` gives ``τ_load = 1`` (``R = n² J_m``), driving
    with ``q̇ = 1`` and braking with ``q̇ = −1``. Without drives: ``τ_m = τ``, speed = joint rate."""
    if drives is None:
        one, zero = np.ones(n_act), np.zeros(n_act)
        return MotorGains(one, zero, one, zero, one)
    R = drives.reflected_inertia
    one = np.ones_like(R)
    k = {}
    for side, qd in (("drive", one), ("brake", -one)):
        kk = drives.motor_torque(one, qd, 0.0 * one)
        mm = drives.motor_torque(R + one, qd, one) - kk * (R + one)
        k[side] = (kk, mm)
    return MotorGains(k["drive"][0], k["drive"][1], k["brake"][0], k["brake"][1], drives.motor_speed(one))
