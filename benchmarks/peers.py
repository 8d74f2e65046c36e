"""Peer implementations for the benchmarks: Pinocchio models built from pkm's data, a Pinocchio-based
closed-loop Delta inverse dynamics, the Modern Robotics model of the 6R arm, random serial chains,
and a batched tree RNEA assembled from pkm's numba kernels.

Everything that needs Pinocchio (``pip install pin``) or Modern Robotics imports it lazily, so this
module loads without them. Used by ``bench_inverse_dynamics.py``, ``bench_scaling.py`` and
``tests/test_benchmarks_peers.py``.

Conventions at the boundary (see README "Conventions"): pkm twists are ``(ω; v)``, Pinocchio's
``Motion``/``Force`` are ``(v; ω)``/``(f; m)``. Nothing here compares 6-vectors across the boundary:
the models are compared through **joint torques**, which do not depend on frames or ordering.

From a pkm :class:`~pkm.description.model.TreeModel` (all axes revolute or prismatic) the Pinocchio model is
built as a Pinocchio user would write it by hand or get it from a URDF:

* one joint frame per tree joint, its z axis along the joint axis and its origin on the axis (the
  point of the axis closest to the world origin), so every joint is a ``JointModelRZ`` (or
  ``JointModelPZ``), the fastest joint types Pinocchio has;
* ``jointPlacement = G_parent⁻¹ G_i`` with ``G_i`` the joint frame at the reference configuration
  (all joint variables zero: pkm's and Pinocchio's zero configurations coincide), and Pinocchio's
  ``RZ(θ)`` about that frame is pkm's ``exp(θ Y_i)``;
* the body inertia: mass ``m``, centre of mass ``d`` and ``Θ_c`` recovered from pkm's body-fixed
  ``M_i = [[Θ_o, m skew(d)], [−m skew(d), m I]]`` (eq. 167), moved into the joint frame with the
  constant pose ``G_i⁻¹ A_i`` of pkm's body frame in the joint frame; massless bodies (the virtual
  bodies of U/S joints, pkm's massless platform in the limb dynamics trees) get ``Inertia.Zero()``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from numba import njit

from pkm.algorithms.dynamics import body_mass_properties, rnea_into
from pkm.algorithms.kinematics import relative_poses_into
from pkm.description.model import compile_tree
from pkm.description.spec import BodySpec, JointSpec


def have_pinocchio() -> bool:
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        return False
    return True


def have_modern_robotics() -> bool:
    try:
        import modern_robotics  # noqa: F401
    except ImportError:
        return False
    return True


# ============================================================================ Pinocchio models
def _frame_with_z(e: np.ndarray) -> np.ndarray:
    """A rotation matrix whose third column is the unit vector ``e``."""
    e = e / np.linalg.norm(e)
    a = np.array([1.0, 0.0, 0.0]) if abs(e[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = a - e * (a @ e)
    x /= np.linalg.norm(x)
    return np.column_stack([x, _cross(e, x), e])


def _cross(a, b):
    """3-vector cross product (np.cross costs ~20 µs a call in numpy 2; this ~1 µs)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _inv(C: np.ndarray) -> np.ndarray:
    out = np.eye(4)
    out[:3, :3] = C[:3, :3].T
    out[:3, 3] = -C[:3, :3].T @ C[:3, 3]
    return out


def joint_frames(tree) -> np.ndarray:
    """Joint frames ``G_i`` (n, 4, 4) at the reference: z along the axis, origin on it (R, H) or at
    the body frame's origin (P)."""
    G = np.tile(np.eye(4), (tree.n, 1, 1))
    for i in range(tree.n):
        kind = tree.axis_kind[i]
        if kind == "R":
            e, v = tree.Y[i, :3], tree.Y[i, 3:]
            G[i, :3, 3] = _cross(e, v)  # v = p × e  ⇒  e × v = p − e(e·p)
        elif kind == "P":
            e = tree.Y[i, 3:]
            G[i, :3, 3] = tree.A[i, :3, 3]
        else:
            raise NotImplementedError(f"joint axis kind {kind!r} has no Pinocchio counterpart here")
        G[i, :3, :3] = _frame_with_z(e)
    return G


