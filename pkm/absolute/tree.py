"""A spanning tree of a :class:`~pkm.absolute.system.System` and the relative motion each tree joint
allows: the kinematic skeleton of seed 002's discrete null space method (§4.2–§4.5, §5.4).

Seed 002 builds the null space of a multibody system by twist propagation ("natural orthogonal
complement", eqs. 57–61, 178–184) and reparametrises the unknowns of a time step by a product of
exponentials along the chain (eqs. 95, 118, 126, 136, 154, 188–189); a closed loop is an open tree
plus loop-closure conditions (eq. 190). This module holds what both need:

* :class:`Tree`: the tree joints (the lower pairs S, R, U, C, P, E that can carry a relative
  motion), their parent and child bodies, the *free roots* (bodies with no path to the ground,
  6 coordinates each, seed 002 eq. 44) and the *closure* joints (every other joint, and tree-capable
  joints cut by the caller);
* :func:`joint_elements`: the relative motion of a tree joint as a product of elementary rigid
  motions — rotations about an axis through a point, a rotation vector about a point, translations.

The same elements serve twice. At the node ``q_n``, with the joint's increments as amounts, they
give the product-of-exponentials update ``H_child = H_parent ∘ E₁ ∘ E₂ …`` (:mod:`pkm.absolute.reparam`).
At the mid-point ``q_{n+1/2}``, with zero amounts, their generators are the columns of the discrete
``P_ext`` (:mod:`pkm.absolute.nullspace`). In both uses the geometry is read off the joint's own
markers (world vectors linear in ``q``), so every joint orientation works (parent on marker i's
side or on marker j's):

==========  =====  ===========================================================  =============
joint       rates  elements (n = z_i, c = p_j, all world vectors of the markers)    seed 002
==========  =====  ===========================================================  =============
spherical     3    rotation vector about c                                       eqs. 84, 93–95
revolute      1    rotation about n through c                                    eqs. 122, 126
universal     2    rotation about the parent's cross axis, then the child's      (derived)
cylindrical   2    translation along x_i × y_i, rotation about n through c        eqs. 107, 113, 118
prismatic     1    translation along x_i × y_i                                   eqs. 132–133, 136
planar        3    translations along y_i × n and n × x_i, rotation about n       eqs. 143, 149, 154
==========  =====  ===========================================================  =============

The translation directions are the seed's cross-product substitutes (eqs. 113, 133, 149): at a
node (orthonormal directors) ``x_i × y_i = z_i`` exactly, at the mid-point they are what keeps
``G(q_{n+1/2}) P = 0``. The centre of rotation is marker j's origin ``p_j``: for the S, R and U
joints ``p_i = p_j``; for the cylindrical joint it must be ``p_j`` at the mid-point whichever body
is the parent (there ``p_j − p_i`` is not parallel to ``n_{n+1/2}``; seed 002 puts the centre on
its body 2, which is marker j's). The universal joint is not in seed 002; its elements follow
the same design condition (eq. 74) and are checked like the others (tests).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from pkm.absolute.body import NQ, Body
from pkm.absolute.checks import show
from pkm.absolute.joints import Cylindrical, Planar, Prismatic, Revolute, Spherical, Universal
from pkm.absolute.markers import Marker
from pkm.absolute.system import as_system as check_system
from pkm.errors import InputError, TopologyError

#: Joint classes that can be tree joints, with their number of relative coordinates (seed 002
#: Table I, r = 6 − m_ext; the universal joint has 2).
TREE_RATES = {Spherical: 3, Revolute: 1, Universal: 2, Cylindrical: 2, Prismatic: 1, Planar: 3}
#: The kinds and sizes of each tree joint's elements, in order (see :func:`joint_elements`).
ELEMENT_KINDS = {Spherical: (("rotvec", 3),), Revolute: (("rot", 1),), Universal: (("rot", 1), ("rot", 1)),
                 Cylindrical: (("trans", 1), ("rot", 1)), Prismatic: (("trans", 1),),
                 Planar: (("trans", 2), ("rot", 1))}


@dataclass(frozen=True)
class TreeJoint:
    """A joint of the spanning tree.

    Attributes
    ----------
    joint, index:
        The joint and its index in ``system.joints``.
    parent, child:
        The body nearer the root (``None``: the ground) and the body it carries.
    child_side:
        0 if the child holds marker i, 1 if it holds marker j.
    columns:
        The joint's relative coordinates in the tree's coordinate vector ``μ`` (and rates ``ν``).
    """

    joint: object
    index: int
    parent: Body | None
    child: Body
    child_side: int
    columns: slice

    @property
    def rates(self) -> int:
        return self.columns.stop - self.columns.start


@dataclass(frozen=True)
class Element:
    """An elementary rigid motion (world frame).

    ``kind`` is ``"rot"`` (rotation by one angle about ``axis`` through ``center``), ``"rotvec"``
    (rotation by a rotation vector, exponential map, about ``center``) or ``"trans"``
    (translation ``Σ u_k directions[k]``). ``size`` is its number of amounts.
    """

    kind: str
    center: np.ndarray | None = None
    axis: np.ndarray | None = None
    directions: np.ndarray | None = None

    @property
    def size(self) -> int:
        return {"rot": 1, "rotvec": 3}.get(self.kind, 0) or len(self.directions)


# ---------------------------------------------------------------------------- marker geometry
def cross3(a, b) -> np.ndarray:
    """``a × b`` of two 3-vectors (``np.cross`` spends ~10 µs per call on axis handling)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def marker_point(marker: Marker, q_body) -> np.ndarray:
    """World origin of ``marker`` for its body at ``q_body`` (ignored on the ground); linear in q."""
    if marker.body is None:
        return marker.point_constant()
    return marker.point_coefficients() @ np.asarray(q_body, dtype=float).reshape(4, 3)


