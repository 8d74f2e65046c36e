"""The batch's outputs in numba (issue 32.2, :mod:`pkm.kernels.state_outputs`): the limbs' energy and
loop closure at many states in one call, and the platform's energy vectorised
(:meth:`pkm.sim.outputs.Energy.platform`), equal the per-state Python path — the energies as
:mod:`pkm.algorithms.dynamics` computed them before (einsum over the body twists and centres of mass),
the closure as :meth:`pkm.algorithms.limb.LimbModel.constraint_residual` — to 1e-12, on the Delta, the
3R[2US] Delta (U cut joints), a payload variant, tilted gravity, a distance constraint and armature."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import pkm
from pkm.algorithms.constraints import distance_constraint
from pkm.algorithms.dynamics import body_mass_properties, kinetic_energy, potential_energy
from pkm.algorithms.kinematics import body_twists, forward_kinematics
from pkm.algorithms.manipulator import dynamics_trees
from pkm.kernels.batch import platform_states
from pkm.kernels.state_outputs import energies_closure, energies_closure_limbs, forest
from pkm.robot import Robot
from pkm.sim.outputs import Energy

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
TILTED = np.array([1.5, -2.0, -9.5])


def old_kinetic(tree, q, qd):
    """``kinetic_energy`` as it was: the twists' quadratic form by einsum, plus the armature."""
    V = body_twists(tree, q, qd)
    T = 0.5 * float(np.einsum("ir,irc,ic->", V, tree.M, V))
    if tree.joint_terms is not None:
        T += 0.5 * float(np.sum(np.asarray(tree.joint_terms, float)[:, 0] * qd * qd))
    return T


def old_potential(tree, q, g0):
    C = forward_kinematics(tree, q)
    m, d = body_mass_properties(tree)
    com = np.einsum("irc,ic->ir", C[:, :3, :3], d) + C[:, :3, 3]
    return -float(np.sum(m * (com @ g0)))


def states(robot, K=5, nmax=None, seed=0):
    """``K`` states near ``x_ref``: the limbs' IK solutions perturbed (the loops then open: a closure to
    compare), padded to ``nmax`` with NaN (which the kernel must not read), and their task coordinates."""
    rng = np.random.default_rng(seed)
    d = robot.task_dof
    X = robot.x_ref + 0.01 * rng.uniform(-1, 1, (K, d))
    XD = 0.3 * rng.uniform(-1, 1, (K, d))
    sol = robot.inverse_dynamics(X, XD, np.zeros((K, d)))
    nmax = nmax or max(l.n for l in robot.limbs)
    TH, THD = np.full((K, len(robot.limbs), nmax), np.nan), np.full((K, len(robot.limbs), nmax), np.nan)
    for i, l in enumerate(robot.limbs):
        TH[:, i, :l.n] = sol.joints[l.name] + 1e-3 * rng.standard_normal((K, l.n))
        THD[:, i, :l.n] = sol.joints_d[l.name] + 0.1 * rng.standard_normal((K, l.n))
    return X, XD, TH, THD


def reference(robot, g0, X, XD, TH, THD):
    """Per state in Python: ``(E, closure)``, the limbs' trees and the platform as before."""
    trees = dynamics_trees(robot)
    Mp, p = Energy(robot, g0).Mp, robot.spec.body(robot.spec.platform)
    local_com = np.linalg.solve(p.frame[:3, :3], p.com - p.frame[:3, 3])
    E, closure = [], []
    for s in range(len(X)):
        ths = [TH[s, i, :l.n] for i, l in enumerate(robot.limbs)]
        thds = [THD[s, i, :l.n] for i, l in enumerate(robot.limbs)]
        kin = sum(old_kinetic(t, q, qd) for t, q, qd in zip(trees, ths, thds))
        pot = sum(old_potential(t, q, g0) for t, q in zip(trees, ths))
        Cp = robot.platform_pose(X[s])
        Vp, _ = robot.platform_twist(X[s], XD[s])
        kin += 0.5 * Vp @ Mp @ Vp
        pot -= p.mass * g0 @ (Cp[:3, :3] @ local_com + Cp[:3, 3])
        E.append(kin + pot)
        closure.append(max(float(np.max(np.abs(l.constraint_residual(ths[i])), initial=0.0))
                           for i, l in enumerate(robot.limbs)))
    return np.array(E), np.array(closure)


