"""The batch kernel's IK starts (issue 18, item 2): a predicted start accepted when it is already
converged and corrected with the rate IK's ``L_p⁺``; time steps inferred from x, ẋ, ẍ when no
times are given. The results equal the reference path (pkm.algorithms.manipulator) to 1e-12 on
every robot file the kernel takes, with and without times, on smooth trajectories and on one with
a hard corner, for trajectory lengths around the SIMD lane counts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pkm
from pkm.algorithms import manipulator as man
from pkm.errors import PkmError
from pkm.kernels.batch import HERMITE_FIT, infer_steps
from pkm.trajectory import from_spec

from conftest import ROBOTS, TESTS


def _robot_files():
    """Every robot file of robots/ and tests/robots_ok/ that describes a PKM with a trajectory."""
    out = []
    for path in sorted([*ROBOTS.glob("*.toml"), *(TESTS / "robots_ok").glob("*.toml")]):
        try:
            robot = pkm.load(path)
        except PkmError:  # not a PKM (no platform or task; a non-hybrid limb): not the kernel's input
            continue
        if robot.spec.trajectory is not None:
            out.append(path)
    return out


FILES = _robot_files()


def test_the_kernels_robots_are_all_found():
    names = {p.name for p in FILES}
    assert {"delta_3rr2rrr.toml", "delta_3r2us.toml", "irsbot2.toml", "delta_rus.toml"} <= names


_ROBOTS: dict = {}


def _load(path):
    if path not in _ROBOTS:
        _ROBOTS[path] = pkm.load(path)
    return _ROBOTS[path]


def _trajectory(robot):
    return from_spec(robot.spec.trajectory, robot.task.coordinate_names())


def corner(robot, count, step=9):
    """Samples of two straight legs at constant velocity meeting at a right-angle hard corner (ẋ
    jumps, ẍ = 0) from a point of the robot's own trajectory, with their times."""
    tr = _trajectory(robot)
    a, b = tr.x[0], tr.x[len(tr.t) // 8]
    d = b - a
    c = b.copy()  # turned by 90° in the first two task coordinates (the sines are straight lines)
    c[0], c[1] = b[0] - 0.5 * d[1], b[1] + 0.5 * d[0]
    h = step * (tr.t[1] - tr.t[0])
    k = count // 2
    t = h * np.arange(count)
    T1, T2 = t[k], t[-1] - t[k]
    X = np.array([a + (b - a) * ti / T1 if i <= k else b + (c - b) * (ti - T1) / T2 for i, ti in enumerate(t)])
    XD = np.array([(b - a) / T1 if i < k else (c - b) / T2 for i in range(count)])
    return X, XD, np.zeros_like(X), t


def smooth(robot, count, step=7):
    tr = _trajectory(robot)
    sl = slice(0, count * step, step)
    return tr.x[sl], tr.xd[sl], tr.xdd[sl], tr.t[sl]


# ----------------------------------------------------------------------------- inferred time steps
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_inferred_steps_are_the_sample_times(path):
    """On the robot's smooth trajectory sampled at its own dt the Hermite relation gives the true
    steps to 1e-6 relative wherever the speed is above 1 % of its largest; sampled at every 7th
    step, to the fit tolerance. Steps are 0 (unknown) only near rest (a rest-to-rest line's ends)."""
    robot = _load(path)
    for step in (1, 7):
        X, XD, XDD, t = smooth(robot, 10 ** 6, step)
        h = np.empty(len(t) - 1)
        infer_steps(X, XD, XDD, h)
        known = h > 0.0
        speed = np.linalg.norm(XD[1:] + XD[:-1], axis=1)
        assert known[speed > 0.1 * speed.max()].all()
        np.testing.assert_allclose(h[known], np.diff(t)[known], rtol=2 * HERMITE_FIT)
        if step == 1:
            fast = speed > 1e-2 * speed.max()
            assert known[fast].all()
            np.testing.assert_allclose(h[fast], np.diff(t)[fast], rtol=1e-6)


@pytest.mark.parametrize("name", ["irsbot2", "delta_3rr2rrr"])
def test_inferred_steps_of_smooth_motion_are_exact_to_rounding(name):
    """With the rule's next term (Δ³ẍ/720, pkm.kernels.inverse_dynamics.infer_steps_into) the steps of the
    robot's sine at its dt are 1e-13 relative off (without it 3.5e-11 on the IRSBot-2, 2e-12 on the Delta:
    the IK's starts without t were further off than with t), the two end steps as before."""
    robot = _load(ROBOTS / f"{name}.toml")
    X, XD, XDD, t = smooth(robot, 10 ** 6, 1)
    h = np.empty(len(t) - 1)
    infer_steps(X, XD, XDD, h)
    rel = np.abs(h / np.diff(t) - 1.0)
    speed = np.linalg.norm(XD[1:] + XD[:-1], axis=1)
    inner = (speed > 0.1 * speed.max()) & (np.arange(len(h)) >= 1) & (np.arange(len(h)) <= len(h) - 2)
    assert np.median(rel[inner]) <= 3e-13 and rel[inner].max() <= 1e-11, (np.median(rel[inner]), rel[inner].max())
    assert rel[speed > 0.1 * speed.max()].max() <= 1e-9


def test_a_corner_step_is_not_inferred():
    robot = _load(ROBOTS / "delta_3rr2rrr.toml")
    X, XD, XDD, t = corner(robot, 11)
    h = np.empty(10)
    infer_steps(X, XD, XDD, h)
    assert h[4] == 0.0  # the step into the corner sample 5: ẋ_4 and ẋ_5 differ, x moved along ẋ_4
    assert h[5] > 0.0 or h[5] == 0.0
    np.testing.assert_allclose(np.delete(h, [4, 5])[np.delete(h, [4, 5]) > 0], np.diff(t)[0], rtol=1e-12)
    assert (np.delete(h, [4, 5]) > 0).all()


def test_steps_are_zero_without_motion_and_for_reversed_time():
    X = np.zeros((4, 3))
    h = np.empty(3)
    infer_steps(X, X, X, h)
    assert (h == 0.0).all()
    X = np.outer(np.arange(4.0), [1.0, 2.0, 3.0])
    infer_steps(X, -np.ones_like(X) * [1.0, 2.0, 3.0], np.zeros_like(X), h)  # moving against ẋ
    assert (h == 0.0).all()


# ----------------------------------------------------------------------------- kernel = reference
CASES = [("smooth", 40), ("smooth", 13), ("smooth", 3), ("corner", 21), ("corner", 5)]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
@pytest.mark.parametrize("kind,count", CASES, ids=[f"{k}{n}" for k, n in CASES])
@pytest.mark.parametrize("with_times", [True, False], ids=["t", "no-t"])
def test_kernel_equals_reference(path, kind, count, with_times):
    robot = _load(path)
    X, XD, XDD, t = (smooth if kind == "smooth" else corner)(robot, count)
    fast = robot.inverse_dynamics(X, XD, XDD, t=t if with_times else None)
    ref = man.inverse_dynamics(robot, X, XD, XDD, tol=1e-14)
    scale = np.abs(ref.tau).max()
    np.testing.assert_allclose(fast.tau, ref.tau, rtol=0, atol=1e-12 * scale)
    for limb in robot.limbs:
        np.testing.assert_allclose(fast.joints[limb.name], ref.joints[limb.name], rtol=0, atol=1e-12)
        np.testing.assert_allclose(fast.joints_d[limb.name], ref.joints_d[limb.name], rtol=0,
                                   atol=1e-11 * max(1.0, np.abs(ref.joints_d[limb.name]).max()))


def test_an_accepted_start_is_corrected():
    """With ``tol = 1e-6`` a predicted start whose pose error is up to 1e-8 (``CHORD_MARGIN · tol``) is
    accepted; the Newton correction with ``L_p⁺`` brings its joints to the exact solution (1e-12
    here, ~|e|²): without it they would be ~1e-9 off. Every 5th sample, so that the predictions
    are that far off."""
    robot = _load(ROBOTS / "delta_3rr2rrr.toml")
    X, XD, XDD, t = smooth(robot, 60, 5)
    fast = robot.inverse_dynamics(X, XD, XDD, t=t, tol=1e-6)
    ref = man.inverse_dynamics(robot, X, XD, XDD, tol=1e-14)
    for limb in robot.limbs:
        np.testing.assert_allclose(fast.joints[limb.name][2:], ref.joints[limb.name][2:], rtol=0, atol=1e-12)
