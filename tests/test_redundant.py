"""Redundant actuation (issue 28.1; paper Sec. 5, 8.2): more actuators than task coordinates.

The forces solve ``J_IKᵀ u = φ_t`` (eq. 137–140) with the least ``uᵀWu`` plus a preload along the
null space of ``J_IKᵀ`` (:mod:`pkm.algorithms.distribution`). Checked here against what they were not
computed from: the task-space wrench of the limbs and the platform (the kernel's ``W̄_(l)``, ``P_pᵀφ_p``),
the optimality conditions, the forward dynamics (the motion comes back), the EOM terms assembled in
Python, the streamed path, a linear programme, the non-redundant variants' type-II maps, and the CLI.
(tests/test_redundant_reference.py: the 4-RPR's forces against a Newton–Euler reference written by hand.)
"""
from __future__ import annotations

import numpy as np
import pytest

import pkm
from conftest import ROBOTS
from pkm.algorithms.distribution import check_weights, distribute, min_peak, null_space
from pkm.sim.inputs import Table
from pkm.trajectory import from_spec

FILES = {"planar_4rpr": "planar_4rpr.toml", "delta_4rr2rrr": "delta_4rr2rrr.toml"}


@pytest.fixture(scope="module", params=sorted(FILES))
def case(request):
    robot = pkm.load(ROBOTS / FILES[request.param])
    spec = dict(robot.spec.trajectory)
    if request.param == "delta_4rr2rrr":   # the paper's motion at T = 1 s (as tests/test_simulate.py)
        spec.update(period=1.0, duration=1.0, dt=1e-3)
    else:
        spec.update(dt=1e-3)
    tr = from_spec(spec, robot.task.coordinate_names())
    return request.param, robot, tr, robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t)


def _wrench(res):
    """φ_t − W^EE of the limbs and the platform (eq. 140's right-hand side), not from the forces."""
    return res.limb_wrenches.sum(axis=1) + res.platform_wrench


def test_files_are_redundant_and_the_degree_is_reported(case, capsys):
    name, robot, _, _ = case
    assert robot.n_act == 4 and robot.task_dof == 3 and robot.redundancy == 1
    assert pkm.load(ROBOTS / "delta_3rr2rrr.toml").redundancy == 0
    from pkm.cli.main import main

    assert main(["info", str(ROBOTS / FILES[name])]) == 0
    assert "redundant actuation: 4 actuators for 3 task coordinates, degree of redundancy 1" in capsys.readouterr().out


@pytest.mark.parametrize("weights", [None, [1.0, 2.0, 3.0, 4.0], "spd"])
def test_forces_produce_the_task_wrench_and_are_least_in_the_w_metric(case, weights):
    """J_IKᵀu = φ_t to 1e-10 of its scale; u is W-orthogonal to the null space (the minimum of uᵀWu);
    the basis is exact (J_IKᵀN = 0), orthonormal and continuous along the samples."""
    _, robot, tr, res0 = case
    if weights == "spd":
        A = np.random.default_rng(1).normal(size=(4, 4))
        weights = A @ A.T + 4 * np.eye(4)
    res = res0 if weights is None else robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t, weights=weights)
    W = np.eye(4) if weights is None else check_weights(weights, 4)
    phi = _wrench(res)
    scale = np.abs(phi).max()
    assert np.abs(res.task_wrench - phi).max() <= 1e-10 * scale
    N = res.null_space
    assert N.shape == (len(tr.t), 4, 1)
    assert np.abs(np.einsum("sad,sar->sdr", res.J_IK, N)).max() <= 1e-14
    np.testing.assert_allclose(np.einsum("sar,sak->srk", N, N), np.ones((len(tr.t), 1, 1)), atol=1e-14)
    assert np.abs(np.einsum("sar,ab,sb->sr", N, W, res.tau)).max() <= 1e-10 * np.abs(W @ res.tau.T).max()
    assert np.abs(np.diff(N, axis=0)).max() < 0.05   # continuous: no sign flips between samples
    if weights is not None:   # another W gives other forces with the same wrench
        assert np.abs(res.tau - res0.tau).max() > 1e-3 * np.abs(res0.tau).max()


