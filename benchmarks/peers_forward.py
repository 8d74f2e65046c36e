"""Forward-dynamics peers of the closed-loop Delta (issue 15, deliverable 6): Pinocchio's
``constraintDynamics`` (here) and MuJoCo's ``mj_step`` (:mod:`peers_mujoco`), both built from pkm's
robot data; the map from a consistent pkm state to each peer's state; accuracy runs against pkm's
solution and timings (``python benchmarks/peers_forward.py`` prints both).

Pinocchio (≥ 4, ``pip install pin``; written against 4.1) and MuJoCo are imported lazily: this
module loads without them.

**The model (both peers)** (Pinocchio's is now built by the package, :func:`pkm.export.pinocchio`,
which generalises it to every robot; MuJoCo's here keeps its ``platform="hinge"`` variant). The three limb trees of pkm (``limb.tree``: 6 revolute joints each for
the 3RR[2RR]R; zero configuration = pkm's reference) side by side, renumbered depth-first
(:func:`depth_first`, which Pinocchio needs), each ending in its own copy of the platform that
carries **one third of the platform's spatial inertia** (mass/3, same centre of mass, Θ/3), so
that the three welded copies are the platform exactly. No body is massless (a massless leaf makes
the joint-space inertia singular, which Pinocchio's constrained Cholesky cannot factor). Loops are
closed by

* **the parallelogram cut joint 7** (revolute, axis parallel to joints 3, 4, 5): a *point*
  constraint at the joint's centre (Pinocchio ``CONTACT_3D``, MuJoCo ``<connect>``). The loop's
  four axes are parallel in the tree by construction, so the two orientation rows of the revolute
  cut vanish identically on the tree's motion; the point constraint has the same admissible motion
  (3 rows, rank 2: one redundant row per loop) and therefore the same dynamics;
* **the platform**: copies 2 and 3 are welded to copy 1 (Pinocchio ``CONTACT_6D``, MuJoCo
  ``<weld>``). Joint 6 of every limb is a real tree joint, so the welds model the physical
  revolute joints 6 exactly.

21 constraint rows on 18 tree coordinates for 3 degrees of freedom: rank 15, i.e. 6 redundant rows
(one per parallelogram, three for the platform's over-constrained rotations: each limb leaves the
platform one rotation, about its own joint-6 axis). Pinocchio's proximal solver (``mu`` > 0) and
MuJoCo's soft constraints both accept redundant rows. (With redundant rows Pinocchio's stopping
test is never met, so every call runs ``max_iter`` proximal iterations; two already give the
accelerations to rounding at ``mu`` ≤ 1e-8, the default here is 3.)

**The state map.** pkm's tree variables ``θ_(l)`` and rates ``θ̇_(l)`` (``res.joints``,
``res.joints_d`` of ``inverse_dynamics``, or ``fd.theta``/``fd.thetad``), stacked by limb
(:func:`pkm_state`), are the peers' coordinates up to the depth-first permutation:
``PinocchioDeltaFD.state`` gives ``(q, v)``, ``MujocoDelta.set_state`` fills ``qpos``/``qvel`` (by
joint name). Actuator torques go on the actuated tree joints (pkm's ``u`` is the generalised force
of that joint variable; all three codes turn positively about the same axis). The platform's
acceleration, to compare with pkm's ``fd.xdd``, is the classical acceleration of the platform
frame's origin on copy 1 (``getFrameClassicalAcceleration``; in MuJoCo ``J q̈ + J̇ q̇`` of a site).
"""
from __future__ import annotations

import time
from dataclasses import replace

import numpy as np



def have_pinocchio4() -> bool:
    try:
        import pinocchio
    except ImportError:
        return False
    return int(pinocchio.__version__.split(".")[0]) >= 4


