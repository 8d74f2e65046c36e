"""Identification (issue 29, item 4): the regressor Y π = τ on every robot file, the base parameters
against an independent rank count, the round trip true file → data → identified file, the CLI."""
from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import pkm
from pkm.cli.main import main
from pkm.errors import BranchWarning
from pkm.identification.base import random_states, robot_base_parameters
from pkm.identification.estimate import identify, read_data
from pkm.identification.excitation import excitation, write_trajectory_csv
from pkm.identification.parameters import body_params
from pkm.identification.writer import write_robot

ROBOTS = sorted((Path(__file__).resolve().parents[1] / "robots").glob("*.toml"))
DELTA = Path(__file__).resolve().parents[1] / "robots" / "delta_3rr2rrr.toml"


@pytest.mark.parametrize("path", ROBOTS, ids=lambda p: p.stem)
def test_regressor_times_parameters_equals_inverse_dynamics(path):
    robot = pkm.load(path)
    X, XD, XDD = random_states(robot, 6, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BranchWarning)
        names, pi = robot.dynamic_parameters()
        Y = robot.regressor(X, XD, XDD)
        tau = robot.inverse_dynamics(X, XD, XDD).tau
    assert Y.shape == (6, robot.n_act, len(names)) and len(names) == len(pi) == len(set(names))
    assert np.abs(Y @ pi - tau).max() <= 1e-10 * np.abs(tau).max()


def test_redundant_regressor_with_weights():
    robot = pkm.load(ROBOTS[0].parent / "planar_4rpr.toml")
    X, XD, XDD = random_states(robot, 5, seed=4)
    w = [1.0, 2.0, 0.5, 3.0]
    _, pi = robot.dynamic_parameters()
    tau = robot.inverse_dynamics(X, XD, XDD, weights=w).tau
    assert np.abs(robot.regressor(X, XD, XDD, weights=w) @ pi - tau).max() <= 1e-10 * np.abs(tau).max()


def _spec_with(spec, changes):
    """``spec`` with bodies changed: ``changes[name] = (mass factor, com shift, inertia factor)``."""
    def ch(b, key):
        if key not in changes:
            return b
        f, dc, g = changes[key]
        return replace(b, mass=b.mass * f, com=b.com + dc, inertia=b.inertia * g)

    limb = replace(spec.limb, bodies=tuple(ch(b, "limb." + b.name) for b in spec.limb.bodies))
    return replace(spec, bodies=tuple(ch(b, b.name) for b in spec.bodies), limb=limb)


def test_delta_base_count_equals_rank_of_a_numerical_jacobian():
    """Independent count: the torques' Jacobian with respect to each body's mass, centre of mass and
    inertia entries (central differences of robot files changed body by body, not the regressor)."""
    robot = pkm.load(DELTA)
    X, XD, XDD = random_states(robot, 30, seed=7)
    bodies = ["platform"] + ["limb." + b.name for b in robot.spec.limb.bodies]

    def tau(changes):
        r = pkm.Robot(_spec_with(robot.spec, changes))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BranchWarning)
            return r.inverse_dynamics(X, XD, XDD).tau.ravel()

    cols = []
    E = [np.zeros(3)] * 3
    for body in bodies:
        for k in range(10):   # mass, 3 COM coordinates, 6 inertia entries (symmetric pairs)
            def change(h, k=k):
                if k == 0:
                    return (1 + h, np.zeros(3), 1.0)
                if k < 4:
                    return (1.0, 0.01 * h * np.eye(3)[k - 1], 1.0)
                return (1.0, np.zeros(3), 1.0)
            if k < 4:
                cols.append((tau({body: change(1e-4)}) - tau({body: change(-1e-4)})) / 2e-4)
            else:
                i, j = [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)][k - 4]
                b0 = next(b for b in robot.spec.expanded()[0] + robot.spec.limb.bodies
                          if b.name == body.removeprefix("limb."))
                D = np.zeros((3, 3))
                D[i, j] = D[j, i] = 1e-3 * max(np.abs(b0.inertia).max(), 1e-9)
                cols.append((tau_inertia(robot, X, XD, XDD, body, D) - tau_inertia(robot, X, XD, XDD, body, -D)) / 2)
    J = np.column_stack(cols)
    J = J / np.maximum(np.linalg.norm(J, axis=0), 1e-300) * (np.linalg.norm(J, axis=0) > 1e-9 * np.abs(J).max())
    sv = np.linalg.svd(J, compute_uv=False)
    rank = int(np.sum(sv > 1e-6 * sv[0]))
    assert sv[rank - 1] > 1e3 * (sv[rank] if rank < len(sv) else 0.0)   # a clear gap
    assert robot_base_parameters(robot).rank == rank


