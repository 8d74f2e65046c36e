"""Task-space trajectories (pkm.trajectory): analytic derivatives, the pick-and-place cycle's
continuity up to jerk, the paper's sine motion, the CSV format and the robot files' defaults."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pkm.description.robotfile import load_spec
from pkm.trajectory import (
    SEPTIC_PEAK_ACCELERATION,
    Trajectory,
    from_spec,
    line,
    pick_place,
    pick_place_segments,
    read_csv,
    sine,
)

from conftest import ROBOTS, TESTS

DELTA = ROBOTS / "delta_3rr2rrr.toml"
IRSBOT = ROBOTS / "irsbot2.toml"
OK = TESTS / "robots_ok"

START3 = np.array([0.03, -0.02, -0.9])
START2 = np.array([0.03, -0.9])


# ====================================================================== helpers
def scale(a: np.ndarray) -> float:
    return float(np.abs(a).max())


def assert_analytic_derivatives(make, times, duration: float):
    """xd and xdd equal central differences of x and xd at ``times`` (≤ 1e-6 of their scale).

    ``make(times=...)`` evaluates the generator at arbitrary times.
    """
    h = 1e-6 * duration
    tr, lo, hi = make(times=times), make(times=times - h), make(times=times + h)
    fd_v = (hi.x - lo.x) / (2 * h)
    fd_a = (hi.xd - lo.xd) / (2 * h)
    full = make(times=np.linspace(0.0, duration, 2001))
    v_scale, a_scale = scale(full.xd), scale(full.xdd)
    assert v_scale > 0 and a_scale > 0
    np.testing.assert_allclose(tr.xd, fd_v, rtol=0, atol=1e-6 * v_scale)
    np.testing.assert_allclose(tr.xdd, fd_a, rtol=0, atol=1e-6 * a_scale)


def interior_times(windows, per_window=25, margin=1e-3, seed=0) -> np.ndarray:
    """Random times strictly inside each window ``(t0, t1)``, away from its ends."""
    rng = np.random.default_rng(seed)
    out = [t0 + (t1 - t0) * rng.uniform(margin, 1 - margin, per_window) for t0, t1 in windows]
    return np.sort(np.concatenate(out))


def one_sided_jerks(make, tj: float, h: float):
    """(xdd(tj) − xdd(tj − h))/h and (xdd(tj + h) − xdd(tj))/h."""
    tr = make(times=np.array([tj - h, tj, tj + h]))
    return (tr.xdd[1] - tr.xdd[0]) / h, (tr.xdd[2] - tr.xdd[1]) / h


def jerk_scale(make, duration: float) -> float:
    tr = make(times=np.linspace(0.0, duration, 4001))
    return scale(np.diff(tr.xdd, axis=0) / np.diff(tr.t)[:, None])


# ====================================================================== analytic derivatives
def test_sine_derivatives_are_analytic():
    make = lambda times: sine([0.0, 0.0, -0.94], [0.3, 0.4, 0.1], period=10.0, duration=10.0, times=times)
    assert_analytic_derivatives(make, np.linspace(0.05, 9.95, 97), 10.0)


def test_line_derivatives_are_analytic():
    make = lambda times: line([0.1, -0.2, -0.9], [-0.15, 0.05, -0.8], duration=0.7, times=times)
    assert_analytic_derivatives(make, interior_times([(0.0, 0.7)], 50), 0.7)


@pytest.mark.parametrize("blend", [0.0, 0.4, 1.0])
def test_pick_place_derivatives_are_analytic(blend):
    args = (START3, 0.025, [0.305, 0.08], 0.9)
    make = lambda times: pick_place(*args, blend=blend, times=times)
    segs = pick_place_segments(*args, blend=blend)
    # inside every move, away from every window boundary (where the 4th derivative jumps)
    edges = np.unique([t for s in segs for t in (s.t0, s.t1)])
    assert_analytic_derivatives(make, interior_times(zip(edges[:-1], edges[1:]), 15), 0.9)


def test_pick_place_planar_derivatives_are_analytic():
    make = lambda times: pick_place(START2, 0.025, 0.305, 0.8, times=times)
    segs = pick_place_segments(START2, 0.025, 0.305, 0.8)
    assert_analytic_derivatives(make, interior_times([(s.t0, s.t1) for s in segs], 15), 0.8)


def test_derivative_check_detects_wrong_derivatives():
    """The check above is not vacuous: a velocity off by 1e-5 of its scale fails it."""
    def make(times):
        tr = line([0.0, 0.0, 0.0], [0.2, 0.0, 0.0], duration=1.0, times=times)
        return Trajectory(t=tr.t, x=tr.x, xd=tr.xd * (1 + 1e-5), xdd=tr.xdd, names=tr.names)

    with pytest.raises(AssertionError):
        assert_analytic_derivatives(make, interior_times([(0.0, 1.0)]), 1.0)


# ====================================================================== pick and place
def corners(start, up, travel):
    start = np.asarray(start, dtype=float)
    top = start + up
    return [start, top, top + travel, start + travel, top + travel, top, start]


@pytest.mark.parametrize("start, lift, travel, cycle, vaxis, up, trav", [
    (START3, 0.025, 0.305, 1.0, -1, [0, 0, 0.025], [0.305, 0, 0]),
    (START3, 0.025, [0.2, -0.1], 0.8, -1, [0, 0, 0.025], [0.2, -0.1, 0]),
    (START3, 0.05, [0.0, 0.3, 0.0], 1.2, 2, [0, 0, 0.05], [0, 0.3, 0]),
    (START3, 0.025, [0.1, 0.2], 1.0, 1, [0, 0.025, 0], [0.1, 0, 0.2]),   # y up
    (START2, 0.025, 0.305, 0.6, -1, [0, 0.025], [0.305, 0]),             # IRSBot-2: (x, z)
])
def test_pick_place_visits_the_corners_at_rest(start, lift, travel, cycle, vaxis, up, trav):
    segs = pick_place_segments(start, lift, travel, cycle, vertical_axis=vaxis)
    assert [s.kind for s in segs] == ["up", "across", "down", "up", "back", "down"]
    expect = corners(start, np.array(up, float), np.array(trav, float))
    for k, s in enumerate(segs):
        np.testing.assert_array_equal(s.p0, expect[k])
        np.testing.assert_array_equal(s.p1, expect[k + 1])
    # the windows tile [0, cycle_time] exactly
    assert segs[0].t0 == 0.0 and segs[-1].t1 == cycle
    assert all(a.t1 == b.t0 for a, b in zip(segs, segs[1:]))
    assert segs[2].t1 == cycle / 2
    # at every window end: exactly the corner, at rest (zero velocity and acceleration)
    ends = np.array([segs[0].t0] + [s.t1 for s in segs])
    tr = pick_place(start, lift, travel, cycle, vertical_axis=vaxis, times=ends)
    np.testing.assert_array_equal(tr.x, np.array(expect))
    np.testing.assert_array_equal(tr.xd, 0.0)
    np.testing.assert_array_equal(tr.xdd, 0.0)
    # each move is a straight line: only the coordinates of its displacement change
    for s in segs:
        inside = pick_place(start, lift, travel, cycle, vertical_axis=vaxis,
                            times=np.linspace(s.t0, s.t1, 101)).x
        fixed = s.p1 == s.p0
        np.testing.assert_array_equal(inside[:, fixed], np.broadcast_to(s.p0[fixed], inside[:, fixed].shape))
        direction = (s.p1 - s.p0) / np.linalg.norm(s.p1 - s.p0)
        off_line = (inside - s.p0) - np.outer((inside - s.p0) @ direction, direction)
        assert scale(off_line) < 1e-15


def test_pick_place_sampled_cycle_lasts_cycle_time_and_returns_to_start():
    tr = pick_place(START3, 0.025, 0.305, cycle_time=1.0, dt=0.002)
    assert len(tr) == 501 and tr.t[-1] == 1.0 and tr.t[0] == 0.0
    np.testing.assert_array_equal(tr.t, np.arange(501) * 0.002)
    np.testing.assert_array_equal(tr.x[0], START3)
    np.testing.assert_array_equal(tr.x[-1], START3)          # bit-exact return
    np.testing.assert_array_equal(tr.x[250], START3 + [0.305, 0, 0])   # place point at half cycle
    for k in (0, 250, 500):
        np.testing.assert_array_equal(tr.xd[k], 0.0)
        np.testing.assert_array_equal(tr.xdd[k], 0.0)
    assert tr.x[:, 2].max() == START3[2] + 0.025 and tr.x[:, 2].min() == START3[2]
    assert tr.x[:, 0].min() == START3[0] and tr.x[:, 0].max() == START3[0] + 0.305


@pytest.mark.parametrize("blend", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("start, travel", [(START3, [0.305, 0.1]), (START2, 0.305)])
def test_pick_place_is_jerk_continuous_at_every_join(start, travel, blend):
    cycle = 0.9
    make = lambda times: pick_place(start, 0.025, travel, cycle, blend=blend, times=times)
    segs = pick_place_segments(start, 0.025, travel, cycle, blend=blend)
    joins = np.unique([t for s in segs for t in (s.t0, s.t1)])
    # sharp corners: 7 window ends; blended: the overlapping windows add 4 (none at blend = 1,
    # where the horizontal move spans the whole half-cycle)
    assert len(joins) == (11 if 0 < blend < 1 else 7)
    tr = make(np.linspace(0.0, cycle, 4001))
    v_scale, a_scale, j_scale = scale(tr.xd), scale(tr.xdd), jerk_scale(make, cycle)
    d = 1e-9
    for tj in joins:
        # (before 0 and after cycle_time the motion is at rest at the start)
        ev = make(times=np.array([tj - d, tj + d]))
        # x, ẋ, ẍ continuous: the change across the join is O(d) times the next derivative
        np.testing.assert_allclose(np.diff(ev.x, axis=0), 0.0, atol=4 * d * v_scale)
        np.testing.assert_allclose(np.diff(ev.xd, axis=0), 0.0, atol=4 * d * a_scale)
        np.testing.assert_allclose(np.diff(ev.xdd, axis=0), 0.0, atol=4 * d * j_scale)
        # jerk continuous: the one-sided difference quotients of ẍ agree
        left, right = one_sided_jerks(make, tj, 1e-7 * cycle)
        np.testing.assert_allclose(left - right, 0.0, atol=1e-4 * j_scale)


def test_jerk_check_detects_a_jerk_jump():
    """The one-sided jerk comparison is not vacuous: the quintic line's jerk jumps at its ends."""
    make = lambda times: line([0.0, 0.0, 0.0], [0.3, 0.0, 0.0], duration=0.5, times=times)
    left, right = one_sided_jerks(make, 0.5, 1e-7 * 0.5)
    assert scale(left - right) > 0.5 * jerk_scale(make, 0.5)


