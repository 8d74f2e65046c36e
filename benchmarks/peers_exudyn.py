"""Exudyn (optional peer) on seed 002's six-body linkage — the same bodies, hinges, gravity and
initial state as :func:`pkm.absolute.examples.six_body_linkage` — and on any robot file loaded in
absolute coordinates (:func:`absolute_system`), integrated by Exudyn's generalized-α (index 3,
Euler-parameter nodes; Exudyn's default scheme), for bench_absolute.py.

The linkage is overconstrained: one of the 30 hinge rows is dependent. Exudyn's default sparse
solver stops at the singular Jacobian (Exudyn issue #39). Its ``ignoreSingularJacobian`` option
(dense solver) runs, but here lost 72 % of the energy in the first step of 1 ms, so the closing
hinge is a ``GenericJoint`` without the row pkm reports dependent at the start (``R6``'s ``p.y``,
a translation along world y) — the remedy Exudyn's ``fourBarMechanism3D.py`` example recommends.
That row is chosen once; pkm chooses again at every step (the set dependent at the cube is not
dependent everywhere). The loop closure of Exudyn's solution is measured with pkm's full set of
30 hinge rows from Exudyn's body positions and rotation matrices.
"""
from __future__ import annotations

import time

import numpy as np

VERBOSE = 0


def available() -> str | None:
    """Exudyn's version, or None when it is not installed."""
    try:
        import exudyn
    except ImportError:
        return None
    return exudyn.__version__


def six_body(example, dt: float, T: float, rho_inf: float = 0.9, released=("R6", "p.y")):
    """Run Exudyn on ``example`` (the six-body linkage) for ``T`` s at ``dt``.

    Returns a dict: ``ok``, ``ms_per_step`` (wall time of ``SolveDynamic`` / steps), ``energy`` (at
    each step), ``energy_drift`` (max |E − E₀| / E₀), ``closure`` (max |Φ| of all 30 hinge rows),
    ``q`` (pkm coordinates at each step, rebuilt from Exudyn's sensors), ``t``."""
    import exudyn as exu
    from exudyn.itemInterface import ObjectGround
    from exudyn.utilities import RigidBodyInertia

    e = example
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    g = np.array([0.0, 0.0, -9.81])
    bodies, sensors = [], []
    for b in e.system.bodies:                        # body frames = world frame at t = 0 (examples.py)
        s = e.system.body_slice(b)
        q, v = e.q0[s], e.v0[s]
        omega = 0.5 * sum(np.cross(q[3 + 3 * k:6 + 3 * k], v[3 + 3 * k:6 + 3 * k]) for k in range(3))
        inertia = RigidBodyInertia(mass=b.mass, inertiaTensor=b.inertia, com=b.com, inertiaTensorAtCOM=True)
        o = mbs.CreateRigidBody(inertia=inertia, referencePosition=[0.0, 0.0, 0.0], referenceRotationMatrix=np.eye(3),
                                initialVelocity=list(v[:3] - np.cross(omega, b.com)),     # of the frame origin
                                initialAngularVelocity=list(omega), gravity=list(g))
        bodies.append(o)
        sensors.append(_sensors(mbs, o, b))
    index = {id(b): o for b, o in zip(e.system.bodies, bodies)}
    for j in e.system.joints:
        mi, mj = j.marker_i, j.marker_j
        point = mi.origin if mi.body is None else mi.body.com + mi.origin
        items = [ground if m.body is None else index[id(m.body)] for m in (mi, mj)]
        if j.name == released[0]:
            axes = [1, 1, 1, 1, 1, 1]
            axes["xyz".index(released[1][-1])] = 0
            axes[3 + int(np.argmax(np.abs(mi.axes[:, 2])))] = 0          # the hinge axis (a world axis here)
            mbs.CreateGenericJoint(itemNumbers=items, position=list(point), constrainedAxes=axes, useGlobalFrame=True)
        else:
            mbs.CreateRevoluteJoint(itemNumbers=items, position=list(point), axis=list(mi.axes[:, 2]),
                                    useGlobalFrame=True)
    return _solve(mbs, e.system, sensors, g, dt, T, rho_inf)


