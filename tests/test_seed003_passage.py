"""Seed 003's claim, demonstrated (issue 28 part 3): a motion through a rank loss of the constraint
Jacobian — the parallelogram four-bar through its flat configuration
(:func:`pkm.absolute.examples.parallelogram`) — where the multiplier formulation fails and seed 003's
joint-reaction formulation (:class:`pkm.absolute.joint_reactions.JointReactions`) passes with the
joints held, the energy balanced and the reactions equal to the analytic ones; every claim at several
step sizes, tolerances and perturbed starts. And the numbers behind the example's account of why the
seed's printed kink times of its 3-(RR)S platform cannot be reproduced (its data are inconsistent)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pkm
from pkm.absolute.examples import crank_angle, parallelogram, parallelogram_forces
from pkm.absolute.joint_reactions import JointReactions
from pkm.absolute.standard import GeneralizedAlpha, projected_ode
from pkm.description.robotfile import load_spec

ROBOT = Path(__file__).resolve().parents[1] / "examples" / "rrs3_platform.toml"


def ratio(system, q):
    """σ_min/σ_max of the joints' Jacobian Φ_q P_int (rows × body twists)."""
    G = system.jacobian(q)[6 * len(system.bodies):] @ system.internal_null_space(q)
    s = np.linalg.svd(G, compute_uv=False)
    return s[-1] / s[0]


def kkt(system, q):
    M, G = system.mass_matrix(), system.jacobian(q)
    return np.block([[M, G.T], [G, np.zeros((G.shape[0], G.shape[0]))]])


def energy(ex, tr):
    return np.array([ex.system.kinetic_energy(v) + ex.potential.energy(q) for q, v in zip(tr.q, tr.v)])


def run(angle, rate, dt, tol, duration=0.1):
    ex = parallelogram(angle=angle, rate=rate)
    jr = JointReactions(ex.system, force=lambda t, q, v: -ex.potential.gradient(q), tol=tol)
    return ex, jr, jr.integrate(ex.q0, ex.v0, dt, int(round(duration / dt)))


# ---------------------------------------------------------------------- the singular configuration
def test_flat_configuration_is_a_rank_loss_of_the_joints():
    for angle in (0.0, np.pi):
        ex = parallelogram(angle=angle)
        G = ex.system.jacobian(ex.q0)[6 * 3:] @ ex.system.internal_null_space(ex.q0)
        assert G.shape == (16, 18) and np.linalg.matrix_rank(G, tol=1e-10 * np.linalg.norm(G, 2)) == 15
        assert ratio(ex.system, ex.q0) <= 1e-15
        assert np.max(np.abs(ex.system.phi(ex.q0))) <= 1e-15
        assert np.max(np.abs(ex.system.jacobian(ex.q0) @ ex.v0)) <= 1e-13   # a motion through it
    for angle in (0.1, np.pi / 2, np.pi - 0.1):
        assert ratio(parallelogram(angle=angle).system, parallelogram(angle=angle).q0) > 1e-3


@pytest.mark.parametrize("angle, rate", [(0.0, 12.0), (1e-12, 11.3), (np.pi, -12.0), (-1e-10, 12.5)])
def test_multiplier_formulation_is_singular_there(angle, rate):
    """The index-1 multiplier formulation, [[M, Φ_qᵀ], [Φ_q, 0]] [q̈; λ] = [f; γ]
    (System.accelerations), refuses the flat configuration: its matrix is singular."""
    ex = parallelogram(angle=angle, rate=rate)
    f = -ex.potential.gradient(ex.q0)
    assert np.linalg.cond(kkt(ex.system, ex.q0)) > 1e15
    with pytest.raises(pkm.SingularityError, match="singular"):
        ex.system.accelerations(ex.q0, ex.v0, f)
    away = parallelogram(angle=angle + 1e-3, rate=rate)           # control: a milliradian away it solves
    qdd, _ = away.system.accelerations(away.q0, away.v0, -away.potential.gradient(away.q0))
    assert np.all(np.isfinite(qdd))


def test_condition_growth_near_the_flat_configuration():
    """Digest §4.4 claim 2, measured: at a distance δ (rad) from the flat configuration the seed's
    step matrix ½Δt²[Φ_q + Φ_qq κ] M⁻¹ Zᵀ has a condition ∝ 1/δ (Φ_qq κ regularises the left
    factor, not Zᵀ), the multiplier method's KKT matrix ∝ 1/δ²."""
    deltas = np.array([1e-3, 1e-4, 1e-5, 1e-6])
    step, multiplier = [], []
    for d in deltas:
        ex = parallelogram(angle=d)
        jr = JointReactions(ex.system, force=lambda t, q, v: -ex.potential.gradient(q))
        step.append(np.linalg.cond(jr.step_matrix(ex.q0, ex.v0, 1e-3)))
        multiplier.append(np.linalg.cond(kkt(ex.system, ex.q0)))
    slope = lambda c: np.polyfit(np.log(deltas), np.log(c), 1)[0]
    assert abs(slope(step) + 1.0) < 0.05 and abs(slope(multiplier) + 2.0) < 0.05