def test_pick_place_durations_follow_the_square_root_rule():
    lift, travel, cycle = 0.025, 0.305, 1.0
    segs = pick_place_segments(START3, lift, travel, cycle)
    T = np.array([s.t1 - s.t0 for s in segs])
    L = np.array([lift, travel, lift] * 2)
    np.testing.assert_allclose(T / np.sqrt(L), T[0] / math.sqrt(lift), rtol=1e-12)
    np.testing.assert_allclose(T.sum(), cycle, rtol=1e-15)
    # hence every move has the same peak acceleration 7.513·L/T², reached at τ = (5 − √5)/10
    tau = (5 - math.sqrt(5)) / 10
    peaks = []
    for s in segs:
        tr = pick_place(START3, lift, travel, cycle, times=[s.t0 + tau * (s.t1 - s.t0)])
        peaks.append(np.linalg.norm(tr.xdd[0]))
        dense = pick_place(START3, lift, travel, cycle, times=np.linspace(s.t0, s.t1, 2001))
        assert np.linalg.norm(dense.xdd, axis=1).max() <= peaks[-1] * (1 + 1e-12)
    np.testing.assert_allclose(peaks, SEPTIC_PEAK_ACCELERATION * lift / T[0] ** 2, rtol=1e-9)


def test_pick_place_blended_corners():
    start, lift, travel, cycle = START3, 0.025, 0.305, 1.0
    segs = pick_place_segments(start, lift, travel, cycle, blend=0.5)
    up, across, down = segs[:3]
    o = up.t1 - across.t0
    assert o > 0 and math.isclose(o, 0.5 * (up.t1 - up.t0)) and math.isclose(down.t0, across.t1 - o)
    assert down.t0 > up.t1                       # the up and down moves do not overlap
    tr = pick_place(start, lift, travel, cycle, dt=0.0005, blend=0.5)
    assert tr.t[-1] == cycle
    np.testing.assert_array_equal(tr.x[-1], start)
    np.testing.assert_array_equal(tr.x[1000], start + [travel, 0, 0])      # place point, at rest
    np.testing.assert_array_equal(tr.xd[[0, 1000, 2000]], 0.0)
    assert tr.x[:, 2].max() == start[2] + lift     # full lift reached
    # the top corner is cut: when the up move ends the platform is already moving across
    at = pick_place(start, lift, travel, cycle, blend=0.5, times=[up.t1, across.t1])
    assert at.xd[0, 0] > 0 and at.x[0, 0] > start[0]
    assert at.xd[1, 2] < 0 and at.x[1, 2] < start[2] + lift
    # blending with the same cycle time lowers the peak acceleration
    sharp = pick_place(start, lift, travel, cycle, dt=0.0005)
    assert scale(tr.xdd) < scale(sharp.xdd)


