"""Joint limits in the robot file (issue 29, item 1): the `limits` key is read and checked like the
rest of the file, and every consumer acts on it — IK and inverse dynamics (LimitError naming joint,
value, range, sample), workspace maps (beyond the limits apart from unreachable; default ranges
from the reachable within-limits set), simulate (stops at the time), sweeps (a per-point status)."""
from __future__ import annotations

import copy
import math
import tomllib

import numpy as np
import pytest

import pkm
from pkm.algorithms.limits import evaluate, limit_table
from pkm.description.robotfile import parse_spec
from pkm.workspace import default_ranges

from conftest import ROBOTS, TESTS
from test_bad_input import one_line_error, run_main

HEXAPOD = ROBOTS / "hexapod_6ups.toml"
DELTA = ROBOTS / "delta_3rr2rrr.toml"
DELTA4 = ROBOTS / "delta_4rr2rrr.toml"
#: The Delta's arm stops (its file has none: its free fall through the stretched arms, paper 8.1, is
#: the showcase of simulation through singularities, tests/test_simulate_auto.py).
ARMS = {"range_deg": [-60, 110]}
RPR = ROBOTS / "planar_3rpr.toml"
LINEAR = TESTS / "robots_ok" / "linear_delta_3puu.toml"


@pytest.fixture(scope="module")
def hexapod():
    return pkm.load(HEXAPOD)


@pytest.fixture(scope="module")
def rpr():
    return pkm.load(RPR)


def _data(path):
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def _with_limits(path, joint, limits):
    """The robot file at ``path`` as data, its limb joint ``joint`` with ``limits`` (None: removed)."""
    data = copy.deepcopy(_data(path))
    j = next(j for j in data["limb"]["joints"] if j["name"] == joint)
    j.pop("limits", None)
    if limits is not None:
        j["limits"] = limits
    return data


# ====================================================================== the file
@pytest.mark.parametrize("path, joint, limits, entry, phrase", [
    (HEXAPOD, "U", {"range": [-1, 1]}, "limits.range", "give 'ranges'"),
    (HEXAPOD, "P", {"range_deg": [-10, 10]}, "limits.range_deg", "is a length, not an angle"),
    (HEXAPOD, "P", {"ranges": [[-1, 1]]}, "limits.ranges", "give 'range'"),
    (HEXAPOD, "P", {"range": [0.5, -0.5]}, "limits.range", "lo < hi"),
    (HEXAPOD, "P", {"range": [0, float("nan")]}, "limits.range[1]", "NaN"),
    (HEXAPOD, "P", {"range": [0, "zz"]}, "limits.range[1]", "zz"),
    (HEXAPOD, "P", {"range": [-1, 1], "range_deg": [-1, 1]}, "limits.range_deg", "one of"),
    (HEXAPOD, "S", {"ranges": [[-1, 1], [-1, 1]]}, "limits.ranges", "expected 3 pairs"),
    (HEXAPOD, "S", {"ranges": [[-1, 1], [-1, 1], 3]}, "limits.ranges[2]", "expected [lo, hi]"),
    (HEXAPOD, "P", {"cone_deg": 30}, "limits.cone_deg", "U or S joint"),
    (HEXAPOD, "U", {"cone_deg": 180}, "limits.cone_deg", "between 0 and 180"),
    (HEXAPOD, "U", {"cone_axis": [0, 0, 1]}, "limits.cone_axis", "needs a 'cone_deg'"),
    (HEXAPOD, "U", {"cone_deg": 20, "cone_axis": [0, 0, 0]}, "limits.cone_axis", "zero-length"),
    (HEXAPOD, "U", {"velocity": 1.0}, "limits.velocity", "actuated joints"),
    (HEXAPOD, "P", {"velocity": -1.0}, "limits.velocity", "> 0"),
    (HEXAPOD, "P", {"stroke": [0, 1]}, "limits", "unknown key 'stroke'"),
    (HEXAPOD, "P", {}, "limits", "empty limits table"),
    (HEXAPOD, "P", [0, 1], "limits", "expected a table"),
])
def test_bad_limits_are_one_line_errors_naming_the_entry(path, joint, limits, entry, phrase):
    with pytest.raises(pkm.RobotFileError) as info:
        parse_spec(_with_limits(path, joint, limits), path=path)
    msg = str(info.value)
    assert "\n" not in msg and phrase in msg, msg
    assert f'limb.joints[' in info.value.entry and info.value.entry.endswith(entry), info.value.entry


