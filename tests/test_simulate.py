"""Forward dynamics and simulation in task coordinates (paper §8.1.1): checked against the inverse
dynamics (round trip), energy conservation and the work of the actuators, the singularity, the
order of RK4 and computed-torque control."""
from __future__ import annotations

import numpy as np
import pytest

import pkm
from conftest import ROBOTS, run_pkm
from pkm.control import ComputedTorque
from pkm.sim.inputs import Table, read_table
from pkm.trajectory import from_spec

FILES = {"delta": "delta_3rr2rrr.toml", "delta_us": "delta_3r2us.toml", "irsbot2": "irsbot2.toml"}
ROBOT = {k: pkm.load(ROBOTS / f) for k, f in FILES.items()}
DELTA = ROBOT["delta"]


def _paper_motion(robot, period=1.0, dt=1e-3):
    """The robot file's sine (the paper's motion for the Deltas) with period and duration T."""
    return from_spec(dict(robot.spec.trajectory, period=period, duration=period, dt=dt),
                     robot.task.coordinate_names())


@pytest.mark.parametrize("name", sorted(FILES))
def test_forward_dynamics_inverts_inverse_dynamics(name):
    robot = ROBOT[name]
    tr = _paper_motion(robot, dt=0.01)
    res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd)
    fd = robot.forward_dynamics(tr.x, tr.xd, res.tau, start=[res.joints[l.name][0] for l in robot.limbs])
    assert np.abs(fd.xdd - tr.xdd).max() <= 1e-9 * max(1.0, np.abs(tr.xdd).max())
    assert np.abs(fd.qdd_act - res.qdd_act).max() <= 1e-9 * max(1.0, np.abs(res.qdd_act).max())
    assert np.abs(fd.qd_act - res.qd_act).max() <= 1e-12


@pytest.mark.parametrize("name", sorted(FILES))
def test_forward_dynamics_matches_the_assembled_eom(name):
    """The kernel's accelerations against the EOM assembled term by term in Python (eq. 107–112,
    :meth:`pkm.robot.Robot.eom`, which the kernel does not use): M_t ẍ + C_t ẋ + W_t^grav = J_IKᵀ u
    at states of the paper's motion under unrelated forces."""
    robot = ROBOT[name]
    tr = _paper_motion(robot, dt=0.05)
    rng = np.random.default_rng(7)
    U = rng.normal(scale=5.0, size=(len(tr.t), robot.n_act))
    res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd)
    fd = robot.forward_dynamics(tr.x, tr.xd, U, start=[res.joints[l.name][0] for l in robot.limbs])
    for s in range(0, len(tr.t), 4):
        e = robot.eom(tr.x[s], tr.xd[s])
        lhs = e.M_t @ fd.xdd[s] + e.C_t_V_t + e.W_t_grav
        rhs = e.J_IK.T @ U[s]
        assert np.abs(lhs - rhs).max() <= 1e-10 * max(1.0, np.abs(rhs).max()), s
        # J_IK of two IK solutions each converged to 1e-12 on the pose (measured 7e-12 relative)
        np.testing.assert_allclose(fd.J_IK[s], e.J_IK, rtol=0, atol=1e-10 * np.abs(e.J_IK).max())


@pytest.mark.parametrize("name", sorted(FILES))
def test_round_trip_reproduces_the_motion(name):
    """Torques of inverse_dynamics along the paper's motion at T = 1 s, tabulated every ms and fed
    to simulate from the same initial state: the motion comes back to 1e-6 m (DOP853, rtol 1e-10)."""
    robot = ROBOT[name]
    tr = _paper_motion(robot)
    res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t)
    sim = robot.simulate(Table(tr.t, res.tau), (0.0, 1.0), tr.x[0], tr.xd[0], method="DOP853", rtol=1e-10,
                         atol=1e-12, t_eval=tr.t[::10], start=[res.joints[l.name][0] for l in robot.limbs])
    assert np.abs(sim.x - tr.x[::10]).max() <= 1e-6
    np.testing.assert_allclose(sim.q_act, res.q_act[::10], atol=1e-5)
    assert sim.closure.max() <= 1e-10
    assert np.abs(sim.energy_error).max() <= 1e-6 * np.abs(sim.work).max()


