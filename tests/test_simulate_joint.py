"""Forward dynamics in joint coordinates plus task velocity (paper §8.1.2, eq. 131–134): the
right-hand side against the task form on the constraint manifold, the round trip through the
inverse dynamics, energy and work, the singularity, the closure projection and the order of RK4."""
from __future__ import annotations

import numpy as np
import pytest

import pkm
from conftest import ROBOTS, run_pkm
from pkm.sim.inputs import Table
from pkm.sim.joint import JointModel
from pkm.trajectory import from_spec

FILES = {"delta": "delta_3rr2rrr.toml", "delta_us": "delta_3r2us.toml", "irsbot2": "irsbot2.toml"}
ROBOT = {k: pkm.load(ROBOTS / f) for k, f in FILES.items()}
DELTA = ROBOT["delta"]


def _paper_motion(robot, period=1.0, duration=None, dt=1e-3):
    """The robot file's sine (the paper's motion for the Deltas) with period T, and its torques."""
    tr = from_spec(dict(robot.spec.trajectory, period=period, duration=duration or period, dt=dt),
                   robot.task.coordinate_names())
    res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t)
    return tr, res, [res.joints[l.name][0] for l in robot.limbs]


@pytest.mark.parametrize("name", sorted(FILES))
def test_rhs_is_the_task_form_on_the_manifold_and_eq_134_off_it(name):
    """On the manifold (θ from the IK) eq. 133–134 give the task form's V̇_t, θ̇ and J_IK (the
    batched kernel of pkm.sim.forward), with an end-effector wrench too. Off it (θ perturbed by
    1e-6) the RHS is evaluated at θ itself, not at a projection: θ̇ = H(θ)F(θ)V_t satisfies the
    loop constraints' G(θ)θ̇ = 0 of that very θ (the exact flow keeps the loop residual)."""
    robot = ROBOT[name]
    tr = from_spec(dict(robot.spec.trajectory, period=1.0, duration=1.0, dt=0.01), robot.task.coordinate_names())
    wrench = np.array([0.1, -0.2, 0.3, 5.0, -3.0, 2.0])
    model = JointModel(robot, wrench=wrench)
    rng = np.random.default_rng(1)
    for s in (0, 13, 57):
        u = rng.uniform(-1, 1, robot.n_act)
        fd = robot.forward_dynamics(tr.x[s], tr.xd[s], u, wrench)
        theta = np.concatenate([fd.theta[0, k, :l.n] for k, l in enumerate(robot.limbs)])
        thd, M_t, b, J_IK, x = model.evaluate(theta, tr.xd[s])
        xdd = np.linalg.solve(M_t, J_IK.T @ u - b)
        assert np.abs(xdd - fd.xdd[0]).max() <= 1e-10 * max(1.0, np.abs(fd.xdd).max())
        assert np.abs(thd - np.concatenate([fd.thetad[0, k, :l.n] for k, l in enumerate(robot.limbs)])).max() <= 1e-12
        assert np.abs(J_IK - fd.J_IK[0]).max() <= 1e-12 and np.abs(x - tr.x[s]).max() <= 1e-12
    off = theta + 1e-6 * rng.standard_normal(theta.size)
    thd_off = model.evaluate(off, tr.xd[57])[0]
    assert np.abs(thd_off - thd).max() > 1e-8  # a different point: not the projection's
    for limb, th, dth in zip(robot.limbs, model.split(off), model.split(thd_off)):
        if limb.loops:
            assert np.abs(limb.constraint_residual(th)).max() > 1e-8  # truly off the manifold
            assert np.abs(limb.constraint_jacobian(th) @ dth).max() <= 1e-13 * max(1.0, np.abs(dth).max())


