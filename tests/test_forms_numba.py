"""The actuator-coordinate form (paper 8.1.3) on its numba kernel (issue 32.1,
:mod:`pkm.kernels.actuator_form`) against the Python reference (:class:`pkm.sim.actuator.ActuatorModel`,
``ActuatorRhs(kernel=False)``): right-hand sides at random states, the errors, and the whole RK4
run in numba against the Python-stepped RK4 of the reference. Robots: the Delta and the planar
3-RPR (constant-H limbs: one compile) and the IRSBot-2 (general limbs)."""
from __future__ import annotations

import numpy as np
import pytest

import pkm
from pkm.sim.actuator import ActuatorModel, ActuatorRhs
from pkm.sim.actuator_kernel import ActuatorKernel, rk4_actuator
from pkm.sim.inputs import Constant, Table
from pkm.sim.task import piecewise_cubic

from conftest import ROBOTS

NAMES = ("delta_3rr2rrr", "irsbot2", "planar_3rpr")


@pytest.fixture(scope="module")
def robots():
    return {name: pkm.load(ROBOTS / f"{name}.toml") for name in NAMES}


def _home(robot):
    sol = robot.inverse_kinematics(robot.x_ref, np.zeros(robot.task_dof))
    return sol.q_act[0], [sol.joints[l.name][0].copy() for l in robot.limbs]


def _pair(robot, u, wrench=None):
    """The reference and the kernel's right-hand sides of one robot."""
    g = np.asarray(robot.spec.gravity, dtype=float)
    ref = ActuatorRhs(ActuatorModel(robot, wrench), u, g, kernel=False)
    fast = ActuatorRhs(ActuatorModel(robot, wrench), u, g)
    assert ref.kernel is None and fast.kernel is not None
    return ref, fast


@pytest.mark.parametrize("name", NAMES)
def test_kernel_rhs_equals_the_reference(robots, name):
    """At 6 random states near home (actuator coordinates ± 0.1, rates ~ 1 per s, forces ~ 1, an
    end-effector wrench) the kernel's y' (rates, accelerations, power, friction) and its outputs
    (tree variables, their rates and accelerations) equal the reference's to 1e-12 relative."""
    robot = robots[name]
    rng = np.random.default_rng(7)
    qa0, th0 = _home(robot)
    for k in range(6):
        u = Constant(rng.standard_normal(robot.n_act))
        ref, fast = _pair(robot, u, wrench=rng.standard_normal(6) if k % 2 else None)
        y = np.concatenate([qa0 + 0.1 * rng.uniform(-1, 1, robot.n_act), rng.standard_normal(robot.n_act), [0, 0]])
        for rhs in (ref, fast):
            rhs.restart(th0)
        a, b = ref(0.1, y), fast(0.1, y)
        assert fast.model.thetas is fast.kernel.views   # evaluated by the kernel, not the fallback
        assert np.abs(a - b).max() <= 1e-12 * max(1.0, np.abs(a).max()), (k, a, b)
        ua, oa = ref.evaluate(0.1, y[:robot.n_act], y[robot.n_act:2 * robot.n_act])
        ub, ob = fast.evaluate(0.1, y[:robot.n_act], y[robot.n_act:2 * robot.n_act])
        for xa, xb in zip(oa[:4], ob[:4]):   # θ̈_act, θ, θ̇, θ̈
            xa, xb = np.concatenate([np.ravel(v) for v in xa]), np.concatenate([np.ravel(v) for v in xb])
            assert np.abs(xa - xb).max() <= 1e-12 * max(1.0, np.abs(xa).max())
        assert abs(oa[4] - ob[4]) <= 1e-12 * max(1.0, abs(oa[4])) and abs(oa[5] - ob[5]) <= 1e-12 * max(1.0, abs(oa[5]))
        for La, Lb in zip(ref.model.Ls, fast.model.Ls):   # the watch's limb Jacobians
            assert np.abs(La - Lb).max() <= 1e-12 * max(1.0, np.abs(La).max())


