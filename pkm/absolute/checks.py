"""Argument checks of :mod:`pkm.absolute`'s public API (issue 27, item 4).

Every public function and class of the layer checks its arguments here, up front, and refuses a
bad one with a one-line :class:`~pkm.errors.InputError` naming the argument and what is expected:
a shape, a type (a bool or a string is not a number, a float is not a count), NaN/inf, a range.
So nothing non-finite reaches LAPACK (which prints to stderr and raises ``LinAlgError``) and no
nonsense comes back.

Bounds. Positions and lengths: :data:`MAX_LENGTH` (pkm's robot-file bound, 1000 km); angles the
same (beyond it ``sin θ`` has lost its digits: 1e6 rad × 2.2e-16 = 2e-10 rad); counts of time
steps :data:`MAX_STEPS`, and the stored trajectory (``steps + 1`` nodes of ``n`` coordinates and
``n`` velocities) at most :data:`MAX_STORED` numbers per array; a time step at least
:data:`MIN_DT` (below it ``q_{n+1} − q_n`` drowns in the rounding of ``q``).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from pkm.description.fileformat import MAX_LENGTH
from pkm.errors import InputError

#: Largest number of time steps of one ``integrate`` call.
MAX_STEPS = 1_000_000
#: Largest number of floats in one stored array of a trajectory ((steps + 1) × n).
MAX_STORED = 25_000_000
#: Smallest time step: the schemes' velocities ``2 (q_{n+1} − q_n)/Δt − v_n`` lose all digits
#: when ``Δt |v|`` nears the rounding of ``q``.
MIN_DT = 1e-9
#: Largest magnitude of a rate, acceleration, effort or gravity component: products of a few such
#: numbers with masses (:data:`MASS_RANGE`) and lengths stay finite.
MAX_VALUE = 1e50
#: Range of a body's mass [kg] and of its inertia entries [kg·m²] in absolute coordinates: the
#: momenta, energies and Newton matrices of the schemes (products of masses, rates and time steps)
#: stay finite, and the index-1 matrix ``[[M, Gᵀ], [G, 0]]`` keeps a condition below its limit.
MASS_RANGE = (1e-100, 1e100)

__all__ = ["MAX_LENGTH", "MAX_STEPS", "MAX_STORED", "MIN_DT", "MAX_VALUE", "MASS_RANGE", "number", "positive", "count",
           "array",
           "choice", "function", "name", "time_steps", "show"]


def show(value) -> str:
    """``value`` for a message: short, one line."""
    text = repr(value) if not isinstance(value, np.ndarray) else f"an array of shape {value.shape}"
    text = text.replace("\n", " ")
    return text if len(text) <= 60 else text[:57] + "..."


def _scalar(value):
    """A 0-d array as its item, everything else unchanged."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.item()
    return value


