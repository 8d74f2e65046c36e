"""Singularity maps (``pkm.workspace``, ``pkm workspace``, issue 17 item 5).

The references are written here from the robot files' geometry, independent of pkm's IK: a Delta
limb (3RR[2RR]R parallelogram or 3R[2US] rod pair: either way the midline of its rods, from the
elbow E to the platform attachment P, keeps the rod length c) reaches P exactly when the elbow
circle (radius a about the shoulder S, in the plane normal to the shoulder axis u) comes within c
of P and not all of it is closer than c:

    (ρ − a)² + w² ≤ c² ≤ (ρ + a)² + w²,     w = (P − S)·u,  ρ = √(|P − S|² − w²).

The left equality is the stretched arm (S, E, P aligned in the limb's plane: |P − S| = a + c
where w = 0), the right one the folded arm. The actuator rate follows from d/dt|P − E|² = 0:
θ̇ = sᵀṗ / (sᵀE'(θ)), s = P − E — the rows of J_IK, and, with unit rows, the forearm directions
(the direct-kinematics matrix whose singularity is type II).
"""
from __future__ import annotations

import math
import subprocess
import sys
import tomllib

import numpy as np
import pytest

import pkm
from pkm.algorithms.inverse_kinematics import solve_limb
from pkm.cli.main import main

from conftest import ROBOTS

DELTAS = ["delta_3rr2rrr.toml", "delta_3r2us.toml"]


def geometry(name):
    """(R0, Rp, a, c) in m and the mount angles (rad) read from the robot file."""
    doc = tomllib.loads((ROBOTS / name).read_text())
    P = doc["parameters"]
    assert doc["units"] == "mm"
    angles = [math.radians(m["frame"]["angle_deg"]) for m in doc["limb"]["mounts"]]
    return tuple(P[k] / 1000.0 for k in ("R0", "Rp", "a", "c")), angles


def _rz(phi):
    c, s = math.cos(phi), math.sin(phi)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def limb_margins(name, X):
    """Per limb (L, N): the stretched-arm margin c² − (ρ − a)² − w² and the folded-arm margin
    (ρ + a)² + w² − c² (both ≥ 0 where the limb reaches the platform position X (N, 3))."""
    (R0, Rp, a, c), angles = geometry(name)
    out, fold = [], []
    for phi in angles:
        R = _rz(phi)
        d = X + R @ [-Rp, 0.0, 0.0] - R @ [-R0, 0.0, 0.0]
        w = d @ (R @ [0.0, 1.0, 0.0])
        rho = np.sqrt(np.maximum((d * d).sum(axis=1) - w * w, 0.0))
        out.append(c * c - (rho - a) ** 2 - w * w)
        fold.append((rho + a) ** 2 + w * w - c * c)
    return np.array(out), np.array(fold)


def reachable_closed_form(name, X):
    out, fold = limb_margins(name, X)
    return ((out >= 0.0) & (fold >= 0.0)).all(axis=0)


def closed_form_ik(name, X, q):
    """Check ``q`` (N, 3) against the closed form and return (J_IK (N, 3, 3), forearm matrix (N, 3, 3))."""
    (R0, Rp, a, c), angles = geometry(name)
    J, S = np.empty((len(X), 3, 3)), np.empty((len(X), 3, 3))
    for i, phi in enumerate(angles):
        R = _rz(phi)
        th = q[:, i]
        E = R @ [-R0, 0.0, 0.0] + (R @ np.stack([-a * np.cos(th), 0 * th, -a * np.sin(th)])).T
        dE = (R @ np.stack([a * np.sin(th), 0 * th, -a * np.cos(th)])).T
        s = X + R @ [-Rp, 0.0, 0.0] - E
        np.testing.assert_allclose(np.linalg.norm(s, axis=1), c, rtol=0, atol=1e-10)  # the rods close
        J[:, i] = s / np.einsum("nk,nk->n", s, dE)[:, None]
        S[:, i] = s / c
    return J, S


def mismatches_within_one_cell(name, wmap):
    """Indices where pkm's reachability differs from the closed form, and whether the closed-form
    boundary passes within one grid cell of each (the cell square sampled 21 × 21)."""
    cf = reachable_closed_form(name, wmap.x)
    bad = np.flatnonzero(cf != wmap.reachable)
    cols = [wmap.names.index(n) for n in wmap.free]
    steps = [a[1] - a[0] for a in wmap.axes]
    near = []
    for s in bad:
        offs = np.meshgrid(*[np.linspace(-h, h, 21) for h in steps], indexing="ij")
        P = np.repeat(wmap.x[s][None], offs[0].size, axis=0)
        for c, o in zip(cols, offs):
            P[:, c] += o.ravel()
        near.append(len(set(reachable_closed_form(name, P).tolist())) == 2)
    return bad, np.array(near, bool)


