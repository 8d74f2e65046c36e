"""Assembly modes of a driven robot in absolute coordinates (issue 27): which configuration the
assembly of :meth:`~pkm.absolute.loader.AbsoluteModel.driven_state` reaches, and the checks that
it is the one meant.

Drive angles alone do not fix a configuration: a Delta's elbows can be turned over at the same
drive angles (assembly modes), and the director rows have false zeros besides — a drive row is
``2e₀e_z``, zero at ``θ + π`` as well (:meth:`~pkm.absolute.lock.Lock.false_zero`). Newton's
method from a far start reaches any of them: from the reference at drives of 2 rad the Delta's
arms land at ``2 − π``. Two ways to the configuration meant:

* **the branch as data** (:func:`check_branch`): the caller passes the configuration itself — the
  bodies' poses of pkm's IK solution, computed above this layer (``pkm reactions``) — and the
  assembly only polishes it; a result whose joints' relative poses moved from it by more than
  :data:`BRANCH_TOL` (:func:`branch_distance`) is another mode and refused;
* **a start near the result** (:func:`assemble_near`): the previous sample's solution along a
  trajectory (or the reference for the first sample); a result that moved a joint by more than
  :data:`NEAR` from it, or lies across a singular configuration of the driven mechanism (the sign
  of ``det Φ_q`` changed, :func:`_sheet`), is refused — Newton may have jumped to another mode.

Continuation along the drives from the reference would give answers further away, but not pkm's:
pkm's IK follows the task space from ``x_ref``, which e.g. takes the hexapod across its
singularity at a 90° turn about z, where the drives' straight path stays on the reference's side.
"""
from __future__ import annotations

import math

import numpy as np

from pkm.absolute.system import AssemblyModeError

#: How far (rad, or lengths of the model) a joint's relative pose may move from the branch given
#: as data: the assembly only polishes a configuration that holds to the IK's tolerance, whereas
#: another assembly mode is O(0.1–π) away.
BRANCH_TOL = 1e-4
#: How far (rad, or lengths of the model) a joint may move from a start that is not the branch
#: (the previous sample's solution, the reference): a trajectory's samples are a few hundredths
#: apart, the IRSBot-2's default motion starts 0.24 rad from its reference, whereas Newton from
#: ~2 rad away lands on any mode (the Delta's arms at ``2 − π``, a hexapod turned the other way).
NEAR = 0.5


def _sides(model, joint, q):
    return [None if b is None else q[model.system.body_slice(b)] for b in joint.bodies]


def size(model) -> float:
    """The model's length scale: the diagonal of the box around its joints and centres of mass at
    the reference (a spherical wrist's joints all meet at one point; 1 if it is a point)."""
    q = model.reference
    points = [j.marker_poses(*_sides(model, j, q))[0][:3, 3] for j in model.joints.values()]
    points += [q[model.system.body_slice(b)][:3] for b in model.system.bodies]
    d = float(np.linalg.norm(np.ptp(np.array(points), axis=0))) if points else 0.0
    return d if d > 1e-9 else 1.0


def branch_distance(model, q, q_branch) -> tuple[str, float]:
    """``(joint, distance)``: the file joint whose relative pose (marker j in marker i) differs most
    between ``q`` and ``q_branch``, and by how much — the angle between the two relative rotations
    [rad] or the relative translation's change divided by :func:`size`, whichever is larger."""
    length = size(model)
    worst = ("", 0.0)
    for name, j in model.joints.items():
        Ta, Tb = (np.linalg.solve(*j.marker_poses(*_sides(model, j, qq))) for qq in (q, q_branch))
        c = np.clip(0.5 * (np.trace(Ta[:3, :3].T @ Tb[:3, :3]) - 1.0), -1.0, 1.0)
        dist = max(float(np.arccos(c)), float(np.linalg.norm(Ta[:3, 3] - Tb[:3, 3])) / length)
        if dist > worst[1]:
            worst = (name, dist)
    return worst


def check_branch(model, q, q_branch, residual: float = 0.0) -> None:
    """:class:`~pkm.absolute.system.AssemblyModeError` unless ``q`` is on the branch ``q_branch``
    (every joint within :data:`BRANCH_TOL`, :func:`branch_distance`)."""
    joint, dist = branch_distance(model, q, q_branch)
    if dist > BRANCH_TOL:
        raise AssemblyModeError(f"the absolute-coordinate assembly reached another assembly mode than the given branch: "
                                f"joint {joint!r} moved by {dist:.3g} (rad, or lengths of the model) from it, more than "
                                f"{BRANCH_TOL:g} (is the given configuration the one at these drives?)", residual, 0)


def drive_values(model, q) -> np.ndarray:
    """The actuators' joint variables at ``q`` (actuator order): an R drive's rotation of the child
    marker about the parent marker's z, in (−π, π]; a P drive's translation along it."""
    out = np.empty(len(model.actuators))
    for k, a in enumerate(model.actuators):
        sides = [None if m.body is None else q[model.system.body_slice(m.body)] for m in (a.parent, a.child)]
        T = np.linalg.solve(a.parent.world_pose(sides[0]), a.child.world_pose(sides[1]))
        out[k] = math.atan2(T[1, 0], T[0, 0]) if a.type == "R" else T[2, 3]
    return out


def _sheet(sysd, q) -> float:
    """The sign of ``det Φ_q`` of the driven system ``sysd`` at ``q`` (square where the drives fix
    every DOF): configurations that a singularity of the driven mechanism separates (where its
    forward kinematics folds, type II) have opposite signs; 0 at a singular one. With dependent rows
    left out at the reference (parallelograms) the rows kept can also lose rank elsewhere although
    the mechanism does not: the sign changes there too, and the assembly refuses — an error where
    it cannot tell, never another mode."""
    G = sysd.jacobian(q, 0.0)
    return float(np.linalg.slogdet(G)[0]) if G.shape[0] == G.shape[1] else 1.0


def assemble_near(model, sysd, q_start, tol: float = 1e-12) -> np.ndarray:
    """``q`` of the driven system ``sysd`` (drives constant, t = 0) assembled from ``q_start``,
    refused (:class:`~pkm.absolute.system.AssemblyModeError`) unless it is near the start — every
    joint within :data:`NEAR` (:func:`branch_distance`) and on the same side of the singular
    configurations (:func:`_sheet`, the drives at their values at ``q_start``): the configuration
    Newton reaches from a far start is any assembly mode (module doc)."""
    q_start = np.asarray(q_start, dtype=float)
    q = sysd.assemble(q_start, 0.0, tol=tol)
    residual = float(np.max(np.abs(sysd.phi(q))))
    joint, dist = branch_distance(model, q, q_start)
    if dist > NEAR:
        raise AssemblyModeError(f"the absolute-coordinate assembly moved joint {joint!r} by {dist:.3g} (rad, or lengths "
                                f"of the model) from the start, more than {NEAR:g}: from a far start Newton's method "
                                f"reaches any assembly mode; give the configuration at these drives (on_branch=True, "
                                f"e.g. the bodies' poses of pkm's IK solution) or a start near it", residual, 0)
    at_start = model.driven([(lambda t, v=float(v): (v, 0.0, 0.0)) for v in drive_values(model, q_start)])
    if _sheet(at_start, q_start) != _sheet(sysd, q):
        raise AssemblyModeError("the absolute-coordinate assembly crossed a singular configuration of the driven mechanism "
                                "(or of the rows kept at the reference) between the start and the result (det Φ_q "
                                "changed sign): it may be another assembly mode; give the configuration at these drives "
                                "(on_branch=True, e.g. the bodies' poses of pkm's IK solution)", residual, 0)
    return q
