"""The hostile-input corpus on pkm's newer surfaces (issue 27, item 4): torque CSVs, workspace
slices, ranges and memory, output formats, the rotation vector's domain, the facade's keywords,
overflowing forces, the forward kinematics' tolerance, simulation output times, controller
outputs and options, and robot files whose topology is wrong. Each class ends in one clear line —
a :class:`pkm.PkmError` (the CLI: ``pkm: error: …``, exit 2) — never a traceback, a NaN/inf result,
uninitialised memory or a silently ignored argument. The helpers are ``tests/test_corpus.py``'s.
"""
from __future__ import annotations

import math
import tracemalloc
import warnings

import numpy as np
import pytest

import pkm
from pkm.errors import InputError, PkmError, SingularityError, TopologyError

from conftest import ROBOTS
from test_corpus import DELTA, check_run, one_line_pkm_error, run

HEXAPOD = ROBOTS / "hexapod_6ups.toml"
WRIST = ROBOTS / "wrist_3rrr.toml"
TWO_PI = 2 * math.pi


@pytest.fixture(scope="module")
def delta():
    return pkm.load(DELTA)


@pytest.fixture(scope="module")
def hexapod():
    return pkm.load(HEXAPOD)


@pytest.fixture(scope="module")
def wrist():
    return pkm.load(WRIST)


def _pkm_error(call, kind=PkmError):
    """``call()`` raises a one-line ``kind``; returns its message."""
    with pytest.raises(PkmError) as info:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
    one_line_pkm_error(info, kind)
    return str(info.value)


# ====================================================================== 1. torque and trajectory CSVs
TAU = "tau_limb1/1 [N·m],tau_limb2/1 [N·m],tau_limb3/1 [N·m]"
ROWS = "0,0,0,-0.9,1,1,1\n0.05,0,0,-0.9,1,1,1\n"


def test_torque_csv_defects(tmp_path):
    """`simulate --torques FILE.csv`: comments, blank lines and a byte-order mark before the first
    data row are skipped (an IndexError and a start read from the comment); text, NaN, a missing
    or duplicated column and a ragged row are one line naming the file, line and column (a
    ValueError of the task columns' start)."""
    header = f"t,x,y,z,{TAU}\n"
    good = {"comment_first": header + "# from pkm inverse-dynamics\n" + ROWS,
            "blank_first": header + "\n   \n" + ROWS,
            "bom": "\ufeff" + header + ROWS,
            "comment_between": header + ROWS.replace("\n0.05", "\n# x\n0.05"),
            "no_task_columns": f"t,{TAU}\n0,1,1,1\n0.05,1,1,1\n"}
    bad = {"text_in_x": (header + ROWS.replace("0,0,0,-0.9", "0,abc,0,-0.9", 1), "line 2: column 'x': not a number"),
           "text_after_comment": (header + "#c\n" + ROWS.replace("0,0,0,-0.9", "0,0,0,z", 1), "line 3: column 'z'"),
           "nan_in_z": (header + ROWS.replace("-0.9", "nan", 1), "column 'z': nan is not finite"),
           "text_in_tau": (header + ROWS.replace(",1,1,1", ",1,x,1", 1), "column 'tau_limb2/1': not a number"),
           "inf_in_t": (header + ROWS.replace("0.05", "inf"), "column 't': inf is not finite"),
           "ragged": (header + ROWS + "0.1,0,0\n", "line 4: 3 values, expected 7"),
           "missing_column": ("t,x,y,z,tau_limb1/1,tau_limb2/1\n0,0,0,-0.9,1,1\n0.05,0,0,-0.9,1,1\n",
                              "no column 'tau_limb3/1'"),
           "duplicate": (f"t,x,x,z,{TAU}\n" + ROWS, "duplicate column 'x'"),
           "empty_name": (f"t,,y,z,{TAU}\n" + ROWS, "empty column name"),
           "one_row": (header + ROWS.splitlines()[0] + "\n", "at least two rows"),
           "empty": ("", "at least two rows"),
           "binary": ("\x00\udcff", "not a text (UTF-8)")}
    for name, text in good.items():
        p = tmp_path / f"{name}.csv"
        p.write_bytes(text.encode())
        check_run(["simulate", DELTA, "--torques", p, "--duration", 0.01, "--step", 0.01], ok=True)
    for name, (text, message) in bad.items():
        p = tmp_path / f"{name}.csv"
        p.write_bytes(text.encode("utf-8", "surrogateescape"))
        _, _, err = check_run(["simulate", DELTA, "--torques", p, "--duration", 0.01], ok=False)
        assert f"{p}: " in err and message in err, (name, err)
    from pkm.sim.inputs import read_table, table_columns

    p = tmp_path / "comment_first.csv"
    np.testing.assert_array_equal(table_columns(p, ["x", "y", "z"]), [0, 0, -0.9])
    assert table_columns(p, ["x", "q"]) is None
    assert read_table(p, ["limb1/1", "limb2/1", "limb3/1"]).t.tolist() == [0.0, 0.05]


