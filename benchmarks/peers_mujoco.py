"""MuJoCo peer of the closed-loop Delta (issue 15, deliverable 6): an MJCF string generated from
pkm's robot data and a thin wrapper that maps pkm states in and reads the platform's acceleration
and the loop closure out. The model is the one of :mod:`peers_forward` (its docstring): the three
limb trees, the platform split in thirds welded together, the parallelograms closed by point
constraints. MuJoCo (``pip install mujoco``) is imported lazily: this module loads without it.

Soft constraints: MuJoCo's equality constraints are soft. With ``solref = (timeconst, dampratio)``
and ``solimp = (d0, dwidth, width, mid, power)`` the constraint force at a state with zero
violation is ``f = −(A + R)⁻¹(J a₀ − a_ref)`` with ``A = J M⁻¹ Jᵀ`` and the regulariser
``R_ii = (1 − d)/d · Â_ii`` (``Â``: MuJoCo's diagonal estimate of ``A``): the closer the impedance
``d`` is to 1 (MuJoCo caps it at 0.9999), the closer the accelerations come to the rigid ones.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from peers import _inv
from peers_forward import _loop_cuts, split_platform_trees


def have_mujoco() -> bool:
    try:
        import mujoco  # noqa: F401
    except ImportError:
        return False
    return True


def _f(a) -> str:
    return " ".join(repr(float(x)) for x in np.ravel(a))


def _quat(R) -> str:
    import mujoco

    q = np.empty(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(R, float).ravel())
    return _f(q)


def mjcf(robot, *, timestep=1e-4, integrator="Euler", solref=None, solimp=None, platform="weld") -> str:
    """An MJCF Delta from pkm's data (the model of the module docstring), as a MuJoCo user writes
    it: one ``<body>`` per tree body, nested as the limb trees, its frame at the joint frame
    ``G_i`` of :func:`peers.joint_frames` (z on the axis), one ``hinge`` about z, ``<inertial>``
    with mass, centre of mass and full inertia about it; sites on both sides of every cut
    (``<connect site1 site2>`` for the parallelograms, ``<weld site1 site2>`` for the platform
    copies); a ``<motor>`` (gear 1, no control limits) on every actuated joint; gravity from the
    robot file; no geoms (nothing collides). ``solref``/``solimp``: the equality constraints' soft
    parameters (None: MuJoCo's defaults, 0.02 1 and 0.9 0.95 0.001 0.5 2). ``platform="hinge"``
    instead: the whole platform on limb 1, limbs 2… end at their lower link and each joint 6 is
    closed by two ``<connect>`` at ±5 cm along its axis (a revolute joint, 6 rows for 5)."""
    from peers import joint_frames

    from pkm.algorithms.dynamics import body_mass_properties

    if platform not in ("weld", "hinge"):
        raise ValueError(f"platform must be 'weld' or 'hinge', got {platform!r}")
    trees, _ = split_platform_trees(robot)
    spec = robot.spec
    A_p = spec.body(spec.platform).frame
    plat = [t.body_index(spec.platform) for t in trees]
    skip = set()
    if platform == "hinge":
        M = trees[0].M.copy()
        M[plat[0]] *= len(trees)
        trees[0] = replace(trees[0], M=M)
        skip = {(k, plat[k]) for k in range(1, len(trees))}
    sites = {}  # (limb, body) -> list of (name, world pose)
    for k, cj in _loop_cuts(robot):
        C = np.eye(4)
        C[:3, 3] = cj.point
        for side, body in (("child", cj.child), ("parent", cj.parent)):
            sites.setdefault((k, trees[k].body_index(body)), []).append((f"{cj.name}:{side}", C))
    sites.setdefault((0, plat[0]), []).append((f"{robot.limbs[0].name}/platform", A_p))
    hinges = []
    for k, t in enumerate(trees[1:], 1):
        if platform == "weld":
            sites.setdefault((k, plat[k]), []).append((f"{robot.limbs[k].name}/platform", A_p))
            continue
        G6 = joint_frames(t)[plat[k]]
        for side, h in (("a", 0.05), ("b", -0.05)):
            C = np.eye(4)
            C[:3, 3] = G6[:3, 3] + h * G6[:3, 2]
            name = f"{t.variable_names[plat[k]]}:{side}"
            sites.setdefault((k, int(t.parent[plat[k]])), []).append((name + ":child", C))
            sites[(0, plat[0])].append((name + ":platform", C))
            hinges.append(name)
    eq_attr = "".join(f' {k}="{_f(v)}"' for k, v in (("solref", solref), ("solimp", solimp)) if v is not None)

    lines = [f'<mujoco model="{robot.name} (pkm peers_mujoco)">', '  <compiler angle="radian" autolimits="true"/>',
             f'  <option timestep="{timestep!r}" integrator="{integrator}" gravity="{_f(spec.gravity)}"/>',
             "  <worldbody>"]

    def body(k, t, G, masses, coms, i, depth):
        P = _inv(G[int(t.parent[i])]) @ G[i] if t.parent[i] >= 0 else G[i]
        name = t.body_names[i] if t.body_names[i] != spec.platform else f"{robot.limbs[k].name}/platform"
        ind = "  " * depth
        out = [f'{ind}<body name="{name}" pos="{_f(P[:3, 3])}" quat="{_quat(P[:3, :3])}">',
               f'{ind}  <joint name="{t.variable_names[i]}" type="hinge" axis="0 0 1"/>']
        Gi = _inv(G[i])
        R = Gi[:3, :3] @ t.A[i, :3, :3]  # body frame in the joint frame
        m, d = masses[i], coms[i]
        S = np.array([[0.0, -d[2], d[1]], [d[2], 0.0, -d[0]], [-d[1], d[0], 0.0]])
        Ic = R @ (t.M[i, :3, :3] + m * S @ S) @ R.T
        c = Gi[:3, :3] @ (t.A[i, :3, :3] @ d + t.A[i, :3, 3]) + Gi[:3, 3]
        I6 = [Ic[0, 0], Ic[1, 1], Ic[2, 2], Ic[0, 1], Ic[0, 2], Ic[1, 2]]
        out.append(f'{ind}  <inertial pos="{_f(c)}" mass="{float(m)!r}" fullinertia="{_f(I6)}"/>')
        for sname, C in sites.get((k, i), []):
            S_ = Gi @ C
            out.append(f'{ind}  <site name="{sname}" pos="{_f(S_[:3, 3])}" quat="{_quat(S_[:3, :3])}"/>')
        for j in range(i + 1, t.n):
            if t.parent[j] == i and (k, j) not in skip:
                out += body(k, t, G, masses, coms, j, depth + 1)
        return out + [f"{ind}</body>"]

    for k, t in enumerate(trees):
        G = joint_frames(t)
        masses, coms = body_mass_properties(t)
        for i in range(t.n):
            if t.parent[i] < 0:
                lines += body(k, t, G, masses, coms, i, 2)
    lines += ["  </worldbody>", "  <equality>"]
    for k, cj in _loop_cuts(robot):
        lines.append(f'    <connect name="{cj.name}" site1="{cj.name}:child" site2="{cj.name}:parent"{eq_attr}/>')
    p0 = robot.limbs[0].name
    for l in robot.limbs[1:] if platform == "weld" else ():
        lines.append(f'    <weld name="platform {l.name}-{p0}" site1="{l.name}/platform" site2="{p0}/platform"'
                     f"{eq_attr}/>")
    for name in hinges:
        lines.append(f'    <connect name="{name}" site1="{name}:child" site2="{name}:platform"{eq_attr}/>')
    lines += ["  </equality>", "  <actuator>"]
    for l in robot.limbs:
        for a in l.actuated:
            name = l.tree.variable_names[int(a)]
            lines.append(f'    <motor name="{name}" joint="{name}" gear="1"/>')
    lines += ["  </actuator>", "</mujoco>"]
    return "\n".join(lines) + "\n"


class MujocoDelta:
    """The MJCF Delta of :func:`mjcf` compiled, with the state map from pkm and the platform's
    acceleration (``mj_forward``) and accuracy runs (``mj_step``). Keyword arguments go to
    :func:`mjcf`."""

    def __init__(self, robot, **options):
        import mujoco

        self.mj, self.robot = mujoco, robot
        self.xml = mjcf(robot, **options)
        self.model = mujoco.MjModel.from_xml_string(self.xml)
        self.data = mujoco.MjData(self.model)
        names = [v for l in robot.limbs for v in l.tree.variable_names]
        present = {self.model.joint(j).name for j in range(self.model.njnt)}
        # qpos[perm[j]] = pkm's stacked tree variable index[j] (all of them but, with platform="hinge",
        # the joints 6 of limbs 2…, which the constraints then determine)
        self.index = np.array([i for i, n in enumerate(names) if n in present])
        self.perm = np.array([self.model.jnt_qposadr[self.model.joint(names[i]).id] for i in self.index])
        self.dof = np.array([self.model.jnt_dofadr[self.model.joint(names[i]).id] for i in self.index])
        self.site = self.model.site(f"{robot.limbs[0].name}/platform").id
        self.body = self.model.site_bodyid[self.site]

    def set_state(self, theta, thetad, u):
        """Put pkm's stacked tree variables and rates and the actuator torques into ``data``."""
        d = self.data
        d.qpos[self.perm] = np.asarray(theta)[self.index]
        d.qvel[self.dof] = np.asarray(thetad)[self.index]
        d.ctrl[:] = u
        d.time = 0.0

    def platform(self):
        """Platform origin's position, velocity and classical acceleration from ``data`` (after
        ``mj_forward``): ``J q̈ + J̇ q̇`` with ``mj_jacSite``/``mj_jacDot``."""
        mj, m, d = self.mj, self.model, self.data
        Jp, Jr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
        mj.mj_jacSite(m, d, Jp, Jr, self.site)
        Jdp, Jdr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
        mj.mj_jacDot(m, d, Jdp, Jdr, d.site_xpos[self.site], self.body)
        return d.site_xpos[self.site].copy(), Jp @ d.qvel, Jp @ d.qacc + Jdp @ d.qvel

    def xdd(self, theta, thetad, u):
        """Platform acceleration under ``u`` at a pkm state (``mj_forward``)."""
        self.set_state(theta, thetad, u)
        self.mj.mj_forward(self.model, self.data)
        return self.platform()[2]

    def closure(self):
        """Largest loop-closure residual of ``data`` (after kinematics): (position in m over all
        equality constraints, rotation in rad over the welds), from the sites' poses."""
        m, d = self.model, self.data
        pos = rot = 0.0
        for e in range(m.neq):
            s1, s2 = m.eq_obj1id[e], m.eq_obj2id[e]
            pos = max(pos, float(np.linalg.norm(d.site_xpos[s1] - d.site_xpos[s2])))
            if m.eq_type[e] == self.mj.mjtEq.mjEQ_WELD:
                R = d.site_xmat[s1].reshape(3, 3).T @ d.site_xmat[s2].reshape(3, 3)
                w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
                rot = max(rot, float(np.arctan2(0.5 * np.linalg.norm(w), 0.5 * (np.trace(R) - 1.0))))
        return pos, rot

    def simulate(self, u, theta0, thetad0, T, every=None):
        """``mj_step`` over ``[0, T]`` at the model's timestep. MuJoCo holds ``ctrl`` over a step; it
        is set to ``u`` at the step's midpoint, so that the hold is second-order accurate (at the
        step's start, the torque table alone gives RK4 runs a first-order drift: 3e-4 m over 1 s at
        dt = 1e-4). Returns ``t``, platform positions and closure residuals (pos, rot) every
        ``every`` s."""
        mj, m, d = self.mj, self.model, self.data
        dt = m.opt.timestep
        n = int(round(T / dt))
        stride = max(1, int(round((every or dt) / dt)))
        self.set_state(theta0, thetad0, u(0.0))
        mj.mj_forward(m, d)
        ts, X, C = [0.0], [d.site_xpos[self.site].copy()], [self.closure()]
        for i in range(n):
            d.ctrl[:] = u((i + 0.5) * dt)
            mj.mj_step(m, d)
            if (i + 1) % stride == 0:
                mj.mj_kinematics(m, d)  # poses at the new state
                ts.append((i + 1) * dt)
                X.append(d.site_xpos[self.site].copy())
                C.append(self.closure())
        return np.array(ts), np.array(X), np.array(C)
