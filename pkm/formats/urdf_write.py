"""Write a robot as URDF + the Extended-URDF closure YAML + a pkm side file (``OUT.pkm.toml``).

The URDF holds a spanning tree of the robot's graph (breadth first from the ground, joints in file
order; a joint the file marks ``cut = true`` is never a tree joint); every other joint is a closure:

* an S joint → a ``3d`` pair of frames (fixed links ``J__A``, ``J__B`` on its two bodies at its centre);
* an R, P or U joint → the joint itself from its first body to a massless copy ``J__B`` of the
  second one, welded to it by a ``6d`` pair with the frame ``J__A`` on the second body: exact, since
  the massless copy adds no dynamics and the weld makes it the second body;
* U and S tree joints → chains of revolute joints (``J__1``, ``J__2``, ``J__3``) through massless
  links at the joint's centre, read back as the U/S joint (:mod:`.urdf_graph`).

A link's frame has its body's axes and its origin on the axis of the joint that carries it (URDF's
joint frame is the child link's frame). H and C joints, drives and friction are refused in one line
(URDF has no helical joint and no drive model); cone limits and multi-DOF ranges are notes.
"""

from __future__ import annotations

import math
from collections import deque
from xml.sax.saxutils import quoteattr

import numpy as np

from pkm.errors import InputError

from .closures import closures_text
from .toml_write import _task, dumps, flat_names, trajectory_table


def _fmt(x) -> str:
    return " ".join(repr(float(v)) for v in np.atleast_1d(x))


def matrix_rpy(R) -> np.ndarray:
    """Inverse of :func:`.urdf_read.rpy_matrix` (roll, pitch, yaw of ``R = Rz Ry Rx``)."""
    sp = -R[2, 0]
    if abs(sp) < 1.0 - 1e-12:
        return np.array([math.atan2(R[2, 1], R[2, 2]), math.asin(sp), math.atan2(R[1, 0], R[0, 0])])
    yaw = math.atan2(-R[0, 1], R[1, 1])
    return np.array([0.0, math.copysign(math.pi / 2, sp), yaw])


def _pose(R, o):
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, o
    return T