def test_minimum_norm_forces_beat_every_other_solution(case):
    """Brute force: u + N z for z on a grid never has a smaller norm than u (z = 0)."""
    _, robot, _, res = case
    for s in range(0, res.tau.shape[0], 97):
        u, n = res.tau[s], res.null_space[s, :, 0]
        norms = [np.linalg.norm(u + z * n) for z in np.linspace(-5, 5, 101) * max(1.0, np.abs(u).max())]
        assert np.linalg.norm(u) <= min(norms) + 1e-12


def test_preload_adds_internal_forces_that_move_nothing(case):
    """tau = u_W + N z; J_IKᵀ tau unchanged; the forward dynamics of the preloaded forces gives the
    same accelerations and reports N z as internal force."""
    _, robot, tr, res = case
    z = np.linspace(-20.0, 30.0, len(tr.t))[:, None]
    pre = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t, preload=z)
    np.testing.assert_allclose(pre.tau - res.tau, res.null_space[:, :, 0] * z, rtol=0, atol=1e-10)
    np.testing.assert_allclose(pre.task_wrench, res.task_wrench, rtol=0, atol=1e-10 * np.abs(res.task_wrench).max())
    s = slice(0, len(tr.t), 50)
    start = [res.joints[l.name][0] for l in robot.limbs]
    fd = robot.forward_dynamics(tr.x[s], tr.xd[s], pre.tau[s], start=start)
    assert np.abs(fd.xdd - tr.xdd[s]).max() <= 1e-9 * max(1.0, np.abs(tr.xdd).max())
    np.testing.assert_allclose(fd.internal, res.null_space[s, :, 0] * z[s], rtol=0, atol=1e-9)
    fd0 = robot.forward_dynamics(tr.x[s], tr.xd[s], res.tau[s], start=start)
    assert np.abs(fd0.internal).max() <= 1e-10 * np.abs(res.tau).max()
    # the holding forces u_0 (zero acceleration) are the least-norm ones: W-orthogonal to N
    assert np.abs(np.einsum("sa,sa->s", fd0.bias, res.null_space[s, :, 0])).max() <= 1e-9 * np.abs(fd0.bias).max()


def test_forward_dynamics_reproduces_the_motion(case):
    """The forces of the inverse dynamics (with a preload: it must not matter), tabulated every ms and
    simulated from the same state: the motion comes back to 1e-6 m (DOP853, rtol 1e-10, T = 1 s)."""
    name, robot, tr, res = case
    z = 15.0
    pre = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t, preload=[z])
    T = min(1.0, float(tr.t[-1]))
    sim = robot.simulate(Table(tr.t, pre.tau), (0.0, T), tr.x[0], tr.xd[0], method="DOP853", rtol=1e-10, atol=1e-12,
                         t_eval=tr.t[::10][tr.t[::10] <= T], start=[res.joints[l.name][0] for l in robot.limbs])
    k = len(sim.t)
    assert np.abs(sim.x - tr.x[::10][:k]).max() <= 1e-6
    assert sim.form == "auto" and len(sim.info["segments"]) == 1 and sim.info["segments"][0]["form"] == "task"
    np.testing.assert_allclose(sim.internal, z * res.null_space[::10][:k, :, 0], rtol=0, atol=1e-6 * z)
    assert np.abs(sim.energy_error).max() <= 1e-6 * max(1.0, np.abs(sim.work).max())


