"""Drives and joint friction: the robot file's ``drive`` and ``friction`` joint keys and their model.

**File format** (``docs/robot-file-format.md``, "Drives and friction"). An actuated joint may carry
``drive = { gear_ratio = n, rotor_inertia = J_m, viscous = F_v, coulomb = F_c, coulomb_speed = v_c,
efficiency = η, rated_torque, peak_torque, rated_speed, max_speed }`` and any joint (passive too)
``friction = { viscous, coulomb, coulomb_speed }``; a joint has one or the other, never both (the
drive's friction *is* the actuated joint's friction). Values are SI whatever the file's ``units``.

**Model** (q the joint variable, q̇, q̈ its rates; motor angle ``φ_m = n q``):

* friction at the joint (joint side): ``τ_f = F_v q̇ + F_c tanh(q̇ / v_c)`` — viscous plus a smooth
  Coulomb term (the sign function's tanh regularisation, exact to ``F_c (1 − tanh(k))`` at ``|q̇| = k
  v_c``; smooth and odd, so the equations of motion stay an ODE that explicit and implicit integrators
  can step through q̇ = 0, and ``τ_f q̇ ≥ 0``: it only dissipates). The paper's generalized force Q of
  the joints (eq. 100) is ``−τ_f``;
* reflected rotor inertia: ``n² J_m q̈`` (the rotor and gearbox input turn at ``n q̇``);
* joint-side drive force ``τ_drive = n² J_m q̈ + τ_f`` (:meth:`Drives.joint_force`), added to the rigid
  body's actuator force; dissipated power ``τ_f q̇`` (:meth:`Drives.dissipated_power`,
  :meth:`PassiveFriction.dissipated_power`); rotor kinetic energy ``½ n² J_m q̇²``;
* motor side: speed ``ω_m = n q̇``; torque ``τ_m = τ_load / (n η) + n J_m q̈`` while the gear delivers
  power to the joint (``τ_load q̇ ≥ 0``), ``τ_load η / n + n J_m q̈`` while the joint drives the motor
  (braking), with ``τ_load = τ − n² J_m q̈`` the joint-side force the gear output carries (rigid body
  plus joint friction). With η = 1, ``τ_m = τ / n``. The forward dynamics uses η = 1 (a lossless gear:
  the efficiency is a sizing figure, not a dissipation in the simulated motion).

Everything here is plain numpy over arrays in ``actuator_names`` order (:class:`Drives`) or over each
limb's tree variables (:class:`PassiveFriction`); :func:`robot_drives` builds both from a loaded
robot's limbs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pkm.description.fileformat import _Ctx, _number, _sub, _table
from pkm.errors import RobotFileError

__all__ = ["DriveSpec", "FrictionSpec", "Drives", "PassiveFriction", "friction_force", "robot_drives",
           "DEFAULT_COULOMB_SPEED"]

#: Default regularisation speed ``v_c`` of the smooth Coulomb term [rad/s or m/s]: below it the
#: friction force fades to 0 linearly (``tanh``); 1e-3 keeps it within 0.01 % of ``F_c`` from 0.005 on.
DEFAULT_COULOMB_SPEED = 1e-3
#: Largest magnitude of a drive or friction value: far beyond any machine, far below overflow of
#: ``n² J_m q̈`` or ``n · q̇`` for any admissible rate.
MAX_VALUE = 1e9

#: Smallest ``coulomb_speed``: ``q̇ / v_c`` stays finite for any rate below 1e290.
MIN_COULOMB_SPEED = 1e-12

DRIVE_KEYS = ("gear_ratio", "rotor_inertia", "viscous", "coulomb", "coulomb_speed", "efficiency",
              "rated_torque", "peak_torque", "rated_speed", "max_speed")
FRICTION_KEYS = ("viscous", "coulomb", "coulomb_speed")
#: Optional motor ratings (motor side, N·m and rad/s).
RATINGS = ("rated_torque", "peak_torque", "rated_speed", "max_speed")


@dataclass(frozen=True)
class FrictionSpec:
    """Joint-side friction ``τ_f = F_v q̇ + F_c tanh(q̇/v_c)`` of every axis of a joint (SI: N·m·s/rad,
    N·m, rad/s; prismatic N·s/m, N, m/s)."""

    viscous: float = 0.0
    coulomb: float = 0.0
    coulomb_speed: float = DEFAULT_COULOMB_SPEED


@dataclass(frozen=True)
class DriveSpec:
    """A drive (motor + gear) on an actuated joint: motor angle ``n q``; ``rotor_inertia`` motor side
    [kg·m²]; ``viscous``, ``coulomb``, ``coulomb_speed`` joint side; ``efficiency`` η ∈ (0, 1];
    ratings motor side [N·m, rad/s], None where the file gives none."""

    gear_ratio: float
    rotor_inertia: float = 0.0
    viscous: float = 0.0
    coulomb: float = 0.0
    coulomb_speed: float = DEFAULT_COULOMB_SPEED
    efficiency: float = 1.0
    rated_torque: float | None = None
    peak_torque: float | None = None
    rated_speed: float | None = None
    max_speed: float | None = None

    @property
    def friction(self) -> FrictionSpec:
        return FrictionSpec(self.viscous, self.coulomb, self.coulomb_speed)


# ====================================================================== reading the file
def _value(ctx: _Ctx, table: dict, entry: str, key: str, low: str, default=None):
    """``table[key]`` as a finite float within (0 or ≥ 0, MAX_VALUE], else ``default``."""
    if key not in table:
        return default
    where = _sub(entry, key)
    x = _number(ctx, table[key], where)          # never scaled by `units`: drive values are SI
    if (low == ">0" and not x > 0.0) or (low == ">=0" and not x >= 0.0):
        ctx.fail(where, f"must be {'positive' if low == '>0' else 'zero or positive'}, got {x:g}")
    if x > MAX_VALUE:
        ctx.fail(where, f"{x:g} is out of range (up to {MAX_VALUE:g}; SI units)")
    return x


def _friction_values(ctx: _Ctx, table: dict, entry: str) -> tuple[float, float, float]:
    vc = _value(ctx, table, entry, "coulomb_speed", ">0", DEFAULT_COULOMB_SPEED)
    if vc < MIN_COULOMB_SPEED:   # q̇ / v_c would overflow (a sign function in all but name)
        ctx.fail(_sub(entry, "coulomb_speed"), f"{vc:g} is below {MIN_COULOMB_SPEED:g} (rad/s or m/s)")
    return _value(ctx, table, entry, "viscous", ">=0", 0.0), _value(ctx, table, entry, "coulomb", ">=0", 0.0), vc


def parse_drive(ctx: _Ctx, value, entry: str) -> DriveSpec:
    table = _table(ctx, value, entry, DRIVE_KEYS, required=("gear_ratio",))
    n = _value(ctx, table, entry, "gear_ratio", ">0")
    J = _value(ctx, table, entry, "rotor_inertia", ">=0", 0.0)
    Fv, Fc, vc = _friction_values(ctx, table, entry)
    eta = _value(ctx, table, entry, "efficiency", ">0", 1.0)
    if eta > 1.0:
        ctx.fail(_sub(entry, "efficiency"), f"must be in (0, 1] (a fraction, not a percentage), got {eta:g}")
    if not math.isfinite(n * n * J):
        ctx.fail(_sub(entry, "rotor_inertia"), "the reflected inertia n² J_m overflows")
    r = {k: _value(ctx, table, entry, k, ">0") for k in RATINGS}
    for low, high in (("rated_torque", "peak_torque"), ("rated_speed", "max_speed")):
        if r[low] is not None and r[high] is not None and r[high] < r[low]:
            ctx.fail(_sub(entry, high), f"{r[high]:g} is below {low} = {r[low]:g}")
    return DriveSpec(n, J, Fv, Fc, vc, eta, **r)


def parse_friction(ctx: _Ctx, value, entry: str) -> FrictionSpec:
    return FrictionSpec(*_friction_values(ctx, _table(ctx, value, entry, FRICTION_KEYS), entry))


def joint_drive(ctx: _Ctx, table: dict, entry: str, jtype: str, actuated: bool):
    """The ``drive`` and ``friction`` keys of a joint table (each None where absent), checked."""
    drive = parse_drive(ctx, table["drive"], _sub(entry, "drive")) if "drive" in table else None
    friction = parse_friction(ctx, table["friction"], _sub(entry, "friction")) if "friction" in table else None
    if drive is not None and not actuated:
        ctx.fail(_sub(entry, "drive"), "only an actuated joint (actuated = true) has a drive; a passive joint's "
                                       "losses go in 'friction'")
    if drive is not None and friction is not None:
        ctx.fail(_sub(entry, "friction"), "a joint with a drive takes its friction in the drive table "
                                          "(viscous, coulomb, coulomb_speed), not in 'friction' as well")
    if friction is not None and jtype == "C":
        ctx.fail(_sub(entry, "friction"), "a C joint's rotation and translation need friction values in "
                                          "different units: write it as an R and a P joint")
    return drive, friction


# ====================================================================== the model
def friction_force(qd, viscous, coulomb, coulomb_speed):
    """Joint-side friction force ``F_v q̇ + F_c tanh(q̇ / v_c)`` (elementwise, broadcast)."""
    qd = np.asarray(qd, dtype=float)
    return viscous * qd + coulomb * np.tanh(qd / coulomb_speed)


def _frozen(a, dtype=float) -> np.ndarray:
    a = np.array(a, dtype=dtype)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class Drives:
    """The actuators' drives in ``actuator_names`` order (read-only arrays, one entry per actuator;
    an actuator without a drive has n = 1, J_m = 0, η = 1, its ``friction`` key's values or 0, and
    NaN ratings; ``has_drive`` marks those with a ``drive`` table)."""

    names: tuple[str, ...]
    gear_ratio: np.ndarray
    rotor_inertia: np.ndarray
    viscous: np.ndarray
    coulomb: np.ndarray
    coulomb_speed: np.ndarray
    efficiency: np.ndarray
    rated_torque: np.ndarray
    peak_torque: np.ndarray
    rated_speed: np.ndarray
    max_speed: np.ndarray
    has_drive: np.ndarray

    @property
    def reflected_inertia(self) -> np.ndarray:
        """``n² J_m`` at the joint [kg·m² or kg]."""
        return self.gear_ratio ** 2 * self.rotor_inertia

    def friction(self, qd) -> np.ndarray:
        """Joint-side friction ``F_v q̇ + F_c tanh(q̇/v_c)`` of each actuator, ``qd`` (..., n_act)."""
        return friction_force(qd, self.viscous, self.coulomb, self.coulomb_speed)

    def joint_force(self, qdd, qd) -> np.ndarray:
        """Joint-side drive force ``n² J_m q̈ + F_v q̇ + F_c tanh(q̇/v_c)`` (..., n_act): what the actuator
        adds to the rigid body's force."""
        return self.reflected_inertia * np.asarray(qdd, dtype=float) + self.friction(qd)

    def dissipated_power(self, qd) -> np.ndarray:
        """Power the actuated joints' friction dissipates, ``Σ τ_f q̇ ≥ 0`` [W] (shape of ``qd`` minus its last axis)."""
        qd = np.asarray(qd, dtype=float)
        return np.sum(self.friction(qd) * qd, axis=-1)

    def kinetic_energy(self, qd) -> np.ndarray:
        """Kinetic energy of the rotors ``½ Σ n² J_m q̇²`` [J]."""
        qd = np.asarray(qd, dtype=float)
        return 0.5 * np.sum(self.reflected_inertia * qd * qd, axis=-1)

    def motor_speed(self, qd) -> np.ndarray:
        """Motor speed ``ω_m = n q̇`` [rad/s] (..., n_act)."""
        return self.gear_ratio * np.asarray(qd, dtype=float)

    def motor_torque(self, tau, qd, qdd) -> np.ndarray:
        """Motor torque [N·m] from the joint-side actuator force ``tau`` (rigid body + drive terms):
        ``τ_load = τ − n² J_m q̈``; ``τ_load/(n η)`` driving (``τ_load q̇ ≥ 0``), ``τ_load η/n`` braking;
        plus the rotor's ``n J_m q̈`` (module docstring)."""
        tau, qd, qdd = (np.asarray(a, dtype=float) for a in (tau, qd, qdd))
        n, eta = self.gear_ratio, self.efficiency
        load = tau - self.reflected_inertia * qdd
        gear = np.where(load * qd >= 0.0, load / (n * eta), load * eta / n)
        return gear + n * self.rotor_inertia * qdd