def test_free_fall_conserves_energy():
    """Zero torque, no friction: |ΔE| ≤ 1e-8 |E| over 0.2 s (DOP853, rtol 1e-12)."""
    sim = DELTA.simulate("zero", (0.0, 0.2), method="DOP853", rtol=1e-12, atol=1e-14)
    assert np.abs(sim.work).max() == 0.0
    assert np.abs(sim.energy - sim.energy[0]).max() <= 1e-8 * np.abs(sim.energy[0])
    assert sim.x[-1, 2] < DELTA.x_ref[2] - 0.05  # it did fall
    assert np.abs(sim.kinetic[-1]) > 0.1 * np.abs(sim.energy[0])
    assert sim.closure.max() <= 1e-10


@pytest.mark.parametrize("name", sorted(FILES))
def test_actuator_work_equals_the_change_of_energy(name):
    """With torques (the paper's motion's, at twice its pace): E(t) − E(0) = ∫ u·θ̇_act dt."""
    robot = ROBOT[name]
    tr = _paper_motion(robot, period=2.0, dt=2e-3)
    res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t)
    sim = robot.simulate(Table(tr.t, 0.5 * res.tau), (0.0, 0.2), tr.x[0], tr.xd[0], method="DOP853", rtol=1e-12,
                         atol=1e-14, start=[res.joints[l.name][0] for l in robot.limbs])
    scale = max(np.abs(sim.energy).max(), np.abs(sim.work).max())
    assert np.abs(sim.work).max() > 1e-3 * scale  # the actuators did work
    assert np.abs(sim.energy_error).max() <= 1e-8 * scale


def test_the_task_form_stops_at_the_singularity_with_the_time():
    """Released at rest from home with zero torque, the Delta falls until its arms are stretched
    (after ~0.26 s); in task coordinates the EOM degenerate there (a limb's L_p, and J_IK, become
    singular): form="task" stops with SingularityError naming t, with the adaptive and with the
    numba RK4 method (form="auto" passes: tests/test_simulate_auto.py)."""
    for method, options in (("DOP853", dict(rtol=1e-8, atol=1e-10)), ("RK4", dict(dt=1e-4))):
        with pytest.raises(pkm.SingularityError, match=r"at t = 0\.2\d*") as info:
            DELTA.simulate("zero", (0.0, 0.5), form="task", method=method, **options)
        t_stop = float(str(info.value).split("at t = ")[1].split(" s")[0])
        # before the arms are stretched: the actuator form's lowest point is at t = 0.26076 s
        # (t_eval spacing 1e-5 s, rtol 1e-10)
        assert 0.255 < t_stop < 0.26076, (method, t_stop)
        assert "form='auto' passes through" in str(info.value)
    with pytest.raises(pkm.IKError, match=r"at t = 0\.26 s .*a fixed step may jump past it"):
        DELTA.simulate("zero", (0.0, 0.5), form="task", method="RK4", dt=1e-3)  # a step from 0.26 s leaves the workspace


def test_a_fixed_step_that_bounces_off_the_singularity_warns():
    """RK4 at dt = 10 ms carries the falling Delta past its stretched arms without any evaluation
    near the singularity; the task form then bounces the platform back (non-physical) and the
    energy balance, the run's own health, fails by 29 %: an AccuracyWarning names the time. With
    dt = 0.1 ms the same run stops at the singularity; with the torques of a regular motion no
    warning."""
    with pytest.warns(pkm.AccuracyWarning, match=r"from t = 0\.26 s.*with RK4"):
        sim = DELTA.simulate("zero", (0.0, 0.5), form="task", method="RK4", dt=0.01)
    assert np.abs(sim.energy_error).max() > 0.1 * np.abs(sim.energy).max()
    import warnings

    tr = _paper_motion(DELTA)
    res = DELTA.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pkm.AccuracyWarning)
        DELTA.simulate(Table(tr.t, res.tau), (0.0, 1.0), tr.x[0], tr.xd[0], method="RK4", dt=0.01,
                       start=[res.joints[l.name][0] for l in DELTA.limbs])


