"""A pkm robot as an MJCF model for MuJoCo: :func:`write_mjcf` (``pkm convert ROBOT OUT.xml``) and
:func:`mjcf_string`.

The model is :func:`pkm.export.tree.multibody`'s (its docstring), written as a MuJoCo user
would: one ``<body>`` per tree variable, nested as the tree, its frame the joint frame (z on the
axis, origin on it; :func:`pkm.export.pinocchio_model.joint_frames`) with one ``hinge`` (R) or
``slide`` (P) about z; ``<inertial>`` with mass, centre of mass and full inertia about it
(massless intermediate bodies of U/S joints get none); ``<site>`` pairs at every constraint
frame; ``<connect site1 site2>`` for a point constraint (3 rows), ``<weld site1 site2>`` for a
weld (6 rows: the sites' frames coincide); a ``<motor>`` (gear 1, no control limits) on every
actuated joint, named as pkm's actuator; gravity from the robot file; no geoms (nothing
collides); joints without limits, with a drive's ``armature`` (n²J_m) and viscous ``damping`` (F_v)
where the robot has them (Coulomb friction is refused, :mod:`pkm.export.tree`).

**MuJoCo's constraints are soft.** At a consistent state its constraint force is
``f = −(A + R)⁻¹(J a₀ − a_ref)`` with ``A = J M⁻¹ Jᵀ`` and the regulariser
``R_ii = (1 − d)/d · Â_ii`` (``d``: the impedance of ``solimp``, capped at 0.9999 by MuJoCo):
the rigid accelerations are reached only to about ``(1 − d)/d`` ≈ 1e-4 of the constraint
forces' share. :data:`STIFF` are the stiffest settings (``solref`` time constant 2·timestep,
critical damping; ``solimp`` d = 0.9999 everywhere), the defaults here; ``solref=None,
solimp=None`` leaves MuJoCo's own defaults (0.02 1, 0.9 0.95 0.001 0.5 2). The solver: :data:`SOLVER`.
"""
from __future__ import annotations

import os
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from pkm.errors import InputError, PkmError
from pkm.export.tree import multibody
from pkm.export.pinocchio_model import _inv, joint_frames

#: The stiffest soft constraints MuJoCo offers, for timestep 1e-4 (solref: time constant 2·dt,
#: damping ratio 1; solimp: impedance at its cap 0.9999 over the whole width).
STIFF = dict(timestep=1e-4, solref=(2e-4, 1.0), solimp=(0.9999, 0.9999, 0.001, 0.5, 2.0))


#: The constraint solver written into ``<option>``: Newton (MuJoCo's default), run to 1e-12 so that
#: the solver's own error stays far below the softness's (MuJoCo's default 1e-8, 100 iterations,
#: passes tests/test_export.py as well: the softness dominates).
SOLVER = dict(iterations=200, tolerance=1e-12)


def _f(a) -> str:
    return " ".join(repr(float(x)) for x in np.ravel(a))


