"""Drives and joint friction (issue 29 item 2): the robot file's ``drive`` and ``friction`` keys
(pkm.description.drives), their data structures on a loaded robot and the drive model."""
from __future__ import annotations

import copy
import tomllib
from pathlib import Path

import numpy as np
import pytest

from pkm.description.drives import Drives, friction_force
from pkm.description.robotfile import parse_spec
from pkm.errors import RobotFileError

ROOT = Path(__file__).resolve().parents[1]
DELTA = ROOT / "robots" / "delta_3rr2rrr.toml"
#: Yaskawa SGMP-04A (0.4 kW AC servo: 1.27 N·m rated, 3.82 N·m peak, 3000 / 4500 min⁻¹, 0.347e-4 kg·m²)
#: with a 1:50 gear, as in examples/delta_servo.toml.
SERVO = {"gear_ratio": 50, "rotor_inertia": 0.347e-4, "viscous": 0.2, "coulomb": 0.5, "efficiency": 0.8,
         "rated_torque": 1.27, "peak_torque": 3.82, "rated_speed": 314.16, "max_speed": 471.24}


@pytest.fixture(scope="module")
def delta_data():
    with open(DELTA, "rb") as fh:
        return tomllib.load(fh)


def with_keys(data, **joints):
    """A copy of the Delta's data with keys added to limb joints (by index): ``with_keys(d, j0={...})``."""
    d = copy.deepcopy(data)
    for key, extra in joints.items():
        d["limb"]["joints"][int(key[1:])].update(extra)
    return d


def test_drive_and_friction_are_read_in_si_and_reach_the_robot(delta_data):
    from pkm.robot import Robot

    d = with_keys(delta_data, j0={"drive": dict(SERVO)}, j1={"friction": {"viscous": 0.01, "coulomb": 0.02}})
    robot = Robot(parse_spec(d, path="delta.toml"))   # units = "mm": drive values stay SI
    dr = robot.drives
    assert isinstance(dr, Drives) and dr.names == tuple(robot.actuator_names)
    np.testing.assert_array_equal(dr.gear_ratio, 50.0)
    np.testing.assert_array_equal(dr.rotor_inertia, 0.347e-4)
    np.testing.assert_allclose(dr.reflected_inertia, 2500 * 0.347e-4)
    np.testing.assert_array_equal(dr.coulomb_speed, 1e-3)
    assert not dr.gear_ratio.flags.writeable
    fr = robot.friction
    assert fr.limbs == tuple(l.name for l in robot.limbs)
    for k, limb in enumerate(robot.limbs):
        i = limb.variable_names.index(f"{limb.name}/2")
        expect = np.zeros(limb.n)
        expect[i] = 0.01
        np.testing.assert_array_equal(fr.viscous[k], expect)


@pytest.mark.parametrize("joints, entry, words", [
    ({"j0": {"drive": {"rotor_inertia": 1e-4}}}, 'limb.joints[0] ("1").drive', "missing required key 'gear_ratio'"),
    ({"j0": {"drive": {"gear_ratio": 0}}}, 'limb.joints[0] ("1").drive.gear_ratio', "must be positive"),
    ({"j0": {"drive": {"gear_ratio": 10, "rotor_inertia": -1}}}, "drive.rotor_inertia", "zero or positive"),
    ({"j0": {"drive": {"gear_ratio": 10, "efficiency": 80}}}, "drive.efficiency", "(0, 1]"),
    ({"j0": {"drive": {"gear_ratio": 10, "coulomb_speed": 0}}}, "drive.coulomb_speed", "must be positive"),
    ({"j0": {"drive": {"gear_ratio": 1e300}}}, "drive.gear_ratio", "out of range"),
    ({"j0": {"drive": {"gear_ratio": 10, "coulomb_speed": 1e-300}}}, "drive.coulomb_speed", "below 1e-12"),
    ({"j0": {"drive": {"gear_ratio": True}}}, "drive.gear_ratio", "expected a number"),
    ({"j0": {"drive": {"gear_ratio": "2 * zz"}}}, "drive.gear_ratio", "zz"),
    ({"j0": {"drive": {"gear_ratio": "nan"}}}, "drive.gear_ratio", ""),
    ({"j0": {"drive": {"gear_ratio": 10, "rated_torque": 2, "peak_torque": 1}}}, "drive.peak_torque", "below"),
    ({"j0": {"drive": {"gear_ratio": 10, "torque": 1}}}, "drive", "unknown key 'torque'"),
    ({"j0": {"drive": 50}}, "drive", "expected a table"),
    ({"j1": {"drive": {"gear_ratio": 10}}}, 'limb.joints[1] ("2").drive', "only an actuated joint"),
    ({"j0": {"drive": {"gear_ratio": 10}, "friction": {"viscous": 1}}}, "friction", "in the drive table"),
    ({"j1": {"friction": {"viscous": -1}}}, 'limb.joints[1] ("2").friction.viscous', "zero or positive"),
    ({"j1": {"friction": {"viscus": 1}}}, "friction", "did you mean 'viscous'"),
])
def test_bad_drive_and_friction_entries_are_one_line_errors(delta_data, joints, entry, words):
    with pytest.raises(RobotFileError) as err:
        parse_spec(with_keys(delta_data, **joints), path="delta.toml")
    msg = str(err.value)
    assert "\n" not in msg and entry in err.value.entry and words in msg


