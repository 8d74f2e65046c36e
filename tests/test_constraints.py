"""Cut-joint constraints (paper Sec. 3.3): residual g, Jacobian G and convective vector Ġθ̇.

Checked against things they were not derived from: finite differences of g and G at random,
NON-closed configurations of a branched tree, the relative motion of each joint type built with
scipy's matrix exponential (g ≡ 0 on it, and exactly 6 − DOF independent rows), and the Delta
parallelogram's known solution θ3 = θ5 = −θ4 (paper Sec. 3.3, Ex. 7–9, eq. 48).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import expm
from scipy.spatial.transform import Rotation

from pkm.algorithms.constraints import (
    CUT_TYPES,
    bias,
    cut_bias_into,
    cut_jacobian_into,
    cut_joint,
    cut_residual_into,
    distance_constraint,
    evaluate,
    jacobian,
    residual,
)
from pkm.errors import TopologyError
from pkm.algorithms.kinematics import body_jacobians, body_twists, forward_kinematics, jacobian_derivatives
from pkm.description.model import AXIS_KINDS, compile_tree, limb_tree, screw_coordinates
from pkm.description.robotfile import load_spec
from pkm.description.spec import BodySpec, JointSpec
from pkm.description.topology import CUT_CONSTRAINTS

from conftest import ROBOTS


# ------------------------------------------------------------------------------ helpers
def _hat(X):
    w, v = X[:3], X[3:]
    return np.array([[0, -w[2], w[1], v[0]], [w[2], 0, -w[0], v[1]], [-w[1], w[0], 0, v[2]], [0, 0, 0, 0.0]])


def _vee(M):
    return np.array([M[2, 1], M[0, 2], M[1, 0], M[0, 3], M[1, 3], M[2, 3]])


def _skew(x):
    return np.array([[0, -x[2], x[1]], [x[2], 0, -x[0]], [-x[1], x[0], 0.0]])


def _pose(R, p):
    C = np.eye(4)
    C[:3, :3] = R
    C[:3, 3] = p
    return C


def _random_pose(rng):
    return _pose(Rotation.random(random_state=rng).as_matrix(), rng.uniform(-0.5, 0.5, 3))


def _body(name, origin, rng):
    """A body with a randomly rotated frame (so the world → body conversions matter)."""
    frame = _pose(Rotation.random(random_state=rng).as_matrix(), origin)
    return BodySpec(name=name, frame=frame, mass=1.0, com=np.asarray(origin, float), inertia=0.01 * np.eye(3))


def _joint(name, type_, parent, child, point, axes):
    axes = np.atleast_2d(np.asarray(axes, float))
    axes = axes / np.linalg.norm(axes, axis=1)[:, None]
    return JointSpec(name=name, type=type_, parent=parent, child=child, point=np.asarray(point, float), axes=axes)


#: Axes of the cut joint of each type (the U is skew: its axes are not perpendicular, c0 ≠ 0).
CUT_AXES = {
    "S": np.eye(3),
    "U": [[1.0, 0.6, 0.0], [0.0, 0.5, 1.0]],
    "R": [[0.3, 1.0, 0.2]],
    "C": [[0.3, 1.0, 0.2], [0.3, 1.0, 0.2]],
    "P": [[1.0, 0.5, -0.3]],
    "H": [[0.0, 0.0, 1.0]],
}
CUT_POINT = np.array([0.45, 0.4, 0.2])
#: (parent, child) of the cut joint: two branches of a common body, or one end on the ground.
PLACEMENTS = {"branches": ("a3", "b3"), "ground_k": ("ground", "b3"), "ground_r": ("a3", "ground")}
TYPES = ["S", "U", "R", "C", "P", "distance"]


def branched_tree():
    """ground –R– base, then base –R– a1 –U– a2 –C– a3 and base –R– b1 –P– b2 –S– b3 (11 variables)."""
    rng = np.random.default_rng(7)
    bodies = [
        _body("base", [0, 0, 0.1], rng),
        _body("a1", [0.2, 0, 0.2], rng),
        _body("a2", [0.4, 0.1, 0.3], rng),
        _body("a3", [0.5, 0.3, 0.2], rng),
        _body("b1", [-0.2, 0.1, 0.2], rng),
        _body("b2", [0.1, 0.4, 0.3], rng),
        _body("b3", [0.3, 0.4, 0.2], rng),
    ]
    joints = [
        _joint("j0", "R", "ground", "base", [0, 0, 0], [0, 0, 1]),
        _joint("ja1", "R", "base", "a1", [0.1, 0, 0.1], [0, 1, 0.2]),
        _joint("ja2", "U", "a1", "a2", [0.3, 0.05, 0.25], [[1, 0, 0], [0, 0.2, 1]]),
        _joint("ja3", "C", "a2", "a3", [0.45, 0.2, 0.3], [[0.3, 1, 0], [0.3, 1, 0]]),
        _joint("jb1", "R", "base", "b1", [-0.1, 0, 0.1], [1, 0.3, 0]),
        _joint("jb2", "P", "b1", "b2", [0, 0.2, 0.25], [0.2, 1, 0.4]),
        _joint("jb3", "S", "b2", "b3", [0.25, 0.4, 0.25], np.eye(3)),
    ]
    return compile_tree(bodies, joints, "ground")


TREE = branched_tree()


def make_cut(type_, placement, tree=TREE):
    parent, child = PLACEMENTS[placement]
    if type_ == "distance":
        return distance_constraint("d", tree, parent, CUT_POINT, child, CUT_POINT + [0.1, -0.3, 0.2])
    return cut_joint(_joint("cut", type_, parent, child, CUT_POINT, CUT_AXES[type_]), tree)


def _kin(tree, q, qd):
    C = forward_kinematics(tree, q)
    J = body_jacobians(tree, q)
    V = body_twists(tree, q, qd)
    Ab = jacobian_derivatives(tree, q, qd) @ qd
    return C, J, V, Ab


def _g(cj, tree, q):
    return residual(cj, forward_kinematics(tree, q))


def _G(cj, tree, q):
    return jacobian(cj, forward_kinematics(tree, q), body_jacobians(tree, q))


def _states(tree, count, seed, scale=1.5):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield rng.uniform(-scale, scale, tree.n), rng.normal(size=tree.n)


cases = pytest.mark.parametrize("type_", TYPES)
placements = pytest.mark.parametrize("placement", sorted(PLACEMENTS))


# ------------------------------------------------------------------------------ construction
@cases
def test_row_counts(type_):
    cj = make_cut(type_, "branches")
    expected = 1 if type_ == "distance" else CUT_TYPES[type_]
    assert cj.m == expected
    if type_ != "distance":
        assert cj.m == CUT_CONSTRAINTS[type_]  # agrees with the topology module
    assert (cj.k, cj.r) == (TREE.body_index("a3"), TREE.body_index("b3"))
    assert cj.n.shape[1] == cj.e_k.shape[1] == cj.e_r.shape[1] == 3
    assert cj.e_k.shape[0] == cj.e_r.shape[0] == cj.c0.shape[0]


def test_ground_is_minus_one():
    assert make_cut("R", "ground_k").k == -1
    assert make_cut("R", "ground_r").r == -1


def test_h_cut_joint_is_rejected():
    with pytest.raises(TopologyError, match="H .*not supported"):
        make_cut("H", "branches")
    with pytest.raises(ValueError):  # TopologyError is a ValueError
        make_cut("H", "branches")


def test_u_offsets_use_reference_dot_product():
    cj = make_cut("U", "branches")
    a1, a2 = (np.asarray(x) / np.linalg.norm(x) for x in CUT_AXES["U"])
    assert cj.c0[0] == pytest.approx(a1 @ a2)
    assert abs(cj.c0[0]) > 0.1  # really a skew U, so c0 is exercised


# ------------------------------------------------------------------------------ (1) reference
@cases
@placements
def test_residual_vanishes_at_reference(type_, placement):
    cj = make_cut(type_, placement)
    g = _g(cj, TREE, np.zeros(TREE.n))
    assert g.shape == (cj.m,)
    np.testing.assert_allclose(g, 0.0, atol=1e-14)


@cases
def test_residual_is_nonzero_away_from_closure(type_):
    """At a random configuration every row is violated (the test configurations are non-closed)."""
    cj = make_cut(type_, "branches")
    for q, _ in _states(TREE, 3, 11):
        assert np.all(np.abs(_g(cj, TREE, q)) > 1e-4)


# ------------------------------------------------------------------------------ (2) G
@cases
@placements
def test_jacobian_matches_finite_differences(type_, placement):
    """G θ̇ = d/dt g(θ + tθ̇) at random non-closed configurations (eq. 13, 22, 32, 37, 41)."""
    cj = make_cut(type_, placement)
    h = 1e-6
    for q, qd in _states(TREE, 6, 1):
        G = _G(cj, TREE, q)
        assert G.shape == (cj.m, TREE.n)
        fd = (_g(cj, TREE, q + h * qd) - _g(cj, TREE, q - h * qd)) / (2 * h)
        np.testing.assert_allclose(G @ qd, fd, atol=1e-7)


@cases
@placements
def test_jacobian_columns_outside_the_loop_vanish(type_, placement):
    """Joints on both paths (or on neither) do not move r relative to k (paper eq. 16, 22, 28, 32, eq. 32)."""
    cj = make_cut(type_, placement)
    loop = cj.loop_variables(TREE)
    outside = np.setdiff1d(np.arange(TREE.n), loop)
    if placement == "ground_k":  # ground → b3: j0, jb1, jb2, jb3.1..3
        expected_loop = [TREE.variable_index(v) for v in ("j0", "jb1", "jb2", "jb3.1", "jb3.2", "jb3.3")]
    elif placement == "ground_r":  # a3 → ground: j0, ja1, ja2.1, ja2.2, ja3.1, ja3.2
        expected_loop = [TREE.variable_index(v) for v in ("j0", "ja1", "ja2.1", "ja2.2", "ja3.1", "ja3.2")]
    else:  # everything but the shared j0
        expected_loop = [i for i in range(TREE.n) if TREE.variable_names[i] != "j0"]
    assert sorted(loop.tolist()) == sorted(expected_loop)
    for q, _ in _states(TREE, 3, 2):
        G = _G(cj, TREE, q)
        np.testing.assert_allclose(G[:, outside], 0.0, atol=1e-12)
        assert np.linalg.norm(G[:, loop]) > 1e-3


# ------------------------------------------------------------------------------ (3) Ġθ̇
@cases
@placements
def test_bias_matches_finite_differences_of_G(type_, placement):
    """Ġθ̇ = d/dt G(θ + tθ̇) θ̇ at random non-closed configurations."""
    cj = make_cut(type_, placement)
    h = 1e-6
    for q, qd in _states(TREE, 6, 3):
        C, J, V, Ab = _kin(TREE, q, qd)
        b = bias(cj, C, V, Ab)
        fd = (_G(cj, TREE, q + h * qd) - _G(cj, TREE, q - h * qd)) @ qd / (2 * h)
        np.testing.assert_allclose(b, fd, atol=1e-7)


@cases
def test_second_derivative_of_g(type_):
    """g̈ = G θ̈ + Ġθ̇ (eq. 14) along θ(t) = θ0 + tθ̇ + ½t²θ̈, second central differences of g."""
    cj = make_cut(type_, "branches")
    rng = np.random.default_rng(4)
    h = 1e-4
    for q, qd in _states(TREE, 4, 5):
        qdd = rng.normal(size=TREE.n)
        g, G, b = evaluate(cj, TREE, q, qd)

        def path(t):
            return _g(cj, TREE, q + t * qd + 0.5 * t * t * qdd)

        fd = (path(h) - 2 * path(0.0) + path(-h)) / h**2
        np.testing.assert_allclose(G @ qdd + b, fd, atol=1e-6)
        np.testing.assert_allclose(g, path(0.0), atol=1e-15)


# ------------------------------------------------------------------------------ (4) joint motion
def _joint_motion(joint: JointSpec, theta):
    """Relative motion M(θ) = Π exp(θ_i Y_i) of the joint's own axes at the reference (eq. 2)."""
    M = np.eye(4)
    for kind, axis, t in zip(AXIS_KINDS[joint.type], joint.axes, theta):
        M = M @ expm(_hat(screw_coordinates(kind, joint.point, axis)) * t)
    return M


