"""Tree dynamics (paper eq. 100–101, App. B eq. 167–175).

The recursive kernels of :mod:`pkm.algorithms.dynamics` are checked against things they were not derived
from: the dense closed forms (171)–(175) assembled from 𝖠, 𝖷, 𝖺, 𝖻, 𝖴 with plain numpy; finite
differences of the mass matrix (skew symmetry of dM̄/dt − 2C̄), of the potential energy (gravity)
and of the total energy along a motion (power balance); and Modern Robotics' ``InverseDynamics``
(an independent space-frame Newton–Euler implementation) on the 6R arm.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pkm.algorithms.dynamics import (body_mass_properties, coriolis_matrix, coriolis_matrix_into, gravity_forces,
                          gravity_into, inverse_dynamics, kinetic_energy, mass_matrix, mass_matrix_into,
                          potential_energy, rnea_into)
from pkm.algorithms.kinematics import body_jacobians, body_twists, forward_kinematics, relative_poses_into
from pkm.lie import Ad_inv_T_apply_into
from pkm.description.model import limb_tree, robot_tree
from pkm.description.robotfile import load_spec

from conftest import ROBOTS
from test_kinematics import _Ad, _ad, mixed_chain

G0 = np.array([0.0, 0.0, -9.81])


def serial_6r():
    return robot_tree(load_spec(ROBOTS / "serial_6r.toml"))


def delta_limb():
    return limb_tree(load_spec(ROBOTS / "delta_3rr2rrr.toml"), "limb1")


def irsbot2_limb():
    return limb_tree(load_spec(ROBOTS / "irsbot2.toml"), "limb1")


TREES = {"serial-6r": serial_6r, "delta-limb": delta_limb, "irsbot2-limb": irsbot2_limb, "mixed-chain": mixed_chain}


@pytest.fixture(scope="module", params=sorted(TREES))
def tree(request):
    return TREES[request.param]()


def _states(tree, count, seed):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield rng.uniform(-1.2, 1.2, tree.n), rng.normal(size=tree.n), rng.normal(size=tree.n)


def _assert_rel(actual, expected, rtol, scale=0.0):
    """max|actual − expected| ≤ rtol · max(max|expected|, scale)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    ref = max(float(np.max(np.abs(expected))), scale)
    err = float(np.max(np.abs(actual - expected)))
    assert err <= rtol * ref, f"error {err:.3e} > {rtol:g} × {ref:.3e}"


# ---------------------------------------------------------------- dense closed forms (171)–(175)
def _closed_form(tree, q, qd):
    """𝖩, 𝖬, 𝖠, 𝖺, 𝖻, 𝖴 of App. A/B assembled densely from the poses (eq. 159–161, 171–175)."""
    n = tree.n
    C = forward_kinematics(tree, q)
    AA = np.zeros((6 * n, 6 * n))
    for i in range(n):
        for j in range(n):
            if tree.ancestor[i, j]:
                AA[6 * i:6 * i + 6, 6 * j:6 * j + 6] = _Ad(np.linalg.inv(C[i]) @ C[j])
    XX = np.zeros((6 * n, n))
    MM = np.zeros((6 * n, 6 * n))
    aa = np.zeros((6 * n, 6 * n))
    for i in range(n):
        XX[6 * i:6 * i + 6, i] = tree.X[i]
        MM[6 * i:6 * i + 6, 6 * i:6 * i + 6] = tree.M[i]
        aa[6 * i:6 * i + 6, 6 * i:6 * i + 6] = qd[i] * _ad(tree.X[i])
    JJ = AA @ XX
    V = (JJ @ qd).reshape(n, 6)
    bb = np.zeros((6 * n, 6 * n))
    for i in range(n):
        bb[6 * i:6 * i + 6, 6 * i:6 * i + 6] = _ad(V[i])
    UU = np.vstack([np.linalg.inv(_Ad(C[i])) for i in range(n)])
    return JJ, MM, AA, aa, bb, UU


def test_rnea_equals_closed_form_eom(tree):
    """RNEA τ = M̄θ̈ + C̄θ̇ + Q̄grav (eq. 100–101) to 1e-12 relative, on random states."""
    for q, qd, qdd in _states(tree, 15, 1):
        tau = inverse_dynamics(tree, q, qd, qdd, G0)
        M, C, g = mass_matrix(tree, q), coriolis_matrix(tree, q, qd), gravity_forces(tree, q, G0)
        parts = [M @ qdd, C @ qd, g]
        _assert_rel(tau, sum(parts), 1e-12, scale=max(np.abs(p).max() for p in parts))