#: Exudyn GenericJoint's free axes (translations x, y, z, rotations x, y, z of the joint frame =
#: marker i's axes) of each pkm joint kind.
FREE_AXES = {"revolute": (5,), "spherical": (3, 4, 5), "universal": (3, 4), "prismatic": (2,),
             "cylindrical": (2, 5)}


def _rows_in_joint_frame(system, q, joint):
    """The 6 rows (n wide) of the relative velocity of marker j w.r.t. marker i in marker i's axes at
    ``q`` (translations of the points, then rotations), the rows Exudyn's GenericJoint constrains:
    ``ṗ = cᵀ Q̇`` and ``ω = ½ Σ_I d_I × ḋ_I`` on a director-form body."""
    from pkm.absolute.body import skew

    mi, mj = joint.marker_i, joint.marker_j
    qi = None if mi.body is None else q[system.body_slice(mi.body)]
    R = mi.world_pose(qi)[:3, :3]
    J = np.zeros((6, system.n))
    for marker, sign in ((mj, 1.0), (mi, -1.0)):
        if marker.body is None:
            continue
        sl = system.body_slice(marker.body)
        Q = q[sl].reshape(4, 3)
        c = marker.point_coefficients()
        for k in range(4):
            J[:3, sl.start + 3 * k:sl.start + 3 * k + 3] += sign * c[k] * np.eye(3)
            if k:
                J[3:, sl.start + 3 * k:sl.start + 3 * k + 3] += sign * 0.5 * skew(Q[k])
    return np.vstack([R.T @ J[:3], R.T @ J[3:]]), R


def joint_frames(system, q0):
    """For each joint: ``(marker i's world frame R, constrained axes)`` with the dependent axes of
    the whole mechanism released, chosen by pkm's pivoted QR on these rows reduced by the bodies'
    internal null space (the remedy Exudyn's documentation gives for redundant constraints, issue
    #39), and the report of which."""
    from pkm.absolute.redundancy import dependent_rows

    blocks, frames, labels, index = [], [], [], []
    for k, j in enumerate(system.joints):
        if j.kind not in FREE_AXES:
            raise NotImplementedError(f"joint {j.name!r} of kind {j.kind!r} has no Exudyn counterpart here")
        rows, R = _rows_in_joint_frame(system, q0, j)
        frames.append(R)
        for a in range(6):
            if a not in FREE_AXES[j.kind]:
                blocks.append(rows[a])
                labels.append((j.name, "xyz"[a % 3] if a < 3 else "r" + "xyz"[a - 3]))
                index.append((k, a))
    G = np.array(blocks) @ system.internal_null_space(q0)
    report = dependent_rows(G, labels)
    axes = [[0 if a in FREE_AXES[j.kind] else 1 for a in range(6)] for j in system.joints]
    for r in report.removed:
        k, a = index[r]
        axes[k][a] = 0
    return frames, axes, report