def _closed_poses(tree, cj, joint, theta, rng):
    """Random poses for all bodies, with C_k⁻¹C_r = A_k⁻¹ M(θ) A_r (body r moved by the joint)."""
    C = np.array([_random_pose(rng) for _ in range(tree.n)])
    A = lambda i: np.eye(4) if i < 0 else tree.A[i]  # noqa: E731
    rel = np.linalg.inv(A(cj.k)) @ _joint_motion(joint, theta) @ A(cj.r)
    if cj.r >= 0:
        Ck = np.eye(4) if cj.k < 0 else C[cj.k]
        C[cj.r] = Ck @ rel
    else:
        C[cj.k] = np.linalg.inv(rel)
    return C


@pytest.mark.parametrize("type_", ["S", "U", "R", "C", "P"])
@placements
def test_rows_vanish_under_the_joints_own_motion(type_, placement):
    """g ≡ 0 when r moves relative to k by the cut joint's free motion (any angles/offsets)."""
    parent, child = PLACEMENTS[placement]
    joint = _joint("cut", type_, parent, child, CUT_POINT, CUT_AXES[type_])
    cj = cut_joint(joint, TREE)
    rng = np.random.default_rng(6)
    for _ in range(10):
        theta = rng.uniform(-np.pi, np.pi, joint.dof)
        C = _closed_poses(TREE, cj, joint, theta, rng)
        np.testing.assert_allclose(residual(cj, C), 0.0, atol=1e-12)
        # a generic relative pose violates every row
        C_bad = C.copy()
        if cj.r >= 0:
            C_bad[cj.r] = _random_pose(rng)
        else:
            C_bad[cj.k] = _random_pose(rng)
        assert np.all(np.abs(residual(cj, C_bad)) > 1e-6)