def test_a_range_on_the_cut_joint_is_refused_on_load():
    """The Delta's joint 7 closes the parallelogram: its angle is never computed, so a range on it
    could never be checked — refused, naming the joint (a cone would be allowed)."""
    spec = parse_spec(_with_limits(DELTA, "7", {"range_deg": [-30, 30]}), path=DELTA)
    with pytest.raises(pkm.RobotFileError, match="cut joint of its loop"):
        pkm.Robot(spec)


def test_lengths_in_mm_and_degrees_are_converted(rpr):
    """planar_3rpr.toml (mm) gives its legs ±200 mm: ±0.2 m in SI; the 4-limb Delta's arms -60°…110° in rad."""
    leg = rpr.spec.joint("leg2/leg")
    np.testing.assert_allclose(leg.limits.ranges, [[-0.2, 0.2]])
    arm = pkm.load(DELTA4).spec.joint("limb3/1")
    np.testing.assert_allclose(arm.limits.ranges, [[math.radians(-60), math.radians(110)]])


# ====================================================================== IK and inverse dynamics
def test_ik_below_the_hexapods_base_is_a_limit_error(hexapod):
    """Legs of any length reached below the base; the base U joints' 30° cone forbids it."""
    with pytest.raises(pkm.LimitError) as info:
        hexapod.inverse_kinematics([0, 0, 0, 0, 0, -1.5])
    e = info.value
    assert isinstance(e, pkm.IKError) and "\n" not in str(e)
    assert e.kind == "cone" and e.joint.endswith("/U") and e.sample is None
    assert e.range == (0.0, pytest.approx(math.radians(30))) and e.value > math.radians(30)
    assert f"'{e.joint}'" in str(e) and "cone of 30°" in str(e) and "x = [" in str(e)
    sol = hexapod.inverse_kinematics([0, 0, 0, 0, 0, -1.5], limits=False)   # the mechanism reaches it
    assert np.all(np.isfinite(sol.q_act))


def test_ik_names_the_first_sample_beyond_a_stroke(rpr):
    """x from 0 to 0.3 m: a leg passes +200 mm on the way; the error names the first such sample."""
    X = np.column_stack([np.zeros(31), np.linspace(0.0, 0.3, 31), np.zeros(31)])
    free = rpr.inverse_kinematics(X, limits=False).q_act
    first = int(np.flatnonzero((np.abs(free) > 0.2).any(axis=1))[0])
    with pytest.raises(pkm.LimitError) as info:
        rpr.inverse_kinematics(X)
    e = info.value
    assert e.sample == first and e.kind == "range" and e.range == (-0.2, 0.2)
    assert abs(e.value) > 0.2 and e.value == pytest.approx(free[first, rpr.actuator_names.index(e.joint)])
    assert f"at sample {first} (x = " in str(e) and "[-0.2, 0.2] m" in str(e)