def absolute_system(system, q0, v0, g, dt: float, T: float, rho_inf: float = 0.9):
    """Run Exudyn's generalized-α on a pkm absolute-coordinate ``system`` (a robot file loaded by
    :func:`pkm.absolute.loader.load_spec`) from ``(q0, v0)`` under gravity ``g``: every body a rigid
    body at its pose, every joint a GenericJoint in marker i's frame with the dependent axes
    released (:func:`joint_frames`). Returns the dict of :func:`six_body`."""
    import exudyn as exu
    from exudyn.itemInterface import ObjectGround
    from exudyn.utilities import RigidBodyInertia

    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    index, sensors = {}, []
    for b in system.bodies:
        s = system.body_slice(b)
        C = b.pose(q0[s])
        omega = 0.5 * sum(np.cross(q0[s][3 + 3 * k:6 + 3 * k], v0[s][3 + 3 * k:6 + 3 * k]) for k in range(3))
        inertia = RigidBodyInertia(mass=b.mass, inertiaTensor=b.inertia, com=b.com, inertiaTensorAtCOM=True)
        o = mbs.CreateRigidBody(inertia=inertia, referencePosition=list(C[:3, 3]), referenceRotationMatrix=C[:3, :3],
                                initialVelocity=list(v0[s][:3] - np.cross(omega, C[:3, :3] @ b.com)),
                                initialAngularVelocity=list(omega), gravity=list(g))
        index[id(b)] = o
        sensors.append(_sensors(mbs, o, b))
    frames, axes, report = joint_frames(system, q0)
    for j, R, ax in zip(system.joints, frames, axes):
        mi = j.marker_i
        point = mi.world_pose(None if mi.body is None else q0[system.body_slice(mi.body)])[:3, 3]
        items = [ground if m.body is None else index[id(m.body)] for m in (mi, j.marker_j)]
        mbs.CreateGenericJoint(itemNumbers=items, position=list(point), rotationMatrixAxes=R, constrainedAxes=ax,
                               useGlobalFrame=True)
    out = _solve(mbs, system, sensors, g, dt, T, rho_inf)
    out["released"] = report.labels
    return out


def _sensors(mbs, o, b):
    import exudyn as exu
    from exudyn.itemInterface import SensorBody

    outputs = (exu.OutputVariableType.Position, exu.OutputVariableType.Velocity,
               exu.OutputVariableType.AngularVelocityLocal, exu.OutputVariableType.RotationMatrix)
    return [mbs.AddSensor(SensorBody(bodyNumber=o, localPosition=list(b.com), outputVariableType=ov,
                                     storeInternal=True)) for ov in outputs]


def _solve(mbs, system, sensors, g, dt, T, rho_inf):
    """Assemble, run ``SolveDynamic`` and read the sensors back into pkm coordinates and energies."""
    import exudyn as exu

    g = np.asarray(g, dtype=float)
    mbs.Assemble()
    counts = mbs.ComputeSystemDegreeOfFreedom()
    steps = int(round(T / dt))
    ss = exu.SimulationSettings()
    ss.timeIntegration.numberOfSteps = steps
    ss.timeIntegration.endTime = T
    ss.timeIntegration.verboseMode = VERBOSE
    ss.timeIntegration.generalizedAlpha.spectralRadius = rho_inf
    ss.solution.file.write = False
    ss.solution.sensors.writePeriod = dt
    t0 = time.perf_counter()
    try:
        ok = bool(mbs.SolveDynamic(ss, showHints=VERBOSE > 0))
    except exu.SolverError:
        ok = False
    wall = time.perf_counter() - t0
    data = [[mbs.GetSensorStoredData(s) for s in row] for row in sensors]
    n = min(d.shape[0] for row in data for d in row)
    E = np.zeros(n)
    qs = np.zeros((n, system.n))
    for b, (pos, vel, wl, rot) in zip(system.bodies, data):
        E += 0.5 * b.mass * np.sum(vel[:n, 1:] ** 2, axis=1)
        E += 0.5 * np.einsum("ti,ij,tj->t", wl[:n, 1:], b.inertia, wl[:n, 1:])
        E += -b.mass * pos[:n, 1:] @ g
        s = system.body_slice(b)
        R = rot[:n, 1:].reshape(n, 3, 3)                     # row-major rotation matrices
        qs[:, s.start:s.start + 3] = pos[:n, 1:]
        qs[:, s.start + 3:s.stop] = np.swapaxes(R, 1, 2).reshape(n, 9)   # directors = columns of R
    closure = max(float(np.max(np.abs(system.phi(q)))) for q in qs)
    return {"ok": ok and n == steps + 1, "ms_per_step": 1e3 * wall / steps, "energy": E, "t": data[0][0][:n, 0],
            "energy_drift": float(np.max(np.abs(E - E[0])) / abs(E[0])), "closure": closure, "q": qs,
            "steps": steps, "t_end": T, "unknowns": int(counts["nODE2"] + counts["nAE"]),
            "dof": int(counts["degreeOfFreedom"])}