def depth_first(tree):
    """``(tree', order)``: ``tree`` with its variables renumbered depth-first (variable ``j`` of
    ``tree'`` is variable ``order[j]`` of ``tree``). Pinocchio's algorithms that work on joint
    subtrees (``crba``, the constrained Cholesky of ``constraintDynamics``) take every subtree's
    variables to be contiguous; pkm numbers the Delta limb ``parent = [-1, 0, 1, 2, 1, 3]`` (rod 2,
    child of body 1, sits inside body 2's subtree), which ``model.check(data)`` rejects and for
    which ``crba`` is wrong while ``rnea`` and ``aba`` are right."""
    n = tree.n
    children = [[] for _ in range(n)]
    roots = []
    for i in range(n):
        (roots if tree.parent[i] < 0 else children[int(tree.parent[i])]).append(i)
    order, stack = [], roots[::-1]
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(children[i][::-1])
    order = np.array(order)
    new = np.empty(n, dtype=int)
    new[order] = np.arange(n)
    parent = np.array([new[tree.parent[i]] if tree.parent[i] >= 0 else -1 for i in order], dtype=tree.parent.dtype)
    pick = lambda seq: tuple(seq[i] for i in order)  # noqa: E731
    out = replace(tree, parent=parent, Y=tree.Y[order], X=tree.X[order], A=tree.A[order], B=tree.B[order],
                  M=tree.M[order], ancestor=tree.ancestor[np.ix_(order, order)], body_names=pick(tree.body_names),
                  variable_names=pick(tree.variable_names), joint_names=pick(tree.joint_names),
                  virtual=tree.virtual[order], axis_kind=pick(tree.axis_kind), actuated=tree.actuated[order],
                  _index={name: int(new[i]) for name, i in tree._index.items()})
    return out, order


def split_platform_trees(robot):
    """Each limb's tree, depth-first (:func:`depth_first`), with its platform body carrying 1/L of
    the platform's inertia; and each tree's ``order``."""
    L = len(robot.limbs)
    trees, orders = [], []
    for limb in robot.limbs:
        M = limb.tree.M.copy()
        M[limb.platform] = M[limb.platform] / L
        t, order = depth_first(replace(limb.tree, M=M))
        trees.append(t)
        orders.append(order)
    return trees, orders


def _loop_cuts(robot):
    """``(k, cut JointSpec)`` of every loop; only revolute cuts whose loop axes are all parallel
    (planar loops such as the Delta's parallelogram), which a point constraint models exactly."""
    jby = {j.name: j for j in robot.spec.expanded()[1]}
    out = []
    for k, limb in enumerate(robot.limbs):
        for lp in limb.loops:
            cj = jby[lp.cut.name]
            if cj.type != "R":
                raise NotImplementedError(f"cut joint {cj.name!r} of type {cj.type}: only R is handled")
            loop = set(_path(limb.tree, limb.tree.body_index(cj.parent))) ^ set(
                _path(limb.tree, limb.tree.body_index(cj.child)))
            e = cj.axes[0]
            for i in loop:
                if np.linalg.norm(np.cross(limb.tree.Y[i, :3], e)) > 1e-12:
                    raise NotImplementedError(f"loop of cut {cj.name!r} is not planar: a point constraint "
                                              "would not model the revolute cut")
            out.append((k, cj))
    return out


def _path(tree, i):
    """Tree variables from body ``i`` down to the root."""
    out = []
    while i >= 0:
        out.append(i)
        i = int(tree.parent[i])
    return out


def paper_motion(robot, period=1.0, dt=1e-3):
    """The robot file's sine with period and duration ``period`` (as tests/test_simulate.py), the
    pkm inverse dynamics along it and the start configuration for pkm's solver."""
    from pkm.trajectory import from_spec

    tr = from_spec(dict(robot.spec.trajectory, period=period, duration=period, dt=dt), robot.task.coordinate_names())
    res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t)
    start = [res.joints[l.name][0] for l in robot.limbs]
    return tr, res, start


def pkm_state(robot, res, s):
    """Tree variables and rates of sample ``s`` of a pkm inverse-dynamics result, stacked by limb."""
    return (np.concatenate([res.joints[l.name][s] for l in robot.limbs]),
            np.concatenate([res.joints_d[l.name][s] for l in robot.limbs]))