def tau_inertia(robot, X, XD, XDD, body, D):
    spec = robot.spec
    name = body.removeprefix("limb.")
    if body.startswith("limb."):
        bodies = tuple(replace(b, inertia=b.inertia + D) if b.name == name else b for b in spec.limb.bodies)
        spec = replace(spec, limb=replace(spec.limb, bodies=bodies))
    else:
        spec = replace(spec, bodies=tuple(replace(b, inertia=b.inertia + D) if b.name == name else b for b in spec.bodies))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BranchWarning)
        return pkm.Robot(spec).inverse_dynamics(X, XD, XDD).tau.ravel()


# ---------------------------------------------------------------------- round trip
@pytest.fixture(scope="module")
def trip(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ident")
    robot = pkm.load(DELTA)
    names, pi0 = robot.dynamic_parameters()
    rng = np.random.default_rng(1)
    bodies = {b.name: b for b in robot.spec.bodies} | {"limb." + b.name: b for b in robot.spec.limb.bodies}
    true = []
    for g in range(len(pi0) // 10):
        b = bodies[names[10 * g][:-2]]
        f = 1 + rng.uniform(0.05, 0.3, 2) * rng.choice([-1, 1], 2)   # masses and inertias changed by 5-30 %
        true.append(body_params(replace(b, mass=b.mass * f[0], inertia=b.inertia * f[1])))
    true = np.concatenate(true)
    write_robot(DELTA, tmp / "true.toml", names, true)
    base = robot_base_parameters(robot)
    exc = excitation(robot, base, period=2.0, candidates=6, refine=20)
    files = {}
    for key, periods in (("fit", 2), ("check", 1)):
        t, x, xd, xdd = exc.sample(0.005, periods)
        if key == "check":   # another motion: the series played backwards, shifted
            x, xd, xdd = x[::-1], -xd[::-1], xdd[::-1]
        write_trajectory_csv(tmp / f"{key}.csv", robot.task.coordinate_names(), t, x, xd, xdd)
        assert main(["inverse-dynamics", str(tmp / "true.toml"), "--trajectory", "file", "--file", str(tmp / f"{key}.csv"),
                     "--out", str(tmp / f"{key}_tau.csv")]) == 0
        files[key] = (xdd, tmp / f"{key}_tau.csv")
    return dict(tmp=tmp, robot=robot, base=base, true=true, files=files, exc=exc)


def _with(path, dst, xdd, names, sigma=0.0, seed=0):
    """A data file: the CSV of pkm inverse-dynamics with accelerations added and noise on the torques."""
    lines = Path(path).read_text().splitlines()
    head = lines[0].split(",")
    A = np.array([[float(v) for v in ln.split(",")] for ln in lines[1:]])
    rng = np.random.default_rng(seed)
    for k, h in enumerate(head):
        if h.startswith("tau_"):
            A[:, k] += sigma * rng.normal(size=len(A))
    A = np.column_stack([A, xdd])
    Path(dst).write_text(",".join(head + [n + "dd" for n in names]) + "\n"
                         + "\n".join(",".join(map(repr, r)) for r in A.tolist()) + "\n")
    return dst


def test_round_trip_noise_free(trip):
    r, base = trip["robot"], trip["base"]
    xdd, path = trip["files"]["fit"]
    data = read_data(r, _with(path, trip["tmp"] / "clean.csv", xdd, r.task.coordinate_names()))
    est, _, _ = identify(r, [data], base)
    truth = base.values(trip["true"])
    assert np.abs(est.beta - truth).max() <= 1e-8 * np.abs(truth).max()


def test_round_trip_with_noise_and_identified_file(trip, capsys):
    r, base, tmp = trip["robot"], trip["base"], trip["tmp"]
    names = r.task.coordinate_names()
    xdd, path = trip["files"]["fit"]
    sigma = 0.05   # N·m, peak torques ~15 N·m
    noisy = _with(path, tmp / "noisy.csv", xdd, names, sigma, seed=5)
    est, _, _ = identify(r, [read_data(r, noisy)], base)
    truth = base.values(trip["true"])
    assert np.all(np.abs(est.beta - truth) <= 3 * est.std)
    assert np.allclose(est.sigma, sigma, rtol=0.15)
    xdd_c, path_c = trip["files"]["check"]
    check = _with(path_c, tmp / "check_noisy.csv", xdd_c, names, sigma, seed=6)
    out = tmp / "identified.toml"
    assert main(["identify", str(DELTA), "--data", str(noisy), "--out", str(out), "--consistent",
                 "--validate", str(check)]) == 0
    text = capsys.readouterr().out
    assert "± " in text and f"validation {check} (the parameters written to {out}): residual RMS" in text
    ident = pkm.load(out)   # usable by every command: its torques on the validation motion
    d = read_data(r, check)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BranchWarning)
        tau = ident.inverse_dynamics(d.x, d.xd, d.xdd).tau
    rms = np.sqrt(np.mean((tau - d.tau) ** 2, axis=0))
    assert np.all(rms <= 1.3 * sigma), rms
    _assert_validated_file(text, out, d, tau)


def _assert_validated_file(text, out, d, tau):
    """The validation printed is that of the file written: its own torques ``tau`` on the data ``d`` (the filter's
    ends left out, as validate leaves them), to the 3 digits printed."""
    from pkm.identification.estimate import WINDOW

    line = next(l for l in text.splitlines() if "validation" in l)
    assert f"(the parameters written to {out})" in line, line
    printed = [float(v.split()[-1]) for v in line.split("residual RMS ")[1].split(" (noise")[0].split(", ")]
    s = slice(WINDOW, len(d.t) - WINDOW)
    np.testing.assert_allclose(printed, np.sqrt(np.mean((tau[s] - d.tau[s]) ** 2, axis=0)), rtol=5e-3)


def test_validate_judges_the_projected_parameters_written(trip, capsys, monkeypatch):
    """With --consistent the file written holds the projection, not the estimate: --validate judged the estimate
    and reported its residual for a file that behaves otherwise. A projection forced far from the estimate (the
    nominal parameters, as if the estimate were inconsistent) shows which one is validated."""
    import pkm.identification.writer as writer

    r, tmp = trip["robot"], trip["tmp"]
    names = r.task.coordinate_names()
    xdd, path = trip["files"]["fit"]
    xdd_c, path_c = trip["files"]["check"]
    noisy = _with(path, tmp / "noisy_p.csv", xdd, names, 0.05, seed=7)
    check = _with(path_c, tmp / "check_p.csv", xdd_c, names, 0.05, seed=8)
    monkeypatch.setattr(writer, "problems", lambda pi, names: ["0: forced for the test"])
    monkeypatch.setattr(writer, "consistent_standard", lambda base, beta, cov, pi0, start=None: (np.array(pi0), 9.9))
    out = tmp / "projected.toml"
    assert main(["identify", str(DELTA), "--data", str(noisy), "--out", str(out), "--consistent",
                 "--validate", str(check)]) == 0
    text = capsys.readouterr().out
    d = read_data(r, check)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BranchWarning)
        tau = pkm.load(out).inverse_dynamics(d.x, d.xd, d.xdd).tau
    assert np.sqrt(np.mean((tau - d.tau) ** 2)) > 3 * 0.05    # the nominal model: far from the data's
    _assert_validated_file(text, out, d, tau)
    assert main(["info", str(out)]) == 0