def test_pick_place_travel_forms_are_equivalent():
    a = pick_place(START3, 0.025, 0.305, 1.0, dt=0.01)
    for travel in ([0.305, 0.0], [0.305, 0.0, 0.0]):
        b = pick_place(START3, 0.025, travel, 1.0, dt=0.01)
        np.testing.assert_array_equal(a.x, b.x)
        np.testing.assert_array_equal(a.xdd, b.xdd)
    p = pick_place(START2, 0.025, 0.305, 1.0, dt=0.01)
    for travel in ([0.305], [0.305, 0.0]):
        np.testing.assert_array_equal(pick_place(START2, 0.025, travel, 1.0, dt=0.01).x, p.x)
    # the planar cycle is the x–z projection of the 3-D one
    np.testing.assert_array_equal(p.x, a.x[:, [0, 2]] + [START2[0] - START3[0], 0.0])
    np.testing.assert_array_equal(p.xdd, a.xdd[:, [0, 2]])
    assert p.names == ("x", "z")


def test_pick_place_zero_lift_or_travel():
    segs = pick_place_segments(START3, 0.0, 0.3, 1.0)
    assert [s.kind for s in segs] == ["across", "back"] and segs[0].t1 == 0.5
    tr = pick_place(START3, 0.0, 0.3, 1.0, dt=0.01)
    np.testing.assert_array_equal(tr.x[:, 2], START3[2])
    segs = pick_place_segments(START3, 0.05, 0.0, 1.0)
    assert [s.kind for s in segs] == ["up", "down", "up", "down"]
    assert [s.t1 for s in segs] == [0.25, 0.5, 0.75, 1.0]


