"""Seed 003's joint-reaction dynamics (pkm.absolute.joint_reactions) on its 3-(RR)S platform
(examples/rrs3_platform.toml): against the index-1 DAE with projection (pkm.absolute.standard), the
reactions against Newton–Euler and the index-1 multipliers, the Newton matrix against finite
differences, passage through singular configurations of the tilt–heave task coordinates and of the
driven mechanism (type II, with the motors in alternating senses) with the step matrix regular there,
and the paper's regularity claim at a constraint singularity (where it does not hold)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pkm
from pkm.absolute import Body, Marker, System
from pkm.absolute.body import angular_velocity, directors
from pkm.absolute.joint_reactions import JointReactions, actuated_jacobian, efforts_force
from pkm.absolute.joints import Distance
from pkm.absolute.loader import load_spec as absolute_model
from pkm.absolute.standard import projected_ode
from pkm.description.robotfile import load_spec

ROBOT = Path(__file__).resolve().parents[1] / "examples" / "rrs3_platform.toml"
TORQUES = (10.0, 10.0, 10.0)


@pytest.fixture(scope="module")
def model():
    return absolute_model(load_spec(ROBOT))


@pytest.fixture(scope="module")
def start(model):
    return model.reference, np.zeros(model.system.n)


@pytest.fixture(scope="module")
def through(model, start):
    """0.9 s at Δt = 2 ms: through the first singular configuration of the driven mechanism."""
    jr = JointReactions(model.system, force=efforts_force(model, TORQUES))
    return jr, jr.integrate(*start, 2e-3, 450)


# ---------------------------------------------------------------------- the robot file
def test_rrs3_file_loads_in_both_engines(model):
    # pkm's minimal-coordinate engine refuses its tilt–heave task: the platform has parasitic
    # motions, so no pure ωx, ωy or vz motion exists at the reference (a one-line file error) …
    with pytest.raises(pkm.RobotFileError, match="task"):
        pkm.load(ROBOT)
    robot = pkm.load(ROBOT, check=False)  # … which the escape hatch loads anyway
    assert robot.task.components == ("wx", "wy", "vz")
    assert model.dof == 3 and model.system.m - 6 * len(model.system.bodies) == 39
    assert not model.report.removed
    assert [a.name for a in model.actuators] == ["J7", "J8", "J9"]
    # J7/J8 swapped back (digest §4.3): every motor axis passes within 2 cm of its leg's J4..J6 point
    spec = load_spec(ROBOT)
    joints = {j.name: j for j in spec.joints}
    for motor, hinge in (("J7", "J4"), ("J8", "J5"), ("J9", "J6")):
        p, a = np.asarray(joints[motor].point), np.asarray(joints[motor].axes[0], dtype=float)
        a = a / np.linalg.norm(a)
        r = np.asarray(joints[hinge].point) - p
        assert np.linalg.norm(r - (r @ a) * a) < 0.02
        assert abs(a @ np.asarray(joints[hinge].axes[0])) < 0.01


# ---------------------------------------------------------------------- building blocks
def test_reactions_are_workless_and_independent(model, start):
    """Every reaction's body wrenches do no work on the mechanism's motions (kernel of Φ_q P_int),
    and Zᵀ has full column rank at a regular configuration."""
    jr = JointReactions(model.system)
    q = start[0]
    Z = jr.wrench_map(q)
    Gt = model.system.jacobian(q)[6 * jr.N:] @ model.system.internal_null_space(q)
    motions = np.linalg.svd(Gt)[2][Gt.shape[0]:].T     # 42 × 3 admissible twists
    assert motions.shape[1] == 3
    assert np.max(np.abs(motions.T @ Z)) < 1e-12 * np.max(np.abs(Z))
    s = np.linalg.svd(Z, compute_uv=False)
    assert s[-1] > 1e-3 * s[0]
    # the joint wrenches on body j are the columns' action on j, moved to the joint point
    rng = np.random.default_rng(3)
    Q = rng.normal(size=jr.unknowns)
    total = np.zeros((jr.N, 6))
    for (j, _, (i, k)), (p, W) in zip(jr.joints, jr.joint_wrenches(q, Q).values()):
        for sign, b in ((-1.0, i), (1.0, k)):
            if b is not None:
                c = q[12 * b:12 * b + 3]
                total[b] += sign * np.concatenate([W[:3] + np.cross(p - c, W[3:]), W[3:]])
    assert np.allclose(total.ravel(), Z @ Q, atol=1e-12 * np.max(np.abs(Z @ Q)))


def test_position_step_matrix_is_the_derivative(model, start):
    """The Newton matrix of the position step equals central differences of Φ(q'(Q)) in Q."""
    jr = JointReactions(model.system, force=efforts_force(model, TORQUES))
    rng = np.random.default_rng(7)
    q, v = start[0], model.system.project_velocity(start[0], rng.normal(size=model.system.n))
    dt, Q = 5e-3, 20.0 * rng.normal(size=jr.unknowns)
    A = jr.step_matrix(q, v, dt, Q=Q)

    def end_phi(Qx):
        D, omega, vel = jr._state(q, v)
        acc = jr.accelerations(D, omega, jr._applied(0.0, q, v) + (jr.wrench_map(q) @ Qx).reshape(jr.N, 6))
        D1, phi1, _ = jr._predict(D, q.reshape(jr.N, 12)[:, :3], omega, vel, acc, dt)
        return model.system.phi(jr._coordinates(D1, phi1), dt)[6 * jr.N:]

    h = 1e-3
    fd = np.column_stack([(end_phi(Q + h * e) - end_phi(Q - h * e)) / (2 * h) for e in np.eye(jr.unknowns)])
    assert np.max(np.abs(fd - A)) <= 1e-7 * np.max(np.abs(A))


# ---------------------------------------------------------------------- against the standard DAE
def test_agrees_with_projected_ode_while_regular(model, start):
    """Seed-003 platform, 10 N·m motors, gravity: 0.1 s from rest, before any singular configuration,
    against the index-1 DAE by RK45 (rtol 1e-11) with projection; and second order in Δt."""
    force = efforts_force(model, TORQUES)
    ref = projected_ode(model.system, *start, 0.1, 1, force=force, rtol=1e-11, atol=1e-13)
    jr = JointReactions(model.system, force=force)
    errs = []
    for dt in (2e-3, 1e-3):
        tr = jr.integrate(*start, dt, int(round(0.1 / dt)))
        idx = np.round(ref.t / dt).astype(int)
        errs.append((np.max(np.abs(tr.q[idx] - ref.q)), np.max(np.abs(tr.v[idx] - ref.v))))
        assert np.max(tr.constraint_residual) <= 1e-10
    (eq2, ev2), (eq1, ev1) = errs
    assert eq1 <= 1e-7 and ev1 <= 1e-6, errs
    assert 3.0 < eq2 / eq1 < 5.0 and 3.0 < ev2 / ev1 < 5.0, errs     # second order


def test_reactions_equal_index1_multipliers_and_balance_bodies(model, through):
    """At regular nodes the reported joint wrenches equal the index-1 reactions (λ of
    M q̈ + Φ_qᵀλ = f, System.reactions) to O(Δt²), and they balance every body's Newton–Euler
    equations with the accelerations of the computed motion (central differences)."""
    jr, tr = through
    system, dt = model.system, tr.info["dt"]
    force = efforts_force(model, TORQUES)
    for n in (50, 150, 250):
        q, v = tr.q[n], tr.v[n]
        f = force(tr.t[n], q, v)
        _, lam = system.accelerations(q, v, f)
        ref = system.reactions(q, lam)
        for name, W in zip(tr.info["joints"], tr.info["wrenches"][n]):
            W_ref = ref[name][1]
            assert np.max(np.abs(W - W_ref)) <= 2e-5 * max(1.0, np.max(np.abs(W_ref))), name
        # Newton–Euler per body: m a = f + Σ forces, J α + ω × J ω = n + Σ moments (about the com)
        applied = jr._applied(tr.t[n], q, v)
        sums = applied.copy()
        for (j, _, (i, k)), W in zip(jr.joints, tr.info["wrenches"][n]):
            p = j.marker_i.world_pose(None if i is None else q[12 * i:12 * i + 12])[:3, 3]
            for sign, b in ((-1.0, i), (1.0, k)):
                if b is not None:
                    sums[b] += sign * np.concatenate([W[:3] + np.cross(p - q[12 * b:12 * b + 3], W[3:]), W[3:]])
        for b in range(jr.N):
            s = slice(12 * b, 12 * b + 12)
            a = (tr.v[n + 1][s][:3] - tr.v[n - 1][s][:3]) / (2 * dt)
            om = [angular_velocity(tr.q[k][s], tr.v[k][s]) for k in (n - 1, n, n + 1)]
            alpha = (om[2] - om[0]) / (2 * dt)
            D = directors(q[s])
            Jw = D @ system.bodies[b].inertia @ D.T
            scale = np.max(np.abs(sums[b])) + system.bodies[b].mass * 9.81
            assert np.max(np.abs(system.bodies[b].mass * a - sums[b][3:])) <= 2e-5 * scale
            assert np.max(np.abs(Jw @ alpha + np.cross(om[1], Jw @ om[1]) - sums[b][:3])) <= 2e-5 * scale


# ---------------------------------------------------------------------- singular configurations
def task_map(model, q):
    """The tilt–heave rates (ω_x, ω_y, v_z of the platform) of the mechanism's motions: (3 × 3) on
    an orthonormal basis of ker Φ_q P_int, written here from the SVD (singular where the task
    coordinates cannot describe the motion: pkm's minimal-coordinate engine inverts this map)."""
    system = model.system
    G = system.jacobian(q)[6 * len(system.bodies):] @ system.internal_null_space(q)
    motions = np.linalg.svd(G)[2][G.shape[0]:].T
    k = list(model.bodies).index("L7")
    return motions[[6 * k, 6 * k + 1, 6 * k + 5]]


def test_actuated_jacobian_rows_are_motor_rates(model, start):
    """The actuator rows of actuated_jacobian are the shafts' rates about the motor axes: against a
    finite-difference angle along a motion of the mechanism."""
    system, q = model.system, start[0]
    G = system.jacobian(q)[6 * len(system.bodies):] @ system.internal_null_space(q)
    twist = np.linalg.svd(G)[2][-1]
    rows = actuated_jacobian(model, q)[G.shape[0]:]
    h = 1e-7
    q_h = q + h * system.internal_null_space(q) @ twist
    for r, a in enumerate(model.actuators):
        s = system.body_slice(a.child.body)
        axis = a.parent.world_pose(None)[:3, 2]
        d0, d1 = directors(q[s]), directors(q_h[s])
        rate = np.cross(d0[:, 1], d1[:, 1]) @ axis / h     # the director y is perpendicular to the motor axis
        assert abs(rate - rows[r] @ twist) <= 1e-6 * max(1.0, abs(rate))


def test_passes_the_task_singularities_and_the_base_plane(model, through):
    """0.9 s from the tabulated configuration: it starts on a singularity of the tilt–heave task
    coordinates (and passes near another at the bottom), the platform falls through the base plane
    (legs horizontal, the sharp extremum of v_z, the closest approach to a rank loss of Φ_q), the
    joints held to 1e-8 throughout; the actuator-locked Jacobian stays regular (no type-II
    singularity is crossed under the seed's data and these assumptions)."""
    jr, tr = through
    k = list(model.bodies).index("L7")
    z, vz = tr.q[:, 12 * k + 2], tr.v[:, 12 * k + 2]
    s0 = np.linalg.svd(task_map(model, tr.q[0]), compute_uv=False)
    assert s0[-1] <= 1e-6 * s0[0]
    assert z[0] > 0.7 and z[-1] < -0.1                            # through the base plane
    n = int(np.argmax(np.abs(vz)))
    assert 0.8 < tr.t[n] < 0.95 and abs(z[n]) < 0.1               # the v_z "kink" where the legs are level
    assert np.max(tr.constraint_residual) <= 1e-8
    assert np.nanmax(tr.condition) < 1e5 and np.max(tr.info["velocity_condition"]) < 1e6
    locked = [np.linalg.svd(actuated_jacobian(model, q), compute_uv=False) for q in tr.q[::25]]
    assert min(s[-1] / s[0] for s in locked) > 1e-2


def test_step_matrix_regular_where_task_coordinates_fail(model, start):
    """At the tabulated configuration the tilt–heave task map has lost rank (the platform can turn
    about z with ω_x = ω_y = v_z = 0 to first order: a formulation in these task coordinates, pkm's
    minimal-coordinate one, cannot start there); the joint-reaction step matrix is well conditioned,
    so is the absolute index-1 matrix, and the step from rest is taken."""
    q, v = start
    s = np.linalg.svd(task_map(model, q), compute_uv=False)
    assert s[-1] <= 1e-6 * s[0]
    jr = JointReactions(model.system, force=efforts_force(model, TORQUES))
    for dt in (1e-3, 1e-2):
        assert np.linalg.cond(jr.step_matrix(q, v, dt)) < 1e5
    q1, v1, *_ = jr.step(0.0, q, v, np.zeros(jr.unknowns), 1e-3)
    assert np.max(np.abs(model.system.phi(q1))) <= 1e-12
    G = model.system.jacobian(q)
    M = model.system.mass_matrix()
    K = np.block([[M, G.T], [G, np.zeros((G.shape[0], G.shape[0]))]])
    assert np.linalg.cond(K) < 1e8


@pytest.fixture(scope="module")
def alternating(model, start):
    """Motors in alternating senses (10, −10, 10) N·m: the motion crosses singular configurations of
    the driven mechanism (the actuator-locked Jacobian's determinant changes sign) near 1.0–1.25 s."""
    jr = JointReactions(model.system, force=efforts_force(model, (10.0, -10.0, 10.0)))
    return jr, jr.integrate(*start, 5e-3, 220)


def type2_crossings(model, tr):
    dets = np.array([np.linalg.det(actuated_jacobian(model, q)) for q in tr.q])
    return np.flatnonzero(np.sign(dets[1:]) != np.sign(dets[:-1])), dets


def test_passes_type2_singularities(model, alternating):
    jr, tr = alternating
    crossings, _ = type2_crossings(model, tr)
    assert crossings.size >= 1 and 0.9 < tr.t[crossings[0]] < 1.1
    assert np.max(tr.constraint_residual) <= 1e-8
    assert np.nanmax(tr.condition) < 1e6 and np.all(np.isfinite(tr.v))


def test_step_matrix_regular_where_actuator_coordinates_fail(model, alternating):
    """At the type-II configuration on the trajectory (the step bisected to det → 0) the Jacobian a
    formulation in actuator coordinates inverts has lost rank; the joint-reaction step matrix is
    well conditioned there and the step goes on (as is the absolute index-1 matrix: the motors are
    forces, the joints alone are regular)."""
    jr, tr = alternating
    crossings, dets = type2_crossings(model, tr)
    n = int(crossings[0])
    t, q, v = tr.t[n], tr.q[n], tr.v[n]
    lo, hi, Q = 0.0, tr.info["dt"], np.zeros(jr.unknowns)
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        qm = jr.step(t, q, v, Q, mid)[0]
        same = np.sign(np.linalg.det(actuated_jacobian(model, qm))) == np.sign(dets[n])
        lo, hi = (mid, hi) if same else (lo, mid)
    qs, vs, *_ = jr.step(t, q, v, Q, lo)
    s = np.linalg.svd(actuated_jacobian(model, qs), compute_uv=False)
    assert s[-1] <= 1e-9 * s[0]                                   # actuator coordinates: singular
    for dt in (1e-3, 5e-3):
        assert np.linalg.cond(jr.step_matrix(qs, vs, dt, t + lo)) < 1e5   # joint reactions: regular
    q1 = jr.step(t + lo, qs, vs, Q, 1e-3)[0]
    assert np.max(np.abs(model.system.phi(q1))) <= 1e-12
    G = model.system.jacobian(qs)
    K = np.block([[model.system.mass_matrix(), G.T], [G, np.zeros((G.shape[0], G.shape[0]))]])
    assert np.linalg.cond(K) < 1e8


def test_agrees_with_projected_ode_across_a_type2_singularity(model, alternating):
    """From a node 0.02 s before the first type-II crossing, 0.05 s across it: the joint-reaction
    steps (Δt = 0.5 ms) and the index-1 DAE by RK45 (rtol 1e-11) with projection agree to 1e-6."""
    jr, tr = alternating
    n = int(type2_crossings(model, tr)[0][0]) - 4
    force = efforts_force(model, (10.0, -10.0, 10.0))
    q0, v0 = tr.q[n], model.system.project_velocity(tr.q[n], tr.v[n])
    ref = projected_ode(model.system, q0, v0, 0.05, 1, force=force, rtol=1e-11, atol=1e-13, t0=tr.t[n])
    ours = jr.integrate(q0, v0, 5e-4, 100, t0=tr.t[n])
    crossings, _ = type2_crossings(model, ours)
    assert crossings.size >= 1
    assert np.max(np.abs(ours.q[-1] - ref.q[-1])) <= 1e-6
    assert np.max(np.abs(ours.v[-1] - ref.v[-1])) <= 1e-5


def test_paper_regularity_claim_fails_at_a_constraint_singularity():
    """Seed 003 claims ``[Φ_q + Φ_qq κ] M⁻¹ Zᵀ`` is regular at kinematic singularities for finite Δt
    (digest §4.4 claim 2). A body held by two collinear rods (Φ_q loses rank, the equal rod tensions
    are a self-stress) moving across the line: the left factor Φ_q(q + κ) is regular, yet the
    self-stress is a null vector of the step matrix for every Δt, because Zᵀ is taken at q."""
    body = Body("b", 1.0, np.diag([0.1, 0.2, 0.3]))
    at = lambda b, x: Marker.at(b, None if b is None else body.coordinates(np.eye(4)), _pose(x))
    rods = [Distance(at(None, (-1, 0, 0)), at(body, (0, 0, 0)), 1.0, name="left"),
            Distance(at(body, (0, 0, 0)), at(None, (1, 0, 0)), 1.0, name="right")]
    system = System([body], rods)
    q = body.coordinates(np.eye(4))
    v = body.velocity(q, np.array([0.0, 0.0, 0.5, 0.0, 1.0, 0.0]), frame="com")
    assert np.linalg.matrix_rank(system.jacobian(q)[6:]) == 1
    jr = JointReactions(system)
    Z = jr.wrench_map(q)
    stress = np.linalg.svd(Z)[2][-1]
    assert np.max(np.abs(Z @ stress)) < 1e-14                     # Zᵀ Q₀ = 0
    for dt in (1e-3, 1e-2, 1e-1):
        A = jr.step_matrix(q, v, dt)
        s = np.linalg.svd(A, compute_uv=False)
        assert s[-1] <= 1e-12 * s[0], dt                         # singular whatever Δt
        D, omega, vel = jr._state(q, v)
        q1 = q.copy()
        q1[:3] += dt * vel[0]
        G1 = system.jacobian(q1)[6:]
        assert np.linalg.svd(G1, compute_uv=False)[-1] > 0.5 * dt  # the left factor is regular


def _pose(x):
    C = np.eye(4)
    C[:3, 3] = x
    return C
