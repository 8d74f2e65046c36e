"""RobotSpec: the validated, plain-data description of a robot (layer 2 data model).

A :class:`RobotSpec` is what :func:`pkm.description.robotfile.load_spec` returns after reading and checking a
robot file. Everything in it is in SI units and expressed in the world frame ``F_0`` at the
reference configuration (all joint variables zero), except the representative limb
(:class:`LimbSpec`), whose geometry is expressed in its construction frame ``F_0'`` and is mounted
once per :class:`MountSpec` (paper Sec. 7, eq. 121–126, eq. 121–123).

Nothing here computes kinematics; the compiled, array-based model lives in :mod:`pkm.description.model`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from pkm.errors import RobotFileError

#: Joint types and the number of 1-DOF axes (joint variables) each is modelled with.
JOINT_DOF = {"R": 1, "P": 1, "H": 1, "C": 2, "U": 2, "S": 3}

#: Names of the six twist components, in pkm's (ω; v) order.
TWIST_COMPONENTS = ("wx", "wy", "wz", "vx", "vy", "vz")


@dataclass(frozen=True)
class BodySpec:
    """A rigid body at the reference configuration.

    Attributes
    ----------
    name:
        Unique body name.
    frame:
        4×4 pose ``A`` of the body frame in the world (or construction) frame at the reference
        configuration (paper eq. 1, 2, 146, 147, ``A_k = C_k(0)``).
    mass:
        Mass in kg (0 only for the ground).
    com:
        Centre of mass in the world (or construction) frame, metres.
    inertia:
        3×3 inertia tensor about the centre of mass, resolved in the body-frame axes, kg·m².
    shape:
        The primitive the inertia was computed from, if any (a dict with SI values), for plots
        and ``pkm info``.
    """

    name: str
    frame: np.ndarray
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    shape: dict | None = None

    def spatial_inertia(self) -> np.ndarray:
        """6×6 body-fixed mass matrix ``M = [[Θ, m skew(d)], [-m skew(d), m I]]`` (eq. 167).

        ``Θ`` is the inertia tensor about the body-frame origin (parallel-axis theorem applied to
        :attr:`inertia`), ``d`` the centre of mass in body coordinates. Ordered (ω; v) like twists.
        """
        R = self.frame[:3, :3]
        d = R.T @ (self.com - self.frame[:3, 3])
        m = self.mass
        dx = np.array([[0.0, -d[2], d[1]], [d[2], 0.0, -d[0]], [-d[1], d[0], 0.0]])
        theta = self.inertia - m * dx @ dx
        M = np.zeros((6, 6))
        M[:3, :3] = theta
        M[:3, 3:] = m * dx
        M[3:, :3] = -m * dx
        M[3:, 3:] = m * np.eye(3)
        return M


@dataclass(frozen=True)
class JointSpec:
    """A joint between two bodies, given at the reference configuration.

    Attributes
    ----------
    name:
        Unique joint name.
    type:
        One of ``R`` (revolute), ``P`` (prismatic), ``H`` (helical), ``C`` (cylindrical: a
        rotation then a translation along the same axis), ``U`` (universal: two intersecting
        axes), ``S`` (spherical: three concurrent axes).
    parent, child:
        Body names. The joint variables describe ``child`` relative to ``parent`` when the tree
        is directed parent → child; see :mod:`pkm.description.model` for the reversed case.
    point:
        A point on the axis (R, H, C), the centre (U, S), or the reference point (P), metres.
    axes:
        ``(k, 3)`` array of unit axis directions, one per 1-DOF axis, in the order parent → child
        (k = :data:`JOINT_DOF` of the type; for ``C`` both rows are the same axis).
    pitch:
        Pitch of an H joint in m/rad (translation per radian), 0 otherwise.
    actuated:
        Whether the joint is driven (only 1-DOF joints may be).
    cut:
        ``True`` if the file names this joint as a cut joint, ``False`` if it forbids it, ``None``
        to let the topology analysis choose.
    drive, friction:
        The joint's :class:`pkm.description.drives.DriveSpec` (actuated joints) and
        :class:`~pkm.description.drives.FrictionSpec`, or None (:mod:`pkm.description.drives`).
    limits:
        The file's ``limits`` (a :class:`pkm.description.limits.JointLimits`), or None.
    """

    name: str
    type: str
    parent: str
    child: str
    point: np.ndarray
    axes: np.ndarray
    pitch: float = 0.0
    actuated: bool = False
    cut: bool | None = None
    drive: object = None
    friction: object = None
    limits: object = None

    @property
    def dof(self) -> int:
        """Number of joint variables (1-DOF axes) of this joint."""
        return JOINT_DOF[self.type]

    def variable_names(self) -> list[str]:
        """Names of the joint variables: ``name`` for 1-DOF joints, ``name.1``, ``name.2``… else."""
        if self.dof == 1:
            return [self.name]
        return [f"{self.name}.{k + 1}" for k in range(self.dof)]


@dataclass(frozen=True)
class MountSpec:
    """Where instance ``name`` of the representative limb is mounted (paper Sec. 7, eq. 121–126).

    ``base`` is ``S_0(l)`` (maps the mount frame on the ground to ``F_0``); ``platform`` is
    ``S_p(l)`` (maps the mount frame on the platform to the platform frame ``F_p``), derived from
    ``S_p(l) = A_p^{-1} S_0(l) A_p'`` so that the platform reference pose is the same for all limbs.

    ``mirror`` (``""``, ``"x"``, ``"y"`` or ``"z"``): a reflection in the mount frame — that
    coordinate of the construction frame ``F_0'`` is negated before ``S_0(l)`` maps the limb, so the
    instance is the mirror image of the representative limb (e.g. the second leg of each pair of a
    hexapod). ``base`` stays a proper pose; :attr:`mirror_matrix` is the reflection ``D``, and the
    maps of :func:`mount_limb` use ``M = R_0(l) D`` (improper, ``det M = −1``).
    """

    name: str
    base: np.ndarray
    platform: np.ndarray
    mirror: str = ""

    @property
    def mirror_matrix(self) -> np.ndarray:
        """The reflection ``D`` (3×3 diagonal, ±1) applied in the mount frame (identity without mirror)."""
        D = np.eye(3)
        if self.mirror:
            D["xyz".index(self.mirror), "xyz".index(self.mirror)] = -1.0
        return D


@dataclass(frozen=True)
class LimbSpec:
    """A representative limb (RL), in its construction frame ``F_0'``, mounted once per mount.

    Its joints may name the ground and the platform bodies; all other bodies are its own.
    ``platform_frame`` is the platform pose ``A_p'`` in ``F_0'``.
    """

    bodies: tuple[BodySpec, ...]
    joints: tuple[JointSpec, ...]
    mounts: tuple[MountSpec, ...]
    platform_frame: np.ndarray
    independent: tuple[str, ...] = ()


@dataclass(frozen=True)
class TaskSpec:
    """The task space: which platform twist components the task velocity ``V_t`` holds.

    ``kind`` is ``translational``, ``planar``, ``scara``, ``rotational`` or ``select``;
    ``components`` are the selected names from :data:`TWIST_COMPONENTS`, in ``V_t`` order
    (paper Sec. 3.6, eq. 82–83, 85, eq. 82–83: ``P_p`` is the 0/1 matrix with ``V_p = P_p V_t``).
    ``ideal`` (the file's ``ideal_constraint``): the twist components outside the task space that
    an ideal (workless, massless) constraint may hold where the limbs leave the platform free —
    all of them for ``ideal_constraint = true``, the listed ones for a list; ``()`` without the key,
    and then a platform whose mobility exceeds the task space is an error at load
    (:func:`pkm.description.freedom.check_task_mobility`).
    """

    kind: str
    components: tuple[str, ...]
    ideal: tuple[str, ...] = ()

    def selection_matrix(self) -> np.ndarray:
        """``P_p`` (6 × δ_p), the velocity distribution matrix of eq. (82)."""
        P = np.zeros((6, len(self.components)))
        for col, name in enumerate(self.components):
            P[TWIST_COMPONENTS.index(name), col] = 1.0
        return P

    def coordinate_names(self) -> list[str]:
        """User-facing names of the task coordinates (``x, y, z`` for translations)."""
        names = {"vx": "x", "vy": "y", "vz": "z", "wx": "rx", "wy": "ry", "wz": "rz"}
        return [names[c] for c in self.components]


@dataclass(frozen=True)
class RobotSpec:
    """A validated robot description (SI units, world frame, reference configuration).

    ``bodies`` and ``joints`` are what the file writes out directly; the representative limb, if
    any, is in ``limb``. :meth:`expanded` returns the full list with every limb instance mounted.
    """

    name: str
    source: Path | None
    units: str
    gravity: np.ndarray
    ground: str
    platform: str | None
    bodies: tuple[BodySpec, ...]
    joints: tuple[JointSpec, ...]
    limb: LimbSpec | None
    task: TaskSpec | None
    trajectory: dict | None
    parameters: dict = field(default_factory=dict)
    description: str = ""

    # ------------------------------------------------------------------ checks
    def check_actuation(self) -> None:
        """Raise :class:`~pkm.errors.RobotFileError` (entry ``task``) unless the robot has at least one
        actuated joint per task coordinate (``n_act ≥ δ_p``, paper Sec. 5): as many (a square ``J_IK``,
        eq. 116) or more (redundant actuation: the forces are distributed by a weighted pseudoinverse
        of ``J_IKᵀ``, Sec. 8.2, :mod:`pkm.algorithms.distribution`); fewer cannot hold the platform.
        Nothing to check without a platform or a task.

        ``pkm.load`` and every ``pkm`` command check it on load (``pkm.load(..., check=False)`` and
        :class:`pkm.Robot` built from a spec do not: inverse kinematics works with any number of
        actuators, e.g. the benchmarks' robots with L limbs of a 3-DOF platform); the inverse
        dynamics, the EOM and sweeps check it again.
        """
        if self.task is None or self.platform is None:
            return
        direct = [j.name for j in self.joints if j.actuated]
        per_limb = [j.name for j in self.limb.joints if j.actuated] if self.limb is not None else []
        n_mounts = len(self.limb.mounts) if self.limb is not None else 0
        n_act, n_task = len(direct) + len(per_limb) * n_mounts, len(self.task.components)
        if n_act >= n_task:
            return

        def names(items):
            return f"joint{'s' if len(items) > 1 else ''} " + ", ".join(f"'{n}'" for n in items)

        parts = [f"limb {names(per_limb)} in each of {n_mounts} mount{'s' if n_mounts > 1 else ''}"] if per_limb else []
        parts += [names(direct)] if direct else []
        which = f" ({' and '.join(parts)})" if parts else ""
        raise RobotFileError(self.source, "task", f"{n_act} actuated joint{'s' if n_act != 1 else ''}{which} for "
                                                  f"{n_task} task coordinates ({', '.join(self.task.components)}): "
                                                  f"too few actuators to move the platform; mark at least "
                                                  f"one joint per task coordinate 'actuated = true'")

    # ------------------------------------------------------------------ expansion
    def expanded(self) -> tuple[tuple[BodySpec, ...], tuple[JointSpec, ...]]:
        """All bodies and joints in world coordinates, limb instances included.

        Limb instance ``m`` renames its bodies and joints to ``"{m}/{name}"``; ground and platform
        keep their names. Eq. (122–123): ``A_i(l) = S_0(l) A_i'`` and every point/axis is mapped
        by ``S_0(l)``.
        """
        bodies = list(self.bodies)
        joints = list(self.joints)
        if self.limb is not None:
            for mount in self.limb.mounts:
                b, j = mount_limb(self.limb, mount, self.ground, self.platform)
                bodies.extend(b)
                joints.extend(j)
        return tuple(bodies), tuple(joints)

    def body(self, name: str) -> BodySpec:
        """The body called ``name`` (after expansion); KeyError if there is none."""
        for b in self.expanded()[0]:
            if b.name == name:
                return b
        raise KeyError(name)

    def with_payload(self, mass: float, point=None) -> "RobotSpec":
        """This robot with a point mass ``mass`` [kg] fixed to the platform at ``point`` (world
        coordinates at the reference configuration; default the platform frame's origin): the
        platform's mass, centre of mass and inertia about it combined (parallel-axis theorem,
        the inertia resolved in the platform frame's axes)."""
        if self.platform is None:
            raise RobotFileError(self.source, "platform", "a payload needs a platform")
        if not (np.isfinite(mass) and mass >= 0.0):
            raise RobotFileError(self.source, "platform", f"payload mass must be a finite number >= 0 kg, got {mass!r}")
        old = next((b for b in self.bodies if b.name == self.platform), None)
        if old is None:
            raise RobotFileError(self.source, "platform", f"platform {self.platform!r} is not a body of the file")
        R = old.frame[:3, :3]
        p = old.frame[:3, 3] if point is None else np.asarray(point, dtype=float)
        if p.shape != (3,) or not np.all(np.isfinite(p)):
            raise RobotFileError(self.source, "platform", f"payload point must be 3 finite coordinates, got {point!r}")
        M = old.mass + mass
        com = (old.mass * old.com + mass * p) / M

        def steiner(m, d):  # inertia of a point mass m at offset d (world) from com, in body axes
            d = R.T @ d
            return m * (d @ d * np.eye(3) - np.outer(d, d))

        with np.errstate(all="ignore"):
            inertia = old.inertia + steiner(old.mass, old.com - com) + steiner(mass, p - com)
            about_frame = inertia + steiner(M, com - old.frame[:3, 3])   # what the dynamics build from it
        from pkm.description.inertia import MAX_INERTIA

        if not (np.all(np.isfinite(about_frame)) and np.abs(about_frame).max() <= MAX_INERTIA):
            raise RobotFileError(self.source, "platform", f"a payload of {mass:g} kg is too large: the platform's "
                                 f"inertia overflows (entries beyond {MAX_INERTIA:g} kg·m²)")
        body = replace(old, mass=M, com=com, inertia=inertia)
        return replace(self, bodies=tuple(body if b is old else b for b in self.bodies))

    def with_inertia_scaled(self, factor: float) -> "RobotSpec":
        """This robot with every body's mass and inertia (the limb template's too) multiplied by
        ``factor`` > 0, centres of mass kept: a model that errs by ``factor − 1`` in all its rigid-body
        parameters (drives and friction unchanged), e.g. a computed-torque controller's model."""
        if not (np.isfinite(factor) and factor > 0.0):
            raise RobotFileError(self.source, "bodies", f"an inertia scale must be a finite number > 0, got {factor!r}")

        def scaled(bodies):
            return tuple(replace(b, mass=b.mass * factor, inertia=b.inertia * factor) for b in bodies)

        limb = None if self.limb is None else replace(self.limb, bodies=scaled(self.limb.bodies))
        return replace(self, bodies=scaled(self.bodies), limb=limb)

    def joint(self, name: str) -> JointSpec:
        """The joint called ``name`` (after expansion); KeyError if there is none."""
        for j in self.expanded()[1]:
            if j.name == name:
                return j
        raise KeyError(name)


def instance_name(mount: str, name: str) -> str:
    """Name of RL body/joint ``name`` in limb instance ``mount``."""
    return f"{mount}/{name}"


def mount_limb(
    limb: LimbSpec, mount: MountSpec, ground: str, platform: str | None
) -> tuple[list[BodySpec], list[JointSpec]]:
    """Bodies and joints of one limb instance, mapped to world coordinates by ``S_0(l)`` (eq. 122–123).

    A mirrored mount (:attr:`MountSpec.mirror`) maps points by ``M = R_0(l) D`` (a reflection,
    ``det M = −1``): centres of mass and joint points ``M c + p``; a prismatic axis (a vector) to
    ``M e``; a rotation axis (R, H, C, U, S; an axial vector) to ``−M e``, so that the same joint
    variables give the mirror image of the limb's configuration (an H joint's pitch changes sign,
    a C joint's translation runs along ``−M e``); a body frame to the proper frame ``M A D_z``
    (``D_z = diag(1, 1, −1)``), in which the inertia about the centre of mass is ``D_z I D_z``.
    """
    S = mount.base
    R, p = S[:3, :3], S[:3, 3]
    keep = {ground, platform}
    if not mount.mirror:
        M, flip, Dz = R, 1.0, np.eye(3)
    else:
        M, flip, Dz = R @ mount.mirror_matrix, -1.0, np.diag([1.0, 1.0, -1.0])

    def frame(A):
        out = np.eye(4)
        out[:3, :3] = M @ A[:3, :3] @ Dz
        out[:3, 3] = M @ A[:3, 3] + p
        return out

    bodies = [
        replace(
            b,
            name=instance_name(mount.name, b.name),
            frame=frame(b.frame),
            com=M @ b.com + p,
            inertia=Dz @ b.inertia @ Dz,
        )
        for b in limb.bodies
    ]
    joints = [
        replace(
            j,
            name=instance_name(mount.name, j.name),
            parent=j.parent if j.parent in keep else instance_name(mount.name, j.parent),
            child=j.child if j.child in keep else instance_name(mount.name, j.child),
            point=M @ j.point + p,
            axes=(j.axes @ M.T) * (1.0 if j.type == "P" else flip),
            pitch=flip * j.pitch,
            limits=None if j.limits is None else j.limits.mapped(M),
        )
        for j in limb.joints
    ]
    return bodies, joints