def test_friction_on_a_cut_joint_is_refused_at_load(delta_data):
    from pkm.robot import Robot

    with pytest.raises(RobotFileError, match="cut joint"):
        Robot(parse_spec(with_keys(delta_data, j6={"friction": {"viscous": 0.1}}), path="delta.toml"))


def test_smooth_coulomb_is_odd_dissipative_and_saturates():
    qd = np.linspace(-1, 1, 201)
    f = friction_force(qd, 0.3, 2.0, 1e-3)
    np.testing.assert_allclose(f, -friction_force(-qd, 0.3, 2.0, 1e-3))
    assert np.all(f * qd >= 0)
    np.testing.assert_allclose(friction_force(0.01, 0.0, 2.0, 1e-3), 2.0, rtol=1e-8)   # 10 v_c: saturated
    assert friction_force(0.0, 0.3, 2.0, 1e-3) == 0.0


# ====================================================================== inverse dynamics
def _robot(data, **joints):
    from pkm.robot import Robot

    return Robot(parse_spec(with_keys(data, **joints), path="delta.toml"))


@pytest.fixture(scope="module")
def motion(delta_data):
    """The paper's sine motion of the Delta, every 0.1 s (101 samples)."""
    from pkm.trajectory import from_spec

    robot = _robot(delta_data)
    traj = from_spec(dict(robot.spec.trajectory, dt=0.1), robot.task.coordinate_names())
    return traj, robot.inverse_dynamics(traj.x, traj.xd, traj.xdd, t=traj.t)


def _run(robot, traj, **kw):
    return robot.inverse_dynamics(traj.x, traj.xd, traj.xdd, t=traj.t, **kw)


def test_reflected_inertia_against_a_hand_calculation(delta_data, motion):
    traj, rigid = motion
    n, J_m = 50.0, 0.347e-4
    res = _run(_robot(delta_data, j0={"drive": {"gear_ratio": n, "rotor_inertia": J_m}}), traj)
    # hand calculation: the rotor turns at n q̇, so it needs n J_m n q̈ at the joint
    np.testing.assert_allclose(res.tau - rigid.tau, 2500 * 0.347e-4 * rigid.qdd_act, rtol=1e-12, atol=1e-14)
    assert np.max(np.abs(res.tau - rigid.tau)) > 1e-3          # the term is really there
    np.testing.assert_allclose(res.speed_motor, n * rigid.qd_act, rtol=1e-15)
    np.testing.assert_allclose(res.tau_motor, res.tau / n, rtol=1e-13)   # η = 1: τ_m = τ / n


