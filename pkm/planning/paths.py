"""Geometric paths of the platform, ``x(s)`` with ``x'(s)`` and ``x''(s)``, for the time-optimal parametrisation.

A :class:`Path` maps its parameter ``s ∈ [0, length]`` to task coordinates; it is C² (``x''`` continuous)
with ``x'(s) ≠ 0``, so that the torques along it are affine in ``s̈`` and ``ṡ²`` with continuous
coefficients (:mod:`pkm.planning.coefficients`). A **route** is a tuple of paths each run rest to rest
(a reversal or a sharp corner is a stop: there ``ṡ = 0`` by necessity).

* :class:`LinePath` — a straight line, ``s`` its arc length;
* :class:`BlendedPolyline` — a polyline whose corners are cut by quintic Bézier blends (three control
  points on each side, equally spaced: the blend leaves each line with ``x' = `` the line's unit
  direction and ``x'' = 0``, so the path is C² with ``s`` the arc length on the lines);
* :class:`SplinePath` — a cubic spline (scipy, not-a-knot) through waypoints, ``s`` their chord length;
  :func:`read_path_csv` reads the waypoints from a CSV;
* :func:`pick_place_route` — the standard ("adept") cycle, lift up / travel across / lift down and back,
  as pkm's :func:`pkm.trajectory.laws.pick_place` lays it out (vertical axis, travel along the first
  horizontal coordinate, the start point the pick point).
"""
from __future__ import annotations

import math

import numpy as np

from pkm.errors import InputError
from pkm.trajectory.files import check_header, csv_lines

__all__ = ["Route", "Path", "LinePath", "BlendedPolyline", "SplinePath", "ReversedPath", "read_path_csv",
           "pick_place_route"]

#: Smallest piece length relative to the path's extent: shorter lines between blends are left out.
_TINY = 1e-12


