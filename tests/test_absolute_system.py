"""Systems in absolute coordinates: redundant rows, consistent initial conditions, reactions that
balance every body (issue 16 deliverables 3 and the container of 1–2).

The overconstrained case is a planar parallelogram built in 3-D (ground + crank + coupler +
rocker, four revolutes with parallel axes): 36 coordinates, 18 internal + 20 joint rows, one DOF,
so exactly 38 − (36 − 1) = 3 rows are dependent — a count that follows from the mechanism, not
from the code. Its motion is known too: the coupler translates, crank and rocker turn alike.
"""
from __future__ import annotations

import numpy as np
import pytest

from absolute_cases import random_pose
from pkm.absolute import Body, Lock, Marker, Revolute, Spherical, System, dependent_rows, laws
from pkm.absolute.body import angular_velocity, internal_constraints
from pkm.errors import SingularityError


def _link(name, length, rng):
    m = 0.5 + length
    w, h = 0.04, 0.02
    J = m / 12.0 * np.diag([w * w + h * h, length**2 + h * h, length**2 + w * w])
    return Body(name, m, J, rng.uniform(-0.02, 0.02, 3))  # frame origin off the centre of mass


def parallelogram(rng, a=0.8, b=0.35, theta=0.6, drive=None):
    """(system, q, frame R0 of the plane): ground pivots A, B = A + a x; crank AC, coupler CD,
    rocker BD, all of length b / a / b, in the plane normal to R0 z, placed randomly in space."""
    P0 = random_pose(rng)
    R0, p0 = P0[:3, :3], P0[:3, 3]
    world = lambda v: p0 + R0 @ np.asarray(v, float)
    c, s = np.cos(theta), np.sin(theta)
    A, B, C, D = (np.array(v) for v in ([0, 0, 0], [a, 0, 0], [b * c, b * s, 0], [a + b * c, b * s, 0]))

    def frame(p, q_):  # link frame: centre at the midpoint, x along the link, z = plane normal
        x = (q_ - p) / np.linalg.norm(q_ - p)
        F = np.eye(4)
        F[:3, :3] = R0 @ np.column_stack([x, np.cross([0, 0, 1.0], x), [0, 0, 1.0]])
        F[:3, 3] = world((p + q_) / 2)
        return F

    crank, coupler, rocker = _link("crank", b, rng), _link("coupler", a, rng), _link("rocker", b, rng)
    bodies = [crank, coupler, rocker]
    poses = [frame(A, C), frame(C, D), frame(B, D)]
    # the body frame is the link frame; the body's com offset moves the centre of mass off the midpoint
    q = np.concatenate([bd.coordinates(F) for bd, F in zip(bodies, poses)])
    qb = {bd.name: q[12 * k:12 * k + 12] for k, bd in enumerate(bodies)}

    def hinge(name, b1, b2, point):
        F = np.eye(4)
        F[:3, :3], F[:3, 3] = R0, world(point)
        m1 = Marker.at(b1, None if b1 is None else qb[b1.name], F)
        m2 = Marker.at(b2, None if b2 is None else qb[b2.name], F)
        return Revolute(m1, m2, name=name)

    joints = [hinge("A", None, crank, A), hinge("C", crank, coupler, C), hinge("D", coupler, rocker, D),
              hinge("B", rocker, None, B)]
    if drive is not None:
        j = joints[0]
        joints.append(Lock(j.marker_j, j.marker_i, ("rz",), rotation=laws.about([0, 0, 1], drive), name="motor"))
    return System(bodies, joints), q, R0


def _same_span(N1, N2):
    return N1.shape == N2.shape and np.max(np.abs(N1 @ N1.T - N2 @ N2.T), initial=0.0) < 1e-9


