"""Simulation through singularities (issue 27): ``form="auto"`` integrates in task coordinates and
hands the motion to actuator coordinates where a limb nears its singularity and back where the
forward kinematics would degenerate (:mod:`pkm.sim.switching`). The Delta released at rest from
home with zero torque falls through its stretched arms (type I, t ≈ 0.2608 s) and through a
configuration where its actuator coordinates degenerate (t ≈ 0.2759 s) and swings back up.

A result that holds by luck is a defect: the fall is run under four tolerances, RK4 at three
steps and a start perturbed by 1e-14, and all of them must reach 0.5 s and agree to the
integrator's accuracy; the switches are located events, so they happen at the same times."""
from __future__ import annotations

import numpy as np
import pytest

import pkm
from pkm.sim.conditioning import Conditioning, characteristic_length

from conftest import ROBOTS

DELTA = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
T_EVAL = np.linspace(0.0, 0.5, 51)


@pytest.fixture(scope="module")
def falls():
    """The fall under DOP853 at rtol 1e-9 … 1e-12 (outputs every 10 ms)."""
    return {rtol: DELTA.simulate("zero", (0.0, 0.5), rtol=rtol, atol=rtol * 1e-2, t_eval=T_EVAL)
            for rtol in (1e-9, 1e-10, 1e-11, 1e-12)}


def _switches(sim):
    return [s["t1"] for s in sim.info["segments"][:-1]]


def test_auto_falls_through_both_singularities_under_every_tolerance(falls):
    """Every tolerance reaches 0.5 s in task → actuator → task coordinates, the switches at the
    same located times (to 1e-6 s), the motions equal to 10·rtol m of the tightest run; the arms
    swing past stretched, the platform comes back up; energy kept to 1e-6, loops closed."""
    ref = falls[1e-12]
    t_ref = _switches(ref)
    assert [s["form"] for s in ref.info["segments"]] == ["task", "actuator", "task"]
    assert 0.25 < t_ref[0] < 0.2608 < t_ref[1] < 0.2759  # around the stretched arm, before type II
    for rtol, sim in falls.items():
        assert sim.t[-1] == 0.5 and [s["form"] for s in sim.info["segments"]] == ["task", "actuator", "task"]
        assert np.allclose(_switches(sim), t_ref, atol=1e-6), (rtol, _switches(sim), t_ref)
        assert np.abs(sim.x - ref.x).max() <= 10 * rtol, rtol
        assert np.abs(sim.energy_error).max() <= 1e-6 * np.abs(sim.energy).max()
        assert sim.closure.max() <= 1e-10
    bottom = int(np.argmin(ref.x[:, 2]))
    assert 0.25 < T_EVAL[bottom] < 0.28 and ref.x[-1, 2] > ref.x[bottom, 2] + 0.2
    assert ref.q_act[:, 0].max() > np.pi / 2 + 1.0  # the arms swung on past vertical (stretched)
    assert np.abs(ref.x[:, :2]).max() <= 1e-9  # the fall stays symmetric: no noise injected at the singularities
    assert "coordinates: task 0–" in ref.health()


def test_auto_with_rk4_converges_at_fourth_order(falls):
    """RK4 at 1, 0.5 and 0.25 ms: the same fall to 0.5 s, the error against DOP853 at rtol 1e-12
    falling by ≥ 10× per halving (fourth order: 16×; measured 28×, 24×), 5e-9 m at the finest."""
    ref = falls[1e-12]
    errors = []
    for dt in (1e-3, 5e-4, 2.5e-4):
        sim = DELTA.simulate("zero", (0.0, 0.5), method="RK4", dt=dt)
        assert sim.t[-1] == 0.5 and [s["form"] for s in sim.info["segments"]] == ["task", "actuator", "task"]
        errors.append(np.abs(sim.x[np.round(T_EVAL / dt).astype(int)] - ref.x).max())
    assert errors[0] / errors[1] >= 10 and errors[1] / errors[2] >= 10 and errors[2] <= 1e-8, errors


