"""The joint catalogue in absolute coordinates (seeds 000, 001, 002; issue 16 deliverable 2).

Checked against things the constraint code does not use: central finite differences of Φ for the
Jacobian and Φ_t, a five-point second difference of Φ along a path for γ (random, NON-assembled
configurations and velocities, rheonomic laws included); the motions each joint should allow,
written from the papers' definitions (tests/absolute_cases.py), for the DOF count and the null
space; finite motions along and across those freedoms; and the virtual work of the reported
reaction wrenches on rigid virtual displacements written out by hand.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from absolute_cases import ALL, CATALOGUE, RHEONOMIC, assembled, free_twists, rigid_displacement, rodrigues
from pkm.absolute import LOCK_MASKS, Lock, Marker, Revolute, laws
from pkm.absolute.body import internal_jacobian, internal_null_space

KINDS = sorted(ALL)


def _rng(*key):
    """A generator seeded by the test case (reproducible: not Python's salted ``hash``)."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))
SIDES = [None, "i", "j"]  # no ground, ground on side i, ground on side j


def _random_state(rng, joint):
    """Random (not assembled, not orthonormal) coordinates and velocities for the joint's bodies."""
    qs = [None if b is None else rng.normal(size=12) for b in joint.bodies]
    qds = [None if b is None else rng.normal(size=12) for b in joint.bodies]
    return qs, qds


# ============================================================================ derivatives
@pytest.mark.parametrize("ground", SIDES)
@pytest.mark.parametrize("kind", KINDS)
def test_jacobian_and_phi_t_match_finite_differences(kind, ground):
    rng = _rng(kind, ground)
    joint = assembled(rng, kind, ground)[0]
    h = 1e-6
    for _ in range(3):
        (qi, qj), _ = _random_state(rng, joint)
        t = rng.uniform(-1.0, 1.0)
        J = joint.jacobian(qi, qj, t)
        for side, q in enumerate((qi, qj)):
            if q is None:
                assert J[side] is None
                continue
            fd = np.empty((joint.m, 12))
            for k in range(12):
                e = np.zeros(12)
                e[k] = h
                args_p = [qi, qj]
                args_m = [qi, qj]
                args_p[side], args_m[side] = q + e, q - e
                fd[:, k] = (joint.phi(*args_p, t) - joint.phi(*args_m, t)) / (2 * h)
            assert np.max(np.abs(fd - J[side])) <= 1e-7, (kind, side)
        fd_t = (joint.phi(qi, qj, t + h) - joint.phi(qi, qj, t - h)) / (2 * h)
        assert np.max(np.abs(fd_t - joint.phi_t(qi, qj, t))) <= 1e-7
        if not joint.rheonomic:
            assert np.all(joint.phi_t(qi, qj, t) == 0.0)


@pytest.mark.parametrize("ground", SIDES)
@pytest.mark.parametrize("kind", KINDS)
def test_gamma_is_minus_the_second_derivative_along_a_path(kind, ground):
    """Along q(s) = q + s q̇ + ½ s² q̈, t(s) = t + s: Φ'' = Φ_q q̈ − γ (fourth-order stencil)."""
    rng = _rng(kind, ground, "γ")
    joint = assembled(rng, kind, ground)[0]
    h = 1e-3
    for _ in range(3):
        (qi, qj), (qdi, qdj) = _random_state(rng, joint)
        qdd = [None if q is None else rng.normal(size=12) for q in (qi, qj)]
        t = rng.uniform(-1.0, 1.0)

        def phi(s):
            at = [None if q is None else q + s * v + 0.5 * s * s * a for q, v, a in zip((qi, qj), (qdi, qdj), qdd)]
            return joint.phi(*at, t + s)

        second = (-phi(2 * h) + 16 * phi(h) - 30 * phi(0.0) + 16 * phi(-h) - phi(-2 * h)) / (12 * h * h)
        J = joint.jacobian(qi, qj, t)
        Jqdd = sum(Jb @ a for Jb, a in zip(J, qdd) if Jb is not None)
        gamma = joint.gamma(qi, qj, qdi, qdj, t)
        assert np.max(np.abs(second - (Jqdd - gamma))) <= 1e-7, kind
        first = (-phi(2 * h) + 8 * phi(h) - 8 * phi(-h) + phi(-2 * h)) / (12 * h)
        Jqd = sum(Jb @ v for Jb, v in zip(J, (qdi, qdj)) if Jb is not None)
        assert np.max(np.abs(first - (Jqd + joint.phi_t(qi, qj, t)))) <= 1e-7, kind


def test_the_rotation_law_of_the_tests_is_consistent():
    """The test law's ω, ω̇ are R⁻¹Ṙ and its derivative (else the γ test would test the law)."""
    from absolute_cases import rotation_law
    law, h = rotation_law(), 1e-5
    for t in (-0.7, 0.2, 1.1):
        R, w, wd = law(t)
        Rd = (law(t + h)[0] - law(t - h)[0]) / (2 * h)
        W = R.T @ Rd
        assert np.allclose([W[2, 1], W[0, 2], W[1, 0]], w, atol=1e-9)
        assert np.allclose((law(t + h)[1] - law(t - h)[1]) / (2 * h), wd, atol=1e-9)


def test_batches_give_the_single_results():
    rng = np.random.default_rng(7)
    joint = assembled(rng, "lock-weld-t-r")[0]
    qi, qj, qdi, qdj = (rng.normal(size=(4, 12)) for _ in range(4))
    J = joint.jacobian(qi, qj, 0.3)
    g = joint.gamma(qi, qj, qdi, qdj, 0.3)
    lam = rng.normal(size=(4, joint.m))
    W = joint.reaction(qi, qj, lam, 0.3)
    for k in range(4):
        Jk = joint.jacobian(qi[k], qj[k], 0.3)
        assert np.allclose(J[0][k], Jk[0]) and np.allclose(J[1][k], Jk[1])
        assert np.allclose(g[k], joint.gamma(qi[k], qj[k], qdi[k], qdj[k], 0.3))
        Wk = joint.reaction(qi[k], qj[k], lam[k], 0.3)
        assert np.allclose(W[0][k], Wk[0]) and np.allclose(W[1][k], Wk[1])


# ============================================================================ DOF and relative motion
@pytest.mark.parametrize("kind", KINDS)
def test_each_joint_removes_its_rows_worth_of_freedom(kind):
    """rank [G_int; Φ_q] = 12 + m for two free bodies at an assembled configuration."""
    rng = _rng(kind, "dof")
    joint, bodies, qi, qj = assembled(rng, kind, t=0.4)
    assert np.max(np.abs(joint.phi(qi, qj, 0.4))) < 1e-12
    Ji, Jj = joint.jacobian(qi, qj, 0.4)
    G = np.zeros((12 + joint.m, 24))
    G[:6, :12], G[6:12, 12:] = internal_jacobian(qi), internal_jacobian(qj)
    G[12:, :12], G[12:, 12:] = Ji, Jj
    s = np.linalg.svd(G, compute_uv=False)
    assert joint.m == ALL[kind][1]
    assert s[-1] > 1e-6 * s[0], (kind, s)  # full row rank 12 + m: exactly m DOF removed


@pytest.mark.parametrize("ground", ["i", "j"])
@pytest.mark.parametrize("kind", sorted(CATALOGUE))
def test_the_moving_body_has_exactly_the_joints_freedoms(kind, ground):
    """With one side on the ground, ker(Φ_q P_int) of the moving body = the joint's motions."""
    rng = _rng(kind, ground, "free")
    joint, bodies, qi, qj = assembled(rng, kind, ground)
    side = 1 if ground == "i" else 0
    q = (qi, qj)[side]
    marker = (joint.marker_i, joint.marker_j)[side]
    F = marker.world_pose(q)
    axes = F[:3, :3]
    if kind == "distance":  # link direction as "z"
        other = (joint.marker_i, joint.marker_j)[1 - side].world_pose()
        z = F[:3, 3] - other[:3, 3]
        axes = np.linalg.qr(np.column_stack([z, rng.normal(size=(3, 2))]))[0]
        axes = np.roll(axes, -1, axis=1)
    expected = free_twists(kind, F[:3, 3], axes)
    # expected columns are (ω; velocity of the marker point): move to (ω; v_φ) of the body
    arm = q[:3] - F[:3, 3]
    expected = np.vstack([expected[:3], expected[3:] + np.cross(expected[:3].T, arm).T])
    A = joint.jacobian(qi, qj)[side] @ internal_null_space(q)
    _, s, Vt = np.linalg.svd(A)
    rank = int(np.sum(s > 1e-9 * s[0]))
    assert rank == joint.m
    N = Vt[rank:].T
    assert N.shape[1] == expected.shape[1] == 6 - joint.m
    # same subspace: each spans the other
    assert np.max(np.abs(expected - N @ (N.T @ expected)), initial=0.0) < 1e-10
    assert np.max(np.abs(A @ expected), initial=0.0) < 1e-10


def _moved(joint, qi, qj, R, u):
    """qj after moving body j rigidly by rotation R about marker i's origin, then by u."""
    o = joint.marker_i.world_pose(qi)[:3, 3]
    out = qj.copy()
    out[:3] = o + R @ (qj[:3] - o) + u
    for I in range(3):
        out[3 + 3 * I:6 + 3 * I] = R @ qj[3 + 3 * I:6 + 3 * I]
    return out


@pytest.mark.parametrize("kind", ["revolute", "cylindrical", "prismatic", "planar", "universal", "spherical",
                                  "lock-revolute", "lock-cylindrical", "lock-plane_on_plane", "lock-point_on_line",
                                  "lock-homokinetic", "lock-oldham"])
def test_finite_motions_along_the_freedoms_keep_the_joint_closed_and_regular(kind):
    """Large allowed motions (half turns included) keep Φ = 0 and full row rank; a small
    forbidden one does not keep Φ = 0."""
    rng = _rng(kind, "finite")
    joint, bodies, qi, qj = assembled(rng, kind)
    F = joint.marker_i.world_pose(qi)
    x, y, z = F[:3, 0], F[:3, 1], F[:3, 2]
    I3 = np.eye(3)
    allowed = {
        "revolute": [(rodrigues(z, a), 0 * z) for a in (1.0, np.pi, -2.5)],
        "cylindrical": [(rodrigues(z, np.pi), 0.7 * z), (rodrigues(z, -2.0), -0.3 * z)],
        "prismatic": [(I3, 1.3 * z), (I3, -0.4 * z)],
        "planar": [(rodrigues(z, np.pi), 0.5 * x - 0.8 * y), (rodrigues(z, 2.2), 0.2 * y)],
        "universal": [(rodrigues(x, 1.1) @ rodrigues(y, -0.7), 0 * z), (rodrigues(x, -2.0) @ rodrigues(y, 0.9), 0 * z)],
        "spherical": [(rodrigues(rng.normal(size=3), 2.5), 0 * z)],
    }
    allowed["lock-revolute"] = allowed["revolute"]
    allowed["lock-cylindrical"] = allowed["cylindrical"]
    allowed["lock-plane_on_plane"] = allowed["planar"]
    R_any = rodrigues(rng.normal(size=3), 2.0)
    allowed["lock-point_on_line"] = [(R_any, 0.6 * R_any @ z)]  # S's line, turned, still through P
    # homokinetic: a bend about x or y (quaternion z-part 0), large
    allowed["lock-homokinetic"] = [(rodrigues(x, 1.2), 0 * z), (rodrigues(x + 0.5 * y, -2.0), 0 * z)]
    allowed["lock-oldham"] = [(I3, 0.4 * y - 0.9 * z)]
    for R, u in allowed[kind]:
        # rotations about marker i's axes: the lock's S is marker j, P is marker i; moving j by R
        # gives the relative rotation Rᵀ — allowed just the same for these axes
        qm = _moved(joint, qi, qj, R, u)
        assert np.max(np.abs(joint.phi(qi, qm))) < 1e-12, (kind, R, u)
        Ji, Jj = joint.jacobian(qi, qm)
        G = np.zeros((12 + joint.m, 24))
        G[:6, :12], G[6:12, 12:] = internal_jacobian(qi), internal_jacobian(qm)
        G[12:, :12], G[12:, 12:] = Ji, Jj
        s = np.linalg.svd(G, compute_uv=False)
        assert s[-1] > 1e-3 * s[0], (kind, s[-3:])
    # a forbidden motion: rotation about an axis perpendicular to every allowed rotation, or a push
    forbidden = {"prismatic": (rodrigues(x, 0.1), 0 * z), "planar": (I3, 0.1 * z),
                 "universal": (rodrigues(z, 0.1), 0 * z), "spherical": (I3, 0.1 * x),
                 "lock-point_on_line": (I3, 0.1 * x), "lock-homokinetic": (rodrigues(z, 0.1), 0 * z),
                 "lock-oldham": (I3, 0.1 * x)}
    R, u = forbidden.get(kind, (rodrigues(x, 0.1), 0 * z))
    assert np.max(np.abs(joint.phi(qi, _moved(joint, qi, qj, R, u)))) > 1e-3


def test_lock_rows_are_seed_001s_to_first_order():
    """Small relative motion of P w.r.t. S: translation rows = the displacement in S axes, rotation
    rows = the rotation vector in S axes (= 2 × the quaternion's vector part, seed 001 eq. 72)."""
    rng = np.random.default_rng(3)
    joint, bodies, qi, qj = assembled(rng, "lock-weld")
    FS = joint.marker_j.world_pose(qj)
    eps = 1e-7
    dx, dth = rng.normal(size=3), rng.normal(size=3)
    Rw = FS[:3, :3] @ rodrigues(dth, eps * np.linalg.norm(dth)) @ FS[:3, :3].T
    qp = qi.copy()
    o = FS[:3, 3]
    qp[:3] = o + Rw @ (qi[:3] - o) + eps * FS[:3, :3] @ dx
    for I in range(3):
        qp[3 + 3 * I:6 + 3 * I] = Rw @ qi[3 + 3 * I:6 + 3 * I]
    assert np.allclose(joint.phi(qp, qj) / eps, np.concatenate([dx, dth]), atol=1e-6)


@pytest.mark.parametrize("mask", [("rz",), ("z",)])
def test_a_drive_follows_its_law_and_its_multiplier_is_the_effort(mask):
    """A revolute + a one-row rheonomic lock: the relative angle (slide) is the law's value; the
    lock's reaction on body P is a pure moment (force) −λ along z of S."""
    rng = np.random.default_rng(11)
    law = laws.sine(0.9, 1.7, 0.2)
    rheo = dict(rotation=laws.about([0, 0, 1], law)) if mask == ("rz",) else dict(
        translation=laws.along([0, 0, 1], law))
    t = 0.8
    joint, bodies, qi, qj = assembled(rng, "revolute" if mask == ("rz",) else "cylindrical")
    drive = Lock(joint.marker_i, joint.marker_j, mask, **rheo)
    # move body i (P) about/along z of marker j (S) by the law's value: the drive is then satisfied
    FS = joint.marker_j.world_pose(qj)
    z = FS[:3, 2]
    R = rodrigues(z, law(t)[0]) if mask == ("rz",) else np.eye(3)
    u = np.zeros(3) if mask == ("rz",) else law(t)[0] * z
    o = FS[:3, 3]
    qp = qi.copy()
    qp[:3] = o + R @ (qi[:3] - o) + u
    for I in range(3):
        qp[3 + 3 * I:6 + 3 * I] = R @ qi[3 + 3 * I:6 + 3 * I]
    assert np.max(np.abs(joint.phi(qp, qj))) < 1e-12
    assert np.max(np.abs(drive.phi(qp, qj, t))) < 1e-12
    Wp, Ws = drive.reaction(qp, qj, np.array([2.5]), t)
    effort = np.concatenate([-2.5 * z, np.zeros(3)]) if mask == ("rz",) else np.concatenate([np.zeros(3), -2.5 * z])
    assert np.allclose(Wp, effort, atol=1e-12)
    assert np.allclose(Ws, -effort, atol=1e-12)


# ============================================================================ reactions
@pytest.mark.parametrize("ground", SIDES)
@pytest.mark.parametrize("kind", KINDS)
def test_reaction_wrenches_do_the_multipliers_virtual_work(kind, ground):
    """−λᵀ Φ_q δq = Σ_bodies W·(δθ; δp) for rigid virtual displacements (δθ, δp of the marker point),
    about the marker and about the centre of mass; balancing each other (equal and opposite where the
    markers coincide);
    and no work on the motions the joint allows."""
    rng = _rng(kind, ground, "W")
    t = 0.3
    joint, bodies, qi, qj = assembled(rng, kind, ground, t=t)
    lam = rng.normal(size=joint.m)
    J = joint.jacobian(qi, qj, t)
    for about in ("marker", "com"):
        W = joint.reaction(qi, qj, lam, t, about=about)
        for _ in range(3):
            lhs, rhs = 0.0, 0.0
            for side, (q, marker) in enumerate(zip((qi, qj), (joint.marker_i, joint.marker_j))):
                if q is None:
                    assert W[side] is None
                    continue
                point = marker.world_pose(q)[:3, 3] if about == "marker" else q[:3]
                dth, dp = rng.normal(size=3), rng.normal(size=3)
                lhs += -lam @ J[side] @ rigid_displacement(q, dth, dp, point)
                rhs += W[side] @ np.concatenate([dth, dp])
            assert abs(lhs - rhs) <= 1e-10 * (1.0 + abs(lhs)), (kind, about)
    W = joint.reaction(qi, qj, lam, t)
    if ground is None:  # Φ is invariant under rigid motions of the pair: the wrenches balance
        arm = joint.marker_j.world_pose(qj)[:3, 3] - joint.marker_i.world_pose(qi)[:3, 3]
        Wj_at_i = np.concatenate([W[1][:3] + np.cross(arm, W[1][3:]), W[1][3:]])
        assert np.allclose(W[0], -Wj_at_i, atol=1e-10)
        if not np.any(arm):
            assert np.allclose(W[0], -W[1], atol=1e-10)
    if kind in CATALOGUE:  # no work on the allowed motions of the moving body
        side = 0 if ground == "j" else 1
        if ground is not None:
            q = (qi, qj)[side]
            F = (joint.marker_i, joint.marker_j)[side].world_pose(q)
            if kind != "distance":
                assert np.max(np.abs(W[side] @ free_twists(kind, F[:3, 3], F[:3, :3])), initial=0.0) < 1e-10


def test_distance_reaction_is_a_force_along_the_link():
    rng = np.random.default_rng(5)
    joint, bodies, qi, qj = assembled(rng, "distance")
    Wi, Wj = joint.reaction(qi, qj, np.array([0.7]))
    d = joint.marker_j.world_pose(qj)[:3, 3] - joint.marker_i.world_pose(qi)[:3, 3]
    assert np.allclose(Wi[:3], 0.0, atol=1e-12) and np.allclose(Wj[:3], 0.0, atol=1e-12)
    assert np.allclose(Wj[3:], -2 * 0.7 * d) and np.allclose(Wi[3:], 2 * 0.7 * d)  # −Φ_qᵀλ, seed 000 eq. 11


# ============================================================================ construction
def test_bad_joints_are_refused():
    rng = np.random.default_rng(0)
    joint, bodies, qi, qj = assembled(rng, "revolute")
    with pytest.raises(ValueError, match="both markers are on the ground"):
        Revolute(Marker(None), Marker(None))
    with pytest.raises(ValueError, match="both markers are on body"):
        Revolute(Marker(bodies[0]), Marker(bodies[0]))
    with pytest.raises(ValueError, match="unknown lock mask"):
        Lock(joint.marker_i, joint.marker_j, "hinge")
    with pytest.raises(ValueError, match="unknown lock rows"):
        Lock(joint.marker_i, joint.marker_j, ("x", "w"))
    with pytest.raises(ValueError, match="at least one row"):
        Lock(joint.marker_i, joint.marker_j, [False] * 6)
    with pytest.raises(ValueError, match="rotation"):
        Marker(bodies[0], axes=np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match="side j needs"):
        joint.phi(qi, None)
    assert Lock(joint.marker_i, joint.marker_j, [True, False, True, False, False, True]).row_names == ("x", "z", "rz")
    assert set(LOCK_MASKS) >= {"weld", "point_on_line", "point_on_plane", "oldham", "revolute", "prismatic"}


def test_every_lock_mask_has_full_row_rank():
    """All 63 non-empty row subsets of seed 001's lock remove as many DOF as they have rows."""
    rng = np.random.default_rng(9)
    joint, bodies, qi, qj = assembled(rng, "lock-weld")
    for bits in range(1, 64):
        mask = [bool(bits >> k & 1) for k in range(6)]
        lock = Lock(joint.marker_i, joint.marker_j, mask)
        Ji, Jj = lock.jacobian(qi, qj)
        A = np.hstack([Ji @ internal_null_space(qi), Jj @ internal_null_space(qj)])
        assert np.linalg.matrix_rank(A, tol=1e-9) == sum(mask), mask
        assert np.max(np.abs(lock.phi(qi, qj))) < 1e-12