def test_kernel_rhs_with_a_controller_equals_the_reference(robots):
    """Forces of the state (a controller u(t, x, ẋ)): the kernel's task coordinates feed it, as the
    reference's do."""
    robot = robots["delta_3rr2rrr"]
    qa0, th0 = _home(robot)
    u = lambda t, x, xd: -50.0 * (x - robot.x_ref) - 5.0 * xd   # noqa: E731
    ref, fast = _pair(robot, u)
    y = np.concatenate([qa0 + 0.05, [0.3, -0.2, 0.1], [0, 0]])
    for rhs in (ref, fast):
        rhs.restart(th0)
    a, b = ref(0.0, y), fast(0.0, y)
    assert fast.model.thetas is fast.kernel.views
    assert np.abs(a - b).max() <= 1e-12 * np.abs(a).max()


def test_kernel_errors_are_located_one_liners(robots):
    """Actuator coordinates where the Delta cannot be assembled: the error names the time, one line,
    as the reference's (the kernel hands a state it cannot evaluate to the reference, from the same
    start); the start is kept for the next evaluation, which the kernel evaluates again."""
    robot = robots["delta_3rr2rrr"]
    qa0, th0 = _home(robot)
    ref, fast = _pair(robot, Constant(np.zeros(3)))
    y = np.concatenate([qa0 + 3.0, np.zeros(3), [0, 0]])
    for rhs in (ref, fast):
        rhs.restart(th0)
        with pytest.raises(pkm.IKError, match=r"^at t = 0\.5 s: the mechanism cannot be assembled") as err:
            rhs(0.5, y)
        assert "\n" not in str(err.value)
    good = np.concatenate([qa0, np.zeros(3), [0, 0]])
    assert np.abs(ref(0.0, good) - fast(0.0, good)).max() <= 1e-12 * np.abs(ref(0.0, good)).max()
    assert fast.model.thetas is fast.kernel.views
    k = ActuatorKernel(robot, None, np.asarray(robot.spec.gravity, float))   # the kernel's own error
    k.set_start(th0)
    with pytest.raises(pkm.IKError, match=r"^the mechanism cannot be assembled at these actuator coordinates"):
        k.run(qa0 + 3.0, np.zeros(3), np.zeros(3))
    assert np.array_equal(k.thetas()[0], th0[0])


def _python_rk4(rhs, T, y0):
    Y = [np.asarray(y0, dtype=float)]
    for t, h in zip(T[:-1], np.diff(T)):
        y = Y[-1]
        k1 = rhs(t, y)
        k2 = rhs(t + h / 2, y + h / 2 * k1)
        k3 = rhs(t + h / 2, y + h / 2 * k2)
        k4 = rhs(t + h, y + h * k3)
        Y.append(y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4))
    return np.array(Y)


@pytest.mark.parametrize("name", ["delta_3rr2rrr", "irsbot2"])
def test_rk4_in_numba_equals_the_python_stepped_reference(robots, name):
    """The actuator form's RK4 entirely in numba (:func:`pkm.sim.actuator_kernel.rk4_actuator`) under a
    torque table (piecewise cubic) equals the reference's RHS stepped by a Python RK4 to 1e-12
    over 20 steps of 1 ms (states, work and the tree variables at the step ends)."""
    robot = robots[name]
    qa0, th0 = _home(robot)
    hold = robot.inverse_dynamics(robot.x_ref, np.zeros(robot.task_dof), np.zeros(robot.task_dof)).tau[0]
    tt = np.linspace(0.0, 0.03, 7)
    table = Table(tt, hold[None, :] * (1.0 + 0.3 * np.sin(40 * tt))[:, None])
    T = np.linspace(0.0, 0.02, 21)
    y0 = np.concatenate([qa0, 0.2 * np.ones(robot.n_act), [0.0, 0.0]])
    ref = ActuatorRhs(ActuatorModel(robot), table, np.asarray(robot.spec.gravity, float), kernel=False)
    ref.restart(th0)
    Yref = _python_rk4(ref, T, y0)
    k = ActuatorKernel(robot, None, np.asarray(robot.spec.gravity, float))
    k.set_start(th0)
    Y, theta = rk4_actuator(k, T, y0, piecewise_cubic(table, T[0], T[-1]))
    assert np.abs(Y - Yref).max() <= 1e-12 * np.abs(Yref).max()
    ref.restart([theta[-1, j, :l.n] for j, l in enumerate(robot.limbs)])
    th_ref = ref.thetas(T[-1], Yref[-1])
    assert max(np.abs(a - theta[-1, j, :len(a)]).max() for j, a in enumerate(th_ref)) <= 1e-12