@pytest.mark.parametrize("sign", (1.0, -1.0))
def test_auto_from_a_perturbed_start_follows_the_same_motion(falls, sign):
    """A start moved by 1e-14 m reaches 0.5 s along the same motion (to the integrator's accuracy,
    1e-9 m at rtol 1e-10) with the switches at the same times."""
    x0 = DELTA.x_ref + sign * 1e-14 * np.array([1.0, -0.5, 0.3])
    sim = DELTA.simulate("zero", (0.0, 0.5), x0, rtol=1e-10, atol=1e-12, t_eval=T_EVAL)
    assert np.abs(sim.x - falls[1e-12].x).max() <= 1e-9
    assert np.allclose(_switches(sim), _switches(falls[1e-12]), atol=1e-6)


def test_the_absolute_coordinate_model_falls_alike(falls):
    """pkm's second formulation, the absolute-coordinate index-1 DAE of the same robot file (every
    joint a constraint, no minimal coordinates: :mod:`pkm.absolute`), falls through both places
    where minimal coordinates degenerate without changing coordinates; the platform positions
    agree with form="auto" to 1e-6 m over 0.5 s. (Where the fall passes t = 0.27588 s the absolute
    model's constraint Jacobian nearly loses rank twice; its KKT solve falls back to the truncated
    least-squares solution there: :func:`pkm.absolute.standard.projected_ode`.)"""
    from absolute_cases import pkm_poses
    from pkm.absolute.forward import consistent_state, simulate
    from pkm.absolute.loader import load_spec

    model = load_spec(DELTA.spec)
    sol = DELTA.inverse_kinematics(DELTA.x_ref)
    poses = pkm_poses(DELTA, {l.name: sol.joints[l.name] for l in DELTA.limbs}, 0)
    q0, v0 = consistent_state(model, sol.q_act[0], np.zeros(3), model.coordinates(poses))
    plat = model.bodies[DELTA.spec.platform]
    sl = model.system.body_slice(plat)
    p_pkm = np.array([DELTA.platform_pose(x)[:3, 3] for x in falls[1e-12].x[::5]])
    for rtol in (1e-8, 1e-9):  # (measured 2.8e-10 and 1.7e-11 m)
        ab = simulate(model, np.zeros(3), q0, v0, 0.05, 10, rtol=rtol, atol=rtol * 1e-2)
        p_abs = np.array([plat.pose(q[sl])[:3, 3] for q in ab.q])
        assert np.abs(p_pkm - p_abs).max() <= 1e-6, rtol
        assert np.ptp(p_abs[:, 2]) > 0.25 and ab.constraint_residual.max() <= 1e-10  # it fell, on the constraints


def test_explicit_forms_stop_at_their_own_singularity():
    """The task form stops before the stretched arm (type I), the actuator form passes it and stops
    at the configuration where its coordinates degenerate (t ≈ 0.2758 s) — under every tolerance,
    at the same located time, never by luck (a step that straddles the narrow passage does not miss
    it) — each naming the time; auto passes both."""
    for rtol in (1e-8, 1e-9, 1e-10):
        with pytest.raises(pkm.SingularityError, match=r"at t = 0\.2[56]\d* s") as info:
            DELTA.simulate("zero", (0.0, 0.5), form="task", rtol=rtol, atol=rtol * 1e-2)
        assert "L_p" in str(info.value) and "form='auto' passes" in str(info.value)
    for rtol in (1e-8, 1e-9, 1e-10, 1e-12):
        with pytest.raises(pkm.SingularityError, match=r"at t = 0\.275792 s .*forward kinematics.*form='auto'"):
            DELTA.simulate("zero", (0.0, 0.5), form="actuator", rtol=rtol, atol=rtol * 1e-2)


# ---------------------------------------------------------------------------- false singularities at rest
def _planar_in_metres(tmp_path):
    """The planar 3-RPR with its lengths read as metres: a robot 1000× the size."""
    text = (ROBOTS / "planar_3rpr.toml").read_text().replace('units = "mm"', 'units = "m"')
    path = tmp_path / "planar_m.toml"
    path.write_text(text)
    return path


