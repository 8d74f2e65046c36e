"""A pkm robot as a Pinocchio model with its constraint models (``pkm.export.pinocchio(robot)``).

The model is :func:`pkm.export.tree.multibody`'s (its docstring: the limb trees side by side,
the platform split into welded copies, the cut joints as point constraints or as tree joints
welded to a copy of the child). Every tree variable is a ``JointModelRZ`` / ``JointModelPZ`` about
a joint frame with z on the axis, origin on it (R) and at the reference all variables zero (so
Pinocchio's zero configuration is pkm's reference); a ``"point"`` constraint is a
``RigidConstraintModel(CONTACT_3D)`` (3 rows: the two contact frames' origins coincide), a
``"weld"`` a ``CONTACT_6D`` (6 rows: the two contact frames coincide), both in the LOCAL frame.

Use::

    exp = pkm.export.pinocchio(robot)            # exp.model, exp.constraint_models
    res = robot.inverse_dynamics(x, xd, xdd)      # a consistent pkm state (sample s)
    q, v = exp.state({k: th[s] for k, th in res.joints.items()},
                     {k: th[s] for k, th in res.joints_d.items()})
    a = exp.forward(q, v, res.tau[s])             # pin.constraintDynamics: a at exp.multibody.tree_index

Pinocchio (≥ 4: ``pip install "pkm[export]"``) is imported lazily.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pkm.errors import PkmError
from pkm.export.tree import Multibody, multibody


def frame_with_z(e, origin) -> np.ndarray:
    """A pose (4, 4) whose z axis is the unit vector ``e`` and whose origin is ``origin``."""
    e = np.asarray(e, float) / np.linalg.norm(e)
    a = np.array([1.0, 0.0, 0.0]) if abs(e[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = a - e * (a @ e)
    x /= np.linalg.norm(x)
    G = np.eye(4)
    G[:3, :3] = np.column_stack([x, np.cross(e, x), e])
    G[:3, 3] = origin
    return G


def joint_frames(mb: Multibody) -> np.ndarray:
    """Joint frames ``G_i`` (n, 4, 4), world, reference: z on the axis, origin at ``Body.point``."""
    return np.array([frame_with_z(b.axis, b.point) for b in mb.bodies]).reshape(-1, 4, 4)


def _inv(C):
    out = np.eye(4)
    out[:3, :3] = C[:3, :3].T
    out[:3, 3] = -C[:3, :3].T @ C[:3, 3]
    return out


def require_pinocchio():
    """The ``pinocchio`` module (≥ 4); PkmError in one line where it is missing or older."""
    try:
        import pinocchio as pin
    except ImportError:
        raise PkmError("the Pinocchio export needs Pinocchio >= 4: pip install 'pkm[export]'") from None
    if int(pin.__version__.split(".")[0]) < 4:
        raise PkmError(f"the Pinocchio export needs Pinocchio >= 4, found {pin.__version__}")
    return pin


@dataclass
class PinocchioExport:
    """``model`` (``pin.Model``), ``constraint_models`` (``pin.StdVec_RigidConstraintModel``),
    ``platform_frame`` (frame id of the platform frame on copy 1) and ``multibody`` (the state map,
    :meth:`Multibody.state`; Pinocchio's ``q``, ``v`` and ``τ`` are its variables in its order)."""

    model: object
    constraint_models: object
    platform_frame: int
    multibody: Multibody

    def state(self, joints, joints_d=None):
        """Pinocchio's ``(q, v)`` of a pkm state (each limb's tree variables and rates)."""
        return self.multibody.state(joints, joints_d)

    def tau(self, u):
        """Generalised forces (nv,): actuator forces ``u`` (``robot.actuator_names`` order)."""
        return self.multibody.tau(u)

    def tree_accelerations(self, a):
        """Each limb's tree-variable accelerations (pkm's ``joints_dd``) from Pinocchio's ``a``."""
        return [np.asarray(a)[ix] for ix in self.multibody.tree_index]

    def forward(self, q, v, u, *, accuracy=1e-14, mu=1e-10, max_iter=50):
        """Joint accelerations (nv,) under actuator forces ``u``: ``pin.constraintDynamics`` with
        ``pin.ProximalSettings(accuracy, mu, max_iter)`` (no Baumgarte correction)."""
        pin = require_pinocchio()
        data = self.model.createData()
        cdatas = pin.StdVec_RigidConstraintData()
        for cm in self.constraint_models:
            cdatas.append(cm.createData())
        pin.initConstraintDynamics(self.model, data, self.constraint_models, cdatas)
        prox = pin.ProximalSettings(accuracy, mu, max_iter)
        return pin.constraintDynamics(self.model, data, np.asarray(q, float), np.asarray(v, float),
                                      self.tau(u), self.constraint_models, cdatas, prox).copy()


def pinocchio(robot) -> PinocchioExport:
    """The robot as a Pinocchio model with its constraint models (module docstring); TopologyError
    (one line) for a robot without an exact equivalent, PkmError without Pinocchio ≥ 4."""
    pin = require_pinocchio()
    mb = multibody(robot)
    G = joint_frames(mb)
    model = pin.Model()
    model.gravity.linear = mb.gravity
    jid = []
    for i, b in enumerate(mb.bodies):
        Gp = G[b.parent] if b.parent >= 0 else np.eye(4)
        P = _inv(Gp) @ G[i]
        jm = pin.JointModelRZ() if b.kind == "R" else pin.JointModelPZ()
        parent = jid[b.parent] if b.parent >= 0 else 0
        j = model.addJoint(parent, jm, pin.SE3(P[:3, :3].copy(), P[:3, 3].copy()), b.joint)
        if model.idx_vs[j] != i:
            raise AssertionError("unexpected Pinocchio variable ordering")
        R = G[i, :3, :3]
        if b.mass > 0.0:
            inertia = pin.Inertia(b.mass, R.T @ (b.com - G[i, :3, 3]), R.T @ b.inertia @ R)
        else:
            inertia = pin.Inertia.Zero()
        model.appendBodyToJoint(j, inertia, pin.SE3.Identity())
        model.addBodyFrame(b.name, j, pin.SE3.Identity(), 0)
        jid.append(j)

    def placement(body, C):
        if body < 0:
            return 0, pin.SE3(C[:3, :3].copy(), C[:3, 3].copy())
        P = _inv(G[body]) @ C
        return jid[body], pin.SE3(P[:3, :3].copy(), P[:3, 3].copy())

    cms = pin.StdVec_RigidConstraintModel()
    for c in mb.constraints:
        b1, b2 = (c.body1, c.body2) if c.body1 >= 0 else (c.body2, c.body1)  # the ground as joint 2
        j1, P1 = placement(b1, c.frame)
        j2, P2 = placement(b2, c.frame)
        kind = pin.ContactType.CONTACT_3D if c.kind == "point" else pin.ContactType.CONTACT_6D
        cm = pin.RigidConstraintModel(kind, model, j1, P1, j2, P2, pin.ReferenceFrame.LOCAL)
        cm.name = c.name
        cms.append(cm)
    _, Pp = placement(mb.platform, mb.platform_frame)
    fid = model.addFrame(pin.Frame("platform", jid[mb.platform], Pp, pin.FrameType.OP_FRAME))
    model.armature = np.array([b.armature for b in mb.bodies])   # drives' n²J_m (crba adds it to M's diagonal)
    if not model.check(model.createData()):
        raise AssertionError("Pinocchio rejects the exported model (model.check)")
    return PinocchioExport(model=model, constraint_models=cms, platform_frame=fid, multibody=mb)