# ============================================================================ Pinocchio
class PinocchioDeltaFD:
    """Closed-loop forward dynamics of the Delta with ``pin.constraintDynamics`` (see the module
    docstring for the model). ``accuracy``, ``mu``, ``max_iter``: ``pin.ProximalSettings``;
    ``baumgarte = (Kp, Kd)``: the constraints' Baumgarte corrector (0, 0 = none, Pinocchio's
    default)."""

    def __init__(self, robot, *, accuracy=1e-12, mu=1e-8, max_iter=3, baumgarte=(0.0, 0.0)):
        import pinocchio as pin

        from pkm.export import pinocchio as export_pinocchio

        self.pin, self.robot = pin, robot
        # the package's export (pkm.export.pinocchio): for the Delta exactly the model of the module
        # docstring (limb trees depth-first, platform thirds welded, planar parallelograms as points)
        self.export = export_pinocchio(robot)
        model = self.model = self.export.model
        mb = self.export.multibody
        if mb.chains:
            raise NotImplementedError("a robot with cut joints modelled as welded chains: use pkm.export directly")
        # Pinocchio's q = pkm's stacked tree variables [θ_(1); θ_(2); …] taken at perm
        self.perm = np.argsort(np.concatenate(mb.tree_index))
        self.platform_frame = self.export.platform_frame
        self.constraints = self.export.constraint_models
        if baumgarte != (0.0, 0.0):
            for cm in self.constraints:
                cm.setBaumgarteCorrectorParameters(pin.BaumgarteCorrectorParameters(*map(float, baumgarte)))
        self.data = model.createData()
        self.cdatas = pin.StdVec_RigidConstraintData()
        for cm in self.constraints:
            self.cdatas.append(cm.createData())
        pin.initConstraintDynamics(model, self.data, self.constraints, self.cdatas)
        self.prox = pin.ProximalSettings(accuracy, mu, max_iter)
        self.act = np.asarray(mb.actuated)
        self.nv = model.nv
        self.rows = sum(3 if cm.type == pin.ContactType.CONTACT_3D else 6 for cm in self.constraints)

    def state(self, theta, thetad):
        """Pinocchio's ``(q, v)`` from pkm's tree variables and rates, stacked by limb (as
        :func:`pkm_state` gives them)."""
        return np.asarray(theta, float)[self.perm], np.asarray(thetad, float)[self.perm]

    def tau(self, u):
        """Generalised forces (nv,): the actuator torques ``u`` on the actuated joints."""
        out = np.zeros(self.nv)
        out[self.act] = u
        return out

    def ddq(self, q, v, u):
        """Joint accelerations under actuator torques ``u`` (``constraintDynamics``)."""
        return self.pin.constraintDynamics(self.model, self.data, q, v, self.tau(u), self.constraints, self.cdatas,
                                           self.prox)

    def platform(self, q, v, a=None):
        """Platform origin's position, velocity and (if ``a`` is given) classical acceleration."""
        pin, model, data = self.pin, self.model, self.data
        LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
        pin.forwardKinematics(model, data, q, v, np.zeros(self.nv) if a is None else a)
        pin.updateFramePlacement(model, data, self.platform_frame)
        p = data.oMf[self.platform_frame].translation.copy()
        pd = pin.getFrameVelocity(model, data, self.platform_frame, LWA).linear.copy()
        if a is None:
            return p, pd
        return p, pd, pin.getFrameClassicalAcceleration(model, data, self.platform_frame, LWA).linear.copy()

    def xdd(self, q, v, u):
        """Platform acceleration (3,) at ``(q, v)`` under ``u`` (compare with pkm's ``fd.xdd``)."""
        return self.platform(q, v, self.ddq(q, v, u))[2]

    def closure(self, q):
        """Largest loop-closure residual at ``q``: (position in m over all constraints, rotation in
        rad over the welds)."""
        pin, model, data = self.pin, self.model, self.data
        pin.forwardKinematics(model, data, q)
        pos = rot = 0.0
        for cm in self.constraints:
            M1 = data.oMi[cm.joint1_id] * cm.joint1_placement
            M2 = data.oMi[cm.joint2_id] * cm.joint2_placement
            pos = max(pos, float(np.linalg.norm(M1.translation - M2.translation)))
            if cm.type == pin.ContactType.CONTACT_6D:
                rot = max(rot, float(np.linalg.norm(pin.log3(M1.rotation.T @ M2.rotation))))
        return pos, rot

    def simulate(self, u, q0, v0, T, dt, method="rk4", every=None):
        """Fixed-step integration over ``[0, T]`` under ``u(t)`` (actuator torques): ``"rk4"`` (classic
        Runge–Kutta on (q, v)) or ``"euler"`` (semi-implicit: v += dt a, then q += dt v). Joints are
        all revolute (q and v live in the same space). Returns ``t, q, v`` at every ``every`` s."""
        n = int(round(T / dt))
        stride = max(1, int(round((every or dt) / dt)))
        q, v = np.array(q0, float), np.array(v0, float)
        ts, Q, V = [0.0], [q.copy()], [v.copy()]
        for i in range(n):
            t = i * dt
            if method == "euler":
                v = v + dt * self.ddq(q, v, u(t))
                q = q + dt * v
            elif method == "rk4":
                a1 = self.ddq(q, v, u(t))
                q2, v2 = q + 0.5 * dt * v, v + 0.5 * dt * a1
                a2 = self.ddq(q2, v2, u(t + 0.5 * dt))
                q3, v3 = q + 0.5 * dt * v2, v + 0.5 * dt * a2
                a3 = self.ddq(q3, v3, u(t + 0.5 * dt))
                q4, v4 = q + dt * v3, v + dt * a3
                a4 = self.ddq(q4, v4, u(t + dt))
                q = q + dt / 6.0 * (v + 2.0 * v2 + 2.0 * v3 + v4)
                v = v + dt / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
            else:
                raise ValueError(f"method must be 'rk4' or 'euler', got {method!r}")
            if (i + 1) % stride == 0:
                ts.append((i + 1) * dt)
                Q.append(q.copy())
                V.append(v.copy())
        return np.array(ts), np.array(Q), np.array(V)


