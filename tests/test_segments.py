"""Segment length from N and the machine (issue 18 follow-up): :func:`pkm.kernels.batch.segment_length`'s rule,
and results that are the same bits for any ``threads`` with the longer segments, on the SIMD path and the scalar
kernel."""

from __future__ import annotations

import numpy as np
import pytest

import pkm
from pkm.kernels import batch
from pkm.kernels.batch import segment_length

from conftest import ROBOTS


@pytest.mark.parametrize("split, N, lanes, length", [
    (1, 10_000, 4, 2500), (1, 10_000, 8, 1250), (1, 20_000, 0, 4096), (1, 3000, 0, 3000),
    (2, 10_000, 4, 1250), (2, 10_000, 8, 625), (2, 20_000, 0, 4096), (2, 3000, 0, 1500), (2, 3000, 1, 1500),
    (3, 10_000, 4, 834), (3, 10_000, 8, 417), (3, 3000, 0, 1000), (3, 8193, 0, 2731),
    (16, 10_000, 8, 256), (16, 10_000, 0, 625), (16, 20_000, 4, 313)])
def test_segment_length_values(monkeypatch, split, N, lanes, length):
    """Worked cases of ``min(4096, max(256, ⌈N / (max(lanes, 1)·SPLIT)⌉))``, by hand; N = 1, N < SEGMENT and a
    huge N at every SPLIT and lane count."""
    monkeypatch.setattr(batch, "SPLIT", split)
    assert (batch.SEGMENT, batch.SEGMENT_MAX) == (256, 4096)
    assert segment_length(N, lanes) == length
    for w in (0, 1, 2, 4, 8):
        assert segment_length(1, w) == segment_length(255, w) == 256  # one short segment
        assert segment_length(10 ** 7, w) == 4096


@pytest.mark.parametrize("split", [1, 2, 4])
@pytest.mark.parametrize("lanes", [0, 4, 8])
def test_segment_length_invariants(monkeypatch, split, lanes):
    """For every N: segments between SEGMENT and SEGMENT_MAX (all but the last); exactly lanes·SPLIT segments
    (a full group of lanes for each thread) whenever neither bound applies; at most that many at SEGMENT; at
    least that many at SEGMENT_MAX."""
    monkeypatch.setattr(batch, "SPLIT", split)
    k = max(lanes, 1) * split
    for N in list(range(1, 3000, 7)) + list(range(3000, 200_000, 997)) + [10 ** 6, 10 ** 7]:
        L = segment_length(N, lanes)
        nseg = -(-N // L)
        assert 256 <= L <= 4096
        if L == 256:
            assert N <= 256 * k and nseg <= k
        elif L == 4096:
            assert N > 4095 * k and nseg >= k
        else:
            assert nseg == k, (N, L)


def _long(robot, count):
    from pkm.trajectory import from_spec

    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    k = -(-count // (len(tr.t) - 1))  # the robot's (periodic) motion repeated
    T = np.arange(k * (len(tr.t) - 1)) * (tr.t[1] - tr.t[0])
    return tuple(np.tile(a[:-1], (k, 1))[:count] for a in (tr.x, tr.xd, tr.xdd)) + (T[:count],)


@pytest.mark.parametrize("simd", [True, False], ids=["simd", "scalar"])
def test_same_bits_for_any_thread_count(monkeypatch, simd):
    """N = 6000 samples of the Delta with times: several segments of segment_length (375 on 8 lanes, 750 on 4,
    3000 scalar, with SPLIT = 2), each a cold start; threads = 1, 2 and 3 give the same bits (np.array_equal)."""
    monkeypatch.setattr(batch, "SPLIT", 2)
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    X, XD, XDD, t = _long(robot, 6000)
    lanes = batch._lane_count(robot._packed(), len(X), simd)
    assert (lanes > 0) == simd
    L = segment_length(len(X), lanes)
    assert L > batch.SEGMENT and -(-len(X) // L) >= 2  # longer segments than 256, and several

    runs = {}
    for threads in (1, 2, 3):
        seen = []
        runs[threads] = robot.inverse_dynamics(X, XD, XDD, t=t, simd=simd, threads=threads, progress=seen.append)
        assert sum(seen) == len(X) and max(seen) <= max(lanes, 1) * L
    for threads in (2, 3):
        a, b = runs[1], runs[threads]
        assert np.array_equal(a.tau, b.tau) and np.array_equal(a.q_act, b.q_act)
        assert np.array_equal(a.J_IK, b.J_IK) and np.array_equal(a.limb_wrenches, b.limb_wrenches)
        for name in a.joints:
            assert np.array_equal(a.joints[name], b.joints[name])
            assert np.array_equal(a.joints_d[name], b.joints_d[name])
            assert np.array_equal(a.joints_dd[name], b.joints_dd[name])


def test_segments_cut_where_segment_length_says(monkeypatch):
    """The cold starts sit at multiples of segment_length: the kernel is asked for exactly those ranges."""
    monkeypatch.setattr(batch, "SPLIT", 2)
    robot = pkm.load(ROBOTS / "delta_3rr2rrr.toml")
    X, XD, XDD, t = _long(robot, 6000)
    ranges = []
    orig = batch._Run.range

    def spy(self, a, e, *args, **kw):
        if "out" not in kw:  # not the one-sample checks of a segment's start
            ranges.append((a, e))
        return orig(self, a, e, *args, **kw)

    monkeypatch.setattr(batch._Run, "range", spy)
    robot.inverse_dynamics(X, XD, XDD, t=t, simd=False, threads=1)
    assert ranges[:2] == [(0, 3000), (3000, 6000)]
