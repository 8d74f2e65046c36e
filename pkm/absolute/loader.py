"""pkm robot files in absolute coordinates (issue 16, deliverable 5): a
:class:`~pkm.description.spec.RobotSpec` becomes a :class:`~pkm.absolute.system.System`, and
inverse dynamics runs through rheonomic drive constraints.

Loading (:func:`load_spec`). Every body of the file (limb instances expanded, platform included)
becomes a director-form :class:`~pkm.absolute.body.Body` (:meth:`Body.from_spec`); the ground
has no coordinates. Every joint of the file becomes the matching constraint of the catalogue —
the cut joints too: absolute coordinates need no spanning tree. pkm's massless intermediate bodies
of multi-DOF joints never appear here, because the file's joints *are* the merged ones: a U (two
intersecting R axes with a massless cross) is a :class:`~pkm.absolute.joints.Universal` with
``x_i`` = the first axis (fixed in the parent) and ``y_j`` = the second (fixed in the child); an
S (three R axes with two massless bodies) is a :class:`~pkm.absolute.joints.Spherical`; R, P, C
map to :class:`Revolute`, :class:`Prismatic`, :class:`Cylindrical` about/along the file's axis
(the marker's z). Both markers of a joint are placed at one world frame at the reference
configuration (all joint variables zero), so every row is 0 there. Not supported (a clear
:class:`~pkm.errors.RobotFileError`): H joints, U joints whose axes are not perpendicular.

Redundancy. Parallelograms and other overconstrained loops give dependent rows; they are found
at the reference configuration (:meth:`System.redundancy`, pivoted QR on the reduced Jacobian) and
made inactive; the :class:`~pkm.absolute.redundancy.RedundancyReport` is kept on the model.

Drives (:meth:`AbsoluteModel.driven`). The file's actuated joints become rheonomic one-row
:class:`~pkm.absolute.lock.Lock` s on top of their joint: an R joint's drive prescribes the child
marker's rotation about the parent marker's z (row ``rz``, law ``about(z, θ(t))``), a P joint's
its translation along z (row ``z``). The joint variable is the child's motion relative to the
parent, pkm's convention for a joint directed parent → child. The actuator effort is the drive's
reaction on the child about (along) the joint axis: with ``M q̈ + Φ_qᵀλ = f`` a drive exerts
``−Φ_qᵀλ`` (:meth:`~pkm.absolute.quadratic.QuadraticConstraint.reaction`).

Inverse dynamics (:meth:`AbsoluteModel.inverse_dynamics`): at each sample the actuator angles,
rates and accelerations are prescribed, a start configuration (e.g. the bodies' poses from pkm's
IK) is assembled to ``|Φ| ≤ 1e-12`` with the drives, the velocity is the unique solution of
``Φ_q q̇ = −Φ_t`` (the driven system has no DOF), and ``(q̈, λ)`` solve the index-1 equations under
gravity; the torques are read from the drives' multipliers.

Assembly modes (issue 27). Drive angles alone do not say which assembly mode is meant, and the
director rows have false zeros (a drive row ``2e₀e_z`` holds at ``θ + π`` as well; Newton from the
reference at drives of 2 rad lands there). So a false zero is refused
(:meth:`~pkm.absolute.system.System.assemble`), and the configuration meant — pkm's IK solution,
whose bodies' poses the caller above this layer computes (``pkm reactions`` does) — is passed in as
the start with ``on_branch=True``: the result must stay on it (:meth:`AbsoluteModel.driven_state`);
without it the start must be near the result (:mod:`pkm.absolute.modes`).

Forward dynamics (:meth:`AbsoluteModel.simulate`, :mod:`pkm.absolute.forward`): the undriven
system under gravity and the actuator efforts as generalized forces.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pkm.absolute.body import Body
from pkm.absolute.checks import function, show
from pkm.absolute.joints import Cylindrical, Prismatic, Revolute, Spherical, Universal
from pkm.absolute.laws import about, along
from pkm.absolute.lock import Lock
from pkm.absolute.markers import Marker
from pkm.absolute.model_checks import check_motion, check_spec, check_start_configurations, check_tol, finite_result
from pkm.absolute.modes import assemble_near, check_branch
from pkm.absolute.redundancy import RedundancyReport
from pkm.absolute.system import System
from pkm.absolute.system import as_system as check_system
from pkm.errors import InputError, RobotFileError, TopologyError

#: Perpendicularity a U joint's two axes need (|cos| below this).
U_ORTHOGONALITY_TOL = 1e-9


def _frame(point, z, x_hint=None) -> np.ndarray:
    """A pose (4×4) at ``point`` with z axis ``z`` (and x axis along ``x_hint`` ⊥ z, if given)."""
    z = np.asarray(z, dtype=float) / np.linalg.norm(z)
    if x_hint is None:
        x_hint = np.eye(3)[int(np.argmin(np.abs(z)))]
    x = np.asarray(x_hint, dtype=float) - np.dot(x_hint, z) * z
    x /= np.linalg.norm(x)
    C = np.eye(4)
    C[:3, :3] = np.column_stack([x, np.cross(z, x), z])
    C[:3, 3] = point
    return C


def _u_frame(point, a1, a2) -> np.ndarray:
    """A pose at ``point`` with x along ``a1`` and y along ``a2`` (perpendicular unit axes)."""
    x = np.asarray(a1, dtype=float) / np.linalg.norm(a1)
    y = np.asarray(a2, dtype=float) / np.linalg.norm(a2)
    C = np.eye(4)
    C[:3, :3] = np.column_stack([x, y, np.cross(x, y)])
    C[:3, 3] = point
    return C


@dataclass
class Actuator:
    """A drive: the file's actuated joint ``name`` (type ``R`` or ``P``), its markers (``child`` on
    the joint's child, ``parent`` on its parent or the ground; both at the joint frame at the
    reference, z = the joint axis)."""

    name: str
    type: str
    child: Marker
    parent: Marker

    def drive(self, law) -> Lock:
        """The rheonomic lock row prescribing this joint's variable by the scalar ``law``."""
        z = (0.0, 0.0, 1.0)
        if self.type == "R":
            return Lock(self.child, self.parent, ("rz",), rotation=about(z, law), name=f"drive:{self.name}")
        return Lock(self.child, self.parent, ("z",), translation=along(z, law), name=f"drive:{self.name}")