# ============================================================================ redundancy
@pytest.mark.parametrize("method", ["qr", "svd"])
def test_parallelogram_has_three_dependent_rows_which_are_removed_and_reported(method):
    rng = np.random.default_rng(1)
    system, q, R0 = parallelogram(rng)
    assert system.n == 36 and system.m == 38
    assert np.max(np.abs(system.phi(q))) < 1e-13
    reduced, report = system.remove_redundant(q, method=method)
    assert report.rows == 20 and report.rank == 17 and len(report.removed) == 3
    assert len(report.labels) == 3 and all(name in "ACDB" for name, _ in report.labels)
    assert report.gap > 1e6 and report.tolerance == pytest.approx(report.rtol * report.spectrum[0])
    assert "3 dependent rows removed" in str(report)
    G, Gr = system.jacobian(q), reduced.jacobian(q)
    assert Gr.shape == (35, 36)
    s = np.linalg.svd(Gr, compute_uv=False)
    assert s[-1] > 1e-6 * s[0]  # full row rank
    assert len(reduced.labels) == 35 and not set(report.labels) & set(reduced.labels)
    N, Nr = system.null_space(q), reduced.null_space(q)
    assert N.shape == (36, 1) and _same_span(N, Nr)
    assert np.max(np.abs(G @ Nr)) < 1e-12
    # the motion is the parallelogram's: the coupler does not turn, crank and rocker turn alike about z
    w = [angular_velocity(q[12 * k:12 * k + 12], N[12 * k:12 * k + 12, 0]) for k in range(3)]
    assert np.linalg.norm(w[1]) < 1e-12 * np.linalg.norm(w[0])
    assert np.allclose(w[0], w[2], atol=1e-12) and np.allclose(np.cross(w[0], R0[:, 2]), 0.0, atol=1e-12)


def test_a_system_without_redundancy_keeps_every_row():
    """A spatial RSSR linkage (DOF 2 = crank + coupler spin) has no dependent rows."""
    rng = np.random.default_rng(2)
    bodies = [Body(n, 1.0, np.diag([0.02, 0.03, 0.04])) for n in ("crank", "coupler", "rocker")]
    q = np.concatenate([b.coordinates(random_pose(rng)) for b in bodies])
    mk = lambda b, F: Marker.at(b, None if b is None else q[12 * bodies.index(b):12 * bodies.index(b) + 12], F)
    F1, F2, F3, F4 = (random_pose(rng) for _ in range(4))
    joints = [Revolute(mk(None, F1), mk(bodies[0], F1), name="R1"),
              Spherical(mk(bodies[0], F2), mk(bodies[1], F2), name="S1"),
              Spherical(mk(bodies[1], F3), mk(bodies[2], F3), name="S2"),
              Revolute(mk(bodies[2], F4), mk(None, F4), name="R2")]
    system = System(bodies, joints)
    report = system.redundancy(q)
    assert report.removed == () and report.rank == 16 and report.gap == np.inf
    assert "no dependent rows" in str(report)
    assert system.null_space(q).shape[1] == 36 - 34 - 0


def test_dependent_rows_of_a_known_matrix():
    rng = np.random.default_rng(3)
    G = rng.normal(size=(6, 9))
    G[4] = 2 * G[0] - G[2]
    G[5] = G[1]
    report = dependent_rows(G, [("g", str(k)) for k in range(6)])
    assert report.rank == 4 and len(report.removed) == 2
    assert np.linalg.matrix_rank(G[list(report.keep)]) == 4
    assert {1, 5} & set(report.removed) and {0, 2, 4} & set(report.removed)
    tall = rng.normal(size=(5, 3))  # more rows than columns
    assert dependent_rows(tall).rank == 3 and len(dependent_rows(tall).removed) == 2


# ============================================================================ dynamics at an instant
def test_the_kkt_system_is_singular_before_removal_and_the_reactions_balance_each_body_after():
    rng = np.random.default_rng(4)
    system, q, R0 = parallelogram(rng)
    g = np.array([0.0, 0.0, -9.81])
    qd = system.null_space(q)[:, 0] * 3.0
    with pytest.raises(SingularityError, match="remove dependent rows"):
        system.accelerations(q, qd, system.gravity_force(g))
    reduced, _ = system.remove_redundant(q)
    qdd, lam = reduced.accelerations(q, qd, system.gravity_force(g))
    assert np.max(np.abs(reduced.jacobian(q) @ qdd - reduced.gamma(q, qd))) < 1e-10
    W = reduced.reactions(q, lam, about="com")
    for k, body in enumerate(system.bodies):
        s = slice(12 * k, 12 * k + 12)
        R = q[s][3:].reshape(3, 3).T
        Jw = R @ body.inertia @ R.T
        w, alpha = angular_velocity(q[s], qd[s]), angular_velocity(q[s], qdd[s])
        force, moment = body.mass * g, np.zeros(3)
        for joint in system.joints:
            for side, b in enumerate(joint.bodies):
                if b is body:
                    moment, force = moment + W[joint.name][side][:3], force + W[joint.name][side][3:]
        scale = body.mass * 9.81
        assert np.linalg.norm(body.mass * qdd[s][:3] - force) < 1e-9 * scale
        assert np.linalg.norm(Jw @ alpha + np.cross(w, Jw @ w) - moment) < 1e-9 * scale
    assert W["A"][0] is None and W["B"][1] is None  # the ground sides