# ====================================================================== the paper's sine
def test_sine_matches_the_paper():
    h = 0.94398093
    A = np.array([0.3, 0.4, 0.1])
    tr = sine([0.0, 0.0, -h], A, period=10.0, duration=10.0, dt=0.01)
    assert len(tr) == 1001 and tr.t[-1] == 10.0
    np.testing.assert_array_equal(tr.t, np.arange(1001) * 0.01)
    w = 2 * math.pi / 10
    speed = np.linalg.norm(tr.xd, axis=1)
    acc = np.linalg.norm(tr.xdd, axis=1)
    assert math.isclose(speed.max(), np.linalg.norm(A) * w, rel_tol=1e-14)
    assert math.isclose(acc.max(), np.linalg.norm(A) * w ** 2, rel_tol=1e-14)
    assert round(float(np.linalg.norm(A)), 4) == 0.5099 and round(w, 4) == 0.6283
    assert round(float(speed.max()), 4) == 0.3204 and round(float(acc.max()), 4) == 0.2013
    # r(0) = c, r(T/4) = c + A, r(T/2) = c, r(3T/4) = c − A, all along one straight line
    np.testing.assert_allclose(tr.x[[0, 250, 500, 750, 1000]],
                               [[0, 0, -h], A + [0, 0, -h], [0, 0, -h], -A + [0, 0, -h], [0, 0, -h]],
                               atol=1e-15)
    off_line = np.cross(tr.x - [0, 0, -h], A)
    assert scale(off_line) < 1e-15
    np.testing.assert_allclose(tr.xd[0], A * w, rtol=1e-15)
    np.testing.assert_allclose(tr.xdd[250], -A * w ** 2, rtol=1e-15)