@dataclass
class AbsoluteModel:
    """A robot file in absolute coordinates.

    ``system``: bodies and joints with the redundant rows inactive (``report`` says which);
    ``bodies``: name → :class:`Body` (in ``system`` order); ``joints``: file joint name →
    constraint; ``actuators``: the drives' data, in the file's order of actuated joints;
    ``gravity`` (3,).
    """

    system: System
    full: System
    report: RedundancyReport
    bodies: dict[str, Body]
    joints: dict
    actuators: list[Actuator]
    gravity: np.ndarray
    reference: np.ndarray = field(repr=False, default=None)

    @property
    def dof(self) -> int:
        """Degrees of freedom at the reference configuration: ``n − rank Φ_q``."""
        return self.system.n - self.system.m

    def coordinates(self, poses: dict) -> np.ndarray:
        """``q`` from a dict body name → frame pose (4×4) (every body of the model)."""
        if not isinstance(poses, dict):
            raise InputError(f"poses must be a dict body name -> 4×4 pose, got {show(poses)}")
        missing = [name for name in self.bodies if name not in poses]
        if missing:
            raise InputError(f"no pose for bodies {missing}")
        return self.system.coordinates([poses[name] for name in self.bodies])

    def driven(self, laws) -> System:
        """The system with one rheonomic drive per actuator (``laws``: scalar laws, actuator order)
        appended after the joints; the joints' redundant rows stay inactive."""
        if not isinstance(laws, (list, tuple)):
            raise InputError(f"laws must be a list of scalar laws t -> (s, ṡ, s̈), one per actuator, got "
                             f"{show(laws)}")
        laws = [function(law, f"laws[{k}] (a scalar law t -> (s, ṡ, s̈))", optional=False)
                for k, law in enumerate(laws)]
        if len(laws) != len(self.actuators):
            raise InputError(f"{len(laws)} laws for {len(self.actuators)} actuators")
        if len(self.actuators) > self.dof:
            raise InputError(f"{len(self.actuators)} drives for {self.dof} degrees of freedom: redundant actuation "
                             "over-determines the drive constraints and leaves their forces undetermined; "
                             "pkm.Robot.inverse_dynamics distributes them (paper Sec. 8.2: weights, preload)")
        drives = [a.drive(law) for a, law in zip(self.actuators, laws)]
        active = np.concatenate([self.system.active, np.ones(len(drives), bool)])
        return System(self.system.bodies, self.system.joints + tuple(drives), active)

    def actuator_efforts(self, driven: System, q, lam, t: float = 0.0) -> np.ndarray:
        """Torques (forces) of the drives of ``driven`` on their child bodies about (along) the
        joint axes, from the multipliers ``lam``."""
        W = check_system(driven).reactions(q, lam, t)
        out = np.empty(len(self.actuators))
        for k, a in enumerate(self.actuators):
            w_child = W[f"drive:{a.name}"][0]
            axis = a.parent.world_pose(None if a.parent.body is None else q[driven.body_slice(a.parent.body)])[:3, 2]
            out[k] = w_child[:3] @ axis if a.type == "R" else w_child[3:] @ axis
        return out

    def actuator_forces(self, q, u) -> np.ndarray:
        """The generalized force (n,) of actuator efforts ``u`` (actuator order) at ``q``
        (:func:`pkm.absolute.forward.actuator_forces`)."""
        from pkm.absolute.forward import actuator_forces

        return actuator_forces(self, q, u)

    def simulate(self, u, q0, v0, dt: float, steps: int, **options):
        """Forward dynamics under gravity and actuator efforts ``u`` (callable ``u(t)`` or constants)
        from a consistent ``(q0, v0)`` (:func:`pkm.absolute.forward.consistent_state`); see
        :func:`pkm.absolute.forward.simulate`."""
        from pkm.absolute.forward import simulate

        return simulate(self, u, q0, v0, dt, steps, **options)

    def driven_state(self, theta, theta_d, theta_dd, q_start, tol: float = 1e-12, on_branch: bool = False):
        """``(driven system, q, q̇)`` with the drives holding ``theta, theta_d, theta_dd`` (actuator
        order) at t = 0: ``q`` assembled from ``q_start`` to ``|Φ| ≤ tol``, ``q̇`` the unique velocity
        of the driven system (it has no DOF left).

        Assembly modes (:mod:`pkm.absolute.modes`). With ``on_branch=True`` ``q_start`` *is* the
        configuration meant at these drives (e.g. the bodies' poses of pkm's IK solution, passed in
        as data): the assembly only polishes it, and a result that left it is an
        :class:`~pkm.absolute.system.AssemblyModeError` (:func:`~pkm.absolute.modes.check_branch`).
        Otherwise ``q_start`` must be near the result (the previous sample's solution along a
        trajectory; :func:`~pkm.absolute.modes.assemble_near`): from a far start Newton's method
        reaches any assembly mode, and that is refused. A false zero of the director rows (a drive
        at ``θ + π``) is refused either way.

        Raises :class:`~pkm.errors.TopologyError` when the drives do not determine the configuration
        (the model has more DOF than drives, e.g. a platform that pkm's task space holds by an ideal
        constraint, which absolute coordinates do not model)."""
        free = self.dof - len(self.actuators)
        if free > 0:
            raise TopologyError(f"the drives leave {free} of the absolute-coordinate model's {self.dof} degrees of "
                                f"freedom free (the platform's mobility exceeds the {len(self.actuators)} actuators; an "
                                f"ideal constraint of the task space is not modelled in absolute coordinates): the "
                                f"motion is not determined")
        theta, theta_d, theta_dd = check_motion(self, theta, theta_d, theta_dd)
        q_start, tol = self.system._q(q_start, "q_start"), check_tol(tol)
        laws = [(lambda t, v=(float(a), float(b), float(c)): v) for a, b, c in zip(theta, theta_d, theta_dd)]
        sysd = self.driven(laws)
        q_start = np.asarray(q_start, dtype=float)
        if on_branch:
            q = sysd.assemble(q_start, 0.0, tol=tol)
            check_branch(self, q, q_start, float(np.max(np.abs(sysd.phi(q)))))
        else:
            q = assemble_near(self, sysd, q_start, tol)
        return sysd, q, sysd.project_velocity(q, np.zeros_like(q), 0.0)

    def solve_instant(self, theta, theta_d, theta_dd, q_start, tol: float = 1e-12, on_branch: bool = False):
        """Inverse dynamics at one instant: the drives prescribe ``theta, theta_d, theta_dd``
        (actuator order); ``q_start`` and ``on_branch`` as for :meth:`driven_state`. Returns
        ``(tau, q, qd, qdd, lam, driven system)``."""
        sysd, q, qd = self.driven_state(theta, theta_d, theta_dd, q_start, tol, on_branch)
        qdd, lam = sysd.accelerations(q, qd, sysd.gravity_force(self.gravity), 0.0)
        return self.actuator_efforts(sysd, q, lam), q, qd, qdd, lam, sysd

    def inverse_dynamics(self, theta, theta_d, theta_dd, q_start=None, tol: float = 1e-12, on_branch: bool = False):
        """Actuator efforts (N, n_act) for prescribed actuator motions (N, n_act) each. ``q_start``
        (N, n) or (n,): start configurations for the assembly (default: the previous sample's
        solution, the first from the reference; each must be near its result); with ``on_branch``
        they are the configurations meant (one per sample, e.g. from pkm's IK solution), and a
        sample assembled elsewhere is an :class:`~pkm.absolute.system.AssemblyModeError`
        (:meth:`driven_state`)."""
        theta, theta_d, theta_dd = check_motion(self, theta, theta_d, theta_dd, samples=True)
        N = theta.shape[0]
        starts, tol = check_start_configurations(self, q_start, N), check_tol(tol)
        if on_branch and (starts is None or starts.ndim != 2 and N > 1):
            raise InputError("on_branch needs the configuration of every sample as q_start (N, n)")
        tau = np.empty((N, len(self.actuators)))
        q = self.reference
        for s in range(N):
            start = q if starts is None else (starts if starts.ndim == 1 else starts[s])
            tau[s], q, *_ = self.solve_instant(theta[s], theta_d[s], theta_dd[s], start, tol, on_branch)
        return finite_result(tau, "the actuator efforts")