def test_mass_matrix_eq171_and_gravity_eq175(tree):
    """CRBA M̄ equals 𝖩ᵀ𝖬𝖩 (eq. 171); Q̄grav equals −𝖩ᵀ𝖬𝖴(0; g0) (eq. 175)."""
    for q, qd, _ in _states(tree, 5, 2):
        JJ, MM, _, _, _, UU = _closed_form(tree, q, qd)
        _assert_rel(mass_matrix(tree, q), JJ.T @ MM @ JJ, 1e-13)
        g_dense = -JJ.T @ MM @ UU @ np.r_[0.0, 0.0, 0.0, G0]
        _assert_rel(gravity_forces(tree, q, G0), g_dense, 1e-13)
        # and the gravity term is the RNEA at rest
        _assert_rel(inverse_dynamics(tree, q, np.zeros(tree.n), np.zeros(tree.n), G0), g_dense, 1e-13)


def test_mass_matrix_symmetric_positive_definite(tree):
    """M̄ is symmetric positive definite. Every tree used here moves mass with every joint: the
    virtual bodies of U/S/C joints are intermediate and each chain ends in a massive body (the
    platform of the limb trees has mass), which SPD requires -- see the next test."""
    assert not tree.virtual[-1] and tree.M[-1, 3, 3] > 0.0
    for q, _, _ in _states(tree, 10, 3):
        M = mass_matrix(tree, q)
        assert np.array_equal(M, M.T)
        np.linalg.cholesky(M)  # raises LinAlgError if not positive definite
        assert np.linalg.eigvalsh(M)[0] > 1e-9 * np.abs(M).max()


def test_massless_end_body_makes_mass_matrix_singular():
    """A massless body at the end of a chain (e.g. a platform without mass) gives a zero row and
    column in M̄: symmetric positive SEMI-definite only; the EOM identity still holds."""
    base = serial_6r()
    M = base.M.copy()
    M[-1] = 0.0
    tree = dataclasses.replace(base, M=M)
    q, qd, qdd = next(_states(tree, 1, 4))
    Mbar = mass_matrix(tree, q)
    assert np.all(Mbar[-1] == 0.0) and np.all(Mbar[:, -1] == 0.0)
    assert np.linalg.eigvalsh(Mbar)[0] > -1e-14 * np.abs(Mbar).max()
    tau = inverse_dynamics(tree, q, qd, qdd, G0)
    assert abs(tau[-1]) < 1e-14 * np.abs(tau).max()
    _assert_rel(tau, Mbar @ qdd + coriolis_matrix(tree, q, qd) @ qd + gravity_forces(tree, q, G0), 1e-12)


def test_coriolis_terms_are_rnea_velocity_terms(tree):
    """C̄θ̇ = RNEA(θ, θ̇, θ̈ = 0, g = 0)."""
    zero = np.zeros(tree.n)
    for q, qd, _ in _states(tree, 10, 5):
        _assert_rel(coriolis_matrix(tree, q, qd) @ qd, inverse_dynamics(tree, q, qd, zero, np.zeros(3)), 1e-12)


def test_mdot_minus_2c_is_skew(tree):
    """dM̄/dt − 2C̄ is skew-symmetric; dM̄/dt by central differences of M̄(θ + tθ̇) (1e-8 relative)."""
    h = 1e-6
    for q, qd, _ in _states(tree, 8, 6):
        Mdot = (mass_matrix(tree, q + h * qd) - mass_matrix(tree, q - h * qd)) / (2 * h)
        C = coriolis_matrix(tree, q, qd)
        N = Mdot - 2 * C
        scale = np.abs(Mdot).max() + np.abs(C).max()
        assert np.abs(N + N.T).max() <= 1e-8 * scale
        # equivalently dM̄/dt = C̄ + C̄ᵀ
        _assert_rel(C + C.T, Mdot, 1e-8, scale=scale)