# ====================================================================== line
def test_line_rest_to_rest():
    p0, p1 = np.array([0.1, -0.2, -0.9]), np.array([-0.15, 0.05, -0.9])
    tr = line(p0, p1, duration=0.6, dt=0.001)
    assert len(tr) == 601
    np.testing.assert_array_equal(tr.x[0], p0)
    np.testing.assert_array_equal(tr.x[-1], p1)
    np.testing.assert_array_equal(tr.x[:, 2], -0.9)                # unchanged coordinate is exact
    np.testing.assert_array_equal(tr.xd[[0, -1]], 0.0)
    np.testing.assert_array_equal(tr.xdd[[0, -1]], 0.0)
    L = np.linalg.norm(p1 - p0)
    assert math.isclose(np.linalg.norm(tr.xd[300]), 1.875 * L / 0.6, rel_tol=1e-12)
    assert np.linalg.norm(tr.xdd, axis=1).max() <= 10 / math.sqrt(3) * L / 0.36 * (1 + 1e-12)
    # outside [0, duration] it stays at rest at the end points
    out = line(p0, p1, duration=0.6, times=[-1.0, 2.0])
    np.testing.assert_array_equal(out.x, [p0, p1])
    np.testing.assert_array_equal(out.xd, 0.0)


# ====================================================================== CSV
def test_csv_round_trip_is_bit_exact(tmp_path):
    trajs = [
        pick_place(START3, 0.025, [0.305, 0.1], 0.9, dt=0.001, blend=0.3),
        sine(START2, [0.4, 0.1], period=1.0, duration=2.0, dt=0.002),
        line([1e-300, -0.0, 1e300], [5e-324, 0.1 + 0.2, -1e300], duration=1.0, dt=0.1),
    ]
    for k, tr in enumerate(trajs):
        path = tmp_path / f"t{k}.csv"
        tr.to_csv(path)
        back = read_csv(path)
        assert back.names == tr.names
        for key in ("t", "x", "xd", "xdd"):
            a, b = getattr(tr, key), getattr(back, key)
            assert a.shape == b.shape and a.tobytes() == b.tobytes(), key
    header = (tmp_path / "t0.csv").read_text().splitlines()[0]
    assert header == "t,x,y,z,xd,yd,zd,xdd,ydd,zdd"
    assert (tmp_path / "t1.csv").read_text().splitlines()[0] == "t,x,z,xd,zd,xdd,zdd"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=6, max_size=6))
def test_csv_round_trip_any_float(tmp_path_factory, values):
    x = np.array(values).reshape(2, 3)
    tr = Trajectory(t=[0.0, 0.5], x=x[:, :1], xd=x[:, 1:2], xdd=x[:, 2:], names=("q",))
    path = tmp_path_factory.mktemp("csv") / "q.csv"
    tr.to_csv(path)
    back = read_csv(path)
    assert back.x.tobytes() == tr.x.tobytes() and back.xdd.tobytes() == tr.xdd.tobytes()


def write(tmp_path, text, name="bad.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, names, phrase", [
    ("t,x,y,z,xd,yd,zd,xdd,ydd\n0,0,0,0,0,0,0,0,0\n", None, "missing column 'zdd'"),
    ("t,x,y,z,xd,yd,xdd,ydd,zdd\n0,0,0,0,0,0,0,0,0\n", None, "missing column 'zd'"),
    ("t,x,z,yd,xd,zd,ydd,xdd,zdd\n0,0,0,0,0,0,0,0,0\n", None, "missing column 'y'"),
    ("x,xd,xdd\n0,0,0\n", None, "missing column 't'"),
    ("t,x,xd,xdd\n0,0,0,0\n", ["x", "z"], "missing column 'z'"),
    ("t,x,xd,xdd\n0,0,0\n", None, r"line 2: 3 values, expected 4"),
    ("t,x,xd,xdd\n0,0,0,0\n1,abc,0,0\n", None, r"line 3: column 'x': not a number: 'abc'"),
    ("t,x,xd,xdd\n0,0,nan,0\n", None, r"line 2: column 'xd': nan is not finite"),
    ("t,x,xd,xdd\n0,0,0,0\n0,1,0,0\n", None, "strictly increasing"),
    ("t,x,xd,xdd\n", None, "no data rows"),
    ("\n# nothing\n", None, "empty trajectory file"),
    ("t,x,x,xd,xdd\n0,0,0,0,0\n", None, "duplicate column 'x'"),
])
def test_bad_csv(tmp_path, text, names, phrase):
    path = write(tmp_path, text)
    with pytest.raises(ValueError, match=phrase) as err:
        read_csv(path, names=names)
    assert str(path) in str(err.value)


