"""`pkm.sweep`: design/trajectory sweeps of peak and RMS actuator torques, serial, on local
processes and on a Dask LocalCluster; CSV, plot and the `sweep` subcommand."""

from __future__ import annotations

import argparse
import csv
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pkm
from pkm import sweep as sweep_mod
from pkm.cli.sweep import add_parser, parse_values
from pkm.sweep import SweepResult, sweep
from pkm.sweep.points import apply_masses
from pkm.trajectory import pick_place

ROOT = Path(__file__).resolve().parents[1]
DELTA = ROOT / "robots" / "delta_3rr2rrr.toml"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
#: A short pick-and-place cycle (51 samples) around each design's default centre [0, 0, -h].
PP = {"type": "pick-place", "cycle_time": 0.5, "dt": 0.005}   # 100 samples a cycle: resolved (Trajectory.resolution)
GRID = {"a": [240, 260], "c": [950, 1000]}
ACTS = ["limb1/1", "limb2/1", "limb3/1"]


@pytest.fixture(scope="module")
def serial():
    return sweep(DELTA, GRID, [PP], executor="serial", progress=False)


def direct(parameters, masses=None, lift=0.025, travel=0.305, cycle_time=0.5, dt=0.005):
    """Peak and RMS torques computed without pkm.sweep."""
    robot = pkm.load(DELTA, parameters=parameters)
    if masses:
        robot = pkm.Robot(apply_masses(robot.spec, masses))
    centre = robot.spec.trajectory["center"]     # [0, 0, -h] of this design
    tr = pick_place(centre, lift, travel, cycle_time, dt)
    tau = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t).tau  # as the sweep computes it
    return np.abs(tau).max(axis=0), np.sqrt(np.mean(tau ** 2, axis=0))


def assert_same(a: SweepResult, b: SweepResult):
    assert a.columns() == b.columns()
    assert [r["status"] for r in a.rows] == [r["status"] for r in b.rows]
    for kind in ("peak", "rms"):
        np.testing.assert_array_equal(a.as_array(kind), b.as_array(kind))   # bit for bit
    assert a.rows == b.rows or all(   # NaN != NaN: compare failed rows by message
        ra == rb or ra["message"] == rb["message"] for ra, rb in zip(a.rows, b.rows))


# ---------------------------------------------------------------------- the computation
def test_serial_equals_direct_computation(serial):
    assert serial.shape == (2, 2, 1)
    assert serial.parameter_names == ["a", "c"]
    assert serial.actuator_names == ACTS and serial.actuator_units == ["N·m"] * 3
    assert serial.n_ok == 4 and serial.n_failed == 0
    # grid order: a slowest, then c, then the trajectory
    assert [(r["a"], r["c"]) for r in serial.rows] == [(240, 950), (240, 1000), (260, 950), (260, 1000)]
    peak, rms = serial.as_array("peak"), serial.as_array("rms")
    for i, a in enumerate(GRID["a"]):
        for j, c in enumerate(GRID["c"]):
            p_ref, r_ref = direct({"a": a, "c": c})
            np.testing.assert_allclose(peak[i, j, 0], p_ref, rtol=0, atol=1e-12)
            np.testing.assert_allclose(rms[i, j, 0], r_ref, rtol=0, atol=1e-12)
            row = serial.rows[2 * i + j]
            assert [row[f"peak_{n}"] for n in ACTS] == pytest.approx(p_ref, abs=1e-12)
    # the design matters: every point differs from every other
    flat = peak.reshape(4, 3)
    assert len({tuple(r) for r in flat.round(9)}) == 4
    assert np.all(peak > 1.0) and np.all(rms > 0.5) and np.all(rms < peak)


