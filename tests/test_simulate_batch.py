"""Batches of simulations (issue 32.2, :mod:`pkm.sim.batch`): ``robot.simulate_batch`` gives each
member what ``robot.simulate(..., method="RK4", form="task")`` gives that run alone (several
initial states, two torque tables, a payload variation), a failing member is reported on its own
without spoiling the others, bad inputs are one-line InputErrors, and the numba RK4 run in chunks
gives the bits of one call."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pkm
from pkm.errors import InputError, PkmError
from pkm.robot import Robot
from pkm.sim.inputs import Table

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
SPAN, DT, EVERY = (0.0, 0.12), 2e-3, 5


@pytest.fixture(scope="module")
def delta():
    return pkm.load(ROBOTS / "delta_3rr2rrr.toml")


@pytest.fixture(scope="module")
def case(delta):
    """Four members: two initial states under table A, one under table B, one with a 0.4 kg payload
    under table B; the batch, and the robots."""
    r = delta
    heavy = Robot(r.spec.with_payload(0.4))
    hold = r.forward_dynamics(r.x_ref, np.zeros(3), np.zeros(3)).bias[0]
    t = np.linspace(SPAN[0], SPAN[1], 13)
    wave = np.sin(2 * np.pi * 8 * t)[:, None]
    A = Table(t, hold + wave * np.array([0.4, -0.3, 0.2]))
    B = Table(t, 1.05 * hold - wave * np.array([0.1, 0.5, -0.2]))
    X0 = r.x_ref + np.array([[0.0, 0.0, 0.0], [0.03, -0.02, 0.01], [-0.02, 0.03, 0.02], [0.01, 0.01, -0.02]])
    XD0 = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, -0.1], [0.0, 0.0, 0.0], [0.0, -0.1, 0.0]])
    members = dict(u=[A, A, B, B], x0=X0, xd0=XD0, robots=[r, r, r, heavy])
    res = r.simulate_batch(members["u"], SPAN, X0, XD0, dt=DT, robots=members["robots"], every=EVERY, threads=2)
    return members, res


def test_batch_equals_single_runs(case):
    members, res = case
    assert list(res.status) == ["ok"] * 4 and res.message == [""] * 4 and np.isnan(res.t_fail).all()
    for b in range(4):
        rb = members["robots"][b]
        single = rb.simulate(members["u"][b], SPAN, members["x0"][b], members["xd0"][b], method="RK4", form="task",
                             dt=DT)
        kept = slice(None, None, EVERY)
        assert np.array_equal(res.t, single.t[kept])
        for name in ("x", "xd", "q_act", "qd_act", "work", "energy_error"):
            got, ref = getattr(res, name)[b], getattr(single, name)[kept]
            assert np.abs(got - ref).max() <= 1e-12 * max(1.0, np.abs(ref).max()), (b, name)
        assert np.abs(res.closure[b] - single.closure[kept].max(axis=1)).max() <= 1e-12
    # the payload moved the fourth member (the same table B and a near state otherwise)
    light = members["robots"][0].simulate(members["u"][3], SPAN, members["x0"][3], members["xd0"][3],
                                          method="RK4", form="task", dt=DT)
    assert np.abs(light.x[::EVERY] - res.x[3]).max() > 1e-4
    assert "4 members (4 ok)" in res.health()


def test_a_payload_array_equals_robots_with_the_payload(delta, case):
    """``payloads=`` (a parameter array: no robot built per member) gives what the robot
    ``Robot(spec.with_payload(m))`` gives (members 2 and 3 of the batch: 0 and 0.4 kg)."""
    members, res = case
    again = delta.simulate_batch(members["u"][2:], SPAN, members["x0"][2:], members["xd0"][2:], dt=DT,
                                 payloads=[0.0, 0.4], every=EVERY, threads=1)
    for name in ("x", "xd", "q_act", "work", "energy_error"):
        got, ref = getattr(again, name), getattr(res, name)[2:]
        assert np.abs(got - ref).max() <= 1e-12 * max(1.0, np.abs(ref).max()), name
    with pytest.raises(InputError, match="payloads") as exc:
        delta.simulate_batch("hold", SPAN, dt=DT, payloads=[0.1, -1.0])
    assert len(str(exc.value).splitlines()) == 1


def test_threads_and_chunks_give_the_same_bits(delta, case, monkeypatch):
    """One thread, and chunks of 7 steps (a chunk boundary between the kept outputs), equal the batch."""
    import pkm.sim.task as task

    members, res = case
    monkeypatch.setattr(task, "CHUNK_STEPS", 7)
    seen = []
    again = delta.simulate_batch(members["u"], SPAN, members["x0"], members["xd0"], dt=DT, robots=members["robots"],
                                 every=EVERY, threads=1, progress=lambda done, total: seen.append((done, total)))
    for name in ("x", "xd", "work", "q_act", "energy_error"):
        assert np.array_equal(getattr(again, name), getattr(res, name)), name
    n = int(round((SPAN[1] - SPAN[0]) / DT))
    assert len(seen) == 4 * -(-(n + 1) // 7) and seen[-1] == (4 * (n + 1), 4 * (n + 1))
    assert all(a[0] < b[0] for a, b in zip(seen, seen[1:]))


def test_numba_rk4_in_chunks_equals_one_call_and_reports_progress(delta, monkeypatch):
    """Issue 30.5: the numba RK4 of robot.simulate runs in chunks so that a bar can advance; the chunks
    give the same bits as one call (the IK start, the stages and the last stage's time carry over)."""
    import pkm.sim.task as task

    args = ("hold", (0.0, 0.2), delta.x_ref + np.array([0.02, 0.0, 0.0]))
    seen = []
    whole = delta.simulate(*args, method="RK4", form="task", dt=1e-3, progress=seen.append)
    assert seen == [0.2]   # one chunk (CHUNK_STEPS = 1000 > 201 passes)
    monkeypatch.setattr(task, "CHUNK_STEPS", 30)
    seen.clear()
    cut = delta.simulate(*args, method="RK4", form="task", dt=1e-3, progress=seen.append)
    for name in ("x", "xd", "xdd", "q_act", "work", "energy_error", "closure"):
        assert np.array_equal(getattr(cut, name), getattr(whole, name)), name
    assert len(seen) == 7 and np.all(np.diff(seen) > 0) and seen[-1] == pytest.approx(0.2)


def test_a_failing_member_is_reported_alone(delta, case):
    """A member out of reach at the start and one that falls into the Delta's stretched-arm
    singularity (zero torques) fail with robot.simulate's own message; the others equal their
    single runs."""
    members, _ = case
    r = delta
    x0 = np.array([r.x_ref, [0.0, 0.0, -0.3], r.x_ref])
    span = (0.0, 0.5)
    res = r.simulate_batch(["hold", "hold", "zero"], span, x0, dt=DT, every=25, threads=2)
    assert list(res.status) == ["ok", "ik-failure", "ik-failure"]   # the fall leaves the workspace at the arms' stretch
    assert np.isfinite(res.x[0]).all() and np.isfinite(res.energy_error[0]).all()
    with pytest.raises(PkmError) as single:
        r.simulate("zero", span, x0[2], method="RK4", form="task", dt=DT)
    assert res.message[2] == str(single.value) and len(res.message[2].splitlines()) == 1
    assert 0.0 < res.t_fail[2] < span[1] and res.t_fail[1] == 0.0 and "limb" in res.message[1]
    reached = res.t <= res.t_fail[2]
    assert np.isfinite(res.x[2][reached]).all() and np.isnan(res.x[2][~reached]).all()
    assert np.isnan(res.x[1]).all()
    ok = r.simulate("hold", span, x0[0], method="RK4", form="task", dt=DT)
    assert np.array_equal(res.x[0], ok.x[::25])
    assert "1 ok" in res.health() and "ik-failure" in res.health()


@pytest.mark.parametrize("bad, match", [
    (dict(x0=np.zeros((3, 3)), u=["zero", "hold"]), "one length B"),
    (dict(x0=[0.0, np.nan, -0.9]), "NaN"),
    (dict(xd0=np.ones((2, 2))), "task coordinates"),
    (dict(u=[1.0, np.nan, 0.0]), "finite"),
    (dict(u=[[1.0, 2.0], [3.0, 4.0]]), "finite actuator forces"),
    (dict(u=lambda t, x, xd: np.zeros(3)), "controller"),
    (dict(u=["zero", lambda t, x, xd: np.zeros(3)]), "controller"),
    (dict(dt=-1e-3), "dt"),
    (dict(dt=None), "dt"),
    (dict(every=0), "every"),
    (dict(every=2.5), "every"),
    (dict(threads=0), "threads"),
    (dict(progress="yes"), "progress"),
    (dict(robots=[]), "robots"),
    (dict(robots={"a": 1}), "robots must be a non-empty list"),
    (dict(robots=["delta"]), "robots\\[0\\]"),
    (dict(t_span=(0.0, np.nan)), "t_span"),
    (dict(tol="x"), "tol"),
    (dict(speed=2), "simulate_batch: unknown keyword 'speed'"),
    (dict(wrench=np.ones(6)), "unknown keyword 'wrench'"),
    (dict(gravity=[0.0, np.nan, -9.81]), "gravity"),
    (dict(u=np.zeros((0, 3))), "at least one member"),
    (dict(x0=np.zeros((2, 2, 3))), "x0"),
    (dict(start="home"), "start|limb"),
])
def test_bad_inputs_are_one_line_input_errors(delta, bad, match):
    kw = dict(u="hold", t_span=(0.0, 0.01), x0=None, dt=1e-3)
    kw.update(bad)
    u, span, x0 = kw.pop("u"), kw.pop("t_span"), kw.pop("x0")
    with pytest.raises(InputError, match=match) as exc:
        delta.simulate_batch(u, span, x0, **kw)
    assert len(str(exc.value).splitlines()) == 1


def test_robots_of_another_structure_are_refused(delta):
    planar = pkm.load(ROBOTS / "planar_3rpr.toml")
    with pytest.raises(InputError, match="structure") as exc:
        delta.simulate_batch("hold", (0.0, 0.01), dt=1e-3, robots=[delta, planar])
    assert len(str(exc.value).splitlines()) == 1


def test_a_member_beyond_a_joint_limit_is_reported_at_its_time():
    """The linear Delta's unpowered carriages pass their rails' end at 0.25 s (tests/test_limits.py):
    that member alone is "limit", at the output robot.simulate names; the held one is ok."""
    from conftest import TESTS

    robot = pkm.load(TESTS / "robots_ok" / "linear_delta_3puu.toml")
    res = robot.simulate_batch(["zero", "hold"], (0.0, 0.3), dt=0.01, threads=2)
    assert list(res.status) == ["limit", "ok"] and res.t_fail[0] == pytest.approx(0.25) and np.isnan(res.t_fail[1])
    with pytest.raises(pkm.LimitError) as single:
        robot.simulate("zero", (0.0, 0.3), method="RK4", form="task", dt=0.01)
    assert single.value.time == res.t_fail[0]
    assert "joint 'leg1/rail' at -0.30656" in res.message[0] and "at t = 0.25 s (output sample 25" in res.message[0]
    assert np.isfinite(res.x).all()   # the limit member keeps its rows (not valid past t_fail)


@pytest.mark.parametrize("lanes", [False, True])
def test_each_member_falls_under_its_own_robots_gravity(delta, lanes):
    """A member whose robot has another gravity (a machine mounted tilted: a Monte Carlo of the mounting)
    runs under that gravity, as its single ``robot.simulate`` does, and holds still under its own
    ``"hold"`` forces, on the threads and in SIMD lanes (4 + 4 members: two lane calls); the batch's
    first robot's gravity used to be applied to every member. The energy balance holds under it."""
    import dataclasses

    g = np.array(delta.spec.gravity, dtype=float)
    c, s = np.cos(0.3), np.sin(0.3)
    tilted = Robot(dataclasses.replace(delta.spec, gravity=np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]) @ g))
    robots = [delta, tilted] * 4
    X0 = delta.x_ref + 0.01 * np.arange(8)[:, None] * np.array([0.1, -0.2, 0.3])
    res = delta.simulate_batch("hold", SPAN, X0, dt=DT, robots=robots, every=EVERY, threads=1, lanes=lanes)
    assert list(res.status) == ["ok"] * 8
    for b, rb in enumerate(robots):
        single = rb.simulate("hold", SPAN, X0[b], method="RK4", form="task", dt=DT)
        assert np.abs(res.x[b] - single.x[::EVERY]).max() <= 1e-12, b
        assert np.abs(res.x[b] - X0[b]).max() <= 1e-9, b   # held at rest under its own gravity
        assert np.abs(res.energy_error[b]).max() <= 1e-9, b
    assert np.array_equal(delta.spec.gravity, g)   # the robots' own gravity left as it was