def test_csv_column_selection_and_comments(tmp_path):
    path = write(tmp_path, "# a comment\nt,x,y,z,xd,yd,zd,xdd,ydd,zdd,extra\n\n"
                           "0,1,2,3,4,5,6,7,8,9,99\n0.5,1,2,3,4,5,6,7,8,9,99\n", "ok.csv")
    tr = read_csv(path, names=["z", "x"])
    assert tr.names == ("z", "x")
    np.testing.assert_array_equal(tr.x, [[3, 1], [3, 1]])
    np.testing.assert_array_equal(tr.xd, [[6, 4], [6, 4]])
    np.testing.assert_array_equal(tr.xdd, [[9, 7], [9, 7]])
    with pytest.raises(ValueError, match="missing column 'extrad'"):
        read_csv(path)


def test_missing_file_names_it(tmp_path):
    with pytest.raises(ValueError, match="nope.csv"):
        read_csv(tmp_path / "nope.csv")


# ====================================================================== argument errors
@pytest.mark.parametrize("call, phrase", [
    (lambda: sine([0, 0, 0], [1, 1, 1], 10, 10, dt=0), "dt must be positive"),
    (lambda: sine([0, 0, 0], [1, 1, 1], 10, 10, dt=-0.1), "dt must be positive"),
    (lambda: sine([0, 0, 0], [1, 1, 1], 0, 10, dt=0.1), "period must be positive"),
    (lambda: sine([0, 0, 0], [1, 1, 1], 10, -1, dt=0.1), "duration must be positive"),
    (lambda: sine([0, 0, 0], [1, 1], 10, 10, dt=0.1), "amplitude must have 3 components"),
    (lambda: sine([0, float("nan"), 0], [1, 1, 1], 10, 10, dt=0.1), "center contains NaN"),
    (lambda: sine([0, 0, 0], [1, 1, 1], float("nan"), 10, dt=0.1), "period must be positive"),
    (lambda: sine([0, 0, 0], [1, 1, 1], 10, 10, dt=0.03), "not a .*multiple of dt"),
    (lambda: sine([0, 0, 0], [1, 1, 1], 10, 10), "give the sample period dt"),
    (lambda: sine([0, 0, 0], [1, 1, 1], 10, 10, dt=0.1, times=[0.0]), "either dt or times"),
    (lambda: sine([0, 0, 0], [1, 1, 1], 10, 10, dt=0.1, names=["x", "y"]), "2 names"),
    (lambda: line([0, 0, 0], [1, 1], 1, 0.1), "end must have 3 components"),
    (lambda: line([0, 0, 0], [1, 1, 1], 0, 0.1), "duration must be positive"),
    (lambda: line([0, 0, 0], [1, 1, float("inf")], 1, 0.1), "end contains NaN or infinite"),
    (lambda: line([0, 0, 0], [1, 1, 1], 1, times=[0.5, 0.2]), "strictly increasing"),
    (lambda: pick_place([0, 0, 0], 0.025, 0.3, 1.0, dt=0), "dt must be positive"),
    (lambda: pick_place([0, 0, 0], 0.025, 0.3, 0.0, dt=0.01), "cycle_time must be positive"),
    (lambda: pick_place([0, 0, 0], -0.025, 0.3, 1.0, dt=0.01), "lift must be >= 0"),
    (lambda: pick_place([0, 0, 0], float("nan"), 0.3, 1.0, dt=0.01), "lift must be finite"),
    (lambda: pick_place([0, 0, 0], 0.025, [0.3, 0, 0.1], 1.0, dt=0.01), "travel must be horizontal"),
    (lambda: pick_place([0, 0, 0], 0.025, [0.3, 0, 0, 0], 1.0, dt=0.01), "2 .*or 3 components"),
    (lambda: pick_place([0, 0, 0], 0.0, [0, 0], 1.0, dt=0.01), "both zero"),
    (lambda: pick_place([0, 0, 0], 0.025, 0.3, 1.0, dt=0.01, vertical_axis=3), "vertical_axis 3 out of range"),
    (lambda: pick_place([0, 0, 0], 0.025, 0.3, 1.0, dt=0.01, blend=1.5), r"blend must be in \[0, 1\]"),
    (lambda: pick_place([0], 0.025, 0.3, 1.0, dt=0.01), "at least 2 task coordinates"),
    (lambda: pick_place([0, 0, 0], 0.025, 0.3, 1.0, dt=0.3), "cycle_time 1.0 s is not"),
])
def test_bad_arguments(call, phrase):
    with pytest.raises(ValueError, match=phrase):
        call()


