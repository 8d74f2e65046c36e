"""The drives' and the joints' friction parameters in the regressor (issue 29 item 4: "the drive
parameters (rotor inertia, friction coefficients)"): ``Y π`` equals the inverse dynamics of a robot
file with drives and passive friction, the columns equal the joint terms' own forces where they can be
written by hand, and a fit recovers changed drive parameters."""
from __future__ import annotations

import tomllib

import numpy as np
import pytest

import pkm
from conftest import ROOT
from pkm.description.robotfile import parse_spec
from pkm.identification.joint_terms import joint_term_parameters
from pkm.robot import Robot
from pkm.trajectory import from_spec

SERVO = ROOT / "examples" / "delta_servo.toml"


def _servo(scale=1.0, passive=0.02):
    """The servo Delta with its drive friction and rotor inertia scaled and viscous friction on joint 2."""
    with open(SERVO, "rb") as fh:
        d = tomllib.load(fh)
    for j in d["limb"]["joints"]:
        if "drive" in j:
            for k in ("rotor_inertia", "viscous", "coulomb"):
                if k in j["drive"]:
                    j["drive"][k] *= scale
        if j["name"] == "2" and passive:
            j["friction"] = {"viscous": passive, "coulomb": 0.5 * passive, "coulomb_speed": 0.05}
    return Robot(parse_spec(d, path=SERVO))


@pytest.fixture(scope="module")
def servo():
    robot = _servo()
    tr = from_spec(dict(robot.spec.trajectory), robot.task.coordinate_names())
    return robot, tr


def test_parameters_name_the_drives_and_the_friction(servo):
    robot, _ = servo
    names = [p.name for p in joint_term_parameters(robot)]
    assert names == ["limb.1.armature", "limb.1.viscous", "limb.1.coulomb", "limb.2.viscous", "limb.2.coulomb"]
    allnames, pi = robot.dynamic_parameters()
    assert list(allnames[-5:]) == names
    np.testing.assert_allclose(pi[-5], robot.drives.reflected_inertia[0])


def test_regressor_times_parameters_equals_the_inverse_dynamics_with_drives(servo):
    robot, tr = servo
    s = slice(0, len(tr.t), 7)
    Y = robot.regressor(tr.x[s], tr.xd[s], tr.xdd[s])
    _, pi = robot.dynamic_parameters()
    tau = robot.inverse_dynamics(tr.x[s], tr.xd[s], tr.xdd[s]).tau
    assert np.abs(Y @ pi - tau).max() <= 1e-10 * np.abs(tau).max()
    # the actuated joint's own columns by hand: q̈, q̇ and tanh(q̇/v_c) of each actuator
    res = robot.inverse_dynamics(tr.x[s], tr.xd[s], tr.xdd[s])
    k = len(pi) - 5
    np.testing.assert_allclose(Y[:, :, k], res.qdd_act, atol=1e-10 * np.abs(res.qdd_act).max())
    np.testing.assert_allclose(Y[:, :, k + 1], res.qd_act, atol=1e-10 * np.abs(res.qd_act).max())
    vc = robot.drives.coulomb_speed[0]
    np.testing.assert_allclose(Y[:, :, k + 2], np.tanh(res.qd_act / vc), atol=1e-10)


def test_fit_recovers_changed_drive_parameters(servo):
    """Torques of a robot whose drive parameters are 30 % larger, fitted by least squares: the friction
    coefficients come back (each has a column of its own), and the fit predicts the torques exactly.
    The reflected rotor inertia n²J_m is not identifiable by itself: its column (q̈ of the arm joint)
    is that of the upper arm's moment of inertia about the same axis (the classic combination of a
    motor's and its first link's inertia), so only their sum is a base parameter."""
    nominal, tr = servo
    true = _servo(scale=1.3)
    s = slice(0, len(tr.t), 3)
    tau = true.inverse_dynamics(tr.x[s], tr.xd[s], tr.xdd[s]).tau
    Y = nominal.regressor(tr.x[s], tr.xd[s], tr.xdd[s])
    names, pi0 = nominal.dynamic_parameters()
    _, pi_true = true.dynamic_parameters()
    A = Y.reshape(-1, Y.shape[2])
    sol, *_ = np.linalg.lstsq(A, tau.ravel(), rcond=None)
    assert np.abs(A @ sol - tau.ravel()).max() <= 1e-9 * np.abs(tau).max()
    friction = [i for i, n in enumerate(names) if n.endswith((".viscous", ".coulomb"))]
    assert len(friction) == 4
    np.testing.assert_allclose(sol[friction], pi_true[friction], rtol=1e-6)
    arm = names.index("limb.1.armature")
    np.testing.assert_allclose(pi_true[arm], 1.3 * pi0[arm], rtol=1e-12)
    scale = np.abs(A).max(axis=0)
    scale[scale == 0] = 1.0
    rank = np.linalg.matrix_rank(A / scale, tol=1e-9)
    assert np.linalg.matrix_rank(np.delete(A, arm, axis=1) / np.delete(scale, arm), tol=1e-9) == rank