# ============================================================================ accuracy runs and timings
def reference_run(robot, T=1.0, every=0.01, free_fall=False):
    """pkm's solution to compare the peers with, over ``[0, T]``: the paper's motion at period 1 s
    under pkm's inverse-dynamics torques (a :class:`pkm.sim.inputs.Table` every ms), or the
    zero-torque free fall from rest at the reference configuration; DOP853 at rtol 1e-10. Returns a
    dict with the torque function ``u(t)``, the start state (stacked tree variables and rates), the
    output times and pkm's platform positions there, its loop closure and the prescribed motion
    (None for the free fall)."""
    from pkm.sim.inputs import Table

    t_eval = np.linspace(0.0, T, int(round(T / every)) + 1)
    if free_fall:
        n = sum(l.n for l in robot.limbs)
        sim = robot.simulate("zero", (0.0, T), method="DOP853", rtol=1e-10, atol=1e-12, t_eval=t_eval)
        return dict(u=lambda t: np.zeros(robot.n_act), theta0=np.zeros(n), thetad0=np.zeros(n), t=t_eval, x=sim.x,
                    closure=float(sim.closure.max()), prescribed=None)
    tr, res, start = paper_motion(robot, period=1.0)
    table = Table(tr.t, res.tau)
    sim = robot.simulate(table, (0.0, T), tr.x[0], tr.xd[0], method="DOP853", rtol=1e-10, atol=1e-12, t_eval=t_eval,
                         start=start)
    theta0, thetad0 = pkm_state(robot, res, 0)
    return dict(u=lambda t: table(t), theta0=theta0, thetad0=thetad0, t=t_eval, x=sim.x,
                closure=float(sim.closure.max()), prescribed=np.array([np.interp(t_eval, tr.t, c) for c in tr.x.T]).T)


def _row(peer, setting, ref, X, C, wall, steps):
    drift = np.linalg.norm(X - ref["x"], axis=1)
    row = dict(peer=peer, setting=setting, closure_max=float(C[:, 0].max()), closure_end=float(C[-1, 0]),
               rot_closure_max=float(C[:, 1].max()), drift_max=float(drift.max()), drift_end=float(drift[-1]),
               steps=steps, wall_s=wall)
    if ref["prescribed"] is not None:
        row["drift_prescribed_max"] = float(np.linalg.norm(X - ref["prescribed"], axis=1).max())
    return row


