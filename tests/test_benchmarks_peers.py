"""The benchmark peers compute what pkm computes (benchmarks/peers.py).

Pinocchio (``pip install pin``, the optional ``bench`` extra) is not a test dependency: the tests
that need it are skipped without it. Joint torques are compared, as they do not depend on frames
or on the (ω; v) vs (v; ω) ordering of twists.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import pkm
from pkm.algorithms.dynamics import inverse_dynamics
from pkm.algorithms.manipulator import dynamics_trees
from pkm.description.model import robot_tree
from pkm.description.robotfile import load_spec
from pkm.trajectory import from_spec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import peers  # noqa: E402

needs_pin = pytest.mark.skipif(not peers.have_pinocchio(), reason="Pinocchio not installed (pip install pin)")
TOL = 1e-9  # relative to the largest torque of the comparison (and absolute below 1 N·m)


def _close(actual, expected, tol=TOL):
    scale = max(1.0, float(np.max(np.abs(expected))))
    err = float(np.max(np.abs(np.asarray(actual) - np.asarray(expected))))
    assert err <= tol * scale, f"max |Δτ| = {err:.3e} > {tol:.0e} × {scale:.3g}"


@pytest.fixture(scope="module")
def delta():
    return pkm.load(ROOT / "robots" / "delta_3rr2rrr.toml")


@needs_pin
def test_pinocchio_rnea_equals_pkm_tree_rnea_on_the_delta_spanning_tree(delta):
    """One Pinocchio model with the three limb trees (platform massless in each, as pkm's limb
    dynamics): 18 revolute joints; pin.rnea equals pkm's tree RNEA per limb to 1e-9."""
    import pinocchio as pin

    pt = peers.delta_tree_model(delta)
    assert pt.model.nv == 18 and pt.model.nq == 18
    trees = dynamics_trees(delta)
    data = pt.model.createData()
    rng = np.random.default_rng(7)
    for _ in range(20):
        q, v, a = rng.uniform(-np.pi, np.pi, 18), rng.normal(size=18) * 3, rng.normal(size=18) * 10
        tau_pin = pin.rnea(pt.model, data, q, v, a)
        tau_pkm = np.concatenate([inverse_dynamics(t, qq, vv, aa, delta.spec.gravity)
                                  for t, qq, vv, aa in zip(trees, pt.split(q), pt.split(v), pt.split(a))])
        _close(tau_pin, tau_pkm)


@needs_pin
def test_pinocchio_rnea_equals_pkm_on_the_6r_arm_and_random_chains():
    import pinocchio as pin

    rng = np.random.default_rng(8)
    for tree in (robot_tree(load_spec(ROOT / "robots" / "serial_6r.toml")), peers.random_chain(8, 1),
                 peers.random_chain(64, 2)):
        pt = peers.pinocchio_model([tree])
        data = pt.model.createData()
        for _ in range(5):
            q, v, a = rng.uniform(-np.pi, np.pi, tree.n), rng.normal(size=tree.n), rng.normal(size=tree.n)
            _close(pin.rnea(pt.model, data, q, v, a), inverse_dynamics(tree, q, v, a))


@needs_pin
def test_pinocchio_closed_loop_delta_equals_pkm(delta):
    """The Pinocchio-based closed-loop inverse dynamics (own IK with frame Jacobians, RNEA on the
    spanning tree, projection through the loop constraints and J_IK) gives pkm's actuator torques
    and pkm's tree-joint angles along the paper's motion."""
    tr = from_spec(delta.spec.trajectory, delta.task.coordinate_names())
    sl = slice(0, len(tr), 40)
    X, XD, XDD = tr.x[sl], tr.xd[sl], tr.xdd[sl]
    res = delta.inverse_dynamics(X, XD, XDD)
    p = peers.PinocchioDeltaID(delta)
    for s in range(len(X)):
        u = p(X[s], XD[s], XDD[s])
        _close(u, res.tau[s])
        theta = np.concatenate([res.joints[limb.name][s] for limb in delta.limbs])
        np.testing.assert_allclose(p.q, theta, rtol=0, atol=1e-9)


def test_multi_limb_robot_files_load_and_solve(tmp_path):
    """bench_scaling's generated robots: L mounts at 360°/L of the R[2US] limb; IK works for every L."""
    for L in (2, 5):
        robot = peers.multi_limb_robot(L, tmp_path)
        assert len(robot.limbs) == L and robot.n_act == L and robot.task_dof == 3
        sol = robot.inverse_kinematics([0.05, -0.1, -0.95])
        assert sol.q_act.shape == (1, L)
    three = peers.multi_limb_robot(3, tmp_path)
    ref = pkm.load(ROOT / "robots" / "delta_3r2us.toml")
    x = np.array([0.05, -0.1, -0.95])
    # same limb, mounts at 0°, 120°, 240° (= −120°): the same actuator angles as the shipped robot
    np.testing.assert_allclose(three.inverse_kinematics(x).q_act, ref.inverse_kinematics(x).q_act, atol=1e-10)