# ---------------------------------------------------------------------- seed 003 passes
CASES = [(0.0, 12.0, 1e-3, 1e-12), (0.0, 12.0, 2e-3, 1e-10), (1e-12, 11.3, 1e-3, 1e-12),
         (np.pi, -12.0, 1e-3, 1e-11), (-1e-10, 12.5, 5e-4, 1e-12)]


@pytest.mark.parametrize("angle, rate, dt, tol", CASES)
def test_joint_reactions_pass_where_the_multipliers_fail(angle, rate, dt, tol):
    """From the flat configuration (or 1e-12 / 1e-10 rad off it, a perturbed rate, the other flat
    configuration, several Δt and tolerances), 0.1 s: the multiplier formulation cannot take the first
    step, the joint reactions pass — joints held to 1e-8, energy kept to O(Δt²), the joints' forces
    bounded and equal to the analytic ones of the parallelogram motion (examples.parallelogram_forces)."""
    ex, jr, tr = run(angle, rate, dt, tol)
    assert ratio(ex.system, ex.q0) <= 1e-8                                        # a singular start …
    with pytest.raises(pkm.SingularityError):                                     # … the multipliers refuse
        ex.system.accelerations(ex.q0, ex.v0, -ex.potential.gradient(ex.q0))
    assert np.max(tr.constraint_residual) <= 1e-8
    assert np.max(tr.constraint_residual) <= 10 * tol
    E = energy(ex, tr)
    assert np.max(np.abs(E - E[0])) <= 30 * dt**2 * E[0]
    theta = np.unwrap(crank_angle(tr.q))
    assert abs(theta[-1] - theta[0]) > 0.8                                        # it moved on, > 45°
    R, S = parallelogram_forces(ex, theta)
    W = tr.info["wrenches"]
    names = tr.info["joints"]
    for name, ref in (("R1", R), ("R2", R), ("S1", S), ("S2", S)):
        F = W[:, names.index(name), 3:]
        scale = np.max(np.linalg.norm(ref, axis=1))
        err = np.linalg.norm(F - ref, axis=1)
        assert np.max(np.linalg.norm(F, axis=1)) <= 1.01 * scale                 # bounded
        assert np.max(err[1:-1]) <= 1e-3 * scale                                  # inside: O(Δt²)
        assert np.max(err) <= 5.0 * dt * scale                                    # the end nodes: O(Δt)


def test_singular_start_gives_the_regular_motion():
    """The minimum-norm steps at the flat configuration give the motion the regular steps give a hair
    away: from θ = 0 (step matrix singular) and θ = 1e-7 (condition ≈ 1e13, solved as usual) the runs
    stay the start's 1e-7 rad apart."""
    runs = [run(angle, 12.0, 1e-3, 1e-12, duration=0.05)[2] for angle in (0.0, 1e-7)]
    assert runs[0].condition[0] > 1e16 and runs[1].condition[0] < 1e14
    assert np.max(np.abs(runs[0].q - runs[1].q)) <= 1.5e-7                   # the 1e-7 rad of the start
    assert np.max(np.abs(runs[0].v - runs[1].v)) <= 2e-6


@pytest.mark.parametrize("angle, rate, dt", [(np.pi - 0.05, 12.0, 1e-3), (np.pi - 0.0437, 10.0, 2e-3)])
def test_passes_a_singular_node_in_mid_motion(angle, rate, dt):
    """Moving towards the flat configuration θ = π: the step is bisected to land on it (σ_min/σ_max
    of Φ_q P_int ≤ 1e-8 there), where the multiplier formulation refuses; from that node the joint
    reactions go on through it, joints held, energy continuous."""
    ex = parallelogram(angle=angle, rate=rate)
    jr = JointReactions(ex.system, force=lambda t, q, v: -ex.potential.gradient(q))
    event = lambda q: np.sin(crank_angle(q))
    t, q, v, Q = 0.0, ex.q0, ex.v0, np.zeros(jr.unknowns)
    while np.sign(event(jr.step(t, q, v, Q, dt)[0])) == np.sign(event(q)):
        q, v, Q, _, _ = jr.step(t, q, v, Q, dt)
        t += dt
    h, qs, vs, _, Qs, _ = jr.land(t, q, v, Q, dt, event)
    assert 0.0 < h < dt and ratio(ex.system, qs) <= 1e-8
    with pytest.raises(pkm.SingularityError):
        ex.system.accelerations(qs, vs, -ex.potential.gradient(qs))
    tr = jr.integrate(qs, vs, dt, 30, t0=t + h)
    assert np.max(tr.constraint_residual) <= 1e-8
    theta = np.unwrap(crank_angle(tr.q))
    assert abs(np.cos(theta[0]) + 1.0) < 1e-12 and theta[-1] - theta[0] > 0.2      # from θ = π on, through it
    E0 = ex.system.kinetic_energy(ex.v0) + ex.potential.energy(ex.q0)
    assert np.max(np.abs(energy(ex, tr) - E0)) <= 30 * dt**2 * E0
    assert np.max(np.abs(tr.info["wrenches"])) <= 1.01 * np.max(np.abs(parallelogram_forces(ex, theta)[0]))