def _pin_inertia(pin, M: np.ndarray, m: float, d: np.ndarray, X_jb: np.ndarray):
    """Pinocchio inertia, in the joint frame, of a body with pkm mass matrix ``M`` (body frame);
    ``X_jb`` is the pose of the body frame in the joint frame."""
    if m <= 0.0:
        return pin.Inertia.Zero()
    S = np.array([[0.0, -d[2], d[1]], [d[2], 0.0, -d[0]], [-d[1], d[0], 0.0]])
    theta_c = M[:3, :3] + m * S @ S  # Θ_o = Θ_c − m skew(d)²
    theta_c = 0.5 * (theta_c + theta_c.T)
    I_body = pin.Inertia(float(m), np.asarray(d, float), theta_c)
    return pin.SE3(X_jb[:3, :3].copy(), X_jb[:3, 3].copy()).act(I_body)


@dataclass
class PinTrees:
    """A Pinocchio model holding one or more pkm trees side by side (each rooted at the universe).

    ``offsets[k]``: index of tree ``k``'s first joint variable in Pinocchio's ``q``/``v``/``τ``
    (tree ``k``'s variable ``i`` is at ``offsets[k] + i``); ``joint_ids[k][i]``: Pinocchio joint id
    of that variable; ``G[k]``: the joint frames ``G_i`` of tree ``k`` (reference, world).
    """

    model: object
    offsets: list
    joint_ids: list
    G: list
    trees: list

    def split(self, vec):
        """Cut a Pinocchio vector (nv,) into the trees' pieces."""
        return [vec[o:o + t.n] for o, t in zip(self.offsets, self.trees)]

    def add_frame(self, name: str, tree: int, body: int, C_world: np.ndarray) -> int:
        """Add an operational frame fixed to body ``body`` of tree ``tree`` whose pose at the reference
        is ``C_world``; returns its frame id."""
        import pinocchio as pin

        jid = self.joint_ids[tree][body]
        P = _inv(self.G[tree][body]) @ C_world
        return self.model.addFrame(pin.Frame(name, jid, pin.SE3(P[:3, :3].copy(), P[:3, 3].copy()),
                                             pin.FrameType.OP_FRAME))


def pinocchio_model(trees, gravity=(0.0, 0.0, -9.81), names=None) -> PinTrees:
    """One Pinocchio model with the pkm trees ``trees`` side by side (see the module docstring)."""
    import pinocchio as pin

    model = pin.Model()
    model.gravity.linear = np.asarray(gravity, float)
    offsets, joint_ids, Gs = [], [], []
    nv = 0
    for k, tree in enumerate(trees):
        prefix = f"{names[k]}:" if names is not None else (f"t{k}:" if len(trees) > 1 else "")
        G = joint_frames(tree)
        masses, coms = body_mass_properties(tree)
        ids = []
        offsets.append(nv)
        for i in range(tree.n):
            p = int(tree.parent[i])
            parent_jid = 0 if p < 0 else ids[p]
            Gp = np.eye(4) if p < 0 else G[p]
            P = _inv(Gp) @ G[i]
            jm = pin.JointModelRZ() if tree.axis_kind[i] == "R" else pin.JointModelPZ()
            jid = model.addJoint(parent_jid, jm, pin.SE3(P[:3, :3].copy(), P[:3, 3].copy()),
                                 prefix + tree.variable_names[i])
            X_jb = _inv(G[i]) @ tree.A[i]
            model.appendBodyToJoint(jid, _pin_inertia(pin, tree.M[i], masses[i], coms[i], X_jb), pin.SE3.Identity())
            ids.append(jid)
            if model.idx_vs[jid] != nv + i:
                raise AssertionError("unexpected Pinocchio variable ordering")
        joint_ids.append(ids)
        Gs.append(G)
        nv += tree.n
    return PinTrees(model=model, offsets=offsets, joint_ids=joint_ids, G=Gs, trees=list(trees))


def delta_tree_model(robot) -> PinTrees:
    """The Delta's spanning tree in one Pinocchio model: the L limb trees of
    :func:`pkm.algorithms.manipulator.dynamics_trees` (platform massless in each, as pkm's limb dynamics use
    them) side by side: 3 × 6 = 18 revolute joints for the 3RR[2RR]R."""
    from pkm.algorithms.manipulator import dynamics_trees

    return pinocchio_model(dynamics_trees(robot), robot.spec.gravity, names=[l.name for l in robot.limbs])


def hexapod_tree_model(robot) -> PinTrees:
    """The 6-UPS hexapod's spanning tree in one Pinocchio model: its six leg trees (U = two ``RZ``,
    P = one ``PZ``, S = three ``RZ``; platform massless in each, as pkm's limb dynamics use them) side
    by side: 6 × 6 = 36 joints. The same builder as :func:`delta_tree_model`."""
    return delta_tree_model(robot)