@pytest.mark.parametrize("name", sorted(FILES))
def test_round_trip_in_joint_coordinates(name):
    """Torques of inverse_dynamics along the paper's motion at T = 1 s, fed to the joint form from
    the same initial state: over the whole period (as the task form's round trip) the motion comes
    back to 1e-6 m (measured ≤ 1.2e-10 m) with DOP853 at rtol 1e-10; the closure residual of the
    integrated θ stays ≤ 1e-10 (measured ≤ 3e-11), each projection recorded."""
    robot = ROBOT[name]
    tr, res, start = _paper_motion(robot)
    # max_step=inf: steps longer than the outputs' 10 ms, so that each leaves drift to project
    sim = robot.simulate(Table(tr.t, res.tau), (0.0, 1.0), tr.x[0], tr.xd[0], form="joint", method="DOP853",
                         rtol=1e-10, atol=1e-12, t_eval=tr.t[::10], start=start, max_step=np.inf)
    assert sim.form == "joint"
    assert np.abs(sim.x - tr.x[::10]).max() <= 1e-6
    assert np.abs(sim.q_act - res.q_act[::10]).max() <= 1e-5
    assert np.abs(sim.xd - tr.xd[::10]).max() <= 1e-5
    for limb in robot.limbs:
        assert np.abs(sim.joints[limb.name] - res.joints[limb.name][::10]).max() <= 1e-5
    assert sim.closure.max() <= 1e-10
    assert np.abs(sim.energy_error).max() <= 1e-6 * np.abs(sim.work).max()
    info = sim.info
    assert len(info["projection_t"]) >= 10 and np.all(np.diff(info["projection_t"]) > 0)
    assert info["projection_t"][-1] == 1.0
    assert 0.0 < info["projection_max"] <= 1e-9  # it did correct, by a step's local error


def test_free_fall_conserves_energy_in_joint_coordinates():
    """Zero torque: |ΔE| ≤ 1e-8 |E| over 0.2 s (DOP853, rtol 1e-12; measured 3.5e-12), the same
    motion as the task form."""
    sim = DELTA.simulate("zero", (0.0, 0.2), form="joint", method="DOP853", rtol=1e-12, atol=1e-14)
    assert np.abs(sim.work).max() == 0.0
    assert np.abs(sim.energy - sim.energy[0]).max() <= 1e-8 * np.abs(sim.energy[0])
    assert sim.x[-1, 2] < DELTA.x_ref[2] - 0.05 and np.abs(sim.kinetic[-1]) > 0.1 * np.abs(sim.energy[0])
    task = DELTA.simulate("zero", (0.0, 0.2), method="DOP853", rtol=1e-12, atol=1e-14)
    assert np.abs(sim.x - task.x).max() <= 1e-9


@pytest.mark.parametrize("name", sorted(FILES))
def test_actuator_work_equals_the_change_of_energy_in_joint_coordinates(name):
    """With torques (the paper's motion's at twice its pace, halved): E(t) − E(0) = ∫ u·θ̇_act dt
    to 1e-8 of the energy scale over 0.2 s (DOP853, rtol 1e-12)."""
    robot = ROBOT[name]
    tr, res, start = _paper_motion(robot, period=2.0, dt=2e-3)
    sim = robot.simulate(Table(tr.t, 0.5 * res.tau), (0.0, 0.2), tr.x[0], tr.xd[0], form="joint", method="DOP853",
                         rtol=1e-12, atol=1e-14, start=start)
    scale = max(np.abs(sim.energy).max(), np.abs(sim.work).max())
    assert np.abs(sim.work).max() > 1e-3 * scale
    assert np.abs(sim.energy_error).max() <= 1e-8 * scale


def test_the_joint_form_stops_before_the_stretched_arm_with_the_time():
    """Released at rest from home with zero torque, the Delta falls until its arms are stretched
    (its lowest point, t ≈ 0.26076 s); J_IK degenerates there and the joint form stops with
    SingularityError naming the time — within 1 ms of the task form. With DOP853 at rtol 1e-8 a
    step jumps over it (no stage comes close enough for a condition number to tell): the rows of
    J_IK flip sign within that step, and the time is interpolated there (0.260754 s). At rtol 1e-10
    a stage comes within the L_p check (0.260757 s), just before the lowest point."""
    times = {}
    for form, rtol in (("joint", 1e-8), ("task", 1e-8), ("joint", 1e-10)):
        with pytest.raises(pkm.SingularityError, match=r"at t [=≈] 0\.2\d*") as info:
            DELTA.simulate("zero", (0.0, 0.5), form=form, method="DOP853", rtol=rtol, atol=1e-2 * rtol)
        times[form, rtol] = float(str(info.value).split("at t ")[1][2:].split(" s")[0])
    assert "changed sign" in str(info.value) or "ill conditioned" in str(info.value)
    assert 0.25 < times["joint", 1e-8] < 0.27 and abs(times["joint", 1e-8] - times["task", 1e-8]) < 1e-3
    assert abs(times["joint", 1e-10] - times["joint", 1e-8]) < 1e-5
    t_before = times["joint", 1e-10] - 1e-5
    sim = DELTA.simulate("zero", (0.0, t_before), form="joint", method="DOP853", rtol=1e-10, atol=1e-12,
                         t_eval=[0.0, 0.5 * t_before, t_before])
    assert sim.xd[-1, 2] < 0.0  # not yet at the lowest point: before the singularity


