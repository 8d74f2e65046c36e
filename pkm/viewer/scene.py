"""The scene of a robot along a motion: every body's primitive shape and its world pose per frame.

Frames (paper eq. 1–2): the pose of body ``i`` at a configuration is ``C_i(θ)`` (4×4, maps the
body frame's coordinates to world coordinates), its reference pose ``A_i = C_i(0)`` is the body's
``frame`` in the robot file (for a limb instance the mounted frame, eq. 122–123). A body's shape is
given in the file in world (construction) coordinates at the reference configuration; the scene
holds it in the body frame's coordinates (``A_i⁻¹`` applied once), so that at each frame the shape
is drawn at ``C_i(θ)`` times its local geometry. The platform's pose is
``robot.platform_pose(x)``, every limb body's the forward kinematics of its limb's tree at the
inverse kinematics' joints (``pkm.algorithms.kinematics.forward_kinematics``), the ground's is
the identity. A body without a shape is shown as a small sphere at its centre of mass
(``nominal``).

Joint axes (on request): each tree joint's axis point and unit direction per frame, world
coordinates — the point of a revolute axis nearest its moving body's origin at the reference
configuration (a prismatic joint: that origin), carried by the body's motion ``C_i A_i⁻¹``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pkm.description.model import reference_axes
from pkm.errors import InputError

__all__ = ["Scene", "scene"]


@dataclass
class Scene:
    """``names`` (B,) the bodies, ``limbs`` (B,) each body's limb ("" for the platform and the
    ground), ``shapes`` (B,) each body's shape in its own frame (a JSON-able dict: ``type``
    cylinder | box | sphere, ``center`` (3,), cylinder ``radius``, ``length``, ``axis`` (3,), box
    ``size`` (3,) along the body axes, sphere ``radius``; ``nominal`` True for a body without a
    shape), ``t`` (F,) the frames' times, ``x`` (F, δ) their task coordinates, ``poses`` (F, B, 4, 4)
    the bodies' world poses ``C_i``; ``axes`` (F, J, 2, 3) the joint axes' points and unit
    directions (or None), ``size`` the scene's extent [m]."""

    robot: str
    names: list
    limbs: list
    shapes: list
    t: np.ndarray
    x: np.ndarray
    poses: np.ndarray
    axes: np.ndarray | None = None
    size: float = 1.0
    meta: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        """The scene as plain lists (floats keep every digit: ``json`` writes them with ``repr``);
        a pose as its 12 numbers ``[R | p]`` row by row."""
        return {
            "robot": self.robot, "size": float(self.size),
            "bodies": [{"name": n, "limb": l, "shape": s} for n, l, s in zip(self.names, self.limbs, self.shapes)],
            "t": [float(v) for v in self.t],
            "poses": [[[float(v) for v in P[:3, :].reshape(-1)] for P in frame] for frame in self.poses],
            "axes": None if self.axes is None else self.axes.tolist(),
        }


def _mount_maps(spec) -> dict:
    """Body name → (M, p) that maps its shape from the file's coordinates to the world (eq. 122–123;
    a mirrored mount's ``M = R_0 D``), for every body of a limb instance."""
    maps = {}
    if spec.limb is not None:
        for mount in spec.limb.mounts:
            S = mount.base
            M = S[:3, :3] @ mount.mirror_matrix if mount.mirror else S[:3, :3]
            for b in spec.limb.bodies:
                maps[f"{mount.name}/{b.name}"] = (b, M, S[:3, 3])
    return maps


def _local_shape(body, shape, M, p, A, size) -> dict:
    """The shape of ``body`` in its body frame (``A`` its world reference pose)."""
    R, o = A[:3, :3], A[:3, 3]
    if shape is None:
        return {"type": "sphere", "radius": 0.02 * size, "center": (R.T @ (body.com - o)).tolist(), "nominal": True}
    out = {"type": shape["type"], "center": (R.T @ (M @ shape["center"] + p - o)).tolist()}
    if shape["type"] == "cylinder":
        out.update(radius=float(shape["radius"]), length=float(shape["length"]),
                   axis=(R.T @ (M @ shape["axis"])).tolist())
    elif shape["type"] == "box":
        out["size"] = [float(v) for v in shape["size"]]   # edges along the body axes
    else:
        out["radius"] = float(shape["radius"])
    return out


