"""Seeing the robot (issue 19): ``pkm show`` and :func:`pkm.plotting.show_robot` draw the mechanism
where the kinematics puts it — the drawn joints are read back from the figure's artists."""
from __future__ import annotations

import numpy as np
import pytest

import pkm
from conftest import ROBOTS, run_pkm
from pkm.algorithms.kinematics import forward_kinematics
from pkm.lie import Ad
from pkm.plotting import mechanism, show_robot

FILES = {"delta": "delta_3rr2rrr.toml", "delta_us": "delta_3r2us.toml", "irsbot2": "irsbot2.toml",
         "serial_6r": "serial_6r.toml"}
ROBOT = {k: pkm.load(ROBOTS / f) for k, f in FILES.items()}


def _pose(robot, k):
    """The reference pose moved a little along each task coordinate (k = 0: the reference)."""
    return robot.x_ref + 0.03 * k * np.sin(np.arange(1, robot.task_dof + 1))


def _drawn(fig, gid):
    [line] = [l for l in fig.axes[0].get_lines() if l.get_gid() == gid]
    return np.array(line.get_data_3d()).T


@pytest.mark.parametrize("name", sorted(FILES))
def test_drawn_joints_lie_on_the_joint_axes_of_forward_kinematics(name):
    """Each drawn joint of each limb lies on its joint's axis at the IK solution, the axis taken from
    the world screw ``Ad_{C_i A_i⁻¹} Y_i`` of forward kinematics (``v = p × ω`` on the line); the
    cut joints drawn from their two bodies coincide (the loops are closed); the platform's joints
    move rigidly with the platform frame between two poses."""
    robot = ROBOT[name]
    attach = []
    for k in (0, 1):
        x = _pose(robot, k)
        fig = show_robot(robot, x, axes=True)
        sol = robot.inverse_kinematics(x)
        for limb in robot.limbs:
            P = _drawn(fig, f"joints:{limb.name}")
            C = forward_kinematics(limb.tree, sol.joints[limb.name][0])
            assert P.shape == (limb.n, 3)
            for i in range(limb.n):
                G = C[i] @ np.linalg.inv(limb.tree.A[i])
                S = Ad(G) @ limb.tree.Y[i]
                w, v = S[:3], S[3:]
                if np.linalg.norm(w) > 0:  # revolute: on the line
                    assert np.linalg.norm(v - np.cross(P[i], w)) <= 1e-9 * max(1.0, np.linalg.norm(v))
            if limb.loops:
                cuts = _drawn(fig, f"cuts:{limb.name}").reshape(-1, 2, 3)
                assert np.abs(cuts[:, 0] - cuts[:, 1]).max() <= 1e-9
        Cp = robot.platform_pose(x)
        plat = mechanism(robot, x).platform
        attach.append((plat - Cp[:3, 3]) @ Cp[:3, :3])  # in platform coordinates
        tcp = _drawn(fig, "tcp")[0]
        assert np.allclose(tcp, Cp[:3, 3], atol=1e-12)
    assert np.abs(attach[0] - attach[1]).max() <= 1e-9


def _in_process(*argv, cwd):
    """``pkm ARGV`` in this process (tests/test_corpus.run) with the fields of a CompletedProcess used below."""
    import types

    from test_corpus import run

    code, out, err = run(*argv)
    return types.SimpleNamespace(returncode=code, stdout=out, stderr=err)


def test_cli_show_and_animate_every_robot_in_robots(tmp_path):
    """Every robot file drawn and animated: the first through a fresh interpreter as a user runs it, the others
    in this process (the same command line; ~2 s of interpreter and matplotlib start-up each saved)."""
    files = sorted(ROBOTS.glob("*.toml"))
    assert {f.name for f in files} >= set(FILES.values()) and len(files) >= 7
    for k, f in enumerate(files):
        pkm_run = run_pkm if k == 0 else _in_process
        out = tmp_path / f"{f.stem}.png"
        proc = pkm_run("show", f, "--out", out, cwd=tmp_path)
        assert proc.returncode == 0, (f.name, proc.stderr)
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
        gif = tmp_path / f"{f.stem}.gif"
        proc = pkm_run("animate", f, "--frames", 3, "--out", gif, cwd=tmp_path)
        if pkm.load(f).spec.trajectory is None:  # nothing to animate by default: says how, one line
            assert proc.returncode == 2 and "choose one with --trajectory" in proc.stderr, (f.name, proc.stderr)
            continue
        assert proc.returncode == 0, (f.name, proc.stderr)
        assert gif.read_bytes()[:6] == b"GIF89a"
    proc = run_pkm("show", ROBOTS / FILES["delta"], "--at", 0.1, 0, "--out", tmp_path / "bad.png", cwd=tmp_path)
    assert proc.returncode == 2 and "--at needs 3 task coordinates" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and not (tmp_path / "bad.png").exists()
    proc = run_pkm("show", ROBOTS / FILES["delta"], "--at", 3, 0, -0.9, "--out", tmp_path / "far.png", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and not (tmp_path / "far.png").exists()


def test_animate_draws_each_frame_at_its_pose(tmp_path):
    """The animation's frame k draws the pose of its sample (joints read back from the artists),
    with the torque cursor at that sample's time; the GIF has the frames asked for."""
    from PIL import Image

    from pkm.plotting import animate
    from pkm.trajectory import from_spec

    robot = ROBOT["irsbot2"]
    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd)
    anim = animate(robot, tr.x, tr.t, tau=res.tau, frames=12, path=tmp_path / "a.gif")
    assert len(anim.samples) == 12 and Image.open(tmp_path / "a.gif").n_frames == 12
    fig = anim._fig
    for k in (0, 5, 11):
        anim._func(k)
        s = anim.samples[k]
        m = mechanism(robot, tr.x[s])
        for limb in robot.limbs:
            [line] = [l for l in fig.axes[0].get_lines() if l.get_gid() == f"joints:{limb.name}"]
            assert np.abs(np.array(line.get_data_3d()).T - m.joints[limb.name]).max() <= 1e-9
        assert fig.axes[1].lines[-1].get_xdata()[0] == tr.t[s]


def test_cli_animate(tmp_path):
    out = tmp_path / "cycle.gif"
    proc = run_pkm("animate", ROBOTS / FILES["irsbot2"], "--trajectory", "pick-place", "--frames", 5, "--out", out,
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:6] == b"GIF89a"
    proc = run_pkm("animate", ROBOTS / FILES["irsbot2"], "--frames", 0, "--out", tmp_path / "b.gif", cwd=tmp_path)
    assert proc.returncode == 2 and "--frames must be" in proc.stderr and not (tmp_path / "b.gif").exists()
    proc = run_pkm("animate", ROBOTS / FILES["irsbot2"], "--out", tmp_path / "b.png", cwd=tmp_path)
    assert proc.returncode == 2 and "unsupported" in proc.stderr