# ============================================================================ closed-loop Delta with Pinocchio
class PinocchioDeltaID:
    """Closed-loop inverse dynamics of a translational PKM written as a Pinocchio user would.

    Model: the limb spanning trees (18 ``RZ`` joints for the 3RR[2RR]R) with the platform massless in
    each tree, exactly the trees pkm's limb dynamics use; the platform is one rigid body handled
    separately (Newton–Euler with ``pin.Inertia``), as pkm does (eq. 104–106).

    Per sample (task position ``x``, velocity ``ẋ``, acceleration ``ẍ`` of the platform origin):

    1. **IK** — Gauss–Newton on all tree joints ``θ`` (18) with Pinocchio's frame Jacobians
       (``computeJointJacobians`` + ``getFrameJacobian``, LOCAL_WORLD_ALIGNED), warm-started from the
       previous sample, on the stacked residual of every limb: platform-frame position and
       orientation error w.r.t. the target (6; rotation error ``log3(R Rdᵀ)``) and the cut joint's
       closure (5 for a revolute cut joint: the two cut frames' origins coincide (3), the axis of one
       is orthogonal to the x and y axes of the other (2)). Stops when the Euclidean norm of each
       limb's 11-vector is ≤ ``tol`` (1e-12, as pkm's IK; pkm closes the loops to 1e-13).
    2. **Velocity / acceleration IK** — the stacked constraint Jacobian ``K`` (33 × 18) gives
       ``Γ = K⁺ E`` (18 × 3) with ``θ̇ = Γ ẋ`` (E puts ẋ on the platform-velocity rows); ``θ̈ = Γ ẍ −
       K⁺ b`` with the drift ``b = K̇ θ̇`` from ``forwardKinematics(q, θ̇, 0)`` and the frames' classical
       accelerations.
    3. **RNEA** — ``τ = pin.rnea(model, data, θ, θ̇, θ̈)`` on the 18-joint tree.
    4. **Projection** — virtual work with ``θ̇ = Γ ẋ``: ``J_IKᵀ u = Γᵀ τ + φ_p`` with
       ``J_IK = Γ[actuated rows]`` (3 × 3) and ``φ_p`` the platform's Newton–Euler force, minus
       gravity (``Γ = H F`` block-wise, so this is pkm's ``Σ F̄ᵀH̄ᵀφ_(l) + P_pᵀφ_p``, eq. 140, 144).

    Only for translational task spaces with the platform frame parallel to the world frame and
    revolute cut joints (the 3RR[2RR]R Delta).
    """

    def __init__(self, robot):
        import pinocchio as pin

        if robot.task.components != ("vx", "vy", "vz") or not np.allclose(robot.R0, np.eye(3)):
            raise NotImplementedError("PinocchioDeltaID handles translational tasks with the platform parallel to F_0")
        self.pin = pin
        self.robot = robot
        self.pt = delta_tree_model(robot)
        self.model = self.pt.model
        spec = robot.spec
        jby = {j.name: j for j in spec.expanded()[1]}
        A_p = spec.body(spec.platform).frame
        self.platform_frames = []
        self.cuts = []  # (frame a on the cut joint's child side, frame b on its parent side)
        for k, limb in enumerate(robot.limbs):
            self.platform_frames.append(self.pt.add_frame(f"{limb.name}:platform_frame", k, limb.platform, A_p))
            for lp in limb.loops:
                cj = jby[lp.cut.name]
                if cj.type != "R":
                    raise NotImplementedError(f"cut joint {cj.name!r} of type {cj.type}: only R is handled")
                Cc = np.eye(4)
                Cc[:3, :3] = _frame_with_z(cj.axes[0])
                Cc[:3, 3] = cj.point
                fa = self.pt.add_frame(f"{cj.name}:child", k, limb.tree.body_index(cj.child), Cc)
                fb = self.pt.add_frame(f"{cj.name}:parent", k, limb.tree.body_index(cj.parent), Cc)
                self.cuts.append((fa, fb))
        self.data = self.model.createData()  # after the frames are added
        self.nv = self.model.nv
        self.act = np.array([o + int(a) for o, l in zip(self.pt.offsets, robot.limbs) for a in l.actuated])
        self.nrows = 6 * len(self.platform_frames) + 5 * len(self.cuts)
        self.E = np.zeros((self.nrows, 3))
        for k in range(len(self.platform_frames)):
            self.E[6 * k:6 * k + 3] = np.eye(3)
        Mp = spec.body(spec.platform).spatial_inertia()  # pkm (ω; v), F_p
        m = np.trace(Mp[3:, 3:]) / 3.0
        S = 0.5 * (Mp[:3, 3:] - Mp[3:, :3])
        d = np.array([S[2, 1], S[0, 2], S[1, 0]]) / m
        Sk = np.array([[0.0, -d[2], d[1]], [d[2], 0.0, -d[0]], [-d[1], d[0], 0.0]])
        self.I_platform = pin.Inertia(float(m), d, Mp[:3, :3] + m * Sk @ Sk)
        self.g0 = np.asarray(spec.gravity, float)
        self.q = None
        self.iterations = []

    # ---------------------------------------------------------------- pieces
    def _residual_jacobian(self, q, Rd, pd, with_jacobian=True):
        pin, model, data = self.pin, self.model, self.data
        LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
        if with_jacobian:
            pin.computeJointJacobians(model, data, q)
        else:
            pin.forwardKinematics(model, data, q)
        pin.updateFramePlacements(model, data)
        r = np.empty(self.nrows)
        K = np.empty((self.nrows, self.nv)) if with_jacobian else None
        row = 0
        for fid in self.platform_frames:
            oMf = data.oMf[fid]
            r[row:row + 3] = oMf.translation - pd
            r[row + 3:row + 6] = pin.log3(oMf.rotation @ Rd.T)
            if with_jacobian:
                K[row:row + 6] = pin.getFrameJacobian(model, data, fid, LWA)
            row += 6
        for fa, fb in self.cuts:
            Ma, Mb = data.oMf[fa], data.oMf[fb]
            za, xb, yb = Ma.rotation[:, 2], Mb.rotation[:, 0], Mb.rotation[:, 1]
            r[row:row + 3] = Ma.translation - Mb.translation
            r[row + 3] = za @ xb
            r[row + 4] = za @ yb
            if with_jacobian:
                Ja = pin.getFrameJacobian(model, data, fa, LWA)
                Jb = pin.getFrameJacobian(model, data, fb, LWA)
                K[row:row + 3] = Ja[:3] - Jb[:3]
                dw = Ja[3:] - Jb[3:]
                K[row + 3] = _cross(za, xb) @ dw
                K[row + 4] = _cross(za, yb) @ dw
            row += 5
        return r, K

    def _converged(self, r, tol):
        """Every limb's residual (its platform rows and its cut rows) has norm ≤ tol."""
        nl = len(self.platform_frames)
        nc = len(self.cuts) // nl
        for k in range(nl):
            e2 = r[6 * k:6 * k + 6] @ r[6 * k:6 * k + 6]
            c = r[6 * nl + 5 * nc * k:6 * nl + 5 * nc * (k + 1)]
            if not e2 + c @ c <= tol * tol:
                return False
        return True

    def solve_ik(self, x, tol=1e-12, max_iter=50):
        """Tree joint variables θ (nv,) that put the platform at ``x`` (warm start: the last solution)."""
        if self.q is None:
            self.q = self._start(x)
        Cd = self.robot.platform_pose(x)
        Rd, pd = Cd[:3, :3], Cd[:3, 3]
        q = self.q.copy()
        for it in range(max_iter + 1):
            r, K = self._residual_jacobian(q, Rd, pd)
            if self._converged(r, tol):
                self.q = q
                self.iterations.append(it)
                self._K = K
                return q
            dq = np.linalg.lstsq(K, -r, rcond=None)[0]
            big = np.max(np.abs(dq))
            q = q + (dq * (0.5 / big) if big > 0.5 else dq)
        raise RuntimeError(f"Pinocchio IK did not converge at x = {x}: |r| = {np.linalg.norm(r):.3e}")

    def _start(self, x):
        """First sample: continuation from the reference configuration (θ = 0) along a straight line."""
        x0 = self.robot.x_ref
        self.q = np.zeros(self.nv)
        for t in np.linspace(0.0, 1.0, 11)[1:]:
            self.solve_ik(x0 + t * (np.asarray(x, float) - x0))
        return self.q

    def rates(self, q, xd, xdd, K=None):
        """θ̇, θ̈ and Γ (θ̇ = Γ ẋ) at a solved configuration."""
        pin, model, data = self.pin, self.model, self.data
        LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
        if K is None:
            _, K = self._residual_jacobian(q, np.eye(3), np.zeros(3))
        Kp = np.linalg.pinv(K)
        Gamma = Kp @ self.E
        qd = Gamma @ xd
        pin.forwardKinematics(model, data, q, qd, np.zeros(self.nv))
        pin.updateFramePlacements(model, data)
        b = np.empty(self.nrows)
        row = 0
        for fid in self.platform_frames:
            a = pin.getFrameClassicalAcceleration(model, data, fid, LWA)
            b[row:row + 3] = a.linear
            b[row + 3:row + 6] = a.angular
            row += 6
        for fa, fb in self.cuts:
            Ma, Mb = data.oMf[fa], data.oMf[fb]
            za, xb, yb = Ma.rotation[:, 2], Mb.rotation[:, 0], Mb.rotation[:, 1]
            va, vb = pin.getFrameVelocity(model, data, fa, LWA), pin.getFrameVelocity(model, data, fb, LWA)
            aa = pin.getFrameClassicalAcceleration(model, data, fa, LWA)
            ab = pin.getFrameClassicalAcceleration(model, data, fb, LWA)
            wa, wb = va.angular, vb.angular
            b[row:row + 3] = aa.linear - ab.linear
            dza = _cross(wa, za)
            dw = aa.angular - ab.angular
            for c, e in ((3, xb), (4, yb)):
                de = _cross(wb, e)
                # d²/dt²(za·e) at θ̈ = 0: (α_a − α_b)·(za × e) + (ω_a − ω_b)·d/dt(za × e)
                b[row + c] = _cross(za, e) @ dw + (wa - wb) @ (_cross(dza, e) + _cross(za, de))
            row += 5
        qdd = Gamma @ xdd - Kp @ b
        return qd, qdd, Gamma

    def platform_force(self, xd, xdd):
        """Task-space platform term ``φ_p`` (3,): Newton–Euler of the translating platform minus gravity,
        with ``pin.Inertia`` (body = world orientation, ω = 0)."""
        pin = self.pin
        V = pin.Motion(np.asarray(xd, float), np.zeros(3))
        A = pin.Motion(np.asarray(xdd, float) - self.g0, np.zeros(3))
        f = self.I_platform * A + V.cross(self.I_platform * V)
        return f.linear

    def __call__(self, x, xd, xdd):
        """Actuator torques ``u`` (n_act,) at one sample."""
        q = self.solve_ik(x)
        qd, qdd, Gamma = self.rates(q, xd, xdd, self._K)
        tau = self.pin.rnea(self.model, self.data, q, qd, qdd)
        rhs = Gamma.T @ tau + self.platform_force(xd, xdd)
        return np.linalg.solve(Gamma[self.act].T, rhs)

    def run(self, X, XD, XDD):
        """Torques (N, n_act) along a trajectory."""
        return np.array([self(x, xd, xdd) for x, xd, xdd in zip(X, XD, XDD)])