def number(value, what: str, *, low: float = -math.inf, high: float = math.inf, low_open: bool = False,
           high_open: bool = False, why: str = "") -> float:
    """``value`` as a finite float in the range ``low … high`` (open ends where asked); a bool, a
    string, None or a complex number is refused."""
    value = _scalar(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise InputError(f"{what} must be a real number, got {show(value)}")
    v = float(value)
    if not math.isfinite(v):
        raise InputError(f"{what} must be finite, got {show(value)}")
    below = v <= low if low_open else v < low
    above = v >= high if high_open else v > high
    if below or above:
        lo = "" if low == -math.inf else ("> " if low_open else "≥ ") + f"{low:g}"
        hi = "" if high == math.inf else ("< " if high_open else "≤ ") + f"{high:g}"
        raise InputError(f"{what} must be {' and '.join(p for p in (lo, hi) if p)}{why}, got {show(value)}")
    return v


def positive(value, what: str, high: float = math.inf, why: str = "") -> float:
    """A finite number ``> 0`` (and ``≤ high``)."""
    return number(value, what, low=0.0, low_open=True, high=high, why=why)


def count(value, what: str, low: int = 0, high: int = MAX_STEPS) -> int:
    """An integer (not a bool, not a float) in ``low … high``."""
    value = _scalar(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise InputError(f"{what} must be an integer, got {show(value)}")
    v = int(value)
    if not low <= v <= high:
        raise InputError(f"{what} must be an integer from {low} to {high}, got {v}")
    return v


def array(value, what: str, shape=None, *, bound: float | None = None, batch: bool = False) -> np.ndarray:
    """``value`` as a finite float array of ``shape`` (a tuple; ``None`` entries match any size;
    ``shape=None``: any shape; ``batch``: any leading dimensions before ``shape``), every entry at
    most ``bound`` in magnitude if given. Refuses None, strings, complex and bool arrays, ragged
    lists."""
    if value is None or isinstance(value, (str, bytes)):
        raise InputError(f"{what} must be an array of numbers, got {show(value)}")
    try:
        a = np.asarray(value)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be a rectangular array of numbers, got {show(value)}") from None
    if a.dtype.kind not in "iuf":
        kind = {"c": "complex", "b": "boolean"}.get(a.dtype.kind, str(a.dtype))
        raise InputError(f"{what} must be an array of real numbers, got {kind} values")
    a = a.astype(float)
    if shape is not None:
        tail = a.shape[a.ndim - len(shape):] if batch and a.ndim >= len(shape) else a.shape
        ok = len(tail) == len(shape) and all(s is None or s == k for s, k in zip(shape, tail))
        if not ok:
            want = "(" + ", ".join("N" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
            want = f"(..., {want[1:]}" if batch else want
            raise InputError(f"{what} must have shape {want}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise InputError(f"{what} contains NaN or infinite values")
    if bound is not None and a.size and float(np.max(np.abs(a))) > bound:
        raise InputError(f"{what} is out of range (an entry of {float(np.max(np.abs(a))):.3g}; at most {bound:g})")
    return a


def choice(value, what: str, options) -> str:
    """One of ``options`` (strings)."""
    if not isinstance(value, str) or value not in options:
        raise InputError(f"{what} must be one of {', '.join(map(repr, options))}, got {show(value)}")
    return value


def function(value, what: str, optional: bool = True):
    """A callable (or None when ``optional``)."""
    if value is None and optional:
        return None
    if not callable(value):
        raise InputError(f"{what} must be a function{' or None' if optional else ''}, got {show(value)}")
    return value


def name(value, what: str) -> str:
    """A non-empty string."""
    if not isinstance(value, str) or not value:
        raise InputError(f"{what} must be a non-empty string, got {show(value)}")
    return value


def time_steps(dt, steps, t0, n: int) -> tuple[float, int, float]:
    """``(dt, steps, t0)`` of an ``integrate`` call on ``n`` coordinates: ``dt`` in
    [:data:`MIN_DT`, ∞), ``steps`` a count from 1 to :data:`MAX_STEPS` whose stored trajectory
    ((steps + 1) × n per array) stays within :data:`MAX_STORED`, ``t0`` finite, and the end time
    finite with the steps distinguishable in it."""
    dt = number(dt, "dt", low=MIN_DT, why=" s (a positive time step)")
    steps = count(steps, "steps", 1, MAX_STEPS)
    t0 = number(t0, "t0")
    if (steps + 1) * max(n, 1) > MAX_STORED:
        raise InputError(f"steps = {steps} on {n} coordinates would store {(steps + 1) * n:.3g} numbers per array, "
                         f"more than the limit of {MAX_STORED:.0e}: use fewer steps")
    end = t0 + steps * dt
    if not math.isfinite(end) or t0 + dt == t0 or end - dt == end:
        raise InputError(f"t0 = {t0!r} and dt = {dt!r}: the step times t0 + k dt are not distinct in floating point "
                         f"(dt too small for t0, or the end time overflows)")
    return dt, steps, t0
