"""The topological graph of a mechanism: spanning tree, fundamental cycles, mobility (paper Sec. 2, 3.1; Sec. 3.4).

Bodies are vertices and joints are edges (a multigraph: two joints may join the same two bodies).
This module knows nothing about specific robots; it works on the expanded bodies and joints of a
:class:`pkm.description.spec.RobotSpec`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from pkm.errors import TopologyError, naming_file
from pkm.description.model import AXIS_KINDS, screw_coordinates
from pkm.description.spec import JointSpec, RobotSpec

def _neighbours(n: int, edges) -> list[list[int]]:
    """Undirected adjacency of vertices ``0 … n−1``: for each vertex the heads of its outgoing
    edges (ascending), then the tails of its incoming ones (ascending), each vertex once."""
    out = [set() for _ in range(n)]
    inc = [set() for _ in range(n)]
    for u, v in edges:
        out[u].add(v)
        inc[v].add(u)
    return [sorted(out[u]) + sorted(inc[u] - out[u]) for u in range(n)]


def _components(n: int, edges) -> list[int]:
    """Connected-component label of every vertex (components numbered by their smallest vertex)."""
    nbr = _neighbours(n, edges)
    label = [-1] * n
    count = 0
    for s in range(n):
        if label[s] >= 0:
            continue
        label[s] = count
        stack = [s]
        while stack:
            for v in nbr[stack.pop()]:
                if label[v] < 0:
                    label[v] = count
                    stack.append(v)
        count += 1
    return label


def _bfs_predecessors(n: int, edges, root: int = 0) -> list[int]:
    """Predecessor of every vertex in the breadth-first tree from ``root`` (``-1`` for the root and
    unreached vertices), visiting neighbours in :func:`_neighbours` order."""
    nbr = _neighbours(n, edges)
    pred = [-1] * n
    seen = [False] * n
    seen[root] = True
    queue = [root]
    for u in queue:
        for v in nbr[u]:
            if not seen[v]:
                seen[v] = True
                pred[v] = u
                queue.append(v)
    return pred


@dataclass(frozen=True)
class Graph:
    """Vertices (body names, ``vertices[0]`` = ground) and edges (joints) of a mechanism."""

    vertices: tuple[str, ...]
    joints: tuple[JointSpec, ...]

    @classmethod
    def from_spec(cls, spec: RobotSpec) -> "Graph":
        bodies, joints = spec.expanded()
        return cls(vertices=(spec.ground, *[b.name for b in bodies]), joints=tuple(joints))

    def _index(self) -> dict[str, int]:
        return {v: i for i, v in enumerate(self.vertices)}

    def spanning_tree(self) -> tuple[list[int], list[int]]:
        """Indices of tree joints and of cut (co-tree) joints, from a breadth-first search at ground.

        Raises :class:`TopologyError` when some body is not connected to the ground.
        """
        idx = self._index()
        n = len(self.vertices)
        edges = [(idx[j.parent], idx[j.child]) for j in self.joints]
        labels = _components(n, edges)
        if max(labels) > 0:
            lost = [v for v, lab in zip(self.vertices, labels) if lab != labels[0]]
            raise TopologyError(f"bodies not connected to the ground {self.vertices[0]!r}: {', '.join(lost)}")
        pred = _bfs_predecessors(n, edges)
        tree, cut, used = [], [], set()
        for k, j in enumerate(self.joints):
            u, v = idx[j.parent], idx[j.child]
            pair = (u, v) if pred[v] == u else (v, u) if pred[u] == v else None
            if pair is not None and pair not in used:
                used.add(pair)
                tree.append(k)
            else:
                cut.append(k)
        return tree, cut

    def tree_parents(self) -> dict[int, tuple[int, int]]:
        """For every vertex but the ground: ``(tree joint index, vertex nearer the ground)``."""
        idx = self._index()
        tree, _ = self.spanning_tree()
        adj: dict[int, list[int]] = {i: [] for i in range(len(self.vertices))}
        for k in tree:
            j = self.joints[k]
            adj[idx[j.parent]].append(k)
            adj[idx[j.child]].append(k)
        up: dict[int, tuple[int, int]] = {}
        seen, frontier = {0}, [0]
        while frontier:
            nxt = []
            for u in frontier:
                for k in adj[u]:
                    j = self.joints[k]
                    v = idx[j.child] if idx[j.parent] == u else idx[j.parent]
                    if v not in seen:
                        seen.add(v)
                        up[v] = (k, u)
                        nxt.append(v)
            frontier = nxt
        return up

    def path_to_ground(self, vertex: int) -> list[tuple[int, int, int]]:
        """Tree joints from ``vertex`` down to the ground: ``(joint, nearer vertex, farther vertex)``."""
        up = self.tree_parents()
        out = []
        while vertex != 0:
            k, u = up[vertex]
            out.append((k, u, vertex))
            vertex = u
        return out

    def fundamental_cycles(self) -> list[list[tuple[int, int]]]:
        """One cycle per cut joint: a list of ``(joint index, σ)`` with σ = +1 when the cycle
        traverses the joint from its parent to its child, −1 against (paper Sec. 3.4, eq. 49–52)."""
        idx = self._index()
        _, cut = self.spanning_tree()
        path_to_root = self.path_to_ground

        cycles = []
        for kc in cut:
            jc = self.joints[kc]
            # cycle: parent --cut--> child --tree--> ... --tree--> parent
            down = path_to_root(idx[jc.child])  # child → root
            rise = path_to_root(idx[jc.parent])  # parent → root
            common = {k for k, _, _ in down} & {k for k, _, _ in rise}
            cyc = [(kc, +1)]
            for k, u, v in down:  # walking from v (farther) to u (nearer the ground)
                if k in common:
                    continue
                cyc.append((k, +1 if idx[self.joints[k].parent] == v else -1))
            for k, u, v in reversed(rise):  # walking from u (nearer) to v (farther)
                if k in common:
                    continue
                cyc.append((k, +1 if idx[self.joints[k].parent] == u else -1))
            cycles.append(cyc)
        return cycles


def joint_screws(joint: JointSpec) -> np.ndarray:
    """Spatial screws (dof × 6) of a joint's 1-DOF axes at the reference configuration."""
    return np.array([screw_coordinates(kind, joint.point, axis, joint.pitch)
                     for kind, axis in zip(AXIS_KINDS[joint.type], joint.axes)])


