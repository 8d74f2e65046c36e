"""Jerk-limited cycle time (issue 31, ``pkm.time_optimal(jerk=J)``, ``pkm cycle --jerk J``): the limits and the
jerk measured on the output trajectory (inverse dynamics, finite differences of its accelerations), the cycle
time against the unconstrained one and monotone in J, and the optimality against closed-form third-order
(S-curve) motions: on a line of a robot with only the jerk binding, and on rows of constant speed,
acceleration and jerk bounds."""
from __future__ import annotations

import math

import numpy as np
import pytest

import pkm
from pkm.planning import BlendedPolyline, LinePath, pick_place_route
from pkm.planning.jerk import check_jerk, graded_grid, jerk_profile

from test_corpus import check_run

DELTA = "examples/delta_servo.toml"
N = 400
JERKS = (5e3, 2e4, 1e5, 1e6)   # m/s³


def _start(robot):
    w = np.asarray(robot.spec.trajectory["start"], dtype=float)
    return np.array([w["xyz".index(n)] for n in robot.task.coordinate_names()])


@pytest.fixture(scope="module")
def delta():
    robot = pkm.load(DELTA)
    route = pick_place_route(_start(robot))
    free = pkm.time_optimal(robot, route, n=3000)       # bang–bang, 0.3 % above 16000 points' 0.2422 s
    limited = {J: pkm.time_optimal(robot, route, n=N, jerk=J) for J in JERKS}
    return robot, route, free, limited


def _sample_jerk(tr):
    """Finite-difference jerk of a trajectory's accelerations, from its samples only."""
    return np.diff(tr.xdd, axis=0) / np.diff(tr.t)[:, None]


def test_limits_and_jerk_held_on_the_output(delta):
    robot, _, _, limited = delta
    d = robot.drives
    for J, res in limited.items():
        tr = res.trajectory
        out = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t)
        assert np.max(np.abs(out.tau_motor) / d.peak_torque) <= 1 + 1e-3, J
        assert np.max(np.abs(out.speed_motor) / d.max_speed) <= 1 + 1e-3, J
        assert np.max(np.abs(_sample_jerk(tr))) <= J * (1 + 1e-3), J
        assert np.allclose(tr.xdd[[0, -1]], 0.0) and np.allclose(tr.xd[[0, -1]], 0.0)   # rest, zero acceleration
        # the time axis carries the positions: their differences are the mean sampled velocities
        dt = np.diff(tr.t)
        v = np.diff(tr.x, axis=0) / dt[:, None]
        assert np.max(np.abs(v - 0.5 * (tr.xd[1:] + tr.xd[:-1]))) <= 5e-3 * np.max(np.abs(tr.xd))
        assert res.jerk_limit == J and res.jerk_ratio <= 1 + 1e-3
    # a limit binds: the slowest cycles on the jerk, the fast ones on the torques as well
    assert limited[JERKS[0]].jerk_ratio > 0.999
    assert np.max(limited[JERKS[-1]].ratio) > 0.999


def test_cycle_time_monotone_in_jerk_and_approaches_the_bang_bang_one(delta):
    _, _, free, limited = delta
    times = [limited[J].cycle_time for J in JERKS]
    assert all(a > b for a, b in zip(times, times[1:])), times
    # never faster than the unconstrained optimum (beyond the two grids' discretisation, 0.2 %), both holding the
    # limits between their samples too (the jerk-limited programme within 0.25 % with its rows a quarter, half and
    # three quarters into each step and at the turns on 400 points; 17 % without; 1 % with the midpoints' alone and
    # the turns' where q' interpolated linearly is zero)
    assert min(times) >= free.cycle_time * (1 - 2e-3), (times, free.cycle_time)
    assert all(limited[J].between_ratio <= 1.005 for J in JERKS), [limited[J].between_ratio for J in JERKS]
    assert free.between_ratio <= 1.001
    # and within 1 % of it for a large jerk limit
    assert abs(times[-1] - free.cycle_time) <= 0.01 * free.cycle_time, (times, free.cycle_time)
    # a real jerk limit costs time: 5000 m/s³ far more than 1 %
    assert times[0] > 1.2 * free.cycle_time