# ============================================================================ Modern Robotics 6R model
def modern_robotics_6r(spec):
    """Mlist, Glist, Slist of the 6R arm from the robot file (as tests/test_dynamics.py builds them):
    link frames at the COMs with the body-frame axes, ``G = [[Θ_c, 0], [0, m I]]``, space screws
    ``(e; y × e)``. Returns ``(order, Mlist, Glist, Slist)``."""
    bodies, joints = spec.expanded()
    order = ["shoulder", "upper_arm", "forearm", "wrist1", "wrist2", "tool"]
    by_name = {b.name: b for b in bodies}
    by_child = {j.child: j for j in joints}
    frames, Glist, S = [], [], []
    for name in order:
        b, j = by_name[name], by_child[name]
        F = np.eye(4)
        F[:3, :3] = b.frame[:3, :3]
        F[:3, 3] = b.com
        frames.append(F)
        G = np.zeros((6, 6))
        G[:3, :3] = b.inertia
        G[3:, 3:] = b.mass * np.eye(3)
        Glist.append(G)
        e = j.axes[0]
        S.append(np.r_[e, _cross(j.point, e)])
    Mlist = [frames[0]] + [np.linalg.inv(frames[i - 1]) @ frames[i] for i in range(1, 6)] + [np.eye(4)]
    return order, Mlist, Glist, np.array(S).T


