"""simulate_batch in SIMD lanes (issue 32.2, :mod:`pkm.sim.batch_lanes`, :mod:`pkm.kernels.simd_forward`):
the lanes' right-hand sides equal the scalar kernel's stages, each member equals its run alone
(``robot.simulate(..., method="RK4", form="task")``) to 1e-12 with members differing in state,
forces and payload and a batch that is not a multiple of ``W``; a member failing mid-run is
reported exactly as alone while the others go on; ``lanes=False`` is the scalar path. The first
three for the 3RR[2RR]R Delta (constant ``H``), the 3R[2US] Delta (U-S loops) and the IRSBot-2 (limbs with a
configuration-dependent ``H``, :mod:`pkm.kernels.simd_forward_general`)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pkm
from pkm.errors import InputError, PkmError
from pkm.sim import batch_lanes
from pkm.sim.inputs import Table

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
DT = 2e-3


@pytest.fixture(scope="module")
def delta():
    return pkm.load(ROBOTS / "delta_3rr2rrr.toml")


@pytest.fixture(scope="module", params=["delta_3rr2rrr.toml", "delta_3r2us.toml", "irsbot2.toml"])
def robot(request):
    """A Delta whose limbs have a constant H, and two robots whose limbs are general."""
    return pkm.load(ROBOTS / request.param)


@pytest.fixture(scope="module")
def width(delta):
    w = batch_lanes.lanes_apply(delta, None, {})
    if w == 0:
        pytest.skip("no SIMD lanes on this machine (PKM_BATCH_LANES=0)")
    return w


def members(robot, B, span, seed=0):
    """``B`` members: perturbed initial states and rates, two torque tables about the holding forces, payloads."""
    rng = np.random.default_rng(seed)
    hold = robot.forward_dynamics(robot.x_ref, np.zeros(robot.task_dof), np.zeros(robot.task_dof)).bias[0]
    t = np.linspace(span[0], span[1], 11)
    wave = np.sin(2 * np.pi * 6 * t)[:, None]
    d, na = robot.task_dof, robot.n_act
    tables = [Table(t, hold + wave * np.array([0.3, -0.2, 0.1])[:na]),
              Table(t, 1.03 * hold - wave * np.array([0.1, 0.3, -0.2])[:na])]
    X0 = robot.x_ref + 0.02 * rng.uniform(-1, 1, (B, d))
    XD0 = 0.1 * rng.uniform(-1, 1, (B, d))
    return dict(u=[tables[b % 2] for b in range(B)], x0=X0, xd0=XD0, payloads=[(0.0, 0.1, 0.3)[b % 3] for b in range(B)])


@pytest.fixture
def captured(monkeypatch):
    """Each lane call's members and, after it, the runner's slopes, rates, IK solutions and stage counts."""
    seen = []
    run = batch_lanes.LaneRunner.run

    def spy(self, group, *args):
        run(self, group, *args)
        k = len(group)
        seen.append((list(group), self.scratch[:k, :4].copy(), self.rates[:k].copy(), self.work[0][:k].copy(),
                     self.counts[:k].copy()))
    monkeypatch.setattr(batch_lanes.LaneRunner, "run", spy)
    return seen


def test_the_lanes_right_hand_sides_equal_the_scalar_stages(robot, width, captured):
    """One RK4 step of W + 1 members: stage 0 is the scalar cold start, stages 1–3 and the end state are
    the lanes' (eq. 127–130): their slopes (ẋ, ẍ, power), the last stage's θ̇, θ̈ and the IK's θ equal
    the scalar kernel's :func:`pkm.kernels.forward.rk4_run` on the same member to 1e-12."""
    from pkm.sim.payload import with_payload
    from pkm.sim.forward import ForwardKernel
    from pkm.sim.task import piecewise_cubic, rk4_chunk, translational_axes

    B = width + batch_lanes.min_members(width)
    m = members(robot, B, (0.0, DT))
    res = robot.simulate_batch(m["u"], (0.0, DT), m["x0"], m["xd0"], dt=DT, payloads=m["payloads"], threads=1)
    assert res.ok.all() and sorted(b for g in captured for b in g[0]) == list(range(B))
    T = np.array([0.0, DT])
    for group, slopes, rates, th, counts in captured:
        assert (counts == (4, 1)).all()   # 4 lane stages (3 of the step, the end state) and the cold start
        for j, b in enumerate(group):
            r = with_payload(robot, m["payloads"][b])
            k = ForwardKernel(r, hold=False)
            d = r.task_dof
            Y, theta = np.empty((2, 2 * d + 1)), np.empty((2,) + k.th.shape)
            Y[0] = np.concatenate([m["x0"][b], m["xd0"][b], [0.0]])
            rt, sc = np.zeros((2,) + k.th.shape), np.zeros((6, 2 * d + 1))
            k.status[:] = (-1, 0, 0, 0)
            rk4_chunk(k, r._packed(), r, translational_axes(r), r.R0.T @ r.r0, piecewise_cubic(m["u"][b], 0.0, DT),
                      0, 2, T, Y, theta, rt, sc, np.zeros(r.n_act))
            assert k.status[0] == 0
            for got, ref in ((slopes[j], sc[:4]), (rates[j], rt), (th[j], k.th)):
                assert np.abs(got - ref).max() <= 1e-12 * max(1.0, np.abs(ref).max())