def _joint(spec, j, bodies, ref):
    """The constraint and the two markers (parent, child) of file joint ``j``."""
    ends = []
    for name in (j.parent, j.child):
        body = None if name == spec.ground else bodies[name]
        ends.append((body, None if body is None else ref[name]))
    axes = np.asarray(j.axes, dtype=float)
    if j.type in ("R", "P", "C"):
        C = _frame(j.point, axes[0])
    elif j.type == "U":
        a1, a2 = axes[0] / np.linalg.norm(axes[0]), axes[1] / np.linalg.norm(axes[1])
        if abs(a1 @ a2) > U_ORTHOGONALITY_TOL:
            raise RobotFileError(spec.source, f"joint {j.name}",
                                 f"U joint axes are not perpendicular (cos = {a1 @ a2:.3g}): not supported in "
                                 f"absolute coordinates")
        C = _u_frame(j.point, a1, a2)
    elif j.type == "S":
        C = _frame(j.point, (0.0, 0.0, 1.0))
    else:
        raise RobotFileError(spec.source, f"joint {j.name}",
                             f"joint type {j.type!r} has no absolute-coordinate constraint here (R, P, C, U, S only)")
    mp, mc = (Marker.at(b, q, C) for b, q in ends)
    cls = {"R": Revolute, "P": Prismatic, "C": Cylindrical, "U": Universal, "S": Spherical}[j.type]
    return cls(mp, mc, name=j.name), mp, mc


