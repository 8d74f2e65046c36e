"""A pkm robot as one open multibody tree plus rigid constraints: the model both exports
(:mod:`pkm.export.pinocchio_model`, :mod:`pkm.export.mjcf`) write out.

pkm solves a PKM limb by limb (paper Sec. 3: each limb's spanning tree, its cut joints, the
platform shared by all limbs). A general multibody code needs the whole mechanism as *one* tree
with closure constraints. :func:`multibody` builds it, exactly equivalent to pkm's model:

* **The limb trees side by side**, each as pkm has it (``limb.tree``: 1-DOF R/P axes, U and S
  joints as 2 and 3 axes through massless intermediate bodies), renumbered depth-first (the order
  Pinocchio's subtree algorithms need). Zero joint variables = pkm's reference configuration.
* **The platform split**: each limb ends in its own copy of the platform carrying 1/L of the
  platform's spatial inertia (same centre of mass, Θ/L), and copies 2…L are *welded* to copy 1
  (6 rows each: the relative pose of the two platform frames is the identity). The L welded copies
  are the platform exactly, and every limb's last joint stays a real tree joint.
* **The cut joints** (paper Sec. 3.3), by kind:

  - ``S``: a *point* constraint at the joint's centre (3 rows: the centre fixed in the parent and
    the centre fixed in the child coincide); exactly the S joint's m = 3 rows.
  - ``R`` in a planar loop (every tree axis of the loop parallel to the cut axis, as the Delta's
    parallelogram): a point constraint at a point of the axis. The tree keeps the loop planar, so
    the R joint's two orientation rows vanish identically on the tree's motion: the point's 3 rows
    (rank 2 with the loop) have the same admissible motion, hence the same dynamics.
  - every other ``R``, and ``U``, ``C``, ``P``: no point or weld constraint has the rows of these
    joints (a U keeps its axes perpendicular, eq. 33: not a point condition). The cut joint
    becomes **real tree joints**: its 1-DOF axes (R/P, parent → child, through massless
    intermediate bodies) hang from the parent body and end in a copy of the child body carrying
    half the child's inertia (the original keeps the other half), and the copy is *welded* to the
    child (6 rows). The welded pair is the child, and the chain is the joint itself, so the
    motion and the dynamics are the cut joint's exactly. (Where the child is the ground or
    massless, the chain hangs from the child in reverse order and ends in a copy of the parent.)
  - ``distance`` cut joints (an SS link replaced by its length) and helical axes have no rigid
    equivalent in these codes: :class:`~pkm.errors.TopologyError`, one line.

Redundant rows (a planar loop's point constraint, the platform welds of a translational PKM)
are consistent: both peers accept them (Pinocchio's proximal solver, MuJoCo's soft constraints).

A task space with an ``ideal_constraint`` (a workless constraint holding the platform where the
limbs leave it free, :class:`pkm.description.spec.TaskSpec`) is not modelled either: refused.

Joint terms (:mod:`pkm.description.drives`): a drive's reflected rotor inertia ``n²J_m`` is the
joint's ``armature`` in both codes (added to the mass matrix's diagonal, exactly pkm's
``armature_i θ̈_i``); viscous friction ``F_v q̇`` is MuJoCo's joint ``damping`` (the MJCF carries
it, a Pinocchio model cannot: refused there); the smooth Coulomb term ``F_c tanh(q̇/v_c)`` has no
equivalent (MuJoCo's ``frictionloss`` is dry friction): refused in one line.

:meth:`Multibody.state` maps a pkm state (each limb's tree variables and rates, ``res.joints``
and ``res.joints_d`` of :meth:`pkm.Robot.inverse_dynamics`) to the tree's ``(q, v)``; the cut
chains' variables are solved from the relative pose of the cut joint's bodies (product of
exponentials, eq. 148) and their rates from the relative twist.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from pkm.algorithms.dynamics import body_mass_properties
from pkm.description.model import AXIS_KINDS, screw_coordinates
from pkm.errors import InputError, PkmError, TopologyError
from pkm.lie import Ad, exp_se3, inv_se3, log_se3


@dataclass(frozen=True)
class Body:
    """One 1-DOF joint and the body it moves, all at the reference configuration in world axes.

    ``parent``: index of the parent body (−1: the ground); ``kind``: ``"R"`` or ``"P"``; ``point``:
    a point of the axis (R) or the joint frame's origin (P); ``axis``: unit direction; ``mass``,
    ``com`` (world) and ``inertia`` (3×3 about the centre of mass, world axes); ``armature`` (a
    drive's reflected rotor inertia n²J_m, added to the joint's diagonal of the mass matrix) and
    ``damping`` (viscous friction F_v: joint force −F_v q̇) of the joint's terms."""

    name: str
    joint: str
    parent: int
    kind: str
    point: np.ndarray
    axis: np.ndarray
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    armature: float = 0.0
    damping: float = 0.0


