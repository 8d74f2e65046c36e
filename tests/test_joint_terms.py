"""Joint terms (issue 29, item 2): each tree variable's own force ``armature θ̈ + viscous θ̇ +
coulomb tanh(θ̇/v)`` (a drive's reflected rotor inertia, joint friction: the paper's ``Q`` of eq. 100)
in the scalar numba kernel (inverse and forward dynamics), the Python reference (RNEA, CRBA, kinetic
energy: the EOM and the actuator form) and the simulation's energy balance with the dissipated energy.

Checked against what they are not computed from: the torque difference by hand (reflected inertia
n²J_m q̈ on a square robot), the power balance of passive friction (virtual work), the forward
dynamics against the inverse, the task form (kernel) against the actuator form (Python EOM), and
``input work = ΔE + dissipated`` along free motions.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import pkm
from conftest import ROBOTS
from pkm.kernels.model import has_joint_terms
from pkm.kernels.simd_kernel import supports
from pkm.sim.inputs import Table
from pkm.trajectory import from_spec

DELTA = ROBOTS / "delta_3rr2rrr.toml"


def with_terms(path, arm=0.0, fv=0.0, fc=0.0, vc=1e-2, passive_fv=0.0):
    """The robot of ``path`` with joint terms on every limb's tree variables: armature ``arm`` and
    friction ``fv``, ``fc`` (speed ``vc``) on the actuated ones, viscous ``passive_fv`` on all."""
    robot = pkm.load(path)
    limbs = []
    for limb in robot.limbs:
        T = np.zeros((limb.n, 4))
        T[:, 1], T[:, 3] = passive_fv, vc
        T[limb.actuated, 0] = arm
        T[limb.actuated, 1] += fv
        T[limb.actuated, 2] = fc
        limbs.append(replace(limb, tree=replace(limb.tree, joint_terms=T)))
    robot.limbs[:] = limbs
    return robot


@pytest.fixture(scope="module")
def motion():
    robot = pkm.load(DELTA)
    tr = from_spec(dict(robot.spec.trajectory, period=1.0, duration=1.0, dt=1e-3), robot.task.coordinate_names())
    return tr, robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t)


def test_actuator_terms_add_to_the_torques_as_by_hand(motion):
    """Square J_IK: the drive terms of the actuated joints are the actuators' own, τ − τ_rigid =
    n²J_m q̈ + F_v q̇ + F_c tanh(q̇/v), sample by sample (the reflected inertia of one motor by hand:
    J_m = 1.2e-4 kg·m² behind a 1:50 gear is 0.3 kg·m² at the arm)."""
    tr, rigid = motion
    arm = 50.0 ** 2 * 1.2e-4
    robot = with_terms(DELTA, arm=arm, fv=0.5, fc=0.2)
    assert has_joint_terms(robot._packed()) and not supports(robot._packed())   # the scalar kernel
    res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t)
    q, qd, qdd = rigid.q_act, rigid.qd_act, rigid.qdd_act
    hand = arm * qdd + 0.5 * qd + 0.2 * np.tanh(qd / 1e-2)
    np.testing.assert_allclose(res.tau - rigid.tau, hand, rtol=0, atol=1e-12 * np.abs(res.tau).max())
    np.testing.assert_allclose(res.q_act, q, atol=1e-13)
    # the reference path (Python RNEA with the same terms) agrees
    from pkm.algorithms.manipulator import inverse_dynamics as reference

    ref = reference(robot, tr.x[::100], tr.xd[::100], tr.xdd[::100])
    np.testing.assert_allclose(ref.tau, res.tau[::100], rtol=0, atol=1e-10 * np.abs(res.tau).max())


def test_passive_friction_power_is_paid_by_the_actuators(motion):
    """Virtual work (eq. 100, 113): with viscous friction on every joint, the actuators' extra power
    equals the friction's, Δu·q̇_act = Σ_joints F_v θ̇²."""
    tr, rigid = motion
    robot = with_terms(DELTA, passive_fv=0.05)
    res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t)
    extra = np.einsum("sa,sa->s", res.tau - rigid.tau, rigid.qd_act)
    lost = sum((0.05 * res.joints_d[l.name] ** 2).sum(axis=1) for l in robot.limbs)
    assert lost.max() > 1.0
    np.testing.assert_allclose(extra, lost, rtol=0, atol=1e-11 * lost.max())


def test_task_mass_matrix_gains_the_reflected_inertia():
    """M_t(drives) − M_t = J_IKᵀ diag(n²J_m) J_IK (eq. 108 with the armature on the actuated variables)."""
    plain, robot = pkm.load(DELTA), with_terms(DELTA, arm=0.3)
    for x in ([0.1, -0.05, -0.9], [0.0, 0.2, -1.1]):
        e0, e = plain.eom(x, [0.2, 0.1, 0.0]), robot.eom(x, [0.2, 0.1, 0.0])
        np.testing.assert_allclose(e.M_t - e0.M_t, 0.3 * e0.J_IK.T @ e0.J_IK, rtol=0, atol=1e-12)
        np.testing.assert_allclose(e.M_a - e0.M_a, 0.3 * np.eye(3), rtol=0, atol=1e-10)


