"""Time laws of prescribed relative motion for rheonomic constraints (seed 001 §4, §6.5).

A *scalar law* is a callable ``s(t) -> (s, ṡ, s̈)``. A *translation law* is ``t -> (x, ẋ, ẍ)``
(3-vectors, in the coordinates of the lock's marker S: seed 001's ``q_Δ(t)``, eq. 28). A
*rotation law* is ``t -> (R, ω, ω̇)`` with ``Ṙ = R ω̂`` (ω in the rotated frame, pkm's body-fixed
convention; seed 001's ``q_θΔ(t)`` as a rotation matrix). For a rotation about a fixed axis both
conventions give ``ω = θ̇ a``.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from pkm.absolute.body import skew

ScalarLaw = Callable[[float], tuple[float, float, float]]


def constant(value: float = 0.0) -> ScalarLaw:
    """``s(t) = value``."""
    value = float(value)
    return lambda t: (value, 0.0, 0.0)


def polynomial(coefficients) -> ScalarLaw:
    """``s(t) = Σ c_k t^k`` (``coefficients`` lowest order first)."""
    c = np.asarray(coefficients, dtype=float)
    p = np.polynomial.Polynomial(c)
    dp, ddp = p.deriv(1), p.deriv(2)
    return lambda t: (float(p(t)), float(dp(t)), float(ddp(t)))


def sine(amplitude: float, omega: float, phase: float = 0.0, offset: float = 0.0) -> ScalarLaw:
    """``s(t) = offset + amplitude sin(ω t + phase)``."""
    a, w, ph, c = float(amplitude), float(omega), float(phase), float(offset)

    def law(t):
        arg = w * t + ph
        return c + a * math.sin(arg), a * w * math.cos(arg), -a * w * w * math.sin(arg)

    return law


def _unit(axis) -> np.ndarray:
    a = np.asarray(axis, dtype=float)
    n = float(np.linalg.norm(a))
    if a.shape != (3,) or not n > 0.0:
        raise ValueError(f"axis must be a non-zero 3-vector, got {axis!r}")
    return a / n


def along(axis, law: ScalarLaw):
    """Translation law ``x(t) = s(t) a`` along the (normalised) ``axis``."""
    a = _unit(axis)

    def translation(t):
        s, sd, sdd = law(t)
        return s * a, sd * a, sdd * a

    return translation


def about(axis, law: ScalarLaw):
    """Rotation law ``R(t) = exp(θ(t) â)`` about the (normalised) ``axis``: ``ω = θ̇ a``, ``ω̇ = θ̈ a``."""
    a = _unit(axis)
    A = skew(a)
    A2 = A @ A

    def rotation(t):
        th, thd, thdd = law(t)
        R = np.eye(3) + math.sin(th) * A + (1.0 - math.cos(th)) * A2
        return R, thd * a, thdd * a

    return rotation


def fixed_translation(x):
    """Constant translation law."""
    x = np.array(x, dtype=float)
    z = np.zeros(3)
    return lambda t: (x, z, z)


def fixed_rotation(R):
    """Constant rotation law."""
    R = np.array(R, dtype=float)
    z = np.zeros(3)
    return lambda t: (R, z, z)