def test_inverse_dynamics_checks_ranges_and_actuator_velocities(rpr):
    from pkm.trajectory import from_spec

    X = np.column_stack([np.zeros(31), np.linspace(0.0, 0.3, 31), np.zeros(31)])
    Z = np.zeros_like(X)
    t = np.linspace(0.0, 3.0, 31)
    with pytest.raises(pkm.LimitError, match=r"at sample \d+ \(t = [0-9.]+ s, x = "):
        rpr.inverse_dynamics(X, Z, Z, t=t)
    assert np.all(np.isfinite(rpr.inverse_dynamics(X, Z, Z, limits=False).tau))
    # the default motion within ±200 mm, but not at 0.1 m/s (its legs move at up to 0.36 m/s)
    slow = pkm.Robot(parse_spec(_with_limits(RPR, "leg", {"range": [-200, 200], "velocity": 100}), path=RPR))
    traj = from_spec(slow.spec.trajectory, slow.task.coordinate_names())
    with pytest.raises(pkm.LimitError) as info:
        slow.inverse_dynamics(traj.x, traj.xd, traj.xdd, t=traj.t)
    assert info.value.kind == "velocity" and info.value.range == (-0.1, 0.1) and abs(info.value.value) > 0.1
    rpr.inverse_dynamics(traj.x, traj.xd, traj.xdd, t=traj.t)   # the shipped file: within its limits


def test_the_cone_is_the_tilt_of_the_u_joints_shaft(hexapod):
    """The cone, from the bodies' rotations (POE), equals the closed form arccos(cos q1 cos q2) of
    a U joint with orthogonal axes, from its joint variables (the hexapod's base joints)."""
    from pkm.trajectory import from_spec

    traj = from_spec(hexapod.spec.trajectory, hexapod.task.coordinate_names())
    X = traj.x + np.array([0.2, -0.1, 0.3, 0.4, 0.2, -0.3])      # larger tilts than the test motion
    sol = hexapod.inverse_kinematics(X, limits=False)
    values, _ = evaluate(hexapod, [sol.joints[l.name] for l in hexapod.limbs])
    table = limit_table(hexapod)
    for c, check in enumerate(table.checks):
        if type(check).__name__ == "_Cone" and check.joint.endswith("/U"):
            limb = hexapod.limbs[check.limb]
            q1 = sol.joints[limb.name][:, limb.tree.variable_index(f"{check.joint}.1")]
            q2 = sol.joints[limb.name][:, limb.tree.variable_index(f"{check.joint}.2")]
            np.testing.assert_allclose(values[:, c], np.arccos(np.cos(q1) * np.cos(q2)), atol=1e-12)
            assert values[:, c].max() > 0.1


def test_shipped_default_motions_are_within_their_limits():
    from pkm.trajectory import from_spec

    for path in (HEXAPOD, DELTA4, ROBOTS / "planar_4rpr.toml", LINEAR):
        robot = pkm.load(path)
        assert not limit_table(robot).empty, path
        traj = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
        robot.inverse_kinematics(traj.x, traj.xd)


# ====================================================================== workspace
def test_hexapod_map_no_longer_reaches_below_its_base(hexapod, tmp_path):
    """The default map (x–z at the home orientation) covered z −3.4…+7.4 m, all of it "reachable":
    every leg length is reached by a pose and its mirror image below the base. Within the limits
    (strokes ±L/4, the joints' 30° cones) no point is below the base plane z = 0."""
    wmap = pkm.workspace(hexapod, resolution=21)
    z = wmap.x[:, hexapod.task.coordinate_names().index("z")]
    base_z = max(j.point[2] for j in hexapod.spec.expanded()[1] if j.parent == hexapod.spec.ground)
    assert base_z == pytest.approx(0.0)
    assert wmap.within.any() and z[wmap.within].min() > base_z
    beyond = wmap.reachable & ~wmap.within
    assert beyond.any()
    assert all(wmap.status_text(s).startswith("beyond limits (leg") for s in np.flatnonzero(beyond))
    header = wmap.write_csv(tmp_path / "m.csv")
    rows = (tmp_path / "m.csv").read_text().splitlines()[1:]
    col = header.index("within_limits")
    assert [r.split(",")[col] for r in rows] == ["1" if w else "0" for w in wmap.within]
    assert "within the joint limits" in wmap.summary()


