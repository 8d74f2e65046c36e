"""Shared cases for the tests of :mod:`pkm.absolute`: random bodies and poses, every joint of the
catalogue assembled at a random configuration, and the relative motion each joint should allow,
written down from the geometry (not from the constraint code).
"""
from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from pkm.absolute import (
    LOCK_MASKS,
    LOCK_ROWS,
    Body,
    Cylindrical,
    Distance,
    Lock,
    Marker,
    Planar,
    Prismatic,
    Revolute,
    Spherical,
    Universal,
)
from pkm.absolute import laws


def random_pose(rng, scale: float = 1.0) -> np.ndarray:
    C = np.eye(4)
    C[:3, :3] = Rotation.random(random_state=rng).as_matrix()
    C[:3, 3] = rng.uniform(-scale, scale, 3)
    return C


def random_body(rng, name: str) -> Body:
    """A box-like body with a random frame offset and axes not along its principal axes."""
    m = rng.uniform(0.5, 3.0)
    size = rng.uniform(0.1, 0.6, 3)
    J = m / 12.0 * np.diag([size[1] ** 2 + size[2] ** 2, size[0] ** 2 + size[2] ** 2, size[0] ** 2 + size[1] ** 2])
    R = Rotation.random(random_state=rng).as_matrix()
    return Body(name, m, R @ J @ R.T, rng.uniform(-0.2, 0.2, 3))


def rodrigues(axis, angle) -> np.ndarray:
    return Rotation.from_rotvec(np.asarray(axis, float) / np.linalg.norm(axis) * angle).as_matrix()


# ----------------------------------------------------------------------------- rheonomic laws
def translation_law():
    return lambda t: (np.array([0.3 * np.sin(2 * t), -0.2 * t**2, 0.1 * np.cos(t)]),
                      np.array([0.6 * np.cos(2 * t), -0.4 * t, -0.1 * np.sin(t)]),
                      np.array([-1.2 * np.sin(2 * t), -0.4, -0.1 * np.cos(t)]))


def rotation_law():
    """A rotation that is not about a fixed axis: R = Rz(a(t)) Rx(b(t)), with body-fixed ω, ω̇."""
    def law(t):
        a, ad, add = 0.8 * np.sin(1.3 * t), 1.04 * np.cos(1.3 * t), -1.352 * np.sin(1.3 * t)
        b, bd, bdd = 0.5 * t + 0.1 * t**2, 0.5 + 0.2 * t, 0.2
        Rz, Rx = rodrigues([0, 0, 1], a), rodrigues([1, 0, 0], b)
        ez, ex = np.array([0, 0, 1.0]), np.array([1.0, 0, 0])
        w = Rx.T @ ez * ad + ex * bd                       # R⁻¹Ṙ of Rz(a)Rx(b)
        # ω̇ = d/dt (Rxᵀ ez ȧ + ex ḃ) = −b̂... : d(Rxᵀ)/dt ez = −ḃ êx Rxᵀ ez
        wd = Rx.T @ ez * add - bd * np.cross(ex, Rx.T @ ez) * ad + ex * bdd
        return Rz @ Rx, w, wd
    return law


# ----------------------------------------------------------------------------- the catalogue
#: name → (factory(marker_i, marker_j, distance) → joint, rows)
def _lock(mask, **kw):
    return lambda mi, mj, dist: Lock(mi, mj, mask, **kw)


CATALOGUE = {
    "spherical": (lambda mi, mj, dist: Spherical(mi, mj), 3),
    "distance": (lambda mi, mj, dist: Distance(mi, mj, dist), 1),
    "revolute": (lambda mi, mj, dist: Revolute(mi, mj), 5),
    "universal": (lambda mi, mj, dist: Universal(mi, mj), 4),
    "cylindrical": (lambda mi, mj, dist: Cylindrical(mi, mj), 4),
    "prismatic": (lambda mi, mj, dist: Prismatic(mi, mj), 5),
    "planar": (lambda mi, mj, dist: Planar(mi, mj), 3),
}
CATALOGUE.update({f"lock-{name}": (_lock(name), len(rows)) for name, rows in LOCK_MASKS.items()})
#: rheonomic locks: the rotation law with one, two and three rotation rows, the translation law
RHEONOMIC = {
    "lock-weld-t-r": (_lock("weld", translation=translation_law(), rotation=rotation_law()), 6),
    "lock-revolute-r": (_lock("revolute", rotation=rotation_law()), 5),
    "lock-rz-r": (_lock(("rz",), rotation=laws.about([0, 0, 1], laws.sine(0.7, 2.0, 0.3))), 1),
    "lock-z-t": (_lock(("z",), translation=laws.along([0, 0, 1], laws.polynomial([0.1, 0.2, -0.3, 0.05]))), 1),
    "lock-x-ry-rz-t-r": (_lock(("x", "ry", "rz"), translation=translation_law(), rotation=rotation_law()), 3),
}
ALL = {**CATALOGUE, **RHEONOMIC}


