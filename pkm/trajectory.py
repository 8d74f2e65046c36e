"""Task-space trajectories with analytic velocities and accelerations.

A :class:`Trajectory` holds sampled task coordinates ``x(t)``, velocities ``ẋ(t)`` and
accelerations ``ẍ(t)``.  Every generator here evaluates closed-form expressions -- nothing is
obtained by numerical differentiation -- vectorised over the sample times:

* :func:`sine` -- the straight-line sine motion of Müller's Sec. 9.4,
  ``r(t) = c + A sin(2πt/T)``;
* :func:`line` -- a rest-to-rest straight line with the quintic time law
  ``s(τ) = 10τ³ − 15τ⁴ + 6τ⁵`` (zero velocity and acceleration at both ends);
* :func:`pick_place` -- the standard pick-and-place cycle (up, across, down, up, back, down),
  every move a septic rest-to-rest law ``s(τ) = 35τ⁴ − 84τ⁵ + 70τ⁶ − 20τ⁷`` so that position,
  velocity, acceleration and jerk are continuous everywhere; optionally with rounded corners;
* :func:`from_spec` -- the default trajectory of a robot file (``RobotSpec.trajectory``);
* :meth:`Trajectory.to_csv` / :func:`read_csv` -- the CSV format ``t, x…, xd…, xdd…``.

Times are ``t_i = i·dt`` for ``i = 0 … n`` with ``n = round(duration/dt)``; ``duration`` must be
an integer multiple of ``dt`` (to 1e-9 relative), so the last sample is the end of the motion.
All generators also accept ``times=`` (any strictly increasing sample times) instead of ``dt``;
outside ``[0, duration]`` the rest-to-rest motions stay at rest at their end points.

Units are whatever the inputs use (pkm works in SI: metres, seconds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Sequence

import numpy as np

__all__ = [
    "Trajectory", "Segment", "sine", "line", "pick_place", "pick_place_segments", "from_spec",
    "read_csv", "default_names", "SEPTIC_PEAK_VELOCITY", "SEPTIC_PEAK_ACCELERATION",
]

#: World axis index of each translational task coordinate name.
_WORLD_AXES = {"x": 0, "y": 1, "z": 2}
#: Rotational task coordinate names (held at their reference value 0 by :func:`from_spec`).
_ROTATIONS = ("rx", "ry", "rz")
#: Peak of |s'| and |s''| of the septic law on [0, 1] (at τ = 1/2 and τ = (5 ∓ √5)/10).
SEPTIC_PEAK_VELOCITY = 140.0 / 64.0
SEPTIC_PEAK_ACCELERATION = 420.0 * 0.04 / math.sqrt(5.0)


# ====================================================================== the data
@dataclass(frozen=True, eq=False)
class Trajectory:
    """Sampled task-space motion: times, positions, velocities, accelerations.

    Attributes
    ----------
    t:
        ``(N,)`` strictly increasing sample times.
    x, xd, xdd:
        ``(N, d)`` task coordinates, their first and second time derivatives.
    names:
        The ``d`` coordinate names (e.g. ``("x", "y", "z")``); CSV columns are ``t``, the names,
        the names + ``"d"`` and the names + ``"dd"``.

    The arrays are stored as read-only float64 copies.

    >>> import numpy as np
    >>> tr = Trajectory(t=[0.0, 1.0], x=[[0.0], [1.0]], xd=[[1.0], [1.0]], xdd=[[0.0], [0.0]],
    ...                 names=("s",))
    >>> len(tr), tr.dim, tr.columns
    (2, 1, ('t', 's', 'sd', 'sdd'))
    """

    t: np.ndarray
    x: np.ndarray
    xd: np.ndarray
    xdd: np.ndarray
    names: tuple[str, ...]

    def __post_init__(self):
        names = self.names
        if isinstance(names, str) or not all(
                isinstance(n, str) and n and "," not in n and not any(c.isspace() for c in n) for n in names):
            raise ValueError(f"Trajectory names must be a sequence of non-empty strings without "
                             f"commas or white space, got {names!r}")
        names = tuple(names)
        t = np.array(self.t, dtype=float)
        if t.ndim != 1 or t.size == 0:
            raise ValueError(f"Trajectory t must be a non-empty 1-D array, got shape {t.shape}")
        d = len(names)
        arrays = {}
        for key in ("x", "xd", "xdd"):
            a = np.array(getattr(self, key), dtype=float)
            if a.ndim == 1 and d == 1:
                a = a[:, None]
            if a.shape != (t.size, d):
                raise ValueError(f"Trajectory {key} must have shape (N, d) = ({t.size}, {d}) for "
                                 f"{t.size} times and {d} names, got {a.shape}")
            arrays[key] = a
        for key, a in (("t", t), *arrays.items()):
            if not np.isfinite(a).all():
                raise ValueError(f"Trajectory {key} contains NaN or infinite values")
        if t.size > 1 and not (np.diff(t) > 0).all():
            k = int(np.argmax(np.diff(t) <= 0))
            raise ValueError(f"Trajectory times must be strictly increasing (t[{k}] = {t[k]!r}, "
                             f"t[{k + 1}] = {t[k + 1]!r})")
        columns = _columns(names)
        dup = sorted({c for c in columns if columns.count(c) > 1})
        if dup:
            raise ValueError(f"Trajectory column names are not unique: {', '.join(dup)}")
        for key, a in (("t", t), *arrays.items()):
            a.flags.writeable = False
            object.__setattr__(self, key, a)
        object.__setattr__(self, "names", names)

    def __len__(self) -> int:
        return self.t.size

    @property
    def dim(self) -> int:
        """Number of task coordinates ``d``."""
        return len(self.names)

    @property
    def columns(self) -> tuple[str, ...]:
        """CSV column names: ``t``, names, names + ``"d"``, names + ``"dd"``."""
        return _columns(self.names)

    def to_csv(self, path) -> None:
        """Write ``t, x…, xd…, xdd…`` with a header line; floats in shortest round-trip form.

        Every value is written as ``repr(float)``, which :func:`read_csv` parses back to the
        identical float64 (bit-exact round trip).

        >>> import tempfile, pathlib
        >>> tmp = tempfile.TemporaryDirectory()
        >>> tr = line([0.0, 0.0, 0.0], [0.1, 0.0, 0.0], duration=1.0, dt=0.5)
        >>> path = pathlib.Path(tmp.name) / "line.csv"
        >>> tr.to_csv(path)
        >>> print(path.read_text().splitlines()[0])
        t,x,y,z,xd,yd,zd,xdd,ydd,zdd
        >>> back = read_csv(path)
        >>> bool((back.x == tr.x).all() and (back.xdd == tr.xdd).all())
        True
        >>> tmp.cleanup()
        """
        data = np.column_stack([self.t, self.x, self.xd, self.xdd])
        lines = [",".join(self.columns)]
        lines.extend(",".join(map(repr, row)) for row in data.tolist())
        with open(path, "w", newline="") as fh:
            fh.write("\n".join(lines) + "\n")


def _columns(names: Sequence[str]) -> tuple[str, ...]:
    return ("t", *names, *(n + "d" for n in names), *(n + "dd" for n in names))


def default_names(d: int) -> tuple[str, ...]:
    """Default coordinate names: ``x, y, z`` for 3, ``x, z`` for 2 (a planar robot in the vertical
    x–z plane, like the IRSBot-2), ``x`` for 1; other dimensions need explicit names.

    >>> default_names(3), default_names(2)
    (('x', 'y', 'z'), ('x', 'z'))
    """
    table = {1: ("x",), 2: ("x", "z"), 3: ("x", "y", "z")}
    if d not in table:
        raise ValueError(f"no default coordinate names for {d} coordinates; pass names=")
    return table[d]


# ====================================================================== CSV
def _base_name(column: str) -> str:
    if column.endswith("dd"):
        return column[:-2]
    if column.endswith("d"):
        return column[:-1]
    return column


def read_csv(path, names: Sequence[str] | None = None) -> Trajectory:
    """Read a trajectory CSV (``t, x…, xd…, xdd…`` with a header line).

    ``names`` selects the coordinates (the file may hold more columns, and in any order); every
    one of ``t``, ``name``, ``name + "d"``, ``name + "dd"`` must be present.  Without ``names``
    the coordinates are inferred from the header (column names with a trailing ``d``/``dd``
    stripped, in order of first appearance) and all of them are read.  Blank lines and lines
    starting with ``#`` are skipped.  Any defect raises a :class:`ValueError` naming the file
    (and the column or line).

    >>> import tempfile, pathlib
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = pathlib.Path(tmp.name) / "m.csv"
    >>> _ = path.write_text("t,x,z,xd,zd,xdd,zdd\\n0,0,0,0,0,0,0\\n0.5,1,2,0,0,0,0\\n")
    >>> tr = read_csv(path)
    >>> tr.names, tr.x.tolist()
    (('x', 'z'), [[0.0, 0.0], [1.0, 2.0]])
    >>> read_csv(path, names=["z"]).x.tolist()
    [[0.0], [2.0]]
    >>> read_csv(path, names=["x", "y"])
    Traceback (most recent call last):
    ...
    ValueError: ...m.csv: missing column 'y'
    >>> tmp.cleanup()
    """
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ValueError(f"{path}: cannot read trajectory file: {exc.strerror or exc}") from None
    rows = [(k + 1, line) for k, line in enumerate(text.splitlines())
            if line.strip() and not line.lstrip().startswith("#")]
    if not rows:
        raise ValueError(f"{path}: empty trajectory file (expected a header line t,x,…)")
    header_line, header = rows[0][0], [c.strip() for c in rows[0][1].split(",")]
    if any(not c for c in header):
        raise ValueError(f"{path}: line {header_line}: empty column name in the header")
    dup = sorted({c for c in header if header.count(c) > 1})
    if dup:
        raise ValueError(f"{path}: line {header_line}: duplicate column {dup[0]!r}")
    if names is None:
        names = []
        for c in header:
            b = _base_name(c)
            if c != "t" and b and b not in names:
                names.append(b)
    names = tuple(names)
    if not names:
        raise ValueError(f"{path}: no coordinate columns (expected t,x,…,xd,…,xdd,…)")
    for col in _columns(names):
        if col not in header:
            raise ValueError(f"{path}: missing column {col!r}")
    index = [header.index(c) for c in _columns(names)]
    data = np.empty((len(rows) - 1, len(index)))
    for r, (lineno, line) in enumerate(rows[1:]):
        fields = line.split(",")
        if len(fields) != len(header):
            raise ValueError(f"{path}: line {lineno}: {len(fields)} values, expected {len(header)} "
                             f"(one per header column)")
        for j, k in enumerate(index):
            try:
                v = float(fields[k])
            except ValueError:
                raise ValueError(f"{path}: line {lineno}: column {header[k]!r}: not a number: "
                                 f"{fields[k].strip()!r}") from None
            if not math.isfinite(v):
                raise ValueError(f"{path}: line {lineno}: column {header[k]!r}: {v} is not finite")
            data[r, j] = v
    if data.shape[0] == 0:
        raise ValueError(f"{path}: no data rows after the header")
    d = len(names)
    try:
        return Trajectory(t=data[:, 0], x=data[:, 1:1 + d], xd=data[:, 1 + d:1 + 2 * d],
                          xdd=data[:, 1 + 2 * d:], names=names)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


# ====================================================================== argument checks
def _positive(value, what: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number, got {value!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{what} must be positive and finite, got {value!r}")
    return v


def _finite(value, what: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number, got {value!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{what} must be finite, got {value!r}")
    return v


def _vector(value, what: str, n: int | None = None) -> np.ndarray:
    try:
        v = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a vector of numbers, got {value!r}") from None
    if v.ndim != 1 or v.size == 0:
        raise ValueError(f"{what} must be a non-empty 1-D vector, got shape {v.shape}")
    if n is not None and v.size != n:
        raise ValueError(f"{what} must have {n} components, got {v.size}")
    if not np.isfinite(v).all():
        raise ValueError(f"{what} contains NaN or infinite values: {v.tolist()}")
    return v


def _names(names, d: int) -> tuple[str, ...]:
    if names is None:
        return default_names(d)
    names = (names,) if isinstance(names, str) else tuple(names)
    if len(names) != d:
        raise ValueError(f"{len(names)} names {list(names)} given for {d} coordinates")
    return names


def _times(duration: float, dt, times, what: str = "duration") -> np.ndarray:
    """``i·dt`` for ``i = 0 … round(duration/dt)``, or the given ``times``."""
    if times is not None:
        if dt is not None:
            raise ValueError("give either dt or times, not both")
        t = np.array(times, dtype=float)
        if t.ndim == 0:
            t = t[None]
        if t.ndim != 1 or t.size == 0:
            raise ValueError(f"times must be a non-empty 1-D array, got shape {t.shape}")
        if not np.isfinite(t).all():
            raise ValueError("times contains NaN or infinite values")
        return t
    if dt is None:
        raise ValueError("give the sample period dt (or times=)")
    dt = _positive(dt, "dt")
    ratio = duration / dt
    n = round(ratio)
    if n < 1 or abs(ratio - n) > 1e-9 * max(1.0, ratio):
        raise ValueError(f"{what} {duration!r} s is not a (positive) integer multiple of dt {dt!r} s "
                         f"({what}/dt = {ratio!r})")
    return np.arange(n + 1) * dt


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
    w = 2.0 * math.pi / period
    sn, cs = np.sin(w * t)[:, None], np.cos(w * t)[:, None]
    return Trajectory(t=t, x=c + a * sn, xd=(a * w) * cs, xdd=(-a * w * w) * sn, names=names)


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
    s, sd, sdd = (v[:, None] for v in _move(t, 0.0, duration, _quintic))
    delta = p1 - p0
    x = np.where(s < 0.5, p0 + s * delta, p1 - (1.0 - s) * delta)
    return Trajectory(t=t, x=x, xd=sd * delta, xdd=sdd * delta, names=names)


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
        raise ValueError(f"pick-place needs at least 2 task coordinates (a vertical and a "
                         f"horizontal one), got {d}")
    if isinstance(vertical_axis, bool) or not isinstance(vertical_axis, (int, np.integer)):
        raise ValueError(f"vertical_axis must be an integer index, got {vertical_axis!r}")
    if not -d <= vertical_axis < d:
        raise ValueError(f"vertical_axis {vertical_axis} out of range for {d} coordinates")
    vert = int(vertical_axis) % d
    horiz = [k for k in range(d) if k != vert]
    lift = _finite(lift, "pick-place lift")
    if lift < 0:
        raise ValueError(f"pick-place lift must be >= 0 (it is measured up, along +coordinate "
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
                raise ValueError(f"pick-place travel must be horizontal: its vertical component "
                                 f"(coordinate {vert}) is {tv[vert]!r}, not 0")
            trav[:] = tv
        else:
            raise ValueError(f"pick-place travel must be a number or a vector of {d - 1} "
                             f"(horizontal) or {d} components, got {tv.size}")
    cycle_time = _positive(cycle_time, "pick-place cycle_time")
    blend = _finite(blend, "pick-place blend")
    if not 0.0 <= blend <= 1.0:
        raise ValueError(f"pick-place blend must be in [0, 1], got {blend!r}")
    up = np.zeros(d)
    up[vert] = lift
    L_v, L_h = lift, float(np.linalg.norm(trav))
    if L_v == 0 and L_h == 0:
        raise ValueError("pick-place lift and travel are both zero: there is no motion")
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
    return Trajectory(t=t, x=x, xd=xd, xdd=xdd, names=names)


# ====================================================================== robot files
_SPEC_KEYS = {
    "sine": ("center", "amplitude", "period", "duration", "dt"),
    "line": ("start", "end", "duration", "dt"),
    "pick-place": ("start", "lift", "travel", "cycle_time", "dt"),
    "file": ("path",),
}


def from_spec(traj: dict, task_names: Sequence[str] = ("x", "y", "z")) -> Trajectory:
    """The default trajectory of a robot file, in the task coordinates ``task_names``.

    ``traj`` is the validated dict :func:`pkm.robotfile.load_spec` stores in
    ``RobotSpec.trajectory`` (SI units; ``type`` is ``sine``, ``line``, ``pick-place`` or
    ``file``).  Its vectors are 3-D world vectors; the task coordinates ``x``, ``y``, ``z`` select
    their components (``task_names`` as from :meth:`pkm.spec.TaskSpec.coordinate_names`).

    * Positions (``center``, ``start``) may have any value in a world axis the task does not
      control (the robot's fixed offset); displacements (``amplitude``, ``end − start``,
      ``travel``) must be 0 there, else the motion could not be followed -- ValueError.
    * Rotational task coordinates (``rx``, ``ry``, ``rz``) are held at 0 (the reference
      orientation); a task with no translational coordinate cannot use these trajectories.
    * ``pick-place`` lifts along world +z (a ``z`` task coordinate is required); a scalar
      ``travel`` is along world x.
    * ``file`` reads the CSV at ``path`` with :func:`read_csv`, taking the columns named by
      ``task_names`` (the file may hold more).

    >>> from pkm.robotfile import load_spec
    >>> spec = load_spec("robots/irsbot2.toml")
    >>> tr = from_spec(spec.trajectory, spec.task.coordinate_names())
    >>> tr.names, tr.x.shape
    (('x', 'z'), (1001, 2))
    """
    if not isinstance(traj, dict):
        raise ValueError(f"trajectory must be a dict (RobotSpec.trajectory), got {type(traj).__name__}")
    kind = traj.get("type")
    if kind not in _SPEC_KEYS:
        raise ValueError(f"unknown trajectory type {kind!r} (expected one of {', '.join(_SPEC_KEYS)})")
    missing = [k for k in _SPEC_KEYS[kind] if k not in traj]
    if missing:
        raise ValueError(f"{kind} trajectory: missing key {missing[0]!r}")
    names = (task_names,) if isinstance(task_names, str) else tuple(task_names)
    if not names:
        raise ValueError("no task coordinate names given")
    unknown = [n for n in names if n not in _WORLD_AXES and n not in _ROTATIONS]
    if unknown:
        raise ValueError(f"unknown task coordinate {unknown[0]!r} (expected x, y, z, rx, ry, rz)")
    if kind == "file":
        return read_csv(traj["path"], names=names)

    trans = tuple(n for n in names if n in _WORLD_AXES)
    if not trans:
        raise ValueError(f"a {kind} trajectory moves the platform's position, but the task "
                         f"coordinates {', '.join(names)} have no translation")
    idx = [_WORLD_AXES[n] for n in trans]
    dropped = [a for a in range(3) if a not in idx]

    def world(key):
        return _vector(traj[key], f"{kind} trajectory {key}", 3)

    def displacement(v, what):
        for a in dropped:
            if v[a] != 0:
                raise ValueError(f"{kind} trajectory {what} has a non-zero {'xyz'[a]} component "
                                 f"({v[a]!r}), but the task coordinates are {', '.join(names)}")
        return v[idx]

    if kind == "sine":
        tr = sine(world("center")[idx], displacement(world("amplitude"), "amplitude"), traj["period"],
                  traj["duration"], traj["dt"], names=trans)
    elif kind == "line":
        p0, p1 = world("start"), world("end")
        displacement(p1 - p0, "end - start")
        tr = line(p0[idx], p1[idx], traj["duration"], traj["dt"], names=trans)
    else:
        if "z" not in trans:
            raise ValueError(f"a pick-place trajectory lifts along z, but the task coordinates "
                             f"are {', '.join(names)}")
        travel = traj["travel"]
        if np.ndim(travel) == 0:
            travel = [_finite(travel, "pick-place trajectory travel"), 0.0, 0.0]
        travel = displacement(_vector(travel, f"{kind} trajectory travel", 3), "travel")
        tr = pick_place(world("start")[idx], traj["lift"], travel, traj["cycle_time"], traj["dt"],
                        vertical_axis=trans.index("z"), names=trans)
    if trans == names:
        return tr
    # Insert the rotational coordinates, held at 0, in task order.
    out = {key: np.zeros((len(tr), len(names))) for key in ("x", "xd", "xdd")}
    for col, n in enumerate(names):
        if n in trans:
            j = trans.index(n)
            for key in out:
                out[key][:, col] = getattr(tr, key)[:, j]
    return Trajectory(t=tr.t, names=names, **out)