def test_eom_in_actuator_space(case):
    """Redundant EOM (manipulator.EOM): P_a u = M_a θ̈_a + C_a θ̇_a + Q_a^grav for the inverse
    dynamics' u, with P_a the projector (symmetric, idempotent, rank δ_p) that kills the null space."""
    _, robot, tr, res = case
    for s in (0, len(tr.t) // 3, 2 * len(tr.t) // 3):
        e = robot.eom(tr.x[s], robot.task_velocity(tr.x[s], tr.xd[s]))
        P = e.P_a
        np.testing.assert_allclose(P, P.T, atol=1e-14)
        np.testing.assert_allclose(P @ P, P, atol=1e-13)
        assert np.linalg.matrix_rank(P, tol=1e-10) == 3 and np.linalg.matrix_rank(e.M_a, tol=1e-10 * np.abs(e.M_a).max()) == 3
        assert np.abs(P @ res.null_space[s]).max() <= 1e-11   # J_IK of two IK solutions, each to 1e-12
        lhs = e.M_a @ res.qdd_act[s] + e.C_a_qd_a + e.Q_a_grav
        np.testing.assert_allclose(lhs, P @ res.tau[s], rtol=0, atol=1e-9 * max(1.0, np.abs(res.tau[s]).max()))


def test_streamed_forces_equal_the_full_result(case):
    """torques_only (blocks of pkm.kernels.stream.STREAM samples, the basis continued across blocks)
    equals the full call, with weights and a preload."""
    from pkm.kernels import stream

    _, robot, tr, _ = case
    old = stream.STREAM
    stream.STREAM = 300   # several blocks
    try:
        kw = dict(weights=[1.0, 0.5, 2.0, 1.0], preload=[7.0], t=tr.t)
        full = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, **kw)
        only = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, torques_only=True, **kw)
    finally:
        stream.STREAM = old
    np.testing.assert_allclose(only, full.tau, rtol=0, atol=1e-12 * np.abs(full.tau).max())


def test_the_reference_path_agrees(case):
    _, robot, tr, res = case
    from pkm.algorithms.manipulator import inverse_dynamics as reference

    s = slice(0, 40, 4)
    W = check_weights([2.0, 1.0, 1.0, 3.0], 4)
    ref = reference(robot, tr.x[s], tr.xd[s], tr.xdd[s], weights=W, preload=np.full((10, 1), 3.0))
    api = robot.inverse_dynamics(tr.x[s], tr.xd[s], tr.xdd[s], weights=W, preload=[3.0])
    np.testing.assert_allclose(ref.tau, api.tau, rtol=0, atol=1e-10 * np.abs(api.tau).max())


def test_least_peak_distribution_is_a_linear_programme_optimum():
    """min_peak against a fine scan of z: no z has a smaller peak; the task wrench is unchanged."""
    rng = np.random.default_rng(3)
    J = rng.normal(size=(20, 5, 3))
    phi = rng.normal(size=(20, 3))
    u, N = distribute(J, phi)
    assert N.shape == (20, 5, 2)
    v = min_peak(u, N)
    np.testing.assert_allclose(np.einsum("sad,sa->sd", J, v), phi, atol=1e-9)
    grid = np.linspace(-4, 4, 161)
    for s in range(20):
        Z = np.stack(np.meshgrid(grid, grid), -1).reshape(-1, 2)
        scan = np.abs(u[s] + Z @ N[s].T).max(axis=1).min()
        assert np.abs(v[s]).max() <= scan + 1e-9
        assert np.abs(v[s]).max() <= np.abs(u[s]).max() + 1e-12


def test_null_space_basis_is_continuous_for_several_directions():
    """r = 2 (Procrustes alignment): a smoothly turning J gives a smoothly turning basis."""
    t = np.linspace(0, 1, 200)
    J = np.stack([np.array([[1, 0], [0, 1], [np.cos(a), np.sin(a)], [np.sin(a), 1.0]]) for a in 3 * t])
    N, _ = null_space(J)
    assert np.abs(np.einsum("sad,sar->sdr", J, N)).max() < 1e-14
    assert np.abs(np.diff(N, axis=0)).max() < 0.05
    N2, _ = null_space(J[100:], previous=N[99])   # continued from the sample before: the same basis
    np.testing.assert_allclose(N2, N[100:], atol=1e-12)


