"""The benchmark peers compute what pkm computes (benchmarks/peers.py; the forward-dynamics peers
of benchmarks/peers_forward.py and peers_mujoco.py).

Pinocchio (``pip install pin``) and MuJoCo (``pip install mujoco``), in the optional ``bench``
extra, are not test dependencies: the tests that need them are skipped without them. Joint torques are compared, as they do not depend on frames
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


# ============================================================================ forward-dynamics peers (issue 15)
import peers_forward  # noqa: E402
import peers_mujoco  # noqa: E402

needs_pin4 = pytest.mark.skipif(not peers_forward.have_pinocchio4(), reason="Pinocchio >= 4 not installed (pip install pin)")
needs_mujoco = pytest.mark.skipif(not peers_mujoco.have_mujoco(), reason="MuJoCo not installed (pip install mujoco)")
STATES = slice(0, 1001, 100)  # 11 states of the paper's motion at period 1 s


@pytest.fixture(scope="module")
def motion(delta):
    """The paper's motion at period 1 s (dt 1 ms) and pkm's inverse dynamics along it."""
    tr, res, start = peers_forward.paper_motion(delta)
    return tr, res, start


def _rel(actual, expected):
    return float(np.max(np.abs(np.asarray(actual) - expected)) / max(1.0, np.max(np.abs(expected))))


def test_depth_first_renumbering_keeps_the_tree_dynamics(delta):
    """The depth-first copy of each limb tree (what the peers are built from) has every subtree's
    variables contiguous and the same dynamics, variable for variable."""
    rng = np.random.default_rng(3)
    for limb in delta.limbs:
        tree, order = peers_forward.depth_first(limb.tree)
        assert sorted(order) == list(range(tree.n)) and list(order) != list(range(tree.n))  # the Delta needs it
        for i in range(tree.n):  # subtree of i = i .. i + size - 1
            sub = [j for j in range(tree.n) if tree.ancestor[j, i]]
            assert sub == list(range(i, i + len(sub)))
        q, qd, qdd = rng.normal(size=(3, tree.n))
        tau = inverse_dynamics(limb.tree, q, qd, qdd, delta.spec.gravity)
        np.testing.assert_allclose(inverse_dynamics(tree, q[order], qd[order], qdd[order], delta.spec.gravity),
                                   tau[order], rtol=0, atol=1e-12 * np.abs(tau).max())


@needs_pin4
def test_pinocchio_constraint_dynamics_gives_pkm_accelerations(delta, motion):
    """pin.constraintDynamics on the closed-loop Delta (3 CONTACT_3D + 2 CONTACT_6D, 21 rows, rank
    15), at consistent pkm states (tree variables and rates of pkm's IK): under pkm's
    inverse-dynamics torques the platform's acceleration is the prescribed ẍ, and under other
    torques it is pkm's forward_dynamics ẍ. Measured ≤ 4e-14 relative: the two agree to rounding
    (pkm closes the loops to 1e-13; 3 proximal iterations at mu = 1e-8 solve the redundant KKT
    system exactly). Tolerance 1e-11."""
    from pkm.sim.forward import forward_dynamics

    tr, res, start = motion
    p = peers_forward.PinocchioDeltaFD(delta)
    assert p.model.check(p.model.createData()) and p.rows == 21 and p.nv == 18
    idx = range(len(tr.t))[STATES]
    u_other = 0.5 * res.tau[STATES] + np.array([1.0, -2.0, 0.5])
    fd = forward_dynamics(delta, tr.x[STATES], tr.xd[STATES], u_other, start=start)
    for k, s in enumerate(idx):
        q, v = p.state(*peers_forward.pkm_state(delta, res, s))
        assert max(p.closure(q)) <= 1e-12
        x, xd = p.platform(q, v)
        np.testing.assert_allclose(x, tr.x[s], rtol=0, atol=1e-12)
        np.testing.assert_allclose(xd, tr.xd[s], rtol=0, atol=1e-12)
        assert _rel(p.xdd(q, v, res.tau[s]), tr.xdd[s]) <= 1e-11
        assert _rel(p.xdd(q, v, u_other[k]), fd.xdd[k]) <= 1e-11


@needs_pin4
def test_pinocchio_rk4_run_stays_on_the_pkm_solution(delta):
    """0.1 s of the paper's motion under pkm's torques, RK4 at dt = 1 ms on constraintDynamics (no
    Baumgarte): the platform stays on pkm's DOP853 solution and the loops closed (measured 1e-11 m
    each; over 1 s 4e-10 m). Semi-implicit Euler at the same step drifts by 5e-4 m."""
    ref = peers_forward.reference_run(delta, T=0.1)
    row = peers_forward.pinocchio_accuracy(delta, ref, method="rk4", dt=1e-3)
    assert row["drift_max"] <= 1e-9 and row["closure_max"] <= 1e-9
    euler = peers_forward.pinocchio_accuracy(delta, ref, method="euler", dt=1e-3)
    assert euler["drift_max"] > 100 * row["drift_max"]  # first order: the drift is the integrator's


@needs_mujoco
def test_mjcf_model_has_pkm_tree_dynamics(delta):
    """The generated MJCF (bodies, hinges, inertias, gravity) has pkm's tree dynamics: M q̈ + bias
    equals pkm's tree RNEA on the limb trees with the platform in thirds, to 1e-12."""
    import mujoco

    mjd = peers_mujoco.MujocoDelta(delta)
    m, d = mjd.model, mjd.data
    assert m.nv == 18 and m.nu == 3 and m.neq == 5 and list(mjd.index) == list(range(18))
    trees, orders = peers_forward.split_platform_trees(delta)
    rng = np.random.default_rng(5)
    for _ in range(5):
        q, qd, qdd = rng.uniform(-1, 1, size=(3, 18))
        d.qpos[mjd.perm], d.qvel[mjd.dof] = q, qd
        mujoco.mj_forward(m, d)
        a = np.zeros(18)
        a[mjd.dof] = qdd
        Ma = np.zeros(18)
        mujoco.mj_mulM(m, d, Ma, a)
        tau_mj = (Ma + d.qfrc_bias)[mjd.dof]
        tau = np.concatenate([inverse_dynamics(t, qq[o], vv[o], aa[o], delta.spec.gravity)[np.argsort(o)]
                              for t, o, qq, vv, aa in zip(trees, orders, *(np.split(z, 3) for z in (q, qd, qdd)))])
        _close(tau_mj, tau, 1e-12)


