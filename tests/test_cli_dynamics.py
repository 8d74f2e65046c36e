"""`pkm inverse-dynamics` and `pkm eom`: run as ``python -m pkm`` in a subprocess from the repo root."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pkm
from pkm.cli import main as cli
from pkm.trajectory import from_spec, line, pick_place

ROOT = Path(__file__).resolve().parents[1]
ROBOTS = ["robots/delta_3rr2rrr.toml", "robots/delta_3r2us.toml", "robots/irsbot2.toml"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
#: A task point inside each robot's workspace (task coordinates).
POINTS = {
    "robots/delta_3rr2rrr.toml": [0.1, -0.05, -0.9],
    "robots/delta_3r2us.toml": [0.1, -0.05, -0.9],
    "robots/irsbot2.toml": [0.05, -0.9],
}
VELOCITIES = {
    "robots/delta_3rr2rrr.toml": [0.3, 0.2, -0.1],
    "robots/delta_3r2us.toml": [0.3, 0.2, -0.1],
    "robots/irsbot2.toml": [0.4, 0.1],
}


def run(*args):
    return subprocess.run([sys.executable, "-m", "pkm", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)


def read_csv(path):
    lines = Path(path).read_text().splitlines()
    header = lines[0].split(",")
    data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    return header, data


def check_against_library(robot_path, header, data, traj, tol=1e-9):
    """The CSV holds the trajectory's samples and the torques of Robot.inverse_dynamics on them."""
    robot = pkm.load(ROOT / robot_path)
    names = robot.task.coordinate_names()
    acts = robot.actuator_names
    units = robot.actuator_units                                    # q_<a> [rad|m], tau_<a> [N·m|N]
    assert header == ["t", *names, *(f"{c}d" for c in names), *(f"q_{a} [{u[1]}]" for a, u in zip(acts, units)),
                      *(f"tau_{a} [{u[0]}]" for a, u in zip(acts, units))]
    d, n = len(names), len(acts)
    assert data.shape == (len(traj), 1 + 2 * d + 2 * n)
    np.testing.assert_array_equal(data[:, 0], traj.t)               # repr floats: exact round trip
    np.testing.assert_array_equal(data[:, 1:1 + d], traj.x)
    np.testing.assert_array_equal(data[:, 1 + d:1 + 2 * d], traj.xd)  # the rates: simulate starts from them
    ref = robot.inverse_dynamics(traj.x, traj.xd, traj.xdd)
    np.testing.assert_allclose(data[:, 1 + 2 * d:1 + 2 * d + n], ref.q_act, rtol=0, atol=tol)
    np.testing.assert_allclose(data[:, 1 + 2 * d + n:], ref.tau, rtol=0, atol=tol)
    assert np.isfinite(data).all()
    return robot, ref


def check_png(path):
    path = Path(path)
    assert path.is_file() and path.stat().st_size > 1000
    assert path.read_bytes()[:8] == PNG_MAGIC


# ---------------------------------------------------------------------- inverse-dynamics
@pytest.mark.parametrize("robot_path", ROBOTS)
def test_default_trajectory_shortened(robot_path, tmp_path):
    out, png = tmp_path / "tau.csv", tmp_path / "tau.png"
    proc = run("inverse-dynamics", robot_path, "--duration", 0.2, "--dt", 0.02, "--out", out, "--plot", png)
    assert proc.returncode == 0, proc.stderr
    header, data = read_csv(out)
    assert data.shape[0] == 11
    spec = pkm.load(ROOT / robot_path).spec
    traj = from_spec(dict(spec.trajectory, duration=0.2, dt=0.02), spec.task.coordinate_names())
    robot, ref = check_against_library(robot_path, header, data, traj)
    check_png(png)
    # one summary paragraph: robot, samples, per-actuator peak/RMS, where the files went
    summary = proc.stdout.strip()
    assert "\n" not in summary
    assert robot.name in summary and "11 samples" in summary
    assert str(out) in summary and str(png) in summary
    for name, peak in zip(robot.actuator_names, np.abs(ref.tau).max(axis=0)):
        assert f"{name} {peak:.4g} / " in summary
    assert proc.stderr == ""            # 11 samples: no progress bar


def test_pick_place_irsbot2_defaults(tmp_path):
    """--trajectory pick-place on the IRSBot-2: x–z plane, 25 mm lift, 305 mm travel along x."""
    out = tmp_path / "pp.csv"
    proc = run("inverse-dynamics", "robots/irsbot2.toml", "--trajectory", "pick-place", "--cycle-time", 0.4,
               "--dt", 0.01, "--out", out)
    assert proc.returncode == 0, proc.stderr
    header, data = read_csv(out)
    assert header[:3] == ["t", "x", "z"]
    spec = pkm.load(ROOT / "robots/irsbot2.toml").spec
    centre = spec.trajectory["center"][[0, 2]]           # the default (sine) trajectory's centre, (x, z)
    traj = pick_place(centre, 0.025, 0.305, 0.4, dt=0.01, names=("x", "z"))
    check_against_library("robots/irsbot2.toml", header, data, traj)
    assert data[:, 1].max() - data[:, 1].min() == pytest.approx(0.305)
    assert data[:, 2].max() - data[:, 2].min() == pytest.approx(0.025)


