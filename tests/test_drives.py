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