def marker_axis(marker: Marker, a: int, q_body) -> np.ndarray:
    """World axis ``a`` (0, 1, 2) of ``marker`` for its body at ``q_body``; linear in q."""
    if marker.body is None:
        return marker.axis_constant(a)
    return marker.axis_coefficients(a) @ np.asarray(q_body, dtype=float).reshape(4, 3)


def joint_elements(tj: TreeJoint, qi, qj) -> list[Element]:
    """The relative motion of tree joint ``tj`` as elements, with the geometry of its markers at
    the body coordinates ``qi`` (marker i's body) and ``qj`` (marker j's); ``None`` for the ground.

    At a node these are the factors of the product of exponentials; at the mid-point the
    generators of the discrete null space (module docstring, table)."""
    j = tj.joint
    mi, mj = j.marker_i, j.marker_j
    c = marker_point(mj, qj)
    xi, yi, zi = (marker_axis(mi, a, qi) for a in range(3))
    if isinstance(j, Spherical):
        return [Element("rotvec", center=c)]
    if isinstance(j, Revolute):
        return [Element("rot", center=c, axis=zi)]
    if isinstance(j, Universal):
        yj = marker_axis(mj, 1, qj)
        first, second = (yj, xi) if tj.child_side == 0 else (xi, yj)   # parent's cross axis first
        return [Element("rot", center=c, axis=first), Element("rot", center=c, axis=second)]
    if isinstance(j, Prismatic):      # before Cylindrical: Prismatic is a subclass
        return [Element("trans", directions=cross3(xi, yi)[None, :])]
    if isinstance(j, Cylindrical):
        return [Element("trans", directions=cross3(xi, yi)[None, :]), Element("rot", center=c, axis=zi)]
    if isinstance(j, Planar):
        return [Element("trans", directions=np.array([cross3(yi, zi), cross3(zi, xi)])),
                Element("rot", center=c, axis=zi)]
    raise TopologyError(f"joint {j.name!r} ({type(j).__name__}) cannot be a tree joint")


def root_elements(q_body) -> list[Element]:
    """A free root (seed 002 eq. 44): translation of the centre of mass, then a rotation vector
    about it — ``φ_{n+1} = φ_n + u_φ``, ``d_{n+1} = exp(θ̂) d_n``."""
    q = np.asarray(q_body, dtype=float)
    return [Element("trans", directions=np.eye(3)), Element("rotvec", center=q[:3].copy())]


# ---------------------------------------------------------------------------- the tree
def _tree_capable(joint, active_rows) -> bool:
    return type(joint) in TREE_RATES and bool(np.all(active_rows))


