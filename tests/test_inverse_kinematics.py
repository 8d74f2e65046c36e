"""Mechanism inverse kinematics (paper §4–5, eq. 85–98) and the errors it raises."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

import pkm
from pkm.algorithms.assembly import assemble, platform_motion_rank
from pkm.algorithms.kinematics import forward_kinematics

from conftest import ROBOTS, ROOT

# robot file, and a box of task coordinates inside its workspace: centre, half widths
CASES = {
    "delta": ("delta_3rr2rrr.toml", [0.0, 0.0, -1.0], [0.25, 0.25, 0.15]),
    "delta_us": ("delta_3r2us.toml", [0.0, 0.0, -1.0], [0.25, 0.25, 0.15]),
    "irsbot2": ("irsbot2.toml", None, None),  # box from the file's default trajectory, below
}


def _box(name, robot):
    fname, centre, half = CASES[name]
    if centre is None:  # the default trajectory's centre ± its amplitude
        traj = robot.spec.trajectory
        sel = [("xyz".index(c[1])) for c in robot.task.components]
        centre = np.asarray(traj["center"])[sel]
        half = np.abs(np.asarray(traj["amplitude"])[sel])
    return np.asarray(centre, float), np.asarray(half, float)


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request):
    name = request.param
    return name, pkm.load(ROBOTS / CASES[name][0])


def _points(name, robot, count, seed):
    centre, half = _box(name, robot)
    rng = np.random.default_rng(seed)
    return centre + rng.uniform(-1.0, 1.0, (count, len(centre))) * half


@pytest.mark.parametrize("warm_start, count", [(False, 1000), (True, 200)], ids=["cold", "warm"])
def test_round_trip_1000_points(case, warm_start, count):
    """FK of every limb at the IK solution puts the platform at the target (≤ 1e-10): 1000 random points each
    solved from the reference configuration, and 200 each warm-started from the one before (random jumps: the
    branch checks' continuations at every point, ~8× the time per point, so fewer)."""
    name, robot = case
    X = _points(name, robot, count, 21)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pkm.BranchWarning)   # a random jump may cross to another branch
        sol = robot.inverse_kinematics(X, warm_start=warm_start)
    for limb in robot.limbs:
        th = sol.joints[limb.name]
        for s in range(len(X)):
            C = forward_kinematics(limb.tree, th[s])
            np.testing.assert_allclose(C[limb.platform], robot.platform_pose(X[s]), atol=1e-10)
            assert np.max(np.abs(limb.constraint_residual(th[s])), initial=0.0) <= 1e-12


def test_J_IK_against_finite_differences(case):
    """J_IK (eq. 98) equals the finite-difference derivative of the IK map x ↦ θ_act (≤ 1e-6)."""
    name, robot = case
    h = 1e-4  # truncation O(h²) ~ 1e-8; IK round-off (~1e-12) / h ~ 1e-8
    for x in _points(name, robot, 30, 22):
        J = robot.inverse_kinematics(x, warm_start=False).J_IK[0]
        fd = np.empty_like(J)
        for i in range(len(x)):
            dx = np.zeros(len(x))
            dx[i] = h
            plus = robot.inverse_kinematics(x + dx).q_act[0]
            minus = robot.inverse_kinematics(x - dx).q_act[0]
            fd[:, i] = (plus - minus) / (2 * h)
        np.testing.assert_allclose(J, fd, atol=1e-6)


def test_velocities_and_accelerations_against_finite_differences(case):
    """θ̇ and θ̈ from eq. (86–88) match central differences of θ(x(t)) along a smooth path."""
    name, robot = case
    centre, half = _box(name, robot)
    w = np.array([1.0, 1.3, 0.7][: len(centre)])
    phase = np.array([0.0, 0.4, 1.1][: len(centre)])

    def path(t):
        return centre + 0.5 * half * np.sin(w * t + phase), 0.5 * half * w * np.cos(w * t + phase), \
            -0.5 * half * w**2 * np.sin(w * t + phase)

    # first differences with h = 1e-4, second differences with h = 1e-3: IK round-off (≤ 1e-13
    # with the tolerance below) over h² stays ≤ 1e-7, and so does the O(h²) truncation error
    for t in (0.3, 1.7, 2.9):
        x, xd, xdd = path(t)
        sol = robot.inverse_kinematics(x, xd, xdd, warm_start=False)
        for k, limb in enumerate(robot.limbs):
            def theta(s, limb=limb):
                return robot.inverse_kinematics(path(s)[0], tol=1e-13).joints[limb.name][0]
            h1, h2 = 1e-4, 1e-3
            np.testing.assert_allclose(sol.joints_d[limb.name][0], (theta(t + h1) - theta(t - h1)) / (2 * h1), atol=1e-7)
            dd = (theta(t + h2) - 2 * theta(t) + theta(t - h2)) / h2**2
            np.testing.assert_allclose(sol.joints_dd[limb.name][0], dd, atol=2e-6)
        np.testing.assert_allclose(sol.qd_act[0], sol.J_IK[0] @ xd, atol=1e-12)