def pinocchio_accuracy(robot, ref, method="rk4", dt=1e-3, baumgarte=(0.0, 0.0), **settings):
    """One accuracy run of :class:`PinocchioDeltaFD` from ``ref``'s start under ``ref["u"]``:
    closure residual and platform drift from pkm's solution at ``ref``'s output times."""
    p = PinocchioDeltaFD(robot, baumgarte=baumgarte, **settings)
    q0, v0 = p.state(ref["theta0"], ref["thetad0"])
    T = float(ref["t"][-1])
    c = time.perf_counter()
    t, Q, V = p.simulate(ref["u"], q0, v0, T, dt, method, every=ref["t"][1] - ref["t"][0])
    wall = time.perf_counter() - c
    X = np.array([p.platform(q, v)[0] for q, v in zip(Q, V)])
    C = np.array([p.closure(q) for q in Q])
    kp, kd = baumgarte
    setting = f"{method.upper()} dt={dt:g}" + (f", Baumgarte Kp={kp:g} Kd={kd:g}" if kp or kd else ", no Baumgarte")
    return _row("Pinocchio", "constraintDynamics " + setting, ref, X, C, wall, int(round(T / dt)))


def mujoco_accuracy(robot, ref, timestep=1e-4, integrator="Euler", **options):
    """One accuracy run of :class:`peers_mujoco.MujocoDelta` (``mj_step``) like :func:`pinocchio_accuracy`."""
    from peers_mujoco import MujocoDelta

    mjd = MujocoDelta(robot, timestep=timestep, integrator=integrator, **options)
    T = float(ref["t"][-1])
    c = time.perf_counter()
    t, X, C = mjd.simulate(ref["u"], ref["theta0"], ref["thetad0"], T, every=ref["t"][1] - ref["t"][0])
    wall = time.perf_counter() - c
    soft = ", ".join(f"{k} {' '.join(f'{x:g}' for x in v)}" for k, v in options.items() if k in ("solref", "solimp"))
    soft = f"platform {options.get('platform', 'weld')}, " + (soft or "default solref/solimp")
    return _row("MuJoCo", f"mj_step {integrator} dt={timestep:g}, {soft}", ref, X, C, wall, int(round(T / timestep)))


def _best(f, repeats, inner, setup=None):
    """Best wall and best process-CPU time of one call (µs) over ``repeats`` runs of ``inner`` calls
    (``setup`` before each run)."""
    wall = cpu = np.inf
    for _ in range(repeats):
        if setup is not None:
            setup()
        c, p = time.perf_counter(), time.process_time()
        for _ in range(inner):
            f()
        wall = min(wall, (time.perf_counter() - c) / inner * 1e6)
        cpu = min(cpu, (time.process_time() - p) / inner * 1e6)
    return dict(us=wall, cpu_us=cpu)


def peer_timings(robot, repeats=5, sample=300):
    """µs per call of each peer at one state of the paper's motion (T = 1 s, t = 0.3 s), best of
    ``repeats``, from Python (the binding's call overhead included, as in pkm's figures)."""
    from peers_mujoco import MujocoDelta, have_mujoco

    _, res, _ = paper_motion(robot)
    theta, thetad = pkm_state(robot, res, sample)
    rows = []
    if have_pinocchio4():
        p = PinocchioDeltaFD(robot)
        pin = p.pin
        q, v = p.state(theta, thetad)
        tau = p.tau(res.tau[sample])
        cd = lambda: pin.constraintDynamics(p.model, p.data, q, v, tau, p.constraints, p.cdatas, p.prox)  # noqa: E731
        cd()
        rows.append(dict(peer="Pinocchio", what=f"constraintDynamics (mu={p.prox.mu:g}, max_iter={p.prox.max_iter})",
                         **_best(cd, repeats, 2000), version=pin.__version__))
        step = lambda: p.simulate(lambda t: res.tau[sample], q, v, 1e-3, 1e-3, "rk4")  # noqa: E731
        rows.append(dict(peer="Pinocchio", what="RK4 step (4 constraintDynamics + Python)", **_best(step, repeats, 200),
                         version=pin.__version__))
    if have_mujoco():
        for integrator in ("Euler", "RK4"):
            mjd = MujocoDelta(robot, timestep=1e-4, integrator=integrator)
            mj, m, d = mjd.mj, mjd.model, mjd.data
            reset = lambda: (mjd.set_state(theta, thetad, res.tau[sample]), mj.mj_forward(m, d))  # noqa: E731
            rows.append(dict(peer="MuJoCo", what=f"mj_step ({integrator}, dt=1e-4, default solver)",
                             **_best(lambda: mj.mj_step(m, d), repeats, 200, reset), version=mj.__version__))
        rows.append(dict(peer="MuJoCo", what="mj_forward", **_best(lambda: mj.mj_forward(m, d), repeats, 2000, reset),
                         version=mj.__version__))
    return rows