@pytest.fixture(scope="module")
def delta():
    return pkm.load(ROBOTS / "delta_3rr2rrr.toml")


@pytest.fixture(scope="module")
def rus():
    return pkm.load(ROBOTS / "delta_3r2us.toml")


def batch_path(robot, g0, X, XD, TH, THD):
    """What :meth:`pkm.sim.batch._Lane._outputs` computes: one kernel call for the limbs, numpy for the platform."""
    kin, pot, closure = energies_closure(forest(robot, TH.shape[2]), TH, THD, g0)
    Cd, Vp, _ = platform_states(robot, X, XD, np.zeros_like(X))
    kp, pp = Energy(robot, g0).platform(Cd, Vp)
    return (kin + kp) + (pot + pp), closure


@pytest.mark.parametrize("which, payload, tilted", [("delta", 0.0, False), ("rus", 0.0, False), ("delta", 0.3, False),
                                                    ("delta", 0.0, True), ("rus", 0.2, True)])
def test_energy_and_closure_of_many_states_equal_the_python_path(which, payload, tilted, request):
    robot = request.getfixturevalue(which)
    if payload:
        robot = Robot(robot.spec.with_payload(payload))
    g0 = TILTED if tilted else np.asarray(robot.spec.gravity, float)
    X, XD, TH, THD = states(robot, nmax=max(l.n for l in robot.limbs) + 2)
    E, closure = batch_path(robot, g0, X, XD, TH, THD)
    E_ref, closure_ref = reference(robot, g0, X, XD, TH, THD)
    assert np.all(closure_ref > 1e-6)   # the loops are open: a closure worth comparing
    np.testing.assert_allclose(E, E_ref, rtol=0, atol=1e-12 * max(1.0, np.abs(E_ref).max()))
    np.testing.assert_allclose(closure, closure_ref, rtol=1e-12, atol=1e-15)
    # the per-state Energy (robot.simulate's outputs) is the same sum
    energy = Energy(robot, g0)
    for s in range(len(X)):
        kin, pot = energy([TH[s, i, :l.n] for i, l in enumerate(robot.limbs)],
                          [THD[s, i, :l.n] for i, l in enumerate(robot.limbs)], X[s], XD[s])
        assert abs(kin + pot - E_ref[s]) <= 1e-12 * max(1.0, abs(E_ref[s]))


def test_a_distance_loop_and_armature(delta):
    """Limbs whose loop is a distance constraint (seed 000, B2; one residual row) and whose joints carry
    armature (the rotors' ½ Σ a θ̇²): the kernel's branches the robot files do not reach."""
    limbs = []
    for l in delta.limbs:
        lp = l.loops[0]
        cut = distance_constraint("rod", l.tree, l.tree.body_names[lp.cut.k], lp.cut.d_k, l.tree.body_names[lp.cut.r],
                                  lp.cut.d_r + [0.01, 0.0, 0.0])
        tree = replace(l.tree, joint_terms=np.column_stack([np.linspace(0.01, 0.05, l.n), np.zeros((l.n, 3))]))
        limbs.append(replace(l, tree=tree, loops=(replace(lp, cut=cut, rows=np.array([0])),)))
    fake = SimpleNamespace(limbs=limbs)
    X, XD, TH, THD = states(delta, nmax=8)
    kin, pot, closure = energies_closure(forest(fake, 8), TH, THD, TILTED)
    trees = dynamics_trees(fake)
    for s in range(len(X)):
        ths = [TH[s, i, :l.n] for i, l in enumerate(limbs)]
        thds = [THD[s, i, :l.n] for i, l in enumerate(limbs)]
        k_ref = sum(old_kinetic(t, q, qd) for t, q, qd in zip(trees, ths, thds))
        assert k_ref > sum(old_kinetic(replace(t, joint_terms=None), q, qd) for t, q, qd in zip(trees, ths, thds))
        assert abs(kin[s] - k_ref) <= 1e-12 * max(1.0, k_ref)
        assert abs(kin[s] - sum(kinetic_energy(t, q, qd) for t, q, qd in zip(trees, ths, thds))) <= 1e-12 * max(1.0, k_ref)
        p_ref = sum(old_potential(t, q, TILTED) for t, q in zip(trees, ths))
        assert abs(pot[s] - p_ref) <= 1e-12 * max(1.0, abs(p_ref))
        assert abs(pot[s] - sum(potential_energy(t, q, TILTED) for t, q in zip(trees, ths))) <= 1e-12 * max(1.0, abs(p_ref))
        c_ref = max(float(np.max(np.abs(l.constraint_residual(ths[i])))) for i, l in enumerate(limbs))
        assert c_ref > 1e-6 and abs(closure[s] - c_ref) <= 1e-12 * c_ref