def _points(points, what: str, dim: int | None = None) -> np.ndarray:
    try:
        p = np.array(points, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be numbers, got {points!r}") from None
    if p.ndim != 2 or p.shape[0] < 2 or p.shape[1] < 1 or (dim is not None and p.shape[1] != dim):
        raise InputError(f"{what} must be at least 2 points of {dim or 'd'} coordinates, got shape {p.shape}")
    if not np.all(np.isfinite(p)):
        raise InputError(f"{what} must be finite")
    with np.errstate(over="ignore", invalid="ignore"):
        far = not np.all(np.isfinite(_lengths(np.diff(p, axis=0))))
    if far:
        raise InputError(f"{what}: the distances between the points overflow float64 (coordinates up to "
                         f"{float(np.max(np.abs(p))):g}; task coordinates in SI units, m and rad)")
    return p


def _lengths(D) -> np.ndarray:
    """The Euclidean lengths of the rows of ``D`` (m, d), scaled so that squaring cannot overflow (a
    length up to float64's largest is exact; inf only where it is beyond)."""
    D = np.atleast_2d(np.asarray(D, dtype=float))
    with np.errstate(over="ignore", invalid="ignore"):
        scale = np.max(np.abs(D), axis=1)
        unit = np.where(scale[:, None] > 0, D / np.where(scale > 0, scale, 1.0)[:, None], 0.0)
        return scale * np.sqrt(np.sum(unit * unit, axis=1))


def _names(names) -> list:
    """The task coordinates' names as a list of strings (a one-line InputError otherwise)."""
    if isinstance(names, str) or not isinstance(names, (list, tuple, np.ndarray)) \
            or not all(isinstance(n, str) for n in names) or not len(names):
        raise InputError(f"names must be the task coordinates' names (a list of strings such as ['x', 'y', 'z']), "
                         f"got {names!r}")
    return list(names)


class Route:
    """Paths run one after the other, each from rest to rest; ``picks``: picks per run of the route (1 for
    a pick-and-place cycle, :func:`pick_place_route`; 0 when it is no cycle); ``kind`` a name for reports."""

    def __init__(self, paths, picks: int = 0, kind: str = "path"):
        try:
            paths = tuple(paths)
        except TypeError:
            raise InputError(f"a route's paths must be a sequence of pkm.planning Paths, got {type(paths).__name__}") from None
        bad = [k for k, p in enumerate(paths) if not isinstance(p, Path)]
        if not paths or bad:
            raise InputError(f"a route needs at least one pkm.planning Path, got "
                             f"{type(paths[bad[0]]).__name__ + ' at ' + str(bad[0]) if bad else 'none'}")
        if isinstance(picks, (bool, np.bool_)) or not isinstance(picks, (int, np.integer)) or picks < 0:
            raise InputError(f"a route's picks must be a whole number >= 0 (picks per run of the route), got {picks!r}")
        self.paths, self.picks, self.kind = paths, int(picks), str(kind)


class Path:
    """A C² geometric path: :meth:`evaluate` gives ``x, x', x''`` (n, d) at parameters ``s`` in
    ``[0, length]``; ``dim`` coordinates."""

    length: float
    dim: int

    def evaluate(self, s) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        raise NotImplementedError

    def reversed(self) -> "Path":
        return ReversedPath(self)

    def breakpoints(self) -> np.ndarray:
        """Interior parameters where the path's pieces join (``x‴`` may jump there; the jerk-limited grid,
        :func:`pkm.planning.jerk.path_grid`, puts a point on each); none here."""
        return np.zeros(0)

    def blends(self) -> np.ndarray:
        """``(k, 2)``: the start and end parameters of the path's corner blends (their curvature grows as they
        shrink: a short one turns the path within a short stretch); none here."""
        return np.zeros((0, 2))

    def _s(self, s) -> np.ndarray:
        try:
            s = np.atleast_1d(np.asarray(s, dtype=float))
        except (TypeError, ValueError):
            raise InputError(f"path parameters must be numbers in [0, {self.length:g}], got {s!r}") from None
        if s.ndim != 1:
            raise InputError(f"path parameters must be a number or a 1-D array, got shape {s.shape}")
        if not np.all(np.isfinite(s)) or np.any(s < -1e-12 * self.length) or np.any(s > self.length * (1 + 1e-12)):
            raise InputError(f"path parameters must lie in [0, {self.length:g}]")
        return np.clip(s, 0.0, self.length)


class ReversedPath(Path):
    """``x_r(s) = x(L − s)``: the same geometry run backwards (``x_r' = −x'``, ``x_r'' = x''``)."""

    def __init__(self, path: Path):
        self.path, self.length, self.dim = path, path.length, path.dim

    def evaluate(self, s):
        x, d1, d2 = self.path.evaluate(self.length - self._s(s))
        return x, -d1, d2

    def breakpoints(self):
        return np.sort(self.length - self.path.breakpoints())

    def blends(self):
        return np.sort(self.length - self.path.blends(), axis=1)[::-1]


class LinePath(Path):
    """The straight line from ``start`` to ``end``, parametrised by arc length."""

    def __init__(self, start, end):
        p = _points([start, end], "line start and end")
        self.p0, self.p1 = p
        self.length = float(_lengths(p[1] - p[0])[0])
        scale = max(1.0, float(np.max(np.abs(p))))
        if not self.length > _TINY * scale:
            raise InputError("line start and end are the same point: there is no motion" if self.length == 0.0 else
                             f"line start and end are {self.length:g} apart: lost against the points' size {scale:g} "
                             f"(lengths in SI units, m)")
        self.u = (p[1] - p[0]) / self.length
        self.dim = p.shape[1]

    def evaluate(self, s):
        s = self._s(s)[:, None]
        n = s.shape[0]
        return self.p0 + s * self.u, np.tile(self.u, (n, 1)), np.zeros((n, self.dim))


# ---------------------------------------------------------------------- blended polyline
def _bernstein(k: int, n: int, t: np.ndarray) -> np.ndarray:
    return math.comb(n, k) * t ** k * (1.0 - t) ** (n - k)


class BlendedPolyline(Path):
    """A polyline through ``points`` whose inner corners are cut by quintic Bézier blends reaching
    ``blend`` (a length) along each adjacent line: control points ``P − d u₁, P − ⅔d u₁, P − ⅓d u₁,
    P + ⅓d u₂, P + ⅔d u₂, P + d u₂`` (``u₁``, ``u₂`` the unit directions into and out of the corner
    ``P``). At both ends of a blend ``x_τ = (5d/3) u`` and ``x_ττ = 0`` (collinear, equally spaced
    control points), so with the blend's parameter length ``5d/3`` the path's ``x'`` is the unit
    direction and ``x''`` vanishes at every join: C² everywhere, ``x' ≠ 0`` (every difference of
    control points is a non-negative combination of ``u₁`` and ``u₂``, which are not opposite)."""

    def __init__(self, points, blend: float):
        P = _points(points, "polyline points")
        try:
            blend = float(blend)
        except (TypeError, ValueError):
            raise InputError(f"blend must be a positive length [m], got {blend!r}") from None
        if not (math.isfinite(blend) and blend > 0.0):
            raise InputError(f"blend must be a positive length, got {blend!r} (0: sharp corners, a stop at each)")
        seg = np.diff(P, axis=0)
        L = _lengths(seg)
        scale = max(1.0, float(np.max(np.abs(P))))
        if np.any(L <= _TINY * scale):
            k = int(np.flatnonzero(L <= _TINY * scale)[0])
            raise InputError(f"polyline segment {k + 1} has length {L[k]:g}: zero, or lost against the points' "
                             f"size {scale:g} (lengths in SI units, m)")
        U = seg / L[:, None]
        corners = len(P) - 2
        for k in range(corners):
            if float(U[k] @ U[k + 1]) < -1.0 + 1e-9:
                raise InputError(f"the polyline reverses at point {k + 1}: a reversal needs a stop (split the route)")
        used = np.zeros(len(L))
        used[:-1] += blend
        used[1:] += blend
        if corners and np.any(used > L * (1 + 1e-12)):
            k = int(np.flatnonzero(used > L * (1 + 1e-12))[0])
            raise InputError(f"blend {blend:g} is too long for segment {k + 1} of length {L[k]:g} "
                             f"(the blends of its corners must fit on it)")
        self.dim = P.shape[1]
        pieces = []   # (kind, s0, length, data)
        s0 = 0.0
        for k in range(len(L)):
            a = P[k] + (blend * U[k] if k > 0 else 0.0)
            b = P[k + 1] - (blend * U[k] if k < len(L) - 1 else 0.0)
            ln = float(_lengths(b - a)[0])
            if ln > _TINY * L[k]:
                pieces.append(("line", s0, ln, (a, U[k])))
                s0 += ln
            if k < len(L) - 1:
                d, u1, u2, c = blend, U[k], U[k + 1], P[k + 1]
                Q = np.array([c - d * u1, c - 2 * d / 3 * u1, c - d / 3 * u1, c + d / 3 * u2, c + 2 * d / 3 * u2,
                              c + d * u2])
                ln = 5.0 * d / 3.0
                pieces.append(("blend", s0, ln, Q))
                s0 += ln
        self.pieces = pieces
        self.starts = np.array([p[1] for p in pieces])
        self.length = s0

    def evaluate(self, s):
        s = self._s(s)
        n = s.shape[0]
        x, d1, d2 = np.empty((n, self.dim)), np.empty((n, self.dim)), np.zeros((n, self.dim))
        which = np.clip(np.searchsorted(self.starts, s, side="right") - 1, 0, len(self.pieces) - 1)
        for k, (kind, s0, ln, data) in enumerate(self.pieces):
            m = which == k
            if not np.any(m):
                continue
            sig = np.clip(s[m] - s0, 0.0, ln)
            if kind == "line":
                a, u = data
                x[m], d1[m] = a + sig[:, None] * u, u
            else:
                Q, t = data, (sig / ln)[:, None]
                x[m] = sum(_bernstein(j, 5, t) * Q[j] for j in range(6))
                d1[m] = 5.0 * sum(_bernstein(j, 4, t) * (Q[j + 1] - Q[j]) for j in range(5)) / ln
                d2[m] = 20.0 * sum(_bernstein(j, 3, t) * (Q[j + 2] - 2 * Q[j + 1] + Q[j]) for j in range(4)) / ln ** 2
        return x, d1, d2

    def breakpoints(self):
        return self.starts[1:].copy()

    def blends(self):
        return np.array([(s0, s0 + ln) for kind, s0, ln, _ in self.pieces if kind == "blend"]).reshape(-1, 2)


# ---------------------------------------------------------------------- splines
class SplinePath(Path):
    """A cubic spline (scipy ``CubicSpline``, not-a-knot ends: C²) through ``points`` (m ≥ 2, d),
    parametrised by the chord length; 2 points are a line. ``x' ≠ 0`` is checked on a fine grid."""

    def __init__(self, points):
        from scipy.interpolate import CubicSpline

        P = _points(points, "path points")
        chord = _lengths(np.diff(P, axis=0))
        scale = max(1.0, float(np.max(np.abs(P))))
        if np.any(chord <= _TINY * scale):
            k = int(np.flatnonzero(chord <= _TINY * scale)[0])
            raise InputError(f"path points {k} and {k + 1} are the same point (a path needs distinct consecutive points)")
        self.knots = np.concatenate([[0.0], np.cumsum(chord)])
        self.length, self.dim = float(self.knots[-1]), P.shape[1]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            try:
                self.spline = CubicSpline(self.knots, P, axis=0, bc_type="not-a-knot" if len(P) > 3 else "natural")
                s = np.linspace(0.0, self.length, 20 * len(P) + 1)
                tangent = self.spline(s, 1)
                speed = _lengths(tangent)
                back = np.sum(tangent[:-1] * tangent[1:], axis=1) <= 0.0   # turned by 90° or more in 1/20 of a segment
                bent = _lengths(self.spline(s, 2))
            except ValueError:   # scipy's "must contain only finite values"
                speed = bent = np.full(1, np.inf)
                back = np.zeros(1, dtype=bool)
        if not (np.all(np.isfinite(speed)) and np.all(np.isfinite(bent)) and math.isfinite(self.length)):
            raise InputError(f"the spline through the path points overflows float64 (coordinates up to "
                             f"{float(np.max(np.abs(P))):g}, path length {self.length:g}; task coordinates in SI "
                             f"units, m and rad)")
        if not np.all(speed > 1e-6) or np.any(back):   # x' = 0 between two fine samples: their x' opposed
            raise InputError("the spline through the path points stops or turns back (x'(s) = 0): a reversal needs "
                             "a stop (split the path) or more points")

    def evaluate(self, s):
        s = self._s(s)
        return self.spline(s), self.spline(s, 1), self.spline(s, 2)

    def breakpoints(self):
        return self.knots[1:-1].copy()


def read_path_csv(path, names) -> SplinePath:
    """The waypoints of a path CSV (a header line naming the task coordinates ``names``, e.g. ``x,y,z``,
    then one point per line; other columns such as ``t`` are ignored; ``#`` lines and blank lines
    skipped) as a :class:`SplinePath`. Any defect: a one-line :class:`pkm.InputError` naming the file."""
    names = _names(names)
    p, rows = csv_lines(path, "path file")
    if not rows:
        raise InputError(f"{p}: empty path file (expected a header line {','.join(names)})")
    header = [c.strip() for c in rows[0][1].split(",")]
    check_header(p, rows[0][0], header, among=names)   # (other columns are ignored)
    missing = [n for n in names if n not in header]
    if missing:
        raise InputError(f"{p}: missing column {missing[0]!r} (the header must name the task coordinates "
                         f"{', '.join(names)})")
    idx = [header.index(n) for n in names]
    pts = []
    for lineno, row in rows[1:]:
        fields = row.split(",")
        if len(fields) != len(header):
            raise InputError(f"{p}: line {lineno}: {len(fields)} values, expected {len(header)}")
        try:
            v = [float(fields[k]) for k in idx]
        except ValueError:
            raise InputError(f"{p}: line {lineno}: not a number") from None
        if not all(math.isfinite(a) for a in v):
            raise InputError(f"{p}: line {lineno}: values must be finite")
        pts.append(v)
    if len(pts) < 2:
        raise InputError(f"{p}: a path needs at least 2 points, got {len(pts)}")
    try:
        return SplinePath(pts)
    except InputError as exc:
        raise InputError(f"{p}: {exc}") from None


# ---------------------------------------------------------------------- pick and place
def pick_place_route(start, lift: float = 0.025, travel: float = 0.305, blend: float = 0.0125, *,
                     vertical_axis: int = -1, horizontal_axis: int | None = None) -> Route:
    """The pick-and-place cycle from the pick point ``start``: ``lift`` up along +``vertical_axis``,
    ``travel`` across along ``horizontal_axis`` (default the first other coordinate), ``lift`` down to
    the place point, and the same way back — two paths (go, back), each rest to rest (the cycle
    reverses at the pick and place points). The top corners are cut by blends of length ``blend`` (≤ ``lift`` and ≤ ``travel/2``;
    :class:`BlendedPolyline`); ``blend = 0``: sharp corners, a stop at each, six lines (the path of
    :func:`pkm.trajectory.laws.pick_place` with ``blend = 0``)."""
    p0 = _points([start, start], "pick-place start")[0]
    d = p0.size
    if d < 2:
        raise InputError(f"pick-place needs at least 2 task coordinates (a vertical and a horizontal one), got {d}")
    for what, axis in (("vertical_axis", vertical_axis), ("horizontal_axis", horizontal_axis)):
        if (axis is not None or what == "vertical_axis") and (isinstance(axis, (bool, np.bool_))
                                                              or not isinstance(axis, (int, np.integer))):
            raise InputError(f"{what} must be the index of a task coordinate (an integer), got {axis!r}")
    if not -d <= vertical_axis < d:
        raise InputError(f"vertical_axis {vertical_axis} out of range for {d} coordinates")
    vert = vertical_axis % d
    horiz = next(k for k in range(d) if k != vert) if horizontal_axis is None else horizontal_axis
    if not (-d <= horiz < d) or horiz % d == vert:
        raise InputError(f"horizontal_axis {horizontal_axis} must be another coordinate than the vertical {vert}")
    horiz %= d
    vals = {}
    for what, v in (("lift", lift), ("travel", travel), ("blend", blend)):
        try:
            vals[what] = float(v)
        except (TypeError, ValueError):
            raise InputError(f"pick-place {what} must be a number, got {v!r}") from None
        if not (math.isfinite(vals[what]) and vals[what] >= 0.0):
            raise InputError(f"pick-place {what} must be a finite length >= 0, got {v!r}")
    lift, travel, blend = vals["lift"], vals["travel"], vals["blend"]
    if not (lift > 0 and travel > 0):
        raise InputError(f"pick-place lift and travel must be positive, got {lift:g} and {travel:g}")
    if blend > lift * (1 + 1e-12) or blend > 0.5 * travel * (1 + 1e-12):
        raise InputError(f"pick-place blend {blend:g} must be at most the lift {lift:g} and half the travel "
                         f"{0.5 * travel:g}")
    blend = min(blend, lift, 0.5 * travel)
    up, across = np.zeros(d), np.zeros(d)
    up[vert], across[horiz] = lift, travel
    corners = [p0, p0 + up, p0 + up + across, p0 + across]
    if blend == 0.0:
        go = tuple(LinePath(a, b) for a, b in zip(corners[:-1], corners[1:]))
        back = tuple(LinePath(b, a) for a, b in reversed(list(zip(corners[:-1], corners[1:]))))
        return Route(go + back, picks=1, kind="pick-place")
    go = BlendedPolyline(corners, blend)
    return Route((go, go.reversed()), picks=1, kind="pick-place")


def route_of_trajectory(spec: dict, names, blend: float | None = None) -> Route:
    """The geometric route of a trajectory table (a robot file's ``[trajectory]`` or a sweep's
    trajectory dict, SI, as :func:`pkm.trajectory.from_spec` takes it): ``pick-place`` → the
    :func:`pick_place_route` from its ``start`` with its ``lift`` and ``travel`` (along world x; corner
    blends of length ``blend``, default lift/2, as ``pkm cycle``), ``line`` → the :class:`LinePath` from
    ``start`` to ``end``; the law in time of the table (cycle time, duration) is dropped — it is what the
    time-optimal parametrisation replaces. World points map to the task coordinates ``names`` (x, y, z;
    rotational coordinates held at 0)."""
    names = _names(names)
    kind = spec.get("type") if isinstance(spec, dict) else None
    if kind not in ("pick-place", "line"):
        raise InputError(f"a time-optimal motion needs a pick-place or line path, not a {kind!r} trajectory")
    needed = ("start", "end") if kind == "line" else ("start", "lift", "travel")
    missing = [k for k in needed if k not in spec]
    if missing:
        raise InputError(f"a {kind} trajectory needs {', '.join(needed)}: {missing[0]!r} is missing")

    def task(key):
        p = _points([spec[key], spec[key]], f"{kind} {key}", 3)[0]
        return np.array([p["xyz".index(n)] if n in ("x", "y", "z") else 0.0 for n in names])

    if kind == "line":
        a, b = (_points([spec[k], spec[k]], f"line {k}", 3)[0] for k in ("start", "end"))
        for k, axis in enumerate("xyz"):   # as pkm.trajectory.from_spec: that part of the motion would be lost
            if axis not in names and a[k] != b[k]:
                raise InputError(f"a line moves along world {axis} ({a[k]:g} to {b[k]:g}), which the task coordinates "
                                 f"{', '.join(names)} do not control")
        return Route((LinePath(task("start"), task("end")),), kind="line")
    travel = spec["travel"]
    if np.ndim(travel) > 0:
        v = _points([travel, travel], "pick-place travel", 3)[0] if np.ndim(travel) == 1 else np.zeros(0)
        if v.size != 3 or np.any(v[1:] != 0):
            raise InputError(f"a time-optimal pick-place path travels along x: travel must be a number or [T, 0, 0], "
                             f"got {travel!r}")
        travel = v[0]
    try:
        lift = float(spec["lift"])
    except (TypeError, ValueError):
        raise InputError(f"pick-place lift must be a number, got {spec['lift']!r}") from None
    return task_pick_place_route(names, task("start"), lift, travel, blend)


def task_pick_place_route(names, start, lift: float, travel: float, blend: float | None = None) -> Route:
    """:func:`pick_place_route` in the task coordinates ``names``: from ``start`` (task coordinates) up
    along ``z`` and across along ``x``, corner blends of length ``blend`` (default ``lift/2``); a one-line
    InputError for a task without both coordinates."""
    names = _names(names)
    if "z" not in names or "x" not in names:
        raise InputError(f"a pick-place path lifts along z and travels along x, but the task coordinates are "
                         f"{', '.join(names)}")
    return pick_place_route(start, lift, travel, 0.5 * lift if blend is None else blend,
                            vertical_axis=names.index("z"), horizontal_axis=names.index("x"))
