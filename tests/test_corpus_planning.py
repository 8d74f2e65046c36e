"""A hostile-input corpus for pkm's newest surfaces (the rules of tests/test_corpus.py: one-line
``pkm: error: …`` and exit 2 on the command line, a one-line :class:`pkm.PkmError` in the API, never a
traceback, a hang, a NaN/inf with exit 0 or a half-written file; and no plausible-looking wrong number):
``pkm cycle`` and :func:`pkm.time_optimal` with their paths (:mod:`pkm.planning.paths`) and
:func:`pkm.control.tracking.closed_loop_check`; ``pkm sweep --time-optimal``; ``robot.simulate_batch``;
``robot.simulate(form="actuator"|"joint", method="RK4")``; the SIMD width's environment and record.
Small grids (``--points 32``) and module-scoped robots keep it quick."""
from __future__ import annotations

import math

import numpy as np
import pytest

import pkm
from pkm.errors import InputError, PkmError

from test_corpus import check_run, one_line_pkm_error

DELTA = "examples/delta_servo.toml"
IRSBOT = "examples/irsbot2_servo.toml"
PLAIN = "robots/delta_3rr2rrr.toml"     # no drives
PTS = ("--points", "32")


def _one_line(call, kind=PkmError):
    with pytest.raises(PkmError) as info:
        call()
    one_line_pkm_error(info, kind)
    return str(info.value)


@pytest.fixture(scope="module")
def servo():
    return pkm.load(DELTA)


@pytest.fixture(scope="module")
def route(servo):
    from pkm.planning import pick_place_route

    w = np.asarray(servo.spec.trajectory["start"], dtype=float)
    return pick_place_route(w)


# ====================================================================== pkm cycle: command lines
BAD_CYCLE = [
    ["--points", "0"], ["--points", "-5"], ["--points", "15"],
    ["--start", "nan", "0", "-0.9"], ["--start", "inf", "0", "-0.9"], ["--start", "0", "0", "-0.9", "0"],
    ["--start", "1e308", "0", "-0.9"], ["--start", "0", "0", "5"], ["--start", "0", "0", "0"],
    ["--path", "line", "--end", "nan", "0", "-0.9"], ["--path", "line", "--end", "5", "0", "-0.9"],
    ["--path", "line", "--end", "1e308", "0", "-0.9"], ["--path", "line", "--end", "0", "0"],
    ["--path", "line", "--start", "0", "0", "-0.9", "--end", "0", "0", "-0.9"],
    ["--path", "line", "--start", "0", "0", "-0.9", "--end", "1e-300", "0", "-0.9"],
    ["--path", "line", "--start", "0", "0", "-0.9", "--end", "0", "0", "-0.9000000000000001"],
    ["--path", "line", "--end", "0.1", "0", "-0.9", "--travel", "0.1"],
    ["--path", "pick-place", "--end", "0.1", "0", "-0.9"],
    ["--path", "PICK-PLACE"], ["--path", ""], ["--path", "/dev/null"],
    ["--lift", "0"], ["--lift", "-0"], ["--lift", "inf"], ["--lift", "1e-300"], ["--lift", "5"],
    ["--travel", "-0.1"], ["--travel", "nan"], ["--travel", "3"], ["--travel", "1e-12"],
    ["--blend", "-0.001"], ["--blend", "nan"], ["--blend", "inf"], ["--blend", "1"],
    ["--lift", "0.01", "--blend", "0.02"],
    ["--torque-limit", "1e308"], ["--torque-limit", "1e-300"], ["--torque-limit", "inf"],
    ["--torque-limit", "-inf"], ["--torque-limit", "1", "2", "3", "4"], ["--torque-limit", "0.001"],
    ["--speed-limit", "0"], ["--speed-limit", "-1"], ["--speed-limit", "nan"], ["--speed-limit", "1e-12"],
    ["--speed-limit", "1", "2"],
    ["--jerk", "0"], ["--jerk", "-1"], ["--jerk", "nan"], ["--jerk", "inf"], ["--jerk", "1e-300"],
    ["--check", "nan"], ["--check", "-1"], ["--check", "-2"], ["--check", "inf"], ["--check", "1e308"],
    ["--out", "."], ["--out", ""], ["--plot", "."], ["--plot", "x.csv"],
    ["--points", "abc"], ["--torque-limit"], ["--start"], ["--jerk", "abc"],
]


@pytest.mark.parametrize("argv", BAD_CYCLE, ids=lambda a: " ".join(a)[:60])
def test_cycle_bad_command_lines(argv, tmp_path, monkeypatch):
    """Each hostile option alone: exit 2 with one line (or exit 0 with finite output), no file left."""
    monkeypatch.chdir(tmp_path)
    import os

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code, out, err = check_run(["cycle", os.path.join(here, DELTA), *PTS, *argv])
    assert not [p for p in tmp_path.iterdir() if p.is_file()]
    if code == 0:
        assert "cycle time" in out