def test_actuators_to_platform_and_back(case):
    """Assemble the PKM at random actuator coordinates (platform pose free), then IK returns them."""
    name, robot = case
    rng = np.random.default_rng(23)
    x_ref = robot.x_ref
    sol0 = robot.inverse_kinematics(x_ref, warm_start=False)
    for _ in range(25):
        q_act = sol0.q_act[0] + rng.uniform(-0.15, 0.15, robot.n_act)
        thetas, Cp = assemble(robot, q_act, start=[sol0.joints[l.name][0] for l in robot.limbs])
        # the platform keeps its reference orientation and stays in the task space
        np.testing.assert_allclose(Cp[:3, :3], robot.R0, atol=1e-12)
        x = np.array([(robot.R0.T @ Cp[:3, 3])["xyz".index(c[1])] for c in robot.task.components])
        np.testing.assert_allclose(robot.platform_pose(x), Cp, atol=1e-12)
        back = robot.inverse_kinematics(x, warm_start=False)
        np.testing.assert_allclose(back.q_act[0], q_act, atol=1e-10)
        assert platform_motion_rank(robot, thetas) == robot.task_dof


def _delta_closed_form(x, R0, Rp, a, b, c, angle):
    """θ1 of one Delta limb by a sphere–circle intersection (independent of pkm's machinery).

    The arm tip (elbow, centre of the upper link) moves on a circle of radius a about the joint-1 axis;
    the centre of the lower link lies at P = x + Rp·u (u the limb's outward direction). Rods of length c
    with the parallelogram offset along the joint axis keep |elbow − P| = c in the plane ⟂ to... — here
    the elbow–P distance is c exactly, because both rods are parallel and the links are equal.
    """
    t = np.radians(angle)
    Rz = np.array([[np.cos(t), -np.sin(t), 0], [np.sin(t), np.cos(t), 0], [0, 0, 1]])
    p = Rz.T @ np.asarray(x)  # target in the limb's construction frame
    P = p + np.array([-Rp, 0.0, 0.0])  # centre of the lower short link
    # elbow E(θ1) = (−R0 − a cos θ1, 0, −a sin θ1);  |E − P|² = c²
    dx, dy, dz = P[0] + R0, P[1], P[2]
    # (dx + a cosθ)² + dy² + (dz + a sinθ)² = c²  →  A cosθ + B sinθ = K
    A, B = 2 * a * dx, 2 * a * dz
    K = c**2 - dx**2 - dy**2 - dz**2 - a**2
    r = np.hypot(A, B)
    base = np.arctan2(B, A)
    sols = [base + np.arccos(K / r), base - np.arccos(K / r)]
    sols = [(s + np.pi) % (2 * np.pi) - np.pi for s in sols]
    return min(sols, key=abs)  # the branch through the reference configuration (elbows out)


def test_delta_against_closed_form_sphere_circle():
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    X = _points("delta", robot, 200, 24)
    sol = robot.inverse_kinematics(X)
    for s, x in enumerate(X):
        expected = [_delta_closed_form(x, 0.15, 0.07, 0.25, 0.08, 1.0, ang) for ang in (0.0, 120.0, -120.0)]
        np.testing.assert_allclose(sol.q_act[s], expected, atol=1e-10)
        for limb in robot.limbs:
            th = sol.joints[limb.name][s]
            np.testing.assert_allclose(th[[2, 4]], [-th[3], -th[3]], atol=1e-12)  # θ3 = θ5 = −θ4
            assert abs(th[0] + th[1] + th[5]) <= 1e-12  # the platform does not rotate


