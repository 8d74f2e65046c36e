"""Bad input gives a clear one-line error, never a traceback, a non-finite result or a half-written
file (the "reliability" issue): robot files, the command line, outputs, sweeps, trajectory files.

Robot files are the shipped Delta with one change each (written next to a copy of nothing else:
the Delta needs no other file).
"""

from __future__ import annotations

import math
import subprocess
import sys
import tomllib

import numpy as np
import pytest

from pkm.description.robotfile import load_spec, parse_spec
from pkm.errors import RobotFileError

from conftest import ROBOTS

DELTA_PATH = ROBOTS / "delta_3rr2rrr.toml"
DELTA = DELTA_PATH.read_text()


def mutated(tmp_path, old: str, new: str, name: str = "robot.toml"):
    """The Delta file with ``old`` (which must occur) replaced once by ``new``, written to tmp_path."""
    assert old in DELTA, old
    path = tmp_path / name
    path.write_text(DELTA.replace(old, new, 1))
    return path


def load_error(path, load=load_spec) -> str:
    """The one-line message of the RobotFileError loading ``path`` (with ``load``) raises."""
    with pytest.raises(RobotFileError) as info:
        load(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}: ")
    return message


def pkm_cli(*args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pkm", *map(str, args)], capture_output=True, text=True,
                          timeout=300, **kwargs)


def assert_cli_error(run: subprocess.CompletedProcess, *phrases: str) -> str:
    """Exit status 2 and exactly one line ``pkm: error: …`` on stderr (no traceback) with ``phrases``."""
    assert run.returncode == 2, (run.returncode, run.stderr[-2000:])
    lines = [l for l in run.stderr.splitlines() if l.startswith("pkm: error:")]
    assert "Traceback" not in run.stderr and len(lines) == 1, run.stderr[-2000:]
    for phrase in phrases:
        assert phrase in lines[0], lines[0]
    return lines[0]


# ====================================================================== 1. robot files
JOINT_2 = 'name = "2"\ntype = "R"\nparent = "arm"\nchild = "upper_link"\npoint = ["-R0 - a", 0, 0]\naxis = [0, -1, 0]'
ARM_SHAPE = ('shape = { type = "cylinder", from = ["-R0", 0, 0], to = ["-R0 - a", 0, 0], diameter = 30, '
             'material = "aluminium" }')


def test_too_few_actuators_are_refused_and_redundant_ones_accepted(tmp_path, capsys):
    """Fewer actuators than task coordinates: a one-line `task:` error from every command, not a
    NotImplementedError (inverse-dynamics) or a LinAlgError (eom) traceback. More (joints 1 and 2
    of each limb actuated: 6 for 3 task coordinates) is redundant actuation (paper Sec. 8.2), accepted
    since issue 28: the forces are distributed by the pseudoinverse of J_IKᵀ."""
    def actuation_error(path) -> str:
        with pytest.raises(RobotFileError) as info:
            load_spec(path).check_actuation()
        assert "\n" not in str(info.value) and str(info.value).startswith(f"{path}: task: ")
        return str(info.value)

    six = mutated(tmp_path, JOINT_2, JOINT_2 + "\nactuated = true")
    load_spec(six).check_actuation()
    none = mutated(tmp_path, 'axis = [0, -1, 0]\nactuated = true', 'axis = [0, -1, 0]', "none.toml")
    message = actuation_error(none)
    assert "task: 0 actuated joints for 3 task coordinates" in message
    assert "too few actuators" in message and "at least one joint per task coordinate 'actuated = true'" in message
    load_spec(DELTA_PATH).check_actuation()
    for command in (["eom", none, "--at", 0.1, 0, -0.9], ["inverse-dynamics", none],
                    ["sweep", none, "--param", "a=250,260", "--workers", "1"]):
        code, _, err = run_main(capsys, *command)
        one_line_error(code, err, f"{none}: task: 0 actuated joints")