@dataclass(frozen=True)
class Constraint:
    """``kind``: ``"point"`` (3 rows: the origin of ``frame`` fixed on ``body1`` and on ``body2``
    coincide) or ``"weld"`` (6 rows: ``frame`` fixed on both bodies keeps one pose); ``frame``: its
    world pose at the reference; a body −1 is the ground."""

    kind: str
    body1: int
    body2: int
    frame: np.ndarray
    name: str


@dataclass(frozen=True)
class CutChain:
    """A cut joint modelled as tree joints: ``bodies`` (the chain's variables in axis order) from
    limb ``limb``'s tree body ``base`` to a copy of its tree body ``tip`` (−1: ground), with the
    reference screws ``Y`` (m, 6)."""

    limb: int
    base: int
    tip: int
    bodies: tuple
    Y: np.ndarray


@dataclass(frozen=True)
class Multibody:
    """The robot as one tree (``bodies`` in depth-first order: variable ``i`` of ``(q, v)`` moves
    body ``i``) and its ``constraints``; ``tree_index[k][j]``: the variable of limb ``k``'s tree
    variable ``j``; ``actuated``: the variables of the actuators in ``robot.actuator_names`` order;
    ``platform``: body of the platform copy 1, ``platform_frame`` its frame at the reference."""

    name: str
    gravity: np.ndarray
    bodies: tuple
    constraints: tuple
    tree_index: tuple
    actuated: np.ndarray
    actuator_names: tuple
    platform: int
    platform_frame: np.ndarray
    chains: tuple = ()
    trees: tuple = field(default=(), repr=False)
    limb_names: tuple = ()

    @property
    def n(self) -> int:
        return len(self.bodies)

    def state(self, joints, joints_d=None):
        """``(q, v)`` (n,) of the pkm state with tree variables ``joints[limb]`` and rates
        ``joints_d[limb]`` (dicts by limb name, or sequences in limb order; ``joints_d`` None:
        rest). Raises :class:`~pkm.errors.PkmError` where the state does not close a cut joint."""
        th = self._per_limb(joints)
        thd = self._per_limb(joints_d) if joints_d is not None else [np.zeros_like(t) for t in th]
        q, v = np.zeros(self.n), np.zeros(self.n)
        for k, idx in enumerate(self.tree_index):
            q[idx], v[idx] = th[k], thd[k]
        for ch in self.chains:
            g, V = _poses_twists(self.trees[ch.limb], th[ch.limb], thd[ch.limb])
            gb = g[ch.base] if ch.base >= 0 else np.eye(4)
            gt = g[ch.tip] if ch.tip >= 0 else np.eye(4)
            Vb = V[ch.base] if ch.base >= 0 else np.zeros(6)
            Vt = V[ch.tip] if ch.tip >= 0 else np.zeros(6)
            qc = _solve_chain(ch.Y, inv_se3(gb) @ gt, self.bodies[ch.bodies[0]].joint)
            J = _chain_jacobian(ch.Y, qc)
            rel = Ad(inv_se3(gb)) @ (Vt - Vb)
            vc = np.linalg.lstsq(J, rel, rcond=None)[0]
            if np.linalg.norm(J @ vc - rel) > 1e-9 * max(1.0, np.linalg.norm(rel)):
                raise PkmError(f"the rates do not close cut joint {self.bodies[ch.bodies[0]].joint!r}: "
                               "expected a consistent state (res.joints_d of inverse_dynamics)")
            q[list(ch.bodies)], v[list(ch.bodies)] = qc, vc
        return q, v

    def _per_limb(self, x):
        what = "expected each limb's tree variables, a dict by limb name or a list in limb order " \
               "(res.joints[limb][sample])"
        try:
            if isinstance(x, dict):
                x = [x[n] for n in self.limb_names]
            out = [np.asarray(a, float).reshape(-1) for a in x]
        except (KeyError, TypeError, ValueError):
            raise InputError(what) from None
        if len(out) != len(self.tree_index) or any(len(a) != len(i) for a, i in zip(out, self.tree_index)):
            raise InputError(what)
        if not all(np.isfinite(a).all() for a in out):
            raise InputError("the tree variables and rates must be finite")
        return out

    def tau(self, u):
        """Generalised forces (n,): the actuator forces ``u`` (n_act,) on the actuated variables."""
        try:
            u = np.asarray(u, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            u = np.array([np.nan])
        if u.shape != (len(self.actuated),) or not np.isfinite(u).all():
            raise InputError(f"u must be {len(self.actuated)} finite actuator forces ({', '.join(self.actuator_names)})")
        out = np.zeros(self.n)
        out[self.actuated] = u
        return out


# ---------------------------------------------------------------------------- kinematics
def _poses_twists(tree, theta, thetad):
    """``g_i = Π exp(Y_k θ_k)`` over the ancestors (the body pose is ``g_i A_i``, eq. 148) and the
    spatial twists ``V_i = ġ_i g_i⁻¹`` of every tree body."""
    n = tree.n
    g = np.empty((n, 4, 4))
    S = np.empty((n, 6))
    for i in range(n):
        p = int(tree.parent[i])
        gp = g[p] if p >= 0 else np.eye(4)
        S[i] = Ad(gp) @ tree.Y[i]
        g[i] = gp @ exp_se3(tree.Y[i] * theta[i])
    V = (tree.ancestor * thetad[None, :]) @ S
    return g, V


def _chain_pose(Y, q):
    E = np.eye(4)
    for y, x in zip(Y, q):
        E = E @ exp_se3(y * x)
    return E


def _chain_jacobian(Y, q):
    """Spatial Jacobian (6, m) of ``Π exp(Y_j q_j)``: column j = Ad(Π_{i<j} exp(Y_i q_i)) Y_j."""
    E = np.eye(4)
    J = np.empty((6, len(Y)))
    for j, (y, x) in enumerate(zip(Y, q)):
        J[:, j] = Ad(E) @ y
        E = E @ exp_se3(y * x)
    return J


def _solve_chain(Y, T, name, tol=1e-12, max_iter=60):
    """Variables of the chain with ``Π exp(Y_j q_j) = T`` (Newton on the spatial residual
    ``log(T E⁻¹)``, from zero); PkmError where ``T`` is not reached (the state does not close)."""
    q = np.zeros(len(Y))
    for _ in range(max_iter):
        r = log_se3(T @ inv_se3(_chain_pose(Y, q)))
        if np.linalg.norm(r) < tol:
            return q
        step = np.linalg.lstsq(_chain_jacobian(Y, q), r, rcond=None)[0]
        q = q + np.clip(step, -0.5, 0.5)
    if np.linalg.norm(log_se3(T @ inv_se3(_chain_pose(Y, q)))) < 1e-9:
        return q
    raise PkmError(f"the state does not close cut joint {name!r}: expected a consistent state "
                   "(res.joints of inverse_dynamics)")


# ---------------------------------------------------------------------------- building
def _mass(tree):
    """Mass, world centre of mass and world inertia about it of every tree body (reference)."""
    m, d = body_mass_properties(tree)
    out = []
    for i in range(tree.n):
        R, p = tree.A[i, :3, :3], tree.A[i, :3, 3]
        S = np.array([[0.0, -d[i, 2], d[i, 1]], [d[i, 2], 0.0, -d[i, 0]], [-d[i, 1], d[i, 0], 0.0]])
        Ic = tree.M[i, :3, :3] + m[i] * S @ S   # Θ_o = Θ_c − m skew(d)² (eq. 167)
        Ic = R @ (0.5 * (Ic + Ic.T)) @ R.T
        out.append([float(m[i]), R @ d[i] + p, Ic])
    return out


def _planar(tree, cj):
    """Whether every tree axis of the loop of R cut joint ``cj`` is parallel to its axis."""
    def path(i):
        out = set()
        while i >= 0:
            out.add(i)
            i = int(tree.parent[i])
        return out
    ends = [tree.body_index(b) if b in tree._index else -1 for b in (cj.parent, cj.child)]
    loop = path(ends[0]) ^ path(ends[1])
    e = cj.axes[0]
    return all(np.linalg.norm(np.cross(tree.Y[i, :3], e)) < 1e-12 and tree.axis_kind[i] == "R" for i in loop)


def _from_child(tip, mass) -> bool:
    """Whether a cut chain hangs from the cut joint's child (ending in a copy of the parent): where
    the child is the ground or massless (a massless leaf would make the mass matrix singular)."""
    return tip < 0 or mass[tip][0] <= 0.0


def _refuse(robot, what):
    raise TopologyError(f"{robot.spec.source or robot.name}: cannot export: {what}")


def multibody(robot, *, viscous: bool = False) -> Multibody:
    """The robot as one tree plus constraints (see the module docstring); TopologyError (one line)
    for what has no exact equivalent. ``viscous``: whether the caller carries viscous joint
    friction (MuJoCo's joint ``damping`` does; Pinocchio's model does not)."""
    from pkm.robot import Robot

    if not isinstance(robot, Robot):
        raise InputError(f"expected a pkm.Robot (pkm.load(PATH)), got {type(robot).__name__}")
    spec = robot.spec
    L = len(robot.limbs)
    for limb in robot.limbs:
        jt = limb.tree.joint_terms
        if jt is not None and np.any(jt[:, 2] != 0.0):
            _refuse(robot, f"limb {limb.name!r} has Coulomb friction (drive or friction 'coulomb'), whose smooth "
                    "tanh model has no equivalent there; expected coulomb = 0")
        if jt is not None and not viscous and np.any(jt[:, 1] != 0.0):
            _refuse(robot, f"limb {limb.name!r} has viscous friction (drive or friction 'viscous'), which a "
                    "Pinocchio model does not carry; expected viscous = 0 (the MJCF export carries it)")
        if "H" in limb.tree.axis_kind:
            _refuse(robot, f"limb {limb.name!r} has a helical joint, which MuJoCo cannot model")
    if spec.task.ideal:
        _refuse(robot, f"its task holds the platform by an ideal constraint (ideal_constraint: "
                f"{', '.join(spec.task.ideal)}), which the export does not model; expected limbs that hold it")
    jby = {j.name: j for j in spec.expanded()[1]}
    raw = []          # [name, joint, parent (limb-local or global), kind, point, axis, mass, com, inertia]
    tree_index, chains, constraints = [], [], []
    A_p = np.array(spec.body(spec.platform).frame, float)
    plat_global = []
    for k, limb in enumerate(robot.limbs):
        t = limb.tree
        mass = _mass(t)
        mass[limb.platform] = [mass[limb.platform][0] / L, mass[limb.platform][1], mass[limb.platform][2] / L]
        off = len(raw)
        for i in range(t.n):
            kind = t.axis_kind[i]
            Y = t.Y[i]
            axis = Y[:3] if kind == "R" else Y[3:]
            point = np.cross(Y[:3], Y[3:]) if kind == "R" else t.A[i, :3, 3]
            bname = t.body_names[i] if i != limb.platform else f"{limb.name}/{t.body_names[i]}"
            p = int(t.parent[i])
            terms = (float(t.joint_terms[i, 0]), float(t.joint_terms[i, 1])) if t.joint_terms is not None else (0.0, 0.0)
            raw.append([bname, t.variable_names[i], off + p if p >= 0 else -1, kind, point, axis, *mass[i], *terms])
        tree_index.append(np.arange(off, off + t.n))
        plat_global.append(off + limb.platform)
        for lp in limb.loops:
            cj = jby.get(lp.cut.name)
            if lp.cut.type == "distance" or cj is None:
                _refuse(robot, f"cut joint {lp.cut.name!r} is a distance constraint, which has no rigid "
                        "equivalent in Pinocchio or MuJoCo")
            ends = [t.body_index(b) if b != spec.ground else -1 for b in (cj.parent, cj.child)]
            gl = [off + e if e >= 0 else -1 for e in ends]
            if cj.type == "S" or (cj.type == "R" and _planar(t, cj)):
                C = np.eye(4)
                C[:3, 3] = cj.point
                constraints.append(Constraint("point", gl[1], gl[0], C, cj.name))
                continue
            if cj.type not in ("R", "U", "C", "P"):
                _refuse(robot, f"cut joint {cj.name!r} of type {cj.type} has no exact equivalent")
            kinds = AXIS_KINDS[cj.type]
            Y = np.array([screw_coordinates(kd, cj.point, ax, cj.pitch) for kd, ax in zip(kinds, cj.axes)])
            base, tip, order = ends[0], ends[1], list(range(len(kinds)))
            if _from_child(tip, mass):   # hang the chain from the child, ending in a copy of the parent
                base, tip, order = ends[1], ends[0], order[::-1]
                if tip < 0 or mass[tip][0] <= 0.0:
                    _refuse(robot, f"both bodies of cut joint {cj.name!r} are massless or the ground")
            m, c, I = mass[tip]
            raw[off + tip][6:9] = [m / 2, c, I / 2]
            ids = []
            prev = off + base if base >= 0 else -1
            for n_, j in enumerate(order):
                last = n_ == len(order) - 1
                ax = cj.axes[j] / np.linalg.norm(cj.axes[j])
                ids.append(len(raw))
                raw.append([f"{cj.name}/{t.body_names[tip]}" if last else f"{cj.name}.{n_ + 1}",
                            f"{cj.name}.{j + 1}" if len(order) > 1 else cj.name, prev, kinds[j],
                            np.array(cj.point, float), ax, *((m / 2, c, I / 2) if last else (0.0, c, np.zeros((3, 3)))),
                            0.0, 0.0])
                prev = ids[-1]
            C = np.array(t.A[tip], float)
            constraints.append(Constraint("weld", ids[-1], off + tip, C, f"{cj.name} (weld)"))
            chains.append(CutChain(k, base, tip, tuple(ids), Y[order]))
    for k in range(1, L):
        constraints.append(Constraint("weld", plat_global[k], plat_global[0], A_p,
                                      f"platform {robot.limbs[k].name}-{robot.limbs[0].name}"))
    # depth-first renumbering
    children = [[] for _ in raw]
    roots = []
    for i, r in enumerate(raw):
        (roots if r[2] < 0 else children[r[2]]).append(i)
    order, stack = [], roots[::-1]
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(children[i][::-1])
    new = np.empty(len(raw), dtype=int)
    new[order] = np.arange(len(raw))
    nb = lambda i: int(new[i]) if i >= 0 else -1  # noqa: E731
    bodies = tuple(Body(r[0], r[1], nb(r[2]), r[3], np.asarray(r[4], float), np.asarray(r[5], float) /
                        np.linalg.norm(r[5]), float(r[6]), np.asarray(r[7], float), np.asarray(r[8], float),
                        float(r[9]), float(r[10]))
                   for r in (raw[i] for i in order))
    act = np.array([new[tree_index[k][a]] for k, limb in enumerate(robot.limbs) for a in limb.actuated], dtype=int)
    mb = Multibody(name=robot.name, gravity=np.asarray(spec.gravity, float), bodies=bodies,
                   constraints=tuple(replace(c, body1=nb(c.body1), body2=nb(c.body2)) for c in constraints),
                   tree_index=tuple(new[ix] for ix in tree_index), actuated=act,
                   actuator_names=tuple(robot.actuator_names), platform=nb(plat_global[0]), platform_frame=A_p,
                   chains=tuple(replace(ch, bodies=tuple(nb(b) for b in ch.bodies)) for ch in chains),
                   trees=tuple(l.tree for l in robot.limbs), limb_names=tuple(l.name for l in robot.limbs))
    return mb