@dataclass(frozen=True)
class Mobility:
    """Instantaneous mobility at the reference configuration (cut-body formulation, paper Sec. 3.4)."""

    variables: int  # N: all joint variables, cut joints included
    cycles: int  # γ: number of fundamental cycles
    constraint_rank: int  # rank of the stacked loop-closure matrix
    dof: int  # N − rank
    platform_dof: int | None  # rank of the platform twist on the admissible velocities
    #: (6, k) spatial platform twists of a basis of the admissible velocities (None without a platform)
    platform_twists: np.ndarray | None = field(default=None, compare=False, repr=False)


@naming_file
def mobility(spec: RobotSpec, tol: float = 1e-9) -> Mobility:
    """DOF of the mechanism at its reference configuration, from the loop-closure screws.

    Every fundamental cycle gives ``Σ σ_i Y_i η̇_i = 0`` (eq. 52) with the spatial screws ``Y_i`` at
    the reference configuration; the DOF is ``N − rank``. The platform DOF is the rank of the
    platform's spatial twist on the null space. This is the *instantaneous* mobility: at a singular
    reference configuration it exceeds the generic one.
    """
    graph = Graph.from_spec(spec)
    N, n_cycles, rank, PN = graph_mobility(graph, spec.platform, tol)
    platform_dof = None
    if PN is not None:
        s = np.linalg.svd(PN, compute_uv=False) if PN.size else np.zeros(0)
        platform_dof = int(np.sum(s > tol * max(1.0, s[0]))) if s.size else 0
    return Mobility(variables=N, cycles=n_cycles, constraint_rank=rank, dof=N - rank, platform_dof=platform_dof,
                    platform_twists=PN)