# ============================================================================ random serial chains
def random_chain(n: int, seed: int = 0, link: float = 0.1):
    """A serial chain of ``n`` revolute joints with random unit axes and ``n`` cylinder links
    (aluminium, Ø2 cm, 10 cm long, random directions; body frames rotated randomly and offset from
    the COM so that general inertias are exercised). Returns a :class:`pkm.description.model.TreeModel`."""
    rng = np.random.default_rng(seed)
    bodies, joints = [], []
    p = np.zeros(3)
    parent = "ground"
    for i in range(n):
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        p1 = p + link * u
        r, rho = 0.01, 2700.0
        m = rho * np.pi * r**2 * link
        I = m * (3 * r**2 + link**2) / 12 * (np.eye(3) - np.outer(u, u)) + m * r**2 / 2 * np.outer(u, u)
        Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        Q *= np.sign(np.linalg.det(Q))
        frame = np.eye(4)
        frame[:3, :3] = Q
        frame[:3, 3] = (p + p1) / 2 + 0.01 * rng.normal(size=3)
        name = f"b{i}"
        bodies.append(BodySpec(name=name, frame=frame, mass=m, com=(p + p1) / 2, inertia=Q.T @ I @ Q))
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        joints.append(JointSpec(name=f"j{i}", type="R", parent=parent, child=name, point=p.copy(),
                                axes=axis[None, :], pitch=0.0))
        parent, p = name, p1
    return compile_tree(bodies, joints, "ground")