@pytest.mark.parametrize("type_", ["S", "U", "R", "C", "P"])
@pytest.mark.parametrize("placement", ["branches", "ground_k"])
def test_rows_are_exactly_the_joints_constraints(type_, placement):
    """At closure the m rows are independent and annihilate exactly the joint's free twists.

    With G computed for V_k = 0 and an arbitrary body twist V_r of body r (an artificial J), the
    6 columns have rank m = 6 − DOF and their null space contains the twists of the joint's own
    axes: so the rows are the joint's constraints, no more and no fewer.
    """
    parent, child = PLACEMENTS[placement]
    joint = _joint("cut", type_, parent, child, CUT_POINT, CUT_AXES[type_])
    cj = cut_joint(joint, TREE)
    rng = np.random.default_rng(8)
    J = np.zeros((TREE.n, 6, 6))
    J[cj.r] = np.eye(6)
    h = 1e-6
    for _ in range(5):
        theta = rng.uniform(-np.pi, np.pi, joint.dof)
        C = _closed_poses(TREE, cj, joint, theta, rng)
        Gr = jacobian(cj, C, J)  # m × 6: rates caused by the body twist V_r
        sv = np.linalg.svd(Gr, compute_uv=False)
        assert sv[-1] > 1e-3, f"dependent rows: {sv}"
        assert Gr.shape == (6 - joint.dof, 6)
        M = _joint_motion(joint, theta)
        Ar = TREE.A[cj.r]
        for i in range(joint.dof):
            dt = np.zeros(joint.dof)
            dt[i] = h
            dM = (_joint_motion(joint, theta + dt) - _joint_motion(joint, theta - dt)) / (2 * h)
            # C_r = C_k A_k⁻¹ M(θ) A_r with C_k fixed: C_r⁻¹ ∂C_r/∂θ_i = A_r⁻¹ M⁻¹ ∂M/∂θ_i A_r
            Vr = _vee(np.linalg.inv(Ar) @ np.linalg.inv(M) @ dM @ Ar)
            assert np.linalg.norm(Vr) > 0.1
            np.testing.assert_allclose(Gr @ Vr, 0.0, atol=1e-8)