def test_line_with_world_vectors_delta(tmp_path):
    out = tmp_path / "line.csv"
    proc = run("inverse-dynamics", "robots/delta_3rr2rrr.toml", "--trajectory", "line", "--start", 0, 0, -0.9,
               "--end", 0.1, 0.05, -0.85, "--duration", 0.3, "--dt", 0.03, "--out", out)
    assert proc.returncode == 0, proc.stderr
    header, data = read_csv(out)
    traj = line([0, 0, -0.9], [0.1, 0.05, -0.85], 0.3, dt=0.03)
    check_against_library("robots/delta_3rr2rrr.toml", header, data, traj)


def test_irsbot2_world_vectors_select_x_and_z(tmp_path):
    """--center is a world X Y Z vector; the IRSBot-2 keeps x and z (y of a position is ignored)."""
    out = tmp_path / "s.csv"
    proc = run("inverse-dynamics", "robots/irsbot2.toml", "--center", 0.02, 0.7, -0.9, "--amplitude", 0.05, 0, 0.02,
               "--period", 0.5, "--duration", 0.1, "--dt", 0.01, "--out", out)
    assert proc.returncode == 0, proc.stderr
    header, data = read_csv(out)
    spec = pkm.load(ROOT / "robots/irsbot2.toml").spec
    traj = from_spec({"type": "sine", "center": np.array([0.02, 0.7, -0.9]), "amplitude": np.array([0.05, 0, 0.02]),
                      "period": 0.5, "duration": 0.1, "dt": 0.01}, spec.task.coordinate_names())
    check_against_library("robots/irsbot2.toml", header, data, traj)
    assert data[0, 1:3].tolist() == [0.02, -0.9]


def test_chunks_join_up_and_show_progress(capsys, monkeypatch):
    """Evaluation in segments (with the progress bar advancing per segment) gives the torques of
    one inverse_dynamics call, to the bit: the CLI makes that call."""
    from pkm.kernels import batch

    monkeypatch.setattr(batch, "SEGMENT", 4)
    monkeypatch.setattr(batch, "SEGMENT_MAX", 4)  # segments of 4 samples whatever N (segment_length)
    robot = pkm.load(ROOT / "robots/delta_3rr2rrr.toml")
    traj = from_spec(dict(robot.spec.trajectory, duration=0.3, dt=0.02), robot.task.coordinate_names())
    res = cli.run_inverse_dynamics(robot, traj, progress=True)
    assert "16/16" in capsys.readouterr().err
    ref = pkm.load(ROOT / "robots/delta_3rr2rrr.toml").inverse_dynamics(traj.x, traj.xd, traj.xdd, t=traj.t)
    assert res.tau.shape == ref.tau.shape == (16, 3)
    np.testing.assert_array_equal(res.tau, ref.tau)
    for name in ref.joints:
        np.testing.assert_array_equal(res.joints[name], ref.joints[name])
    assert res.J_IK.shape == ref.J_IK.shape and res.limb_wrenches.shape == ref.limb_wrenches.shape


def test_progress_bar_on_long_runs(tmp_path):
    proc = run("inverse-dynamics", "robots/irsbot2.toml", "--duration", 0.402, "--dt", 0.002)
    assert proc.returncode == 0, proc.stderr
    assert "202 samples" in proc.stdout
    assert "202/202" in proc.stderr and "sample" in proc.stderr


def test_plot_actuators_returns_figure(tmp_path):
    from pkm.plotting import plot_actuators

    robot = pkm.load(ROOT / "robots/irsbot2.toml")
    traj = from_spec(dict(robot.spec.trajectory, duration=0.04, dt=0.01), robot.task.coordinate_names())
    res = robot.inverse_dynamics(traj.x, traj.xd, traj.xdd)
    fig = plot_actuators(res, traj.t, path=tmp_path / "f.png", title="IRSBot-2", degrees=True)
    check_png(tmp_path / "f.png")
    top, bottom = fig.axes
    assert top.get_ylabel() == "actuator torque [N·m]" and bottom.get_ylabel() == "actuator angle [deg]"
    from pkm.plotting import display_name

    assert [l.get_label() for l in top.get_lines()] == [display_name(n) for n in robot.actuator_names]
    assert [l.get_label() for l in top.get_lines()] == ["limb1, joint 1", "limb2, joint 1"]
    np.testing.assert_array_equal(top.get_lines()[1].get_ydata(), res.tau[:, 1])
    np.testing.assert_allclose(bottom.get_lines()[0].get_ydata(), np.degrees(res.q_act[:, 0]))