def test_friction_and_efficiency_on_the_motor_side_by_hand(delta_data, motion):
    traj, rigid = motion
    d = {"gear_ratio": 20.0, "rotor_inertia": 1e-4, "viscous": 0.3, "coulomb": 0.7, "coulomb_speed": 0.01,
         "efficiency": 0.8}
    res = _run(_robot(delta_data, j0={"drive": d}), traj)
    qd, qdd = rigid.qd_act, rigid.qdd_act
    fric = 0.3 * qd + 0.7 * np.tanh(qd / 0.01)
    np.testing.assert_allclose(res.tau, rigid.tau + 400 * 1e-4 * qdd + fric, rtol=1e-12, atol=1e-13)
    load = rigid.tau + fric                         # what the gear's output carries
    for s in (3, 17, 40, 77):                       # one sample at a time, as on paper
        for a in range(3):
            gear = load[s, a] / (20 * 0.8) if load[s, a] * qd[s, a] >= 0 else load[s, a] * 0.8 / 20
            assert res.tau_motor[s, a] == pytest.approx(gear + 20 * 1e-4 * qdd[s, a], rel=1e-12, abs=1e-14)
    driving = load * qd >= 0
    assert driving.any() and (~driving).any()       # both branches of the efficiency met


def test_zero_drives_change_nothing(delta_data, motion):
    traj, rigid = motion
    res = _run(_robot(delta_data, j0={"drive": {"gear_ratio": 1.0}}), traj)
    np.testing.assert_array_equal(res.tau, rigid.tau)
    assert rigid.tau_motor is None and rigid.tau_drive is None and _robot(delta_data).drives is None


def test_passive_friction_by_virtual_work(delta_data, motion):
    """u_f = tau − tau_rigid does virtual work Σ τ_f θ̇ for every virtual task velocity: the passive joints'
    rates for unit task velocities come from the IK's rate solution (an independent path)."""
    traj, rigid = motion
    robot = _robot(delta_data, j1={"friction": {"viscous": 0.05, "coulomb": 0.2}},
                   j3={"friction": {"viscous": 0.02, "coulomb": 0.1, "coulomb_speed": 0.05}})
    res = _run(robot, traj)
    u_f = res.tau - rigid.tau
    assert np.max(np.abs(u_f)) > 0.05
    # power: Σ friction power of all joints = u_f · q̇_act
    from pkm.algorithms.drive_dynamics import dissipated_power

    p = dissipated_power(robot, res.qd_act, res.joints_d)
    np.testing.assert_allclose(np.sum(u_f * res.qd_act, axis=1), p, rtol=1e-9, atol=1e-12)
    assert np.all(p >= 0)
    for s in (5, 33, 61):
        tau_f = {l.name: robot.friction.force(k, res.joints_d[l.name][s]) for k, l in enumerate(robot.limbs)}
        for e in np.eye(3):
            sol = robot.inverse_kinematics(traj.x[s], e, start=[res.joints[l.name][s] for l in robot.limbs])
            work = sum(tau_f[l.name] @ sol.joints_d[l.name][0] for l in robot.limbs)
            assert u_f[s] @ sol.qd_act[0] == pytest.approx(work, rel=1e-9, abs=1e-12)


def test_torques_only_and_out_with_drives_match_the_full_result(delta_data, motion, monkeypatch):
    from pkm.kernels import stream

    traj, _ = motion
    robot = _robot(delta_data, j0={"drive": dict(SERVO)}, j1={"friction": {"viscous": 0.05}})
    full = _run(robot, traj)
    monkeypatch.setattr(stream, "STREAM", 30)     # several blocks (the kernel holds the drive terms)
    tau = _run(robot, traj, torques_only=True)
    np.testing.assert_allclose(tau, full.tau, rtol=1e-9, atol=1e-10)
    out = np.empty_like(full.tau)
    res = _run(robot, traj, out=out)
    assert res.tau is out
    np.testing.assert_array_equal(out, full.tau)


def _load_with(path, **joints):
    """A robot file's data with keys added to its limb joints by name: ``_load_with(p, leg={...})``."""
    from pkm.robot import Robot

    with open(path, "rb") as fh:
        d = tomllib.load(fh)
    for j in d["limb"]["joints"]:
        j.update(joints.get(j["name"], {}))
    return Robot(parse_spec(d, path=path))


def _power_balance(robot, rigid, res):
    """(u − u_rigid)·q̇ = friction power of all joints + rotor power n² J_m q̈ q̇."""
    from pkm.algorithms.drive_dynamics import dissipated_power

    rotor = 0.0 if robot.drives is None else np.sum(robot.drives.reflected_inertia * res.qdd_act * res.qd_act, axis=1)
    lhs = np.sum((res.tau - rigid.tau) * res.qd_act, axis=1)
    rhs = dissipated_power(robot, res.qd_act, res.joints_d) + rotor
    np.testing.assert_allclose(lhs, rhs, rtol=1e-9, atol=1e-9 * np.max(np.abs(rhs)))
    assert np.max(np.abs(rhs)) > 1e-3