class Tree:
    """A spanning tree of ``system``'s joint graph (bodies and the ground), found depth first from
    the ground so that chains stay chains (seed 002's open chain with the closing joint last,
    §5.4.2).

    Parameters
    ----------
    system:
        The :class:`~pkm.absolute.system.System`.
    cut:
        Names of joints that must not be tree joints (they become closure joints).

    Joints that are not of a tree-capable type (:data:`TREE_RATES`), have inactive rows, or would
    close a loop are closure joints. A body with no tree path to the ground becomes a free root.
    Coordinates ``μ`` (and rates ``ν``): 6 per free root (translation, rotation vector) in root order,
    then each tree joint's in tree order.
    """

    def __init__(self, system, cut: Sequence[str] = ()):
        check_system(system)
        cut = (cut,) if isinstance(cut, str) else cut
        if not isinstance(cut, (list, tuple)) or not all(isinstance(c, str) for c in cut):
            raise InputError(f"cut must be a list of joint names, got {show(cut)}")
        names = {j.name for j in system.joints}
        unknown = set(cut) - names
        if unknown:
            raise InputError(f"cut names unknown joints: {sorted(unknown)}")
        self.system = system
        offsets = np.cumsum([0] + [j.m for j in system.joints])
        capable = [_tree_capable(j, system.active[offsets[k]:offsets[k + 1]]) and j.name not in cut
                   for k, j in enumerate(system.joints)]
        adjacency: dict[int | None, list[int]] = {}
        for k, j in enumerate(system.joints):
            if capable[k]:
                for b in j.bodies:
                    adjacency.setdefault(None if b is None else id(b), []).append(k)
        placed: set[int] = set()
        used: set[int] = set()
        order: list[tuple[int, Body | None, Body, int]] = []
        roots: list[Body] = []

        def grow(start):  # depth first (a body is entered as soon as it is reached), iterative
            stack = [(start, iter(adjacency.get(None if start is None else id(start), [])))]
            while stack:
                node, edges = stack[-1]
                for k in edges:
                    if k in used:
                        continue
                    j = system.joints[k]
                    side = 1 if (j.bodies[0] is node) else 0          # the other marker's side
                    other = j.bodies[side]
                    if other is None or id(other) in placed:
                        continue
                    used.add(k)
                    placed.add(id(other))
                    order.append((k, node, other, side))
                    stack.append((other, iter(adjacency.get(id(other), []))))
                    break
                else:
                    stack.pop()

        grow(None)
        for b in system.bodies:
            if id(b) not in placed:
                placed.add(id(b))
                roots.append(b)
                grow(b)
        col = 6 * len(roots)
        joints = []
        for k, parent, child, side in order:
            r = TREE_RATES[type(system.joints[k])]
            joints.append(TreeJoint(system.joints[k], k, parent, child, side, slice(col, col + r)))
            col += r
        self.roots: tuple[Body, ...] = tuple(roots)
        self.joints: tuple[TreeJoint, ...] = tuple(joints)
        self.closure: tuple[int, ...] = tuple(k for k in range(len(system.joints)) if k not in used)
        self.size = col
        self._slices = {id(b): system.body_slice(b) for b in system.bodies}

    # ------------------------------------------------------------------ helpers
    def body_q(self, body: Body | None, q) -> np.ndarray | None:
        """The coordinates of ``body`` in the system vector ``q`` (``None`` for the ground)."""
        return None if body is None else q[self._slices[id(body)]]

    def joint_q(self, tj: TreeJoint, q):
        """``(qi, qj)`` of the joint's two marker bodies."""
        return tuple(self.body_q(b, q) for b in tj.joint.bodies)

    def root_columns(self, r: int) -> slice:
        return slice(6 * r, 6 * r + 6)

    def rotation_blocks(self) -> list[slice]:
        """The slices of ``μ`` that are rotation vectors (3) or angles (1)."""
        out = [slice(6 * r + 3, 6 * r + 6) for r in range(len(self.roots))]
        for tj in self.joints:
            k = tj.columns.start
            for kind, size in ELEMENT_KINDS[type(tj.joint)]:
                if kind != "trans":
                    out.append(slice(k, k + size))
                k += size
        return out

    def closure_rows(self) -> np.ndarray:
        """Boolean mask over the system's active joint rows: rows of closure joints."""
        mask = []
        offsets = np.cumsum([0] + [j.m for j in self.system.joints])
        closure = set(self.closure)
        for k, j in enumerate(self.system.joints):
            act = self.system.active[offsets[k]:offsets[k + 1]]
            mask.extend([k in closure] * int(act.sum()))
        return np.array(mask, dtype=bool)

    def describe(self) -> str:
        parts = [f"{len(self.roots)} free root(s)" + (f" ({', '.join(b.name for b in self.roots)})"
                                                      if self.roots else "")]
        parts.append("tree: " + ", ".join(
            f"{tj.joint.name} ({type(tj.joint).__name__.lower()}, {tj.rates}) "
            f"{'ground' if tj.parent is None else tj.parent.name}→{tj.child.name}" for tj in self.joints))
        if self.closure:
            parts.append("closure: " + ", ".join(self.system.joints[k].name for k in self.closure))
        return "; ".join(parts) + f"; {self.size} tree coordinates"


def body_rates(q_body, twist) -> np.ndarray:
    """``q̇`` (12,) of a body moving with the *spatial* twist ``(ω; v_o)`` (world axes; ``v_o`` the
    velocity of the point at the world origin): ``φ̇ = v_o + ω × φ``, ``ḋ_I = ω × d_I``. Linear in
    the twist; :func:`body_rate_matrix` is its matrix (seed 002's ``P_int`` (eq. 29) times the
    change of reference point)."""
    return body_rate_matrix(q_body) @ twist


def body_rate_matrix(q_body) -> np.ndarray:
    """The 12×6 matrix of :func:`body_rates`."""
    Q = np.asarray(q_body, dtype=float).reshape(4, 3)
    W = np.zeros((NQ, 6))
    for r in range(4):
        x = Q[r]
        W[3 * r:3 * r + 3, :3] = [[0.0, x[2], -x[1]], [-x[2], 0.0, x[0]], [x[1], -x[0], 0.0]]  # ω × x = −x̂ ω
    W[:3, 3:] = np.eye(3)
    return W