def _quat(R) -> str:
    """Unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method)."""
    R = np.asarray(R, float)
    t = np.trace(R)
    if t > 0:
        s = 2.0 * np.sqrt(1.0 + t)
        q = [0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    else:
        i = int(np.argmax(np.diag(R)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * np.sqrt(1.0 + R[i, i] - R[j, j] - R[k, k])
        q = np.empty(4)
        q[0] = (R[k, j] - R[j, k]) / s
        q[1 + i] = 0.25 * s
        q[1 + j] = (R[j, i] + R[i, j]) / s
        q[1 + k] = (R[k, i] + R[i, k]) / s
    q = np.asarray(q, float)
    return _f(q / np.linalg.norm(q))


def _soft(name, value, sizes):
    """``value`` as a tuple of finite numbers of one of the ``sizes``, or None; InputError otherwise."""
    if value is None:
        return None
    try:
        v = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        v = np.array([np.nan])
    if v.size not in sizes or not np.isfinite(v).all():
        raise InputError(f"{name} must be {' or '.join(map(str, sizes))} finite numbers, got {value!r}")
    return tuple(float(x) for x in v)


def _pose(el, P):
    el.set("pos", _f(P[:3, 3]))
    el.set("quat", _quat(P[:3, :3]))


def mjcf_string(robot, *, timestep=STIFF["timestep"], integrator="Euler", solref=STIFF["solref"],
                solimp=STIFF["solimp"]) -> str:
    """The MJCF text of the robot (module docstring). ``solref``/``solimp``: the equality
    constraints' soft parameters (None: MuJoCo's defaults). TopologyError (one line) for a robot
    without an exact equivalent."""
    try:
        timestep = float(timestep)
    except (TypeError, ValueError):
        raise InputError(f"timestep must be a positive number of seconds, got {timestep!r}") from None
    if not (np.isfinite(timestep) and timestep > 0):
        raise InputError(f"timestep must be a positive number of seconds, got {timestep!r}")
    if integrator not in ("Euler", "RK4", "implicit", "implicitfast"):
        raise InputError(f"integrator must be Euler, RK4, implicit or implicitfast, got {integrator!r}")
    solref = _soft("solref", solref, (2,))
    solimp = _soft("solimp", solimp, (3, 5))
    mb = multibody(robot, viscous=True)
    G = joint_frames(mb)
    root = ET.Element("mujoco", model=mb.name)
    ET.SubElement(root, "compiler", angle="radian", autolimits="true")
    ET.SubElement(root, "option", timestep=repr(timestep), integrator=integrator, gravity=_f(mb.gravity),
                  solver="Newton", iterations=str(SOLVER["iterations"]), tolerance=repr(SOLVER["tolerance"]))
    world = ET.SubElement(root, "worldbody")
    sites = {}   # body -> [(site name, world pose)]
    for c in mb.constraints:
        for side, b in (("1", c.body1), ("2", c.body2)):
            sites.setdefault(b, []).append((f"{c.name}:{side}", c.frame))
    sites.setdefault(mb.platform, []).append(("platform", mb.platform_frame))
    for name, C in sites.get(-1, []):
        ET.SubElement(world, "site", name=name, pos=_f(C[:3, 3]), quat=_quat(C[:3, :3]))
    children = [[] for _ in mb.bodies]
    for i, b in enumerate(mb.bodies):
        if b.parent >= 0:
            children[b.parent].append(i)
    # a massless body with one child (a U/S/C joint's intermediate body) merges into that child:
    # MuJoCo applies a body's joints in order, each about its axis at the reference, which is the
    # product of exponentials of the tree (eq. 148); MuJoCo wants mass in every body with joints
    host = list(range(mb.n))
    for i in reversed(range(mb.n)):
        if mb.bodies[i].mass <= 0.0 and len(children[i]) == 1 and i not in sites:
            host[i] = host[children[i][0]]
    elements = {}
    for i, b in enumerate(mb.bodies):
        h = host[i]
        if h not in elements:   # the first joint of the group: open the host's element
            p = b.parent
            parent = elements[host[p]] if p >= 0 else world
            Gp = G[host[p]] if p >= 0 else np.eye(4)
            el = elements[h] = ET.SubElement(parent, "body", name=mb.bodies[h].name)
            _pose(el, _inv(Gp) @ G[h])
        el, Gh = elements[h], _inv(G[h])
        terms = {k: repr(v) for k, v in (("armature", b.armature), ("damping", b.damping)) if v != 0.0}
        ET.SubElement(el, "joint", name=b.joint, type="hinge" if b.kind == "R" else "slide",
                      pos=_f(Gh[:3, :3] @ b.point + Gh[:3, 3]), axis=_f(Gh[:3, :3] @ b.axis), **terms)
        if h != i:
            continue
        if b.mass > 0.0:
            R = G[i, :3, :3]
            I = R.T @ b.inertia @ R
            ET.SubElement(el, "inertial", pos=_f(Gh[:3, :3] @ b.com + Gh[:3, 3]), mass=repr(b.mass),
                          fullinertia=_f([I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]]))
        for name, C in sites.get(i, []):
            S = Gh @ C
            ET.SubElement(el, "site", name=name, pos=_f(S[:3, 3]), quat=_quat(S[:3, :3]))
    eq = ET.SubElement(root, "equality")
    soft = {k: _f(v) for k, v in (("solref", solref), ("solimp", solimp)) if v is not None}
    for c in mb.constraints:
        ET.SubElement(eq, "connect" if c.kind == "point" else "weld", name=c.name, site1=f"{c.name}:1",
                      site2=f"{c.name}:2", **soft)
    act = ET.SubElement(root, "actuator")
    for name, a in zip(mb.actuator_names, mb.actuated):
        ET.SubElement(act, "motor", name=name, joint=mb.bodies[a].joint, gear="1")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode") + "\n"


def write_mjcf(robot, path, **options) -> Path:
    """Write the robot's MJCF (:func:`mjcf_string`, ``options`` go there) to ``path``; the file
    appears whole or not at all (a temporary file renamed into place). Returns the path."""
    text = mjcf_string(robot, **options)
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise PkmError(f"{path}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise PkmError(f"{path}: cannot write: {exc.strerror or exc}") from None
    return path