def test_huge_joint_axis_is_normalised(tmp_path):
    """|[0, -1e308, 1e308]| overflows; the axis was divided by inf and became a zero axis."""
    path = mutated(tmp_path, 'point = ["-R0", 0, 0]\naxis = [0, -1, 0]', 'point = ["-R0", 0, 0]\naxis = [0, -1e308, 1e308]')
    axis = load_spec(path).limb.joints[0].axes[0]
    np.testing.assert_allclose(axis, [0.0, -math.sqrt(0.5), math.sqrt(0.5)], rtol=0, atol=1e-15)
    tiny = mutated(tmp_path, 'point = ["-R0", 0, 0]\naxis = [0, -1, 0]', 'point = ["-R0", 0, 0]\naxis = [0, -5e-324, 0]',
                   "tiny.toml")
    assert 'limb.joints[0] ("1").axis: zero-length axis' in load_error(tiny)
    # every other magnitude normalises to the same unit vector
    for scale in (1e-6, 1.0, 1e10, 1e300):
        data = tomllib.loads(DELTA)
        data["limb"]["joints"][0]["axis"] = [0.0, -3 * scale, 4 * scale]
        np.testing.assert_allclose(parse_spec(data).limb.joints[0].axes[0], [0, -0.6, 0.8], rtol=0, atol=1e-15)


def test_deeply_nested_toml_is_a_robot_file_error(tmp_path):
    path = tmp_path / "nested.toml"
    path.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert "nested too deeply" in load_error(path)


@pytest.mark.parametrize("order", ["forward", "backward"])
def test_long_parameter_chain_resolves(tmp_path, order):
    """p0 = 1, p1 = "p0 + 1", …, p4999 = "p4998 + 1", used by an entry: no RecursionError (the
    parameters were resolved by recursion, one level per link, when listed from the far end)."""
    links = [f'p{i} = "p{i - 1} + 1"\n' for i in range(1, 5000)]
    if order == "backward":
        links.reverse()
    chain = "".join(links) + "p0 = 1\n" if order == "backward" else "p0 = 1\n" + "".join(links)
    path = mutated(tmp_path, "[parameters]\n", "[parameters]\n" + chain)
    path.write_text(path.read_text().replace("a = 250 ", 'a = "250 + 0 * p4999" ', 1))
    spec = load_spec(path)
    assert spec.parameters["p4999"] == 5000.0 and spec.parameters["a"] == 250.0
    cycle = mutated(tmp_path, "[parameters]\n", "[parameters]\n" + chain.replace("p0 = 1", 'p0 = "p4999"'), "cycle.toml")
    assert "refer to each other in a cycle" in load_error(cycle)


@pytest.mark.parametrize("old, new, message", [
    ("diameter = 30", "diameter = 1e-320",     # denormal: the volume underflows to 0
     'limb.bodies[0] ("arm").shape: the cylinder\'s size is out of range'),
    ("diameter = 30", "diameter = 1e200",      # the volume overflowed (a Python float power)
     'limb.bodies[0] ("arm").shape.diameter: 1e+197 m is out of range (lengths up to 1e+06 m'),
])
def test_shape_size_out_of_range(tmp_path, old, new, message):
    path = mutated(tmp_path, ARM_SHAPE, ARM_SHAPE.replace(old, new))
    assert message in load_error(path)


def test_box_size_out_of_range(tmp_path):
    box = 'shape = { type = "box", center = ["-R0 - a/2", 0, 0], size = [250, 30, 1e-320], material = "aluminium" }'
    path = mutated(tmp_path, ARM_SHAPE, box)
    assert 'limb.bodies[0] ("arm").shape: the box\'s size is out of range' in load_error(path)