def test_distance_constraint_vanishes_on_the_sphere():
    cj = make_cut("distance", "branches")
    rng = np.random.default_rng(9)
    for _ in range(10):
        C = np.array([_random_pose(rng) for _ in range(TREE.n)])
        pk = C[cj.k, :3, :3] @ cj.d_k + C[cj.k, :3, 3]
        u = rng.normal(size=3)
        pr = pk + cj.length * u / np.linalg.norm(u)
        C[cj.r, :3, 3] = pr - C[cj.r, :3, :3] @ cj.d_r
        np.testing.assert_allclose(residual(cj, C), 0.0, atol=1e-14)
        C[cj.r, :3, 3] += 0.01 * u
        assert abs(residual(cj, C)[0]) > 1e-4


def test_u_joint_vanishing_element_is_12():
    """Paper Sec. 3.3: U axes along the 1-axis of J_k and the 2-axis of J_r. Then the invariant
    element of ΔR = Rot(u1, α) Rot(u2, β) is ΔR_12 (the paper's "(1,2)-element" is right); the
    vectors it prints, e_r = u1, e_k = u2, give ΔR_21 = sin α sin β, which is NOT invariant.
    cut_joint uses e_k = first axis, e_r = second axis, i.e. ΔR_12."""
    rng = np.random.default_rng(10)
    for _ in range(5):
        a, b = rng.uniform(-np.pi, np.pi, 2)
        dR = Rotation.from_rotvec([a, 0, 0]).as_matrix() @ Rotation.from_rotvec([0, b, 0]).as_matrix()
        assert abs(dR[0, 1]) < 1e-15
        assert dR[1, 0] == pytest.approx(np.sin(a) * np.sin(b))
    # and the kernel agrees: a U with perpendicular axes u1 (on k), u2 (on r), J frames = world
    joint = _joint("cut", "U", "a3", "b3", CUT_POINT, [[1, 0, 0], [0, 1, 0]])
    cj = cut_joint(joint, TREE)
    C = _closed_poses(TREE, cj, joint, [0.7, -1.1], rng)
    Rk, Rr = C[cj.k, :3, :3], C[cj.r, :3, :3]
    Ak, Ar = TREE.A[cj.k, :3, :3], TREE.A[cj.r, :3, :3]
    dR = (Rk @ Ak.T).T @ (Rr @ Ar.T)  # ΔR with J_k, J_r parallel to the world at the reference
    assert residual(cj, C)[3] == pytest.approx(dR[0, 1], abs=1e-15)
    assert abs(dR[1, 0]) > 0.1


