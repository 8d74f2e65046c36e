"""Torques only, ``out=`` and streaming over blocks (issue 18, item 3): the same actuator forces as the
full result, sample numbers of errors counted over the whole trajectory, bad ``out`` rejected."""

from __future__ import annotations

import numpy as np
import pytest

import pkm
from pkm.kernels import batch
from pkm.trajectory import from_spec

from conftest import ROBOTS

FILES = ["delta_3rr2rrr.toml", "irsbot2.toml", "delta_3r2us.toml"]


def _samples(robot, count):
    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    return tr.x[:count], tr.xd[:count], tr.xdd[:count], tr.t[:count]


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of two segments, so that a test trajectory crosses several block boundaries."""
    monkeypatch.setattr(batch, "STREAM", 2 * batch.SEGMENT)


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