PATH_FILES = {
    "header_only.csv": "x,y,z\n",
    "one_row.csv": "x,y,z\n0,0,-0.9\n",
    "duplicates.csv": "x,y,z\n0,0,-0.9\n0,0,-0.9\n0.1,0,-0.9\n",
    "all_same.csv": "x,y,z\n0,0,-0.9\n0,0,-0.9\n0,0,-0.9\n",
    "inf.csv": "x,y,z\n0,0,-0.9\ninf,0,-0.9\n",
    "huge.csv": "x,y,z\n0,0,-0.9\n1e308,0,-0.9\n",
    "overflow.csv": "x,y,z\n-1e308,0,-0.9\n1e308,0,-0.9\n",
    "tiny.csv": "x,y,z\n0,0,-0.9\n1e-300,0,-0.9\n",
    "back_and_forth.csv": "x,y,z\n0,0,-0.9\n0.1,0,-0.9\n0.05,0,-0.9\n0.15,0,-0.9\n",
    "loop.csv": "x,y,z\n0,0,-0.9\n0.1,0,-0.9\n0.1,0.1,-0.9\n0,0,-0.9\n",
    "wide.csv": "x,y,z\n0,0,-0.9,1\n0.1,0,-0.9,1\n",
    "narrow.csv": "x,y,z\n0,0\n0.1,0\n",
    "empty_cells.csv": "x,y,z\n0,,-0.9\n0.1,0,-0.9\n",
    "semicolons.csv": "x;y;z\n0;0;-0.9\n0.1;0;-0.9\n",
    "tabs.csv": "x\ty\tz\n0\t0\t-0.9\n0.1\t0\t-0.9\n",
    "quoted.csv": '"x","y","z"\n"0","0","-0.9"\n"0.1","0","-0.9"\n',
    "dup_header.csv": "x,x,y,z\n0,1,0,-0.9\n0.1,1,0,-0.9\n",
    "header_numbers.csv": "0,0,-0.9\n0.1,0,-0.9\n",
    "words.csv": "x,y,z\nzero,0,-0.9\n0.1,0,-0.9\n",
    "outside.csv": "x,y,z\n0,0,-0.9\n2,0,-0.9\n",
    "through_outside.csv": "x,y,z\n-0.05,0,-0.9\n0,0,-0.2\n0.05,0,-0.9\n",
    "nul.csv": "x,y,z\n0,0,-0.9\x00\n0.1,0,-0.9\n",
    "crlf_ok.csv": "x,y,z\r\n0,0,-0.9\r\n0.1,0,-0.9\r\n",
    "bom_ok.csv": "\ufeffx,y,z\n0,0,-0.9\n0.1,0,-0.9\n",
    "extra_column_ok.csv": "t,x,y,z\n0,0,0,-0.9\n1,0.1,0,-0.9\n",
    "near_duplicate.csv": "x,y,z\n0,0,-0.9\n0.1,0,-0.9\n0.1000000000001,0,-0.9\n0.2,0,-0.9\n",
    "huge_rows.csv": "x,y,z\n" + "".join(f"{0.1 * k / 20000:.9f},0,-0.9\n" for k in range(20001)),
}


@pytest.mark.parametrize("name", sorted(PATH_FILES))
def test_cycle_path_files(name, tmp_path):
    f = tmp_path / name
    f.write_text(PATH_FILES[name], encoding="utf-8")
    out = tmp_path / "out.csv"
    refused = name in ("dup_header.csv",   # the first of two x columns was taken
                       "back_and_forth.csv")   # x' = 0 between the spline check's samples: the reversal ran
    code, text, err = check_run(["cycle", DELTA, "--path", f, *PTS, "--out", out],
                                ok=True if name.endswith("_ok.csv") else False if refused else None)
    if code == 2:
        assert not out.exists()
        assert str(f) in err or "the path's point s = " in err, err   # the file, or where on its path


# ====================================================================== pkm cycle: other robots
@pytest.mark.parametrize("argv", [
    [PLAIN, *PTS],                                           # no drives: needs --torque-limit
    [PLAIN, *PTS, "--torque-limit", "60", "--check"],       # no drives: the check without limits
    ["robots/planar_3rpr.toml", *PTS, "--torque-limit", "100"],     # no z: no pick-place
    ["robots/planar_3rpr.toml", *PTS, "--torque-limit", "100", "--path", "line", "--end", "0.01", "0.01", "0"],
    ["robots/wrist_3rrr.toml", *PTS, "--torque-limit", "10"],
    ["robots/hexapod_6ups.toml", *PTS, "--torque-limit", "1000", "--path", "line", "--end", "0.01", "0", "0.7"],
    [IRSBOT, *PTS, "--start", "0", "0", "-0.9"],
    [IRSBOT, *PTS, "--start", "0", "1", "-0.9"],
])
def test_cycle_other_robots(argv):
    check_run(["cycle", *argv])


# ====================================================================== pkm.time_optimal and the paths: the API
def _api_cases():
    from pkm.planning import LinePath, Route

    def line():
        return LinePath([0.0, 0.0, -0.9], [0.05, 0.0, -0.9])

    return {
        "n=True": dict(n=True), "n=16.0": dict(n=16.0), "n='32'": dict(n="32"), "n=None": dict(n=None),
        "n=-1": dict(n=-1), "n=10**9": dict(n=10 ** 9),
        "torque='abc'": dict(torque_limit="abc"), "torque={}": dict(torque_limit={}), "torque=[]": dict(torque_limit=[]),
        "torque=2d": dict(torque_limit=[[3.0, 3.0, 3.0]]), "torque=True": dict(torque_limit=True),
        "torque=0": dict(torque_limit=0.0), "torque=-3": dict(torque_limit=-3.0), "torque=1e308": dict(torque_limit=1e308),
        "torque=obj": dict(torque_limit=object()), "torque=complex": dict(torque_limit=1j),
        "torque=mixed": dict(torque_limit=[3.0, -3.0, 3.0]), "torque=tiny": dict(torque_limit=1e-300),
        "speed=0": dict(speed_limit=0), "speed=inf": dict(speed_limit=math.inf), "speed=[1,nan,1]": dict(speed_limit=[1, math.nan, 1]),
        "speed=1e308": dict(speed_limit=1e308), "speed='fast'": dict(speed_limit="fast"),
        "solver=None": dict(solver=None), "solver=1": dict(solver=1), "solver=''": dict(solver=""),
        "jerk=True": dict(jerk=True), "jerk='5'": dict(jerk="5"), "jerk=[1]": dict(jerk=[1.0]), "jerk=-1": dict(jerk=-1),
        "jerk=nan": dict(jerk=math.nan), "jerk=1e-300": dict(jerk=1e-300, n=40), "jerk=1e308": dict(jerk=1e308, n=40),
        "jerk=np": dict(jerk=np.array([5.0, 6.0])),
        "path=None": dict(path=None), "path=[]": dict(path=[]),
        "path=str": dict(path="pick-place"), "path=list of str": dict(path=["a"]),
        "path=Route picks 1.5": dict(path=lambda: Route((line(),), picks=1.5)),
        "path=Route of int": dict(path=lambda: Route(3)),
        "path=line 2d": dict(path=lambda: LinePath([0.0, -0.9], [0.05, -0.9])),
        "path=line far": dict(path=lambda: LinePath([0.0, 0.0, -0.9], [3.0, 0.0, -0.9])),
        "path=line ok": dict(path=line),
        "path=Route()": dict(path=lambda: Route(())),
        "path=Route(str)": dict(path=lambda: Route(["x"])),
        "path=Route picks -1": dict(path=lambda: Route((line(),), picks=-1)),
    }