def test_redundancy_removes_the_type_II_curve_of_the_non_redundant_robot():
    """The 3-RPR is singular where its three leg lines meet (e.g. x = y = 0, rz = −60°); the 4-RPR's
    mirrored fourth leg misses that point: on the same slice its cond(J_IK, unit rows) stays bounded."""
    maps = {}
    for f in ("planar_3rpr.toml", "planar_4rpr.toml"):
        maps[f] = pkm.workspace(pkm.load(ROBOTS / f), {"x": (-0.3, 0.3), "rz": (-1.5, 1.5)}, resolution=61,
                                fixed={"y": 0.0})
        assert maps[f].reachable.all()
    c3, c4 = maps["planar_3rpr.toml"].cond_FK, maps["planar_4rpr.toml"].cond_FK
    assert c3.max() > 5e3 and c4.max() < 2e2
    near = c3 > 1e3   # the 3-RPR's singular band: 61 of 3721 points (measured)
    assert near.sum() >= 20 and c4[near].max() < 1e2 and np.median(c4[near]) < 30.0   # measured 67, 19
    # exactly at the 3-RPR's singular pose: rank 2 against rank 3
    at = [-np.pi / 3, 0.0, 0.0]
    for f, rank in (("planar_3rpr.toml", 2), ("planar_4rpr.toml", 3)):
        J = pkm.load(ROBOTS / f).inverse_kinematics(at, singularity_threshold=1e300).J_IK[0]
        assert np.linalg.matrix_rank(J, tol=1e-9 * np.abs(J).max()) == rank, f


def test_inverse_dynamics_at_the_3rpr_singularity(tmp_path):
    """At the 3-RPR's type-II pose the 3-RPR's forces blow up (SingularityError) and the 4-RPR's stay
    bounded, with the motion's wrench produced exactly."""
    x = np.array([[-np.pi / 3, 0.0, 0.0]])
    xd, xdd = np.array([[0.5, 0.1, -0.1]]), np.array([[1.0, 0.5, 0.5]])
    with pytest.raises(pkm.SingularityError):
        pkm.load(ROBOTS / "planar_3rpr.toml").inverse_dynamics(x, xd, xdd)
    res = pkm.load(ROBOTS / "planar_4rpr.toml").inverse_dynamics(x, xd, xdd)
    assert np.all(np.isfinite(res.tau)) and np.abs(res.tau).max() < 100.0
    np.testing.assert_allclose(res.task_wrench, _wrench(res), atol=1e-12 * np.abs(_wrench(res)).max())


def test_bad_arguments_are_one_line_errors():
    robot = pkm.load(ROBOTS / "planar_4rpr.toml")
    x = robot.x_ref
    for kw, phrase in ((dict(weights=[1, 2, 3]), "4 positive numbers"), (dict(weights=[1, -2, 3, 4]), "positive"),
                       (dict(weights=np.ones((4, 4))), "positive definite"),
                       (dict(weights=np.triu(np.ones((4, 4)))), "symmetric"),
                       (dict(preload=[1.0, 2.0]), "preload must be 1 finite number"),
                       (dict(preload=[np.nan]), "preload must be 1 finite number")):
        with pytest.raises(pkm.InputError, match=phrase) as info:
            robot.inverse_dynamics(x, 0 * x, 0 * x, **kw)
        assert "\n" not in str(info.value)
    delta = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    with pytest.raises(pkm.InputError, match="preload needs redundant actuation"):
        delta.inverse_dynamics(delta.x_ref, [0, 0, 0], [0, 0, 0], preload=[1.0])
    for form in ("actuator", "joint"):
        with pytest.raises(pkm.InputError, match="redundant actuation"):
            robot.simulate("zero", (0, 0.01), form=form)


def test_absolute_drives_refuse_redundant_actuation():
    """The absolute layer's drive constraints over-determine a redundant robot: one line, naming it."""
    from pkm.absolute.loader import load_spec

    robot = pkm.load(ROBOTS / "planar_4rpr.toml")
    model = load_spec(robot.spec)
    law = lambda t: (0.0, 0.0, 0.0)   # noqa: E731
    with pytest.raises(pkm.InputError, match="4 drives for 3 degrees of freedom: redundant actuation"):
        model.driven([law] * 4)