@pytest.mark.parametrize("shift", [0.0, 1e-3])
def test_limits_between_the_samples_converge_with_the_grid(shift):
    """Between its samples (``s̈`` linear in ``s`` on each step) the jerk-limited motion exceeds a limit only by the
    discretisation's error, which shrinks with the grid: the result's own figure (7 points a step, 31 and 12 rates
    around each turn), at 400 and 1000 points, the file's pick point and 1 mm off."""
    robot = pkm.load(DELTA)
    route = pick_place_route(_start(robot) + shift)
    over = [pkm.time_optimal(robot, route, n=n, jerk=1e6).between_ratio - 1.0 for n in (400, 1000)]
    assert over[0] <= 5e-3 and over[1] <= 1e-3, over
    assert over[1] <= 0.5 * max(over[0], 2e-4), over


def test_unlimited_result_fails_the_jerk_check(delta):
    """The check can fail: the bang–bang (unconstrained) result exceeds any realistic jerk limit, refused in
    one line."""
    _, _, free, _ = delta
    assert np.max(np.abs(_sample_jerk(free.trajectory))) > 1e6
    with pytest.raises(pkm.PkmError, match="exceeds the jerk limit") as info:
        check_jerk(free, 1e6)
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------------- closed-form S-curves
def _s_curve_time(L, V, A, J):
    """The shortest rest-to-rest motion over L (zero acceleration at both ends) with |v| ≤ V, |a| ≤ A,
    |jerk| ≤ J: the third-order (double-S) profile, acceleration phases of jerk ±J, cruise at the peak speed."""
    def ramp(v):   # time and distance from rest to v (and zero acceleration)
        Ta = v / A + A / J if v * J >= A * A else 2.0 * math.sqrt(v / J)
        return Ta, 0.5 * v * Ta

    Ta, da = ramp(V)
    if 2 * da <= L:
        return 2 * Ta + (L - 2 * da) / V
    lo, hi = 0.0, V
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if 2 * ramp(mid)[1] <= L else (lo, mid)
    return 2 * ramp(lo)[0]


@pytest.mark.parametrize("L, V, A, J", [
    (0.3, 2.0, 30.0, 1000.0),     # all three limits reached
    (0.3, 1.0, 30.0, 300.0),      # speed and jerk
    (0.3, 5.0, 50.0, 200.0),      # jerk only (the acceleration a triangle)
    (0.3, 5.0, 10.0, 2000.0),     # acceleration nearly bang–bang
])
def test_profile_matches_the_closed_form_s_curve(L, V, A, J):
    """The sequential LP on rows of constant bounds (|s̈| ≤ A, ṡ ≤ V, a straight path x = s) against the
    closed-form time; the jerk measured here on the profile's samples."""
    n = 300
    s = graded_grid(L, n)
    rows = (np.tile([1.0, -1.0], (n, 1)), np.zeros((n, 2)), np.full((n, 2), -A))
    prof = jerk_profile(lambda x, u: rows, np.full(n, V * V), np.ones((n, 1)), np.zeros((n, 1)), s, J)
    ref = _s_curve_time(L, V, A, J)
    assert prof.time == pytest.approx(ref, rel=5e-3)
    sd = np.sqrt(prof.x)
    dt = 2 * np.diff(s) / (sd[:-1] + sd[1:])
    assert np.max(np.abs(np.diff(prof.u)) / dt) <= J * (1 + 1e-6)
    assert np.max(np.abs(prof.u)) <= A * (1 + 1e-6) and np.max(sd) <= V * (1 + 1e-6)
    assert prof.time == pytest.approx(float(np.sum(dt)))