def test_a_jump_to_another_branch_is_a_crossed_singularity():
    """Between two neighbouring evaluations of the forward kernel the IK must stay on its branch:
    if it lands on the other elbow of a limb (here forced: the start is set to the other branch's
    solution at the same point), a row of J_IK turns by more than 90° and the kernel stops with
    SingularityError naming the actuator (the rule of the trajectory IK's branch check)."""
    import warnings

    from pkm.kernels.batch import platform_states
    from pkm.sim.forward import ForwardKernel
    from pkm.trajectory import line

    x_far = np.array([0.58889366, -0.28236585, -0.54714781])  # two elbows of limb 2 (tests/test_branches.py)
    cold = DELTA.inverse_kinematics(x_far)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pkm.BranchWarning)
        cont = DELTA.inverse_kinematics(line(DELTA.x_ref, x_far, duration=3.0, dt=0.01).x)
    assert abs(cold.q_act[0, 1] - cont.q_act[-1, 1]) > 1.0
    k = ForwardKernel(DELTA)
    L, n = k.th.shape
    Cd, Vp, _ = platform_states(DELTA, x_far[None], np.zeros((1, 3)), np.zeros((1, 3)))
    args = Cd, Vp, np.zeros((1, 6)), np.zeros((1, 3))
    out = [np.zeros((1, L, n)) for _ in range(3)] + [np.zeros((1, 3)), np.zeros((1, 3)), np.zeros((1, 3, 3))]
    k.set_start([cont.joints[l.name][-1] for l in DELTA.limbs])
    k.run(*args, out)
    k.run(*args, out)  # a neighbour on the same branch: fine
    for i, l in enumerate(DELTA.limbs):
        k.th[i, :l.n] = cold.joints[l.name][0]
    with pytest.raises(pkm.SingularityError, match=r"row 1 of J_IK \(actuator 'limb2/1'\) turned by more than 90"):
        k.run(*args, out)


def test_actuator_form_passes_through_the_stretched_arm():
    """In actuator coordinates (paper 8.1.3) the Delta released at rest from home with zero torque
    falls through the stretched-arm singularity (t ≈ 0.2608 s, where the task form stops) and
    comes back up until, at t ≈ 0.2758 s, its actuator coordinates degenerate (the forward
    kinematics loses rank twice: the explicit form stops there, naming the time; form="auto"
    passes, tests/test_simulate_auto.py): energy is conserved to 1e-6 (measured 1.7e-10), the loops
    stay closed to 1e-10; before the singularity both forms give the same motion."""
    t_eval = np.linspace(0.0, 0.27, 28)
    sim = DELTA.simulate("zero", (0.0, 0.27), form="actuator", method="DOP853", rtol=1e-10, atol=1e-12,
                         t_eval=t_eval)
    bottom = int(np.argmin(sim.x[:, 2]))
    assert 0.25 < t_eval[bottom] < 0.27 and sim.x[-1, 2] > sim.x[bottom, 2]  # through the lowest point, back up
    assert sim.q_act[:, 0].max() > np.pi / 2 + 0.1  # the arms swung on past vertical (stretched)
    assert np.abs(sim.energy - sim.energy[0]).max() <= 1e-6 * np.abs(sim.energy).max()
    assert sim.closure.max() <= 1e-10
    with pytest.raises(pkm.SingularityError, match=r"at t = 0\.2757\d* s .*forward kinematics"):
        DELTA.simulate("zero", (0.0, 0.5), form="actuator", method="DOP853", rtol=1e-10, atol=1e-12)
    early = t_eval[t_eval <= 0.2]
    task = DELTA.simulate("zero", (0.0, 0.2), form="task", method="DOP853", rtol=1e-12, atol=1e-14, t_eval=early)
    act = DELTA.simulate("zero", (0.0, 0.2), form="actuator", method="DOP853", rtol=1e-12, atol=1e-14, t_eval=early)
    assert np.abs(task.x - act.x).max() <= 1e-9 and np.abs(task.q_act - act.q_act).max() <= 1e-9


@pytest.mark.parametrize("name", sorted(FILES))
def test_round_trip_in_actuator_coordinates(name):
    """The round trip in actuator coordinates (paper 8.1.3) over the whole period T = 1 s: 1e-6 m
    (measured ≤ 1.5e-10 m), loops closed by the assembly at every output."""
    robot = ROBOT[name]
    tr = _paper_motion(robot)
    res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t)
    sim = robot.simulate(Table(tr.t, res.tau), (0.0, 1.0), tr.x[0], tr.xd[0], form="actuator", method="DOP853",
                         rtol=1e-10, atol=1e-12, t_eval=tr.t[::50],
                         start=[res.joints[l.name][0] for l in robot.limbs])
    assert np.abs(sim.x - tr.x[::50]).max() <= 1e-6
    assert np.abs(sim.q_act - res.q_act[::50]).max() <= 1e-5
    assert sim.closure.max() <= 1e-10