# ---------------------------------------------------------------------------- the joint form (8.1.2)
def _joint_pair(robot, u):
    from pkm.sim.joint import JointModel, JointRhs

    g = np.asarray(robot.spec.gravity, dtype=float)
    _, th0 = _home(robot)
    theta0 = np.concatenate(th0)
    ref = JointRhs(JointModel(robot, g), u, 1e4, False, 0.0, theta0, kernel=False)
    fast = JointRhs(JointModel(robot, g), u, 1e4, False, 0.0, theta0)
    assert ref.kernel is None and fast.kernel is not None
    return ref, fast, theta0


def test_joint_kernel_rhs_equals_the_reference(robots):
    """The joint form's y' = (θ̇, V̇_t, u·θ̇_act) on the kernel equals the reference's to 1e-12 at 6
    random states of the Delta, on and off the constraint manifold (θ perturbed by up to 1e-4:
    the integrator's drift, evaluated where it is, H from G(θ)), under a controller of x."""
    robot = robots["delta_3rr2rrr"]
    rng = np.random.default_rng(3)
    u = lambda t, x, xd: -30.0 * (x - robot.x_ref) - 3.0 * xd + 1.0   # noqa: E731
    ref, fast, theta0 = _joint_pair(robot, u)
    for k in range(6):
        theta = theta0 + (1e-4 * rng.uniform(-1, 1, len(theta0)) if k else 0.0)
        y = np.concatenate([theta, rng.standard_normal(robot.task_dof), [0.0]])
        a, b = ref(0.1, y), fast(0.1, y)
        assert np.abs(a - b).max() <= 1e-12 * max(1.0, np.abs(a).max()), (k, a, b)
        fast.kernel.run(theta, y[len(theta):-1])   # the kernel's own state: no fallback to the reference


def test_joint_rk4_in_numba_equals_the_python_stepped_reference(robots):
    """The joint form's RK4 in numba (:func:`pkm.sim.joint_kernel.rk4_joint`, no projections) under a
    torque table equals the reference's RHS stepped by a Python RK4 to 1e-12 over 20 steps of 1 ms."""
    from pkm.sim.joint_kernel import JointKernel, rk4_joint

    robot = robots["delta_3rr2rrr"]
    hold = robot.inverse_dynamics(robot.x_ref, np.zeros(3), np.zeros(3)).tau[0]
    tt = np.linspace(0.0, 0.03, 7)
    table = Table(tt, hold[None, :] * (1.0 + 0.3 * np.sin(40 * tt))[:, None])
    ref, _, theta0 = _joint_pair(robot, lambda t, x, xd: table(t))
    T = np.linspace(0.0, 0.02, 21)
    y0 = np.concatenate([theta0, [0.1, -0.2, 0.3], [0.0]])
    Yref = _python_rk4(ref, T, y0)
    k = JointKernel(robot, np.asarray(robot.spec.gravity, float), None, 1e6)
    Y, _ = rk4_joint(k, T, y0, piecewise_cubic(table, T[0], T[-1]))
    assert np.abs(Y - Yref).max() <= 1e-12 * np.abs(Yref).max()