def test_filtered_rates_from_pkm_output(trip):
    """pkm's own --out CSV (no accelerations): the zero-phase filter's accelerations, stated."""
    r, base = trip["robot"], trip["base"]
    data = read_data(r, trip["files"]["fit"][1])
    assert "Savitzky-Golay" in data.derived
    est, _, _ = identify(r, [data], base)
    truth = base.values(trip["true"])
    assert np.abs(est.beta - truth).max() <= 1e-2 * np.abs(truth).max()


def test_info_base_parameters(capsys):
    assert main(["info", str(DELTA), "--base-parameters"]) == 0
    out = capsys.readouterr().out
    r = robot_base_parameters(pkm.load(DELTA)).rank
    assert f"base parameters: {r} of 60" in out and f"b{r:<4}=" in out and f"b{r + 1:<4}=" not in out


def test_excite_cli(tmp_path, capsys):
    out = tmp_path / "exc.csv"
    assert main(["identify", str(ROBOTS[0].parent / "planar_3rpr.toml"), "--excite", str(out), "--period", "1"]) == 0
    from pkm.trajectory.files import read_csv

    tr = read_csv(out)
    assert tr.x.shape[1] == 3 and "cond(Y_base)" in capsys.readouterr().out


@pytest.mark.parametrize("case", ["missing", "uneven", "nodata", "nan", "dt", "ragged", "period"])
def test_bad_inputs_one_line(case, tmp_path, capsys):
    p = tmp_path / "d.csv"
    robot = ROBOTS[0].parent / "planar_3rpr.toml"
    argv = ["identify", str(robot), "--data", str(p)]
    if case == "missing":
        p.write_text("t,x,y\n" + "\n".join(f"{i},0,0" for i in range(30)) + "\n")
    elif case == "uneven":
        r = pkm.load(robot)
        cols = ["t", *r.task.coordinate_names(), *(f"q_{a}" for a in r.actuator_names), *(f"tau_{a}" for a in r.actuator_names)]
        p.write_text(",".join(cols) + "\n" + "\n".join(",".join([str(i * i)] + ["0"] * (len(cols) - 1)) for i in range(30)) + "\n")
    elif case == "nan":
        r = pkm.load(robot)
        cols = ["t", *r.task.coordinate_names(), *(f"q_{a}" for a in r.actuator_names), *(f"tau_{a}" for a in r.actuator_names)]
        p.write_text(",".join(cols) + "\n" + "\n".join(",".join([str(i)] + ["nan"] * (len(cols) - 1)) for i in range(30)) + "\n")
    elif case == "ragged":
        r = pkm.load(robot)
        cols = ["t", *r.task.coordinate_names(), *(f"q_{a}" for a in r.actuator_names), *(f"tau_{a}" for a in r.actuator_names)]
        p.write_text(",".join(cols) + "\n" + "\n".join(",".join([str(i)] + ["0"] * (len(cols) - 1 - i % 2)) for i in range(30)) + "\n")
    elif case == "period":
        argv = ["identify", str(robot), "--excite", str(tmp_path / "e.csv"), "--period", "nan"]
    elif case == "nodata":
        argv = ["identify", str(robot)]
    else:
        argv = ["identify", str(robot), "--excite", str(tmp_path / "e.csv"), "--dt", "0"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pkm: error:")


def test_redundant_identification_ignores_internal_forces():
    """4-RPR with a preload in the measured forces: the fit on the task wrench J_IKᵀτ recovers the
    true base parameters (a fit of the forces themselves cannot: the preload is no parameter)."""
    from pkm.identification.estimate import Data

    robot = pkm.load(ROBOTS[0].parent / "planar_4rpr.toml")
    true = pkm.Robot(_spec_with(robot.spec, {"platform": (1.2, np.array([0.01, -0.02, 0.0]), 0.8),
                                             "limb.rod": (0.9, np.zeros(3), 1.25)}))
    base = robot_base_parameters(robot)
    exc = excitation(robot, base, period=1.0, candidates=4, refine=0)
    t, x, xd, xdd = exc.sample(0.01, 2)
    res = true.inverse_dynamics(x, xd, xdd, t=t, preload=np.full((len(t), 1), 3.0))
    data = Data(t, x, xd, xdd, res.q_act, res.tau, "")
    est, _, _ = identify(robot, [data], base)
    truth = base.values(true.dynamic_parameters()[1])
    assert np.abs(est.beta - truth).max() <= 1e-8 * np.abs(truth).max()


@pytest.mark.parametrize("path", ROBOTS, ids=lambda p: p.stem)
def test_written_robot_file_has_the_parameters(path, tmp_path):
    """write_robot on every robot file: the written file loads with the given standard parameters
    (here the file's own, scaled by 1.1) and the same kinematics."""
    robot = pkm.load(path)
    names, pi = robot.dynamic_parameters()
    write_robot(path, tmp_path / "w.toml", names, 1.1 * pi)
    again = pkm.load(tmp_path / "w.toml")
    assert again.dynamic_parameters()[0] == names
    assert np.allclose(again.dynamic_parameters()[1], 1.1 * pi, rtol=1e-12, atol=1e-12 * np.abs(pi).max())
    x = robot.x_ref
    assert np.allclose(again.inverse_kinematics(x).q_act, robot.inverse_kinematics(x).q_act, atol=1e-12)


def test_extra_terms_extension_point(monkeypatch):
    """Drive parameters hook in as extra columns from the actuators' rates (here a viscous friction
    per actuator): appended to Y, names and values."""
    import importlib

    R = importlib.import_module("pkm.identification.regressor")

    def viscous(robot):
        names = [f"{a}.viscous" for a in robot.actuator_names]
        return names, np.full(robot.n_act, 0.1), lambda q, qd, qdd: qd[:, :, None] * np.eye(robot.n_act)[None]

    monkeypatch.setattr(R, "EXTRA_TERMS", [viscous])
    robot = pkm.load(ROBOTS[0].parent / "planar_3rpr.toml")
    X, XD, XDD = random_states(robot, 4, seed=1)
    reg = R.regression(robot, X, XD, XDD)
    assert reg.Y.shape[2] == len(reg.names) == len(reg.values) == 30 + 3 and reg.names[-1].endswith(".viscous")
    assert np.allclose(reg.Y @ reg.values, reg.tau + 0.1 * reg.qd_act, rtol=0, atol=1e-10 * np.abs(reg.tau).max())


def test_regressor_columns_subset():
    robot = pkm.load(DELTA)
    X, XD, XDD = random_states(robot, 4, seed=2)
    full = robot.regressor(X, XD, XDD)
    cols = [3, 0, 17, 59, 12]
    part = robot.regressor(X, XD, XDD, columns=cols)
    assert np.allclose(part, full[:, :, cols], rtol=0, atol=1e-12 * np.abs(full).max())
    with pytest.raises(pkm.InputError):
        robot.regressor(X, XD, XDD, columns=[60])


def test_reference_path_regressor():
    """A task space that is not twist-closed (tilt-heave) runs the reference path: Y π = τ there; and
    the reference path's columns equal the kernel's on a Delta and on the mirrored, redundant 4-RPR
    (two formulations: the tree RNEA per body vs the packed joint-frame kernel)."""
    from pkm.identification.parameters import standard
    from pkm.identification.reference import reference_columns

    here = Path(__file__).resolve().parent
    robot = pkm.load(here / "robots_ok" / "tilt_heave_3ups.toml")
    X, XD, XDD = random_states(robot, 4, seed=3)
    _, pi = robot.dynamic_parameters()
    tau = robot.inverse_dynamics(X, XD, XDD).tau
    assert np.abs(robot.regressor(X, XD, XDD) @ pi - tau).max() <= 1e-10 * np.abs(tau).max()
    for path in (DELTA, ROBOTS[0].parent / "planar_4rpr.toml"):
        robot = pkm.load(path)
        X, XD, XDD = random_states(robot, 3, seed=5)
        Y = robot.regressor(X, XD, XDD)
        Yr, _ = reference_columns(robot, standard(robot), X, XD, XDD)
        assert np.abs(Yr - Y).max() <= 1e-10 * np.abs(Y).max()
