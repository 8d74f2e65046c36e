"""A new user's first hour (issue 19): load-time checks, task coordinates of a rotated platform
frame, error messages that name the trajectory's sample and time, prismatic units, plots, the
everyday options (--version, fk, --payload/--wrench, --degrees), the compile message and
`pkm compile`. The docs and the small robot file are in tests/test_docs.py."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import pkm
from pkm.errors import IKError, RobotFileError

from conftest import ROBOTS, ROOT
from test_bad_input import DELTA_PATH, JOINT_2, mutated, one_line_error, run_main

RPR = ROBOTS / "planar_3rpr.toml"
SERIAL = ROBOTS / "serial_6r.toml"
IRS = ROBOTS / "irsbot2.toml"


# ====================================================================== item 5: load-time checks
def test_load_rejects_too_few_actuators_and_check_false_loads(tmp_path):
    none = mutated(tmp_path, 'axis = [0, -1, 0]\nactuated = true', 'axis = [0, -1, 0]', "none.toml")
    with pytest.raises(RobotFileError, match=r"task: 0 actuated joints for 3 task coordinates \(vx, vy, vz\): too few actuators"):
        pkm.load(none)
    assert pkm.load(none, check=False).n_act == 0      # inverse kinematics only: allowed on request
    # more actuators than task coordinates (joints 1 and 2 of every limb) is redundant actuation (issue 28)
    six = pkm.load(mutated(tmp_path, JOINT_2, JOINT_2 + "\nactuated = true"))
    assert six.n_act == 6 and six.redundancy == 3
    res = six.inverse_dynamics([0.1, 0.0, -0.9], [0.2, 0.1, 0.0], [1.0, 0.0, 0.5])
    assert res.null_space.shape == (1, 6, 3) and np.all(np.isfinite(res.tau))


@pytest.mark.parametrize("command", [["info"], ["ik", "--at", 0.1, 0, -0.9], ["fk", "--q", 0, 0, 0],
                                     ["show", "--out", "x.png"]])
def test_every_command_rejects_too_few_actuators(tmp_path, capsys, command):
    """`pkm info` and `pkm ik` accepted a robot whose actuators cannot hold the platform (eom and
    inverse-dynamics then failed with tracebacks)."""
    path = mutated(tmp_path, 'axis = [0, -1, 0]\nactuated = true', 'axis = [0, -1, 0]', "none.toml")
    args = [command[0], path, *[tmp_path / a if str(a).endswith(".png") else a for a in command[1:]]]
    code, _, err = run_main(capsys, *args)
    one_line_error(code, err, f"{path}: task: 0 actuated joints")


def test_task_components_the_platform_cannot_move_in(tmp_path, capsys):
    """The IRSBot-2 moves in x and z; a task (x, y) was accepted and every IK off x_ref failed."""
    path = tmp_path / "irs_xy.toml"
    path.write_text(IRS.read_text().replace('components = ["vx", "vz"]', 'components = ["vx", "vy"]'))
    assert path.read_text() != IRS.read_text()
    with pytest.raises(RobotFileError, match=r"task: the task components \(vx, vy\) are not all motions .* along vx alone"):
        pkm.load(path)
    code, _, err = run_main(capsys, "info", path)
    one_line_error(code, err, "task components (vx, vy)")


def test_more_task_coordinates_than_platform_dof(tmp_path):
    """A 2-DOF IRSBot-2 asked for x, y, z (and given a third actuator so that the count matches)."""
    text = IRS.read_text().replace('components = ["vx", "vz"]', 'components = ["vx", "vy", "vz"]')
    path = tmp_path / "irs_xyz.toml"
    path.write_text(text)
    from pkm.description.robotfile import load_spec
    from pkm.description.freedom import check_task_mobility

    with pytest.raises(RobotFileError, match="task: 3 task coordinates .* the platform has 2 DOF"):
        check_task_mobility(load_spec(path))


def radial_rpr(tmp_path):
    """The 3-RPR with its legs through the platform centre: at the reference configuration the
    platform can turn about z with all legs locked (a type-II singularity, J_IK singular)."""
    text = RPR.read_text().replace('bx = "rp * cos(radians(60))"', 'bx = "rp"').replace(
        'by = "rp * sin(radians(60))"', 'by = 0')
    path = tmp_path / "radial.toml"
    path.write_text(text)
    return path


def test_info_warns_at_a_singular_reference_and_prints_reference_coordinates(tmp_path, capsys):
    code, out, _ = run_main(capsys, "info", radial_rpr(tmp_path))
    assert code == 0
    assert "warning: the reference configuration is singular" in out and "ill conditioned" in out
    code, out, _ = run_main(capsys, "info", RPR)
    assert "reference task coordinates (every joint variable 0): rz = 0, x = 0, y = 0" in out
    assert "warning" not in out
    code, out, _ = run_main(capsys, "info", SERIAL)     # a serial arm (no loops) too
    assert "reference task coordinates (every joint variable 0): rx = 0, ry = 0, rz = 0, x = -0.065, y = 0.14, z = 0.86" in out


# ====================================================================== item 6: rotated platform frame
def test_task_positions_are_along_the_platform_frames_reference_axes():
    """serial_6r's tool frame is rotated (z = world x, x = world −z): task x, y, z are along those
    axes (documented in docs/robot-file-format.md, "Task coordinates")."""
    robot = pkm.load(SERIAL)
    A = robot.spec.body(robot.spec.platform).frame
    R0, r0 = A[:3, :3], A[:3, 3]
    assert not np.allclose(R0, np.eye(3))
    np.testing.assert_allclose(robot.position_ref, R0.T @ r0, atol=1e-15)
    np.testing.assert_allclose(robot.platform_pose(robot.x_ref), A, atol=1e-15)
    for k, name in enumerate(("x", "y", "z")):
        x = robot.x_ref.copy()
        x[robot.task.coordinate_names().index(name)] += 0.01
        np.testing.assert_allclose(robot.platform_pose(x)[:3, 3] - r0, 0.01 * R0[:, k], atol=1e-15)


def test_cli_default_centre_of_serial_6r_is_its_reachable_reference_pose():
    """The CLI centred trajectories at the world position r0 read as task coordinates, which the
    rotated tool cannot reach."""
    from pkm.cli.main import build_parser
    from pkm.cli.options import load_trajectory, trajectory_dict

    robot = pkm.load(SERIAL)
    args = build_parser().parse_args(["inverse-dynamics", str(SERIAL), "--trajectory", "line", "--end",
                                      "-0.065", "0.2", "0.86"])
    traj_dict = trajectory_dict(robot, args)
    np.testing.assert_allclose(traj_dict["start"], robot.position_ref)
    traj = load_trajectory(robot, args)
    np.testing.assert_allclose(traj.x[0], robot.x_ref, atol=1e-15)
    sol = robot.inverse_kinematics(traj.x[0])
    np.testing.assert_allclose(sol.q_act[0], 0.0, atol=1e-9)   # the reference configuration itself
    help_text = build_parser()._subparsers._group_actions[0].choices["inverse-dynamics"].format_help()
    assert "world coordinates X Y Z" not in help_text and "task axes X Y Z" in help_text


# ====================================================================== item 7: error messages
def test_file_trajectory_asks_for_the_file_option(capsys):
    code, _, err = run_main(capsys, "inverse-dynamics", DELTA_PATH, "--trajectory", "file")
    one_line_error(code, err, "a file trajectory needs --file")


def test_failing_sample_named_by_its_index_and_time_in_the_trajectory(monkeypatch):
    """Samples are computed in segments (here of 256) on threads; the failing one is named by its index
    in the whole trajectory and its time, and it is the first sample the reference IK cannot reach."""
    from pkm.kernels import batch
    from pkm.trajectory import line

    monkeypatch.setattr(batch, "SEGMENT_MAX", batch.SEGMENT)  # segments of 256 whatever N (segment_length)
    robot = pkm.load(DELTA_PATH)
    traj = line(np.array([0.0, 0.0, -0.9]), np.array([2.0, 0.0, -0.9]), 10.0, 0.01)
    with pytest.raises(IKError) as info:
        robot.inverse_dynamics(traj.x, traj.xd, traj.xdd, t=traj.t, threads=2)
    s = info.value.sample
    assert s > 256                                                 # not in the first segment
    assert f"at sample {s} (t = {traj.t[s]:.6g} s, x = " in str(info.value)
    robot.inverse_kinematics(traj.x[s - 1])                        # the one before is reachable …
    with pytest.raises(IKError):
        robot.inverse_kinematics(traj.x[s])                        # … this one is not


# ====================================================================== item 4: prismatic units
def test_prismatic_actuators_in_newtons_and_metres(tmp_path, capsys):
    out, png = tmp_path / "f.csv", tmp_path / "f.png"
    code, stdout, err = run_main(capsys, "inverse-dynamics", RPR, "--out", out, "--plot", png)
    assert code == 0, err
    header = out.read_text().splitlines()[0].split(",")
    assert header == ["t", "rz", "x", "y", "rzd", "xd", "yd", *(f"q_leg{k}/leg [m]" for k in (1, 2, 3)),
                      *(f"tau_leg{k}/leg [N]" for k in (1, 2, 3))]
    assert "Peak |force| / RMS force per actuator: leg1/leg " in stdout and " N;" in stdout and "N·m" not in stdout
    robot = pkm.load(RPR)
    assert robot.actuator_kinds == ["P"] * 3
    # the torque-table reader takes the columns with their unit suffix
    from pkm.sim.inputs import read_table

    table = read_table(out, robot.actuator_names)
    data = np.loadtxt(out, delimiter=",", skiprows=1)
    np.testing.assert_array_equal(table.U, data[:, 10:13])


def test_plot_labels_per_actuator_kind():
    from types import SimpleNamespace

    from pkm.plotting import plot_actuators

    t = np.linspace(0.0, 1.0, 50)
    res = SimpleNamespace(tau=np.ones((50, 2)), q_act=np.zeros((50, 2)), actuator_names=["limb1/1", "leg2/leg"])
    fig = plot_actuators(res, t, kinds=["P", "P"])
    assert [ax.get_ylabel() for ax in fig.axes] == ["actuator force [N]", "actuator position [m]"]
    fig = plot_actuators(res, t, kinds=["R", "P"], degrees=True)
    assert [ax.get_ylabel() for ax in fig.axes] == ["actuator torque [N·m] / force [N]",
                                                    "actuator angle [deg] / position [m]"]
    assert [l.get_label() for l in fig.axes[0].get_lines()] == ["limb1, joint 1 [N·m, deg]", "leg2, leg [N, m]"]


# ====================================================================== item 9: plots
def test_plots_large_sharp_and_identical_curves_distinguishable(tmp_path):
    from types import SimpleNamespace

    from matplotlib.image import imread

    from pkm.plotting import plot_actuators

    t = np.linspace(0.0, 1.0, 101)
    same = np.column_stack([np.sin(t)] * 3)                   # three identical curves
    res = SimpleNamespace(tau=same, q_act=same, actuator_names=["limb1/1", "limb2/1", "limb3/1"])
    fig = plot_actuators(res, t, path=tmp_path / "p.png")
    h, w = imread(tmp_path / "p.png").shape[:2]
    assert w >= 1400 and h >= 1000                            # was 800 × 600
    lines = fig.axes[0].get_lines()
    assert len({(l.get_linestyle(), l.get_marker()) for l in lines}) == 3
    assert len({str(l.get_markevery()) for l in lines}) == 3  # markers staggered: each line's own visible
    assert not any("/" in l.get_label() for l in lines)


def test_sweep_plot_marks_failed_points():
    from pkm.sweep.result import SweepResult

    acts = ["limb1/1"]
    rows = [{"a": a, "trajectory": "T", "status": st, "peak_limb1/1": pk, "rms_limb1/1": pk / 2, "message": ""}
            for a, st, pk in ((1.0, "ok", 3.0), (2.0, "failed", float("nan")), (3.0, "ok", 4.0))]
    res = SweepResult(robot="r.toml", robot_name="r", parameter_names=["a"], parameter_values={"a": [1.0, 2.0, 3.0]},
                      trajectory_labels=["T"], trajectories=[{}], actuator_names=acts, actuator_units=["N·m"],
                      rows=rows)
    fig = res.plot()
    for ax in fig.axes:
        failed = [l for l in ax.get_lines() if l.get_label().startswith("failed")]
        assert len(failed) == 1 and list(failed[0].get_xdata()) == [2.0]


# ====================================================================== item 10: everyday options
def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        run_main(capsys, "--version")
    assert info.value.code == 0 and capsys.readouterr().out.strip() == f"pkm {pkm.__version__}"


@pytest.mark.parametrize("path,q", [(DELTA_PATH, [0.1, 0.2, -0.1]), (RPR, [0.01, 0.02, -0.01]),
                                    (SERIAL, [0.1, 0.2, 0.3, 0.1, -0.2, 0.3])])
def test_fk_gives_back_the_actuators_by_ik(capsys, path, q):
    import json

    code, out, err = run_main(capsys, "fk", path, "--q", *q, "--json")
    assert code == 0, err
    doc = json.loads(out)
    robot = pkm.load(path)
    x = np.array([doc["x"][n] for n in robot.task.coordinate_names()])
    np.testing.assert_allclose(robot.inverse_kinematics(x).q_act[0], q, atol=1e-10)
    np.testing.assert_allclose(robot.platform_pose(x), doc["platform_pose"], atol=1e-12)


def test_fk_unreachable_is_one_line(capsys):
    code, _, err = run_main(capsys, "fk", RPR, "--q", 5, 5, 5)
    one_line_error(code, err, "cannot be assembled")


def test_payload_equals_its_weight_and_inertia_as_a_wrench():
    """A point mass m at the platform origin of the translational Delta acts on the platform as the
    force m (g − a): the inverse dynamics with the payload added to the platform body (mass,
    centre of mass and inertia combined) equals the one with that external force."""
    robot = pkm.load(DELTA_PATH)
    m = 0.8
    heavy = pkm.Robot(robot.spec.with_payload(m))
    x = np.array([[0.05, -0.1, -0.9], [0.1, 0.05, -0.95]])
    xd = np.array([[0.3, 0.1, -0.2], [0.0, 0.4, 0.1]])
    a = np.array([[2.0, -1.0, 3.0], [-4.0, 0.5, 1.0]])
    wrench = np.zeros((2, 6))
    wrench[:, 3:] = m * (robot.spec.gravity - a)          # platform frame = world axes for the Delta
    tau_payload = heavy.inverse_dynamics(x, xd, a).tau
    tau_wrench = robot.inverse_dynamics(x, xd, a, wrench).tau
    np.testing.assert_allclose(tau_payload, tau_wrench, rtol=1e-10, atol=1e-10)
    assert not np.allclose(tau_payload, robot.inverse_dynamics(x, xd, a).tau)


def test_cli_payload_and_wrench(capsys, tmp_path):
    out1, out2 = tmp_path / "a.csv", tmp_path / "b.csv"
    common = ["--trajectory", "line", "--end", 0.1, 0.0, -0.9, "--dt", 0.05]
    code, stdout, err = run_main(capsys, "inverse-dynamics", DELTA_PATH, *common, "--payload", 0.5, "--out", out1)
    assert code == 0 and "with a 0.5 kg payload" in stdout, err
    robot = pkm.load(DELTA_PATH)
    traj = np.loadtxt(out1, delimiter=",", skiprows=1)
    code, stdout, err = run_main(capsys, "inverse-dynamics", DELTA_PATH, *common, "--wrench", 0, 0, 0, 0, 0,
                                 0.5 * robot.spec.gravity[2], "--out", out2)
    assert code == 0, err
    # at the line's ends the platform rests: the payload is its weight there
    b = np.loadtxt(out2, delimiter=",", skiprows=1)
    np.testing.assert_allclose(traj[[0, -1], 7:], b[[0, -1], 7:], rtol=1e-9)
    code, _, err = run_main(capsys, "inverse-dynamics", DELTA_PATH, *common, "--payload", -1)
    one_line_error(code, err, "--payload must be a mass >= 0 kg")


def test_degrees(capsys):
    code, out_deg, _ = run_main(capsys, "ik", RPR, "--at", 5, 0.02, 0.01, "--degrees")
    code2, out_rad, _ = run_main(capsys, "ik", RPR, "--at", np.radians(5), 0.02, 0.01)
    assert code == code2 == 0
    deg = dict(l.split()[:2] for l in out_deg.splitlines() if l.startswith("  "))
    rad = dict(l.split()[:2] for l in out_rad.splitlines() if l.startswith("  "))
    assert "leg1/base" in deg
    for name in deg:
        factor = 1.0 if name.endswith("/leg") else np.degrees(1.0)
        assert float(deg[name]) == pytest.approx(float(rad[name]) * factor, abs=1e-9)


# ====================================================================== item 2: first run
def test_compile_announcer_says_so_once_and_only_on_a_compile():
    import numba

    from pkm.lie.numba_cache import CompileAnnouncer

    messages = []
    f = numba.njit(lambda v: v + 1)
    with CompileAnnouncer(messages.append, root=ROOT / "pkm") as ann:
        assert f(1) == 2 and f(2) == 3
        g = numba.njit(lambda v: v * 2)
        assert g(2) == 4
    assert len(messages) == 1 and messages[0].startswith("compiling kernels (first run only, ~")
    messages.clear()
    with CompileAnnouncer(messages.append, root=ROOT / "pkm"):
        assert f(5) == 6                                      # compiled already: nothing to say
    assert messages == []


def test_first_run_message_in_a_fresh_cache(tmp_path):
    """A trajectory command with an empty numba cache says it compiles before it does; the second run
    does not. A single-point command (`pkm ik`) compiles nothing at all, not even to load the robot
    (pkm.load forms its reference Jacobians as interpreted Python), so it has nothing to say.
    (PKM_COMPILE_MESSAGE=1 overrides the tests' quiet default, tests/conftest.py; =0 is
    tests/test_first_hour_frictions.py's.)"""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), PKM_COMPILE_MESSAGE="1")

    def run(*argv, cache="cache"):
        return subprocess.run([sys.executable, "-m", "pkm", *argv], env=dict(env, NUMBA_CACHE_DIR=str(tmp_path / cache)),
                              capture_output=True, text=True, timeout=600, cwd=ROOT)

    job = ("inverse-dynamics", str(RPR), "--out", str(tmp_path / "t.csv"))
    first, second = run(*job), run(*job)
    assert first.returncode == 0 and second.returncode == 0, first.stderr
    assert "pkm: compiling kernels (first run only, ~" in first.stderr
    assert "compiling" not in second.stderr
    one_point = run("ik", str(RPR), "--at", "0", "0.01", "0", cache="cache2")
    assert one_point.returncode == 0 and one_point.stderr == ""     # nothing compiled, nothing said
    assert not list((tmp_path / "cache2").rglob("*.nbi"))


def test_pkm_compile(capsys):
    code, out, err = run_main(capsys, "compile", RPR)
    assert code == 0, err
    assert f"{RPR}: kernels ready" in err and "1 robot file(s)" in out
    code, _, err = run_main(capsys, "compile", ROBOTS / "nonexistent.toml")
    one_line_error(code, err, "nonexistent.toml")