def test_joint_rk4_with_projections_in_numba_equals_the_python_stepped_reference(robots):
    """With the reference's step acceptance (the J_IK check and the closure projection after every
    step, :meth:`pkm.sim.joint.JointRhs.accept`) the RK4 in numba equals pkm's Python RK4 of the
    reference (:func:`pkm.sim.stepping.rk4`) to 1e-12 over 20 steps of 5 ms, the projections'
    residuals and moves too."""
    from pkm.sim.joint import JointModel, JointRhs
    from pkm.sim.joint_kernel import JointKernel, rk4_joint
    from pkm.sim.stepping import rk4

    robot = robots["delta_3rr2rrr"]
    hold = robot.inverse_dynamics(robot.x_ref, np.zeros(3), np.zeros(3)).tau[0]
    tt = np.linspace(0.0, 0.12, 13)
    table = Table(tt, hold[None, :] * (1.0 + 0.3 * np.sin(40 * tt))[:, None])
    g = np.asarray(robot.spec.gravity, float)
    _, th0 = _home(robot)
    model = JointModel(robot, g)
    theta0 = model.project(np.concatenate(th0))[0]
    ref = JointRhs(model, lambda t, x, xd: table(t), 1e4, True, 0.0, theta0, kernel=False)
    T = np.linspace(0.0, 0.1, 21)
    y0 = np.concatenate([theta0, [0.1, -0.2, 0.3], [0.0]])
    Yref = np.empty((len(T), len(y0)))
    rk4(ref, T, 0, y0, lambda k, t, y: Yref.__setitem__(k, y))
    k = JointKernel(robot, g, None, 1e6)
    Y, proj = rk4_joint(k, T, y0, piecewise_cubic(table, T[0], T[-1]), rank=model.rank)
    assert np.abs(Y - Yref).max() <= 1e-12 * np.abs(Yref).max()
    ref_proj = np.array(ref.projections)[:, 1:]
    assert np.all(proj[:, 2] == ref_proj[:, 2]) and np.all(proj[:, 2] >= 1)
    assert np.allclose(proj[:, :2], ref_proj[:, :2], rtol=1e-6, atol=1e-15)


# ---------------------------------------------------------------------------- robot.simulate's RK4 of either form in numba
FIELDS = ("x", "xd", "q_act", "qd_act", "tau", "energy", "energy_error", "work", "closure")


def _both(monkeypatch, robot, u, **options):
    """The run through ``robot.simulate`` on the numba path (:mod:`pkm.sim.rk4_forms`) and stepped in Python."""
    from pkm.sim import rk4_forms

    monkeypatch.setattr(rk4_forms, "ENABLED", True)
    fast = robot.simulate(u, method="RK4", **options)
    monkeypatch.setattr(rk4_forms, "ENABLED", False)
    slow = robot.simulate(u, method="RK4", **options)
    monkeypatch.setattr(rk4_forms, "ENABLED", True)
    return fast, slow


def _same(fast, slow, upto=None, tol=1e-12):
    """Every field of the two results equal to ``tol`` (relative to its scale) at the outputs before ``upto``."""
    k = slice(None) if upto is None else fast.t < upto
    for f in FIELDS:
        a, b = getattr(fast, f)[k], getattr(slow, f)[k]
        assert np.abs(a - b).max() <= tol * max(1.0, np.abs(b).max()), (f, np.abs(a - b).max())
    for l in fast.joints:
        assert np.abs(fast.joints[l][k] - slow.joints[l][k]).max() <= tol


def _table(robot, span):
    hold = robot.inverse_dynamics(robot.x_ref, np.zeros(robot.task_dof), np.zeros(robot.task_dof)).tau[0]
    tt = np.linspace(0.0, span, 7)
    return Table(tt, hold[None, :] * (1.0 + 0.3 * np.sin(40 * tt))[:, None])


@pytest.mark.parametrize("form", ["actuator", "joint"])
@pytest.mark.parametrize("u", ["hold", "zero", "table"])
def test_simulate_rk4_of_the_forms_runs_in_numba_and_equals_the_python_stepping(robots, monkeypatch, form, u):
    """``robot.simulate(form="actuator"|"joint", method="RK4")`` under hold, zero or tabulated torques
    takes the numba RK4 (``info["rk4_numba"]``) and equals the Python-stepped run to 1e-12: states,
    actuator coordinates and forces, energy, its error, the work and the loops' closure; the joint
    form's projections too. 40 steps of 1 ms of the Delta (and the IRSBot-2's actuator form)."""
    names = ["delta_3rr2rrr"] + (["irsbot2"] if form == "actuator" and u == "table" else [])
    for name in names:
        robot = robots[name]
        torques = _table(robot, 0.04) if u == "table" else u
        fast, slow = _both(monkeypatch, robot, torques, t_span=(0.0, 0.04), form=form, dt=1e-3)
        assert fast.info["rk4_numba"] is True and slow.info["rk4_numba"] is False
        _same(fast, slow)
        if form == "joint":
            assert len(fast.info["projection"]) == len(slow.info["projection"]) == 40
            assert np.all(fast.info["projection_iterations"] == slow.info["projection_iterations"])
        else:
            assert fast.info["segments"] == slow.info["segments"]