API_CASES = _api_cases()


@pytest.mark.parametrize("name", sorted(API_CASES))
def test_time_optimal_api(servo, route, name):
    kw = dict(API_CASES[name])
    path = kw.pop("path", route)
    kw.setdefault("n", 32)
    try:
        res = pkm.time_optimal(servo, path() if callable(path) else path, **kw)
    except PkmError as exc:
        assert str(exc) and "\n" not in str(exc), repr(exc)
        return
    assert np.isfinite(res.cycle_time) and res.cycle_time > 0
    assert res.picks_per_minute is None or res.picks_per_minute > 0
    assert np.all(np.isfinite(res.trajectory.x)) and np.all(np.isfinite(res.ratio))
    assert float(np.max(res.ratio)) <= 1.0 + 1e-3


PATH_CASES = {
    "line nan": lambda P: P.LinePath([0, 0, math.nan], [0, 0, 1]),
    "line str": lambda P: P.LinePath("abc", [0, 0, 1]),
    "line ragged": lambda P: P.LinePath([0, 0], [0, 0, 1]),
    "line empty": lambda P: P.LinePath([], []),
    "line None": lambda P: P.LinePath(None, None),
    "line same": lambda P: P.LinePath([1, 2, 3], [1, 2, 3]),
    "line bool": lambda P: P.LinePath([True, False], [False, True]),
    "spline one": lambda P: P.SplinePath([[0, 0, 0]]),
    "spline none": lambda P: P.SplinePath([]),
    "spline 3d": lambda P: P.SplinePath(np.zeros((2, 2, 2))),
    "spline same": lambda P: P.SplinePath([[0, 0], [0, 0], [1, 1]]),
    "spline reverse": lambda P: P.SplinePath([[0.0], [1.0], [0.5]]),
    "spline tiny": lambda P: P.SplinePath([[0.0, 0.0], [1e-300, 0.0]]),
    "spline denormal": lambda P: P.SplinePath([[0.0, 0.0], [5e-324, 0.0]]),
    "spline mixed scale": lambda P: P.SplinePath([[0.0, 0.0], [1e-14, 0.0], [1e3, 0.0]]),
    "blend nan": lambda P: P.BlendedPolyline([[0, 0], [1, 0], [1, 1]], math.nan),
    "blend 0": lambda P: P.BlendedPolyline([[0, 0], [1, 0], [1, 1]], 0.0),
    "blend str": lambda P: P.BlendedPolyline([[0, 0], [1, 0], [1, 1]], "a"),
    "blend None": lambda P: P.BlendedPolyline([[0, 0], [1, 0], [1, 1]], None),
    "blend too long": lambda P: P.BlendedPolyline([[0, 0], [1, 0], [1, 1]], 0.9),
    "blend reversal": lambda P: P.BlendedPolyline([[0, 0], [1, 0], [0, 0]], 0.1),
    "blend huge": lambda P: P.BlendedPolyline([[0, 0], [1e200, 0], [1e200, 1e200]], 1.0),
    "blend two points": lambda P: P.BlendedPolyline([[0, 0], [1, 0]], 0.1),
    "pp lift str": lambda P: P.pick_place_route([0, 0, -0.9], lift="a"),
    "pp lift bool": lambda P: P.pick_place_route([0, 0, -0.9], lift=True),
    "pp lift None": lambda P: P.pick_place_route([0, 0, -0.9], lift=None),
    "pp travel list": lambda P: P.pick_place_route([0, 0, -0.9], travel=[0.1, 0.2]),
    "pp axis 5": lambda P: P.pick_place_route([0, 0, -0.9], vertical_axis=5),
    "pp axis float": lambda P: P.pick_place_route([0, 0, -0.9], vertical_axis=1.5),
    "pp axis str": lambda P: P.pick_place_route([0, 0, -0.9], vertical_axis="z"),
    "pp horiz same": lambda P: P.pick_place_route([0, 0, -0.9], horizontal_axis=2),
    "pp horiz float": lambda P: P.pick_place_route([0, 0, -0.9], horizontal_axis=0.5),
    "pp one coordinate": lambda P: P.pick_place_route([0.5]),
    "pp scalar": lambda P: P.pick_place_route(0.5),
    "pp start nan": lambda P: P.pick_place_route([0, math.nan, -0.9]),
    "route_of None": lambda P: P.route_of_trajectory(None, ["x", "y", "z"]),
    "route_of sine": lambda P: P.route_of_trajectory({"type": "sine"}, ["x", "y", "z"]),
    "route_of no start": lambda P: P.route_of_trajectory({"type": "line", "end": [0, 0, -0.9]}, ["x", "y", "z"]),
    "route_of no lift": lambda P: P.route_of_trajectory({"type": "pick-place", "start": [0, 0, -0.9], "travel": 0.1}, ["x", "y", "z"]),
    "route_of travel str": lambda P: P.route_of_trajectory({"type": "pick-place", "start": [0, 0, -0.9], "travel": "x",
                                                            "lift": 0.02}, ["x", "y", "z"]),
    "route_of travel vec": lambda P: P.route_of_trajectory({"type": "pick-place", "start": [0, 0, -0.9],
                                                            "travel": [0, 0.1, 0], "lift": 0.02}, ["x", "y", "z"]),
    "route_of start 2": lambda P: P.route_of_trajectory({"type": "line", "start": [0, 0], "end": [0, 0, -0.9]}, ["x", "y", "z"]),
    "route_of no z": lambda P: P.route_of_trajectory({"type": "pick-place", "start": [0, 0, -0.9], "travel": 0.1,
                                                      "lift": 0.02}, ["x", "y", "phi"]),
    "route_of names None": lambda P: P.route_of_trajectory({"type": "line", "start": [0, 0, -0.9], "end": [0.1, 0, -0.9]}, None),
    "read_path_csv names None": lambda P: P.read_path_csv("examples/delta_servo.toml", None),
    "read_path_csv missing": lambda P: P.read_path_csv("no/such.csv", ["x"]),
    "read_path_csv dir": lambda P: P.read_path_csv("tests", ["x"]),
    "read_path_csv names empty": lambda P: P.read_path_csv("examples/delta_servo.toml", []),
    "evaluate outside": lambda P: P.LinePath([0, 0], [1, 0]).evaluate([2.0]),
    "evaluate nan": lambda P: P.LinePath([0, 0], [1, 0]).evaluate([math.nan]),
    "evaluate str": lambda P: P.LinePath([0, 0], [1, 0]).evaluate("a"),
    "evaluate 2d": lambda P: P.LinePath([0, 0], [1, 0]).evaluate([[0.1, 0.2]]),
    "reversed": lambda P: P.ReversedPath(P.LinePath([0, 0], [1, 0])).evaluate([2.0]),
}