def assembled(rng, kind: str, ground: str | None = None, t: float = 0.0):
    """``(joint, bodies, qi, qj)`` with the joint satisfied at time ``t``: two random bodies (or one
    and the ground on side ``ground`` = "i" or "j"), markers at one random world frame — for the
    distance joint at two points; for a rheonomic lock, S is placed so that the law holds at t."""
    factory, _ = ALL[kind]
    bodies = [None if ground == "i" else random_body(rng, "A"), None if ground == "j" else random_body(rng, "B")]
    poses = [random_pose(rng) for _ in bodies]
    qs = [None if b is None else b.coordinates(C) for b, C in zip(bodies, poses)]
    F_i = random_pose(rng, 0.5)
    F_j = F_i.copy()
    if kind == "distance":
        F_j[:3, 3] += rng.normal(size=3)
    probe = factory(Marker.at(bodies[0], qs[0], F_i), Marker.at(bodies[1], qs[1], F_i), 1.0)
    if probe.rheonomic:  # marker S (side j) at F_P · (x_Δ, R_Δ)⁻¹ so that the law is met at t
        x, R = np.zeros(3), np.eye(3)
        if probe.translation is not None:
            x = probe.translation(t)[0]
        if probe.rotation is not None:
            R = probe.rotation(t)[0]
        G = np.eye(4)
        G[:3, :3], G[:3, 3] = R, x
        F_j = F_i @ np.linalg.inv(G)
    joint = factory(Marker.at(bodies[0], qs[0], F_i), Marker.at(bodies[1], qs[1], F_j),
                    np.linalg.norm(F_j[:3, 3] - F_i[:3, 3]))
    return joint, bodies, qs[0], qs[1]


def free_twists(kind: str, origin, axes) -> np.ndarray:
    """Columns (ω; velocity of the point ``origin``) of the motions a joint allows the moving body,
    at a configuration where the two markers coincide at frame (``origin``, ``axes``) — from the
    joint's definition in the papers, independent of the code. For the distance joint ``axes[:, 2]``
    must be the direction of the link and ``origin`` the moving body's ball centre."""
    x, y, z = axes[:, 0], axes[:, 1], axes[:, 2]
    rot = lambda a: np.concatenate([a, np.zeros(3)])      # rotation about an axis through origin
    tra = lambda u: np.concatenate([np.zeros(3), u])      # translation
    sets = {
        "spherical": [rot(x), rot(y), rot(z)],
        "distance": [rot(x), rot(y), rot(z), tra(x), tra(y)],
        "revolute": [rot(z)],
        "universal": [rot(x), rot(y)],
        "cylindrical": [rot(z), tra(z)],
        "prismatic": [tra(z)],
        "planar": [rot(z), tra(x), tra(y)],
    }
    if kind in sets:
        return np.array(sets[kind]).T
    rows = LOCK_MASKS[kind[len("lock-"):]]
    cols = [tra(axes[:, k]) for k in range(3) if LOCK_ROWS[k] not in rows]
    cols += [rot(axes[:, k]) for k in range(3) if LOCK_ROWS[3 + k] not in rows]
    return np.array(cols).T.reshape(6, -1)


def rigid_displacement(q, omega, v_point, point) -> np.ndarray:
    """``δq`` of a body moved with angular velocity ``omega`` and velocity ``v_point`` of ``point``:
    ``δφ = v + ω × (φ − point)``, ``δd_I = ω × d_I`` (written out, not via the package)."""
    q = np.asarray(q, float)
    out = np.empty(12)
    out[:3] = v_point + np.cross(omega, q[:3] - point)
    for I in range(3):
        out[3 + 3 * I:6 + 3 * I] = np.cross(omega, q[3 + 3 * I:6 + 3 * I])
    return out


def pkm_poses(robot, joints: dict, s: int) -> dict:
    """Every real body's frame pose at sample ``s`` of pkm's joint coordinates ``joints`` (limb
    name → (N, n) tree variables, as ``DynamicsResult.joints``): :func:`pkm.cli.reactions.ik_poses`."""
    from pkm.cli.reactions import ik_poses

    return ik_poses(robot, joints, s)