# ------------------------------------------------------------------------------ typo of eq. (28)
def test_eq28_first_block_is_only_valid_at_closure():
    """Spec §14.2 item 12: eq. (28)'s first block reduces to skew(^kd_{k,λ}) only at closure;
    the exact block skew(^kr_{k,r} + ^kd_{r,λ}) of eq. (22) is needed away from it."""
    cj = make_cut("S", "branches")  # n = 3 directions: the whole ρ

    def G28(C, J):
        Rk, Rr = C[cj.k, :3, :3], C[cj.r, :3, :3]
        Rkr = Rk.T @ Rr
        B = np.hstack([_skew(cj.d_k), -np.eye(3), -Rkr @ _skew(cj.d_r), Rkr])
        return cj.n @ B @ np.vstack([J[cj.k], J[cj.r]])

    q, qd = next(_states(TREE, 1, 12))
    C, J = forward_kinematics(TREE, q), body_jacobians(TREE, q)
    h = 1e-6
    fd = (_g(cj, TREE, q + h * qd) - _g(cj, TREE, q - h * qd)) / (2 * h)
    np.testing.assert_allclose(jacobian(cj, C, J) @ qd, fd, atol=1e-7)
    assert np.linalg.norm(G28(C, J) @ qd - fd) > 1e-2  # the closure-only form is wrong here
    # at closure (the reference) both forms agree
    q0 = np.zeros(TREE.n)
    C0, J0 = forward_kinematics(TREE, q0), body_jacobians(TREE, q0)
    np.testing.assert_allclose(G28(C0, J0), jacobian(cj, C0, J0), atol=1e-14)


# ------------------------------------------------------------------------------ (5) Delta
@pytest.fixture(scope="module")
def delta():
    spec = load_spec(ROBOTS / "delta_3rr2rrr.toml")
    tree = limb_tree(spec, "limb1")
    return tree, cut_joint(spec.joint("limb1/7"), tree)


