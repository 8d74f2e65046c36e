"""Torques only, ``out=`` and streaming over blocks (issue 18, item 3): the same actuator forces as the
full result, sample numbers of errors counted over the whole trajectory, bad ``out`` rejected."""

from __future__ import annotations

import numpy as np
import pytest

import pkm
from pkm.kernels import batch, stream
from pkm.trajectory import from_spec

from conftest import ROBOTS

FILES = ["delta_3rr2rrr.toml", "irsbot2.toml", "delta_3r2us.toml"]


def _samples(robot, count):
    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    return tr.x[:count], tr.xd[:count], tr.xdd[:count], tr.t[:count]


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of two segments (and the overlapping sample), so that a test trajectory crosses several
    block boundaries."""
    monkeypatch.setattr(batch, "SEGMENT_MAX", batch.SEGMENT)  # segments of SEGMENT samples whatever N
    monkeypatch.setattr(stream, "STREAM", 2 * batch.SEGMENT)


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("with_times", [True, False], ids=["t", "no-t"])
def test_streamed_torques_equal_the_full_result(name, with_times, small_blocks):
    robot = pkm.load(ROBOTS / name)
    X, XD, XDD, t = _samples(robot, 1100)  # 3 blocks of 512 and a short one
    t = t if with_times else None
    full = robot.inverse_dynamics(X, XD, XDD, t=t)
    seen = []
    tau = robot.inverse_dynamics(X, XD, XDD, t=t, torques_only=True, progress=seen.append)
    assert tau.shape == (len(X), robot.n_act)
    np.testing.assert_allclose(tau, full.tau, rtol=0, atol=1e-12 * np.abs(full.tau).max())
    assert sum(seen) == len(X)
    out = np.full((len(X), robot.n_act), np.nan)
    assert robot.inverse_dynamics(X, XD, XDD, t=t, torques_only=True, out=out, threads=2) is out
    np.testing.assert_allclose(out, full.tau, rtol=0, atol=1e-12 * np.abs(full.tau).max())


def test_blocks_reuse_their_arrays(small_blocks, monkeypatch):
    """The per-block arrays of the stream are allocated once and reused (``blocks(pool=…)``): no fresh
    memory, whose pages would be faulted in anew, for every block."""
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    X, XD, XDD, t = _samples(robot, 1100)
    real, starts = batch.blocks, []
    monkeypatch.setattr(batch, "blocks", lambda *shapes, **kw: starts.append(
        (kw.get("pool") is not None, (a := real(*shapes, **kw))[0].__array_interface__["data"][0])) or a)
    tau = robot.inverse_dynamics(X, XD, XDD, t=t, torques_only=True)
    pooled = [s for p, s in starts if p]
    assert len(pooled) >= 4 and len(set(pooled)) == 2  # every block: its two arrays, the same two
    full = robot.inverse_dynamics(X, XD, XDD, t=t).tau
    np.testing.assert_allclose(tau, full, rtol=0, atol=1e-12 * np.abs(full).max())


def test_full_result_into_out():
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    X, XD, XDD, t = _samples(robot, 50)
    out = np.full((50, 3), np.nan)
    res = robot.inverse_dynamics(X, XD, XDD, out=out)
    assert res.tau is out
    np.testing.assert_array_equal(out, robot.inverse_dynamics(X, XD, XDD).tau)


def test_streamed_wrench_per_sample(small_blocks):
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    X, XD, XDD, t = _samples(robot, 600)
    W = np.random.default_rng(1).normal(size=(600, 6))
    full = robot.inverse_dynamics(X, XD, XDD, W, t=t)
    tau = robot.inverse_dynamics(X, XD, XDD, W, t=t, torques_only=True)
    np.testing.assert_allclose(tau, full.tau, rtol=0, atol=1e-12 * np.abs(full.tau).max())


def test_a_failure_in_a_later_block_names_the_global_sample(small_blocks):
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    X, XD, XDD, t = _samples(robot, 1100)
    X = X.copy()
    X[700] = [3.0, 0.0, -1.0]  # unreachable, in the second block
    with pytest.raises(pkm.IKError, match="sample 700") as info:
        robot.inverse_dynamics(X, XD, XDD, torques_only=True)
    assert info.value.sample == 700


@pytest.mark.parametrize("bad", [np.zeros((5, 3)), np.zeros((50, 3), np.float32), np.zeros((3, 50)).T,
                                 np.zeros((50, 2)), [[0.0] * 3] * 50])
@pytest.mark.parametrize("torques_only", [True, False])
def test_out_that_cannot_be_filled_is_rejected(bad, torques_only):
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    X, XD, XDD, t = _samples(robot, 50)
    if not torques_only and isinstance(bad, np.ndarray) and bad.dtype == np.float64 and bad.shape == (50, 3):
        pytest.skip("the full result copies into any writeable (N, n_act) float64 array")
    with pytest.raises(ValueError, match="out must be"):
        robot.inverse_dynamics(X, XD, XDD, out=bad, torques_only=torques_only)


# ----------------------------------------------------------------------------- the loops around the kernel
def _every_robot():
    from conftest import TESTS
    from pkm.errors import PkmError

    out = []
    for path in sorted([*ROBOTS.glob("*.toml"), *(TESTS / "robots_ok").glob("*.toml")]):
        try:
            out.append(pkm.load(path))
        except PkmError:  # not a PKM with a task space
            continue
    return out


def _numpy_translational_states(robot, X, XD, XDD):
    """The vectorised numpy formulation of the translational target states (what the batch used before
    :func:`pkm.kernels.platform.translational_states_into`)."""
    N = X.shape[0]
    local = np.tile(robot.R0.T @ robot.r0, (N, 1))
    Vp, dVp = np.zeros((N, 6)), np.zeros((N, 6))
    for i, c in enumerate(robot.task.components):
        axis = "xyz".index(c[1])
        local[:, axis], Vp[:, 3 + axis], dVp[:, 3 + axis] = X[:, i], XD[:, i], XDD[:, i]
    Cd = np.tile(np.eye(4), (N, 1, 1))
    Cd[:, :3, :3] = robot.R0
    Cd[:, :3, 3] = local @ robot.R0.T
    return Cd, Vp, dVp


def test_platform_states_of_every_task_space():
    """:func:`pkm.kernels.batch.platform_states` (numba for translational task spaces, numpy with
    rotations) equals the robot's own ``platform_pose``/``platform_twist`` sample by sample for every
    robot file (3-D and planar translations, the hexapod's six coordinates, the wrist's rotations,
    the planar 3RPR, a tilt-heave task; also with a platform frame turned against the world), and
    the translational ones equal numpy's vectorised formulation to rounding."""
    from pkm.lie import exp_so3

    robots = _every_robot()
    kinds = {r.task.components for r in robots}
    assert {("vx", "vy", "vz"), ("vx", "vz"), ("wx", "wy", "wz"), ("wx", "wy", "wz", "vx", "vy", "vz"),
            ("wz", "vx", "vy")} <= kinds
    rng = np.random.default_rng(3)
    turned = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    turned.R0, turned.r0 = exp_so3(np.array([0.3, -0.5, 0.7])), np.array([0.1, -0.2, -0.7])
    for robot in robots + [turned]:
        n = robot.task_dof
        X = robot.x_ref + 0.05 * rng.standard_normal((7, n))
        XD, XDD = rng.standard_normal((7, n)), rng.standard_normal((7, n))
        Cd, Vp, dVp = batch.platform_states(robot, X, XD, XDD)
        for s in range(7):
            np.testing.assert_allclose(Cd[s], robot.platform_pose(X[s]), rtol=0, atol=1e-15, err_msg=robot.name)
            V, dV = robot.platform_twist(X[s], XD[s], XDD[s])
            np.testing.assert_allclose(Vp[s], V, rtol=0, atol=1e-14, err_msg=robot.name)
            np.testing.assert_allclose(dVp[s], dV, rtol=0, atol=1e-14, err_msg=robot.name)
        if not robot._rot:
            for a, b in zip((Cd, Vp, dVp), _numpy_translational_states(robot, X, XD, XDD)):
                np.testing.assert_allclose(a, b, rtol=0, atol=4e-16, err_msg=robot.name)


def test_actuated_values_are_the_joints_of_the_actuators():
    """``q_act, qd_act, qdd_act`` (gathered in numba) are the actuated tree variables of each limb, in
    ``actuator_names`` order."""
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    X, XD, XDD, t = _samples(robot, 40)
    r = robot.inverse_dynamics(X, XD, XDD, t=t)
    for name, what in ((r.q_act, r.joints), (r.qd_act, r.joints_d), (r.qdd_act, r.joints_dd)):
        expect = np.column_stack([what[limb.name][:, limb.actuated] for limb in robot.limbs])
        np.testing.assert_array_equal(name, expect)
        assert name.shape == (40, robot.n_act) and name.flags.c_contiguous