@pytest.mark.parametrize("name", sorted(PATH_CASES))
def test_paths_api(name):
    import pkm.planning as P

    try:
        out = PATH_CASES[name](P)
    except PkmError as exc:
        assert isinstance(exc, InputError) and str(exc) and "\n" not in str(exc), repr(exc)
        return
    if isinstance(out, P.Path):
        assert math.isfinite(out.length) and out.length > 0
        x, d1, d2 = out.evaluate(np.linspace(0.0, out.length, 33))
        assert np.all(np.isfinite(x)) and np.all(np.isfinite(d1)) and np.all(np.isfinite(d2))
        assert np.all(np.linalg.norm(d1, axis=1) > 0)
    elif isinstance(out, P.Route):
        assert out.paths and all(isinstance(p, P.Path) and math.isfinite(p.length) and p.length > 0 for p in out.paths)
    elif isinstance(out, tuple):
        assert all(np.all(np.isfinite(v)) for v in out)


# ====================================================================== closed_loop_check
@pytest.fixture(scope="module")
def short(servo):
    from pkm.planning import LinePath

    return pkm.time_optimal(servo, LinePath([0.0, 0.0, -0.9], [0.02, 0.0, -0.9]), n=32).trajectory


CHECK_CASES = {
    "model_error str": dict(model_error="a"), "model_error None": dict(model_error=None),
    "model_error -1": dict(model_error=-1.0), "model_error nan": dict(model_error=math.nan),
    "model_error list": dict(model_error=[0.1, 0.2]), "model_error 1e308": dict(model_error=1e308),
    "model_error bool": dict(model_error=True),
    "kp nan": dict(kp=math.nan), "kp -1": dict(kp=-1.0), "kp str": dict(kp="a"), "kp 0": dict(kp=0.0),
    "kp inf": dict(kp=math.inf), "kd -1": dict(kd=-1.0), "kd nan": dict(kd=math.nan),
    "torque str": dict(torque_limit="a"), "torque nan": dict(torque_limit=math.nan),
    "torque 2": dict(torque_limit=[1.0, 2.0]), "torque 0": dict(torque_limit=0.0), "torque obj": dict(torque_limit=object()),
    "speed -1": dict(speed_limit=-1.0), "speed str": dict(speed_limit="x"),
    "method bad": dict(method="euler"), "rtol nan": dict(rtol=math.nan), "rtol -1": dict(rtol=-1.0),
    "rtol str": dict(rtol="x"), "RK4 no dt": dict(method="RK4"), "RK4 dt -1": dict(method="RK4", dt=-1.0),
    "RK4 dt huge": dict(method="RK4", dt=1e9),
    "trajectory None": dict(trajectory=None), "trajectory str": dict(trajectory="cycle.csv"),
}


@pytest.mark.parametrize("name", sorted(CHECK_CASES))
def test_closed_loop_check_api(servo, short, name):
    from pkm.control.tracking import closed_loop_check

    kw = dict(CHECK_CASES[name])
    traj = kw.pop("trajectory", short)
    try:
        rep = closed_loop_check(servo, traj, **kw)
    except PkmError as exc:
        assert str(exc) and "\n" not in str(exc), repr(exc)
        return
    assert np.all(np.isfinite(rep.x)) and np.all(np.isfinite(rep.max_error))


# ====================================================================== robot.simulate_batch
@pytest.fixture(scope="module")
def plain():
    return pkm.load(PLAIN)