def test_rk4_is_fourth_order():
    """Halving the fixed step divides the error by 16 (± 30 %)."""
    tr = _paper_motion(DELTA)
    res = DELTA.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t)
    u = Table(tr.t, res.tau)
    start = [res.joints[l.name][0] for l in DELTA.limbs]
    ref = DELTA.simulate(u, (0.0, 0.2), tr.x[0], tr.xd[0], method="DOP853", rtol=1e-13, atol=1e-15,
                         t_eval=[0.0, 0.2], start=start)
    err = []
    for dt in (0.02, 0.01):
        sim = DELTA.simulate(u, (0.0, 0.2), tr.x[0], tr.xd[0], method="RK4", dt=dt, start=start)
        err.append(np.abs(sim.x[-1] - ref.x[-1]).max())
    assert 16 / 1.3 <= err[0] / err[1] <= 16 * 1.3, err


@pytest.mark.parametrize("name", sorted(FILES))
def test_rk4_in_numba_equals_rk4_in_python(name):
    """The RK4 run inside numba (a table of forces) gives the steps of the same RK4 driven from
    Python one right-hand side at a time (the same forces behind a Python callable), to rounding;
    and the work integral with them."""
    robot = ROBOT[name]
    tr = _paper_motion(robot)
    res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t)
    u = Table(tr.t, res.tau)
    start = [res.joints[l.name][0] for l in robot.limbs]
    fast = robot.simulate(u, (0.0, 0.1), tr.x[0], tr.xd[0], method="RK4", dt=0.005, start=start)
    slow = robot.simulate(lambda t, x, xd: u(t), (0.0, 0.1), tr.x[0], tr.xd[0], method="RK4", dt=0.005, start=start)
    assert fast.t.shape == (21,) and np.array_equal(fast.t, slow.t)
    np.testing.assert_allclose(fast.x, slow.x, rtol=0, atol=1e-13)
    np.testing.assert_allclose(fast.xd, slow.xd, rtol=0, atol=1e-11)
    np.testing.assert_allclose(fast.work, slow.work, rtol=0, atol=1e-11 * np.abs(slow.work).max())
    assert np.abs(fast.x - tr.x[::5][:21]).max() <= 1e-6  # and it follows the motion


def test_computed_torque_tracks_pick_and_place_with_a_wrong_model():
    """The IRSBot-2's pick-and-place cycle (25 × 305 mm in 0.5 s, peak acceleration 91 m/s²),
    computed-torque control with every mass of the controller's model 10 % too large: the error
    stays below the first-order bound 0.1·(max|ẍ_d| + g)/kp = 2.5 mm (measured 1.5 mm with
    kp = (2π·10 Hz)²); with the exact model it is the integrator's (≤ 1e-6 m)."""
    import dataclasses

    robot = ROBOT["irsbot2"]
    spec = robot.spec
    heavy = dataclasses.replace(spec, bodies=tuple(dataclasses.replace(b, mass=1.1 * b.mass, inertia=1.1 * b.inertia)
                                                   for b in spec.bodies))
    if spec.limb is not None:
        limb = dataclasses.replace(spec.limb, bodies=tuple(
            dataclasses.replace(b, mass=1.1 * b.mass, inertia=1.1 * b.inertia) for b in spec.limb.bodies))
        heavy = dataclasses.replace(heavy, limb=limb)
    model = pkm.Robot(heavy)
    assert sum(b.mass for b in model.spec.expanded()[0]) == pytest.approx(1.1 * sum(b.mass for b in spec.expanded()[0]))
    centre = np.array(spec.trajectory["center"], dtype=float)
    tr = from_spec({"type": "pick-place", "start": centre, "lift": 0.025, "travel": 0.305, "cycle_time": 0.5,
                    "dt": 1e-3}, robot.task.coordinate_names())
    kp = (2 * np.pi * 10) ** 2
    errors = {}
    for name, m in (("exact", robot), ("heavy", model)):
        ctl = ComputedTorque(m, tr, kp)
        sim = robot.simulate(ctl, (0.0, 0.5), tr.x[0], tr.xd[0], method="DOP853", rtol=1e-10, atol=1e-12,
                             t_eval=tr.t[::5])
        errors[name] = np.abs(sim.x - tr.x[::5]).max()
    assert errors["exact"] <= 1e-6
    bound = 0.1 * (np.abs(tr.xdd).max() + np.linalg.norm(spec.gravity)) / kp
    assert 1e-5 < errors["heavy"] <= bound, (errors, bound)