def test_unreachable_point_raises_IKError(case):
    name, robot = case
    far = robot.x_ref + 5.0
    with pytest.raises(pkm.IKError) as info:
        robot.inverse_kinematics(far, warm_start=False)
    err = info.value
    assert err.limb in {l.name for l in robot.limbs}
    assert err.residual > 1e-3 and err.iterations > 0
    assert err.limb in str(err) and "residual" in str(err)


def test_ill_conditioned_configuration_raises_SingularityError():
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    # the threshold is configurable: a strict one rejects an ordinary configuration
    with pytest.raises(pkm.SingularityError) as info:
        robot.inverse_kinematics([0.05, 0.02, -1.0], singularity_threshold=2.0, warm_start=False)
    assert info.value.condition > 2.0 and "condition number" in str(info.value)
    # just inside the workspace boundary, where arms and rods align (w2 = 0 in eq. 142): the
    # solution exists but the IK Jacobian degenerates
    z_boundary = -np.sqrt(1.25**2 - (0.15 - 0.07) ** 2)
    near = [0.0, 0.0, z_boundary + 1e-9]
    with pytest.raises(pkm.SingularityError) as info:
        robot.inverse_kinematics(near, warm_start=False, singularity_threshold=1e3)
    assert info.value.condition > 1e3
    ok = robot.inverse_kinematics([0.0, 0.0, z_boundary + 0.3], warm_start=False, singularity_threshold=1e3)
    assert ok.q_act.shape == (1, 3)


@pytest.mark.parametrize("bad", [[np.nan, 0, -1.0], [0, np.inf, -1.0]])
def test_nan_or_inf_input_raises_ValueError(bad):
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    with pytest.raises(ValueError, match="NaN or inf"):
        robot.inverse_kinematics(bad)


def test_wrong_shape_raises_ValueError():
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    with pytest.raises(ValueError, match="3 task coordinates"):
        robot.inverse_kinematics([0.0, -1.0])


def test_cli_ik_json():
    out = subprocess.run([sys.executable, "-m", "pkm", "ik", str(ROBOTS / "delta_3rr2rrr.toml"), "--at", "0.1", "0", "-0.9",
                          "--json"], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    doc = json.loads(out)
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    sol = robot.inverse_kinematics([0.1, 0.0, -0.9])
    np.testing.assert_allclose(doc["actuators"], sol.q_act[0], atol=1e-14)
    assert set(doc["joints"]) == {"limb1", "limb2", "limb3"}
    assert doc["joints"]["limb2"]["limb2/4"] == pytest.approx(sol.joints["limb2"][0][3], abs=1e-14)


def test_cli_ik_unreachable_exits_2():
    res = subprocess.run([sys.executable, "-m", "pkm", "ik", str(ROBOTS / "delta_3rr2rrr.toml"), "--at", "3", "0", "-0.9"],
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "limb" in res.stderr and "Traceback" not in res.stderr


def test_result_does_not_depend_on_earlier_calls():
    """No hidden state: the same call gives the same bits after a call elsewhere; ``start`` (an
    earlier solution) and ``warm_start=False`` reach the same solution; a bad ``start`` is refused."""
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    x = np.array([[0.1, 0.05, -0.9], [0.12, 0.04, -0.92]])
    a = robot.inverse_kinematics(x)
    robot.inverse_kinematics([-0.2, 0.15, -1.05])  # elsewhere in the workspace
    b = robot.inverse_kinematics(x)
    for l in robot.limbs:
        np.testing.assert_array_equal(a.joints[l.name], b.joints[l.name])
    # different starts: the same solution, to the joint accuracy of a pose residual ≤ 1e-14
    ref = robot.inverse_kinematics(x, tol=1e-14)
    near = robot.inverse_kinematics(x, start=[a.joints[l.name][0] for l in robot.limbs], tol=1e-14)
    cold = robot.inverse_kinematics(x, warm_start=False, tol=1e-14)
    np.testing.assert_allclose(near.q_act, ref.q_act, rtol=0, atol=1e-12)
    np.testing.assert_allclose(cold.q_act, ref.q_act, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="all 3 limbs"):
        robot.inverse_kinematics(x, start=[np.zeros(6)])
    with pytest.raises(ValueError, match="start for limb 'limb2'"):
        robot.inverse_kinematics(x, start=[np.zeros(6), np.full(6, np.nan), np.zeros(6)])
