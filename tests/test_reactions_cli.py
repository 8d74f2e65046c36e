"""``pkm reactions`` (issue 16): joint reactions along a trajectory from the absolute-coordinate
formulation, written as CSV and plotted."""
from __future__ import annotations

import numpy as np

import pkm
from conftest import ROBOTS, run_pkm
from pkm.trajectory import from_spec


def test_cli_reactions_csv_plot_and_checks(tmp_path):
    """At 3 samples of the IRSBot-2's default motion: the drives' torques in the CSV equal pkm's
    minimal-coordinate inverse dynamics (≤ 1e-8 of the peak), and the base revolute joints carry no
    moment about their own (fixed) axes — the drive does; a plot is written; bad input is one line."""
    robot = pkm.load(ROBOTS / "irsbot2.toml")
    out, png = tmp_path / "r.csv", tmp_path / "r.png"
    proc = run_pkm("reactions", ROBOTS / "irsbot2.toml", "--samples", 3, "--out", out, "--plot", png, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "redundant rows carry no force" in proc.stdout and png.read_bytes()[:4] == b"\x89PNG"
    lines = out.read_text().splitlines()
    header = lines[0].split(",")
    data = np.array([[float(v) for v in l.split(",")] for l in lines[1:]])
    assert data.shape == (3, len(header))
    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t)
    rows = [int(np.argmin(np.abs(tr.t - t))) for t in data[:, 0]]
    tau = data[:, [header.index(f"tau_{a} [{u[0]}]") for a, u in zip(robot.actuator_names, robot.actuator_units)]]
    assert np.abs(tau - res.tau[rows]).max() <= 1e-8 * np.abs(res.tau).max()
    _, joints = robot.spec.expanded()
    for j in joints:
        if j.actuated and j.parent == robot.spec.ground:
            M = data[:, [header.index(f"M_{j.name}_{a}") for a in "xyz"]]
            F = data[:, [header.index(f"F_{j.name}_{a}") for a in "xyz"]]
            axis = np.asarray(j.axes[0], dtype=float) / np.linalg.norm(j.axes[0])
            assert np.abs(M @ axis).max() <= 1e-9 * max(1.0, np.abs(M).max(), np.abs(tau).max())
            assert np.abs(F).max() > 1.0  # the joint does carry the arm
    proc = run_pkm("reactions", ROBOTS / "irsbot2.toml", "--samples", 0, cwd=tmp_path)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and "--samples" in proc.stderr