def test_the_projection_keeps_the_loops_closed_and_without_it_they_drift():
    """RK4 (dt = 20 ms) over five periods of the Delta's paper motion: with the projection the
    closure residual of the integrated θ is the same in every period (one step's local error,
    1.7e-7); without it the drift adds up, period after period (5.2e-7 … 7.9e-7)."""
    tr, res, start = _paper_motion(DELTA, duration=5.0, dt=5e-3)
    peaks = {}
    for project in (True, False):
        sim = DELTA.simulate(Table(tr.t, res.tau), (0.0, 5.0), tr.x[0], tr.xd[0], form="joint", method="RK4",
                             dt=0.02, start=start, project=project)
        c = sim.closure.max(axis=1)
        peaks[project] = np.array([c[(sim.t > k) & (sim.t <= k + 1)].max() for k in range(5)])
        assert len(sim.info["projection"]) == (250 if project else 0)
    with_, without = peaks[True], peaks[False]
    assert np.abs(with_ - with_[0]).max() <= 1e-3 * with_[0]  # bounded: periodic like the motion
    assert np.all(np.diff(without) > 0.05 * without[0])  # growing
    assert without[-1] > 1.3 * without[0] and without[-1] > 3 * with_.max()


def test_rk4_in_joint_coordinates_is_fourth_order():
    """Halving the fixed step divides the error by 16 (± 30 %) (measured 15.7)."""
    tr, res, start = _paper_motion(DELTA)
    u = Table(tr.t, res.tau)
    ref = DELTA.simulate(u, (0.0, 0.2), tr.x[0], tr.xd[0], method="DOP853", rtol=1e-13, atol=1e-15,
                         t_eval=[0.0, 0.2], start=start)
    err = []
    for dt in (0.02, 0.01):
        sim = DELTA.simulate(u, (0.0, 0.2), tr.x[0], tr.xd[0], form="joint", method="RK4", dt=dt, start=start)
        err.append(np.abs(sim.x[-1] - ref.x[-1]).max())
    assert 16 / 1.3 <= err[0] / err[1] <= 16 * 1.3, err


def test_joint_form_input_checks():
    with pytest.raises(ValueError, match="project=False"):
        DELTA.simulate("zero", (0, 0.1), project=False)
    with pytest.raises(ValueError, match="t_eval"):
        DELTA.simulate("zero", (0, 0.1), form="joint", method="RK4", dt=0.01, t_eval=[0.0, 0.1])


def test_cli_computed_torque_in_joint_coordinates(tmp_path):
    """pkm simulate --form joint: the IRSBot-2's pick-and-place under computed-torque control with
    the exact model, sampled every ms, is tracked to 1e-6 m (measured 3.4e-8, as in the task form;
    with the CLI's default 200 samples the controller's splines of x, ẋ, ẍ disagree by 3.6e-6 m in
    both forms). From rest scipy guesses the whole span as the first step; stages that long left
    the manifold so far that the controller's IK failed at t = 0.115 s (JointRhs.FIRST_STEP)."""
    robot = ROBOT["irsbot2"]
    out = tmp_path / "ct.csv"
    proc = run_pkm("simulate", ROBOTS / FILES["irsbot2"], "--torques", "computed-torque", "--trajectory",
                   "pick-place", "--cycle-time", 0.5, "--dt", 0.001, "--form", "joint", "--step", 0.005, "--out", out,
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "projection moved" in proc.stdout
    lines = out.read_text().splitlines()
    data = np.array([[float(v) for v in line.split(",")] for line in lines[1:]])
    centre = np.array(robot.spec.trajectory["center"], dtype=float)
    tr = from_spec({"type": "pick-place", "start": centre, "lift": 0.025, "travel": 0.305, "cycle_time": 0.5,
                    "dt": 1e-3}, robot.task.coordinate_names())
    assert data.shape[0] == 101 and np.abs(data[:, 0] - tr.t[::5]).max() <= 1e-12
    assert np.abs(data[:, 1:3] - tr.x[::5]).max() <= 1e-6
