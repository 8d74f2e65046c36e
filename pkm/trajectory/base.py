"""The :class:`Trajectory` data (samples of x, ẋ, ẍ with named columns) and the argument checks its
generators share.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from pkm.errors import InputError

#: World axis index of each translational task coordinate name.
_WORLD_AXES = {"x": 0, "y": 1, "z": 2}
#: Rotational task coordinate names (held at their reference value 0 by :func:`from_spec`).
_ROTATIONS = ("rx", "ry", "rz")
#: Peak of |s'| and |s''| of the septic law on [0, 1] (at τ = 1/2 and τ = (5 ∓ √5)/10).
SEPTIC_PEAK_VELOCITY = 140.0 / 64.0
SEPTIC_PEAK_ACCELERATION = 420.0 * 0.04 / math.sqrt(5.0)
#: Most samples a generator makes from ``duration`` and ``dt`` (10^7: ~0.1 GB for t, x, ẋ, ẍ of
#: three coordinates, and minutes of inverse dynamics); more is a ValueError naming both.
MAX_SAMPLES = 10**7


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
            raise InputError(f"Trajectory names must be a sequence of non-empty strings without "
                             f"commas or white space, got {names!r}")
        names = tuple(names)
        t = np.array(self.t, dtype=float)
        if t.ndim != 1 or t.size == 0:
            raise InputError(f"Trajectory t must be a non-empty 1-D array, got shape {t.shape}")
        d = len(names)
        arrays = {}
        for key in ("x", "xd", "xdd"):
            a = np.array(getattr(self, key), dtype=float)
            if a.ndim == 1 and d == 1:
                a = a[:, None]
            if a.shape != (t.size, d):
                raise InputError(f"Trajectory {key} must have shape (N, d) = ({t.size}, {d}) for "
                                 f"{t.size} times and {d} names, got {a.shape}")
            arrays[key] = a
        for key, a in (("t", t), *arrays.items()):
            if not np.isfinite(a).all():
                raise InputError(f"Trajectory {key} contains NaN or infinite values")
        if t.size > 1 and not (np.diff(t) > 0).all():
            k = int(np.argmax(np.diff(t) <= 0))
            raise InputError(f"Trajectory times must be strictly increasing (t[{k}] = {t[k]!r}, "
                             f"t[{k + 1}] = {t[k + 1]!r})")
        columns = _columns(names)
        dup = sorted({c for c in columns if columns.count(c) > 1})
        if dup:
            raise InputError(f"Trajectory column names are not unique: {', '.join(dup)}")
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

    def resolution(self) -> float:
        """How far the samples are from resolving the motion: the largest misfit of a step's change of position
        (velocity) against the trapezoid of its end samples' velocities (accelerations), ``|Δx − ½(ẋ_k + ẋ_{k+1})Δt|``,
        over that coordinate's range over the trajectory (a range below 1e-9 of the coordinate's size, rounding
        noise, counts as that size). ``O(Δt³)`` (each step's trapezoid error): ~2e-3 at 200 samples of a
        pick-and-place cycle, 0.07 at 49, 1 at 3 (the samples at the stops alone). 0 for a single sample.

        >>> import numpy as np
        >>> t = np.linspace(0.0, 1.0, 101)
        >>> tr = Trajectory(t=t, x=np.sin(t), xd=np.cos(t), xdd=-np.sin(t), names=("s",))
        >>> tr.resolution() < 1e-5
        True
        """
        if self.t.size < 2:
            return 0.0
        dt = np.diff(self.t)[:, None]
        worst = 0.0
        for y, dy in ((self.x, self.xd), (self.xd, self.xdd)):
            miss = np.max(np.abs(np.diff(y, axis=0) - 0.5 * (dy[1:] + dy[:-1]) * dt), axis=0)
            size = np.max(np.abs(y), axis=0)
            span = np.maximum(np.ptp(y, axis=0), 1e-9 * np.maximum(size, 1e-300))
            worst = max(worst, float(np.max(np.where(miss > 0.0, miss / span, 0.0))))
        return worst

    def to_csv(self, path) -> None:
        """Write ``t, x…, xd…, xdd…`` with a header line; floats in shortest round-trip form.

        Every value is written as ``repr(float)``, which :func:`read_csv` parses back to the
        identical float64 (bit-exact round trip).

        >>> import tempfile, pathlib
        >>> from pkm.trajectory import line, read_csv
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
        raise InputError(f"no default coordinate names for {d} coordinates; pass names=")
    return table[d]


# ====================================================================== argument checks
def _positive(value, what: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be a number, got {value!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise InputError(f"{what} must be positive and finite, got {value!r}")
    return v


def _finite(value, what: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be a number, got {value!r}") from None
    if not math.isfinite(v):
        raise InputError(f"{what} must be finite, got {value!r}")
    return v


def _vector(value, what: str, n: int | None = None) -> np.ndarray:
    try:
        v = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be a vector of numbers, got {value!r}") from None
    if v.ndim != 1 or v.size == 0:
        raise InputError(f"{what} must be a non-empty 1-D vector, got shape {v.shape}")
    if n is not None and v.size != n:
        raise InputError(f"{what} must have {n} components, got {v.size}")
    if not np.isfinite(v).all():
        raise InputError(f"{what} contains NaN or infinite values: {v.tolist()}")
    return v


def _names(names, d: int) -> tuple[str, ...]:
    if names is None:
        return default_names(d)
    names = (names,) if isinstance(names, str) else tuple(names)
    if len(names) != d:
        raise InputError(f"{len(names)} names {list(names)} given for {d} coordinates")
    return names


def _times(duration: float, dt, times, what: str = "duration") -> np.ndarray:
    """``i·dt`` for ``i = 0 … round(duration/dt)``, or the given ``times``."""
    if times is not None:
        if dt is not None:
            raise InputError("give either dt or times, not both")
        t = np.array(times, dtype=float)
        if t.ndim == 0:
            t = t[None]
        if t.ndim != 1 or t.size == 0:
            raise InputError(f"times must be a non-empty 1-D array, got shape {t.shape}")
        if not np.isfinite(t).all():
            raise InputError("times contains NaN or infinite values")
        return t
    if dt is None:
        raise InputError("give the sample period dt (or times=)")
    dt = _positive(dt, "dt")
    ratio = duration / dt
    if not ratio + 1 <= MAX_SAMPLES:  # also inf (1e300 / 1e-300) and NaN
        many = f"{ratio + 1:.3g}" if math.isfinite(ratio) else "too many (the ratio overflows)"
        raise InputError(f"{what} {duration!r} s / dt {dt!r} s gives {many} samples, more than the "
                         f"limit of {MAX_SAMPLES:.0e}: use a larger dt or a shorter {what}")
    n = round(ratio)
    if n < 1 or abs(ratio - n) > 1e-9 * max(1.0, ratio):
        raise InputError(f"{what} {duration!r} s is not a (positive) integer multiple of dt {dt!r} s "
                         f"({what}/dt = {ratio!r})")
    return np.arange(n + 1) * dt


#: The most :meth:`Trajectory.resolution` that peaks and RMS values may be judged from: 10 %, ~8 samples per move
#: of a septic rest-to-rest law (a pick-and-place cycle of six moves: 0.07 at 49 samples, 0.49 at 25). Above it
#: the motion itself is not seen (the cycle sampled at its stops: no motion at all); below it the peaks may still
#: fall between the samples, which the sizing measures on its torques (:func:`pkm.sweep.sizing.peak_gaps`).
RESOLVED = 0.1


def require_resolved(traj: Trajectory, what: str) -> None:
    """A one-line :class:`pkm.PkmError` when ``traj``'s samples are too far apart for ``what`` (its peaks and RMS
    values: between the samples the motion is not seen, and a coarse sampling can land on the stops alone and
    report no motion): :meth:`Trajectory.resolution` above :data:`RESOLVED`."""
    from pkm.errors import PkmError

    r = traj.resolution()
    if not r <= RESOLVED:
        span = float(traj.t[-1] - traj.t[0])
        raise PkmError(f"{what}: the trajectory's {traj.t.size} samples over {span:.4g} s do not resolve its motion "
                       f"(the samples' velocities and accelerations miss their positions' and velocities' changes "
                       f"by {f'{100 * r:.3g} %' if r < 1.0 else 'more than 100 %'} of their range, at most {100 * RESOLVED:g} %): use a smaller dt (more "
                       f"samples)")