def test_trajectory_csv_defects(tmp_path):
    """The trajectory reader (`--trajectory file`), the sibling: comments, blank lines and a BOM
    skipped, text/NaN/ragged rows one line naming the file."""
    rows = "t,x,y,z,xd,yd,zd,xdd,ydd,zdd\n"
    data = "0,0,0,-0.9,0,0,0,0,0,0\n0.5,0,0,-0.9,0,0,0,0,0,0\n"
    for name, text, ok in [("comment_first", rows + "# c\n\n" + data, True), ("bom", "\ufeff" + rows + data, True),
                           ("text", rows + data.replace("-0.9", "a", 1), False),
                           ("nan", rows + data.replace("-0.9", "nan", 1), False),
                           ("ragged", rows + data + "1,0\n", False)]:
        p = tmp_path / f"{name}.csv"
        p.write_text(text)
        _, _, err = check_run(["inverse-dynamics", DELTA, "--trajectory", "file", "--file", p], ok=ok)
        assert ok or f"{p}: line" in err


# ====================================================================== 2, 4, 8. workspace maps
@pytest.mark.parametrize("argv, message", [
    (["--slice", "x=0", "--slice", "y=0", "--slice", "z=-0.9"], "no task coordinate left to map"),
    (["--slice", "x=0", "--slice", "x=0.1"], "--slice x: given twice"),
    (["--range", "x=0:1", "--range", "x=0:2"], "--range x: given twice"),
    (["--range", "x=0:1", "--slice", "x=0"], "x: given both a range and a fixed (slice) value"),
    (["--slice", "rx=0"], "no task coordinate 'rx'"),
    (["--range", "q=0:1"], "no task coordinate 'q'"),
    (["--resolution", "2000"], "4000000 points would take ~"),
    (["--resolution", "400,400,400"], "3 values for 2 coordinates"),
    (["--range", "x=-1e308:1e308"], "the span -1e+308:1e+308 overflows"),
    (["--range", "x=-1.7e308:0", "--range", "z=-1e308:1.7e308"], "range z: the span"),
    (["--range", "x=1:1"], "needs LO < HI"),
    (["--range", "x=1:0"], "needs LO < HI"),
    (["--range", "x=1:inf"], "must be finite"),
    (["--range", "x=-inf:1"], "must be finite"),
    (["--range", "x=nan:1"], "must be finite"),
    (["--range", "x=1:1.0000000000000002"], "too narrow for 41 distinct points"),
])
def test_workspace_command_line(argv, message):
    """`pkm workspace`: every coordinate sliced (an IndexError), a name twice, a slice and a range of
    one name, unknown names, a grid too large for memory (4e6 points, ~18 GB, were accepted), a
    span that overflows (x = nan written), empty, reversed, infinite or too narrow ranges."""
    _, _, err = check_run(["workspace", DELTA, *argv], ok=False)
    assert message in err, err


def test_workspace_api(delta):
    """`pkm.workspace(...)`: the same classes as one-line PkmErrors; numpy numbers are numbers."""
    for kwargs, message in [
        (dict(fixed={"x": 0.0, "y": 0.0, "z": -0.9}), "no task coordinate left to map"),
        (dict(resolution=2000), "of memory"),
        (dict(resolution=[1000, 1000]), "of memory"),
        (dict(ranges={"x": (-1e308, 1e308)}), "overflows"),
        (dict(ranges={"x": (1.0, 1.0)}), "needs finite LO < HI"),
        (dict(ranges={"x": (1.0, 1.0 + 2e-16)}), "too narrow"),
        (dict(ranges={"x": (0.0, "1")}), "expected two numbers"),
        (dict(ranges={"x": (0.0, 1.0, 2.0)}), "expected two numbers"),
        (dict(ranges={"x": 1.0}), "expected two numbers"),
        (dict(ranges=[("x", (0, 1))]), "ranges must be a dict"),
        (dict(fixed=[("y", 0)]), "fixed must be a dict"),
        (dict(fixed={"y": True}), "must be a finite number"),
        (dict(fixed={"y": "0"}), "must be a finite number"),
    ]:
        assert message in _pkm_error(lambda: pkm.workspace(delta, resolution=3, **kwargs) if "resolution" not in kwargs
                                     else pkm.workspace(delta, **kwargs)), kwargs
    m = pkm.workspace(delta, {"x": (np.float64(-0.1), np.int64(0))}, resolution=np.int64(3),
                      fixed={"y": np.float64(0.0), "z": np.float32(-0.9)})
    assert m.x.shape == (3, 3) and m.reachable.all()