@pytest.mark.parametrize("old, new, entry", [
    ('name = "limb1"', 'name = "limb,1"', 'limb.mounts[0] ("limb,1").name'),
    ('name = "limb1"', 'name = "limb\\"1"', 'limb.mounts[0] ("limb"1").name'),
    ('name = "arm"  ', 'name = "arm\\n2"', 'limb.bodies[0] ("arm 2").name'),
    ('name = "2"\ntype', 'name = "2,3"\ntype', 'limb.joints[1] ("2,3").name'),
    ('ground = "base"', 'ground = "ba,se"', "ground"),
    ('name = "platform"', 'name = "plat\\rform"', "platform.name"),
])
def test_names_that_would_break_a_csv_are_rejected(tmp_path, old, new, entry):
    """A comma, a quote or a line break in a name broke the CSV header (12 columns, 10 values)."""
    if old == 'ground = "base"':
        path = tmp_path / "robot.toml"
        path.write_text(DELTA.replace('"base"', '"ba,se"'))
    else:
        path = mutated(tmp_path, old, new)
    message = load_error(path)
    assert f"{entry}: " in message and "not allowed in names" in message


def test_valid_robot_files_still_load():
    from conftest import TESTS

    for path in [*ROBOTS.glob("*.toml"), *(TESTS / "robots_ok").glob("*.toml")]:
        load_spec(path)


# ====================================================================== 2. the command line
def run_main(capsys, *args) -> tuple[int, str, str]:
    """``pkm ARGS`` in this process (warm numba caches): exit status, stdout, stderr."""
    from pkm.cli.main import main

    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def one_line_error(code: int, err: str, *phrases: str) -> str:
    assert code == 2, err
    lines = [l for l in err.splitlines() if l.startswith("pkm: error:")]
    assert len(lines) == 1, err
    for phrase in phrases:
        assert phrase in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_ik_at_must_be_finite(capsys, value):
    """`pkm ik ROBOT --at nan 0 -0.9` ended in a ValueError traceback (`eom` already checked)."""
    code, _, err = run_main(capsys, "ik", DELTA_PATH, "--at", value, 0, -0.9)
    one_line_error(code, err, f"--at must be finite, got {float(value)!r}")


def test_generated_trajectories_have_a_sample_cap():
    """--dt 1e-12 --duration 100 tried to allocate 728 TiB; the cap is a named constant."""
    from pkm.trajectory import MAX_SAMPLES, line, sine

    assert MAX_SAMPLES == 10**7
    with pytest.raises(ValueError, match=r"duration 100.0 s / dt 1e-12 s gives 1e\+14 samples, more than the limit"):
        sine([0, 0, -0.9], [0.1, 0, 0], 10.0, 100.0, 1e-12)
    with pytest.raises(ValueError, match="more than the limit"):   # the ratio overflows to inf
        line([0.0], [1.0], 1e300, 1e-300)
    assert len(line([0.0], [1.0], 1.0, 1.0 / (MAX_SAMPLES - 1))) == MAX_SAMPLES


def test_cli_sample_cap(capsys):
    code, _, err = run_main(capsys, "inverse-dynamics", DELTA_PATH, "--dt", "1e-12", "--duration", "100")
    one_line_error(code, err, "dt 1e-12 s", "duration 100.0 s", "use a larger dt")


def test_non_finite_torques_are_an_error_not_output(capsys, tmp_path):
    """gravity = [0, 0, -1e308]: the CSV held 3003 'inf' and the summary 'inf / inf' with exit 0."""
    robot = mutated(tmp_path, "gravity = [0, 0, -9.81]", "gravity = [0, 0, -1e308]")
    out, plot = tmp_path / "tau.csv", tmp_path / "tau.png"
    code, stdout, err = run_main(capsys, "inverse-dynamics", robot, "--dt", "0.5", "--out", out, "--plot", plot)
    one_line_error(code, err, "non-finite actuator torque at sample 0 (t = 0 s)")
    assert not out.exists() and not plot.exists() and "inf" not in stdout
    assert sorted(tmp_path.iterdir()) == [robot]


def test_peak_and_rms_do_not_overflow(capsys, tmp_path):
    """tau ~ 1e302 (platform density 1e305) is finite, but tau * tau overflowed: RMS printed inf."""
    from pkm.cli.main import peak_and_rms

    peak, rms = peak_and_rms(np.array([[1e300, 0.0, -3.0], [-1e300, 0.0, 4.0]]))
    np.testing.assert_allclose(peak, [1e300, 0.0, 4.0])
    np.testing.assert_allclose(rms, [1e300, 0.0, math.sqrt(12.5)], rtol=1e-15)
    robot = mutated(tmp_path, 'diameter = 90, material = "aluminium" }', 'diameter = 90, density = 1e305 }')
    code, stdout, err = run_main(capsys, "inverse-dynamics", robot, "--dt", "0.5")
    assert code == 0, err
    assert "inf" not in stdout and "nan" not in stdout and "e+30" in stdout