@pytest.mark.parametrize("which", ["delta", "rus"])
def test_each_limbs_closure_and_a_nan_that_stays(which, request):
    """The closure per limb (a single run's ``result.closure`` (K, L)) is each limb's own
    ``constraint_residual``; a NaN in one limb's variables is NaN for that limb, and for the batch's largest
    of any limb, whatever the limbs after it give (``np.max``'s rule)."""
    robot = request.getfixturevalue(which)
    g0 = np.asarray(robot.spec.gravity, float)
    X, XD, TH, THD = states(robot, nmax=max(l.n for l in robot.limbs) + 1, seed=3)
    f = forest(robot, TH.shape[2])
    _, _, per_limb = energies_closure_limbs(f, TH, THD, g0)
    assert per_limb.shape == (len(X), len(robot.limbs))
    for s in range(len(X)):
        for i, l in enumerate(robot.limbs):
            ref = float(np.max(np.abs(l.constraint_residual(TH[s, i, :l.n]))))
            assert ref > 1e-6 and abs(per_limb[s, i] - ref) <= 1e-12 * ref
    TH[1, 0, 0] = np.nan   # the first limb's first variable: its loop residuals NaN, the other limbs' finite
    _, _, per_limb = energies_closure_limbs(f, TH, THD, g0)
    assert np.isnan(per_limb[1, 0]) and np.all(np.isfinite(per_limb[1, 1:])) and np.all(np.isfinite(per_limb[0]))
    assert np.isnan(energies_closure(f, TH, THD, g0)[2][1])


def python_outputs(robot, res):
    """A run's energies and closure per output as the per-state Python path computes them (:class:`Energy`'s
    call, :meth:`constraint_residual`), the joint rates from the inverse kinematics at the outputs' task state."""
    g0 = np.asarray(robot.spec.gravity, float)
    energy = Energy(robot, g0)
    sol = robot.inverse_dynamics(res.x, res.xd, np.zeros_like(res.x),
                                 start=[res.joints[l.name][0] for l in robot.limbs])
    kin, pot, closure = [], [], []
    for s in range(len(res.t)):
        ths = [res.joints[l.name][s] for l in robot.limbs]
        k, p = energy(ths, [sol.joints_d[l.name][s] for l in robot.limbs], res.x[s], res.xd[s])
        kin.append(k), pot.append(p)
        closure.append([float(np.max(np.abs(l.constraint_residual(th)), initial=0.0)) for l, th in zip(robot.limbs, ths)])
    return np.array(kin), np.array(pot), np.array(closure)


@pytest.mark.parametrize("which, form, method", [("delta", "task", "RK4"), ("delta", "task", "DOP853"),
                                                 ("delta", "actuator", "RK4"), ("delta", "joint", "RK4"),
                                                 ("rus", "task", "RK4")])