def test_excitation_stays_within_the_joint_and_drive_limits(tmp_path):
    """The 3-RPR (strokes ±200 mm in its file) with a leg velocity limit of 0.3 m/s and ball-screw
    drives of max speed 150 rad/s (0.24 m/s at 2π/0.01 rad/m), excited in a box twice its strokes:
    the optimised trajectory respects the strokes, the velocity limit and the motor speed."""
    from pkm.identification.base import robot_base_parameters
    from pkm.identification.excitation import excitation

    with open(ROOT / "robots" / "planar_3rpr.toml", "rb") as fh:
        d = tomllib.load(fh)
    n = 2 * np.pi / 0.01
    for j in d["limb"]["joints"]:
        if j["name"] == "leg":
            j["limits"] = {"range": [-200, 200], "velocity": 300}     # mm, mm/s
            j["drive"] = {"gear_ratio": n, "max_speed": 150.0}
    robot = Robot(parse_spec(d, path=ROOT / "robots" / "planar_3rpr.toml"))
    base = robot_base_parameters(robot)
    exc = excitation(robot, base, period=2.0, candidates=4, refine=4, box=([-0.6, -0.3, -0.3], [0.6, 0.3, 0.3]))
    t, x, xd, xdd = exc.sample(2.0 / 240)                  # the grid the limits were checked on (CHECK × 60)
    res = robot.inverse_dynamics(x, xd, xdd, t=t)          # no LimitError: within the strokes and velocities
    assert np.abs(res.q_act).max() <= 0.2 and np.abs(res.qd_act).max() <= 0.3
    assert np.abs(n * res.qd_act).max() <= 150.0 * (1 + 1e-12)
    assert np.isfinite(exc.cond)


def test_identify_a_robot_with_drives_end_to_end(tmp_path):
    """Data of a 'true' servo Delta (masses, inertias and drive parameters changed by 5–30 %, passive
    friction 30 % larger), noise-free, on an optimised excitation: the base parameters (the drives'
    and friction's included) come back to 1e-8, the written robot file carries them (drive
    rotor_inertia = armature / n², friction values) and predicts another motion's torques to 1e-8.
    (The armature is a base parameter only together with the arm's inertia about its axis, so the
    file's rotor inertia is the nearest-nominal split of that sum.)"""
    from dataclasses import replace

    from pkm.identification.base import robot_base_parameters
    from pkm.identification.estimate import identify, read_data
    from pkm.identification.excitation import excitation, write_trajectory_csv
    from pkm.identification.parameters import standard_count
    from pkm.identification.writer import consistent_standard, nearest_standard, problems, write_robot
    from pkm.cli.main import main

    text = (ROOT / "examples" / "delta_servo.toml").read_text()
    assert text.count('name = "2"\n') == 1
    nominal_file = tmp_path / "nominal.toml"   # the servo Delta with friction in the elbow (joint 2)
    nominal_file.write_text(text.replace('name = "2"\n', 'name = "2"\nfriction = { viscous = 0.02, coulomb = 0.01, '
                                                         'coulomb_speed = 0.05 }\n'))
    nominal = pkm.load(nominal_file)
    names, pi0 = nominal.dynamic_parameters()
    n_std = standard_count(names)
    assert list(names[n_std:]) == ["limb.1.armature", "limb.1.viscous", "limb.1.coulomb", "limb.2.viscous",
                                   "limb.2.coulomb"]
    rng = np.random.default_rng(3)
    true = pi0.copy()
    for g in range(n_std // 10):   # each body's mass and inertia scaled by 5-30 % (a physical truth)
        true[10 * g:10 * g + 10] *= 1 + rng.uniform(0.05, 0.3) * rng.choice([-1, 1])
    true[n_std:] *= 1.3
    write_robot(nominal_file, tmp_path / "true.toml", names, true)
    truth_robot = pkm.load(tmp_path / "true.toml")
    np.testing.assert_allclose(truth_robot.dynamic_parameters()[1], true, rtol=1e-12, atol=1e-15)
    base = robot_base_parameters(nominal)
    exc = excitation(nominal, base, period=2.0, candidates=6, refine=10)
    files = {}
    for key, periods in (("fit", 2), ("check", 1)):
        t, x, xd, xdd = exc.sample(0.005, periods)
        if key == "check":
            x, xd, xdd = x[::-1], -xd[::-1], xdd[::-1]
        write_trajectory_csv(tmp_path / f"{key}.csv", nominal.task.coordinate_names(), t, x, xd, xdd)
        assert main(["inverse-dynamics", str(tmp_path / "true.toml"), "--trajectory", "file", "--file",
                     str(tmp_path / f"{key}.csv"), "--out", str(tmp_path / f"{key}_tau.csv")]) == 0
        files[key] = (t, x, xd, xdd)
    fit = tmp_path / "fit_tau.csv"   # with the motion's exact accelerations (columns <x>dd)
    lines = fit.read_text().splitlines()
    cols = [n + "dd" for n in nominal.task.coordinate_names()]
    fit.write_text("\n".join([lines[0] + "," + ",".join(cols)] + [ln + "," + ",".join(map(repr, a)) for ln, a in
                                                                  zip(lines[1:], files["fit"][3].tolist())]) + "\n")
    data = read_data(nominal, fit)
    est, _, _ = identify(nominal, [data], base)
    truth = base.values(true)
    assert np.abs(est.beta - truth).max() <= 1e-8 * np.abs(truth).max()
    pi = nearest_standard(base, est.beta, pi0)   # (the split nearest the nominal one may break the arm:)
    pi, dev = consistent_standard(base, est.beta, est.cov, pi0, start=pi)   # the physically consistent one
    assert not problems(pi, names), dev
    write_robot(nominal_file, tmp_path / "identified.toml", names, pi)
    ident = pkm.load(tmp_path / "identified.toml")
    t, x, xd, xdd = files["check"]
    tau_true = truth_robot.inverse_dynamics(x, xd, xdd).tau
    tau_id = ident.inverse_dynamics(x, xd, xdd).tau
    assert np.abs(tau_id - tau_true).max() <= 1e-8 * np.abs(tau_true).max()
    assert ident.drives is not None and ident.friction is not None   # written into the drive/friction tables
