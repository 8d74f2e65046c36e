"""The standard dynamic parameters of a robot: 10 per body, in its body frame (linear in the torques).

Convention (chosen so that the inverse dynamics is *linear* in them, paper eq. 167): each body
``b`` contributes ``π_b = (m, m c_x, m c_y, m c_z, I_xx, I_xy, I_xz, I_yy, I_yz, I_zz)``, named
``"<body>.m"``, ``"<body>.mx"``, ``"<body>.my"``, ``"<body>.mz"``, ``"<body>.Ixx"`` … ``"<body>.Izz"``:
the mass, the first moments ``m c`` (``c`` the centre of mass in the body frame ``F_b``) and the
inertia tensor **about the body frame's origin**, resolved in ``F_b``'s axes
(``I_o = I_c − m [c]×[c]×``, the upper-left block of the body-fixed mass matrix ``M_b``, eq. 167).

Bodies: the file's own bodies by their names (the platform among them: a payload fixed to the
platform changes the platform's 10 parameters, which therefore *are* the payload regressor), and
the bodies of a representative limb as ``"limb.<body>"``: its instances share the parameters as the
file writes them (an instance's mass matrix in its body frame equals the representative's; a mirrored
instance's is ``D π`` with ``D`` the sign flip of ``m c_z``, ``I_xz``, ``I_yz`` of ``D_z = diag(1, 1, −1)``,
:func:`pkm.description.spec.mount_limb`), so the regressor column of a limb parameter is the sum over
the mounts. Massless intermediate bodies of multi-DOF joints carry no parameters.

:func:`standard` maps every parameter onto the slots of the batch kernel's packed model
(:func:`pkm.kernels.model.pack`: the 10 parameters of every tree body in its joint frame ``K_i``, and
the platform's ``Mp`` in ``F_p``) and checks that the map reproduces the packed model of the file.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pkm.description.model import _Ad
from pkm.errors import PkmError
from pkm.kernels.model import BF_IN, BF_SIZE, inertia10, inertia6, joint_frame

#: Suffixes of a body's 10 standard parameters, in the order of :func:`pkm.kernels.model.inertia10`.
SUFFIXES = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz")
#: The sign flip of a mirrored limb instance's parameters (``D_z π``: m c_z, I_xz, I_yz change sign).
MIRROR = np.array([1.0, 1, 1, -1, 1, 1, -1, 1, -1, 1])
#: Prefix of a representative limb's bodies in the parameter names.
LIMB = "limb."


class Standard(NamedTuple):
    """A robot's standard parameters: ``names`` (P,), ``values`` π (P,) of the file, ``bodies`` (the
    parameter groups' body names, 10 parameters each, in order), ``slots``: per packed tree body
    ``(limb, index, group, T, D)`` with ``T`` (10×10) the map from the group's parameters to the packed
    10-vector in the joint frame and ``D`` (10,) the one to the body's own frame (the mirror's sign
    flip or ones), and ``platform`` the group index of the platform (its ``Mp``)."""

    names: tuple
    values: np.ndarray
    bodies: tuple
    slots: list
    platform: int


def body_params(body) -> np.ndarray:
    """The 10 standard parameters of a :class:`pkm.description.spec.BodySpec` in its body frame."""
    return inertia10(np.asarray(body.spatial_inertia(), float))


def standard(robot) -> Standard:
    """The standard parameters of ``robot`` (module docstring); cached on the robot."""
    cached = robot.__dict__.get("_identification_standard")
    if cached is not None:
        return cached
    spec = robot.spec
    groups, values, where = [], [], {}
    for b in spec.bodies:
        if b.name == spec.ground:
            continue
        where[b.name] = (len(groups), False)
        groups.append(b.name)
        values.append(body_params(b))
    if spec.limb is not None:
        for b in spec.limb.bodies:
            g = len(groups)
            groups.append(LIMB + b.name)
            values.append(body_params(b))
            for m in spec.limb.mounts:
                where[f"{m.name}/{b.name}"] = (g, bool(m.mirror))
    if spec.platform not in where:
        raise PkmError(f"{spec.source}: the platform {spec.platform!r} is not a body of the file")
    km = robot._packed()
    slots = []
    for l, limb in enumerate(robot.limbs):
        tree = limb.tree
        for i in range(limb.n):
            name = tree.body_names[i]
            if i == limb.platform or bool(tree.virtual[i]) or name not in where:
                continue
            g, mirrored = where[name]
            Q, _, _ = joint_frame(tree.X[i], tree.axis_kind[i])
            AdQ = _Ad(Q)
            T = np.column_stack([inertia10(AdQ.T @ inertia6(e) @ AdQ) for e in np.eye(10)])
            D = MIRROR if mirrored else np.ones(10)
            slots.append((l, i, g, T * D[None, :], D))
    names = tuple(f"{g}.{s}" for g in groups for s in SUFFIXES)
    out = Standard(names=names, values=np.concatenate(values), bodies=tuple(groups), slots=slots,
                   platform=where[spec.platform][0])
    mf, Mp = packed_inertia(out, km, out.values)
    scale = max(1.0, float(np.abs(km.mf).max()))
    if not (np.allclose(mf, km.mf, rtol=0, atol=1e-12 * scale) and np.allclose(Mp, km.Mp, rtol=0, atol=1e-12 * scale)):
        raise PkmError(f"{spec.source}: the standard parameters do not reproduce the kernel's packed inertias "
                       "(a body shared by two limbs?): identification is not available for this robot")
    robot.__dict__["_identification_standard"] = out
    return out


def packed_inertia(std: Standard, km, pi, mf=None, Mp=None):
    """The packed model's ``mf`` and ``Mp`` with the inertias of the standard parameters ``pi`` (every
    other entry as in ``km``); into ``mf``, ``Mp`` when given (arrays shaped like ``km``'s)."""
    mf = km.mf.copy() if mf is None else mf
    Mp = km.Mp.copy() if Mp is None else Mp
    for l in range(mf.shape[0]):
        for i in range(int(km.mi[l, 0])):
            mf[l, BF_SIZE * i + BF_IN:BF_SIZE * i + BF_IN + 10] = 0.0
    for l, i, g, T, _ in std.slots:
        mf[l, BF_SIZE * i + BF_IN:BF_SIZE * i + BF_IN + 10] += T @ pi[10 * g:10 * g + 10]
    Mp[0] = pi[10 * std.platform:10 * std.platform + 10]
    return mf, Mp


def dynamic_parameters(robot) -> tuple[tuple[str, ...], np.ndarray]:
    """``(names, π)``: the standard parameters of the robot file (module docstring), so that
    ``robot.regressor(x, xd, xdd) @ π`` equals the inverse dynamics' torques."""
    std = standard(robot)
    return std.names, std.values.copy()


def physical_problem(p10) -> str | None:
    """Why 10 standard parameters are not those of a physical body (None if they are): a positive
    mass and a positive definite pseudo-inertia ``J = [[tr(I_o)/2·1 − I_o, m c], [(m c)ᵀ, m]]`` (the
    density realisability condition, equivalent to a positive definite inertia about the centre of
    mass that satisfies the triangle inequalities)."""
    J = pseudo_inertia(p10)
    if not p10[0] > 0.0:
        return f"mass {p10[0]:.6g} kg is not positive"
    lam = np.linalg.eigvalsh(J)
    if lam[0] <= 1e-12 * max(abs(lam[-1]), 1e-300):
        return f"pseudo-inertia not positive definite (smallest eigenvalue {lam[0]:.3e})"
    return None


def pseudo_inertia(p10) -> np.ndarray:
    """The 4×4 pseudo-inertia ``J`` of 10 standard parameters (:func:`physical_problem`)."""
    I = np.array([[p10[4], p10[5], p10[6]], [p10[5], p10[7], p10[8]], [p10[6], p10[8], p10[9]]])
    J = np.zeros((4, 4))
    J[:3, :3] = 0.5 * np.trace(I) * np.eye(3) - I
    J[:3, 3] = J[3, :3] = p10[1:4]
    J[3, 3] = p10[0]
    return J


def from_pseudo_inertia(J) -> np.ndarray:
    """The 10 standard parameters of a pseudo-inertia ``J`` (inverse of :func:`pseudo_inertia`)."""
    S = J[:3, :3]
    I = np.trace(S) * np.eye(3) - S
    return np.array([J[3, 3], *J[:3, 3], I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2]])