def test_workspace_memory_estimate_bounds_the_peak(delta, hexapod):
    """:func:`pkm.workspace.bytes_per_point`, the size the limit is derived from, bounds the peak
    working memory (tracemalloc) of maps where every point is reached and where none is (the
    continuation pass), and is not loose by more than 3×."""
    from pkm.workspace import MAX_BYTES, bytes_per_point

    for robot, ranges in [(delta, {"x": (-0.2, 0.2), "z": (-1.0, -0.8)}), (delta, {"x": (5.0, 6.0), "z": (5.0, 6.0)}),
                          (hexapod, {"x": (-0.1, 0.1), "z": (1.9, 2.1)})]:
        pkm.workspace(robot, ranges, resolution=3)   # compiled, outside the measurement
        tracemalloc.start()
        try:
            m = pkm.workspace(robot, ranges, resolution=40)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        estimate = bytes_per_point(robot) * m.x.shape[0]
        assert peak <= estimate <= 3 * peak, (robot.name, ranges, peak, estimate)
    most = MAX_BYTES // bytes_per_point(delta)
    side = int(math.isqrt(most))
    with pytest.raises(PkmError, match="of memory"):
        pkm.workspace(delta, resolution=[side + 1, side + 1])


def test_workspace_rotation_ranges(wrist):
    """A map whose rotation vectors reach 2π (the coordinates' singularity) is refused up front."""
    msg = _pkm_error(lambda: pkm.workspace(wrist, {"rx": (-1.0, 6.3)}, resolution=3), SingularityError)
    assert "outside the task coordinates' domain" in msg
    _pkm_error(lambda: pkm.workspace(wrist, {"rx": (0.0, 1.0)}, fixed={"ry": 4.5, "rz": 4.5}, resolution=3),
               SingularityError)