def test_torque_tables_from_csv(tmp_path):
    path = tmp_path / "tau.csv"
    names = DELTA.actuator_names
    path.write_text("t," + ",".join(f"tau_{n}" for n in names) + "\n" + "\n".join(
        f"{t},{1.0 * t},{2.0},{-t}" for t in (0.0, 0.1, 0.2, 0.3, 0.4)) + "\n")
    table = read_table(path, names)
    np.testing.assert_allclose(table(0.25), [0.25, 2.0, -0.25], atol=1e-14)
    with pytest.raises(pkm.PkmError, match="outside the torque table"):
        table(0.5)
    path.write_text("t,tau_a\n0,1\n1,2\n")
    with pytest.raises(pkm.PkmError, match="no column"):
        read_table(path, names)


def test_bad_simulation_input():
    with pytest.raises(ValueError, match="form"):
        DELTA.simulate("zero", (0, 0.1), form="absolute")
    with pytest.raises(ValueError, match="method"):
        DELTA.simulate("zero", (0, 0.1), method="Euler")
    with pytest.raises(ValueError, match="t_span"):
        DELTA.simulate("zero", (0.1, 0.1))
    with pytest.raises(ValueError, match="dt"):
        DELTA.simulate("zero", (0, 0.1), method="RK4")
    with pytest.raises(ValueError, match="finite actuator forces"):
        DELTA.simulate([1.0, np.nan, 0.0], (0, 0.1))
    with pytest.raises(pkm.PkmError, match="outside the torque table"):
        DELTA.simulate(Table([0.0, 0.05], np.zeros((2, 3))), (0, 0.1))


@pytest.mark.parametrize("method, form", [("DOP853", "task"), ("Radau", "auto"), ("RK4", "actuator")])
def test_a_torque_table_shorter_than_the_run_is_refused_before_integrating(method, form):
    """A table to 0.05 s for a run to 0.1 s: refused before the first force is read (an adaptive run had
    integrated to the table's end first, then stopped)."""
    class Counted(Table):
        calls = 0

        def __call__(self, t, x=None, xd=None):
            Counted.calls += 1
            return super().__call__(t, x, xd)

    with pytest.raises(pkm.PkmError, match=r"the run \(0 … 0\.1 s\) is outside the torque table \(0 … 0\.05 s\)"):
        DELTA.simulate(Counted([0.0, 0.05], np.zeros((2, 3))), (0, 0.1), method=method, form=form,
                       dt=1e-3 if method == "RK4" else None)
    assert Counted.calls == 0


def test_hold_keeps_the_robot_at_rest():
    sim = DELTA.simulate("hold", (0.0, 0.1), method="DOP853", rtol=1e-12, atol=1e-14)
    assert np.abs(sim.x - DELTA.x_ref).max() <= 1e-10
    assert np.abs(sim.xd).max() <= 1e-9


# ------------------------------------------------------------------ pkm simulate
def _csv(path):
    lines = path.read_text().splitlines()
    return lines[0].split(","), np.array([[float(v) for v in line.split(",")] for line in lines[1:]])