def _batch_cases():
    from pkm.sim.inputs import Table

    x = [0.0, 0.0, -0.9]
    t = np.linspace(0.0, 0.01, 5)
    return {
        "span reversed": dict(t_span=(0.01, 0.0)), "span equal": dict(t_span=(0.01, 0.01)),
        "span nan": dict(t_span=(np.nan, 0.01)), "span str": dict(t_span="0 1"), "span 3": dict(t_span=(0, 1, 2)),
        "span None": dict(t_span=None), "steps lost": dict(t_span=(1e16, 1e16 + 10), dt=1.0), "span inf": dict(t_span=(0.0, np.inf)), "span huge": dict(t_span=(0.0, 1e308)),
        "span negative": dict(t_span=(-0.01, 0.0)), "span complex": dict(t_span=(0.0, 0.01j)),
        "dt 0": dict(dt=0.0), "dt nan": dict(dt=np.nan), "dt inf": dict(dt=np.inf), "dt str": dict(dt="1e-3"),
        "dt > span": dict(dt=1.0), "dt tiny": dict(dt=1e-300), "dt bool": dict(dt=True), "dt np": dict(dt=np.float32(1e-3)),
        "dt array": dict(dt=np.array([1e-3])),
        "every > steps": dict(every=10 ** 6), "every huge": dict(every=10 ** 30), "every -1": dict(every=-1),
        "every np": dict(every=np.int64(2)), "every None": dict(every=None),
        "threads -1": dict(threads=-1), "threads huge": dict(threads=10 ** 9), "threads float": dict(threads=2.0),
        "threads str": dict(threads="2"), "threads np": dict(threads=np.int64(2)),
        "x0 member shape": dict(x0=[[0.0, 0.0, -0.9], [0.0, 0.0]]), "x0 4": dict(x0=[0.0, 0.0, -0.9, 0.0]),
        "x0 (2,4)": dict(x0=np.zeros((2, 4))), "x0 empty": dict(x0=np.zeros((0, 3))), "x0 str": dict(x0="home"),
        "x0 inf": dict(x0=[0.0, np.inf, -0.9]), "x0 out of reach": dict(x0=[[0.0, 0.0, -0.9], [0.0, 0.0, 3.0]]),
        "x0 complex": dict(x0=[0.0, 0.0, -0.9j]),
        "xd0 huge": dict(xd0=[1e308, 0.0, 0.0]), "xd0 nan member": dict(xd0=[[0.0, 0.0, 0.0], [np.nan, 0.0, 0.0]], x0=[x, x]),
        "u table n_act 2": dict(u=Table(t, np.zeros((5, 2)))), "u table short": dict(u=Table(t[:3], np.zeros((3, 3)))),
        "u table late": dict(u=Table(t + 0.005, np.zeros((5, 3)))), "u table huge": dict(u=Table(t, np.full((5, 3), 1e308))),
        "u table list": dict(u=[Table(t, np.zeros((5, 3))), Table(t, np.zeros((5, 2)))]),
        "u 1e308": dict(u=1e308), "u -1e308": dict(u=[-1e308, 0.0, 0.0]), "u nan": dict(u=np.nan),
        "u 4": dict(u=[0.0, 0.0, 0.0, 0.0]), "u (2,4)": dict(u=np.zeros((2, 4))), "u str": dict(u="hover"),
        "u csv missing": dict(u="no_such.csv"), "u None": dict(u=None), "u empty list": dict(u=[]),
        "u list of None": dict(u=[None, None]), "u ragged": dict(u=[[0.0, 0.0, 0.0], [0.0, 0.0]]),
        "u 3d": dict(u=np.zeros((2, 3, 1))), "u dict": dict(u={"a": 1}), "u bool": dict(u=True),
        "payloads -1": dict(payloads=-1.0), "payloads nan": dict(payloads=[np.nan]), "payloads 1e308": dict(payloads=1e308),
        "payloads 2d": dict(payloads=[[1.0, 2.0]]), "payloads str": dict(payloads="heavy"), "payloads empty": dict(payloads=[]),
        "payloads B": dict(payloads=[0.0, 0.5], x0=[x, x, x]),
        "robots None list": dict(robots=[None]), "robots str": dict(robots="delta"), "robots gen": dict(robots=iter([])),
        "gravity 2": dict(gravity=[0.0, -9.81]), "gravity str": dict(gravity="down"), "gravity 1e308": dict(gravity=[0, 0, 1e308]),
        "gravity 6": dict(gravity=np.zeros(6)),
        "limits str": dict(limits="yes"), "limits None": dict(limits=None),
        "max_condition nan": dict(max_condition=np.nan), "max_condition 0.5": dict(max_condition=0.5),
        "max_condition str": dict(max_condition="1e6"), "max_condition inf": dict(max_condition=np.inf),
        "max_iter 0": dict(max_iter=0), "max_iter str": dict(max_iter="a"), "tol nan": dict(tol=np.nan),
        "tol -1": dict(tol=-1.0), "singularity_threshold 0": dict(singularity_threshold=0.0),
        "threads kw solver": dict(threads=1, max_iter=5),
        "start bad shape": dict(start=[np.zeros(2)]), "start nan": dict(start=[np.full(8, np.nan)] * 3),
        "progress 3": dict(progress=3),
    }


BATCH_CASES = _batch_cases()


@pytest.mark.parametrize("name", sorted(BATCH_CASES))
def test_simulate_batch_inputs(plain, name):
    kw = dict(u="hold", t_span=(0.0, 0.01), x0=None, dt=1e-3, threads=1)
    kw.update(BATCH_CASES[name])
    u, span, x0 = kw.pop("u"), kw.pop("t_span"), kw.pop("x0")
    if name.startswith("u table n_act") or name == "u table list":   # a table's columns are the actuators
        refused = True
    else:
        refused = False
    try:
        res = plain.simulate_batch(u, span, x0, **kw)
    except PkmError as exc:
        assert str(exc) and "\n" not in str(exc), repr(exc)
        return
    assert not refused, "a table of 2 columns for 3 actuators ran"
    ok = res.status == "ok"
    assert np.all(np.diff(res.t) > 0), res.t   # distinct output times (t0 + k·dt resolved)
    assert np.all(np.isfinite(res.t)) and res.t[0] == span[0] and res.t[-1] == pytest.approx(span[1], abs=1e-12)
    assert np.all(np.isfinite(res.x[ok])) and np.all(np.isfinite(res.energy_error[ok]))
    assert all(m == "" for m, s in zip(res.message, res.status) if s == "ok")
    assert all(m and "\n" not in m for m, s in zip(res.message, res.status) if s != "ok")