def test_a_member_whose_energy_balance_fails_is_not_ok():
    """RK4 at dt = 0.02 s under large torques: 65 % of the member's energy wrong (``robot.simulate`` warns of the
    same run), yet its status was "ok". Now "inaccurate" with the warning's message, its outputs kept. At a step
    twenty times smaller the member is ok up to 0.12 s (its energy within 1e-7) and leaves the workspace at 0.134 s:
    the coarse run's motion past 0.12 s was the integrator's, not the robot's."""
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    u = np.array([[40.0, -40.0, 20.0]])
    coarse = robot.simulate_batch(u, (0.0, 0.2), dt=0.02)
    assert list(coarse.status) == ["inaccurate"] and not coarse.ok[0]
    assert "energy balance fails" in coarse.message[0] and "\n" not in coarse.message[0]
    assert np.isfinite(coarse.x).all() and coarse.t[0] <= coarse.t_fail[0] < coarse.t[-1]
    assert np.abs(coarse.energy_error[0]).max() > 0.1 * coarse.energy_scale[0]
    with pytest.warns(pkm.AccuracyWarning, match="energy balance fails"):
        robot.simulate(u[0], (0.0, 0.2), method="RK4", form="task", dt=0.02)
    fine = robot.simulate_batch(u, (0.0, 0.12), dt=0.001)
    assert list(fine.status) == ["ok"] and np.abs(fine.energy_error[0]).max() <= 1e-6 * fine.energy_scale[0]
    assert list(robot.simulate_batch(u, (0.0, 0.2), dt=0.001).status) == ["ik-failure"]