def test_lanes_equal_single_runs(robot, width, captured):
    """W + min_members members (two lane calls, the second partly filled) with their own initial
    states, tables and payloads equal their single runs to 1e-12; the lanes evaluated every stage
    but each member's cold start."""
    from pkm.robot import Robot

    span, every = (0.0, 0.1), 5
    B = width + batch_lanes.min_members(width)
    m = members(robot, B, span, seed=1)
    res = robot.simulate_batch(m["u"], span, m["x0"], m["xd0"], dt=DT, payloads=m["payloads"], every=every, threads=2)
    assert res.ok.all() and sorted(len(g[0]) for g in captured) == [batch_lanes.min_members(width), width]
    n = int(round(span[1] / DT))
    for _, _, _, _, counts in captured:
        assert (counts == (4 * n, 1)).all()
    robots = {p: Robot(robot.spec.with_payload(p)) if p else robot for p in set(m["payloads"])}
    for b in range(B):
        single = robots[m["payloads"][b]].simulate(m["u"][b], span, m["x0"][b], m["xd0"][b], method="RK4",
                                                   form="task", dt=DT)
        for name in ("x", "xd", "q_act", "qd_act", "work", "energy_error"):
            got, ref = getattr(res, name)[b], getattr(single, name)[::every]
            assert np.abs(got - ref).max() <= 1e-12 * max(1.0, np.abs(ref).max()), (b, name)


def test_a_member_failing_mid_run_is_reported_alone_in_lanes(robot, width, captured):
    """Unpowered from the reference pose the robot falls and its arms stretch: that member fails in its
    lane with robot.simulate's status, time and message, its rows after the failure NaN; the other
    members of its lane call go on and equal their single runs."""
    span, every = (0.0, 0.5), 25
    B = batch_lanes.min_members(width)
    offsets = np.array([[0.0, 0.0, 0.0]] + [[0.01 * b, -0.005 * b, 0.0] for b in range(1, B)])
    x0 = robot.x_ref + offsets[:, :robot.task_dof]
    u = ["zero"] + ["hold"] * (B - 1)
    res = robot.simulate_batch(u, span, x0, dt=DT, every=every, threads=1)
    assert [g[0] for g in captured] == [list(range(B))]
    assert list(res.status) == ["ik-failure"] + ["ok"] * (B - 1)
    with pytest.raises(PkmError) as single:
        robot.simulate("zero", span, x0[0], method="RK4", form="task", dt=DT)
    assert res.message[0] == str(single.value) and 0.0 < res.t_fail[0] < span[1]
    reached = res.t <= res.t_fail[0]
    assert np.isfinite(res.x[0][reached]).all() and np.isnan(res.x[0][~reached]).all()
    for b in range(1, B):
        ok = robot.simulate("hold", span, x0[b], method="RK4", form="task", dt=DT)
        assert np.abs(res.x[b] - ok.x[::every]).max() <= 1e-12
        assert np.abs(res.qd_act[b] - ok.qd_act[::every]).max() <= 1e-12 * max(1.0, np.abs(ok.qd_act).max())