# ============================================================================ consistent initial conditions
def test_a_perturbed_configuration_is_assembled():
    rng = np.random.default_rng(5)
    system, q, R0 = parallelogram(rng)
    for _ in range(3):
        q0 = q + 1e-2 * rng.normal(size=q.size)
        qa = system.assemble(q0)
        assert np.max(np.abs(system.phi(qa))) <= 1e-12
        assert np.max(np.abs(internal_constraints(qa.reshape(-1, 12)))) <= 1e-12
        assert np.linalg.norm(qa - q0) < 3 * np.linalg.norm(q0 - q)  # near the start, not elsewhere
        assert np.allclose(qa[15:18], R0[:, 0], atol=1e-12)  # on the parallelogram branch: coupler ∥ ground


def test_a_driven_parallelogram_is_assembled_at_its_law_and_velocities_projected():
    rng = np.random.default_rng(6)
    law = laws.sine(0.4, 2.0, 0.0, offset=0.0)
    system, q, R0 = parallelogram(rng, theta=0.6, drive=law)
    t = 0.7
    reduced, report = system.remove_redundant(q, t)
    assert len(report.removed) == 3 and reduced.null_space(q, t).shape[1] == 0
    qa = reduced.assemble(q + 1e-3 * rng.normal(size=q.size), t)
    assert np.max(np.abs(system.phi(qa, t))) <= 1e-12
    crank = qa[:12]
    x = crank[3:6]  # crank axis from A towards C: its angle in the plane is 0.6 + the law
    angle = np.arctan2(R0[:, 1] @ x, R0[:, 0] @ x)
    assert angle == pytest.approx(0.6 + law(t)[0], abs=1e-12)
    qd = reduced.project_velocity(qa, rng.normal(size=q.size), t)
    assert np.max(np.abs(system.jacobian(qa, t) @ qd + system.phi_t(qa, t))) <= 1e-12
    w = angular_velocity(crank, qd[:12])
    assert w @ R0[:, 2] == pytest.approx(law(t)[1], abs=1e-12)


def test_velocity_projection_is_the_nearest_consistent_velocity():
    rng = np.random.default_rng(7)
    system, q, R0 = parallelogram(rng)
    qd0 = rng.normal(size=q.size)
    qd = system.project_velocity(q, qd0)
    assert np.max(np.abs(system.jacobian(q) @ qd)) <= 1e-12
    N = system.null_space(q)
    assert np.allclose(qd, N @ (N.T @ qd0), atol=1e-12)  # orthogonal projection onto ker Φ_q
    assert np.allclose(system.project_velocity(q, qd), qd, atol=1e-14)


def test_system_checks_its_parts():
    rng = np.random.default_rng(8)
    system, q, R0 = parallelogram(rng)
    with pytest.raises(ValueError, match="not in the system"):
        System(system.bodies[:2], system.joints)
    with pytest.raises(ValueError, match="joint names repeat"):
        System(system.bodies, system.joints + system.joints[:1])
    with pytest.raises(ValueError, match="listed twice"):
        System(system.bodies + system.bodies[:1], ())
    reduced, report = system.remove_redundant(q)
    with pytest.raises(ValueError, match="another system"):
        reduced.without(report)
    with pytest.raises(ValueError, match="one per active row"):
        system.reactions(q, np.zeros(3))
    assert np.allclose(system.coordinates(system.poses(q)), q)
    assert system.mass_matrix().shape == (36, 36)
    L, p = system.momentum(q, np.zeros(36))
    assert not L.any() and not p.any()
