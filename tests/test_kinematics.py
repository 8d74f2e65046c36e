"""Tree kinematics: POE forward kinematics, body Jacobians and their derivatives (paper Sec. 3.2, App. A).

Checked against things they were not derived from: finite differences of the forward kinematics,
the spatial product of exponentials evaluated with scipy's matrix exponential, the closed form
(163) of J̇, and the paper's closed-form platform pose of the Delta (paper Sec. 9.1).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import expm

from pkm.algorithms.kinematics import (body_accelerations, body_jacobians, body_twists, forward_kinematics,
                            jacobian_derivatives)
from pkm.description.model import compile_tree, limb_tree, robot_tree
from pkm.description.robotfile import load_spec
from pkm.description.spec import BodySpec, JointSpec

from conftest import ROBOTS


def _hat(X):
    w, v = X[:3], X[3:]
    return np.array([[0, -w[2], w[1], v[0]], [w[2], 0, -w[0], v[1]], [-w[1], w[0], 0, v[2]], [0, 0, 0, 0.0]])


def _vee(M):
    return np.array([M[2, 1], M[0, 2], M[1, 0], M[0, 3], M[1, 3], M[2, 3]])


def _Ad(C):
    R, r = C[:3, :3], C[:3, 3]
    rx = np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0.0]])
    out = np.zeros((6, 6))
    out[:3, :3] = R
    out[3:, 3:] = R
    out[3:, :3] = rx @ R
    return out


def _ad(X):
    w, v = X[:3], X[3:]
    wx = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0.0]])
    vx = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0.0]])
    out = np.zeros((6, 6))
    out[:3, :3] = wx
    out[3:, 3:] = wx
    out[3:, :3] = vx
    return out


def _cylinder(name, p0, p1, radius=0.02, rho=2700.0):
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    L = np.linalg.norm(p1 - p0)
    m = rho * np.pi * radius**2 * L
    u = (p1 - p0) / L
    I = m * (3 * radius**2 + L**2) / 12 * (np.eye(3) - np.outer(u, u)) + m * radius**2 / 2 * np.outer(u, u)
    frame = np.eye(4)
    frame[:3, 3] = (p0 + p1) / 2 + np.array([0.01, -0.02, 0.005])  # frame origin away from the COM
    return BodySpec(name=name, frame=frame, mass=m, com=(p0 + p1) / 2, inertia=I)


def _joint(name, type_, parent, child, point, axes, pitch=0.0):
    axes = np.atleast_2d(np.asarray(axes, float))
    axes = axes / np.linalg.norm(axes, axis=1)[:, None]
    return JointSpec(name=name, type=type_, parent=parent, child=child, point=np.asarray(point, float), axes=axes, pitch=pitch)


def mixed_chain():
    """A branched tree with every joint type, one joint written child → parent (reversed)."""
    bodies = [
        _cylinder("a", [0, 0, 0], [0, 0, 0.3]),
        _cylinder("b", [0, 0, 0.3], [0.4, 0, 0.3]),
        _cylinder("c", [0.4, 0, 0.3], [0.4, 0.3, 0.3]),
        _cylinder("d", [0.4, 0.3, 0.3], [0.4, 0.3, 0.0]),
        _cylinder("e", [0, 0, 0.3], [-0.3, 0.1, 0.3]),
        _cylinder("f", [-0.3, 0.1, 0.3], [-0.3, 0.1, 0.0]),
        _cylinder("g", [0.4, 0.3, 0.0], [0.6, 0.3, 0.0]),
    ]
    joints = [
        _joint("j1", "R", "ground", "a", [0, 0, 0], [0, 0, 1]),
        _joint("j2", "U", "a", "b", [0, 0, 0.3], [[0, 1, 0], [0, 0.3, 1]]),
        _joint("j3", "S", "b", "c", [0.4, 0, 0.3], [[1, 0, 0], [0, 1, 0], [0, 0, 1]]),
        _joint("j4", "C", "d", "c", [0.4, 0.3, 0.3], [[0, 1, 1], [0, 1, 1]]),  # reversed
        _joint("j5", "H", "a", "e", [0, 0, 0.3], [1, 1, 0], pitch=0.05),
        _joint("j6", "P", "e", "f", [-0.3, 0.1, 0.3], [0.2, 0, -1]),
        _joint("j7", "R", "d", "g", [0.4, 0.3, 0.0], [1, 0, 0.5]),
    ]
    return compile_tree(bodies, joints, "ground")


def delta_limb():
    return limb_tree(load_spec(ROBOTS / "delta_3rr2rrr.toml"), "limb1")


def serial_6r():
    return robot_tree(load_spec(ROBOTS / "serial_6r.toml"))


TREES = {"delta-limb": delta_limb, "serial-6r": serial_6r, "mixed-chain": mixed_chain}


@pytest.fixture(scope="module", params=sorted(TREES))
def tree(request):
    return TREES[request.param]()


def _states(tree, count, seed):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield rng.uniform(-1.2, 1.2, tree.n), rng.normal(size=tree.n)


def test_poe_spatial_form_eq1(tree):
    """C_k = exp(θ_1 Y_1)⋯exp(θ_k Y_k) A_k along the path (eq. 1–2), with scipy's expm."""
    for q, _ in _states(tree, 20, 1):
        C = forward_kinematics(tree, q)
        for k in range(tree.n):
            path = [i for i in range(k + 1) if tree.ancestor[k, i]]
            f = np.eye(4)
            for i in path:
                f = f @ expm(_hat(tree.Y[i] * q[i]))
            np.testing.assert_allclose(C[k], f @ tree.A[k], atol=1e-12)