def test_eq172_gives_velocity_terms_but_is_not_skew_consistent(tree):
    """Eq. (172), C̄_172 = −𝖩ᵀ(𝖬𝖠𝖺 + 𝖻ᵀ𝖬)𝖩, gives the same C̄_172θ̇, and the implemented C̄ equals
    C̄_172 + 𝖩ᵀ𝖬𝖻𝖩 (a term with 𝖩ᵀ𝖬𝖻𝖩θ̇ = 0); but dM̄/dt − 2C̄_172 is NOT skew-symmetric, which is
    why pkm does not use eq. (172) literally (see the pkm.algorithms.dynamics docstring)."""
    h = 1e-6
    worst = 0.0
    for q, qd, _ in _states(tree, 4, 7):
        JJ, MM, AA, aa, bb, _ = _closed_form(tree, q, qd)
        C172 = -JJ.T @ (MM @ AA @ aa + bb.T @ MM) @ JJ
        C = coriolis_matrix(tree, q, qd)
        scale = np.abs(C).max()
        _assert_rel(C172 @ qd, C @ qd, 1e-12, scale=scale * np.abs(qd).max())
        _assert_rel(C, C172 + JJ.T @ MM @ bb @ JJ, 1e-12, scale=scale)
        Mdot = (mass_matrix(tree, q + h * qd) - mass_matrix(tree, q - h * qd)) / (2 * h)
        N = Mdot - 2 * C172
        worst = max(worst, np.abs(N + N.T).max() / np.abs(Mdot).max())
    assert worst > 1e-2


def test_gravity_is_gradient_of_potential_energy(tree):
    """Q̄grav = +∂U/∂θ (Q̄grav is on the left-hand side of eq. 100), central differences, 1e-7 rel."""
    h = 1e-5
    g0 = np.array([0.3, -1.1, -9.5])  # not along an axis
    for q, _, _ in _states(tree, 5, 8):
        fd = np.empty(tree.n)
        for i in range(tree.n):
            dq = np.zeros(tree.n)
            dq[i] = h
            fd[i] = (potential_energy(tree, q + dq, g0) - potential_energy(tree, q - dq, g0)) / (2 * h)
        _assert_rel(gravity_forces(tree, q, g0), fd, 1e-7)


def _energy_rate(tree, q0, qd0, qdd0, g0, h=1e-3):
    """d/dt (T + U) at t = 0 along θ(t) = θ0 + θ̇0 t + ½θ̈0 t², by the 4th-order central stencil."""

    def energy(t):
        q = q0 + qd0 * t + 0.5 * qdd0 * t**2
        return kinetic_energy(tree, q, qd0 + qdd0 * t) + potential_energy(tree, q, g0)

    return (-energy(2 * h) + 8 * energy(h) - 8 * energy(-h) + energy(-2 * h)) / (12 * h)


def test_power_balance(tree):
    """d/dt (T + U) = θ̇ᵀτ along a motion (1e-8 relative to Σ|θ̇_i τ_i|)."""
    for q, qd, qdd in _states(tree, 5, 9):
        tau = inverse_dynamics(tree, q, qd, qdd, G0)
        rate = _energy_rate(tree, q, qd, qdd, G0)
        assert abs(rate - qd @ tau) <= 1e-8 * np.sum(np.abs(qd * tau))


def test_external_wrenches(tree):
    """Wrenches acting on the bodies enter as τ(W) = τ(0) − Σ J_iᵀ W_i; the power balance becomes
    d/dt (T + U) = θ̇ᵀτ + Σ W_i·V_i; a mapping by body name equals the array form."""
    rng = np.random.default_rng(10)
    for q, qd, qdd in _states(tree, 4, 11):
        W = rng.normal(size=(tree.n, 6)) * 5.0
        W[tree.virtual] = 0.0
        J = body_jacobians(tree, q)
        tau0 = inverse_dynamics(tree, q, qd, qdd, G0)
        tau = inverse_dynamics(tree, q, qd, qdd, G0, wrenches=W)
        _assert_rel(tau, tau0 - np.einsum("irk,ir->k", J, W), 1e-12, scale=np.abs(tau0).max())
        named = {name: W[i] for i, name in enumerate(tree.body_names) if not tree.virtual[i]}
        np.testing.assert_array_equal(inverse_dynamics(tree, q, qd, qdd, G0, wrenches=named), tau)
        V = body_twists(tree, q, qd)
        power = qd @ tau + np.sum(W * V)
        rate = _energy_rate(tree, q, qd, qdd, G0)
        assert abs(rate - power) <= 1e-8 * (np.sum(np.abs(qd * tau)) + np.sum(np.abs(W * V)))


