"""Forward dynamics of the robot files in absolute coordinates (issue 16, deliverable 5): the
actuator efforts' generalized forces against the drives' reactions, forward against inverse
dynamics at an instant, and the cross-check of the two formulations' simulations: pkm's
minimal-coordinate task form and the absolute-coordinate index-1 DAE under the same torques agree
to ≤ 1e-6 m over 0.2 s on the three robots."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pkm
from pkm.absolute.forward import actuator_forces, consistent_state, simulate
from pkm.absolute.loader import load_spec
from pkm.absolute.system import kkt_solve
from pkm.errors import SingularityError
from pkm.sim.inputs import Table
from pkm.trajectory import from_spec

from absolute_cases import pkm_poses

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
NAMES = ("delta_3rr2rrr", "irsbot2", "delta_3r2us")


@pytest.fixture(scope="module", params=NAMES)
def case(request):
    """(robot, absolute model, trajectory, pkm's inverse dynamics along the paper's motion at T = 1 s)."""
    robot = pkm.load(ROBOTS / f"{request.param}.toml")
    model = load_spec(robot.spec)
    tr = from_spec(dict(robot.spec.trajectory, period=1.0, duration=1.0, dt=1e-3), robot.task.coordinate_names())
    res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t)
    return robot, model, tr, res


def absolute_state(robot, model, res, s):
    """The consistent absolute-coordinate state at sample ``s`` of pkm's result (poses from pkm's
    joint angles as the start of the assembly, the drives at pkm's actuator angles and rates)."""
    poses = pkm_poses(robot, res.joints, s)
    return consistent_state(model, res.q_act[s], res.qd_act[s], model.coordinates(poses))


def test_actuator_forces_do_the_drives_work(case):
    """For every admissible velocity the actuator forces of pkm's torques have the power of the
    drives' reactions (−Φ_qᵀλ of the drive rows, from the loader's inverse dynamics): two
    derivations of how a joint torque enters the director-form equations."""
    robot, model, _, res = case
    s = 400
    q0 = absolute_state(robot, model, res, s)[0]
    tau, q, _, _, lam, driven = model.solve_instant(res.q_act[s], res.qd_act[s], res.qdd_act[s], q0)
    G = driven.jacobian(q)
    n_drive = len(model.actuators)
    f_drive = -G[-n_drive:].T @ lam[-n_drive:]
    basis = model.system.null_space(q)  # admissible velocities of the undriven system
    p_act = basis.T @ actuator_forces(model, q, tau)
    p_drive = basis.T @ f_drive
    assert np.max(np.abs(p_act - p_drive)) <= 1e-10 * np.max(np.abs(p_drive))
    assert np.max(np.abs(p_drive)) > 1e-3  # the torques do work: not a trivial comparison


def test_forward_inverts_inverse_dynamics(case):
    """At an instant of the motion, the undriven system's accelerations under gravity and pkm's
    torques are the driven system's (the prescribed motion)."""
    robot, model, _, res = case
    for s in (100, 700):
        q0 = absolute_state(robot, model, res, s)[0]
        tau, q, qd, qdd_driven, _, _ = model.solve_instant(res.q_act[s], res.qd_act[s], res.qdd_act[s], q0)
        system = model.system
        f = system.gravity_force(model.gravity) + actuator_forces(model, q, tau)
        qdd, _ = kkt_solve(system.sparse_mass_matrix(), system.jacobian(q), f, system.gamma(q, qd))
        assert np.max(np.abs(qdd - qdd_driven)) <= 1e-8 * np.max(np.abs(qdd_driven))


def test_two_formulations_simulate_alike(case):
    """Both formulations integrate the same torque table (pkm's torques of the paper's motion plus a
    disturbance, so the robot leaves the planned path) for 0.2 s: the platform positions agree to
    ≤ 1e-6 m, the absolute coordinates stay on the constraints."""
    robot, model, tr, res = case
    T, steps = 0.2, 20
    peak = np.max(np.abs(res.tau), axis=0)
    U = res.tau + 0.3 * peak * np.sin(2 * np.pi * tr.t[:, None] / 0.15 + np.arange(robot.n_act))
    u = Table(tr.t, U)
    t_out = np.linspace(0.0, T, steps + 1)
    sim = robot.simulate(u, (0.0, T), tr.x[0], tr.xd[0], rtol=1e-12, atol=1e-14, t_eval=t_out)
    q0, v0 = absolute_state(robot, model, res, 0)
    ab = simulate(model, u, q0, v0, T / steps, steps, rtol=1e-10, atol=1e-12)
    assert np.allclose(ab.t, t_out, atol=1e-15)
    plat = model.bodies[robot.spec.platform]
    sl = model.system.body_slice(plat)
    p_abs = np.array([plat.pose(q[sl])[:3, 3] for q in ab.q])
    p_pkm = np.array([robot.platform_pose(x)[:3, 3] for x in sim.x])
    planned = np.array([robot.platform_pose(x)[:3, 3] for x in tr.x[np.round(t_out / 1e-3).astype(int)]])
    assert np.max(np.abs(p_pkm - planned)) > 1e-3  # the disturbance moves it off the path
    assert np.max(np.abs(p_abs - p_pkm)) <= 1e-6
    assert np.max(ab.constraint_residual) <= 1e-10


def test_singular_equations_are_an_error():
    """The full system of an overconstrained robot (parallelogram rows in) has a singular KKT
    matrix: a SingularityError, not a silent answer."""
    model = load_spec(pkm.load(ROBOTS / "delta_3rr2rrr.toml").spec)
    assert model.report.removed  # rows were removed because they are dependent
    full, q = model.full, model.reference
    with pytest.raises(SingularityError):
        kkt_solve(full.sparse_mass_matrix(), full.jacobian(q), full.gravity_force(model.gravity),
                  np.zeros(full.m))


def test_effort_count_is_checked():
    model = load_spec(pkm.load(ROBOTS / "delta_3r2us.toml").spec)
    with pytest.raises(ValueError, match="3 actuators"):
        actuator_forces(model, model.reference, [1.0, 2.0])


def test_least_squares_accelerations_where_rows_depend():
    """Where the constraint rows depend on each other (the Delta's full system: parallelogram rows
    in; a singular configuration of a mechanism is the same for the solve), the KKT matrix is
    singular but the accelerations are not: the minimum-norm least-squares solution that
    projected_ode falls back to gives the q̈ of the independent rows (only λ is not unique)."""
    from pkm.absolute.potentials import Gravity
    from pkm.absolute.standard import _accelerations, _least_squares_accelerations, independent_rows

    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    model = load_spec(robot.spec)
    sol = robot.inverse_kinematics([0.1, -0.05, -1.0], [0.3, 0.2, -0.1])
    poses = pkm_poses(robot, {l.name: sol.joints[l.name] for l in robot.limbs}, 0)
    q, v = consistent_state(model, sol.q_act[0], sol.qd_act[0], model.coordinates(poses))
    full = model.full
    f = -Gravity(full, model.gravity).gradient(q) + actuator_forces(model, q, [3.0, -1.0, 2.0])
    rows = independent_rows(full, q)[0]
    assert not rows.all()  # dependent rows present: the full KKT matrix is singular
    qdd = _accelerations(full, q, v, f, 0.0, 1e-9, rows)[0]
    qdd_ls = _least_squares_accelerations(full, q, v, f, 0.0)
    assert np.abs(qdd).max() > 1.0 and np.abs(qdd_ls - qdd).max() <= 1e-8 * np.abs(qdd).max()