def test_condition_numbers_do_not_depend_on_the_unit(tmp_path):
    """The simulation's condition numbers are unit-free (a characteristic length): the planar
    3-RPR and the same robot 1000× larger have the same, where the kernel's raw condition of L_p
    mixes m and rad (5.3 against 7.9e4)."""
    small, large = pkm.load(ROBOTS / "planar_3rpr.toml"), pkm.load(_planar_in_metres(tmp_path))
    assert characteristic_length(large) == pytest.approx(1000 * characteristic_length(small), rel=1e-12)
    k = []
    for robot in (small, large):
        sol = robot.inverse_kinematics(robot.x_ref)
        k.append(Conditioning(robot)([sol.joints[l.name][0] for l in robot.limbs]))
    assert np.allclose(k[0], k[1], rtol=1e-9) and k[0][0] < 20


@pytest.mark.parametrize("case", ("planar zero 2 s", "planar in metres", "wrist hold", "delta Radau 0.02 s",
                                  "hexapod hold"))
def test_no_false_singularity_at_rest(case, tmp_path):
    """A robot at rest (no net force) stays there: no SingularityError at t = 1e-6 s from a step
    check relative to the run's length (the first step of a run at rest is scipy's guess, 1e-6 s)
    or from a condition number that mixes m and rad."""
    path, torques, options = {
        "planar zero 2 s": (ROBOTS / "planar_3rpr.toml", "zero", dict(t_span=(0.0, 2.0))),
        "planar in metres": (_planar_in_metres(tmp_path), "zero", dict(t_span=(0.0, 2.0))),
        "wrist hold": (ROBOTS / "wrist_3rrr.toml", "hold", dict(t_span=(0.0, 1.0))),
        "delta Radau 0.02 s": (ROBOTS / "delta_3rr2rrr.toml", "hold", dict(t_span=(0.0, 0.02), method="Radau")),
        "hexapod hold": (ROBOTS / "hexapod_6ups.toml", "hold", dict(t_span=(0.0, 1.0))),
    }[case]
    robot = pkm.load(path)
    t_span = options.pop("t_span")
    sim = robot.simulate(torques, t_span, **options)
    assert sim.t[-1] == t_span[1]
    assert np.abs(sim.x - sim.x[0]).max() <= 1e-9 * max(1.0, characteristic_length(robot))


def test_a_run_too_fast_for_its_span_stops_in_one_line():
    """A hexapod launched at 1e6 m/s takes steps of ~1e-8 s: 10⁶ of them for 0.01 s (hours, and
    before, no error at all). After 1000 steps the run sees that it would need more than
    MAX_ADAPTIVE_STEPS and stops naming the step — bounded time, one line."""
    from pkm.sim.stepping import MAX_ADAPTIVE_STEPS

    hexapod = pkm.load(ROBOTS / "hexapod_6ups.toml")
    with pytest.raises(pkm.PkmError, match=rf"would need more than {MAX_ADAPTIVE_STEPS} of them") as info:
        hexapod.simulate("zero", (0.0, 0.01), xd0=[0, 0, 0, 0, 0, 1e6], limits=False)   # (beyond the strokes at once)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("name", ("wrist_3rrr", "planar_3rpr", "hexapod_6ups"))
def test_actuator_form_with_rotations_and_a_wrench_equals_the_task_form(name):
    """The actuator form (paper 8.1.3) with a rotating platform (spherical, planar, SE(3) task
    spaces: ρ from the assembled pose, continued; ẋ from V_t, eq. 130) and an end-effector wrench
    (the forces Θ_pᵀ W^EE): the same motion as the task form from a moving start under torques that
    are not the holding ones, to 1e-8 over 50 ms; the energy balance counts the wrench's work."""
    robot = pkm.load(ROBOTS / f"{name}.toml")
    d = robot.task_dof
    x0 = robot.x_ref + 0.02 * np.linspace(-1.0, 1.0, d)
    xd0 = 0.1 * np.linspace(1.0, -0.5, d)
    wrench = np.array([0.01, -0.02, 0.015, 0.3, -0.2, 0.1])
    hold = robot.forward_dynamics(x0, np.zeros(d), np.zeros(robot.n_act), wrench).bias[0]
    u = hold * 1.05 + 0.01 * np.abs(hold).max()
    t_eval = np.linspace(0.0, 0.05, 6)
    runs = [robot.simulate(u, (0.0, 0.05), x0, xd0, form=form, wrench=wrench, rtol=1e-11, atol=1e-13, t_eval=t_eval)
            for form in ("task", "actuator")]
    assert np.abs(runs[0].x[-1] - x0).max() > 1e-4  # it moved
    assert np.abs(runs[0].x - runs[1].x).max() <= 1e-8 and np.abs(runs[0].q_act - runs[1].q_act).max() <= 1e-8
    for sim in runs:
        assert np.abs(sim.energy_error).max() <= 1e-8 * np.abs(sim.energy).max(), sim.form