# ====================================================================== 3. output formats
def test_output_formats_are_probed(tmp_path, monkeypatch):
    """--plot/--out in a format this machine cannot write (`.pgf` without LaTeX, `.mp4` without
    ffmpeg: a RuntimeError after the work) is refused before the robot is even loaded, for every
    command; what can be written is probed by a save into memory, not listed by hand."""
    import matplotlib.figure
    from matplotlib.animation import writers

    import pkm.plotting.style as style
    import pkm.robot

    monkeypatch.setattr(style, "_PROBED", {})
    real_savefig = matplotlib.figure.Figure.savefig

    def savefig(self, fname, *args, **kwargs):   # a backend that needs a missing program, as pgf without xelatex
        if kwargs.get("format") == "pdf" or str(fname).endswith(".pdf"):
            raise RuntimeError("'xelatex' not found;\ninstall it")
        return real_savefig(self, fname, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", savefig)
    monkeypatch.setattr(writers, "is_available", lambda name: False)

    def no_work(*args, **kwargs):
        raise AssertionError("the robot was loaded before the output format was checked")

    monkeypatch.setattr(pkm.robot, "load", no_work)
    pdf, mp4, gif = tmp_path / "o.pdf", tmp_path / "o.mp4", tmp_path / "o.gif"
    for argv in (["inverse-dynamics", DELTA, "--plot", pdf], ["simulate", DELTA, "--torques", "zero", "--plot", pdf],
                 ["workspace", DELTA, "--plot", pdf], ["reactions", DELTA, "--plot", pdf],
                 ["sweep", DELTA, "--param", "a=250", "--workers", 1, "--plot", pdf], ["show", DELTA, "--out", pdf]):
        _, _, err = check_run(argv, ok=False)
        assert "cannot write .pdf on this machine ('xelatex' not found; install it)" in err, err
    for out in (mp4, gif):
        _, _, err = check_run(["animate", DELTA, "--out", out], ok=False)
        assert f"{out.suffix} needs" in err and "which is not installed here" in err, err
    assert not list(tmp_path.iterdir())
    # the API: refused before drawing, nothing written
    monkeypatch.undo()
    monkeypatch.setattr(style, "_PROBED", {("pdf", False): "cannot write .pdf here", ("gif", True): "no Pillow"})
    robot = pkm.load(DELTA)
    from pkm.plotting import animate, plot_actuators, show_robot

    _pkm_error(lambda: show_robot(robot, path=pdf), InputError)
    _pkm_error(lambda: animate(robot, [robot.x_ref] * 2, path=gif, frames=2), InputError)
    res = robot.inverse_dynamics(robot.x_ref, [0, 0, 0], [0, 0, 0])
    _pkm_error(lambda: plot_actuators(res, [0.0], path=pdf), InputError)
    assert not list(tmp_path.iterdir())


def test_output_formats_here(tmp_path):
    """On this machine, every format matplotlib lists either writes (exit 0, a file) or is refused
    in one line with nothing written: never a RuntimeError after the work."""
    import shutil

    from matplotlib.backend_bases import FigureCanvasBase

    for fmt in sorted(FigureCanvasBase.get_supported_filetypes()):
        out = tmp_path / f"o.{fmt}"
        code, _, err = check_run(["show", DELTA, "--out", out])
        assert (code == 0) == out.exists(), (fmt, err)
        if fmt == "pgf" and shutil.which("xelatex") is None:
            assert code == 2 and "cannot write .pgf on this machine" in err, err
    code, _, err = check_run(["animate", DELTA, "--out", tmp_path / "a.mp4", "--frames", 1])
    assert (code == 0) == (tmp_path / "a.mp4").exists()
    from matplotlib.animation import writers

    assert (code == 0) == writers.is_available("ffmpeg"), err


# ====================================================================== 5. the rotation vector's domain
def test_rotation_vector_domain(hexapod, wrist, tmp_path):
    """|ρ| = 2π, where dexp_so3 is singular, is outside the task coordinates' domain |ρ| ≤ 2π(1 −
    1e-6): a one-line SingularityError in ik, inverse dynamics, EOM, mass matrix, forward dynamics,
    simulate and the CLI (a LinAlgError, and |ẍ| = 1e18 / 1e34 without error, before)."""
    from pkm.description.taskspace import MAX_ROTATION

    for robot, x in ((hexapod, [TWO_PI, 0, 0, 0, 0, 2.0]), (wrist, [TWO_PI, 0, 0]),
                     (wrist, [0, 4.5, -4.5]), (wrist, [1e300, 1e300, 0])):
        z = np.zeros(robot.task_dof)
        calls = [lambda: robot.inverse_kinematics(x), lambda: robot.inverse_dynamics(x, z, z),
                 lambda: robot.inverse_dynamics([z + robot.x_ref, x], [z, z], [z, z]),
                 lambda: robot.eom(x, z), lambda: robot.mass_matrix(x),
                 lambda: robot.forward_dynamics(x, z, np.zeros(robot.n_act)),
                 lambda: robot.simulate("hold", (0.0, 0.01), x0=x), lambda: robot.simulate("zero", (0.0, 0.01), x0=x),
                 lambda: robot.platform_pose(x), lambda: pkm.plotting.show_robot(robot, x)]
        for call in calls:
            assert "outside the task coordinates' domain" in _pkm_error(call, SingularityError)
        at = [str(v) for v in x]
        for argv in (["ik", robot.spec.source, "--at", *at], ["eom", robot.spec.source, "--at", *at],
                     ["simulate", robot.spec.source, "--torques", "hold", "--x0", *at, "--duration", 0.01],
                     ["show", robot.spec.source, "--at", *at, "--out", tmp_path / "o.png"]):
            _, _, err = check_run(argv, ok=False)
            assert "outside the task coordinates' domain" in err, err
    # the bound is where dexp_so3's condition number (SVD, independent of the formula) reaches 1e6
    from pkm.lie import dexp_so3
    from pkm.lie.interpret import kernel

    for theta, cond in ((MAX_ROTATION, 1e6), (TWO_PI - 1e-3, 2 * math.pi / 1e-3)):
        s = np.linalg.svd(kernel(dexp_so3)(np.array([0.0, 0.0, theta])), compute_uv=False)
        assert s[0] / s[-1] == pytest.approx(cond, rel=1e-3)
    # inside the domain, beyond π: finite results
    x = [0.0, 0.0, 4.0]
    fd = wrist.forward_dynamics(x, [0.1, 0.2, 0.3], np.zeros(3))
    assert np.all(np.isfinite(fd.xdd))
    # a trajectory that reaches it names its sample
    X = np.array([[0, 0, 6.0], [0, 0, 6.2], [0, 0, 6.3]])
    assert "x at sample 2" in _pkm_error(lambda: wrist.inverse_dynamics(X, 0 * X, 0 * X), SingularityError)


def test_rotation_vector_domain_during_a_simulation(wrist):
    """A simulation state whose rotation vector leaves the domain stops the run naming the time
    (the right-hand side of the task form, the platform pose inside its error handling)."""
    from pkm.sim.inputs import Constant
    from pkm.sim.task import TaskRhs

    rhs = TaskRhs(wrist, Constant(np.zeros(3)), None, None, None, {}, 1e4)
    assert np.all(np.isfinite(rhs(0.25, np.r_[0.0, 0.0, 6.0, 0.0, 0.0, 1.0, 0.0])))
    msg = _pkm_error(lambda: rhs(0.5, np.r_[0.0, 0.0, 6.3, 0.0, 0.0, 1.0, 0.0]), SingularityError)
    assert msg.startswith("at t = 0.5 s (x = ") and "outside the task coordinates' domain" in msg, msg


# ====================================================================== 6. the facade's keywords
def test_facade_keywords(delta):
    """Every keyword of the Robot facade takes its documented types or is one InputError
    (`progress=False` was "'bool' object is not callable"; `warm_start="no"`, `torques_only="a"` and
    misspelt forward-dynamics options were silently taken or a TypeError)."""
    x, z = [0.0, 0.0, -0.9], [0.0, 0.0, 0.0]
    for value in (None, False, lambda n: None):
        assert np.all(np.isfinite(delta.inverse_dynamics(x, z, z, progress=value).tau))
    assert delta.inverse_dynamics(x, z, z, torques_only=np.bool_(True)).shape == (1, 3)
    bad = [(lambda: delta.inverse_dynamics(x, z, z, progress=True), "progress must be"),
           (lambda: delta.inverse_dynamics(x, z, z, progress=3), "progress must be"),
           (lambda: delta.inverse_dynamics(x, z, z, torques_only="a"), "torques_only must be True or False"),
           (lambda: delta.inverse_kinematics(x, warm_start="no"), "warm_start must be True or False"),
           (lambda: delta.inverse_kinematics(x, warm_start=None), "warm_start must be True or False"),
           (lambda: delta.forward_dynamics(x, z, z, tolerance=1e-9), "unknown keyword 'tolerance'"),
           (lambda: delta.forward_dynamics(x, z, z, wrench=[1, 2]), "wrench must be finite"),
           (lambda: delta.forward_dynamics(x, z, z, wrench=[np.nan] * 6), "wrench must be finite"),
           (lambda: delta.forward_dynamics(x, z, z, gravity="down"), "gravity must be numbers"),
           (lambda: delta.forward_dynamics(x, z, z, gravity=[0, 0]), "gravity must be a finite 3-vector"),
           (lambda: delta.forward_dynamics([x, x], [z, z], [z, z, z]), "u must hold 3 finite actuator forces"),
           (lambda: delta.forward_dynamics(x, z, [[z]]), "u must hold 3 finite actuator forces"),
           (lambda: delta.forward_dynamics(x, z, z, threads=0), "threads must be"),
           (lambda: delta.forward_dynamics(x, z, z, on_branch_change="x"), "on_branch_change must be"),
           (lambda: delta.inverse_dynamics(x, z, z, gravity=[0, 0]), "gravity must be a finite 3-vector")]
    for call, message in bad:
        assert message in _pkm_error(call, InputError)


# ====================================================================== 7. overflowing results
def test_overflowing_forces_are_refused(delta, wrist):
    """Forces, wrenches or velocities whose accelerations overflow float64 are one line, never an
    inf in the result (`forward_dynamics(x_ref, 0, [1e308]*3)` returned −inf); huge inputs whose
    results stay finite may pass."""
    z = np.zeros(3)
    for robot in (delta, wrist):
        x = robot.x_ref + (0.1 if robot is wrist else 0.0)
        must = [lambda: robot.forward_dynamics(x, z, [1e308] * 3), lambda: robot.forward_dynamics(x, z, z, [1e308] * 6),
                lambda: robot.forward_dynamics(x, [1e200] * 3, z), lambda: robot.eom(x, [1e200] * 3),
                lambda: robot.inverse_dynamics(x, [1e200] * 3, z)]
        for call in must:
            msg = _pkm_error(call)
            assert "too large" in msg and not msg.startswith("xdd"), msg   # not an argument it was not given
        either = [lambda: robot.forward_dynamics(x, z, [1e308, -1e308, 0]), lambda: robot.forward_dynamics(x, z, [1e300] * 3),
                  lambda: robot.inverse_dynamics(x, z, [1e306] * 3), lambda: robot.inverse_dynamics(x, z, z, [1e308] * 6),
                  lambda: robot.inverse_dynamics(x, z, z, gravity=[1e308] * 3), lambda: robot.eom(x, [1e150] * 3),
                  lambda: robot.forward_dynamics(x, z, z, gravity=[0, 0, 1e308])]
        for call in either:
            try:
                res = call()
            except PkmError as exc:
                assert "\n" not in str(exc)
                continue
            for name in ("xdd", "tau", "M_t", "C_t_V_t", "M_a"):
                assert np.all(np.isfinite(getattr(res, name, 0.0))), name
    check_run(["eom", DELTA, "--at", 0, 0, -0.9, "--velocity", "1e200", 0, 0], ok=False)
    check_run(["eom", WRIST, "--at", 0.1, 0.1, 0.1, "--velocity", "1e200", 0, 0], ok=False)


# ====================================================================== 9. forward kinematics' tolerance
def test_fk_tolerance_is_relative_to_the_coordinates(hexapod):
    """`pkm fk hexapod --q 100 …` failed with "residual 2.842e-14" (an absolute 1e-14 on 100 m legs);
    the assembly's test is relative to the size of the coordinates, and the result gives back q by
    IK. An IK target beyond the Newton steps' reach says so (not "unreachable?")."""
    from pkm.algorithms.assembly import assemble

    import json

    for q in (100.0, 1000.0):
        _, out, _ = check_run(["fk", HEXAPOD, "--q", *[q] * 6, "--json"], ok=True)
        doc = json.loads(out)
        x = np.array(list(doc["x"].values()))
        start = [np.array(list(doc["joints"][l.name].values())) for l in hexapod.limbs]
        np.testing.assert_allclose(hexapod.inverse_kinematics(x, start=start, limits=False).q_act[0], q,
                                   rtol=1e-12)   # 100 m legs: far beyond the file's strokes
    th, C = assemble(hexapod, [2.5] * 6)
    assert abs(C[2, 3] - hexapod.platform_pose(hexapod.inverse_kinematics(hexapod.x_ref).x[0])[2, 3]) > 0.1
    msg = _pkm_error(lambda: hexapod.inverse_kinematics([0, 0, 0, 0, 0, 1000.0]))
    assert "still moving at the step limit" in msg and "unreachable" not in msg
    assert hexapod.inverse_kinematics([0, 0, 0, 0, 0, 1000.0], max_iter=2000, limits=False).q_act[0, 0] > 990


# ====================================================================== 10–12. simulation inputs
def test_simulation_output_times(delta):
    """t_eval: finite, strictly increasing, within t_span, real — `[0.001, nan]` returned rows of
    uninitialised memory."""
    for t_eval, message in (([0.001, np.nan], "t_eval[1] = nan is not a finite time"),
                            ([0.001, np.inf], "t_eval[1] = inf"), ([-0.001, 0.005], "t_eval[0] = -0.001"),
                            ([0.005, 0.02], "t_eval[1] = 0.02"), ([0.005, 0.005], "increase strictly"),
                            ([0.005, 0.001], "increase strictly"), ([0.001 + 1j], "real times"),
                            (["a"], "real times"), ([], "real times"), ([[0.001]], "real times"),
                            ([[0.001], [0.002, 0.003]], "1-D array")):
        assert message in _pkm_error(lambda: delta.simulate("hold", (0.0, 0.01), t_eval=t_eval), InputError)
    sim = delta.simulate("hold", (0.0, 0.01), t_eval=[0.0, 0.004, 0.01])
    assert sim.t.tolist() == [0.0, 0.004, 0.01] and np.all(np.isfinite(sim.x))


def test_controller_outputs(delta):
    """A controller returning complex (silently cast), bool (taken as 0/1), objects, None, a wrong
    shape or a ragged list is one line naming what it returned."""
    for value, what in ((np.array([1j, 0, 0]), "complex128 values"), (np.array([True, False, True]), "bool values"),
                        ("abc", "<U3 values"), (None, "object values"), (np.zeros((3, 1)), "shape (3, 1)"),
                        ([0.0, 0.0], "shape (2,)"), ([[0.0], [0.0, 1.0]], "object values"),
                        ([0.0, np.nan, 0.0], "NaN or inf"), (object(), "object values")):
        for form in ("task", "joint", "actuator"):
            msg = _pkm_error(lambda: delta.simulate(lambda t, x, xd: value, (0.0, 0.01), form=form))
            assert "u(t, x, xd) at t = 0 s must be 3 finite real numbers" in msg and what in msg, (form, msg)
    for u in ([True, False, True], [1j, 0, 0], "nonsense", [[0], [0, 1]]):
        _pkm_error(lambda: delta.simulate(u, (0.0, 0.01)))


def test_unknown_simulation_keywords(delta):
    """Every form refuses a keyword it does not know, naming the accepted ones (`form="joint"`
    ignored a misspelt option; the others raised a TypeError from deep inside)."""
    for form in ("task", "joint", "actuator"):
        for u in ("zero", "hold"):
            msg = _pkm_error(lambda: delta.simulate(u, (0.0, 0.01), form=form, tolerance=1e-9), InputError)
            assert "unknown keyword 'tolerance'" in msg and "rtol" in msg and "max_iter" in msg, msg
        assert "max_iter must be" in _pkm_error(lambda: delta.simulate("zero", (0.0, 0.01), form=form, max_iter=0))
    for x0, message in (([0, 0], "x0 must have 3 task coordinates"), ([0, 0, -0.9j], "x0 must be real numbers"),
                        ("abc", "x0 must be numbers"), ([0, 0, np.nan], "x0 contains NaN")):
        assert message in _pkm_error(lambda: delta.simulate("hold", (0.0, 0.01), x0=x0), InputError)


# ====================================================================== 13. topology errors name the file
def test_topology_errors_name_the_file(tmp_path):
    """"bodies not connected to the ground …" and every other TopologyError about a robot file name
    the file, as RobotFileError does (FILE: ENTRY: what), from pkm.load and on the command line."""
    src = (ROBOTS / "planar_3rpr.toml").read_text()
    cases = {"unconnected": src.replace('parent = "rod", child = "platform"', 'parent = "rod", child = "ground"'),
             "no_limb": src.replace("[limb]", "[unused]").replace("mounts = [", "xmounts = [")}
    for name, text in cases.items():
        path = tmp_path / f"{name}.toml"
        path.write_text(text)
        with pytest.raises(PkmError) as info:
            pkm.load(path)
        one_line_pkm_error(info)
        assert str(info.value).startswith(f"{path}: "), str(info.value)
        _, _, err = check_run(["info", path], ok=False)
        assert err.startswith(f"pkm: error: {path}: "), err
    with pytest.raises(TopologyError) as info:
        pkm.load(tmp_path / "unconnected.toml")
    assert info.value.path == str(tmp_path / "unconnected.toml")
    assert str(info.value) == f"{tmp_path / 'unconnected.toml'}: joints: bodies not connected to the ground 'ground': platform"


# ====================================================================== the sweep's siblings
def test_simulation_options(delta, wrist):
    """The integration options of `simulate` are checked up front: a string, a list, NaN, 0 or a
    negative rtol/atol/dt/max_step/max_condition, a non-bool `project`, a mis-shaped wrench or
    gravity reached scipy or numpy as a TypeError or ValueError deep inside (found by the fuzz)."""
    span = (0.0, 0.01)
    for name, values in {"rtol": [0, -1, np.nan, np.inf, "a", None, [1e-9], True],
                         "atol": [0, -1, np.nan, "a", None, [1e-9]],
                         "dt": [0, -1, np.nan, np.inf, "a", [0.001], 1j],
                         "max_step": [0, -1, np.nan, "a", [1.0], 1j],
                         "max_condition": [0, 0.5, np.nan, "a", None, [1e4]],
                         "project": ["no", None, 1],
                         "wrench": [{}, [1, 2], [np.nan] * 6, "a"],
                         "gravity": [{}, [0, 0], [np.inf, 0, 0], "down"]}.items():
        for value in values:
            msg = _pkm_error(lambda: delta.simulate("hold", span, **{name: value}), InputError)
            assert msg.startswith(name), (name, value, msg)
    assert "translational task spaces" in _pkm_error(lambda: wrist.simulate("hold", span, form="joint"), InputError)
    sim = delta.simulate("hold", span, rtol=np.float32(1e-8), max_step=np.inf, max_condition=np.inf, gravity=(0, 0, -9.81))
    assert np.all(np.isfinite(sim.x))


def test_more_facade_arguments(delta):
    """`pkm.workspace(threads=…)` (NaN: a ValueError from int()) and `pkm.load(check=…)` (any truthy
    value taken)."""
    for value in (0, -1, np.nan, np.inf, "a", 2.5, True, [2]):
        assert "threads must be" in _pkm_error(lambda: pkm.workspace(delta, resolution=3, threads=value), InputError)
    assert pkm.workspace(delta, resolution=3, threads=2).reachable.shape == (9,)
    for value in ("no", None, 1):
        assert "check must be True or False" in _pkm_error(lambda: pkm.load(DELTA, check=value), InputError)


def test_payload_that_overflows_the_inertia():
    """`--payload 1e308` on the hexapod: the platform's inertia overflowed ('mass matrix is not a
    rigid-body inertia', an internal error); now the robot file's one-line error, and a large but
    representable payload still runs."""
    _, _, err = check_run(["inverse-dynamics", HEXAPOD, "--payload", "1e308", "--dt", 0.5], ok=False)
    assert f"{HEXAPOD}: platform: a payload of 1e+308 kg is too large" in err, err
    check_run(["inverse-dynamics", HEXAPOD, "--payload", "1e200", "--dt", 0.5], ok=True)


def test_messages_about_six_coordinates_are_one_line(hexapod):
    """numpy wraps an array's text at 75 characters: the x of a 6-DOF robot split the errors of the
    simulation and the IK into two lines (found by the fuzz on the hexapod)."""
    from pkm.algorithms.inverse_kinematics import fmt_x
    from pkm.sim.inputs import Constant
    from pkm.sim.task import TaskRhs

    x = np.array([1.234567e-15, -2.345678e-16, 3.456789e-15, 4.567891e-16, -5.678912e-17, 2.0])
    assert "\n" not in fmt_x(x) and "\n" not in TaskRhs.where(type("R", (), {"d": 6})(), np.r_[x, x, 0.0])
    rhs = TaskRhs(hexapod, Constant(np.zeros(6)), None, None, None, {}, 1e4)
    _pkm_error(lambda: rhs(0.1, np.r_[1e-15, 2e-16, 3e-15, 4e-16, -5e-17, 1e4, np.zeros(6), 0.0]))
    _pkm_error(lambda: hexapod.inverse_dynamics([x, x + [0, 0, 0, 1e6, 0, 0]], [0 * x] * 2, [0 * x] * 2))


def test_coordinate_conversions(wrist, delta):
    """The facade's conversions between coordinate rates and the task velocity take finite vectors
    of the task's size or raise one line (a dict was a KeyError, 'a' a ValueError, a short list an
    IndexError; 1e308 rates returned inf, |ρ| = 2π a singular solve)."""
    for robot in (wrist, delta):
        x, z = robot.x_ref + 0.05, np.zeros(3)
        calls = {"platform_twist": lambda v: robot.platform_twist(x, v), "task_velocity": lambda v: robot.task_velocity(x, v),
                 "coordinate_rates": lambda v: robot.coordinate_rates(x, v),
                 "coordinate_accelerations": lambda v: robot.coordinate_accelerations(x, z, v),
                 "platform_twist xdd": lambda v: robot.platform_twist(x, z, v),
                 "coordinate_jacobian": lambda v: robot.coordinate_jacobian(v)}
        for name, call in calls.items():
            for v in ({}, "a", [1.0], [np.nan, 0, 0], None, [1j, 0, 0]):
                if (name == "coordinate_accelerations" and isinstance(v, list) and len(v) == 3 and v[0] != 1j) or \
                        (name == "platform_twist xdd" and v is None):
                    continue   # a non-finite V̇_t (the kernel's overflow) is an overflow below; xdd=None: no V̇_p
                _pkm_error(lambda: call(v), InputError)
            if name != "coordinate_jacobian":
                for v in ([1e308, 1e308, 1e308], [1e308, -1e308, 1e308], [1e300, 0.0, 1e300]):
                    try:
                        out = call(v)
                    except PkmError as exc:
                        assert "overflow" in str(exc) and "\n" not in str(exc), str(exc)
                        continue
                    assert all(np.all(np.isfinite(o)) for o in (out if isinstance(out, tuple) else [out]) if o is not None)
    for call in (lambda: wrist.coordinate_rates([TWO_PI, 0, 0], [0.1, 0, 0]),
                 lambda: wrist.coordinate_accelerations([0, 0, TWO_PI], [0.1, 0, 0], [0, 0, 0])):
        _pkm_error(call, SingularityError)
    np.testing.assert_allclose(wrist.task_velocity([0.1, 0.2, 0.3], wrist.coordinate_rates([0.1, 0.2, 0.3], [1.0, 2, 3])),
                               [1.0, 2, 3], rtol=1e-14)
