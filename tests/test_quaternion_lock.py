"""Seed 001's lock with quaternion rotation rows (pkm.absolute.quaternion_lock; issue 28 part 2).

Checked against things the lock does not use: central finite differences of Φ (Jacobian, Φ_t) and a
five-point second difference along a path (γ) for all 64 row masks of the seed, scleronomic and
with every law (relative motion and both markers' own motion), at non-orthonormal directors;
scipy's quaternion of the error rotation and the director lock's rows; poses built from the laws'
meaning; scipy's polar decomposition; the director joints' constrained accelerations and reactions.
And the point of it: a weld turned by 180° is a residual of 1, not the director form's false zero.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest
import scipy.linalg
from scipy.spatial.transform import Rotation

from absolute_cases import random_body, random_pose, rodrigues, rotation_law, translation_law
from pkm.absolute import (
    AssemblyError,
    AssemblyModeError,
    EnergyMomentum,
    Lock,
    Marker,
    QuaternionLock,
    Revolute,
    System,
    laws,
)
from pkm.absolute import quaternion as qa
from pkm.absolute.body import internal_null_space
from pkm.errors import InputError

SIDES = [None, "i", "j"]


def _rng(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _laws():
    """Every law of the lock: relative translation and rotation, P's and S's own motion."""
    return dict(translation=translation_law(), rotation=rotation_law(),
                p_translation=laws.along([1.0, 2.0, -1.0], laws.sine(0.3, 1.7, 0.4)),
                p_rotation=laws.about([1.0, 2.0, 3.0], laws.sine(0.6, 1.1, 0.2)),
                s_translation=translation_law(), s_rotation=rotation_law())


def _markers(rng, ground):
    bodies = [None if ground == "i" else random_body(rng, "A"), None if ground == "j" else random_body(rng, "B")]
    qs = [None if b is None else b.coordinates(random_pose(rng)) for b in bodies]
    return [Marker.at(b, q, random_pose(rng, 0.5)) for b, q in zip(bodies, qs)], qs


def _case(rng, ground, rheonomic, t):
    """Markers, a weld, and a NON-orthonormal state (directors perturbed by 0.05) away from the
    hemisphere switch c₀ = 0 (the rows' only discontinuity)."""
    while True:
        markers, qs = _markers(rng, ground)
        weld = QuaternionLock(*markers, "weld", **(_laws() if rheonomic else {}))
        qs = [None if q is None else q + 0.05 * rng.normal(size=12) for q in qs]
        if weld.error_quaternion(*qs, t)[0] > 0.2:
            qds = [None if q is None else rng.normal(size=12) for q in qs]
            return markers, qs, qds


# ============================================================================ the algebra
def test_quaternion_algebra_is_the_seeds():
    """[q]⁺p = [p]⁻q = q ⊗ p written out (eq. 10), χ q = q*, eq. 3 = scipy's matrix, Shepperd round trip
    (half turns included), and the law's q̇, q̈ against differences of the law's own quaternion."""
    rng = np.random.default_rng(1)
    for q, p in rng.normal(size=(5, 2, 4)):
        s1, v1, s2, v2 = q[0], q[1:], p[0], p[1:]
        ref = np.concatenate([[s1 * s2 - v1 @ v2], s1 * v2 + s2 * v1 + np.cross(v1, v2)])
        assert np.allclose(qa.plus(q) @ p, ref) and np.allclose(qa.minus(p) @ q, ref)
        assert np.allclose(qa.mul(q, p), ref) and np.allclose(qa.conj(q), q * [1, -1, -1, -1])
    for rot in [Rotation.random(random_state=rng) for _ in range(5)] + [Rotation.from_rotvec([0, np.pi, 0]),
                                                                     Rotation.from_rotvec([np.pi, 0, 0])]:
        x, y, z, w = rot.as_quat()
        q = np.array([w, x, y, z])
        assert np.allclose(qa.to_matrix(q), rot.as_matrix(), atol=1e-14)
        back = qa.from_matrix(rot.as_matrix())
        assert min(np.abs(back - q).max(), np.abs(back + q).max()) < 1e-14
    law, t, h = rotation_law(), 0.4, 1e-4
    q, qd, qdd = qa.law_rates(*law(t))
    near = [qa.from_matrix(law(t + k * h)[0]) for k in (-1, 0, 1)]
    near = [n * np.sign(n @ q) for n in near]  # the same hemisphere as q
    assert np.allclose((near[2] - near[0]) / (2 * h), qd, atol=1e-7)
    assert np.allclose((near[2] - 2 * near[1] + near[0]) / h**2, qdd, atol=1e-6)


def test_the_frame_rotation_is_scipys_polar_factor_with_its_derivatives():
    """R = scipy's polar factor of D; J, ω, α against differences of it along D + s Ḋ."""
    rng = np.random.default_rng(2)
    for _ in range(3):
        D = Rotation.random(random_state=rng).as_matrix() + 0.2 * rng.normal(size=(3, 3))
        Dd = rng.normal(size=(3, 3))
        R, J, w, a = qa.frame_rotation(D, Dd)
        assert np.allclose(R, scipy.linalg.polar(D)[0], atol=1e-13)

        def polar(s):
            return scipy.linalg.polar(D + s * Dd)[0]

        h = 1e-4
        Rd, Rdd = (polar(h) - polar(-h)) / (2 * h), (polar(h) - 2 * polar(0) + polar(-h)) / h**2
        W = Rd @ R.T
        assert np.allclose([W[2, 1], W[0, 2], W[1, 0]], w, atol=1e-7)
        assert np.allclose([W[2, 1], W[0, 2], W[1, 0]], J @ Dd.T.ravel(), atol=1e-7)
        A = Rdd @ R.T - W @ W
        assert np.allclose([A[2, 1], A[0, 2], A[1, 0]], a, atol=1e-5)


# ============================================================================ every mask: derivatives
@pytest.mark.parametrize("rheonomic", [False, True], ids=["scleronomic", "rheonomic"])
@pytest.mark.parametrize("ground", SIDES)
def test_every_mask_matches_finite_differences(ground, rheonomic):
    """All 2⁶ = 64 masks of seed 001 §6: the empty one is refused; each of the 63 others gives the
    Jacobian and Φ_t of central differences (h = 1e-6) and γ with Φ'' = Φ_q q̈ − γ along
    q + s q̇ + ½s² q̈, t + s (five-point stencil), and its rows are the weld's rows of the mask."""
    rng = _rng(ground, rheonomic)
    t = 0.35
    markers, (qi, qj), (qdi, qdj) = _case(rng, ground, rheonomic, t)
    qdd = [None if q is None else rng.normal(size=12) for q in (qi, qj)]
    kw = _laws() if rheonomic else {}
    weld = QuaternionLock(*markers, "weld", **kw)
    with pytest.raises(InputError, match="at least one row"):
        QuaternionLock(*markers, [False] * 6, **kw)
    h, hh = 1e-6, 1e-3
    for bits in range(1, 64):
        mask = [bool(bits >> k & 1) for k in range(6)]
        lock = QuaternionLock(*markers, mask, **kw)
        assert lock.m == sum(mask) and lock.rheonomic == rheonomic
        assert np.array_equal(lock.phi(qi, qj, t), weld.phi(qi, qj, t)[mask])
        J = lock.jacobian(qi, qj, t)
        for side, q in enumerate((qi, qj)):
            if q is None:
                assert J[side] is None
                continue
            fd = np.empty((lock.m, 12))
            for k in range(12):
                e = np.zeros(12)
                e[k] = h
                plus_, minus_ = [qi, qj], [qi, qj]
                plus_[side], minus_[side] = q + e, q - e
                fd[:, k] = (lock.phi(*plus_, t) - lock.phi(*minus_, t)) / (2 * h)
            assert np.max(np.abs(fd - J[side])) <= 1e-7, (mask, side)
        fd_t = (lock.phi(qi, qj, t + h) - lock.phi(qi, qj, t - h)) / (2 * h)
        assert np.max(np.abs(fd_t - lock.phi_t(qi, qj, t))) <= 1e-7, mask

        def phi(s):
            at = [None if q is None else q + s * v + 0.5 * s * s * a for q, v, a in zip((qi, qj), (qdi, qdj), qdd)]
            return lock.phi(*at, t + s)

        second = (-phi(2 * hh) + 16 * phi(hh) - 30 * phi(0.0) + 16 * phi(-hh) - phi(-2 * hh)) / (12 * hh * hh)
        Jqdd = sum(Jb @ a for Jb, a in zip(J, qdd) if Jb is not None)
        gamma = lock.gamma(qi, qj, qdi, qdj, t)
        assert np.max(np.abs(second - (Jqdd - gamma))) <= 1e-7, mask
        phi1, J1, gamma1 = lock.evaluate(qi, qj, qdi, qdj, t)
        assert np.array_equal(phi1, phi(0.0)) and np.array_equal(gamma1, gamma)
        assert all(a is b is None or np.array_equal(a, b) for a, b in zip(J1, J))


# ============================================================================ what the rows are
def test_rows_are_the_error_quaternion_and_the_director_lock_is_twice_c0_times_them():
    """On the manifold: translation rows = the director lock's; rotation rows = the vector part of
    scipy's quaternion of R_Δᵀ R_Sᵀ R_P (w ≥ 0); the director weld's rotation rows = 2 c₀ × these."""
    rng = np.random.default_rng(4)
    law = rotation_law()
    for _ in range(4):
        (mp, ms), (qi, qj) = _markers(rng, None)
        quat, director = QuaternionLock(mp, ms, rotation=law), Lock(mp, ms, rotation=law)
        R_e = law(0.3)[0].T @ ms.world_pose(qj)[:3, :3].T @ mp.world_pose(qi)[:3, :3]
        x, y, z, w = Rotation.from_matrix(R_e).as_quat()
        e = np.array([w, x, y, z]) * np.sign(w)
        Pq, Pd = quat.phi(qi, qj, 0.3), director.phi(qi, qj, 0.3)
        assert np.allclose(Pq[3:], e[1:], atol=1e-13) and np.allclose(quat.error_quaternion(qi, qj, 0.3), e)
        assert np.allclose(Pq[:3], Pd[:3], atol=1e-13)
        assert np.allclose(Pd[3:], 2.0 * e[0] * Pq[3:], atol=1e-13)


def test_moving_markers_meet_where_the_laws_say():
    """Body O1 placed so that P moved by its laws sits at S moved by its laws times the relative law
    (X_P = X_S G_Δ, seed 001 eqs. 28, 46): every row vanishes; at t + 0.1 they do not."""
    rng = np.random.default_rng(6)
    kw = _laws()
    t = 0.7

    def pose(x_law, r_law, s):
        G = np.eye(4)
        G[:3, :3], G[:3, 3] = r_law(s)[0], x_law(s)[0]
        return G

    for ground in (None, "j"):
        b1 = random_body(rng, "A")
        b2 = None if ground == "j" else random_body(rng, "B")
        C1, C2, FP, FS = (random_pose(rng) for _ in range(4))
        q1 = b1.coordinates(C1)
        q2 = None if b2 is None else b2.coordinates(C2)
        lock = QuaternionLock(Marker.at(b1, q1, FP), Marker.at(b2, q2, FS), **kw)
        X_S = FS @ pose(kw["s_translation"], kw["s_rotation"], t)
        G_D = pose(kw["translation"], kw["rotation"], t)
        C1_new = X_S @ G_D @ np.linalg.inv(np.linalg.inv(C1) @ FP @ pose(kw["p_translation"], kw["p_rotation"], t))
        q1_new = b1.coordinates(C1_new)
        assert np.max(np.abs(lock.phi(q1_new, q2, t))) < 1e-12
        assert np.max(np.abs(lock.phi(q1_new, q2, t + 0.1))) > 1e-3


# ============================================================================ the half turn
def _welded_body(rng):
    """A body welded to the ground by P = S at the world frame F; its coordinates turned by ``deg``
    about an axis through the marker origin."""
    b = random_body(rng, "A")
    C0 = random_pose(rng)
    q0 = b.coordinates(C0)
    F = random_pose(rng, 0.5)
    mp, ms = Marker.at(b, q0, F), Marker(None, F[:3, 3], F[:3, :3])
    axis = rng.normal(size=3)

    def turned(deg):
        R, o = rodrigues(axis, np.radians(deg)), F[:3, 3]
        C = C0.copy()
        C[:3, :3], C[:3, 3] = R @ C0[:3, :3], o + R @ (C0[:3, 3] - o)
        return b.coordinates(C)

    return b, mp, ms, turned


def test_a_weld_turned_by_half_a_turn_is_a_residual_of_one_not_a_false_zero():
    """179°, 180°, 181°: the quaternion rows are n sin(ϑ/2) (|·| ≥ 0.9999), the director rows
    sin ϑ n (0.017, ~0, 0.017); translation rows 0 for both (the turn is about the marker origin).
    At 180° the quaternion rows' Jacobian has rank 2 in the rotations (seed 001's caveat)."""
    b, mp, ms, turned = _welded_body(np.random.default_rng(8))
    quat, director = QuaternionLock(mp, ms, "weld"), Lock(mp, ms, "weld")
    for deg in (179.0, 180.0, 181.0):
        q = turned(deg)
        Pq, Pd = quat.phi(q, None), director.phi(q, None)
        assert np.max(np.abs(Pq[:3])) < 1e-12 and np.max(np.abs(Pd[:3])) < 1e-12
        assert np.linalg.norm(Pq[3:]) == pytest.approx(np.sin(np.radians(deg) / 2), abs=1e-12)
        assert np.linalg.norm(Pq[3:]) > 0.9999
        assert np.linalg.norm(Pd[3:]) == pytest.approx(abs(np.sin(np.radians(deg))), abs=1e-12)
        if deg == 180.0:
            assert np.linalg.norm(Pd[3:]) < 1e-12        # the director weld holds: a false zero
            G = quat.jacobian(q, None)[0][3:] @ internal_null_space(q)[:, :3]  # rows × rotations δθ
            assert np.linalg.matrix_rank(G, tol=1e-9) == 2
            assert np.linalg.norm(G.T @ Pq[3:]) < 1e-12  # the residual is stationary along n
    # a drive row at θ + π: the director row 2 c₀ c_z is 0 there, the quaternion row is 1
    drive_law = laws.about([0, 0, 1], laws.constant(0.4))
    drive_q = QuaternionLock(mp, ms, ("rz",), rotation=drive_law)
    drive_d = Lock(mp, ms, ("rz",), rotation=drive_law)
    R = rodrigues(ms.axes[:, 2], 0.4 + np.pi)
    C = b.pose(turned(0.0))
    o = ms.origin
    C[:3, :3], C[:3, 3] = R @ C[:3, :3], o + R @ (C[:3, 3] - o)
    q = b.coordinates(C)
    assert abs(drive_d.phi(q, None)[0]) < 1e-12 and abs(drive_q.phi(q, None)[0]) == pytest.approx(1.0, abs=1e-12)


def test_newton_near_a_half_turn_finds_the_weld_or_fails_never_the_half_turn():
    """System.assemble from 179°, 179.9°, 181°: with the quaternion weld it converges to the true
    weld (0°); exactly at 180° it stops with AssemblyError (residual 1 along n cannot be reduced
    there). With the director weld Newton converges to the half turn (Φ ≤ 1e-12), which only the
    separate false-zero guard refuses (AssemblyModeError)."""
    b, mp, ms, turned = _welded_body(np.random.default_rng(10))
    quat, director = System([b], [QuaternionLock(mp, ms, "weld")]), System([b], [Lock(mp, ms, "weld")])
    for deg in (179.0, 179.9, 181.0):
        q = quat.assemble(turned(deg))
        assert np.allclose(b.pose(q), b.pose(turned(0.0)), atol=1e-10), deg
        with pytest.raises(AssemblyModeError) as info:
            director.assemble(turned(deg))
        assert info.value.residual <= 1e-12
    assert np.max(np.abs(director.phi(turned(180.0)))) < 1e-12
    with pytest.raises(AssemblyError) as info:
        quat.assemble(turned(180.0))
    assert not isinstance(info.value, AssemblyModeError) and info.value.residual > 0.5


# ============================================================================ in a System
def test_in_a_system_it_gives_the_director_joints_accelerations_and_reactions():
    """A body on a quaternion revolute lock (+ a drive row) beside the same body on the director
    Revolute (+ the director drive): same q̈, λ-independent wrenches, at 200° (past the hemisphere
    switch of the rows) and at 30°; Φ = 0 at both."""
    rng = np.random.default_rng(12)
    b = random_body(rng, "A")
    q0 = b.coordinates(random_pose(rng))
    F = random_pose(rng, 0.5)
    mp, ms = Marker.at(b, q0, F), Marker(None, F[:3, 3], F[:3, :3])
    f = b.gravity_force([0.0, 0.0, -9.81]) + rng.normal(size=12)
    t = 0.0
    for angle in (np.radians(200.0), np.radians(30.0)):
        drive = laws.about([0, 0, 1], laws.polynomial([angle, 0.5, -0.2]))   # θ = angle, θ̇ = 0.5, θ̈ = −0.4 at t = 0
        sq = System([b], [QuaternionLock(mp, ms, "revolute", name="r"),
                          QuaternionLock(mp, ms, ("rz",), rotation=drive, name="m")])
        sd = System([b], [Revolute(mp, ms, name="r"), Lock(mp, ms, ("rz",), rotation=drive, name="m")])
        C = b.pose(q0)
        R, o = rodrigues(ms.axes[:, 2], angle), ms.origin
        C[:3, :3], C[:3, 3] = R @ C[:3, :3], o + R @ (C[:3, 3] - o)
        q = b.coordinates(C)
        assert np.max(np.abs(sq.phi(q, t))) < 1e-12 and np.max(np.abs(sd.phi(q, t))) < 1e-12
        v = sd.project_velocity(q, rng.normal(size=12), t)
        assert np.allclose(sq.project_velocity(q, v, t), v, atol=1e-12)
        aq, lq = sq.accelerations(q, v, f, t)
        ad, ld = sd.accelerations(q, v, f, t)
        assert np.allclose(aq, ad, atol=1e-9 * max(1.0, np.abs(ad).max()))
        Wq, Wd = sq.reactions(q, lq, t), sd.reactions(q, ld, t)
        scale = max(1.0, max(np.abs(w[0]).max() for w in Wd.values()))
        for name in ("r", "m"):
            assert np.allclose(Wq[name][0], Wd[name][0], atol=1e-8 * scale), (np.degrees(angle), name)


def test_seed_002_schemes_refuse_it_in_one_line():
    rng = np.random.default_rng(14)
    b, mp, ms, turned = _welded_body(rng)
    system = System([b], [QuaternionLock(mp, ms, "revolute")])
    with pytest.raises(InputError, match="not quadratic in q") as info:
        EnergyMomentum(system, turned(0.0))
    assert "\n" not in str(info.value)


def test_bad_arguments_are_refused_in_one_line():
    rng = np.random.default_rng(16)
    b, mp, ms, turned = _welded_body(rng)
    lock = QuaternionLock(mp, ms)
    for call, match in ((lambda: QuaternionLock(mp, ms, "hinge"), "unknown lock mask"),
                        (lambda: QuaternionLock(mp, mp), "both markers are on body"),
                        (lambda: QuaternionLock(mp, ms, p_rotation=3.0), "p_rotation"),
                        (lambda: lock.phi(None, None), "side i needs the coordinates"),
                        (lambda: lock.phi(turned(0.0), turned(0.0)), r"side j needs None \(ground\)"),
                        (lambda: lock.phi(np.zeros(12), None), "degenerate"),
                        (lambda: lock.phi(np.zeros((2, 12)), None), r"shape \(12,\)"),
                        (lambda: QuaternionLock(mp, ms, s_rotation=lambda t: (2.0 * np.eye(3), np.zeros(3), np.zeros(3)))
                         .phi(turned(0.0), None), "must return a rotation matrix"),
                        (lambda: QuaternionLock(mp, ms, translation=lambda t: (np.zeros(2), 0, 0)).phi(turned(0.0), None),
                         "translation law")):
        with pytest.raises(Exception, match=match) as info:
            call()
        assert "\n" not in str(info.value)


def test_a_pendulum_on_the_quaternion_lock_swings_as_on_the_director_revolute():
    """projected_ode (index-1 accelerations + projection, the System's Newton) over 0.3 s through
    more than a half turn of the joint: the same motion with QuaternionLock("revolute") as with
    Revolute, and the rows closed."""
    from pkm.absolute import Gravity, projected_ode

    rng = np.random.default_rng(18)
    b = random_body(rng, "A")
    q0 = b.coordinates(random_pose(rng))
    F = np.eye(4)
    F[:3, 3] = q0[:3] + rng.normal(size=3) * 0.3
    mp, ms = Marker.at(b, q0, F), Marker(None, F[:3, 3], np.eye(3))   # revolute about world z
    runs = []
    for joint in (Revolute(mp, ms), QuaternionLock(mp, ms, "revolute")):
        system = System([b], [joint])
        v0 = system.project_velocity(q0, b.velocity(q0, [0.0, 0.0, 15.0, 0.0, 0.0, 0.0], "com"))
        runs.append(projected_ode(system, q0, v0, 0.01, 30, Gravity(system, [1.0, 0.0, -9.81]), rtol=1e-10,
                                  atol=1e-12))
    angle = np.unwrap([np.arctan2(b.pose(q)[1, 0], b.pose(q)[0, 0]) for q in runs[1].q])
    assert abs(angle[-1] - angle[0]) > np.pi                      # the hemisphere switch is crossed
    assert np.max(np.abs(runs[0].q - runs[1].q)) < 1e-7
    assert np.max(np.abs(runs[1].constraint_residual)) < 1e-10