@pytest.mark.parametrize("J", [50.0, 500.0])
def test_robot_line_with_only_the_jerk_binding_is_the_s_curve(J):
    """A diagonal line of the Delta (no drives) with torque limits far beyond reach: only the jerk binds, on the
    coordinate that moves most (the jerk limit is per task coordinate): T = 4 (L max|u_i| / (2J))^(1/3)."""
    robot = pkm.load("robots/delta_3rr2rrr.toml")
    z0 = float(robot.position_ref[2]) - 0.05
    p0, p1 = np.array([-0.05, 0.0, z0]), np.array([0.06, 0.03, z0 + 0.02])
    L = float(np.linalg.norm(p1 - p0))
    umax = float(np.max(np.abs(p1 - p0))) / L
    res = pkm.time_optimal(robot, LinePath(p0, p1), torque_limit=1e6, n=300, jerk=J)
    assert res.cycle_time == pytest.approx(4.0 * (L * umax / (2.0 * J)) ** (1.0 / 3.0), rel=2e-3)
    peak = np.max(np.abs(_sample_jerk(res.trajectory)), axis=0)
    assert peak[0] == pytest.approx(J, rel=1e-3) and np.all(peak <= J * (1 + 1e-3))


# ---------------------------------------------------------------------- CLI and API
def test_cli_jerk_csv_is_replayed_by_inverse_dynamics(tmp_path):
    from pkm.trajectory.files import read_csv

    csv, idcsv = tmp_path / "cycle.csv", tmp_path / "id.csv"
    code, out, _ = check_run(["cycle", DELTA, "--jerk", "2e4", "--points", "300", "--out", csv], ok=True)
    assert "jerk limit 2e+04 (m/s³)" in out and "cycle time" in out
    robot = pkm.load(DELTA)
    tr = read_csv(csv, robot.task.coordinate_names())
    assert np.max(np.abs(_sample_jerk(tr))) <= 2e4 * (1 + 1e-3)
    check_run(["inverse-dynamics", DELTA, "--trajectory", "file", "--file", csv, "--out", idcsv], ok=True)
    lines = idcsv.read_text().splitlines()
    head = lines[0].split(",")
    data = np.array([[float(v) for v in ln.split(",")] for ln in lines[1:]])
    tau = data[:, [k for k, c in enumerate(head) if c.startswith("tau_motor_")]]
    assert tau.shape[1] == 3 and np.max(np.abs(tau)) <= robot.drives.peak_torque[0] * (1 + 1e-3)
    code, out, _ = check_run(["cycle", "--help"], ok=True)
    assert "--jerk" in out and "every task coordinate" in out


@pytest.mark.parametrize("argv, message", [
    (["--jerk", "0"], "--jerk must be a positive"), (["--jerk", "-1"], "--jerk must be a positive"),
    (["--jerk", "nan"], "--jerk must be a positive"), (["--jerk", "inf"], "--jerk must be a positive"),
    (["--jerk", "-inf"], "--jerk must be a positive"), (["--jerk", "abc"], "--jerk"),
    (["--jerk", "1e-320"], "out of floating-point range"),
    (["--jerk", "1e4", "--speed-limit", "1e-300"], "out of floating-point range"),
    (["--jerk", "1e4", "--points", "5001"], "at most 5000"),
])
def test_cli_bad_jerk_is_a_one_line_error(argv, message, tmp_path):
    out = tmp_path / "c.csv"
    code, _, err = check_run(["cycle", DELTA, "--points", "200", *argv, "--out", out], ok=False)
    assert message in err
    assert not out.exists()


def test_api_bad_jerk_is_a_one_line_error():
    robot = pkm.load(DELTA)
    route = pick_place_route(_start(robot))
    for bad in (0.0, -5.0, float("nan"), float("inf"), "fast", True, [1e4]):
        with pytest.raises(pkm.InputError, match="jerk") as info:
            pkm.time_optimal(robot, route, n=200, jerk=bad)
        assert "\n" not in str(info.value)
    with pytest.raises(pkm.InputError, match="solver"):
        pkm.time_optimal(robot, route, n=200, jerk=1e4, solver="toppra")
    with pytest.raises(pkm.InputError, match="at most 5000"):
        pkm.time_optimal(robot, route, n=5001, jerk=1e4)


