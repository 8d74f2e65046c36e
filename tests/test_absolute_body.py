"""Rigid bodies in director coordinates (seed 002 §3; issue 16 deliverable 1).

Checked against pkm's own conventions, which the code does not use: the kinetic energy against
the body-fixed spatial inertia of :class:`pkm.description.spec.BodySpec` (eq. 167) and the twists
against finite differences of poses moved with :func:`pkm.lie.exp_se3`; the internal constraints
against finite differences; seed 002's identities (eqs. 25, 29, 33) numerically.
"""
from __future__ import annotations

import numpy as np
import pytest

from absolute_cases import random_body, random_pose
from pkm.absolute import Body
from pkm.absolute.body import (
    angular_velocity,
    euler_tensor,
    inertia_tensor,
    internal_bias,
    internal_constraints,
    internal_jacobian,
    internal_null_space,
    orthonormalize,
)
from pkm.description.spec import BodySpec
from pkm.lie import exp_se3, hat


def _spec(rng) -> BodySpec:
    body = random_body(rng, "b")
    frame = random_pose(rng)
    com = frame[:3, :3] @ body.com + frame[:3, 3]
    return BodySpec(name="b", frame=frame, mass=body.mass, com=com, inertia=body.inertia)


def test_kinetic_energy_is_pkms_spatial_inertia_energy():
    """½ q̇ᵀ M q̇ (constant M, seed 002 eq. 23 with full Euler tensor) = ½ Vᵀ M_b V (pkm eq. 167)."""
    rng = np.random.default_rng(1)
    for _ in range(5):
        spec = _spec(rng)
        body = Body.from_spec(spec)
        C = random_pose(rng)
        V = rng.normal(size=6)
        q = body.coordinates(C)
        qd = body.velocity(q, V, "body")
        T = 0.5 * qd @ body.mass_matrix @ qd
        assert T == pytest.approx(0.5 * V @ spec.spatial_inertia() @ V, rel=1e-12)
        assert body.kinetic_energy(qd) == pytest.approx(T, rel=1e-12)


def test_pose_and_twist_conversions_match_moving_poses():
    """q̇ from a twist = d/dt q(C(t)) with C(t) = C exp(hat(V) t) (body) or exp(hat(V) t) C
    (spatial); twist() inverts velocity(); pose() inverts coordinates()."""
    rng = np.random.default_rng(2)
    body = random_body(rng, "b")
    h = 1e-6
    for _ in range(5):
        C, V = random_pose(rng), rng.normal(size=6)
        q = body.coordinates(C)
        assert np.allclose(body.pose(q), C, atol=1e-14)
        for frame, moved in (("body", lambda s: C @ exp_se3(V * s)), ("spatial", lambda s: exp_se3(V * s) @ C)):
            fd = (body.coordinates(moved(h)) - body.coordinates(moved(-h))) / (2 * h)
            qd = body.velocity(q, V, frame)
            assert np.max(np.abs(fd - qd)) < 1e-8, frame
            assert np.allclose(body.twist(q, qd, frame), V, atol=1e-12)
        com = body.twist(q, body.velocity(q, V, "body"), "com")
        assert np.allclose(com[:3], C[:3, :3] @ V[:3])  # world angular velocity
        assert np.allclose(body.velocity(q, com, "com"), body.velocity(q, V, "body"))
        Cd = C @ hat(V)
        assert np.allclose(com[3:], Cd[:3, :3] @ body.com + Cd[:3, 3])  # velocity of the centre of mass


def test_internal_constraints_jacobian_bias_and_null_space():
    """G_int (eq. 25) and γ_int against finite differences at random (non-orthonormal) q;
    G_int P_int = 0 everywhere (eq. 29); Φ_int = 0 at poses."""
    rng = np.random.default_rng(3)
    h = 1e-6
    for _ in range(5):
        q, qd = rng.normal(size=12), rng.normal(size=12)
        G = internal_jacobian(q)
        fd = np.column_stack([(internal_constraints(q + h * e) - internal_constraints(q - h * e)) / (2 * h)
                              for e in np.eye(12)])
        assert np.max(np.abs(fd - G)) < 1e-8
        second = (internal_constraints(q + h * 1e3 * qd) - 2 * internal_constraints(q)
                  + internal_constraints(q - h * 1e3 * qd)) / (h * 1e3) ** 2
        assert np.max(np.abs(second + internal_bias(qd))) < 1e-8  # Φ'' = −γ along a line (q̈ = 0)
        assert np.max(np.abs(G @ internal_null_space(q))) < 1e-14
    body = random_body(rng, "b")
    assert np.max(np.abs(internal_constraints(body.coordinates(random_pose(rng))))) < 1e-15


def test_reduced_mass_and_momentum_are_newton_euler_quantities():
    """P_intᵀ M P_int = diag(R J Rᵀ, m I) on the manifold (seed 002 eq. 33, twist (ω; v_φ)), and
    the momentum is (φ × m v + R J Rᵀ ω, m v)."""
    rng = np.random.default_rng(4)
    body = random_body(rng, "b")
    for _ in range(3):
        q = body.coordinates(random_pose(rng))
        R = q[3:].reshape(3, 3).T
        P = internal_null_space(q)
        Jw = R @ body.inertia @ R.T
        expected = np.zeros((6, 6))
        expected[:3, :3], expected[3:, 3:] = Jw, body.mass * np.eye(3)
        assert np.allclose(P.T @ body.mass_matrix @ P, expected, atol=1e-13)
        w, v = rng.normal(size=3), rng.normal(size=3)
        qd = P @ np.concatenate([w, v])
        L, p = body.momentum(q, qd)
        assert np.allclose(p, body.mass * v)
        assert np.allclose(L, np.cross(q[:3], body.mass * v) + Jw @ w)
        assert np.allclose(angular_velocity(q, qd), w)


def test_euler_tensor_inverts_and_batches_work():
    rng = np.random.default_rng(5)
    body = random_body(rng, "b")
    assert np.allclose(inertia_tensor(euler_tensor(body.inertia)), body.inertia)
    assert np.allclose(np.linalg.eigvalsh(body.euler), sorted(
        0.5 * np.trace(body.inertia) - np.linalg.eigvalsh(body.inertia)))
    C = np.array([random_pose(rng) for _ in range(4)])
    V = rng.normal(size=(4, 6))
    q = body.coordinates(C)
    assert q.shape == (4, 12)
    qd = body.velocity(q, V)
    for k in range(4):
        assert np.allclose(q[k], body.coordinates(C[k]))
        assert np.allclose(qd[k], body.velocity(q[k], V[k]))
    assert np.allclose(body.pose(q), C)
    assert body.kinetic_energy(qd).shape == (4,)
    assert internal_jacobian(q).shape == (4, 6, 12)
    noisy = q + 1e-2 * rng.normal(size=q.shape)
    fixed = orthonormalize(noisy)
    assert np.max(np.abs(internal_constraints(fixed))) < 1e-14
    assert np.allclose(fixed[:, :3], noisy[:, :3])


def test_bad_bodies_are_refused():
    with pytest.raises(ValueError, match="mass"):
        Body("b", 0.0, np.eye(3))
    with pytest.raises(ValueError, match="triangle inequality"):
        Body("b", 1.0, np.diag([1.0, 1.0, 3.0]))
    with pytest.raises(ValueError, match="frame"):
        Body("b", 1.0, np.eye(3)).twist(np.zeros(12), np.zeros(12), "mixed")