def test_cli_free_fall_and_its_singularity(tmp_path):
    robot = ROBOTS / FILES["delta"]
    out, plot = tmp_path / "fall.csv", tmp_path / "fall.png"
    proc = run_pkm("simulate", robot, "--torques", "zero", "--duration", 0.2, "--out", out, "--plot", plot, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "energy error" in proc.stdout and "loop closure" in proc.stdout and plot.stat().st_size > 10_000
    header, data = _csv(out)
    assert header[:7] == ["t", "x", "y", "z", "xd", "yd", "zd"] and header[-4:] == ["energy", "work", "energy_error",
                                                                                   "closure"]
    assert data.shape == (201, len(header)) and np.abs(data[:, -2]).max() <= 1e-8 * np.abs(data[:, -4]).max()
    proc = run_pkm("simulate", robot, "--torques", "zero", "--duration", 0.5, "--form", "task", "--out", out,
                   cwd=tmp_path)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    assert "at t = 0.26" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_pkm("simulate", robot, "--torques", "zero", "--duration", 0.5, "--out", out, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr  # the default form passes both singularities
    assert "coordinates: task 0–0.253157 s, actuator 0.253157–0.269176 s, task 0.269176–0.5 s" in proc.stdout
    assert _csv(out)[1].shape[0] == 201


def test_cli_replays_the_torques_of_inverse_dynamics(tmp_path):
    """pkm inverse-dynamics --out tau.csv, then pkm simulate --torques tau.csv: the simulation
    starts in the motion's initial state, its rates included (the CSV's xd… columns), and the
    motion comes back (the first 2 s of the paper's sine, to 1e-6 m; the open loop amplifies errors
    ~30x per second: 2e-7 m after 3 s, 3 mm after 6 s). A table without rates whose motion moves
    starts at rest, and says so on stderr."""
    robot = ROBOTS / FILES["delta"]
    tau = tmp_path / "tau.csv"
    assert run_pkm("inverse-dynamics", robot, "--out", tau, cwd=tmp_path).returncode == 0
    tr = from_spec(DELTA.spec.trajectory, DELTA.task.coordinate_names())
    header, table = _csv(tau)
    assert header[:7] == ["t", "x", "y", "z", "xd", "yd", "zd"] and np.array_equal(table[:, 4:7], tr.xd)
    out = tmp_path / "sim.csv"
    proc = run_pkm("simulate", robot, "--torques", tau, "--rtol", 1e-11, "--step", 0.1, "--duration", 2, "--out", out,
                   cwd=tmp_path)
    assert proc.returncode == 0 and "warning" not in proc.stderr, proc.stderr
    _, data = _csv(out)
    assert data.shape[0] == 21 and np.abs(data[:, 1:4] - tr.x[:201:10]).max() <= 1e-6
    no_rates = tmp_path / "no_rates.csv"
    keep = [k for k, h in enumerate(header) if h not in ("xd", "yd", "zd")]
    lines = tau.read_text().splitlines()
    no_rates.write_text("\n".join(",".join(line.split(",")[k] for k in keep) for line in lines[:40]) + "\n")
    proc = run_pkm("simulate", robot, "--torques", no_rates, "--duration", 0.05, cwd=tmp_path)
    assert proc.returncode == 0 and "starts moving" in proc.stderr and "starts at rest" in proc.stderr, proc.stderr


def test_cli_computed_torque_and_bad_input(tmp_path):
    robot = ROBOTS / FILES["irsbot2"]
    proc = run_pkm("simulate", robot, "--torques", "computed-torque", "--trajectory", "pick-place", "--cycle-time", 0.5,
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "computed-torque control along the 0.5 s trajectory" in proc.stdout
    for args, phrase in ((("--torques", "nothing.csv"), "nothing.csv"), (("--torques", "zero", "--method", "RK4"),
                                                                       "--step"),
                         (("--torques", "zero", "--x0", 0.1), "--x0 needs 2"),
                         (("--torques", "zero", "--duration", -1), "--duration"),
                         (("--torques", "hold", "--method", "RK4", "--step", 1e-12), "steps"),
                         (("--torques", "hold", "--duration", 1e6, "--method", "RK4", "--step", 0.1), "steps"),
                         (("--torques", "hold", "--step", 1e-12), "outputs"),
                         (("--torques", "hold", "--x0", "nan", 0), "--x0"),
                         # trajectory options outside computed-torque were ignored (--dt taken for the step)
                         (("--torques", "hold", "--method", "RK4", "--step", 1e-3, "--dt", 1e-4), "--dt sets the reference"),
                         (("--torques", "zero", "--trajectory", "line"), "--trajectory sets the reference"),
                         (("--torques", "hold", "--cycle-time", 0.5), "--cycle-time sets the reference")):
        proc = run_pkm("simulate", robot, *args, cwd=tmp_path)
        assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and phrase in proc.stderr, proc.stderr