def test_the_end_effector_wrench_in_every_path():
    """An end-effector wrench moves the Delta alike in the adaptive task form, the actuator form and
    the task form's RK4 entirely in numba (which left it out before), and its work is in W: the
    energy balance holds to 1e-8 in each (without it the balance failed by ~1e-2)."""
    wrench = np.array([0.0, 0.0, 0.0, 5.0, -3.0, 20.0])
    t_eval = np.linspace(0.0, 0.05, 51)
    ref = DELTA.simulate("zero", (0.0, 0.05), wrench=wrench, form="task", rtol=1e-12, atol=1e-14, t_eval=t_eval)
    free = DELTA.simulate("zero", (0.0, 0.05), form="task", rtol=1e-12, atol=1e-14, t_eval=t_eval)
    assert np.abs(ref.x - free.x).max() > 1e-4  # the wrench matters
    for sim in (ref, DELTA.simulate("zero", (0.0, 0.05), wrench=wrench, form="actuator", rtol=1e-12, atol=1e-14,
                                    t_eval=t_eval),
                DELTA.simulate("zero", (0.0, 0.05), wrench=wrench, form="task", method="RK4", dt=1e-3)):
        assert np.abs(sim.x - ref.x).max() <= 1e-9, sim.form
        assert np.abs(sim.energy_error).max() <= 1e-8 * np.abs(sim.energy).max(), (sim.form, sim.method)


@pytest.mark.parametrize("name", ["delta_3rr2rrr", "delta_3r2us", "wrist_3rrr", "planar_3rpr", "hexapod_6ups"])
def test_the_conditions_of_many_states_equal_each_states(name):
    """:meth:`Conditioning.many` (the actuator form's numba RK4 checks every step end with it) equals
    :meth:`Conditioning.kappa` and :meth:`Conditioning.jik_sign` state by state: at states from the reference
    configuration towards the workspace's edge, one with the first limb's actuated column of L_p turned (det J_IK's
    other sign, the same κ), one with a non-finite L_p (κ_I = inf, sign 0)."""
    robot = pkm.load(ROBOTS / f"{name}.toml")
    cond = Conditioning(robot)
    rng = np.random.default_rng(5)
    states = []
    for k in range(40):
        x = robot.x_ref + (0.002 + 0.2 * k / 40) * rng.uniform(-1, 1, robot.task_dof)
        try:
            sol = robot.inverse_kinematics(x, limits=False)
        except pkm.PkmError:
            continue
        states.append(cond.limb_jacobians([sol.joints[l.name][0] for l in robot.limbs]))
    assert len(states) >= 20
    turned = [L.copy() for L in states[1]]
    limb = robot.limbs[0]
    turned[0][:, list(limb.q_index).index(limb.actuated[0])] *= -1.0
    states.append(turned)
    states.append([L.copy() for L in states[0]])
    states[-1][-1][2, 0] = np.nan
    Ls = [np.stack([st[j] for st in states]) for j in range(len(robot.limbs))]
    kI, kII, sign = cond.many(Ls)
    for s, st in enumerate(states):
        ref = cond.kappa(st)
        for got, want in ((kI[s], ref[0]), (kII[s], ref[1])):
            assert got == want or abs(got - want) <= 1e-9 * want, (s, got, want)
        assert sign[s] == cond.jik_sign(st), s
    assert kI[-1] == np.inf and sign[-1] == 0.0 and sign[-2] == -sign[1] != 0.0
    assert np.all(np.isfinite(kI[:-1])) and np.ptp(kI[:-1]) > 0.1