def test_a_single_runs_energies_and_closure_equal_the_per_output_python_path(which, form, method, request):
    """``robot.simulate``'s energies and closure, now one numba call over all outputs (the task form's numba
    RK4, its Python stepping, the actuator and joint forms' outputs), equal the per-output Python path. (The
    joint form's closure also holds each limb's platform mismatch: compared where it is the loops'.)"""
    robot = request.getfixturevalue(which)
    opts = dict(dt=1e-3) if method == "RK4" else dict(rtol=1e-10, atol=1e-12, dt=2e-3)
    res = robot.simulate("zero", (0.0, 0.05), method=method, form=form, **opts)
    assert res.form == form and len(res.t) >= 26
    kin, pot, closure = python_outputs(robot, res)
    scale = max(1.0, float(np.abs(kin + pot).max()))
    np.testing.assert_allclose(res.kinetic, kin, rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(res.potential, pot, rtol=0, atol=1e-10 * scale)
    assert np.ptp(res.kinetic) > 1e-3 * scale   # the platform falls: energies that move, the limbs' rates counted
    assert res.closure.shape == (len(res.t), len(robot.limbs))
    if form != "joint":
        np.testing.assert_allclose(res.closure, closure, rtol=0, atol=1e-13)
    lost = 0.0 if res.dissipated is None else res.dissipated   # (the joint form keeps no friction account)
    np.testing.assert_allclose(res.energy_error, res.energy - res.energy[0] - res.work + lost, rtol=0, atol=1e-15 * scale)


@pytest.mark.parametrize("name", ["delta_3rr2rrr", "delta_3r2us", "irsbot2", "wrist_3rrr", "hexapod_6ups"])
def test_the_actuator_forms_output_task_state_from_the_kernel_equals_the_reference(name):
    """An actuator-form output's ``(x, ẋ, ẍ)`` from the kernel (its platform pose, ``V_p = Z θ̇_act``,
    ``V̇_p = V̇⁰_p + Z θ̈_act``) equals limb 1's forward kinematics, Jacobian and accelerations by the
    reference algorithms (:meth:`ActuatorModel.task_state`) at the same assembled state, rotations included."""
    from pkm.sim.actuator import ActuatorModel, ActuatorRhs

    robot = pkm.load(ROBOTS / f"{name}.toml")
    model = ActuatorModel(robot, None)
    rhs = ActuatorRhs(model, lambda t, x, xd: np.zeros(robot.n_act), np.asarray(robot.spec.gravity, float))
    assert rhs.kernel is not None
    rng = np.random.default_rng(2)
    for _ in range(8):
        x = robot.x_ref + 0.02 * rng.uniform(-1, 1, robot.task_dof)
        s = robot.inverse_kinematics(x, rng.uniform(-0.5, 0.5, robot.task_dof), limits=False)
        model.thetas = [s.joints[l.name][0].copy() for l in robot.limbs]
        model.follow(x)
        _, (qdd, th, thd, thdd, *_) = rhs.evaluate(0.0, s.q_act[0], s.qd_act[0], energies=False)
        assert model.thetas is rhs.kernel.views   # the kernel evaluated it
        got, ref = rhs.task_state(th, thd, thdd, qdd), model.task_state(th, thd, thdd)
        np.testing.assert_allclose(got[0], x, rtol=0, atol=1e-12)
        assert np.abs(got[2]).max() > 1e-3   # accelerations worth comparing
        for a, b in zip(got, ref):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-13 * max(1.0, np.abs(b).max()))


@pytest.mark.parametrize("name", ["wrist_3rrr", "hexapod_6ups", "planar_3rpr", "irsbot2"])
def test_energy_states_equal_the_per_state_call_with_rotations(name):
    """:meth:`Energy.states` (a single run's outputs) equals :meth:`Energy.__call__` per state on task spaces with
    rotations too (the platform's pose and twist from :func:`platform_states`, not ``platform_twist`` per state)."""
    robot = pkm.load(ROBOTS / f"{name}.toml")
    energy = Energy(robot, np.asarray(robot.spec.gravity, float))
    rng = np.random.default_rng(0)
    X = robot.x_ref + 0.05 * rng.uniform(-1, 1, (6, robot.task_dof))
    XD = rng.uniform(-1, 1, (6, robot.task_dof))
    sol = robot.inverse_dynamics(X, XD, np.zeros_like(X))
    TH = np.zeros((6, len(robot.limbs), max(l.n for l in robot.limbs)))
    THD = np.zeros_like(TH)
    for i, l in enumerate(robot.limbs):
        TH[:, i, :l.n], THD[:, i, :l.n] = sol.joints[l.name], sol.joints_d[l.name]
    kin, pot, closure = energy.states(TH, THD, X, XD)
    for s in range(6):
        k, p = energy([TH[s, i, :l.n] for i, l in enumerate(robot.limbs)],
                      [THD[s, i, :l.n] for i, l in enumerate(robot.limbs)], X[s], XD[s])
        scale = max(1.0, abs(k) + abs(p))
        assert abs(kin[s] - k) <= 1e-13 * scale and abs(pot[s] - p) <= 1e-13 * scale and k > 1e-6
    assert np.all(closure <= 1e-12)