@needs_mujoco
def test_mujoco_rigid_limit_is_pkm(delta, motion):
    """At consistent pkm states under pkm's torques MuJoCo's platform acceleration differs from the
    prescribed ẍ by its soft constraints: with impedance d the constraint force is that of a
    regularised KKT system, R = (1 − d)/d · diag(A), an error ∝ (1 − d). Measured relative errors:
    0.45 (default solimp, d = 0.9), 1.2e-2 (d = 0.999), 1.2e-3 (d = 0.9999, MuJoCo's largest);
    tolerances 3e-3 at d = 0.9999, and 1e-4 (measured 2.7e-5) for the Richardson extrapolation
    (10 ẍ(0.9999) − ẍ(0.999))/9 to d → 1: MuJoCo's rigid limit is pkm's answer."""
    tr, res, _ = motion
    xdd = {}
    for dmin in (0.999, 0.9999):
        mjd = peers_mujoco.MujocoDelta(delta, solimp=(dmin, dmin, 0.001, 0.5, 2.0))
        xdd[dmin] = np.array([mjd.xdd(*peers_forward.pkm_state(delta, res, s), res.tau[s])
                              for s in range(len(tr.t))[STATES]])
        assert max(mjd.closure()) <= 1e-12  # the state handed over is consistent
    assert _rel(xdd[0.9999], tr.xdd[STATES]) <= 3e-3
    assert _rel((10 * xdd[0.9999] - xdd[0.999]) / 9, tr.xdd[STATES]) <= 1e-4


@needs_mujoco
def test_mujoco_loop_closure_after_a_short_run(delta):
    """0.1 s of the paper's motion under pkm's torques with mj_step (Euler, dt = 1e-4): the loops
    open by the soft constraints' give. Default solref/solimp: measured 1.9e-3 m and 0.11 rad (the
    welded platform thirds twist against each other; bounds 5e-3 m, 0.3 rad); MuJoCo's stiffest
    (solimp d = 0.9999, solref timeconst = 2 dt): measured 1.4e-7 m (bound 1e-6 m). pkm's own run
    closes the loops to 1e-10."""
    ref = peers_forward.reference_run(delta, T=0.1)
    assert ref["closure"] <= 1e-10
    default = peers_forward.mujoco_accuracy(delta, ref, timestep=1e-4)
    stiff = peers_forward.mujoco_accuracy(delta, ref, timestep=1e-4, solref=(2e-4, 1.0),
                                          solimp=(0.9999, 0.9999, 0.001, 0.5, 2.0))
    assert default["closure_max"] <= 5e-3 and default["rot_closure_max"] <= 0.3
    assert stiff["closure_max"] <= 1e-6 and stiff["closure_max"] < default["closure_max"] / 100