def test_prismatic_drives_and_passive_friction_on_a_redundant_robot():
    """The 4-RPR (redundant, prismatic actuators): a ball screw of lead 10 mm (n = 2π/0.01 rad/m) and friction
    in the passive revolute joints, with weights: the power balance holds and the screw's own terms are exact."""
    from pkm.robot import load
    from pkm.trajectory import from_spec

    path = ROOT / "robots" / "planar_4rpr.toml"
    n = 2 * np.pi / 0.01
    robot = _load_with(path, leg={"drive": {"gear_ratio": n, "rotor_inertia": 2e-5, "viscous": 40.0}},
                       base={"friction": {"viscous": 0.5, "coulomb": 0.3}}, top={"friction": {"coulomb": 0.2}})
    traj = from_spec(dict(robot.spec.trajectory, dt=0.05), robot.task.coordinate_names())
    w = [1.0, 2.0, 1.0, 3.0]
    rigid = load(path).inverse_dynamics(traj.x, traj.xd, traj.xdd, t=traj.t, weights=w)
    res = robot.inverse_dynamics(traj.x, traj.xd, traj.xdd, t=traj.t, weights=w)
    _power_balance(robot, rigid, res)
    # the passive part produces exactly the friction's task wrench; the screw's own part is n² J_m q̈ + F_v q̇
    own = n * n * 2e-5 * res.qdd_act + 40.0 * res.qd_act
    from pkm.algorithms.drive_dynamics import passive_task_wrench

    phi = passive_task_wrench(robot, res.x, res.joints, res.joints_d)
    np.testing.assert_allclose(np.einsum("sad,sa->sd", res.J_IK, res.tau - rigid.tau - own), phi,
                               rtol=1e-9, atol=1e-9 * np.max(np.abs(phi)))
    np.testing.assert_allclose(res.speed_motor, n * res.qd_act, rtol=1e-15)


def test_friction_in_spherical_and_universal_joints_of_a_hybrid_limb():
    """The 3R[2US] Delta (spherical and universal joints in a closed loop): friction on every axis of the S and
    U joints of the tree and on the elbow; the power balance against the kernel's joint rates."""
    from pkm.robot import load
    from pkm.trajectory import from_spec

    path = ROOT / "robots" / "delta_3r2us.toml"
    robot = load(path)
    cut = {j.name.split("/", 1)[1] for j in robot.limbs[0].topology.cut_joints}
    with open(path, "rb") as fh:
        names = [j["name"] for j in tomllib.load(fh)["limb"]["joints"] if not j.get("actuated")]
    fr = {"friction": {"viscous": 0.02, "coulomb": 0.05, "coulomb_speed": 0.01}}
    robot = _load_with(path, **{n: fr for n in names if n not in cut})
    traj = from_spec(dict(robot.spec.trajectory, dt=robot.spec.trajectory["duration"] / 40),
                     robot.task.coordinate_names())
    rigid = load(path).inverse_dynamics(traj.x, traj.xd, traj.xdd, t=traj.t)
    _power_balance(robot, rigid, robot.inverse_dynamics(traj.x, traj.xd, traj.xdd, t=traj.t))


def test_plot_shows_the_motor_torques_where_drives_exist(delta_data, motion):
    from pkm.plotting import plot_actuators

    traj, rigid = motion
    res = _run(_robot(delta_data, j0={"drive": dict(SERVO)}), traj)
    fig = plot_actuators(res, traj.t)
    assert [ax.get_ylabel() for ax in fig.axes] == ["joint-side torque [N·m]", "motor torque [N·m]",
                                                    "actuator angle [rad]"]
    np.testing.assert_array_equal(fig.axes[1].get_lines()[0].get_ydata(), res.tau_motor[:, 0])
    assert len(plot_actuators(rigid, traj.t).axes) == 2          # no drives: the two panels of before


def test_info_names_drives_and_friction():
    from pkm.cli.info import robot_info

    text = robot_info(str(ROOT / "examples" / "delta_servo.toml"))
    assert text.count("(actuated, drive n = 50)") == 3