# ---------------------------------------------------------------------- eom
@pytest.mark.parametrize("robot_path", ROBOTS)
def test_eom_json(robot_path):
    x, v = POINTS[robot_path], VELOCITIES[robot_path]
    proc = run("eom", robot_path, "--at", *x, "--velocity", *v, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    robot = pkm.load(ROOT / robot_path)
    d, n = robot.task_dof, robot.n_act
    assert {"M_t", "C_t_V_t", "W_t_grav", "J_IK", "M_a", "x", "velocity"} <= set(doc)
    shapes = {"M_t": (d, d), "C_t_V_t": (d,), "W_t_grav": (d,), "J_IK": (n, d), "M_a": (n, n)}
    for key, shape in shapes.items():
        assert np.array(doc[key]).shape == shape, key
    assert doc["x"] == x and doc["velocity"] == v
    np.testing.assert_allclose(doc["M_t"], robot.mass_matrix(np.array(x)), rtol=0, atol=1e-12)
    ref = robot.eom(np.array(x), np.array(v))
    for key in shapes:
        np.testing.assert_allclose(doc[key], getattr(ref, key), rtol=0, atol=1e-12, err_msg=key)
    assert np.abs(doc["C_t_V_t"]).max() > 0     # a moving platform has velocity terms


def test_eom_velocity_defaults_to_zero_and_text_output():
    proc = run("eom", "robots/irsbot2.toml", "--at", 0.0, -0.9, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["velocity"] == [0.0, 0.0]
    assert np.abs(doc["C_t_V_t"]).max() < 1e-12
    text = run("eom", "robots/irsbot2.toml", "--at", 0.0, -0.9)
    assert text.returncode == 0, text.stderr
    for label in ("M_t", "C_t·V_t", "W_t^grav", "J_IK", "M_a"):
        assert label in text.stdout


# ---------------------------------------------------------------------- errors
ERRORS = [
    # (arguments, a fragment of the one-line message)
    (["inverse-dynamics", "robots/delta_3rr2rrr.toml", "--center", 0, 0, -5, "--duration", 0.2, "--dt", 0.02],
     "inverse-kinematics"),
    (["inverse-dynamics", "robots/delta_3rr2rrr.toml", "--lift", 0.1], "--lift does not apply to a sine"),
    (["inverse-dynamics", "robots/irsbot2.toml", "--trajectory", "pick-place", "--duration", 1], "--duration"),
    (["inverse-dynamics", "robots/delta_3rr2rrr.toml", "--duration", 0.3, "--dt", 0.07], "multiple of dt"),
    (["inverse-dynamics", "robots/delta_3rr2rrr.toml", "--trajectory", "line"], "needs --end"),
    (["inverse-dynamics", "robots/delta_3rr2rrr.toml", "--trajectory", "file", "--file", "no/such.csv"], "no/such.csv"),
    (["inverse-dynamics", "robots/irsbot2.toml", "--amplitude", 0.1, 0.1, 0], "y component"),
    (["inverse-dynamics", "robots/delta_3rr2rrr.toml", "--out", "no/such/dir/t.csv"], "does not exist"),
    (["inverse-dynamics", "robots/delta_3rr2rrr.toml", "--plot", "t.xyz"], "image format"),
    (["inverse-dynamics", "robots/no_such_robot.toml"], "no_such_robot.toml"),
    (["eom", "robots/irsbot2.toml", "--at", 0, 0, -0.9], "--at needs 2"),
    (["eom", "robots/delta_3rr2rrr.toml", "--at", 0, 0, -0.9, "--velocity", 1], "--velocity needs 3"),
    (["eom", "robots/delta_3rr2rrr.toml", "--at", 3, 0, -0.9], "inverse-kinematics"),
]


@pytest.mark.parametrize("args, fragment", ERRORS, ids=[" ".join(map(str, a[2:])) or a[1] for a, _ in ERRORS])
def test_errors_one_line_exit_2(args, fragment, tmp_path):
    proc = run(*args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip("\n").splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("pkm: error: ") and fragment in lines[0], lines[0]
    assert proc.stdout == ""


def test_unknown_trajectory_type_is_a_usage_error():
    proc = run("inverse-dynamics", "robots/delta_3rr2rrr.toml", "--trajectory", "circle")
    assert proc.returncode == 2
    last = proc.stderr.strip().splitlines()[-1]
    assert "invalid choice: 'circle'" in last and last.startswith("pkm inverse-dynamics: error:")