@pytest.mark.parametrize("path", ["robots/delta_4rr2rrr.toml", "robots/hexapod_6ups.toml",
                                  "robots/planar_3rpr.toml"])
def test_simulate_batch_other_robots(path):
    """A redundant robot, joint friction (added below), a 6-DOF task space: run or refused in one line."""
    robot = pkm.load(path)
    try:
        res = robot.simulate_batch("hold", (0.0, 0.004), dt=1e-3, threads=1)
    except PkmError as exc:
        assert isinstance(exc, InputError) and "\n" not in str(exc), repr(exc)
        return
    assert np.all(np.isfinite(res.x[res.status == "ok"]))
    one = robot.simulate("hold", (0.0, 0.004), method="RK4", form="task", dt=1e-3)
    assert np.array_equal(res.x[0], one.x)   # the batch is the single run, redundant actuation too


def test_simulate_batch_joint_friction(tmp_path):
    text = open(PLAIN).read()
    assert text.count('name = "2"\n') >= 1
    f = tmp_path / "friction.toml"
    f.write_text(text.replace('name = "2"\n', 'name = "2"\nfriction = { viscous = 0.01 }\n', 1))
    robot = pkm.load(f)
    msg = _one_line(lambda: robot.simulate_batch("hold", (0.0, 0.004), dt=1e-3, threads=1), InputError)
    assert "friction" in msg


# ====================================================================== robot.simulate(form=..., method="RK4")
def _rk4_cases():
    from pkm.sim.inputs import Table

    t = np.linspace(0.0, 0.01, 5)
    return {
        "dt 0": dict(dt=0.0), "dt -1": dict(dt=-1e-3), "dt nan": dict(dt=np.nan), "dt inf": dict(dt=np.inf),
        "dt None": dict(dt=None), "dt str": dict(dt="1e-3"), "dt > span": dict(dt=1.0), "dt 1e-300": dict(dt=1e-300),
        "dt bool": dict(dt=True), "dt array": dict(dt=np.array([1e-3])), "dt complex": dict(dt=1e-3j),
        "span reversed": dict(t_span=(0.01, 0.0)), "span equal": dict(t_span=(0.0, 0.0)), "span nan": dict(t_span=(0.0, np.nan)),
        "span huge": dict(t_span=(0.0, 1e308)), "span 1e300 offset": dict(t_span=(1e300, 1e300 + 1e290)),
        "span lost": dict(t_span=(1e10, 1e10 + 1e-7)), "steps lost": dict(t_span=(1e16, 1e16 + 10), dt=1.0),
        "steps rounded": dict(t_span=(1e13, 1e13 + 0.01), dt=1e-3),
        "table n_act 2": dict(u=Table(t, np.zeros((5, 2)))), "table late": dict(u=Table(t + 0.005, np.zeros((5, 3)))),
        "table huge": dict(u=Table(t, np.full((5, 3), 1e308))), "u 1e308": dict(u=1e308), "u -1e200": dict(u=-1e200),
        "u 4": dict(u=[0.0, 0.0, 0.0, 0.0]), "x0 out of reach": dict(x0=[0.0, 0.0, 3.0]), "xd0 1e200": dict(xd0=[1e200, 0, 0]),
        "max_condition nan": dict(max_condition=np.nan), "max_condition 0": dict(max_condition=0.0),
        "t_eval": dict(t_eval=[0.0, 0.01]), "project str": dict(project="no"), "rtol": dict(rtol=1e-3),
        "progress 3": dict(progress=3),
    }


RK4_CASES = _rk4_cases()


@pytest.mark.parametrize("form", ["actuator", "joint", "task"])
@pytest.mark.parametrize("name", sorted(RK4_CASES))
def test_simulate_rk4_forms(plain, form, name):
    kw = dict(u="hold", t_span=(0.0, 0.01), dt=2e-3)
    kw.update(RK4_CASES[name])
    u, span = kw.pop("u"), kw.pop("t_span")
    if name == "project str" and form != "joint":
        return
    try:
        res = plain.simulate(u, span, method="RK4", form=form, **kw)
    except PkmError as exc:
        assert str(exc) and "\n" not in str(exc), repr(exc)
        return
    for k in ("t", "x", "xd", "tau"):
        assert np.all(np.isfinite(getattr(res, k))), k
    steps = np.diff(res.t)   # every step dt (the last one shortened to end at t1): t0 + k·dt resolved
    assert np.all(steps > 0) and np.allclose(steps[:-1], kw.get("dt", 2e-3), rtol=1e-6), steps


# ====================================================================== the SIMD width: environment and record
@pytest.fixture
def fresh_width(monkeypatch, tmp_path):
    """No override and no choice made in this process; the record in a temporary cache directory; an AVX-512
    target whose measurement (which would compile) is replaced by W = 8 twice W = 4's speed."""
    from pkm.kernels import simd_width as sw

    for name in sw.ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(sw, "_chosen", [])
    monkeypatch.setattr(sw, "target_lanes", lambda: 8)
    monkeypatch.setattr(sw, "measure", lambda widths: {4: 1e-7, 8: 0.5e-7})
    return sw, tmp_path