def standard_count(names) -> int:
    """How many of ``names`` are the bodies' standard parameters (10 per body, first; the drives' and the
    joints' friction parameters, :mod:`pkm.identification.joint_terms`, follow them)."""
    return 10 * sum(1 for n in names if n.endswith(".m"))


def parameter_scales(pi0, names=None) -> np.ndarray:
    """A typical size of each standard parameter from its body's nominal mass ``m`` and size ``L``
    (radius of gyration or COM distance): ``(m, mL, mL, mL, mL², …)``; a joint-term parameter's
    (after the ``standard_count(names)`` standard ones) its nominal size or 1; never zero."""
    pi0 = np.asarray(pi0, float)
    n_std = len(pi0) if names is None else standard_count(names)
    s = np.empty(len(pi0))
    s[n_std:] = np.where(np.abs(pi0[n_std:]) > 0.0, np.abs(pi0[n_std:]), 1.0)
    for g in range(n_std // 10):
        p = pi0[10 * g:10 * g + 10]
        m = max(abs(p[0]), 1e-6)
        L = max(np.sqrt(abs(p[4] + p[7] + p[9]) / m), np.linalg.norm(p[1:4]) / m, 1e-3)
        s[10 * g:10 * g + 10] = [m, m * L, m * L, m * L] + [m * L * L] * 6
    return s