def test_energies(tree):
    """T = Σ ½V_iᵀM_iV_i = ½θ̇ᵀM̄θ̇; the COMs recovered from M_i are the robot file's COMs."""
    for q, qd, _ in _states(tree, 5, 12):
        _assert_rel(kinetic_energy(tree, q, qd), 0.5 * qd @ mass_matrix(tree, q) @ qd, 1e-13)
    m, d = body_mass_properties(tree)
    com = np.einsum("irc,ic->ir", tree.A[:, :3, :3], d) + tree.A[:, :3, 3]
    assert np.all(m[tree.virtual] == 0.0)
    np.testing.assert_allclose(potential_energy(tree, np.zeros(tree.n), G0), 9.81 * np.sum(m * com[:, 2]), rtol=1e-13)


def test_serial_body_mass_properties_match_robot_file():
    tree = serial_6r()
    bodies = {b.name: b for b in load_spec(ROBOTS / "serial_6r.toml").expanded()[0]}
    m, d = body_mass_properties(tree)
    for i, name in enumerate(tree.body_names):
        b = bodies[name]
        assert m[i] == pytest.approx(b.mass, rel=1e-14)
        np.testing.assert_allclose(tree.A[i, :3, :3] @ d[i] + tree.A[i, :3, 3], b.com, atol=1e-14)


# ---------------------------------------------------------------- Modern Robotics (independent)
def _modern_robotics_model():
    """Mlist, Glist, Slist of the 6R arm built from the robot file, not from the TreeModel:
    link frames at the COMs with the body-frame axes, G = [[Θ_c, 0], [0, m I]], space screws
    (e; y × e) from the joint data."""
    spec = load_spec(ROBOTS / "serial_6r.toml")
    bodies, joints = spec.expanded()
    order = ["shoulder", "upper_arm", "forearm", "wrist1", "wrist2", "tool"]
    by_name = {b.name: b for b in bodies}
    by_child = {j.child: j for j in joints}
    frames, Glist, S = [], [], []
    for name in order:
        b, j = by_name[name], by_child[name]
        F = np.eye(4)
        F[:3, :3] = b.frame[:3, :3]
        F[:3, 3] = b.com
        frames.append(F)
        G = np.zeros((6, 6))
        G[:3, :3] = b.inertia
        G[3:, 3:] = b.mass * np.eye(3)
        Glist.append(G)
        e = j.axes[0]
        S.append(np.r_[e, np.cross(j.point, e)])
    Mlist = [frames[0]] + [np.linalg.inv(frames[i - 1]) @ frames[i] for i in range(1, 6)] + [np.eye(4)]
    return order, frames, Mlist, Glist, np.array(S).T


def test_agrees_with_modern_robotics():
    """pkm's RNEA equals Modern Robotics' InverseDynamics on the 6R arm to 1e-10 (relative), with
    and without a tip load. MR's Ftip is the wrench the tool exerts ON the environment, in the
    last link frame (here the tool's COM frame): our wrench on the tool is −Ftip moved to the
    tool's body frame."""
    import modern_robotics as mr  # in the `test` extra of pyproject.toml

    tree = serial_6r()
    order, frames, Mlist, Glist, Slist = _modern_robotics_model()
    assert tuple(order) == tree.body_names
    tool = tree.body_index("tool")
    T_com = np.linalg.inv(tree.A[tool]) @ frames[-1]  # COM frame in the tool's body frame
    rng = np.random.default_rng(13)
    for k in range(12):
        q, qd, qdd = rng.uniform(-np.pi, np.pi, 6), rng.normal(size=6) * 2, rng.normal(size=6) * 3
        Ftip = rng.normal(size=6) * 10 if k % 2 else np.zeros(6)
        expected = mr.InverseDynamics(q, qd, qdd, G0, Ftip, Mlist, Glist, Slist)
        W = np.zeros((6, 6))
        Ad_inv_T_apply_into(T_com, -Ftip, W[tool])
        tau = inverse_dynamics(tree, q, qd, qdd, G0, wrenches=W)
        _assert_rel(tau, expected, 1e-10)
        if not Ftip.any():
            expected_M = mr.MassMatrix(q, Mlist, Glist, Slist)
            _assert_rel(mass_matrix(tree, q), expected_M, 1e-10)
            _assert_rel(gravity_forces(tree, q, G0), mr.GravityForces(q, G0, Mlist, Glist, Slist), 1e-10)