def test_default_trajectory_and_trajectory_axis():
    """None = the robot file's trajectory (the paper's 10 s motion); trajectories are the last axis."""
    res = sweep(DELTA, {"a": [250]}, [dict(PP, label="fast"), None], executor="serial", progress=False)
    assert res.shape == (1, 2) and res.trajectory_labels == ["fast", "default"]
    robot = pkm.load(DELTA, parameters={"a": 250})
    from pkm.trajectory import from_spec

    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    import numba

    threads = numba.get_num_threads()
    numba.set_num_threads(1)          # as in the sweep (1001 samples would otherwise run in chunks)
    try:
        tau = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t).tau  # as the sweep computes it
    finally:
        numba.set_num_threads(threads)
    np.testing.assert_allclose(res.as_array("peak")[0, 1], np.abs(tau).max(axis=0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.as_array("rms")[0, 1], np.sqrt(np.mean(tau ** 2, axis=0)), rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.as_array("peak")[0, 0], direct({"a": 250})[0], rtol=0, atol=1e-12)


def test_pkm_sweep_is_callable():
    """`pkm.sweep(...)` runs the sweep although pkm.sweep is also the module."""
    assert callable(pkm.sweep) and pkm.sweep.sweep is sweep
    res = pkm.sweep(DELTA, {"a": [240]}, [PP], executor="serial", progress=False)
    assert isinstance(res, SweepResult) and res.n_ok == 1


def test_cycle_times_only():
    res = sweep(DELTA, None, [dict(PP, cycle_time=t) for t in (0.4, 0.5)], executor="serial", progress=False)
    assert res.shape == (2,) and res.parameter_names == []
    assert res.trajectory_labels == ["pick-place cycle_time=0.4", "pick-place cycle_time=0.5"]
    peak = res.as_array("peak")
    np.testing.assert_allclose(peak[0], direct({}, cycle_time=0.4)[0], rtol=0, atol=1e-12)
    assert peak[0].max() > peak[1].max()          # faster cycle, larger torques


def test_mass_override():
    spec = pkm.load(DELTA).spec
    m0 = spec.body("platform").mass
    res = sweep(DELTA, {"mass:platform": [m0, 2 * m0], "mass:arm": [0.3]}, [PP], executor="serial",
                progress=False)
    assert res.n_ok == 2 and res.shape == (2, 1, 1)
    ref = sweep(DELTA, {"mass:arm": [0.3]}, [PP], executor="serial", progress=False)
    np.testing.assert_array_equal(res.as_array("peak")[0, 0, 0], ref.as_array("peak")[0, 0])  # its own mass: no change
    p2, r2 = direct({}, masses={"platform": 2 * m0, "arm": 0.3})
    np.testing.assert_allclose(res.as_array("peak")[1, 0, 0], p2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.as_array("rms")[1, 0, 0], r2, rtol=0, atol=1e-12)
    assert np.all(res.as_array("peak")[1] > res.as_array("peak")[0])
    # the spec change itself: mass set, inertia scaled alike, every limb's arm, nothing else
    new = apply_masses(spec, {"platform": 2 * m0, "arm": 0.3})
    assert new.body("platform").mass == 2 * m0
    np.testing.assert_allclose(new.body("platform").inertia, 2 * spec.body("platform").inertia, rtol=1e-15)
    for limb in ("limb1", "limb2", "limb3"):
        old_arm, new_arm = spec.body(f"{limb}/arm"), new.body(f"{limb}/arm")
        assert new_arm.mass == 0.3
        np.testing.assert_allclose(new_arm.inertia, old_arm.inertia * 0.3 / old_arm.mass, rtol=1e-15)
        np.testing.assert_array_equal(new_arm.com, old_arm.com)
        assert new.body(f"{limb}/rod1").mass == spec.body(f"{limb}/rod1").mass


def test_failing_points_are_recorded_not_fatal(tmp_path):
    # c = 300 < d = a + R0 - Rp = 330: h = sqrt(c² − d²) is undefined; a start 3 m down is unreachable
    res = sweep(DELTA, {"c": [300, 1000]}, [PP, dict(PP, start=[0.0, 0.0, -3.0])], executor="serial",
                progress=False)
    status = [[r["status"] for r in res.rows[k:k + 2]] for k in (0, 2)]
    assert status == [["error", "error"], ["ok", "error"]]
    assert "RobotFileError" in res.rows[0]["message"] and "parameters.h" in res.rows[0]["message"]
    assert res.rows[3]["message"].startswith("IKError")
    assert res.rows[2]["message"] == ""
    peak = res.as_array("peak")
    assert np.isnan(peak[0]).all() and np.isnan(peak[1, 1]).all() and np.isfinite(peak[1, 0]).all()
    res.to_csv(tmp_path / "s.csv")
    rows = list(csv.DictReader(open(tmp_path / "s.csv")))
    assert rows[3]["status"] == "error" and rows[3]["peak_limb1/1 [N·m]"] == ""   # no nan in the file
    res.plot(tmp_path / "s.png")                    # gaps, no crash
    assert (tmp_path / "s.png").read_bytes()[:8] == PNG_MAGIC


# ---------------------------------------------------------------------- executors
def test_process_pool_equals_serial(serial):
    res = sweep(DELTA, GRID, [PP], workers=2, progress=False)
    assert res.runner == "2 local processes"
    assert_same(res, serial)


def test_dask_local_cluster_equals_serial(serial):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl:
        res = sweep(DELTA, GRID, [PP], scheduler=cl.scheduler_address, progress=False)
        assert res.runner.startswith(f"the Dask cluster at {cl.scheduler_address}")
        assert_same(res, serial)
        with distributed.Client(cl) as client:           # any concurrent.futures.Executor
            assert_same(sweep(DELTA, GRID, [PP], executor=client.get_executor(), progress=False), serial)


def test_dask_errors(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)     # as if not installed
    with pytest.raises(pkm.PkmError, match=r"pip install 'pkm\[dask\]'"):
        sweep(DELTA, GRID, [PP], scheduler="tcp://127.0.0.1:1", progress=False)
    monkeypatch.undo()
    pytest.importorskip("distributed")
    monkeypatch.setattr(sweep_mod, "CONNECT_TIMEOUT", "0.5s")
    with pytest.raises(pkm.PkmError, match="cannot connect to the Dask scheduler at tcp://127.0.0.1:1"):
        sweep(DELTA, GRID, [PP], scheduler="tcp://127.0.0.1:1", progress=False)


# ---------------------------------------------------------------------- validation
@pytest.mark.parametrize("parameters, trajectories, message", [
    ({"arm_length": [300]}, None, r"unknown parameter 'arm_length' \(the file's \[parameters\] are R0, Rp, a, b, c"),
    ({"mass:gripper": [1.0]}, None, r"mass:gripper: no body 'gripper' \(bodies: platform, arm"),
    ({"mass:platform": [0.0]}, None, "masses must be positive"),
    ({"a": []}, None, "a: no values"),
    ({"a": ["300"]}, None, "a: expected a number"),
    ({"a": [float("nan")]}, None, "a: must be finite"),
    ({"a": [250]}, [{"type": "pick-place", "cycle-time": 0.4}], "has no key 'cycle-time'"),
    ({"a": [250]}, [{"type": "spiral"}], "unknown type 'spiral'"),
    ({"a": [250]}, [{"type": "line", "duration": 1.0}], "a line trajectory needs 'end'"),
    ({"a": [250]}, [], "empty list"),
    ({"a": [250]}, [None, 3], r"trajectories\[1\]: expected None or a dict"),
])
def test_bad_input_is_a_clear_error(parameters, trajectories, message):
    with pytest.raises(pkm.PkmError, match=message):
        sweep(DELTA, parameters, trajectories, executor="serial", progress=False)


def test_workers_only_with_the_default_pool():
    with pytest.raises(pkm.PkmError, match="workers sets the size of the default process pool"):
        sweep(DELTA, GRID, [PP], executor="serial", workers=2, progress=False)
    with pytest.raises(pkm.PkmError, match="workers must be a positive integer"):
        sweep(DELTA, GRID, [PP], workers=0, progress=False)


def test_missing_robot_file(tmp_path):
    with pytest.raises(pkm.RobotFileError, match="file not found"):
        sweep(tmp_path / "nope.toml", {"a": [1]}, executor="serial", progress=False)


# ---------------------------------------------------------------------- CSV and plot
def test_csv(serial, tmp_path):
    header = serial.to_csv(tmp_path / "sweep.csv")
    assert header == ["a", "c", "trajectory", "status", *(f"peak_{n} [N·m]" for n in ACTS),
                      *(f"rms_{n} [N·m]" for n in ACTS), "message"]
    with open(tmp_path / "sweep.csv", newline="") as fh:
        lines = list(csv.reader(fh))
    assert lines[0] == header and len(lines) == 5
    for line, row in zip(lines[1:], serial.rows):
        assert line[:4] == [str(row["a"]), str(row["c"]), "pick-place cycle_time=0.5", "ok"]
        assert [float(v) for v in line[4:10]] == [row[c] for c in serial.columns()[4:10]]   # exact round trip
        assert line[10] == ""


def test_plot(serial, tmp_path):
    fig = serial.plot(tmp_path / "sweep.png")
    assert (tmp_path / "sweep.png").read_bytes()[:8] == PNG_MAGIC
    ax_peak, ax_rms = fig.axes
    assert ax_rms.get_xlabel().startswith("a (robot file parameter; lengths in mm)")
    lines = ax_peak.get_lines()
    assert [l.get_label() for l in lines] == ["c=950", "c=1000"]       # one line per other combination
    np.testing.assert_array_equal(lines[1].get_xdata(), [240.0, 260.0])
    np.testing.assert_array_equal(lines[1].get_ydata(), serial.as_array("peak")[:, 1, 0].max(axis=-1))


# ---------------------------------------------------------------------- command line
def test_parse_values():
    assert parse_values("1,2.5", "x") == [1.0, 2.5]
    assert parse_values("0.3:0.5:3", "x") == pytest.approx([0.3, 0.4, 0.5])
    for bad in ("", "a,b", "1:2", "1:2:0", "inf"):
        with pytest.raises(pkm.PkmError):
            parse_values(bad, "x")


def cli_parser():
    parser = argparse.ArgumentParser(prog="pkm")
    add_parser(parser.add_subparsers(dest="command"))
    return parser


def test_cli_in_process(serial, tmp_path, capsys):
    out, png = tmp_path / "s.csv", tmp_path / "s.png"
    args = cli_parser().parse_args(["sweep", str(DELTA), "--param", "a=240,260", "--param", "c=950:1000:2",
                                    "--cycle-time", "0.5", "--dt", "0.005", "--workers", "1", "--no-progress",
                                    "--out", str(out), "--plot", str(png)])
    assert args.func(args) == 0
    text = capsys.readouterr().out
    assert "sweep of a (2) × c (2) × 1 trajectory = 4 points on this process" in text and "4 ok, 0 failed" in text
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["trajectory"] for r in rows] == ["pick-place 0.5 s"] * 4
    for r, ref in zip(rows, serial.rows):
        assert float(r["a"]) == ref["a"] and float(r["c"]) == ref["c"]
        assert [float(r[f"peak_{n} [N·m]"]) for n in ACTS] == [ref[f"peak_{n}"] for n in ACTS]
        assert [float(r[f"rms_{n} [N·m]"]) for n in ACTS] == [ref[f"rms_{n}"] for n in ACTS]
    assert png.read_bytes()[:8] == PNG_MAGIC