def test_simulate_rk4_of_the_forms_with_a_wrench_and_progress(robots, monkeypatch):
    """An end-effector wrench in the actuator form's numba RK4 (its work in W) and the progress
    callback after each chunk of steps, ending at t1."""
    from pkm.sim import task

    robot = robots["delta_3rr2rrr"]
    wrench = np.array([0.0, 0.0, 0.0, 0.5, -0.3, -2.0])
    monkeypatch.setattr(task, "CHUNK_STEPS", 7)   # several chunks: the same run as one call
    seen = []
    fast, slow = _both(monkeypatch, robot, "hold", t_span=(0.0, 0.03), form="actuator", dt=1e-3, wrench=wrench,
                       progress=seen.append)
    assert fast.info["rk4_numba"] and np.abs(fast.work).max() > 0.0
    _same(fast, slow)
    assert seen[:5] == pytest.approx([0.007, 0.014, 0.021, 0.028, 0.03])
    seen.clear()
    fast, slow = _both(monkeypatch, robot, "zero", t_span=(0.0, 0.03), form="joint", dt=1e-3, progress=seen.append)
    assert fast.info["rk4_numba"]
    _same(fast, slow)
    assert seen[:5] == pytest.approx([0.007, 0.014, 0.021, 0.028, 0.03])


def test_simulate_rk4_of_the_forms_stops_at_their_singularities_as_the_python_stepping(robots, monkeypatch):
    """The Delta falling from home under zero torque: with RK4 the actuator form passes the stretched
    arm (det J_IK changes sign through ∞ at t ≈ 0.26 s) on the numba path, equal to the Python
    stepping, and stops where its coordinates degenerate (type II; at 1 ms steps kappa_II reaches
    ~200 at the step ends after the stretched arm: max_condition 100, t = 0.268 s) and the joint form before the stretched
    arm (t ≈ 0.26 s), each with the same one-line error and time as the Python stepping; a
    max_condition the joint form's J_IK passes during the fall stops it with the Python path's
    error too."""
    from pkm.sim import rk4_forms

    robot = robots["delta_3rr2rrr"]
    cases = [(dict(form="actuator", max_condition=100.0), r"at t = 0\.26\d* s .*forward kinematics.*> 1\.0e\+02"),
             (dict(form="joint"), r"at t [=≈] 0\.26\d* s"),
             (dict(form="joint", max_condition=5.0), r"at t = 0\.1\d* s .*J_IK is nearly singular")]
    for options, pattern in cases:
        messages = []
        for enabled in (True, False):
            monkeypatch.setattr(rk4_forms, "ENABLED", enabled)
            with pytest.raises(pkm.SingularityError, match=pattern) as err:
                robot.simulate("zero", (0.0, 0.5), method="RK4", dt=1e-3, **options)
            messages.append(str(err.value))
        assert "\n" not in messages[0] and messages[0] == messages[1], messages
    fast, slow = _both(monkeypatch, robot, "zero", t_span=(0.0, 0.27), form="actuator", dt=1e-3)
    assert fast.info["rk4_numba"] and fast.q_act[:, 0].max() > np.pi / 2 + 0.1   # through the stretched arm
    _same(fast, slow, upto=0.25)
    # through the stretched arm the symmetric fall's lateral rounding noise (x, y ~ 1e-11 in either
    # path, exactly 0 in the exact motion) grows: both paths agree to that noise
    _same(fast, slow, tol=1e-9)