def test_huge_jerk_limit_is_the_bang_bang_problem_within_the_limits(delta):
    """J = 1e300 never binds: the profile is the torque-limited one. Where the gear's side (driving or braking)
    flips between iterates, the torque rows must stay an inner approximation: no overshoot of the peak torque
    (the rows frozen at the previous iterate's side had it 41 % over on this route)."""
    robot, route, free, _ = delta
    res = pkm.time_optimal(robot, route, n=200, jerk=1e300)
    tr = res.trajectory
    out = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t)
    assert np.max(np.abs(out.tau_motor) / robot.drives.peak_torque) <= 1 + 1e-3
    assert res.cycle_time == pytest.approx(free.cycle_time, rel=0.02)


def test_cycle_time_scales_as_the_jerk_to_the_minus_one_third_when_only_it_binds():
    """A slow jerk-limited motion (J tiny: torques and speeds far from their limits) is the same profile scaled,
    T ∝ J^(-1/3): the linear programmes are scaled, not lost in the solver's absolute tolerances."""
    robot = pkm.load(DELTA)
    w = _start(robot)
    line = LinePath(w, w + [0.2, 0.0, 0.0])
    t3, t9, t12 = (pkm.time_optimal(robot, line, n=200, jerk=J).cycle_time for J in (1e-3, 1e-9, 1e-12))
    assert t9 == pytest.approx(100.0 * t3, rel=1e-3) and t12 == pytest.approx(1000.0 * t3, rel=1e-3)


def test_grid_has_a_point_on_every_join_and_the_cycle_time_not_the_joins_phase():
    """x‴ jumps where a corner blend meets its lines: a step across the join would average the jump away, and
    the cycle time would depend on where the join falls between grid points (2 % over n = 300…306 on this
    corner with a grid blind to the joins). The grid puts a point on each join (paths' breakpoints)."""
    from pkm.planning import BlendedPolyline
    from pkm.planning.jerk import path_grid

    robot = pkm.load("robots/delta_3rr2rrr.toml")
    z0 = float(robot.position_ref[2]) - 0.05
    path = BlendedPolyline([[-0.1, 0, z0], [0.0, 0, z0], [0.0, 0.1, z0]], 0.0125)
    for p in (path, path.reversed()):
        brk = p.breakpoints()
        assert brk.size == 2 and np.all((brk > 0) & (brk < p.length))
        g = path_grid(p, 300)
        assert g.size == 300 and np.all(np.diff(g) > 0) and g[0] == 0 and g[-1] == p.length
        assert all(np.min(np.abs(g - b)) == 0.0 for b in brk)
    times = [pkm.time_optimal(robot, path, torque_limit=1e6, n=n, jerk=1e3).cycle_time for n in (300, 302, 304, 306)]
    assert (max(times) - min(times)) / min(times) < 1e-3, times


def test_spline_with_more_joins_than_the_grid_allows_is_a_one_line_error():
    from pkm.planning import SplinePath

    robot = pkm.load(DELTA)
    t = np.linspace(0.0, 1.0, 6000)
    pts = np.column_stack([-0.1 + 0.2 * t, 0.02 * np.sin(6 * t), -0.95 + 0.01 * t])
    with pytest.raises(pkm.InputError, match="more than 5000") as info:
        pkm.time_optimal(robot, SplinePath(pts), n=1000, jerk=1e4)
    assert "\n" not in str(info.value)


def test_a_coarse_grid_does_not_beat_the_torque_limited_optimum(delta):
    """At 32 or 64 points (16–32 per path) each corner blend still has PIECE_STEPS steps, so its
    centripetal torques are checked inside it: a jerk limit that does not bind gives about the
    torque-limited cycle, never less. Crossed in one step, the blends' torques were checked at their
    ends only, and the 'jerk-limited' cycle came out 0.186 s against the optimum's 0.242 s."""
    from pkm.planning.jerk import PIECE_STEPS, path_grid

    robot, route, free, _ = delta
    for path in route.paths:
        grid = path_grid(path, 16)
        for a, b in zip(np.r_[0.0, path.breakpoints()], np.r_[path.breakpoints(), path.length]):
            assert np.sum((grid > a) & (grid <= b)) >= PIECE_STEPS
    for n in (32, 64):
        res = pkm.time_optimal(robot, route, n=n, jerk=1e5)
        assert res.cycle_time >= 0.99 * free.cycle_time, (n, res.cycle_time, free.cycle_time)