def test_trajectory_is_frozen_and_validated():
    tr = line([0, 0, 0], [1, 0, 0], 1.0, 0.5)
    with pytest.raises(ValueError):
        tr.x[0, 0] = 1.0            # read-only arrays
    with pytest.raises(AttributeError):
        tr.t = np.zeros(3)          # frozen
    with pytest.raises(ValueError, match="shape"):
        Trajectory(t=[0.0, 1.0], x=np.zeros((2, 2)), xd=np.zeros((2, 3)), xdd=np.zeros((2, 3)),
                   names=("x", "y", "z"))
    with pytest.raises(ValueError, match="not unique"):
        Trajectory(t=[0.0], x=[[0, 0]], xd=[[0, 0]], xdd=[[0, 0]], names=("x", "xd"))
    with pytest.raises(ValueError, match="NaN"):
        Trajectory(t=[0.0], x=[[np.nan]], xd=[[0]], xdd=[[0]], names=("x",))
    with pytest.raises(ValueError, match="without commas"):
        Trajectory(t=[0.0], x=[[0]], xd=[[0]], xdd=[[0]], names=("x,y",))


# ====================================================================== robot files
def test_from_spec_delta_default():
    spec = load_spec(DELTA)
    names = spec.task.coordinate_names()
    assert names == ["x", "y", "z"]
    traj = spec.trajectory
    tr = from_spec(traj, names)
    ref = sine(traj["center"], traj["amplitude"], traj["period"], traj["duration"], traj["dt"])
    assert tr.names == ("x", "y", "z") and len(tr) == 1001 and tr.t[-1] == 10.0
    for key in ("t", "x", "xd", "xdd"):
        np.testing.assert_array_equal(getattr(tr, key), getattr(ref, key))
    assert tr.x[0, 2] == traj["center"][2] < -0.9                     # z = −h
    assert round(float(np.linalg.norm(tr.xd, axis=1).max()), 4) == 0.3204
    assert round(float(np.linalg.norm(tr.xdd, axis=1).max()), 4) == 0.2013


def test_from_spec_irsbot2_default():
    spec = load_spec(IRSBOT)
    names = spec.task.coordinate_names()
    assert names == ["x", "z"]
    traj = spec.trajectory
    tr = from_spec(traj, names)
    assert tr.names == ("x", "z") and tr.x.shape == (1001, 2) and tr.t[-1] == 2.0
    w = 2 * math.pi / traj["period"]
    s = np.sin(w * tr.t)
    np.testing.assert_array_equal(tr.x[:, 0], traj["center"][0] + traj["amplitude"][0] * s)
    np.testing.assert_array_equal(tr.x[:, 1], traj["center"][2] + traj["amplitude"][2] * s)
    np.testing.assert_allclose(tr.xd[0], w * traj["amplitude"][[0, 2]], rtol=1e-15)


def test_from_spec_irsbot2_pick_place():
    spec = load_spec(IRSBOT)
    names = spec.task.coordinate_names()
    h = spec.trajectory["center"][2]
    traj = {"type": "pick-place", "start": np.array([-0.15, 0.0, h]), "lift": 0.025, "travel": 0.305,
            "cycle_time": 0.5, "dt": 0.001}
    tr = from_spec(traj, names)
    assert tr.names == ("x", "z") and len(tr) == 501 and tr.t[-1] == 0.5
    np.testing.assert_array_equal(tr.x[0], [-0.15, h])
    np.testing.assert_array_equal(tr.x[250], [-0.15 + 0.305, h])
    np.testing.assert_array_equal(tr.x[-1], [-0.15, h])
    assert tr.x[:, 1].max() == h + 0.025
    ref = pick_place([-0.15, h], 0.025, 0.305, 0.5, 0.001)
    np.testing.assert_array_equal(tr.xdd, ref.xdd)


