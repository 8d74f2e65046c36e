"""The documentation a new user reads first (issue 19, item 8): the complete small robot that opens
docs/robot-file-format.md is robots/planar_3rpr.toml, ≤ 40 lines, and it loads and runs (its
actuator forces checked against the legs' statics, written independently here); the paper is
referenced and cited by its own sections (no "spec §" left); the task-type → coordinate mapping,
the S-joint advice and positions-only trajectory files are documented and work."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

import pkm

from conftest import ROBOTS, ROOT
from test_bad_input import one_line_error, run_main

RPR = ROBOTS / "planar_3rpr.toml"
DOC = ROOT / "docs" / "robot-file-format.md"


def test_doc_opens_with_the_small_robot_file():
    text = DOC.read_text()
    first_block = re.search(r"```toml\n(.*?)```", text, flags=re.S).group(1)
    assert text.index("```toml") < text.index("## Units")          # it opens the page
    assert first_block == RPR.read_text()
    assert len(first_block.splitlines()) <= 40


def test_small_robot_loads_and_runs_inverse_dynamics(tmp_path, capsys):
    robot = pkm.load(RPR)
    assert robot.task.coordinate_names() == ["rz", "x", "y"] and robot.n_act == 3
    code, out, err = run_main(capsys, "inverse-dynamics", RPR, "--out", tmp_path / "f.csv", "--plot", tmp_path / "f.png")
    assert code == 0, err
    data = np.loadtxt(tmp_path / "f.csv", delimiter=",", skiprows=1)
    assert data.shape == (201, 13) and np.all(np.isfinite(data))  # t, rz x y, their rates, q and tau of 3 legs


def _leg_statics(robot, x, wrench_body):
    """Leg forces holding the platform at rest at ``x = (rz, x, y)`` against the external wrench
    ``(m; f)`` (platform axes) in a horizontal plane: each leg (R–P–R, its weight borne out of plane)
    is a two-force member pushing along its unit vector u_i at the platform joint B_i, so
    Σ f_i u_i + F = 0 and Σ (B_i − p) × f_i u_i + M = 0 (z components)."""
    from pkm.description.robotfile import load_spec

    spec = load_spec(RPR)
    rz, px, py = x
    R = np.array([[np.cos(rz), -np.sin(rz), 0], [np.sin(rz), np.cos(rz), 0], [0, 0, 1]])
    p = np.array([px, py, 0.0])
    cols = []
    for mount in ("leg1", "leg2", "leg3"):
        A = spec.joint(f"{mount}/base").point
        B = R @ spec.joint(f"{mount}/top").point + p             # the platform starts at the origin, R0 = I
        u = (B - A) / np.linalg.norm(B - A)
        cols.append([u[0], u[1], np.cross(B - p, u)[2]])
    F = R @ wrench_body[3:]
    M = wrench_body[2]
    return np.linalg.solve(np.array(cols).T, -np.array([F[0], F[1], M]))


@pytest.mark.parametrize("x", [[0.0, 0.0, 0.0], [0.2, 0.03, -0.02]])
def test_small_robot_statics_against_the_legs_force_balance(x):
    """A constant wrench on the resting platform (and the payload option's sign convention: the
    wrench acts on the platform) balanced by the three leg forces."""
    robot = pkm.load(RPR)
    wrench = np.array([0.0, 0.0, 1.5, 20.0, -7.0, 0.0])           # m_z [N·m], f_x, f_y [N], platform axes
    z = np.zeros(3)
    tau = robot.inverse_dynamics(np.array(x), z, z, wrench).tau[0]
    np.testing.assert_allclose(tau, _leg_statics(robot, x, wrench), rtol=1e-10, atol=1e-10)


def test_paper_reference_and_no_spec_citations():
    readme = (ROOT / "README.md").read_text()
    assert "Dynamics of Parallel" in readme and "Manipulators with Hybrid Complex Limbs — Modular Modeling and Parallel" \
        in readme.replace("\n", " ") and "Müller" in readme
    run = subprocess.run([sys.executable, str(ROOT / ".ci" / "spec_citations.py"), "--check"], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-3000:]
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("spec_citations", ROOT / ".ci" / "spec_citations.py")
    mod = module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.rewrite("(spec §4.3)") == "(paper eq. 16, 22, 28, 32)"
    assert mod.rewrite("(spec §8; paper §4–5, eq. 85–98)") == "(paper §4–5, eq. 85–98)"


def test_task_mapping_gimbal_advice_and_positions_only_files_are_documented():
    text = DOC.read_text()
    assert "| `planar` | `(wz, vx, vy)` | `rz x y` |" in text
    assert "gimbal lock" in text and "Task coordinates" in text and "positions only" in text


def test_positions_only_trajectory_is_differentiated(tmp_path, capsys):
    """t, x, y, z only: rates and accelerations from a cubic spline, close to the exact ones of a
    sine sampled at 1 ms (the spline's error there is O(h²) in the accelerations)."""
    from pkm.trajectory import read_csv

    t = np.arange(0.0, 1.0 + 1e-12, 1e-3)
    w = 2 * np.pi
    x = np.column_stack([0.05 * np.sin(w * t), 0.0 * t, -0.9 + 0.02 * np.cos(w * t)])
    path = tmp_path / "pos.csv"
    path.write_text("t,x,y,z\n" + "\n".join(",".join(repr(float(v)) for v in (ti, *xi)) for ti, xi in zip(t, x)))
    tr = read_csv(path)
    inner = slice(20, -20)                                          # away from the not-a-knot ends
    np.testing.assert_allclose(tr.xd[inner, 0], 0.05 * w * np.cos(w * t[inner]), atol=1e-6)
    np.testing.assert_allclose(tr.xdd[inner, 2], -0.02 * w * w * np.cos(w * t[inner]), atol=1e-4)
    code, out, err = run_main(capsys, "inverse-dynamics", ROBOTS / "delta_3rr2rrr.toml", "--trajectory", "file",
                              "--file", path)
    assert code == 0, err
    partial = tmp_path / "partial.csv"
    partial.write_text("t,x,y,z,xd,yd,zd\n0,0,0,-0.9,0,0,0\n0.1,0,0,-0.9,0,0,0\n")
    code, _, err = run_main(capsys, "inverse-dynamics", ROBOTS / "delta_3rr2rrr.toml", "--trajectory", "file",
                            "--file", partial)
    one_line_error(code, err, "missing column 'xdd'", "positions only")


def test_try_it_commands_of_the_doc_run(tmp_path, capsys, monkeypatch):
    """Every command of the doc's "Try it" block exits 0 (run in a scratch directory)."""
    import shlex

    block = re.search(r"Try it:\n\n```bash\n(.*?)```", DOC.read_text(), flags=re.S).group(1)
    commands = [shlex.split(line.split("#")[0]) for line in block.splitlines() if line.strip()]
    assert len(commands) >= 5 and all(c[0] == "pkm" for c in commands)
    monkeypatch.chdir(tmp_path)
    for argv in commands:
        args = [str(ROOT / a) if a.startswith("robots/") else a for a in argv[1:]]
        code, _, err = run_main(capsys, *args)
        assert code == 0, (argv, err)