@pytest.mark.parametrize("value", [" 8", "8 ", "8.0", "-1", "", "  ", "abc", "0", "16", "4\n", "0x8", "８", "8,4"])
@pytest.mark.parametrize("name", ["PKM_SIMD_LANES", "PKM_SIMD_WIDTH"])
def test_simd_width_environment(fresh_width, monkeypatch, name, value):
    """A junk width in the environment: one line naming the variable and what it takes, or a width the
    SIMD path compiles for (an int, not a float)."""
    sw, _ = fresh_width
    monkeypatch.setenv(name, value)
    try:
        w = sw.simd_width()
    except PkmError as exc:
        assert isinstance(exc, InputError) and name in str(exc) and "2, 4 or 8" in str(exc) and "\n" not in str(exc)
        return
    assert type(w) is int and w in sw.WIDTHS


RECORDS = {
    "empty": "", "truncated": '{"a": ', "list": "[]", "null": "null", "number": "8", "binary": b"\xff\xfe\x00",
    "entry list": lambda key: {key: []}, "entry str": lambda key: {key: "8"},
    "lanes str": lambda key: {key: {"lanes": "8", "lanes_general": "8"}},
    "lanes float": lambda key: {key: {"lanes": 8.0, "lanes_general": 4.0}},
    "lanes bool": lambda key: {key: {"lanes": True, "lanes_general": True}},
    "lanes 16": lambda key: {key: {"lanes": 16, "lanes_general": 16}},
    "lanes missing": lambda key: {key: {"lanes": 4}},
    "directory": None,
}


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_simd_width_corrupted_record(fresh_width, name):
    """A corrupted simd-width.json: measured again (or its valid entry used), an int width, the record
    rewritten whole (never a temporary file left beside it)."""
    import json

    sw, cache = fresh_width
    rec = cache / sw.FILE
    value = RECORDS[name]
    if value is None:
        rec.mkdir()
    elif callable(value):
        rec.write_text(json.dumps(value(sw.machine_key())))
    elif isinstance(value, bytes):
        rec.write_bytes(value)
    else:
        rec.write_text(value)
    w, wg = sw.simd_width(), sw.simd_width(True)
    assert type(w) is int and type(wg) is int and w in sw.WIDTHS and wg in sw.WIDTHS
    # no temporary file left (the lock file the width is measured under stays: pkm.kernels.simd_width._exclusive)
    assert sorted(p.name for p in cache.iterdir() if p.name != sw.FILE + ".lock") == [sw.FILE]
    if rec.is_file():
        entry = json.loads(rec.read_text())[sw.machine_key()]
        assert type(entry["lanes"]) is int and type(entry["lanes_general"]) is int


def test_numba_cache_dir_is_a_file(tmp_path):
    """NUMBA_CACHE_DIR naming a file: the SIMD width is chosen (measured, not recorded), no error."""
    import subprocess
    import sys

    f = tmp_path / "cache"
    f.write_text("not a directory")
    env = dict(__import__("os").environ, NUMBA_CACHE_DIR=str(f), PKM_SIMD_LANES="")
    code = ("from pkm.kernels import simd_width as sw\nsw.target_lanes = lambda: 8\n"
            "sw.measure = lambda widths: {4: 1e-7, 8: 0.5e-7}\nprint(sw.simd_width(), sw.simd_width(True))")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.split() == ["8", "8"], proc.stderr[-2000:]
    assert f.read_text() == "not a directory"


# ====================================================================== pkm sweep --time-optimal, pkm.sweep(time_optimal=True)
SWEEP = ["sweep", DELTA, "--workers", "1", "--no-progress", "--time-optimal"]


@pytest.mark.parametrize("argv", [
    ["--param", "a=250"],                                    # runs: one design
    ["--param", "a=10"], ["--param", "a=1e6"], ["--param", "mass:platform=1e308"], ["--param", "mass:platform=-1"],
    ["--param", "mass:platform=0"], ["--param", "a=250", "--trajectory", "pick-place", "--lift", "0"], ["--param", "a=250", "--trajectory", "pick-place", "--travel", "-0.1"],
    ["--param", "a=250", "--trajectory", "pick-place", "--travel", "0"], ["--param", "a=250", "--trajectory", "pick-place", "--travel", "1e308"], ["--param", "a=250", "--trajectory", "pick-place", "--lift", "5"],
    ["--param", "a=250", "--cycle-time", "1e-300"], ["--param", "a=250", "--cycle-time", "nan"],
])
def test_sweep_time_optimal_command_lines(argv, tmp_path):
    """A sweep with cycle times: exit 2 with one line, or exit 0 where every number printed or written is
    finite (a failed point's cycle time an empty cell, never 'nan'), and a point's failure in its row."""
    from test_corpus import assert_finite_csv

    out = tmp_path / "s.csv"
    code, text, err = check_run([*SWEEP, *argv, "--out", out])
    if code == 0:
        assert_finite_csv(out)
    else:
        assert not out.exists()


def test_sweep_time_optimal_needs_drives_and_paths(tmp_path):
    code, _, err = check_run(["sweep", PLAIN, "--workers", "1", "--no-progress", "--time-optimal", "--param", "a=250"],
                             ok=False)
    assert "peak_torque" in err


@pytest.mark.parametrize("kw", [dict(time_optimal="no"), dict(time_optimal=1),
                                dict(time_optimal=True, cycle_points=16.0), dict(time_optimal=True, cycle_points=True),
                                dict(time_optimal=True, cycle_points=10 ** 9), dict(time_optimal=True, cycle_points=15),
                                dict(time_optimal=True, cycle_points="100"), dict(cycle_points=20),
                                dict(time_optimal=True, trajectories=[{"type": "sine"}]),
                                dict(time_optimal=True, trajectories=[{"type": "pick-place", "lift": 0.0}]),
                                dict(time_optimal=True, trajectories=[{"type": "pick-place", "travel": -0.1}]),
                                dict(time_optimal=True, trajectories=[{"type": "line", "start": [0, 0, -0.9]}])],
                         ids=repr)
