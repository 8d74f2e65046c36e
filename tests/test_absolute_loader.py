"""Robot files in absolute coordinates (issue 16, deliverable 5): the loaded systems' DOF and
redundant rows, closure at pkm's IK configuration, and the cross-check of the two formulations'
inverse dynamics along the paper's motion at T = 1 s; joint reactions balance every body."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pkm
from pkm.absolute.body import angular_velocity, directors
from pkm.absolute.loader import load_spec
from pkm.errors import RobotFileError
from pkm.trajectory import from_spec

from absolute_cases import pkm_poses as limb_poses

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
FILES = {"delta_3rr2rrr": 3, "irsbot2": 2, "delta_3r2us": 3}
SAMPLES = 20


@pytest.fixture(scope="module", params=sorted(FILES))
def case(request):
    """(file stem, robot, absolute model, pkm's inverse-dynamics result, sample indices); the task
    velocities are kept on the result as ``res.xd``."""
    robot = pkm.load(ROBOTS / f"{request.param}.toml")
    model = load_spec(robot.spec)
    tr = from_spec(dict(robot.spec.trajectory, period=1.0, duration=1.0, dt=1e-3), robot.task.coordinate_names())
    res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd)
    res.xd = tr.xd
    idx = np.linspace(0, len(tr.x) - 1, SAMPLES).round().astype(int)
    return request.param, robot, model, res, idx


def pkm_poses(robot, res, s) -> dict:
    """Every real body's frame pose at sample ``s`` from pkm's joint coordinates (limb trees)."""
    return limb_poses(robot, res.joints, s)


def test_dof_and_redundant_rows(case):
    name, robot, model, _, _ = case
    assert model.dof == FILES[name]
    rep = model.report
    # the parallelograms are overconstrained, the 3-R(2-US) Delta is not
    assert (len(rep.removed) > 0) == (name != "delta_3r2us")
    assert rep.rank + len(rep.removed) == rep.rows and len(rep.labels) == len(rep.removed)
    assert rep.gap > 1e6  # a clear decision
    # every body of the file is a body here (no massless ones), every joint a constraint (cut ones too)
    bodies, joints = robot.spec.expanded()
    assert set(model.bodies) == {b.name for b in bodies if b.name != robot.spec.ground}
    assert set(model.joints) == {j.name for j in joints}
    # DOF of the full system (redundant rows in) is the same: rank, not count
    q = model.reference
    G = model.full.jacobian(q)
    assert model.full.n - np.linalg.matrix_rank(G, tol=1e-9 * np.linalg.norm(G, 2)) == FILES[name]
    assert np.max(np.abs(model.full.phi(q))) <= 1e-14


def test_closure_at_pkm_ik(case):
    _, robot, model, res, idx = case
    for s in idx[[1, SAMPLES // 2, -2]]:
        q = model.coordinates(pkm_poses(robot, res, s))
        assert np.max(np.abs(model.full.phi(q))) <= 1e-12


def test_inverse_dynamics_cross_check(case):
    """Absolute-coordinate torques (drive multipliers) equal pkm's minimal-coordinate ones."""
    _, robot, model, res, idx = case
    peak = np.max(np.abs(res.tau))
    err = 0.0
    for s in idx:
        q0 = model.coordinates(pkm_poses(robot, res, s))
        tau, q, qd, *_ = model.solve_instant(res.q_act[s], res.qd_act[s], res.qdd_act[s], q0)
        err = max(err, float(np.max(np.abs(tau - res.tau[s]))))
        # the driven system's velocity is pkm's too (platform twist from the absolute velocities)
        plat = model.bodies[robot.spec.platform]
        sl = model.system.body_slice(plat)
        Vp, _ = robot.platform_twist(res.x[s], res.xd[s])
        assert np.allclose(qd[sl], plat.velocity(q[sl], Vp, "body"), rtol=0, atol=1e-9)
    assert err <= 1e-8 * peak, (err, peak)


def test_inverse_dynamics_without_pkm_poses(case):
    """Only the drive angles from pkm: each sample assembled from the previous one's solution
    (the first from the reference configuration) lands on the same configuration and torques."""
    _, robot, model, res, _ = case
    s = np.arange(0, 200, 10)  # a continuous stretch from the start of the motion
    tau = model.inverse_dynamics(res.q_act[s], res.qd_act[s], res.qdd_act[s])
    assert np.max(np.abs(tau - res.tau[s])) <= 1e-8 * np.max(np.abs(res.tau))


def test_reactions_balance_every_body():
    """Delta: the joint and drive reactions with gravity satisfy Newton–Euler for every body."""
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    model = load_spec(robot.spec)
    tr = from_spec(dict(robot.spec.trajectory, period=1.0, duration=1.0, dt=1e-3), robot.task.coordinate_names())
    s = 137
    res = robot.inverse_dynamics(tr.x[s], tr.xd[s], tr.xdd[s])
    q0 = model.coordinates(pkm_poses(robot, res, 0))
    tau, q, qd, qdd, lam, sysd = model.solve_instant(res.q_act[0], res.qd_act[0], res.qdd_act[0], q0)
    W = sysd.reactions(q, lam, about="com")
    scale = max(np.max(np.abs(tau)), max(b.mass for b in model.bodies.values()) * 9.81)
    worst = 0.0
    for name, body in model.bodies.items():
        sl = sysd.body_slice(body)
        total = np.zeros(6)
        for j in sysd.joints:
            for side, b in enumerate(j.bodies):
                if b is body:
                    total += W[j.name][side]
        D = directors(q[sl])
        J = D @ body.inertia @ D.T
        w, wd = angular_velocity(q[sl], qd[sl]), angular_velocity(q[sl], qdd[sl])
        euler = J @ wd + np.cross(w, J @ w) - total[:3]
        newton = body.mass * qdd[sl][:3] - body.mass * model.gravity - total[3:]
        worst = max(worst, np.max(np.abs(euler)), np.max(np.abs(newton)))
    assert worst <= 1e-9 * scale, worst
    # and the drives' reaction torques about the axes are the actuator torques
    assert np.allclose(tau, res.tau[0], rtol=0, atol=1e-9 * np.max(np.abs(tau)))


def test_unsupported_joint_is_a_clear_error():
    from dataclasses import replace

    spec = pkm.load(ROBOTS / "delta_3r2us.toml").spec
    joints = list(spec.limb.joints)
    k = next(i for i, j in enumerate(joints) if j.type == "U")
    skewed = joints[k].axes.copy()
    skewed[1] = (skewed[1] + 0.1 * skewed[0]) / np.linalg.norm(skewed[1] + 0.1 * skewed[0])
    joints[k] = replace(joints[k], axes=skewed)
    bad = replace(spec, limb=replace(spec.limb, joints=tuple(joints)))
    with pytest.raises(RobotFileError, match="not perpendicular"):
        load_spec(bad)