def peer_accuracy(robot, free_fall=True):
    """Accuracy rows of both peers (whichever is installed) on 1 s of the paper's motion (period
    1 s) under pkm's inverse-dynamics torques, and on 0.2 s of zero-torque free fall from rest at
    the reference configuration (before the stretched-arm singularity at ≈ 0.26 s)."""
    from peers_mujoco import have_mujoco

    # MuJoCo's stiffest soft constraints: impedance d at its cap (mjMAXIMP), time constant 2 dt
    stiff = dict(solref=(2e-4, 1.0), solimp=(0.9999, 0.9999, 0.001, 0.5, 2.0))
    runs = [("motion", reference_run(robot))] + ([("free fall 0.2 s", reference_run(robot, T=0.2, free_fall=True))]
                                                  if free_fall else [])
    rows = []
    for label, ref in runs:
        if have_pinocchio4():
            for kw in (dict(method="rk4", dt=1e-3), dict(method="rk4", dt=1e-4), dict(method="euler", dt=1e-4),
                       dict(method="euler", dt=1e-3, baumgarte=(1e4, 200.0))):
                rows.append(dict(pinocchio_accuracy(robot, ref, **kw), run=label))
        if have_mujoco():
            for kw in (dict(timestep=1e-3), dict(timestep=1e-4), dict(timestep=1e-4, platform="hinge"),
                       dict(timestep=1e-4, **stiff), dict(timestep=1e-4, integrator="RK4", **stiff)):
                rows.append(dict(mujoco_accuracy(robot, ref, **kw), run=label))
    return rows


def peer_rows(robot_path="robots/delta_3rr2rrr.toml", repeats=5, accuracy=True):
    """Timing rows (``kind="time"``: peer, what, us) and accuracy rows (``kind="accuracy"``: peer,
    setting, run, closure_max, closure_end, rot_closure_max, drift_max, drift_end [m, rad]) of the
    installed peers on the Delta, for ``bench_forward_dynamics.py`` to print beside pkm's."""
    import pkm

    robot = pkm.load(robot_path)
    rows = [dict(r, kind="time") for r in peer_timings(robot, repeats)]
    if accuracy:
        rows += [dict(r, kind="accuracy") for r in peer_accuracy(robot)]
    return rows


def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(description="Forward-dynamics peers of the closed-loop Delta: timings and accuracy.")
    ap.add_argument("--robot", default="robots/delta_3rr2rrr.toml")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-accuracy", action="store_true")
    args = ap.parse_args(argv)
    rows = peer_rows(args.robot, args.repeats, not args.no_accuracy)
    for r in rows:
        if r["kind"] == "time":
            print(f"{r['peer']:<10}{r['what']:<52}{r['us']:>9.1f} µs  (CPU {r['cpu_us']:.1f} µs)")
    print(f"\n{'run':<16}{'peer / setting':<96}{'closure max':>12}{'at end':>10}{'rot max':>10}{'drift max':>10}"
          f"{'at end':>10}")
    for r in rows:
        if r["kind"] == "accuracy":
            print(f"{r['run']:<16}{(r['peer'] + ': ' + r['setting'])[:94]:<96}{r['closure_max']:>12.1e}"
                  + "".join(f"{r[k]:>10.1e}" for k in ("closure_end", "rot_closure_max", "drift_max", "drift_end")))


if __name__ == "__main__":
    main()