def test_from_spec_pick_place_and_line_files():
    pp = load_spec(OK / "units_mm.toml").trajectory           # travel = [200, 100, 0] mm
    tr = from_spec(pp, ["x", "y", "z"])
    assert len(tr) == 301 and tr.t[-1] == 1.5
    np.testing.assert_allclose(tr.x[150], pp["start"] + pp["travel"], atol=1e-15)
    np.testing.assert_array_equal(tr.x[-1], pp["start"])
    with pytest.raises(ValueError, match="travel has a non-zero y component"):
        from_spec(pp, ["x", "z"])
    ln = load_spec(OK / "delta_rus.toml").trajectory
    tr = from_spec(ln, ["x", "y", "z"])
    np.testing.assert_array_equal(tr.x[[0, -1]], [ln["start"], ln["end"]])
    tr = from_spec(ln, ["x", "z"])                                 # y does not move: fine
    np.testing.assert_array_equal(tr.x[-1], ln["end"][[0, 2]])


def test_from_spec_rotations_held_and_file(tmp_path):
    traj = {"type": "line", "start": np.array([0.1, 0.0, 0.2]), "end": np.array([0.3, -0.1, 0.2]),
            "duration": 1.0, "dt": 0.1}
    tr = from_spec(traj, ["rz", "x", "y"])                          # planar task
    assert tr.names == ("rz", "x", "y")
    np.testing.assert_array_equal(tr.x[:, 0], 0.0)
    np.testing.assert_array_equal(tr.x[-1], [0.0, 0.3, -0.1])
    with pytest.raises(ValueError, match="no translation"):
        from_spec(traj, ["rx", "ry", "rz"])
    with pytest.raises(ValueError, match="unknown task coordinate 'q'"):
        from_spec(traj, ["q"])
    with pytest.raises(ValueError, match="lifts along z"):
        from_spec({"type": "pick-place", "start": np.zeros(3), "lift": 0.02, "travel": 0.3,
                   "cycle_time": 1.0, "dt": 0.01}, ["rz", "x", "y"])
    with pytest.raises(ValueError, match="missing key 'dt'"):
        from_spec({k: v for k, v in traj.items() if k != "dt"})
    with pytest.raises(ValueError, match="unknown trajectory type 'spiral'"):
        from_spec({"type": "spiral"})
    # type = "file": the CSV's columns selected by the task names
    path = tmp_path / "motion.csv"
    from_spec(traj).to_csv(path)
    got = from_spec({"type": "file", "path": str(path)}, ["x", "z"])
    ref = from_spec(traj)
    np.testing.assert_array_equal(got.x, ref.x[:, [0, 2]])
    np.testing.assert_array_equal(got.xdd, ref.xdd[:, [0, 2]])
    with pytest.raises(ValueError, match="missing column 'rz'"):
        from_spec({"type": "file", "path": str(path)}, ["rz", "x", "y"])


def test_resolution_is_second_order_in_the_sample_period_and_sees_a_motion_sampled_at_its_stops():
    """Trajectory.resolution: the samples' own misfit, O(dt³) on a smooth law (a step's trapezoid error: halving dt
    divides it by ~8), ~1 for a
    cycle sampled at its stops alone (positions apart, velocities zero), 0 for one sample or a pose held."""
    from pkm.trajectory import pick_place

    r = [pick_place([0.0, 0.0, -0.9], lift=0.025, travel=0.3, cycle_time=0.6, dt=0.6 / n).resolution()
         for n in (200, 400, 800)]
    assert r[0] < 0.01 and all(6.0 < a / b < 9.0 for a, b in zip(r, r[1:])), r
    stops = pick_place([0.0, 0.0, -0.9], lift=0.025, travel=0.3, cycle_time=0.6, dt=0.3)
    assert np.allclose(stops.xd, 0.0) and stops.resolution() >= 1.0
    held = Trajectory(t=[0.0, 1.0, 2.0], x=[[0.1]] * 3, xd=[[0.0]] * 3, xdd=[[0.0]] * 3, names=("s",))
    assert held.resolution() == 0.0 and held.resolution() == Trajectory(t=[0.0], x=[[0.1]], xd=[[0.0]], xdd=[[0.0]],
                                                                         names=("s",)).resolution()