def urdf_texts(spec):
    """``(urdf, closure_yaml, side_toml, notes)`` for the robot ``spec`` (a :class:`RobotSpec`)."""
    bodies, joints = flat_names(spec)
    notes = []
    for j in joints:
        if j.type in ("H", "C"):
            raise InputError(f"joint {j.name!r} is {j.type}: URDF + closure YAML has no "
                             f"{'helical' if j.type == 'H' else 'cylindrical'} joint (export to .toml)")
        if j.drive is not None or j.friction is not None:
            raise InputError(f"joint {j.name!r} has a drive or friction, which URDF + closure YAML cannot hold "
                             f"(export to .toml)")
        if j.limits is not None and (j.limits.cone is not None or (j.dof > 1 and j.limits.ranges is not None)):
            notes.append(f"joint {j.name!r}: its cone or multi-axis ranges are not written (URDF has no such limit)")
    by_name = {b.name: b for b in bodies}
    L = {spec.ground: np.eye(4)}
    links, xjoints, pairs, types = [f"  <link name={quoteattr(spec.ground)}/>"], [], [], []

    link_names, joint_names = [spec.ground], []

    def link(name, body=None):
        link_names.append(name)
        if body is None:
            links.append(f"  <link name={quoteattr(name)}/>")
            return
        T = L[name]
        c = T[:3, :3].T @ (body.com - T[:3, 3])
        I = body.inertia
        links.append(f"  <link name={quoteattr(name)}>\n    <inertial>\n      <origin xyz=\"{_fmt(c)}\" rpy=\"0 0 0\"/>\n"
                     f"      <mass value=\"{repr(float(body.mass))}\"/>\n      <inertia ixx=\"{repr(float(I[0, 0]))}\" "
                     f"ixy=\"{repr(float(I[0, 1]))}\" ixz=\"{repr(float(I[0, 2]))}\" iyy=\"{repr(float(I[1, 1]))}\" iyz=\"{repr(float(I[1, 2]))}\" "
                     f"izz=\"{repr(float(I[2, 2]))}\"/>\n    </inertial>\n  </link>")

    def joint(name, kind, parent, child, axis=None, limits=None):
        joint_names.append(name)
        T = np.linalg.solve(L[parent], L[child])
        text = (f"  <joint name={quoteattr(name)} type=\"{kind}\">\n    <parent link={quoteattr(parent)}/>\n"
                f"    <child link={quoteattr(child)}/>\n    <origin xyz=\"{_fmt(T[:3, 3])}\" rpy=\"{_fmt(matrix_rpy(T[:3, :3]))}\"/>\n")
        if axis is not None:
            text += f"    <axis xyz=\"{_fmt(L[child][:3, :3].T @ axis)}\"/>\n"
        if limits:
            text += "    <limit " + " ".join(f"{k}=\"{repr(float(v))}\"" for k, v in limits.items()) + "/>\n"
        xjoints.append(text + "  </joint>")

    def moving(j, P, C, C_link, Rc, frame=None):
        """Joint ``j`` from placed link ``P`` to link ``C_link`` (new, frame ``Rc`` at j.point, or ``frame``
        through a massless link ``C_link__joint`` where that frame's origin is off the joint's axis)."""
        end = C_link
        if frame is not None:
            L[C_link] = frame
            off = frame[:3, 3] - j.point
            if j.type != "P" and np.linalg.norm(off - (off @ j.axes[0]) * j.axes[0] if j.type == "R" else off) > 1e-12:
                C_link = f"{C_link}__joint"
                link(C_link)
        axes = list(j.axes) if j.parent == P else [-a for a in reversed(j.axes)]
        if j.type == "P" and j.parent != P:
            axes = [-j.axes[0]]
        lim = {}
        if j.limits is not None and j.dof == 1:
            if j.limits.ranges is not None:
                lo, hi = j.limits.ranges[0]
                if math.isfinite(lo) and math.isfinite(hi):
                    lim.update(lower=lo, upper=hi)
                else:
                    notes.append(f"joint {j.name!r}: a one-sided range is not written")
            if j.limits.velocity is not None:
                lim.update(velocity=j.limits.velocity)
        if lim:
            lim = {"effort": 0.0, "velocity": 0.0, **lim}
        prev = P
        for k, a in enumerate(axes):
            last = k == len(axes) - 1
            nxt = C_link if last else f"{j.name}__m{k + 1}"
            if nxt not in L or nxt != end:
                L[nxt] = _pose(Rc, j.point if j.type != "P" or frame is None else frame[:3, 3])
            if not last:
                link(nxt)
            kind = "prismatic" if j.type == "P" else ("revolute" if "lower" in lim else "continuous")
            if kind == "prismatic" and "lower" not in lim:
                lim = {"lower": 0.0, "upper": 0.0, "effort": 0.0, "velocity": 0.0, **lim}
            joint(j.name if len(axes) == 1 else f"{j.name}__{k + 1}", kind, prev, nxt, a, lim or None)
            prev = nxt
        if C_link != end:
            joint(f"{end}__frame", "fixed", C_link, end)

    # breadth-first spanning tree from the ground; the file's cut joints stay closures
    placed, tree, queue = {spec.ground}, set(), deque([spec.ground])
    while queue:
        b = queue.popleft()
        for j in joints:
            if j.cut is True or j.name in tree or b not in (j.parent, j.child):
                continue
            other = j.child if j.parent == b else j.parent
            if other in placed:
                continue
            moving(j, b, other, other, by_name[other].frame[:3, :3], by_name[other].frame)
            link(other, by_name[other])
            placed.add(other)
            tree.add(j.name)
            queue.append(other)
    lost = [b.name for b in bodies if b.name not in placed]
    if lost:
        raise InputError(f"bodies {', '.join(lost[:5])} are not connected to the ground; URDF needs one tree")
    for j in joints:
        if j.name in tree:
            continue
        P, C = j.parent, j.child
        A, B = f"{j.name}__A", f"{j.name}__B"
        if j.type == "S":
            for f, host in ((A, P), (B, C)):
                L[f] = _pose(L[host][:3, :3], j.point)
                link(f)
                joint(f"{f}_frame", "fixed", host, f)
            pairs.append((A, B))
            types.append("3d")
        else:
            moving(j, P, C, B, L[C][:3, :3])
            link(B)
            L[A] = L[B]
            link(A)
            joint(f"{A}_frame", "fixed", C, A)
            pairs.append((A, B))
            types.append("6d")
    for kind, names in (("link", link_names), ("joint", joint_names)):
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise InputError(f"cannot write the URDF: {kind} name {dup[0]!r} is used twice (pkm convert's helper "
                             f"links and joints end in __A, __B, __joint, __m1, __1...): rename that body or joint")
    cuts = [j.name for j in joints if j.cut is True]
    urdf = ("<?xml version=\"1.0\"?>\n<!-- written by pkm convert; the loop closures are in the .yaml "
            f"beside it -->\n<robot name={quoteattr(spec.name)}>\n" + "\n".join(links + xjoints) + "\n</robot>\n")
    motors = [j.name for j in joints if j.actuated]
    return urdf, closures_text(pairs, types, motors), side_text(spec, cuts), notes


def side_text(spec, cuts) -> str:
    """The side file ``OUT.pkm.toml`` of an exported URDF: what a URDF cannot say."""
    doc = {"name": spec.name, "gravity": [float(x) for x in spec.gravity]}
    if spec.platform is not None:
        doc["platform"] = spec.platform.replace("/", "_")
    if cuts:
        doc["cut_joints"] = cuts
    if spec.task is not None:
        doc["task"] = _task(spec)
    if spec.trajectory is not None:
        doc["trajectory"] = trajectory_table(spec)
    return "# pkm's side file of the URDF beside it: the platform and the task space\n" + dumps(doc)
