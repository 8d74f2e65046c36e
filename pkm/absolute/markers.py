"""Markers: frames fixed on a body (or on the ground) that joints connect (seed 001 §4, Fig. 1).

A marker on a body is given by constant components in the body's director frame (seed 002
eq. 79, ``ϱ = ϱ_i d_i``): its origin ``p = φ + ϱ_i d_i`` and its three axes ``e_a = R'_ia d_i``.
Both are *linear* in the body's coordinates ``q = (φ, d₁, d₂, d₃)``: with ``Q`` the 4×3 matrix of
rows ``(φ, d₁, d₂, d₃)``, ``p = [1, ϱ]·Q`` and ``e_a = [0, R'_{:,a}]·Q``. Every joint in this
package is a polynomial of degree ≤ 2 in such vectors (seed 002 §4.3: "at most quadratic"),
which is what makes the mid-point Jacobian the exact discrete derivative in seed 002's scheme.

A marker on the ground (``body=None``) has a constant world origin and world axes.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pkm.absolute.body import NQ, Body, directors, rigid_pose
from pkm.absolute.checks import MAX_LENGTH, array
from pkm.errors import InputError


def _rotation(axes, what: str) -> np.ndarray:
    R = array(axes, f"{what}: axes (a 3×3 matrix, the axes as columns)", (3, 3))
    if np.max(np.abs(R.T @ R - np.eye(3))) > 1e-9 or np.linalg.det(R) < 0.0:
        raise InputError(f"{what}: axes must be a rotation (orthonormal columns, right-handed)")
    return R


@dataclass(frozen=True, eq=False)
class Marker:
    """A frame fixed on ``body`` (``None``: the ground).

    Attributes
    ----------
    body:
        The :class:`~pkm.absolute.body.Body`, or ``None`` for the ground.
    origin:
        On a body: the origin *relative to the centre of mass*, in director components (seed 002's
        ``ϱ_i``); on the ground: the world point.
    axes:
        3×3 rotation whose columns are the marker's x, y, z axes, in director components (on the
        ground: world axes). Joints use the z axis as *the* axis (seed 001 §6: revolute about z,
        prismatic along z, …).
    """

    body: Body | None
    origin: np.ndarray = field(default_factory=lambda: np.zeros(3))
    axes: np.ndarray = field(default_factory=lambda: np.eye(3))

    def __post_init__(self):
        if self.body is not None and not isinstance(self.body, Body):
            raise InputError(f"Marker body must be a Body or None (ground), got {type(self.body).__name__}")
        origin = array(self.origin, "Marker origin", (3,), bound=MAX_LENGTH).copy()
        axes = _rotation(self.axes, "Marker")
        origin.setflags(write=False)
        axes.setflags(write=False)
        object.__setattr__(self, "origin", origin)
        object.__setattr__(self, "axes", axes)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def at(cls, body: Body | None, q_body, pose) -> Marker:
        """The marker on ``body`` whose world pose is ``pose`` (4×4) when the body is at ``q_body``
        (ignored for the ground). ``q_body`` must be on the manifold (orthonormal directors)."""
        C = rigid_pose(pose, "Marker.at: pose")
        if C.shape != (4, 4):
            raise InputError(f"Marker.at: pose must be one 4×4 pose, got shape {C.shape}")
        if body is None:
            return cls(None, C[:3, 3], C[:3, :3])
        if not isinstance(body, Body):
            raise InputError(f"Marker.at: body must be a Body or None (ground), got {type(body).__name__}")
        q = array(q_body, "Marker.at: q_body", (NQ,))
        D = directors(q)
        if np.max(np.abs(D.T @ D - np.eye(3))) > 1e-9:
            raise InputError("Marker.at: the body's directors are not orthonormal at q_body")
        return cls(body, D.T @ (C[:3, 3] - q[:3]), D.T @ C[:3, :3])

    @classmethod
    def in_frame(cls, body: Body, point, axes=None) -> Marker:
        """A marker given in the body's *frame* (origin at the frame origin, as in robot files),
        not relative to the centre of mass: ``ϱ = point − com``."""
        if not isinstance(body, Body):
            raise InputError(f"Marker.in_frame: body must be a Body, got {type(body).__name__}")
        point = array(point, "Marker.in_frame: point", (3,), bound=MAX_LENGTH)
        return cls(body, point - body.com, np.eye(3) if axes is None else axes)

    # ------------------------------------------------------------------ linear maps
    def point_coefficients(self) -> np.ndarray:
        """``c`` (4,) with ``p = cᵀ Q`` on a body (``[1, ϱ]``); zeros on the ground."""
        if self.body is None:
            return np.zeros(4)
        return np.concatenate([[1.0], self.origin])

    def axis_coefficients(self, a: int) -> np.ndarray:
        """``c`` (4,) with ``e_a = cᵀ Q`` on a body (``[0, R'_{:,a}]``); zeros on the ground."""
        if self.body is None:
            return np.zeros(4)
        return np.concatenate([[0.0], self.axes[:, a]])

    def point_constant(self) -> np.ndarray:
        """The constant part of the origin: the world point on the ground, 0 on a body."""
        return self.origin.copy() if self.body is None else np.zeros(3)

    def axis_constant(self, a: int) -> np.ndarray:
        """The constant part of axis ``a``: the world axis on the ground, 0 on a body."""
        return self.axes[:, a].copy() if self.body is None else np.zeros(3)

    def world_pose(self, q_body=None) -> np.ndarray:
        """The marker's pose (4×4) in the world for the body at ``q_body`` (a rotation only on the
        manifold)."""
        C = np.eye(4)
        if self.body is None:
            C[:3, :3], C[:3, 3] = self.axes, self.origin
            return C
        q = array(q_body, "q_body", (NQ,))
        D = directors(q)
        C[:3, :3], C[:3, 3] = D @ self.axes, q[:3] + D @ self.origin
        return C