def scene(robot, x=None, t=None, *, joints=None, start=None, axes=False) -> Scene:
    """The scene of ``robot`` along task coordinates ``x`` (F, δ) (one pose (δ,); default: the
    reference pose) at times ``t`` (default 0, 1, …): the limbs' joints from the inverse kinematics
    followed along the motion (``start``: each limb's tree variables on the branch to show) or,
    if given, ``joints`` (limb name → (F, n) tree variables, e.g. a simulation's). ``axes``: add the
    joint axes. Raises the IK's errors (:class:`pkm.IKError`, :class:`pkm.SingularityError`)."""
    from pkm.algorithms.kinematics import forward_kinematics

    spec = robot.spec
    X = np.atleast_2d(robot.x_ref if x is None else np.asarray(x, dtype=float))
    if X.ndim != 2 or X.shape[1] != robot.task_dof or X.shape[0] == 0 or not np.all(np.isfinite(X)):
        raise InputError(f"x must be (frames, {robot.task_dof}) finite task coordinates, got shape {np.shape(x)}")
    F = X.shape[0]
    T = np.arange(F, dtype=float) if t is None else np.asarray(t, dtype=float).reshape(-1)
    if T.shape != (F,) or not np.all(np.isfinite(T)):
        raise InputError(f"t must hold {F} finite times, one per frame, got shape {np.shape(t)}")
    if joints is None:
        sol = robot.inverse_kinematics(X, start=start, warm_start=True, limits=False)
        joints = {l.name: np.asarray(sol.joints[l.name]).reshape(F, -1) for l in robot.limbs}
    bodies = {b.name: b for b in spec.expanded()[0]}
    mounts = _mount_maps(spec)
    names, limbs, A_ref, columns = [], [], [], []   # columns: (limb index, tree body) or "platform" / "ground"
    for k, limb in enumerate(robot.limbs):
        for i, name in enumerate(limb.tree.body_names):
            if name in bodies and name != spec.platform and name not in names:   # not the virtual bodies of U, S
                names.append(name), limbs.append(limb.name), A_ref.append(limb.tree.A[i]), columns.append((k, i))
    if spec.platform is not None and spec.platform in bodies:
        names.append(spec.platform), limbs.append(""), A_ref.append(bodies[spec.platform].frame)
        columns.append("platform")
    for name, b in bodies.items():   # the ground's own parts (bodies fixed to it)
        if name not in names and name != spec.platform:
            names.append(name), limbs.append(""), A_ref.append(b.frame), columns.append("ground")
    poses = np.empty((F, len(names), 4, 4))
    C = [np.array([forward_kinematics(l.tree, joints[l.name][f]) for f in range(F)]) for l in robot.limbs]
    for j, col in enumerate(columns):
        if col == "platform":
            poses[:, j] = [robot.platform_pose(X[f]) for f in range(F)]
        elif col == "ground":
            poses[:, j] = A_ref[j]
        else:
            poses[:, j] = C[col[0]][:, col[1]]
    size = float(max(np.ptp(poses[:, :, :3, 3].reshape(-1, 3), axis=0).max(), 0.1))
    shapes = []
    for name, A in zip(names, A_ref):
        b = bodies[name]
        if name in mounts:
            base, M, p = mounts[name]
            shapes.append(_local_shape(b, base.shape, M, p, A, size))
        else:
            shapes.append(_local_shape(b, b.shape, np.eye(3), np.zeros(3), A, size))
    ax = None
    if axes:
        parts = []
        for limb, Cl in zip(robot.limbs, C):
            P0, E0 = reference_axes(limb.tree)
            rel = Cl @ np.linalg.inv(limb.tree.A)   # (F, n, 4, 4) each body's motion from the reference
            pts = np.einsum("fnij,nj->fni", rel[..., :3, :3], P0) + rel[..., :3, 3]
            parts.append(np.stack([pts, np.einsum("fnij,nj->fni", rel[..., :3, :3], E0)], axis=2))
        ax = np.concatenate(parts, axis=1)
    return Scene(robot=robot.name, names=names, limbs=limbs, shapes=shapes, t=T, x=X, poses=poses, axes=ax,
                 size=size)