@pytest.mark.parametrize("u", ["hold", "table"])
def test_simulate_rk4_of_the_joint_form_without_projections_runs_in_numba(robots, monkeypatch, u):
    """``form="joint", project=False``: the same numba RK4 kernel with the reference's J_IK check and no
    projection, equal to the Python stepping to 1e-12 and, like it, recording no projections."""
    robot = robots["delta_3rr2rrr"]
    torques = _table(robot, 0.04) if u == "table" else u
    fast, slow = _both(monkeypatch, robot, torques, t_span=(0.0, 0.04), form="joint", dt=1e-3, project=False)
    assert fast.info["rk4_numba"] is True and slow.info["rk4_numba"] is False
    _same(fast, slow)
    assert fast.info["project"] is False and len(fast.info["projection"]) == len(slow.info["projection"]) == 0


def test_controllers_step_the_forms_rk4_in_python(robots):
    """Forces of the state (a controller) are not the numba RK4's: the Python stepping runs."""
    robot = robots["delta_3rr2rrr"]
    hold = robot.inverse_dynamics(robot.x_ref, np.zeros(3), np.zeros(3)).tau[0]
    u = lambda t, x, xd: hold - 5.0 * xd   # noqa: E731
    for form in ("actuator", "joint"):
        sim = robot.simulate(u, (0.0, 0.01), form=form, method="RK4", dt=1e-3)
        assert sim.info["rk4_numba"] is False


def test_the_joint_rk4_kernel_checks_j_ik_condition_number(robots):
    """The joint form's numba RK4 stops at its first evaluation where J_IK's 2-norm condition number
    exceeds ``max_cond`` (status ILL_JIK, the value as numpy's SVD gives it to 1e-12)."""
    from pkm.kernels.joint_projection import ILL_JIK
    from pkm.sim.joint import JointModel, JointRhs
    from pkm.sim.rk4_forms import joint_run

    robot = robots["delta_3rr2rrr"]
    g = np.asarray(robot.spec.gravity, float)
    _, th0 = _home(robot)
    model = JointModel(robot, g)
    theta0 = model.project(np.concatenate(th0))[0]
    cond0 = np.linalg.cond(model.jacobian_ik(theta0))
    y0 = np.concatenate([theta0, np.zeros(3), [0.0]])
    T = np.linspace(0.0, 0.01, 11)
    rhs = JointRhs(model, lambda t, x, xd: np.zeros(3), 0.5 * cond0, True, 0.0, theta0)
    assert joint_run(rhs, T, y0, Constant(np.zeros(3)), None) is None
    st = rhs.kernel.status
    assert st[0] == ILL_JIK and st[1] == 0 and abs(st[3] - cond0) <= 1e-12 * cond0
    rhs = JointRhs(model, lambda t, x, xd: np.zeros(3), 2.0 * cond0, True, 0.0, theta0)
    assert joint_run(rhs, T, y0, Constant(np.zeros(3)), None)["info"]["rk4_numba"]


def test_simulate_actuator_rk4_in_numba_with_joint_friction(monkeypatch):
    """Armature and joint friction (viscous, smooth Coulomb, passive viscous: joint terms) in the
    actuator form's numba RK4: the dissipated energy and the balance equal the Python stepping's."""
    from dataclasses import replace

    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    limbs = []
    for limb in robot.limbs:
        T = np.zeros((limb.n, 4))
        T[:, 1], T[:, 3] = 0.01, 0.2
        T[limb.actuated, 0], T[limb.actuated, 1], T[limb.actuated, 2] = 0.05, 0.51, 0.2
        limbs.append(replace(limb, tree=replace(limb.tree, joint_terms=T)))
    robot.limbs[:] = limbs
    fast, slow = _both(monkeypatch, robot, "zero", t_span=(0.0, 0.05), form="actuator", dt=1e-3)
    assert fast.info["rk4_numba"] and fast.dissipated[-1] > 0.01
    _same(fast, slow)
    assert np.abs(fast.dissipated - slow.dissipated).max() <= 1e-12 * fast.dissipated[-1]