@dataclass(frozen=True, eq=False)
class PassiveFriction:
    """Friction of the passive joints, per limb over its tree variables (``limbs`` names them; arrays
    aligned with ``limb.variable_names``; 0 at actuated variables, whose friction is in :class:`Drives`)."""

    limbs: tuple[str, ...]
    viscous: tuple[np.ndarray, ...]
    coulomb: tuple[np.ndarray, ...]
    coulomb_speed: tuple[np.ndarray, ...]

    def force(self, k: int, thd) -> np.ndarray:
        """Joint-side friction ``τ_f`` of limb ``k``'s tree variables at rates ``thd`` (..., n_l)."""
        return friction_force(thd, self.viscous[k], self.coulomb[k], self.coulomb_speed[k])

    def dissipated_power(self, joints_d) -> np.ndarray:
        """``Σ_l Σ τ_f θ̇`` [W] from each limb's tree rates (a dict name → (..., n_l), or a list in limb order)."""
        rates = [joints_d[name] for name in self.limbs] if isinstance(joints_d, dict) else list(joints_d)
        return sum(np.sum(self.force(k, np.asarray(thd, dtype=float)) * thd, axis=-1) for k, thd in enumerate(rates))


def robot_drives(spec, limbs, actuator_names) -> tuple[Drives | None, PassiveFriction | None]:
    """The drives (None if no actuated joint has a drive or friction) and the passive friction (None if no
    passive joint has friction) of a robot's ``limbs`` (:class:`pkm.algorithms.limb.LimbModel`). A cut
    joint's variables are not tree variables, so friction on a cut joint is refused (RobotFileError)."""
    by_name = {j.name: j for limb in limbs for j in limb.topology.joints}
    for limb in limbs:
        for j in limb.topology.cut_joints:
            if j.friction is not None:
                raise RobotFileError(spec.source, f"joint '{j.name}'.friction",
                                     "friction on a cut joint is not modelled (its rates are not tree variables): "
                                     "mark another joint of the loop cut = true")
    acts = [by_name[limb.tree.joint_names[int(a)]] for limb in limbs for a in limb.actuated]
    drives = None
    if any(j.drive is not None or j.friction is not None for j in acts):
        rows = []
        for j in acts:
            d = j.drive if j.drive is not None else DriveSpec(1.0)
            f = d.friction if j.drive is not None else (j.friction or FrictionSpec())
            rows.append((d.gear_ratio, d.rotor_inertia, f.viscous, f.coulomb, f.coulomb_speed, d.efficiency,
                         *(np.nan if getattr(d, k) is None else getattr(d, k) for k in RATINGS)))
        cols = np.array(rows, dtype=float).T
        drives = Drives(tuple(actuator_names), *(_frozen(c) for c in cols),
                        has_drive=_frozen([j.drive is not None for j in acts], bool))
    passive = None
    per_limb = []
    for limb in limbs:
        act = {int(a) for a in limb.actuated}
        f = [None if v in act or name not in by_name else by_name[name].friction
             for v, name in enumerate(limb.tree.joint_names)]
        per_limb.append([(x.viscous, x.coulomb, x.coulomb_speed) if x else (0.0, 0.0, DEFAULT_COULOMB_SPEED)
                         for x in f])
        passive = passive or any(x is not None for x in f)
    if passive:
        passive = PassiveFriction(tuple(l.name for l in limbs),
                                  *(tuple(_frozen([row[c] for row in rows]) for rows in per_limb) for c in range(3)))
    return drives, (passive or None)