def graph_mobility(graph: Graph, platform: str | None, tol: float = 1e-9):
    """``(N, γ, rank, PN)`` of a mechanism graph at the reference configuration (:func:`mobility`):
    the number of joint variables, of fundamental cycles, the rank of the stacked loop-closure
    matrix (eq. 52) and the (6, N − rank) spatial platform twists of a basis of its null space
    (None without a platform). For the graph of one limb (:class:`LimbTopology`), ``PN`` spans the
    limb's platform twists, ``L_(l) q̇_(l)`` (eq. 80)."""
    screws = [joint_screws(j) for j in graph.joints]
    offsets = np.cumsum([0] + [s.shape[0] for s in screws])
    N = int(offsets[-1])
    cycles = graph.fundamental_cycles()
    G = np.zeros((6 * len(cycles), N))
    for c, cyc in enumerate(cycles):
        for k, sigma in cyc:
            G[6 * c: 6 * c + 6, offsets[k]: offsets[k + 1]] = sigma * screws[k].T
    if G.size:
        sv = np.linalg.svd(G, compute_uv=False)
        rank = int(np.sum(sv > tol * max(1.0, sv[0])))
    else:
        rank = 0
    if platform is None:
        return N, len(cycles), rank, None
    idx = graph._index()
    P = np.zeros((6, N))  # platform spatial twist along the tree path ground → platform
    for k, u, v in graph.path_to_ground(idx[platform]):
        sigma = +1 if idx[graph.joints[k].parent] == u else -1
        P[:, offsets[k]: offsets[k + 1]] = sigma * screws[k].T
    return N, len(cycles), rank, P @ _null_space(G, N, rank)


def _null_space(G: np.ndarray, N: int, rank: int) -> np.ndarray:
    if G.size == 0:
        return np.eye(N)
    _, _, vt = np.linalg.svd(G)
    return vt[rank:].T


# ------------------------------------------------------------------------------------ limbs
#: Number of loop constraints a cut joint of each type imposes (6 − DOF, paper Sec. 3.3, eq. 12–14); H joints are
#: not supported as cut joints.
CUT_CONSTRAINTS = {"S": 3, "U": 4, "C": 4, "R": 5, "P": 5}


@dataclass(frozen=True)
class LimbTopology:
    """One limb (spec Definition 1): its bodies and joints, fundamental cycles and cut joints.

    ``cycles[λ]`` lists the joint names of fundamental cycle ``Λ_λ`` (cut joint first);
    ``cuts[λ]`` is its cut joint; ``tree_joints`` are the remaining joints (spec Definition 3).
    ``bodies`` excludes the ground and the platform.
    """

    name: str
    bodies: tuple[str, ...]
    joints: tuple[JointSpec, ...]
    cycles: tuple[tuple[str, ...], ...]
    cuts: tuple[str, ...]

    @property
    def tree_joints(self) -> tuple[JointSpec, ...]:
        return tuple(j for j in self.joints if j.name not in self.cuts)

    @property
    def cut_joints(self) -> tuple[JointSpec, ...]:
        by = {j.name: j for j in self.joints}
        return tuple(by[c] for c in self.cuts)