def _delta_configs(count, seed):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        t1, t2, t4, t6 = rng.uniform(-1.0, 1.0, 4)
        yield np.array([t1, t2, -t4, t4, -t4, t6])


def test_delta_cut_joint_7(delta):
    tree, cj = delta
    assert tree.variable_names == tuple(f"limb1/{i}" for i in range(1, 7))
    assert (cj.type, cj.m) == ("R", 5)
    assert (cj.body_k, cj.body_r) == ("limb1/rod2", "limb1/lower_link")
    assert cj.loop_variables(tree).tolist() == [2, 3, 4]  # θ3, θ4, θ5


def test_delta_parallelogram_closure_and_H(delta):
    """θ3 = θ5 = −θ4 closes the loop; G has rank 2; H = (−1, −1, 1) in order (θ3, θ5, θ4) (eq. 48)."""
    tree, cj = delta
    for q in _delta_configs(10, 13):
        g, G = evaluate(cj, tree, q)
        np.testing.assert_allclose(g, 0.0, atol=1e-12)
        assert G.shape == (5, 6)
        sv = np.linalg.svd(G, compute_uv=False)
        assert sv[1] > 1e-3 * sv[0] and sv[2] < 1e-12 * sv[0], sv
        np.testing.assert_allclose(G[:, [0, 1, 5]], 0.0, atol=1e-12)
        _, s3, vt = np.linalg.svd(G[:, 2:5])
        null = vt[-1] / vt[-1][1]  # normalise θ̇4 = 1
        np.testing.assert_allclose(null, [-1.0, 1.0, -1.0], atol=1e-10)
        Gy, Gq = G[:, [2, 4]], G[:, [3]]
        H = np.vstack([-np.linalg.lstsq(Gy, Gq, rcond=None)[0], [[1.0]]])
        np.testing.assert_allclose(H.ravel(), [-1.0, -1.0, 1.0], atol=1e-10)


def test_delta_bias_vanishes_along_admissible_motion(delta):
    """H is constant, so along θ(t) = θ0 + tH q̇ the loop stays closed and Ġθ̇ = 0 (eq. 47)."""
    tree, cj = delta
    rng = np.random.default_rng(14)
    for q in _delta_configs(5, 15):
        t1, t2, t4, t6 = rng.normal(size=4)
        qd = np.array([t1, t2, -t4, t4, -t4, t6])
        g, G, b = evaluate(cj, tree, q, qd)
        np.testing.assert_allclose(G @ qd, 0.0, atol=1e-12)
        np.testing.assert_allclose(b, 0.0, atol=1e-12)
    # …but not along an inadmissible one
    _, _, b = evaluate(cj, tree, q, rng.normal(size=6))
    assert np.linalg.norm(b) > 1e-6


# ------------------------------------------------------------------------------ API
def test_kernels_write_into_preallocated_outputs():
    cj = make_cut("P", "branches")
    q, qd = next(_states(TREE, 1, 16))
    C, J, V, Ab = _kin(TREE, q, qd)
    args = (cj.k, cj.r, cj.d_k, cj.d_r, cj.n, cj.e_k, cj.e_r, cj.c0, C)
    g, G, b = np.full(cj.m, np.nan), np.full((cj.m, TREE.n), np.nan), np.full(cj.m, np.nan)
    cut_residual_into(*args, g)
    cut_jacobian_into(*args, J, G)
    cut_bias_into(*args, V, Ab, b)
    np.testing.assert_array_equal(g, residual(cj, C))
    np.testing.assert_array_equal(G, jacobian(cj, C, J))
    np.testing.assert_array_equal(b, bias(cj, C, V, Ab))


def test_wrappers_validate_shapes():
    cj = make_cut("R", "branches")
    C = forward_kinematics(TREE, np.zeros(TREE.n))
    J = body_jacobians(TREE, np.zeros(TREE.n))
    V = np.zeros((TREE.n, 6))
    with pytest.raises(ValueError, match="shape"):
        residual(cj, C[:, :3])
    with pytest.raises(ValueError, match="out of range"):
        residual(cj, C[:3])
    with pytest.raises(ValueError, match="shape"):
        jacobian(cj, C, J[:-1])
    with pytest.raises(ValueError, match="shape"):
        bias(cj, C, V, V[:, :3])