# ---------------------------------------------------------------- kernels
def test_kernels_write_only_into_their_outputs():
    """Each _into kernel overwrites its outputs completely (NaN-filled or garbage outputs give
    identical results) and leaves its inputs untouched."""
    tree = mixed_chain()
    n = tree.n
    q, qd, qdd = next(_states(tree, 1, 14))
    T = np.empty((n, 4, 4))
    relative_poses_into(tree.B, tree.X, q, T)
    Wext = np.random.default_rng(15).normal(size=(n, 6))
    inputs = (tree.parent, tree.X, T, tree.M, q, qd, qdd, G0, Wext)
    before = [np.copy(a) for a in inputs]
    calls = {
        # (call, shapes of its output and scratch arrays, number of trailing scratch arrays)
        "rnea": (lambda o: rnea_into(tree.parent, tree.X, T, tree.M, qd, qdd, G0, Wext, *o),
                 [(n, 6), (n, 6), (n, 6), (n,)], 0),
        "gravity": (lambda o: gravity_into(tree.parent, tree.X, T, tree.M, G0, *o), [(n, 6), (n, 6), (n,), (2, 6)], 1),
        "mass": (lambda o: mass_matrix_into(tree.parent, tree.X, T, tree.M, *o),
                 [(n, n), (n, 6, 6), (2, 6, 6), (1, 6)], 1),
        "coriolis": (lambda o: coriolis_matrix_into(tree.parent, tree.X, T, tree.M, qd, *o),
                     [(n, 6), (n, 6, 6), (n, 6, 6), (n, n), (2, 6, 6), (5, 6)], 1),
    }
    rng = np.random.default_rng(16)
    for name, (call, shapes, scratch) in calls.items():
        out = [np.full(s, np.nan) for s in shapes]
        call(out)
        first = [np.copy(o) for o in out]
        for o in out:
            o[...] = rng.normal(size=o.shape) * 1e3
        call(out)
        outputs = len(out) - scratch
        for a, b in zip(first[:outputs], out[:outputs]):
            np.testing.assert_array_equal(a, b, err_msg=name)
        assert all(np.all(np.isfinite(a)) for a in first[:outputs]), name
    for a, b in zip(before, inputs):
        np.testing.assert_array_equal(a, b)
    # the kernels' results are the wrappers' results
    tau = np.empty(n)
    rnea_into(tree.parent, tree.X, T, tree.M, qd, qdd, G0, Wext, np.empty((n, 6)), np.empty((n, 6)),
              np.empty((n, 6)), tau)
    np.testing.assert_array_equal(tau, inverse_dynamics(tree, q, qd, qdd, G0, wrenches=Wext))


def test_wrench_transform_is_dual_to_twist_transform():
    """W·(Ad_T^{-1} V) = (Ad_T^{-T} W)·V (power is frame-independent)."""
    rng = np.random.default_rng(17)
    tree = serial_6r()
    T = np.empty((tree.n, 4, 4))
    relative_poses_into(tree.B, tree.X, rng.normal(size=tree.n), T)
    for k in range(tree.n):
        W, V, out = rng.normal(size=6), rng.normal(size=6), np.empty(6)
        Ad_inv_T_apply_into(T[k], W, out)
        assert W @ (np.linalg.inv(_Ad(T[k])) @ V) == pytest.approx(out @ V, rel=1e-13, abs=1e-13)


def test_bad_input_is_rejected():
    tree = serial_6r()
    z = np.zeros(6)
    with pytest.raises(ValueError, match="shape"):
        inverse_dynamics(tree, np.zeros(5), z, z)
    with pytest.raises(ValueError, match="NaN"):
        mass_matrix(tree, np.array([0, 0, np.nan, 0, 0, 0.0]))
    with pytest.raises(ValueError, match="qd"):
        coriolis_matrix(tree, z, np.zeros(7))
    with pytest.raises(ValueError, match="NaN"):
        inverse_dynamics(tree, z, z, np.full(6, np.inf))
    with pytest.raises(ValueError, match="gravity"):
        gravity_forces(tree, z, (0, -9.81))
    with pytest.raises(ValueError, match="gravity"):
        potential_energy(tree, z, (0, 0, np.nan))
    with pytest.raises(ValueError, match="wrenches"):
        inverse_dynamics(tree, z, z, z, wrenches=np.zeros((6, 3)))
    with pytest.raises(ValueError, match="wrench"):
        inverse_dynamics(tree, z, z, z, wrenches={"tool": np.zeros(3)})
    with pytest.raises(ValueError, match="NaN"):
        inverse_dynamics(tree, z, z, z, wrenches={"tool": np.full(6, np.nan)})
    with pytest.raises(KeyError, match="no body"):
        inverse_dynamics(tree, z, z, z, wrenches={"gripper": np.zeros(6)})
    with pytest.raises(ValueError, match="shape"):
        kinetic_energy(tree, z, np.zeros((6, 1)))