def test_default_delta_map_covers_its_reachable_within_limits_set():
    """The Delta's default slice was 15 % reachable (a box of 1.5 × its largest joint distance);
    it is fitted to the reachable within-limits set now."""
    wmap = pkm.workspace(DELTA, resolution=21, fixed={"y": 0.0})
    assert wmap.free == ["x", "z"] and wmap.within.mean() > 0.3
    rough = pkm.workspace(DELTA, default_ranges(pkm.load(DELTA), {"y": 0.0}), resolution=21, fixed={"y": 0.0})
    assert rough.reachable.mean() < 0.2                                   # the old default
    # with arm stops, the fitted box covers the within-limits points, not all reachable ones
    arms = pkm.workspace(DELTA4, resolution=21, fixed={"y": 0.0})
    assert arms.within.mean() > 0.3 and arms.within.sum() < arms.reachable.sum()


# ====================================================================== simulate
def test_linear_delta_free_fall_stops_at_its_rails():
    """Unpowered, the linear Delta fell 4.9 m in 1 s: it falls freely (vertical rails), its carriages
    pass −300 mm at t = √(2 · 0.3 m / g) = 0.247 s, and the run stops at the next output, 0.25 s."""
    robot = pkm.load(LINEAR)
    with pytest.raises(pkm.LimitError) as info:
        robot.simulate("zero", (0.0, 1.0))
    e = info.value
    assert e.joint.endswith("/rail") and e.value < -0.3 and e.range == (-0.3, 0.3)
    assert e.time == pytest.approx(0.25) and math.sqrt(2 * 0.3 / 9.81) < e.time
    assert "at t = 0.25 s (output sample 50" in str(e) and "\n" not in str(e)


def test_delta_free_fall_stops_where_an_arm_passes_its_range():
    robot = pkm.Robot(parse_spec(_with_limits(DELTA, "1", ARMS), path=DELTA))
    free = robot.simulate("zero", (0.0, 0.4), limits=False)
    first = int(np.flatnonzero((free.q_act > math.radians(110)).any(axis=1))[0])
    with pytest.raises(pkm.LimitError) as info:
        robot.simulate("zero", (0.0, 0.4))
    assert info.value.time == pytest.approx(free.t[first]) and info.value.sample == first
    assert info.value.joint.startswith("limb") and f"t = {free.t[first]:.6g} s" in str(info.value)


# ====================================================================== sweep and CLI
def test_sweep_reports_a_limit_per_point():
    line = {"type": "line", "start": [0.0, 0.0, 0.0], "end": [0.0, 0.3, 0.0], "duration": 1.0, "dt": 0.05}
    res = pkm.sweep(str(RPR), {"rp": [150, 160]}, [None, line], executor="serial", progress=False)
    status = [r["status"] for r in res.rows]
    assert status == ["ok", "limit", "ok", "limit"]
    bad = res.rows[1]
    assert bad["message"].startswith("LimitError: ") and "beyond its range [-0.2, 0.2] m at sample" in bad["message"]
    assert math.isnan(bad[f"peak_{res.actuator_names[0]}"])


def test_cli_prints_limits_as_one_line_errors(capsys, tmp_path):
    code, _, err = run_main(capsys, "ik", HEXAPOD, "--at", 0, 0, 0, 0, 0, -1.5)
    one_line_error(code, err, "cone of 30°", "x = [")
    code, _, err = run_main(capsys, "simulate", LINEAR, "--torques", "zero", "--duration", 1, "--out", tmp_path / "s.csv")
    one_line_error(code, err, "'leg1/rail'", "at t = 0.25 s")
    assert not (tmp_path / "s.csv").exists()
    code, out, err = run_main(capsys, "workspace", HEXAPOD, "--resolution", 11, "--out", tmp_path / "w.csv")
    assert code == 0, err
    assert "within_limits" in (tmp_path / "w.csv").read_text().splitlines()[0]