def test_cli_csv_null_space_columns_and_options(tmp_path, capsys):
    from pkm.cli.main import main
    from pkm.sim.inputs import read_table

    path = ROBOTS / "planar_4rpr.toml"
    out = tmp_path / "t.csv"
    png = tmp_path / "t.png"
    assert main(["inverse-dynamics", str(path), "--out", str(out), "--preload", "5", "--plot", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    said = capsys.readouterr().out
    assert "Redundant actuation (4 actuators for 3 task coordinates, degree 1)" in said and "plus the preload" in said
    header = out.read_text().splitlines()[0].split(",")
    names = pkm.load(path).actuator_names
    assert header[-4:] == [f"null1_{n} [1]" for n in names]
    data = np.loadtxt(out, delimiter=",", skiprows=1)
    robot = pkm.load(path)
    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t, preload=[5.0])
    np.testing.assert_allclose(data[:, -8:-4], res.tau, atol=1e-12)
    np.testing.assert_allclose(data[:, -4:], res.null_space[:, :, 0], atol=1e-15)
    # the CSV replays in simulate (its tau columns are read by name)
    table = read_table(out, names)
    np.testing.assert_allclose(table(tr.t[3]), res.tau[3], atol=1e-12)
    peak = tmp_path / "p.csv"
    assert main(["inverse-dynamics", str(path), "--out", str(peak), "--distribution", "min-peak"]) == 0
    p = np.loadtxt(peak, delimiter=",", skiprows=1)[:, -8:-4]
    assert np.abs(p).max(axis=1).max() <= np.abs(res.tau - 5.0 * res.null_space[:, :, 0]).max(axis=1).max() + 1e-9
    capsys.readouterr()
    for argv, phrase in ((["--weights", "1", "2"], "weights must be 4 positive numbers"),
                         (["--distribution", "min-peak", "--preload", "1"], "drop --weights and --preload")):
        assert main(["inverse-dynamics", str(path), *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and phrase in err, err
    assert main(["inverse-dynamics", str(ROBOTS / "planar_3rpr.toml"), "--preload", "1"]) == 2
    assert "preload needs redundant actuation" in capsys.readouterr().err


def test_the_example_runs(tmp_path, capsys):
    """examples/redundant_actuation.py (the figure docs/redundant_workspace.png) at a coarse grid."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("redundant_example", ROBOTS.parent / "examples" / "redundant_actuation.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path / "fig.png"
    assert mod.main(["--resolution", "21", "--out", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"
    said = capsys.readouterr().out
    assert "planar_3rpr.toml: largest cond" in said and "least peak" in said


def test_forward_kinematics_of_inconsistent_actuator_coordinates_says_why(capsys):
    """4 actuator coordinates for 3 DOF over-determine the pose: consistent ones (from the IK) assemble,
    others are a one-line error that says they must be consistent."""
    from pkm.cli.main import main

    path = str(ROBOTS / "planar_4rpr.toml")
    q = pkm.load(path).inverse_kinematics([0.05, 0.01, -0.02]).q_act[0]
    assert main(["fk", path, "--q", *(repr(float(v)) for v in q)]) == 0
    assert "rz = 0.05" in capsys.readouterr().out
    assert main(["fk", path, "--q", "0.01", "0", "0", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "actuator coordinates must be consistent" in err, err


def test_cli_eom_prints_the_projector(capsys):
    import json

    from pkm.cli.main import main

    path = str(ROBOTS / "planar_4rpr.toml")
    assert main(["eom", path, "--at", "0.05", "0.01", "-0.02"]) == 0
    out = capsys.readouterr().out
    assert "J_FK = J_IK⁺ (redundant actuation)" in out and "P_a      projector" in out
    assert main(["eom", path, "--at", "0.05", "0.01", "-0.02", "--json"]) == 0
    P = np.array(json.loads(capsys.readouterr().out)["P_a"])
    np.testing.assert_allclose(P @ P, P, atol=1e-13)
    assert main(["eom", str(ROBOTS / "planar_3rpr.toml"), "--at", "0.05", "0.01", "-0.02"]) == 0
    assert "P_a" not in capsys.readouterr().out