@pytest.mark.parametrize("argv, message", [
    (["--param", "a"], "expected NAME=V1,V2"),
    (["--param", "a=1,x"], "--param a: expected comma-separated numbers"),
    (["--param", "a=1", "--param", "a=2"], "--param a: given twice"),
    (["--trajectory", "default", "--cycle-time", "0.5"], "apply to --trajectory pick-place"),
    (["--cycle-time", "0,0.5"], "--cycle-time: must be positive"),
    (["--workers", "0"], "--workers: must be at least 1"),
    (["--workers", "2", "--scheduler", "tcp://x:1"], "--workers sets the number of local processes"),
    (["--plot", "x.unknown"], "unsupported image format"),
    (["--param", "zz=1"], "unknown parameter 'zz'"),
    (["--param", "h=500,944"], "'h' is derived in the file"),
])
def test_cli_errors(argv, message):
    args = cli_parser().parse_args(["sweep", str(DELTA), *argv])
    with pytest.raises(pkm.PkmError, match=message):
        args.func(args)


def _wired() -> bool:
    proc = subprocess.run([sys.executable, "-m", "pkm", "sweep", "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    return proc.returncode == 0 and "--param" in proc.stdout


@pytest.mark.skipif(not _wired(), reason="`pkm sweep` is not wired into pkm/cli/main.py yet")
def test_cli_subprocess(serial, tmp_path):
    out = tmp_path / "s.csv"
    proc = subprocess.run([sys.executable, "-m", "pkm", "sweep", "robots/delta_3rr2rrr.toml", "--param", "a=240,260",
                           "--param", "c=950,1000", "--cycle-time", "0.5", "--dt", "0.005", "--workers", "1",
                           "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "4 ok, 0 failed" in proc.stdout
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [float(r["peak_limb1/1 [N·m]"]) for r in rows] == [r["peak_limb1/1"] for r in serial.rows]
    bad = subprocess.run([sys.executable, "-m", "pkm", "sweep", "robots/delta_3rr2rrr.toml", "--param", "zz=1"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "unknown parameter 'zz'" in bad.stderr


def test_the_sweep_parsers_dask_hint_is_the_sweeps():
    """pkm.cli.sweep keeps its own copy of the install hint (it does not import pkm.sweep, which
    every command's parser would then load): it must say what pkm.sweep says."""
    import pkm.cli.sweep
    import pkm.sweep.points

    assert pkm.cli.sweep.DASK_HINT == pkm.sweep.points.DASK_HINT