def test_sweep_time_optimal_api(kw):
    """Wrong types and values of the sweep's time-optimal options: one line before any point runs (a
    string 'no' was taken as True, cycle_points without time_optimal was ignored, a lift or travel that
    no pick-place route takes failed every point alike)."""
    kw = dict(kw)
    trajectories = kw.pop("trajectories", None)
    with pytest.raises(PkmError) as info:
        pkm.sweep(DELTA, {"a": [250.0]}, trajectories, workers=1, progress=False, **kw)
    one_line_pkm_error(info)


# ====================================================================== plausibility: no silently dropped motion
def test_a_line_along_an_axis_the_task_does_not_control_is_refused():
    """The IRSBot-2's task is x, z: a line from world Y 0 to 0.3 was run as the line without its Y motion
    (a cycle time of another path); pkm.trajectory.from_spec refuses it, and so do pkm cycle and the sweeps'
    routes now. A world Y held (any offset, the same at both ends) stays accepted."""
    from pkm.planning import route_of_trajectory

    code, _, err = check_run(["cycle", IRSBOT, *PTS, "--path", "line", "--start", "0", "0", "-0.9",
                              "--end", "0.05", "0.3", "-0.9"], ok=False)
    assert "world Y" in err
    check_run(["cycle", IRSBOT, *PTS, "--path", "line", "--end", "0.05", "0.3", "-0.9"], ok=False)   # the file's start
    check_run(["cycle", IRSBOT, *PTS, "--path", "line", "--start", "0", "0", "-0.9", "--end", "0.05", "0", "-0.9"], ok=True)
    with pytest.raises(InputError, match="world y"):
        route_of_trajectory({"type": "line", "start": [0, 0, -0.9], "end": [0.05, 0.3, -0.9]}, ["x", "z"])
    assert route_of_trajectory({"type": "line", "start": [0, 0.2, -0.9], "end": [0.05, 0.2, -0.9]}, ["x", "z"]).paths


def test_a_line_lost_in_rounding_is_refused():
    """A line of 1e-16 m at 0.9 m from the origin: refused as no motion, not blamed on 'unrealistic limits'."""
    from pkm.planning import LinePath

    with pytest.raises(InputError, match="lost against"):
        LinePath([0.0, 0.0, -0.9], [1e-16, 0.0, -0.9])
    code, _, err = check_run(["cycle", DELTA, *PTS, "--path", "line", "--start", "0", "0", "-0.9",
                              "--end", "0", "0", "-0.9000000000000001"], ok=False)
    assert "lost against" in err



def test_simulate_batch_outputs_beyond_memory_are_refused(plain):
    """200 000 members × 10 001 kept outputs are 224 GiB: refused in one line naming the remedy (every), before
    anything is allocated, not a MemoryError (or the machine swapping) from the result's arrays."""
    msg = _one_line(lambda: plain.simulate_batch("zero", (0.0, 10.0), dt=1e-3, payloads=np.zeros(200_000), threads=1),
                    InputError)
    assert "GiB" in msg and "every" in msg
    res = plain.simulate_batch("zero", (0.0, 0.002), dt=1e-3, payloads=np.zeros(3), threads=1)
    assert res.x.shape == (3, 3, 3)


# ====================================================================== outputs over inputs
@pytest.mark.parametrize("argv", [
    ["cycle", "{robot}", *PTS, "--out", "{robot}"],
    ["cycle", "{robot}", *PTS, "--plot", "{robot}"],
    ["cycle", "{robot}", *PTS, "--path", "{csv}", "--out", "{csv}"],
    ["cycle", "{robot}", *PTS, "--path", "{csv}", "--out", "{dir}/./p.csv"],
    ["sweep", "{robot}", "--param", "a=250", "--workers", "1", "--no-progress", "--out", "{robot}"],
    ["inverse-dynamics", "{robot}", "--out", "{robot}"],
    ["inverse-dynamics", "{robot}", "--trajectory", "file", "--file", "{traj}", "--out", "{traj}"],
    ["simulate", "{robot}", "--torques", "{torques}", "--duration", "0.01", "--out", "{torques}"],
])
def test_an_output_never_overwrites_an_input(argv, tmp_path):
    """--out/--plot naming the robot file or another file the command reads: refused before any work (the
    robot file was replaced by the cycle's CSV at the end of a successful run)."""
    import shutil

    robot = tmp_path / "r.toml"
    shutil.copy(DELTA, robot)
    csv = tmp_path / "p.csv"
    csv.write_text("x,y,z\n0,0,-0.9\n0.1,0,-0.9\n")
    traj = tmp_path / "t.csv"
    traj.write_text("t,x,y,z\n0,0,0,-0.9\n0.1,0.01,0,-0.9\n0.2,0.02,0,-0.9\n0.3,0.03,0,-0.9\n")
    torques = tmp_path / "u.csv"
    torques.write_text("t,tau_limb1/1,tau_limb2/1,tau_limb3/1\n0,0,0,0\n0.01,0,0,0\n")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    args = [a.format(robot=robot, csv=csv, dir=tmp_path, traj=traj, torques=torques) for a in argv]
    code, _, err = check_run(args, ok=False)
    assert "would overwrite" in err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_the_robot_argument_of_the_new_functions(servo, short):
    """A path where a Robot is expected (time_optimal, closed_loop_check) or a Robot where a path is (sweep):
    one line saying what to pass (an AttributeError / TypeError from inside)."""
    from pkm.control.tracking import closed_loop_check
    from pkm.planning import LinePath

    line = LinePath([0.0, 0.0, -0.9], [0.02, 0.0, -0.9])
    for robot in (DELTA, None, 3):
        assert "pkm.load" in _one_line(lambda: pkm.time_optimal(robot, line, n=32), InputError)
        assert "pkm.load" in _one_line(lambda: closed_loop_check(robot, short), InputError)
    assert "delta_servo.toml" in _one_line(lambda: pkm.sweep(servo, {"a": [250.0]}, workers=1, progress=False))
