"""Trajectory generators with analytic derivatives: :func:`sine`, :func:`line` (quintic rest-to-rest)
and :func:`pick_place` (septic, jerk-continuous moves, optionally blended corners).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from pkm.errors import InputError

from pkm.trajectory.base import Trajectory, _finite, _names, _positive, _times, _vector


# ====================================================================== time laws
def _quintic(tau: np.ndarray):
    """``s = 10τ³ − 15τ⁴ + 6τ⁵`` and its first two τ-derivatives (τ ∈ [0, 1])."""
    u = tau * (1.0 - tau)
    s = tau ** 3 * (10.0 + tau * (-15.0 + 6.0 * tau))
    return s, 30.0 * u * u, 60.0 * u * (1.0 - 2.0 * tau)


def _septic(tau: np.ndarray):
    """``s = 35τ⁴ − 84τ⁵ + 70τ⁶ − 20τ⁷`` and its first two τ-derivatives (τ ∈ [0, 1]).

    ``s' = 140 τ³(1−τ)³``, ``s'' = 420 τ²(1−τ)²(1−2τ)``, ``s''' = 840 τ(1−τ)(1−5τ+5τ²)``: all
    three vanish at τ = 0 and 1, so a move extended by rest on both sides is C³ (jerk-continuous).
    """
    u = tau * (1.0 - tau)
    s = tau ** 4 * (35.0 + tau * (-84.0 + tau * (70.0 - 20.0 * tau)))
    return s, 140.0 * u ** 3, 420.0 * u * u * (1.0 - 2.0 * tau)


def _move(t: np.ndarray, t0: float, t1: float, law):
    """Time law of one rest-to-rest move on ``[t0, t1]``: ``(s, ṡ, s̈)`` at ``t``, at rest outside.

    τ is clipped to [0, 1], so before ``t0`` the values are exactly (0, 0, 0) and after ``t1``
    exactly (1, 0, 0).
    """
    T = t1 - t0
    tau = np.clip((t - t0) / T, 0.0, 1.0)
    s, s1, s2 = law(tau)
    return s, s1 / T, s2 / (T * T) + 0.0   # + 0.0: no -0.0 at τ = 1


# ====================================================================== generators
def sine(center, amplitude, period, duration, dt=None, *, names=None, times=None) -> Trajectory:
    """Straight-line sine motion ``r(t) = center + amplitude·sin(2πt/T)`` (Müller, Sec. 9.4).

    ``ṙ = A ω cos ωt`` and ``r̈ = −A ω² sin ωt`` with ``ω = 2π/T``: the peak speed is ``|A|ω``
    and the peak acceleration ``|A|ω²``.  Samples ``t = 0, dt, …, duration`` (``duration`` a
    multiple of ``dt``), or ``times``.  ``names`` default to :func:`default_names`.

    The paper's test motion: ``T = 10`` s, 1001 samples, peak speed 0.5099·0.6283 = 0.3204 m/s.

    >>> import numpy as np
    >>> tr = sine([0, 0, -0.944], [0.3, 0.4, 0.1], period=10, duration=10, dt=0.01)
    >>> len(tr), tr.names
    (1001, ('x', 'y', 'z'))
    >>> round(float(np.linalg.norm(tr.xd, axis=1).max()), 4)
    0.3204
    """
    c = _vector(center, "sine center")
    a = _vector(amplitude, "sine amplitude", c.size)
    period = _positive(period, "sine period")
    duration = _positive(duration, "sine duration")
    names = _names(names, c.size)
    t = _times(duration, dt, times)
    with np.errstate(all="ignore"):   # a period of 1e-320 s: ω overflows; reported by _motion
        w = 2.0 * math.pi / period
        sn, cs = np.sin(w * t)[:, None], np.cos(w * t)[:, None]
        return _motion("sine", t, c + a * sn, (a * w) * cs, (-a * w * w) * sn, names)


def line(start, end, duration, dt=None, *, names=None, times=None) -> Trajectory:
    """Rest-to-rest straight line from ``start`` to ``end`` with the quintic time law.

    ``x(t) = start + s·(end − start)`` with ``s(τ) = 10τ³ − 15τ⁴ + 6τ⁵``, ``τ = t/duration``: zero
    velocity and acceleration at both ends; peak speed
    ``1.875·L/duration`` at mid-time, peak acceleration ``(10/√3)·L/duration²``.  In the second
    half the position is evaluated as ``end − (1 − s)·(end − start)``, so both end points are met
    exactly and coordinates that do not change stay exactly constant.

    >>> tr = line([0.0, 0.0, -0.9], [0.2, 0.0, -0.9], duration=2.0, dt=0.5)
    >>> tr.t.tolist()
    [0.0, 0.5, 1.0, 1.5, 2.0]
    >>> tr.x[:, 0].round(6).tolist(), tr.x[:, 2].tolist()
    ([0.0, 0.020703, 0.1, 0.179297, 0.2], [-0.9, -0.9, -0.9, -0.9, -0.9])
    >>> tr.xd[[0, -1]].tolist(), tr.xdd[[0, -1]].tolist()
    ([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    """
    p0 = _vector(start, "line start")
    p1 = _vector(end, "line end", p0.size)
    duration = _positive(duration, "line duration")
    names = _names(names, p0.size)
    t = _times(duration, dt, times)
    with np.errstate(all="ignore"):
        s, sd, sdd = (v[:, None] for v in _move(t, 0.0, duration, _quintic))
        delta = p1 - p0
        x = np.where(s < 0.5, p0 + s * delta, p1 - (1.0 - s) * delta)
        return _motion("line", t, x, sd * delta, sdd * delta, names)


class Segment(NamedTuple):
    """One move of a pick-and-place cycle: ``kind`` (``up``, ``across``, ``down``, ``back``), the
    time window ``[t0, t1]`` and the corner points ``p0 → p1`` it moves between."""

    kind: str
    t0: float
    t1: float
    p0: np.ndarray
    p1: np.ndarray


def _pick_place_setup(start, lift, travel, cycle_time, vertical_axis, blend):
    p0 = _vector(start, "pick-place start")
    d = p0.size
    if d < 2:
        raise InputError(f"pick-place needs at least 2 task coordinates (a vertical and a "
                         f"horizontal one), got {d}")
    if isinstance(vertical_axis, bool) or not isinstance(vertical_axis, (int, np.integer)):
        raise InputError(f"vertical_axis must be an integer index, got {vertical_axis!r}")
    if not -d <= vertical_axis < d:
        raise InputError(f"vertical_axis {vertical_axis} out of range for {d} coordinates")
    vert = int(vertical_axis) % d
    horiz = [k for k in range(d) if k != vert]
    lift = _finite(lift, "pick-place lift")
    if lift < 0:
        raise InputError(f"pick-place lift must be >= 0 (it is measured up, along +coordinate "
                         f"{vert}), got {lift!r}")
    trav = np.zeros(d)
    if np.ndim(travel) == 0:
        trav[horiz[0]] = _finite(travel, "pick-place travel")
    else:
        tv = _vector(travel, "pick-place travel")
        if tv.size == d - 1:
            trav[horiz] = tv
        elif tv.size == d:
            if tv[vert] != 0:
                raise InputError(f"pick-place travel must be horizontal: its vertical component "
                                 f"(coordinate {vert}) is {tv[vert]!r}, not 0")
            trav[:] = tv
        else:
            raise InputError(f"pick-place travel must be a number or a vector of {d - 1} "
                             f"(horizontal) or {d} components, got {tv.size}")
    cycle_time = _positive(cycle_time, "pick-place cycle_time")
    blend = _finite(blend, "pick-place blend")
    if not 0.0 <= blend <= 1.0:
        raise InputError(f"pick-place blend must be in [0, 1], got {blend!r}")
    up = np.zeros(d)
    up[vert] = lift
    L_v, L_h = lift, float(np.linalg.norm(trav))
    if L_v == 0 and L_h == 0:
        raise InputError("pick-place lift and travel are both zero: there is no motion")
    # Durations ∝ √length (equal peak accelerations), overlap o at each vertical/horizontal corner.
    half = 0.5 * cycle_time
    rv, rh = math.sqrt(L_v), math.sqrt(L_h)
    k = half / (2.0 * rv + rh - 2.0 * blend * min(rv, 0.5 * rh))
    T_v = k * rv
    o = blend * min(T_v, 0.5 * k * rh)
    # Windows: the return half is the go half shifted by cycle_time/2; the down move of each half
    # mirrors its up move, so the half ends exactly at cycle_time/2 and the cycle at cycle_time.
    P = [p0, p0 + up, p0 + up + trav, p0 + trav]
    moves = []   # (kind, t0, t1, which profile: 'v' or 'h', sign, corner from, corner to)
    for shift, end, horizontal_kind, (a, b, c, e) in (
        (0.0, half, "across", (0, 1, 2, 3)),
        (half, cycle_time, "back", (3, 2, 1, 0)),
    ):
        if L_v > 0:
            moves.append(("up", shift, shift + T_v, "v", +1.0, P[a], P[b]))
        if L_h > 0:
            moves.append((horizontal_kind, shift + (T_v - o), end - (T_v - o), "h",
                          +1.0 if shift == 0.0 else -1.0, P[b], P[c]))
        if L_v > 0:
            moves.append(("down", end - T_v, end, "v", -1.0, P[c], P[e]))
    return p0, up, trav, moves


def pick_place_segments(start, lift, travel, cycle_time, *, vertical_axis=-1, blend=0.0) -> tuple[Segment, ...]:
    """The moves of :func:`pick_place` with their time windows and corner points.

    Without blending the windows tile ``[0, cycle_time]`` and each move ends exactly at its
    ``p1``; with ``blend > 0`` vertical and horizontal windows overlap, and the corners at the top
    are cut (``p0``/``p1`` are then the corners of the unblended path).  Moves of zero length
    (``lift = 0`` or ``travel = 0``) are left out.

    >>> segs = pick_place_segments([0, 0, -0.9], 0.025, 0.305, cycle_time=1.0)
    >>> [s.kind for s in segs]
    ['up', 'across', 'down', 'up', 'back', 'down']
    >>> segs[-1].t1, segs[1].p1.round(3).tolist()
    (1.0, [0.305, 0.0, -0.875])
    """
    _, _, _, moves = _pick_place_setup(start, lift, travel, cycle_time, vertical_axis, blend)
    return tuple(Segment(kind, float(t0), float(t1), a.copy(), b.copy())
                 for kind, t0, t1, _, _, a, b in moves)


def pick_place(start, lift, travel, cycle_time, dt=None, *, vertical_axis=-1, blend=0.0, names=None,
               times=None) -> Trajectory:
    """The standard pick-and-place test cycle, jerk-continuous, lasting ``cycle_time``.

    From ``start``: ``lift`` up (along +``vertical_axis``, default the last coordinate),
    ``travel`` across, ``lift`` down to ``start + travel``; then the same way back (up, back
    across, down) to ``start``.  ``travel`` is a number (a distance along the first horizontal
    coordinate, e.g. x), a vector of the ``d − 1`` horizontal coordinates, or a full ``d``-vector
    whose vertical component is 0.  For a 3-D task (x, y, z) the vertical axis is z; for a planar
    robot in the x–z plane (coordinates (x, z)) it is also the last one.

    Each move follows the septic rest-to-rest law ``s(τ) = 35τ⁴ − 84τ⁵ + 70τ⁶ − 20τ⁷``, whose
    velocity, acceleration and jerk vanish at both ends, so x, ẋ, ẍ and the jerk are continuous
    across every join, and the robot is at rest at every corner.

    **Timing rule.**  The move durations are proportional to the square root of their lengths,
    ``T_k = κ·√L_k``, with κ chosen so that the cycle lasts ``cycle_time``.  A move of length
    ``L`` and duration ``T`` peaks at ``SEPTIC_PEAK_ACCELERATION·L/T² ≈ 7.513·L/T²``, so this
    rule gives every move the same peak acceleration ``7.513/κ²`` (speed peaks at
    ``2.1875·L/T``).  The return half is the go half shifted by ``cycle_time/2``.

    **Blending** (``0 ≤ blend ≤ 1``, default 0 = sharp corners): the horizontal move starts
    ``o = blend·min(T_v, T_h/2)`` before the up move ends, and the down move starts ``o`` before
    the horizontal one ends (κ is re-chosen so the cycle time is still met).  The position is the
    exact superposition ``start + up·v(t) + travel·h(t)`` of the septic moves, so the path stays
    C³ and rounds its top corners; the pick and place points are still reached at rest, and the
    full lift height at least once per half-cycle (the up and down moves never overlap).

    >>> import numpy as np
    >>> tr = pick_place([0.0, 0.0, -0.9], lift=0.025, travel=0.305, cycle_time=1.0, dt=0.001)
    >>> len(tr), float(tr.t[-1])
    (1001, 1.0)
    >>> tr.x[-1].tolist() == [0.0, 0.0, -0.9], float(abs(tr.xd).max()) > 0
    (True, True)
    >>> planar = pick_place([0.0, -0.9], 0.025, 0.305, 1.0, dt=0.001)   # IRSBot-2: (x, z)
    >>> planar.names, round(float(planar.x[:, 1].max()), 3)
    (('x', 'z'), -0.875)
    """
    p0, up, trav, moves = _pick_place_setup(start, lift, travel, cycle_time, vertical_axis, blend)
    names = _names(names, p0.size)
    t = _times(float(cycle_time), dt, times, what="cycle_time")
    with np.errstate(all="ignore"):   # a lift of 1e-320 m divides by zero: reported by _motion
        prof = {"v": [np.zeros_like(t) for _ in range(3)], "h": [np.zeros_like(t) for _ in range(3)]}
        for _, t0, t1, which, sign, _, _ in moves:
            for acc, val in zip(prof[which], _move(t, t0, t1, _septic)):
                acc += sign * val
        v, h = prof["v"], prof["h"]
        # start + up·v + travel·h: the vertical/horizontal sums cancel exactly (1 − 1 + 1 − 1 = 0) at
        # the pick and place points, so the cycle returns bit-exactly to start.
        x = p0 + up * v[0][:, None] + trav * h[0][:, None]
        xd = up * v[1][:, None] + trav * h[1][:, None]
        xdd = up * v[2][:, None] + trav * h[2][:, None]
        return _motion("pick-place", t, x, xd, xdd, names)


def _motion(kind, t, x, xd, xdd, names) -> Trajectory:
    """The :class:`Trajectory`, or an InputError saying which of the generator's numbers are out of
    range (a finite lift of 1e-320 m or 1e308 m, a period of 1e-320 s: positions, rates or
    accelerations that overflow or divide by zero)."""
    for what, v in (("positions", x), ("rates", xd), ("accelerations", xdd)):
        if not np.all(np.isfinite(v)):
            raise InputError(f"{kind}: the motion's {what} are not finite (a length or time out of range, e.g. a "
                             f"denormal or near-overflow lift, travel, amplitude or period)")
    return Trajectory(t=t, x=x, xd=xd, xdd=xdd, names=names)