def load_spec(spec, rtol: float = 1e-9) -> AbsoluteModel:
    """The :class:`AbsoluteModel` of a :class:`~pkm.description.spec.RobotSpec`, or of the robot file at the
    path ``spec`` (see the module doc)."""
    spec, rtol = check_spec(spec, rtol)
    body_specs, joint_specs = spec.expanded()
    bodies = {b.name: Body.from_spec(b) for b in body_specs if b.name != spec.ground}
    ref = {name: b.coordinates(bs.frame) for (name, b), bs in
           zip(bodies.items(), [bs for bs in body_specs if bs.name != spec.ground])}
    joints, actuators = {}, []
    for j in joint_specs:
        constraint, mp, mc = _joint(spec, j, bodies, ref)
        joints[j.name] = constraint
        if j.actuated:
            if j.type not in ("R", "P"):
                raise RobotFileError(spec.source, f"joint {j.name}", f"an actuated {j.type} joint cannot be driven "
                                                                     f"(R or P only)")
            actuators.append(Actuator(j.name, j.type, mc, mp))
    full = System(list(bodies.values()), list(joints.values()))
    q_ref = np.concatenate([ref[name] for name in bodies])
    system, report = full.remove_redundant(q_ref, rtol=rtol)
    return AbsoluteModel(system=system, full=full, report=report, bodies=bodies, joints=joints,
                         actuators=actuators, gravity=np.asarray(spec.gravity, dtype=float), reference=q_ref)