# ============================================================================ batched pkm tree RNEA
@njit(cache=False)
def rnea_batch(parent, X, B, M, Q, QD, QDD, g0, tau):
    """pkm's tree RNEA (``relative_poses_into`` + ``rnea_into``) over the N rows of ``Q, QD, QDD``
    into ``tau`` (N, n). pkm has no batched tree-RNEA API; this loop only chains its kernels."""
    n = X.shape[0]
    T = np.empty((n, 4, 4))
    V = np.empty((n, 6))
    A = np.empty((n, 6))
    W = np.empty((n, 6))
    Wext = np.zeros((n, 6))
    for s in range(Q.shape[0]):
        relative_poses_into(B, X, Q[s], T)
        rnea_into(parent, X, T, M, QD[s], QDD[s], g0, Wext, V, A, W, tau[s])


def rnea_batch_trees(trees, Q, QD, QDD, g0, tau):
    """:func:`rnea_batch` for several trees side by side (columns split as in :class:`PinTrees`)."""
    o = 0
    for t in trees:
        sl = slice(o, o + t.n)
        rnea_batch(t.parent, t.X, t.B, t.M, np.ascontiguousarray(Q[:, sl]), np.ascontiguousarray(QD[:, sl]),
                   np.ascontiguousarray(QDD[:, sl]), g0, tau[:, sl])
        o += t.n


# ============================================================================ PKM with L identical limbs
def multi_limb_robot_text(L: int, template="delta_3r2us.toml") -> str:
    """The robot file ``robots/<template>`` with its mounts replaced by ``L`` mounts at 360°/L about z
    (``limb1`` at 0°). With the default template every limb is the 3R[2US] Delta's R[2US] limb (one
    loop, 9 tree joints, 5 DOF); the task stays translational."""
    from pkm.description.robotfile import load_spec  # noqa: F401  (fail early if pkm is missing)

    src = (_repo() / "robots" / template).read_text()
    head, sep, _ = src.partition("[[limb.mounts]]")
    if not sep:
        raise ValueError(f"{template} has no [[limb.mounts]]")
    # drop the comment lines directly above the first mount
    lines = head.rstrip().split("\n")
    while lines and lines[-1].lstrip().startswith("#"):
        lines.pop()
    body = "\n".join(lines).rstrip() + "\n"
    body = re.sub(r'^name = "', f'name = "{L}-limb variant of the ', body, count=1, flags=re.M)
    mounts = "".join(f'\n[[limb.mounts]]\nname = "limb{k + 1}"\nframe = {{ axis = [0, 0, 1], angle_deg = {360.0 * k / L!r} }}\n'
                     for k in range(L))
    return body + f"\n# {L} mounts at 360°/{L} (generated by benchmarks/peers.py)" + mounts


def multi_limb_robot(L: int, directory, template="delta_3r2us.toml"):
    """Write :func:`multi_limb_robot_text` to ``directory`` and load it with :func:`pkm.load` (without its
    actuation check: L limbs drive a 3-DOF platform with L actuators, for IK and per-limb timings)."""
    from pathlib import Path

    import pkm

    path = Path(directory) / f"{Path(template).stem}_{L}limbs.toml"
    path.write_text(multi_limb_robot_text(L, template))
    return pkm.load(path, check=False)


def _repo():
    from pathlib import Path

    return Path(__file__).resolve().parent.parent