# ---------------------------------------------------------------------- multiplier schemes made to run
@pytest.mark.parametrize("angle, rate", [(0.0, 12.0), (1e-12, 11.3)])
def test_multiplier_schemes_made_to_run_lose_the_joint_or_the_energy(angle, rate):
    """pkm's multiplier schemes survive the singular matrix by dropping a dependent row
    (generalized-α: the dropped joint is violated by the step, > 1e-8 at Δt = 2 ms) or by least
    squares (index-1 + projection: its energy error, 3e-4, does not shrink with the tolerance);
    a milliradian away both are as good as usual, and the joint reactions hold the joints to 1e-12
    from the same start."""
    for a, singular in ((angle, True), (angle + 1e-3, False)):
        ex = parallelogram(angle=a, rate=rate)
        ga = GeneralizedAlpha(ex.system, ex.q0, ex.potential).integrate(ex.q0, ex.v0, 2e-3, 3)
        assert (np.max(ga.constraint_residual) > 1e-8) == singular
        drift = [projected_ode(ex.system, ex.q0, ex.v0, 0.01, 3, ex.potential, rtol=rtol,
                               atol=1e-2 * rtol).energy_drift() for rtol in (1e-8, 1e-10)]
        assert (min(drift) > 1e-4) if singular else (max(drift) < 1e-8)
    ex, jr, tr = run(angle, rate, 2e-3, 1e-12, duration=0.006)
    assert np.max(tr.constraint_residual) <= 1e-12


# ---------------------------------------------------------------------- the seed's 3-(RR)S data
def test_seed_platform_data_are_inconsistent():
    """The numbers of the example's account (examples/seed003_singularities.py docstring): the seed's
    inertias do not fit its geometry (as transcribed in examples/rrs3_platform.toml)."""
    spec = load_spec(ROBOT)
    bodies = {b.name: b for b in spec.bodies}
    joints = {j.name: np.asarray(j.point, dtype=float) for j in spec.joints}
    # rotor shafts: mass 1, moments 0.01 (axial) and 0.1 — the 0.1 needs the mass spread over a rod
    # sqrt(12·(0.1 − 0.01/2)) ≈ 1.07 m long, yet the shaft spans 0.104 m between its joints
    for shaft, (a, b) in (("L4", ("J7", "J4")), ("L5", ("J8", "J5")), ("L6", ("J9", "J6"))):
        m, I = bodies[shaft].mass, np.sort(np.linalg.eigvalsh(bodies[shaft].inertia))
        rod = np.sqrt(12.0 * (I[-1] - I[0] / 2.0) / m)
        span = np.linalg.norm(joints[a] - joints[b])
        assert abs(rod - 1.07) < 0.01 and 0.09 < span < 0.11 and rod > 9 * span
    # legs: mass 5, 0.7 across; a uniform leg J4..J6 → J1..J3 (0.78 m) has m L²/12 = 0.25, and even
    # all the mass at its two joints only m L²/4 = 0.76
    for leg, (a, b) in (("L1", ("J4", "J1")), ("L2", ("J5", "J2")), ("L3", ("J6", "J3"))):
        m, I = bodies[leg].mass, np.max(np.linalg.eigvalsh(bodies[leg].inertia))
        L = np.linalg.norm(joints[a] - joints[b])
        assert 0.77 < L < 0.79 and abs(m * L**2 / 12 - 0.25) < 0.01 and I > 0.9 * m * L**2 / 4
    # platform: (2.5, 5, 2.5) has I_y = I_x + I_z exactly: a lamina in the x–z plane (vertical), but
    # the ball joints span a horizontal triangle (all at z = 0.71); a horizontal plate has I_z = I_x + I_y
    P = np.diag(bodies["L7"].inertia)
    assert P[1] == P[0] + P[2] and P[2] < P[0] + P[1] - 4.9
    assert np.ptp([joints[j][2] for j in ("J1", "J2", "J3")]) == 0.0