def test_forward_dynamics_inverts_the_inverse_dynamics_with_joint_terms(motion):
    tr, rigid = motion
    robot = with_terms(DELTA, arm=0.3, fv=0.5, fc=0.2, passive_fv=0.01)
    s = slice(0, len(tr.t), 50)
    res = robot.inverse_dynamics(tr.x[s], tr.xd[s], tr.xdd[s])
    fd = robot.forward_dynamics(tr.x[s], tr.xd[s], res.tau, start=[rigid.joints[l.name][0] for l in robot.limbs])
    assert np.abs(fd.xdd - tr.xdd[s]).max() <= 1e-9 * np.abs(tr.xdd).max()


@pytest.mark.parametrize("form", ["task", "actuator", "auto"])
@pytest.mark.parametrize("rtol", [1e-9, 1e-11])
def test_energy_balance_with_friction(form, rtol):
    """A free fall with armature, actuator friction (viscous and smooth Coulomb) and passive viscous
    friction: the work in equals ΔE plus the dissipated energy to 1e-8 of the energy scale, in the
    task form (numba kernel) and the actuator form (Python EOM) alike, which dissipate the same."""
    robot = with_terms(DELTA, arm=0.05, fv=0.5, fc=0.2, passive_fv=0.01)
    sim = robot.simulate("zero", (0.0, 0.4), form=form, rtol=rtol, atol=rtol * 1e-2)
    scale = max(np.abs(sim.energy).max(), np.abs(sim.kinetic).max())
    assert sim.dissipated[-1] > 1.0 and np.all(np.diff(sim.dissipated) >= -1e-12)
    assert np.abs(sim.work - (sim.energy - sim.energy[0]) - sim.dissipated).max() <= 1e-8 * scale
    assert "friction dissipated" in sim.health()
    ref = robot.simulate("zero", (0.0, 0.4), form="task", rtol=1e-12, atol=1e-14)
    assert abs(sim.dissipated[-1] - ref.dissipated[-1]) <= 100 * rtol * ref.dissipated[-1]
    np.testing.assert_allclose(sim.x, ref.x, atol=1e3 * rtol)


def test_rk4_with_friction_runs_in_python_and_keeps_the_balance():
    robot = with_terms(DELTA, arm=0.05, fv=0.5, fc=0.2, vc=0.2)   # a Coulomb law RK4's steps resolve
    coarse = robot.simulate("zero", (0.0, 0.2), form="task", method="RK4", dt=1e-3)
    fine = robot.simulate("zero", (0.0, 0.2), form="task", method="RK4", dt=5e-4)
    assert coarse.dissipated[-1] > 0.5
    for sim in (coarse, fine):
        scale = np.abs(sim.energy).max()
        assert np.abs(sim.work - (sim.energy - sim.energy[0]) - sim.dissipated).max() <= 1e-8 * scale
    ref = robot.simulate("zero", (0.0, 0.2), form="task", rtol=1e-12, atol=1e-14).dissipated[-1]
    e1, e2 = abs(coarse.dissipated[-1] - ref), abs(fine.dissipated[-1] - ref)
    assert e1 < 1e-5 * ref and e2 < e1 / 8.0, (e1, e2)   # fourth order: the error falls 16× per halving


def test_round_trip_with_drives(motion):
    """Forces of the inverse dynamics with armature and viscous friction, tabulated every ms and
    simulated: the motion comes back to 1e-6 m (DOP853, rtol 1e-10, T = 1 s)."""
    tr, rigid = motion
    robot = with_terms(DELTA, arm=0.3, fv=0.5, passive_fv=0.01)
    res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t)
    sim = robot.simulate(Table(tr.t, res.tau), (0.0, 1.0), tr.x[0], tr.xd[0], rtol=1e-10, atol=1e-12,
                         t_eval=tr.t[::10], start=[rigid.joints[l.name][0] for l in robot.limbs])
    assert np.abs(sim.x - tr.x[::10]).max() <= 1e-6
    assert sim.dissipated[-1] > 0.0


def test_joint_form_refuses_friction():
    with pytest.raises(pkm.InputError, match="joint form does not integrate the energy friction dissipates"):
        with_terms(DELTA, fv=0.1).simulate("zero", (0.0, 0.01), form="joint")


def test_a_robot_file_with_drives_balances_its_energy_and_round_trips():
    """examples/delta_servo.toml (a 400 W servo behind a 1:50 gear on each arm, friction in the file):
    the file's drives become the kernel's joint terms; a free fall keeps input work = ΔE + dissipated
    to 1e-8, and the inverse dynamics' forces simulate back to the motion."""
    robot = pkm.load(ROBOTS.parent / "examples" / "delta_servo.toml")
    assert robot.drives is not None and has_joint_terms(robot._packed())
    T = robot.limbs[0].tree.joint_terms
    np.testing.assert_allclose(T[robot.limbs[0].actuated[0], 0], robot.drives.reflected_inertia[0])
    sim = robot.simulate("zero", (0.0, 0.3), rtol=1e-10, atol=1e-12)
    scale = np.abs(sim.energy).max()
    assert sim.dissipated[-1] > 0.0
    assert np.abs(sim.work - (sim.energy - sim.energy[0]) - sim.dissipated).max() <= 1e-8 * scale
    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t)
    fd = robot.forward_dynamics(tr.x[::25], tr.xd[::25], res.tau[::25], start=[res.joints[l.name][0] for l in robot.limbs])
    assert np.abs(fd.xdd - tr.xdd[::25]).max() <= 1e-8 * max(1.0, np.abs(tr.xdd).max())