SLICES = [({"x": (-1.5, 1.5), "z": (-1.6, 0.6)}, (31, 23), {"y": 0.0}),     # vertical, through limb 1's plane
          ({"x": (-1.0, 1.0), "y": (-1.0, 1.0)}, (25, 25), {"z": -0.9}),    # horizontal
          ({"x": (-1.2, 1.2), "z": (-1.5, -0.3)}, (25, 13), {"y": 0.2})]   # vertical, off the centre


@pytest.mark.parametrize("name", DELTAS)
@pytest.mark.parametrize("ranges,res,fixed", SLICES)
def test_stretched_arm_boundary_within_one_cell(name, ranges, res, fixed):
    wmap = pkm.workspace(ROBOTS / name, ranges, resolution=list(res), fixed=fixed)
    assert wmap.grid(wmap.reachable).shape == res
    cf = reachable_closed_form(name, wmap.x)
    assert 0.05 * cf.size < cf.sum() < 0.95 * cf.size  # the slice holds both, so it has a boundary
    # the stretched-arm condition is what fails next to the reachable region (not only the folded one)
    out, fold = limb_margins(name, wmap.x)
    reach_grid = wmap.grid(cf)
    edge = np.zeros_like(reach_grid)
    for ax in range(2):
        for sh in (1, -1):
            edge |= np.roll(reach_grid, sh, axis=ax)
    edge = (edge & ~reach_grid).ravel()
    assert ((out < 0).any(axis=0) & edge).sum() >= 10
    bad, near = mismatches_within_one_cell(name, wmap)
    assert near.all(), wmap.x[bad[~near]]
    assert len(bad) <= 0.02 * cf.sum()


@pytest.mark.parametrize("name", DELTAS)
def test_boundary_on_a_line_and_type_one_growth(name):
    """Along y = 0 at z = −0.9 the boundary on the +x side is limb 1's stretched arm, in its own
    plane: |P − S| = a + c, x_b = √((a + c)² − z²) + R0 − Rp. cond_IK grows like δ^(−1/2) at a
    distance δ from it (a fold of the limb's IK), J_IK's too; cond_FK (type II) stays bounded."""
    (R0, Rp, a, c), _ = geometry(name)
    z = -0.9
    xb = math.sqrt((a + c) ** 2 - z * z) - R0 + Rp
    robot = pkm.load(ROBOTS / name)
    inside = pkm.workspace(robot, {"x": (0.0, xb - 1e-6)}, resolution=11, fixed={"y": 0.0, "z": z})
    outside = pkm.workspace(robot, {"x": (xb + 1e-6, xb + 0.2)}, resolution=5, fixed={"y": 0.0, "z": z})
    assert inside.reachable.all() and not outside.reachable.any()
    delta = np.array([1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6])
    maps = [pkm.workspace(robot, {"x": (xb - d - 1e-9, xb - d)}, resolution=2, fixed={"y": 0.0, "z": z})
            for d in delta]
    cik = np.array([m.cond_IK[-1] for m in maps])
    cj = np.array([m.cond_JIK[-1] for m in maps])
    cfk = np.array([m.cond_FK[-1] for m in maps])
    np.testing.assert_allclose(cik[2:] * np.sqrt(delta[2:]), cik[-1] * np.sqrt(delta[-1]), rtol=0.02)
    assert np.all(np.diff(cik) > 0) and np.all(np.diff(cj) > 0) and cj[-1] > 1e3
    assert cfk[-1] < 1.1 * cfk[-2] and cfk[-1] < 200.0
    # on the 11-point line the type-I condition number rises towards the boundary
    assert np.all(np.diff(inside.cond_IK[-4:]) > 0) and inside.cond_IK[-1] > 100 * inside.cond_IK[0]