def test_sweep_point_with_non_finite_torques_fails(tmp_path):
    from pkm.sweep.points import evaluate_point

    robot = mutated(tmp_path, "gravity = [0, 0, -9.81]", "gravity = [0, 0, -1e308]")
    res = evaluate_point(str(robot), {}, {}, {"type": "pick-place", "dt": 0.005})
    assert res["status"] == "error" and "non-finite actuator torque at sample 0" in res["message"]
    assert res["peak"] == [] and res["rms"] == []
    big = mutated(tmp_path, 'diameter = 90, material = "aluminium" }', 'diameter = 90, density = 1e305 }', "big.toml")
    res = evaluate_point(str(big), {}, {}, {"type": "pick-place", "dt": 0.005})
    assert res["status"] == "ok" and np.isfinite(res["rms"]).all() and min(res["rms"]) > 1e295


# ====================================================================== 3. outputs: all or nothing
def _failing_writer(written: dict, path_arg: int | str = 0):
    """A writer that writes part of its file (argument ``path_arg``, a position or keyword), then
    runs out of disk."""
    import errno

    def writer(*args, **kwargs):
        path = kwargs[path_arg] if isinstance(path_arg, str) else args[path_arg]
        with open(path, "w") as fh:
            fh.write("t,x,y,z\n0.0,0.1,")
        written["path"] = path
        raise OSError(errno.ENOSPC, "No space left on device")

    return writer


@pytest.mark.parametrize("failing", ["csv", "plot"])
def test_inverse_dynamics_outputs_are_all_or_nothing(capsys, tmp_path, monkeypatch, failing):
    """A failed write left the CSV behind (complete or truncated) and named no file (': File too large')."""
    import pkm.cli.main as cli
    import pkm.plotting

    out, plot = tmp_path / "tau.csv", tmp_path / "tau.png"
    out.write_text("old results\n")                     # a pre-existing file is kept as it was
    written = {}
    if failing == "csv":
        monkeypatch.setattr(cli, "write_dynamics_csv", _failing_writer(written))
    else:
        monkeypatch.setattr(pkm.plotting, "plot_actuators", _failing_writer(written, "path"))
    code, _, err = run_main(capsys, "inverse-dynamics", DELTA_PATH, "--dt", "0.5", "--out", out, "--plot", plot)
    target = out if failing == "csv" else plot
    one_line_error(code, err, f"cannot write {target}: No space left on device", "no output file was written")
    assert str(written["path"]) != str(target)          # it was writing a temporary file
    assert out.read_text() == "old results\n" and not plot.exists()
    assert sorted(tmp_path.iterdir()) == [out]          # no temporary file left


def test_inverse_dynamics_outputs_written_together(capsys, tmp_path):
    out, plot = tmp_path / "tau.csv", tmp_path / "tau.png"
    code, stdout, err = run_main(capsys, "inverse-dynamics", DELTA_PATH, "--dt", "0.5", "--out", out, "--plot", plot)
    assert code == 0, err
    assert out.read_text().startswith("t,x,y,z,xd,yd,zd,q_limb1/1") and plot.read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tau.csv", "tau.png"]
    assert oct(out.stat().st_mode & 0o777) == oct(0o666 & ~_umask())   # as a file opened with "w"


def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_full_disk_in_a_subprocess(capsys, tmp_path):
    """The real thing: RLIMIT_FSIZE with SIGXFSZ ignored makes write() fail with EFBIG."""
    import resource
    import signal

    run_main(capsys, "inverse-dynamics", DELTA_PATH, "--dt", "0.1")   # compile/cache the kernels first

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (40_000, 40_000))

    out, plot = tmp_path / "lo.csv", tmp_path / "lo.png"    # the CSV (18 kB) fits, the plot does not
    run = pkm_cli("inverse-dynamics", DELTA_PATH, "--dt", "0.1", "--out", out, "--plot", plot, preexec_fn=limit)
    assert_cli_error(run, f"cannot write {plot}: File too large")
    assert list(tmp_path.iterdir()) == []