@naming_file
def limb_topologies(spec: RobotSpec) -> list[LimbTopology]:
    """Partition the graph into limbs, find their fundamental cycles and choose the cut joints.

    A limb is a connected component of the graph without the ground and the platform, together
    with its joints to them (paper Sec. 2, Definition 1). Each limb must be *hybrid*: its fundamental
    cycles are pairwise edge-disjoint (equivalently, two cycles share at most one body, Definition 2
    and Assumption 1) — otherwise :class:`TopologyError` names the limb and the shared joints.

    Cut joints (paper Sec. 3.1, Remark 3): a joint the file marks ``cut = true``; otherwise, per cycle,
    the non-actuated joint (not marked ``cut = false``) that imposes the fewest constraints (S < U, C <
    R, P), the last one in file order on a tie.
    """
    if spec.platform is None:
        raise TopologyError(f"{spec.name!r} has no platform, so it has no limbs")
    bodies, joints = spec.expanded()
    special = {spec.ground, spec.platform}
    names = [b.name for b in bodies if b.name not in special]
    index = {n: i for i, n in enumerate(names)}
    edges = [(index[j.parent], index[j.child]) for j in joints if j.parent in index and j.child in index]
    labels = _components(len(names), edges)
    groups: list[list[str]] = [[] for _ in range(max(labels, default=-1) + 1)]
    for n, lab in zip(names, labels):
        groups[lab].append(n)
    groups.sort(key=lambda g: index[g[0]])

    limbs = []
    direct = [j for j in joints if {j.parent, j.child} == special]
    for k, group in enumerate(groups):
        members = set(group)
        ljoints = tuple(j for j in joints if j.parent in members or j.child in members)
        touches = {j.parent for j in ljoints} | {j.child for j in ljoints}
        if not special <= touches:
            raise TopologyError(f"bodies {', '.join(group)} are not part of a limb: they do not join the ground to the platform")
        limbs.append(_analyse_limb(_limb_name(group, k), group, ljoints, spec))
    for j in direct:
        limbs.append(_analyse_limb(j.name, [], (j,), spec))
    return limbs


def _limb_name(group: list[str], k: int) -> str:
    prefixes = {g.split("/", 1)[0] for g in group if "/" in g}
    return prefixes.pop() if len(prefixes) == 1 and all("/" in g for g in group) else f"limb{k + 1}"


def _analyse_limb(name: str, bodies: list[str], joints: tuple[JointSpec, ...], spec: RobotSpec) -> LimbTopology:
    graph = Graph(vertices=(spec.ground, *bodies, spec.platform), joints=joints)
    cycles = graph.fundamental_cycles()
    edge_sets = [{graph.joints[k].name for k, _ in cyc} for cyc in cycles]
    for a in range(len(edge_sets)):
        for b in range(a + 1, len(edge_sets)):
            shared = edge_sets[a] & edge_sets[b]
            if shared:
                raise TopologyError(
                    f"limb {name!r} is not hybrid: two of its loops share the joints {', '.join(sorted(shared))} "
                    "(the method needs loops that share at most one body; spec Assumption 1)"
                )
    order = {j.name: i for i, j in enumerate(joints)}
    cuts, named = [], []
    for cyc in cycles:
        members = [graph.joints[k] for k, _ in cyc]
        marked = [j for j in members if j.cut]
        if len(marked) > 1:
            raise TopologyError(f"limb {name!r}: the loop {', '.join(j.name for j in members)} has more than one cut joint "
                                f"({', '.join(j.name for j in marked)})")
        if marked:
            cut = marked[0]
        else:
            allowed = [j for j in members if not j.actuated and j.cut is not False and j.type in CUT_CONSTRAINTS]
            if not allowed:
                raise TopologyError(f"limb {name!r}: no joint of the loop {', '.join(j.name for j in members)} can be cut "
                                    "(all are actuated, marked cut = false, or helical)")
            cut = min(allowed, key=lambda j: (CUT_CONSTRAINTS[j.type], -order[j.name]))
        if cut.type not in CUT_CONSTRAINTS:
            raise TopologyError(f"limb {name!r}: joint {cut.name!r} of type {cut.type} cannot be a cut joint")
        if cut.actuated:
            raise TopologyError(f"limb {name!r}: the actuated joint {cut.name!r} cannot be a cut joint")
        cuts.append(cut.name)
        named.append(tuple([cut.name] + sorted((j.name for j in members if j is not cut), key=order.get)))
    return LimbTopology(name=name, bodies=tuple(bodies), joints=joints, cycles=tuple(named), cuts=tuple(cuts))