@pytest.mark.parametrize("name", DELTAS)
def test_map_equals_closed_form_and_reference_ik(name):
    """Actuator angles close the rods; J_IK equals sᵀ/(sᵀE'); cond_FK is the condition number of the
    forearm directions; every limb's cond(L_p) that of the reference path's L_p; q_act as pkm ik."""
    robot = pkm.load(ROBOTS / name)
    wmap = pkm.workspace(robot, {"x": (-0.5, 0.5), "y": (-0.4, 0.4)}, resolution=[5, 4], fixed={"z": -1.0})
    assert wmap.reachable.all()
    J, S = closed_form_ik(name, wmap.x, wmap.q_act)
    np.testing.assert_allclose(wmap.J_IK, J, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(wmap.cond_FK, np.linalg.cond(S), rtol=1e-9)
    np.testing.assert_allclose(wmap.cond_JIK, np.linalg.cond(J), rtol=1e-9)
    for s in (0, 7, 19):
        sol = robot.inverse_kinematics(wmap.x[s])
        np.testing.assert_allclose(sol.q_act[0], wmap.q_act[s], atol=1e-10)
        Cd = robot.platform_pose(wmap.x[s])
        for k, limb in enumerate(robot.limbs):
            ref = solve_limb(limb, Cd, sol.joints[limb.name][0])
            assert wmap.cond_Lp[s, k] == pytest.approx(np.linalg.cond(ref.Lp_pinv), rel=1e-8)
        assert wmap.cond_IK[s] == pytest.approx(wmap.cond_Lp[s].max(), rel=1e-15)


def test_unreachable_points_are_reported_not_raised():
    wmap = pkm.workspace(ROBOTS / "delta_3rr2rrr.toml", {"z": (-3.0, -2.0)}, resolution=4)
    assert not wmap.reachable.any()
    assert np.isnan(wmap.cond_IK).all() and np.isnan(wmap.q_act).all()
    assert wmap.status_text(0).startswith("unreachable (")


# ---------------------------------------------------------------------- command line
def _cli_error(capsys, *argv):
    code = main(list(map(str, argv)))
    err = capsys.readouterr().err
    lines = [l for l in err.splitlines() if l.startswith("pkm: error:")]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_cli_writes_csv_and_png(tmp_path):
    out, png = tmp_path / "map.csv", tmp_path / "map.png"
    run = subprocess.run([sys.executable, "-m", "pkm", "workspace", str(ROBOTS / "delta_3rr2rrr.toml"),
                          "--slice", "z=-0.9", "--range", "x=-1:1", "--range", "y=-1:1", "--resolution", "12,10",
                          "--out", str(out), "--plot", str(png)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "reachable" in run.stdout and "Wrote" in run.stdout
    lines = out.read_text().splitlines()
    header = lines[0].split(",")
    assert header[:7] == ["x", "y", "z", "reachable", "cond_IK", "cond_FK", "cond_JIK"] and header[-1] == "status"
    assert len(lines) == 1 + 12 * 10
    rows = [l.split(",") for l in lines[1:]]
    X = np.array([[float(v) for v in r[:3]] for r in rows])
    reach = np.array([r[3] == "1" for r in rows])
    np.testing.assert_array_equal(reach, reachable_closed_form("delta_3rr2rrr.toml", X))
    assert all(float(r[4]) > 1.0 for r, ok in zip(rows, reach) if ok)
    assert all(r[4] == "nan" and r[-1].startswith("unreachable") for r, ok in zip(rows, reach) if not ok)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("argv,phrase", [
    (["--range", "x=1:0"], "LO < HI"),
    (["--range", "x=0:1:2"], "LO:HI"),
    (["--range", "q=0:1"], "no task coordinate 'q'"),
    (["--slice", "z=abc"], "expected a number"),
    (["--slice", "z=nan"], "finite"),
    (["--slice", "z"], "NAME=VALUE"),
    (["--range", "x=0:1", "--slice", "x=0.5"], "both a range and a fixed"),
    (["--range", "x=0:1", "--range", "x=0:2"], "given twice"),
    (["--resolution", "1"], "at least 2"),
    (["--resolution", "ten"], "whole numbers"),
    (["--resolution", "5,5,5"], "3 values for 2 coordinates"),
    (["--range", "x=0:1", "--range", "y=0:1", "--range", "z=-1:-0.5", "--resolution", "3", "--plot", "m.png"],
     "2-D slice"),
    (["--out", "/nonexistent-dir/m.csv"], "m.csv"),
])
def test_cli_bad_arguments(capsys, tmp_path, monkeypatch, argv, phrase):
    monkeypatch.chdir(tmp_path)
    line = _cli_error(capsys, "workspace", ROBOTS / "delta_3rr2rrr.toml", *argv)
    assert phrase in line, line
    assert not (tmp_path / "m.png").exists()


def test_cli_bad_robot_file(capsys, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("name = 'x'\n[task]\ntype = 'nonsense'\n")
    line = _cli_error(capsys, "workspace", bad)
    assert str(bad) in line