def test_reference_configuration_is_A(tree):
    C = forward_kinematics(tree, np.zeros(tree.n))
    np.testing.assert_allclose(C, tree.A, atol=1e-15)


def test_body_jacobian_matches_finite_differences(tree):
    """Column i of J_k is vee(C_k⁻¹ ∂C_k/∂θ_i), central differences (eq. 3–4)."""
    h = 1e-6
    for q, _ in _states(tree, 10, 2):
        J = body_jacobians(tree, q)
        C = forward_kinematics(tree, q)
        for i in range(tree.n):
            dq = np.zeros(tree.n)
            dq[i] = h
            dC = (forward_kinematics(tree, q + dq) - forward_kinematics(tree, q - dq)) / (2 * h)
            for k in range(tree.n):
                fd = _vee(np.linalg.inv(C[k]) @ dC[k])
                np.testing.assert_allclose(J[k, :, i], fd, atol=1e-7)
        # joints off the path contribute nothing
        for k in range(tree.n):
            off = ~tree.ancestor[k]
            assert np.all(J[k][:, off] == 0.0)


def test_twists_equal_jacobian_times_rates(tree):
    for q, qd in _states(tree, 10, 3):
        V = body_twists(tree, q, qd)
        J = body_jacobians(tree, q)
        np.testing.assert_allclose(V, J @ qd, atol=1e-12)


def test_jacobian_derivative_matches_finite_differences(tree):
    """J̇ = d/dt J(θ + t θ̇) at t = 0, central differences (paper eq. 162–165)."""
    h = 1e-6
    for q, qd in _states(tree, 10, 4):
        Jd = jacobian_derivatives(tree, q, qd)
        fd = (body_jacobians(tree, q + h * qd) - body_jacobians(tree, q - h * qd)) / (2 * h)
        np.testing.assert_allclose(Jd, fd, atol=1e-7)


def test_accelerations_equal_J_qdd_plus_Jdot_qd(tree):
    """The forward acceleration recursion gives V̇_k = J_k θ̈ + J̇_k θ̇ (eq. 8)."""
    rng = np.random.default_rng(9)
    for q, qd in _states(tree, 10, 8):
        qdd = rng.normal(size=tree.n)
        A = body_accelerations(tree, q, qd, qdd)
        expected = body_jacobians(tree, q) @ qdd + jacobian_derivatives(tree, q, qd) @ qd
        np.testing.assert_allclose(A, expected, atol=1e-12)


def test_jacobian_derivative_closed_form_eq163(tree):
    """J̇_{k,j} = −ad_{ΔV_{k,j}} J_{k,j} with ΔV_{k,j} = V_k − Ad_{C_{k,j}} V_j (eq. 163)."""
    for q, qd in _states(tree, 10, 5):
        C = forward_kinematics(tree, q)
        J = body_jacobians(tree, q)
        V = J @ qd
        Jd = jacobian_derivatives(tree, q, qd)
        for k in range(tree.n):
            for j in range(tree.n):
                if not tree.ancestor[k, j]:
                    continue
                dV = V[k] - _Ad(np.linalg.inv(C[k]) @ C[j]) @ V[j]
                np.testing.assert_allclose(Jd[k, :, j], -_ad(dV) @ J[k, :, j], atol=1e-12)


def test_partial_derivative_eq162(tree):
    """∂J_{i,j}/∂θ_k = ad_{J_{i,j}} J_{i,k} for j ≺ k ⪯ i, and 0 otherwise (eq. 162)."""
    h = 1e-6
    q, _ = next(_states(tree, 1, 6))
    J = body_jacobians(tree, q)
    for k in range(tree.n):
        dq = np.zeros(tree.n)
        dq[k] = h
        dJ = (body_jacobians(tree, q + dq) - body_jacobians(tree, q - dq)) / (2 * h)
        for i in range(tree.n):
            for j in range(tree.n):
                inside = tree.ancestor[i, j] and tree.ancestor[i, k] and tree.ancestor[k, j] and k != j
                expected = _ad(J[i, :, j]) @ J[i, :, k] if inside else np.zeros(6)
                np.testing.assert_allclose(dJ[i, :, j], expected, atol=1e-7)


def test_mixed_chain_structure():
    tree = mixed_chain()
    assert np.all(tree.parent < np.arange(tree.n)), "numbering must be canonical"
    assert tree.n == 1 + 2 + 3 + 2 + 1 + 1 + 1
    assert tree.variable_names[:6] == ("j1", "j2.1", "j2.2", "j3.1", "j3.2", "j3.3")
    # the reversed C joint is traversed from c to d: translation first, then the rotation
    kinds = [tree.axis_kind[i] for i, jn in enumerate(tree.joint_names) if jn == "j4"]
    assert kinds == ["P", "R"]
    assert tree.virtual.sum() == 1 + 2 + 1
    assert np.all(tree.M[tree.virtual] == 0.0)


def test_bad_input_is_rejected():
    tree = serial_6r()
    with pytest.raises(ValueError, match="shape"):
        forward_kinematics(tree, np.zeros(5))
    with pytest.raises(ValueError, match="NaN"):
        body_jacobians(tree, np.array([0, 0, np.nan, 0, 0, 0.0]))