def _quarter_jerk(piece, J):
    """The largest jerk of a jerk-limited piece between its samples over J, written here from the path alone: the
    motion at 0, ¼, ½, ¾ and 1 of each step (``s̈`` linear in ``s`` there, ``ṡ² = x_k + 2u_kσ + (u_{k+1} − u_k)σ²/Δ``),
    its accelerations ``x'(s)s̈ + x''(s)ṡ²`` from ``path.evaluate``, a quarter of the step's time between them (the
    programme bounds it between the eighths)."""
    s, u, t = piece.s_local, piece.sdd, piece.t
    x = piece.sd ** 2
    worst = 0.0
    f = np.linspace(0.0, 1.0, 5)
    for k in range(s.size - 1):
        sig = f * (s[k + 1] - s[k])
        us = u[k] + (u[k + 1] - u[k]) * f
        xs = x[k] + 2 * u[k] * sig + (u[k + 1] - u[k]) * sig * f
        xs[-1] = x[k + 1]
        _, d1, d2 = piece.path.evaluate(s[k] + sig)
        acc = d1 * us[:, None] + d2 * np.maximum(xs, 0.0)[:, None]
        worst = max(worst, float(np.max(np.abs(np.diff(acc, axis=0)))) / (0.25 * (t[k + 1] - t[k])) / J)
    return worst


def test_the_jerk_holds_between_the_samples_and_the_cycle_time_does_not_depend_on_the_grid():
    """A corner blend crossed in four steps: its jerk peaks inside a step (where the blend's x''' jumps at its end)
    and the difference of the samples' accelerations averages the peak away. Bounded at the samples alone, the
    jerk inside the steps reached 7× the limit at 40 points and the cycle came out 11 % shorter than at 400 (the
    Delta with 400 W servos, 5e3 m/s³: 0.398 s against 0.448 s on the pick-and-place route); with the jerk's rows
    between the eighths of each step it holds there and the time agrees across the grids (0.5 %)."""
    robot = pkm.load(DELTA)
    z0 = float(_start(robot)[2])
    path = BlendedPolyline([[0.0, 0.0, z0], [0.0, 0.0, z0 + 0.025], [0.15, 0.0, z0 + 0.025]], 0.0125)
    J = 5e3
    times = {}
    for n in (40, 100, 400):
        res = pkm.time_optimal(robot, path, n=n, jerk=J)
        assert all(_quarter_jerk(p, J) <= 1.0 + 1e-6 for p in res.pieces), n
        times[n] = res.cycle_time
    assert max(times.values()) <= 1.01 * min(times.values()), times



@pytest.mark.parametrize("n", [60, 200])
@pytest.mark.parametrize("blend", [1e-7, 1e-6])
def test_a_blend_too_sharp_for_the_jerk_programme_is_refused(blend, n):
    """The sequential LP stalled on micrometre corner blends and reported the stall as optimal: 0.1 and 1 µm
    gave the Delta 6.1 and 3.8 s at 200 points (1.9 s for 1 µm at 60), against 0.39 s with a stop at each corner
    and 0.42 s with a 10 or 100 µm blend. Such a blend is now a one-line error, on any grid (as the torque-limited
    solver refuses it); sharp corners and a 0.1 mm blend on the same grid are solved, the blend's cycle within 10 %
    of the corners' stops (the stall was 5–15 times it)."""
    robot = pkm.load(DELTA)
    with pytest.raises(pkm.InputError, match=r"corner blend of the path .* shorter than the finest jerk-limited "
                                             r"grid's step") as exc:
        pkm.time_optimal(robot, pick_place_route(_start(robot), blend=blend), n=n, jerk=1e4)
    assert "\n" not in str(exc.value)
    stop, blended = (pkm.time_optimal(robot, pick_place_route(_start(robot), blend=b), n=n, jerk=1e4)
                     for b in (0.0, 1e-4))
    assert check_jerk(stop, 1e4) <= 1 + 1e-6 and check_jerk(blended, 1e4) <= 1 + 1e-6
    assert 0.3 < stop.cycle_time and 0.95 < blended.cycle_time / stop.cycle_time < 1.1
