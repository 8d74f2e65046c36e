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
