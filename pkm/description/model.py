"""Compile a tree-topology system into flat, immutable arrays (paper Sec. 3.1; Sec. 3.2, App. A; App. A).

A :class:`TreeModel` is what the numba kernels of :mod:`pkm.algorithms.kinematics` (and later the dynamics)
work on. It holds one entry per **1-DOF tree joint**; tree-joint ``i`` moves body ``i`` relative to
its predecessor ``parent[i]`` (``-1`` = ground), and the numbering is canonical: ``parent[i] < i``
(paper Sec. 3.1, Assumption 2). Multi-DOF joints (C, U, S) become chains of 1-DOF axes with massless
intermediate bodies (paper Sec. 3.1), named ``"{joint}.1"``, ``"{joint}.2"``…; the real body carries the
last axis.

Arrays (``n`` = number of 1-DOF tree joints = number of moving bodies, virtual ones included):

========= ============ =================================================================
name      shape        meaning
========= ============ =================================================================
parent    (n,)         index of the predecessor body, -1 for the ground
Y         (n, 6)       spatial screw coordinates ``Y_i = (e; y×e + h e)`` at the reference (eq. 148–149)
X         (n, 6)       body-fixed screw coordinates ``^iX_i = Ad_{A_i}^{-1} Y_i`` (eq. 150–151)
A         (n, 4, 4)    reference pose ``A_i = C_i(0)`` of body ``i``
B         (n, 4, 4)    ``B_i = A_{parent(i)}^{-1} A_i`` (body-fixed POE recursion, paper eq. 1, 2, 146, 147)
M         (n, 6, 6)    body-fixed mass matrix (eq. 167); zero for virtual bodies
ancestor  (n, n)       ``ancestor[k, i]`` is True iff ``i ⪯ k`` (joint ``i`` lies on the path k → 0)
========= ============ =================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pkm.errors import TopologyError, naming_file
from pkm.description.spec import BodySpec, JointSpec, RobotSpec, instance_name

#: Per-axis motion type of each joint type, in the order parent → child.
AXIS_KINDS = {"R": "R", "P": "P", "H": "H", "C": "RP", "U": "RR", "S": "RRR"}


def screw_coordinates(kind: str, point: np.ndarray, axis: np.ndarray, pitch: float = 0.0) -> np.ndarray:
    """Spatial screw coordinates ``(e; y × e + h e)`` of a 1-DOF axis (eq. 148–149).

    ``kind`` is ``"R"`` (pitch 0), ``"H"`` (pitch ``h``, m/rad) or ``"P"`` (``(0; e)``).

    >>> screw_coordinates("R", np.array([1.0, 0, 0]), np.array([0, 0, 1.0]))
    array([ 0.,  0.,  1.,  0., -1.,  0.])
    """
    e = np.asarray(axis, dtype=float)
    if kind == "P":
        return np.concatenate([np.zeros(3), e])
    h = pitch if kind == "H" else 0.0
    return np.concatenate([e, np.cross(point, e) + h * e])


def _inv_pose(C: np.ndarray) -> np.ndarray:
    R, r = C[:3, :3], C[:3, 3]
    out = np.eye(4)
    out[:3, :3] = R.T
    out[:3, 3] = -R.T @ r
    return out


def _skew(x) -> np.ndarray:
    """``[x]×`` (numpy; for one-off set-up work that should not compile numba kernels)."""
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def _Ad(C: np.ndarray) -> np.ndarray:
    """``Ad_C = [[R, 0], [[r]× R, R]]`` (numpy)."""
    R, r = C[:3, :3], C[:3, 3]
    out = np.zeros((6, 6))
    out[:3, :3] = R
    out[3:, 3:] = R
    out[3:, :3] = _skew(r) @ R
    return out


def _Ad_inv(C: np.ndarray) -> np.ndarray:
    R, r = C[:3, :3], C[:3, 3]
    rx = _skew(r)
    out = np.zeros((6, 6))
    out[:3, :3] = R.T
    out[3:, 3:] = R.T
    out[3:, :3] = -R.T @ rx
    return out


#: Columns of :attr:`TreeModel.joint_terms`.
JOINT_TERMS = ("armature", "viscous", "coulomb", "coulomb_speed")


@dataclass(frozen=True)
class TreeModel:
    """Flat arrays of a tree-topology system; see the module docstring for the array layout.

    Also carries names: ``body_names[i]`` (virtual bodies ``"{joint}.{k}"``),
    ``variable_names[i]`` (``"{joint}"`` or ``"{joint}.{k}"``), ``joint_names[i]`` (the file joint
    the axis belongs to), ``virtual[i]`` and ``axis_kind[i]`` (``"R"``, ``"P"`` or ``"H"``).

    ``joint_terms`` (n, 4) or None: forces of each tree variable's own, added to its generalized
    force ``φ_i`` (the paper's ``Q`` of eq. 100 and a drive's reflected inertia):
    ``armature_i θ̈_i + viscous_i θ̇_i + coulomb_i tanh(θ̇_i / coulomb_speed_i)`` with the columns
    ``(armature, viscous, coulomb, coulomb_speed)`` (:data:`JOINT_TERMS`): a drive's reflected rotor
    inertia ``n² J_m`` on its actuated variable and joint friction (viscous and smooth Coulomb).
    """

    parent: np.ndarray
    Y: np.ndarray
    X: np.ndarray
    A: np.ndarray
    B: np.ndarray
    M: np.ndarray
    ancestor: np.ndarray
    body_names: tuple[str, ...]
    variable_names: tuple[str, ...]
    joint_names: tuple[str, ...]
    virtual: np.ndarray
    axis_kind: tuple[str, ...]
    actuated: np.ndarray
    root: str = "ground"
    joint_terms: np.ndarray | None = None
    _index: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def n(self) -> int:
        """Number of 1-DOF tree joints (= moving bodies, virtual ones included)."""
        return len(self.parent)

    def body_index(self, name: str) -> int:
        """Index of the body called ``name``; KeyError naming the known bodies otherwise."""
        try:
            return self._index[name]
        except KeyError:
            raise KeyError(f"no body {name!r} in this tree (bodies: {', '.join(self.body_names)})") from None

    def variable_index(self, name: str) -> int:
        """Index of the joint variable called ``name``."""
        try:
            return self.variable_names.index(name)
        except ValueError:
            raise KeyError(f"no joint variable {name!r} (variables: {', '.join(self.variable_names)})") from None


def compile_tree(
    bodies: tuple[BodySpec, ...] | list[BodySpec],
    joints: tuple[JointSpec, ...] | list[JointSpec],
    root: str,
) -> TreeModel:
    """Compile bodies and the joints of a spanning tree into a :class:`TreeModel`.

    ``joints`` must connect every body in ``bodies`` to ``root`` without a loop (exclude the cut
    joints first). The numbering is canonical and otherwise follows the order of ``bodies``: the
    next body is always the first one in that order whose predecessor is already numbered, so a
    file written in the paper's order keeps the paper's numbers.
    """
    names = [b.name for b in bodies]
    by_name = {b.name: b for b in bodies}
    if len(by_name) != len(names):
        raise TopologyError("duplicate body names")
    if root in by_name:
        raise TopologyError(f"the root {root!r} must not be one of the moving bodies")
    adjacency: dict[str, list[JointSpec]] = {name: [] for name in [root, *names]}
    for j in joints:
        for end in (j.parent, j.child):
            if end not in adjacency:
                raise TopologyError(f"joint {j.name!r} connects body {end!r}, which is not in this tree")
        adjacency[j.parent].append(j)
        adjacency[j.child].append(j)
    if len(joints) != len(names):
        raise TopologyError(
            f"{len(joints)} joints for {len(names)} moving bodies: a tree needs one joint per body "
            "(remove the cut joints of every loop first)"
        )

    # predecessor of every body, by a search from the root
    pred_joint: dict[str, JointSpec] = {}
    pred_body: dict[str, str] = {}
    seen = {root}
    frontier = [root]
    while frontier:
        nxt = []
        for u in frontier:
            for j in adjacency[u]:
                v = j.child if j.parent == u else j.parent
                if v in seen:
                    continue
                seen.add(v)
                pred_joint[v] = j
                pred_body[v] = u
                nxt.append(v)
        frontier = nxt
    missing = [n for n in names if n not in seen]
    if missing:
        raise TopologyError(f"bodies not connected to {root!r}: {', '.join(missing)}")

    # canonical order, stable with respect to the given body order
    order: list[str] = []
    placed = {root}
    remaining = list(names)
    while remaining:
        for k, name in enumerate(remaining):
            if pred_body[name] in placed:
                order.append(name)
                placed.add(name)
                del remaining[k]
                break

    parent, Ys, As, Ms, bnames, vnames, jnames, virtual, kinds, actuated = ([] for _ in range(10))
    index: dict[str, int] = {root: -1}
    for name in order:
        body, joint = by_name[name], pred_joint[name]
        forward = joint.parent == pred_body[name]
        axes = joint.axes if forward else joint.axes[::-1]
        axis_kinds = AXIS_KINDS[joint.type] if forward else AXIS_KINDS[joint.type][::-1]
        var_names = joint.variable_names() if forward else joint.variable_names()[::-1]
        p = index[pred_body[name]]
        for k, (axis, kind, vname) in enumerate(zip(axes, axis_kinds, var_names)):
            last = k == len(axes) - 1
            parent.append(p)
            Ys.append(screw_coordinates(kind, joint.point, axis, joint.pitch))
            if last:
                As.append(np.array(body.frame, dtype=float))
                Ms.append(body.spatial_inertia())
                bnames.append(name)
            else:  # massless intermediate body at the joint centre, parallel to the world frame
                A = np.eye(4)
                A[:3, 3] = joint.point
                As.append(A)
                Ms.append(np.zeros((6, 6)))
                bnames.append(f"{joint.name}.{k + 1}")
            virtual.append(not last)
            vnames.append(vname)
            jnames.append(joint.name)
            kinds.append(kind)
            actuated.append(bool(joint.actuated))
            p = len(parent) - 1
        index[name] = len(parent) - 1

    n = len(parent)
    parent_arr = np.array(parent, dtype=np.int64)
    A = np.array(As, dtype=float).reshape(n, 4, 4)
    Y = np.array(Ys, dtype=float).reshape(n, 6)
    X = np.array([_Ad_inv(A[i]) @ Y[i] for i in range(n)]).reshape(n, 6)
    B = np.array([(A[i] if parent_arr[i] < 0 else _inv_pose(A[parent_arr[i]]) @ A[i]) for i in range(n)]).reshape(n, 4, 4)
    ancestor = np.zeros((n, n), dtype=np.bool_)
    for k in range(n):
        i = k
        while i >= 0:
            ancestor[k, i] = True
            i = parent_arr[i]
    index_map = {bn: i for i, bn in enumerate(bnames)}
    return TreeModel(
        parent=parent_arr,
        Y=Y,
        X=X,
        A=A,
        B=B,
        M=np.array(Ms, dtype=float).reshape(n, 6, 6),
        ancestor=ancestor,
        body_names=tuple(bnames),
        variable_names=tuple(vnames),
        joint_names=tuple(jnames),
        virtual=np.array(virtual, dtype=np.bool_),
        axis_kind=tuple(kinds),
        actuated=np.array(actuated, dtype=np.bool_),
        root=root,
        _index=index_map,
    )


@naming_file
def robot_tree(spec: RobotSpec) -> TreeModel:
    """The tree of a robot whose joints form no loop (e.g. a serial arm)."""
    bodies, joints = spec.expanded()
    return compile_tree(bodies, joints, spec.ground)


@naming_file
def limb_tree(spec: RobotSpec, mount: str | int = 0, cut: tuple[str, ...] | None = None) -> TreeModel:
    """The spanning tree of one mounted limb, platform included (paper Sec. 3.1, Fig. 6b).

    ``mount`` is a mount name or index; ``cut`` names the RL joints to remove (default: those the
    file marks ``cut = true``). Bodies are numbered in file order, so the Delta's limb keeps the
    paper's numbers 1…6 (platform last).
    """
    if spec.limb is None:
        raise TopologyError(f"{spec.name!r} has no representative limb")
    mounts = spec.limb.mounts
    m = mounts[mount] if isinstance(mount, int) else next((x for x in mounts if x.name == mount), None)
    if m is None:
        raise KeyError(f"no mount {mount!r} (mounts: {', '.join(x.name for x in mounts)})")
    if cut is None:
        cut = tuple(j.name for j in spec.limb.joints if j.cut)
    bodies, joints = spec.expanded()
    prefix = f"{m.name}/"
    limb_bodies = [b for b in bodies if b.name.startswith(prefix)]
    limb_bodies.append(next(b for b in bodies if b.name == spec.platform))
    cut_names = {instance_name(m.name, c) for c in cut}
    limb_joints = [j for j in joints if j.name.startswith(prefix) and j.name not in cut_names]
    return compile_tree(limb_bodies, limb_joints, spec.ground)


def reference_axes(tree) -> tuple[np.ndarray, np.ndarray]:
    """Each tree joint's point and unit axis at the reference configuration (world), (n, 3) each: a
    prismatic joint's at its body's origin, a revolute or helical joint's the axis point nearest its
    body's origin (from the screw ``Y = (e; v)``: ``v = p × e + h e``, so ``e × v = p − e(e·p)``)."""
    P, E = np.empty((tree.n, 3)), np.empty((tree.n, 3))
    for i in range(tree.n):
        w, v = tree.Y[i, :3], tree.Y[i, 3:]
        if tree.axis_kind[i] == "P" or not np.linalg.norm(w) > 0:
            P[i], E[i] = tree.A[i, :3, 3], v / np.linalg.norm(v)
        else:
            e = w / np.linalg.norm(w)
            p = np.cross(e, v)
            P[i], E[i] = p + e * (e @ (tree.A[i, :3, 3] - p)), e
    return P, E