def test_lanes_off_is_the_scalar_path(delta, width, captured, monkeypatch):
    """``lanes=False`` and ``PKM_BATCH_LANES=0`` run every member on the scalar kernel (its bits:
    robot.simulate's); a bad ``lanes`` or ``PKM_BATCH_LANES`` is a one-line InputError."""
    span = (0.0, 0.04)
    B = width
    m = members(delta, B, span, seed=2)
    off = delta.simulate_batch(m["u"], span, m["x0"], m["xd0"], dt=DT, lanes=False, threads=2)
    monkeypatch.setenv("PKM_BATCH_LANES", "0")
    env = delta.simulate_batch(m["u"], span, m["x0"], m["xd0"], dt=DT, threads=2)
    assert captured == []
    for b in range(B):
        single = delta.simulate(m["u"][b], span, m["x0"][b], m["xd0"][b], method="RK4", form="task", dt=DT)
        assert np.array_equal(off.x[b], single.x) and np.array_equal(env.x[b], single.x)
    monkeypatch.delenv("PKM_BATCH_LANES")
    for bad in (3, "yes", 16, 4.0, np.array([4]), [8]):
        with pytest.raises(InputError, match="lanes") as exc:
            delta.simulate_batch("hold", span, dt=DT, lanes=bad)
        assert len(str(exc.value).splitlines()) == 1
    for bad in ("3", "on", "8x"):
        monkeypatch.setenv("PKM_BATCH_LANES", bad)
        with pytest.raises(InputError, match="PKM_BATCH_LANES") as exc:
            delta.simulate_batch("hold", span, dt=DT)
        assert len(str(exc.value).splitlines()) == 1


def test_robots_differing_in_their_limbs_run_in_lane_calls_of_their_own(delta, width, captured):
    """Robots of one structure whose limbs differ (a longer upper arm: other kinematics and limb
    inertias) are grouped apart: each lane call holds one robot's members, each member equals its run alone."""
    other = pkm.load(ROBOTS / "delta_3rr2rrr.toml", parameters={"a": 260})
    k = batch_lanes.min_members(width)
    robots = [delta, other] * k
    rng = np.random.default_rng(3)
    X0 = np.array([r.x_ref for r in robots]) + 0.01 * rng.uniform(-1, 1, (2 * k, 3))
    span, every = (0.0, 0.06), 5
    res = delta.simulate_batch("hold", span, X0, dt=DT, robots=robots, every=every, threads=1)
    assert res.ok.all() and sorted(g[0] for g in captured) == [list(range(0, 2 * k, 2)), list(range(1, 2 * k, 2))]
    for b, r in enumerate(robots):
        single = r.simulate("hold", span, X0[b], method="RK4", form="task", dt=DT)
        for name in ("x", "xd", "qd_act"):
            got, ref = getattr(res, name)[b], getattr(single, name)[::every]
            assert np.abs(got - ref).max() <= 1e-12 * max(1.0, np.abs(ref).max()), (b, name)


def test_a_member_beyond_a_joint_limit_in_lanes():
    """The linear Delta (prismatic carriages, constant H: in lanes too): its unpowered member passes a
    rail's end at 0.25 s and is reported as robot.simulate reports it (time and message); the held
    members of its lane call equal their single runs."""
    from conftest import TESTS

    robot = pkm.load(TESTS / "robots_ok" / "linear_delta_3puu.toml")
    w = batch_lanes.lanes_apply(robot, None, {})
    if w == 0:
        pytest.skip("no SIMD lanes on this machine")
    B = batch_lanes.min_members(w)
    x0 = robot.x_ref + np.array([[0.0, 0.0, 0.0]] + [[0.001 * b, 0.0, -0.001 * b] for b in range(1, B)])
    res = robot.simulate_batch(["zero"] + ["hold"] * (B - 1), (0.0, 0.3), x0, dt=0.01, threads=1)
    assert list(res.status) == ["limit"] + ["ok"] * (B - 1)
    with pytest.raises(pkm.LimitError) as single:
        robot.simulate("zero", (0.0, 0.3), x0[0], method="RK4", form="task", dt=0.01)
    assert res.t_fail[0] == single.value.time and res.message[0] == str(single.value)
    assert np.isfinite(res.x).all()
    for b in range(1, B):
        ok = robot.simulate("hold", (0.0, 0.3), x0[b], method="RK4", form="task", dt=0.01)
        assert np.abs(res.x[b] - ok.x).max() <= 1e-12