def test_sweep_outputs_are_all_or_nothing(capsys, tmp_path, monkeypatch):
    from pkm.sweep.result import SweepResult

    out, plot = tmp_path / "s.csv", tmp_path / "s.png"
    monkeypatch.setattr(SweepResult, "plot", lambda self, path: _failing_writer({})(path))
    code, _, err = run_main(capsys, "sweep", DELTA_PATH, "--param", "a=250", "--cycle-time", "0.5", "--dt", "0.05",
                            "--workers", "1", "--no-progress", "--out", out, "--plot", plot)
    one_line_error(code, err, f"cannot write {plot}: No space left on device")
    assert list(tmp_path.iterdir()) == []


def test_same_file_for_two_outputs(capsys, tmp_path):
    out = tmp_path / "x.png"
    code, _, err = run_main(capsys, "inverse-dynamics", DELTA_PATH, "--dt", "0.5", "--out", out, "--plot", out)
    one_line_error(code, err, "must differ")
    assert list(tmp_path.iterdir()) == []


# ====================================================================== 4. sweep --scheduler
@pytest.mark.parametrize("address", ["tcp://:::", "bogus", "tcp://host:0", "tcp://host:8786/x", ""])
def test_malformed_scheduler_address(capsys, address):
    code, _, err = run_main(capsys, "sweep", DELTA_PATH, "--param", "a=250,260", "--scheduler", address)
    one_line_error(code, err, f"invalid Dask scheduler address {address!r}: expected tcp://HOST:PORT")


def test_scheduler_value_error_from_distributed():
    """An address distributed itself refuses with a ValueError (not an OSError) is a PkmError too."""
    pytest.importorskip("distributed")
    import pkm

    with pytest.raises(pkm.PkmError, match="cannot connect to the Dask scheduler at inproc://x: not enough values"):
        pkm.sweep(DELTA_PATH, {"a": [250]}, scheduler="inproc://x", progress=False)


# ====================================================================== 5. trajectory files
@pytest.mark.parametrize("times, line", [
    ([0.0, 5e-324, 1e-323, 0.01], 3),           # denormal steps
    ([0.0, 0.01, 0.01, 0.02], 4),               # repeated time
    ([0.0, 0.02, 0.01], 4),                     # decreasing
    ([1e6, 1e6 + 1e-4, 1e6 + 1.0], 3),          # a step lost against t (< 1e-9 |t|)
])
def test_trajectory_csv_times(tmp_path, times, line):
    from pkm.trajectory import read_csv

    path = tmp_path / "m.csv"
    path.write_text("t,x,xd,xdd\n" + "".join(f"{t!r},0.0,0.0,0.0\n" for t in times))
    with pytest.raises(ValueError, match=rf"m.csv: line {line}: times must be strictly increasing by more than "
                                         rf"1e-09 x max\(1, \|t\|\) per row, got t = "):
        read_csv(path)
    path.write_text("t,x,xd,xdd\n" + "".join(f"{1e6 + k * 1e-2!r},0.0,0.0,0.0\n" for k in range(3)))
    assert len(read_csv(path)) == 3


def test_cli_trajectory_file_with_coincident_times(capsys, tmp_path):
    traj = tmp_path / "close.csv"
    rows = [f"{t!r},0.0,0.0,-0.9,0.0,0.0,0.0,0.0,0.0,0.0" for t in (0.0, 5e-324, 1e-323, 0.01)]
    traj.write_text("t,x,y,z,xd,yd,zd,xdd,ydd,zdd\n" + "\n".join(rows) + "\n")
    code, _, err = run_main(capsys, "inverse-dynamics", DELTA_PATH, "--trajectory", "file", "--file", traj)
    one_line_error(code, err, "close.csv: line 3: times must be strictly increasing")
